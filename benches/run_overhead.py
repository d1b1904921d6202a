"""Per-process cost of the CLI (issue 10 item 6, issue 13 item 9): wall time and peak memory of
``aqmlab --help``, ``aqmlab list`` and ``aqmlab run`` of a 100-flow, 30 s RED dumbbell with its
default outputs (and with ``--plots``), each the median of ``--repeat`` runs, as whole processes.

    .venv/bin/python benches/run_overhead.py [--repeat 3]

Prints a Markdown table for docs/benchmarks.md with the load average: on a shared machine the
figures move with the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench_scenario(directory: Path) -> Path:
    """The default scenario with 100 flows and 30 s simulated (the issue's reference run)."""
    text = (ROOT / "scenarios" / "default.toml").read_text()
    text = text.replace('duration = "60s"', 'duration = "30s"').replace("count = 50", "count = 100")
    text = text.replace('name = "default-red-dumbbell"', 'name = "bench-100"', 1)
    assert 'duration = "30s"' in text and "count = 100" in text
    p = directory / "bench100.toml"
    p.write_text(text)
    return p


def measure(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident memory (MB) of one process
    (wait4's rusage). CPU time is less sensitive than wall time to other load on the machine."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.read().decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    exe = str(Path(sys.executable).with_name("aqmlab"))
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        sc = bench_scenario(d)
        cases = [
            ("aqmlab --help", [exe, "--help"]),
            ("aqmlab list", [exe, "list"]),
            ("aqmlab run (100 flows, 30 s)", [exe, "run", str(sc), "--out", "r", "--quiet"]),
            (
                "aqmlab run --plots (same)",
                [exe, "run", str(sc), "--out", "p", "--quiet", "--plots"],
            ),
        ]
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| command | wall s (median) | runs | CPU s (median) | peak RSS MB (median) |")
        print("|---|---|---|---|---|")
        for name, cmd in cases:
            res = [measure(cmd, d) for _ in range(args.repeat)]
            walls = ", ".join(f"{w:.2f}" for w, _, _ in res)
            wall = statistics.median(w for w, _, _ in res)
            cpu = statistics.median(c for _, c, _ in res)
            rss = statistics.median(m for _, _, m in res)
            print(f"| `{name}` | {wall:.2f} | {walls} | {cpu:.2f} | {rss:.0f} |")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
