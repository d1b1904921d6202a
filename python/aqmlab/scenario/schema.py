"""Scenario files: what a run simulates, in the user's words and units.

A scenario is TOML (or the same structure built in Python). It is validated by pydantic models whose
errors are turned into one line naming the field; then :func:`build_config` writes the network
description the Rust simulator runs (nodes, links, flows with static paths, base units).
See ``docs/scenarios.md`` for the format.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from aqmlab.errors import InputError, show
from aqmlab.scenario import algorithms, capacity, limits, ns2_defaults, topology, traffic, units
from aqmlab.scenario.capacity import RateSpec, RateStep
from aqmlab.scenario.topology import Host
from aqmlab.scenario.units import (
    BufferSize,
    NonNegativeSeconds,
    PositiveSeconds,
    Rate,
    Seconds,
    Size,
)

# Fields with units (types from :mod:`aqmlab.scenario.units`) are parsed once, here, defaults
# included (``validate_default``): a model holds numbers in base units (bit/s, seconds, bytes;
# :class:`aqmlab.scenario.units.Quantity`) that dump and print as the user wrote them.
_STRICT = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)


class Node(BaseModel):
    """A node of a general topology."""

    model_config = _STRICT
    name: str
    kind: Literal["host", "router"] = "router"


class LinkDir(BaseModel):
    """Overrides for the reverse direction (``to -> from``) of a general link."""

    model_config = _STRICT
    rate: RateSpec | None = None
    rate_repeat: PositiveSeconds | None = None
    trace: str | None = None
    delay: Seconds | None = None
    buffer: BufferSize | None = None
    aqm: dict[str, Any] | None = None
    monitor: StrictBool | None = None


class Link(BaseModel):
    """A link of a general topology: duplex unless ``duplex = false``; ``aqm`` guards the
    direction ``from -> to`` (and ``to -> from`` unless ``reverse`` says otherwise)."""

    model_config = _STRICT
    from_: str = Field(alias="from")
    to: str
    rate: RateSpec | None = None
    rate_repeat: PositiveSeconds | None = None
    trace: str | None = None
    delay: Seconds
    buffer: BufferSize = 1000
    aqm: dict[str, Any] | None = None
    monitor: StrictBool = False
    duplex: StrictBool = True
    reverse: LinkDir | None = None


class Topology(BaseModel):
    """The network (docs/scenarios.md, "Topologies"): a ``dumbbell`` (hosts on both sides of one
    bottleneck), a ``single-bottleneck`` (one host pair per flow whose access delays make the
    flow's base round-trip time its ``rtt``), a ``parking-lot`` (``hops`` bottlenecks in a chain,
    ``cross`` hosts per side for each hop's cross traffic) or a ``general`` network (explicit
    ``nodes`` and ``links``).
    """

    model_config = _STRICT
    type: Literal["dumbbell", "single-bottleneck", "parking-lot", "general"] = "dumbbell"
    rate: RateSpec = "100Mbps"
    rate_repeat: PositiveSeconds | None = None
    trace: str | None = None
    delay: Seconds = "2ms"
    buffer: BufferSize = 300
    reverse_rate: RateSpec | None = None
    reverse_rate_repeat: PositiveSeconds | None = None
    reverse_trace: str | None = None
    reverse_buffer: BufferSize | None = None
    reverse_aqm: dict[str, Any] | None = None
    access_rate: Rate = "1Gbps"
    access_delay: Seconds | list[Seconds] = "1ms"
    access_buffer: BufferSize = 10000
    left: int | list[Host] | None = None
    right: int | list[Host] | None = None
    hops: int | None = None
    cross: int = 1
    nodes: list[Node] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)


class Tcp(BaseModel):
    """TCP settings (defaults for every flow; a flow group may override any of them)."""

    model_config = _STRICT
    variant: Literal["newreno", "reno", "sack", "cubic"] = "newreno"
    mss: Size = "1460B"
    header: Size = "40B"
    ack_size: Size = "40B"
    # Not validated as a default: it dumps as 10, not 10.0 (a run's scenario.json and the sweep
    # cache keys made from it stay as they were).
    init_cwnd: float = Field(10, validate_default=False)
    init_ssthresh: float | None = None
    rwnd: Size = "4MB"
    # "linux": the receiver advertises Linux 6.18's window (about 64 KB at first, grown once per
    # receiver RTT, narrowed by data held out of order; docs/transports.md) instead of rwnd.
    rwnd_model: Literal["fixed", "linux"] = "fixed"
    min_rto: PositiveSeconds = "200ms"
    max_rto: PositiveSeconds = "60s"
    init_rto: PositiveSeconds = "1s"
    delack: StrictBool = False
    delack_timeout: PositiveSeconds = "40ms"
    # true: classic ECN, ECT(0) (RFC 3168); "l4s": ECT(1), the L4S identifier (RFC 9331).
    ecn: StrictBool | Literal["l4s"] = False
    trace_cwnd: StrictBool = False
    timestamps: StrictBool = False
    handshake: StrictBool = False
    # With the handshake: resolve the receiver's address (ARP) across the path's middle links
    # before the SYN, as on aqmlab's testbed (docs/transports.md, "Address resolution").
    resolve: StrictBool = False
    limited_transmit: StrictBool = False
    # SACK senders outside fast recovery: "pipe" (Linux, ns-3: the unSACKed segments in flight)
    # or "span" (ns-2's Sack1: from snd_una).
    sack_window: Literal["pipe", "span"] = "pipe"
    cc: str | None = None  # congestion controller by name (Rust's tcp::cc::REGISTRY checks it)
    recovery: Literal["reno", "newreno", "sack", "rack"] | None = None
    pacing: StrictBool = False
    # GSO bursts as Linux's tcp_tso_autosize (about 1 ms of the pacing rate at once) for a paced
    # sender; an unpaced one already sends what its window allows at once.
    gso: StrictBool = False
    # A paced sender that leaves after its time takes up to half the burst's time off the next
    # gap, as Linux's tcp_update_skb_after_send ("take into account OS jitter"); false: the
    # pacing clock restarts from the late departure (docs/transports.md).
    pacing_credit: StrictBool = False
    # What the sender hands down at one instant (one send opportunity, a GSO burst) leaves it
    # together a uniform random time in [0, send_jitter) later, order kept: Floyd and
    # Jacobson's random processing time against drop-tail phase effects (ns-2's overhead_;
    # docs/transports.md). "0s": segments leave at once.
    send_jitter: NonNegativeSeconds = "0s"
    # The receiver compresses SACKs as Linux does (tcp_comp_sack_*: after 3 immediate duplicate
    # ACKs at one rcv_nxt, the rest held up to min(1 ms, receiver RTT / 20) or 44 of them);
    # false: every out-of-order segment is acknowledged at once (docs/transports.md).
    sack_compress: StrictBool = False

    @field_validator("send_jitter")
    @classmethod
    def _send_jitter(cls, v: float) -> float:
        if v > 1.0:
            raise ValueError(f"at most 1s (got {v:g}s)")
        return v

    # AccECN (RFC 9768): the sender asks for it in its SYN (None: when its cc needs it, Prague);
    # the ECN feedback the receiver supports (RFC 9768 Table 2; "accecn" answers an RFC 3168
    # sender with RFC 3168 feedback, as before).
    accecn: StrictBool | None = None
    receiver_ecn: Literal["accecn", "ecn", "off"] = "accecn"


class Profile(BaseModel):
    """An edge marker's token bucket: packets within it are IN, the rest OUT (ModRED, RIO)."""

    model_config = _STRICT
    rate: Rate
    burst: Size


class SizeShare(BaseModel):
    """A packet or object size with its share (the shares of a table sum to 1)."""

    model_config = _STRICT
    size: Size
    share: float


class FlowGroup(BaseModel):
    """``count`` flows with the same settings (docs/scenarios.md, "Traffic"): TCP flows (bulk,
    or finite with ``size``); open-loop sources: ``poisson`` (Poisson packets), ``cbr``,
    ``onoff`` (exponential or Pareto on/off as ns-2's Traffic/Exponential and Traffic/Pareto),
    offered ``load`` (fraction of the bottleneck rate) or ``rate`` per flow; ``web`` objects (a
    finite TCP transfer each) in sessions arriving as a Poisson process of ``arrival_rate`` per
    second, ``objects`` per session one after another with ``think_time`` between them, with
    Pareto (``object_size`` mean, ``shape``) or tabulated (``size_table``) sizes."""

    model_config = _STRICT
    type: Literal["tcp", "poisson", "cbr", "onoff", "web", "probe"] = "tcp"
    count: int = 1
    load: float | None = None
    rate: Rate | None = None
    packet_size: Size = "1000B"
    packet_sizes: list[SizeShare] | None = None
    size_distribution: Literal["exponential", "fixed"] = "exponential"
    on_time: PositiveSeconds = "500ms"
    off_time: PositiveSeconds = "500ms"
    distribution: Literal["exponential", "pareto"] = "exponential"
    shape: float | None = None
    arrival_rate: float | None = None
    object_size: Size = "50kB"
    size_table: list[SizeShare] | None = None
    objects: int | float = 1
    objects_distribution: Literal["fixed", "geometric"] = "fixed"
    think_time: NonNegativeSeconds = "0s"
    think_distribution: Literal["exponential", "fixed"] = "exponential"
    src: str = "left"
    dst: str = "right"
    pairing: Literal["parallel", "all-pairs"] = "parallel"
    route: list[str] | None = None
    reverse_route: list[str] | None = None
    start: Seconds = "0s"
    start_spread: Seconds = "0s"
    stop: Seconds | None = None
    rtt: PositiveSeconds | None = None
    size: Size | None = None
    name: str | None = None
    profile: Profile | None = None
    tcp: dict[str, Any] = Field(default_factory=dict)
    # Open-loop sources: the ECN codepoint of their packets (TCP flows: tcp.ecn).
    ecn: Literal["not-ect", "ect0", "ect1"] | None = None
    # type = "probe" (aqmlab.scenario.probe): one packet_size packet (default 64B) every
    # interval, echoed.
    interval: Seconds = "10ms"

    @model_validator(mode="before")
    @classmethod
    def _probe_size(cls, data: Any) -> Any:
        """A latency probe's packets are 64 B unless given (Flent's ping; aqmlab.scenario.probe)."""
        if isinstance(data, dict) and data.get("type") == "probe" and "packet_size" not in data:
            return {**data, "packet_size": "64B"}
        return data

    @field_validator("count")
    @classmethod
    def _count(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"must be at least 1 (got {v})")
        return v

    @field_validator("objects", mode="before")
    @classmethod
    def _objects(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"must be a number of objects per session (got {show(v)})")
        return v


class Output(BaseModel):
    """What a run records."""

    model_config = _STRICT
    sample_interval: PositiveSeconds = "10ms"
    max_samples: int = 200_000
    monitor_all_links: StrictBool = False
    flow_series: StrictBool = False
    #: Links whose event log (enqueue, dequeue, drop, mark) is written as
    #: ``events/<link>.parquet`` (python/aqmlab/running/events.py).
    events: list[str] = Field(default_factory=list)
    #: Links whose departing packets are written as ``pcap/<link>.pcap`` (crates/sim/src/pcap.rs).
    pcap: list[str] = Field(default_factory=list)


class Metrics(BaseModel):
    """Parameters of the derived metrics (docs/metrics.md)."""

    model_config = _STRICT
    fixed_path_delay: Seconds = "0ms"
    ie: float = 0.0
    bpl: float = 4.3
    settling_band: float = 0.1
    settling_smoothing: Seconds = "1s"
    settling_final_fraction: float = 0.2

    @field_validator("settling_band")
    @classmethod
    def _band(cls, v: float) -> float:
        if not v > 0:  # checked before the run, not after it (issue 19)
            raise ValueError(f"must be > 0 (a relative half-width, e.g. 0.1; got {v})")
        return v

    @field_validator("ie")
    @classmethod
    def _ie(cls, v: float) -> float:
        if not 0 <= v <= 95:
            raise ValueError(f"must be in [0, 95] (ITU-T G.113 equipment impairment; got {v})")
        return v

    @field_validator("bpl")
    @classmethod
    def _bpl(cls, v: float) -> float:
        if not v > 0:
            raise ValueError(f"must be > 0 (ITU-T G.113 packet-loss robustness; got {v})")
        return v

    @field_validator("settling_final_fraction")
    @classmethod
    def _final(cls, v: float) -> float:
        if not 0 < v <= 1:
            raise ValueError(f"must be in (0, 1] (a fraction of the run; got {v})")
        return v


class Scenario(BaseModel):
    """A whole scenario."""

    model_config = _STRICT
    name: str = "scenario"
    description: str = ""
    duration: PositiveSeconds = "60s"
    warmup: Seconds = "10s"
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
            part = str(p) if len(str(p)) <= 40 else show(str(p), 40)
            out += ("." if out else "") + part
    return out


def _is_type_tag(p: object) -> bool:
    """Whether a location component is pydantic's name of a union member (``int``,
    ``list[Host]``), not a field."""
    return isinstance(p, str) and (p in ("int", "str", "float", "bool", "none") or "[" in p)


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
        models = (Topology, Tcp, FlowGroup, Output, Host, Profile, Metrics, Node, Link, LinkDir)
        for cand in (*models, SizeShare, RateStep):
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


def _first_error(errors: list[Any]) -> Any:
    """The error to report: the first, unless it is a union member's type mismatch
    (``access_delay = ["1ms", "x"]`` is not a string) and another member of the same field
    failed on a value (``access_delay[1]``: ``'x'`` is not a duration), which says more."""
    err = errors[0]
    loc = tuple(err["loc"])
    tag = next((k for k, p in enumerate(loc) if _is_type_tag(p)), None)
    if tag is None or not err["type"].endswith("_type"):
        return err
    for other in errors[1:]:
        if tuple(other["loc"])[:tag] == loc[:tag] and other["type"] == "value_error":
            return other
    if isinstance(err.get("input"), list | dict):
        # A table or list written for a union with a structured member (a rate schedule's
        # steps): that member's missing or unknown key says more than "not a string".
        for other in errors[1:]:
            if tuple(other["loc"])[:tag] == loc[:tag] and other["type"] in (
                "missing",
                "extra_forbidden",
            ):
                return other
    return err


def _one_line(e: ValidationError) -> str:
    err = _first_error(e.errors())
    loc = tuple(err["loc"])
    if err["type"] != "extra_forbidden":  # pydantic's union member tags are not fields
        loc = tuple(p for p in loc if not _is_type_tag(p)) or loc
    elif len(loc) > 1:  # the unknown key itself may look like a tag ("int"); the path cannot
        loc = (*(p for p in loc[:-1] if not _is_type_tag(p)), loc[-1])
    field = _fmt_loc(loc) or "scenario"
    if err["type"] == "extra_forbidden":
        model = _model_at(loc)
        allowed = ", ".join(model.model_fields) if model else "see docs/scenarios.md"
        hint = _lives_elsewhere(str(loc[-1]), list(model.model_fields) if model else []) or ""
        return f"{field}: unknown field{hint}; allowed here: {allowed}"
    if err["type"] == "string_type":
        hint = _unit_hint(field, str(loc[-1]), err.get("input"))
        if hint:
            return hint
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "literal_error":
        got = err.get("input")
        expected = [str(x) for x in (err.get("ctx") or {}).get("expected", "").split(" or ")]
        choices = [x.strip().strip("'").strip(",") for e in expected for x in e.split(", ")]
        return f"{field}: {msg} (got {show(got)}){_did_you_mean(got, choices)}"
    return f"{field}: {msg}"


_RATE_FIELDS = {"rate", "access_rate", "reverse_rate"}
_SIZE_FIELDS = {"mss", "header", "ack_size", "rwnd", "packet_size", "object_size", "size", "burst"}
_TIME_FIELDS = {
    *("delay", "access_delay", "duration", "warmup", "start", "start_spread", "stop", "rtt"),
    *("interval", "on_time", "off_time", "think_time", "min_rto", "max_rto", "init_rto"),
    *("delack_timeout", "sample_interval", "fixed_path_delay", "settling_smoothing"),
}


def _unit_hint(field: str, key: str, value: Any) -> str | None:
    """A bare number where a quantity with a unit is expected (``rate = 100``): the same message
    as the string ``"100"`` gets (``write e.g. '100Mbps'``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    parse = (
        units.rate_bps
        if key in _RATE_FIELDS
        else units.size_bytes
        if key in _SIZE_FIELDS
        else units.seconds
        if key in _TIME_FIELDS
        else None
    )
    if parse is None:
        return None
    try:
        parse(field, str(value))
    except InputError as e:
        return f"{e} (a quantity with its unit, as a string)"
    return None


# Settings that people write where they do not live here (tc, ns-2 and ns-3 habits): the place
# they live in a scenario. Only used for a key that is not a field or parameter of its own table.
_ELSEWHERE = {
    "limit": "the queue's limit is topology.buffer (packets, or a size like '450kB')",
    "qlen": "the queue's limit is topology.buffer (packets, or a size like '450kB')",
    "queue_limit": "the queue's limit is topology.buffer (packets, or a size like '450kB')",
    "buffer": "the queue's limit is topology.buffer (packets, or a size like '450kB')",
    "bandwidth": "the link's rate is topology.rate (e.g. '100Mbps')",
    "rate": "the link's rate is topology.rate (e.g. '100Mbps')",
    "delay": "the link's delay is topology.delay (e.g. '2ms')",
    "ecn": 'ECN-capable senders are set by tcp.ecn = true (ECT(0)) or "l4s" (ECT(1)); '
    'open-loop sources by their group\'s ecn = "ect0" or "ect1"',
    "min": "tc's min is min_th (packets)",
    "max": "tc's max is max_th (packets)",
    "probability": "tc's probability is max_p",
    "avpkt": "tc's avpkt is mean_pkt_size",
}


def _did_you_mean(got: Any, choices: list[str]) -> str:
    """``"; did you mean 'parking-lot'?"`` for a close misspelling of one of ``choices``."""
    import difflib

    if not isinstance(got, str) or not choices:
        return ""
    close = difflib.get_close_matches(got.lower(), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _lives_elsewhere(key: str, own: list[str]) -> str | None:
    """Where a setting written in the wrong table lives (``"; the queue's limit is
    topology.buffer ..."``), or a close spelling of a known one (``" (did you mean 'buffer'?)"``).
    """
    if key in own:
        return None
    where = _ELSEWHERE.get(key)
    if where is not None:
        # tc's RED names: only when this table has the parameter they stand for.
        target = where.rsplit(" is ", 1)[-1].split(" ")[0]
        if where.startswith("tc's") and target not in own:
            where = None
        elif key in ("buffer", "rate", "delay") and "type" in own:
            where = None  # inside [topology] itself these are fields, not misplaced
    if where is not None:
        return f"; {where}"
    import difflib

    close = difflib.get_close_matches(key, own, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else None


#: Deepest nesting of tables and arrays a scenario may have (the real format needs 4).
MAX_DEPTH = 32


def check_values(data: Any) -> None:
    """Walks a scenario's raw structure (iteratively: no recursion limit to hit) and refuses, in
    one line naming the field: nesting deeper than :data:`MAX_DEPTH`, a NaN or infinite number
    (no setting takes one; the simulator's JSON cannot carry it), a blank key and a key or value
    that is not TOML data (in a dict built in Python)."""
    stack: list[tuple[Any, tuple, int]] = [(data, (), 0)]
    while stack:
        v, loc, depth = stack.pop()
        field = _fmt_loc(loc)
        if depth > MAX_DEPTH:
            names = [i for i, p in enumerate(loc) if isinstance(p, str)]
            top = _fmt_loc(loc[: names[1] + 1] if len(names) > 1 else loc[:1])  # not the whole path
            raise InputError(
                f"{top or 'scenario'}: nested deeper than {MAX_DEPTH} tables or arrays; "
                "see docs/scenarios.md for the format"
            )
        if isinstance(v, float) and v != v:
            raise InputError(f"{field or 'scenario'}: must be a finite number (got nan)")
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            raise InputError(f"{field or 'scenario'}: must be a finite number (got {v})")
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise InputError(f"{field or 'scenario'}: keys must be strings (got {show(k)})")
                if not k.strip():
                    inside = field or "the top level of the scenario"
                    raise InputError(
                        f"{inside}: a blank key ({show(k)}) is not a setting; "
                        "remove it or name the setting"
                    )
                stack.append((x, (*loc, k), depth + 1))
        elif isinstance(v, list | tuple):
            for i, x in enumerate(v):
                stack.append((x, (*loc, i), depth + 1))


def from_dict(data: dict[str, Any]) -> Scenario:
    """Validates a scenario given as a dict (the TOML structure)."""
    if not isinstance(data, dict):
        raise InputError(f"scenario: must be a table of settings (got {type(data).__name__})")
    check_values(data)
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise InputError(_one_line(e)) from None
    except RecursionError:  # cannot happen after check_values; kept as a one-line refusal
        raise InputError(f"scenario: nested deeper than {MAX_DEPTH} levels") from None


def load(path: str | Path) -> Scenario:
    """Reads and validates a TOML scenario file.

    Refused in one line: a missing or unreadable file, one larger than
    :data:`aqmlab.scenario.limits.MAX_SCENARIO_BYTES`, one that is not UTF-8 text (binary garbage),
    invalid
    TOML, and a file with no settings at all (empty or only comments: running every default
    silently would hide a wrong file; ``aqmlab demo`` runs the default scenario).
    """
    p = Path(path)
    name = show(str(p))
    try:
        with p.open("rb") as fh:
            raw = fh.read(limits.MAX_SCENARIO_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"scenario: no such file: {name}") from None
    except OSError as e:
        raise InputError(f"scenario: cannot read {name}: {e.strerror}") from None
    if len(raw) > limits.MAX_SCENARIO_BYTES:
        raise InputError(
            f"scenario: {name} is larger than {limits.MAX_SCENARIO_BYTES // 2**20} MiB; "
            "a scenario is a small TOML file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"scenario: {name} is not a text file (byte 0x{raw[e.start]:02x} at offset {e.start} "
            "is not UTF-8); a scenario is a TOML text file"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"scenario: {show(p.name)} is not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses on nested arrays and inline tables
        raise InputError(
            f"scenario: {show(p.name)} nests arrays or tables too deeply to read "
            f"(a scenario needs at most {MAX_DEPTH} levels)"
        ) from None
    if not data:
        raise InputError(
            f"scenario: {name} has no settings (it is empty or only comments); write at least one, "
            "e.g. name = \"...\", to run every default ('aqmlab demo' runs the default scenario)"
        )
    if "python" in text:  # a Python AQM (aqmlab.pyaqm): its file is read, next to this one
        from aqmlab.pyaqm import load as pyaqm

        pyaqm.resolve_tables(data, p.parent)
    capacity.resolve_traces(data, p.parent)
    return from_dict(data)


# ---------------------------------------------------------------------------------------------
# From a scenario to the simulator's network description.


def _ns(seconds: float) -> int:
    """A duration held in seconds (a validated field) in whole nanoseconds."""
    return round(seconds * 1e9)


def _tcp_config(base: Tcp, over: dict[str, Any], field: str) -> tuple[dict[str, Any], int]:
    try:  # a group's overrides validated with the [tcp] table they override
        t = Tcp.model_validate({**base.model_dump(), **over}) if over else base
    except ValidationError as e:
        raise InputError(f"{field}.{_one_line(e)}") from None
    mss = t.mss
    if mss != int(mss) or mss < 1:
        raise InputError(
            f"{field}.mss: must be a whole number of bytes >= 1 (got {show(mss.text)})"
        )
    rwnd = t.rwnd
    if t.init_cwnd < 1:
        raise InputError(f"{field}.init_cwnd: must be >= 1 segment (got {t.init_cwnd})")
    if t.init_ssthresh is not None and t.init_ssthresh < 2:
        raise InputError(f"{field}.init_ssthresh: must be >= 2 segments (got {t.init_ssthresh})")
    cfg = {
        "variant": t.variant,
        "mss": int(mss),
        "header_bytes": int(t.header),
        "ack_bytes": int(t.ack_size),
        "init_cwnd": float(t.init_cwnd),
        "init_ssthresh": t.init_ssthresh,
        "rwnd_segments": max(1, int(rwnd // mss)),
        "min_rto_ns": _ns(t.min_rto),
        "max_rto_ns": _ns(t.max_rto),
        "init_rto_ns": _ns(t.init_rto),
        "delack": t.delack,
        "delack_ns": _ns(t.delack_timeout),
        "ecn": t.ecn is True or t.ecn == "l4s",
        "trace_cwnd": t.trace_cwnd,
        "timestamps": t.timestamps,
        "handshake": t.handshake,
        "limited_transmit": t.limited_transmit,
        "cc": t.cc,
        "recovery": t.recovery,
        "pacing": t.pacing,
    }
    if t.ecn == "l4s":  # only then, so that classic configurations stay as they were
        cfg["ect1"] = True
    if t.gso:  # only then, so that other configurations stay as they were
        cfg["gso"] = True
    if t.pacing_credit:  # only then, so that other configurations stay as they were
        cfg["pacing_credit"] = True
    if t.resolve:  # only then, so that other configurations stay as they were
        cfg["resolve"] = True
    if t.send_jitter > 0:  # only then, so that other configurations stay as they were
        cfg["send_jitter_ns"] = _ns(t.send_jitter)
    if t.rwnd_model == "linux":  # only then, so that other configurations stay as they were
        cfg["linux_rwnd"] = True
    if t.sack_window == "span":  # only then, so that other configurations stay as they were
        cfg["sack_window_span"] = True
    if t.sack_compress:  # only then, so that other configurations stay as they were
        cfg["sack_compress"] = True
    if t.accecn is not None:
        cfg["accecn"] = t.accecn
    if t.receiver_ecn != "accecn":
        cfg["receiver_ecn"] = t.receiver_ecn
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
    for k, v in (("scale", scale), ("target_mean", target), ("load", load)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            what = "packets" if k == "target_mean" else "a number"
            raise InputError(f"{field}.{k}: must be a positive number ({what}; got {show(v)})")
    if "table" in aqm:
        raise InputError(f"{field}.table: give either a table or a family, not both")
    if not isinstance(fam, str) or fam not in families.FAMILIES:
        known = ", ".join(families.FAMILIES)
        raise InputError(f"{field}.family: unknown family {show(fam)}; known: {known}")
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
    ``defaults = "ns2"`` starts from ns-2.35's parameter set
    (:mod:`aqmlab.scenario.ns2_defaults`), sized
    for ``link`` = (rate in bit/s, one-way delay in s); explicit parameters override it.
    """
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
        hint = _did_you_mean(name, algorithms.names())
        raise InputError(
            f"{field}.name: unknown AQM {show(name)}{hint}; known: {', '.join(algorithms.names())}"
        )
    kinds = {p["name"]: p["kind"] for p in info["params"]}
    out: dict[str, Any] = {}
    if "queue_aqm" in kinds:
        # A flow-queueing scheduler (`fq`): the per-queue AQM's parameters are the sub-table
        # [aqm.queue], checked as that AQM's own and passed on as `queue.<name>`.
        aqm = dict(aqm)
        queue = aqm.pop("queue", {})
        if not isinstance(queue, dict):
            raise InputError(
                f"{field}.queue: must be a table of {aqm.get('queue_aqm', 'codel')}'s parameters"
            )
        qname = aqm.get("queue_aqm", "codel")
        if not isinstance(qname, str) or algorithms.get(qname) is None or qname in _SCHEDULERS:
            known = ", ".join(n for n in algorithms.names() if n not in _SCHEDULERS)
            raise InputError(
                f"{field}.queue_aqm: must name an AQM of the registry (got {show(qname)}); "
                f"known: {known}"
            )
        _, qpar = aqm_params(
            {**queue, "name": qname}, field=f"{field}.queue", n_max=n_max, link=link
        )
        out.update({f"queue.{k}": v for k, v in qpar.items()})
    for k, v in aqm.items():
        if k == "name":
            continue
        if k not in kinds:
            allowed = ", ".join(kinds) or "none"
            hint = _lives_elsewhere(str(k), list(kinds)) or ""  # aqm.limit -> topology.buffer
            raise InputError(
                f"{field}.{show(k)[1:-1]}: unknown parameter of {name}{hint}; allowed: {allowed}"
            )
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
            raise InputError(f"{f}: {show(v)} has no unit; write a {kind} like {ex}")
        elif kind in ("real", "int"):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InputError(f"{f}: must be a number (got {show(v)})")
        elif kind == "bool" and not isinstance(v, bool):
            raise InputError(f"{f}: must be true or false (got {show(v)})")
        elif kind == "choice" and not isinstance(v, str):
            raise InputError(f"{f}: must be a string (got {show(v)})")
        elif kind == "list" and not (
            isinstance(v, list)
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
        ):
            raise InputError(f"{f}: must be a list of numbers")
        out[k] = v
    _check_periods(name, out, field)
    return name, out


#: Queue disciplines that hold the packets themselves: not an AQM of one flow queue of `fq`.
_SCHEDULERS = ("fq", "fq_codel", "fq_pie", "cake", "fq_cobalt", "dualpi2")


#: Timer-driven update periods (s) and sampling rates (Hz) of the AQMs: each period costs the
#: simulator one event, so a 1 ns period hangs a run (issue 19). The bound, 10 us, is 1,500 times
#: shorter than PIE's 15 ms (RFC 8033 s. 4.2) and shorter than one 1500 B packet at 1 Gb/s.
MIN_UPDATE_PERIOD_S = 10e-6
_PERIODS = {
    "pie": "t_update",
    "fq_pie": "tupdate",
    "rem": "interval",
    "ared": "interval",
    "laq": "interval",
}
_PERIODS_PAQM = {"paqm": "interval"}
_RATES_HZ = {"pi": "sample_hz", "anaqm": "sample_hz"}


def _check_periods(name: str, par: dict[str, Any], field: str) -> None:
    """An AQM's update period within :data:`MIN_UPDATE_PERIOD_S` (one line naming it)."""
    key = _PERIODS.get(name) or _PERIODS_PAQM.get(name)
    if (
        key in par
        and isinstance(par[key], int | float)
        and par[key] < MIN_UPDATE_PERIOD_S * (1 - 1e-9)
    ):
        raise InputError(
            f"{field}.{key}: the update period of {name} must be at least "
            f"{MIN_UPDATE_PERIOD_S * 1e6:g} us (got {par[key]:g} s)"
        )
    key = _RATES_HZ.get(name)
    if (
        key in par
        and isinstance(par[key], int | float)
        and par[key] > (1 + 1e-9) / MIN_UPDATE_PERIOD_S
    ):
        raise InputError(
            f"{field}.{key}: the sampling rate of {name} must be at most "
            f"{1 / MIN_UPDATE_PERIOD_S:g} Hz (a period of {MIN_UPDATE_PERIOD_S * 1e6:g} us or "
            f"more; got {par[key]:g} Hz)"
        )


def _run_fields(sc: Scenario, seed: int) -> dict[str, Any]:
    """Seed, duration, warm-up and sampling, checked, in base units."""
    if seed < 0 or seed >= 2**64:
        raise InputError(f"seed: must be in [0, 2^64) (got {show(seed)})")
    duration = _ns(sc.duration)
    warmup = _ns(sc.warmup)
    if duration <= warmup:
        raise InputError(
            "duration: must be longer than warmup "
            f"(got duration {sc.duration} <= warmup {sc.warmup})"
        )
    interval = _ns(sc.output.sample_interval)
    if sc.output.max_samples < 16:
        raise InputError(f"output.max_samples: must be >= 16 (got {sc.output.max_samples})")
    return {
        "seed": seed,
        "duration_ns": duration,
        "warmup_ns": warmup,
        "sample_interval_ns": interval,
        "max_samples": sc.output.max_samples,
    }


def _link_aqm(
    table: dict[str, Any], field: str, rate: float, buf: tuple, mean_pkt: int, delay_ns: int
) -> dict[str, Any]:
    """An AQM table checked against its link, as the simulator takes it (``defaults = "ns2"``
    sized for this link's rate and one-way delay, as ns-2's RED configures itself)."""
    if "python" in table:  # an AQM written in Python (aqmlab.pyaqm)
        from aqmlab.pyaqm import load as pyaqm

        return pyaqm.link_aqm(table, field, rate, buf, mean_pkt)
    n_max = (buf[0] + 1) if buf[0] else 10_000
    if table.get("queue_aqm") == "python":  # fq with a Python AQM per flow queue
        from aqmlab.pyaqm import load as pyaqm

        info = algorithms.get(table.get("name", ""))
        if info is None or "queue_aqm" not in {p["name"] for p in info["params"]}:
            raise InputError(
                f"{field}.queue_aqm: a Python AQM per flow queue needs name = 'fq' "
                f"(got {show(table.get('name'))}; fq_codel and fq_pie fix theirs)"
            )
        own = {k: v for k, v in table.items() if k not in ("queue_aqm", "queue")}
        name, par = aqm_params(own, field=field, n_max=n_max, link=(rate, delay_ns / 1e9))
        par = {k: v for k, v in par.items() if not k.startswith("queue.")}
        return pyaqm.queue_link_aqm(table, field, rate, buf, mean_pkt, par)
    n_max = (buf[0] + 1) if buf[0] else 10_000
    name, par = aqm_params(table, field=field, n_max=n_max, link=(rate, delay_ns / 1e9))
    algorithms.check(name, par, rate, buf, mean_pkt, field=field)
    return {"name": name, "params": par}


def _graph(sc: Scenario, mean_pkt: int) -> topology.Graph:
    """The scenario's topology as one graph (see :mod:`aqmlab.scenario.topology`)."""
    n_flows = sum(g.count for g in sc.flows)
    if n_flows > 1_000_000:
        raise InputError(f"flows: at most 1000000 flows (got {n_flows})")
    rtts: list[int | None] = []
    if sc.topology.type == "single-bottleneck":
        delay = _ns(sc.topology.delay)
        for i, g in enumerate(sc.flows):
            rtt = None if g.rtt is None else _ns(g.rtt)
            if rtt is not None and rtt < 2 * delay:
                raise InputError(
                    f"flows[{i}].rtt: must be at least twice the bottleneck delay "
                    f"({2 * delay / 1e6:g} ms), got {g.rtt}"
                )
            rtts += [rtt] * g.count
    else:
        for i, g in enumerate(sc.flows):
            if g.rtt is not None:
                raise InputError(f"flows[{i}].rtt: only for topology.type = 'single-bottleneck'")
    ctx = topology.Context(
        aqm=_link_aqm,
        default_aqm=sc.aqm,
        mean_pkt=mean_pkt,
        n_flows=n_flows,
        monitor_all=sc.output.monitor_all_links,
        flow_rtts=rtts,
        duration=float(sc.duration),
    )
    return topology.PRESETS[sc.topology.type](sc.topology, ctx)


def _check_file_names(sc: Scenario, graph: topology.Graph) -> None:
    """Names that become file names of a run directory (``probe_<flow>.parquet``,
    ``link_<link>.parquet``) checked before the run, not after it (issue 19)."""
    from aqmlab import outdir

    for i, g in enumerate(sc.flows):
        if g.name is not None:
            outdir.safe_name(g.name, f"flows[{i}].name")
    for link in graph.links:
        if link.get("monitor"):
            outdir.safe_name(
                link["name"], "topology: the link name (made of its node names) of a monitored link"
            )


def _check_output_links(sc: Scenario, graph: topology.Graph) -> None:
    """``[output] events`` and ``pcap`` name links of the topology, each once, usable as file
    names."""
    for key in ("events", "pcap"):
        _check_link_list(getattr(sc.output, key), key, graph)


def _check_link_list(wanted: list[str], key: str, graph: topology.Graph) -> None:
    from aqmlab import outdir

    names = [lk["name"] for lk in graph.links]
    seen: set[str] = set()
    for i, n in enumerate(wanted):
        f = f"output.{key}[{i}]"
        if n not in names:
            shown = ", ".join(repr(x) for x in names[:8]) + (", ..." if len(names) > 8 else "")
            raise InputError(
                f"{f}: no link named {show(n)}{_did_you_mean(n, names)}; links: {shown}"
            )
        if n in seen:
            raise InputError(f"{f}: {show(n)} is listed twice")
        seen.add(n)
        outdir.safe_name(n, f)


def build_config(sc: Scenario, seed: int | None = None) -> dict[str, Any]:
    """The network description for the simulator (see ``crates/sim/src/config.rs``)."""
    limits.check(sc)  # counts within the limits, memory within what is available (issue 13)
    seed = sc.seed if seed is None else seed
    run = _run_fields(sc, seed)
    tcp_cfgs = [_tcp_config(sc.tcp, g.tcp, f"flows[{i}].tcp") for i, g in enumerate(sc.flows)]
    sizes = [sz for (_, sz), g in zip(tcp_cfgs, sc.flows, strict=True) for _ in range(g.count)]
    mean_pkt = round(sum(sizes) / len(sizes))
    graph = _graph(sc, mean_pkt)
    _check_file_names(sc, graph)
    _check_output_links(sc, graph)
    flows = traffic.build_flows(sc, graph, [t for t, _ in tcp_cfgs], run)
    if len(flows) > 1_000_000:
        raise InputError(f"flows: at most 1000000 flows (got {len(flows)})")
    return {**run, "nodes": graph.nodes, "links": graph.links, "flows": flows}
