"""Flow groups to flows: endpoints, routes on the topology graph, and the traffic each flow
carries (TCP bulk or finite, Poisson, CBR, on/off, web objects), with start and stop times.
See docs/scenarios.md, "Traffic".
"""

from __future__ import annotations

import math
import random
from typing import Any

from aqmlab.errors import InputError, show
from aqmlab.scenario import probe
from aqmlab.scenario.topology import Graph, ns


def _endpoints(spec: str, graph: Graph, field: str) -> list[str]:
    """Host names of a group's ``src`` or ``dst``: a host set or comma-separated host names."""
    if spec in graph.sets:
        return graph.sets[spec]
    names = [s.strip() for s in spec.split(",")]
    for n in names:
        if n not in graph.index or graph.nodes[graph.index[n]]["kind"] != "host":
            sets = ", ".join(repr(k) for k in graph.sets)
            raise InputError(f"{field}: unknown host {show(n)}; use one of {sets} or host names")
    return names


def _pairs(g: Any, i: int, graph: Graph, k0: int) -> list[tuple[str, str]]:
    """The (src, dst) host pair of each of the group's flows, in order."""
    if graph.pairs:
        return graph.pairs[k0 : k0 + g.count]
    srcs = _endpoints(g.src, graph, f"flows[{i}].src")
    dsts = _endpoints(g.dst, graph, f"flows[{i}].dst")
    if g.pairing == "all-pairs":
        pairs = [(s, d) for s in srcs for d in dsts]
    else:
        n = max(len(srcs), len(dsts))
        pairs = [(srcs[j % len(srcs)], dsts[j % len(dsts)]) for j in range(n)]
    left, right = set(graph.sets.get("left", [])), set(graph.sets.get("right", []))
    for s, d in pairs:
        if s == d:
            raise InputError(f"flows[{i}]: src and dst are the same host {s}")
        if {s, d} <= left or {s, d} <= right:
            raise InputError(f"flows[{i}]: src {s} and dst {d} are on the same side")
    n = g.count if g.type != "web" else len(pairs)
    return [pairs[j % len(pairs)] for j in range(n)]


def _paths(g: Any, i: int, graph: Graph, s: str, d: str, acks: bool) -> tuple[list, list]:
    """Data path and ACK path (shortest, or the group's explicit routes)."""
    f = f"flows[{i}]"
    if g.route is not None:
        path = graph.explicit(g.route, s, d, f"{f}.route")
    else:
        path = graph.route(s, d, f"{f}.dst")
    if not acks:
        if g.reverse_route is not None:
            raise InputError(f"{f}.reverse_route: only for TCP flows (open-loop ones send no ACKs)")
        return path, []
    if g.reverse_route is not None:
        rpath = graph.explicit(g.reverse_route, d, s, f"{f}.reverse_route")
    elif g.route is not None:
        rpath = graph.explicit(g.route[::-1], d, s, f"{f}.route (reversed, for the ACKs)")
    else:
        rpath = graph.route(d, s, f"{f}.src")
    return path, rpath


def _rate(g: Any, i: int, ref_bps: float) -> float:
    """A group's per-flow offered rate: ``rate``, or ``load`` x the reference rate."""
    f = f"flows[{i}]"
    if (g.load is None) == (g.rate is None):
        raise InputError(f"{f}.load: a {g.type} flow needs exactly one of load or rate")
    if g.load is not None:
        if not g.load > 0:
            raise InputError(f"{f}.load: must be > 0 (got {g.load})")
        return g.load * ref_bps
    return float(g.rate)


def _shares(table: list[Any], field: str) -> list[tuple[float, float]]:
    """(size in bytes, share) rows; shares > 0 summing to 1."""
    if not table:
        raise InputError(f"{field}: give at least one row")
    rows = []
    for k, r in enumerate(table):
        size = float(r.size)
        if not (r.share > 0 and math.isfinite(r.share)):
            raise InputError(f"{field}[{k}].share: must be > 0 (got {r.share})")
        rows.append((size, r.share))
    total = sum(s for _, s in rows)
    if abs(total - 1) > 1e-6:
        raise InputError(f"{field}: shares must sum to 1 (got {total:g})")
    return rows


def _packet_sizes(g: Any, i: int) -> list[dict[str, Any]]:
    f = f"flows[{i}]"
    if g.packet_sizes is None:
        rows = [(float(g.packet_size), 1.0)]
    else:
        rows = _shares(g.packet_sizes, f"{f}.packet_sizes")
    for k, (b, _) in enumerate(rows):
        if b != int(b):
            raise InputError(f"{f}.packet_sizes[{k}].size: must be a whole number of bytes")
    return [{"bytes": int(b), "share": s} for b, s in rows]


def _check_shape(shape: float | None, field: str, default: float) -> float:
    """A Pareto shape for a distribution given by its mean: > 1 (the mean is infinite else)."""
    a = default if shape is None else shape
    if not (math.isfinite(a) and a > 1):
        raise InputError(
            f"{field}: must be > 1, the Pareto mean is infinite otherwise (got {a}); "
            "the size given is a mean"
        )
    return a


def _open_loop(g: Any, i: int, ref_bps: float) -> dict[str, Any]:
    """The simulator's source table of a poisson, cbr or onoff flow."""
    f = f"flows[{i}]"
    if g.type == "probe":  # a latency probe, echoed back (aqmlab.scenario.probe)
        return probe.source(g, i)
    if g.type == "poisson":
        if g.packet_sizes is not None:
            raise InputError(f"{f}.packet_sizes: poisson sizes are exponential or fixed")
        size = float(g.packet_size)
        rate = _rate(g, i, ref_bps)
        exp = g.size_distribution == "exponential"
        pois = {"rate_pps": rate / (8 * size), "mean_size_bytes": size, "exponential": exp}
        return {"poisson": pois}
    sizes = _packet_sizes(g, i)
    rate = _rate(g, i, ref_bps)
    if g.type == "cbr":
        return {"source": {"kind": "cbr", "rate_bps": rate, "sizes": sizes}}
    shape = None
    if g.distribution == "pareto":
        shape = _check_shape(g.shape, f"{f}.shape", 1.5)
    elif g.shape is not None:
        raise InputError(f"{f}.shape: only for distribution = 'pareto'")
    src = {
        "kind": "on_off",
        "rate_bps": rate,
        "sizes": sizes,
        "on_mean_ns": ns(g.on_time),
        "off_mean_ns": ns(g.off_time),
        "shape": shape,
    }
    return {"source": src}


def _tcp_sizes(g: Any, i: int, tcp: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-flow TCP settings: ``packet_sizes`` (wire sizes) spread over the group's flows in
    proportion to their shares (flow j takes the size whose cumulative share first exceeds
    (j + 0.5) / count), each flow's MSS = size - header."""
    if g.packet_sizes is None:
        return [tcp] * g.count
    rows = _shares(g.packet_sizes, f"flows[{i}].packet_sizes")
    out = []
    for j in range(g.count):
        u, acc = (j + 0.5) / g.count, 0.0
        for k, (b, s) in enumerate(rows):
            acc += s
            if u < acc or k == len(rows) - 1:
                mss = int(b) - tcp["header_bytes"]
                if mss < 1:
                    raise InputError(
                        f"flows[{i}].packet_sizes[{k}].size: must exceed the TCP header "
                        f"({tcp['header_bytes']} B)"
                    )
                out.append({**tcp, "mss": mss})
                break
    return out


def _times(g: Any, i: int, run: dict[str, Any]) -> tuple[int, int | None]:
    start = ns(g.start)
    stop = None if g.stop is None else ns(g.stop)
    if stop is not None and stop <= start:
        raise InputError(f"flows[{i}].stop: must be after start ({g.stop} <= {g.start})")
    if start >= run["duration_ns"]:
        raise InputError(f"flows[{i}].start: must be before the end of the run (got {g.start})")
    return start, stop


def _session_shape(g: Any, i: int) -> tuple[float, int]:
    """A web group's objects per session (fixed count, or geometric mean) and mean think time
    (ns), checked."""
    f = f"flows[{i}]"
    k = g.objects
    if not (isinstance(k, int | float) and math.isfinite(k) and k >= 1):
        raise InputError(f"{f}.objects: must be >= 1 object per session (got {k})")
    if g.objects_distribution == "fixed" and k != int(k):
        raise InputError(
            f"{f}.objects: a fixed count must be a whole number (got {k}); "
            "objects_distribution = 'geometric' takes a mean"
        )
    if k > 1_000_000:
        raise InputError(f"{f}.objects: at most 1000000 objects per session (got {k})")
    return float(k), ns(g.think_time)


def _web_objects(g: Any, i: int, seed: int, t0: int, t1: int) -> list[tuple]:
    """(start ns, size bytes, after) of each object. Sessions arrive as a Poisson process of
    ``arrival_rate`` per second in [t0, t1); each fetches ``objects`` objects (fixed, or
    geometric on 1, 2, ... with that mean) one after another: the first starts at the arrival,
    each next one ``after = (index of the previous object, think ns)``, a think time (exponential
    with mean ``think_time``, or fixed) after the previous one completes. Sizes Pareto with mean
    ``object_size`` and ``shape`` (seed 000 s. 4: 50 kB, 1.3) or drawn from ``size_table``. With
    one object per session (the default) a session is one object arriving open-loop."""
    f = f"flows[{i}]"
    if g.arrival_rate is None or not (g.arrival_rate > 0 and math.isfinite(g.arrival_rate)):
        raise InputError(f"{f}.arrival_rate: a web group needs sessions per second > 0")
    k_mean, think_ns = _session_shape(g, i)
    expected = g.arrival_rate * (t1 - t0) / 1e9 * k_mean  # sessions x objects per session
    if expected > 1_000_000:  # refused before drawing them (issue 19: it took 9 s)
        which = "objects" if k_mean > 1 else "arrival_rate"
        raise InputError(
            f"{f}.{which}: {show(g.objects)} objects per session x {g.arrival_rate:g} sessions/s "
            f"x {(t1 - t0) / 1e9:g} s is about {expected:.3g} objects; at most 1000000 in a run"
        )
    rng = random.Random(f"{seed}/web/{i}")
    if g.size_table is not None:
        if g.shape is not None:
            raise InputError(f"{f}.shape: give size_table or a Pareto shape, not both")
        rows = _shares(g.size_table, f"{f}.size_table")
        sizes, weights = [b for b, _ in rows], [s for _, s in rows]

        def draw() -> float:
            return rng.choices(sizes, weights)[0]
    else:
        a = _check_shape(g.shape, f"{f}.shape", 1.3)
        xm = g.object_size * (a - 1) / a

        def draw() -> float:
            return xm * rng.paretovariate(a)

    def count() -> int:
        if g.objects_distribution == "fixed" or k_mean == 1:
            return int(k_mean)
        # Geometric on 1, 2, ...: P(K = k) = (1 - p)^(k - 1) p with p = 1 / mean.
        return 1 + int(math.log(1.0 - rng.random()) / math.log(1.0 - 1.0 / k_mean))

    def think() -> int:
        if g.think_distribution == "fixed" or think_ns == 0:
            return think_ns
        return round(rng.expovariate(1.0 / think_ns))

    out: list[tuple] = []
    t = float(t0)
    while True:
        t += rng.expovariate(g.arrival_rate) * 1e9
        if t >= t1:
            return out
        k = count()
        if len(out) + k > 1_000_000:
            raise InputError(
                f"{f}.objects: more than 1000000 objects in the run (objects x arrival_rate x "
                "the group's active time)"
            )
        out.append((round(t), max(1, math.ceil(draw())), None))
        for _ in range(k - 1):
            gap = think()
            out.append((round(t), max(1, math.ceil(draw())), (len(out) - 1, gap)))
        if len(out) > 1_000_000:
            raise InputError(f"{f}.arrival_rate: more than 1000000 objects in the run")


# Web session fields and their defaults (a session of one object, no think time).
_SESSION_DEFAULTS = {
    "objects": 1,
    "objects_distribution": "fixed",
    "think_time": "0s",
    "think_distribution": "exponential",
}


def _check_group(g: Any, i: int) -> None:
    f = f"flows[{i}]"
    if g.type in ("tcp", "web") and (g.load is not None or g.rate is not None):
        raise InputError(f"{f}.load: only for open-loop flows (poisson, cbr, onoff)")
    if g.type != "web" and (g.arrival_rate is not None or g.size_table is not None):
        raise InputError(f"{f}.arrival_rate: only for type = 'web'")
    if g.type != "web":
        for name, default in _SESSION_DEFAULTS.items():
            if getattr(getattr(g, name), "text", getattr(g, name)) != default:  # as written
                raise InputError(f"{f}.{name}: only for type = 'web' (web sessions)")
    if g.type == "web" and g.size is not None:
        raise InputError(f"{f}.size: a web group draws object sizes (object_size, size_table)")
    if g.type != "tcp" and g.type != "web" and g.size is not None:
        raise InputError(f"{f}.size: only for TCP flows")
    if g.type != "probe" and g.interval.text != "10ms":
        raise InputError(f"{f}.interval: only for type = 'probe'")


def _profile(p: Any, i: int) -> dict[str, int]:
    return {
        "rate_bps": round(p.rate),
        "burst_bytes": round(p.burst),
    }


# The two ECN bits of the IP header for each codepoint a source may send (RFC 3168 s. 5).
_ECN_BITS = {"not-ect": 0, "ect0": 0b10, "ect1": 0b01}


def _group(g, i, graph, tcp, run, rng, k0, f0=0, sc_flow_series=False) -> list[dict[str, Any]]:
    """The flows of group ``i``, whose first flow is the run's flow ``f0``."""
    _check_group(g, i)
    start, stop = _times(g, i, run)
    pairs = _pairs(g, i, graph, k0)
    acks = g.type in ("tcp", "web")
    spread = ns(g.start_spread)
    if g.type == "web":
        t1 = run["duration_ns"] if stop is None else stop
        objects = _web_objects(g, i, run["seed"], start, t1)
        stop = None
    else:
        objects = [(start, None, None)] * g.count
    tcps = _tcp_sizes(g, i, tcp) if g.type == "tcp" else [tcp] * len(objects)
    out = []
    session = -1
    for j, (t, size, after) in enumerate(objects):
        session += after is None  # a session's objects share its host pair
        s, d = pairs[session % len(pairs)]
        path, rpath = _paths(g, i, graph, s, d, acks or g.type == "probe")  # probes: echoes
        if spread > 0 and after is None:
            t += rng.randrange(spread + 1)
        flow: dict[str, Any] = {
            "name": f"{g.name or 'g' + str(i)}.{j}",
            "src": graph.index[s],
            "dst": graph.index[d],
            "path": path,
            "rev_path": rpath,
            "tcp": tcps[j],
            "start_ns": t,
        }
        if not acks:
            ref = graph.ref_rate_bps or min(graph.links[li]["rate_bps"] for li in path)
            flow.update(_open_loop(g, i, ref))
            if _ECN_BITS.get(g.ecn or "not-ect"):
                flow["ecn_bits"] = _ECN_BITS[g.ecn]
        elif g.ecn is not None:
            raise InputError(
                f"flows[{i}].ecn: only for open-loop sources (poisson, cbr, onoff, probe); "
                'a TCP flow sets its codepoint with tcp.ecn (true: ECT(0), "l4s": ECT(1))'
            )
        if stop is not None:
            flow["stop_ns"] = stop
        if sc_flow_series:
            flow["trace_delivered"] = True
        if size is not None:
            flow["size_bytes"] = size
        elif g.size is not None:
            flow["size_bytes"] = math.ceil(g.size)
        if g.profile is not None:
            flow["profile"] = _profile(g.profile, i)
        if after is not None:
            flow["after"] = {"flow": f0 + after[0], "think_ns": after[1]}
        out.append(flow)
    return out


def build_flows(sc: Any, graph: Graph, tcps: list[dict[str, Any]], run: dict) -> list[dict]:
    """Every flow of the scenario, in group order."""
    rng = random.Random(run["seed"])
    flows: list[dict[str, Any]] = []
    k = 0
    for i, g in enumerate(sc.flows):
        flows += _group(g, i, graph, tcps[i], run, rng, k, len(flows), sc.output.flow_series)
        k += g.count
    return flows
