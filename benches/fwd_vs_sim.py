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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

import aqmlab
from aqmlab import testbed
from aqmlab.scenario import schema as scenario

ROOT = Path(__file__).resolve().parents[1]


def _scenario(aqm: str, n: int, duration: str, warmup: str, **tcp) -> scenario.Scenario:
    d = tomllib.loads((ROOT / "scenarios" / "crosscheck" / f"{aqm}-het-n50.toml").read_text())
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
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("fwd_vs_sim: needs root (the testbed)", file=sys.stderr)
        return 2
    out = Path(args.out)
    rows = _bbr(out, args.duration, args.warmup) if args.bbr else []
    for aqm in () if args.bbr else ("red", "pie", "codel"):
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
