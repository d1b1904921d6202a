"""DualPI2 (RFC 9332) end to end in the simulator, with open-loop sources whose codepoints are
set per group (ECT(0), ECT(1), Not-ECT) and whose drop and mark fractions follow from the coupling
and from conservation; the ECN keys of a scenario; parameter errors."""

from __future__ import annotations

import math

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

BASE = {
    "duration": "40s",
    "warmup": "10s",
    "seed": 3,
    "topology": {"rate": "100Mbps", "delay": "5ms", "buffer": 2000},
    "aqm": {"name": "dualpi2"},
}


def _cbr(name: str, load: float, ecn: str) -> dict:
    return {"type": "cbr", "name": name, "load": load, "packet_size": "1500B", "ecn": ecn}


def _run(flows: list[dict], **over) -> tuple[dict, dict]:
    res = aqmlab.run({**BASE, **over, "flows": flows}, plot=False)
    by = {f["name"]: f for f in res.summary["flows"]}
    bott = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    return by, bott["aqm_stats"]


def test_classic_drops_and_coupled_l4s_marks_follow_p_prime():
    # A Not-ECT source at the link rate and an ECT(1) source at 20% of it: 20% too much. Only
    # the classic packets can be dropped (p_C = p'^2), so conservation fixes their loss at
    # 0.2 / 1.0 = 20%, and the PI integrator settles where E[p'^2] = 0.2. The L packets are
    # marked with p_CL = 2 p' (RFC 9332 s. 2.1): 2 sqrt(0.2) = 0.894 if p' were constant, a little
    # less as it varies (Jensen: E[p'] <= sqrt(E[p'^2])). The L queue, served first by the WRR,
    # stays far below the 1 ms step; the classic queue is held near the 15 ms target.
    by, st = _run([_cbr("c", 1.0, "not-ect"), _cbr("l", 0.2, "ect1")])
    c, lq = by["c.0"], by["l.0"]
    assert c["udp_loss"] == pytest.approx(0.2, abs=0.003)
    assert "udp_ce_received" not in c  # a Not-ECT flow reports no CE count
    frac = lq["udp_ce_received"] / lq["udp_received"]
    assert 0.86 <= frac <= 2 * math.sqrt(0.2) + 0.01, frac
    assert lq["udp_loss"] < 0.01
    assert st["marks_l_step"] == 0 and st["delay_l_p99_ms"] < 0.5
    assert 13 <= st["delay_c_mean_ms"] <= 19
    # Every packet was classified by its codepoint: C got exactly the classic flow's packets.
    assert st["arrived_c"] + st["arrived_l"] == pytest.approx(st["arrived_c"] * 1.2, rel=1e-3)


def test_overload_of_unresponsive_ecn_traffic_turns_marks_into_drops():
    # ECT(0) and ECT(1), 20% too much, neither responds to marks. Below overload (k p' <= 1) a
    # classic ECT(0) packet is marked, not dropped, so the queue grows until k p' > 1, where both
    # queues' packets are dropped with p'^2 (RFC 9332 s. 4.2.3, Linux drop_overload): the excess
    # is dropped (conservation), from both queues, and classic packets are marked below overload.
    by, st = _run([_cbr("c", 1.0, "ect0"), _cbr("l", 0.2, "ect1")])
    c, lq = by["c.0"], by["l.0"]
    lost = c["udp_loss"] * c["udp_sent"] + lq["udp_loss"] * lq["udp_sent"]
    assert lost == pytest.approx(0.2 / 1.2 * (c["udp_sent"] + lq["udp_sent"]), rel=0.02)
    assert st["drops_l"] > 0 and st["drops_c"] > 0 and st["marks_c"] > 0
    assert c["udp_ce_received"] > 0 and st["prob_base"] == pytest.approx(0.5, abs=0.1)


def test_an_overloaded_l_queue_is_step_marked_and_drops_the_excess():
    # Two ECT(1) sources at 60% each: the L queue builds to the PI2 target (15 ms), far above
    # the 1 ms step, so every L packet sent is CE-marked by the step, and the excess (1/6 of the
    # packets) is dropped once k p' > 1.
    by, st = _run([_cbr("a", 0.6, "ect1"), _cbr("b", 0.6, "ect1")])
    got = sum(f["udp_received"] for f in by.values())
    ce = sum(f["udp_ce_received"] for f in by.values())
    assert ce / got > 0.99
    sent = sum(f["udp_sent"] for f in by.values())
    lost = sum(f["udp_loss"] * f["udp_sent"] for f in by.values())
    assert lost / sent == pytest.approx(1 / 6, abs=0.005)
    assert st["arrived_c"] == 0 and st["marks_l_step"] > 0.99 * st["sent_l"]


@pytest.mark.parametrize(("ecn", "queue"), [(True, "arrived_c"), ("l4s", "arrived_l")])
def test_tcp_ecn_true_sends_ect0_and_l4s_sends_ect1(ecn, queue):
    doc = {**BASE, "duration": "3s", "warmup": "0s", "tcp": {"ecn": ecn}, "flows": [{}]}
    res = aqmlab.run(doc, plot=False)
    st = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")["aqm_stats"]
    other = "arrived_l" if queue == "arrived_c" else "arrived_c"
    assert st[queue] > 1000 and st[other] == 0


def _cfg(doc: dict) -> dict:
    return scenario.build_config(scenario.from_dict({**BASE, **doc}))


def test_ecn_keys_reach_the_simulator_configuration():
    cfg = _cfg({"tcp": {"ecn": "l4s"}, "flows": [{}, _cbr("u", 0.1, "ect1")]})
    assert cfg["flows"][0]["tcp"]["ecn"] is True and cfg["flows"][0]["tcp"]["ect1"] is True
    assert cfg["flows"][1]["ecn_bits"] == 0b01
    classic = _cfg({"tcp": {"ecn": True}, "flows": [{}, _cbr("u", 0.1, "not-ect")]})
    # Classic settings are written as before (no new keys).
    assert "ect1" not in classic["flows"][0]["tcp"] and "ecn_bits" not in classic["flows"][1]


BAD = [
    ({"flows": [{"ecn": "ect1"}]}, "flows[0].ecn: only for open-loop sources"),
    ({"flows": [{**_cbr("u", 0.1, "ect1"), "ecn": "ect2"}]}, "flows[0].ecn: Input should be"),
    ({"tcp": {"ecn": "ect1"}, "flows": [{}]}, "tcp.ecn"),
    ({"aqm": {"name": "dualpi2", "c_protection": 120}, "flows": [{}]}, "aqm.c_protection"),
]


@pytest.mark.parametrize(("doc", "msg"), BAD, ids=[m for _, m in BAD])
def test_bad_ecn_and_dualpi2_settings_are_one_line_errors(doc, msg):
    with pytest.raises(InputError) as e:
        _cfg(doc)
    assert msg in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_cli_refuses_classic_protection_120_percent_with_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[aqm]\nname = "dualpi2"\nc_protection = 120\n\n[[flows]]\ncount = 1\n')
    r = aqmlab_cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.strip() == "error: aqm.c_protection: must be in [0, 100] (got 120)"
    assert not (tmp_path / "out").exists()


def test_dualpi2_is_listed_with_its_linux_defaults():
    r = aqmlab_cli("list")
    assert r.returncode == 0
    assert "dualpi2" in r.stdout and "c_protection" in r.stdout and "RFC 9332" in r.stdout
