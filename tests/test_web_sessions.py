"""Web sessions: ``objects`` per session fetched one after another with ``think_time`` between the
end of one object and the request of the next (docs/scenarios.md, "Web sessions")."""

from __future__ import annotations

import statistics

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

# Idle dumbbell: 1 Gb/s access links of 1 ms, a 100 Mb/s bottleneck of 5 ms (base RTT 14 ms).
TOP = {"rate": "100Mbps", "delay": "5ms", "left": 20, "right": 20}
TEN_SEGMENTS = [{"size": "14600B", "share": 1}]


def _doc(duration: str, **web) -> dict:
    flow = {"type": "web", "size_table": TEN_SEGMENTS, **web}
    return {"duration": duration, "warmup": "0s", "topology": TOP, "flows": [flow]}


def test_sessions_chain_their_objects_on_one_host_pair():
    doc = _doc("30s", arrival_rate=2, objects=4, think_time="1s", think_distribution="fixed")
    flows = scenario.build_config(scenario.from_dict(doc))["flows"]
    assert len(flows) % 4 == 0
    for k, f in enumerate(flows):
        if k % 4 == 0:
            assert "after" not in f
        else:
            assert f["after"] == {"flow": k - 1, "think_ns": 1_000_000_000}
            assert (f["src"], f["dst"]) == (flows[k - 1]["src"], flows[k - 1]["dst"])


def test_the_gap_between_objects_is_their_fct_plus_the_think_time():
    # A 10-segment object in one window (IW 10) on an idle path: the first segment reaches the
    # bottleneck after 12 us (1500 B at 1 Gb/s) + 1 ms, which then sends one every 120 us (the
    # others queue), so the last reaches the receiver at 2 x 1 ms + 5 ms + 12 us + 10 x 120 us +
    # 12 us; its 40 B ACK takes 7 ms + 2 x 0.32 us + 3.2 us back.
    fct = 0.014 + 2 * 12e-6 + 10 * 120e-6 + 2 * 0.32e-6 + 3.2e-6
    doc = _doc("60s", arrival_rate=0.2, objects=3, think_time="2s", think_distribution="fixed")
    flows = aqmlab.run(doc, plot=False).summary["flows"]
    assert len(flows) >= 6
    spans = [(f["start_s"], f["start_s"] + (f["completion_s"] or 1e9)) for f in flows]
    for k, f in enumerate(flows):
        alone = all(
            b <= spans[k][0] or a >= spans[k][1] for j, (a, b) in enumerate(spans) if j != k
        )
        if alone and f["completion_s"] is not None:  # no other transfer shared the path
            assert f["completion_s"] == pytest.approx(fct, abs=2e-9)
        if k % 3 and f["start_s"] < 60:  # not the objects due after the end (start_s = 60)
            gap = f["start_s"] - flows[k - 1]["start_s"]
            assert gap == pytest.approx(flows[k - 1]["completion_s"] + 2.0, abs=2e-9)


@pytest.mark.parametrize("dist", ["fixed", "geometric"])
def test_offered_load_is_session_rate_times_objects_times_mean_size(dist):
    # 50 sessions/s of 5 objects (fixed, or geometric with mean 5) of 14600 B for 60 s: 29.2 Mb/s.
    # About 3000 sessions: the total object count has a relative sd of 1/sqrt(3000 x 5) = 0.8%
    # (fixed: Poisson sessions) or sqrt(E[K^2]) / (5 sqrt(3000)) = sqrt(45) / 274 = 2.4%
    # (geometric: E[K^2] = 2 x 25 - 5); 4 sd plus the sessions cut at the end (< 1 s of 60).
    doc = _doc("60s", arrival_rate=50, objects=5, objects_distribution=dist, think_time="100ms")
    res = aqmlab.run(doc, plot=False)
    flows = res.summary["flows"]
    measured = sum(f["goodput_bps"] for f in flows)
    rel = 0.05 if dist == "fixed" else 0.11
    assert measured == pytest.approx(50 * 5 * 14600 * 8, rel=rel)
    # The think times drawn are exponential with mean 100 ms: their sd equals their mean.
    cfg = scenario.build_config(scenario.from_dict(doc))
    thinks = [f["after"]["think_ns"] / 1e9 for f in cfg["flows"] if "after" in f]
    assert statistics.mean(thinks) == pytest.approx(0.1, rel=0.05)
    assert statistics.stdev(thinks) == pytest.approx(0.1, rel=0.1)


def test_one_object_per_session_is_the_open_loop_web_traffic_of_before():
    plain = {"type": "web", "arrival_rate": 100}
    explicit = {**plain, "objects": 1, "think_time": "5s"}
    base = {"duration": "10s", "warmup": "0s", "topology": TOP}
    a = scenario.build_config(scenario.from_dict({**base, "flows": [plain]}))
    b = scenario.build_config(scenario.from_dict({**base, "flows": [explicit]}))
    assert a["flows"] == b["flows"]
    assert all("after" not in f for f in a["flows"])


BAD = [
    ({"objects": 0}, "flows[0].objects: must be >= 1 object per session (got 0)"),
    ({"objects": 2.5}, "flows[0].objects: a fixed count must be a whole number"),
    ({"objects": 0.5, "objects_distribution": "geometric"}, "flows[0].objects: must be >= 1"),
    ({"think_time": "-1s"}, "flows[0].think_time: must be >= 0"),
    ({"think_distribution": "pareto"}, "flows[0].think_distribution: Input should be"),
    ({"objects": True}, "flows[0].objects: must be a number of objects per session (got True)"),
]


@pytest.mark.parametrize(("web", "msg"), BAD, ids=[m for _, m in BAD])
def test_bad_session_fields_are_one_line_errors(web, msg):
    with pytest.raises(InputError) as e:
        scenario.build_config(scenario.from_dict(_doc("10s", arrival_rate=1, **web)))
    assert str(e.value).startswith(msg), str(e.value)
    assert "\n" not in str(e.value)


def test_session_fields_belong_to_web_groups():
    doc = {"duration": "5s", "warmup": "1s", "flows": [{"count": 2, "think_time": "1s"}]}
    with pytest.raises(InputError, match=r"^flows\[0\]\.think_time: only for type = 'web'"):
        scenario.build_config(scenario.from_dict(doc))


def test_cli_refuses_zero_objects_with_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[[flows]]\ntype = "web"\narrival_rate = 5\nobjects = 0\n')
    r = aqmlab_cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.strip() == "error: flows[0].objects: must be >= 1 object per session (got 0)"
    assert not (tmp_path / "out").exists()
