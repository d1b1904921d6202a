#!/usr/bin/env python3
"""Cross-checks aqmlab's CoDel and PIE against ns-3's on the default dumbbell.

The question: on aqmlab's default dumbbell (``python/aqmlab/data/default.toml``: 100 Mb/s / 2 ms
bottleneck, buffer 300, access delays 1, 3, ..., 19 ms cycled, NewReno) with 50 flows, aqmlab's CoDel
(RFC 8289 defaults) keeps a mean queueing delay of ~14 ms, well above its 5 ms target. Does an
independent implementation (ns-3.44's ``CoDelQueueDisc``) do the same on the same network, i.e. is it
CoDel with many flows, or aqmlab? PIE (RFC 8033, target 15 ms) is checked alongside.

For every scenario ``scenarios/crosscheck/{codel,pie}-*.toml`` this runs

* aqmlab: ``aqmlab run CASE.toml`` (the project's ``.venv``), the scenario's seed and, for the spread
  between runs, further seeds (``--ours-seeds``; a seed also draws the flows' start times), and
* ns-3 3.44: ``scripts/ns3_dumbbell.cc`` (the one ns-3 program, with CoDel, PIE and
  queueing-delay measurement) compiled against the ``ns3`` wheel's headers and libraries
  (venv default ``/work/ns3venv``: ``python3 -m venv /work/ns3venv && /work/ns3venv/bin/pip install
  ns3==3.44.post0``), with TCP SACK off and on, the same access delays and flow start times,

and writes the section "CoDel and PIE on the default dumbbell" to
``target/crosscheck-ns3-codel/report.md`` (``--doc``; a hand-written reading below this section's
marker is kept). The tables it produced on 2026-11-22 are kept, superseded, in
``docs/crosscheck-ns3.md``; the current cross-check is ``scripts/crosscheck_ns3.py tcp``.

Usage (from the repository root, with the project's venv):

    .venv/bin/python scripts/crosscheck_ns3.py codel                  # all cases, ~25 min
    .venv/bin/python scripts/crosscheck_ns3.py codel --cases codel-het-n50 --variants sack-on
    .venv/bin/python scripts/crosscheck_ns3.py codel --ns3-seeds 1 2 3 --cases codel-het-n50
    .venv/bin/python scripts/crosscheck_ns3.py codel --report-only    # rewrite the section

Results are cached per run in ``--workdir`` (default ``target/crosscheck-ns3-codel``), so an
interrupted run resumes; ``--fresh`` reruns everything. ns-3 runs one at a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

from ns3check import common as base
from ns3check.common import MSS, PKT, ROOT, VARIANTS, f3, log, ms, pct

SCEN_DIR = ROOT / "scenarios" / "crosscheck"
DOC = ROOT / "target" / "crosscheck-ns3-codel" / "report.md"  # the doc: superseded
TITLE = "## CoDel and PIE on the default dumbbell"
MARKER = "<!-- codel-pie reading: written by hand, kept when the script regenerates the tables -->"

# aqmlab's parameter defaults (crates/aqm/src/codel.rs, pie.rs), for parameters a scenario omits.
CODEL_DEFAULTS = {"target": 0.005, "interval": 0.1, "mtu": 1500.0, "ecn": False}
PIE_DEFAULTS = {
    "target": 0.015,
    "t_update": 0.015,
    "alpha": 0.125,
    "beta": 1.25,
    "max_burst": 0.15,
    "estimator": "timestamp",
    "cap_drop_adjustment": True,
    "derandomize": False,
    "ecn": False,
}

# ---------------------------------------------------------------------------------------------
# One case


def case_inputs(toml: Path, seed: int | None = None) -> dict:
    """The network as aqmlab builds it (for `seed`, default the scenario's): per-flow access
    delays and start times, buffer, AQM parameters in base units."""
    from aqmlab.scenario import schema as scenario

    sc = scenario.load(toml)
    cfg = scenario.build_config(sc, seed)
    links = cfg["links"]
    delays, starts = [], []
    for f in cfg["flows"]:
        up, bott, down = f["path"]
        assert links[bott]["name"] == "bottleneck"
        d_up, d_down = links[up]["delay_ns"], links[down]["delay_ns"]
        assert d_up == d_down, "the ns-3 dumbbell gives sender and receiver the same access delay"
        delays.append(d_up / 1e6)
        starts.append(f["start_ns"] / 1e9)
        t = f["tcp"]
        assert (t["variant"], t["mss"], t["header_bytes"]) == ("newreno", MSS, PKT - MSS)
        assert t["init_cwnd"] == 10
        assert (t["min_rto_ns"], t["init_rto_ns"], t["delack"]) == (200_000_000, 10**9, False)
    b = links[0]
    assert b["rate_bps"] == 100_000_000 and b["delay_ns"] == 2_000_000
    assert b["buffer_pkts"] == links[1]["buffer_pkts"], "ns-3 side: same buffer both directions"
    aqm = b["aqm"]["name"]
    if aqm not in ("codel", "pie"):
        raise SystemExit(f"{toml.name}: this cross-check is for codel and pie, not {aqm}")
    params = {**(CODEL_DEFAULTS if aqm == "codel" else PIE_DEFAULTS), **b["aqm"]["params"]}
    return {
        "flows": len(cfg["flows"]),
        "aqm": aqm,
        "aqm_params": params,
        "buffer": b["buffer_pkts"],
        "duration": cfg["duration_ns"] / 1e9,
        "warmup": cfg["warmup_ns"] / 1e9,
        "seed": cfg["seed"],
        "delays_ms": delays,
        "starts_s": starts,
    }


def aqm_flags(inp: dict, name: str) -> list[str]:
    """ns3_dumbbell_aqm.cc options for the case's AQM (refusing what the ns-3 side does not run)."""
    p = inp["aqm_params"]
    if p.get("ecn"):
        raise SystemExit(f"{name}: the ns-3 side runs without ECN")
    if inp["aqm"] == "codel":
        return [
            f"--codelTarget={p['target'] * 1e3:g}",
            f"--codelInterval={p['interval'] * 1e3:g}",
            # ns-3's MinBytes: no drop while the queue left behind holds < MinBytes bytes
            # (aqmlab's mtu: <= mtu bytes). 1500 in both; see the doc.
            f"--codelMinBytes={round(p['mtu'])}",
        ]
    if p["estimator"] != "timestamp":
        raise SystemExit(f"{name}: the ns-3 side runs PIE with timestamps")
    if "mean_pkt_size" in p and p["mean_pkt_size"] != PKT:
        raise SystemExit(f"{name}: mean_pkt_size must be the packet size ({PKT})")
    return [
        f"--pieTarget={p['target'] * 1e3:g}",
        f"--pieTupdate={p['t_update'] * 1e3:g}",
        f"--pieA={p['alpha']:g}",
        f"--pieB={p['beta']:g}",
        f"--pieMaxBurst={p['max_burst'] * 1e3:g}",
        "--pieDqRate=0",
        f"--pieCapDrop={int(p['cap_drop_adjustment'])}",
        f"--pieDerandomize={int(p['derandomize'])}",
    ]


def run_ours(toml: Path, workdir: Path, seed: int) -> dict:
    out = workdir / "ours" / f"{toml.stem}.seed{seed}"
    cmd = [str(ROOT / ".venv" / "bin" / "aqmlab"), "run", str(toml), "--out", str(out), "--quiet"]
    res, wall, cpu = base.timed([*cmd, "--seed", str(seed)], cwd=ROOT)
    if res.returncode != 0:
        raise RuntimeError(
            f"aqmlab run {toml.name} failed ({res.returncode}): {res.stderr.strip()}"
        )
    s = json.loads((out / "summary.json").read_text())
    b = s["links"][0]
    fl = s["flows"]
    goodput = sum(f["goodput_bps"] for f in fl)
    return {
        "git": base.git_state(),
        "seed": seed,
        "delay_mean_s": b["delay_mean_s"],
        "delay_std_s": b["delay_std_s"],
        "queue_mean_pkts": b["queue_mean_pkts"],
        "utilisation": b["utilisation"],
        "loss_ratio": b["loss_ratio"],
        "arrived": b["arrived"],
        "dropped_aqm": b["dropped_aqm"],
        "dropped_overflow": b["dropped_overflow"],
        "aqm_stats": b["aqm_stats"],
        "jain": s["fairness"]["jain_goodput"],
        "goodput_total_bps": goodput,
        "dup_fraction": 1 - goodput / (b["throughput_bps"] * MSS / PKT),
        "timeouts": sum(f["timeouts"] for f in fl),
        "fast_recoveries": sum(f["fast_retransmits"] for f in fl),
        "retransmits": sum(f["retransmits"] for f in fl),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def run_ns3(exe: Path, inp: dict, variant: str, workdir: Path, name: str) -> dict:
    d = workdir / "ns3" / f"{name}.{variant}.seed{inp['seed']}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "delays.txt").write_text("\n".join(f"{x:.6f}" for x in inp["delays_ms"]) + "\n")
    (d / "starts.txt").write_text("\n".join(f"{x:.9f}" for x in inp["starts_s"]) + "\n")
    cmd = [
        str(exe),
        f"--flows={inp['flows']}",
        f"--aqm={inp['aqm']}",
        f"--buffer={inp['buffer']}",
        f"--delays={d / 'delays.txt'}",
        f"--starts={d / 'starts.txt'}",
        f"--duration={inp['duration']}",
        f"--warmup={inp['warmup']}",
        f"--seed={inp['seed']}",
        f"--meanPktSize={PKT}",
        *aqm_flags(inp, name),
        *VARIANTS[variant],
    ]
    res, wall, cpu = base.timed(cmd)
    if res.returncode != 0:
        raise RuntimeError(
            f"ns-3 {name} {variant} failed ({res.returncode}): {res.stderr.strip()[-2000:]}"
        )
    r = json.loads(res.stdout)
    if r["tx_pairing_errors"]:
        raise RuntimeError(f"ns-3 {name} {variant}: {r['tx_pairing_errors']} tx pairing errors")
    r["dup_fraction"] = 1 - r["goodput_total_bps"] / (r["throughput_bps"] * MSS / PKT)
    r["wall_s"], r["cpu_s"] = wall, cpu
    r["seed"] = inp["seed"]
    r["command"] = " ".join(cmd[1:]).replace(str(workdir), "$WORK")
    return r


# ---------------------------------------------------------------------------------------------
# Report


def case_order(name: str) -> tuple:
    aqm, _, n = name.split("-")
    return (aqm != "codel", int(n[1:]))


def spread(xs: list[float], fmt) -> str:
    """mean [min, max] of a list."""
    return f"{fmt(sum(xs) / len(xs))} [{fmt(min(xs))}, {fmt(max(xs))}]"


def report(results: dict, meta: dict) -> str:
    names = sorted(results, key=case_order)
    parts = [HEADER.format(**meta)]

    # Main table: one row per (case, ns-3 variant), seed 1 on both sides.
    rows = []
    for n in names:
        r = results[n]
        o = r["ours"]["1"]
        for v in VARIANTS:
            s = r["ns3"].get(v, {}).get("1")
            if s is None:
                continue
            rows.append(
                [
                    str(r["inputs"]["flows"]),
                    r["inputs"]["aqm"].replace("codel", "CoDel").replace("pie", "PIE"),
                    v.split("-")[1],
                    ms(s["sojourn_mean_s"]),
                    ms(s["to_tx_mean_s"]),
                    ms(o["delay_mean_s"]),
                    f"{s['queue_mean_pkts']:.1f}",
                    f"{o['queue_mean_pkts']:.1f}",
                    f3(s["utilisation"]),
                    f3(o["utilisation"]),
                    pct(s["loss_ratio"]),
                    pct(o["loss_ratio"]),
                ]
            )
    parts.append(
        base.table(
            rows,
            [
                "flows",
                "AQM",
                "ns-3 SACK",
                "delay ms ns-3 (sojourn)",
                "delay ms ns-3 (to tx start)",
                "delay ms aqmlab",
                "queue ns-3",
                "queue aqmlab",
                "util ns-3",
                "util aqmlab",
                "loss ns-3",
                "loss aqmlab",
            ],
        )
    )

    # Diagnostics.
    rows = []
    for n in names:
        r = results[n]
        o = r["ours"]["1"]
        st = o["aqm_stats"]
        codel = r["inputs"]["aqm"] == "codel"
        aq_drops = f"{o['dropped_aqm']} + {o['dropped_overflow']}"
        aq_states = f"{st['drop_states']:.0f}" if codel else ""
        rows.append(
            [
                n,
                "aqmlab",
                ms(o["delay_std_s"]),
                aq_drops,
                aq_states,
                "",
                "",
                f3(o["jain"]),
                pct(o["dup_fraction"]),
                str(o["fast_recoveries"]),
                str(o["timeouts"]),
                str(o["retransmits"]),
            ]
        )
        for v in VARIANTS:
            s = r["ns3"].get(v, {}).get("1")
            if s is None:
                continue
            rows.append(
                [
                    n,
                    f"ns-3 {v}",
                    ms(s["sojourn_std_s"]),
                    f"{s['dropped_early']} + {s['dropped_overflow']}",
                    f"{s['codel_drop_states']}" if codel else "",
                    pct(s["codel_dropping_fraction"]) if codel else "",
                    ms(s["sojourn_dropped_mean_s"]) if codel and s["sojourn_dropped_n"] else "",
                    f3(s["jain"]),
                    pct(s["dup_fraction"]),
                    str(s["fast_recoveries"]),
                    str(s["timeouts"]),
                    str(s["retransmits"]),
                ]
            )
    parts.append(DIAG_HEAD)
    parts.append(
        base.table(
            rows,
            [
                "case",
                "side",
                "delay std ms",
                "drops AQM + overflow",
                "CoDel drop states",
                "CoDel time dropping",
                "CoDel head-dropped sojourn ms",
                "Jain",
                "dup",
                "FR",
                "RTO",
                "retx",
            ],
        )
    )

    # Spread over seeds (start times and, for PIE, the drop RNG).
    rows = []
    for n in names:
        r = results[n]
        runs = [("aqmlab", r["ours"])] + [(f"ns-3 {v}", r["ns3"].get(v, {})) for v in VARIANTS]
        for side, by_seed in runs:
            if len(by_seed) < 2:
                continue
            seeds = sorted(by_seed, key=int)
            vals = [by_seed[k] for k in seeds]
            if side == "aqmlab":
                delays = [spread([x["delay_mean_s"] for x in vals], ms), ""]
            else:
                delays = [
                    spread([x["sojourn_mean_s"] for x in vals], ms),
                    spread([x["to_tx_mean_s"] for x in vals], ms),
                ]
            rows.append(
                [
                    n,
                    side,
                    ", ".join(seeds),
                    *delays,
                    spread([x["queue_mean_pkts"] for x in vals], lambda x: f"{x:.1f}"),
                    spread([x["utilisation"] for x in vals], f3),
                    spread([x["loss_ratio"] for x in vals], pct),
                ]
            )
    if rows:
        parts.append(SEEDS_HEAD)
        parts.append(
            base.table(
                rows,
                [
                    "case",
                    "side",
                    "seeds",
                    "delay ms (ns-3: sojourn)",
                    "ns-3 delay ms to tx start",
                    "queue",
                    "util",
                    "loss",
                ],
            )
        )
    parts.append(READING)
    return "\n".join(parts) + "\n"


HEADER = """## CoDel and PIE on the default dumbbell

The question: on aqmlab's default dumbbell (`python/aqmlab/data/default.toml`) with 50 flows,
aqmlab's CoDel (RFC 8289 defaults: target 5 ms, interval 100 ms) keeps a mean queueing delay of
about 14 ms, well above its target, and PIE (RFC 8033, target 15 ms) about 15 ms. Does ns-3's
CoDel give the same on the same network (then it is what CoDel does with many flows), or is it
aqmlab's CoDel? Generated by `scripts/crosscheck_ns3.py codel` on {date} ({host}; aqmlab at git
{git}; {ns3}). Rerun (~{minutes} min in all, ns-3 one run at a time):

    .venv/bin/python scripts/crosscheck_ns3.py codel       # aqmlab seeds 1-5, ns-3 seed 1
    .venv/bin/python scripts/crosscheck_ns3.py codel --ns3-seeds 1 2 3 --variants sack-on

**Networks** (`scenarios/crosscheck/{{codel,pie}}-het-n{{5,20,50}}.toml`): the default scenario's
dumbbell with 5, 20 and 50 NewReno bulk flows: bottleneck 100 Mb/s, 2 ms, buffer 300 packets (reverse
direction DropTail 300), access links 1 Gb/s with one-way delays 1, 3, ..., 19 ms cycled over the
flows (5 flows: 1-9 ms), both on the sender's and the receiver's side; flows start uniformly in the
first second (aqmlab's seed 1 draws the times, the script hands them to ns-3); 60 s, metrics over
[10, 60] s. TCP as in the cases above (segment 1460 B + 40 B, IW 10, min RTO 200 ms, no delayed ACKs;
ns-3: `TcpNewReno` with `TcpClassicRecovery`, timestamps off, SACK off and on, `DelAckCount` 1). The
AQM replaces RED on the bottleneck; every other queue is as in the tables above (device `TxQueue`
1 packet, so the queue disc holds the queue).

**ns-3 queue discs** (`scripts/ns3_dumbbell_aqm.cc`, a copy of `ns3_dumbbell.cc` with these added),
ns-3.44 attribute names:

- `CoDelQueueDisc`: `Target` 5 ms, `Interval` 100 ms, `MaxSize` 300p (default 1500000B), `MinBytes`
  1500 (the default; ns-3 does not drop while the queue left behind holds *fewer* than `MinBytes`
  bytes, aqmlab's `mtu` 1500 while it holds *at most* that: one packet of difference, irrelevant at
  these queue lengths), `UseEcn` false, `UseL4s` false, `CeThreshold` left off (default
  `Time::Max`). ns-3's CoDel is a port of Linux's: times in units of 1.024 us, the control law
  interval/sqrt(count) through Linux's Newton-step reciprocal square root, the RFC's dequeue loop
  (several head drops in one dequeue when due).
- `PieQueueDisc`: `QueueDelayReference` 15 ms, `Tupdate` 15 ms, `A` 0.125, `B` 1.25,
  `MaxBurstAllowance` 150 ms, `MaxSize` 300p (default 25p), `UseDequeueRateEstimator` false (the
  queue delay is the sojourn time of the last dequeued packet, 0 if that dequeue emptied the queue:
  aqmlab's default `estimator = "timestamp"`), `UseCapDropAdjustment` true, `UseDerandomization`
  false, `UseEcn` false, `ActiveThreshold` off (default), `MeanPktSize` 1500 (only used by a
  byte-limited queue; the packet-limited queue disc skips early drops while it holds <= 2 packets,
  aqmlab while it holds <= 2 x 1500 bytes).

**Measured in ns-3** over [10, 60] s: *delay (sojourn)* = mean time from enqueue to dequeue of the
queue disc (its `Dequeue` trace, now minus the item's enqueue timestamp) over the packets dequeued
in the window that the AQM did not drop after dequeue (CoDel's head drops fire `Dequeue` too and are
taken out again at their `DropAfterDequeue`); *delay (to tx start)* = queue-disc enqueue to the start
of the packet's transmission on the bottleneck device (`PhyTxBegin`), i.e. the sojourn plus the wait
in the 1-packet device queue, which is aqmlab's definition (arrival to start of transmission,
packets starting in the window); *queue* = time-weighted mean of the queue disc's plus the device
queue's packets (waiting packets, the one in transmission excluded: aqmlab's convention); *util*,
*loss* as in the tables above (loss = queue-disc drops, AQM and overflow, / packets arriving at the
queue disc). aqmlab: `summary.json` `links[0]` (`delay_mean_s`, `queue_mean_pkts`, `utilisation`,
`loss_ratio`). aqmlab has no SACK: its numbers repeat on the SACK off / on rows.

### Results (seed 1 on both sides: the same start times)

"""

assert HEADER.startswith(TITLE + "\n")

DIAG_HEAD = """
### Diagnostics

"delay std" = standard deviation of the per-packet queueing delay (ns-3: of the sojourn). "drops" =
AQM drops (CoDel: head drops; PIE: random drops on arrival) + buffer overflows, in the window.
"CoDel drop states" = entries into the dropping state over the whole run (aqmlab: its
`aqm_stats.drop_states`); "time dropping" = share of [10, 60] s spent in the dropping state;
"head-dropped sojourn" = mean sojourn of the packets CoDel dropped. "dup" = share of the bottleneck's
payload the receivers did not need; FR / RTO / retx = entries into fast recovery, timeouts and
retransmitted segments over all flows and the whole run (as in the diagnostics above).

"""

SEEDS_HEAD = """
### Spread over seeds

Seed k draws different flow start times (and aqmlab's / ns-3's random numbers); for ns-3 the start
times of aqmlab's seed k are used and ns-3's run number is k. mean [min, max] over the seeds.

"""

READING = f"""
{MARKER}
### Reading

(to be written)
"""


def write_doc(doc: Path, text: str) -> None:
    """Replaces this script's section at the end of the doc (from its title up to its marker),
    keeping everything before it and the hand-written reading after the marker."""
    old = doc.read_text() if doc.exists() else ""
    if TITLE in old:
        head, rest = old.split(TITLE, 1)
        if MARKER in rest:
            kept = rest.split(MARKER, 1)[1]
            text = text.replace(READING, f"\n{MARKER}{kept.rstrip()}\n")
    else:
        head = old.rstrip() + "\n\n" if old else ""
    doc.write_text(head + text)


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", help="case names (file stems); default: all")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument(
        "--ours-seeds", nargs="*", type=int, default=[1, 2, 3, 4, 5], help="aqmlab seeds"
    )
    ap.add_argument(
        "--ns3-seeds",
        nargs="*",
        type=int,
        default=[1],
        help="ns-3 runs with the start times of these aqmlab seeds (1 = the scenario's)",
    )
    base.add_cache_options(ap, ROOT / "target" / "crosscheck-ns3-codel", DOC, "section")
    args = ap.parse_args(argv)

    cache, results = base.cached_results(args)
    tomls = sorted(
        [*SCEN_DIR.glob("codel-*.toml"), *SCEN_DIR.glob("pie-*.toml")],
        key=lambda p: case_order(p.stem),
    )
    if args.cases:
        tomls = [t for t in tomls if t.stem in args.cases]
        missing = set(args.cases) - {t.stem for t in tomls}
        if missing:
            sys.exit(f"unknown cases: {', '.join(sorted(missing))}")
    if 1 not in args.ours_seeds:
        sys.exit("--ours-seeds must include 1 (the scenario's seed, the one ns-3 is compared with)")

    def save() -> None:
        cache.write_text(json.dumps(results, indent=1, sort_keys=True))

    t_start = time.monotonic()
    if not args.report_only:
        exe = base.build(args.ns3_venv, args.workdir, "ns3_dumbbell_aqm")
        for t in tomls:
            r = results.setdefault(t.stem, {"ours": {}, "ns3": {}})
            inp = case_inputs(t)
            r["inputs"] = {k: v for k, v in inp.items() if k not in ("delays_ms", "starts_s")}
            if args.rerun_ours:
                r["ours"] = {}
            for seed in args.ours_seeds:
                if str(seed) not in r["ours"]:
                    log(f"aqmlab {t.stem} seed {seed}")
                    r["ours"][str(seed)] = run_ours(t, args.workdir, seed)
                    save()
        # ns-3: one run at a time (the machine is shared).
        for t in tomls:
            r = results[t.stem]
            for seed in args.ns3_seeds:
                inp = case_inputs(t, seed)
                for v in args.variants:
                    by_seed = r["ns3"].setdefault(v, {})
                    if str(seed) in by_seed:
                        continue
                    log(f"ns-3 {t.stem} {v} seed {seed}")
                    s = run_ns3(exe, inp, v, args.workdir, t.stem)
                    by_seed[str(seed)] = s
                    save()
                    log(
                        f"ns-3 {t.stem} {v} seed {seed}: sojourn {1e3 * s['sojourn_mean_s']:.2f} ms "
                        f"queue {s['queue_mean_pkts']:.1f} util {s['utilisation']:.3f} "
                        f"loss {s['loss_ratio']:.4f} wall {s['wall_s']:.0f} s"
                    )

    done = {k: v for k, v in results.items() if "1" in v.get("ours", {})}
    gits = sorted({o.get("git", "?") for r in done.values() for o in r["ours"].values()})
    wall = sum(
        x["wall_s"]
        for r in done.values()
        for x in [*r["ours"].values(), *(s for v in r["ns3"].values() for s in v.values())]
    )
    meta = {
        "ns3": f"ns-3.44, PyPI wheel ns3=={base.ns3_version(args.ns3_venv)}",
        "date": time.strftime("%Y-%m-%d"),
        "host": f"{platform.machine()}, {os.cpu_count()} cores",
        "git": "; ".join(gits),
        "minutes": max(1, math.ceil(wall / 60)),
    }
    write_doc(args.doc, report(done, meta))
    log(f"wrote {args.doc} ({time.monotonic() - t_start:.0f} s)")
