"""The testbed's per-packet timing, measured from two packet captures of one run (issue 22).

    sudo .venv/bin/aqmlab testbed FILE.toml --cc bbr --out DIR &      # a run in progress
    S=<its ...-snd namespace>; R=<its ...-rcv namespace>             # `ip netns list`
    sudo ip netns exec $S timeout 6 dumpcap -q -i <S's veth> -s 80 \\
        -f 'tcp and src net 10.77.0.0/16' -w snd.pcapng &
    sudo ip netns exec $R timeout 6 dumpcap -q -i <R's veth> -s 80 \\
        -f 'tcp and src net 10.77.0.0/16' -w rcv.pcapng
    .venv/bin/python scripts/testbed_timing.py snd.pcapng rcv.pcapng

Both captures are taken on the same host clock (the senders' and the receivers' veth ends), so
a data segment's one-way delay through the forwarder is its receive time minus its send time.
Two things are printed:

- **How the kernel paces** (the sender capture alone): per flow, the gaps between a flow's
  consecutive data segments. Linux TCP always builds GSO packets (Linux 4.19, "tcp: switch to
  GSO being always on"), even with every offload off on the device, and BBR asks for at least
  two segments per packet (`bbr_min_tso_segs` in net/ipv4/tcp_bbr.c), so the segments leave in
  back-to-back pairs a double pacing interval apart; the share of gaps below 20 us shows it.
- **The forwarder's timing noise**: for each such pair (two segments of one flow sent < 20 us
  apart), the difference of their one-way delays. The pair enters the bottleneck queue together
  and leaves it back to back, so on an ideal path the second one's delay exceeds the first's by
  one 1514-byte service time at the bottleneck rate less the send gap (119 us at 100 Mb/s);
  the spread of the difference around that is the per-packet timing noise of the forwarder's
  three traversals (access link, bottleneck, access link), which the simulator does not have.
  It measures noise between neighbouring packets; a lateness that moves slowly (over many
  packets) does not show.

Needs `tshark` (Debian's package of that name). Only first transmissions are used (a sequence
number seen twice on either side is dropped).
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

COLS = ["t", "src", "sport", "seq", "len"]


def read(path: str) -> pd.DataFrame:
    """A capture's TCP data segments: time (s), source address and port, raw sequence, length;
    a segment seen more than once (a retransmission) is dropped."""
    out = subprocess.run(
        ["tshark", "-r", path, "-T", "fields"]
        + [
            a
            for f in ("frame.time_epoch", "ip.src", "tcp.srcport", "tcp.seq_raw", "tcp.len")
            for a in ("-e", f)
        ]
        + ["-E", "separator=,"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    d = pd.read_csv(io.StringIO(out), names=COLS)
    d = d[d.len > 0]
    return d.drop_duplicates(["src", "sport", "seq"], keep=False)


def pacing(s: pd.DataFrame) -> pd.DataFrame:
    """Per flow: segments, rate, median gap and the share of gaps below 20 us (pairs)."""
    rows = []
    for (src, port), g in s.sort_values("t").groupby(["src", "sport"]):
        t = g.t.to_numpy(float)
        if len(t) < 3:
            continue
        gaps = np.diff(t) * 1e6
        rows.append(
            {
                "flow": f"{src}:{port}",
                "segments": len(t),
                "Mb/s": (g.len.sum() * 8 / (t[-1] - t[0]) / 1e6),
                "median gap us": float(np.median(gaps)),
                "gaps < 20 us": float(np.mean(gaps < 20)),
            }
        )
    return pd.DataFrame(rows)


def pair_noise(s: pd.DataFrame, r: pd.DataFrame) -> np.ndarray:
    """For each pair of one flow's segments sent < 20 us apart and both received: the second's
    one-way delay minus the first's, in us."""
    m = r.merge(s, on=["src", "sport", "seq"], suffixes=("_r", "_s"))
    m["d"] = (m.t_r - m.t_s) * 1e6
    out = []
    for _, g in m.sort_values("t_s").groupby(["src", "sport"]):
        ts, d = g.t_s.to_numpy(float), g.d.to_numpy(float)
        close = np.diff(ts) * 1e6 < 20
        out.append(np.diff(d)[close])
    return np.concatenate(out) if out else np.array([])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snd", help="capture at the senders' veth")
    ap.add_argument("rcv", help="capture at the receivers' veth")
    ap.add_argument("--rate", default=100e6, type=float, help="bottleneck rate, bit/s")
    a = ap.parse_args(argv)
    if shutil.which("tshark") is None:
        print("error: tshark not found (apt-get install tshark)", file=sys.stderr)
        return 2
    for f in (a.snd, a.rcv):
        if not Path(f).is_file():
            print(f"error: {f}: no such capture file", file=sys.stderr)
            return 2
    try:
        s, r = read(a.snd), read(a.rcv)
    except subprocess.CalledProcessError as e:
        last = (e.stderr or "").strip().splitlines()[-1:] or ["tshark failed"]
        print(f"error: tshark could not read the captures: {last[0]}", file=sys.stderr)
        return 2
    for name, d in (("snd", s), ("rcv", r)):
        if d.empty:
            print(f"error: {name}: no TCP data segments in the capture", file=sys.stderr)
            return 2
    print("How the kernel paces (sender capture):")
    print(pacing(s).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    dd = pair_noise(s, r)
    if not len(dd):
        print("no pairs sent < 20 us apart and received: no noise figure")
        return 0
    ideal = 1514 * 8 / a.rate * 1e6
    q = np.percentile(dd, [1, 5, 25, 50, 75, 95, 99])
    print(
        f"\nOne-way delay difference within {len(dd)} pairs (us; ideal {ideal:.0f} less the send gap):"
    )
    print("  p1 p5 p25 p50 p75 p95 p99: " + " ".join(f"{x:.1f}" for x in q))
    mad = float(np.median(np.abs(dd - np.median(dd))))
    print(f"  median absolute deviation {mad:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
