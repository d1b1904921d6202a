"""Seed 001 (Bisoy, Pattnaik & Mallick, LaQ): Table 1 (Experiment 1: LaQ, ARED, REM and PI with
250 Reno flows on a 20 Mb/s bottleneck, target queue 200 packets) by simulation, Table 3
(Example 1's Routh table) from the fluid model of s. 3, and the claims of Experiments 2-9 about
Figs 6-17 (``laq_dynamics``: traffic changes, random starts, two bottlenecks, N, C, RTT, target).

Table 1's "average delay" and "average jitter" are labelled ms but are seconds (0.0827 s is the
queueing delay of its 203.5-packet mean queue at 2500 packets/s); they are compared as seconds
with our mean queueing delay and jitter (docs/metrics.md). The paper does not define its settling
time; ours is docs/metrics.md's (the queue's 1 s moving average stays within 10% of its final
mean). Rankings: higher is better for utilisation and throughput, lower for delay, settling time,
loss and jitter, and a mean queue closer to the 200-packet target is better.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import Any

import pandas as pd

from aqmlab.reproduce import core, laq_dynamics, output
from aqmlab.scenario import units

NAME = "laq"
KEYS = ["aqm"]
METRICS = ["utilisation", "throughput", "delay", "settling_time", "loss", "jitter", "mean_queue"]
BETTER = {
    "utilisation": "higher",
    "throughput": "higher",
    "delay": "lower",
    "settling_time": "lower",
    "loss": "lower",
    "jitter": "lower",
    "mean_queue": "target",
}
TARGET_QUEUE = 200.0


def extract(summary: dict[str, Any], payload: float = 1.0) -> dict[str, float]:
    """Table 1's metrics of one run, in the paper's units (%, Mb/s, s, packets). Utilisation and
    throughput count payload bytes (share ``payload`` of the wire bytes), as the paper's do: its
    19.2095 Mb/s of a 20 Mb/s link is 96.05%, the payload share of ns-2's 1000-byte segments with
    40 bytes of headers (1000 / 1040 = 96.15%) on a link busy 99.9% of the time."""
    b = next(x for x in summary["links"] if x["name"] == "bottleneck")
    settle = b.get("settling_time_s")
    return {
        "utilisation": 100.0 * payload * float(b["utilisation"]),
        "throughput": payload * float(b["throughput_bps"]) / 1e6,
        "delay": float(b["delay_mean_s"]),
        "settling_time": float(settle) if settle is not None else math.nan,
        "loss": 100.0 * float(b["loss_ratio"]),
        "jitter": float(b["jitter_s"]),
        "mean_queue": float(b["queue_mean_pkts"]),
    }


def extract_ns2(out: dict[str, float]) -> dict[str, float]:
    """Table 1's metrics from ns-2's queue monitor (ns2_dumbbell.tcl prints them in the same
    units); ns-2's monitor gives no settling time or jitter."""
    return {m: float(out.get(m, math.nan)) for m in METRICS}


def _ns2_specs(exp: dict[str, Any], v: str, seeds: int, duration: float) -> list[core.RunSpec]:
    """ns-2.35's runs of one algorithm (ARED, REM, PI: the ones ns-2 has), when ns is installed."""
    n2 = exp.get("ns2")
    if not n2 or v not in n2["queues"] or not core.ns2_available():
        return []
    script = str(core.experiment_dir(NAME) / n2["script"])
    sc = {"script": script, "args": [n2["queues"][v]], "tail": [f"{duration:g}"]}
    return [core.RunSpec({"aqm": v}, sc, s, extract_ns2, "ns2") for s in range(1, seeds + 1)]


def specs(quick: bool) -> list[core.RunSpec]:
    """One run per algorithm and seed (and ns-2's runs of the algorithms it has)."""
    exp = core.load_experiment(NAME)
    base = core.load_scenario_dict(NAME, exp["scenario"])
    seeds = exp["quick" if quick else "full"]["seeds"]
    mss = units.size_bytes("tcp.mss", base["tcp"]["mss"])
    payload = mss / (mss + base["tcp"].get("header_bytes", 40))
    ex = functools.partial(extract, payload=payload)
    out = []
    for v, aqm in exp["aqm"].items():
        sc = copy.deepcopy(base)
        sc["aqm"] = dict(aqm)
        sc["name"] = f"laq-experiment1-{v}"
        for seed in range(1, seeds + 1):
            out.append(core.RunSpec({"aqm": v}, sc, seed, ex))
        out += _ns2_specs(exp, v, seeds, units.seconds("duration", base["duration"]))
    return out + laq_dynamics.specs(exp, base, quick)


def routh_cells() -> pd.DataFrame:
    """Example 1's Routh table from our fluid model (the paper's Eqs 17-23 with its second-order
    delay approximation), beside Table 3 as printed."""
    from aqmlab.theory import fluid

    e = core.load_experiment(NAME)["example1"]
    net = fluid.Network(e["n"], e["capacity_pps"], e["rtt_s"], 600)
    lin = fluid.linearize(net, fluid.Laq(e["gamma"], 200), delay="paper", r0="propagation")
    rows = lin.routh.rows
    ours = {
        "routh_s3_col1": rows[0][0],
        "routh_s2_col1": rows[1][0],
        "routh_s1_col1": rows[2][0],
        "routh_s0_col1": rows[3][0],
        "routh_s3_col2": rows[0][1],
        "routh_s2_col2": rows[1][1],
    }
    pub = core.load_published(NAME)
    t = pub[pub["table"] == "Table 3"].rename(columns={"value": "paper"}).copy()
    t["ours"] = t["metric"].map(ours)
    t["ours_ci"] = 0.0
    t["diff"] = t["ours"] - t["paper"]
    t["rel_diff"] = t["diff"] / t["paper"]
    t["stable_ours"] = lin.routh.verdict == "stable"
    return t


def _rank_rows(cells: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for m in METRICS:
        c = cells[(cells["metric"] == m)].dropna(subset=["paper", "ours"])
        if len(c) < 2:  # e.g. settling times that only one algorithm has in both
            continue
        paper = dict(zip(c["aqm"], c["paper"], strict=True))
        ours = dict(zip(c["aqm"], c["ours"], strict=True))
        better = BETTER[m]
        if better == "target":
            paper = {k: abs(v - TARGET_QUEUE) for k, v in paper.items()}
            ours = {k: abs(v - TARGET_QUEUE) for k, v in ours.items()}
            better = "lower"
        rev = better == "higher"
        rows.append(
            {
                "table": "Table 1",
                "metric": m,
                "paper_order": " > ".join(sorted(paper, key=paper.get, reverse=rev)),
                "our_order": " > ".join(sorted(ours, key=ours.get, reverse=rev)),
                "holds": core.rank_agreement(paper, ours, better),
            }
        )
    return pd.DataFrame(rows)


def readings(ours: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """Each reading of ARED's setting (``[aqm.ared-*]`` of experiment.toml) in ARED's place: its
    mean queue and loss, how far ARED's cells are from the paper's, and in how many of Table 1's
    rows the paper's ranking then holds."""
    names = ["ared", *sorted(a for a in ours["aqm"].unique() if a.startswith("ared-"))]
    others = [a for a in ours["aqm"].unique() if a not in names]
    rows = []
    for name in names:
        o = ours[ours["aqm"].isin([*others, name])].copy()
        o["aqm"] = o["aqm"].replace({name: "ared"})
        cells = core.side_by_side(o, pub, KEYS, {m: m for m in METRICS})
        rk = _rank_rows(cells)
        a = cells[cells["aqm"] == "ared"].set_index("metric")
        rows.append(
            {
                "reading": name,
                "ared_mean_queue": a.loc["mean_queue", "ours"],
                "ared_loss_pct": a.loc["loss", "ours"],
                "ared_median_abs_rel_diff": float(a["rel_diff"].abs().median()),
                "table_median_abs_rel_diff": float(cells["rel_diff"].abs().median()),
                "rows_ranking_holds": f"{int(rk['holds'].sum())}/{len(rk)}",
            }
        )
    return pd.DataFrame(rows)


def compare(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Table 1 beside our runs, and Table 3 beside our Routh table; ARED's readings; the claims
    of Experiments 2-9."""
    dyn = runs["experiment"].notna() if "experiment" in runs else runs["engine"].isna()
    exp = core.load_experiment(NAME)
    ours = core.aggregate(runs[(runs["engine"] == "aqmlab") & ~dyn], KEYS, METRICS)
    pub = core.load_published(NAME)
    pub1 = pub[pub["table"] == "Table 1"]
    t1 = core.side_by_side(ours, pub1, KEYS, {m: m for m in METRICS})
    t1 = core.with_ns2(t1, runs, KEYS, METRICS, {m: (m, BETTER[m]) for m in METRICS})
    cells = pd.concat([t1, routh_cells()], ignore_index=True)
    out = {
        "points": ours,
        "cells": cells,
        "rankings": _rank_rows(t1),
        "readings": readings(ours, pub1),
    }
    if dyn.any():
        d = runs[dyn]
        keys = [*laq_dynamics.KEYS, "q_ref"]
        pts = core.aggregate(d[d["engine"] == "aqmlab"], keys, laq_dynamics.METRICS)
        claims = pd.DataFrame(laq_dynamics.claims(pts, exp))
        dyn_tab = laq_dynamics.long_points(pts, exp).assign(engine="aqmlab")
        n2 = d[d["engine"] == "ns2"]
        if len(n2):
            pn = core.aggregate(n2, keys, laq_dynamics.METRICS)
            got = laq_dynamics.ns2_claims(pn, exp)
            claims["ns2_holds"] = claims["claim"].map(lambda c: got.get(c, (None, ""))[0])
            claims["ns2_evidence"] = claims["claim"].map(lambda c: got.get(c, (None, ""))[1])
            n2_tab = laq_dynamics.long_points(pn, exp).assign(engine="ns2")
            dyn_tab = pd.concat([dyn_tab, n2_tab], ignore_index=True)
        out["dynamics"] = dyn_tab
        out["claims"] = claims
        out["traces"] = laq_dynamics.traces(d, exp)
    return out


def verdicts(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Tables 1 and 3 by the table rule (aqmlab.reproduce.engine), Figs 6-17 by their claims."""
    from aqmlab.reproduce import engine

    v = engine.verdicts(t["cells"], t["rankings"])
    if "claims" in t and len(t["claims"]):
        v = pd.concat([v, core.claim_verdicts(t["claims"])], ignore_index=True)
    return v


def figures(cells: pd.DataFrame, tables: dict[str, pd.DataFrame] | None = None) -> dict:
    """Table 1 as bars: the paper, ns-2.35 (ARED, REM, PI) and aqmlab per metric and algorithm;
    with the tables of Experiments 2-9, their queue traces (seed 1) as Figs 6-17."""
    t1 = cells[cells["table"] == "Table 1"]
    title = "seed 001 Table 1: the paper, ns-2.35 and aqmlab"
    figs = {"table1": output.bars_by_metric(t1, METRICS, title)}
    if tables is not None and "traces" in tables and len(tables["traces"]):
        exp = core.load_experiment(NAME)
        figs["dynamics"] = laq_dynamics.figure(tables["traces"], exp, output.pyplot())
    return figs
