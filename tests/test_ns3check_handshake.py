"""The cross-check's start times with and without aqmlab's handshake (docs/crosscheck-ns3.md
s. 3.2, 2026-11-29): ns-3 opens every connection with SYN / SYN-ACK, so by default its
application starts one base RTT before aqmlab's flow; with ``[tcp] handshake = true`` on aqmlab's
side both start together, and ``transports --handshake`` moves aqmlab's start to ns-3's. Figures
worked by hand from the dumbbell's delays (access 1, 3, ..., 19 ms one way; bottleneck 2 ms)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from ns3check import tcp, transports


def _cfg(handshake: bool) -> dict:
    """One flow over three links of 1, 2 and 1 ms one way (and back): base RTT 8 ms."""
    ms = 1_000_000
    delays = [1 * ms, 2 * ms, 1 * ms, 1 * ms, 2 * ms, 1 * ms]
    return {
        "nodes": [{"kind": "host"}, {"kind": "router"}, {"kind": "router"}, {"kind": "host"}],
        "links": [
            {
                "name": f"l{i}",
                "from": 0,
                "to": 1,
                "rate_bps": 10**8,
                "delay_ns": d,
                "buffer_pkts": 100,
                "aqm": {"name": "droptail"},
                "monitor": False,
            }
            for i, d in enumerate(delays)
        ],
        "flows": [
            {
                "name": "f",
                "src": 0,
                "dst": 3,
                "start_ns": 500 * ms,
                "size_bytes": None,
                "path": [0, 1, 2],
                "rev_path": [3, 4, 5],
                "tcp": {"handshake": handshake},
            }
        ],
    }


def _start(graph: str) -> str:
    return next(ln for ln in graph.splitlines() if ln.startswith("flow ")).split()[3]


def test_ns3_starts_one_rtt_earlier_without_aqmlabs_handshake() -> None:
    # 0.5 s - (1 + 2 + 1 + 1 + 2 + 1) ms = 0.492 s.
    assert _start(tcp.graph_text(_cfg(handshake=False))) == "0.492000000"


def test_both_start_together_with_aqmlabs_handshake() -> None:
    assert _start(tcp.graph_text(_cfg(handshake=True))) == "0.500000000"


def test_transports_handshake_moves_aqmlab_to_ns3s_start() -> None:
    sc = transports.ledbat(5, 60.0, 20.0, "ledbat-ns3")
    hs = transports.with_handshake(sc)
    assert hs["tcp"]["handshake"] is True
    assert sc["tcp"].get("handshake") is not True  # the case itself is left alone
    # LEDBAT flow 2 on host L4 (access 9 ms one way): 0.4 s - 2 x (9 + 2 + 9) ms = 0.36 s;
    # NewReno flow 5 on host L9 (19 ms): 0.65 s - 2 x (19 + 2 + 19) ms = 0.57 s.
    assert [f["start"] for f in hs["flows"]][4:10:5] == ["0.360000000s", "0.570000000s"]
    assert [f["tcp"]["cc"] for f in hs["flows"] if "tcp" in f] == ["ledbat-ns3"] * 5
