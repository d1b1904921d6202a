"""``[tcp] handshake``, ``limited_transmit``, ``sack_window``, ``gso``, ``rwnd_model``,
``send_jitter``, ``sack_compress``, ``pacing_credit`` and ``resolve`` from a scenario file to
the simulator."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario

# One finite flow of 10 full segments on an idle dumbbell: 1 Gb/s access links with 1 ms delay,
# a 100 Mb/s bottleneck with 5 ms: base RTT = 2 (1 + 5 + 1) ms = 14 ms.
DOC = {
    "duration": "3s",
    "warmup": "0s",
    "topology": {"rate": "100Mbps", "delay": "5ms"},
    "flows": [{"count": 1, "size": "14600B"}],
}


def _fct(**tcp) -> float:
    res = aqmlab.run({**DOC, "tcp": tcp}, plot=False)
    return res.summary["flows"][0]["completion_s"]


def test_defaults_are_off_and_reach_the_simulator():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    t = cfg["flows"][0]["tcp"]
    assert t["handshake"] is False and t["limited_transmit"] is False
    doc = {**DOC, "tcp": {"handshake": True}}
    doc["flows"] = [{"count": 1, "tcp": {"limited_transmit": True}}]
    t = scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]
    assert t["handshake"] is True and t["limited_transmit"] is True


def test_the_handshake_adds_one_rtt_and_two_header_serialisations_to_the_fct():
    # SYN and SYN-ACK (40 B) each cross a 1 Gb/s link (0.32 us), the 100 Mb/s bottleneck
    # (3.2 us) and another 1 Gb/s link: 2 x 3.84 us on top of the 14 ms round trip.
    extra = 0.014 + 2 * (0.32e-6 + 3.2e-6 + 0.32e-6)
    assert _fct(handshake=True) - _fct() == pytest.approx(extra, abs=2e-9)


def test_a_non_boolean_option_is_a_one_line_error():
    with pytest.raises(InputError) as e:
        scenario.build_config(scenario.from_dict({**DOC, "tcp": {"handshake": "maybe"}}))
    assert str(e.value).startswith("tcp.handshake") and "\n" not in str(e.value)


def test_sack_window_reaches_the_simulator_only_when_span_and_bad_values_are_one_line():
    # "pipe" (the default) leaves the configuration as it was before the option existed.
    sack = {"variant": "sack"}
    cfg = scenario.build_config(scenario.from_dict({**DOC, "tcp": sack}))
    assert "sack_window_span" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {**sack, "sack_window": "span"}}
    assert scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]["sack_window_span"]
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {**sack, "sack_window": "bytes"}})
    msg = str(e.value)
    assert msg.startswith("tcp.sack_window") and "'pipe'" in msg and "\n" not in msg, msg


def test_gso_reaches_the_simulator_only_when_on_and_bad_values_are_one_line():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    assert "gso" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {"cc": "bbr", "variant": "sack", "gso": True}}
    assert scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]["gso"] is True
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {"gso": "yes"}})
    msg = str(e.value)
    assert msg.startswith("tcp.gso") and "\n" not in msg, msg


def test_rwnd_model_reaches_the_simulator_only_when_linux_and_bad_values_are_one_line():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    assert "linux_rwnd" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {"rwnd_model": "linux"}}
    assert scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]["linux_rwnd"] is True
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {"rwnd_model": "autotune"}})
    msg = str(e.value)
    assert msg.startswith("tcp.rwnd_model") and "'linux'" in msg and "\n" not in msg, msg


def test_the_linux_window_holds_a_large_first_flight_to_64_kb():
    # 100 segments with an initial window of 100: with the fixed 4 MB window they all leave at
    # once and arrive within the first round trip. Linux's SYN-ACK offers the whole segments in
    # 64 KB (44 x 1,460 = 64,240 bytes), and the window the first ACKs advertise (rcv_ssthresh,
    # at most the 69,120-byte clamp: 47 segments) keeps the rest for a second round trip,
    # whose ACKs open the window further (docs/transports.md): one base RTT (14 ms) later,
    # less than two.
    big = {"init_cwnd": 100}
    doc = {**DOC, "flows": [{"count": 1, "size": "146000B"}]}
    fixed = aqmlab.run({**doc, "tcp": big}, plot=False).summary["flows"][0]["completion_s"]
    linux = aqmlab.run({**doc, "tcp": {**big, "rwnd_model": "linux"}}, plot=False)
    extra = linux.summary["flows"][0]["completion_s"] - fixed
    assert 0.014 <= extra < 0.028, extra


def test_send_jitter_reaches_the_simulator_only_when_on_and_bad_values_are_one_line():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    assert "send_jitter_ns" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {"send_jitter": "120us"}}
    assert scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]["send_jitter_ns"] == (
        120_000
    )
    for bad, words in (("-1ms", "send_jitter"), ("fast", "send_jitter"), ("2s", "at most 1s")):
        with pytest.raises(InputError) as e:
            scenario.build_config(scenario.from_dict({**DOC, "tcp": {"send_jitter": bad}}))
        msg = str(e.value)
        assert msg.startswith("tcp.send_jitter") and words in msg and "\n" not in msg, msg


def test_sack_compress_reaches_the_simulator_only_when_on_and_bad_values_are_one_line():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    assert "sack_compress" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {"variant": "sack", "sack_compress": True}}
    tcp = scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]
    assert tcp["sack_compress"] is True
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {"sack_compress": "yes"}})
    msg = str(e.value)
    assert msg.startswith("tcp.sack_compress") and "\n" not in msg, msg


def test_sack_compress_leaves_a_lossless_transfer_alone():
    # No segment is lost on the idle dumbbell, so no ACK is ever held: the same completion.
    assert _fct(variant="sack", sack_compress=True) == _fct(variant="sack")


def test_send_jitter_delays_the_last_segment_by_less_than_its_bound():
    # The 10 segments leave together at the start; each waits a uniform time in [0, 1 ms),
    # order kept, so the last one leaves the latest draw later (expected 10/11 ms): the
    # completion time grows by more than 0 and less than 1 ms.
    extra = _fct(send_jitter="1ms") - _fct()
    assert 0 < extra < 0.001, extra


def test_pacing_credit_reaches_the_simulator_only_when_on_and_bad_values_are_one_line():
    cfg = scenario.build_config(scenario.from_dict(DOC))
    assert "pacing_credit" not in cfg["flows"][0]["tcp"]
    doc = {**DOC, "tcp": {"pacing": True, "pacing_credit": True}}
    assert scenario.build_config(scenario.from_dict(doc))["flows"][0]["tcp"]["pacing_credit"]
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {"pacing_credit": "yes"}})
    msg = str(e.value)
    assert msg.startswith("tcp.pacing_credit") and "\n" not in msg, msg


def test_pacing_credit_lets_late_departures_catch_up_by_at_most_half_their_gaps():
    # The first window (10 segments) leaves before any RTT sample, unpaced: the same completion.
    def fct(size: str, credit: bool) -> float:
        doc = {**DOC, "flows": [{"count": 1, "size": size}]}
        doc["tcp"] = {"pacing": True, "pacing_credit": credit}
        return aqmlab.run(doc, plot=False).summary["flows"][0]["completion_s"]

    assert fct("14600B", True) == fct("14600B", False)
    # 20 segments: the second 10 are paced, each released by an ACK after its pacing time, so
    # each may leave up to half a gap sooner. A gap is MSS / rate with the slow-start rate
    # 2 x cwnd x MSS / SRTT, cwnd >= 10 and SRTT >= the 14 ms base: at most 0.7 ms, so the
    # 10 paced segments gain more than 0 and at most 10 x 0.35 ms.
    gain = fct("29200B", False) - fct("29200B", True)
    assert 0 < gain <= 10 * 0.014 / 20 / 2, gain


def test_resolve_waits_for_the_address_across_the_bottleneck_only_and_needs_the_handshake():
    # The 42 B request crosses the 100 Mb/s, 5 ms bottleneck (3.36 us), the reply the reverse
    # one: 2 x (5 ms + 3.36 us) on top of the handshake, nothing for the 1 Gb/s access links.
    cfg = scenario.build_config(scenario.from_dict({**DOC, "tcp": {"handshake": True}}))
    assert "resolve" not in cfg["flows"][0]["tcp"]
    extra = 2 * (0.005 + 42 * 8 / 100e6)
    got = _fct(handshake=True, resolve=True) - _fct(handshake=True)
    assert got == pytest.approx(extra, abs=2e-9)
    with pytest.raises(InputError) as e:
        scenario.from_dict({**DOC, "tcp": {"handshake": True, "resolve": "yes"}})
    assert str(e.value).startswith("tcp.resolve") and "\n" not in str(e.value)
    with pytest.raises(InputError) as e:
        aqmlab.run({**DOC, "tcp": {"resolve": True}}, plot=False)
    msg = str(e.value)
    assert "tcp.resolve" in msg and "handshake = true" in msg and "\n" not in msg, msg
