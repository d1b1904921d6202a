"""How the kernel's receivers acknowledge, measured from one packet capture of a testbed run (issue 22).

    sudo ip netns exec $R timeout 6 dumpcap -q -i <R's veth> -s 80 \\
        -f 'tcp and src net 10.77.0.0/16' -w rcv.pcapng       # as scripts/testbed_timing.py
    .venv/bin/python scripts/testbed_acks.py rcv.pcapng

The capture is taken at the receivers' veth end (in their namespace), so it sees each data
segment as it reaches the receiver and each ACK as it leaves. Per flow (a sender's address and
port), for every ACK the receiver sends: how many data segments of that flow arrived since its
previous ACK, and how long after the first of them it left (the ACK's delay). ACKs are split by
whether they carry a SACK block (a TCP header longer than the flow's shortest ACK header: the
timestamps-only one), that is whether the receiver held out-of-order data.

What it shows on the testbed (docs/testbed.md, BBR section): Linux delays ACKs that carry SACK
blocks. With out-of-order data held, after three duplicate ACKs for the same `rcv_nxt` the
receiver compresses further ones (net/ipv4/tcp_input.c, `__tcp_ack_snd_check`: a high-resolution
timer of min(`tcp_comp_sack_delay_ns`, RTT / 20), 1 ms by default, with 100 us of slack
(`tcp_comp_sack_slack_ns`), or at most `tcp_comp_sack_nr` = 44 ACKs saved), since Linux 4.18;
the namespace's `TcpExtTCPAckCompressed` counts the ACKs saved. The simulator's receiver sends
every such ACK at once.

Needs `tshark`. Segments and ACKs are counted as captured (retransmissions included).
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

COLS = ["t", "src", "dst", "sport", "dport", "len", "hdr"]


def read(path: str) -> pd.DataFrame:
    """A capture's TCP frames: time (s), addresses, ports, payload and TCP header length."""
    fields = ("frame.time_epoch", "ip.src", "ip.dst", "tcp.srcport", "tcp.dstport", "tcp.len")
    out = subprocess.run(
        ["tshark", "-r", path, "-T", "fields"]
        + [a for f in (*fields, "tcp.hdr_len") for a in ("-e", f)]
        + ["-E", "separator=,"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return pd.read_csv(io.StringIO(out), names=COLS).dropna()


def acks(frames: pd.DataFrame) -> pd.DataFrame:
    """One row per ACK the receiver sent for a flow that sent data in the capture: the flow, its
    time, whether it carries SACK, the data segments that arrived since the flow's previous ACK
    (``segs``) and the time since the first of them (``delay_us``, NaN when none arrived). The
    first ACK of each flow is dropped (its "since" is unknown)."""
    data = frames[frames.len > 0]
    pure = frames[frames.len == 0]
    out = []
    for (src, sport), g in data.groupby(["src", "sport"]):
        a = pure[(pure.dst == src) & (pure.dport == sport)].sort_values("t")
        if len(a) < 2:
            continue
        td = np.sort(g.t.to_numpy(float))
        ta = a.t.to_numpy(float)
        idx = np.searchsorted(td, ta, side="right")  # data segments up to each ACK
        first = idx[:-1]
        segs = np.diff(idx)
        delay = np.full(len(segs), np.nan)
        some = segs > 0
        delay[some] = (ta[1:][some] - td[first[some]]) * 1e6
        hdr = a.hdr.to_numpy(float)
        out.append(
            pd.DataFrame(
                {
                    "flow": f"{src}:{int(sport)}",
                    "t": ta[1:],
                    "sack": hdr[1:] > hdr.min(),
                    "segs": segs,
                    "delay_us": delay,
                }
            )
        )
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def per_flow(a: pd.DataFrame) -> pd.DataFrame:
    """Per flow: ACKs, the share carrying SACK, mean segments per ACK with and without SACK,
    the share of ACKs covering more than two segments, and the median and 90th percentile of
    the delay of the SACK-carrying ACKs and the median of the others'."""
    rows = []
    for flow, g in a.groupby("flow", sort=False):
        s, n = g[g.sack], g[~g.sack]
        rows.append(
            {
                "flow": flow,
                "acks": len(g),
                "sack share": g.sack.mean(),
                "segs/ack sack": s.segs.mean(),
                "segs/ack plain": n.segs.mean(),
                "acks > 2 segs": float(np.mean(g.segs > 2)),
                "sack delay p50 us": s.delay_us.median(),
                "sack delay p90 us": s.delay_us.quantile(0.9),
                "plain delay p50 us": n.delay_us.median(),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rcv", help="capture at the receivers' veth")
    a = ap.parse_args(argv)
    if shutil.which("tshark") is None:
        print("error: tshark not found (apt-get install tshark)", file=sys.stderr)
        return 2
    if not Path(a.rcv).is_file():
        print(f"error: {a.rcv}: no such capture file", file=sys.stderr)
        return 2
    try:
        frames = read(a.rcv)
    except subprocess.CalledProcessError as e:
        last = (e.stderr or "").strip().splitlines()[-1:] or ["tshark failed"]
        print(f"error: tshark could not read the capture: {last[0]}", file=sys.stderr)
        return 2
    ak = acks(frames)
    if ak.empty:
        print("error: no ACKs of flows with data in the capture", file=sys.stderr)
        return 2
    print(per_flow(ak).to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    s = ak[ak.sack]
    print(
        f"\nall flows: {len(ak)} ACKs, {ak.sack.mean():.3f} with SACK; data segments per ACK "
        f"{ak.segs.sum() / len(ak):.2f}; SACK ACKs' delay p10 p50 p90 (us): "
        + " ".join(f"{x:.0f}" for x in s.delay_us.quantile([0.1, 0.5, 0.9]))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
