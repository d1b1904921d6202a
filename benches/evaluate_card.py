"""`aqmlab evaluate` at full settings (issue 24 target: one AQM and three baselines in under
5 minutes on a 2-core machine): every RFC 7928 scenario of the shipped file with the seeds of its
[settings] (5), into a fresh directory (nothing reused).

    .venv/bin/python benches/evaluate_card.py                    # codel against fq_codel, pie, red
    .venv/bin/python benches/evaluate_card.py --quick            # the CI settings
    .venv/bin/python benches/evaluate_card.py --keep runs/card   # keep the directory (docs' card)

Prints the wall time (sweep and card), the number of runs, the CPU time of this process and its
workers and the load average before and after. Figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aqm", default="codel")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--keep", help="write here (must not exist) and keep it")
    a = ap.parse_args()
    from aqmlab.evaluate import evaluate

    tmp = None
    if a.keep:
        out = Path(a.keep)
        if out.exists():
            print(f"--keep: {out} exists; give a new directory", file=sys.stderr)
            return 2
    else:
        tmp = tempfile.mkdtemp(prefix="aqmlab-bench-evaluate-")
        out = Path(tmp) / "card"
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    try:
        t = evaluate([a.aqm], quick=a.quick, out=out, jobs=a.jobs, quiet=False)
        wall = time.perf_counter() - t0
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    n = len(t["runs"])
    print(
        f"evaluate {a.aqm} against fq_codel, pie, red ({'quick' if a.quick else 'full'}): "
        f"{n} runs, wall {wall:.1f} s (target < 300 s), CPU {cpu:.1f} s "
        f"({cpu / max(n, 1):.2f} CPU-s per run), load average {load0[0]:.1f} -> {load1[0]:.1f}"
    )
    if not t["status"].empty:
        print(f"{len(t['status'])} cells did not run (missing features / not applicable):")
        for r in t["status"].drop_duplicates("scenario").itertuples():
            print(f"  {r.scenario}: {r.status[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
