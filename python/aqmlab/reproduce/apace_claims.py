"""What APACE's s. 7 (``apace``) and s. 8 (``apace_s8``) share: the metrics of one run at one
link, the tolerances with which one operating point "achieves" another (5% on delay, 0.2 points
of utilisation; the paper gives none), one claim's row, the "APACE is best at every number of
sources" test and its figure."""

from __future__ import annotations

from typing import Any

import pandas as pd

DELAY_TOL = 1.05
UTIL_TOL = 0.002


def extract_link(link: str, summary: dict[str, Any]) -> dict[str, float]:
    """The metrics of one run at one link: utilisation (fraction), loss ratio, mean queueing
    delay (s), mean queue and its coefficient of variation."""
    b = next(x for x in summary["links"] if x["name"] == link)
    mean = float(b["queue_mean_pkts"])
    return {
        "utilisation": float(b["utilisation"]),
        "loss": float(b["loss_ratio"]),
        "delay": float(b["delay_mean_s"]),
        "queue_mean": mean,
        "queue_cv": float(b["queue_std_pkts"]) / mean if mean > 0 else float("nan"),
    }


def claim(fig: str, text: str, holds: bool, evidence: str) -> dict[str, Any]:
    """One row of a claims table: the figure, the claim in the paper's words, whether our runs
    bear it out and the numbers that decide it."""
    return {"table": fig, "claim": text, "holds": bool(holds), "evidence": evidence}


def winner_claims(s: pd.DataFrame, claims: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """For each (metric, figure, text): does APACE have the best ``metric`` (the highest
    utilisation, the lowest anything else) at every number of sources in ``s``?"""
    rows = []
    for metric, fig, text in claims:
        w = s.pivot_table(index="sources", columns="aqm", values=metric)
        others = w.drop(columns="apace")
        hi = metric == "utilisation"
        ok = w["apace"] >= others.max(axis=1) if hi else w["apace"] <= others.min(axis=1)
        best = others.idxmax(axis=1) if hi else others.idxmin(axis=1)
        ev = "; ".join(
            f"N={n}: APACE {w.loc[n, 'apace']:.4f}, best other {best[n]} {w.loc[n, best[n]]:.4f}"
            for n in w.index
        )
        rows.append(claim(fig, f"{text} ({int(ok.sum())}/{len(ok)} source counts)", ok.all(), ev))
    return rows


def against_sources(ax: Any, s: pd.DataFrame, xlabel: str, figs: str) -> None:
    """Utilisation and loss (95% CI) of every scheme against the number of sources, on
    ``ax[0]`` and ``ax[1]``."""
    for a, g in s.groupby("aqm"):
        g = g.sort_values("sources")
        ax[0].errorbar(
            g["sources"], g["utilisation"], yerr=g["utilisation_ci"], marker="o", label=a
        )
        ax[1].errorbar(g["sources"], 100 * g["loss"], yerr=100 * g["loss_ci"], marker="o", label=a)
    ax[0].set(xlabel=xlabel, ylabel="utilisation", title=f"{figs}: utilisation")
    ax[1].set(xlabel=xlabel, ylabel="loss, %", title=f"{figs}: loss")
