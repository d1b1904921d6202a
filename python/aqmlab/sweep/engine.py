"""Running a sweep: skip what is recorded, run the rest on a backend, consolidate, report.

Resuming is the same as starting: the runs whose keys are recorded are not run again (failed ones
only with ``retry_failed``), so the same command after an interruption runs only what is missing,
and an edited sweep file reuses every run whose resolved scenario and seed did not change.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aqmlab.errors import InputError
from aqmlab.sweep import spec, store
from aqmlab.sweep.local import LocalPool
from aqmlab.sweep.spec import Sweep, Task
from aqmlab.sweep.worker import FAULT


@dataclass
class Outcome:
    """What a sweep call did: counts of runs and the directory."""

    out: Path
    total: int
    reused: int
    ran: int
    failed: int
    first_error: str | None = None


class TerminatedError(KeyboardInterrupt):
    """SIGTERM arrived: stop like on Ctrl-C (the CLI exits 143)."""


def _plan(sw: Sweep, out: Path) -> list[Task]:
    tasks = sw.tasks()
    meta = {
        "name": sw.name,
        "axes": sw.axes,
        "seeds": sw.seeds,
        "series": sw.series,
        "runs": len(tasks),
        "keys": [t.key for t in tasks],
    }
    tmp = out / ".sweep.json.tmp"
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, out / "sweep.json")
    return tasks


def _progress(total: int, initial: int, quiet: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="run",
        desc="sweep",
        disable=quiet or not sys.stderr.isatty(),
        dynamic_ncols=True,
        smoothing=0.1,
    )


def run(
    sw: Sweep,
    out: str | Path,
    *,
    jobs: int | None = None,
    dask: str | None = None,
    retry_failed: bool = False,
    quiet: bool = False,
) -> Outcome:
    """Runs every missing run of ``sw`` into ``out`` and rewrites runs.parquet/points.parquet.

    ``dask``: a scheduler address, or ``"local"`` for a LocalCluster of ``jobs`` workers;
    otherwise ``jobs`` local worker processes (default: the machine's cores).
    """
    from aqmlab import outdir

    out = outdir.check(out, "out")  # a directory aqmlab did not write is refused (issue 19)
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise InputError(f"--jobs: must be at least 1 (got {jobs})")
    cluster = None
    if dask is not None:
        from aqmlab.sweep.distributed import DaskBackend

        cluster = DaskBackend(dask, jobs)  # an unreachable scheduler fails here, before any write
    try:
        return _run(sw, out, jobs, cluster, retry_failed, quiet)
    finally:
        if cluster is not None:
            cluster.close()


def _run(sw: Sweep, out: Path, jobs: int, cluster: Any, retry_failed: bool, quiet: bool) -> Outcome:
    from aqmlab import outdir

    try:
        return _run_in(sw, out, jobs, cluster, retry_failed, quiet)
    except outdir.OutputError:
        raise
    except OSError as e:  # a full disk while planning, recording or consolidating: one line
        store.prepare_cleanup(out)
        raise outdir.fault(e, out) from None


def _report_damaged(damaged: dict[str, str], todo_keys: set[str]) -> None:
    """One line on stderr naming the damaged records (they are run again)."""
    if not damaged:
        return
    again = [k for k in damaged if k in todo_keys]
    first = next(iter(damaged.items()))
    print(
        f"sweep: {len(damaged)} damaged record(s) in runs/ (e.g. {first[0]}.json: {first[1]}); "
        f"{len(again)} of them belong to this sweep and are run again",
        file=sys.stderr,
    )


def _run_in(
    sw: Sweep, out: Path, jobs: int, cluster: Any, retry_failed: bool, quiet: bool
) -> Outcome:
    from aqmlab import outdir

    store.prepare(out)
    tasks = _plan(sw, out)
    done, damaged = store.scan(out)
    _report_damaged(damaged, {t.key for t in tasks})
    keep = {"ok", "failed"} if not retry_failed else {"ok"}
    todo = [t for t in tasks if done.get(t.key) not in keep]
    outcome = Outcome(out, len(tasks), len(tasks) - len(todo), 0, 0)
    in_main = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, _on_term) if in_main else None
    bar = _progress(len(tasks), outcome.reused, quiet)
    try:
        if todo:
            if cluster is not None:
                runs = cluster.run(todo, out, sw.series)
            else:
                runs = LocalPool(out, jobs, sw.series).run(todo)
            with contextlib.closing(runs):  # workers stop however the loop ends
                for _key, status, error in runs:
                    if status == FAULT:  # the worker could not write (a full disk): stop here
                        raise outdir.OutputError(0, error or "cannot write the sweep's records")
                    outcome.ran += 1
                    if status != "ok":
                        outcome.failed += 1
                        outcome.first_error = outcome.first_error or error
                    bar.set_postfix(failed=outcome.failed, refresh=False)
                    bar.update(1)
    except BaseException:
        bar.close()
        if in_main:
            signal.signal(signal.SIGTERM, old_term)
        with contextlib.suppress(OSError):  # the tables are rebuilt by the next invocation
            store.consolidate(out)
        store.prepare_cleanup(out)
        raise
    bar.close()
    if in_main:
        signal.signal(signal.SIGTERM, old_term)
    store.consolidate(out)
    return outcome


def _on_term(signum: int, frame: Any) -> None:
    raise TerminatedError()


def sweep(
    spec_or_path: str | Path | dict[str, Any],
    out: str | Path | None = None,
    **kwargs: Any,
) -> Outcome:
    """Runs a sweep given as a file or a dict (the TOML structure); see :func:`run` for the
    options. ``out`` defaults to ``runs/<sweep name>``."""
    if isinstance(spec_or_path, dict):
        sw = spec.parse(spec_or_path)
    else:
        sw = spec.load(spec_or_path)
    return run(sw, Path(out) if out is not None else Path("runs") / sw.name, **kwargs)
