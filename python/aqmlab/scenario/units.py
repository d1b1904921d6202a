"""Unit strings of scenario files: ``"100Mbps"``, ``"100mbit"``, ``"2ms"``, ``"50kB"``.

A value without a unit, or with a unit of the wrong kind, is an error that names the
field. Rates are decimal (1 Mbps = 1 mbit = 10^6 bit/s; tc's ``kibit`` family is binary) and
``B/s`` units are bytes per second; tc's lower-case ``kbps``/``mbps``/``gbps`` (bytes per second
to tc, bits to most papers) are refused as ambiguous. Sizes accept decimal (kB = 1000 B) and
binary (KiB = 1024 B) prefixes. The table is in docs/scenarios.md ("Units").
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, PlainSerializer

from aqmlab.errors import InputError, show

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_RE = re.compile(rf"^\s*{_NUM}\s*([A-Za-z/]+)\s*$")

RATE_UNITS = {
    "bps": 1.0,
    "bit/s": 1.0,
    "bit": 1.0,
    "Kbps": 1e3,
    "kb/s": 1e3,
    "kbit": 1e3,
    "Kbit": 1e3,
    "Mbps": 1e6,
    "Mb/s": 1e6,
    "mbit": 1e6,
    "Mbit": 1e6,
    "Gbps": 1e9,
    "Gb/s": 1e9,
    "gbit": 1e9,
    "Gbit": 1e9,
    "Tbps": 1e12,
    "Tb/s": 1e12,
    "tbit": 1e12,
    "Tbit": 1e12,
    "kibit": 1024.0,
    "Kibit": 1024.0,
    "mibit": 1024.0**2,
    "Mibit": 1024.0**2,
    "gibit": 1024.0**3,
    "Gibit": 1024.0**3,
    "B/s": 8.0,
    "kB/s": 8e3,
    "MB/s": 8e6,
    "GB/s": 8e9,
    "TB/s": 8e12,
}
#: Rate units that mean bytes per second to tc (tc-tbf(8), "UNITS") but bits per second to most
#: papers: refused, naming both readings (``Kbps``, ``Mbps``, ``Gbps`` are bits: an upper-case
#: prefix is not tc's spelling).
AMBIGUOUS_RATE_UNITS = {
    "kbps": ("kilo", "kbit", "Kbps", "kB/s"),
    "mbps": ("mega", "mbit", "Mbps", "MB/s"),
    "gbps": ("giga", "gbit", "Gbps", "GB/s"),
    "tbps": ("tera", "tbit", "Tbps", "TB/s"),
}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
SIZE_UNITS = {
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "KiB": 1024,
    "MB": 1000**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "GiB": 1024**3,
}
#: Largest value of each kind (base units) with how it is written: beyond them the simulator's
#: integers (ns, bit/s, bytes in 64 bits) would overflow, and no network is that large.
MAXIMA = {
    "rate": (1e15, "1000Tbps"),
    "duration": (1e9, "1e9s (about 31 years)"),
    "size": (1e15, "1e15B"),
    "buffer size": (1e15, "1e15B"),
}
PACKET_UNITS = {"pkt", "pkts", "packet", "packets", "p"}
#: The largest buffer in packets (the simulator counts packets in 32 bits).
MAX_BUFFER_PKTS = 1_000_000_000


class UnitError(ValueError):
    """A value that is not a quantity of its kind: the message says what is allowed, without
    the field's name (the caller, a pydantic model or :func:`_named`, puts it in front)."""


def _parse(value: object, units: dict[str, float], kind: str, example: str) -> float:
    allowed = ", ".join(units)
    if isinstance(value, bool) or not isinstance(value, str):
        raise UnitError(
            f"{show(value)} has no unit; write a {kind} like {example!r} (units: {allowed})"
        )
    m = _RE.match(value)
    if not m:
        raise UnitError(f"{show(value)} is not a {kind}; write e.g. {example!r}")
    num, unit = float(m.group(1)), m.group(2)
    if units is RATE_UNITS and unit in AMBIGUOUS_RATE_UNITS:
        (p, bit, bps, byte), n = AMBIGUOUS_RATE_UNITS[unit], m.group(1)
        raise UnitError(
            f"unit {unit!r} is ambiguous: tc reads it as {p}bytes per second, most papers "
            f"as {p}bits; write '{n}{bit}' or '{n}{bps}' for bits per second, or '{n}{byte}' for "
            "bytes per second"
        )
    if unit not in units:
        raise UnitError(f"unit {show(unit)} is not a {kind} unit; allowed: {allowed}")
    x = num * units[unit]
    top = MAXIMA[kind]
    if not math.isfinite(x) or x > top[0]:
        raise UnitError(f"{show(value)} is too large; at most {top[1]}")
    return x


def _rate_bps(value: object) -> float:
    """A rate in bit/s from a string like ``"100Mbps"``; must be > 0."""
    r = _parse(value, RATE_UNITS, "rate", "100Mbps")
    if r <= 0:
        raise UnitError(f"must be > 0 (got {show(value)})")
    return r


def _seconds(value: object, *, positive: bool = False) -> float:
    """A duration in seconds from a string like ``"2ms"``; >= 0, or > 0 if ``positive``."""
    t = _parse(value, TIME_UNITS, "duration", "2ms")
    if t < 0 or (positive and t == 0):
        raise UnitError(f"must be {'> 0' if positive else '>= 0'} (got {show(value)})")
    return t


def _size_bytes(value: object) -> float:
    """A size in bytes from a string like ``"50kB"``; must be > 0."""
    b = _parse(value, SIZE_UNITS, "size", "1500B")
    if b <= 0:
        raise UnitError(f"must be > 0 (got {show(value)})")
    return b


def _buffer(value: object) -> tuple[int | None, int | None]:
    """A buffer: a whole number of packets (``300`` or ``"300pkt"``) or a size (``"450kB"``).

    Returns ``(packets, bytes)`` with exactly one of them set.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1 or value > MAX_BUFFER_PKTS:
            raise UnitError(f"must be 1 to {MAX_BUFFER_PKTS} packets (got {show(value)})")
        return value, None
    if isinstance(value, str):
        m = _RE.match(value)
        if m and m.group(2) in PACKET_UNITS:
            n = float(m.group(1))
            if n < 1 or n != int(n) or n > MAX_BUFFER_PKTS:
                raise UnitError(
                    f"must be a whole number of packets from 1 to {MAX_BUFFER_PKTS} "
                    f"(got {show(value)})"
                )
            return int(n), None
        b = _parse(value, SIZE_UNITS, "buffer size", "450kB")
        if b < 1:
            raise UnitError(f"must be at least 1 byte (got {show(value)})")
        return None, int(b)
    raise UnitError(
        f"must be a number of packets (300 or '300pkt') or a size ('450kB'), got {show(value)}"
    )


def _named(field: str, parse: Any, value: object, **kw: Any) -> Any:
    try:
        return parse(value, **kw)
    except UnitError as e:
        raise InputError(f"{field}: {e}") from None


def rate_bps(field: str, value: object) -> float:
    """A rate in bit/s from a string like ``"100Mbps"``; must be > 0."""
    return _named(field, _rate_bps, value)


def seconds(field: str, value: object, *, positive: bool = False) -> float:
    """A duration in seconds from a string like ``"2ms"``; >= 0, or > 0 if ``positive``."""
    return _named(field, _seconds, value, positive=positive)


def size_bytes(field: str, value: object) -> float:
    """A size in bytes from a string like ``"50kB"``; must be > 0."""
    return _named(field, _size_bytes, value)


def buffer(field: str, value: object) -> tuple[int | None, int | None]:
    """A buffer: a whole number of packets (``300`` or ``"300pkt"``) or a size (``"450kB"``).

    Returns ``(packets, bytes)`` with exactly one of them set.
    """
    return _named(field, _buffer, value)


# ---------------------------------------------------------------------------------------------
# The scenario models' field types: a unit string is parsed once, when the scenario is validated,
# and the model holds the number (base units: bit/s, seconds, bytes). The number remembers what
# the user wrote, so a scenario dumps (``scenario.json``, sweeps, comparisons) and prints in the
# user's words.


class Quantity(float):
    """A number in base units (bit/s, s or bytes) parsed from ``text``, the string the user wrote.

    It is a ``float`` in arithmetic; ``str()`` and ``f"{q}"`` give ``text`` (error messages quote
    the user's words), a format spec (``f"{q:g}"``) formats the number, and a model dumps it as
    ``text``.
    """

    text: str

    def __new__(cls, value: float, text: str) -> Quantity:
        q = super().__new__(cls, value)
        q.text = text
        return q

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return self.text if not spec else float.__format__(self, spec)

    def __reduce__(self) -> tuple[Any, tuple[float, str]]:
        return Quantity, (float(self), self.text)


class Buffer(tuple):
    """A buffer as ``(packets, bytes)``, exactly one of them set, parsed from ``text`` (``300``,
    ``"300pkt"`` or ``"450kB"``, as written); a model dumps it as ``text``."""

    text: int | str

    def __new__(cls, value: tuple[int | None, int | None], text: int | str) -> Buffer:
        b = super().__new__(cls, value)
        b.text = text
        return b

    def __str__(self) -> str:
        return str(self.text)

    def __reduce__(self) -> tuple[Any, tuple[tuple, int | str]]:
        return Buffer, (tuple(self), self.text)


def _quantity(parse: Any, **kw: Any) -> Any:
    def check(value: str) -> Quantity:
        return Quantity(parse(value, **kw), value)

    return check


def _text(q: Quantity | Buffer) -> int | str:
    return q.text


#: Dumped as written. A model using these types validates its defaults (``validate_default``), so
#: it holds numbers whether or not a field is given.
_DUMP = PlainSerializer(_text)

#: A rate field: written ``"100Mbps"``, held in bit/s (> 0).
Rate = Annotated[str, AfterValidator(_quantity(_rate_bps)), _DUMP]
#: A duration field: written ``"2ms"``, held in seconds (>= 0).
Seconds = Annotated[str, AfterValidator(_quantity(_seconds)), _DUMP]
#: A duration field that must be > 0, held in seconds.
PositiveSeconds = Annotated[str, AfterValidator(_quantity(_seconds, positive=True)), _DUMP]


def _unsigned(value: str) -> str:
    if value.strip().startswith("-"):
        raise UnitError(f"must be >= 0 (got {show(value)})")
    return value


#: A duration field that says ``must be >= 0`` of ``"-1s"`` (not ``is not a duration``).
NonNegativeSeconds = Annotated[
    str, AfterValidator(_unsigned), AfterValidator(_quantity(_seconds)), _DUMP
]
#: A size field: written ``"50kB"``, held in bytes (> 0).
Size = Annotated[str, AfterValidator(_quantity(_size_bytes)), _DUMP]
#: A buffer field: packets (``300``, ``"300pkt"``) or a size (``"450kB"``), held as ``Buffer``.
BufferSize = Annotated[int | str, AfterValidator(lambda v: Buffer(_buffer(v), v)), _DUMP]
