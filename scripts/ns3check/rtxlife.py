"""The life of each retransmitted segment in ``ns3_dumbbell.cc --rtxTrace`` lines (or aqmlab's
``crates/sim/examples/rtx_trace.rs``, the same format): how many SACKed retransmissions a sender
holds (counts them in flight) per 10 ms sample, how many distinct ones, how long each is held and
how its hold ends (the cumulative ACK passes it, or its flag is cleared above snd_una: a
timeout), and what the flow's snd_una segment was while they were held (issue 22, s. 1.5).

    python3 scripts/ns3check/rtxlife.py FILE [FILE ...]
"""

import sys
from collections import Counter, defaultdict


def parse(path: str):
    """Yields (t, flow, una, ca, unsacked set, sacked set) per line."""
    for line in open(path):
        if len(line.split()) != 6:
            continue  # a line still being written
        t, f, una, ca, u, s = line.split()
        yield (
            float(t),
            int(f),
            int(una),
            int(ca),
            set() if u == "-" else {int(x.rstrip("n")) for x in u.split(",")},
            set() if s == "-" else {int(x.rstrip("n")) for x in s.split(",")},
        )


def spells(path: str, least: float = 0.1) -> list[dict]:
    """Each flow's spells of at least ``least`` seconds with the same snd_una whose segment is a
    retransmission not yet SACKed (a lost retransmission waiting for the timeout, or one in
    flight): its flow, start, end and the segments first seen retransmitted in it, with when."""
    cur: dict[int, dict] = {}
    out = []
    for t, f, una, _ca, u, s in parse(path):
        c = cur.get(f)
        if una in u:
            if c is None or c["una"] != una:
                if c:
                    out.append(c)
                c = cur[f] = {"flow": f, "una": una, "t0": t, "t1": t, "first": {}}
            for q in u | s:
                c["first"].setdefault(q, t)
            c["t1"] = t
        elif c:
            out.append(cur.pop(f))
    out += cur.values()
    return [c for c in out if c["t1"] - c["t0"] >= least]


def summary(path: str) -> str:
    """One file's figures, as text."""
    times = set()
    held_sum = unsacked_sum = 0
    prev: dict[int, tuple] = {}
    start: dict[tuple[int, int], float] = {}
    seen_unsacked: dict[tuple[int, int], float] = {}
    holds = []  # (duration s, how it ended, was seen retransmitted unSACKed before)
    by_ca = Counter()
    una_kind = Counter()
    episodes = defaultdict(list)  # flow -> [(start t, distinct retransmitted segs)]
    ep_open: dict[int, tuple[float, set]] = {}
    for t, f, una, ca, u, s in parse(path):
        times.add(t)
        held_sum += len(s)
        unsacked_sum += len(u)
        by_ca[ca] += len(s)
        if s:
            # What snd_una's segment is while segments are held: a retransmission not yet
            # SACKed (a hole retransmitted, waiting for it or the timeout), or not retransmitted.
            una_kind["una retransmitted" if una in u else "una not retransmitted"] += len(s)
        for q in u:
            seen_unsacked.setdefault((f, q), t)
        for q in s:
            start.setdefault((f, q), t)
        if f in prev:
            for q in prev[f][1] - s:
                how = "cumulative ACK" if q < una else "cleared above snd_una"
                t0 = start.pop((f, q))
                holds.append((t - t0, how, (f, q) in seen_unsacked and seen_unsacked[(f, q)] < t0))
                seen_unsacked.pop((f, q), None)
            for q in prev[f][0] - u - s:
                seen_unsacked.pop((f, q), None)
        prev[f] = (u, s)
        in_rec = ca in (3, 4)
        if in_rec:
            e = ep_open.setdefault(f, (t, set()))
            e[1].update(u | s)
        elif f in ep_open:
            episodes[f].append(ep_open.pop(f))
    n = max(len(times), 1)
    # ns-3's mark of a retransmission no copy of which was dropped (none in aqmlab's format).
    needless = sum(
        x.endswith("n")
        for line in open(path)
        if len(line.split()) == 6
        for col in line.split()[4:]
        for x in col.split(",")
    )
    out = [
        f"{path}: {n} samples; per sample, summed over flows: SACKed retransmissions held "
        f"{held_sum / n:.1f}, retransmitted unSACKed {unsacked_sum / n:.1f}; marked needless "
        f"{needless / n:.1f}"
    ]
    out.append(
        "  held by state (per sample): "
        + ", ".join(f"ca{k} {v / n:.1f}" for k, v in sorted(by_ca.items()))
    )
    out.append(
        "  held while snd_una's segment is: "
        + ", ".join(f"{k} {v / n:.1f}" for k, v in sorted(una_kind.items()))
    )
    if holds:
        ends = Counter(h[1] for h in holds)
        d = sorted(h[0] for h in holds)
        out.append(
            f"  holds {len(holds)}: mean {sum(d) / len(d) * 1e3:.0f} ms, median "
            f"{d[len(d) // 2] * 1e3:.0f} ms, 90th {d[int(len(d) * 0.9)] * 1e3:.0f} ms; "
            + ", ".join(
                f"{k} {v} (mean {sum(h[0] for h in holds if h[1] == k) / v * 1e3:.0f} ms)"
                for k, v in ends.items()
            )
            + f"; seen unSACKed first {sum(h[2] for h in holds)}"
        )
    eps = [e for v in episodes.values() for e in v]
    if eps:
        k = sorted(len(e[1]) for e in eps)
        out.append(
            f"  recovery/loss episodes {len(eps)}: distinct retransmitted segments seen "
            f"mean {sum(k) / len(k):.1f}, median {k[len(k) // 2]}, max {k[-1]}"
        )
    sp = spells(path)
    if sp:
        dur = sum(c["t1"] - c["t0"] + 0.01 for c in sp)
        rtx = sum(len(c["first"]) for c in sp)
        bins = (0.05, 0.1, 0.2, 0.4, 0.7, float("inf"))
        hist = [0] * len(bins)
        for c in sp:
            for t in c["first"].values():
                hist[next(i for i, b in enumerate(bins) if t - c["t0"] < b)] += 1
        per_flow = Counter()
        for c in sp:
            per_flow[c["flow"]] += len(c["first"])
        out.append(
            f"  snd_una-retransmitted spells >= 100 ms: {len(sp)}, {dur:.2f} flow-s, mean "
            f"{dur / len(sp) * 1e3:.0f} ms; segments retransmitted in them {rtx} ({rtx / len(sp):.1f}"
            f" a spell, {rtx / dur:.1f} a flow-s); first seen after the spell's start < 50 / 100 / "
            f"200 / 400 / 700 ms / later: {' / '.join(map(str, hist))}; per flow: "
            + ", ".join(f"{k} {v}" for k, v in sorted(per_flow.items()))
        )
    return "\n".join(out)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(summary(p))
