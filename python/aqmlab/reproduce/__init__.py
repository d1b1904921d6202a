"""`aqmlab reproduce PAPER`: a seed paper's experiments run as a grid of simulations, its
published numbers beside ours, the ranking of algorithms per table row, and a verdict per table.

Each paper is one module here (``modred``, ...) with ``NAME``, ``COMPARED``, ``specs(quick)`` and
``compare(runs)``; the experiment files (scenario, grid, the paper's numbers transcribed with
their table references) are in ``experiments/<paper>/``.

Verdict per table (docs/reproductions.md): *reproduced* when the paper's ranking holds in at least
80% of the rows and the median relative difference of the cells is within 25%; *reproduced in
ranking only* when only the first holds; *not reproduced* otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aqmlab.reproduce.papers import PAPERS

__all__ = ["PAPERS", "reproduce"]


def reproduce(
    paper: str,
    *,
    quick: bool = False,
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Runs (or resumes) one paper's reproduction and writes its comparison to ``out``
    (default ``runs/reproduce/<paper>[-quick]``). Runs go through the sweep engine: ``jobs``
    local workers (default: every core) or, with ``dask`` (a scheduler address or ``"local"``), a
    Dask cluster. Returns the tables as DataFrames."""
    from aqmlab.reproduce import engine

    return engine.reproduce(paper, quick=quick, out=out, jobs=jobs, dask=dask, progress=progress)
