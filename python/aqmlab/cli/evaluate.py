"""`aqmlab evaluate AQM [AQM ...] [--baselines fq_codel,pie,red] [--quick] [--out DIR]
[--params FILE] [--jobs N] [--dask ADDRESS]`: the RFC 7928 report card (docs/evaluate.md)."""

from __future__ import annotations

import argparse


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _cmd(args: argparse.Namespace) -> int:
    from aqmlab import outdir
    from aqmlab.errors import InputError
    from aqmlab.evaluate import engine

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs: must be >= 1 (got {args.jobs})")
    baselines = None if args.baselines is None else _names(args.baselines)
    t = engine.evaluate(
        args.aqm,
        baselines=baselines,
        quick=args.quick,
        out=args.out,
        params_file=args.params,
        jobs=args.jobs,
        dask=args.dask,
        quiet=False,
    )
    import json

    summ = json.loads((t["card_dir"] / "summary.json").read_text())
    for a, c in summ["overall"].items():
        print(
            f"{a}: better than every baseline on {c['well']} judged metric(s), worse than every "
            f"baseline on {c['badly']}, between them on {c['mixed']}"
        )
    missing = t["status"]
    if len(missing):
        for r in missing.drop_duplicates("scenario").itertuples():
            print(f"  {r.scenario}: {r.status}")
    print(f"wrote {t['card_dir']}/ ({outdir.listing(t['card_dir'])}) in {t['wall_s']:.0f} s")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `evaluate` command to the CLI."""
    p = sub.add_parser(
        "evaluate",
        help="judge AQMs by RFC 7928: the guideline's scenarios and a report card",
        description="Runs RFC 7928's scenarios for each AQM beside the baselines (one resumable "
        "sweep) and writes a report card (HTML, Markdown, CSV, plots) saying, section by section, "
        "what each AQM does well and badly against the baselines.",
    )
    p.add_argument("aqm", nargs="+", help="the AQM(s) to evaluate (names from `aqmlab list`)")
    p.add_argument(
        "--baselines",
        help="comma-separated AQMs to compare with (default: fq_codel,pie,red; '' for none)",
    )
    p.add_argument("--quick", action="store_true", help="short runs, one seed (what CI runs)")
    p.add_argument(
        "--out", help="results directory (default: runs/evaluate/<aqm>[+<aqm>...][-quick])"
    )
    p.add_argument(
        "--params",
        metavar="FILE",
        help="scenario file (default: the shipped rfc7928.toml; copy it to edit)",
    )
    p.add_argument("--jobs", type=int, help="runs in parallel (default: every core)")
    p.add_argument(
        "--dask", metavar="ADDRESS", help="run on a Dask scheduler, or 'local' for a LocalCluster"
    )
    p.set_defaults(func=_cmd)


__all__ = ["register"]
