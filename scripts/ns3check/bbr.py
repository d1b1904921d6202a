#!/usr/bin/env python3
"""Cross-checks aqmlab's BBR v1 (crates/sim/src/tcp/cc/bbr.rs) against ns-3.44's TcpBbr
(docs/crosscheck-ns3.md, section "BBR v1").

The cases: bulk BBR flows (10 and 100) on tcp.py's dumbbell (100 Mb/s, 2 ms one way, buffer 300
packets, access delays 1-19 ms: base RTT 8-80 ms) through a FIFO and through FQ-CoDel. Both
sides pace and run BBR's own window over SACK recovery (aqmlab ``variant = "sack"``,
``cc = "bbr"``; ns-3 TcpBbr with PRR, which TcpBbr's CongControl overrides), with timestamps,
delayed ACKs (2 segments, 200 ms) and min RTO 1 s as tcp.py's ``default`` case. Everything else
(the runs, the cache, the tables) is tcp.py's.

    .venv/bin/python scripts/crosscheck_ns3.py bbr --jobs 2 --write-doc

aqmlab's side with ns-3.44's model choices (``cc = "bbr-ns3"``, or some of them,
``"bbr-ns3:entry+exit"``; crates/sim/src/tcp/cc/bbr.rs ``Ns3Model``) is a tagged run set:

    .venv/bin/python scripts/crosscheck_ns3.py bbr --cases bbr-fifo-n10 \
        --aqmlab-tcp 'cc="bbr-ns3"' --tag ns3

A tagged run without ``--ns3-args`` takes ns-3's side from the untagged run of the same case
and seed when that is cached (ns-3's side does not depend on aqmlab's overrides), so each
departure costs aqmlab runs only.

``--spread N`` runs aqmlab's side alone over seeds 1..N (no ns-3) and prints each case's mean and
standard error per metric: how far a 3-seed mean moves from seed to seed (the goodput under
heavy loss varies by several Mb/s per seed).

    .venv/bin/python scripts/crosscheck_ns3.py bbr --spread 20 --cases bbr-fifo-n10 \
        --aqmlab-tcp 'cc="bbr-ns3"' --tag ns3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tomllib
from pathlib import Path

from ns3check import tcp

BEGIN, END = "<!-- bbr-matrix:begin -->", "<!-- bbr-matrix:end -->"


def matrix(quick: bool, duration: float, warmup: float) -> dict[str, dict]:
    """BBR x {FIFO, FQ-CoDel} x {10, 100} flows (``quick``: 10 flows only)."""
    out = {}
    for n in [10] if quick else [10, 100]:
        for aqm in ("fifo", "fq_codel"):
            c = tcp.dumbbell("bbr", aqm, n, duration, warmup)
            out[c["name"]] = c
    return out


def reuse_ns3(tag: str) -> None:
    """ns-3's side of a run tagged ``tag`` from the untagged run's cache when there is one."""
    run_ns3 = tcp.run_ns3

    def run(exe: Path, cfg: dict, sc: dict, d: Path, extra: list[str]) -> dict:
        cached = d.parent.parent / "runs" / f"{d.name.removesuffix('.' + tag)}.json"
        if cached.exists():
            tcp.log(f"{d.name}: ns-3's side from {cached.name}")
            return json.loads(cached.read_text())["ns3"]
        return run_ns3(exe, cfg, sc, d, extra)

    tcp.run_ns3 = run


def spread(n: int, a: argparse.Namespace) -> None:
    """aqmlab's side alone over seeds 1..n: each case's mean and standard error per metric."""
    work = tcp.ROOT / "target" / "crosscheck-ns3-bbr" / "spread"
    for name in a.cases or ["bbr-fifo-n10"]:
        _, aqm, flows = name.split("-")
        rows = []
        for seed in range(1, n + 1):
            sc = tcp.dumbbell("bbr", aqm, int(flows[1:]), a.duration, a.warmup)
            sc["seed"] = seed
            for kv in a.aqmlab_tcp:
                k, v = kv.split("=", 1)
                sc["tcp"][k] = tomllib.loads(f"v = {v}")["v"]
            key = f"{name}.seed{seed}" + (f".{a.tag}" if a.tag else "")
            toml = work / f"{key}.toml"
            toml.parent.mkdir(parents=True, exist_ok=True)
            toml.write_text(tcp.dumps(sc))
            o = tcp.run_ours(toml, work / key)
            link = o["links"][0]
            rows.append(
                {
                    "goodput Mb/s": sum(o["goodput_bps"]) / 1e6,
                    "queue pkts": link["queue_mean_pkts"],
                    "loss %": 100 * link["loss_ratio"],
                    "util": link["utilisation"],
                    "timeouts": o["timeouts"],
                }
            )
        cells = []
        for k in rows[0]:
            v = [r[k] for r in rows]
            se = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
            cells.append(f"{k} {statistics.fmean(v):.2f} +- {se:.2f} (sd {se * len(v) ** 0.5:.2f})")
        print(f"{name} {a.tag or 'linux'} seeds 1-{n}: " + "; ".join(cells))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--tag", default="")
    ap.add_argument("--ns3-args", action="append", default=[])
    ap.add_argument("--spread", type=int, default=0)
    ap.add_argument("--cases", nargs="*")
    ap.add_argument("--aqmlab-tcp", action="append", default=[])
    ap.add_argument("--duration", type=float, default=15.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    known, _ = ap.parse_known_args(argv)
    if known.spread:
        spread(known.spread, known)
        return
    if known.tag and not known.ns3_args:
        reuse_ns3(known.tag)
    tcp.main(argv, cases_fn=matrix, markers=(BEGIN, END), label="bbr")
