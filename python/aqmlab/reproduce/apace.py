"""Seed 003 (Jain, Karandikar & Verma, APACE), s. 7 and 8: the single- and multiple-bottleneck
claims (s. 8 in ``apace_s8``). The paper gives
its results as figures only (their data did not survive), so each claim its text makes about
Figs 9 and 11-16 is checked against our runs, with the numbers that decide it:

- Fig. 9 (40 sources, buffer 50; SRED 20): APACE's queue "is stable at 20"; "RED is unable to
  control the oscillations in the instantaneous queue, while APACE and PAQM provide reasonable
  stability"; RED's queue "becomes empty frequently leading to severe underutilization"; "SRED
  ... always tries to keep the buffer close to full".
- Figs 11-12 (sources varied): "APACE is able to successfully transmit more packets than any other
  scheme"; "APACE shows a consistent improvement in the packet loss rate".
- Figs 13-14 (80 sources, buffer 250): with alpha = 0 and max_p varied alone APACE spans the
  delay range of RED's operating points, and "any operating point that is achievable by RED can be
  achieved by APACE" (an APACE point with no more delay and no less utilisation).

Oscillation is measured as the coefficient of variation of the queue (std / mean, time-weighted);
"close to full" as a mean queue of at least 3/4 of the buffer; "stable at 20" as a mean queue in
[15, 25] packets with a coefficient of variation below RED's. A tolerance of 5% on delay and 0.2
points of utilisation is allowed when one operating point is said to achieve another.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

import pandas as pd

from aqmlab.reproduce import apace_s8, core, output
from aqmlab.reproduce.apace_claims import (
    DELAY_TOL,
    UTIL_TOL,
    against_sources,
    extract_link,
    winner_claims,
)
from aqmlab.reproduce.apace_claims import claim as _claim

NAME = "apace"
KEYS = ["experiment", "aqm", "sources", "max_th", "max_p", "knob"]
METRICS = ["utilisation", "loss", "delay", "queue_mean", "queue_cv"]


extract = partial(extract_link, "bottleneck")


def _scenario(base: dict, aqm: dict, sources: int, buffer: int | None, name: str) -> dict:
    sc = copy.deepcopy(base)
    a = dict(aqm)
    buf = a.pop("buffer", None)
    sc["aqm"] = a
    sc["flows"][0]["count"] = sources
    sc["topology"]["buffer"] = buffer or buf or sc["topology"]["buffer"]
    sc["name"] = name
    return sc


def specs(quick: bool) -> list[core.RunSpec]:
    """Figs 9 and 11-12 (every algorithm against the number of sources) and Figs 13-14 (APACE
    with alpha = 0 and RED over max_p and max_th)."""
    exp = core.load_experiment(NAME)
    base = core.load_scenario_dict(NAME, exp["scenario"])
    grid = exp["quick" if quick else "full"]
    seeds = range(1, grid["seeds"] + 1)
    out = []
    nan = float("nan")
    for n in grid["sources"]:
        for v, aqm in exp["aqm"].items():
            key = {"experiment": "fig11-12", "aqm": v, "sources": n, "max_th": nan, "max_p": nan}
            sc = _scenario(base, aqm, n, None, f"apace-s7-{v}-{n}")
            out += [core.RunSpec(key, sc, s, extract) for s in seeds]
    t = exp["tradeoff"]
    for mp in grid["tradeoff_max_p"]:
        a = {"name": "apace", "alpha": 0.0, "max_p": mp}
        key = {
            "experiment": "fig13-16",
            "aqm": "apace",
            "sources": t["sources"],
            "max_th": nan,
            "max_p": mp,
        }
        sc = _scenario(base, a, t["sources"], t["buffer"], f"apace-s72-apace-{mp}")
        out += [core.RunSpec(key, sc, s, extract) for s in seeds]
        for th in t["red_max_th"]:
            r = {"name": "red", "min_th": t["red_min_th"], "max_th": th, "max_p": mp, "w_q": 0.002}
            key = {
                "experiment": "fig13-16",
                "aqm": "red",
                "sources": t["sources"],
                "max_th": th,
                "max_p": mp,
            }
            sc = _scenario(base, r, t["sources"], t["buffer"], f"apace-s72-red-{th}-{mp}")
            out += [core.RunSpec(key, sc, s, extract) for s in seeds]
    return out + apace_s8.specs(exp, NAME, quick)


def _fig9(p: pd.DataFrame) -> list[dict[str, Any]]:
    at40 = p[(p["experiment"] == "fig11-12") & (p["sources"] == 40)].set_index("aqm")
    if at40.empty:
        return []
    q, cv, u = at40["queue_mean"], at40["queue_cv"], at40["utilisation"]
    return [
        _claim(
            "Fig. 9",
            "APACE's queue is stable at 20 packets",
            15 <= q["apace"] <= 25 and cv["apace"] < cv["red"],
            f"APACE mean queue {q['apace']:.1f} packets, CV {cv['apace']:.2f} "
            f"(RED's CV {cv['red']:.2f})",
        ),
        _claim(
            "Fig. 9",
            "RED oscillates; APACE and PAQM keep the queue stable",
            cv["red"] > cv["apace"] and cv["red"] > cv["paqm"],
            f"CV: RED {cv['red']:.2f}, APACE {cv['apace']:.2f}, PAQM {cv['paqm']:.2f}",
        ),
        _claim(
            "Fig. 9",
            "RED's emptying queue under-utilises the link (against APACE)",
            u["red"] < u["apace"],
            f"utilisation: RED {u['red']:.4f}, APACE {u['apace']:.4f}",
        ),
        _claim(
            "Fig. 9",
            "SRED keeps its 20-packet buffer close to full",
            q["sred"] >= 0.75 * 20,
            f"SRED mean queue {q['sred']:.1f} of 20 packets",
        ),
    ]


def _figs11_12(p: pd.DataFrame) -> list[dict[str, Any]]:
    return winner_claims(
        p[p["experiment"] == "fig11-12"],
        [
            ("utilisation", "Fig. 11", "APACE transmits more packets than any other scheme"),
            ("loss", "Fig. 12", "APACE has the lowest loss rate"),
        ],
    )


def _figs13_16(p: pd.DataFrame) -> list[dict[str, Any]]:
    t = p[p["experiment"] == "fig13-16"]
    a, r = t[t["aqm"] == "apace"], t[t["aqm"] == "red"]
    if a.empty or r.empty:
        return []
    dominated = [
        bool(((a["delay"] <= rd * DELAY_TOL) & (a["utilisation"] >= ru - UTIL_TOL)).any())
        for rd, ru in zip(r["delay"], r["utilisation"], strict=True)
    ]
    span = (
        a["delay"].min() <= r["delay"].min() * DELAY_TOL
        and a["delay"].max() >= r["delay"].max() / DELAY_TOL
    )
    return [
        _claim(
            "Figs. 13-14",
            "APACE with alpha = 0 spans RED's delay range by max_p alone",
            span,
            f"APACE delay {1e3 * a['delay'].min():.1f}-{1e3 * a['delay'].max():.1f} ms; "
            f"RED {1e3 * r['delay'].min():.1f}-{1e3 * r['delay'].max():.1f} ms",
        ),
        _claim(
            "Figs. 13-14",
            f"every RED operating point is achieved by APACE ({sum(dominated)}/{len(dominated)})",
            all(dominated),
            "an APACE point with delay <= 1.05 x RED's and utilisation >= RED's - 0.002",
        ),
    ]


def compare(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each claim of s. 7 with the numbers that decide it."""
    keys = [k for k in KEYS if k in runs]
    r = runs.copy()
    for k in ("max_th", "max_p", "knob"):
        r[k] = r[k].fillna(-1) if k in r else -1.0  # group NaN coordinates
    points = core.aggregate(r, keys, METRICS)
    s8 = apace_s8.claims(points, core.load_experiment(NAME)["multi"]["fig18_sources"])
    claims = pd.DataFrame(_fig9(points) + _figs11_12(points) + _figs13_16(points) + s8)
    cells = points.assign(table=points["experiment"], metric="all")
    return {"points": points, "cells": cells, "rankings": pd.DataFrame(), "claims": claims}


def verdicts(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per figure: reproduced when every claim about it holds, in part when some do."""
    return core.claim_verdicts(t["claims"])


def figures(cells: pd.DataFrame) -> dict:
    """Figs 11-12 (utilisation and loss against sources) and 13 (delay against utilisation); s. 8's
    Figs 19-22 in ``multi``."""
    plt = output.pyplot()
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
    against_sources(ax, cells[cells["experiment"] == "fig11-12"], "TCP sources", "Figs. 11, 12")
    t = cells[cells["experiment"] == "fig13-16"]
    for (a, th), g in t.groupby(["aqm", "max_th"]):
        g = g.sort_values("max_p")
        lab = "APACE alpha 0" if a == "apace" else f"RED max_th {int(th)}"
        ax[2].errorbar(
            g["utilisation"],
            1e3 * g["delay"],
            xerr=g["utilisation_ci"],
            yerr=1e3 * g["delay_ci"],
            marker="o",
            label=lab,
        )
    ax[2].set(
        xlabel="utilisation", ylabel="mean queueing delay, ms", title="Figs. 13-14: trade-off"
    )
    for x in ax:
        x.grid(alpha=0.3)
        x.legend(fontsize=7)
    fig.tight_layout()
    return {"claims": fig, "multi": apace_s8.figure(cells, plt)}
