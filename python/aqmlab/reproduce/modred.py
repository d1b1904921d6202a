"""Seed 004 (Ramachandra, Banu & Ahammed, Marking Mod RED): Tables 2 (loss rate) and 3
(throughput) on the paper's dumbbell, DropTail / RED / ModRED, 16-64 nodes, loads 25-100%,
buffers 25/100/250 packets.

What the paper's "throughput" is, it does not say. Its Table 3 values (93-99.7%, DropTail
included, at 25% load too) track 100 minus the loss rate of Table 2 within about one point, so we
compare it with the delivery ratio (packets leaving the bottleneck / packets arriving, in %) and
report the link utilisation beside it.
"""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd

from aqmlab.reproduce import core, output
from aqmlab.scenario import units

NAME = "modred"
KEYS = ["nodes", "load", "buffer", "aqm"]
ROW = ["nodes", "load", "buffer"]
METRICS = ["loss_pct", "delivery_pct", "utilisation_pct", "queue_mean_pkts", "throttled"]
#: Published metric -> our column, and which direction is better.
COMPARED = {"loss_rate": ("loss_pct", "lower"), "throughput": ("delivery_pct", "higher")}


def extract(summary: dict[str, Any]) -> dict[str, float]:
    """The metrics of one run, from its summary."""
    b = next(x for x in summary["links"] if x["name"] == "bottleneck")
    loss = float(b["loss_ratio"])
    return {
        "loss_pct": 100.0 * loss,
        "delivery_pct": 100.0 * (1.0 - loss),
        "utilisation_pct": 100.0 * float(b["utilisation"]),
        "queue_mean_pkts": float(b["queue_mean_pkts"]),
        "throttled": float(b["throttled"]),
    }


def extract_ns2(out: dict[str, float]) -> dict[str, float]:
    """The same metrics from ns-2's queue monitor on the bottleneck (ns2_dumbbell.tcl)."""
    return {
        "loss_pct": out["loss_pct"],
        "delivery_pct": 100.0 - out["loss_pct"],
        "utilisation_pct": out["utilisation_pct"],
        "queue_mean_pkts": float("nan"),
        "throttled": 0.0,
    }


def _aqm_for(exp: dict[str, Any], variant: str, buffer: int) -> dict[str, Any]:
    """The [aqm] table of an algorithm (or a reading) at a buffer size."""
    if variant in exp["aqm"]:
        a = dict(exp["aqm"][variant])
    else:
        r = dict(exp["readings"][variant])
        a = {**exp["aqm"][r.pop("aqm")], **r}
    if a["name"] == "modred":
        # ns-2's RIO defaults (IN 15/30, OUT 5/15) exceed a 25-packet buffer: cap at the buffer.
        a.setdefault("min_th_in", 15)
        a.setdefault("max_th_in", 30)
        a["max_th_in"] = min(a["max_th_in"], buffer)
        a["min_th_in"] = min(a["min_th_in"], a["max_th_in"] / 2)
    return a


def specs(quick: bool) -> list[core.RunSpec]:
    """Every run of the reproduction: the grid of the tables, for each algorithm and reading."""
    exp = core.load_experiment(NAME)
    base = core.load_scenario_dict(NAME, exp["scenario"])
    grid = exp["quick" if quick else "full"]
    variants = list(exp["aqm"]) + list(exp.get("readings", {}))
    out = []
    for nodes in grid["nodes"]:
        for load in grid["load"]:
            for buffer in grid["buffer"]:
                for v in variants:
                    sc = copy.deepcopy(base)
                    sc["flows"][0]["count"] = max(1, round(nodes * load))
                    sc["topology"]["buffer"] = buffer
                    sc["aqm"] = _aqm_for(exp, v, buffer)
                    sc["name"] = f"modred-{nodes}n-{int(load * 100)}pct-q{buffer}-{v}"
                    key = {"nodes": nodes, "load": load, "buffer": buffer, "aqm": v}
                    for seed in range(1, grid["seeds"] + 1):
                        out.append(core.RunSpec(key, sc, seed, extract))
                    f0 = sc["flows"][0]
                    out += _ns2_specs(exp, key, f0["count"], f0["start_spread"], grid["seeds"])
    return out


def _ns2_specs(
    exp: dict[str, Any], key: dict[str, Any], flows: int, sc_spread: str, seeds: int
) -> list:
    """The ns-2 runs of one point (DropTail and RED only), when ns-2 is installed."""
    n2 = exp.get("ns2")
    if not n2 or key["aqm"] not in n2["queues"] or not core.ns2_available():
        return []
    script = str(core.experiment_dir(NAME) / n2["script"])
    args = [str(flows), str(key["buffer"]), n2["queues"][key["aqm"]], str(n2["window"])]
    spread = str(units.seconds("flows[0].start_spread", sc_spread))
    tail = [n2["tcp"], spread]
    return [
        core.RunSpec(key, {"script": script, "args": args, "tail": tail}, seed, extract_ns2, "ns2")
        for seed in range(1, seeds + 1)
    ]


def compare(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The paper's tables beside ours: cell by cell and the ranking per row."""
    ours = core.aggregate(runs[runs["engine"] == "aqmlab"], KEYS, METRICS)
    pub = core.load_published(NAME)
    cells = core.side_by_side(ours, pub, KEYS, {m: c for m, (c, _) in COMPARED.items()})
    cells = core.with_ns2(cells.dropna(subset=["ours"]), runs, KEYS, METRICS, COMPARED)
    ranks = pd.concat(
        [core.ranking(m, cells, ROW, "aqm", better) for m, (_, better) in COMPARED.items()],
        ignore_index=True,
    )
    out = {"points": ours, "cells": cells, "rankings": ranks, "readings": readings(ours, pub)}
    if "ns2" in cells:
        out["baseline"] = baseline(cells)
    return out


def baseline(cells: pd.DataFrame) -> pd.DataFrame:
    """DropTail against RED, the two algorithms ns-2 runs too: in how many table rows does ns-2,
    and do we, order them as the paper does? (Tells "the paper differs" from "we differ".)"""
    rows = []
    for m, (_, better) in COMPARED.items():
        c = cells[(cells["metric"] == m) & cells["aqm"].isin(["droptail", "red"])]
        w = c.pivot_table(index=ROW, columns="aqm", values=["paper", "ns2", "ours"])
        strict = w[("paper", "droptail")] != w[("paper", "red")]
        w = w[strict]
        sign = 1 if better == "higher" else -1
        paper_dt = sign * (w[("paper", "droptail")] - w[("paper", "red")]) > 0
        row: dict[str, Any] = {"metric": m, "rows": len(w)}
        for eng in ("ns2", "ours"):
            e_dt = sign * (w[(eng, "droptail")] - w[(eng, "red")]) > 0
            row[f"{eng}_agrees"] = int((e_dt == paper_dt).sum())
        row["paper_droptail_better"] = int(paper_dt.sum())
        d = (c["ours"] - c["ns2"]).abs()
        row["median_abs_diff_ours_vs_ns2"] = float(d.median())
        row["median_abs_diff_paper_vs_ns2"] = float((c["paper"] - c["ns2"]).abs().median())
        rows.append(row)
    return pd.DataFrame(rows)


def readings(ours: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """Each reading of the paper's open points in ModRED's place: how many table rows keep the
    paper's ranking, and how far ModRED's own cells are from the paper's."""
    names = ["modred"] + [a for a in ours["aqm"].unique() if a.startswith("modred-")]
    rows = []
    for name in names:
        o = ours[ours["aqm"].isin(["droptail", "red", name])].copy()
        o["aqm"] = o["aqm"].replace({name: "modred"})
        cells = core.side_by_side(o, pub, KEYS, {m: c for m, (c, _) in COMPARED.items()})
        cells = cells.dropna(subset=["ours"])
        row: dict[str, Any] = {"reading": name}
        for m, (_, better) in COMPARED.items():
            r = core.ranking(m, cells, ROW, "aqm", better)
            row[f"{m}_rows_ranking_holds"] = f"{int(r['holds'].sum())}/{len(r)}"
            mc = cells[(cells["metric"] == m) & (cells["aqm"] == "modred")]
            row[f"{m}_modred_median_abs_diff"] = float(mc["diff"].abs().median())
        b = o[o["aqm"] == "modred"]
        row["modred_mean_utilisation_pct"] = float(b["utilisation_pct"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _by_load(cells: pd.DataFrame, metric: str):
    """Paper (dashed, open markers) and ours (solid, 95% CI bars) against load: one panel per
    (nodes, buffer), one colour per algorithm."""
    plt = output.pyplot()

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
    return fig


def figures(cells: pd.DataFrame) -> dict:
    """The paper's figures 6-11 as data: loss and throughput against load, the paper beside ns-2
    and aqmlab."""
    return {m: _by_load(cells, m) for m in cells["metric"].unique()}
