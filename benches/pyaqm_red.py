"""RED written in Python (examples/aqms/red.py) against the built-in RED (issue 23 item 3): the
simulating time of the 100-flow, 30 s RED dumbbell (the reference run of run_overhead.py), each
the median of ``--repeat`` runs, the two alternated in one process; target: at most 5x.

    .venv/bin/python benches/pyaqm_red.py [--repeat 3]

The simulating time is the wall time of the simulator call (``Result.wall_s``: building the
network, the run, the results), with the CPU time of the process over the same call beside it;
scenario parsing and metrics are outside both. The two runs' summaries must be identical apart
from the AQM's name (the same decisions), else the figure is not printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import aqmlab

    bench = _module(ROOT / "benches" / "run_overhead.py", "bench_run_overhead")
    red = _module(ROOT / "examples" / "aqms" / "red.py", "example_red")
    with tempfile.TemporaryDirectory() as d:
        sc = aqmlab.load_scenario(bench.bench_scenario(Path(d)))
    params = {k: v for k, v in sc.aqm.items() if k != "name"}
    times: dict[str, list[tuple[float, float]]] = {"built-in red": [], "Python red": []}
    summaries = {}
    for _ in range(args.repeat):
        for label, aqm in (("built-in red", None), ("Python red", red.Red(**params))):
            c0 = time.process_time()
            res = aqmlab.run(sc, aqm=aqm)
            cpu = time.process_time() - c0
            times[label].append((res.wall_s, cpu))
            s = json.loads(json.dumps(res.summary))
            for link in s["links"]:
                link.pop("aqm")
            summaries[label] = json.dumps(s, sort_keys=True)
    if summaries["built-in red"] != summaries["Python red"]:
        print("the two runs differ: no figure", file=sys.stderr)
        return 1
    print(
        f"100 flows, 30 s simulated, RED min_th 50 max_th 150; median of {args.repeat}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("| AQM | simulating s (wall) | CPU s (whole run call) |")
    print("|---|---|---|")
    med = {}
    for label, ts in times.items():
        med[label] = statistics.median(t[0] for t in ts)
        cpu = statistics.median(t[1] for t in ts)
        print(f"| {label} | {med[label]:.2f} | {cpu:.2f} |")
    print(f"ratio Python / built-in: {med['Python red'] / med['built-in red']:.2f}x (target <= 5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
