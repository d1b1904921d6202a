"""Parking-lot and general topologies: routes on the graph, per-hop conservation of open-loop
traffic whose rates are set by hand, and one-line errors for bad topologies and routes."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli


def _parking(cross_rate: list[str], kind: str = "cbr", duration: str = "4s") -> dict:
    flows = [{"type": kind, "rate": "3Mbps", "packet_size": "1000B", "name": "long"}]
    for i, r in enumerate(cross_rate, start=1):
        flows.append(
            {
                "type": kind,
                "rate": r,
                "packet_size": "1000B",
                "src": f"cross{i}.src",
                "dst": f"cross{i}.dst",
                "name": f"x{i}",
            }
        )
    return {
        "duration": duration,
        "warmup": "1s",
        "topology": {"type": "parking-lot", "hops": 3, "rate": "10Mbps", "buffer": 50},
        "flows": flows,
    }


def _link(res, name: str) -> dict:
    return next(lk for lk in res.summary["links"] if lk["name"] == name)


def test_parking_lot_long_flows_cross_every_hop_and_cross_flows_one():
    cfg = scenario.build_config(scenario.from_dict(_parking(["4Mbps"] * 3)))
    names = [lk["name"] for lk in cfg["links"]]
    by_flow = {f["name"]: [names[li] for li in f["path"]] for f in cfg["flows"]}
    assert [n for n in by_flow["long.0"] if n.startswith("hop")] == ["hop1", "hop2", "hop3"]
    for i in (1, 2, 3):
        assert [n for n in by_flow[f"x{i}.0"] if n.startswith("hop")] == [f"hop{i}"]
    hops = [lk for lk in cfg["links"] if lk["name"] in ("hop1", "hop2", "hop3")]
    assert all(lk["monitor"] and lk["aqm"]["name"] == "droptail" for lk in hops)


def test_parking_lot_hops_carry_the_sum_of_their_flows_rates():
    # 3 + 4 Mb/s on each 10 Mb/s hop: nothing dropped, each hop carries 7 Mb/s.
    res = aqmlab.run(_parking(["4Mbps"] * 3), plot=False)
    for h in ("hop1", "hop2", "hop3"):
        lk = _link(res, h)
        assert lk["dropped_aqm"] + lk["dropped_overflow"] == 0
        assert lk["throughput_bps"] == pytest.approx(7e6, rel=0.01)


def test_parking_lot_an_overloaded_middle_hop_limits_what_the_next_hop_sees():
    # Hop 2 offered 3 + 9 = 12 Mb/s of Poisson packets on 10 Mb/s: it carries 10 and every
    # arrival sees the same loss probability (PASTA), so the long flow keeps 3 x 10/12 = 2.5 Mb/s
    # and hop 3 carries 2.5 + 4. (CBR sources would phase-lock with DropTail instead: Floyd and
    # Jacobson, "On traffic phase effects in packet-switched gateways", 1992.)
    doc = _parking(["4Mbps", "9Mbps", "4Mbps"], kind="poisson", duration="21s")
    for g in doc["flows"]:
        g["size_distribution"] = "fixed"
    res = aqmlab.run(doc, plot=False)
    assert _link(res, "hop1")["throughput_bps"] == pytest.approx(7e6, rel=0.03)
    assert _link(res, "hop2")["throughput_bps"] == pytest.approx(10e6, rel=0.01)
    assert _link(res, "hop3")["throughput_bps"] == pytest.approx(6.5e6, rel=0.03)


GENERAL = {
    "duration": "3s",
    "warmup": "1s",
    "topology": {
        "type": "general",
        "nodes": [
            {"name": "h1", "kind": "host"},
            {"name": "h2", "kind": "host"},
            {"name": "a"},
            {"name": "b"},
            {"name": "c"},
        ],
        "links": [
            {"from": "h1", "to": "a", "rate": "1Gbps", "delay": "1ms"},
            {"from": "a", "to": "b", "rate": "10Mbps", "delay": "30ms"},
            {"from": "a", "to": "c", "rate": "10Mbps", "delay": "5ms", "monitor": True},
            {
                "from": "c",
                "to": "b",
                "rate": "10Mbps",
                "delay": "5ms",
                "aqm": {"name": "codel"},
                "monitor": True,
                "reverse": {"rate": "2Mbps"},
            },
            {"from": "b", "to": "h2", "rate": "1Gbps", "delay": "1ms"},
        ],
    },
    "flows": [{"type": "tcp", "src": "h1", "dst": "h2", "count": 2}],
}


def _names(cfg: dict, path: list[int]) -> list[str]:
    return [cfg["links"][li]["name"] for li in path]


def test_general_routes_take_the_shortest_delay_path_both_ways():
    cfg = scenario.build_config(scenario.from_dict(GENERAL))
    f = cfg["flows"][0]
    # a -> c -> b (10 ms) beats a -> b (30 ms), both ways.
    assert _names(cfg, f["path"]) == ["h1-a", "a-c", "c-b", "b-h2"]
    assert _names(cfg, f["rev_path"]) == ["h2-b", "b-c", "c-a", "a-h1"]
    links = {lk["name"]: lk for lk in cfg["links"]}
    assert links["c-b"]["aqm"]["name"] == "codel"
    assert links["b-c"]["rate_bps"] == 2_000_000 and links["b-c"]["aqm"]["name"] == "codel"
    assert links["a-b"]["rate_bps"] == 10_000_000 and "aqm" not in links["a-b"]


def test_general_explicit_route_is_followed_and_run():
    sc = {**GENERAL, "flows": [{"src": "h1", "dst": "h2", "route": ["h1", "a", "b", "h2"]}]}
    cfg = scenario.build_config(scenario.from_dict(sc))
    assert _names(cfg, cfg["flows"][0]["path"]) == ["h1-a", "a-b", "b-h2"]
    assert _names(cfg, cfg["flows"][0]["rev_path"]) == ["h2-b", "b-a", "a-h1"]
    res = aqmlab.run(sc, plot=False)
    # The monitored links are off the route: they carry nothing.
    assert _link(res, "a-c")["arrived"] == 0
    assert res.summary["flows"][0]["goodput_bps"] > 5e6


def _topo_with(**over) -> dict:
    t = {**GENERAL["topology"], **over}
    return {**GENERAL, "topology": t}


BAD = [
    (
        {**GENERAL, "flows": [{"src": "h1", "dst": "h2", "route": ["h1", "a", "h2"]}]},
        "flows[0].route[1]: no link from a to h2",
    ),
    (
        {**GENERAL, "flows": [{"src": "h1", "dst": "h2", "route": ["h1", "x", "h2"]}]},
        "flows[0].route[0]: unknown node 'x'",
    ),
    (
        _topo_with(nodes=[*GENERAL["topology"]["nodes"], {"name": "h3", "kind": "host"}])
        | {"flows": [{"src": "h1", "dst": "h3"}]},
        "flows[0].dst: no route from h1 to h3",
    ),
    (
        _topo_with(
            links=[
                {k: v for k, v in lk.items() if k != "reverse"} | {"duplex": False}
                for lk in GENERAL["topology"]["links"]
            ]
        ),
        "flows[0].src: no route from h2 to h1",
    ),
    (
        _topo_with(
            links=[
                *GENERAL["topology"]["links"],
                {"from": "a", "to": "zz", "rate": "1Gbps", "delay": "1ms"},
            ]
        ),
        "topology.links[5]: unknown node 'zz'",
    ),
    ({**GENERAL, "flows": [{"src": "h1", "dst": "nope"}]}, "flows[0].dst: unknown host 'nope'"),
    (
        {"topology": {"type": "parking-lot", "hops": 0}},
        "topology.hops: must be at least 1 bottleneck",
    ),
    ({"topology": {"type": "dumbbell", "hops": 2}}, "topology.hops: not used by topology.type"),
]


@pytest.mark.parametrize(("doc", "msg"), BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_topologies_are_one_line_errors_naming_the_field(doc, msg):
    with pytest.raises(InputError) as e:
        scenario.build_config(scenario.from_dict(doc))
    assert str(e.value).startswith(msg), str(e.value)
    assert "\n" not in str(e.value)


def test_cli_refuses_a_route_through_a_missing_link_with_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(
        """
[topology]
type = "general"
nodes = [{name = "h1", kind = "host"}, {name = "r"}, {name = "h2", kind = "host"}]
links = [{from = "h1", to = "r", rate = "1Gbps", delay = "1ms"}]

[[flows]]
src = "h1"
dst = "h2"
"""
    )
    r = aqmlab_cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "error: flows[0].dst: no route from h1 to h2 in the topology"
    ]
    assert not (tmp_path / "out").exists()
