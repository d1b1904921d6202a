"""A generator of bad scenarios, and a harness that runs them (issue 19, item 5).

Each case is a small valid scenario with one or two mutations applied: wrong types, huge,
negative, NaN and infinite numbers, unit typos, unknown keys, deep nesting, long strings,
unicode, binary bytes, duplicate keys (TOML text), enormous counts. A case is either a dict (run
through :func:`aqmlab.run`) or TOML text (run through ``aqmlab run FILE``).

What is checked (:func:`classify`): the case ends, within a time limit, either accepted (a
result) or refused with :class:`aqmlab.InputError` on one line of at most
:data:`aqmlab.errors.MAX_MESSAGE` characters (CLI: exit code 2, one ``error:`` line on stderr).
Anything else is a finding: ``traceback`` (another Python exception; CLI: exit 1 or a
``Traceback``), ``panic`` (a Rust panic), ``hang`` (over the time limit), ``crash`` (killed by a
signal), ``long`` (a refusal on more than one line or longer than the limit).

Used by tests/test_fuzz_scenarios.py (a few hundred cases) and benches/fuzz_scenarios.py (10,000,
figures in docs/benchmarks.md, "Scenario fuzzing").
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

#: A valid base scenario, short so accepted cases run in well under a second.
BASE: dict[str, Any] = {
    "name": "fuzz",
    "duration": "1s",
    "warmup": "0.2s",
    "seed": 1,
    "topology": {"type": "dumbbell", "rate": "10Mbps", "delay": "2ms", "buffer": 100},
    "aqm": {"name": "red"},
    "tcp": {"init_cwnd": 10},
    "flows": [{"count": 2}],
    "output": {"sample_interval": "10ms"},
    "metrics": {"settling_band": 0.1},
}

#: Fields a mutation targets, as paths into :data:`BASE` (and a few that BASE lacks).
PATHS: list[tuple] = [
    ("name",),
    ("duration",),
    ("warmup",),
    ("seed",),
    ("topology", "type"),
    ("topology", "rate"),
    ("topology", "delay"),
    ("topology", "buffer"),
    ("topology", "left"),
    ("topology", "right"),
    ("topology", "hops"),
    ("topology", "cross"),
    ("topology", "access_delay"),
    ("aqm", "name"),
    ("aqm", "max_p"),
    ("aqm", "min_th"),
    ("aqm", "w_q"),
    ("aqm", "interval"),
    ("aqm", "window"),
    ("aqm", "target_mean"),
    ("tcp", "init_cwnd"),
    ("tcp", "mss"),
    ("tcp", "variant"),
    ("tcp", "min_rto"),
    ("flows", 0, "count"),
    ("flows", 0, "type"),
    ("flows", 0, "start"),
    ("flows", 0, "rate"),
    ("flows", 0, "objects"),
    ("flows", 0, "arrival_rate"),
    ("flows", 0, "name"),
    ("flows", 0, "size"),
    ("output", "sample_interval"),
    ("output", "max_samples"),
    ("metrics", "settling_band"),
    ("metrics", "bpl"),
]

#: AQM tables whose parameters the mutations then hit (one is chosen as the base's aqm).
AQMS = [
    {"name": "red"},
    {"name": "pie"},
    {"name": "codel"},
    {"name": "laq"},
    {"name": "rem"},
    {"name": "ared"},
    {"name": "paqm"},
    {"name": "pi"},
    {"name": "dropfn", "family": "linear", "target_mean": 20},
    {"name": "avq"},
    {"name": "blue"},
]

#: Topologies a case may start from.
TOPOLOGIES = [
    {"type": "dumbbell", "rate": "10Mbps", "delay": "2ms", "buffer": 100},
    {"type": "parking-lot", "hops": 2, "rate": "10Mbps", "delay": "2ms", "buffer": 100},
    {"type": "single-bottleneck", "rate": "10Mbps", "delay": "2ms", "buffer": 100},
]

_UNIT_TYPOS = ["10 Mbsp", "5 mss", "2ms ms", "1e3", "100MB/s", "5 sec", "ms", "1,5ms", "10Mbit", ""]
_STRINGS = ["", " ", "\t", "é", "日本語", "\u202e", "\x00", "a" * 5000, "../../x", "/abs/x", "a/b"]
_SPECIAL = [
    math.nan,
    math.inf,
    -math.inf,
    -1,
    0,
    -1e300,
    1e300,
    2**63,
    2**64,
    -(2**63),
    10**30,
    1000001,
    10**9,
    0.5,
    -0.0,
    1e-12,
]

_PERIODS = [
    *(("laq", "interval"), ("pie", "t_update"), ("rem", "interval"), ("ared", "interval")),
    *(("paqm", "interval"), ("pi", "sample_hz"), ("anaqm", "sample_hz")),
]

KINDS = (
    "wrong_type",
    "huge",
    "negative",
    "nonfinite",
    "unit_typo",
    "unknown_key",
    "deep_nesting",
    "long_string",
    "unicode",
    "binary",
    "duplicate_key",
    "enormous_count",
    "blank_key",
    "update_period",
    "drop_section",
)


@dataclass
class Case:
    """One generated scenario: ``data`` (a dict) or ``toml`` (text; binary/duplicate-key cases)."""

    index: int
    kind: str
    data: dict[str, Any] | None = None
    toml: str | None = None

    def describe(self) -> str:
        """A short text of the case for a failure message."""
        body = self.toml if self.toml is not None else json.dumps(self.data, default=repr)
        return f"case {self.index} ({self.kind}): {body[:300]}"


def _set(d: Any, path: tuple, value: Any) -> None:
    """Sets ``value`` at ``path``, making the tables and lists on the way (a step whose
    container an earlier mutation replaced by another type is replaced back)."""
    for i, p in enumerate(path[:-1]):
        want_list = isinstance(path[i + 1], int)
        if isinstance(p, int):
            while len(d) <= p:
                d.append({})
            if not isinstance(d[p], list if want_list else dict):
                d[p] = [] if want_list else {}
            d = d[p]
        else:
            if not isinstance(d.get(p), list if want_list else dict):
                d[p] = [] if want_list else {}
            d = d[p]
    last = path[-1]
    if isinstance(last, int):
        while len(d) <= last:
            d.append({})
    d[last] = value


@dataclass(frozen=True)
class Deep:
    """A value nested ``depth`` levels (``[[[...1...]]]`` or ``{a = {a = ...}}``), built only in
    the process that runs the case (pickling it whole would hit the recursion limit)."""

    depth: int
    kind: str

    def build(self) -> Any:
        """The nested value."""
        return _nest(self.depth, 1, self.kind)


def materialize(v: Any) -> Any:
    """``v`` with every :class:`Deep` placeholder built (the placeholders sit at a shallow
    depth, so this recursion is shallow)."""
    if isinstance(v, Deep):
        return v.build()
    if isinstance(v, dict):
        return {k: materialize(x) for k, x in v.items()}
    if isinstance(v, list):
        return [materialize(x) for x in v]
    return v


def _nest(depth: int, leaf: Any, kind: str) -> Any:
    v = leaf
    for _ in range(depth):
        v = [v] if kind == "list" else {"a": v}
    return v


def _base(rng: random.Random) -> dict[str, Any]:
    d = json.loads(json.dumps(BASE))
    d["topology"] = dict(rng.choice(TOPOLOGIES))
    d["aqm"] = dict(rng.choice(AQMS))
    return d


def _mutate(rng: random.Random, d: dict[str, Any], kind: str) -> None:
    path = rng.choice(PATHS)
    if kind == "wrong_type":
        _set(d, path, rng.choice([[1, 2], {"x": 1}, True, "text", 3.5, [], {}, 7]))
    elif kind == "huge":
        _set(d, path, rng.choice([10**18, 1e308, "1e300s", "99999999Gbps", "1e30MB", 2**70]))
    elif kind == "negative":
        _set(d, path, rng.choice([-1, -1e9, "-5ms", "-10Mbps", "-1B", -0.5]))
    elif kind == "nonfinite":
        _set(d, path, rng.choice([math.nan, math.inf, -math.inf]))
    elif kind == "unit_typo":
        _set(d, path, rng.choice(_UNIT_TYPOS))
    elif kind == "unknown_key":
        where = rng.choice([(), ("topology",), ("aqm",), ("tcp",), ("output",), ("metrics",)])
        key = rng.choice(["limit", "bandwith", "xyz", "rate_", "Duration", "flow", "é", "a" * 300])
        _set(d, (*where, key), rng.choice([1, "x", True]))
    elif kind == "deep_nesting":
        depth = rng.choice([40, 200, 1000, 3000])
        _set(d, path, Deep(depth, rng.choice(["list", "dict"])))
    elif kind == "long_string":
        _set(d, path, rng.choice(["x" * 5000, "5" * 10000 + "ms", "é" * 3000, "1" * 400]))
    elif kind == "unicode":
        _set(d, path, rng.choice(_STRINGS))
    elif kind == "enormous_count":
        field = rng.choice(
            [
                ("flows", 0, "count"),
                ("topology", "left"),
                ("topology", "right"),
                ("topology", "hops"),
                ("topology", "cross"),
                ("output", "max_samples"),
            ]
        )
        _set(d, field, rng.choice([10**6 + 1, 10**7, 10**12, 2**31, 2**63 - 1]))
        if field[1] in ("hops", "cross"):
            d["topology"]["type"] = "parking-lot"
    elif kind == "blank_key":
        where = rng.choice([(), ("topology",), ("aqm",), ("flows", 0)])
        _set(d, (*where, rng.choice(["", " ", "\t"])), 1)
    elif kind == "update_period":
        aqm, key = rng.choice(_PERIODS)
        tiny = rng.choice(["1ns", "0ns", "1us", "5us", 1e9, 1e12, "0.000001ms"])
        if key == "sample_hz" and isinstance(tiny, str):
            tiny = 1e9
        d["aqm"] = {"name": aqm, key: tiny}
    elif kind == "drop_section":
        key = rng.choice(["flows", "topology", "aqm", "duration"])
        d[key] = rng.choice([None, [], {}, "", 0]) if key != "duration" else None
        if d[key] is None:
            del d[key]
    else:  # pragma: no cover - KINDS and this function are kept together
        raise ValueError(kind)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    return json.dumps(v)


def _toml_text(rng: random.Random, kind: str) -> str:
    """A TOML file that the dict form cannot express: binary bytes or a duplicate key."""
    lines = [
        'name = "fuzz"',
        'duration = "1s"',
        'warmup = "0.2s"',
        "[topology]",
        'rate = "10Mbps"',
        "buffer = 100",
        "[aqm]",
        'name = "red"',
        "[[flows]]",
        "count = 2",
    ]
    if kind == "duplicate_key":
        i = rng.randrange(len(lines))
        lines.insert(i + 1, lines[i] if "=" in lines[i] else 'rate = "5Mbps"')
        if rng.random() < 0.5:
            lines.append("[aqm]")  # a table defined twice
    else:  # binary
        i = rng.randrange(len(lines))
        junk = "".join(chr(rng.randrange(0, 32)) for _ in range(rng.randrange(1, 8)))
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)] + junk
    return "\n".join(lines) + "\n"


def generate(n: int, seed: int = 0) -> list[Case]:
    """``n`` cases, the same for the same ``seed``: every kind in turn, one or two mutations."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)] if i < 4 * len(KINDS) else rng.choice(KINDS)
        if kind in ("binary", "duplicate_key"):
            cases.append(Case(i, kind, toml=_toml_text(rng, kind)))
            continue
        d = _base(rng)
        _mutate(rng, d, kind)
        if rng.random() < 0.3:
            _mutate(rng, d, rng.choice(KINDS[:7]))
        cases.append(Case(i, kind, data=d))
    return cases


def to_toml(data: dict[str, Any]) -> str | None:
    """``data`` as TOML text for the CLI (None when TOML cannot express it: a None value)."""
    out: list[str] = []

    def inline(v: Any) -> str:
        if isinstance(v, Deep):
            o, c = ("[", "]") if v.kind == "list" else ("{a = ", "}")
            return o * v.depth + "1" + c * v.depth
        if v is None:
            raise TypeError
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {inline(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(inline(x) for x in v) + "]"
        return _toml_value(v)

    try:
        for k, v in data.items():
            out.append(f"{json.dumps(k)} = {inline(v)}")
    except (TypeError, RecursionError):
        return None
    return "\n".join(out) + "\n"


# --- the harness ------------------------------------------------------------------------------

#: Outcomes of a case. ``accepted`` and ``clean`` (a one-line InputError) are the allowed ones.
OUTCOMES = ("accepted", "clean", "long", "traceback", "panic", "hang", "crash")


def classify(case: Case) -> tuple[str, str]:
    """Runs one case in this process: (outcome, detail). Never raises."""
    import tempfile
    from pathlib import Path

    from aqmlab.errors import MAX_MESSAGE, InputError
    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario

    try:
        if case.toml is not None:
            with tempfile.TemporaryDirectory() as d:
                p = Path(d) / "case.toml"
                p.write_text(case.toml, encoding="utf-8", errors="surrogatepass")
                sc = scenario.load(p)
        else:
            sc = materialize(case.data)
        runner.run(sc)  # type: ignore[arg-type]
        return "accepted", ""
    except InputError as e:
        msg = str(e)
        if "\n" in msg or len(msg) > MAX_MESSAGE or not msg:
            return "long", msg[:200]
        return "clean", msg
    except BaseException as e:  # a Rust panic is a BaseException (pyo3's PanicException)
        if isinstance(e, KeyboardInterrupt | SystemExit):
            raise
        kind = "panic" if type(e).__name__ == "PanicException" else "traceback"
        return kind, f"{type(e).__name__}: {str(e)[:200]}"


def _worker(conn: Any) -> None:
    import os

    os.environ.setdefault("AQMLAB_MEMORY_BUDGET", "2GB")
    import aqmlab.running.runner  # noqa: F401  (imported before the first case's clock starts)

    conn.send("ready")
    while True:
        try:
            case = conn.recv()
        except (EOFError, OSError):
            return
        if case is None:
            return
        conn.send(classify(case))


class Harness:
    """A worker process that runs cases one at a time; a case over ``timeout_s`` is a hang (the
    worker is killed and a fresh one started), a worker that dies is a crash."""

    def __init__(self, timeout_s: float = 10.0) -> None:
        import multiprocessing as mp

        self.timeout_s = timeout_s
        self._ctx = mp.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_worker, args=(child,), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent

    def _stop(self, kill: bool) -> None:
        if self._proc is None:
            return
        if kill:
            self._proc.kill()
        else:
            try:
                self._conn.send(None)
            except OSError:
                pass
        self._proc.join(timeout=5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()
        self._proc = None

    def run(self, case: Case) -> tuple[str, str]:
        """(outcome, detail) of ``case``."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
            try:
                if not self._conn.poll(60.0):  # a fresh worker imports aqmlab first
                    raise EOFError
                self._conn.recv()  # its "ready"
            except (EOFError, OSError):
                self._stop(kill=True)
                raise RuntimeError("the fuzz worker process did not start") from None
        self._conn.send(case)
        if not self._conn.poll(self.timeout_s):
            self._stop(kill=True)
            return "hang", f"no answer within {self.timeout_s:g} s"
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            self._stop(kill=True)
            return "crash", f"worker died (exit code {code})"

    def close(self) -> None:
        """Stops the worker."""
        self._stop(kill=False)

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
