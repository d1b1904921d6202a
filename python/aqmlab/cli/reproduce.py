"""`aqmlab reproduce PAPER [PAPER...] [--quick] [--out DIR] [--jobs N] [--dask ADDRESS]`."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aqmlab import reproduce as rp
    from aqmlab.reproduce import core

    papers = core.check_papers(args.paper, rp.PAPERS)
    if args.jobs is not None and args.jobs < 1:
        from aqmlab.errors import InputError

        raise InputError(f"--jobs: must be >= 1 (got {args.jobs})")
    for name in papers:
        out = Path(args.out) / name if args.out else None
        if args.engine == "testbed":
            t = _testbed(name, args, out)
        else:
            t = rp.reproduce(
                name,
                quick=args.quick,
                out=out,
                jobs=args.jobs,
                dask=args.dask,
                progress=sys.stderr.isatty(),
            )
        print(f"{name}: {len(t['runs'])} runs")
        for v in t["verdicts"].itertuples():
            what = "claims hold" if v.metrics == "claims" else "rows keep the paper's ranking"
            line = f"  {v.table}: {v.verdict}; {v.rows_ranking_holds} {what}"
            if v.median_abs_rel_diff == v.median_abs_rel_diff:  # not NaN
                line += f", median |relative difference| {v.median_abs_rel_diff:.0%}"
            print(line)
        print(
            f"wrote {t['out_dir']}/ (report.html, report.md, cells.csv, rankings.csv, runs.parquet)"
        )
    return 0


# --- engine dispatch (dropfn helper): papers with a `reproduce_testbed` run on the testbed ---
def _testbed(name: str, args: argparse.Namespace, out: Path | None):
    """Runs a paper's reproduction on the testbed (real Linux TCP/UDP through aqmlab-fwd)."""
    import importlib

    from aqmlab import reproduce as rp
    from aqmlab.errors import InputError

    mod = importlib.import_module(rp.PAPERS[name])
    if not hasattr(mod, "reproduce_testbed"):
        has = [
            p
            for p in rp.PAPERS
            if hasattr(importlib.import_module(rp.PAPERS[p]), "reproduce_testbed")
        ]
        raise InputError(
            f"--engine: paper '{name}' has no testbed reproduction (testbed: {', '.join(has)})"
        )
    from aqmlab.testbed import _require_root

    _require_root()
    return mod.reproduce_testbed(quick=args.quick, out=out, progress=True)


# --- end of the engine dispatch ---


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `reproduce` command to the CLI."""
    p = sub.add_parser(
        "reproduce", help="run a seed paper's experiments and compare with its tables"
    )
    p.add_argument("paper", nargs="+", help="modred, or all (the papers plugged in so far)")
    p.add_argument("--quick", action="store_true", help="a smaller grid and one seed (for CI)")
    p.add_argument("--out", help="results directory (default: runs/reproduce/<paper>[-quick])")
    p.add_argument("--jobs", type=int, help="runs in parallel (default: every core)")
    p.add_argument(
        "--dask", metavar="ADDRESS", help="run on a Dask scheduler, or 'local' for a LocalCluster"
    )
    p.add_argument(
        "--engine",
        choices=["sim", "testbed"],
        default="sim",
        help="sim (default), or testbed: real Linux TCP/UDP through aqmlab-fwd (root; dropfn)",
    )
    p.set_defaults(func=_cmd)
