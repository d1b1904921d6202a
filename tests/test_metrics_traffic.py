"""Metrics of the new traffic: FCT and slowdown, fairness per group, queueing-delay percentiles of
a monitored link against the M/M/1 waiting-time distribution."""

from __future__ import annotations

import math

import pytest

import aqmlab
from aqmlab.running import metrics


def _f(name, size=None, fct=None, goodput=1.0, udp=None):
    return {
        "name": name,
        "size_bytes": size,
        "completion_s": fct,
        "goodput_bps": goodput,
        "udp_sent": udp,
        "base_rtt_s": 0.1,
        "path_rate_bps": 8e6,
    }


def test_ideal_fct_is_one_rtt_plus_the_payload_at_the_path_rate():
    # 1 MB at 8 Mb/s = 1 s, plus a 100 ms RTT.
    assert metrics.ideal_fct(1e6, 0.1, 8e6) == pytest.approx(1.1)


def test_fct_summary_by_hand():
    flows = [
        _f("web.0", 1000, 0.2),  # ideal 0.101 s
        _f("web.1", 1000, 0.4),
        _f("web.2", 50_000, 0.3),  # ideal 0.15 s: slowdown 2
        _f("web.3", 50_000, None),  # unfinished
        _f("bulk.0"),
    ]
    s = metrics.fct_summary(flows)
    assert s["finite_flows"] == 4 and s["unfinished"] == 1
    assert s["all"]["count"] == 3
    assert s["all"]["mean_s"] == pytest.approx(0.3)
    assert s["all"]["median_s"] == pytest.approx(0.3)
    assert s["by_size"]["<10kB"]["count"] == 2
    assert s["by_size"]["<10kB"]["slowdown_mean"] == pytest.approx((0.2 + 0.4) / 2 / 0.101)
    assert s["by_size"]["10kB-100kB"]["slowdown_median"] == pytest.approx(2.0)
    assert s["by_size"][">=1MB"] == {"count": 0}
    assert list(s["groups"]) == ["web"] and s["groups"]["web"]["count"] == 3


def test_fairness_never_folds_finite_or_open_loop_flows_into_the_bulk_index():
    flows = [_f("bulk.0", goodput=5.0), _f("bulk.1", goodput=5.0)]
    flows += [_f("web.0", 1000, 0.1, goodput=0.01), _f("udp.0", goodput=9.0, udp=100)]
    fair = metrics.fairness(flows)
    assert fair["jain_goodput"] == pytest.approx(1.0)
    assert set(fair["groups"]) == {"bulk", "web", "udp"}
    assert fair["groups"]["bulk"] == pytest.approx(1.0)
    only_web = metrics.fairness([_f("web.0", 1000, 0.1)])
    assert math.isnan(only_web["jain_goodput"])


def test_queueing_delay_percentiles_follow_the_mm1_waiting_time():
    # M/M/1 at rho = 0.5, mean service 1/mu = 0.8 ms (1000 B at 10 Mb/s): P(W > t) = rho
    # e^(-mu (1 - rho) t), so the q-quantile for q > 1 - rho is ln(rho / (1 - q)) / (mu (1 - rho))
    # (Kleinrock, Queueing Systems vol. 1, s. 3.2). ~625,000 packets; the histogram adds <= 3.1%.
    doc = {
        "duration": "101s",
        "warmup": "1s",
        "topology": {"rate": "10Mbps", "delay": "1ms", "buffer": 100_000, "access_rate": "10Gbps"},
        "flows": [{"type": "poisson", "load": 0.5, "packet_size": "1000B"}],
    }
    res = aqmlab.run(doc, plot=False)
    b = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    w = 0.8e-3 / 0.5
    # The median sits on the edge of the atom at 0 (P(W = 0) = 1 - rho = 0.5): near 0.
    assert b["delay_p50_s"] < 0.02 * w
    for key, q in (("delay_p90_s", 0.9), ("delay_p99_s", 0.99), ("delay_p999_s", 0.999)):
        assert b[key] == pytest.approx(w * math.log(0.5 / (1 - q)), rel=0.06), key
