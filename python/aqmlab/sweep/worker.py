"""Running one task of a sweep, and the long-lived local worker process that runs many.

:func:`execute` is what every backend calls (the local pool and Dask): it runs the task's scenario
in-process with :func:`aqmlab.running.runner.run` and returns the run's record; an error of the run
becomes
a failed record, never an exception.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from pathlib import Path
from typing import Any

from aqmlab.sweep.spec import Task

#: The status a worker reports when it cannot write (a full disk): the sweep stops with one line.
FAULT = "fault"


def record_head(task: Task) -> dict[str, Any]:
    """The fields of a record that describe the task (what ran, not how it went)."""
    from aqmlab._version import __version__

    return {
        "key": task.key,
        "label": task.label,
        "aqm": task.scenario.get("aqm", {}).get("name"),
        "point": task.point,
        "seed": task.seed,
        "version": __version__,
    }


def failed_record(task: Task, error: str) -> dict[str, Any]:
    """The record of a task that could not run at all (its worker died, the cluster failed)."""
    return {
        **record_head(task),
        "status": "failed",
        "error": error,
        "wall_s": None,
        "summary": None,
    }


def execute(task: Task, series_dir: str | None = None) -> dict[str, Any]:
    """Runs ``task``; the record has its key, label, point, seed, status ("ok" or "failed"),
    error (one line), wall_s and summary (the run's summary.json as a dict, or None).
    With ``series_dir``, the run's directory (time series included) is written there."""
    from aqmlab import outdir
    from aqmlab.errors import InputError
    from aqmlab.running import runner

    rec = record_head(task)
    t0 = time.perf_counter()
    try:
        out = None if series_dir is None else Path(series_dir) / task.key
        res = runner.run(task.scenario, seed=task.seed, out=out)
        rec.update(status="ok", error=None, summary=res.summary)
    except InputError as e:
        rec.update(status="failed", error=f"input: {e}", summary=None)
    except outdir.OutputError:
        raise  # the environment's fault, not the run's: the sweep stops (no record)
    except Exception as e:  # any failure of one run is recorded; the sweep goes on
        where = traceback.extract_tb(e.__traceback__)[-1:] if e.__traceback__ else []
        at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
        from aqmlab.errors import one_line

        rec.update(status="failed", error=one_line(f"{type(e).__name__}: {e}{at}"), summary=None)
    rec["wall_s"] = time.perf_counter() - t0
    return rec


def worker_main(conn: Any, out: str, series: bool) -> None:
    """A local worker: receives tasks on ``conn``, runs each, writes its record into the sweep
    directory ``out`` itself (so a finished run survives the death of the parent), then reports
    the key and status. Ends when the parent closes the pipe or goes away.

    SIGINT is ignored: a Ctrl-C reaches the whole process group, and the parent decides.
    """
    from aqmlab.sweep import store

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    series_dir = os.path.join(out, "series") if series else None
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            rec = execute(task, series_dir)
            store.write_record(Path(out), rec)
            msg = (task.key, rec["status"], rec.get("error"))
        except OSError as e:  # cannot write (a full disk): one line to the parent, no traceback
            from aqmlab import outdir

            fault = e if isinstance(e, outdir.OutputError) else outdir.fault(e, Path(out))
            msg = (task.key, FAULT, fault.strerror or str(fault))
        try:
            conn.send(msg)
        except (BrokenPipeError, OSError):
            return
