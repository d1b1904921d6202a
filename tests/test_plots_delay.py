"""Queueing delay as a result (issue 13 item 1): the delay CDF the plots draw against M/M/1
theory, the delay series against the summary's mean, delay-target AQMs plotted in ms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aqmlab.report import plots
from aqmlab.running import runner

MM1 = {
    "name": "mm1",
    "duration": "100s",
    "warmup": "5s",
    "topology": {
        "type": "dumbbell",
        "rate": "10Mbps",
        "delay": "1ms",
        "buffer": 100000,  # no loss: M/M/1 with an infinite waiting room
        "access_rate": "10Gbps",  # the access link neither queues nor reshapes the arrivals
        "access_delay": "1ms",
    },
    # Poisson arrivals of exponential sizes (mean 1000 B) at 80% of 10 Mb/s.
    "flows": [{"type": "poisson", "load": 0.8, "packet_size": "1000B"}],
}


@pytest.fixture(scope="module")
def mm1():
    return runner.run(MM1)


def test_delay_cdf_is_the_mm1_waiting_time_distribution(mm1):
    # M/M/1 waiting time (arrival to start of service; Kleinrock vol. 1 s. 3.2, eq. 3.2.x):
    # P(W <= t) = 1 - rho exp(-(mu - lambda) t), with an atom 1 - rho at t = 0.
    lam, mu = 0.8 * 10e6 / 8000, 10e6 / 8000
    rho = lam / mu
    x, F = plots.delay_cdf(mm1)
    assert np.all(np.diff(x) > 0) and np.all(np.diff(F) >= 0) and F[-1] == 1.0
    theory = 1 - rho * np.exp(-(mu - lam) * x)
    body = x < 0.03  # up to P(W > t) ~ 4e-4
    assert body.sum() > 100
    assert np.max(np.abs(F[body] - theory[body])) < 0.02
    # The atom at zero: a packet that finds the server idle waits 0 (first edge: 1 ns).
    assert x[0] == pytest.approx(1e-9) and F[0] == pytest.approx(1 - rho, abs=0.02)
    # The summary's percentiles agree with the inverse of the same law (within 1/32 + noise).
    b = mm1.bottleneck
    for q, key in ((0.5, "delay_p50_s"), (0.9, "delay_p90_s"), (0.99, "delay_p99_s")):
        exact = math.log(rho / (1 - q)) / (mu - lam)
        assert b[key] == pytest.approx(exact, rel=0.08), key
    assert b["delay_mean_s"] == pytest.approx(rho / (mu - lam), rel=0.05)


def test_delay_series_is_consistent_with_the_summary(mm1):
    d = plots.delay_series(mm1)
    t, n = d["t_s"], d["packets"]
    # Bins of the sample interval (10 ms) from 0, covering the whole run.
    assert np.allclose(np.diff(t), 0.01) and t[0] == 0 and t[-1] >= 100 - 0.01
    w = t >= 5.0
    # Every packet sent in the window is in a bin after the warm-up: the bins' packet-weighted
    # mean is the summary's mean delay, and no bin's maximum exceeds the largest delay seen.
    full = w & (n > 0)
    mean = np.sum(d["delay_mean_s"][full] * n[full]) / n[full].sum()
    assert mean == pytest.approx(mm1.bottleneck["delay_mean_s"], rel=1e-9)
    # The bins count every packet that left the bottleneck in the window: 80% of 1250 pkt/s.
    assert n[w].sum() == pytest.approx(0.8 * 1250 * 95, rel=0.02)
    assert np.all(np.isnan(d["delay_mean_s"][n == 0]))
    ok = n > 0
    assert np.all(d["delay_max_s"][ok] >= d["delay_mean_s"][ok] - 1e-15)


def test_smoothing_is_a_moving_average():
    t = np.arange(0, 10, 0.01)
    y = np.where(np.arange(len(t)) % 2 == 0, 0.0, 2.0)  # alternates 0, 2: mean 1
    s = plots.smooth(t, y, 0.5)
    assert np.allclose(s[100:-100], 1.0, atol=0.03)
    y[5] = np.nan  # an empty interval is skipped, not taken as 0
    assert np.isfinite(plots.smooth(t, y, 0.1)).all()
    assert plots.smooth(t, y, None) is not None and np.array_equal(
        plots.smooth(t, y, None), y, equal_nan=True
    )


def test_delay_target_aqms_are_plotted_in_ms(tmp_path):
    sc = dict(MM1, duration="20s", aqm={"name": "codel", "target": "3ms"})
    sc["flows"] = [{"count": 5}]
    sc["topology"] = dict(MM1["topology"], buffer=200)
    res = runner.run(sc)
    assert plots.delay_target_s(res) == pytest.approx(0.003)
    svg = tmp_path / "queue.svg"
    plots.queue_plot(res, tmp_path / "queue.png", formats=("svg",))
    text = svg.read_text()
    assert "queueing delay (ms)" in text and "target 3 ms" in text
    plots.delay_plot(res, tmp_path / "delay.png", formats=("svg",))
    assert "queueing delay (ms)" in (tmp_path / "delay.svg").read_text()
    # PIE's default target (RFC 8033: 15 ms); RED has none.
    res.summary["links"][0]["aqm"] = "pie"
    res.scenario["aqm"] = {"name": "pie"}
    assert plots.delay_target_s(res) == pytest.approx(0.015)
    res.summary["links"][0]["aqm"] = "red"
    assert plots.delay_target_s(res) is None
