"""Every bad input of issue 2 gets one line naming the field, exit code 2, no traceback, and no
output directory that looks complete."""

from __future__ import annotations

import pytest

from conftest import SMALL, aqmlab_cli


def _edit(old: str, new: str) -> str:
    assert old in SMALL, old
    return SMALL.replace(old, new)


CASES = [
    ("malformed toml", SMALL + "\n[aqm\n", "not valid TOML"),
    (
        "unknown field",
        _edit('rate = "20Mbps"', 'rate = "20Mbps"\nrat = "1Mbps"'),
        "topology.rat: unknown field",
    ),
    ("unknown aqm", _edit('name = "red"', 'name = "redd"'), "aqm.name: unknown AQM 'redd'"),
    ("rate without unit", _edit('rate = "20Mbps"', "rate = 20000000"), "topology.rate"),
    ("rate string without unit", _edit('rate = "20Mbps"', 'rate = "20"'), "topology.rate"),
    (
        "rate with a wrong unit",
        _edit('rate = "20Mbps"', 'rate = "20ms"'),
        "topology.rate: unit 'ms' is not a rate unit",
    ),
    ("delay without unit", _edit('delay = "5ms"', 'delay = "5"'), "topology.delay"),
    (
        "delay with a wrong unit",
        _edit('delay = "5ms"', 'delay = "5Mbps"'),
        "topology.delay: unit 'Mbps' is not a duration unit",
    ),
    ("zero rate", _edit('rate = "20Mbps"', 'rate = "0Mbps"'), "topology.rate: must be > 0"),
    ("negative rate", _edit('rate = "20Mbps"', 'rate = "-5Mbps"'), "topology.rate"),
    (
        "buffer below max_th",
        _edit("buffer = 100", "buffer = 50"),
        "aqm.max_th: must not exceed the link buffer",
    ),
    ("min_th >= max_th", _edit("min_th = 20", "min_th = 60"), "aqm.min_th: must be < max_th"),
    ("w_q zero", _edit("max_th = 60", "max_th = 60\nw_q = 0"), "aqm.w_q: must be in (0, 1]"),
    ("w_q above one", _edit("max_th = 60", "max_th = 60\nw_q = 1.5"), "aqm.w_q: must be in (0, 1]"),
    (
        "duration <= warmup",
        _edit('warmup = "2s"', 'warmup = "6s"'),
        "duration: must be longer than warmup",
    ),
    ("zero flows", _edit("count = 8", "count = 0"), "flows[0].count: must be at least 1"),
    ("no flow groups", "flows = []\n" + SMALL.split("[[flows]]")[0], "flows: at least one"),
    (
        "a yes/no word where TOML has true/false",
        SMALL + '\n[tcp]\nhandshake = "yes"\n',
        "tcp.handshake: Input should be a valid boolean",
    ),
    (
        "unknown aqm parameter",
        _edit("min_th = 20", "min_th = 20\nfoo = 1"),
        "aqm.foo: unknown parameter of red",
    ),
]


@pytest.mark.parametrize(("label", "text", "expect"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, label, text, expect):
    sc = tmp_path / "bad.toml"
    sc.write_text(text)
    out = tmp_path / "out"
    r = aqmlab_cli("run", str(sc), "--out", str(out))
    assert r.returncode == 2, (label, r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert expect in lines[0], lines[0]
    assert "Traceback" not in r.stderr
    assert not (out / "summary.json").exists()
    assert r.stdout == ""


def test_missing_file_and_bad_flags_are_one_line_too(tmp_path):
    r = aqmlab_cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such file" in r.stderr
    r = aqmlab_cli("run", "--seed", "x")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r = aqmlab_cli("frobnicate")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
