"""Simulator vs testbed on the same scenario files (issue 11; table in docs/testbed.md). Root only.

    .venv/bin/python benches/fwd_vs_sim.py [--duration 30s] [--warmup 10s] [--out runs/fwd_vs_sim]

The ns-3 cross-check dumbbells (scenarios/crosscheck/{red,pie,codel}-het-n50.toml: 100 Mb/s / 2 ms
bottleneck, buffer 300, access delays 1-19 ms, so base RTTs 8-80 ms) with 10 and 50 flows, run
(a) in the simulator (NewReno, no SACK), (b) on the testbed with Linux ``reno`` and SACK off
(``newreno``: the closest kernel equivalent) and (c) on the testbed with Linux ``cubic`` (SACK on).
Prints a Markdown table of utilisation, mean queue, loss ratio, marks and Jain's index, and writes
every run directory under ``--out``.

``--bbr`` (issue 22): BBR v1 instead, on the FIFO and CoDel dumbbells with 10 flows
(``dt-het-n50.toml``, ``codel-het-n50.toml``): the simulator's ``cc = "bbr"`` with
``recovery = "rack"`` (RACK-TLP, the kernel's default) against the kernel's ``bbr`` (SACK on),
with each flow's goodput on both sides (same flow, same base RTT) and their ratio.

``--qdisc`` (issue 21): the same dumbbell (``codel-het-n50.toml``'s network) with ``fq_pie`` and
``dualpi2`` at their defaults, 10 and 50 flows, the simulator against the testbed, each with NewReno
(the simulator's, without SACK; Linux ``reno`` with SACK off) and with CUBIC (the simulator's
``variant = "cubic"``, with SACK; Linux ``cubic``). No ECN: the kernel has no scalable sender
(no dctcp, no prague), so DualPI2 is exercised on its classic queue (p_C = p'^2 drops). Prints the
per-flow goodputs (flows in order of base RTT) of each pair and their agreement. With ``--delack``
too, the simulator's runs only, with delayed ACKs (``tcp.delack = true``, as Linux's receivers):
the rows that explain the 50-flow FQ-PIE queue difference (docs/testbed.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tomllib
from pathlib import Path

import aqmlab
from aqmlab import testbed
from aqmlab.scenario import schema as scenario

ROOT = Path(__file__).resolve().parents[1]


#: ``--qdisc``: the queue disciplines compared, each on codel-het-n50.toml's network.
QDISCS = ("fq_pie", "dualpi2")


def _scenario(aqm: str, n: int, duration: str, warmup: str, **tcp) -> scenario.Scenario:
    base = "codel" if aqm in QDISCS else aqm
    d = tomllib.loads((ROOT / "scenarios" / "crosscheck" / f"{base}-het-n50.toml").read_text())
    if aqm in QDISCS:
        d["aqm"] = {"name": aqm}  # its defaults (limit: the link's 300-packet buffer)
    d["name"] = f"{aqm}-het-n{n}"
    d["duration"], d["warmup"] = duration, warmup
    d["flows"][0]["count"] = n
    d["tcp"].update(tcp)
    return scenario.from_dict(d)


def _bbr(out: Path, duration: str, warmup: str) -> list[dict]:
    """The simulator's BBR v1 against the kernel's bbr, 10 flows, FIFO and CoDel."""
    rows = []
    for aqm in ("dt", "codel"):
        sim_sc = _scenario(aqm, 10, duration, warmup, variant="sack", cc="bbr", recovery="rack")
        tb_sc = _scenario(aqm, 10, duration, warmup, variant="sack")
        runs = {
            "sim bbr": lambda sc=sim_sc: aqmlab.run(sc, out=out / f"{sc.name}-sim-bbr"),
            "testbed bbr": lambda sc=tb_sc: testbed.testbed(
                sc, out=out / f"{sc.name}-tb-bbr", plot=False, cc="bbr"
            ),
        }
        got = {}
        for label, fn in runs.items():
            load = os.getloadavg()[0]
            res = fn()
            got[label] = [f["goodput_bps"] / 1e6 for f in res.summary["flows"]]
            r = dict(aqm=aqm, flows=10, engine=label, load1=load, **_row(res))
            r["per_flow_mbps"] = got[label]
            rows.append(r)
            print(json.dumps(r), flush=True)
        ratios = [a / b if b else float("inf") for a, b in zip(*got.values(), strict=True)]
        print(f"{aqm}: per-flow goodput sim / testbed: " + ", ".join(f"{x:.2f}" for x in ratios))
    return rows


def _qdiscs(out: Path, duration: str, warmup: str, delack: bool = False) -> list[dict]:
    """fq_pie and dualpi2: the simulator against the testbed, NewReno and CUBIC pairs
    (``delack``: the simulator alone, with delayed ACKs)."""
    rows = []
    for aqm in QDISCS:
        for n in (10, 50):
            for cc, tb_cc, tcp in (
                ("newreno", "newreno", {}),
                ("cubic", "cubic", {"variant": "cubic"}),
            ):
                if delack:
                    sc = _scenario(aqm, n, duration, warmup, delack=True, **tcp)
                    res = aqmlab.run(sc, out=out / f"{sc.name}-sim-{cc}-delack")
                    load = os.getloadavg()[0]
                    r = dict(aqm=aqm, flows=n, engine=f"sim {cc} + delack", load1=load)
                    rows.append({**r, **_row(res)})
                    print(json.dumps(rows[-1]), flush=True)
                    continue
                sc = _scenario(aqm, n, duration, warmup, **tcp)
                runs = {
                    f"sim {cc}": lambda sc=sc, cc=cc: aqmlab.run(
                        sc, out=out / f"{sc.name}-sim-{cc}"
                    ),
                    f"testbed {cc}": lambda sc=sc, cc=tb_cc: testbed.testbed(
                        sc, out=out / f"{sc.name}-tb-{cc}", plot=False, cc=cc
                    ),
                }
                got = {}
                for label, fn in runs.items():
                    load = os.getloadavg()[0]
                    res = fn()
                    got[label] = [f["goodput_bps"] / 1e6 for f in res.summary["flows"]]
                    r = dict(aqm=aqm, flows=n, engine=label, load1=load, **_row(res))
                    r["per_flow_mbps"] = got[label]
                    rows.append(r)
                    print(json.dumps(r), flush=True)
                sim, tb = got.values()
                print(f"{aqm} n={n} {cc}: {_per_flow_agreement(sim, tb)}", flush=True)
    return rows


def _per_flow_agreement(sim: list[float], tb: list[float]) -> str:
    """Per-flow goodput, testbed over simulator, each side first scaled to its own total (the
    testbed carries 1448 B of payload per 1514 B frame, the simulator 1460 per 1500): the median
    and range of the ratio, and the share of the shortest- and longest-RTT fifths of the flows."""
    ss, st = sum(sim), sum(tb)
    ratios = sorted((b / st) / (a / ss) for a, b in zip(sim, tb, strict=True) if a > 0)
    k = max(1, len(sim) // 5)
    order = range(len(sim))  # flows are in order of base RTT within each group of 10
    by_rtt = sorted(order, key=lambda i: i % 10)
    short, long_ = by_rtt[:k], by_rtt[-k:]

    def share(x: list[float], idx, tot: float) -> float:
        return sum(x[i] for i in idx) / tot

    return (
        f"per-flow share testbed/sim median {statistics.median(ratios):.2f} "
        f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f}); shortest-RTT fifth's share sim "
        f"{share(sim, short, ss):.3f} testbed {share(tb, short, st):.3f}; longest-RTT fifth "
        f"sim {share(sim, long_, ss):.3f} testbed {share(tb, long_, st):.3f}"
    )


def _row(res) -> dict:
    b = res.bottleneck
    return {
        "util": b["utilisation"],
        "queue": b["queue_mean_pkts"],
        "delay_ms": (b["delay_mean_s"] or float("nan")) * 1e3,
        "loss": b["loss_ratio"],
        "marks": b["marked"],
        "jain": res.summary["fairness"]["jain_goodput"],
        "goodput_mbps": sum(f["goodput_bps"] for f in res.summary["flows"]) / 1e6,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--warmup", default="10s")
    ap.add_argument("--out", default="runs/fwd_vs_sim")
    ap.add_argument("--bbr", action="store_true", help="BBR v1: simulator vs kernel bbr")
    ap.add_argument("--qdisc", action="store_true", help="fq_pie and dualpi2 (issue 21)")
    ap.add_argument(
        "--delack", action="store_true", help="with --qdisc: the simulator alone, delayed ACKs"
    )
    args = ap.parse_args()
    if os.geteuid() != 0 and not (args.qdisc and args.delack):  # --delack: simulator only
        print("fwd_vs_sim: needs root (the testbed)", file=sys.stderr)
        return 2
    out = Path(args.out)
    rows = _bbr(out, args.duration, args.warmup) if args.bbr else []
    if args.qdisc:
        rows = _qdiscs(out, args.duration, args.warmup, args.delack)
    for aqm in () if args.bbr or args.qdisc else ("red", "pie", "codel"):
        for n in (10, 50):
            sc = _scenario(aqm, n, args.duration, args.warmup)
            runs = {
                "sim newreno": lambda sc=sc: aqmlab.run(sc, out=out / f"{sc.name}-sim"),
                "testbed newreno": lambda sc=sc: testbed.testbed(
                    sc, out=out / f"{sc.name}-tb-newreno", plot=False, cc="newreno"
                ),
                "testbed cubic": lambda sc=sc: testbed.testbed(
                    sc, out=out / f"{sc.name}-tb-cubic", plot=False, cc="cubic"
                ),
            }
            for label, fn in runs.items():
                load = os.getloadavg()[0]
                r = dict(aqm=aqm, flows=n, engine=label, load1=load, **_row(fn()))
                rows.append(r)
                print(json.dumps(r), flush=True)
    print(
        "\n| AQM | flows | engine | util | mean queue (pkts) | queue delay (ms) | loss | "
        "marks | Jain | goodput (Mb/s) | load avg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['aqm']} | {r['flows']} | {r['engine']} | {r['util']:.3f} | {r['queue']:.1f} | "
            f"{r['delay_ms']:.2f} | {r['loss']:.4f} | {r['marks']} | {r['jain']:.3f} | "
            f"{r['goodput_mbps']:.1f} | {r['load1']:.1f} |"
        )
    (out / "table.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
