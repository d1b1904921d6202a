#!/usr/bin/env python3
"""Cross-checks aqmlab's simulator against ns-3 on the same dumbbell networks.

For every scenario in ``scenarios/crosscheck/*.toml`` this runs

* aqmlab: ``aqmlab run CASE.toml`` (the project's ``.venv``), and
* ns-3 3.44: ``scripts/ns3_dumbbell.cc`` compiled against the headers and libraries that the ``ns3``
  wheel from PyPI ships, installed in its own venv (default ``/work/ns3venv``; create it with
  ``python3 -m venv /work/ns3venv && /work/ns3venv/bin/pip install ns3==3.44.post0``),

with the same access delays and flow start times (taken from aqmlab's own network description of the
scenario), and writes the comparison to ``target/crosscheck-ns3/report.md`` (``--doc``). The tables
it produced on 2026-11-22 are kept, superseded, in ``docs/crosscheck-ns3.md``; the current
cross-check is ``scripts/crosscheck_ns3.py tcp``.

ns-3 runs twice per case by default: with SACK off (the configuration asked for: NewReno without SACK,
as aqmlab models it) and with SACK on (everything else equal), because ns-3's loss recovery without
SACK behaves very differently (see the doc).

Usage (from the repository root, with the project's venv):

    .venv/bin/python scripts/crosscheck_ns3.py dumbbell                 # all cases, both ns-3 variants
    .venv/bin/python scripts/crosscheck_ns3.py dumbbell --cases dt-eq-n10 red-het-n50 --variants sack-off
    .venv/bin/python scripts/crosscheck_ns3.py dumbbell --report-only   # rewrite the doc from the saved JSON

Results are cached per run in ``--workdir`` (default ``target/crosscheck-ns3``), so an interrupted run
resumes; ``--fresh`` reruns everything.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import sys
import time
from pathlib import Path

from ns3check.common import (
    MSS,
    PKT,
    ROOT,
    VARIANTS,
    add_cache_options,
    build,
    cached_results,
    f3,
    git_state,
    kpps,
    log,
    ns3_version,
    pct,
    table,
    timed,
)

SCEN_DIR = ROOT / "scenarios" / "crosscheck"
DOC = ROOT / "target" / "crosscheck-ns3" / "report.md"  # docs/crosscheck-ns3.md: superseded


# ---------------------------------------------------------------------------------------------
# ns-3 build


# ---------------------------------------------------------------------------------------------
# One case


def case_inputs(toml: Path) -> dict:
    """The network as aqmlab builds it: per-flow access delays and start times, buffer, AQM."""
    from aqmlab.scenario import schema as scenario

    sc = scenario.load(toml)
    cfg = scenario.build_config(sc)
    links = cfg["links"]
    delays, starts = [], []
    for f in cfg["flows"]:
        up, bott, down = f["path"]
        assert links[bott]["name"] == "bottleneck"
        d_up, d_down = links[up]["delay_ns"], links[down]["delay_ns"]
        assert d_up == d_down, "ns3_dumbbell.cc gives sender and receiver the same access delay"
        delays.append(d_up / 1e6)
        starts.append(f["start_ns"] / 1e9)
    b = links[0]
    assert b["rate_bps"] == 100_000_000 and b["delay_ns"] == 2_000_000
    aqm = sc.aqm["name"]
    if aqm not in ("droptail", "red"):
        raise SystemExit(f"{toml.name}: ns3_dumbbell.cc knows droptail and red, not {aqm}")
    return {
        "flows": len(cfg["flows"]),
        "aqm": aqm,
        "aqm_params": {k: v for k, v in sc.aqm.items() if k != "name"},
        "buffer": b["buffer_pkts"],
        "duration": cfg["duration_ns"] / 1e9,
        "warmup": cfg["warmup_ns"] / 1e9,
        "seed": cfg["seed"],
        "delays_ms": delays,
        "starts_s": starts,
    }


def run_ours(toml: Path, workdir: Path) -> dict:
    out = workdir / "ours" / toml.stem
    res, wall, cpu = timed(
        [str(ROOT / ".venv" / "bin" / "aqmlab"), "run", str(toml), "--out", str(out), "--quiet"],
        cwd=ROOT,
    )
    if res.returncode != 0:
        raise RuntimeError(
            f"aqmlab run {toml.name} failed ({res.returncode}): {res.stderr.strip()}"
        )
    s = json.loads((out / "summary.json").read_text())
    run = json.loads((out / "run.json").read_text())
    b = s["links"][0]
    fl = s["flows"]
    goodput = sum(f["goodput_bps"] for f in fl)
    dur, warm = s["run"]["duration_s"], s["run"]["warmup_s"]
    # aqmlab counts bottleneck arrivals in the window only; scale to the whole run for the speed figure.
    arrivals_run = b["arrived"] * dur / (dur - warm)
    return {
        "git": git_state(),
        "utilisation": b["utilisation"],
        "throughput_bps": b["throughput_bps"],
        "queue_mean_pkts": b["queue_mean_pkts"],
        "loss_ratio": b["loss_ratio"],
        "arrived": b["arrived"],
        "dropped": b["dropped_aqm"] + b["dropped_overflow"],
        "dropped_aqm": b["dropped_aqm"],
        "dropped_overflow": b["dropped_overflow"],
        "jain": s["fairness"]["jain_goodput"],
        "goodput_total_bps": goodput,
        "dup_fraction": 1 - goodput / (b["throughput_bps"] * MSS / PKT),
        "timeouts": sum(f["timeouts"] for f in fl),
        "fast_recoveries": sum(f["fast_retransmits"] for f in fl),
        "retransmits": sum(f["retransmits"] for f in fl),
        "wall_s": wall,
        "cpu_s": cpu,
        "sim_wall_s": run["wall_s"],
        "pkts_per_wall_s": arrivals_run / wall,
        "pkts_per_sim_wall_s": arrivals_run / run["wall_s"],
        "pkts_per_cpu_s": arrivals_run / cpu,
    }


def run_ns3(exe: Path, inp: dict, variant: str, workdir: Path, name: str) -> dict:
    d = workdir / "ns3" / f"{name}.{variant}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "delays.txt").write_text("\n".join(f"{x:.6f}" for x in inp["delays_ms"]) + "\n")
    (d / "starts.txt").write_text("\n".join(f"{x:.9f}" for x in inp["starts_s"]) + "\n")
    p = inp["aqm_params"]
    if inp["aqm"] == "red":
        if p.get("gentle", False) or p.get("mode", "packet") != "packet" or p.get("ecn", False):
            raise SystemExit(f"{name}: the ns-3 side runs RED with gentle off, packet mode, no ECN")
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
        f"--minTh={p.get('min_th', 5)}",
        f"--maxTh={p.get('max_th', 15)}",
        f"--maxP={p.get('max_p', 0.1)}",
        f"--wQ={p.get('w_q', 0.002)}",
        f"--meanPktSize={PKT}",
        *VARIANTS[variant],
    ]
    res, wall, cpu = timed(cmd)
    if res.returncode != 0:
        raise RuntimeError(
            f"ns-3 {name} {variant} failed ({res.returncode}): {res.stderr.strip()[-2000:]}"
        )
    r = json.loads(res.stdout)
    r["dup_fraction"] = 1 - r["goodput_total_bps"] / (r["throughput_bps"] * MSS / PKT)
    r["wall_s"], r["cpu_s"] = wall, cpu
    r["pkts_per_wall_s"] = r["bottleneck_arrivals_total"] / wall
    r["pkts_per_sim_wall_s"] = r["bottleneck_arrivals_total"] / r["wall_run_s"]
    r["pkts_per_cpu_s"] = r["bottleneck_arrivals_total"] / cpu
    r["command"] = " ".join(cmd[1:]).replace(str(workdir), "$WORK")
    return r


# ---------------------------------------------------------------------------------------------
# Report


def case_order(name: str) -> tuple:
    aqm, delays, n = name.split("-")
    return (aqm != "dt", delays != "eq", int(n[1:]))


def report(results: dict, meta: dict) -> str:
    names = sorted(results, key=case_order)
    variants = [v for v in VARIANTS if any(v in results[n]["ns3"] for n in names)]
    parts = [HEADER.format(**meta)]
    for v in variants:
        rows = []
        for n in names:
            o, s = results[n]["ours"], results[n]["ns3"].get(v)
            if s is None:
                continue
            rows.append(
                [
                    n,
                    f3(o["utilisation"]),
                    f3(s["utilisation"]),
                    f"{o['queue_mean_pkts']:.1f}",
                    f"{s['queue_mean_pkts']:.1f}",
                    pct(o["loss_ratio"]),
                    pct(s["loss_ratio"]),
                    f3(o["jain"]),
                    f3(s["jain"]),
                    f"{o['wall_s']:.1f}",
                    f"{s['wall_s']:.1f}",
                    kpps(o["pkts_per_wall_s"]),
                    kpps(s["pkts_per_wall_s"]),
                ]
            )
        parts.append(f"\n### ns-3 with TCP SACK {'off' if v == 'sack-off' else 'on'} ({v})\n")
        parts.append(VARIANT_NOTE[v])
        parts.append(
            table(
                rows,
                [
                    "case",
                    "util ours",
                    "util ns-3",
                    "queue ours",
                    "queue ns-3",
                    "loss ours",
                    "loss ns-3",
                    "Jain ours",
                    "Jain ns-3",
                    "wall s ours",
                    "wall s ns-3",
                    "bottl. pkt/wall-s ours",
                    "bottl. pkt/wall-s ns-3",
                ],
            )
        )
    # Diagnostics.
    rows = []
    for n in names:
        o = results[n]["ours"]
        row = [
            n,
            pct(o["dup_fraction"]),
            str(o["fast_recoveries"]),
            str(o["timeouts"]),
            str(o["retransmits"]),
        ]
        for v in variants:
            s = results[n]["ns3"].get(v)
            row += (
                [
                    pct(s["dup_fraction"]),
                    str(s["fast_recoveries"]),
                    str(s["timeouts"]),
                    str(s["retransmits"]),
                ]
                if s
                else ["", "", "", ""]
            )
        row += [f"{o['queue_mean_pkts']:.1f}"]
        for v in variants:
            s = results[n]["ns3"].get(v)
            row += [f"{s['qdisc_mean_pkts']:.1f} + {s['devq_mean_pkts']:.2f}" if s else ""]
        rows.append(row)
    head = ["case", "dup ours", "FR ours", "RTO ours", "retx ours"]
    for v in variants:
        head += [f"dup {v}", f"FR {v}", f"RTO {v}", f"retx {v}"]
    head += ["queue ours"] + [f"qdisc + devq {v}" for v in variants]
    parts.append(DIAG_HEAD)
    parts.append(table(rows, head))
    # Speed.
    rows = []
    for n in names:
        o = results[n]["ours"]
        row = [
            n,
            f"{o['sim_wall_s']:.2f}",
            f"{o['cpu_s']:.1f}",
            kpps(o["pkts_per_sim_wall_s"]),
            kpps(o["pkts_per_cpu_s"]),
        ]
        for v in variants:
            s = results[n]["ns3"].get(v)
            row += (
                [
                    f"{s['wall_run_s']:.1f}",
                    f"{s['cpu_s']:.1f}",
                    kpps(s["pkts_per_sim_wall_s"]),
                    kpps(s["pkts_per_cpu_s"]),
                ]
                if s
                else ["", "", "", ""]
            )
        rows.append(row)
    head = [
        "case",
        "ours: sim loop wall s",
        "ours: process CPU s",
        "ours: pkt/s (loop)",
        "ours: pkt/CPU-s",
    ]
    for v in variants:
        head += [
            f"ns-3 {v}: Run() wall s",
            f"ns-3 {v}: CPU s",
            f"ns-3 {v}: pkt/s (Run)",
            f"ns-3 {v}: pkt/CPU-s",
        ]
    parts.append(SPEED_HEAD)
    parts.append(table(rows, head))
    parts.append(DISCUSSION)
    return "\n".join(parts) + "\n"


HEADER = """# Cross-check: aqmlab's simulator against ns-3

An independent check of aqmlab's packet simulator against ns-3 ({ns3}) on the same dumbbell networks.
Generated by `scripts/crosscheck_ns3.py dumbbell` on {date} ({host}; aqmlab at git {git}). Rerun:

    python3 -m venv /work/ns3venv && /work/ns3venv/bin/pip install ns3==3.44.post0
    .venv/bin/python scripts/crosscheck_ns3.py dumbbell            # ~{minutes} min of runs, one at a time, on this machine

## The networks (identical on both sides)

Cases `scenarios/crosscheck/{{dt,red}}-{{eq,het}}-n{{10,50,100}}.toml`: N = 10, 50, 100 NewReno bulk flows,
each with its own sender and receiver host; access links 1 Gb/s with one-way delay d_i on both the
sender's and the receiver's link (`eq`: all 10 ms, base RTT 44 ms; `het`: 1, 3, ..., 19 ms cycled over
the hosts, base RTT 8-80 ms); bottleneck 100 Mb/s, 2 ms one way, in both directions; bottleneck queue
DropTail 300 packets (`dt`) or RED (`red`: min_th 50, max_th 150, max_p 0.1, w_q 0.002, gentle off,
packet mode, buffer 300); reverse bottleneck DropTail 300 packets; 60 s runs, metrics over [10, 60] s;
flows start at the same times on both sides (uniform in the first second; aqmlab's seed 1 draws them and
the script hands them to ns-3), TCP segment 1460 B + 40 B of headers, initial cwnd 10, min RTO 200 ms,
no delayed ACKs, 4 MB receive buffers.

ns-3 side (`scripts/ns3_dumbbell.cc`, compiled against the headers and libraries shipped in the `ns3`
wheel, run as a subprocess; the wheel's Python bindings are not used):

- `TcpNewReno` with `TcpClassicRecovery` (ns-3.44's defaults are `TcpCubic` and PRR), `Sack` off
  (the main table; a second table has it on), `Timestamp` **off** (ns-3's default is on: off keeps the
  data packets at 1500 B IP like aqmlab's; aqmlab takes an RTT sample from every new ACK as timestamps
  would, ns-3 without timestamps samples per RFC 6298 / Karn), `LimitedTransmit` off (aqmlab has none),
  `DelAckCount` 1, `SegmentSize` 1460, `InitialCwnd` 10, `MinRto` 200 ms, `ClockGranularity` 1 ms,
  `SndBufSize`/`RcvBufSize` 4 MB, `DataRetries` 1000 (ns-3 aborts a connection after 6 back-to-back
  RTOs otherwise), `ConnTimeout` 1 s; `BulkSendApplication` to a `PacketSink`. ns-3 opens each connection
  with a handshake (one RTT); aqmlab's flows send at their start time.
- Queues: every point-to-point device's own `TxQueue` is **1 packet**, so the traffic-control queue disc
  holds the queue: `RedQueueDisc` or `FifoQueueDisc` with `MaxSize` 300p on the bottleneck, `FifoQueueDisc`
  300p on the reverse bottleneck, `FifoQueueDisc` 10000p on every access device (aqmlab's access
  buffer), installed before addresses are assigned so no default FqCoDel is added.
- RED defaults of ns-3 overridden: `LInterm` 10 (= 1/max_p; default 50), `Gentle` false (default true),
  `Wait` false (default true: ns-2's "wait" spacing, which gives p = 0 while count * pb < 1 instead of
  Floyd-Jacobson's pb / (1 - count pb)), `MeanPktSize` 1500 (default 500; sets the idle-time decay),
  `LinkBandwidth` 100 Mb/s (default 1.5 Mb/s; also the idle-time decay), `LinkDelay` 2 ms, `MinTh` 50,
  `MaxTh` 150, `QW` 0.002, `UseHardDrop` true (avg >= max_th drops, as aqmlab's forced drop), ECN off.

Measured in ns-3 over [10, 60] s: utilisation = bytes whose transmission on the bottleneck ended in the
window / (C T), counting the 2-byte PPP header ns-3 puts on the wire (so a full link is 1.000 on both
sides); mean queue = time integral of the queue disc's `PacketsInQueue` plus the device queue's
(the packets waiting, excluding the one in transmission: aqmlab's convention), integrated exactly from
their traces; loss = queue-disc drops / packets the queue disc received; goodput = `PacketSink` bytes
received in the window; Jain's index over the per-flow goodputs. aqmlab's numbers are its
`summary.json` (docs/metrics.md).

## Results

Wall-clock columns are whole-process times of one run (aqmlab: the `aqmlab run` command including Python
start-up and writing its outputs; ns-3: the compiled program). "bottl. pkt/wall-s" = data packets
arriving at the bottleneck over the whole 60 s, divided by that wall time (aqmlab reports arrivals in
the window only: scaled by 60/50). Runs were sequential unless the script was given `--jobs`.
"""

VARIANT_NOTE = {
    "sack-off": "The configuration asked for: NewReno without SACK on both sides.\n\n",
    "sack-on": (
        "Everything as above except ns-3's `TcpSocketBase::Sack` = true (RFC 6675 loss recovery "
        "in ns-3; aqmlab still without SACK).\n\n"
    ),
}

DIAG_HEAD = """
### Diagnostics

"dup" = share of the payload carried by the bottleneck in [10, 60] s that the receivers did not need
(duplicates): 1 - goodput / (throughput x 1460/1500). "FR" = entries into fast recovery, "RTO" =
retransmission timeouts (every expiry, backoffs included), "retx" = retransmitted data segments, each
summed over all flows for the whole run (ns-3: from each socket's `CongState`, `RTO` (a doubling of the
RTO is a timeout) and `Retransmission` traces). The last columns split ns-3's mean queue into the queue
disc and the 1-packet device queue. Columns marked sack-off / sack-on are ns-3's.

"""

SPEED_HEAD = """
### Speed

Simulation loop only (aqmlab: `run.json` `wall_s`; ns-3: wall time of `Simulator::Run()`), and the CPU
seconds of the whole process (robust to other load on the machine). Packets = data packets arriving at
the bottleneck over the 60 s.

"""

MARKER = "<!-- discussion: written by hand, kept when the script regenerates the tables -->"
DISCUSSION = f"""
{MARKER}
## Reading

(to be written)
"""


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", help="case names (file stems); default: all")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--jobs", type=int, default=1, help="ns-3 runs in parallel (timings suffer)")
    add_cache_options(ap, ROOT / "target" / "crosscheck-ns3", DOC, "doc")
    args = ap.parse_args(argv)

    cache, results = cached_results(args)
    # This script's cases are DropTail and RED; CoDel/PIE cases belong to `crosscheck_ns3.py codel`.
    tomls = sorted(
        (p for p in SCEN_DIR.glob("*.toml") if p.stem.startswith(("dt-", "red-"))),
        key=lambda p: case_order(p.stem),
    )
    if args.cases:
        tomls = [t for t in tomls if t.stem in args.cases]
        missing = set(args.cases) - {t.stem for t in tomls}
        if missing:
            sys.exit(f"unknown cases: {', '.join(sorted(missing))}")

    t_start = time.monotonic()
    if not args.report_only:
        exe = build(args.ns3_venv, args.workdir)

        def save() -> None:
            cache.write_text(json.dumps(results, indent=1, sort_keys=True))

        todo = []
        for t in tomls:
            r = results.setdefault(t.stem, {"ns3": {}})
            inp = case_inputs(t)
            r["inputs"] = {k: v for k, v in inp.items() if k not in ("delays_ms", "starts_s")}
            if args.rerun_ours:
                r.pop("ours", None)
            if "ours" not in r:
                log(f"aqmlab {t.stem}")
                r["ours"] = run_ours(t, args.workdir)
                save()
            for v in args.variants:
                if v not in r["ns3"]:
                    todo.append((t.stem, v, inp))
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = {}
            for name, v, inp in todo:
                log(f"ns-3 {name} {v} queued")
                futs[ex.submit(run_ns3, exe, inp, v, args.workdir, name)] = (name, v)
            for fut in cf.as_completed(futs):
                name, v = futs[fut]
                results[name]["ns3"][v] = fut.result()
                s = results[name]["ns3"][v]
                log(
                    f"ns-3 {name} {v}: util {s['utilisation']:.3f} loss {s['loss_ratio']:.4f} "
                    f"wall {s['wall_s']:.0f}s"
                )
                save()

    gits = sorted({r["ours"].get("git", "?") for r in results.values() if "ours" in r})
    git = "; ".join(gits)
    meta = {
        "ns3": f"ns-3.44, PyPI wheel ns3=={ns3_version(args.ns3_venv)}",
        "date": time.strftime("%Y-%m-%d"),
        "host": f"{platform.machine()}, {os.cpu_count()} cores",
        "git": git,
        "minutes": max(
            1,
            round(
                sum(
                    r["ours"]["wall_s"] + sum(s["wall_s"] for s in r["ns3"].values())
                    for r in results.values()
                )
                / 60
            ),
        ),
    }
    text = report({k: v for k, v in results.items() if "ours" in v}, meta)
    # The discussion below the marker is written by hand: keep it when the tables are regenerated.
    if args.doc.exists() and MARKER in args.doc.read_text():
        kept = args.doc.read_text().split(MARKER, 1)[1]
        text = text.replace(DISCUSSION, f"\n{MARKER}{kept.rstrip()}\n")
    args.doc.write_text(text)
    log(f"wrote {args.doc} ({time.monotonic() - t_start:.0f} s)")
