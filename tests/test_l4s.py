"""L4S end to end (issue 22's criterion): one TCP Prague flow and one CUBIC flow through DualPI2,
100 Mb/s, 20 ms base RTT (scenarios/l4s_dualpi2.toml): the L4S queue's delay p99 at most 2 ms,
the classic queue's delay near DualPI2's 15 ms target, throughput ratio between 0.5 and 2."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import aqmlab

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "l4s_dualpi2.toml"


def _run(cc: str) -> tuple[dict, dict, dict]:
    doc = tomllib.loads(SCENARIO.read_text())
    doc["flows"][0]["tcp"] = {"cc": cc, "ecn": "l4s"}
    res = aqmlab.run(doc, plot=False)
    by = {f["name"]: f for f in res.summary["flows"]}
    st = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")["aqm_stats"]
    return by["prague.0"], by["cubic.0"], st


@pytest.mark.parametrize("cc", ["prague", "prague-0.6", "dctcp"])
def test_a_scalable_flow_and_cubic_share_dualpi2_as_l4s_intends(cc):
    # The scenario as written (Prague as tcp_prague.c 0.7), with Prague 0.6, and with DCTCP
    # sending ECT(1) in its place (issue 22 accepts either scalable sender).
    scalable, classic, st = _run(cc)
    # Every segment of the scalable flow went to the L queue, every CUBIC segment to C.
    assert st["arrived_l"] >= scalable["delivered_segments"]
    assert st["arrived_c"] >= classic["delivered_segments"]
    assert st["delay_l_p99_ms"] <= 2.0
    assert 10.0 <= st["delay_c_mean_ms"] <= 20.0
    ratio = scalable["goodput_bps"] / classic["goodput_bps"]
    assert scalable["goodput_bps"] + classic["goodput_bps"] > 0.95 * 100e6 * 1460 / 1500
    # Neither starves the other; DCTCP within issue 22's band (Prague: the next test).
    assert 0.5 <= ratio <= (2.0 if cc == "dctcp" else 3.0), ratio


_PRAGUE_MISS = {
    "prague-0.6": "TCP Prague as L4STeam/linux tcp_prague.c 02573a21 (0.6; frac_cwnd, "
    "RTT_CONTROL_RATE with a 24.96 ms target): at a 20 ms RTT a CE response within the target "
    "of the last is skipped while CWR is held for a round trip, so it answers about every other "
    "round trip and takes 2.32 times CUBIC's rate here (2.04-2.37 over seeds 1-5; 1.59 without "
    "that gate; 1.47-1.73 at 40 ms); docs/l4s.md explains, with a user's testbed measurement of "
    "the kernel's Prague (2.2)",
    "prague": "TCP Prague as tcp_prague.c 893e1479 (0.7, the default): the same 25 ms CWR "
    "gate, now after 4 rounds; 2.11 times CUBIC's rate here (1.87-2.62 over seeds 1-5, "
    "1.69-1.93 at 40 ms, 1.54-1.81 at 60 ms); docs/l4s.md",
}


@pytest.mark.parametrize(
    "cc",
    [
        pytest.param(cc, marks=pytest.mark.xfail(strict=True, reason=r))
        for cc, r in _PRAGUE_MISS.items()
    ],
)
def test_prague_and_cubic_rates_within_issue_22_band(cc):
    scalable, classic, _ = _run(cc)
    ratio = scalable["goodput_bps"] / classic["goodput_bps"]
    assert 0.5 <= ratio <= 2.0, ratio


LOWRATE = SCENARIO.parent / "l4s_prague_lowrate.toml"


def test_prague_lowers_its_segment_size_at_low_rates():
    # Ten Prague 0.7 flows at 2 Mb/s, 20 ms: 200 kb/s each, a virtual window (25 ms or srtt)
    # of about 25,000 B/s x 34 ms = 850 B, under two full-size packets, so tcp_prague.c 0.7
    # lowers the packet size towards half of it (docs/l4s.md). With the full size (1500 B) the
    # mean packet on the bottleneck would be 1500 B; lowered, it is a few hundred bytes.
    res = aqmlab.run(tomllib.loads(LOWRATE.read_text()), plot=False)
    link = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    window_s = 50.0
    mean_pkt = link["throughput_bps"] * window_s / 8 / link["arrived"]
    assert 150 + 40 <= mean_pkt <= 700, mean_pkt
    # Goodput counts payload bytes, not segments x the flow's MSS: the flows' goodput is the
    # link's throughput less 40 header bytes per packet (and the few retransmissions).
    goodput = sum(f["goodput_bps"] for f in res.summary["flows"])
    payload = link["throughput_bps"] * (1 - 40 / mean_pkt)
    assert 0.97 * payload <= goodput <= payload, (goodput, payload)
    # The queue statistics count packets (queue_mean_pkts) and bytes apart; a smaller packet
    # makes them differ by its size.
    assert link["queue_mean_bytes"] < 1000 * link["queue_mean_pkts"]
