"""Files of a reproduction: tidy tables (Parquet/CSV), a Markdown and an HTML report, and plots
of the paper's numbers beside ours."""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

#: Optional tables a paper module may return, with their headings.
EXTRA = {
    "claims": "The paper's claims, checked",
    "readings": "Readings of the paper's open points",
    "baseline": "The paper, ns-2.35 and aqmlab on the algorithms ns-2 runs",
    "dynamics": "Queue statistics per experiment and link (means over seeds)",
}

_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:auto}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}"
)


def pyplot():
    """matplotlib's pyplot on the Agg backend (imported only when a report is drawn)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_bytes(fig) -> tuple[bytes, bytes]:
    """A figure as PNG and SVG bytes; the figure is closed."""
    plt = pyplot()
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    fig.savefig(svg, format="svg")
    plt.close(fig)
    return png.getvalue(), svg.getvalue()


def bars_by_metric(cells: pd.DataFrame, metrics: list[str], title: str):
    """One panel per metric: the paper's value, ns-2.35's (where the cells have it) and ours (95%
    CI) per algorithm, side by side."""
    plt = pyplot()
    n = len(metrics)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.7 * rows), squeeze=False)
    for k, m in enumerate(metrics):
        ax = axes[k // cols][k % cols]
        c = cells[cells["metric"] == m]
        x = range(len(c))
        if "ns2" in c:
            ax.bar([i - 0.27 for i in x], c["paper"], 0.27, label="paper", color="#bbb")
            ax.bar(list(x), c["ns2"], 0.27, label="ns-2.35", color="#e8a33d")
            ax.bar([i + 0.27 for i in x], c["ours"], 0.27, yerr=c["ours_ci"], label="aqmlab")
        else:
            ax.bar([i - 0.2 for i in x], c["paper"], 0.4, label="paper", color="#bbb")
            ax.bar([i + 0.2 for i in x], c["ours"], 0.4, yerr=c["ours_ci"], label="aqmlab")
        ax.set_xticks(list(x), list(c["aqm"]), fontsize=8)
        unit = c["unit"].iloc[0] if "unit" in c and isinstance(c["unit"].iloc[0], str) else ""
        ax.set_title(f"{m} ({unit})" if unit else m, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].axis("off")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    return df.round(3)


def write(
    name: str, mod: ModuleType, t: dict[str, Any], out: Path, *, quick: bool, wall_s: float
) -> None:
    """Writes the reproduction's directory (tables, plots, report.md, report.html, summary.json)."""
    out.mkdir(parents=True, exist_ok=True)
    t["runs"].to_parquet(out / "runs.parquet", index=False)
    extra = [k for k in EXTRA if k in t]
    for k in ("points", "cells", "rankings", "verdicts", *extra):
        _fmt(t[k]).to_csv(out / f"{k}.csv", index=False)
    if "traces" in t:  # time series behind a paper's figures (seed 001's Figs 6-17)
        t["traces"].to_csv(out / "traces.csv", index=False)
    images = {}
    import inspect

    takes_tables = len(inspect.signature(mod.figures).parameters) > 1
    figs = mod.figures(t["cells"], t) if takes_tables else mod.figures(t["cells"])
    for name_, fig in figs.items():
        png, svg = figure_bytes(fig)
        (out / f"{name_}.png").write_bytes(png)
        (out / f"{name_}.svg").write_bytes(svg)
        images[name_] = png
    doc = (mod.__doc__ or "").strip()
    md = [f"# Reproduction: {name}{' (quick)' if quick else ''}", "", doc, "", "## Verdicts", ""]
    md.append(_fmt(t["verdicts"]).to_markdown(index=False))
    for k in extra:
        md += ["", f"## {EXTRA[k]}", "", _fmt(t[k]).to_markdown(index=False)]
    if len(t["rankings"]):
        md += ["", "## Rankings per row", "", t["rankings"].to_markdown(index=False)]
    per_metric = t["cells"]["metric"].unique() if "paper" in t["cells"] else []
    for metric in per_metric:
        c = t["cells"][t["cells"]["metric"] == metric]
        cols = [
            "table",
            "nodes",
            "load",
            "buffer",
            "aqm",
            "paper",
            "ns2",
            "ours",
            "ours_ci",
            "rel_diff",
        ]
        cols = [x for x in cols if x in c.columns]
        md += ["", f"## {metric}: the paper and aqmlab", ""]
        if metric in images:
            md += [f"![{metric}]({metric}.png)", ""]
        md.append(_fmt(c[cols]).to_markdown(index=False))
    md += ["", f"{len(t['runs'])} runs; wall time {wall_s:.1f} s (cached runs are reused)."]
    (out / "report.md").write_text("\n".join(md) + "\n")
    body = [
        f"<h1>Reproduction: {html.escape(name)}{' (quick)' if quick else ''}</h1>",
        f"<p>{html.escape(doc)}</p>",
    ]
    body += ["<h2>Verdicts</h2>", _fmt(t["verdicts"]).to_html(index=False)]
    for metric, png in images.items():
        b64 = base64.b64encode(png).decode()
        body += [
            f"<h2>{html.escape(metric)}</h2>",
            f'<img alt="{html.escape(metric)}" src="data:image/png;base64,{b64}">',
        ]
    for k in extra:
        body += [f"<h2>{html.escape(EXTRA[k])}</h2>", _fmt(t[k]).to_html(index=False)]
    if len(t["rankings"]):
        body += ["<h2>Rankings per row</h2>", t["rankings"].to_html(index=False)]
    body += ["<h2>Cells</h2>", _fmt(t["cells"]).to_html(index=False)]
    title = f"aqmlab reproduction: {html.escape(name)}"
    page = f"<!doctype html><meta charset=utf-8><title>{title}</title><style>{_CSS}</style>"
    page += "\n".join(body)
    (out / "report.html").write_text(page)
    v = t["verdicts"]
    summary = {
        "paper": name,
        "quick": quick,
        "runs": len(t["runs"]),
        "wall_s": wall_s,
        "verdicts": v.to_dict(orient="records"),
        "ranking_fraction": float(t["rankings"]["holds"].mean()) if len(t["rankings"]) else None,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
