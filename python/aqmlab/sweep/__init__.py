"""Sweeps: many runs of one base scenario over axes of its fields, replicated over seeds.

``aqmlab sweep SWEEP.toml`` on the command line; in Python::

    import aqmlab
    aqmlab.sweep("study.toml", out="runs/study", jobs=2)     # or dask="tcp://host:8786"
    runs = aqmlab.load_sweep("runs/study")                   # one row per run
    points = aqmlab.load_sweep("runs/study", aggregated=True)  # mean and 95% CI per point

Modules: :mod:`.spec` (the sweep file), :mod:`.store` (records and Parquet tables),
:mod:`.worker` (one run), :mod:`.local` (worker processes), :mod:`.distributed` (Dask),
:mod:`.engine` (resume, progress, consolidation). See docs/sweeps.md.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from aqmlab.sweep.engine import Outcome, run, sweep
from aqmlab.sweep.spec import Sweep, Task, load, parse
from aqmlab.sweep.store import aggregate, load_sweep

__all__ = [
    "Outcome",
    "Sweep",
    "Task",
    "aggregate",
    "load",
    "load_sweep",
    "parse",
    "run",
    "sweep",
]


class _CallableModule(types.ModuleType):
    """``aqmlab.sweep`` is this package, and ``aqmlab.sweep(...)`` runs a sweep: the module's
    class is replaced by one that is callable (Python allows assigning a module's ``__class__``
    to a ModuleType subclass)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Outcome:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
