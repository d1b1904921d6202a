"""Seed 002's traffic on the testbed (issue 11): web-like TCP transfers and UDP CBR sources, mixed,
through one dropping function (d4) in aqmlab-fwd. Root only (skipped with the reason elsewhere);
the refusal test runs anywhere."""

from __future__ import annotations

import pytest

from aqmlab.errors import InputError
from aqmlab.reproduce import core, dropfn
from test_testbed import REASON, needs_net

EXP = core.load_experiment("dropfn")


def _scenario(offered: float = 1.3, rate: str = "20Mbps") -> dict:
    base = core.load_scenario_dict("dropfn", EXP["scenario"])
    base["topology"]["rate"] = rate
    grid = {"duration": "5s", "warmup": "1.5s"}
    return dropfn.point_scenario(base, dropfn.scheme_aqm("d4", EXP, 300), offered, 0.375, grid)


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    from aqmlab import testbed

    out = tmp_path_factory.mktemp("tb") / "d4"
    return testbed.testbed(_scenario(), out=out)


@needs_net
def test_mixed_web_tcp_and_udp_through_a_dropping_function(mixed_run):
    import aqmlab

    s = mixed_run.summary
    b = mixed_run.bottleneck
    assert REASON is None
    tb = s["testbed"]
    c = tb["conservation"]
    # the forwarder's conservation law, whole and per direction
    assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]
    assert tb["buffer_violations"] == 0 and b["queue_max_pkts"] <= 300
    udp = [f for f in s["flows"] if f["congestion_control"] == "udp"]
    web = [f for f in s["flows"] if f["congestion_control"] == "cubic"]
    assert len(udp) == dropfn.UDP_SOURCES
    # every UDP source sent, and the sink received no more than was sent from that source
    assert all(f["udp_sent"] > 0 and 0 < f["udp_received"] <= f["udp_sent"] for f in udp)
    # 20 Mb/s x 37.5 % = 7.5 Mb/s of UDP offered: within 10 % over the window
    offered = sum(f["offered_bps"] for f in udp)
    assert offered == pytest.approx(7.5e6, rel=0.1)
    # the pacer kept to its schedule: on average within 5 ms of each departure time
    assert tb["udp_pacer"]["late_mean_s"] < 0.005, tb["udp_pacer"]
    # every frame reached the forwarder's rings: no loss outside the AQM
    assert tb["rings"]["left_kernel_drops"] == 0 == tb["rings"]["right_kernel_drops"]
    # web: one finite transfer per object (Poisson arrivals, about 0.925 x 20 Mb/s / 100 kB x 5 s)
    assert len(web) > 20 and all(f["size_bytes"] for f in web)
    assert s["fct"]["all"]["count"] > 10
    # the dropping function dropped, and the seed-002 characteristics are there
    assert b["dropped_aqm"] > 0 and b["aqm"] == "dropfn"
    assert 0 < b["burst_ratio"] < 10 and b["utilisation"] > 0.8
    # aqmlab.load reads the run like a simulated one
    r = aqmlab.load(mixed_run.out_dir)
    assert r.summary["engine"] == "testbed" and r.bottleneck["arrived"] == b["arrived"]


def test_open_loop_sources_other_than_cbr_refused_naming_the_field():
    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    sc = _scenario()
    sc["flows"][1]["type"] = "onoff"
    s = runner._as_scenario(sc)
    with pytest.raises(InputError, match=r"flows\[1\]\.type"):
        plan.make(s, scenario.build_config(s, None))


def _summary(left_drops=0, udp_bps=(93.75e6, 93.75e6), in_system=5):
    """A hand-made testbed summary: a 500 Mb/s link, two UDP sources, one TCP flow."""
    udp = [{"congestion_control": "udp", "offered_bps": x} for x in udp_bps]
    return {
        "links": [{"name": "bottleneck", "rate_bps": 500e6}],
        "flows": [*udp, {"congestion_control": "cubic", "offered_bps": None}],
        "testbed": {
            "conservation": {"received": 1000, "sent": 900, "dropped": 95, "in_system": in_system},
            "rings": {"left_kernel_drops": left_drops, "right_kernel_drops": 0},
            "forwarder_cpu_s": {"user": 1.0, "system": 8.0},
            "forwarder_elapsed_s": 10.0,
            "udp_pacer": {"late_mean_s": 0.0005},
        },
    }


def test_a_testbed_run_is_clean_only_with_its_configured_traffic_and_no_frame_lost_unseen():
    # 37.5 % of 500 Mb/s = 187.5 Mb/s of UDP configured; offered 2 x 93.75 = exactly that
    h = dropfn.testbed_health(_summary(), 0.375)
    assert h["clean"] and h["ring_drops"] == 0 and h["conserved"]
    assert h["udp_offered_ratio"] == pytest.approx(1.0)
    assert h["forwarder_busy"] == pytest.approx(0.9) and h["pacer_late_mean_ms"] == 0.5
    # frames lost in the rings, outside the AQM
    assert not dropfn.testbed_health(_summary(left_drops=3), 0.375)["clean"]
    # the pacer offered 10 % less than configured (beyond the 5 % tolerance)
    short = dropfn.testbed_health(_summary(udp_bps=(84.375e6, 84.375e6)), 0.375)
    assert short["udp_offered_ratio"] == pytest.approx(0.9) and not short["clean"]
    # 1000 received != 900 sent + 95 dropped + 4 queued: conservation broken
    assert not dropfn.testbed_health(_summary(in_system=4), 0.375)["clean"]
