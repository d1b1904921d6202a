"""``aqmlab report DIR`` / ``aqmlab plot DIR``: a finished run or comparison redrawn from its
results, without simulating. Above both :mod:`aqmlab.report.html` (a run's page) and
:mod:`aqmlab.report.compare` (a comparison's), which it chooses between."""

from __future__ import annotations

from pathlib import Path

from aqmlab.report import compare, html
from aqmlab.running import runner


def report_dir(run_dir: str | Path, vector: bool = False, smooth_s: float | None = None) -> Path:
    """``aqmlab report DIR`` / ``aqmlab plot DIR``: the plots and report of a finished run or
    comparison directory, redrawn from its results without simulating, written beside them
    (each file through a temporary name, so none is ever half-written)."""
    d = Path(run_dir)
    if compare.is_comparison(d):
        cmp = compare.load(d)
        tmp = d / ".report.partial"
        html.fresh_dir(tmp)
        compare.draw(cmp, tmp, vector=vector, smooth_s=smooth_s)
        (tmp / "compare.csv").unlink(missing_ok=True)
        html.publish(tmp, d)
        return d / "report.html"
    res = runner.load(run_dir)
    tmp = d / ".report.partial"
    html.fresh_dir(tmp)
    html.run_outputs(res, tmp, vector, smooth_s)
    html.publish(tmp, d)
    return d / "report.html"
