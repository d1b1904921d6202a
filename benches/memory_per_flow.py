"""Memory per flow of a whole ``aqmlab run`` (issue 13, item 15).

Runs the dumbbell with N flows (one host per flow on each side, the default) as a user would,
``aqmlab run SCENARIO --quiet``, each in its own process, and reports the process's peak resident
memory (``ru_maxrss`` of that child), the memory per flow above a one-flow run, the wall time, and
the estimate :mod:`aqmlab.scenario.limits` refuses runs by. The simulated time is short (0.3 s,
flows
starting over the first 100 ms): memory is the network's, not the run length's (series are
bounded by ``output.max_samples``).

Also measures the coefficients of the estimate: flows over one host pair, and hosts with one
flow.

Run: ``python benches/memory_per_flow.py [N ...]`` (default 1 10000 100000; add 1000000 for
the million-flow run, several minutes of one core).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """
name = "mem"
duration = "0.3s"
warmup = "0s"
[topology]
rate = "10Gbps"
{hosts}
[[flows]]
count = {flows}
start_spread = "100ms"
"""


def run(flows: int, hosts: str = "") -> tuple[float, float, str]:
    """(peak RSS bytes, wall s, last stderr line) of one ``aqmlab run``."""
    with tempfile.TemporaryDirectory() as d:
        sc = Path(d) / "mem.toml"
        sc.write_text(SCENARIO.format(flows=flows, hosts=hosts))
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", f"{d}/out", "--quiet"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read() if p.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            return float("nan"), wall, err.strip().splitlines()[-1] if err.strip() else "failed"
        return usage.ru_maxrss * 1024.0, wall, ""


def main(argv: list[str]) -> None:
    import argparse

    from aqmlab.scenario import limits
    from aqmlab.scenario import schema as scenario

    ap = argparse.ArgumentParser(
        description="Peak memory per flow of a whole `aqmlab run` (see the module's docstring)."
    )
    ap.add_argument(
        "counts", nargs="*", type=int, metavar="N", help="flow counts (default 1 10000 100000)"
    )
    counts = ap.parse_args(argv).counts or [1, 10_000, 100_000]
    base, _, _ = run(1)
    print(f"one-flow run: peak RSS {base / 1e6:.0f} MB")
    print(f"{'flows':>9} {'hosts':>9} {'peak RSS':>10} {'per flow':>9} {'estimate':>9} {'wall':>7}")
    for n in counts:
        rss, wall, err = run(n)
        sc = scenario.from_dict({"flows": [{"count": n}], "duration": "0.3s"})
        est = limits.size_of(sc).memory_bytes()
        per = (rss - base) / n if n > 1 else float("nan")
        print(
            f"{n:>9} {2 * n:>9} {rss / 1e6:>7.0f} MB {per / 1e3:>6.2f} kB "
            f"{est / 1e6:>6.0f} MB {wall:>6.1f} s {err}"
        )
    n = 100_000
    flows_only, _, _ = run(n, "left = 1\nright = 1")
    hosts_only, _, _ = run(1, f"left = {n // 2}\nright = {n // 2}")
    print(
        f"coefficients: per flow {(flows_only - base) / n / 1e3:.2f} kB "
        f"(model {limits.PER_FLOW_BYTES / 1e3:.2f}), per host with its two links "
        f"{(hosts_only - base) / n / 1e3:.2f} kB (model {limits.PER_HOST_BYTES / 1e3:.2f})"
    )
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main(sys.argv[1:])
