"""The HTML report of a sweep (``aqmlab report SWEEP_DIR`` or ``aqmlab sweep ... --plots``).

Self-contained (PNG images embedded), with the vector versions (SVG, PDF) beside it in
``plots/``: trade-off curves, each metric against each numeric axis, heat maps where a label
varies two numeric axes, the table of points (mean +- 95% confidence half-width) and the failed
runs with their errors.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from aqmlab.report import html as run_report
from aqmlab.sweep import plots, store

if TYPE_CHECKING:
    import pandas as pd

DELAY, UTIL, LOSS = "bottleneck.delay_mean_s", "bottleneck.utilisation", "bottleneck.loss_ratio"
TABLE = [(UTIL, "util", 1.0, ".4f"), (DELAY, "delay (ms)", 1e3, ".2f"), (LOSS, "loss", 1.0, ".4f")]


def _numeric_axes(agg: pd.DataFrame, axes: list[str]) -> list[str]:
    import pandas as pd

    return [a for a in axes if pd.api.types.is_numeric_dtype(agg[a]) and agg[a].nunique() > 1]


def _figures(agg: pd.DataFrame, axes: list[str], d: Path) -> list[tuple[str, list[Path]]]:
    """Draws every figure into ``d``; returns (caption, files) pairs."""
    num = _numeric_axes(agg, axes)
    along = "aqm.max_p" if "aqm.max_p" in num else (num[0] if num else None)
    figs = []
    if along is not None:
        figs.append(
            (
                f"Delay-utilisation trade-off (seed 003 Figs 13-14), along {along}",
                plots.tradeoff(agg, axes, UTIL, DELAY, along, d / "tradeoff_delay_utilisation"),
            )
        )
        figs.append(
            (
                f"Delay-loss trade-off (seed 003 Figs 15-16), along {along}",
                plots.tradeoff(agg, axes, LOSS, DELAY, along, d / "tradeoff_delay_loss"),
            )
        )
    for axis in num[:3]:
        for metric in (DELAY, UTIL):
            stem = d / f"{metric.split('.')[-1]}_vs_{axis.replace('.', '_')}"
            figs.append(
                (f"{metric} vs {axis}", plots.metric_vs_axis(agg, axes, axis, metric, stem))
            )
    for label in agg["label"].unique():
        sub = agg[agg["label"] == label]
        two = [a for a in num if sub[a].nunique() > 1][:2]
        if len(two) == 2:
            stem = d / f"heatmap_{label}_delay"
            figs.append(
                (f"{label}: mean delay over {two[0]} x {two[1]}",
                 plots.heatmap(agg, two[0], two[1], DELAY, label, stem))
            )  # fmt: skip
    return figs


def _points_table(agg: pd.DataFrame, axes: list[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["label", *axes, "n"])
    head += "".join(f"<th>{html.escape(name)} &plusmn; 95% CI</th>" for _, name, _, _ in TABLE)
    rows = []
    for _, r in agg.iterrows():
        cells = [html.escape(str(r["label"]))]
        cells += [run_report._fmt(r[a], ".4g") for a in axes]
        cells.append(str(int(r["n"])))
        for m, _, scale, spec in TABLE:
            mean, ci = r.get(m), r.get(f"{m}_ci95")
            m_txt = run_report._fmt(None if mean is None else mean * scale, spec)
            ci_txt = run_report._fmt(None if ci is None else ci * scale, spec)
            k = r.get(f"{m}_n")  # fewer finite values than runs: say how many are behind it
            few = f" (n={int(k)})" if k is not None and k == k and k < r["n"] else ""
            cells.append(f"{m_txt} &plusmn; {ci_txt}{few}")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _failures(df: pd.DataFrame) -> str:
    bad = df[df["status"] != "ok"] if "status" in df else df.iloc[:0]
    if bad.empty:
        return "<p>No run failed.</p>"
    rows = "".join(
        f"<tr><td>{html.escape(str(r['key']))}</td><td>{html.escape(str(r['label']))}</td>"
        f"<td>{r['seed']}</td><td>{html.escape(str(r['error']))}</td></tr>"
        for _, r in bad.iterrows()
    )
    return f"<table><tr><th>key</th><th>label</th><th>seed</th><th>error</th></tr>{rows}</table>"


def write(out: str | Path) -> Path:
    """Writes ``report.html`` and ``plots/`` of the sweep directory ``out``; returns the page."""
    out = Path(out)
    df = store.load_sweep(out)
    meta = json.loads((out / "sweep.json").read_text())
    axes = [a for a in meta["axes"] if a in df.columns]
    agg = store.aggregate(df, axes)
    tmp = out / ".report.partial"
    run_report.fresh_dir(tmp)
    figs = _figures(agg, axes, tmp) if not agg.empty else []
    n_ok = int((df["status"] == "ok").sum()) if "status" in df else 0
    body = [
        f"<h1>Sweep {html.escape(meta['name'])}</h1>",
        f"<p>{len(agg)} points x seeds {html.escape(str(meta['seeds']))}: {meta['runs']} runs "
        f"planned, {n_ok} finished, {len(df) - n_ok} failed. Means over seeds with 95% "
        "confidence half-widths (Student t, n-1 degrees of freedom).</p>",
        "<h2>Points</h2>",
        _points_table(agg, axes),
    ]
    for caption, files in figs:
        png = next(f for f in files if f.suffix == ".png")
        links = " ".join(f"<a href='plots/{f.name}'>{f.suffix[1:].upper()}</a>" for f in files)
        body.append(
            f"<h2>{html.escape(caption)}</h2><img alt='{html.escape(caption)}' "
            f"src='{run_report._png(png)}'><p class='note'>{links}</p>"
        )
    body += ["<h2>Failed runs</h2>", _failures(df)]
    page = run_report._page(f"aqmlab sweep: {meta['name']}", body)
    (tmp / "report.html").write_text(page)
    run_report.publish(tmp, out, figures_dir="plots")
    return out / "report.html"
