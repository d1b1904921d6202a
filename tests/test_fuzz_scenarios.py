"""Scenario fuzzing (issue 19): the fuzz findings of the issue as regression tests, and a few
hundred generated bad scenarios through ``aqmlab.run`` and a sample through the CLI. Every case
ends, within its time limit, accepted or refused on one line naming the field (exit code 2 at
the CLI): no traceback, no Rust panic, no hang, no crash. The 10,000-case run is
benches/fuzz_scenarios.py (figures in docs/benchmarks.md, "Scenario fuzzing")."""

from __future__ import annotations

import collections
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab.errors import MAX_MESSAGE
from aqmlab.running import fuzz

OK = {
    "duration": "1s",
    "warmup": "0.2s",
    "topology": {"rate": "10Mbps", "buffer": 100},
    "aqm": {"name": "red"},
    "flows": [{"count": 2}],
}


def _with(**over) -> dict:
    d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in OK.items()}
    for path, v in over.items():
        *head, last = path.split("__")
        t = d
        for h in head:
            t = t.setdefault(h, {})
        t[last] = v
    return d


def _refused(d: dict, field: str, *words: str, within_s: float = 5.0) -> str:
    t0 = time.perf_counter()
    with pytest.raises(aqmlab.InputError) as e:
        aqmlab.run(d)
    msg = str(e.value)
    assert time.perf_counter() - t0 < within_s, f"refused only after {time.perf_counter() - t0} s"
    assert msg.startswith(field + ":"), msg
    assert "\n" not in msg and len(msg) <= MAX_MESSAGE
    for w in words:
        assert w in msg, msg
    return msg


# --- the findings of the issue, each as written there ---------------------------------------


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_deep_nesting_is_one_line_not_a_recursion_error(kind):
    field = "duration" if kind == "list" else "duration.a"  # where the nesting starts
    _refused(_with(duration=fuzz.Deep(1000, kind).build()), field, "nested deeper than")


def test_deep_nesting_in_a_toml_file_is_one_line(tmp_path):
    p = tmp_path / "deep.toml"
    p.write_text("duration = " + "[" * 1000 + "1" + "]" * 1000 + "\n")
    with pytest.raises(aqmlab.InputError, match="nests arrays or tables too deeply"):
        aqmlab.run(p)


@pytest.mark.parametrize("value", ["5 ms", [1, 2]])
def test_dropfn_target_mean_of_the_wrong_type(value):
    d = _with(aqm={"name": "dropfn", "family": "linear", "target_mean": value})
    _refused(d, "aqm.target_mean", "must be a positive number")


@pytest.mark.parametrize(
    "topology, field, limit",
    [
        ({"type": "parking-lot", "hops": 1000001}, "topology.hops", "1000"),
        ({"type": "parking-lot", "hops": 2, "left": 10**7}, "topology.left", "1000000"),
        ({"type": "parking-lot", "hops": 2, "right": 10**7}, "topology.right", "1000000"),
        ({"type": "parking-lot", "hops": 900, "cross": 5000}, "topology", "2000000"),
    ],
)
def test_parking_lot_sizes_are_limited(topology, field, limit):
    _refused(_with(topology={"rate": "10Mbps", **topology}), field, limit)


@pytest.mark.parametrize(
    "aqm, key, value",
    [
        ("laq", "interval", "1ns"),
        ("pie", "t_update", "1ns"),
        ("rem", "interval", "1ns"),
        ("ared", "interval", "1ns"),
        ("pi", "sample_hz", 1e9),
        ("anaqm", "sample_hz", 1e9),
    ],
)
def test_nanosecond_update_periods_are_refused_not_a_hang(aqm, key, value):
    _refused(_with(aqm={"name": aqm, key: value}), f"aqm.{key}", "10 us")


def test_a_ten_microsecond_period_is_accepted():
    aqmlab.run(_with(aqm={"name": "laq", "interval": "10us"}))


def test_a_million_web_objects_per_session_is_refused_quickly_naming_objects():
    d = _with(duration="10s", flows=[{"type": "web", "objects": 1000000, "arrival_rate": 1}])
    _refused(d, "flows[0].objects", "1000000", within_s=2.0)


@pytest.mark.parametrize(
    "d, field",
    [
        (_with(aqm={"name": "pie", "window": math.nan}), "aqm.window"),
        (_with(aqm={"name": "red", "max_p": math.inf}), "aqm.max_p"),
        (_with(tcp={"init_cwnd": math.nan}), "tcp.init_cwnd"),
        (_with(metrics={"bpl": -math.inf}), "metrics.bpl"),
    ],
)
def test_nan_and_inf_name_the_field(d, field):
    _refused(d, field, "finite number")


def test_nan_in_a_toml_file_names_the_field(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('duration = "1s"\nwarmup = "0.2s"\n[tcp]\ninit_cwnd = nan\n')
    with pytest.raises(aqmlab.InputError, match=r"^tcp\.init_cwnd: must be a finite number"):
        aqmlab.run(p)


def test_settling_band_zero_names_its_path_before_the_run():
    _refused(_with(metrics={"settling_band": 0}), "metrics.settling_band", "> 0", within_s=1.0)


@pytest.mark.parametrize("where", ["", "topology", "aqm"])
def test_a_blank_key_is_named_sensibly(where):
    d = _with()
    (d if not where else d[where])[""] = 1
    msg = _refused(d, where or "the top level of the scenario", "blank key")
    assert not msg.startswith(":")


def test_internal_error_lines_are_cut(monkeypatch, capsys):
    from aqmlab.cli import main as cli
    from aqmlab.running import runner

    def boom(*a, **k):
        raise RuntimeError("x" * 5000)

    monkeypatch.setattr(runner, "run", boom)
    monkeypatch.setattr(sys, "argv", ["aqmlab"])
    code = cli.main(["run", "--quiet", "--out", "/tmp/aqmlab-never-written"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and len(err) < 500, err
    assert err.startswith("internal error: RuntimeError: xxx") and "characters cut" in err


# --- generated cases ------------------------------------------------------------------------


def test_few_hundred_generated_cases_through_the_api():
    cases = fuzz.generate(400, seed=19)
    assert {c.kind for c in cases} == set(fuzz.KINDS)  # every kind of mutation is exercised
    seen: collections.Counter = collections.Counter()
    bad = []
    with fuzz.Harness(timeout_s=20.0) as h:
        for case in cases:
            outcome, detail = h.run(case)
            seen[outcome] += 1
            if outcome not in ("accepted", "clean"):
                bad.append(f"{outcome}: {detail} <- {case.describe()}")
    assert not bad, "\n".join(bad[:10])
    assert seen["clean"] > 300  # the generator does make bad scenarios


def test_a_sample_through_the_cli(tmp_path):
    cases = [c for c in fuzz.generate(400, seed=20) if c.kind != "deep_nesting"][::10]
    cases += [fuzz.Case(-1, "deep_nesting", toml="duration = " + "[" * 1000 + "]" * 1000 + "\n")]
    codes: collections.Counter = collections.Counter()
    for case in cases:
        text = case.toml if case.toml is not None else fuzz.to_toml(case.data or {})
        if text is None:
            continue
        p = tmp_path / f"c{case.index}.toml"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        out = tmp_path / f"out{case.index}"
        r = subprocess.run(
            [sys.executable, "-m", "aqmlab", "run", str(p), "--out", str(out), "--quiet"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        codes[r.returncode] += 1
        where = f"{case.describe()}\nstderr: {r.stderr[:500]}"
        assert r.returncode in (0, 2), where
        assert "Traceback" not in r.stderr and "panicked" not in r.stderr, where
        if r.returncode == 2:
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), where
            assert not out.exists() and not Path(f"{out}.partial").exists(), where
    assert codes[2] > 20
