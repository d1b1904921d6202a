"""Latency probes (Flent's RRUL ping): a flow group of ``type = "probe"`` sends one small packet
every ``interval`` (default 64 B every 10 ms) from ``src`` to ``dst``; the destination echoes it
back along the reverse path and the source measures the round-trip time. The simulator side is
``crates/sim/src/traffic/probe.rs``; the RTT distribution of each probe is in its flow summary
(``rtt_*``, ``probe: true``) and gathered in ``summary["probe"]`` (docs/metrics.md, "Latency
probe"); the RTT of every echo is the time series ``probe:<flow>``.
"""

from __future__ import annotations

import math
from typing import Any

from aqmlab.errors import InputError

#: Shortest interval: at most 10,000 probes per simulated second (a probe measures, it does not
#: load the path; and a run's time stays bounded by its length).
MIN_INTERVAL_S = 1e-4


def source(g: Any, i: int) -> dict[str, Any]:
    """The simulator's source table of a probe group ``g`` (``flows[i]``)."""
    f = f"flows[{i}]"
    for name in ("load", "rate", "packet_sizes"):
        if getattr(g, name) is not None:
            raise InputError(
                f"{f}.{name}: a probe sends one packet of packet_size every interval "
                "(give interval and packet_size)"
            )
    interval = g.interval
    if not (interval >= MIN_INTERVAL_S and math.isfinite(interval)):
        raise InputError(
            f"{f}.interval: must be at least 100us, a probe is light traffic (got {g.interval})"
        )
    size = g.packet_size  # 64B unless given (schema.py)
    if size != int(size) or not 1 <= size <= 65_535:
        raise InputError(f"{f}.packet_size: a whole number of bytes, 1 to 65535 (got {size:g})")
    return {"source": {"kind": "probe", "interval_ns": round(interval * 1e9), "bytes": int(size)}}


def summary(flows: list[dict]) -> list[dict]:
    """One row per probe flow: where it runs, probes sent in the window, echoes back, and the
    RTT statistics of its echoes (min, mean, p50, p90, p99, max), s."""
    out = []
    for f in flows:
        if not f.get("probe"):
            continue
        sent = f.get("udp_sent") or 0
        row = {"flow": f["name"], "src": f["src"], "dst": f["dst"], "sent": sent}
        row["echoes"] = f["rtt_samples"]
        for k in ("min", "mean", "p50", "p90", "p99", "max"):
            row[f"rtt_{k}_s"] = f[f"rtt_{k}_s"]
        out.append(row)
    return out
