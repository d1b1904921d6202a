"""Links whose capacity varies (issue 24 item 2): rate schedules and mahimahi traces in scenario
files, checked in one line naming the field; a trace read relative to its scenario file; the
summary's offered capacity against hand counts; RFC 7928 s. 8.2.6's scenarios run."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

ROOT = Path(__file__).resolve().parent.parent
STEPS = [{"at": "0s", "rate": "100Mbps"}, {"at": "20s", "rate": "10Mbps"}]


def _cfg(topology: dict, **over) -> dict:
    doc = {"duration": "60s", "warmup": "0s", "topology": topology, **over}
    return scenario.build_config(scenario.from_dict(doc))


def test_a_schedule_reaches_the_simulator_in_base_units_both_ways():
    cfg = _cfg({"rate": STEPS, "rate_repeat": "40s"})
    fwd, rev = cfg["links"][0], cfg["links"][1]
    assert fwd["rate_schedule"] == [[0, 100_000_000], [20_000_000_000, 10_000_000]]
    assert fwd["rate_repeat_ns"] == 40_000_000_000
    # Nominal rate: the time-average over one repeat, (20 x 100 + 20 x 10) / 40 = 55 Mb/s.
    assert fwd["rate_bps"] == 55_000_000
    # The reverse direction follows the forward one unless reverse_rate says otherwise.
    assert rev["rate_schedule"] == fwd["rate_schedule"]
    cfg = _cfg({"rate": STEPS, "reverse_rate": "5Mbps"})
    assert "rate_schedule" not in cfg["links"][1] and cfg["links"][1]["rate_bps"] == 5_000_000
    # Without a repeat the last step holds: averaged over the 60 s run, (20 x 100 + 40 x 10) / 60.
    assert cfg["links"][0]["rate_bps"] == 40_000_000


@pytest.mark.parametrize(
    ("topology", "msg"),
    [
        ({"rate": [{"at": "1s", "rate": "1Mbps"}]}, "topology.rate[0].at: the first step must be"),
        (
            {"rate": [{"at": "0s", "rate": "1Mbps"}, {"at": "0s", "rate": "2Mbps"}]},
            "topology.rate[1].at: step times must increase (got 0s after 0s)",
        ),
        ({"rate": [{"at": "0s", "rate": "0Mbps"}]}, "topology.rate[0].rate: must be > 0"),
        ({"rate": [{"at": "0s", "rate": "100"}]}, "topology.rate[0].rate: '100' is not a rate"),
        ({"rate": [{"at": "0s", "rate": "1Mbps", "x": 1}]}, "topology.rate[0].x:"),
        ({"rate": [{"at": "-1s", "rate": "1Mbps"}]}, "topology.rate[0].at: must be >= 0"),
        ({"rate": []}, "topology.rate: give at least one { at, rate } step"),
        ({"rate": STEPS, "rate_repeat": "20s"}, "topology.rate_repeat: must be longer than"),
        ({"rate_repeat": "20s"}, "topology.rate_repeat: only with a rate schedule"),
        ({"rate": "1Mbps", "trace": "x"}, "topology.trace: give a rate or a trace, not both"),
        ({"trace": "/nonexistent/x.trace"}, "topology.trace: no such file"),
    ],
)
def test_bad_schedules_are_one_line_errors_naming_the_field(topology, msg):
    with pytest.raises(InputError) as e:
        _cfg(topology)
    assert msg in str(e.value)
    assert "\n" not in str(e.value)


def test_general_links_take_schedules_and_traces_per_direction(tmp_path):
    (tmp_path / "up.trace").write_text("1\n2\n2\n4\n")
    links = [
        {"from": "h1", "to": "a", "rate": "1Gbps", "delay": "1ms"},
        {
            "from": "a",
            "to": "h2",
            "rate": STEPS,
            "rate_repeat": "40s",
            "delay": "5ms",
            "reverse": {"trace": str(tmp_path / "up.trace")},
        },
    ]
    nodes = [{"name": "h1", "kind": "host"}, {"name": "h2", "kind": "host"}, {"name": "a"}]
    topo = {"type": "general", "nodes": nodes, "links": links}
    flows = [{"src": "h1", "dst": "h2"}]
    cfg = _cfg(topo, flows=flows)
    by = {lk["name"]: lk for lk in cfg["links"]}
    assert by["a-h2"]["rate_schedule"][1] == [20_000_000_000, 10_000_000]
    assert by["h2-a"]["trace_ms"] == [1, 2, 2, 4]
    # 4 opportunities of 12,000 bits every 4 ms: 12 Mb/s nominal.
    assert by["h2-a"]["rate_bps"] == 12_000_000
    assert "rate_schedule" not in by["h1-a"] and "trace_ms" not in by["h1-a"]
    links[1].pop("rate")
    links[1].pop("rate_repeat")
    with pytest.raises(InputError, match=r"topology.links\[1\].rate: is required"):
        _cfg(topo, flows=flows)


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("1\n2\nabc\n", "topology.trace: line 3 of 'bad.trace': 'abc' is not a whole number"),
        ("5\n3\n", "topology.trace: line 2 of 'bad.trace': timestamps must not decrease"),
        ("0\n0\n", "the last timestamp of 'bad.trace' must be > 0 ms"),
        ("\n\n", "'bad.trace' has no timestamps"),
        ("1.5\n", "'1.5' is not a whole number"),
    ],
)
def test_bad_traces_are_one_line_errors_with_the_line(tmp_path, text, msg):
    (tmp_path / "bad.trace").write_text(text)
    with pytest.raises(InputError) as e:
        _cfg({"trace": str(tmp_path / "bad.trace")})
    assert msg in str(e.value)


def test_a_trace_is_read_relative_to_its_scenario_file_and_its_capacity_counted(tmp_path):
    # 10 lines: opportunities at 1, 1, 2, 4, 4, 4, 7, 8, 9, 10 ms, repeating every 10 ms:
    # 12 Mb/s on average. Over the window [1 s, 3 s] the link offers 200 cycles of 10 plus the
    # opportunity at exactly 1 s (the 100th cycle's last line, at 1000 ms) = 2001 x 12,000 bits
    # over 2 s = 12.006 Mb/s.
    d = tmp_path / "sc"
    d.mkdir()
    (d / "ten.trace").write_text("1\n1\n2\n4\n4\n4\n7\n8\n9\n10\n")
    (d / "s.toml").write_text(
        'duration = "3s"\nwarmup = "1s"\n[topology]\ntrace = "ten.trace"\nbuffer = 1000\n'
        '[[flows]]\ntype = "cbr"\nrate = "20Mbps"\npacket_size = "1000B"\n'
    )
    out = tmp_path / "run"
    r = aqmlab_cli("run", str(d / "s.toml"), "--out", str(out), "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    s = json.loads((out / "summary.json").read_text())
    bn = next(lk for lk in s["links"] if lk["name"] == "bottleneck")
    assert bn["capacity"] == "trace"
    assert bn["rate_bps"] == round(2001 * 12_000 / 2)
    # Overloaded (20 Mb/s offered): every opportunity carries 1500 B.
    assert bn["utilisation"] == pytest.approx(1.0, abs=0.005)
    # The run directory's scenario reads back from anywhere: the trace path was made absolute.
    sc = json.loads((out / "scenario.json").read_text())
    assert Path(sc["topology"]["trace"]).is_absolute()


@pytest.mark.parametrize("aqm", ["codel", "pie"])
def test_rfc7928_varying_capacity_scenarios_run(aqm):
    # RFC 7928 s. 8.2.6 as issue 24 sets it. Over [10 s, 130 s] the link offers 100 Mb/s for
    # 60 s and 10 Mb/s for 60 s: 55 Mb/s. Two NewReno flows keep it mostly busy; the AQM keeps
    # the mean queueing delay well under the 1000-packet buffer's (120 ms at 100 Mb/s).
    sc = scenario.load(ROOT / "scenarios" / f"rfc7928_capacity_{aqm}.toml")
    res = aqmlab.run(sc, plot=False)
    bn = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    assert bn["capacity"] == "schedule"
    assert bn["rate_bps"] == 55_000_000
    assert 0.7 < bn["utilisation"] <= 1.0
    assert bn["delay_mean_s"] < 0.05
    assert bn["dropped_aqm"] > 0


def test_the_testbed_passes_a_schedule_and_a_trace_to_the_forwarder(tmp_path):
    from aqmlab.testbed import plan

    (tmp_path / "t.trace").write_text("1\n2\n")
    doc = {
        "duration": "10s",
        "warmup": "1s",
        "topology": {
            "rate": STEPS,
            "rate_repeat": "40s",
            "reverse_trace": str(tmp_path / "t.trace"),
        },
        "flows": [{}],
    }
    sc = scenario.from_dict(doc)
    p = plan.make(sc, scenario.build_config(sc))
    fwd, rev = p.fwd_config["forward"], p.fwd_config["reverse"]
    assert fwd["rate_schedule"] == [[0, 100_000_000], [20_000_000_000, 10_000_000]]
    assert fwd["rate_repeat_ns"] == 40_000_000_000
    assert rev["trace_ms"] == [1, 2] and "rate_schedule" not in rev
