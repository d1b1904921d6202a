"""Scenario files: what a run simulates, in the user's words and units.

A scenario is TOML (or the same structure built in Python). It is validated by pydantic models whose
errors are turned into one line naming the field; then :func:`build_config` writes the network
description the Rust simulator runs (nodes, links, flows with static paths, base units).
See ``docs/scenarios.md`` for the format.
"""

from __future__ import annotations

import math
import random
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aqmlab import units
from aqmlab.errors import InputError

_STRICT = ConfigDict(extra="forbid", populate_by_name=True)


class Host(BaseModel):
    """A host at one side of a dumbbell, with its access link (both directions)."""

    model_config = _STRICT
    name: str
    rate: str | None = None
    delay: str | None = None


class Topology(BaseModel):
    """The network: a dumbbell (hosts on both sides of one bottleneck) or a single bottleneck.

    ``single-bottleneck`` gives every flow its own host pair whose access delays make the flow's
    base round-trip time equal to its ``rtt``.
    """

    model_config = _STRICT
    type: Literal["dumbbell", "single-bottleneck"] = "dumbbell"
    rate: str = "100Mbps"
    delay: str = "2ms"
    buffer: int | str = 300
    reverse_rate: str | None = None
    reverse_buffer: int | str | None = None
    access_rate: str = "1Gbps"
    access_delay: str | list[str] = "1ms"
    access_buffer: int | str = 10000
    left: int | list[Host] | None = None
    right: int | list[Host] | None = None


class Tcp(BaseModel):
    """TCP settings (defaults for every flow; a flow group may override any of them)."""

    model_config = _STRICT
    variant: Literal["newreno", "reno", "sack", "cubic"] = "newreno"
    mss: str = "1460B"
    header: str = "40B"
    ack_size: str = "40B"
    init_cwnd: float = 10
    init_ssthresh: float | None = None
    rwnd: str = "4MB"
    min_rto: str = "200ms"
    max_rto: str = "60s"
    init_rto: str = "1s"
    delack: bool = False
    delack_timeout: str = "40ms"
    ecn: bool = False
    trace_cwnd: bool = False
    timestamps: bool = False


class Profile(BaseModel):
    """An edge marker's token bucket: packets within it are IN, the rest OUT (ModRED, RIO)."""

    model_config = _STRICT
    rate: str
    burst: str


class FlowGroup(BaseModel):
    """``count`` flows with the same settings: TCP bulk flows, or open-loop Poisson sources
    (``type = "poisson"``: Poisson arrivals with exponential or fixed packet sizes, offered
    ``load`` as a fraction of the bottleneck rate, or ``rate`` as a bit rate, per flow)."""

    model_config = _STRICT
    type: Literal["tcp", "poisson"] = "tcp"
    count: int = 1
    load: float | None = None
    rate: str | None = None
    packet_size: str = "1000B"
    size_distribution: Literal["exponential", "fixed"] = "exponential"
    src: str = "left"
    dst: str = "right"
    pairing: Literal["parallel", "all-pairs"] = "parallel"
    start: str = "0s"
    start_spread: str = "0s"
    rtt: str | None = None
    size: str | None = None
    name: str | None = None
    profile: Profile | None = None
    tcp: dict[str, Any] = Field(default_factory=dict)

    @field_validator("count")
    @classmethod
    def _count(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"must be at least 1 (got {v})")
        return v


class Output(BaseModel):
    """What a run records."""

    model_config = _STRICT
    sample_interval: str = "10ms"
    max_samples: int = 200_000
    monitor_all_links: bool = False


class Metrics(BaseModel):
    """Parameters of the derived metrics (docs/metrics.md)."""

    model_config = _STRICT
    fixed_path_delay: str = "0ms"
    ie: float = 0.0
    bpl: float = 4.3
    settling_band: float = 0.1
    settling_smoothing: str = "1s"
    settling_final_fraction: float = 0.2


class Scenario(BaseModel):
    """A whole scenario."""

    model_config = _STRICT
    name: str = "scenario"
    description: str = ""
    duration: str = "60s"
    warmup: str = "10s"
    seed: int = 1
    topology: Topology = Field(default_factory=Topology)
    aqm: dict[str, Any] = Field(default_factory=lambda: {"name": "droptail"})
    tcp: Tcp = Field(default_factory=Tcp)
    flows: list[FlowGroup] = Field(default_factory=lambda: [FlowGroup(count=10)])
    output: Output = Field(default_factory=Output)
    metrics: Metrics = Field(default_factory=Metrics)
    compare: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("flows")
    @classmethod
    def _flows(cls, v: list[FlowGroup]) -> list[FlowGroup]:
        if not v:
            raise ValueError("at least one flow group is required (got none)")
        return v


def _fmt_loc(loc: tuple) -> str:
    out = ""
    for p in loc:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The model class that holds the field at ``loc`` (for listing the allowed fields)."""
    model: Any = Scenario
    for p in loc[:-1]:
        if isinstance(p, int):
            continue
        f = model.model_fields.get(p) if hasattr(model, "model_fields") else None
        if f is None:
            return None
        ann = f.annotation
        for cand in (Topology, Tcp, FlowGroup, Output, Host, Profile, Metrics):
            if (
                cand is ann
                or cand in getattr(ann, "__args__", ())
                or (any(cand in getattr(a, "__args__", ()) for a in getattr(ann, "__args__", ())))
            ):
                model = cand
                break
        else:
            return None
    return model


def _one_line(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = tuple(err["loc"])
    field = _fmt_loc(loc) or "scenario"
    if err["type"] == "extra_forbidden":
        model = _model_at(loc)
        allowed = ", ".join(model.model_fields) if model else "see docs/scenarios.md"
        return f"{field}: unknown field; allowed here: {allowed}"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "literal_error":
        return f"{field}: {msg} (got {err.get('input')!r})"
    return f"{field}: {msg}"


def from_dict(data: dict[str, Any]) -> Scenario:
    """Validates a scenario given as a dict (the TOML structure)."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise InputError(_one_line(e)) from None


def load(path: str | Path) -> Scenario:
    """Reads and validates a TOML scenario file."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise InputError(f"scenario: no such file: {p}") from None
    except OSError as e:
        raise InputError(f"scenario: cannot read {p}: {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"scenario: {p.name} is not valid TOML: {e}") from None
    return from_dict(data)


# ---------------------------------------------------------------------------------------------
# From a scenario to the simulator's network description.


def _ns(field: str, v: str, positive: bool = False) -> int:
    return round(units.seconds(field, v, positive=positive) * 1e9)


def _tcp_config(base: Tcp, over: dict[str, Any], field: str) -> tuple[dict[str, Any], int]:
    try:
        t = Tcp.model_validate({**base.model_dump(), **over})
    except ValidationError as e:
        raise InputError(f"{field}.{_one_line(e)}") from None
    mss = units.size_bytes(f"{field}.mss", t.mss)
    if mss != int(mss) or mss < 1:
        raise InputError(f"{field}.mss: must be a whole number of bytes >= 1 (got {t.mss!r})")
    rwnd = units.size_bytes(f"{field}.rwnd", t.rwnd)
    if t.init_cwnd < 1:
        raise InputError(f"{field}.init_cwnd: must be >= 1 segment (got {t.init_cwnd})")
    if t.init_ssthresh is not None and t.init_ssthresh < 2:
        raise InputError(f"{field}.init_ssthresh: must be >= 2 segments (got {t.init_ssthresh})")
    cfg = {
        "variant": t.variant,
        "mss": int(mss),
        "header_bytes": int(units.size_bytes(f"{field}.header", t.header)),
        "ack_bytes": int(units.size_bytes(f"{field}.ack_size", t.ack_size)),
        "init_cwnd": float(t.init_cwnd),
        "init_ssthresh": t.init_ssthresh,
        "rwnd_segments": max(1, int(rwnd // mss)),
        "min_rto_ns": _ns(f"{field}.min_rto", t.min_rto, positive=True),
        "max_rto_ns": _ns(f"{field}.max_rto", t.max_rto, positive=True),
        "init_rto_ns": _ns(f"{field}.init_rto", t.init_rto, positive=True),
        "delack": t.delack,
        "delack_ns": _ns(f"{field}.delack_timeout", t.delack_timeout, positive=True),
        "ecn": t.ecn,
        "trace_cwnd": t.trace_cwnd,
        "timestamps": t.timestamps,
    }
    if cfg["min_rto_ns"] > cfg["max_rto_ns"]:
        raise InputError(f"{field}.min_rto: must not exceed max_rto ({t.min_rto} > {t.max_rto})")
    return cfg, int(mss) + cfg["header_bytes"] + (12 if t.timestamps else 0)


def _dropfn_table(aqm: dict[str, Any], field: str, n_max: int) -> dict[str, Any]:
    """``dropfn`` by family: ``family`` with ``scale``, or with ``target_mean`` (and ``load``,
    default 1) to calibrate the scale so the M/M/1 mean queue is the target (seed 002). The
    shapes are defined once, in :mod:`aqmlab.theory.families`; the AQM receives the table."""
    from aqmlab.theory import dropfn as theory_dropfn
    from aqmlab.theory import families

    aqm = dict(aqm)
    fam = aqm.pop("family", None)
    scale = aqm.pop("scale", None)
    target = aqm.pop("target_mean", None)
    load = aqm.pop("load", None)
    if fam is None:
        for k, v in (("scale", scale), ("target_mean", target), ("load", load)):
            if v is not None:
                raise InputError(f"{field}.{k}: goes with {field}.family")
        if "table" in aqm:
            table = families.validate_table(aqm["table"], f"{field}.table")
            aqm["table"] = [float(x) for x in table]
        return aqm
    if "table" in aqm:
        raise InputError(f"{field}.table: give either a table or a family, not both")
    if not isinstance(fam, str) or fam not in families.FAMILIES:
        known = ", ".join(families.FAMILIES)
        raise InputError(f"{field}.family: unknown family {fam!r}; known: {known}")
    if scale is None:
        if target is None:
            raise InputError(
                f"{field}.scale: give scale, or target_mean (and load) to calibrate it"
            )
        scale = theory_dropfn.calibrate(fam, float(target), 1.0 if load is None else float(load))
    elif target is not None or load is not None:
        raise InputError(f"{field}.scale: give scale or target_mean, not both")
    aqm["table"] = [float(x) for x in families.table(fam, float(scale), n_max)]
    return aqm


def aqm_params(
    aqm: dict[str, Any],
    field: str = "aqm",
    n_max: int = 10_000,
    link: tuple[float, float] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Splits an ``[aqm]`` table into its name and its parameters in base units.

    Unit strings are converted by each parameter's kind (``duration``: seconds, ``rate``: bit/s,
    ``size``: bytes) as ``aqmlab list`` shows it. ``n_max`` bounds a tabulated dropping function.
    ``defaults = "ns2"`` starts from ns-2.35's parameter set (:mod:`aqmlab.ns2_defaults`), sized
    for ``link`` = (rate in bit/s, one-way delay in s); explicit parameters override it.
    """
    from aqmlab import algorithms, ns2_defaults

    preset = aqm.get("defaults", "aqmlab")
    if preset not in ns2_defaults.PRESETS:
        allowed = ", ".join(repr(p) for p in ns2_defaults.PRESETS)
        raise InputError(f"{field}.defaults: must be one of {allowed} (got {preset!r})")
    aqm = {k: v for k, v in aqm.items() if k != "defaults"}
    if preset == "ns2" and "name" in aqm:
        rate_bps, delay_s = link if link is not None else (10e6, 0.0)
        base = ns2_defaults.params(aqm["name"], rate_bps, delay_s, f"{field}.defaults")
        aqm = {**base, **aqm}
    if aqm.get("name") == "dropfn":
        aqm = _dropfn_table(aqm, field, n_max)
    if "name" not in aqm:
        raise InputError(f"{field}.name: is required (one of {', '.join(algorithms.names())})")
    name = aqm["name"]
    info = algorithms.get(name)
    if info is None:
        raise InputError(
            f"{field}.name: unknown AQM {name!r}; known: {', '.join(algorithms.names())}"
        )
    kinds = {p["name"]: p["kind"] for p in info["params"]}
    out: dict[str, Any] = {}
    for k, v in aqm.items():
        if k == "name":
            continue
        if k not in kinds:
            allowed = ", ".join(kinds) or "none"
            raise InputError(f"{field}.{k}: unknown parameter of {name}; allowed: {allowed}")
        kind = kinds[k]
        f = f"{field}.{k}"
        if kind == "duration" and isinstance(v, str):
            v = units.seconds(f, v)
        elif kind == "rate" and isinstance(v, str):
            v = units.rate_bps(f, v)
        elif kind == "size" and isinstance(v, str):
            v = units.size_bytes(f, v)
        elif kind in ("duration", "rate", "size") and not isinstance(v, bool):
            ex = {"duration": "'5ms'", "rate": "'10Mbps'", "size": "'1500B'"}[kind]
            raise InputError(f"{f}: {v!r} has no unit; write a {kind} like {ex}")
        elif kind in ("real", "int"):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InputError(f"{f}: must be a number (got {v!r})")
        elif kind == "bool" and not isinstance(v, bool):
            raise InputError(f"{f}: must be true or false (got {v!r})")
        elif kind == "choice" and not isinstance(v, str):
            raise InputError(f"{f}: must be a string (got {v!r})")
        elif kind == "list" and not (
            isinstance(v, list)
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
        ):
            raise InputError(f"{f}: must be a list of numbers")
        out[k] = v
    return name, out


class _Net:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.links: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}

    def node(self, name: str, kind: str) -> int:
        if name in self.index:
            raise InputError(f"topology: node name {name!r} is used twice")
        self.index[name] = len(self.nodes)
        self.nodes.append({"name": name, "kind": kind})
        return self.index[name]

    def link(self, name: str, a: int, b: int, rate: float, delay_ns: int, buf: tuple, **kw) -> int:
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
        return len(self.links) - 1


def build_config(sc: Scenario, seed: int | None = None) -> dict[str, Any]:
    """The network description for the simulator (see ``crates/sim/src/config.rs``)."""
    seed = sc.seed if seed is None else seed
    if seed < 0 or seed >= 2**64:
        raise InputError(f"seed: must be in [0, 2^64) (got {seed})")
    duration = _ns("duration", sc.duration, positive=True)
    warmup = _ns("warmup", sc.warmup)
    if duration <= warmup:
        raise InputError(
            "duration: must be longer than warmup "
            f"(got duration {sc.duration} <= warmup {sc.warmup})"
        )
    interval = _ns("output.sample_interval", sc.output.sample_interval, positive=True)
    if sc.output.max_samples < 16:
        raise InputError(f"output.max_samples: must be >= 16 (got {sc.output.max_samples})")
    topo = sc.topology
    rate = units.rate_bps("topology.rate", topo.rate)
    delay = _ns("topology.delay", topo.delay)
    buf = units.buffer("topology.buffer", topo.buffer)
    rrate = (
        units.rate_bps("topology.reverse_rate", topo.reverse_rate) if topo.reverse_rate else rate
    )
    rbuf = (
        units.buffer("topology.reverse_buffer", topo.reverse_buffer) if topo.reverse_buffer else buf
    )
    arate = units.rate_bps("topology.access_rate", topo.access_rate)
    abuf = units.buffer("topology.access_buffer", topo.access_buffer)
    adelays = topo.access_delay if isinstance(topo.access_delay, list) else [topo.access_delay]
    if not adelays:
        raise InputError("topology.access_delay: give at least one delay")
    adelays_ns = [_ns(f"topology.access_delay[{i}]", d) for i, d in enumerate(adelays)]

    tcp_cfgs = []
    for i, g in enumerate(sc.flows):
        tcp_cfgs.append(_tcp_config(sc.tcp, g.tcp, f"flows[{i}].tcp"))
    sizes = [sz for (_, sz), g in zip(tcp_cfgs, sc.flows, strict=True) for _ in range(g.count)]
    mean_pkt = round(sum(sizes) / len(sizes))

    aqm_name, aqm_par = aqm_params(
        sc.aqm, n_max=(buf[0] + 1) if buf[0] else 10_000, link=(rate, delay / 1e9)
    )
    from aqmlab import algorithms

    algorithms.check(aqm_name, aqm_par, rate, buf, mean_pkt, field="aqm")

    net = _Net()
    ra, rb = net.node("A", "router"), net.node("B", "router")
    monitor_all = sc.output.monitor_all_links
    bott = net.link(
        "bottleneck",
        ra,
        rb,
        rate,
        delay,
        buf,
        aqm={"name": aqm_name, "params": aqm_par},
        mean_pkt_bytes=mean_pkt,
        monitor=True,
    )
    rev = net.link("reverse", rb, ra, rrate, delay, rbuf, mean_pkt_bytes=40, monitor=monitor_all)
    n_flows = sum(g.count for g in sc.flows)
    if n_flows > 1_000_000:
        raise InputError(f"flows: at most 1000000 flows (got {n_flows})")

    # Hosts with their access links (both directions).
    hosts: dict[str, dict[str, int]] = {}

    def add_host(name: str, side: str, arate_h: float, adelay_ns: int) -> None:
        h = net.node(name, "host")
        router = ra if side == "left" else rb
        up = net.link(
            f"{name}-{'A' if side == 'left' else 'B'}",
            h,
            router,
            arate_h,
            adelay_ns,
            abuf,
            monitor=monitor_all,
        )
        down = net.link(
            f"{'A' if side == 'left' else 'B'}-{name}",
            router,
            h,
            arate_h,
            adelay_ns,
            abuf,
            monitor=monitor_all,
        )
        hosts[name] = {"node": h, "up": up, "down": down, "side": 0 if side == "left" else 1}

    rng = random.Random(seed)
    flows: list[dict[str, Any]] = []
    if topo.type == "dumbbell":
        for side in ("left", "right"):
            spec = getattr(topo, side)
            if spec is None:
                spec = n_flows
            if isinstance(spec, int):
                if spec < 1:
                    raise InputError(f"topology.{side}: must be at least 1 host (got {spec})")
                prefix = "L" if side == "left" else "R"
                spec = [Host(name=f"{prefix}{i}") for i in range(spec)]
            for j, hst in enumerate(spec):
                f = f"topology.{side}[{j}]"
                hr = units.rate_bps(f"{f}.rate", hst.rate) if hst.rate else arate
                hd = _ns(f"{f}.delay", hst.delay) if hst.delay else adelays_ns[j % len(adelays_ns)]
                add_host(hst.name, side, hr, hd)
        left = [n for n, h in hosts.items() if h["side"] == 0]
        right = [n for n, h in hosts.items() if h["side"] == 1]
        k = 0
        for i, g in enumerate(sc.flows):
            if g.rtt is not None:
                raise InputError(f"flows[{i}].rtt: only for topology.type = 'single-bottleneck'")
            srcs = _endpoints(g.src, left, right, hosts, f"flows[{i}].src")
            dsts = _endpoints(g.dst, left, right, hosts, f"flows[{i}].dst")
            pairs = (
                [(s, d) for s in srcs for d in dsts]
                if g.pairing == "all-pairs"
                else [
                    (srcs[j % len(srcs)], dsts[j % len(dsts)])
                    for j in range(max(len(srcs), len(dsts)))
                ]
            )
            for j in range(g.count):
                s, d = pairs[j % len(pairs)]
                if hosts[s]["side"] == hosts[d]["side"]:
                    raise InputError(f"flows[{i}]: src {s} and dst {d} are on the same side")
                flows.append(
                    _flow(sc, g, i, j, k, s, d, hosts, bott, rev, tcp_cfgs[i][0], rng, rate)
                )
                k += 1
    else:
        if topo.left is not None or topo.right is not None:
            raise InputError("topology.left/right: only for topology.type = 'dumbbell'")
        k = 0
        for i, g in enumerate(sc.flows):
            if g.rtt is None:
                rtt = 2 * (delay + 2 * adelays_ns[0])
            else:
                rtt = _ns(f"flows[{i}].rtt", g.rtt, positive=True)
            one_way_access = (rtt / 2 - delay) / 2
            if one_way_access < 0:
                raise InputError(
                    f"flows[{i}].rtt: must be at least twice the bottleneck delay "
                    f"({2 * delay / 1e6:g} ms), got {g.rtt}"
                )
            for j in range(g.count):
                s, d = f"S{k}", f"D{k}"
                add_host(s, "left", arate, round(one_way_access))
                add_host(d, "right", arate, round(one_way_access))
                flows.append(
                    _flow(sc, g, i, j, k, s, d, hosts, bott, rev, tcp_cfgs[i][0], rng, rate)
                )
                k += 1
    return {
        "seed": seed,
        "duration_ns": duration,
        "warmup_ns": warmup,
        "sample_interval_ns": interval,
        "max_samples": sc.output.max_samples,
        "nodes": net.nodes,
        "links": net.links,
        "flows": flows,
    }


def _poisson(g: FlowGroup, i: int, bottleneck_bps: float) -> dict[str, Any]:
    f = f"flows[{i}]"
    size = units.size_bytes(f"{f}.packet_size", g.packet_size)
    if (g.load is None) == (g.rate is None):
        raise InputError(f"{f}.load: a poisson flow needs exactly one of load or rate")
    if g.load is not None:
        if not g.load > 0:
            raise InputError(f"{f}.load: must be > 0 (got {g.load})")
        bps = g.load * bottleneck_bps
    else:
        bps = units.rate_bps(f"{f}.rate", g.rate)
    return {
        "rate_pps": bps / (8 * size),
        "mean_size_bytes": size,
        "exponential": g.size_distribution == "exponential",
    }


def _endpoints(spec: str, left: list[str], right: list[str], hosts: dict, field: str) -> list[str]:
    if spec == "left":
        return left
    if spec == "right":
        return right
    names = [s.strip() for s in spec.split(",")]
    for n in names:
        if n not in hosts:
            raise InputError(f"{field}: unknown host {n!r}; use 'left', 'right' or host names")
    return names


def _flow(sc, g, i, j, k, s, d, hosts, bott, rev, tcp, rng, bott_bps) -> dict[str, Any]:
    hs, hd = hosts[s], hosts[d]
    if hs["side"] == 0:
        path = [hs["up"], bott, hd["down"]]
        rpath = [hd["up"], rev, hs["down"]] if g.type == "tcp" else []
    else:
        raise InputError(f"flows[{i}].src: {s} must be on the left (the AQM guards A -> B)")
    start = _ns(f"flows[{i}].start", g.start)
    spread = _ns(f"flows[{i}].start_spread", g.start_spread)
    if spread > 0:
        start += rng.randrange(spread + 1)
    flow: dict[str, Any] = {
        "name": f"{g.name or 'g' + str(i)}.{j}",
        "src": hs["node"],
        "dst": hd["node"],
        "path": path,
        "rev_path": rpath,
        "tcp": tcp,
        "start_ns": start,
    }
    if g.type == "poisson":
        flow["poisson"] = _poisson(g, i, bott_bps)
    elif g.load is not None or g.rate is not None:
        raise InputError(f"flows[{i}].load: only for type = 'poisson' flows")
    if g.size is not None:
        flow["size_bytes"] = math.ceil(units.size_bytes(f"flows[{i}].size", g.size))
    if g.profile is not None:
        flow["profile"] = {
            "rate_bps": round(units.rate_bps(f"flows[{i}].profile.rate", g.profile.rate)),
            "burst_bytes": round(units.size_bytes(f"flows[{i}].profile.burst", g.profile.burst)),
        }
    return flow
