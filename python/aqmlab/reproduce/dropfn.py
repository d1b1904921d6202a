"""Seed 002 (Barczyk & Chydzinski, "AQM based on the queue length: a real-network study", PLoS ONE
2022): nine dropping functions d0-d8 and FIFO on a 1 Gb/s device, mixed TCP and UDP traffic, loads
0.9-1.2. Table 1's numbers and the formulas of d0-d8 did not survive in our text, so the paper's
claims about Figs 4-8 and Table 1 (``experiments/dropfn/claims.csv``, quoted with their section)
are checked one by one, with the numbers that decide them.

The paper's x-axis is the *measured* load, arrivals over capacity. TCP answers each AQM
differently, so the same offered traffic gives each scheme its own measured load; each scheme's
characteristics are therefore interpolated (linearly, in its measured load, over the offered
points of each UDP share, then averaged over the shares) at the centres of Table 1's load ranges,
and schemes are compared there. A load centre outside a scheme's measured range is left out.

The measured load of a run is ``utilisation / (1 - L)``: arrivals over capacity, exact when the
drops do not depend on packet size (true of every scheme here) and the window starts and ends with
the same backlog. Queue: waiting packets, time average. Burst ratio B: the mean number of packets
dropped in a row (in arrival order, all flows together) over ``1 / (1 - L)``, its value for
independent losses (s. 2, after McGowan [32]). C: aqmlab's substitute for the paper's formula (7),
which is lost (docs/metrics.md); with these sub-100 ms queueing delays it is the loss impairment I.

Beside the runs: Theorem 1 (M/M/1/300 with the dropping function, :mod:`aqmlab.theory.dropfn`)
at each load centre, the model the paper used to set the functions' scales.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aqmlab.reproduce import core, output

NAME = "dropfn"
KEYS = ["scheme", "udp_share", "offered"]
CHARS = ["queue_mean", "queue_std", "loss", "burst", "impairment_c"]
#: Two dropping functions are the same within the buffer ("twins") when they differ nowhere in
#: 0..buffer by more than this share of the larger one's largest value there.
TWIN_TOL = 0.1
METRICS = ["load", "utilisation", *CHARS]
DROPFNS = [f"d{i}" for i in range(9)]
NONTRIVIAL = [f"d{i}" for i in range(1, 8)]
#: The UDP share is spread over this many CBR sources (started at random in the first second).
UDP_SOURCES = 20


@functools.cache
def scale(family: str, target_mean: float, target_load: float) -> float:
    """The family's scale giving ``target_mean`` packets in the system at ``target_load`` in
    Theorem 1's infinite-buffer model (s. 2: 50 packets at rho = 1)."""
    from aqmlab.theory import calibrate

    return calibrate(family, target_mean, target_load)


def scheme_aqm(scheme: str, exp: dict[str, Any], buffer: int) -> dict[str, Any]:
    """The ``[aqm]`` table of a scheme: the tabulated dropping function, or DropTail (FIFO)."""
    from aqmlab.theory import table

    fam = exp["schemes"][scheme]
    if fam == "droptail":
        return {"name": "droptail"}
    s = scale(fam, exp["target_mean"], exp["target_load"])
    return {"name": "dropfn", "table": [float(x) for x in table(fam, s, buffer)]}


def extract(summary: dict[str, Any]) -> dict[str, float]:
    """One run's measured load and the characteristics of Table 1."""
    b = next(x for x in summary["links"] if x["name"] == "bottleneck")
    loss = float(b["loss_ratio"] or 0.0)

    def num(k: str) -> float:
        v = b.get(k)
        return float("nan") if v is None else float(v)

    return {
        "load": float(b["utilisation"]) / (1.0 - loss) if loss < 1 else float("nan"),
        "utilisation": float(b["utilisation"]),
        "queue_mean": num("queue_mean_pkts"),
        "queue_std": num("queue_std_pkts"),
        "loss": loss,
        "burst": num("burst_ratio"),
        "impairment_c": num("impairment_c"),
    }


def point_scenario(
    base: dict[str, Any], aqm: dict[str, Any], offered: float, udp: float, grid: dict[str, Any]
) -> dict[str, Any]:
    """The scenario of one point: web TCP at ``(offered - udp)`` of the link rate, UDP at ``udp``
    spread over the UDP sources, the scheme's AQM."""
    from aqmlab.scenario import units

    sc = copy.deepcopy(base)
    rate = units.rate_bps("topology.rate", sc["topology"]["rate"])
    web, cbr = sc["flows"]
    obj = units.size_bytes("flows[0].object_size", web["object_size"])
    web["arrival_rate"] = (offered - udp) * rate / (8 * obj)
    cbr["count"] = UDP_SOURCES
    cbr["load"] = udp / UDP_SOURCES
    sc["aqm"] = aqm
    sc["duration"], sc["warmup"] = grid["duration"], grid["warmup"]
    sc["name"] = f"dropfn-{offered:g}-{udp:g}"
    return sc


def specs(quick: bool, engine: str = "aqmlab") -> list[core.RunSpec]:
    """Every scheme at every offered load and UDP share of the grid (``engine = "testbed"``: the
    testbed's grid and link rate)."""
    exp = core.load_experiment(NAME)
    base = core.load_scenario_dict(NAME, exp["scenario"])
    if engine == "testbed":
        grid = exp["testbed_quick" if quick else "testbed"]
        base["topology"]["rate"] = grid["rate"]
    else:
        grid = exp["quick" if quick else "full"]
    buffer = int(base["topology"]["buffer"])
    out = []
    for scheme in exp["schemes"]:
        aqm = scheme_aqm(scheme, exp, buffer)
        for udp in grid["udp_share"]:
            for rho in grid["offered"]:
                sc = point_scenario(base, aqm, rho, udp, grid)
                sc["name"] += f"-{scheme}"
                key = {"scheme": scheme, "udp_share": udp, "offered": rho}
                seeds = range(1, grid["seeds"] + 1)
                out += [core.RunSpec(key, sc, s, extract, engine=engine) for s in seeds]
    return out


def at_loads(points: pd.DataFrame, loads: list[float]) -> pd.DataFrame:
    """Each scheme's characteristics at the load centres: interpolated in its measured load per
    UDP share (only inside the measured range), then averaged over the shares that cover it."""
    rows = []
    for (scheme, udp), g in points.groupby(["scheme", "udp_share"], sort=False):
        g = g.sort_values("load")
        x = g["load"].to_numpy()
        for rho in loads:
            if not (x.min() <= rho <= x.max()):
                continue
            r = {"scheme": scheme, "udp_share": udp, "load": rho}
            for c in CHARS:
                r[c] = float(np.interp(rho, x, g[c].to_numpy()))
            rows.append(r)
    if not rows:
        return pd.DataFrame(columns=["scheme", "load", *CHARS])
    df = pd.DataFrame(rows)
    return df.groupby(["scheme", "load"], sort=False)[CHARS].mean().reset_index()


def needed_queue(d: np.ndarray, load: float) -> float:
    """The smallest queue n whose d(n) reaches 1 - 1/load: a work-conserving link offered
    ``load`` > 1 drops at least that fraction of arrivals (departures cannot exceed capacity), so a
    queue-length AQM must hold its queue at least this long on average-ish (0 for load <= 1; the
    buffer, len(d) - 1, when d never gets there before it overflows)."""
    need = 1.0 - 1.0 / load
    if need <= 0:
        return 0.0
    hit = np.flatnonzero(d[:-1] >= need)
    return float(hit[0]) if hit.size else float(len(d) - 1)


def _dtable(fam: str, exp: dict, buffer: int) -> np.ndarray:
    """The scheme's d(0..buffer) (FIFO: zeros; the buffer does the dropping)."""
    from aqmlab.theory import table

    if fam == "droptail":
        return np.zeros(buffer + 1)
    return table(fam, scale(fam, exp["target_mean"], exp["target_load"]), buffer)


def _th(d: np.ndarray, rho: float, buffer: int) -> dict[str, float]:
    from aqmlab.theory import analyze

    r = analyze(d, rho, buffer)
    return {
        "th_queue_mean": r.mean_queue,
        "th_queue_std": r.std_queue,
        "th_loss": r.loss_ratio,
        "th_burst": r.burst_ratio,
        "n_needed": needed_queue(d, rho),
    }


def theorem1(schemes: dict[str, str], loads: list[float], exp: dict, buffer: int) -> pd.DataFrame:
    """Theorem 1's queue (waiting line), its std, loss and burst ratio per scheme and load:
    M/M/1/``buffer`` with the scheme's dropping function (FIFO: none); and the queue the loss
    bound needs (:func:`needed_queue`)."""
    rows = []
    for scheme, fam in schemes.items():
        d = _dtable(fam, exp, buffer)
        rows += [{"scheme": scheme, "load": rho, **_th(d, rho, buffer)} for rho in loads]
    return pd.DataFrame(rows)


def theorem1_points(points: pd.DataFrame, exp: dict, buffer: int) -> pd.DataFrame:
    """``points`` with Theorem 1 at each point's measured load."""
    d = {s: _dtable(f, exp, buffer) for s, f in exp["schemes"].items()}
    th = [_th(d[r.scheme], r.load, buffer) for r in points.itertuples()]
    return pd.concat([points, pd.DataFrame(th, index=points.index)], axis=1)


def _pivots(cells: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per characteristic: load x scheme, at the loads every scheme covers."""
    out = {}
    for c in CHARS:
        w = cells.pivot_table(index="load", columns="scheme", values=c, sort=True)
        out[c] = w.dropna()
    return out


def _most(ok: pd.Series) -> bool:
    return bool(len(ok)) and int(ok.sum()) * 2 > len(ok)


def _every(ok: pd.Series) -> bool:
    return bool(len(ok)) and bool(ok.all())


def _ev(w: pd.DataFrame, cols: list[str], fmt: str = ".1f") -> str:
    return "; ".join(
        f"{rho:.2f}: " + ", ".join(f"{c} {w.loc[rho, c]:{fmt}}" for c in cols) for rho in w.index
    )


def _count(ok: pd.Series) -> str:
    return f"{int(ok.sum())}/{len(ok)} loads"


def _queue_claims(p: dict[str, pd.DataFrame]) -> dict[str, tuple[bool, str]]:
    q, sd = p["queue_mean"], p["queue_std"]
    d, nt = q[DROPFNS], sd[NONTRIVIAL]
    out = {}
    if 1.0 in q.index:
        r = q.loc[1.0, DROPFNS]
        out["q50"] = (
            bool(((r - 50).abs() <= 15).all()),
            "load 1.00: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()),
        )
    ratio = d.max(axis=1) / d.min(axis=1)
    out["qsimilar"] = (
        _every(ratio <= 2),
        f"{_count(ratio <= 2)}; max/min " + ", ".join(f"{x:.2f}" for x in ratio),
    )
    f = q["fifo"] / d.median(axis=1)
    out["qfifo"] = (
        _every(f >= 3),
        f"{_count(f >= 3)}; FIFO / median d0-d8 " + ", ".join(f"{x:.1f}" for x in f),
    )
    ok = sd["fifo"] > sd[DROPFNS].max(axis=1)
    out["sdfifo"] = (_every(ok), f"{_count(ok)}; " + _ev(sd, ["fifo", *DROPFNS]))
    ok = nt.idxmax(axis=1) == "d2"
    out["sdd2"] = (_most(ok), f"{_count(ok)}; largest among d1-d7: " + ", ".join(nt.idxmax(axis=1)))
    return out


def _loss_claims(p: dict[str, pd.DataFrame]) -> dict[str, tuple[bool, str]]:
    w = p["loss"]
    med = w[DROPFNS].median(axis=1)
    r = w["fifo"] / med
    ok = (r <= 1.5) & (r >= 1 / 1.5)
    best = w.idxmin(axis=1)
    mean = w.mean(axis=1)
    worse = (w["d2"] > mean) & (w["d0"] > mean)
    ev = _ev(w, ["fifo", "d0", "d2", "d4"], ".4f")
    return {
        "lsimilar": (
            _every(ok),
            f"{_count(ok)}; FIFO / median d0-d8 " + ", ".join(f"{x:.2f}" for x in r),
        ),
        "ld4": (_every(best == "d4"), f"lowest: {', '.join(best)}; {ev}"),
        "lfifo": (_every(best != "fifo"), f"lowest: {', '.join(best)}"),
        "ld2d0": (
            _most(worse),
            f"{_count(worse)}; mean of ten " + ", ".join(f"{x:.4f}" for x in mean) + f"; {ev}",
        ),
    }


def _burst_claims(p: dict[str, pd.DataFrame]) -> dict[str, tuple[bool, str]]:
    w = p["burst"]
    nt = w[NONTRIVIAL]
    ok_f = (w["fifo"] >= 1.5) & (w["fifo"] <= 2.1)
    top3 = w.apply(lambda r: set(r.nlargest(3).index), axis=1)
    ok3 = top3.map(lambda s: s == {"fifo", "d0", "d8"})
    spread = nt.max(axis=1) - nt.min(axis=1)
    d3 = nt.idxmin(axis=1) == "d3"
    return {
        "bfifo": (_every(ok_f), f"FIFO B: {', '.join(f'{x:.2f}' for x in w['fifo'])}"),
        "bworst": (_every(ok3), f"{_count(ok3)}; " + _ev(w, ["fifo", "d0", "d8", "d4"], ".2f")),
        "bclose": (_every(spread <= 0.25), "d1-d7 spread " + ", ".join(f"{x:.2f}" for x in spread)),
        "bd3": (_most(d3), f"{_count(d3)}; lowest among d1-d7: " + ", ".join(nt.idxmin(axis=1))),
    }


def _c_claims(p: dict[str, pd.DataFrame]) -> dict[str, tuple[bool, str]]:
    w = p["impairment_c"]
    nt = w[NONTRIVIAL]
    ok_f = w["fifo"] >= 1.5 * w[DROPFNS].max(axis=1)
    ok_0 = w[DROPFNS].idxmax(axis=1) == "d0"
    ok42 = (nt.idxmin(axis=1) == "d4") & (nt.idxmax(axis=1) == "d2")
    ev = _ev(w, ["fifo", "d0", "d2", "d4"], ".2f")
    return {
        "cfifo": (_every(ok_f), f"{_count(ok_f)}; {ev}"),
        "cd0": (_every(ok_0), f"largest among d0-d8: {', '.join(w[DROPFNS].idxmax(axis=1))}"),
        "cd4d2": (
            _most(ok42),
            f"{_count(ok42)}; lowest/highest among d1-d7: "
            + ", ".join(
                f"{a}/{b}" for a, b in zip(nt.idxmin(axis=1), nt.idxmax(axis=1), strict=True)
            ),
        ),
    }


def _table_claims(p: dict[str, pd.DataFrame]) -> dict[str, tuple[bool, str]]:
    best = pd.concat([w.idxmin(axis=1) for w in p.values()])
    worst = pd.concat([w.idxmax(axis=1) for w in p.values()])
    n, nb, nw = len(best), int((best == "fifo").sum()), int((worst == "fifo").sum())
    return {
        "tbest": (n > 0 and nb == 0, f"FIFO best in {nb}/{n} (load, characteristic) cells"),
        "tworst": (n > 0 and 2 * nw > n, f"FIFO worst in {nw}/{n} cells"),
    }


def twins(exp: dict[str, Any], buffer: int) -> dict[str, list[tuple[str, float]]]:
    """Per d1-d7 function, the others of d1-d7 that are the same function within the buffer
    (:data:`TWIN_TOL`), each with their largest difference there as a share of the larger one's
    largest value."""
    d = {s: _dtable(exp["schemes"][s], exp, buffer) for s in NONTRIVIAL}
    out: dict[str, list[tuple[str, float]]] = {s: [] for s in NONTRIVIAL}
    for a in NONTRIVIAL:
        for b in NONTRIVIAL:
            if a != b:
                top = max(float(d[a].max()), float(d[b].max()))
                gap = float(np.abs(d[a] - d[b]).max()) / top if top > 0 else 0.0
                if gap <= TWIN_TOL:
                    out[a].append((b, gap))
    return out


def claims(cells: pd.DataFrame) -> pd.DataFrame:
    """Each transcribed claim with whether it holds and the numbers that decide it (claims that
    no load centre can decide are left out). A claim that singles out one of d1-d7 (``singles``
    in claims.csv) is *not testable* when that function has a twin within the buffer
    (:func:`twins`): which of two equal functions comes out first is then chance."""
    exp = core.load_experiment(NAME)
    pub = core.load_published(NAME, exp["claims"])
    buffer = int(core.load_scenario_dict(NAME, exp["scenario"])["topology"]["buffer"])
    tw = twins(exp, buffer)
    p = _pivots(cells)
    got: dict[str, tuple[bool, str]] = {}
    if len(p["queue_mean"]):
        for f in (_queue_claims, _loss_claims, _burst_claims, _c_claims, _table_claims):
            got.update(f(p))
    rows = []
    for c in pub.itertuples():
        if c.id in got:
            holds, ev = got[c.id]
            singles = str(c.singles).split() if isinstance(c.singles, str) else []
            same = [(s, t, g) for s in singles for t, g in tw[s]]
            if same:
                ev = (
                    "; ".join(f"{s} is {t} within the buffer (max gap {g:.0%})" for s, t, g in same)
                    + f". Measured: {ev}"
                )
            rows.append(
                {
                    "table": c.figure,
                    "claim": c.quote,
                    "test": c.test,
                    "holds": bool(holds),
                    "testable": not same,
                    "verdict": core.claim_verdict(bool(holds), not same),
                    "evidence": ev,
                }
            )
    cols = ["table", "claim", "test", "holds", "testable", "verdict", "evidence"]
    return pd.DataFrame(rows, columns=cols)


def compare(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Points (mean per offered point), cells (per scheme and load centre, with Theorem 1) and
    the claims."""
    exp = core.load_experiment(NAME)
    buffer = int(core.load_scenario_dict(NAME, exp["scenario"])["topology"]["buffer"])
    keys = [k for k in KEYS if k in runs]
    points = theorem1_points(core.aggregate(runs, keys, METRICS), exp, buffer)
    cells = at_loads(points, exp["loads"])
    th = theorem1(exp["schemes"], exp["loads"], exp, buffer)
    cells = cells.merge(th, on=["scheme", "load"], how="left")
    cells.insert(0, "table", "Figs. 4-8, Table 1")
    cells["metric"] = "all"
    return {"points": points, "cells": cells, "rankings": pd.DataFrame(), "claims": claims(cells)}


def verdicts(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per figure (and Table 1): reproduced when every claim about it holds, in part when some
    do."""
    return core.claim_verdicts(t["claims"])


_LABELS = {
    "queue_mean": "Fig. 4: mean queue (packets)",
    "queue_std": "Fig. 5: queue std (packets)",
    "loss": "Fig. 6: loss ratio",
    "burst": "Fig. 7: burst ratio",
}


def figures(cells: pd.DataFrame) -> dict:
    """Figs 4-7: each characteristic against the measured load, per scheme; Theorem 1 dashed."""
    plt = output.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    colours = plt.get_cmap("tab10")
    for ax, (c, label) in zip(axes, _LABELS.items(), strict=True):
        for k, (scheme, g) in enumerate(cells.groupby("scheme", sort=False)):
            g = g.sort_values("load")
            ax.plot(g["load"], g[c], marker="o", ms=3, color=colours(k), label=scheme)
            th = f"th_{c}"
            if th in g and g[th].notna().any():
                ax.plot(g["load"], g[th], ls="--", lw=0.8, color=colours(k))
        ax.set(xlabel="measured load", title=label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle("runs (solid) and Theorem 1, M/M/1/300 (dashed)", fontsize=9)
    fig.tight_layout()
    return {"figs4-7": fig}


def run_testbed(specs_: list[core.RunSpec], cache: Path, progress: bool = True) -> pd.DataFrame:
    """Runs each spec on the testbed, one after the other (real time; needs root), keeping each
    run's summary in ``cache`` so that an interrupted reproduction resumes; rows as
    :func:`core.run_specs` gives them."""
    from aqmlab.running import runner
    from aqmlab.testbed import testbed

    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for k, s in enumerate(specs_):
        f = cache / f"{s.digest()}.json"
        if not f.exists():
            if progress:
                print(f"testbed {k + 1}/{len(specs_)}: {s.key}", file=sys.stderr, flush=True)
            res = testbed(s.scenario, seed=s.seed, plot=False)
            tmp = f.with_suffix(".tmp")
            tmp.write_text(json.dumps(runner._clean(res.summary)))
            os.replace(tmp, f)
        summary = json.loads(f.read_text())
        rows.append(
            {
                **s.key,
                "engine": s.engine,
                "seed": s.seed,
                **s.extract(summary),
                **testbed_health(summary, s.key["udp_share"]),
            }
        )
    return pd.DataFrame(rows)


#: A testbed run is clean when its UDP sources offered their configured rate within this ratio.
UDP_TOLERANCE = 0.05


def testbed_health(summary: dict[str, Any], udp_share: float) -> dict[str, Any]:
    """Whether a testbed run carried the traffic it was configured with: frames lost in the
    forwarder's rings (outside the AQM, invisible to the link's statistics), the forwarder's
    conservation law, the UDP offered rate against ``udp_share`` of the link, how late the UDP
    pacer sent, and how busy the forwarder's core was; ``clean`` sums them up."""
    tb = summary["testbed"]
    b = next(x for x in summary["links"] if x["name"] == "bottleneck")
    c = tb["conservation"]
    rings = tb["rings"]
    drops = int(rings["left_kernel_drops"]) + int(rings["right_kernel_drops"])
    conserved = c["received"] == c["sent"] + c["dropped"] + c["in_system"]
    udp = sum(f["offered_bps"] for f in summary["flows"] if f["congestion_control"] == "udp")
    want = udp_share * float(b["rate_bps"])
    ratio = udp / want if want > 0 else float("nan")
    cpu = tb["forwarder_cpu_s"]
    pacer = tb.get("udp_pacer") or {}
    return {
        "ring_drops": drops,
        "conserved": conserved,
        "udp_offered_ratio": ratio,
        "pacer_late_mean_ms": 1e3 * pacer.get("late_mean_s", float("nan")),
        "forwarder_busy": (cpu["user"] + cpu["system"]) / tb["forwarder_elapsed_s"],
        "clean": drops == 0 and conserved and abs(ratio - 1) <= UDP_TOLERANCE,
    }


def reproduce_testbed(
    *, quick: bool = False, out: str | Path | None = None, progress: bool = True
) -> dict[str, Any]:
    """``aqmlab reproduce dropfn --engine testbed``: the grid of ``[testbed]`` (or
    ``[testbed_quick]``) on real Linux TCP and UDP through aqmlab-fwd, compared like the
    simulator's runs; written to ``out`` (default ``runs/reproduce/dropfn-testbed[-quick]``)."""
    out = Path(out or f"runs/reproduce/{NAME}-testbed{'-quick' if quick else ''}")
    t0 = time.perf_counter()
    tb_specs = specs(quick, "testbed")
    runs = run_testbed(tb_specs, out / "runs" / "testbed", progress)
    tables = compare(runs)
    tables["verdicts"] = verdicts(tables)
    tables["runs"] = runs
    wall = time.perf_counter() - t0
    output.write(NAME, sys.modules[__name__], tables, out, quick=quick, wall_s=wall)
    # the simulator on the very same grid (same scenarios and seeds), after the real-time runs
    sim_specs = [dataclasses.replace(s, engine="aqmlab") for s in tb_specs]
    sim = core.run_specs(sim_specs, out / "runs", progress=False, name=f"{NAME}-testbed-grid")
    tables["beside"] = beside(tables["points"], compare(sim)["points"])
    tables["beside"].round(4).to_csv(out / "testbed_vs_sim.csv", index=False)
    health = [*KEYS, "ring_drops", "conserved", "udp_offered_ratio", "pacer_late_mean_ms"]
    runs[[*health, "forwarder_busy", "clean"]].round(4).to_csv(
        out / "testbed_health.csv", index=False
    )
    for _, r in runs[~runs["clean"]].iterrows():
        print(
            f"testbed: not clean: {dict((k, r[k]) for k in KEYS)}: {r['ring_drops']} ring drops, "
            f"UDP offered {r['udp_offered_ratio']:.3f} of configured, conserved {r['conserved']}",
            file=sys.stderr,
        )
    tables["out_dir"] = out
    return tables


def beside(testbed_points: pd.DataFrame, sim_points: pd.DataFrame) -> pd.DataFrame:
    """Per scheme and offered point: the testbed's measured load and characteristics, the
    simulator's on the same scenario, and Theorem 1 at the testbed's measured load."""
    cols = ["load", *CHARS]
    th = [c for c in testbed_points if c.startswith("th_")] + ["n_needed"]
    a = testbed_points[KEYS + cols + th]
    b = sim_points[KEYS + cols].rename(columns={c: f"sim_{c}" for c in cols})
    return a.merge(b, on=KEYS, how="left")
