"""AccECN (RFC 9768) and TCP Prague's fallback end to end: the scenario knobs (`[tcp] accecn`,
`receiver_ecn`) reach the simulator, Prague through DualPI2 negotiates AccECN and sends ECT(1)
into the L queue, and without an AccECN receiver it falls back to Reno with Not-ECT packets
(L4STeam/linux tcp_prague.c: `prague_reno`), which DualPI2 puts in the classic queue."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

BASE = {
    "duration": "4s",
    "warmup": "1s",
    "seed": 3,
    "topology": {"rate": "100Mbps", "delay": "5ms", "buffer": 2000},
    "aqm": {"name": "dualpi2"},
}


def _queues(tcp: dict) -> dict:
    doc = {**BASE, "tcp": {"cc": "prague", "ecn": "l4s", "delack": True, **tcp}, "flows": [{}]}
    res = aqmlab.run(doc, plot=False)
    return next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")["aqm_stats"]


@pytest.mark.parametrize("handshake", [False, True])
def test_prague_with_an_accecn_receiver_uses_the_l_queue(handshake):
    st = _queues({"handshake": handshake})
    # Only the SYN (never ECN-capable, RFC 3168 s. 6.1.1) goes to the classic queue.
    assert st["arrived_l"] > 1000 and st["arrived_c"] == int(handshake)
    assert st["marks_l_coupled"] + st["marks_l_step"] > 0  # CE marks fed back and answered


@pytest.mark.parametrize("handshake", [False, True])
@pytest.mark.parametrize("receiver", ["ecn", "off"])
def test_prague_falls_back_to_not_ect_without_an_accecn_receiver(receiver, handshake):
    st = _queues({"receiver_ecn": receiver, "handshake": handshake})
    assert st["arrived_c"] > 1000 and st["arrived_l"] == 0
    assert st["marks_l_coupled"] == 0 and st["marks_c"] == 0


def test_prague_told_not_to_ask_for_accecn_falls_back_too():
    st = _queues({"accecn": False})
    assert st["arrived_c"] > 1000 and st["arrived_l"] == 0


def _cfg(doc: dict) -> dict:
    return scenario.build_config(scenario.from_dict({**BASE, **doc}))


def test_the_knobs_reach_the_simulator_and_defaults_write_nothing_new():
    cfg = _cfg({"tcp": {"ecn": True, "accecn": True, "receiver_ecn": "off"}, "flows": [{}]})
    tcp = cfg["flows"][0]["tcp"]
    assert tcp["accecn"] is True and tcp["receiver_ecn"] == "off"
    plain = _cfg({"tcp": {"ecn": True}, "flows": [{}]})["flows"][0]["tcp"]
    assert "accecn" not in plain and "receiver_ecn" not in plain


@pytest.mark.parametrize(
    ("tcp", "msg"),
    [({"receiver_ecn": "l4s"}, "tcp.receiver_ecn"), ({"accecn": "yes"}, "tcp.accecn")],
)
def test_bad_knobs_are_one_line_errors(tcp, msg):
    with pytest.raises(InputError) as e:
        _cfg({"tcp": tcp, "flows": [{}]})
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_cli_refuses_a_bad_receiver_ecn_with_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[tcp]\necn = true\nreceiver_ecn = "maybe"\n\n[[flows]]\ncount = 1\n')
    r = aqmlab_cli("run", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "receiver_ecn" in r.stderr
    assert r.stderr.strip().count("\n") == 0 and not (tmp_path / "out").exists()
