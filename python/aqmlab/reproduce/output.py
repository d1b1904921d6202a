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


def _plot(mod: ModuleType, cells: pd.DataFrame, metric: str) -> bytes:
    """Paper (dashed, open markers) and ours (solid, 95% CI bars) against load: one panel per
    (nodes, buffer), one colour per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = cells[cells["metric"] == metric]
    nodes = sorted(c["nodes"].unique())
    bufs = sorted(c["buffer"].unique())
    fig, axes = plt.subplots(
        len(nodes), len(bufs), figsize=(3.6 * len(bufs), 2.8 * len(nodes)), squeeze=False
    )
    colours = dict(
        zip(
            sorted(c["aqm"].unique()),
            plt.rcParams["axes.prop_cycle"].by_key()["color"],
            strict=False,
        )
    )
    for i, n in enumerate(nodes):
        for j, b in enumerate(bufs):
            ax = axes[i][j]
            for a, g in c[(c["nodes"] == n) & (c["buffer"] == b)].groupby("aqm"):
                g = g.sort_values("load")
                ax.plot(
                    g["load"] * 100,
                    g["paper"],
                    "--o",
                    mfc="none",
                    color=colours[a],
                    label=f"{a} (paper)",
                )
                ax.errorbar(
                    g["load"] * 100,
                    g["ours"],
                    yerr=g["ours_ci"],
                    fmt="-s",
                    ms=3,
                    color=colours[a],
                    label=f"{a} (aqmlab)",
                )
                if "ns2" in g and g["ns2"].notna().any():
                    ax.plot(
                        g["load"] * 100,
                        g["ns2"],
                        ":^",
                        ms=4,
                        color=colours[a],
                        label=f"{a} (ns-2.35)",
                    )
            ax.set_title(f"{n} nodes, buffer {b}", fontsize=9)
            ax.set_xlabel("load, % of nodes active", fontsize=8)
            ax.set_ylabel(f"{metric}, %", fontsize=8)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    svg = io.BytesIO()
    fig.savefig(svg, format="svg")
    plt.close(fig)
    return buf.getvalue(), svg.getvalue()


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:auto}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}"
)


def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    return df.round(3)


def write(
    name: str, mod: ModuleType, t: dict[str, Any], out: Path, *, quick: bool, wall_s: float
) -> None:
    """Writes the reproduction's directory (tables, plots, report.md, report.html, summary.json)."""
    out.mkdir(parents=True, exist_ok=True)
    t["runs"].to_parquet(out / "runs.parquet", index=False)
    extra = [k for k in ("readings", "baseline") if k in t]
    for k in ("points", "cells", "rankings", "verdicts", *extra):
        _fmt(t[k]).to_csv(out / f"{k}.csv", index=False)
    images = {}
    for metric in t["cells"]["metric"].unique():
        png, svg = _plot(mod, t["cells"], metric)
        (out / f"{metric}.png").write_bytes(png)
        (out / f"{metric}.svg").write_bytes(svg)
        images[metric] = png
    doc = (mod.__doc__ or "").strip()
    md = [f"# Reproduction: {name}{' (quick)' if quick else ''}", "", doc, "", "## Verdicts", ""]
    md.append(_fmt(t["verdicts"]).to_markdown(index=False))
    if "readings" in t:
        md += ["", "## Readings of the paper's open points", ""]
        md.append(_fmt(t["readings"]).to_markdown(index=False))
    if "baseline" in t:
        md += ["", "## DropTail vs RED: the paper, ns-2.35 and aqmlab", ""]
        md.append(_fmt(t["baseline"]).to_markdown(index=False))
    md += ["", "## Rankings per row", "", t["rankings"].to_markdown(index=False)]
    for metric in t["cells"]["metric"].unique():
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
        md += ["", f"## {metric}: the paper and aqmlab", "", f"![{metric}]({metric}.png)", ""]
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
    if "readings" in t:
        body += [
            "<h2>Readings of the paper's open points</h2>",
            _fmt(t["readings"]).to_html(index=False),
        ]
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
