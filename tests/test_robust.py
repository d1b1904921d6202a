"""Faults found by trying to break aqmlab (issue 13, items 10-13): each is refused in one line
with exit code 2, before anything is simulated or allocated, and echoes values cut short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aqmlab.errors import InputError, show
from aqmlab.scenario import limits
from aqmlab.scenario import schema as scenario
from conftest import SMALL

# A run this long takes minutes: a test that gets its answer in seconds shows it was refused
# before simulating.
LONG_RUN = SMALL.replace('duration = "6s"', 'duration = "100000s"')


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 180):
    """``aqmlab`` as a user runs it, with extra environment variables."""
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def one_line_error(r: subprocess.CompletedProcess, *expect: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr[-2000:]
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    for e in expect:
        assert e in lines[0], lines[0]
    return lines[0]


# --- item 10: host counts beyond the limits, memory beyond what is available --------------------


@pytest.mark.parametrize("n", [100_000_000, 9_223_372_036_854_775_808])
def test_host_count_beyond_the_limit_is_refused_at_once(tmp_path, n):
    sc = tmp_path / "hosts.toml"
    sc.write_text(LONG_RUN.replace("[aqm]", f"right = {n}\n\n[aqm]"))
    r = cli("run", str(sc), "--out", str(tmp_path / "out"), timeout=120)
    line = one_line_error(r, "topology.right", f"at most {limits.MAX_HOSTS_PER_SIDE}", str(n))
    assert len(line) < 200
    assert not (tmp_path / "out").exists()


def test_flow_count_beyond_the_limit_is_refused(tmp_path):
    sc = tmp_path / "flows.toml"
    sc.write_text(LONG_RUN.replace("count = 8", "count = 1000001"))
    one_line_error(cli("run", str(sc), timeout=120), "flows[0].count", "at most 1000000")


def test_memory_is_estimated_before_building_and_refused_beyond_the_budget(tmp_path):
    # 200,000 flows with one host per flow on each side: the estimate counts the flows, the
    # 400,000 hosts and the base, far above a 300 MB budget; refused before building anything.
    sc = tmp_path / "many.toml"
    sc.write_text(LONG_RUN.replace("count = 8", "count = 200000"))
    r = cli("run", str(sc), env={limits.BUDGET_ENV: "300MB"}, timeout=120)
    line = one_line_error(r, "flows:", "estimated", "200000 flows", "400000 hosts", "300 MB")
    need = limits.BASE_BYTES + 200_000 * limits.PER_FLOW_BYTES + 400_000 * limits.PER_HOST_BYTES
    # the bottleneck's series: max_samples (200,000) points of time + 5 columns
    need += 200_000 * (limits.LINK_SERIES_COLUMNS + 1) * limits.PER_SAMPLE_BYTES
    assert limits.fmt_bytes(need) in line


def test_memory_estimate_grows_with_every_count():
    base = scenario.from_dict({"flows": [{"count": 10}], "duration": "1s"})
    n0 = limits.size_of(base).memory_bytes()
    more_flows = scenario.from_dict(
        {"flows": [{"count": 20}], "topology": {"left": 10, "right": 10}, "duration": "1s"}
    )
    assert limits.size_of(more_flows).memory_bytes() == n0 + 10 * limits.PER_FLOW_BYTES
    all_links = scenario.from_dict(
        {"flows": [{"count": 10}], "output": {"monitor_all_links": True}, "duration": "1s"}
    )
    # 2 bottleneck-side links + 2 per host (20 hosts) = 42 monitored, 101 samples of 6 columns
    extra = (42 - 1) * (limits.LINK_SERIES_COLUMNS + 1) * 101 * limits.PER_SAMPLE_BYTES
    assert limits.size_of(all_links).memory_bytes() == n0 + extra


def test_a_run_within_the_budget_is_not_refused(tmp_path, small_scenario):
    r = cli(
        "run", str(small_scenario), "--out", str(tmp_path / "o"), env={limits.BUDGET_ENV: "50GB"}
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "summary.json").is_file()


# --- item 11: binary garbage, an output location that cannot be created -------------------------


def test_binary_garbage_is_a_one_line_input_error(tmp_path):
    sc = tmp_path / "garbage.toml"
    sc.write_bytes(bytes(range(256)) * 8)
    one_line_error(cli("run", str(sc)), "scenario:", "not a text file")


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path):
    sc = tmp_path / "huge.toml"
    with sc.open("wb") as f:
        f.truncate(limits.MAX_SCENARIO_BYTES + 1)  # sparse: costs no disk
    one_line_error(cli("run", str(sc)), "scenario:", "larger than")


@pytest.mark.parametrize("where", ["under-a-file", "is-a-file"])
def test_out_that_cannot_be_created_is_refused_before_the_run(tmp_path, where):
    sc = tmp_path / "long.toml"
    sc.write_text(LONG_RUN)  # minutes if simulated: the refusal must come first
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker / "sub" if where == "under-a-file" else blocker
    r = cli("run", str(sc), "--out", str(out), timeout=120)
    one_line_error(r, "out:", "not a directory")
    assert blocker.read_text() == "x"


def test_out_with_a_name_too_long_is_refused(tmp_path, small_scenario):
    r = cli("run", str(small_scenario), "--out", str(tmp_path / ("d" * 300)), timeout=120)
    one_line_error(r, "out:", "longer than the file system allows")


# --- item 12: an empty scenario file ----------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_scenario_file_is_refused(tmp_path, text):
    sc = tmp_path / "empty.toml"
    sc.write_text(text)
    r = cli("run", str(sc), "--out", str(tmp_path / "out"), timeout=120)
    one_line_error(r, "scenario:", "has no settings", "aqmlab demo")
    assert not (tmp_path / "out").exists()


# --- item 13: echoed values cut to a readable length --------------------------------------------


@pytest.mark.parametrize(
    "edit",
    [
        ('duration = "6s"', 'duration = "' + "y" * 5000 + '"'),
        ('rate = "20Mbps"', 'rate = "' + "9" * 5000 + 'Mbps"'),
        ('type = "dumbbell"', 'type = "' + "z" * 5000 + '"'),
        ('delay = "5ms"', "x" * 5000 + ' = "5ms"'),
    ],
    ids=["duration", "rate", "literal", "unknown-key"],
)
def test_a_long_bad_value_is_echoed_cut_short(tmp_path, edit):
    sc = tmp_path / "long.toml"
    sc.write_text(SMALL.replace(*edit, 1))
    line = one_line_error(cli("run", str(sc), "--out", str(tmp_path / "o")))
    assert len(line) <= 20 + 400, len(line)
    assert "5000" in line or "5004" in line or "characters cut" in line or "..." in line


def test_show_keeps_short_values_and_says_how_long_a_cut_one_was():
    assert show("2ms") == "'2ms'"
    s = show("a" * 5000)
    assert len(s) < 90 and s.startswith("'aaa") and "(5000 characters)" in s


def test_input_error_is_one_bounded_line():
    e = InputError("field: " + "v" * 10_000 + "\nsecond line")
    msg = str(e)
    assert "\n" not in msg and len(msg) <= 420
    assert msg.startswith("field: vvv") and msg.endswith("second line")


def test_load_echoes_a_long_path_cut(tmp_path):
    with pytest.raises(InputError) as e:
        scenario.load(Path(tmp_path) / ("n" * 200 + ".toml"))
    assert "no such file" in str(e.value) and len(str(e.value)) < 150


@pytest.mark.parametrize("side", ["left", "right"])
def test_an_empty_host_list_is_refused(side):
    # found by the property test: an empty list divided by zero while pairing flows with hosts
    sc = scenario.from_dict({"topology": {side: []}, "flows": [{"count": 3}]})
    with pytest.raises(InputError) as e:
        scenario.build_config(sc)
    assert str(e.value).startswith(f"topology.{side}: must be at least 1 host")


def test_building_a_large_network_says_what_it_builds(capsys):
    # item 15: a large network takes a while before the first simulated second; the run says
    # what it builds and its memory estimate (then, every 2 s, time and memory reached)
    from aqmlab.running import runner

    sc = scenario.from_dict(
        {"duration": "20ms", "warmup": "0s", "flows": [{"count": 7000, "start_spread": "10ms"}]}
    )
    runner.run(sc, progress=True)
    err = capsys.readouterr().err
    est = limits.fmt_bytes(limits.size_of(sc).memory_bytes())
    assert f"building the network: 7,000 flows, 14,000 hosts (estimated peak memory {est})" in err


def test_a_small_network_builds_quietly(capsys):
    from aqmlab.running import runner

    runner.run(scenario.from_dict({"duration": "20ms", "warmup": "0s"}), progress=True)
    assert "building the network" not in capsys.readouterr().err
