"""Seed 000 (Brachman & Chrost, 'On the search of efficient AQM for large delay networks'):
Tables 3-5, the average bottleneck throughput (LAN, WAN_100, WAN_300) and the average queue (WAN
scenarios) of DT, RED, ARED, AVQ, PI, REM, ANAQM and LINDROP under low, moderate and heavy
congestion (10, 100, 1000 TCP connections) on the N1-N6 dumbbell of s. 4.2.

Throughput is the bottleneck's departed bits per second over the whole run, in Mb/s (s. 4.3:
"the number of bytes departed at the router A throughout the simulation course"); the mean queue
is the time-averaged bottleneck queue in packets. Higher throughput is better; for the queue the
ranking compares the order of the algorithms only.

Ranking rule: the paper gives one number per cell and no confidence interval, and many of its
cells differ by hundredths of a Mb/s (LAN, moderate: 99.64-99.98). Pairs of algorithms that the
paper separates by less than ``TIE`` (1% of the larger value) are treated as ties, i.e. not
judged; the strict rule (every pair judged) is reported beside it (``holds_strict``).
"""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd

from aqmlab.reproduce import core, output
from aqmlab.scenario import units

NAME = "lindrop"
KEYS = ["delay", "congestion", "aqm"]
ROW = ["delay", "congestion"]
METRICS = ["throughput_mbps", "queue_mean_pkts", "loss_pct", "utilisation_pct"]
#: Published metric -> our column, and which direction is better.
COMPARED = {"throughput": ("throughput_mbps", "higher"), "mean_queue": ("queue_mean_pkts", "lower")}
#: Pairs the paper separates by less than this share of the larger value are not judged.
TIE = 0.01
LEVELS = ["low", "moderate", "heavy"]


def extract(summary: dict[str, Any]) -> dict[str, float]:
    """The tables' metrics of one run, from its summary."""
    b = next(x for x in summary["links"] if x["name"] == "bottleneck")
    return {
        "throughput_mbps": float(b["throughput_bps"]) / 1e6,
        "queue_mean_pkts": float(b["queue_mean_pkts"]),
        "loss_pct": 100.0 * float(b["loss_ratio"]),
        "utilisation_pct": 100.0 * float(b["utilisation"]),
    }


def flow_counts(connections: int) -> dict[str, int]:
    """s. 4.2's split of ``connections``: 10% with 536-byte packets (all FTP); of the 1500-byte
    ones 75% FTP and 25% web slots (rounded half to even: 10 -> 1 + 7 FTP and 2 web)."""
    small = round(0.1 * connections)
    large = connections - small
    ftp = round(0.75 * large)
    return {"ftp_1500": ftp, "ftp_536": small, "web_slots": large - ftp}


def scenario_for(
    base: dict[str, Any], exp: dict[str, Any], delay: str, level: str, aqm: str, quick: bool
) -> dict[str, Any]:
    """The scenario of one table cell."""
    sc = copy.deepcopy(base)
    sc["topology"]["delay"] = exp["delays"][delay]
    c = exp["congestion"][level]
    n = flow_counts(c["connections"])
    sc["flows"][0]["count"] = n["ftp_1500"]
    sc["flows"][1]["count"] = n["ftp_536"]
    sc["flows"][2]["arrival_rate"] = c["web_rate"]
    if aqm in exp["aqm"]:
        a = dict(exp["aqm"][aqm])
    else:  # a reading: an algorithm of the table with some of its parameters changed
        r = dict(exp["readings"][aqm])
        a = {**exp["aqm"][r.pop("aqm")], **r}
    # Table 2's buffer is ns-2's queue-limit; where ns-2 counts that queue in bytes
    # (queue_in_bytes_: limit x mean_pktsize_), aqmlab's buffer is that byte size.
    buffer = a.pop("buffer")
    sc["topology"]["buffer"] = a.pop("buffer_as_ns2", buffer)
    sc["aqm"] = a
    if quick and "duration" in exp["quick"]:
        sc["duration"] = exp["quick"]["duration"]
    sc["name"] = f"lindrop-{delay}-{level}-{aqm}"
    return sc


def specs(quick: bool) -> list[core.RunSpec]:
    """Every run of the reproduction: delays x congestion levels x algorithms x seeds."""
    exp = core.load_experiment(NAME)
    base = core.load_scenario_dict(NAME, exp["scenario"])
    grid = exp["quick" if quick else "full"]
    out = []
    for delay in grid["delay"]:
        for level in grid["congestion"]:
            for aqm in [*exp["aqm"], *(() if quick else exp.get("readings", {}))]:
                sc = scenario_for(base, exp, delay, level, aqm, quick)
                key = {"delay": delay, "congestion": level, "aqm": aqm}
                for seed in range(1, grid["seeds"] + 1):
                    out.append(core.RunSpec(key, sc, seed, extract))
                out += _ns2_specs(exp, key, sc, grid["seeds"])
    return out


def _ns2_specs(exp: dict[str, Any], key: dict[str, Any], sc: dict[str, Any], seeds: int) -> list:
    """The ns-2 runs of one point (the algorithms ns-2 ships), when ns-2 is installed."""
    n2 = exp.get("ns2")
    if not n2 or key["aqm"] not in n2["queues"] or not core.ns2_available():
        return []
    script = str(core.experiment_dir(NAME) / n2["script"])
    delay_ms = units.seconds("topology.delay", sc["topology"]["delay"]) * 1e3
    c = exp["congestion"][key["congestion"]]
    args = [
        f"{delay_ms:g}",
        str(c["connections"]),
        str(c["web_rate"]),
        n2["queues"][key["aqm"]],
        str(exp["aqm"][key["aqm"]]["buffer"]),  # ns-2's queue-limit, in its own unit
    ]
    tail = [f"{units.seconds('duration', sc['duration']):g}"]
    return [
        core.RunSpec(key, {"script": script, "args": args, "tail": tail}, seed, _extract_ns2, "ns2")
        for seed in range(1, seeds + 1)
    ]


def _extract_ns2(out: dict[str, float]) -> dict[str, float]:
    """The same metrics from ns-2's queue monitor on RA -> RB (ns2_dumbbell.tcl)."""
    return {
        "throughput_mbps": out["throughput_mbps"],
        "queue_mean_pkts": out["queue_mean_pkts"],
        "loss_pct": out["loss_pct"],
        "utilisation_pct": out["throughput_mbps"],  # a 100 Mb/s link: Mb/s = %
    }


def compare(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The paper's tables beside ours: cell by cell and the ranking per (delay, congestion)."""
    ours = core.aggregate(runs[runs["engine"] == "aqmlab"], KEYS, METRICS)
    pub = core.load_published(NAME)
    cells = core.side_by_side(ours, pub, KEYS, {m: c for m, (c, _) in COMPARED.items()})
    cells = core.with_ns2(cells.dropna(subset=["ours"]), runs, KEYS, METRICS, COMPARED)
    parts = []
    for m, (_, better) in COMPARED.items():
        loose = core.ranking(m, cells, ROW, "aqm", better, tie=TIE)
        strict = core.ranking(m, cells, ROW, "aqm", better)
        loose["holds_strict"] = strict["holds"].to_numpy()
        parts.append(loose)
    ranks = pd.concat(parts, ignore_index=True)
    out = {"points": ours, "cells": cells, "rankings": ranks, "claims": claims(cells)}
    if "ns2" in cells:
        out["baseline"] = baseline(cells)
    if ours["aqm"].str.startswith("lindrop-").any():
        out["readings"] = readings(ours, pub)
    return out


def baseline(cells: pd.DataFrame) -> pd.DataFrame:
    """The six algorithms ns-2 ships, per table: in how many rows ns-2.35 and aqmlab each keep
    the paper's ranking (1% tie band), and the median relative distance of the paper and of
    aqmlab from ns-2 (tells "the paper differs" from "we differ")."""
    c = cells.dropna(subset=["ns2"])
    rows = []
    for table, g in c.groupby("table", sort=False):
        m = g["metric"].iloc[0]
        better = COMPARED[m][1]
        held = {"ns2": 0, "ours": 0}
        n = 0
        for _, r in g.groupby(ROW, sort=False):
            paper = dict(zip(r["aqm"], r["paper"], strict=True))
            n += 1
            for eng in held:
                e = dict(zip(r["aqm"], r[eng], strict=True))
                held[eng] += core.rank_agreement(paper, e, better, TIE)
        rows.append(
            {
                "table": table,
                "rows": n,
                "ns2_keeps_paper_ranking": f"{held['ns2']}/{n}",
                "aqmlab_keeps_paper_ranking": f"{held['ours']}/{n}",
                "median_rel_dist_paper_vs_ns2": float(
                    ((g["paper"] - g["ns2"]) / g["ns2"]).abs().median()
                ),
                "median_rel_dist_aqmlab_vs_ns2": float(
                    ((g["ours"] - g["ns2"]) / g["ns2"]).abs().median()
                ),
            }
        )
    return pd.DataFrame(rows)


def readings(ours: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """Each reading of LINDROP's open points in its place: how far LINDROP's cells are from the
    paper's, and in how many table rows the paper's ranking then holds."""
    names = ["lindrop", *sorted(a for a in ours["aqm"].unique() if a.startswith("lindrop-"))]
    others = [a for a in ours["aqm"].unique() if a not in names]
    rows = []
    for name in names:
        o = ours[ours["aqm"].isin([*others, name])].copy()
        o["aqm"] = o["aqm"].replace({name: "lindrop"})
        cells = core.side_by_side(o, pub, KEYS, {m: c for m, (c, _) in COMPARED.items()})
        cells = cells.dropna(subset=["ours"])
        row: dict[str, Any] = {"reading": name}
        for m, (_, better) in COMPARED.items():
            r = core.ranking(m, cells, ROW, "aqm", better, tie=TIE)
            row[f"{m}_rows_ranking_holds"] = f"{int(r['holds'].sum())}/{len(r)}"
            mc = cells[(cells["metric"] == m) & (cells["aqm"] == "lindrop")]
            row[f"{m}_lindrop_median_abs_rel_diff"] = float(mc["rel_diff"].abs().median())
        rows.append(row)
    return pd.DataFrame(rows)


def claims(cells: pd.DataFrame) -> pd.DataFrame:
    """s. 4.3-4.4's statements about LINDROP, checked on our numbers (where the grid has them)."""
    thr = cells[cells["metric"] == "throughput"]
    rows = []

    def best(g: pd.DataFrame) -> str:
        return str(g.loc[g["ours"].idxmax(), "aqm"])

    for (delay, level), g in thr.groupby(["delay", "congestion"], sort=False):
        if delay == "WAN_300":
            rows.append(
                {
                    "claim": "WAN_300: LINDROP gives the highest throughput at every congestion "
                    "level (s. 4.4)",
                    "where": f"{delay}, {level}",
                    "holds": best(g) == "lindrop",
                    "evidence": f"highest: {best(g)} ({g['ours'].max():.2f} Mb/s); "
                    f"LINDROP {float(g.loc[g['aqm'] == 'lindrop', 'ours'].iloc[0]):.2f}",
                }
            )
        if level == "low" and delay == "LAN":
            avq = float(g.loc[g["aqm"] == "avq", "ours"].iloc[0])
            rows.append(
                {
                    "claim": "LAN, low congestion: every algorithm but AVQ reaches 90% "
                    "utilisation; AVQ about 75% (s. 4.3)",
                    "where": f"{delay}, {level}",
                    "holds": bool((g.loc[g["aqm"] != "avq", "ours"] >= 90).all() and avq < 90),
                    "evidence": ", ".join(
                        f"{a} {v:.1f}" for a, v in zip(g["aqm"], g["ours"], strict=True)
                    ),
                }
            )
    return pd.DataFrame(rows)


def _panel(ax, c: pd.DataFrame) -> None:
    """One algorithm at one delay: the paper, ns-2.35 and aqmlab against the congestion level."""
    c = c.assign(x=c["congestion"].map(LEVELS.index)).sort_values("x")
    ax.plot(c["x"], c["paper"], "--o", mfc="none", color="k", label="paper")
    if "ns2" in c and c["ns2"].notna().any():
        ax.plot(c["x"], c["ns2"], ":^", ms=4, color="tab:green", label="ns-2.35")
    lo = (c["ours"] - c["ours_ci"]).clip(lower=0)
    ax.fill_between(c["x"], lo, c["ours"] + c["ours_ci"], color="tab:blue", alpha=0.2, lw=0)
    ax.plot(c["x"], c["ours"], "-s", ms=3, color="tab:blue", label="aqmlab (95% CI)")
    ax.set_xticks(range(len(LEVELS)), ["10", "100", "1000"], fontsize=7)  # connections
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)


def figures(cells: pd.DataFrame) -> dict:
    """Throughput and mean queue against the congestion level: one row per bottleneck delay, one
    column per algorithm; the paper (black, dashed), ns-2.35 (green, dotted) and aqmlab (blue,
    with its 95% confidence band)."""
    plt = output.pyplot()
    figs = {}
    for m, unit in (("throughput", "Mb/s"), ("mean_queue", "packets")):
        c = cells[cells["metric"] == m]
        delays = list(dict.fromkeys(c["delay"]))
        aqms = list(dict.fromkeys(c["aqm"]))
        if not delays:
            continue
        fig, axes = plt.subplots(
            len(delays),
            len(aqms),
            figsize=(1.7 * len(aqms), 1.9 * len(delays) + 0.6),
            squeeze=False,
            sharey="row",
        )
        for i, d in enumerate(delays):
            for j, a in enumerate(aqms):
                ax = axes[i][j]
                _panel(ax, c[(c["delay"] == d) & (c["aqm"] == a)])
                if i == 0:
                    ax.set_title(a, fontsize=9)
            axes[i][0].set_ylabel(f"{d}\n{m.replace('_', ' ')}, {unit}", fontsize=8)
        for ax in axes[-1]:
            ax.set_xlabel("TCP connections", fontsize=7)
        h, lab = axes[0][0].get_legend_handles_labels()
        fig.legend(h, lab, loc="upper center", ncol=3, fontsize=8)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        figs[m] = fig
    return figs
