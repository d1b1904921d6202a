"""The ``aqmlab`` command.

Exit codes: 0 success; 2 bad input (one line naming the field and what is allowed); 3 a run whose
end-of-run invariants failed (its results are not written as complete); 4 a sweep that finished
with failed runs (recorded with their errors); 130 / 143 interrupted by SIGINT / SIGTERM;
1 an internal error.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from aqmlab.cli.summary import print_summary
from aqmlab.errors import InputError, OutputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error on one line with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see '{self.prog} --help')\n")


def default_scenario_path() -> Path:
    """The scenario embedded in the package (run by ``aqmlab demo``)."""
    from importlib import resources  # ~10 ms at start-up: only for `aqmlab demo`
    from pathlib import Path

    return Path(str(resources.files("aqmlab") / "data" / "default.toml"))


def _cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario

    path = default_scenario_path() if args.scenario is None else Path(args.scenario)
    sc = scenario.load(path)
    out = _out_dir(args.out, sc.name, f"-seed{args.seed if args.seed is not None else sc.seed}")
    extra = None
    if args.plots or args.vector or getattr(args, "smooth", None):
        from functools import partial

        from aqmlab.report import html as report

        extra = partial(report.run_outputs, vector=args.vector, smooth_s=_smooth(args))
    res = runner.run(
        sc,
        seed=args.seed,
        out=out,
        progress=sys.stderr.isatty() and not args.quiet,
        extra_outputs=extra,
    )
    print_summary(res)
    from aqmlab import outdir

    more = "" if extra else f"; plots: aqmlab plot {res.out_dir}"
    print(
        f"wrote {res.out_dir}/ ({outdir.listing(res.out_dir)}{more}) in {res.wall_s:.2f} s wall",
        file=sys.stdout,
    )
    return 0


def _out_dir(given: str | None, name: str, suffix: str = "") -> Path:
    """``--out``, or the default ``runs/<name><suffix>``, checked before any work: a directory
    aqmlab did not write is refused, never emptied; a name that would put the default anywhere
    but under runs/ (``../../x``, an absolute name) is refused (:mod:`aqmlab.outdir`)."""
    from pathlib import Path

    from aqmlab import outdir

    if given:
        return outdir.check(given, "--out")
    outdir.safe_name(name, "name (the default output directory runs/<name> comes from it)")
    return outdir.check(Path("runs") / f"{name}{suffix}", "--out (default)")


def _cmd_sweep(args: argparse.Namespace) -> int:

    from aqmlab.sweep import engine, spec

    sw = spec.load(args.sweep)
    out = _out_dir(args.out, sw.name)
    n = len(sw.points) * len(sw.seeds)
    print(f"sweep {sw.name}: {len(sw.points)} points x {len(sw.seeds)} seeds = {n} runs")
    if args.dry_run:
        for label, point, _ in sw.points:
            print(f"  {label}: " + ", ".join(f"{k}={v!r}" for k, v in point.items()))
        return 0
    res = engine.run(
        sw,
        out,
        jobs=args.jobs,
        dask=args.dask,
        retry_failed=args.retry_failed,
        quiet=args.quiet,
    )
    print(
        f"{res.total} runs: {res.reused} already recorded, {res.ran} run now, "
        f"{res.failed} failed; wrote {out}/runs.parquet and {out}/points.parquet"
    )
    if args.plots:
        from aqmlab.sweep import report as sweep_report

        print(f"wrote {sweep_report.write(out)} (figures in {out / 'plots'}/)")
    if res.failed:
        print(f"first failure: {res.first_error}", file=sys.stderr)
        return 4
    return 0


def _cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(build_parser(theory=True), shell=args.shell))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    d = Path(args.dir)
    if (d / "sweep.json").is_file() and (d / "runs").is_dir():
        from aqmlab.sweep import report as sweep_report

        page = sweep_report.write(d)
        print(f"wrote {page} (figures as PNG, SVG and PDF in {d / 'plots'}/)")
        return 0
    from aqmlab.report import redraw

    before = _stamps(d)
    page = redraw.report_dir(d, vector=args.vector, smooth_s=_smooth(args))
    after = _stamps(d)
    written = sorted(n for n, st in after.items() if before.get(n) != st and n != page.name)
    print(f"wrote {page} (and {', '.join(written) or 'nothing else'} beside it)")
    return 0


def _stamps(d: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of each file directly in ``d``: what a redraw replaced is what changed."""
    out: dict[str, tuple[int, int]] = {}
    if not d.is_dir():
        return out  # report_dir says what is wrong with it
    for f in d.iterdir():
        try:
            st = f.stat()
        except OSError:
            continue
        if f.is_file() and not f.name.startswith("."):
            out[f.name] = (st.st_ino, st.st_mtime_ns)
    return out


def _smooth(args: argparse.Namespace) -> float | None:
    """``--smooth``: the moving-average window of the plotted time series, s (None: raw)."""
    if getattr(args, "smooth", None) is None:
        return None
    from aqmlab.scenario import units

    return units.seconds("--smooth", args.smooth, positive=True)


def _cmd_compare(args: argparse.Namespace) -> int:

    from aqmlab.report import compare
    from aqmlab.scenario import schema as scenario

    sc = scenario.load(args.scenario)
    names = [n.strip() for n in args.aqm.split(",")]
    out = _out_dir(args.out, sc.name, "-compare")
    cmp = compare.compare(
        sc,
        names,
        args.param,
        seed=args.seed,
        out=out,
        jobs=args.jobs,
        engine=args.engine,
        progress=sys.stderr.isatty() and not args.quiet,
    )
    print(f"scenario {sc.name}: {len(sc.flows)} flow group(s), {len(names)} AQMs")
    print(cmp.text())
    from aqmlab import outdir

    print(
        f"wrote {out}/ ({outdir.listing(out)}: one run directory per AQM; "
        f"redraw: aqmlab plot {out} [--smooth 0.5s] [--vector])"
    )
    return 0


def _cmd_new_aqm(args: argparse.Namespace) -> int:
    from aqmlab.pyaqm import newaqm

    root = newaqm.find_root(args.root)
    for p in newaqm.generate(args.name, root):
        print(f"wrote {p}")
    print(
        f"next: fill in the rule in crates/aqm/src/{args.name}.rs and its tests, then `make build`;"
        f" `aqmlab list` shows {args.name}"
    )
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from aqmlab.scenario import algorithms

    sys.stdout.write(algorithms.table(markdown=args.markdown))
    return 0


def _version() -> str:
    from aqmlab._version import __version__

    return f"aqmlab {__version__}"


def _add_report_parser(sub) -> None:
    """``aqmlab report DIR`` (alias ``plot``): redraw without simulating."""
    rep = sub.add_parser(
        "report",
        aliases=["plot"],
        help="redraw the plots and HTML report of a run, comparison or sweep (no simulation)",
    )
    rep.add_argument(
        "dir", help="a directory written by 'aqmlab run', 'aqmlab compare' or 'aqmlab sweep'"
    )
    rep.add_argument(
        "--vector",
        action="store_true",
        help="a run's or comparison's plots also as SVG and PDF (sweeps: always)",
    )
    rep.add_argument(
        "--smooth",
        metavar="TIME",
        help="draw a moving average over TIME (e.g. 0.5s) over the raw time series",
    )
    rep.set_defaults(func=_cmd_report)


def _add_run_parsers(sub) -> None:
    """``run`` and ``demo``."""
    r = sub.add_parser("run", help="run a scenario file")
    r.add_argument("scenario", nargs="?", help="TOML scenario (default: the embedded default)")
    r.add_argument("--out", help="results directory (default: runs/<name>-seed<seed>)")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument(
        "--plots", action="store_true", help="also draw queue.png and report.html (slower)"
    )
    r.add_argument("--vector", action="store_true", help="--plots, and the plots as SVG and PDF")
    r.add_argument("--smooth", metavar="TIME", help="--plots, with a TIME moving average drawn")
    r.set_defaults(func=_cmd_run)

    d = sub.add_parser("demo", help="run the embedded default scenario (RED dumbbell)")
    d.add_argument("--out", default="runs/demo", help="results directory (default: runs/demo)")
    d.add_argument("--seed", type=int)
    d.add_argument("--quiet", action="store_true")
    d.add_argument("--no-plots", dest="plots", action="store_false", help="no plots or report")
    d.set_defaults(func=_cmd_run, scenario=None, plots=True, vector=False)


def _add_sweep_parser(sub) -> None:
    """``sweep``."""
    sw = sub.add_parser("sweep", help="many runs over axes of a scenario (docs/sweeps.md)")
    sw.add_argument("sweep", help="TOML sweep file")
    sw.add_argument("--out", help="sweep directory (default: runs/<sweep name>)")
    sw.add_argument("--jobs", type=int, help="local worker processes (default: every core)")
    sw.add_argument(
        "--dask", metavar="ADDRESS", help="run on a Dask scheduler (or 'local': a LocalCluster)"
    )
    sw.add_argument("--retry-failed", action="store_true", help="run recorded failures again")
    sw.add_argument("--dry-run", action="store_true", help="validate and list the points only")
    sw.add_argument("--plots", action="store_true", help="also write report.html and plots/")
    sw.add_argument("--quiet", action="store_true", help="no progress bar")
    sw.set_defaults(func=_cmd_sweep)


def _add_compare_parser(sub) -> None:
    """``compare``."""
    c = sub.add_parser("compare", help="run one scenario under several AQMs")
    c.add_argument("scenario", help="TOML scenario")
    c.add_argument("--aqm", required=True, help="comma-separated AQMs or [compare.<label>] labels")
    c.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="LABEL.KEY=VALUE",
        help="override a parameter of one variant (repeatable), e.g. red.max_th=150",
    )
    c.add_argument("--out", help="results directory (default: runs/<name>-compare)")
    c.add_argument("--seed", type=int, help="override the scenario's seed")
    c.add_argument("--jobs", type=int, default=2, help="runs in parallel (default 2)")
    c.add_argument("--quiet", action="store_true", help="no progress bar (as for run)")
    c.add_argument(  # engine dispatch (dropfn helper, issue 11)
        "--engine",
        choices=["sim", "testbed"],
        default="sim",
        help="sim (default) or testbed: real Linux TCP through aqmlab-fwd (root; one at a time)",
    )
    c.set_defaults(func=_cmd_compare)


def _add_misc_parsers(sub) -> None:
    """``completion`` and ``list``."""
    comp = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description='Print a completion script: eval "$(aqmlab completion bash)" in ~/.bashrc, '
        "or aqmlab completion zsh > ~/.zfunc/_aqmlab.",
    )
    comp.add_argument("shell", choices=["bash", "zsh", "tcsh"])
    comp.set_defaults(func=_cmd_completion)

    new = sub.add_parser(
        "new-aqm",
        help="start the Rust port of an AQM: crates/aqm/src/NAME.rs, registry, test, docs page",
    )
    new.add_argument("name", metavar="NAME", help="lowercase identifier, e.g. my_idea")
    new.add_argument("--root", help="the aqmlab source tree (default: the one aqmlab runs from)")
    new.set_defaults(func=_cmd_new_aqm)

    lst = sub.add_parser("list", help="algorithms with their parameters and defaults")
    lst.add_argument("--markdown", action="store_true", help="as Markdown tables")
    lst.set_defaults(func=_cmd_list)


def build_parser(theory: bool = True) -> argparse.ArgumentParser:
    """The command-line parser. With ``theory`` false, ``theory`` is a placeholder entry (its
    subcommands import scipy, which costs more than the rest of start-up: :func:`main` builds it
    only when the command line names it)."""
    p = _Parser(prog="aqmlab", description="Design, test and compare AQM algorithms.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_run_parsers(sub)
    _add_sweep_parser(sub)
    _add_report_parser(sub)
    _add_compare_parser(sub)
    _add_misc_parsers(sub)
    from aqmlab.cli import reproduce as reproduce_cli

    reproduce_cli.register(sub)
    from aqmlab.cli import evaluate as evaluate_cli  # RFC 7928 report card (docs/evaluate.md)

    evaluate_cli.register(sub)
    from aqmlab.cli import testbed as testbed_cli  # real packets (docs/testbed.md)

    testbed_cli.register(sub)
    if not theory:
        sub.add_parser("theory", help=_THEORY_HELP)
        return p
    try:
        from aqmlab.cli import theory as theory_cli
    except ImportError:  # the theory module is optional at import time
        theory_cli = None
    if theory_cli is not None:
        theory_cli.register(sub)
    return p


_THEORY_HELP = "analytic models: dropping-function queue, TCP/AQM fluid model, Routh-Hurwitz"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `aqmlab list | head` ends quietly
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(theory="theory" in argv).parse_args(argv)
        return int(args.func(args) or 0)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OutputError as e:  # an environment fault (a full disk): one line, partial output gone
        print(f"error: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        if "sweep" in argv or "evaluate" in argv:
            print(
                "\ninterrupted: finished runs are kept; the same command resumes", file=sys.stderr
            )
            return 143 if type(e).__name__ == "TerminatedError" else 130
        print("\ninterrupted: no results were written as complete", file=sys.stderr)
        # An interrupt that lands in code an extension runs with PyRun_String during an import
        # leaves CPython's "unhandled KeyboardInterrupt" flag set, and the interpreter then kills
        # itself with SIGINT at exit instead of returning 130; running a string clears the flag.
        exec("pass")
        return 130
    except Exception as e:
        from aqmlab import _core
        from aqmlab.errors import one_line

        if isinstance(e, _core.InvariantError):
            print(f"error: {one_line(str(e))}", file=sys.stderr)
            return 3
        if os.environ.get("AQMLAB_DEBUG"):
            raise
        print(
            f"internal error: {one_line(f'{type(e).__name__}: {e}')} "
            "(set AQMLAB_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
