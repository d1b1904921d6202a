"""The latency probe (issue 13 item 2): RTT on an idle path equals the hand-computed propagation
plus serialisation; a probe does not perturb the bulk flows it measures; bad input is refused."""

from __future__ import annotations

import copy

import pytest

from aqmlab.errors import InputError
from aqmlab.running import runner

IDLE = {
    "name": "probe-idle",
    "duration": "3s",
    "warmup": "0.5s",
    "topology": {
        "type": "dumbbell",
        "rate": "10Mbps",
        "delay": "5ms",
        "buffer": 100,
        "access_rate": "1Gbps",
        "access_delay": "1ms",
    },
    "flows": [{"type": "probe"}],
}


def test_probe_rtt_on_an_idle_path_is_propagation_plus_serialisation():
    res = runner.run(IDLE)
    (p,) = res.summary["probe"]
    # By hand: each way crosses access (1 ms, 1 Gb/s), bottleneck (5 ms, 10 Mb/s), access
    # (1 ms, 1 Gb/s); a 64 B probe takes 512 bits / rate to serialise on each link.
    bits = 64 * 8
    one_way = 2 * 1e-3 + 5e-3 + 2 * bits / 1e9 + bits / 10e6
    rtt = 2 * one_way  # = 14.104448 ms
    assert p["rtt_min_s"] == pytest.approx(rtt, abs=1e-12)
    assert p["rtt_max_s"] == pytest.approx(rtt, abs=1e-12)
    assert p["rtt_mean_s"] == pytest.approx(rtt, abs=1e-12)
    for k in ("p50", "p90", "p99"):
        assert p[f"rtt_{k}_s"] == pytest.approx(rtt, abs=1e-12)
    # One probe every 10 ms from 0.5 s to 3 s inclusive; the echoes of the last 14 ms are still out.
    assert p["sent"] == 251
    assert p["echoes"] == 251 - 2
    # Its series: one RTT per echo, the whole run (warm-up included), sent every 10 ms.
    s = res.series["probe:g0.0"]
    assert len(s) == 301 - 2  # sent at 0, 0.01, ..., 3.00 s
    assert (s["t_s"].diff().dropna().round(9) == 0.01).all()
    assert s["rtt_s"].min() == pytest.approx(rtt, abs=1e-12)


def _bulk(with_probe: bool, aqm: str = "codel") -> dict:
    sc = copy.deepcopy(IDLE)
    sc.update(duration="30s", warmup="5s", aqm={"name": aqm})
    sc["topology"]["buffer"] = 200
    sc["flows"] = [{"name": "bulk", "count": 10, "start_spread": "1s"}]
    if with_probe:
        sc["flows"].append({"name": "ping", "type": "probe"})
    return sc


def _goodput(s: dict) -> float:
    return sum(f["goodput_bps"] for f in s["flows"] if f["name"].startswith("bulk."))


@pytest.mark.parametrize("aqm", ["codel", "droptail"])
def test_a_probe_does_not_perturb_the_bulk_flows(aqm):
    # The probe offers 51.2 kb/s each way, 0.5% of the 10 Mb/s bottleneck: the bulk goodput may
    # lose that share. Any change to a run reshuffles its TCP dynamics (about 1% run to run), so
    # the comparison is over three seeds: each within 2%, their mean within 1%.
    diffs = []
    for seed in (1, 2, 3):
        base = _goodput(runner.run(_bulk(False, aqm), seed=seed).summary)
        diffs.append(_goodput(runner.run(_bulk(True, aqm), seed=seed).summary) / base - 1)
    assert all(abs(d) < 0.02 for d in diffs), diffs
    assert abs(sum(diffs) / 3) < 0.01, diffs


def test_a_probe_sees_the_queue_and_stays_out_of_the_bulk_jain_index():
    res = runner.run(_bulk(True, "red"))
    s = res.summary
    bulk = [f["goodput_bps"] for f in s["flows"] if f["name"].startswith("bulk.")]
    jain = sum(bulk) ** 2 / (len(bulk) * sum(g * g for g in bulk))
    assert s["fairness"]["jain_goodput"] == pytest.approx(jain, rel=1e-12)
    # Jain over the bulk flows only; the probe has its own group.
    assert set(s["fairness"]["groups"]) == {"bulk", "ping"}
    (p,) = s["probe"]
    assert p["flow"] == "ping.0" and p["echoes"] > 2000
    # The probe sees the standing queue: its mean RTT exceeds the path's propagation RTT by
    # about the bottleneck's mean queueing delay (the reverse path carries only ACKs).
    b = res.bottleneck
    prop = 2 * (2e-3 + 5e-3)
    assert p["rtt_min_s"] >= prop
    assert p["rtt_mean_s"] - prop == pytest.approx(b["delay_mean_s"], rel=0.25)
    assert p["rtt_min_s"] <= p["rtt_p50_s"] <= p["rtt_p90_s"] <= p["rtt_p99_s"] <= p["rtt_max_s"]


@pytest.mark.parametrize(
    ("group", "field"),
    [
        ({"type": "probe", "interval": "0ms"}, "flows[0].interval"),
        ({"type": "probe", "interval": "1ns"}, "flows[0].interval"),
        ({"type": "probe", "load": 0.1}, "flows[0].load"),
        ({"type": "probe", "packet_size": "0.5B"}, "flows[0].packet_size"),
        ({"type": "tcp", "interval": "20ms"}, "flows[0].interval"),
    ],
)
def test_bad_probe_input_names_the_field(group, field):
    sc = copy.deepcopy(IDLE)
    sc["flows"] = [group]
    with pytest.raises(InputError) as e:
        runner.run(sc)
    assert str(e.value).startswith(field + ":"), str(e.value)


def test_a_scenario_with_a_probe_survives_its_own_dump():
    # Sweeps and comparisons rebuild scenarios from model_dump(): defaults must round-trip.
    from aqmlab.scenario import schema as scenario

    sc = scenario.from_dict(_bulk(True))
    again = scenario.from_dict(sc.model_dump())
    cfg = scenario.build_config(again)
    (probe,) = [f for f in cfg["flows"] if f["name"] == "ping.0"]
    assert probe["source"] == {"kind": "probe", "interval_ns": 10_000_000, "bytes": 64}
    assert probe["rev_path"]  # echoes come back
    sized = copy.deepcopy(IDLE)
    sized["flows"] = [{"type": "probe", "packet_size": "1000B", "interval": "20ms"}]
    (f,) = scenario.build_config(scenario.from_dict(sized))["flows"]
    assert f["source"] == {"kind": "probe", "interval_ns": 20_000_000, "bytes": 1000}
