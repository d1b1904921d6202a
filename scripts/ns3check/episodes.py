"""Times the recovery and Loss episodes of a run from its state trace: ns-3's
``ns3_dumbbell.cc --rtoTrace=FILE`` or aqmlab's ``cargo run --release -p aqmlab-sim --example
recovery_trace CONFIG_JSON > FILE`` (the same line format: ``st T FLOW FROM TO UNA HIGH`` for
each change of the congestion state, 0 open, 3 recovery, 4 loss; ``rec`` and ``rto`` lines).

    python scripts/ns3check/episodes.py FILE [FILE ...] [--window 5 15]

For each file: the share of flow-time in recovery and in Loss over the window, and the recovery
episodes that begin in it: how many, their length (mean, median, p90, s), how many end in a
timeout (to Loss) rather than by the ACK of the recovery point, and the segments outstanding when
they begin (HIGH - UNA).
Episodes that end in a timeout: their mean length and their share of the flow-time.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict


def episodes(path: str, lo: float, hi: float) -> dict:
    """Summary of one trace over [lo, hi) s."""
    changes = defaultdict(list)  # flow -> [(t, from, to, una, high)]
    for line in open(path):
        p = line.split()
        if p and p[0] == "st":
            t, flow = float(p[1]), p[2]
            changes[flow].append((t, int(p[3]), int(p[4]), int(p[5]), int(p[6])))
    time_in = defaultdict(float)
    eps = []  # (length, ended by timeout, outstanding at entry)
    for ch in changes.values():
        state, since, entry = 0, 0.0, None
        for t, _f, to, una, high in [*ch, (float("inf"), None, None, 0, 0)]:
            a, b = max(since, lo), min(t, hi)
            if b > a:
                time_in[state] += b - a
            if state == 3 and entry is not None and lo <= entry[0] < hi and to is not None:
                eps.append((t - entry[0], to == 4, entry[1]))
            if to is None:
                break
            if to == 3:
                entry = (t, high - una)
            state, since = to, t
    nflows = len(changes)
    span = (hi - lo) * nflows
    lens = sorted(e[0] for e in eps)
    out = {
        "flows": nflows,
        "recovery_share": time_in[3] / span if span else 0.0,
        "loss_share": time_in[4] / span if span else 0.0,
        "episodes": len(eps),
    }
    if lens:
        out.update(
            mean_s=statistics.fmean(lens),
            median_s=statistics.median(lens),
            p90_s=lens[int(0.9 * (len(lens) - 1))],
            to_loss=sum(e[1] for e in eps),
            to_loss_share=sum(e[0] for e in eps if e[1]) / span,
            to_loss_mean_s=statistics.fmean([e[0] for e in eps if e[1]] or [0.0]),
            outstanding_mean=statistics.fmean(e[2] for e in eps),
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--window", nargs=2, type=float, default=[5.0, 15.0])
    args = ap.parse_args()
    for f in args.files:
        s = episodes(f, *args.window)
        line = (
            f"{f}: {s['flows']} flows, recovery {100 * s['recovery_share']:.1f} %, "
            f"Loss {100 * s['loss_share']:.1f} % of flow-time; {s['episodes']} recovery episodes"
        )
        if s["episodes"]:
            line += (
                f", length mean {1e3 * s['mean_s']:.1f} ms, median {1e3 * s['median_s']:.1f},"
                f" p90 {1e3 * s['p90_s']:.1f}; {s['to_loss']} end in a timeout (mean"
                f" {1e3 * s['to_loss_mean_s']:.0f} ms, {100 * s['to_loss_share']:.1f} % of"
                " flow-time);"
                f" {s['outstanding_mean']:.1f} segments outstanding at entry"
            )
        print(line)


if __name__ == "__main__":
    main()
