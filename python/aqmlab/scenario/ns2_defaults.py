"""ns-2's default parameter sets for the classic AQMs (``[aqm] defaults = "ns2"``).

Every seed paper ran ns-2. These are the defaults of ns-2.35 (tcl/lib/ns-default.tcl), as the
installed ``ns`` binary prints them, e.g. ``echo 'puts [Queue/RED set thresh_]; exit' | ns``
(checked 2026-11-23: RED thresh_ 0, maxthresh_ 0, q_weight_ -1, linterm_ 10, mean_pktsize_ 500,
gentle_ true, wait_ true, bytes_ true, queue_in_bytes_ true, targetdelay_ 0.005; PI a_ 1.822e-5,
b_ 1.816e-5, qref_ 50, w_ 170; REM gamma_ 0.001, phi_ 1.001, pbo_ 20, pupdtime_ 0.002,
mean_pktsize_ 1000, qib_ false; Vq gamma_ 0.98, mean_pktsize_ 1000).

RED's zero / negative values mean "configure from the link" (ns-2.35 queue/red.cc
``initialize_params``, after Floyd, Gummadi, Shenker, "Adaptive RED", 2001, s. 5), with the
packet time constant ptc = link rate / (8 mean_pktsize):

- thresh_ 0: min_th = max(5, targetdelay_ ptc / 2) packets; maxthresh_ 0: max_th = 3 min_th;
- q_weight_ -1: w_q = 1 - exp(-1 / (10 rtt ptc)), rtt = max(0.1 s, 3 (link delay + 1 / ptc)).

ns-2's byte mode (``bytes_``) counts ``count`` in bytes / mean_pktsize and scales the spaced
probability by size / mean_pktsize (queue/red.cc ``modify_p``): ``byte_count`` (aqmlab's default
is Floyd-Jacobson's packet count with pb scaled first, which in a mix of packet sizes drops the
large ones far more: docs/reproductions.md, seed 000); and ns-2 drops nothing while the queue
holds at most one packet (one byte in byte mode): ``spare_short_queue``. A difference that
remains: ns-2 starts ``count`` at 1 (no drop) when avg first crosses min_th, aqmlab at 0; with
``wait`` neither drops there.

Values given explicitly in the ``[aqm]`` table override these.
"""

from __future__ import annotations

import math
from typing import Any

#: The preset names ``[aqm] defaults`` accepts.
PRESETS = ("aqmlab", "ns2")

#: Algorithms ns-2.35 ships and aqmlab has (DropTail has no parameters).
NS2_ALGORITHMS = ("droptail", "red", "pi", "rem", "avq")


def red(rate_bps: float, delay_s: float) -> dict[str, Any]:
    """ns-2.35's RED defaults for a link of ``rate_bps`` and one-way ``delay_s`` (sizes and
    durations as unit strings, like a scenario file writes them)."""
    mean_pktsize = 500.0
    ptc = rate_bps / (8.0 * mean_pktsize)
    rtt = max(0.1, 3.0 * (delay_s + 1.0 / ptc))
    min_th = max(5.0, 0.005 * ptc / 2.0)
    return {
        "min_th": min_th,
        "max_th": 3.0 * min_th,
        "w_q": 1.0 - math.exp(-1.0 / (10.0 * rtt * ptc)),
        "max_p": 1.0 / 10.0,
        "gentle": True,
        "wait": True,
        "mode": "byte",
        "mean_pkt_size": "500B",
        "max_pkt_size": "500B",
        "byte_count": True,
        "spare_short_queue": True,
    }


def params(name: str, rate_bps: float, delay_s: float, field: str) -> dict[str, Any]:
    """The ns-2.35 defaults of algorithm ``name``; ``field`` names the setting in errors."""
    from aqmlab.errors import InputError

    if name == "droptail":
        return {}
    if name == "red":
        return red(rate_bps, delay_s)
    if name == "pi":
        return {"a": 0.00001822, "b": 0.00001816, "q_ref": 50.0, "sample_hz": 170.0}
    if name == "rem":
        return {
            "gamma": 0.001,
            "phi": 1.001,
            "q_ref": 20.0,
            "interval": "2ms",
            "mean_pkt_size": "1000B",
            "count_packets": True,  # qib_ false: arrivals counted in packets (rem.cc)
        }
    if name == "avq":
        return {"gamma": 0.98, "mean_pkt_size": "1000B"}
    known = ", ".join(NS2_ALGORITHMS)
    raise InputError(f"{field}: ns-2 has no default set for {name!r}; it has: {known}")
