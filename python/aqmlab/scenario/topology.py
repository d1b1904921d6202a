"""Topologies: every kind (the ``dumbbell``, ``single-bottleneck`` and ``parking-lot`` presets, and
``general`` with explicit nodes and links) becomes one :class:`Graph` of nodes, unidirectional links
and named host sets; flows are then routed on that graph (shortest path by propagation delay, or
an explicit route) and the simulator receives nodes, links and per-flow link paths.

A new preset is one function ``(topology, ctx) -> Graph`` registered in :data:`PRESETS`.
See docs/scenarios.md, "Topologies".
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from aqmlab.errors import InputError, show
from aqmlab.scenario import capacity
from aqmlab.scenario.units import Rate, Seconds

Buffer = tuple[int | None, int | None]


class Host(BaseModel):
    """A host at one side of a dumbbell, with its access link (both directions). Written in a
    scenario's ``[topology] left/right`` lists, or made here from a count."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str
    rate: Rate | None = None
    delay: Seconds | None = None


def ns(seconds: float) -> int:
    """A duration held in seconds (a validated field) in whole nanoseconds."""
    return round(seconds * 1e9)


@dataclass
class Context:
    """What the builders need besides the topology table.

    ``aqm(table, field, rate_bps, buffer, mean_pkt, delay_ns)`` checks an AQM table and returns
    the simulator's ``{"name", "params"}`` (rate and delay size ``defaults = "ns2"``);
    ``default_aqm`` is the scenario's ``[aqm]`` table.
    """

    aqm: Callable[[dict[str, Any], str, float, Buffer, int, int], dict[str, Any]]
    default_aqm: dict[str, Any]
    mean_pkt: int
    n_flows: int
    monitor_all: bool
    flow_rtts: list[int | None] = field(default_factory=list)
    #: The run's duration, s (a schedule without a repeat is averaged over it).
    duration: float = 0.0


@dataclass
class Graph:
    """Nodes, unidirectional links and named host sets (``left``, ``right``, ``cross1.src``...)."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    sets: dict[str, list[str]] = field(default_factory=dict)
    #: Link index of each directed pair of nodes.
    between: dict[tuple[int, int], int] = field(default_factory=dict)
    #: The rate a Poisson group's ``load`` refers to (the first bottleneck's), bit/s.
    ref_rate_bps: float = 0.0
    #: Hosts pre-assigned to flow k (single-bottleneck: one host pair per flow).
    pairs: list[tuple[str, str]] = field(default_factory=list)
    _out: dict[int, list[int]] = field(default_factory=dict)
    _trees: dict[int, tuple[dict, dict]] = field(default_factory=dict)

    def node(self, name: str, kind: str) -> int:
        """Adds a node (``host`` or ``router``)."""
        if name in self.index:
            raise InputError(f"topology: node name {show(name)} is used twice")
        self.index[name] = len(self.nodes)
        self.nodes.append({"name": name, "kind": kind})
        return self.index[name]

    def link(self, name: str, a: int, b: int, rate: float, delay_ns: int, buf: Buffer, **kw) -> int:
        """Adds a unidirectional link ``a -> b`` (``kw``: aqm, mean_pkt_bytes, monitor)."""
        if (a, b) in self.between:
            na, nb = self.nodes[a]["name"], self.nodes[b]["name"]
            raise InputError(f"topology.links: two links from {na} to {nb}")
        pk, by = buf
        self.links.append(
            {
                "name": name,
                "from": a,
                "to": b,
                "rate_bps": round(rate),
                "delay_ns": delay_ns,
                "buffer_pkts": pk,
                "buffer_bytes": by,
                **kw,
            }
        )
        self.between[(a, b)] = len(self.links) - 1
        return len(self.links) - 1

    def host_on(self, name: str, router: int, rate: float, delay_ns: int, buf: Buffer, mon: bool):
        """A host with its access link to ``router`` and back (up link first)."""
        h = self.node(name, "host")
        r = self.nodes[router]["name"]
        self.link(f"{name}-{r}", h, router, rate, delay_ns, buf, monitor=mon)
        self.link(f"{r}-{name}", router, h, rate, delay_ns, buf, monitor=mon)
        return h

    def _tree(self, a: int) -> tuple[dict[int, tuple[int, int]], dict[int, int]]:
        """Dijkstra from node ``a`` by (delay, hops), ties to lower link indices; hosts other than
        ``a`` are leaves (they do not forward). Cached: call after the graph is complete."""
        if a in self._trees:
            return self._trees[a]
        if not self._out:
            for li, lk in enumerate(self.links):
                self._out.setdefault(lk["from"], []).append(li)
        best: dict[int, tuple[int, int]] = {a: (0, 0)}
        prev: dict[int, int] = {}
        heap = [(0, 0, a)]
        while heap:
            d, h, n = heapq.heappop(heap)
            if (d, h) > best[n] or (n != a and self.nodes[n]["kind"] == "host"):
                continue
            for li in self._out.get(n, []):
                m = self.links[li]["to"]
                cand = (d + self.links[li]["delay_ns"], h + 1)
                if m not in best or cand < best[m]:
                    best[m], prev[m] = cand, li
                    heapq.heappush(heap, (*cand, m))
        self._trees[a] = (best, prev)
        return best, prev

    def route(self, src: str, dst: str, field_name: str) -> list[int]:
        """Links of the shortest path by propagation delay (ties: fewer hops, then lower link
        indices), never through another host."""
        a, b = self.index[src], self.index[dst]
        head: list[int] = []
        if not self._out:
            self._tree(a)
        ups = self._out.get(a, [])
        if len(ups) == 1 and self.links[ups[0]]["to"] != b:
            # A host with one access link: the rest is the (shared, cached) tree of its router.
            head, a = ups, self.links[ups[0]]["to"]
        best, prev = self._tree(a)
        if b not in best:
            raise InputError(f"{field_name}: no route from {src} to {dst} in the topology")
        path = []
        n = b
        while n != a:
            path.append(prev[n])
            n = self.links[prev[n]]["from"]
        return head + path[::-1]

    def explicit(self, hops: list[str], src: str, dst: str, field_name: str) -> list[int]:
        """Links of an explicit route given as node names from ``src`` to ``dst``."""
        if len(hops) < 2 or hops[0] != src or hops[-1] != dst:
            raise InputError(f"{field_name}: must start at {src} and end at {dst} (got {hops})")
        path = []
        for k, (x, y) in enumerate(itertools.pairwise(hops)):
            for n in (x, y):
                if n not in self.index:
                    raise InputError(f"{field_name}[{k}]: unknown node {n!r}")
            li = self.between.get((self.index[x], self.index[y]))
            if li is None:
                raise InputError(f"{field_name}[{k}]: no link from {x} to {y}")
            path.append(li)
        return path


def _hosts(spec: Any, n_default: int, prefix: str, field_name: str) -> list[Any]:
    """A side's hosts: a count or a list of ``Host`` models (count defaults to the flow count)."""
    if spec is None:
        spec = n_default
    if isinstance(spec, int):
        if spec < 1:
            raise InputError(f"{field_name}: must be at least 1 host (got {spec})")
        return [Host(name=f"{prefix}{i}") for i in range(spec)]
    return spec


@dataclass
class _Common:
    """The bottleneck and access settings shared by the presets."""

    rate: float
    delay: int
    buf: Buffer
    rrate: float
    rbuf: Buffer
    #: The simulator's keys of a bottleneck whose capacity varies (forward, reverse).
    rate_cfg: dict[str, Any]
    rrate_cfg: dict[str, Any]
    arate: float
    abuf: Buffer
    adelays: list[int]


def _common(t: Any, ctx: Context) -> _Common:
    buf = t.buffer
    adelays = t.access_delay if isinstance(t.access_delay, list) else [t.access_delay]
    if not adelays:
        raise InputError("topology.access_delay: give at least one delay")
    if t.trace is not None and "rate" in t.model_fields_set:
        raise InputError("topology.trace: give a rate or a trace, not both")
    rate, rate_cfg = capacity.link_capacity(
        "topology.rate", t.rate, t.rate_repeat, t.trace, ctx.duration
    )
    if t.reverse_trace is not None and t.reverse_rate is not None:
        raise InputError("topology.reverse_trace: give a reverse_rate or a reverse_trace, not both")
    if t.reverse_rate is None and t.reverse_trace is None:
        if t.reverse_rate_repeat is not None:
            raise InputError("topology.reverse_rate_repeat: only with a reverse_rate schedule")
        rrate, rrate_cfg = rate, rate_cfg  # the reverse direction as the forward one
    else:
        rrate, rrate_cfg = capacity.link_capacity(
            "topology.reverse_rate",
            t.reverse_rate,
            t.reverse_rate_repeat,
            t.reverse_trace,
            ctx.duration,
        )
    return _Common(
        rate=rate,
        delay=ns(t.delay),
        buf=buf,
        rrate=rrate,
        rbuf=t.reverse_buffer if t.reverse_buffer is not None else buf,
        rate_cfg=rate_cfg,
        rrate_cfg=rrate_cfg,
        arate=t.access_rate,
        abuf=t.access_buffer,
        adelays=[ns(d) for d in adelays],
    )


def _bottleneck(g: Graph, c: _Common, t: Any, ctx: Context, name: str, a: int, b: int, rev: str):
    """The AQM-guarded bottleneck ``a -> b`` and its reverse (DropTail unless reverse_aqm)."""
    aqm = ctx.aqm(ctx.default_aqm, "aqm", c.rate, c.buf, ctx.mean_pkt, c.delay)
    g.link(
        name,
        a,
        b,
        c.rate,
        c.delay,
        c.buf,
        aqm=aqm,
        mean_pkt_bytes=ctx.mean_pkt,
        monitor=True,
        **c.rate_cfg,
    )
    kw: dict[str, Any] = {"mean_pkt_bytes": 40, "monitor": ctx.monitor_all, **c.rrate_cfg}
    if t.reverse_aqm is not None:
        kw["aqm"] = ctx.aqm(t.reverse_aqm, "topology.reverse_aqm", c.rrate, c.rbuf, 40, c.delay)
        kw["monitor"] = True
    g.link(rev, b, a, c.rrate, c.delay, c.rbuf, **kw)
    if not g.ref_rate_bps:
        g.ref_rate_bps = float(c.rate)


def _side_hosts(g: Graph, c: _Common, t: Any, ctx: Context, side: str, router: int, prefix: str):
    names = []
    for j, hst in enumerate(_hosts(getattr(t, side), ctx.n_flows, prefix, f"topology.{side}")):
        hr = hst.rate if hst.rate is not None else c.arate
        hd = ns(hst.delay) if hst.delay is not None else c.adelays[j % len(c.adelays)]
        g.host_on(hst.name, router, hr, hd, c.abuf, ctx.monitor_all)
        names.append(hst.name)
    g.sets[side] = names


def _only(t: Any, kind: str, *fields: str) -> None:
    for f in fields:
        if getattr(t, f) not in (None, [], 1):
            raise InputError(f"topology.{f}: not used by topology.type = {kind!r}")


def dumbbell(t: Any, ctx: Context) -> Graph:
    """Hosts on both sides of one bottleneck A -> B (the AQM guards A -> B)."""
    _only(t, "dumbbell", "hops", "nodes", "links")
    c, g = _common(t, ctx), Graph()
    ra, rb = g.node("A", "router"), g.node("B", "router")
    _bottleneck(g, c, t, ctx, "bottleneck", ra, rb, "reverse")
    _side_hosts(g, c, t, ctx, "left", ra, "L")
    _side_hosts(g, c, t, ctx, "right", rb, "R")
    return g


def single_bottleneck(t: Any, ctx: Context) -> Graph:
    """One host pair per flow whose access delays make the flow's base RTT its ``rtt``."""
    _only(t, "single-bottleneck", "hops", "nodes", "links")
    if t.left is not None or t.right is not None:
        raise InputError("topology.left/right: only for topology.type = 'dumbbell'")
    c, g = _common(t, ctx), Graph()
    ra, rb = g.node("A", "router"), g.node("B", "router")
    _bottleneck(g, c, t, ctx, "bottleneck", ra, rb, "reverse")
    for k, rtt in enumerate(ctx.flow_rtts):
        rtt = 2 * (c.delay + 2 * c.adelays[0]) if rtt is None else rtt
        one_way_access = round((rtt / 2 - c.delay) / 2)
        g.host_on(f"S{k}", ra, c.arate, one_way_access, c.abuf, ctx.monitor_all)
        g.host_on(f"D{k}", rb, c.arate, one_way_access, c.abuf, ctx.monitor_all)
        g.pairs.append((f"S{k}", f"D{k}"))
    g.sets["left"] = [s for s, _ in g.pairs]
    g.sets["right"] = [d for _, d in g.pairs]
    return g


def parking_lot(t: Any, ctx: Context) -> Graph:
    """A chain of ``hops`` bottlenecks r0 -> r1 -> ... -> rk (seed 001 Fig. 8, seed 003 Fig. 17),
    each guarded by the scenario's AQM and monitored. Host sets: ``left`` (at r0) and ``right``
    (at rk) for the long flows; ``crossI.src`` (at r(I-1)) and ``crossI.dst`` (at rI), ``cross``
    hosts each, for the cross traffic of hop I."""
    _only(t, "parking-lot", "nodes", "links")
    if not t.hops or t.hops < 1:
        raise InputError(f"topology.hops: must be at least 1 bottleneck (got {t.hops})")
    if t.cross < 1:
        raise InputError(f"topology.cross: must be at least 1 host (got {t.cross})")
    c, g = _common(t, ctx), Graph()
    routers = [g.node(f"r{i}", "router") for i in range(t.hops + 1)]
    for i in range(1, t.hops + 1):
        _bottleneck(g, c, t, ctx, f"hop{i}", routers[i - 1], routers[i], f"hop{i}-rev")
    _side_hosts(g, c, t, ctx, "left", routers[0], "L")
    _side_hosts(g, c, t, ctx, "right", routers[-1], "R")
    for i in range(1, t.hops + 1):
        for end, r in (("src", routers[i - 1]), ("dst", routers[i])):
            names = [f"C{i}{end[0]}{j}" for j in range(t.cross)]
            for j, n in enumerate(names):
                g.host_on(n, r, c.arate, c.adelays[j % len(c.adelays)], c.abuf, ctx.monitor_all)
            g.sets[f"cross{i}.{end}"] = names
    return g


def _general_dir(lk: Any, d: Any, i: int, name: str, ctx: Context) -> dict[str, Any]:
    """One direction of a general link: its fields, overridden by ``d`` (the ``reverse`` table)."""
    f = f"topology.links[{i}]" + (".reverse" if d is not lk else "")
    if d.rate is not None and d.trace is not None:
        raise InputError(f"{f}.trace: give a rate or a trace, not both")
    own = d.rate is not None or d.trace is not None
    src = d if own else lk
    if src.rate is None and src.trace is None:
        raise InputError(
            f"{f}.rate: is required (a rate, a list of {{ at, rate }} steps, or trace)"
        )
    repeat = d.rate_repeat if own or d.rate_repeat is not None else lk.rate_repeat
    rate, rate_cfg = capacity.link_capacity(f + ".rate", src.rate, repeat, src.trace, ctx.duration)
    delay = ns(d.delay if d.delay is not None else lk.delay)
    buf = d.buffer if d.buffer is not None else lk.buffer
    aqm_t = d.aqm if d.aqm is not None else lk.aqm
    kw: dict[str, Any] = {"mean_pkt_bytes": ctx.mean_pkt, **rate_cfg}
    if aqm_t is not None:
        kw["aqm"] = ctx.aqm(aqm_t, f"{f}.aqm", rate, buf, ctx.mean_pkt, delay)
    mon = d.monitor if d.monitor is not None else lk.monitor
    kw["monitor"] = bool(mon) or ctx.monitor_all
    return {"name": name, "rate": rate, "delay_ns": delay, "buf": buf, **kw}


def general(t: Any, ctx: Context) -> Graph:
    """Explicit nodes and links (duplex unless ``duplex = false``; the ``reverse`` table
    overrides rate, delay, buffer, AQM or monitoring of the direction ``to -> from``)."""
    _only(t, "general", "hops", "left", "right")
    if not t.nodes or not t.links:
        raise InputError("topology.nodes: a general topology needs nodes and links")
    g = Graph()
    for n in t.nodes:
        g.node(n.name, n.kind)
    for i, lk in enumerate(t.links):
        for end in (lk.from_, lk.to):
            if end not in g.index:
                raise InputError(f"topology.links[{i}]: unknown node {end!r}")
        if lk.from_ == lk.to:
            raise InputError(f"topology.links[{i}]: a link must join two different nodes")
        dirs = [(lk.from_, lk.to, lk)]
        if lk.duplex:
            dirs.append((lk.to, lk.from_, lk.reverse or lk))
        elif lk.reverse is not None:
            raise InputError(f"topology.links[{i}].reverse: only for duplex links")
        for a, b, d in dirs:
            p = _general_dir(lk, d, i, f"{a}-{b}", ctx)
            name, rate, delay, buf = p.pop("name"), p.pop("rate"), p.pop("delay_ns"), p.pop("buf")
            g.link(name, g.index[a], g.index[b], rate, delay, buf, **p)
    g.sets["hosts"] = [n.name for n in t.nodes if n.kind == "host"]
    return g


#: The topology kinds by ``topology.type``.
PRESETS: dict[str, Callable[[Any, Context], Graph]] = {
    "dumbbell": dumbbell,
    "single-bottleneck": single_bottleneck,
    "parking-lot": parking_lot,
    "general": general,
}
