"""The report card of ``aqmlab evaluate``: Markdown, HTML, CSV and plots, section by section of
RFC 7928, each saying what the AQM under test does well and badly against the baselines. Every
statement is computed from the tables of :mod:`aqmlab.evaluate.analyse` (the rule is
:func:`aqmlab.evaluate.analyse.compare`); no sentence is written in advance.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.evaluate.analyse import DIRECTION, LABEL, REL_TOL

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.evaluate.plan import Plan

#: The card's sections, in the guideline's order of tests, then s. 4's setups.
SECTIONS = [
    ("5", "Transport protocols (RFC 7928 s. 5)"),
    ("6", "Round-trip-time fairness (s. 6)"),
    ("7", "Burst absorption (s. 7)"),
    ("8", "Stability (s. 8)"),
    ("9", "Traffic mix (s. 9)"),
    ("10", "Several AQMs on one path (s. 10)"),
    ("4.4", "Packet sizes (s. 4.4)"),
    ("4.5", "ECN (s. 4.5)"),
    ("4.6", "With a scheduler (s. 4.6)"),
]
#: What RFC 7928 asks an evaluation to report that this card does not measure, and why.
NOT_MEASURED = [
    "s. 11 (implementation cost): not measured. The card's runs time the simulator, not the AQM: "
    "an AQM's decision costs 5-30 ns against about a microsecond of simulation per packet, well "
    "inside the run-to-run noise of a shared machine. The per-decision CPU cost of each built-in "
    "AQM is measured on its own by `cargo bench -p aqmlab-aqm --bench aqm_decision` "
    "(docs/benchmarks.md, 'AQM decision cost'), the cost of flow queueing by "
    "`benches/sched_fq.rs`; the state an AQM keeps is in its source and docs/algorithms.md.",
    "s. 8.3 (parameter sensitivity) and s. 12 (operator control, auto-tuning): measured only "
    "against the network (`rate-range`: one parameter set at 1 to 100 Mb/s), not against the "
    "AQM's own parameters. Each AQM runs with its defaults or the [aqm.<name>] parameters of the "
    "scenario file; a sweep of one AQM's parameters over a scenario is `aqmlab sweep` "
    "(docs/sweeps.md).",
]
_TABLE_METRICS = [
    "goodput_mbps",
    "utilisation",
    "delay_ms",
    "delay_p99_ms",
    "jitter_ms",
    "loss_ratio",
    "burst_ratio",
    "sync_rate",
    "jain",
    "ratio",
    "signal_ratio",
    "fct_median_s",
    "fct_p99_s",
    "startup_s",
    "settle_s",
    "settle_down_s",
    "settle_up_s",
    "unsettled_steps",
    "ping_rtt_p50_ms",
    "ping_rtt_p99_ms",
]


def _fmt(v: float, ci: float = math.nan) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    s = f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    if math.isfinite(ci):
        s += f" ± {ci:.2g}"
    return s


def _label(m: str) -> str:
    if m in LABEL:
        return LABEL[m]
    for pre, what in (
        ("share_", "goodput share of group "),
        ("loss_", "packet loss of open-loop group "),
        ("owd_p99_", "p99 one-way delay (ms) of group "),
        ("settle_step", "settling time after step "),
    ):
        if m.startswith(pre):
            return what + m[len(pre) :].removesuffix("_ms").removesuffix("_s")
    return m


def _metric_table(cells: pd.DataFrame, scenario: str, aqms: list[str]) -> list[list[str]]:
    c = cells[cells["scenario"] == scenario]
    present = list(dict.fromkeys(c["metric"]))
    order = [m for m in _TABLE_METRICS if m in present] + sorted(
        m for m in present if m not in _TABLE_METRICS and m != "sync_events"
    )
    rows = []
    for m in order:
        row = [_label(m)]
        for a in aqms:
            x = c[(c["aqm"] == a) & (c["metric"] == m)]
            row.append(_fmt(float(x["mean"].iloc[0]), float(x["ci95"].iloc[0])) if len(x) else "-")
        rows.append(row)
    return rows


def _source(pl: Plan) -> str:
    from aqmlab.evaluate import params as prm

    src = pl.params.source
    return "aqmlab/data/rfc7928.toml (shipped)" if src == str(prm.default_path()) else src


def statements(verdicts: pd.DataFrame, scenario: str, aqm: str) -> dict[str, list[str]]:
    """The computed sentences of one scenario for one AQM under test: ``well`` (better than
    every baseline), ``badly`` (worse than every baseline), ``some_better`` / ``some_worse``
    (better / worse than some, as the others), ``mixed``, ``same``."""
    out: dict[str, list[str]] = {
        "well": [],
        "badly": [],
        "some_better": [],
        "some_worse": [],
        "mixed": [],
        "same": [],
    }
    if verdicts.empty:
        return out
    v = verdicts[(verdicts["scenario"] == scenario) & (verdicts["aqm"] == aqm)]
    for r in v.itertuples():
        how = {"lower": "lower is better", "higher": "higher is better", "one": "1 is best"}
        value = _fmt(r.value) if math.isfinite(r.value) else "never"
        text = f"{_label(r.metric)} {value} ({how[r.direction]}; baselines: {r.baselines})"
        if r.verdict == "better than all baselines":
            out["well"].append(text)
        elif r.verdict == "worse than all baselines":
            out["badly"].append(text)
        elif r.verdict == "better than some":
            out["some_better"].append(f"{text}: better than {r.better_than}, as the others")
        elif r.verdict == "worse than some":
            out["some_worse"].append(f"{text}: worse than {r.worse_than}, as the others")
        elif r.verdict == "mixed":
            out["mixed"].append(f"{text}: better than {r.better_than}, worse than {r.worse_than}")
        else:
            out["same"].append(_label(r.metric))
    return out


def _tradeoff_panels(runs: pd.DataFrame, scenarios: list[Any], aqms: list[str]):
    panels = []
    for sc in scenarios:
        r = runs[runs["scenario"] == sc.id] if not runs.empty else runs
        if r.empty:
            continue
        pts = {
            a: (
                r[r["aqm"] == a]["delay_ms"].to_numpy(),
                r[r["aqm"] == a]["goodput_mbps"].to_numpy(),
            )
            for a in aqms
            if (r["aqm"] == a).any()
        }
        panels.append((f"s. {sc.section} {sc.id}", pts))
    return panels


def _capacity_plot(pl: Plan, runs: pd.DataFrame, sweep_dir: Path, sc: Any, path: Path) -> bool:
    """Queue length over time under each AQM (first seed), the capacity steps marked."""
    import numpy as np
    import pyarrow.parquet as pq

    from aqmlab.evaluate import params as prm
    from aqmlab.report import plots

    r = runs[(runs["scenario"] == sc.id)] if not runs.empty else runs
    if r.empty:
        return False
    aqms = list(dict.fromkeys(r["aqm"]))
    fig, axes = plots.plt.subplots(
        len(aqms), 1, figsize=(9, 1.9 * len(aqms) + 0.6), sharex=True, squeeze=False
    )
    steps: list[float] = []
    for ax, a in zip(axes[:, 0], aqms, strict=True):
        row = r[r["aqm"] == a].iloc[0]
        f = sweep_dir / "series" / row["key"] / "link_bottleneck.parquet"
        if not f.is_file():
            continue
        t = pq.read_table(f)
        ts, q = t.column("t_s").to_numpy(), t.column("queue_pkts").to_numpy()
        ax.plot(ts, q, lw=0.6, color="tab:blue")
        dur = float(ts[-1]) if len(ts) else 0.0
        steps = prm.step_times(sc, pl.quick, dur)
        for s in steps:
            ax.axvline(s, color="k", ls=":", lw=0.8)
        settle = row.get("settle_s", np.nan)
        ax.set_ylabel("queue (pkts)", fontsize=8)
        ax.set_title(f"{a}: mean settling time {_fmt(settle)} s after a step", fontsize=8)
    axes[-1, 0].set_xlabel("time (s); dotted: capacity steps")
    fig.suptitle(f"s. {sc.section}: {sc.title}", fontsize=9)
    fig.tight_layout()
    plots.save(fig, path)
    return True


def _multihop_plot(runs: pd.DataFrame, sweep_dir: Path, sc: Any, aqm: str, path: Path) -> bool:
    from aqmlab.report import plots
    from aqmlab.running import runner

    r = runs[(runs["scenario"] == sc.id) & (runs["aqm"] == aqm)] if not runs.empty else runs
    if r.empty:
        return False
    res = runner.load(sweep_dir / "series" / r.iloc[0]["key"])
    plots.delay_plot(res, path)
    return True


def _status_lines(doc: _Doc, status: pd.DataFrame, ids: list[str], n_aqms: int) -> None:
    """The cells of these scenarios that did not run, and why (said once when the same for all)."""
    st = status[status["scenario"].isin(ids)] if not status.empty else status
    said = list(dict.fromkeys(st["status"])) if len(st) else []
    if len(said) == 1 and len(st) == n_aqms * len(ids):  # the same everywhere: said once
        doc.ul([f"every AQM: {said[0]}"])
    elif len(ids) == 1:
        doc.ul([f"{r.aqm}: {r.status}" for r in st.itertuples()])
    else:
        doc.ul([f"`{r.scenario}`, {r.aqm}: {r.status}" for r in st.itertuples()])


#: The metrics of a sweep's tables, one table each (rows: the points, columns: the AQMs), by the
#: sweep's kind; the first is the one the per-point lines and the curve show.
FAMILY_METRICS = {
    "rtt": ("ratio", "delay_ms", "utilisation"),
    "rate": ("delay_ms", "delay_p99_ms", "utilisation", "loss_ratio"),
}
_FAMILY_ROW = {
    "rtt": "RTT of the second flow (RTT ratio)",
    "rate": "bottleneck rate (Mb/s)",
}


def _family_block(doc: _Doc, members: list[Any], t: dict[str, Any], aqms: list[str], out: Path):
    """A sweep (``rtt_sweep``, s. 6.2): its points as rows of one table per metric of
    :data:`FAMILY_METRICS`, and the curve of the goodput ratio against the RTT ratio."""
    import pandas as pd

    cells, status = t["cells"], t["status"]
    first = members[0]
    ids = [m.id for m in members]
    kind = first.family_kind
    doc.h(
        3,
        f"s. {first.section}: {first.family_title} (`{first.family}-<{kind}>`, "
        f"{len(members)} points)",
    )
    doc.p(first.note)
    _status_lines(doc, status, ids, len(aqms))
    for metric in FAMILY_METRICS[kind]:
        rows = []
        for m in members:
            c = (
                cells[(cells["scenario"] == m.id) & (cells["metric"] == metric)]
                if len(cells)
                else cells
            )
            row = [f"{m.family_label} ({m.family_x:.3g})" if kind == "rtt" else m.family_label]
            for a in aqms:
                x = c[c["aqm"] == a] if len(c) else c
                row.append(
                    _fmt(float(x["mean"].iloc[0]), float(x["ci95"].iloc[0])) if len(x) else "-"
                )
            rows.append(row)
        if any(v != "-" for r in rows for v in r[1:]):
            doc.p(f"{_label(metric)}:")
            doc.table(pd.DataFrame(rows, columns=[_FAMILY_ROW[kind], *aqms]))
    name = f"{kind}_{first.family}.png"
    plot = _family_plot if kind == "rtt" else _rate_family_plot
    if plot(cells, members, aqms, out / name):
        doc.img(name, f"{first.family}: {_label(FAMILY_METRICS[kind][0])} at each point")


def _family_items(v: pd.DataFrame, m: Any) -> list[str]:
    """One line per point of a sweep: the verdict on the sweep's first metric there."""
    metric = FAMILY_METRICS[m.family_kind][0]
    r = v[v["metric"] == metric]
    if r.empty:
        return []
    x = r.iloc[0]
    word = {
        "better than all baselines": "does well",
        "worse than all baselines": "does badly",
        "better than some": f"better than {x['better_than']}, as the others",
        "worse than some": f"worse than {x['worse_than']}, as the others",
        "mixed": f"better than {x['better_than']}, worse than {x['worse_than']}",
        "as the baselines": "as the baselines",
    }[x["verdict"]]
    how = {"lower": "lower is better", "higher": "higher is better", "one": "1 is best"}
    where = f"{m.family_label} (RTT ratio {m.family_x:.3g})" if m.family_kind == "rtt" else m.id
    return [
        f"{where}: {_label(metric)} {_fmt(x['value'])} "
        f"({how[x['direction']]}; baselines: {x['baselines']}): {word}"
    ]


def _curves(ax: Any, c: pd.DataFrame, ids: dict[str, float], aqms: list[str]) -> None:
    """One curve per AQM of the cells ``c`` (one metric) at the x of their scenario (``ids``):
    the mean and its 95% CI over the seeds."""
    import numpy as np

    for a in aqms:
        d = c[c["aqm"] == a].copy()
        if d.empty:
            continue
        d["x"] = d["scenario"].map(ids)
        d = d.sort_values("x")
        err = np.nan_to_num(d["ci95"].to_numpy(dtype=float), nan=0.0)
        ax.errorbar(d["x"], d["mean"], yerr=err, marker="o", ms=3.5, lw=1.0, capsize=2, label=a)


def _family_plot(cells: pd.DataFrame, members: list[Any], aqms: list[str], path: Path) -> bool:
    """The goodput ratio of the two flows against the ratio of their base RTTs, one curve per
    AQM (mean and 95% CI over the seeds), log-log, with two references: equal goodputs, and
    goodput inversely proportional to the RTT, as Reno's is at equal loss probability (Mathis,
    Semke, Mahdavi, Ott, CCR 27(3) 1997: rate = MSS / (RTT sqrt(2p/3)))."""
    import numpy as np

    from aqmlab.report import plots

    if cells.empty:
        return False
    ids = {m.id: m.family_x for m in members}
    c = cells[cells["scenario"].isin(list(ids)) & (cells["metric"] == "ratio")]
    if c.empty:
        return False
    fig, ax = plots.plt.subplots(figsize=(6.4, 4.4))
    xs = np.array(sorted(ids.values()))
    ax.plot(xs, np.ones_like(xs), color="0.6", ls="--", lw=0.9, label="equal goodputs")
    ax.plot(xs, 1.0 / xs, color="0.3", ls=":", lw=0.9, label="1 / RTT ratio (Reno, equal p)")
    _curves(ax, c, ids, aqms)
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"RTT of the second flow / RTT of the first ({members[0].family_ref})")
    ax.set_ylabel("goodput of the second flow / of the first")
    ax.set_title(f"s. {members[0].section}: {members[0].family_title}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    plots.save(fig, path)
    return True


def _rate_family_plot(cells: pd.DataFrame, members: list[Any], aqms: list[str], path: Path) -> bool:
    """Mean queueing delay and utilisation against the bottleneck's rate (log), one curve per AQM
    (mean and 95% CI over the seeds): does one parameter set hold its delay across rates?"""
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    from aqmlab.report import plots

    if cells.empty:
        return False
    ids = {m.id: m.family_x for m in members}
    c = cells[cells["scenario"].isin(list(ids))]
    if c.empty:
        return False
    fig, axes = plots.plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, metric in zip(axes, ("delay_ms", "utilisation"), strict=True):
        _curves(ax, c[c["metric"] == metric], ids, aqms)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("bottleneck rate (Mb/s)")
        ax.set_ylabel(_label(metric))
        if metric == "delay_ms":
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"s. {members[0].section}: {members[0].family_title}", fontsize=9)
    fig.tight_layout()
    plots.save(fig, path)
    return True


class _Doc:
    """Blocks of the card, rendered once as Markdown and once as HTML."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, Any]] = []

    def h(self, level: int, text: str) -> None:
        self.blocks.append((f"h{level}", text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def ul(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def table(self, df: Any) -> None:
        self.blocks.append(("table", df))

    def img(self, name: str, alt: str) -> None:
        self.blocks.append(("img", (name, alt)))

    def markdown(self) -> str:
        out = []
        for kind, v in self.blocks:
            if kind.startswith("h"):
                out.append("#" * int(kind[1]) + " " + v)
            elif kind == "p":
                out.append(v)
            elif kind == "ul":
                out.append("\n".join(f"- {x}" for x in v))
            elif kind == "table":
                out.append(v.to_markdown(index=False))
            else:
                out.append(f"![{v[1]}]({v[0]})")
        return "\n\n".join(out) + "\n"

    def html(self, out: Path) -> str:
        import re

        def inline(x: str) -> str:
            x = html.escape(x)
            x = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", x)
            return re.sub(r"`(.+?)`", r"<code>\1</code>", x)

        body = []
        for kind, v in self.blocks:
            if kind.startswith("h"):
                body.append(f"<{kind}>{inline(v)}</{kind}>")
            elif kind == "p":
                body.append(f"<p>{inline(v)}</p>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{inline(x)}</li>" for x in v) + "</ul>")
            elif kind == "table":
                body.append(v.to_html(index=False, escape=True))
            else:
                b64 = base64.b64encode((out / v[0]).read_bytes()).decode()
                body.append(f'<img alt="{html.escape(v[1])}" src="data:image/png;base64,{b64}">')
        return (
            "<!doctype html><meta charset=utf-8><title>aqmlab: RFC 7928 report card</title>"
            f"<style>{_CSS}</style>\n" + "\n".join(body) + "\n"
        )


def _write_tables(t: dict[str, Any], out: Path) -> None:
    """The card's CSV files: every run, every cell with its verdict, the verdicts, the status."""
    cells, verdicts = t["cells"], t["verdicts"]
    t["runs"].to_csv(out / "runs.csv", index=False)
    card = cells.copy()
    if not verdicts.empty and not card.empty:
        card = card.merge(
            verdicts[["scenario", "aqm", "metric", "verdict", "better_than", "worse_than"]],
            on=["scenario", "aqm", "metric"],
            how="left",
        )
    card.to_csv(out / "card.csv", index=False)
    verdicts.to_csv(out / "verdicts.csv", index=False)
    t["status"].to_csv(out / "status.csv", index=False)


def _verdict_items(s: dict[str, list[str]]) -> list[str]:
    """One AQM's judged metrics in one scenario (from :func:`statements`), as list items."""
    items = [f"does well: {x}" for x in s["well"]]
    items += [f"does badly: {x}" for x in s["badly"]]
    items += [f"better than some baselines: {x}" for x in s["some_better"]]
    items += [f"worse than some baselines: {x}" for x in s["some_worse"]]
    items += [f"mixed: {x}" for x in s["mixed"]]
    if s["same"]:
        items.append(f"as the baselines: {', '.join(s['same'])}")
    if not items:
        items.append("nothing judged (no baseline ran this scenario)")
    return items


def _section_lines(
    sec_counts: dict[str, dict[str, int]], sec_named: dict[str, dict[str, list[str]]]
) -> list[str]:
    """A section's head: per AQM under test, its counts of judged metrics and the named ones."""
    lines = []
    for a, c in sec_counts.items():
        if not any(c.values()):
            lines.append(f"**{a}**: nothing judged in this section (see each scenario).")
            continue
        lines.append(
            f"**{a}**: better than every baseline on {c['well']} judged metric(s), worse "
            f"than every baseline on {c['badly']}, between them (better than some, worse "
            f"than or as others) on {c['mixed']}."
        )
        if sec_named[a]["well"]:
            lines.append(f"{a} does well: " + "; ".join(sec_named[a]["well"]) + ".")
        if sec_named[a]["badly"]:
            lines.append(f"{a} does badly: " + "; ".join(sec_named[a]["badly"]) + ".")
    return lines


def _zero() -> dict[str, int]:
    """Counts of judged metrics: better than every baseline, worse than every one, between."""
    return {"well": 0, "badly": 0, "mixed": 0}


def _intro(doc: _Doc, pl: Plan) -> None:
    """The card's title and its opening paragraphs: what ran and how the verdicts are reached."""
    doc.h(1, f"RFC 7928 report card: {', '.join(pl.aqms)}" + (" (quick)" if pl.quick else ""))
    doc.p(
        f"AQM under test: **{', '.join(pl.aqms)}**; baselines: "
        f"{', '.join(pl.baselines) or 'none'}. "
        f"{len(pl.seeds)} seed(s) per scenario and AQM; scenario file: `{_source(pl)}`."
    )
    doc.p(
        "Each section runs the guideline's scenarios (the section numbers are RFC 7928's) and "
        "compares the AQM under test with every baseline on the judged metrics. A difference "
        f"counts when it exceeds {REL_TOL:.0%} of the baseline's value and the sum of the two "
        "95% confidence half-widths (when there are several seeds); 'better than every "
        "baseline' is a strength, 'worse than every baseline' a weakness, the rest is mixed. "
        "The network is aqmlab's simulator (docs/simulator.md), not a real one; the scenarios' "
        "choices and the metrics' definitions are in docs/evaluate.md."
    )
    if pl.quick:
        doc.p(
            "**Quick mode**: short runs and one seed; the numbers show that every scenario runs, "
            "not how the AQM performs."
        )


def _judge(
    verdicts: pd.DataFrame,
    members: list[Any],
    a: str,
    counts: list[dict[str, int]],
    named: dict[str, list[str]],
) -> tuple[dict[str, list[str]], list[str]]:
    """Counts AQM ``a``'s judged metrics in ``members`` into each of ``counts`` and names its
    strengths and weaknesses in ``named``. Returns the last member's statements and, for a
    family, its items."""
    family_items: list[str] = []
    s: dict[str, list[str]] = {}
    for m in members:
        s = statements(verdicts, m.id, a)
        n_mixed = len(s["mixed"]) + len(s["some_better"]) + len(s["some_worse"])
        for k, n in (("well", len(s["well"])), ("badly", len(s["badly"])), ("mixed", n_mixed)):
            for c in counts:
                c[k] += n
        if not verdicts.empty:
            v = verdicts[(verdicts["scenario"] == m.id) & (verdicts["aqm"] == a)]
            for k, word in (("well", "better"), ("badly", "worse")):
                sel = v[v["verdict"] == f"{word} than all baselines"]
                named[k] += [f"{_label(x)} in `{m.id}`" for x in sel["metric"]]
            if m.family is not None:
                family_items += _family_items(v, m)
    return s, family_items


def _aqm_lines(
    doc: _Doc,
    sc: Any,
    a: str,
    s: dict[str, list[str]],
    family_items: list[str],
    has_table: bool,
    cells: pd.DataFrame,
) -> None:
    """What AQM ``a`` did in scenario ``sc`` (or in its family), under the scenario's table."""
    if sc.family is not None:
        doc.p(
            f"**{a}** here ({_label(FAMILY_METRICS[sc.family_kind][0])} at each "
            "point; every other metric is in card.csv and counted in the section's "
            "line above):"
        )
        doc.ul(family_items or ["nothing judged (no baseline ran these scenarios)"])
        return
    if not has_table:
        return
    if not ((cells["scenario"] == sc.id) & (cells["aqm"] == a)).any():
        doc.p(f"**{a}** here: did not run (the reason is above).")
        return
    doc.p(f"**{a}** here:")
    doc.ul(_verdict_items(s))


def _scenario_plots(doc: _Doc, pl: Plan, runs: pd.DataFrame, sc: Any, out: Path) -> None:
    """A scenario's own figures: the queue under a varying capacity, every hop of a multi-hop
    path."""
    sweep_dir = out.parent / "sweep"
    if sc.capacity is not None:
        name = f"capacity_{sc.id}.png"
        if _capacity_plot(pl, runs, sweep_dir, sc, out / name):
            doc.img(name, f"{sc.id}: queue over time")
    if sc.group == "10":
        for a in pl.aqms:
            name = f"hops_{sc.id}_{a}.png"
            if _multihop_plot(runs, sweep_dir, sc, a, out / name):
                doc.img(name, f"{sc.id} under {a}: every hop")


def _section(
    doc: _Doc,
    pl: Plan,
    t: dict[str, Any],
    group: str,
    title: str,
    out: Path,
    overall: dict[str, dict[str, int]],
) -> None:
    """One section of the card: each scenario (or family of scenarios) with its table, verdicts
    and figures, headed by the section's counts and its delay-goodput trade-off."""
    import pandas as pd

    from aqmlab.report import plots

    scs = [s for s in pl.scenarios if s.group == group]
    if not scs:
        return
    cells, verdicts = t["cells"], t["verdicts"]
    aqms = pl.aqms + pl.baselines
    doc.h(2, title)
    head_at = len(doc.blocks)
    sec_counts = {a: _zero() for a in pl.aqms}
    sec_named: dict[str, dict[str, list[str]]] = {a: {"well": [], "badly": []} for a in pl.aqms}
    families_done: set[str] = set()
    for sc in scs:
        members = [sc]
        if sc.family is not None:  # a sweep's points: one block, a table per metric, a curve
            if sc.family in families_done:
                continue
            families_done.add(sc.family)
            members = [m for m in scs if m.family == sc.family]
            _family_block(doc, members, t, aqms, out)
        else:
            doc.h(3, f"s. {sc.section}: {sc.title} (`{sc.id}`)")
            doc.p(sc.note)
            _status_lines(doc, t["status"], [sc.id], len(aqms))
        rows = _metric_table(cells, sc.id, aqms) if not cells.empty and sc.family is None else []
        if rows:
            doc.table(pd.DataFrame(rows, columns=["metric", *aqms]))
        for a in pl.aqms:
            counts = [sec_counts[a], overall[a]]
            s, family_items = _judge(verdicts, members, a, counts, sec_named[a])
            _aqm_lines(doc, sc, a, s, family_items, bool(rows), cells)
        _scenario_plots(doc, pl, t["runs"], sc, out)
    head = _Doc()
    head.ul(_section_lines(sec_counts, sec_named))
    panels = _tradeoff_panels(t["runs"], scs, aqms)
    if panels:
        name = f"tradeoff_s{group.replace('.', '_')}.png"
        plots.tradeoff_plot(panels, out / name)
        head.img(name, f"delay-goodput trade-off, {title}")
    doc.blocks[head_at:head_at] = head.blocks


def _summary(overall: dict[str, dict[str, int]]) -> _Doc:
    """The card's summary: per AQM under test, its counts over all sections."""
    top = _Doc()
    top.h(2, "Summary")
    top.ul(
        [
            f"**{a}**: better than every baseline on {c['well']} judged metric(s), worse than "
            f"every baseline on {c['badly']}, between them on {c['mixed']} (all sections)."
            for a, c in overall.items()
        ]
    )
    return top


def write(pl: Plan, t: dict[str, Any], out: Path, wall_s: float) -> None:
    """Writes the card into ``out`` (a fresh directory)."""
    n_runs = len(t["runs"])
    _write_tables(t, out)
    doc = _Doc()
    _intro(doc, pl)
    overall = {a: _zero() for a in pl.aqms}
    summary_at = len(doc.blocks)
    for group, title in SECTIONS:
        _section(doc, pl, t, group, title, out, overall)
    doc.blocks[summary_at:summary_at] = _summary(overall).blocks
    doc.h(2, "Not measured by this card")
    doc.ul(NOT_MEASURED)
    doc.p(
        f"{n_runs} runs; wall time {wall_s:.0f} s (recorded runs are reused). Files: card.csv "
        "(every mean, CI and verdict), runs.csv (every run), verdicts.csv, status.csv."
    )
    (out / "report.md").write_text(doc.markdown())
    (out / "report.html").write_text(doc.html(out))
    summary = {
        "aqms": pl.aqms,
        "baselines": pl.baselines,
        "quick": pl.quick,
        "seeds": pl.seeds,
        "runs": n_runs,
        "wall_s": wall_s,
        "overall": overall,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px}"
    "img{max-width:100%}code{background:#f4f4f4}"
)


__all__ = ["DIRECTION", "SECTIONS", "statements", "write"]
