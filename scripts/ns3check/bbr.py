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
"""

from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--tag", default="")
    ap.add_argument("--ns3-args", action="append", default=[])
    known, _ = ap.parse_known_args(argv)
    if known.tag and not known.ns3_args:
        reuse_ns3(known.tag)
    tcp.main(argv, cases_fn=matrix, markers=(BEGIN, END), label="bbr")
