"""What a Python AQM is written against (issue 23): the :class:`Aqm` base class, the :class:`Param`
declaration and the :class:`Verdict`, mirroring the Rust ``Aqm`` trait (crates/aqm/src/lib.rs).

A Python AQM is a class with the trait's hooks, under the trait's names::

    enqueue(pkt, queue, now) -> Verdict                  # required; queue before pkt joins
    on_overflow(pkt, queue, now)                          # the buffer refused an admitted packet
    on_empty(now);  on_pushout(n, now)                    # fq's flow queue: emptied / n pushed out
    dequeue(pkt, sojourn, queue, now) -> Verdict          # defined: called for every departure
    next_update() -> int | None;  update(queue, now)      # a timer (both or neither)
    drop_prob() -> float;  avg_queue() -> float           # time series columns
    stats() -> dict[str, float]                           # counters in summary.json

Times are integer nanoseconds (``now``, ``sojourn``, ``queue.idle_since``, ``next_update``).
``pkt`` has ``size_bytes``, ``flow``, ``ecn`` (codepoint: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE),
``ecn_capable`` and ``precedence`` (``"in"``/``"out"``); ``queue`` has ``len_pkts``,
``len_bytes`` and ``idle_since``. Both are views the simulator overwrites for the next call:
read them, do not keep them. ``self.rng.random()`` draws from the link's seeded generator (the
one a built-in AQM there would use), so a run is byte-identical for a seed; ``self.link`` is the
link (``rate_bps``, ``buffer_pkts``, ``buffer_bytes``, ``mean_pkt_bytes``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

#: Parameter kinds, as the built-ins' ParamSpec (crates/aqm/src/params.rs); values are held in
#: base units: seconds, bit/s, bytes.
KINDS = ("real", "int", "bool", "duration", "rate", "size", "choice")


class Verdict(enum.IntEnum):
    """A decision on one packet (the Rust ``Verdict``)."""

    #: Let the packet in (at dequeue: send it).
    ADMIT = 0
    #: Drop it.
    DROP = 1
    #: Admit or send it with ECN Congestion Experienced set (RFC 3168).
    MARK = 2
    #: Admit it and clamp the flow's advertised window (ModRED).
    THROTTLE = 3


ADMIT, DROP, MARK, THROTTLE = Verdict.ADMIT, Verdict.DROP, Verdict.MARK, Verdict.THROTTLE


@dataclass(frozen=True)
class Param:
    """A parameter's declaration: default (in base units, or a unit string such as ``"5ms"``;
    ``None`` for one derived from the link in ``setup``), kind (one of :data:`KINDS`), one line
    of help, and an optional inclusive range or choices."""

    default: Any
    kind: str = "real"
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Param kind must be one of {', '.join(KINDS)} (got {self.kind!r})")

    def convert(self, name: str, value: Any) -> Any:
        """``value`` checked against this declaration and converted to base units; a
        ``ValueError("name: what is allowed")`` otherwise."""
        from aqmlab.errors import InputError
        from aqmlab.scenario import units

        k = self.kind
        if value is None and self.default is None:
            return None  # "auto": derived from the link in setup()
        try:
            parse = {"duration": units.seconds, "rate": units.rate_bps, "size": units.size_bytes}
            if k in parse and isinstance(value, str):
                value = parse[k](name, value)
        except InputError as e:
            raise ValueError(str(e)) from None
        if k == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{name}: must be true or false (got {value!r})")
            return value
        if k == "choice":
            if value not in self.choices:
                allowed = ", ".join(self.choices)
                raise ValueError(f"{name}: must be one of {allowed} (got {value!r})")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            unit = {"duration": " like '5ms'", "rate": " like '10Mbps'", "size": " like '1500B'"}
            raise ValueError(f"{name}: must be a {k}{unit.get(k, '')} (got {value!r})")
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name}: must be a finite number (got {value!r})")
        if k == "int":
            if value != int(value):
                raise ValueError(f"{name}: must be a whole number (got {value!r})")
            value = int(value)
        if self.min is not None and value < self.min:
            raise ValueError(f"{name}: must be >= {self.min:g} (got {value:g})")
        if self.max is not None and value > self.max:
            raise ValueError(f"{name}: must be <= {self.max:g} (got {value:g})")
        return float(value) if k != "int" else value


@dataclass(frozen=True)
class Link:
    """The link an AQM guards (the Rust ``LinkContext``): one of the buffers is None."""

    rate_bps: int
    buffer_pkts: int | None
    buffer_bytes: int | None
    mean_pkt_bytes: int


class Aqm:
    """Base class of a Python AQM: declares ``params`` and validates them on construction.

    ``MyAqm(min_th=5, interval="100ms")`` checks each value against ``params`` (unknown names,
    wrong kinds and out-of-range values raise one-line ``ValueError("name: ...")``), converts unit
    strings to base units and sets each parameter as an attribute (defaults for those not given).
    ``setup(link)`` (optional) runs when the simulator builds the AQM for a link: derive state
    there and raise ``ValueError("param: ...")`` for a value the link does not allow.
    """

    #: The name results show (default: the class name).
    name: ClassVar[str] = ""
    #: The parameters, by name.
    params: ClassVar[dict[str, Param]] = {}
    rng: Any
    link: Link

    def __init__(self, **values: Any) -> None:
        unknown = [k for k in values if k not in self.params]
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise ValueError(
                f"{unknown[0]}: unknown parameter of {type(self).__name__}; allowed: {allowed}"
            )
        for k, p in self.params.items():
            setattr(self, k, p.convert(k, values.get(k, p.default)))

    def param_values(self) -> dict[str, Any]:
        """The parameters' values, base units."""
        return {k: getattr(self, k) for k in self.params}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.param_values().items())
        return f"{type(self).__name__}({args})"
