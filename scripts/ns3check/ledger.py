"""Where a window's data segments went at ns-3's receivers, from ``ns3_dumbbell.cc --ackTrace``
(docs/crosscheck-ns3.md s. 1.5), in the columns of aqmlab's ``goodput_ledger`` example:

    flow I SENT RETX ARRIVED DUP DELIVERED HELD_W HELD_E

SENT and RETX are not in the trace (printed as -1; ns-3's JSON has ``retransmits_window``);
ARRIVED the ``data`` lines in [warmup, duration), DUP those whose segment the receiver already
held (below RCV.NXT or out of order), DELIVERED RCV.NXT's advance over the window, HELD_W/E the
out-of-order segments held at the window's start and end. With ``--rto RTOTRACE``
(``--rtoTrace``'s file of the same run) also, over the window's timeouts, the arrivals within
100 ms after each of segments at or below the highest that arrived before it, and how many of
those the receiver already held. Usage:
``python scripts/ns3check/ledger.py ACKTRACE [--rto RTOTRACE] [--warmup 5 --duration 15]``."""

from __future__ import annotations

import argparse
from collections import defaultdict


def ledger(path: str, warmup: float, duration: float) -> dict[int, list[int]]:
    """Per flow: [SENT, RETX, ARRIVED, DUP, DELIVERED, HELD_W, HELD_E] (SENT, RETX -1)."""
    nxt: dict[int, int] = defaultdict(int)
    held: dict[int, set[int]] = defaultdict(set)
    row: dict[int, list[int]] = defaultdict(lambda: [-1, -1, 0, 0, 0, 0, 0])
    at_w: dict[int, int] = {}
    started = False

    def mark_start() -> None:
        for f in set(nxt) | set(held):
            at_w[f] = nxt[f]
            row[f][5] = len(held[f])

    with open(path) as fh:
        for line in fh:
            t_s, f_s, kind, seg_s = line.split()
            if kind != "data":
                continue
            t = float(t_s)
            if t >= duration:
                break
            if not started and t >= warmup:
                mark_start()
                started = True
            f, seg = int(f_s), int(seg_s)
            dup = seg < nxt[f] or seg in held[f]
            if started:
                row[f][2] += 1
                row[f][3] += dup
            if dup:
                continue
            if seg == nxt[f]:
                n = seg + 1
                while n in held[f]:
                    held[f].discard(n)
                    n += 1
                nxt[f] = n
            else:
                held[f].add(seg)
    for f, r in row.items():
        r[4] = nxt[f] - at_w.get(f, 0)
        r[6] = len(held[f])
    return dict(row)


def after_timeouts(ack: str, rto: str, warmup: float, duration: float) -> tuple[int, int, int]:
    """(timeouts in the window, arrivals within 100 ms after one of segments at or below the
    highest that arrived before it, those already held)."""
    times: dict[int, list[float]] = defaultdict(list)
    with open(rto) as fh:
        for line in fh:
            p = line.split()
            if p[0] == "rto" and warmup <= float(p[1]) < duration:
                times[int(p[2])].append(float(p[1]))
    arr: dict[int, list[tuple[float, int]]] = defaultdict(list)
    with open(ack) as fh:
        for line in fh:
            t, f, kind, seg = line.split()
            if kind == "data" and int(f) in times:
                arr[int(f)].append((float(t), int(seg)))
    n = old = held = 0
    for f, ts in times.items():
        for t0 in ts:
            n += 1
            seen = {s for t, s in arr[f] if t < t0}
            top = max(seen, default=-1)
            for t, s in arr[f]:
                if t0 <= t < t0 + 0.1:
                    if s <= top:
                        old += 1
                        held += s in seen
                    seen.add(s)
    return n, old, held


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("acktrace")
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--duration", type=float, default=15.0)
    ap.add_argument("--rto", help="--rtoTrace file of the same run")
    a = ap.parse_args()
    rows = ledger(a.acktrace, a.warmup, a.duration)
    tot = [0] * 7
    for f in sorted(rows):
        print("flow", f, *rows[f])
        tot = [x + y for x, y in zip(tot, rows[f], strict=True)]
    print("total", *tot)
    if a.rto:
        n, old, held = after_timeouts(a.acktrace, a.rto, a.warmup, a.duration)
        print(f"timeouts {n} old_arrivals_100ms {old} already_held {held}")


if __name__ == "__main__":
    main()
