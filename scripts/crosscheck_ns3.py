#!/usr/bin/env python3
"""aqmlab's simulator against ns-3.44 on the same networks: one tool, one subcommand per
cross-check (docs/crosscheck-ns3.md). Every one compiles ``scripts/ns3_dumbbell.cc`` against the
``ns3`` wheel (venv default ``/work/ns3venv``: ``python3 -m venv /work/ns3venv &&
/work/ns3venv/bin/pip install ns3==3.44.post0``) and caches its runs under ``target/``.

    .venv/bin/python scripts/crosscheck_ns3.py tcp --jobs 2 --write-doc   # the current matrix
    .venv/bin/python scripts/crosscheck_ns3.py bbr --jobs 2 --write-doc   # BBR v1 vs TcpBbr
    .venv/bin/python scripts/crosscheck_ns3.py transports --jobs 2  # DCTCP and LEDBAT (2026-11-25)
    .venv/bin/python scripts/crosscheck_ns3.py rttpair --jobs 1             # evaluate's RTT pair (2026-11-28)
    .venv/bin/python scripts/crosscheck_ns3.py codel                      # CoDel and PIE (2026-11-22)
    .venv/bin/python scripts/crosscheck_ns3.py dumbbell                   # DropTail and RED (2026-11-22)
    .venv/bin/python scripts/crosscheck_ns3.py tcp --help                 # a subcommand's options
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Subcommand -> (module under scripts/ns3check/, what it checks).
CHECKS = {
    "tcp": "ns-3's default TCP and CUBIC: TCP x AQM x flows, a parking lot, web traffic",
    "bbr": "BBR v1 against ns-3's TcpBbr: FIFO and FQ-CoDel, 10 and 100 flows",
    "transports": "DCTCP through RED as dctcp-example.cc marks, LEDBAT beside NewReno",
    "rttpair": "evaluate's RTT pair (s. 6.2): a 100 ms flow against 20-400 ms, CoDel, PIE, FIFO",
    "codel": "CoDel and PIE on the default dumbbell (superseded by tcp, kept runnable)",
    "dumbbell": "DropTail and RED on the dumbbells of 2026-11-22 (superseded by tcp, kept runnable)",
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in CHECKS:
        lines = "\n".join(f"  {name:9} {what}" for name, what in CHECKS.items())
        print(f"usage: crosscheck_ns3.py {{{','.join(CHECKS)}}} [options]\n\n{lines}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "python")]
    mod = importlib.import_module(f"ns3check.{argv[0]}")
    sys.argv[0] = f"crosscheck_ns3.py {argv[0]}"
    mod.main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
