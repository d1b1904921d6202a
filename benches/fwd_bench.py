"""Forwarder benchmarks (issue 11; figures in docs/benchmarks.md and docs/testbed.md). Root only.

    .venv/bin/python benches/fwd_bench.py [--repeat 3] [--quick]

Builds the testbed's three namespaces, runs aqmlab-fwd between them with a frame generator
(aqmlab-fwd-gen, AF_PACKET) in the senders' namespace and a TPACKET_V3 counter in the receivers'
namespace, and measures:

- the highest frame rate the forwarder carries (1500 B and 64 B frames, link rate set far above
  it, generator as fast as it goes), with the forwarder's CPU use (user + system s per wall s);
- 1 Gb/s of 1500 B frames through RED and through DropTail: delivered rate, losses other than
  the AQM's (ring drops, send errors);
- rate accuracy: the departure rate measured from the receiver's kernel arrival stamps, offered
  110 % of the configured rate, 10 Mb/s to 1 Gb/s;
- added delay: ping through an idle path configured with 5 ms each way.

Each case runs ``--repeat`` times; the median is reported with the load average. On a shared
machine the forwarder gets only its share of the CPU: ``--nice -15`` runs it at a higher
priority, as a forwarding box would run it (the generator and counter stay at nice 0).

``--rt`` (issue 21, the 1 Gb/s cases on a loaded machine): the forwarder under SCHED_FIFO 50 on
the last core (as ``aqmlab testbed`` runs it), and the generator and the counter under SCHED_FIFO
40 (``chrt -f 40``) pinned to the other cores, so that neither waits behind the machine's other
work. The kernel's RT throttling still leaves other processes 5% of each core; the generator
sleeps between its 100 us batches when paced, so only the max-rate cases hold a core.
``--flows N`` (default 1): the generator's frames cycle through N UDP source ports, so the
flow-queueing qdiscs (fq_codel, fq_pie, cake) hash N flows; the 1 Gb/s cases of fq_pie, cake
and dualpi2 were measured with 100.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from aqmlab.testbed import net

ROOT = Path(__file__).resolve().parents[1]
FWD = ROOT / "target" / "release" / "aqmlab-fwd"
GEN = ROOT / "target" / "release" / "aqmlab-fwd-gen"


#: ``--rt``: SCHED_FIFO priorities of the forwarder and of the generator and counter.
FWD_RT, GEN_RT = 50, 40


def _fwd_config(
    n: net.Net, rate: float, aqm: dict, delay_ns: int, buffer: int, rt: int = 0
) -> dict:
    def direction(name: str, a: dict) -> dict:
        return {
            "name": name,
            "rate_bps": int(rate),
            "buffer_pkts": buffer,
            "mean_pkt_bytes": 1500,
            "aqm": a,
            "default_delay_ns": delay_ns,
        }

    return {
        "left": n.if_a,
        "right": n.if_b,
        "sample_interval_ns": 10_000_000,
        "forward": direction("bottleneck", aqm),
        "reverse": direction("reverse", {"name": "droptail"}),
        "rt_priority": rt,
    }


def _cpus() -> tuple[list[str], list[str]]:
    """``--rt``: ``taskset`` prefixes for the forwarder (the last core) and for the generator
    and counter (the others); no pinning on one core."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return [], []
    return (
        ["taskset", "-c", str(cpus[-1])],
        ["taskset", "-c", ",".join(map(str, cpus[:-1]))],
    )


class Bed:
    """One network with a forwarder that runs until stopped."""

    nice = 0
    rt = False
    flows = 1

    def __init__(self, rate: float, aqm: dict, delay_ns: int = 0, buffer: int = 1000) -> None:
        self.n = net.Net()
        self.n.build([net.host_ip("left", 0)], [net.host_ip("right", 0)], ecn=False, sack=True)
        self.dir = Path(f"/tmp/{self.n.tag}")
        self.dir.mkdir()
        cfg = _fwd_config(self.n, rate, aqm, delay_ns, buffer, FWD_RT if self.rt else 0)
        fwd_pin, self.gen_pre = _cpus() if self.rt else ([], [])
        if self.rt:
            self.gen_pre = [*self.gen_pre, "chrt", "-f", str(GEN_RT)]
        (self.dir / "c.json").write_text(json.dumps(cfg))
        self.fwd = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.n.rtr,
                *fwd_pin,
                "nice",
                "-n",
                str(self.nice),
                str(FWD),
                str(self.dir / "c.json"),
                str(self.dir / "o.json"),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.fwd.stdout.readline().startswith("ready")

    def stop(self) -> dict:
        self.fwd.terminate()
        self.fwd.wait(timeout=10)
        out = json.loads((self.dir / "o.json").read_text())
        self.n.close()
        for f in self.dir.iterdir():
            f.unlink()
        self.dir.rmdir()
        return out

    def blast(self, size: int, pps: float, secs: float) -> tuple[dict, dict]:
        cnt = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.n.rcv,
                *self.gen_pre,
                str(GEN),
                "count",
                self.n.if_rcv,
                str(secs + 1.0),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert cnt.stdout.readline().startswith("ready")
        cpu0, usr0, t0 = _cpu_s(self.fwd.pid), _cpu_s(self.fwd.pid, user=True), time.monotonic()
        g = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                self.n.snd,
                *self.gen_pre,
                str(GEN),
                "send",
                self.n.if_snd,
                str(size),
                str(pps),
                str(secs),
                str(self.flows),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.monotonic() - t0
        self.cpu = (_cpu_s(self.fwd.pid) - cpu0) / wall
        self.user = (_cpu_s(self.fwd.pid, user=True) - usr0) / wall
        out, _ = cnt.communicate(timeout=secs + 10)
        return json.loads(g.stdout), json.loads(out)


def _cpu_s(pid: int, user: bool = False) -> float:
    """User + system (``user``: user only) CPU seconds of a process so far (/proc/PID/stat)."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + (0 if user else int(f[12]))) / os.sysconf("SC_CLK_TCK")


def case_throughput(rate: float, aqm: dict, size: int, pps: float, secs: float) -> dict:
    b = Bed(rate, aqm)
    try:
        g, c = b.blast(size, pps, secs)
    finally:
        st = b.stop()
    link = st["links"][0]
    if Bed.rt and not st["scheduling"].startswith("SCHED_FIFO"):
        raise RuntimeError(f"--rt: the forwarder ran under {st['scheduling']}")
    span = (c["last_ns"] - c["first_ns"]) / 1e9
    return {
        "offered_pps": g["sent"] / g["seconds"],
        "delivered_pps": c["frames"] / span if span > 0 else float("nan"),
        "departure_bps": c["slope_bps"],
        "departure_error": c["slope_bps"] / rate - 1,
        "aqm_drops": link["dropped_aqm"],
        "overflow_drops": link["dropped_overflow"],
        "marks": link["marked"],
        "ring_drops": st["rings"]["left_kernel_drops"],
        "send_errors": st["rings"]["right"]["tx_errors"],
        "sink_ring_drops": c["kernel_drops"],
        "received": st["conservation"]["received"],
        "sent_by_gen": g["accepted"],
        # CPU seconds per wall second while the generator ran (1.0 = one core busy).
        "fwd_cpu_per_wall_s": b.cpu,
        # Its user part: the forwarder's own code (rings, AQM, scheduling); the rest is the
        # kernel's, mostly the veth delivery into the receivers' namespace.
        "fwd_user_per_wall_s": b.user,
        # The generator's user + system CPU seconds per wall second of its run.
        "gen_cpu_per_wall_s": g.get("cpu_s", float("nan")) / g["seconds"],
    }


def _ping(ns: str, dst: str, count: int) -> tuple[float, float, float, float]:
    """min/avg/max/mdev (ms) of `count` echoes at 10 ms intervals, after one warm-up echo.

    The warm-up resolves ARP: without it the first echo waits for an ARP request and reply
    through the delay line, one extra round trip (seen as a single +10 ms echo).
    """
    subprocess.run(
        ["ip", "netns", "exec", ns, "ping", "-q", "-c", "1", "-W", "2", dst],
        capture_output=True,
        check=False,
    )
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "ping", "-q", "-c", str(count), "-i", "0.01", dst],
        capture_output=True,
        text=True,
    )
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", r.stdout)
    mn, avg, mx, mdev = (float(x) for x in m.groups())
    return mn, avg, mx, mdev


def _stack_rtt_ms(count: int) -> float:
    """Mean ping RTT between two namespaces joined by one veth pair, no forwarder.

    This is the end hosts' own cost (two stacks, one veth crossing each way); subtracting it
    leaves what the forwarder adds.
    """
    tag = f"aqb{os.getpid() % 100000}"
    a, b = f"{tag}a", f"{tag}b"
    try:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(
            ["ip", "link", "add", "va", "netns", a, "type", "veth", "peer", "vb", "netns", b],
            check=True,
        )
        for ns, dev, ip in ((a, "va", "10.250.0.1/30"), (b, "vb", "10.250.0.2/30")):
            subprocess.run(["ip", "-n", ns, "addr", "add", ip, "dev", dev], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        return _ping(a, "10.250.0.2", count)[1]
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


def case_ping(delay_ms: float, rate: float, count: int) -> dict:
    stack = _stack_rtt_ms(count)
    b = Bed(rate, {"name": "droptail"}, delay_ns=int(delay_ms * 1e6))
    try:
        mn, avg, mx, mdev = _ping(b.n.snd, net.host_ip("right", 0), count)
    finally:
        b.stop()
    ser_ms = 2 * 98 * 8 / rate * 1e3  # a 98-byte echo frame each way
    expected = 2 * delay_ms + ser_ms
    return {
        "rtt_min_ms": mn,
        "rtt_avg_ms": avg,
        "rtt_max_ms": mx,
        "mdev_ms": mdev,
        "expected_ms": expected,
        "stack_rtt_ms": stack,
        "added_avg_ms": avg - expected,
        "added_min_ms": mn - expected,
        # What the forwarder adds beyond the configured delay and serialisation: the mean RTT
        # less the expected one and less the end hosts' own round trip over one veth.
        "fwd_extra_avg_ms": avg - expected - stack,
    }


def _median(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--secs", type=float, default=3.0)
    ap.add_argument("--quick", action="store_true", help="one run of each case, 1 s")
    ap.add_argument("--nice", type=int, default=0, help="the forwarder's nice value")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument(
        "--rt", action="store_true", help="forwarder, generator and counter under SCHED_FIFO"
    )
    ap.add_argument("--flows", type=int, default=1, help="UDP flows the generator cycles through")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("fwd_bench: needs root (network namespaces, raw sockets)", file=sys.stderr)
        return 2
    rep, secs = (1, 1.0) if args.quick else (args.repeat, args.secs)
    red = {"name": "red", "params": {"min_th": 100, "max_th": 300, "max_p": 0.1, "w_q": 0.002}}
    cases = {
        "max_rate_1500B": lambda: case_throughput(100e9, {"name": "droptail"}, 1500, 0, secs),
        "max_rate_64B": lambda: case_throughput(100e9, {"name": "droptail"}, 64, 0, secs),
        "1Gbps_1500B_red": lambda: case_throughput(1e9, red, 1500, 1e9 / 12000, secs),
        "1Gbps_1500B_fq_codel": lambda: case_throughput(
            1e9, {"name": "fq_codel"}, 1500, 1e9 / 12000, secs
        ),
        "1Gbps_1500B_cake": lambda: case_throughput(1e9, {"name": "cake"}, 1500, 1e9 / 12000, secs),
        "1Gbps_1500B_fq_pie": lambda: case_throughput(
            1e9, {"name": "fq_pie"}, 1500, 1e9 / 12000, secs
        ),
        "1Gbps_1500B_dualpi2": lambda: case_throughput(
            1e9, {"name": "dualpi2"}, 1500, 1e9 / 12000, secs
        ),
        "1Gbps_1500B_droptail": lambda: case_throughput(
            1e9, {"name": "droptail"}, 1500, 1e9 / 12000, secs
        ),
    }
    for r in (10e6, 100e6, 1e9):
        cases[f"accuracy_{r / 1e6:g}Mbps"] = lambda r=r: case_throughput(
            r, {"name": "droptail"}, 1500, 1.1 * r / 12000, secs
        )
    for r in (10e6, 1e9):
        cases[f"ping_5ms_{r / 1e6:g}Mbps"] = lambda r=r: case_ping(
            5.0, r, 100 if args.quick else 300
        )
    Bed.nice, Bed.rt, Bed.flows = args.nice, args.rt, args.flows
    results = {}
    for name, fn in cases.items():
        if args.only and args.only not in name:
            continue
        load0 = os.getloadavg()
        runs = [fn() for _ in range(rep)]
        results[name] = {
            "median": _median(runs),
            "runs": runs,
            "loadavg_before": load0,
            "loadavg_after": os.getloadavg(),
        }
        med = results[name]["median"]
        print(
            name,
            json.dumps({k: round(v, 4) for k, v in med.items()}),
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        time.sleep(0.5)
    print(
        json.dumps(
            {
                "cpus": os.cpu_count(),
                "nice": args.nice,
                "rt": args.rt,
                "flows": args.flows,
                "results": results,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
