#!/usr/bin/env python3
"""Runs a fixed set of short scenarios and writes each summary.json (canonical JSON) to a folder,
so that two builds can be compared byte for byte after a refactor (issue 21: the queue-discipline
layer must leave every result as it was).

    .venv/bin/python scripts/refactor_identity.py OUTDIR            # run with this build
    diff -r OUTDIR_BEFORE OUTDIR_AFTER                               # identical, or what changed

The set covers every way a queue is built: lazy FIFO (DropTail, RED, RED byte mode, dropfn), a
real queue (PIE, CoDel, ModRED with throttling), FQ-CoDel, ECN marking (RED and CoDel), several
bottlenecks (parking lot) and open-loop traffic.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from aqmlab.running import runner  # noqa: E402
from aqmlab.scenario import schema as scenario  # noqa: E402

BASE = {
    "duration": "4s",
    "warmup": "1s",
    "seed": 3,
    "topology": {"rate": "10Mbps", "delay": "5ms", "buffer": 60, "access_delay": ["2ms", "8ms"]},
    "flows": [{"count": 6, "start_spread": "0.5s"}],
}
ECN_TCP = {"ecn": True}
CASES = {
    "droptail": {},
    "red": {"aqm": {"name": "red", "min_th": 5, "max_th": 15}},
    "red-byte": {"aqm": {"name": "red", "min_th": 5, "max_th": 15, "mode": "byte"}},
    "red-ecn": {"aqm": {"name": "red", "min_th": 5, "max_th": 15, "ecn": True}, "tcp": ECN_TCP},
    "pie": {"aqm": {"name": "pie"}},
    "codel": {"aqm": {"name": "codel"}},
    "codel-ecn": {"aqm": {"name": "codel", "ecn": True}, "tcp": ECN_TCP},
    "fq_codel": {"aqm": {"name": "fq_codel"}},
    "fq_codel-ecn": {"aqm": {"name": "fq_codel"}, "tcp": ECN_TCP},
    "fq_codel-noecn-small": {
        "aqm": {"name": "fq_codel", "ecn": False, "flows": 4, "quantum": "300B"},
        "flows": [{"count": 12, "start_spread": "0.5s"}],
    },
    "fq_codel-per-flow-mtu": {
        "aqm": {"name": "fq_codel", "mtu_per_flow": True, "target": "2ms", "interval": "40ms"},
        "flows": [{"count": 30, "start_spread": "0.5s"}],
        "topology": {
            "rate": "10Mbps",
            "delay": "5ms",
            "buffer": 40,
            "access_delay": ["2ms", "8ms"],
        },
    },
    "modred-throttle": {"aqm": {"name": "modred", "throttle": "always"}},
    "dropfn": {"aqm": {"name": "dropfn", "table": [0.0, 0.01, 0.05, 0.2]}},
    "poisson-pie": {"aqm": {"name": "pie"}, "flows": [{"type": "poisson", "load": 1.2}]},
    "parking-lot-red": {
        "topology": {
            "type": "parking-lot",
            "hops": 3,
            "rate": "10Mbps",
            "delay": "5ms",
            "buffer": 60,
        },
        "aqm": {"name": "red", "min_th": 5, "max_th": 15},
        "flows": [{"count": 3}, {"count": 2, "src": "cross2.src", "dst": "cross2.dst"}],
    },
}


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if k not in ("wall_s", "cpu_s", "version")}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path, help="folder for <case>.json (made if missing)")
    out = ap.parse_args().outdir
    out.mkdir(parents=True, exist_ok=True)
    for name, over in CASES.items():
        doc = {**BASE, **over, "name": name}
        s = runner.run(scenario.from_dict(doc)).summary
        text = json.dumps(_clean(s), sort_keys=True, indent=1)
        (out / f"{name}.json").write_text(text + "\n")
        print(name, len(text))


if __name__ == "__main__":
    main()
