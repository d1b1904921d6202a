"""The local backend: ``jobs`` long-lived worker processes, each importing aqmlab once.

The parent hands each idle worker one task through a pipe and waits on the pipes and on the
processes' sentinels together, so it knows which task a worker held when it died: that task is
handed to a fresh worker (up to :data:`ATTEMPTS` times, then recorded as failed). Workers write
their records themselves (see :func:`aqmlab.sweep.worker.worker_main`).
"""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from aqmlab.sweep import store
from aqmlab.sweep.spec import Task
from aqmlab.sweep.worker import failed_record, worker_main

#: Times a task is started before a worker death while running it counts as the task's failure.
ATTEMPTS = 3


@dataclass
class _Worker:
    proc: Any
    conn: Any
    task: Task | None = None


@dataclass
class LocalPool:
    """A pool of worker processes for one sweep directory."""

    out: Path
    jobs: int
    series: bool
    _ctx: Any = field(default_factory=lambda: mp.get_context("spawn"))
    _workers: list[_Worker] = field(default_factory=list)

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=worker_main, args=(child, str(self.out), self.series), daemon=True
        )
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def run(
        self, tasks: list[Task], on_start: Callable[[int], None] | None = None
    ) -> Generator[tuple[str, str, str | None], None, None]:
        """Runs ``tasks``; yields (key, status, error) as each finishes."""
        queue = deque(tasks)
        attempts: dict[str, int] = {}
        self._workers = [self._spawn() for _ in range(min(self.jobs, len(tasks)))]
        if on_start:
            on_start(len(self._workers))
        try:
            while queue or any(w.task for w in self._workers):
                for w in self._workers:
                    if w.task is None and queue:
                        w.task = queue.popleft()
                        attempts[w.task.key] = attempts.get(w.task.key, 0) + 1
                        w.conn.send(w.task)
                busy = [w for w in self._workers if w.task is not None]
                ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy]))
                for i, w in enumerate(self._workers):
                    if w.task is None or (w.conn not in ready and w.proc.sentinel not in ready):
                        continue
                    msg = self._receive(w)
                    if msg is not None:
                        w.task = None
                        yield msg
                        continue
                    # The worker died while running its task (perhaps after recording it).
                    task, code = w.task, w.proc.exitcode
                    self._workers[i] = self._spawn()
                    status = store.finished_one(self.out, task.key)
                    if status is not None:
                        yield task.key, status, None
                    elif attempts[task.key] < ATTEMPTS:
                        queue.appendleft(task)
                    else:
                        err = f"worker died {ATTEMPTS} times running this run (exit code {code})"
                        store.write_record(self.out, failed_record(task, err))
                        yield task.key, "failed", err
        finally:
            self.close()

    @staticmethod
    def _receive(w: _Worker) -> tuple[str, str, str | None] | None:
        try:
            if w.conn.poll():
                return w.conn.recv()
        except (EOFError, OSError):
            pass
        w.proc.join(timeout=5)
        return None

    def close(self) -> None:
        """Stops every worker now (a run in progress is abandoned, never half-recorded)."""
        for w in self._workers:
            if w.proc.is_alive():
                w.proc.terminate()
        for w in self._workers:
            w.proc.join(timeout=5)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join()
            w.conn.close()
        self._workers = []
