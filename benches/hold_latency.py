"""Latency under load through `aqmlab testbed --hold` (issue 21 item 4; figures in
docs/testbed.md). Root only; needs ping and iperf3 (Debian: iputils-ping, iperf3).

    sudo .venv/bin/python benches/hold_latency.py [--secs 20] [--aqm droptail,fq_codel,dualpi2]

For each AQM: holds a one-host-pair dumbbell (20 Mb/s bottleneck, 10 ms each way, 500-packet
buffer), pings through the idle path (50 echoes, 0.1 s apart), then runs one iperf3 TCP flow
(the kernel's cubic, no ECN) for ``--secs`` seconds with two pings alongside from its 3rd second
on: a plain one (Not-ECT) and one whose echoes carry ECT(1) (``ping -Q 0x1``, the L4S identifier
of RFC 9331: DualPI2 puts them in its L queue, the other qdiscs treat them as any packet). Ends
the hold with SIGINT and reads the forwarder's statistics. Prints a Markdown table: ping RTT idle
and under load (min / mean / max), iperf3 throughput, the forwarder's queueing delay and drops,
and for DualPI2 the packets its L and C queues received.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The IP TOS byte whose ECN field is ECT(1) (RFC 3168 s. 5: ECN is the TOS byte's two low bits).
ECT1 = 0x01

SCENARIO = """
name = "hold-{aqm}"
duration = "60s"
warmup = "1s"
[topology]
type = "dumbbell"
rate = "20Mbps"
delay = "10ms"
buffer = 500
access_delay = ["0ms"]
[aqm]
name = "{aqm}"
[tcp]
variant = "cubic"
[[flows]]
count = 1
"""


def _ping_cmd(ns: str, src: str, dst: str, count: int, tos: int = 0) -> list[str]:
    return [
        *("ip", "netns", "exec", ns, "ping", "-q", "-n", "-i", "0.1", "-c", str(count)),
        *("-Q", str(tos), "-I", src, dst),
    ]


def _ping(ns: str, src: str, dst: str, count: int) -> dict[str, float]:
    r = subprocess.run(_ping_cmd(ns, src, dst, count), capture_output=True, text=True)
    return _ping_stats(r.stdout, r.stderr)


def _ping_stats(out: str, err: str) -> dict[str, float]:
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", out)
    loss = re.search(r"([\d.]+)% packet loss", out)
    if m is None:
        raise RuntimeError(f"ping failed: {out} {err}")
    return {
        "min": float(m[1]),
        "mean": float(m[2]),
        "max": float(m[3]),
        "loss_pct": float(loss[1]) if loss else float("nan"),
    }


def one(aqm: str, secs: float, work: Path) -> dict:
    sc = work / f"{aqm}.toml"
    sc.write_text(SCENARIO.format(aqm=aqm))
    out = work / f"out-{aqm}"
    aqmlab = str(Path(sys.executable).with_name("aqmlab"))
    hold = subprocess.Popen(
        [aqmlab, "testbed", "--hold", str(sc), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    head = [hold.stdout.readline() for _ in range(4)]
    snd = re.search(r"in (\S+-snd)", head[0])[1]
    rcv = re.search(r"in (\S+-rcv)", head[0])[1]
    src, dst = "10.77.0.1", "10.77.128.1"
    try:
        subprocess.run(
            ["ip", "netns", "exec", rcv, "iperf3", "-s", "-B", dst, "-D", "-1"], check=True
        )
        time.sleep(0.5)
        idle = _ping(snd, src, dst, 50)
        iperf = ["iperf3", "-c", dst, "-B", src, "-t", str(secs), "-C", "cubic", "-J"]
        client = subprocess.Popen(
            ["ip", "netns", "exec", snd, *iperf],
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)
        n = int((secs - 5) / 0.1)
        pings = [
            subprocess.Popen(
                _ping_cmd(snd, src, dst, n, tos), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for tos in (0, ECT1)
        ]
        loaded, loaded_l4s = (_ping_stats(*(x.decode() for x in p.communicate())) for p in pings)
        res = json.loads(client.communicate(timeout=secs + 30)[0])
        tput = res["end"]["sum_received"]["bits_per_second"]
    finally:
        os.killpg(hold.pid, signal.SIGINT)
        _, err = hold.communicate(timeout=60)
    if hold.returncode != 0:
        raise RuntimeError(err)
    fwd = json.loads((out / "forwarder.json").read_text())["links"][0]
    return {"aqm": aqm, "idle": idle, "loaded": loaded, "l4s": loaded_l4s, "tput": tput, "fwd": fwd}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secs", type=float, default=20.0)
    ap.add_argument("--aqm", default="droptail,fq_codel,dualpi2")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("hold_latency.py: needs root (network namespaces, raw sockets)")
    with tempfile.TemporaryDirectory() as d:
        rows = [one(aqm, a.secs, Path(d)) for aqm in a.aqm.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(
        "| AQM | ping idle min / mean / max (ms) | ping under load min / mean / max (ms) | "
        "loss under load | ECT(1) ping under load min / mean / max (ms) | ECT(1) loss | "
        "iperf3 Mb/s | forwarder: mean / p99 queueing delay (ms) | drops |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        i, lo, l4, f = r["idle"], r["loaded"], r["l4s"], r["fwd"]
        p99 = f.get("delay_p99_s")
        print(
            f"| {r['aqm']} | {i['min']:.2f} / {i['mean']:.2f} / {i['max']:.2f} | "
            f"{lo['min']:.2f} / {lo['mean']:.2f} / {lo['max']:.2f} | {lo['loss_pct']:g} % | "
            f"{l4['min']:.2f} / {l4['mean']:.2f} / {l4['max']:.2f} | {l4['loss_pct']:g} % | "
            f"{r['tput'] / 1e6:.2f} | {f['delay_mean_s'] * 1e3:.2f} / "
            f"{(p99 or float('nan')) * 1e3:.2f} | {f['dropped_aqm'] + f['dropped_overflow']} |"
        )
    for r in rows:
        st = r["fwd"].get("aqm_stats") or {}
        keys = ("arrived_c", "arrived_l", "delay_c_mean_ms", "delay_l_mean_ms", "marks_l_step")
        q = {k: st[k] for k in keys if k in st}
        if q:
            print(f"{r['aqm']}: {json.dumps(q)}")


if __name__ == "__main__":
    main()
