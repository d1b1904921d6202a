"""scripts/bbr_start.py: ``ss -tinH`` parsing and the per-flow first-seconds summary, checked
against hand-worked values."""

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bbr_start", Path(__file__).resolve().parents[1] / "scripts" / "bbr_start.py"
)
bbr_start = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bbr_start)

# Two sockets as iproute2 6.1's `ss -tinH '( dport = :5001 )'` prints them (a real sample,
# shortened): one established in STARTUP with losses, one still in SYN-SENT.
SS = (
    "ESTAB    0      5884464  10.77.0.8:44475  10.77.128.8:5001\n"
    "\t bbr wscale:10,10 rto:300 rtt:99.87/0.176 mss:1448 cwnd:90 ssthresh:68 "
    "bbr:(bw:10649656bps,mrtt:67.276,pacing_gain:2.88672,cwnd_gain:2.88672) "
    "send 10439171bps pacing_rate 30.7Mbps delivery_rate 980Kbps delivered:366 "
    "unacked:173 retrans:47/54 lost:47 sacked:83 snd_wnd:581632\n"
    "SYN-SENT 0      1        10.77.0.5:43079  10.77.128.5:5001\n"
    "\t bbr rto:1000 mss:524 cwnd:10 segs_out:1 bbr:(bw:0bps,mrtt:0) app_limited unacked:1\n"
)


def test_parse_ss_reads_the_bbr_fields_and_counts_in_flight():
    got = bbr_start.parse_ss(SS)
    assert set(got) == {"10.77.128.8", "10.77.128.5"}
    a = got["10.77.128.8"]
    assert a["state"] == "ESTAB"
    assert a["bw"] == pytest.approx(10.649656)
    assert a["mrtt"] == pytest.approx(67.276)
    assert (a["pg"], a["cg"]) == (2.88672, 2.88672)
    assert a["pacing_rate"] == pytest.approx(30.7)
    assert a["delivery_rate"] == pytest.approx(0.98)
    assert (a["cwnd"], a["unacked"], a["lost"], a["sacked"]) == (90, 173, 47, 83)
    assert (a["retrans_out"], a["retrans"]) == (47, 54)
    # tcp_packets_in_flight: 173 - (83 + 47) + 47 = 90.
    assert a["inflight"] == 90
    b = got["10.77.128.5"]
    assert b["state"] == "SYN-SENT"
    assert (b["bw"], b["pg"], b["inflight"]) == (0.0, None, 1)


def _s(t, bw, pg, inflight=10, lt=False):
    return {"t": t, "bw": bw, "pg": pg, "inflight": inflight, "lt": lt}


def test_flow_timeline_by_hand():
    # STARTUP at 2.89 until 0.3 s (bw 1, 4, 9 Mb/s), DRAIN at 0.35 s, then gain 1 with an
    # unchanged bw twice (the kernel's long-term proxy: 0.45 and 0.50 s), a 5 Mb/s sample
    # after --until is ignored.
    samples = [
        _s(0.1, 0.0, 2.88672, 10),
        _s(0.2, 1.0, 2.88672, 20),
        _s(0.25, 4.0, 2.88672, 60),
        _s(0.3, 9.0, 2.88672, 120),
        _s(0.35, 9.0, 0.34375, 80),
        _s(0.4, 8.5, 1.0, 40),
        _s(0.45, 8.5, 1.0, 41),
        _s(0.5, 8.5, 1.0, 42),
        _s(4.0, 50.0, 1.25, 500),
    ]
    r = bbr_start.flow_timeline(samples, until=3.0, kernel=True)
    assert r["first"] == 0.1
    assert r["exit"] == 0.35
    assert r["bw_exit"] == 9.0
    assert r["bw_peak"] == 9.0
    assert r["inflight_peak"] == 120
    assert r["lt"] == 2
    assert r["n"] == 8
    # The simulator's samples carry the long-term flag itself.
    sim = [dict(x, lt=x["t"] >= 0.45) for x in samples]
    assert bbr_start.flow_timeline(sim, until=3.0, kernel=False)["lt"] == 2


def test_flow_timeline_without_an_exit():
    r = bbr_start.flow_timeline([_s(0.1, 1.0, 2.88672), _s(0.2, 2.0, 2.88672)], 3.0, True)
    assert (r["exit"], r["bw_exit"], r["bw_peak"]) == (None, None, 2.0)


def test_jain_by_hand():
    # (1 + 1 + 2)^2 / (3 (1 + 1 + 4)) = 16 / 18.
    assert bbr_start.jain([1, 1, 2]) == pytest.approx(16 / 18)
    assert bbr_start.jain([5, 5, 5, 5]) == pytest.approx(1.0)


def test_burst_loss_by_hand():
    import pandas as pd

    us = 1_000
    # Flow a: bursts of 2 (5 us apart) every 1 ms from 1.000 s, 4 bursts, the second packet of
    # the first two bursts dropped; flow b: single packets every 2 ms, one of two dropped;
    # a packet before the window is ignored.
    rows = [("a", 999_000 * us, "drop")]
    for k in range(4):
        t = 1_000_000 * us + k * 1_000 * us
        rows += [("a", t, "enqueue"), ("a", t + 5 * us, "drop" if k < 2 else "enqueue")]
    rows += [("b", 1_000_000 * us, "drop"), ("b", 1_002_000 * us, "enqueue")]
    ev = pd.DataFrame(rows, columns=["flow", "arrival_ns", "event"])
    got = {x["flow"]: x for x in bbr_start.burst_loss(ev, 1.0, 1.01)}
    a, b = got["a"], got["b"]
    # 8 packets of 1,500 B in 10 ms: 9.6 Mb/s; half of them follow their burst's first.
    assert a["rate"] == pytest.approx(9.6)
    assert (a["in_burst"], a["mean_burst"]) == (0.5, 2.0)
    assert (a["drop_first"], a["drop_later"], a["drop"]) == (0.0, 0.5, 0.25)
    assert (b["in_burst"], b["mean_burst"], b["drop_first"], b["drop"]) == (0.0, 1.0, 0.5, 0.5)
    assert b["drop_later"] != b["drop_later"]  # NaN: no packet inside a burst
