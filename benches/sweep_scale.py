"""Sweep throughput (issue 10 targets): N runs of a 100-flow, 30 s simulated RED dumbbell (the
default scenario with 100 flows and 30 s), local workers or Dask, with the workers' memory sampled
over the sweep.

    .venv/bin/python benches/sweep_scale.py --runs 1000 --jobs 2          # the 1,000-run target
    .venv/bin/python benches/sweep_scale.py --runs 100 --jobs 1 --repeat 3 # speed-up: 1 vs 2 jobs
    .venv/bin/python benches/sweep_scale.py --runs 100 --jobs 2 --dask     # Dask LocalCluster

Each repeat sweeps into a fresh directory (nothing reused). Prints wall time, runs per second, the
load average, and each worker's resident memory early in the sweep and at its end (flat memory:
no growth over runs). Figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_overhead import bench_scenario


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(x) for x in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except OSError:
            continue
        out += kids
        todo += kids
    return out


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class MemorySampler(threading.Thread):
    """Samples the resident memory of every descendant process every ``period`` seconds."""

    def __init__(self, period: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.period = period
        self.samples: dict[int, list[tuple[float, float]]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        t0 = time.perf_counter()
        while not self.stop.wait(self.period):
            for pid in _descendants(os.getpid()):
                rss = _rss_mb(pid)
                if rss is not None:
                    self.samples.setdefault(pid, []).append((time.perf_counter() - t0, rss))

    def report(self) -> list[str]:
        """Per process sampled for most of the sweep: RSS at 25% of its life, at its end, max."""
        lines = []
        longest = max((len(s) for s in self.samples.values()), default=0)
        for pid, s in sorted(self.samples.items()):
            if len(s) < max(4, longest // 2):
                continue  # short-lived helpers
            early = s[len(s) // 4][1]
            lines.append(
                f"pid {pid}: {len(s)} samples, RSS {early:.0f} MB at 25% -> {s[-1][1]:.0f} MB at "
                f"the end (max {max(r for _, r in s):.0f} MB)"
            )
        return lines


def one(runs: int, jobs: int, dask: bool, sc: Path, root: Path, i: int) -> tuple[float, list[str]]:
    from aqmlab.sweep import engine, spec

    doc = {"name": f"bench{i}", "base": str(sc), "seeds": runs}
    sw = spec.parse(doc)
    mem = MemorySampler()
    mem.start()
    cpu0 = _cpu_s()
    t0 = time.perf_counter()
    res = engine.run(sw, root / f"s{i}", jobs=jobs, dask="local" if dask else None, quiet=True)
    wall = time.perf_counter() - t0
    cpu = _cpu_s() - cpu0
    mem.stop.set()
    mem.join()
    assert res.ran == runs and res.failed == 0, res
    cpu_line = f"CPU {cpu:.1f} s in this process and its workers ({cpu / runs:.3f} s per run)"
    return wall, [cpu_line, *mem.report()]


def _cpu_s() -> float:
    """User + system CPU seconds of this process and of its finished (waited-for) children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--dask", action="store_true", help="a Dask LocalCluster of --jobs workers")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        sc = bench_scenario(root)
        backend = "dask LocalCluster" if args.dask else "local workers"
        print(f"{args.runs} runs, {args.jobs} x {backend}; load average before: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
        walls = []
        for i in range(args.repeat):
            wall, mem = one(args.runs, args.jobs, args.dask, sc, root, i)
            walls.append(wall)
            print(f"  repeat {i + 1}: {wall:.1f} s wall, {args.runs / wall:.2f} runs/s")
            for line in mem:
                print(f"    {line}")
        med = statistics.median(walls)
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"median {med:.1f} s wall ({args.runs / med:.2f} runs/s, {med / args.runs:.3f} s per "
              f"run); load average after: {load}")  # fmt: skip


if __name__ == "__main__":
    main()
