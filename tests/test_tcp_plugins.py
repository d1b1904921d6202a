"""``[tcp] cc``, ``recovery`` and ``pacing`` (issue 22) from a scenario file to the simulator."""

from __future__ import annotations

import json
import subprocess
import sys

import aqmlab
from aqmlab.scenario import schema as scenario

DOC = {
    "duration": "4s",
    "warmup": "1s",
    "topology": {"rate": "20Mbps", "delay": "5ms", "buffer": 60},
    "aqm": {"name": "red", "min_th": 10, "max_th": 40, "ecn": True},
    "flows": [{"count": 3, "start_spread": "200ms"}],
}


def _flows(**tcp) -> str:
    res = aqmlab.run({**DOC, "tcp": tcp}, plot=False)
    return json.dumps([res.summary["flows"], res.summary["links"]], sort_keys=True)


def test_defaults_reach_the_simulator_and_overrides_too():
    t = scenario.build_config(scenario.from_dict(DOC))["flows"][0]["tcp"]
    assert (t["cc"], t["recovery"], t["pacing"]) == (None, None, False)
    doc = {**DOC, "tcp": {"cc": "dctcp", "recovery": "sack", "pacing": True, "ecn": True}}
    t = scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]
    assert (t["cc"], t["recovery"], t["pacing"]) == ("dctcp", "sack", True)


def test_a_variant_is_its_preset_of_cc_and_recovery():
    # cubic = CUBIC + SACK recovery; newreno = Reno + NewReno recovery (docs/scenarios.md).
    assert _flows(variant="cubic", ecn=True) == _flows(
        variant="newreno", cc="cubic", recovery="sack", ecn=True
    )
    assert _flows(variant="newreno", ecn=True) == _flows(
        variant="cubic", cc="reno", recovery="newreno", ecn=True
    )
    assert _flows(variant="newreno", ecn=True) != _flows(
        variant="newreno", recovery="reno", ecn=True
    )


def _cli(tmp_path, tcp: str) -> subprocess.CompletedProcess:
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "2s"\nwarmup = "0s"\n[topology]\nrate = "10Mbps"\ndelay = "5ms"\n'
        f"[tcp]\n{tcp}\n[[flows]]\ncount = 1\n"
    )
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(f), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert not out.exists(), "nothing written for bad input"
    return r


def test_bad_names_are_one_line_errors_with_exit_2(tmp_path):
    for tcp, words in [
        ('cc = "vegas"', ["tcp.cc", "reno, cubic, dctcp"]),
        ('cc = "dctcp"', ["tcp.ecn", "dctcp"]),
        ('recovery = "fack"', ["tcp.recovery", "rack"]),
        ('cc = "ledbat"', ["tcp.timestamps", "ledbat"]),
    ]:
        r = _cli(tmp_path, tcp)
        assert r.returncode == 2, (tcp, r.stderr)
        err = r.stderr.strip()
        assert "\n" not in err and "Traceback" not in err, err
        assert all(w in err for w in words), err


def test_rack_and_ledbat_run_from_a_scenario():
    # RACK-TLP and LEDBAT are chosen by name and reach the simulator (their behaviour is tested
    # in crates/sim: tcp/recovery/rack.rs, tcp/cc/ledbat.rs).
    for tcp in ({"recovery": "rack"}, {"cc": "ledbat", "timestamps": True}):
        doc = {**DOC, "tcp": tcp, "aqm": {"name": "droptail"}}
        t = scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]
        assert {k: t[k] for k in tcp} == tcp
        res = aqmlab.run(doc, plot=False)
        assert sum(f["goodput_bps"] for f in res.summary["flows"]) > 0.9 * 20e6, tcp
