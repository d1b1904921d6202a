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
"""

from __future__ import annotations

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


def main(argv: list[str] | None = None) -> None:
    tcp.main(argv, cases_fn=matrix, markers=(BEGIN, END), label="bbr")
