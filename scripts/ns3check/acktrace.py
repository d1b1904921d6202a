"""Summarises an ACK trace: ``ns3_dumbbell.cc --ackTrace=FILE`` (with ``--rtoTrace=RTO`` for the
timeouts) or aqmlab's ``ACK_TRACE=FILE target/release/examples/ack_reasons RUN/config.json``
(its timeouts and recoveries are lines of the same file). Per interval: the data segments the
receivers got, the ACKs they sent per segment by reason, and the gap episodes (a flow's first
``ooo`` or ``hole`` ACK with no gap open to the ``fill`` that closes it; counted in the interval where they
start) split by whether a timeout of the flow fell inside them (docs/crosscheck-ns3.md s. 1.8
item 5).

    python scripts/ns3check/acktrace.py FILE [--rto RTO] [--edges 0 5 15]
"""

from __future__ import annotations

import argparse
import bisect
from collections import Counter, defaultdict

REASONS = ["count", "ooo", "fill", "hole", "old", "timer", "other"]


def read(path: str, rto_path: str | None) -> tuple[list[tuple[float, str, str]], dict, list]:
    """The trace's lines (time, flow, kind), each flow's timeout times and every recovery entry and
    timeout as (time, kind, state)."""
    rows, rto, events = [], defaultdict(list), []
    with open(path) as f:
        for line in f:
            t, flow, kind, x = line.split()
            if kind == "rto":
                rto[flow].append(float(t))
            if kind in ("rto", "rec"):
                events.append((float(t), kind, x))
            else:
                rows.append((float(t), flow, kind))
    if rto_path:
        with open(rto_path) as f:
            for line in f:
                p = line.split()
                if p[0] == "rto":
                    rto[p[2]].append(float(p[1]))
                    events.append((float(p[1]), "rto", p[3]))
                elif p[0] == "rec":
                    events.append((float(p[1]), "rec", "0"))
    for v in rto.values():
        v.sort()
    return rows, rto, events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--rto", help="ns3_dumbbell.cc --rtoTrace file of the same run")
    ap.add_argument("--edges", type=float, nargs="+", default=[0, 5, 15])
    a = ap.parse_args()
    rows, rto, events = read(a.trace, a.rto)
    edges = a.edges

    def bin_of(t: float) -> int | None:
        k = bisect.bisect_right(edges, t) - 1
        return k if 0 <= k < len(edges) - 1 else None

    count = [Counter() for _ in edges[:-1]]
    gap = [Counter() for _ in edges[:-1]]
    open_eps: dict[str, list] = {}
    for t, flow, kind in rows:
        k = bin_of(t)
        if k is not None:
            count[k][kind] += 1
        e = open_eps.get(flow)
        if kind in ("ooo", "hole"):
            if e is None:
                open_eps[flow] = e = [t, 0]
            e[1] += 1
        elif kind == "fill" and e is not None:
            kb = bin_of(e[0])
            if kb is not None:
                r = rto[flow]
                i = bisect.bisect_left(r, e[0])
                key = "to" if i < len(r) and r[i] <= t else "noto"
                gap[kb][key + "_eps"] += 1
                gap[kb][key + "_acks"] += e[1]
            del open_eps[flow]
    for t, kind, state in events:
        k = bin_of(t)
        if k is not None:
            gap[k][kind if kind == "rec" else f"rto_state{state}"] += 1
    print(
        "from_s to_s segments acks/seg "
        + " ".join(REASONS)
        + " | gap_eps_with_timeout ooo+hole/seg_in_them gap_eps_without ooo+hole/seg_in_them"
        + " | recoveries timeouts_by_state"
    )
    for k, c in enumerate(count):
        seg = max(c["data"], 1)
        g = gap[k]
        states = " ".join(f"{s[9:]}:{n}" for s, n in sorted(g.items()) if s.startswith("rto_"))
        print(
            f"{edges[k]:g} {edges[k + 1]:g} {c['data']} "
            f"{sum(c[r] for r in REASONS) / seg:.4f} "
            + " ".join(f"{c[r] / seg:.4f}" for r in REASONS)
            + f" | {g['to_eps']} {g['to_acks'] / seg:.4f} {g['noto_eps']} {g['noto_acks'] / seg:.4f}"
            + f" | {g['rec']} {states}"
        )


if __name__ == "__main__":
    main()
