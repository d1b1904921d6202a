"""Links whose capacity varies (docs/scenarios.md, "Links whose capacity varies").

A link's ``rate`` is a fixed rate (``"100Mbps"``) or a schedule of steps
(``[{ at = "0s", rate = "100Mbps" }, { at = "20s", rate = "10Mbps" }]``, the first at 0s, times
increasing) that starts again every ``rate_repeat`` when given; or the link follows a mahimahi
trace (``trace = "file"``: one line per delivery opportunity of 1500 bytes, a millisecond
timestamp, repeating at the end). The simulator's serving rules are in ``crates/qdisc/src/rate.rs``.

Each varying link also gets a nominal rate: the schedule's time-average (over one repeat, or over
the run) or the trace's mean (``12,000 bits x opportunities / last timestamp``). It sizes what
needs one number (an AQM's ``defaults = "ns2"``, a Poisson group's ``load``); the summary reports
the capacity actually offered over the measurement window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from aqmlab.errors import InputError, show
from aqmlab.scenario.units import NonNegativeSeconds, Rate

#: Bytes of IP packets one trace line delivers (mahimahi's ``PACKET_SIZE``, 1504 bytes of TUN
#: payload = a 4-byte TUN header + 1500; ``crates/qdisc/src/rate.rs``, ``TRACE_MTU``).
TRACE_MTU = 1500
#: The largest trace file read, bytes (a minute of a 1 Gb/s trace is 5,000,000 lines, ~40 MB).
MAX_TRACE_BYTES = 64 * 2**20


class RateStep(BaseModel):
    """One step of a rate schedule: from ``at`` the link sends at ``rate``."""

    model_config = ConfigDict(extra="forbid", validate_default=True)
    at: NonNegativeSeconds
    rate: Rate


#: A link's rate: fixed, or a schedule of steps.
RateSpec = Rate | list[RateStep]


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def resolve_traces(data: dict[str, Any], base: Path) -> None:
    """Makes the scenario's relative ``trace`` paths relative to ``base`` (the scenario file's
    directory), in place, so that the scenario reads the same from anywhere (a run's
    scenario.json, a sweep's points)."""
    topo = data.get("topology")
    if not isinstance(topo, dict):
        return
    tables = [topo]
    for lk in topo.get("links") or []:
        if isinstance(lk, dict):
            tables.append(lk)
            if isinstance(lk.get("reverse"), dict):
                tables.append(lk["reverse"])
    for t in tables:
        for key in ("trace", "reverse_trace"):
            p = t.get(key)
            if isinstance(p, str) and p and not Path(p).is_absolute():
                t[key] = str((base / p).resolve())


def read_trace(field: str, path: str) -> list[int]:
    """The millisecond timestamps of a mahimahi trace file, checked: whole numbers >= 0, one a
    line, never decreasing, the last > 0 (it is the trace's period)."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            raw = fh.read(MAX_TRACE_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{field}: no such file: {show(path)}") from None
    except OSError as e:
        raise InputError(f"{field}: cannot read {show(path)}: {e.strerror}") from None
    if len(raw) > MAX_TRACE_BYTES:
        raise InputError(f"{field}: {show(path)} is larger than {MAX_TRACE_BYTES // 2**20} MiB")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise InputError(
            f"{field}: {show(path)} is not a mahimahi trace (one whole number of ms per line)"
        ) from None
    out: list[int] = []
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if not s.isdigit():
            raise InputError(
                f"{field}: line {n} of {show(p.name)}: {show(s)} is not a whole number of "
                "milliseconds (a mahimahi trace has one timestamp per line)"
            )
        v = int(s)
        if out and v < out[-1]:
            raise InputError(
                f"{field}: line {n} of {show(p.name)}: timestamps must not decrease "
                f"(got {v} after {out[-1]})"
            )
        out.append(v)
    if not out:
        raise InputError(f"{field}: {show(p.name)} has no timestamps")
    if out[-1] == 0:
        raise InputError(
            f"{field}: the last timestamp of {show(p.name)} must be > 0 ms (it is the period "
            "after which the trace repeats)"
        )
    return out


def _schedule(field: str, steps: list[RateStep], repeat: float | None, duration: float):
    """A schedule checked, as the simulator takes it, and its time-average rate."""
    if not steps:
        raise InputError(f"{field}: give at least one {{ at, rate }} step (or a fixed rate)")
    ats = [_ns(s.at) for s in steps]
    if ats[0] != 0:
        raise InputError(f"{field}[0].at: the first step must be at 0s (got {steps[0].at})")
    for k in range(1, len(steps)):
        if ats[k] <= ats[k - 1]:
            raise InputError(
                f"{field}[{k}].at: step times must increase (got {steps[k].at} after "
                f"{steps[k - 1].at})"
            )
    span = duration
    if repeat is not None:
        if _ns(repeat) <= ats[-1]:
            raise InputError(
                f"{field}_repeat: must be longer than the last step's time {steps[-1].at} "
                f"(got {repeat})"
            )
        span = repeat
    # Time-average over [0, span): each step holds until the next (the last until span).
    ends = [*(s.at for s in steps[1:]), span]
    total = sum(
        float(s.rate) * max(0.0, min(e, span) - min(s.at, span))
        for s, e in zip(steps, ends, strict=True)
    )
    mean = total / span if span > 0 else float(steps[0].rate)
    cfg: dict[str, Any] = {
        "rate_schedule": [[a, round(s.rate)] for a, s in zip(ats, steps, strict=True)]
    }
    if repeat is not None:
        cfg["rate_repeat_ns"] = _ns(repeat)
    return mean, cfg


def link_capacity(
    field: str,
    rate: Any,
    repeat: float | None,
    trace: str | None,
    duration: float,
) -> tuple[float, dict[str, Any]]:
    """A link direction's capacity: ``(nominal rate in bit/s, extra simulator link keys)``.

    ``rate`` is a fixed rate (bit/s) or a list of :class:`RateStep`; ``trace`` a trace file
    (which then replaces ``rate``); ``repeat`` the schedule's period (s); ``duration`` the run's
    (s), over which a schedule without a repeat is averaged. ``field`` names the rate field in
    errors (``topology.rate``); the trace's is its sibling ``trace``.
    """
    if trace is not None:
        if repeat is not None:
            raise InputError(f"{field}_repeat: only with a rate schedule, not with a trace")
        tfield = field.rsplit(".", 1)[0] + "." + field.rsplit(".", 1)[1].replace("rate", "trace")
        ms = read_trace(tfield, trace)
        mean = len(ms) * TRACE_MTU * 8 / (ms[-1] / 1e3)
        return mean, {"trace_ms": ms}
    if isinstance(rate, list):
        return _schedule(field, rate, repeat, duration)
    if repeat is not None:
        raise InputError(
            f"{field}_repeat: only with a rate schedule (a list of {{ at, rate }} steps)"
        )
    return float(rate), {}
