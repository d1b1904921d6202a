"""The card's numbers: RFC 7928 s. 2 metrics per run, their means per scenario and AQM, and the
computed comparison of each AQM under test with the baselines.

Per run (:func:`run_metrics`; definitions in docs/evaluate.md and docs/metrics.md):

- ``goodput_mbps``: the bulk TCP flows' goodput, summed (s. 2.5); ``utilisation`` of the
  bottleneck; ``share_<group>``: a flow group's part of all the goodput;
- ``delay_ms``, ``delay_p99_ms``: queueing delay at the bottleneck, mean and 99th percentile
  (s. 2.6); on a chain of bottlenecks the sums over the hops (the p99 sum is an upper bound of the
  path's p99); ``jitter_ms``: the mean absolute difference of consecutive queueing delays;
- ``loss_ratio`` and ``burst_ratio`` (the loss pattern, s. 2.3) of the bottleneck; on a chain
  ``1 - prod(1 - L_i)`` over the hops;
- ``sync_rate``: loss synchronisation (s. 2.4), :func:`aqmlab.running.metrics.loss_synchronisation`
  over the bulk flows' drops and marks at the bottleneck when the run has an event log
  (``[output] events``; ``sync_from_drops`` = 1), else over their window cuts, in the measurement
  window, congestion events at most one mean base RTT long;
- ``fct_median_s``, ``fct_p99_s`` of the finite flows (s. 2.1); ``startup_s``: the mean flow
  startup time (s. 2.2) of the TCP flows whose delivery series was recorded;
- ``jain``: Jain's index of the bulk flows' goodputs; ``ratio``: the goodput of the second bulk
  TCP group over the first (two groups only: IW 3/10, short/long RTT, small/large packets, ECN/not);
  ``signal_ratio``: the probability that the bottleneck drops or marks a packet of the second
  group over the first's, from the run's event log (``[output] events``; s. 4.4: small over large
  packets; RFC 7141 s. 2.3 asks for 1);
- open-loop groups: ``loss_<group>`` and ``owd_p99_<group>_ms``; probes: ``ping_rtt_p50_ms``,
  ``ping_rtt_p99_ms``;
- varying capacity (s. 8.2.6): ``settle_s``, the mean over the capacity steps of the settling
  time of the bottleneck queue after the step (:func:`aqmlab.running.metrics.step_settling_time`
  on the queue length from the step to the next one: band +-``settling_band`` of its final mean
  plus ``capacity.tolerance_pkts`` packets, ``settling_smoothing`` trailing average),
  ``settle_down_s`` / ``settle_up_s`` (after the steps down / up), ``unsettled_steps``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from aqmlab.running import metrics as mt

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from aqmlab.evaluate.plan import Plan

#: How each judged metric is better: lower, higher, or closer to one.
DIRECTION = {
    "delay_ms": "lower",
    "delay_p99_ms": "lower",
    "goodput_mbps": "higher",
    "utilisation": "higher",
    "loss_ratio": "lower",
    "jitter_ms": "lower",
    "sync_rate": "lower",
    "jain": "higher",
    "fct_median_s": "lower",
    "fct_p99_s": "lower",
    "startup_s": "lower",
    "unsettled_steps": "lower",
    "settle_down_s": "lower",
    "settle_up_s": "lower",
    "ratio": "one",
    "ping_rtt_p99_ms": "lower",
}
#: Metrics whose absence means the worst outcome (a queue that never settled after a step): an
#: AQM with a value beats one without.
NAN_IS_WORST = frozenset({"settle_down_s", "settle_up_s"})
#: Words for the metrics in the card.
LABEL = {
    "delay_ms": "mean queueing delay (ms)",
    "delay_p99_ms": "p99 queueing delay (ms)",
    "goodput_mbps": "bulk goodput (Mb/s)",
    "utilisation": "utilisation",
    "loss_ratio": "loss ratio",
    "burst_ratio": "loss burst ratio",
    "jitter_ms": "jitter (ms)",
    "sync_rate": "loss synchronisation rate",
    "jain": "Jain's fairness index",
    "fct_median_s": "median FCT (s)",
    "fct_p99_s": "p99 FCT (s)",
    "startup_s": "flow startup time (s)",
    "settle_s": "settling time after a capacity step (s)",
    "settle_down_s": "settling time after a step down (s)",
    "settle_up_s": "settling time after a step up (s)",
    "unsettled_steps": "steps that never settled",
    "ratio": "goodput ratio of the two groups",
    "signal_ratio": "per-packet drop/mark probability, second group over first",
    "ping_rtt_p50_ms": "ping RTT p50 (ms)",
    "ping_rtt_p99_ms": "ping RTT p99 (ms)",
}
#: A difference counts only beyond this fraction of the baseline's value (and beyond the two 95%
#: confidence half-widths when there are several seeds).
REL_TOL = 0.05


def _links(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The guarded forward bottleneck(s): ``bottleneck``, or a chain's ``hop1``, ``hop2``..."""
    links = summary["links"]
    hops = sorted(
        (x for x in links if re.fullmatch(r"hop\d+", x["name"])), key=lambda x: int(x["name"][3:])
    )
    if hops:
        return hops
    return [next((x for x in links if x["name"] == "bottleneck"), links[0])]


def _f(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan


def _window_cuts(cols: dict[str, np.ndarray], warm: float) -> np.ndarray:
    t, w = cols["t_s"], cols["cwnd"]
    cuts = mt.cwnd_reductions(t, np.nan_to_num(w, nan=0.0))
    return cuts[cuts >= warm]


def run_metrics(
    summary: dict[str, Any],
    series: dict[str, dict[str, np.ndarray]],
    steps: list[float],
    tol_pkts: float = 5.0,
) -> dict[str, float]:
    """The per-run metrics listed in the module doc, from a run's summary and its time series."""
    run = summary["run"]
    warm, end = float(run["warmup_s"]), float(run["duration_s"])
    links = _links(summary)
    row: dict[str, float] = {}
    row["delay_ms"] = sum(_f(x.get("delay_mean_s")) for x in links) * 1e3
    row["delay_p99_ms"] = sum(_f(x.get("delay_p99_s")) for x in links) * 1e3
    row["jitter_ms"] = sum(_f(x.get("jitter_s")) for x in links) * 1e3
    row["utilisation"] = float(np.mean([_f(x.get("utilisation")) for x in links]))
    keep = 1.0
    for x in links:
        keep *= 1.0 - _f(x.get("loss_ratio"))
    row["loss_ratio"] = 1.0 - keep
    row["burst_ratio"] = _f(links[0].get("burst_ratio")) if len(links) == 1 else math.nan
    flows = summary["flows"]
    bulk = [f for f in flows if mt.flow_kind(f) == "bulk"]
    row["goodput_mbps"] = sum(f["goodput_bps"] for f in bulk) / 1e6
    row["jain"] = _f(summary.get("fairness", {}).get("jain_goodput"))
    total = sum(f["goodput_bps"] for f in flows if not f.get("probe"))
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in flows:
        groups.setdefault(mt.flow_group(f["name"]), []).append(f)
    counts = series.get(f"signals:{links[0]['name']}")  # per flow: arrivals, drops + marks
    bulk_groups, bulk_p = [], []
    for g, fs in groups.items():
        kind = mt.flow_kind(fs[0])
        if kind == "probe":
            continue
        gp = sum(f["goodput_bps"] for f in fs)
        row[f"share_{g}"] = gp / total if total > 0 else math.nan
        if kind == "bulk":
            bulk_groups.append(gp)
            if counts is not None:
                arr = sum(counts.get(f["name"], (0, 0))[0] for f in fs)
                sig = sum(counts.get(f["name"], (0, 0))[1] for f in fs)
                bulk_p.append(sig / arr if arr else math.nan)
        if kind == "open-loop":
            sent = sum(f.get("udp_sent") or 0 for f in fs)
            got = sum(f.get("udp_received") or 0 for f in fs)
            row[f"loss_{g}"] = 1.0 - got / sent if sent else math.nan
            row[f"owd_p99_{g}_ms"] = max(_f(f.get("owd_p99_s")) for f in fs) * 1e3
    row["ratio"] = (
        bulk_groups[1] / bulk_groups[0]
        if len(bulk_groups) == 2 and bulk_groups[0] > 0
        else math.nan
    )
    # s. 4.4, RFC 7141 s. 2.3: the probability that the bottleneck drops or marks a packet of the
    # second bulk group over the first's (from the event log: packets that arrived in the window):
    # 1 when the AQM signals congestion whatever the packet's size
    row["signal_ratio"] = (
        bulk_p[1] / bulk_p[0]
        if len(bulk_p) == 2 and bulk_p[0] > 0 and math.isfinite(bulk_p[1])
        else math.nan
    )
    fct = summary.get("fct", {}).get("all", {})
    row["fct_median_s"] = _f(fct.get("median_s"))
    row["fct_p99_s"] = _f(fct.get("p99_s"))
    for p in summary.get("probe", []) or []:
        row["ping_rtt_p50_ms"] = _f(p.get("rtt_p50_s")) * 1e3
        row["ping_rtt_p99_ms"] = _f(p.get("rtt_p99_s")) * 1e3
    # s. 2.4: loss synchronisation over the bulk flows' drops and marks at the bottleneck when
    # the run has an event log (`[output] events`), else over their window cuts
    drops = series.get(f"drops:{links[0]['name']}")
    if drops is not None:
        sig_lists = [
            drops["t_s"][(drops["flow"] == f["name"]) & (drops["arrival_s"] >= warm)] for f in bulk
        ]
        row["sync_from_drops"] = 1.0
    else:
        sig_lists = [
            _window_cuts(series[f"flow:{f['name']}"], warm)
            for f in bulk
            if f"flow:{f['name']}" in series and "cwnd" in series[f"flow:{f['name']}"]
        ]
    if len(sig_lists) >= 2:
        rtt = float(np.mean([f["base_rtt_s"] for f in bulk]))
        sync = mt.loss_synchronisation(sig_lists, gap_s=max(rtt, 1e-3))
        row["sync_rate"] = sync["rate"]
        row["sync_events"] = float(sync["events"])
    else:
        row["sync_rate"] = math.nan
    # s. 2.2: startup time from the delivery series
    starts = []
    for f in flows:
        cols = series.get(f"delivered:{f['name']}")
        if cols is None or f.get("udp_sent") is not None or f.get("probe"):
            continue
        starts.append(mt.startup_time(cols["t_s"], cols["delivered_bytes"], f["start_s"]))
    st = [s for s in starts if math.isfinite(s)]
    row["startup_s"] = float(np.mean(st)) if st else math.nan
    # s. 8.2.6: settling after each capacity step
    if steps:
        row.update(_settling(summary, series, steps, end, tol_pkts))
    return row


def _settling(
    summary: dict[str, Any],
    series: dict[str, dict[str, np.ndarray]],
    steps: list[float],
    end: float,
    tol_pkts: float = 5.0,
) -> dict[str, float]:
    """Settling of the bottleneck queue after each capacity step: ``settle_step<i>_s``, their
    mean ``settle_s`` over the steps that settled, the means after the steps down (odd steps:
    the schedule starts high) and up, and ``unsettled_steps``."""
    mp = summary.get("metric_parameters", {})
    band = float(mp.get("settling_band", 0.1))
    smooth = float(mp.get("settling_smoothing_s", 1.0))
    final = float(mp.get("settling_final_fraction", 0.2))
    name = _links(summary)[0]["name"]
    q = series.get(f"link:{name}")
    if q is None:
        return {"settle_s": math.nan, "unsettled_steps": math.nan}
    t, x = q["t_s"], q["queue_pkts"]
    out: dict[str, float] = {}
    times: dict[int, float] = {}
    for i, s in enumerate(steps):
        e = steps[i + 1] if i + 1 < len(steps) else end
        m = (t >= s) & (t < e)
        if m.sum() < 3:
            continue
        st = mt.step_settling_time(
            t[m] - s, x[m], band=band, abs_tol=tol_pkts, smoothing_s=smooth, final_fraction=final
        )
        out[f"settle_step{i + 1}_s"] = st
        times[i + 1] = st
    for key, sel in (
        ("settle_s", list(times)),
        ("settle_down_s", [k for k in times if k % 2 == 1]),
        ("settle_up_s", [k for k in times if k % 2 == 0]),
    ):
        fin = [times[k] for k in sel if math.isfinite(times[k])]
        out[key] = float(np.mean(fin)) if fin else math.nan
    out["unsettled_steps"] = float(sum(1 for v in times.values() if not math.isfinite(v)))
    return out


def _seconds(v: Any) -> float:
    from aqmlab.scenario import units

    return float(v) if isinstance(v, int | float) else units.seconds("duration", v)


def _signals(path: Path, warm_s: float) -> dict[str, tuple[int, int]]:
    """Per flow, from an event log: the packets that arrived at the link in the measurement window
    (by their arrival time) and how many of them were dropped or marked. A packet arrives once:
    an ``enqueue``, or a drop on arrival (cause ``aqm`` or ``overflow``) without one; a head drop
    (``aqm_head``) or a mark follows the packet's enqueue."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["event", "cause", "flow", "arrival_ns"])
    t = t.filter(pc.greater_equal(t.column("arrival_ns"), round(warm_s * 1e9)))
    ev = np.asarray(pc.cast(t.column("event"), "string").to_pylist(), dtype=object)
    cause = np.asarray(pc.cast(t.column("cause"), "string").to_pylist(), dtype=object)
    flow = np.asarray(pc.cast(t.column("flow"), "string").to_pylist(), dtype=object)
    signal = (ev == "drop") | (ev == "mark")
    arrival = (ev == "enqueue") | ((ev == "drop") & (cause != "aqm_head"))
    out: dict[str, tuple[int, int]] = {}
    for name in np.unique(flow):
        m = flow == name
        out[str(name)] = (int(arrival[m].sum()), int(signal[m].sum()))
    return out


def _drops(path: Path) -> dict[str, np.ndarray]:
    """The drops and marks of an event log (``events/<link>.parquet``, issue 24 item 3): time
    and arrival time in seconds, flow name."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["t_ns", "event", "flow", "arrival_ns"])
    ev = pc.cast(t.column("event"), "string")
    t = t.filter(pc.is_in(ev, value_set=pa.array(["drop", "mark"])))
    return {
        "t_s": t.column("t_ns").to_numpy().astype(float) / 1e9,
        "arrival_s": t.column("arrival_ns").to_numpy().astype(float) / 1e9,
        "flow": np.asarray(pc.cast(t.column("flow"), "string").to_pylist(), dtype=object),
    }


def _series(run_dir: Path, warm_s: float = 0.0) -> dict[str, Any]:
    import pyarrow.parquet as pq

    cols: dict[str, Any] = {}
    for f in sorted((run_dir / "events").glob("*.parquet")):
        cols[f"drops:{f.stem}"] = _drops(f)
        cols[f"signals:{f.stem}"] = _signals(f, warm_s)
    for f in sorted(run_dir.glob("*.parquet")):
        kind, _, obj = f.stem.partition("_")
        if kind not in ("flow", "delivered", "link", "delay"):
            continue
        t = pq.read_table(f)
        cols[f"{kind}:{obj}"] = {c: t.column(c).to_numpy() for c in t.column_names}
    return cols


def analyse(pl: Plan, sweep_dir: Path) -> dict[str, Any]:
    """Reads every run of the plan and computes the tables of the card: ``runs`` (one row per
    run), ``cells`` (mean and 95% CI per scenario, AQM and metric), ``verdicts`` (the computed
    comparison with the baselines) and ``status`` (cells missing or not applicable)."""
    import pandas as pd

    from aqmlab.evaluate import params as prm
    from aqmlab.sweep import store

    rows, status = [], []
    for c in pl.cells:
        base = {"scenario": c.scenario.id, "section": c.scenario.section, "aqm": c.aqm}
        if c.missing or c.not_applicable:
            what = f"missing: {c.missing}" if c.missing else f"n/a: {c.not_applicable}"
            status.append({**base, "role": c.role, "status": what})
            continue
        dur = _seconds(c.scenario_dict["duration"]) if c.scenario_dict else 0.0
        steps = prm.step_times(c.scenario, pl.quick, dur)
        failed = 0
        for seed, key in zip(pl.seeds, c.keys, strict=True):
            rec, why = store.read(store.record_path(sweep_dir, key))
            if rec is None or rec.get("status") != "ok":
                failed += 1
                err = why if rec is None else rec.get("error")
                status.append(
                    {**base, "role": c.role, "status": f"run failed (seed {seed}): {err}"}
                )
                continue
            series = _series(sweep_dir / "series" / key, float(rec["summary"]["run"]["warmup_s"]))
            tol = float((c.scenario.capacity or {}).get("tolerance_pkts", 5.0))
            m = run_metrics(rec["summary"], series, steps, tol)
            rows.append({**base, "role": c.role, "seed": seed, "key": key, **m})
    runs = pd.DataFrame(rows)
    cells = _cells(runs)
    verdicts = judge(cells, pl)
    return {"runs": runs, "cells": cells, "verdicts": verdicts, "status": pd.DataFrame(status)}


def _cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, 95% CI half-width (Student t) and n per scenario, AQM and metric."""
    import pandas as pd
    from scipy import stats

    if runs.empty:
        return pd.DataFrame(columns=["scenario", "section", "aqm", "role", "metric", "mean"])
    meta = {"scenario", "section", "aqm", "role", "seed", "key"}
    out = []
    for (sc, sec, aqm, role), g in runs.groupby(["scenario", "section", "aqm", "role"], sort=False):
        for m in [c for c in runs.columns if c not in meta]:
            x = g[m].to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            if x.size == 0:
                continue
            ci = (
                float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
                if x.size > 1
                else math.nan
            )
            out.append(
                {
                    "scenario": sc,
                    "section": sec,
                    "aqm": aqm,
                    "role": role,
                    "metric": m,
                    "mean": float(x.mean()),
                    "ci95": ci,
                    "n": int(x.size),
                }
            )
    return pd.DataFrame(out)


def compare(direction: str, t: float, t_ci: float, b: float, b_ci: float) -> int:
    """+1 if the value ``t`` (under test) is better than ``b`` (a baseline) in ``direction``,
    -1 if worse, 0 if the difference is within ``REL_TOL`` of the baseline's value or within
    the sum of the two 95% confidence half-widths (when known)."""
    if not (math.isfinite(t) and math.isfinite(b)):
        return 0
    if direction == "one":
        t, b = -abs(math.log(t)) if t > 0 else -math.inf, -abs(math.log(b)) if b > 0 else -math.inf
        if not (math.isfinite(t) and math.isfinite(b)):
            return 0
        tol = REL_TOL
    else:
        tol = REL_TOL * abs(b)
    noise = sum(v for v in (t_ci, b_ci) if math.isfinite(v))
    diff = (t - b) if direction in ("higher", "one") else (b - t)
    if abs(diff) <= max(tol, noise if direction != "one" else 0.0):
        return 0
    return 1 if diff > 0 else -1


def judge(cells: pd.DataFrame, pl: Plan) -> pd.DataFrame:
    """For each scenario, AQM under test and judged metric: how many baselines it beats, ties,
    loses to, and the verdict (``better than all``, ``worse than all``, ``mixed``, ``as the
    baselines``, ``better than some`` (and as the others), ``worse than some``, ``mixed``)."""
    import pandas as pd

    out = []
    if cells.empty:
        return pd.DataFrame(out)
    judged = {sc.id: dict(DIRECTION) for sc in pl.scenarios}
    for sc in pl.scenarios:
        judged[sc.id].update(sc.judge)
        judged[sc.id] = {m: d for m, d in judged[sc.id].items() if d != "none"}
    nan = math.nan
    for (sc, aqm), g in cells[cells["role"] == "test"].groupby(["scenario", "aqm"], sort=False):
        base = cells[(cells["scenario"] == sc) & (cells["role"] == "baseline")]
        ran = list(dict.fromkeys(base["aqm"]))  # the baselines that ran this scenario
        section = g["section"].iloc[0]
        for metric in dict.fromkeys([*g["metric"], *base["metric"]]):
            d = judged.get(sc, DIRECTION).get(metric)
            if d is None:
                continue
            mine = g[g["metric"] == metric]
            t, t_ci = (
                (float(mine["mean"].iloc[0]), float(mine["ci95"].iloc[0]))
                if len(mine)
                else (nan, nan)
            )
            vs = {b.aqm: (b.mean, b.ci95) for b in base[base["metric"] == metric].itertuples()}
            res = {}
            for b_aqm in ran:
                has_t, has_b = math.isfinite(t), b_aqm in vs
                if has_t and has_b:
                    res[b_aqm] = compare(d, t, t_ci, *vs[b_aqm])
                elif metric in NAN_IS_WORST:  # a step that never settled: the worst outcome
                    res[b_aqm] = 0 if has_t == has_b else (1 if has_t else -1)
            if (not math.isfinite(t) and metric not in NAN_IS_WORST) or not res:
                continue
            if all(v == 0 for v in res.values()) and not (math.isfinite(t) and vs):
                continue  # nothing to compare on either side
            better = [k for k, v in res.items() if v > 0]
            worse = [k for k, v in res.items() if v < 0]
            if better and not worse and len(better) == len(res):
                verdict = "better than all baselines"
            elif worse and not better and len(worse) == len(res):
                verdict = "worse than all baselines"
            elif not better and not worse:
                verdict = "as the baselines"
            elif not worse:
                verdict = "better than some"
            elif not better:
                verdict = "worse than some"
            else:
                verdict = "mixed"
            out.append(
                {
                    "scenario": sc,
                    "section": section,
                    "aqm": aqm,
                    "metric": metric,
                    "direction": d,
                    "value": t,
                    "ci95": t_ci,
                    "baselines": "; ".join(
                        f"{k} {vs[k][0]:.4g}" if k in vs else f"{k} never" for k in ran
                    ),
                    "better_than": ", ".join(better),
                    "worse_than": ", ".join(worse),
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(out)
