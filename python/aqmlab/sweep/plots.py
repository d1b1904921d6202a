"""Plots of a sweep, from its aggregated table (:func:`aqmlab.load_sweep` with ``aggregated``):
a metric against an axis with 95% confidence bars (one line per AQM and setting of the other
axes), trade-off curves (seed 003 s. 7, Figs 13-16: mean queueing delay against utilisation or
loss, one curve per setting, its points ordered along a swept parameter), and a heat map of a
metric over two axes. Each figure is written as PNG, SVG and PDF.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

if "ipykernel" not in sys.modules:  # in a notebook, its inline backend shows the Figures
    matplotlib.use("Agg")
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("png", "svg", "pdf")

#: Axis labels (with display units) for the metrics plotted most; others use the column name.
LABELS = {
    "bottleneck.utilisation": ("utilisation", 1.0),
    "bottleneck.delay_mean_s": ("mean queueing delay (ms)", 1e3),
    "bottleneck.loss_ratio": ("loss ratio", 1.0),
    "bottleneck.queue_mean_pkts": ("mean queue (packets)", 1.0),
    "bottleneck.throughput_bps": ("throughput (Mb/s)", 1e-6),
    "fairness.jain_goodput": ("Jain index (goodput)", 1.0),
}


def _label(metric: str) -> tuple[str, float]:
    return LABELS.get(metric, (metric, 1.0))


def save(fig, stem: Path | None, formats: Sequence[str] = FORMATS) -> Any:
    """Writes ``fig`` as ``stem.<fmt>`` for each format and closes it; with ``stem`` None,
    returns the Figure instead (each plot function here does, called without a stem)."""
    from aqmlab.report.plots import save as save_one

    if stem is None:
        return save_one(fig, None)
    save_one(fig, Path(f"{stem}.{formats[0]}"), tuple(formats[1:]))
    return [Path(f"{stem}.{fmt}") for fmt in formats]


def _curves(agg: pd.DataFrame, axes: list[str], along: str) -> list[tuple[str, pd.DataFrame]]:
    """Rows grouped into curves: one per label and setting of the axes other than ``along``,
    each sorted by ``along``."""
    others = [a for a in axes if a != along and a != "aqm.name" and agg[a].nunique() > 1]
    out = []
    for key, g in agg.groupby(["label", *others], dropna=False, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        parts = [str(key[0])] + [
            f"{a.split('.')[-1]}={v:g}" if isinstance(v, float) else f"{a.split('.')[-1]}={v}"
            for a, v in zip(others, key[1:], strict=True)
            if not (isinstance(v, float) and math.isnan(v))
        ]
        if along in g and g[along].notna().any():
            g = g.sort_values(along)
        out.append((", ".join(parts), g))
    return out


def _err(g: pd.DataFrame, metric: str, scale: float):
    ci = f"{metric}_ci95"
    return None if ci not in g else (g[ci].fillna(0) * scale).to_numpy()


def metric_vs_axis(
    agg: pd.DataFrame, axes: list[str], axis: str, metric: str, stem: Path | None = None
) -> Any:
    """``metric`` (mean, 95% confidence bars) against ``axis``: one line per curve."""
    name, scale = _label(metric)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, g in _curves(agg, axes, axis):
        g = g[g[axis].notna()]
        if g.empty:
            continue
        ax.errorbar(
            g[axis], g[metric] * scale, yerr=_err(g, metric, scale), marker="o", ms=4,
            capsize=3, label=label,
        )  # fmt: skip
    return _finish(fig, ax, axis, name, f"{name} vs {axis} (mean, 95% CI over seeds)", stem)


def tradeoff(
    agg: pd.DataFrame, axes: list[str], x: str, y: str, along: str, stem: Path | None = None
) -> Any:
    """Trade-off curves (seed 003 Figs 13-16): ``y`` against ``x`` with both confidence bars,
    one curve per label and setting of the other axes, its points ordered by ``along``."""
    xn, xs = _label(x)
    yn, ys = _label(y)
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for label, g in _curves(agg, axes, along):
        ax.errorbar(
            g[x] * xs, g[y] * ys, xerr=_err(g, x, xs), yerr=_err(g, y, ys), marker="o", ms=4,
            capsize=2, label=label,
        )  # fmt: skip
        first = g.iloc[0]
        if along in g and not (isinstance(first[along], float) and math.isnan(first[along])):
            ax.annotate(
                f"{along.split('.')[-1]}={first[along]:g}", (first[x] * xs, first[y] * ys),
                fontsize=7, xytext=(4, 4), textcoords="offset points",
            )  # fmt: skip
    return _finish(fig, ax, xn, yn, f"{yn} vs {xn}: each curve along {along} (95% CI bars)", stem)


def _finish(fig, ax, xlabel: str, ylabel: str, title: str, stem: Path | None) -> Any:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # one unlabelled curve needs no legend
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, stem)


def heatmap(
    agg: pd.DataFrame, x: str, y: str, metric: str, label: str, stem: Path | None = None
) -> Any:
    """``metric`` (mean) over the grid of two axes, for the points of one label."""
    name, scale = _label(metric)
    g = agg[agg["label"] == label]
    table = g.pivot_table(index=y, columns=x, values=metric, aggfunc="mean") * scale
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    im = ax.imshow(table.to_numpy(), origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(table.columns)), [f"{v:g}" if isinstance(v, float) else str(v)
                                              for v in table.columns])  # fmt: skip
    ax.set_yticks(range(len(table.index)), [f"{v:g}" if isinstance(v, float) else str(v)
                                            for v in table.index])  # fmt: skip
    for (i, j), v in _cells(table):
        ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=7, color="w")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    fig.colorbar(im, ax=ax, label=name)
    ax.set_title(f"{label}: {name}", fontsize=10)
    fig.tight_layout()
    return save(fig, stem)


def _cells(table: pd.DataFrame):
    arr = table.to_numpy()
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            if math.isfinite(arr[i, j]):
                yield (i, j), arr[i, j]
