"""Seed 001 (LaQ), Experiments 2-9 (s. 4.1.2-4.2.5): the queue-length figures 6-17, whose data did
not survive, judged by the claims the text makes about them. Every experiment is Experiment 1's
network (``experiments/laq/scenario.toml``: 250 Reno flows, 20 Mb/s / 20 ms, buffer 600, Q_ref
200) with the one change the paper names (``[dynamics.*]`` of ``experiment.toml``).

The paper gives no definitions, so the words are measured as follows (``[dynamics]`` holds the
numbers):

- "around the target": the mean queue over a window within ``band`` (15%) of Q_ref; the window is
  the second half of the run unless the claim names phases.
- settling time: docs/metrics.md's (the 1 s trailing average of the queue stays within 10% of its
  mean over the last 20% of the run; "never" when it does not by then), as Experiment 1's.
  "About 6 s" and "about 12 s" hold within a factor 1.5 either way.
- "fluctuation during the traffic change" (Exp. 2): the queue's standard deviation over
  [50, 80) s. "Closer to the target" (Exp. 4): the root-mean-square distance of the queue from
  Q_ref from 10 s to the end. "Small overshoot": the queue's 0.5 s means (the traces drawn) never
  above ``overshoot`` x Q_ref. "Deviation almost the same" (Exp. 7): standard deviations from 4 s
  on within ``same_std`` x Q_ref (5%: 10 packets at Q_ref 200) of each other.

Claims about ARED are judged with ARED as the paper states its parameters (``ared``); the
evidence also gives ns-2's byte-mode reading (``ared-ns2-bytes``, Table 1's explanation).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from aqmlab.reproduce import core

NAME = "laq"
KEYS = ["experiment", "case", "aqm"]
#: Per monitored link (slot ``q1``, ``q2``): the statistics a run gives (docs in the module doc).
STATS = [
    "settle",
    "mean_half",
    "rms_dev",
    "std_4s",
    "peak",
    "w_20_50",
    "w_55_70",
    "w_75_100",
    "std_50_80",
]
SLOTS = ("q1", "q2")
METRICS = [f"{s}_{m}" for s in SLOTS for m in STATS]
#: Algorithms compared in Experiments 2-4 besides LaQ (the paper's ARED, REM and PI).
OTHERS = ("ared", "rem", "pi")


def _window(t: np.ndarray, q: np.ndarray, a: float, b: float, f: str = "mean") -> float:
    m = (t >= a) & (t < b)
    if not m.any() or t[-1] < b - 0.5:
        return math.nan
    return float(np.mean(q[m]) if f == "mean" else np.std(q[m]))


def link_stats(t: np.ndarray, q: np.ndarray, q_ref: float, step_s: float) -> dict[str, Any]:
    """The statistics of one queue series (``t`` in s, ``q`` in packets) against ``q_ref``."""
    from aqmlab.running import metrics

    end = float(t[-1])
    late = t >= 10.0
    nbins = max(1, math.ceil(end / step_s - 1e-9))
    idx = np.minimum((t // step_s).astype(int), nbins - 1)
    trace = np.bincount(idx, weights=q, minlength=nbins) / np.maximum(
        np.bincount(idx, minlength=nbins), 1
    )
    return {
        "settle": metrics.settling_time(t, q, 0.1, 1.0, 0.2),
        "mean_half": float(np.mean(q[t >= end / 2])),
        "rms_dev": float(np.sqrt(np.mean((q[late] - q_ref) ** 2))) if late.any() else math.nan,
        "std_4s": float(np.std(q[t >= 4.0])),
        "peak": float(trace.max()),
        "w_20_50": _window(t, q, 20, 50),
        "w_55_70": _window(t, q, 55, 70),
        "w_75_100": _window(t, q, 75, 100),
        "std_50_80": _window(t, q, 50, 80, "std"),
        "trace": json.dumps([round(float(x), 1) for x in trace]),
    }


def extract(summary: dict[str, Any], links: tuple[str, ...], q_ref: float, step_s: float):
    """The statistics of each link in ``links`` (slots q1, q2) from the run's queue series."""
    import pyarrow.parquet as pq

    out: dict[str, Any] = {}
    for slot, link in zip(SLOTS, (*links, None), strict=False):
        if link is None:
            out |= {f"{slot}_{m}": math.nan for m in STATS} | {f"{slot}_trace": "[]"}
            continue
        tab = pq.read_table(Path(summary["_run_dir"]) / f"link_{link}.parquet")
        t = tab.column("t_s").to_numpy()
        q = tab.column("queue_pkts").to_numpy().astype(float)
        out |= {f"{slot}_{k}": v for k, v in link_stats(t, q, q_ref, step_s).items()}
    return out


#: Experiments 5-7: LaQ alone, one scenario value varied (the experiment's axis, the case's
#: label, where the value goes in the scenario).
_ONE_AXIS: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    "exp5": ("flows", "N = {}", ("flows", 0, "count")),
    "exp6": ("rate", "C = {}", ("topology", "rate")),
    "exp7": ("rtt", "RTT {}", ("flows", 0, "rtt")),
}


def _cases(exp: dict[str, Any], name: str, base: dict[str, Any]) -> list[tuple[str, str, dict]]:
    """(case label, algorithm, scenario) of one experiment."""
    d = exp["dynamics"][name]
    aqm = exp["aqm"]
    out = []

    def sc_for(v: str, label: str, **aqm_over: Any) -> dict[str, Any]:
        sc = copy.deepcopy(base)
        sc["aqm"] = {**aqm[v], **aqm_over}
        sc["name"] = f"laq-{name}-{label}-{v}"
        return sc

    if name == "exp2":
        for v in d["aqms"]:
            sc = sc_for(v, "join")
            sc["flows"].append({**sc["flows"][0], **d["join"], "start_spread": "0s"})
            out.append(("join 100 at 50-70 s", v, sc))
    elif name == "exp3":
        for v in d["aqms"]:
            sc = sc_for(v, "random")
            sc["flows"][0]["start_spread"] = d["start_spread"]
            out.append(("random starts 0-10 s", v, sc))
    elif name == "exp4":
        for v in d["aqms"]:
            sc = sc_for(v, "multi")
            sc["topology"] = {
                "type": "parking-lot",
                "hops": d["hops"],
                "rate": base["topology"]["rate"],
                "delay": base["topology"]["delay"],
                "buffer": base["topology"]["buffer"],
                "access_rate": base["topology"]["access_rate"],
                "access_delay": "10ms",
            }
            f0 = {k: x for k, x in sc["flows"][0].items() if k != "rtt"}
            n = d["flows_per_set"]
            sc["flows"] = [
                {**f0, "count": n},
                {**f0, "count": n, "src": "cross2.src", "dst": "cross2.dst"},
                {**f0, "count": n, "src": "cross4.src", "dst": "cross4.dst"},
            ]
            sc["topology"]["cross"] = 1
            out.append(("R2 (hop2), R4 (hop4)", v, sc))
    elif name in _ONE_AXIS:
        axis, label, path = _ONE_AXIS[name]
        for x in d[axis]:
            sc = sc_for("laq", f"{axis}{x}")
            parent = sc
            for k in path[:-1]:
                parent = parent[k]
            parent[path[-1]] = x
            out.append((label.format(x), "laq", sc))
    elif name == "exp8":
        for q in d["q_ref"]:
            out.append((f"Q_ref {q}", "laq", sc_for("laq", f"qref{q}", q_ref=q)))
    elif name == "exp9":
        sc = sc_for("laq", "randomjoin")
        sc["flows"].append({**sc["flows"][0], **d["random_join"]})
        out.append(("(a) 100 more at random in 0-50 s", "laq", sc))
        sc = sc_for("laq", "rttsets")
        f0 = sc["flows"][0]
        sc["flows"] = [{**f0, "count": d["rtt_set_count"], "rtt": r} for r in d["rtt_sets"]]
        out.append(("(b) RTT sets 80/120/160 ms", "laq", sc))
    else:
        raise ValueError(f"laq: unknown experiment {name}")
    return out


def specs(exp: dict[str, Any], base: dict[str, Any], quick: bool) -> list[core.RunSpec]:
    """Every run of Experiments 2-9 (``[dynamics]``; ``--quick``: its ``quick`` subset)."""
    dyn = exp["dynamics"]
    grid = dyn["quick" if quick else "full"]
    base = copy.deepcopy(base)
    if "duration" in grid:
        base["duration"] = grid["duration"]
    out = []
    for name in grid["experiments"]:
        links = tuple(dyn[name].get("links", ["bottleneck"]))
        for case, v, sc in _cases(exp, name, base):
            q_ref = float(sc["aqm"].get("q_ref", exp["aqm"]["laq"]["q_ref"]))

            def ex(s, links=links, q_ref=q_ref):
                return extract(s, links, q_ref, dyn["trace_step_s"])

            key = {"experiment": name, "case": case, "aqm": v, "q_ref": q_ref}
            for seed in range(1, grid["seeds"] + 1):
                out.append(core.RunSpec(key, sc, seed, ex, series=True))
            out += _ns2_specs(exp, name, key, sc, grid["seeds"])
    return out


def extract_ns2(out: dict[str, Any], q_ref: float, step_s: float) -> dict[str, Any]:
    """The statistics of ns-2's sampled bottleneck queue (slot q1; ns2_dumbbell.tcl)."""
    t, q = np.asarray(out["_t"]), np.asarray(out["_q"])
    res = {f"q1_{k}": v for k, v in link_stats(t, q, q_ref, step_s).items()}
    return res | {f"q2_{m}": math.nan for m in STATS} | {"q2_trace": "[]"}


def _ns2_specs(
    exp: dict[str, Any], name: str, key: dict[str, Any], sc: dict[str, Any], seeds: int
) -> list[core.RunSpec]:
    """ns-2.35's runs of Experiments 2 and 3 for the algorithms it has (``[dynamics] ns2``), when
    ``ns`` is installed: the same network, queue sampled every 10 ms."""
    n2 = exp["dynamics"].get("ns2", {})
    if name not in n2.get("experiments", []) or key["aqm"] not in exp["ns2"]["queues"]:
        return []
    if not core.ns2_available():
        return []
    from aqmlab.scenario import units

    script = str(core.experiment_dir(NAME) / exp["ns2"]["script"])
    spread = units.seconds("flows[0].start_spread", sc["flows"][0].get("start_spread", "0s"))
    join = "1" if len(sc["flows"]) > 1 else "0"
    dur = units.seconds("duration", sc["duration"])
    args = {"script": script, "args": [exp["ns2"]["queues"][key["aqm"]]]}
    args["tail"] = [f"{dur:g}", f"{spread:g}", join]
    step = exp["dynamics"]["trace_step_s"]

    def ex(o: dict[str, Any]) -> dict[str, Any]:
        return extract_ns2(o, key["q_ref"], step)

    return [core.RunSpec(key, args, s, ex, "ns2") for s in range(1, seeds + 1)]


def _claim(exp: str, fig: str, text: str, holds: bool, evidence: str) -> dict[str, Any]:
    return {
        "experiment": exp,
        "table": fig,
        "claim": text,
        "holds": bool(holds),
        "evidence": evidence,
    }


def _fmt_s(x: float) -> str:
    return "never" if not math.isfinite(x) else f"{x:.1f} s"


def _near(x: float, q_ref: float, band: float) -> bool:
    return math.isfinite(x) and abs(x - q_ref) <= band * q_ref


def long_points(points: pd.DataFrame, exp: dict[str, Any]) -> pd.DataFrame:
    """The points (means over seeds) one row per (experiment, case, algorithm, link)."""
    rows = []
    for _, r in points.iterrows():
        links = exp["dynamics"][r["experiment"]].get("links", ["bottleneck"])
        for slot, link in zip(SLOTS, links, strict=False):
            rows.append(
                {
                    **{k: r[k] for k in (*KEYS, "q_ref", "seeds") if k in r},
                    "link": link,
                    **{m: r[f"{slot}_{m}"] for m in STATS},
                }
            )
    return pd.DataFrame(rows)


def claims(points: pd.DataFrame, exp: dict[str, Any]) -> list[dict[str, Any]]:
    """Each claim of Experiments 2-9 whose experiment ran, with the numbers that decide it."""
    d = exp["dynamics"]
    band, over = d["band"], d["overshoot"]
    p = long_points(points, exp)
    out: list[dict[str, Any]] = []

    def at(e: str, **kw: Any) -> pd.DataFrame:
        g = p[p["experiment"] == e]
        for k, v in kw.items():
            g = g[g[k] == v]
        return g

    def one(e: str, aqm: str, link: str = "bottleneck") -> pd.Series:
        return at(e, aqm=aqm, link=link).iloc[0]

    def around_each(e: str, fig: str, text: str) -> None:
        g = at(e)
        ok = [_near(r["mean_half"], r["q_ref"], band) for _, r in g.iterrows()]
        ev = "; ".join(
            f"{r['case']}: mean {r['mean_half']:.0f} of {r['q_ref']:.0f}, "
            f"settles {_fmt_s(r['settle'])}"
            for _, r in g.iterrows()
        )
        out.append(_claim(e, fig, f"{text} ({sum(ok)}/{len(ok)})", all(ok), ev))

    def overshoot(e: str, fig: str, text: str) -> None:
        g = at(e)
        ok = [r["peak"] <= over * r["q_ref"] for _, r in g.iterrows()]
        ev = "; ".join(
            f"{r['case']}: peak {r['peak']:.0f} ({r['peak'] / r['q_ref']:.2f} Q_ref)"
            for _, r in g.iterrows()
        )
        out.append(_claim(e, fig, f"{text} ({sum(ok)}/{len(ok)})", all(ok), ev))

    if len(at("exp2")):
        laq = one("exp2", "laq")
        w = [laq["w_20_50"], laq["w_55_70"], laq["w_75_100"]]
        out.append(
            _claim(
                "exp2",
                "Fig. 6",
                "LaQ holds the queue around Q_ref before, while and after 100 flows join (50-70 s)",
                all(_near(x, laq["q_ref"], band) for x in w),
                "LaQ's mean queue {:.0f} in 20-50 s, {:.0f} in 55-70 s, {:.0f} in 75-100 s".format(
                    *w
                ),
            )
        )
        s = {a: one("exp2", a)["std_50_80"] for a in ("laq", *OTHERS, "ared-ns2-bytes")}
        out.append(
            _claim(
                "exp2",
                "Fig. 6",
                "PI's and REM's queues fluctuate much more during the change than ARED's and LaQ's",
                min(s["pi"], s["rem"]) > max(s["ared"], s["laq"]),
                "queue std in 50-80 s: "
                + ", ".join(f"{a} {x:.0f}" for a, x in s.items())
                + " packets",
            )
        )
    if len(at("exp3")):
        st = {a: one("exp3", a)["settle"] for a in ("laq", *OTHERS, "ared-ns2-bytes")}
        mq = {a: one("exp3", a)["mean_half"] for a in ("ared", "ared-ns2-bytes")}
        ev = "settling: " + ", ".join(f"{a} {_fmt_s(x)}" for a, x in st.items())
        out.append(
            _claim("exp3", "Fig. 7", "LaQ settles in about 6 s", 4.0 <= st["laq"] <= 9.0, ev)
        )
        out.append(
            _claim(
                "exp3",
                "Fig. 7",
                "ARED holds its queue near 100 packets, not at the 200 target",
                _near(mq["ared"], 100.0, band),
                f"mean queue in the second half: ared {mq['ared']:.0f}, "
                f"ared-ns2-bytes {mq['ared-ns2-bytes']:.0f}",
            )
        )
        out.append(
            _claim("exp3", "Fig. 7", "ARED settles in about 12 s", 8.0 <= st["ared"] <= 18.0, ev)
        )
        slow = [st[a] for a in ("rem", "pi")]
        out.append(
            _claim(
                "exp3",
                "Fig. 7",
                "REM and PI take more than 30 s to settle",
                all(not math.isfinite(x) or x > 30.0 for x in slow),
                ev,
            )
        )
        fast = all(
            math.isfinite(st["laq"]) and (not math.isfinite(st[a]) or st["laq"] < st[a])
            for a in OTHERS
        )
        out.append(_claim("exp3", "Fig. 7", "LaQ settles fastest of the four", fast, ev))
    if len(at("exp4")):
        links = d["exp4"]["links"]
        g = {(a, lk): one("exp4", a, lk) for a in ("laq", *OTHERS) for lk in links}
        ok = [_near(g[("laq", lk)]["mean_half"], g[("laq", lk)]["q_ref"], band) for lk in links]
        out.append(
            _claim(
                "exp4",
                "Figs. 9-12",
                "LaQ holds the queue around Q_ref at R2 and at R4",
                all(ok),
                "; ".join(f"{lk}: LaQ mean {g[('laq', lk)]['mean_half']:.0f}" for lk in links),
            )
        )

        def per_link(fmt: Any) -> str:
            return "; ".join(
                f"{lk}: " + ", ".join(f"{a} {fmt(a, lk)}" for a in ("laq", *OTHERS)) for lk in links
            )

        best = [
            all(g[("laq", lk)]["rms_dev"] < g[(a, lk)]["rms_dev"] for a in OTHERS) for lk in links
        ]
        out.append(
            _claim(
                "exp4",
                "Figs. 9-12",
                "LaQ keeps the queue closer to the target than ARED, REM and PI at both routers",
                all(best),
                "RMS distance from Q_ref after 10 s: "
                + per_link(lambda a, lk: f"{g[(a, lk)]['rms_dev']:.0f}"),
            )
        )
        fast = [
            math.isfinite(g[("laq", lk)]["settle"])
            and all(
                not math.isfinite(g[(a, lk)]["settle"])
                or g[("laq", lk)]["settle"] < g[(a, lk)]["settle"]
                for a in OTHERS
            )
            for lk in links
        ]
        out.append(
            _claim(
                "exp4",
                "Figs. 9-12",
                "LaQ settles faster than the others at both routers",
                all(fast),
                "settling: " + per_link(lambda a, lk: _fmt_s(g[(a, lk)]["settle"])),
            )
        )
        r2, r4 = (g[("laq", lk)]["rms_dev"] for lk in links)
        out.append(
            _claim(
                "exp4",
                "Figs. 9-12",
                "R4 stabilises LaQ's queue better than R2",
                r4 < r2,
                f"LaQ's RMS distance from Q_ref: R2 {r2:.2f}, R4 {r4:.2f} packets",
            )
        )
    if len(at("exp5")):
        around_each("exp5", "Fig. 13", "LaQ holds the queue around Q_ref for N = 150-1000")
    if len(at("exp6")):
        around_each("exp6", "Fig. 14", "LaQ holds the queue around Q_ref at C = 2 and 50 Mb/s")
        overshoot("exp6", "Fig. 14", "with a small overshoot at both capacities")
    if len(at("exp7")):
        around_each("exp7", "Fig. 15", "LaQ holds the queue around Q_ref at RTT 80 and 160 ms")
        a, b = (r for _, r in at("exp7").iterrows())
        out.append(
            _claim(
                "exp7",
                "Fig. 15",
                "LaQ settles slightly later at RTT 160 ms than at 80 ms",
                math.isfinite(b["settle"])
                and math.isfinite(a["settle"])
                and b["settle"] >= a["settle"],
                f"settling: {a['case']} {_fmt_s(a['settle'])}, {b['case']} {_fmt_s(b['settle'])}",
            )
        )
        out.append(
            _claim(
                "exp7",
                "Fig. 15",
                "the queue's deviation is almost the same at both RTTs after 4 s",
                abs(b["std_4s"] - a["std_4s"]) <= d["same_std"] * a["q_ref"],
                f"queue std from 4 s: {a['std_4s']:.0f} and {b['std_4s']:.0f} packets",
            )
        )
    if len(at("exp8")):
        around_each("exp8", "Fig. 16", "LaQ holds the queue around Q_ref = 100 and 300")
        overshoot("exp8", "Fig. 16", "with small overshoots")
    if len(at("exp9")):
        around_each("exp9", "Fig. 17", "LaQ holds the queue around Q_ref in both mixed scenarios")
        g = at("exp9")
        ok = [math.isfinite(x) for x in g["settle"]]
        out.append(
            _claim(
                "exp9",
                "Fig. 17",
                "the queue settles in both (after a deviation at the beginning)",
                all(ok),
                "; ".join(f"{r['case']}: {_fmt_s(r['settle'])}" for _, r in g.iterrows()),
            )
        )
    return out


def ns2_claims(points: pd.DataFrame, exp: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    """The claims about ARED, REM and PI judged on ns-2.35's runs of Experiments 2 and 3 (ns-2 has
    no LaQ), by claim text: (holds, evidence)."""
    band = exp["dynamics"]["band"]
    p = long_points(points, exp)
    out: dict[str, tuple[bool, str]] = {}

    def get(e: str, col: str) -> dict[str, float]:
        g = p[p["experiment"] == e]
        return dict(zip(g["aqm"], g[col], strict=True))

    s = get("exp2", "std_50_80")
    if {"ared", "rem", "pi"} <= set(s):
        out["PI's and REM's queues fluctuate much more during the change than ARED's and LaQ's"] = (
            min(s["pi"], s["rem"]) > s["ared"],
            "ARED only (ns-2 has no LaQ): std in 50-80 s: "
            + ", ".join(f"{a} {s[a]:.0f}" for a in ("ared", "rem", "pi")),
        )
    st, mq = get("exp3", "settle"), get("exp3", "mean_half")
    if {"ared", "rem", "pi"} <= set(st):
        ev = "settling: " + ", ".join(f"{a} {_fmt_s(st[a])}" for a in ("ared", "rem", "pi"))
        out["ARED holds its queue near 100 packets, not at the 200 target"] = (
            _near(mq["ared"], 100.0, band),
            f"ARED's mean queue in the second half {mq['ared']:.0f}",
        )
        out["ARED settles in about 12 s"] = (8.0 <= st["ared"] <= 18.0, ev)
        out["REM and PI take more than 30 s to settle"] = (
            all(not math.isfinite(st[a]) or st[a] > 30.0 for a in ("rem", "pi")),
            ev,
        )
    return out


def traces(runs: pd.DataFrame, exp: dict[str, Any]) -> pd.DataFrame:
    """The queue traces of seed 1 (``trace_step_s`` means), one row per time step."""
    step = exp["dynamics"]["trace_step_s"]
    r = runs[(runs["engine"] == "aqmlab") & (runs["seed"] == 1) & runs["experiment"].notna()]
    rows = []
    for _, x in r.iterrows():
        links = exp["dynamics"][x["experiment"]].get("links", ["bottleneck"])
        for slot, link in zip(SLOTS, links, strict=False):
            for i, q in enumerate(json.loads(x[f"{slot}_trace"])):
                rows.append(
                    {
                        "experiment": x["experiment"],
                        "case": x["case"],
                        "aqm": x["aqm"],
                        "link": link,
                        "t_s": (i + 0.5) * step,
                        "queue": q,
                    }
                )
    return pd.DataFrame(rows)


def figure(tr: pd.DataFrame, exp: dict[str, Any], plt: Any):
    """One panel per experiment: the queue of seed 1 against time, one line per case, algorithm
    and link, Q_ref dashed."""
    names = list(dict.fromkeys(tr["experiment"]))
    cols = min(4, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for k, e in enumerate(names):
        ax = axes[k // cols][k % cols]
        groups = list(tr[tr["experiment"] == e].groupby(["case", "aqm", "link"], sort=False))
        groups.sort(key=lambda kg: kg[0][1] == "laq")  # LaQ drawn last, on top
        for (case, aqm, link), g in groups:
            lab = aqm if e in ("exp2", "exp3") else case if e != "exp4" else f"{aqm} {link}"
            ax.plot(g["t_s"], g["queue"], lw=1.4 if aqm == "laq" else 0.8, label=lab)
        ax.axhline(200 if e != "exp8" else 100, ls="--", color="grey", lw=0.7)
        if e == "exp8":
            ax.axhline(300, ls="--", color="grey", lw=0.7)
        ax.set_title(f"{e}: {exp['dynamics'][e]['figure']}", fontsize=9)
        ax.set_xlabel("time, s", fontsize=8)
        ax.set_ylabel("queue, packets", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for k in range(len(names), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.tight_layout()
    return fig
