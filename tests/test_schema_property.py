"""Property-based test of the scenario schema (issue 13): generated documents, valid-ish and
broken, each either runs or is refused with one line naming a field; never a traceback, a Rust
panic, a hang or an unbounded allocation.

Documents are built by mutating a small valid scenario (short runs, so each valid one takes
well under a second): fields set to good values, to values of the wrong type or range, to
strings with wrong or missing units, to counts beyond the limits; keys removed or misspelled;
tables replaced by junk. TOML text (and bytes) is fuzzed through
:func:`aqmlab.scenario.schema.load`.

Examples per property: 200 (CI); ``HYPOTHESIS_PROFILE=nightly`` runs 10,000.
"""

from __future__ import annotations

import copy
import os
import resource
import signal
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from aqmlab import _core
from aqmlab.errors import MAX_MESSAGE, InputError
from aqmlab.running import runner
from aqmlab.scenario import limits
from aqmlab.scenario import schema as scenario

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
EXAMPLES = {"ci": 200, "nightly": 10_000}.get(PROFILE, 200)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # time is bounded by the alarm below, not by a flaky per-example deadline
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=PROFILE == "ci",  # CI: the same 200 documents every time
)

# Each example must end within this (wall seconds): a valid generated run simulates at most
# 0.3 s of a small network; a refusal is immediate.
HANG_S = 60
# The memory budget the runs get, and the peak the test process may reach: a document whose
# estimate exceeds the budget must be refused, so the process never grows past it.
BUDGET = "1GB"
PEAK_MAX_BYTES = 1_600_000_000

BASE: dict[str, Any] = {
    "name": "prop",
    "duration": "100ms",
    "warmup": "20ms",
    "seed": 1,
    "topology": {
        "type": "dumbbell",
        "rate": "10Mbps",
        "delay": "2ms",
        "buffer": 50,
        "access_delay": ["1ms", "3ms"],
    },
    "aqm": {"name": "red", "min_th": 5, "max_th": 15},
    "flows": [{"count": 3, "start_spread": "10ms"}],
}

UNITS = [
    "bps", "Kbps", "Mbps", "Gbps", "mbit", "gbit", "kbps", "mbps", "MB/s",
    "ns", "us", "ms", "s", "min", "B", "kB", "KiB", "MB", "pkt", "", "x", "Mbps/s",
]  # fmt: skip
NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0, 1, 1.5, 1e-9, 1e9, 1e300, 2**63, 2**64, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
)
UNIT_STRINGS = st.builds(
    lambda n, u, sp: f"{n}{sp}{u}",
    st.sampled_from(["0", "1", "2.5", "-1", "1e3", "1e30", "nan", "inf", ".5", "9" * 40]),
    st.sampled_from(UNITS),
    st.sampled_from(["", " "]),
)
SCALARS = st.one_of(
    NUMBERS, st.booleans(), st.text(max_size=20), UNIT_STRINGS, st.just("x" * 3000), st.none()
)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def good(*values: Any) -> st.SearchStrategy:
    """Values a user would plausibly write there (valid or near-valid), or junk."""
    return st.one_of(st.sampled_from(values), JUNK) if values else JUNK


HOSTS = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["N1", "N2", "N3", "N1 "])},
        optional={"rate": good("10Mbps", "1gbit"), "delay": good("0ms", "5ms")},
    ),
    max_size=3,
)
HUGE = [limits.MAX_HOSTS_PER_SIDE + 1, 900_000, 2**63, 10**30]

# (path, values): the paths are fields of the schema (and a few that are not).
FIELDS: list[tuple[tuple, st.SearchStrategy]] = [
    (("name",), good("a", "")),
    (("description",), good("")),
    (("duration",), good("50ms", "0.2s", "0s", "10ms")),
    (("warmup",), good("0s", "10ms", "60ms", "1s")),
    (("seed",), good(0, 7, 2**64, -1)),
    (("topology",), good({}, {"type": "single-bottleneck"})),
    (("topology", "type"), good("dumbbell", "single-bottleneck", "star")),
    (("topology", "rate"), good("1Mbps", "100mbit", "1Gbps", "12.5MB/s", "1e20bps")),
    (("topology", "delay"), good("0ms", "1ms", "20ms")),
    (("topology", "buffer"), good(1, 10, 100, "30kB", "20pkt", "1.5pkt", 0)),
    (("topology", "reverse_rate"), good("5Mbps")),
    (("topology", "reverse_buffer"), good(20, "10kB")),
    (("topology", "access_rate"), good("100Mbps", "1gbit")),
    (("topology", "access_delay"), good("1ms", [], ["0ms", "4ms"])),
    (("topology", "access_buffer"), good(1, 1000)),
    (("topology", "left"), st.one_of(good(1, 2, 5, *HUGE), HOSTS)),
    (("topology", "right"), st.one_of(good(1, 3, *HUGE), HOSTS)),
    (("topology", "limit"), good(100)),
    (("aqm",), good(*({"name": n} for n in ["droptail", "red", "codel", "pie", "fq_codel"]))),
    (("aqm", "name"), good("red", "codel", "pie", "blue", "pi", "dropfn", "fq_codel", "nope")),
    (("aqm", "min_th"), good(1, 5, 40)),
    (("aqm", "max_th"), good(10, 15, 2)),
    (("aqm", "max_p"), good(0.1, 0, 2)),
    (("aqm", "w_q"), good(0.002, 0, 1)),
    (("aqm", "target"), good("5ms", 5)),
    (("aqm", "limit"), good(100)),
    (("aqm", "family"), good("linear", "nope")),
    (("aqm", "scale"), good(100)),
    (("aqm", "target_mean"), good(20)),
    (("tcp", "variant"), good("newreno", "reno", "cubic")),
    (("tcp", "mss"), good("1460B", "536B", "1B", "1.5B")),
    (("tcp", "init_cwnd"), good(1, 10, 0)),
    (("tcp", "init_ssthresh"), good(2, 1)),
    (("tcp", "rwnd"), good("64kB", "1B")),
    (("tcp", "min_rto"), good("200ms", "2min")),
    (("tcp", "max_rto"), good("60s", "1ms")),
    (("tcp", "delack"), good(True)),
    (("tcp", "ecn"), good(True)),
    (("tcp", "trace_cwnd"), good(True)),
    (("flows",), good([], [{}], [{"count": 2}, {"count": 1, "type": "poisson", "load": 0.5}])),
    (("flows", 0, "count"), good(1, 2, 30, 0, limits.MAX_FLOWS + 1, 500_000)),
    (("flows", 0, "type"), good("tcp", "poisson", "udp")),
    (("flows", 0, "load"), good(0.5, 1.2, 0)),
    (("flows", 0, "rate"), good("1Mbps", "5mbit")),
    (("flows", 0, "packet_size"), good("1000B", "500B")),
    (("flows", 0, "size_distribution"), good("fixed", "exponential")),
    (("flows", 0, "src"), good("left", "right", "N1", "N1,N2", "L0")),
    (("flows", 0, "dst"), good("right", "left", "N4", "R0")),
    (("flows", 0, "pairing"), good("parallel", "all-pairs")),
    (("flows", 0, "start"), good("0s", "10ms", "1s")),
    (("flows", 0, "start_spread"), good("0s", "50ms")),
    (("flows", 0, "rtt"), good("20ms", "1ms")),
    (("flows", 0, "size"), good("50kB", "1B")),
    (("flows", 0, "profile"), good({"rate": "1Mbps", "burst": "10kB"}, {"rate": "1Mbps"})),
    (("flows", 0, "tcp"), good({"variant": "reno"}, {"mss": "536B"}, {"bogus": 1})),
    (("output", "sample_interval"), good("1ms", "10ms", "0ms")),
    (("output", "max_samples"), good(16, 100, 10**12, 0)),
    (("output", "monitor_all_links"), good(True)),
    (("metrics", "ie"), good(0, 10)),
    (("metrics", "settling_band"), good(0.1, -1)),
    (("metrics", "settling_smoothing"), good("1s", "0s")),
    (("compare",), good({"x": {"name": "red"}})),
    (("bogus",), good(1)),
]


def _set(doc: Any, path: tuple, value: Any) -> None:
    """Sets ``path`` in ``doc``, creating tables on the way; a path through a non-table (or an
    index into a non-list) stops there."""
    for p in path[:-1]:
        if isinstance(p, int) and isinstance(doc, list) and doc:
            doc = doc[min(p, len(doc) - 1)]
        elif isinstance(p, str) and isinstance(doc, dict):
            doc = doc.setdefault(p, {})
        else:
            return
    last = path[-1]
    if isinstance(doc, dict) and isinstance(last, str):
        doc[last] = value
    elif isinstance(doc, list) and doc and isinstance(last, int):
        doc[min(last, len(doc) - 1)] = value


def _delete(doc: Any, path: tuple) -> None:
    for p in path[:-1]:
        ok = (isinstance(doc, dict) and p in doc) or (isinstance(doc, list) and isinstance(p, int))
        if not ok or (isinstance(doc, list) and p >= len(doc)):
            return
        doc = doc[p]
    if isinstance(doc, dict):
        doc.pop(path[-1], None)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """A scenario dict: the base with 0-6 fields set, deleted or replaced."""
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(FIELDS) - 1))
        path, values = FIELDS[i]
        if draw(st.integers(0, 9)) == 0:
            _delete(doc, path)
        else:
            _set(doc, path, draw(values))
    return doc


class HangError(Exception):
    """An example ran longer than :data:`HANG_S`."""


@contextmanager
def bounded(seconds: int):
    """Raises :class:`HangError` inside the example after ``seconds`` (the simulator checks for
    signals every ~20 ms, so this interrupts a run as Ctrl-C does)."""

    def on_alarm(signum, frame):
        raise HangError(f"example still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _memory_budget(monkeypatch):
    monkeypatch.setenv(limits.BUDGET_ENV, BUDGET)


def _assert_one_line(e: InputError) -> None:
    msg = str(e)
    assert msg and "\n" not in msg and len(msg) <= MAX_MESSAGE, msg
    assert "Traceback" not in msg and "internal error" not in msg, msg


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_or_refuse(doc: Any) -> str:
    """``"ran"`` or ``"refused"``; anything else (a traceback, a panic, a hang) fails the test."""
    with bounded(HANG_S):
        try:
            sc = scenario.from_dict(doc)
            res = runner.run(sc)
        except InputError as e:
            _assert_one_line(e)
            return "refused"
        except _core.InvariantError as e:  # a valid run whose invariants failed: a real bug
            raise AssertionError(f"invariant failed for {doc!r}: {e}") from None
    # The window's counters (issue 19; the simulator checks the same and fails the run):
    # 0 <= loss_runs <= dropped <= arrived, loss_runs >= 1 exactly when something was dropped.
    for link in res.summary["links"]:
        a, r = link["arrived"], link["loss_runs"]
        d = link["dropped_aqm"] + link["dropped_overflow"]
        assert 0 <= r <= d <= a and (r >= 1) == (d > 0), (doc, link["name"], a, d, r)
    return "ran"


@SETTINGS
@given(documents())
@example({**BASE, "topology": {**BASE["topology"], "left": []}})  # found: ZeroDivisionError
def test_every_generated_document_runs_or_is_refused_in_one_line(doc):
    event(run_or_refuse(doc))
    assert _peak_rss_bytes() < PEAK_MAX_BYTES, f"peak RSS {_peak_rss_bytes() / 1e9:.2f} GB"


@SETTINGS
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_any_file_content_is_loaded_or_refused_in_one_line(tmp_path_factory, content):
    p = tmp_path_factory.mktemp("sc") / "s.toml"
    p.write_bytes(content)
    try:
        scenario.load(p)
    except InputError as e:
        _assert_one_line(e)
