"""Seed 003 (APACE), s. 8: the multiple-bottleneck network (Fig. 17) and the claims the text makes
about Figs 18-24, measured at router 2's outgoing link (`hop2` of `experiments/apace/multi.toml`):

- Fig. 18: "The queue occupancy is around 40 packets"; "APACE is able to keep the instantaneous
  queue stable" (as in s. 7, against RED's oscillation).
- Figs 19-20 (sources varied): "APACE also gives better link utilization and lower packet loss".
- Figs 21-22 (trade-off curves: APACE with alpha = 0 over max_p; RED with max_th 15 over max_p;
  PAQM's Q_opt and SRED's buffer from 3 to 50; AVQ's alpha from 0.05 to 0.99): "for a given delay,
  APACE achieves the highest link utilization at a much lower packet loss rate", except that "the
  trade-off curves for SRED look better"; "link utilization in APACE remains almost constant at a
  high value"; RED with max_th 15 loses utilisation at higher max_p.
- Figs 23-24 (s. 8.3): RED's utilisation over max_th in {15, 30, 45, 50} and max_p varies more
  than APACE's over max_p and alpha.

Thresholds used to judge the words (the paper gives none): "stable" is a coefficient of variation
below RED's; "around 40" is a mean queue in [30, 50]; one operating point "achieves" another with
no more than 5% more delay and no less than 0.002 less utilisation (or no more loss); "almost
constant at a high value" is a spread of at most 0.05 with every point at 0.9 or more.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

import pandas as pd

from aqmlab.reproduce import core
from aqmlab.reproduce.apace_claims import (
    DELAY_TOL,
    UTIL_TOL,
    against_sources,
    extract_link,
    winner_claims,
)
from aqmlab.reproduce.apace_claims import claim as _claim


def _scenario(base: dict, aqm: dict, sources: int, name: str) -> dict:
    sc = copy.deepcopy(base)
    a = dict(aqm)
    sc["topology"]["buffer"] = a.pop("buffer", sc["topology"]["buffer"])
    sc["aqm"] = a
    sc["flows"][0]["count"] = sources
    sc["name"] = name
    return sc


def _key(exp: str, aqm: str, sources: int, **coords: float) -> dict[str, Any]:
    nan = float("nan")
    k = {"experiment": exp, "aqm": aqm, "sources": sources, "max_th": nan, "max_p": nan}
    return k | {"knob": nan} | coords


def _tradeoff_points(m: dict, grid: dict) -> list[tuple[str, dict, dict]]:
    """(aqm label, AQM table, coordinates) of every trade-off point (Figs 21-24)."""
    pts = []
    for mp in grid["max_p"]:
        for alpha in grid["apace_alpha"]:
            a = {"name": "apace", "alpha": alpha, "max_p": mp}
            pts.append(("apace", a, {"max_p": mp, "knob": alpha}))
        for th in grid["red_max_th"]:
            r = {"name": "red", "min_th": m["red_min_th"], "max_th": th, "max_p": mp, "w_q": 0.002}
            pts.append(("red", r, {"max_p": mp, "max_th": th}))
    for v in grid["knob"]:
        pts.append(("paqm", {"name": "paqm", "q_opt": v}, {"knob": v}))
        sred = {"name": "sred", "zombies": 1000, "p_max": 0.15, "buffer": int(v)}
        pts.append(("sred", sred, {"knob": v}))
    for al in grid["avq_alpha"]:
        pts.append(("avq", {"name": "avq", "gamma": 0.98, "alpha": al}, {"knob": al}))
    return pts


def specs(exp: dict, paper: str, quick: bool) -> list[core.RunSpec]:
    """Figs 18-20 (every algorithm against the number of long sources) and Figs 21-24 (the
    trade-off and parameter sweeps), each run measured at ``[multi] link``."""
    m = exp["multi"]
    base = core.load_scenario_dict(paper, m["scenario"])
    grid = m["quick" if quick else "full"]
    seeds = range(1, grid["seeds"] + 1)
    ext = partial(extract_link, m["link"])
    aqms = {v: a | m.get("override", {}).get(v, {}) for v, a in exp["aqm"].items()}
    out = []
    for n in grid["sources"]:
        for v, aqm in aqms.items():
            sc = _scenario(base, aqm, n, f"apace-s8-{v}-{n}")
            out += [core.RunSpec(_key("fig18-20", v, n), sc, s, ext) for s in seeds]
    n = m["tradeoff_sources"]
    for i, (v, aqm, coords) in enumerate(_tradeoff_points(m, grid)):
        sc = _scenario(base, aqm, n, f"apace-s8-tradeoff-{v}-{i}")
        out += [core.RunSpec(_key("fig21-24", v, n, **coords), sc, s, ext) for s in seeds]
    return out


def _fig18(p: pd.DataFrame, n: int) -> list[dict[str, Any]]:
    at = p[(p["experiment"] == "fig18-20") & (p["sources"] == n)].set_index("aqm")
    if at.empty:
        return []
    q, cv = at["queue_mean"], at["queue_cv"]
    qs = ", ".join(f"{a} {q[a]:.1f}" for a in q.index)
    return [
        _claim(
            "Fig. 18",
            f"the queue at router 2 is around 40 packets (APACE, N = {n})",
            30 <= q["apace"] <= 50,
            f"mean queue at router 2: {qs} packets",
        ),
        _claim(
            "Fig. 18",
            "APACE keeps router 2's queue stable (CV below RED's)",
            cv["apace"] < cv["red"],
            f"CV: RED {cv['red']:.2f}, APACE {cv['apace']:.2f}, PAQM {cv['paqm']:.2f}, "
            f"SRED {cv['sred']:.2f}",
        ),
    ]


def _figs19_20(p: pd.DataFrame) -> list[dict[str, Any]]:
    s = p[p["experiment"] == "fig18-20"]
    if s.empty:
        return []
    return winner_claims(
        s,
        [
            ("utilisation", "Fig. 19", "APACE gives the highest utilisation at router 2"),
            ("loss", "Fig. 20", "APACE gives the lowest loss at router 2"),
        ],
    )


def _achieved(a: pd.DataFrame, pts: pd.DataFrame, metric: str) -> list[bool]:
    """For each point of ``pts``: is there an APACE point with no more delay (5%) and no worse
    ``metric`` (utilisation: at least, loss: at most)?"""
    out = []
    for d, x in zip(pts["delay"], pts[metric], strict=True):
        good = a[metric] >= x - UTIL_TOL if metric == "utilisation" else a[metric] <= x
        out.append(bool(((a["delay"] <= d * DELAY_TOL) & good).any()))
    return out


def _figs21_22(p: pd.DataFrame) -> list[dict[str, Any]]:
    t = p[p["experiment"] == "fig21-24"]
    a = t[(t["aqm"] == "apace") & (t["knob"] == 0)]
    if a.empty:
        return []
    red15 = t[(t["aqm"] == "red") & (t["max_th"] == 15)].sort_values("max_p")
    rivals = pd.concat([red15, t[t["aqm"].isin(["paqm", "avq"])]])
    rows = []
    for metric, fig in (("utilisation", "Fig. 21"), ("loss", "Fig. 22")):
        ok = _achieved(a, rivals, metric)
        per = rivals.assign(ok=ok).groupby("aqm")["ok"].agg(["sum", "count"])
        ev = ", ".join(f"{k} {int(r['sum'])}/{int(r['count'])}" for k, r in per.iterrows())
        word = "no less utilisation" if metric == "utilisation" else "no more loss"
        rows.append(
            _claim(
                fig,
                f"APACE (alpha 0) achieves every RED (max_th 15), PAQM and AVQ point at no more "
                f"delay with {word} ({sum(ok)}/{len(ok)})",
                all(ok),
                f"points achieved per scheme: {ev}",
            )
        )
    sred = t[t["aqm"] == "sred"]
    if not sred.empty:
        miss = len(sred) - sum(_achieved(a, sred, "utilisation"))
        rows.append(
            _claim(
                "Fig. 21",
                "SRED's trade-off curve looks better than APACE's (some SRED point APACE cannot "
                "reach)",
                miss > 0,
                f"{miss} of {len(sred)} SRED points have no APACE point with as little delay "
                "and as much utilisation",
            )
        )
    u = a["utilisation"]
    rows.append(
        _claim(
            "Fig. 21",
            "APACE's utilisation stays almost constant at a high value over max_p",
            u.max() - u.min() <= 0.05 and u.min() >= 0.9,
            f"APACE alpha 0: utilisation {u.min():.3f}-{u.max():.3f} over max_p "
            f"{a['max_p'].min():g}-{a['max_p'].max():g}",
        )
    )
    if len(red15) > 1:
        top, last = red15["utilisation"].max(), red15["utilisation"].iloc[-1]
        rows.append(
            _claim(
                "Fig. 21",
                "RED with max_th 15 loses utilisation at higher max_p",
                last < top - 0.01,
                f"RED max_th 15: utilisation {top:.3f} at best, {last:.3f} at max_p "
                f"{red15['max_p'].iloc[-1]:g}",
            )
        )
    return rows


def _figs23_24(p: pd.DataFrame) -> list[dict[str, Any]]:
    t = p[p["experiment"] == "fig21-24"]
    red, apace = t[t["aqm"] == "red"]["utilisation"], t[t["aqm"] == "apace"]["utilisation"]
    if red.empty or apace.empty:
        return []
    rs, aps = red.max() - red.min(), apace.max() - apace.min()
    return [
        _claim(
            "Figs. 23-24",
            "APACE's utilisation varies less over its parameters than RED's",
            aps < rs,
            f"utilisation spread: APACE {aps:.3f} over {len(apace)} (max_p, alpha) points "
            f"({apace.min():.3f}-{apace.max():.3f}), RED {rs:.3f} over {len(red)} "
            f"(max_p, max_th) points ({red.min():.3f}-{red.max():.3f})",
        )
    ]


def claims(points: pd.DataFrame, fig18_sources: int) -> list[dict[str, Any]]:
    """Every s. 8 claim with the numbers that decide it."""
    return (
        _fig18(points, fig18_sources) + _figs19_20(points) + _figs21_22(points) + _figs23_24(points)
    )


def figure(cells: pd.DataFrame, plt: Any) -> Any:
    """Figs 19-20 (utilisation, loss at router 2 against sources) and 21-22 (trade-off)."""
    fig, ax = plt.subplots(1, 4, figsize=(17, 3.6))
    s = cells[cells["experiment"] == "fig18-20"]
    against_sources(ax, s, "long TCP sources", "Figs. 19, 20 (router 2)")
    t = cells[cells["experiment"] == "fig21-24"]
    curves = {
        "APACE alpha 0": t[(t["aqm"] == "apace") & (t["knob"] == 0)].sort_values("max_p"),
        "RED max_th 15": t[(t["aqm"] == "red") & (t["max_th"] == 15)].sort_values("max_p"),
    }
    for a in ("paqm", "sred", "avq"):
        curves[a.upper()] = t[t["aqm"] == a].sort_values("knob")
    for lab, g in curves.items():
        ax[2].plot(g["utilisation"], 1e3 * g["delay"], marker="o", label=lab)
        ax[3].plot(100 * g["loss"], 1e3 * g["delay"], marker="o", label=lab)
    ax[2].set(xlabel="utilisation", ylabel="mean queueing delay, ms", title="Fig. 21")
    ax[3].set(xlabel="loss, %", ylabel="mean queueing delay, ms", title="Fig. 22")
    for x in ax:
        x.grid(alpha=0.3)
        x.legend(fontsize=7)
    fig.tight_layout()
    return fig
