"""The Dask backend: each run is a task on a ``distributed`` cluster.

The scheduler address is the only thing that changes between a laptop (``"local"`` starts a
``LocalCluster`` of ``jobs`` single-threaded worker processes) and a cluster. Tasks are the same
self-contained :class:`~aqmlab.sweep.spec.Task` objects as locally, run by the same
:func:`~aqmlab.sweep.worker.execute`; the client writes each record as its result arrives, so
results are identical to a local run's. A worker that dies is retried by Dask (its
``allowed-failures``); a task that kills workers repeatedly is recorded as failed.

With ``series = true`` the workers write run directories under the sweep directory's path: on a
real cluster that path must be on a shared file system.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from pathlib import Path

from aqmlab.errors import InputError
from aqmlab.sweep import store
from aqmlab.sweep.spec import Task
from aqmlab.sweep.worker import execute, failed_record

#: How long to wait for a scheduler to answer before giving up (seconds).
CONNECT_TIMEOUT_S = 10


class DaskBackend:
    """A connection to a Dask scheduler (made at construction, before anything is written)."""

    def __init__(self, address: str, jobs: int) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputError(
                "--dask: needs dask[distributed] (pip install 'aqmlab[dask]')"
            ) from None
        self.cluster = None
        if address == "local":
            self.cluster = LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self.client = Client(self.cluster)
            return
        try:
            self.client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
        except Exception as e:  # refused, timed out, or something that is not a scheduler
            why = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
            raise InputError(
                f"--dask: no Dask scheduler answered at {address!r} "
                f"(waited at most {CONNECT_TIMEOUT_S} s; {why})"
            ) from None

    def run(
        self, todo: list[Task], out: Path, series: bool
    ) -> Generator[tuple[str, str, str | None], None, None]:
        """Runs ``todo``; yields (key, status, error) as runs finish. Tasks still queued when the
        caller stops are cancelled."""
        from dask.distributed import as_completed

        series_dir = str(Path(out).resolve() / "series") if series else None
        futures = {
            self.client.submit(execute, t, series_dir, key=f"aqmlab-run-{t.key}", pure=False): t
            for t in todo
        }
        try:
            for fut in as_completed(futures):
                try:
                    rec = fut.result()
                except Exception as e:  # the task could not run (e.g. it killed its workers)
                    first = str(e).splitlines()[0] if str(e) else ""
                    rec = failed_record(futures[fut], f"dask: {type(e).__name__}: {first}")
                store.write_record(out, rec)
                fut.release()
                yield rec["key"], rec["status"], rec.get("error")
        finally:
            self.client.cancel(list(futures))

    def close(self) -> None:
        """Disconnects (and stops the LocalCluster this backend started)."""
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
