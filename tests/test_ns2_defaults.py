"""``[aqm] defaults = "ns2"``: ns-2.35's parameter sets, checked by hand and against ``ns``."""

from __future__ import annotations

import math
import shutil
import subprocess

import pytest

from aqmlab.errors import InputError
from aqmlab.scenario import ns2_defaults
from aqmlab.scenario import schema as scenario

_RED_AUTO_TCL = """
set ns [new Simulator]
set n0 [$ns node]
set n1 [$ns node]
$ns simplex-link $n0 $n1 [lindex $argv 0] [lindex $argv 1] RED
set q [[$ns link $n0 $n1] queue]
proc show {} { global q; puts "[$q set thresh_] [$q set maxthresh_] [$q set q_weight_]"; exit 0 }
$ns at 0.1 "show"
$ns run
"""


def test_red_auto_configuration_by_hand():
    # 100 Mb/s, 2 ms: ptc = 1e8 / 4000 = 25000 pkt/s; min_th = max(5, 0.005 * 25000 / 2) = 62.5,
    # max_th = 187.5; rtt = max(0.1, 3 (0.002 + 1/25000)) = 0.1; w_q = 1 - exp(-1 / 25000).
    p = ns2_defaults.red(100e6, 0.002)
    assert p["min_th"] == 62.5 and p["max_th"] == 187.5
    assert math.isclose(p["w_q"], 1 - math.exp(-1 / 25000), rel_tol=1e-12)
    assert p["wait"] is True and p["gentle"] is True and p["mode"] == "byte"
    # 1.5 Mb/s, 50 ms: ptc = 375; min_th floor 5, max_th 15; rtt = 3 (0.05 + 1/375) = 0.158.
    p = ns2_defaults.red(1.5e6, 0.05)
    assert p["min_th"] == 5.0 and p["max_th"] == 15.0
    assert math.isclose(p["w_q"], 1 - math.exp(-1 / (10 * 0.158 * 375)), rel_tol=1e-9)


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed")
@pytest.mark.parametrize(
    ("rate", "delay", "rate_bps", "delay_s"),
    [("100Mb", "2ms", 100e6, 0.002), ("10Mb", "20ms", 10e6, 0.02), ("1.5Mb", "50ms", 1.5e6, 0.05)],
)
def test_red_auto_configuration_matches_the_ns2_binary(tmp_path, rate, delay, rate_bps, delay_s):
    tcl = tmp_path / "red.tcl"
    tcl.write_text(_RED_AUTO_TCL)
    out = subprocess.run(
        ["ns", str(tcl), rate, delay], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    th, maxth, qw = (float(x) for x in out[:3])
    p = ns2_defaults.red(rate_bps, delay_s)
    assert math.isclose(p["min_th"], th, rel_tol=1e-9)
    assert math.isclose(p["max_th"], maxth, rel_tol=1e-9)
    assert math.isclose(p["w_q"], qw, rel_tol=1e-9)


def test_preset_in_aqm_params_and_explicit_values_override():
    name, par = scenario.aqm_params(
        {"name": "red", "defaults": "ns2", "min_th": 30}, link=(100e6, 0.002)
    )
    assert name == "red"
    assert par["min_th"] == 30 and par["max_th"] == 187.5 and par["wait"] is True
    _, par = scenario.aqm_params({"name": "pi", "defaults": "ns2"}, link=(100e6, 0.002))
    assert par["q_ref"] == 50.0 and par["sample_hz"] == 170.0
    _, par = scenario.aqm_params({"name": "red"}, link=(100e6, 0.002))
    assert par == {}


def test_bad_presets_name_the_field():
    with pytest.raises(InputError, match=r"^aqm\.defaults: must be one of"):
        scenario.aqm_params({"name": "red", "defaults": "ns4"})
    with pytest.raises(InputError, match=r"^aqm\.defaults: ns-2 has no default set for 'codel'"):
        scenario.aqm_params({"name": "codel", "defaults": "ns2"})


def test_a_scenario_runs_with_ns2_red(tmp_path):
    sc = scenario.from_dict(
        {
            "duration": "3s",
            "warmup": "1s",
            "aqm": {"name": "red", "defaults": "ns2"},
            "flows": [{"count": 5}],
        }
    )
    cfg = scenario.build_config(sc)
    link = next(lk for lk in cfg["links"] if lk["name"] == "bottleneck")
    assert link["aqm"]["params"]["wait"] is True


def test_scenario_sizes_ns2_red_for_its_own_bottleneck():
    # The preset is sized for the link it guards, as red.cc's initialize_params reads the link:
    # 100 Mb/s and 2 ms give w_q = 1 - exp(-1 / 25000) and min_th 62.5 (hand-worked in
    # test_red_auto_configuration_by_hand), not the 10 Mb/s, 0 s fallback (w_q 1 - exp(-1 /
    # 2500), 10x larger), which a lost argument once gave every scenario (seed 000's RED).
    sc = scenario.from_dict(
        {
            "duration": "3s",
            "warmup": "1s",
            "topology": {"rate": "100Mbps", "delay": "2ms"},
            "aqm": {"name": "red", "defaults": "ns2"},
            "flows": [{"count": 5}],
        }
    )
    cfg = scenario.build_config(sc)
    par = next(lk for lk in cfg["links"] if lk["name"] == "bottleneck")["aqm"]["params"]
    assert math.isclose(par["w_q"], 1 - math.exp(-1 / 25000), rel_tol=1e-12)
    assert par["min_th"] == 62.5 and par["max_th"] == 187.5
