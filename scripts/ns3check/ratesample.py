"""Compares BBR's per-ACK delivery-rate samples on both sides (docs/crosscheck-ns3.md s. 1.5):
``ns3_dumbbell.cc --rateTrace=FILE`` (ns-3.44's TcpRateLinux samples fed to TcpBbr) against
``cargo run --release -p aqmlab-sim --example bbr_rate_tap CONFIG_JSON`` (aqmlab's ``bbr``).

Per flow over [T0, T1]: the flow's true delivery rate (its delivered bytes over the window), the
valid samples' rates (median, p90, max) and the share above the true rate, their intervals, the
samples that raised the max-bw estimate (their rate, interval, app-limited share), and the
estimate's time-weighted mean. ns-3 only: a sample is *stale* when the ACK delivered no
segment sent after the previous sample's start (``TcpRateLinux::SkbDelivered`` keeps
``m_rateSample`` from the previous ACK: its prior time and elapsed times, while ``delivered``
grows), detected as ``ACK_EL < T - PRIOR_T``; its *capped* rate divides by
``max(INTERVAL, T - PRIOR_T)``, what a fresh sample from the same start could at most give.
Rates are bit/s of payload (1460-byte segments).

``--decompose FLOW``: whether ns-3's samples of one flow exceed what the flow delivered over their
own span [PRIOR_T, T] (its connection's delivered count at PRIOR_T against PRIOR_DELIVERED, the
rate against that span's delivery, the kept start's lag), the flow's delivery per 100 ms with the
other flows' beside it, both sides.

Usage: python scripts/ns3check/ratesample.py NS3_RATE_FILE OURS_RATE_FILE [--t0 5 --t1 15]\n[--counterfactual | --decompose FLOW]
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

MSS = 1460


def _rows(path: str) -> dict[int, np.ndarray]:
    """A trace's lines by flow (the second column), as float arrays."""
    rows = defaultdict(list)
    with open(path) as f:
        for line in f:
            v = line.split()
            rows[int(v[1])].append([float(x) for x in v])
    return {k: np.array(r) for k, r in rows.items()}


def load_ns3(path: str) -> dict[int, dict[str, np.ndarray]]:
    """Columns of ``--rateTrace``: T FLOW DELIVERED INTERVAL SEND_EL ACK_EL APPLTD
    PRIOR_DELIVERED PRIOR_T RATE CONN_DELIVERED BW (bytes, seconds, bit/s)."""
    out = {}
    for k, a in _rows(path).items():
        t, dl, iv, ack_el, prior_t = a[:, 0], a[:, 2], a[:, 3], a[:, 5], a[:, 8]
        since = t - prior_t
        stale = (iv > 0) & (since - ack_el > 1e-9)
        out[k] = {
            "t": t,
            "delivered": dl,
            "interval": iv,
            "appl": a[:, 6] > 0,
            "rate": a[:, 9],
            "fresh": np.where(iv > 0, dl * 8 / np.where(iv > 0, iv, 1), 0),
            "capped": np.where(iv > 0, dl * 8 / np.maximum(np.where(iv > 0, iv, 1), since), 0),
            "stale": stale,
            "total": a[:, 10],
            "bw": a[:, 11],
        }
    return out


def load_ours(path: str) -> dict[int, dict[str, np.ndarray]]:
    """Columns of ``bbr_rate_tap``: T FLOW DELIVERED INTERVAL APPLTD RETRANS PRIOR_DELIVERED
    RATE BW TOTAL_DELIVERED (segments, seconds, bit/s)."""
    out = {}
    for k, a in _rows(path).items():
        iv = a[:, 3]
        out[k] = {
            "t": a[:, 0],
            "delivered": a[:, 2] * MSS,
            "interval": iv,
            "appl": a[:, 4] > 0,
            "rate": a[:, 7],
            "fresh": a[:, 7],
            "capped": a[:, 7],
            "stale": np.zeros(len(iv), bool),
            "total": a[:, 9] * MSS,
            "bw": a[:, 8],
        }
    return out


def summarise(d: dict[str, np.ndarray], t0: float, t1: float) -> dict[str, float]:
    """The figures of one flow over [t0, t1]."""
    w = (d["t"] >= t0) & (d["t"] <= t1)
    t = d["t"][w]
    true = (d["total"][w][-1] - d["total"][w][0]) * 8 / (t[-1] - t[0])
    valid = w & (d["interval"] > 0) & (d["delivered"] >= 0)
    rate, iv = d["rate"][valid], d["interval"][valid]
    bw = d["bw"]
    rise = np.zeros(len(bw), bool)
    rise[1:] = bw[1:] > bw[:-1] * 1.0001
    rise &= w & valid
    dt = np.diff(t, append=t1)
    return {
        "true": true,
        "n": int(valid.sum()),
        "med": float(np.median(rate)),
        "p90": float(np.percentile(rate, 90)),
        "max": float(rate.max()),
        "above": float((rate > true).mean()),
        "above_1.1": float((rate > 1.1 * true).mean()),
        "iv_med": float(np.median(iv)),
        "stale": float(d["stale"][valid].mean()),
        "appl": float(d["appl"][valid].mean()),
        "bw_mean": float((bw[w] * dt).sum() / dt.sum()),
        "rises": int(rise.sum()),
        "rise_rate_med": float(np.median(d["rate"][rise])) if rise.any() else 0.0,
        "rise_iv_med": float(np.median(d["interval"][rise])) if rise.any() else 0.0,
        "rise_stale": float(d["stale"][rise].mean()) if rise.any() else 0.0,
        "rise_appl": float(d["appl"][rise].mean()) if rise.any() else 0.0,
        "rise_capped_med": float(np.median(d["capped"][rise])) if rise.any() else 0.0,
        "stale_rate_med": float(np.median(d["rate"][valid & d["stale"]]))
        if (valid & d["stale"]).any()
        else 0.0,
        "stale_capped_med": float(np.median(d["capped"][valid & d["stale"]]))
        if (valid & d["stale"]).any()
        else 0.0,
    }


def _parser() -> argparse.ArgumentParser:
    """The arguments every mode takes: the two traces and the window."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ns3")
    ap.add_argument("ours")
    ap.add_argument("--t0", type=float, default=5.0)
    ap.add_argument("--t1", type=float, default=15.0)
    return ap


def main() -> None:
    """Prints one table per side and the sums."""
    a = _parser().parse_args()
    for name, side in (("ns-3", load_ns3(a.ns3)), ("aqmlab", load_ours(a.ours))):
        print(f"## {name} (Mb/s; intervals ms)")
        print(
            "flow true  n     med   p90   max   >true >1.1t iv_med stale appl | bw_mean rises "
            "rise_rate rise_iv rise_stale rise_appl rise_capped | stale_med stale_capped"
        )
        tot = defaultdict(float)
        for k in sorted(side):
            s = summarise(side[k], a.t0, a.t1)
            for key in ("true", "bw_mean"):
                tot[key] += s[key]
            print(
                f"{k:4d} {s['true'] / 1e6:5.2f} {s['n']:5d} {s['med'] / 1e6:5.2f} "
                f"{s['p90'] / 1e6:5.2f} {s['max'] / 1e6:5.2f} {s['above']:5.2f} "
                f"{s['above_1.1']:5.2f} {s['iv_med'] * 1e3:6.1f} {s['stale']:5.2f} "
                f"{s['appl']:4.2f} | {s['bw_mean'] / 1e6:7.2f} {s['rises']:5d} "
                f"{s['rise_rate_med'] / 1e6:9.2f} {s['rise_iv_med'] * 1e3:7.1f} "
                f"{s['rise_stale']:10.2f} {s['rise_appl']:9.2f} {s['rise_capped_med'] / 1e6:11.2f}"
                f" | {s['stale_rate_med'] / 1e6:9.2f} {s['stale_capped_med'] / 1e6:12.2f}"
            )
        print(f"sum  true {tot['true'] / 1e6:.1f}  bw_mean {tot['bw_mean'] / 1e6:.1f}\n")


def sliding_max_mean(t: np.ndarray, r: np.ndarray, win: float, t0: float, t1: float) -> float:
    """Time-weighted mean over [t0, t1] of the max of the samples r over the last ``win``
    seconds: a stand-in for BBR's 10-round max filter, to compare sample sets alike."""
    from collections import deque

    q: deque[tuple[float, float]] = deque()
    vals = np.zeros(len(t))
    for i in range(len(t)):
        while q and q[-1][1] <= r[i]:
            q.pop()
        q.append((t[i], r[i]))
        while q[0][0] < t[i] - win:
            q.popleft()
        vals[i] = q[0][1]
    w = (t >= t0) & (t <= t1)
    dt = np.diff(t[w], append=t1)
    return float((vals[w] * dt).sum() / dt.sum())


def counterfactual(side: dict[int, dict[str, np.ndarray]], t0: float, t1: float) -> None:
    """Sums over flows of the sliding 10-RTT max of the valid samples: as sampled, with the
    stale samples capped, and with the stale samples left out; and the sum of the flows' p90 of
    their fresh samples over [t0, t1], and of the flows' delivery (the connection's delivered
    count) over one median sample interval (every 5 ms of [t0, t1])."""
    tot = defaultdict(float)
    for d in side.values():
        valid = (d["interval"] > 0) & (d["delivered"] >= 0)
        t = d["t"][valid]
        win = 10 * float(np.median(d["interval"][valid]))
        tot["as sampled"] += sliding_max_mean(t, d["rate"][valid], win, t0, t1)
        tot["stale capped"] += sliding_max_mean(t, d["capped"][valid], win, t0, t1)
        fresh = ~d["stale"][valid]
        tot["stale dropped"] += sliding_max_mean(t[fresh], d["rate"][valid][fresh], win, t0, t1)
        grid = np.arange(t0 + win / 10, t1, 0.005)
        acked = np.interp(grid, d["t"], d["total"]) - np.interp(grid - win / 10, d["t"], d["total"])
        tot["delivery p90 over one RTT"] += float(np.percentile(acked * 8 / (win / 10), 90))
        inw = fresh & (t >= t0) & (t <= t1)
        tot["fresh p90 in window"] += float(np.percentile(d["rate"][valid][inw], 90))
    print("  ".join(f"{k} {v / 1e6:.1f}" for k, v in tot.items()), "(Mb/s, summed over flows)")


def main_counterfactual() -> None:
    """``--counterfactual``: the sliding-max sums for both sides."""
    ap = _parser()
    ap.add_argument("--counterfactual", action="store_true")
    a = ap.parse_args()
    for name, side in (("ns-3", load_ns3(a.ns3)), ("aqmlab", load_ours(a.ours))):
        print(name, end=": ")
        counterfactual(side, a.t0, a.t1)


def per_bin(side: dict[int, dict[str, np.ndarray]], t0: float, t1: float) -> dict[int, np.ndarray]:
    """Each flow's delivery rate (bit/s) in the 100 ms bins of [t0, t1], from its connection's
    delivered count."""
    edges = np.arange(t0, t1 + 1e-9, 0.1)
    return {k: np.diff(np.interp(edges, d["t"], d["total"])) * 8 / 0.1 for k, d in side.items()}


def decompose(ns3_path: str, ours_path: str, flow: int, t0: float, t1: float) -> None:
    """``--decompose FLOW``: ns-3's samples of FLOW against its delivery over each sample's span,
    and the flow's delivery per 100 ms with the others' (both sides)."""
    a = np.array(_rows(ns3_path)[flow])
    t, dl, iv, ack_el, pdl, pt, rate, conn = (a[:, i] for i in (0, 2, 3, 5, 7, 8, 9, 10))
    valid = (t >= t0) & (t <= t1) & (iv > 0) & (dl >= 0)
    # The connection's delivered count at PRIOR_T: the last line at or before it.
    at = np.searchsorted(t, pt + 1e-12, side="right") - 1
    same = np.abs(pdl - np.where(at >= 0, conn[np.maximum(at, 0)], 0)) < 1
    span = dl * 8 / np.maximum(t - pt, 1e-9)
    lag = (t - pt) - ack_el
    stale = valid & (lag > 1e-9)
    ratio = rate[valid] / span[valid]
    print(f"ns-3 flow {flow}: {valid.sum()} valid samples in [{t0}, {t1}] s")
    print(f"  PRIOR_DELIVERED = delivered count at PRIOR_T: {same[valid].mean():.4f} of them")
    print(
        f"  median rate {np.median(rate[valid]) / 1e6:.1f} Mb/s, its span's delivery "
        f"{np.median(span[valid]) / 1e6:.1f}; rate / span p10/50/90/99/max "
        f"{np.round(np.percentile(ratio, [10, 50, 90, 99, 100]), 4)}"
    )
    print(
        f"  kept-start (stale) samples {stale.sum()}: lag ms p50/p90/p99/max "
        f"{np.round(np.percentile(lag[stale] * 1e3, [50, 90, 99, 100]), 3)}"
    )
    d = load_ns3(ns3_path)[flow]
    v = (d["interval"] > 0) & (d["delivered"] >= 0)
    win = 10 * float(np.median(d["interval"][v]))
    as_sampled, capped = (
        sliding_max_mean(d["t"][v], d[k][v], win, t0, t1) / 1e6 for k in ("rate", "capped")
    )
    print(f"  sliding 10-interval max: as sampled {as_sampled:.1f} Mb/s, stale capped {capped:.1f}")
    for name, side in (("ns-3", load_ns3(ns3_path)), ("aqmlab", load_ours(ours_path))):
        bins = per_bin(side, t0, t1)
        x = bins[flow]
        others = sum(bins.values()) - x
        print(
            f"{name} flow {flow}: delivery per 100 ms mean {x.mean() / 1e6:.1f} Mb/s, p10/50/90/max "
            f"{np.round(np.percentile(x, [10, 50, 90, 100]) / 1e6, 1)}"
        )
        for lo, hi in ((0, 1), (1, 30), (30, 50), (50, 1000)):
            m = (x >= lo * 1e6) & (x < hi * 1e6)
            if m.any():
                print(
                    f"  bins {lo}-{hi} Mb/s: {m.mean():.2f} of the time, the other flows "
                    f"{others[m].mean() / 1e6:.1f} Mb/s, all {(others[m] + x[m]).mean() / 1e6:.1f}"
                )


def stale_round_starts(ns3_path: str) -> tuple[int, int, int, int]:
    """ns-3's rounds rebuilt from ``--rateTrace`` (tcp-bbr.cc ``UpdateRound``: a valid sample
    whose PRIOR_DELIVERED reaches the delivered count at the last round start starts one): the
    ACKs, the ACKs with an invalid sample, those of them that follow a round start (TcpBbr's
    ``m_roundStart`` is left as it was; Linux's ``bbr_update_bw`` clears it), and the round
    starts. CA_LOSS entries, which also set it (l. 744), are not in the trace: a lower bound."""
    acks = invalid = stale = starts = 0
    for a in _rows(ns3_path).values():
        next_round, start = 0.0, False
        for row in a:
            acks += 1
            if row[2] < 0 or row[3] <= 0:
                invalid += 1
                stale += start
                continue
            start = row[7] >= next_round
            if start:
                next_round = row[10]
                starts += 1
    return acks, invalid, stale, starts


def main_decompose() -> None:
    """``--decompose FLOW``."""
    ap = _parser()
    ap.add_argument("--decompose", type=int, required=True)
    a = ap.parse_args()
    decompose(a.ns3, a.ours, a.decompose, a.t0, a.t1)
    acks, invalid, stale, starts = stale_round_starts(a.ns3)
    print(
        f"ns-3, all flows and times: {acks} ACKs, {invalid} with an invalid sample, {stale} of "
        f"them after a round start (kept by TcpBbr), {starts} round starts"
    )


if __name__ == "__main__":
    import sys

    if "--counterfactual" in sys.argv:
        main_counterfactual()
    elif "--decompose" in sys.argv:
        main_decompose()
    else:
        main()
