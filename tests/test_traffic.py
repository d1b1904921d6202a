"""Traffic of a scenario: web objects (offered load, Pareto sizes), mixed packet sizes,
schedules, traffic in both directions, and one-line errors for bad traffic settings."""

from __future__ import annotations

import statistics

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

BASE = {"duration": "20s", "warmup": "0s", "topology": {"rate": "100Mbps", "delay": "5ms"}}


def _cfg(flows: list[dict], **top) -> dict:
    doc = {**BASE, **top, "flows": flows}
    return scenario.build_config(scenario.from_dict(doc))


def test_web_offered_load_is_arrival_rate_times_mean_size():
    # 100 objects/s of 10 kB for 40 s: 8 Mb/s offered. About 4000 objects: the Poisson count
    # has a relative sd of 1.6%, so 6% is four of them.
    doc = {
        **BASE,
        "duration": "40s",
        "topology": {"rate": "100Mbps", "delay": "5ms", "left": 20, "right": 20},
        "flows": [
            {"type": "web", "arrival_rate": 100, "size_table": [{"size": "10kB", "share": 1}]}
        ],
    }
    res = aqmlab.run(doc, plot=False)
    flows = res.summary["flows"]
    assert all(f["size_bytes"] == 10_000 for f in flows)
    measured = sum(f["goodput_bps"] for f in flows)
    assert measured == pytest.approx(100 * 10_000 * 8, rel=0.06)
    # Every object that started more than a second before the end finished (idle 100 Mb/s).
    early = [f for f in flows if f["start_s"] < 39]
    assert all(f["completion_s"] is not None for f in early)


def test_web_sizes_are_pareto_with_the_given_mean_and_shape():
    # Seed 000: mean 50 kB, shape 1.3, so scale xm = 50 kB x 0.3 / 1.3 and the median is
    # xm 2^(1/1.3) (the Pareto quantile function); the mean itself converges too slowly to test.
    cfg = _cfg([{"type": "web", "arrival_rate": 500}])
    sizes = [f["size_bytes"] for f in cfg["flows"]]
    assert len(sizes) == pytest.approx(500 * 20, rel=0.05)
    xm = 50_000 * 0.3 / 1.3
    assert min(sizes) >= xm
    assert statistics.median(sizes) == pytest.approx(xm * 2 ** (1 / 1.3), rel=0.04)


def test_mixed_tcp_packet_sizes_follow_their_shares():
    # Seed 000: 90% of 1500 B packets and 10% of 536 B; MSS = size - 40 B of headers.
    sizes = [{"size": "1500B", "share": 0.9}, {"size": "536B", "share": 0.1}]
    cfg = _cfg([{"count": 20, "packet_sizes": sizes}])
    mss = [f["tcp"]["mss"] for f in cfg["flows"]]
    assert mss.count(1460) == 18 and mss.count(496) == 2


def test_a_scheduled_cbr_group_sends_only_between_start_and_stop():
    # 1 Mb/s of 1000 B packets from 2 s to 5 s: 125 packets a second for 3 s.
    flows = [{"type": "cbr", "rate": "1Mbps", "start": "2s", "stop": "5s"}]
    res = aqmlab.run({**BASE, "duration": "8s", "flows": flows}, plot=False)
    f = res.summary["flows"][0]
    assert f["udp_sent"] == 375 and f["udp_received"] == 375 and f["udp_loss"] == 0
    assert f["stop_s"] == 5


def test_a_stopped_tcp_group_sends_nothing_new_after_its_stop():
    flows = [{"count": 2, "stop": "3s", "name": "early"}, {"count": 2, "name": "all"}]
    res = aqmlab.run({**BASE, "duration": "10s", "warmup": "5s", "flows": flows}, plot=False)
    by = {f["name"]: f for f in res.summary["flows"]}
    assert by["early.0"]["goodput_bps"] == 0 and by["early.1"]["goodput_bps"] == 0
    # The two remaining flows take the whole link after the stop.
    total = by["all.0"]["goodput_bps"] + by["all.1"]["goodput_bps"]
    assert total == pytest.approx(100e6 * 1460 / 1500, rel=0.05)


def test_reverse_traffic_crosses_the_reverse_bottleneck():
    # CBR from the right to the left (seed 000's reverse traffic: 10% of the reverse capacity).
    flows = [{"count": 2}, {"type": "cbr", "load": 0.1, "src": "right", "dst": "left"}]
    cfg = _cfg(flows)
    names = [lk["name"] for lk in cfg["links"]]
    assert "reverse" in [names[li] for li in cfg["flows"][2]["path"]]
    doc = {**BASE, "duration": "6s", "warmup": "1s", "flows": flows}
    doc["output"] = {"monitor_all_links": True}
    res = aqmlab.run(doc, plot=False)
    rev = next(lk for lk in res.summary["links"] if lk["name"] == "reverse")
    acks = sum(f["delivered_segments"] for f in res.summary["flows"][:2]) * 40 * 8 / 6
    assert rev["throughput_bps"] >= 10e6 * 0.99
    assert rev["throughput_bps"] == pytest.approx(10e6 + acks * 5 / 6, rel=0.1)


BAD = [
    ([{"type": "web", "arrival_rate": 10, "shape": 1.0}], "flows[0].shape: must be > 1"),
    ([{"type": "web", "arrival_rate": 10, "shape": -2}], "flows[0].shape: must be > 1"),
    ([{"type": "web"}], "flows[0].arrival_rate: a web group needs"),
    ([{"type": "web", "arrival_rate": -3}], "flows[0].arrival_rate: a web group needs"),
    (
        [{"type": "onoff", "rate": "1Mbps", "distribution": "pareto", "shape": 0.9}],
        "flows[0].shape",
    ),
    ([{"type": "onoff", "rate": "1Mbps", "on_time": "0s"}], "flows[0].on_time: must be > 0"),
    ([{"type": "cbr", "rate": "-1Mbps"}], "flows[0].rate"),
    ([{"type": "cbr"}], "flows[0].load: a cbr flow needs exactly one of load or rate"),
    ([{"start": "5s", "stop": "2s"}], "flows[0].stop: must be after start"),
    ([{"start": "-1s"}], "flows[0].start"),
    (
        [{"packet_sizes": [{"size": "1500B", "share": 0.5}]}],
        "flows[0].packet_sizes: shares must sum to 1",
    ),
    (
        [{"packet_sizes": [{"size": "30B", "share": 1}]}],
        "flows[0].packet_sizes[0].size: must exceed",
    ),
    ([{"type": "tcp", "rate": "1Mbps"}], "flows[0].load: only for open-loop flows"),
]


@pytest.mark.parametrize(("flows", "msg"), BAD, ids=[m for _, m in BAD])
def test_bad_traffic_is_a_one_line_error_naming_the_field(flows, msg):
    with pytest.raises(InputError) as e:
        _cfg(flows)
    assert str(e.value).startswith(msg), str(e.value)
    assert "\n" not in str(e.value)


def test_cli_refuses_a_pareto_shape_without_finite_mean_with_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[[flows]]\ntype = "web"\narrival_rate = 50\nshape = 1.0\n')
    r = aqmlab_cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "flows[0].shape: must be > 1" in r.stderr
    assert not (tmp_path / "out").exists()


def test_flow_series_records_delivered_bytes_whose_slope_is_the_throughput():
    # 1 Mb/s CBR of 1000 B packets on an idle path: 125,000 bytes a second; a bulk TCP flow's
    # series ends at its delivered payload.
    doc = {
        **BASE,
        "duration": "4s",
        "output": {"flow_series": True, "sample_interval": "100ms"},
        "flows": [{"type": "cbr", "rate": "1Mbps", "name": "u"}, {"count": 1, "name": "t"}],
    }
    res = aqmlab.run(doc, plot=False)
    u = res.series["delivered:u.0"]
    slope = (u["delivered_bytes"].iloc[-1] - u["delivered_bytes"].iloc[10]) / (
        u["t_s"].iloc[-1] - u["t_s"].iloc[10]
    )
    assert slope == pytest.approx(125_000, rel=0.01)
    t = res.series["delivered:t.0"]
    f = next(x for x in res.summary["flows"] if x["name"] == "t.0")
    assert t["delivered_bytes"].iloc[-1] == f["delivered_segments"] * 1460
