"""The RFC 7928 metrics of issue 24 against hand-worked values: loss synchronisation (s. 2.4) on
hand-made drop sequences, window cuts, flow startup time (s. 2.2), the covariance ellipse of the
delay-goodput plot (s. 2.7)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aqmlab.errors import InputError
from aqmlab.running import metrics as mt


def test_sync_hand_worked_three_flows():
    # A drops at 1.00 and 5.0, B at 1.02 and 9.0, C never. Gap 0.1 s: events {1.00, 1.02} (A, B:
    # 2 of 3 flows), {5.0} (A: 1 of 3), {9.0} (B: 1 of 3). R = (2/3 + 1/3 + 1/3) / 3 = 4/9.
    r = mt.loss_synchronisation([[1.0, 5.0], [1.02, 9.0], []], gap_s=0.1)
    assert r["events"] == 3
    assert r["flows"] == 3
    assert r["rate"] == pytest.approx(4 / 9)
    assert r["max_fraction"] == pytest.approx(2 / 3)


def test_sync_global_is_one_and_desynchronised_is_one_over_n():
    every = [[1.0, 2.0, 3.0]] * 4  # every flow in every event
    assert mt.loss_synchronisation(every, gap_s=0.05)["rate"] == 1.0
    apart = [[1.0], [2.0], [3.0], [4.0]]  # one flow per event
    r = mt.loss_synchronisation(apart, gap_s=0.5)
    assert r["rate"] == pytest.approx(1 / 4)
    assert r["events"] == 4


def test_sync_counts_a_flow_once_per_event_and_anchors_events_at_their_start():
    # Two signals of flow 0 in one event count it once: {0, 0.05 (flow 0), 0.08 (flow 1)} with a
    # 0.1 s gap is one event holding both flows.
    r = mt.loss_synchronisation([[0.0, 0.05], [0.08]], gap_s=0.1)
    assert r["events"] == 1 and r["rate"] == 1.0
    # 0, 0.05, 0.10 with gap 0.06: 0.05 is within 0.06 of the event's start, 0.10 is not (it is
    # within 0.06 of 0.05, but events are anchored, not chained): {0, 0.05} (flow 0) and {0.10}
    # (flow 1), each 1 of 2 flows.
    r = mt.loss_synchronisation([[0.0, 0.05], [0.10]], gap_s=0.06)
    assert r["events"] == 2
    assert r["rate"] == pytest.approx(0.5)
    # Frequent signals do not chain into one global event: 4 flows signalled in turn, one signal
    # every 40 ms (100 in all), gap 100 ms. Each event holds the signals at s, s + 40, s + 80 ms
    # (3 flows of 4); 100 = 33 x 3 + 1, so R = (33 x 3/4 + 1/4) / 34 = 25/34 (chained, they
    # would be one event of all 4 flows: R = 1).
    turns = [[0.04 * (4 * k + i) for k in range(25)] for i in range(4)]
    r = mt.loss_synchronisation(turns, gap_s=0.1)
    assert r["events"] == 34
    assert r["rate"] == pytest.approx(25 / 34)


def test_sync_no_event_is_nan_and_bad_gap_is_refused():
    r = mt.loss_synchronisation([[], []], gap_s=0.1)
    assert math.isnan(r["rate"]) and r["events"] == 0
    assert math.isnan(mt.loss_synchronisation([], gap_s=0.1)["rate"])
    with pytest.raises(InputError, match="gap_s"):
        mt.loss_synchronisation([[1.0]], gap_s=0.0)
    with pytest.raises(InputError, match="events"):
        mt.loss_synchronisation([[float("nan")]], gap_s=0.1)


def test_cwnd_reductions():
    t = [0.0, 1.0, 2.0, 3.0, 4.0]
    w = [10, 11, 5, 6, 3]
    assert mt.cwnd_reductions(t, w).tolist() == [2.0, 4.0]
    assert mt.cwnd_reductions([0.0], [5]).size == 0
    with pytest.raises(InputError):
        mt.cwnd_reductions([0.0, 1.0], [1.0])


def test_startup_time():
    t = [0.0, 0.01, 0.02, 0.03]
    d = [0, 0, 1460, 2920]
    assert mt.startup_time(t, d, start_s=0.005) == pytest.approx(0.015)
    assert math.isnan(mt.startup_time(t, [0, 0, 0, 0], start_s=0.0))


def test_covariance_ellipse_on_a_line_and_axis_aligned():
    # Points on y = 2x: var x = 1, var y = 4, cov = 2; eigenvalues 5 and 0: a = sqrt 5, b = 0,
    # major axis along (1, 2), atan2(2, 1) = 63.43 degrees.
    e = mt.covariance_ellipse([0, 1, 2], [0, 2, 4])
    assert e["cx"] == 1 and e["cy"] == 2
    assert e["a"] == pytest.approx(math.sqrt(5))
    assert e["b"] == pytest.approx(0, abs=1e-7)
    assert e["angle_deg"] == pytest.approx(math.degrees(math.atan2(2, 1)))
    # Axis-aligned: var x = 2/3, var y = 8/3 (ddof 1), no covariance; 2 sigma doubles the axes.
    e = mt.covariance_ellipse([-1, 1, 0, 0], [0, 0, -2, 2], nstd=2)
    assert e["a"] == pytest.approx(2 * math.sqrt(8 / 3))
    assert e["b"] == pytest.approx(2 * math.sqrt(2 / 3))
    assert abs(e["angle_deg"]) == pytest.approx(90)
    one = mt.covariance_ellipse([3.0], [4.0])
    assert (one["cx"], one["cy"]) == (3.0, 4.0) and math.isnan(one["a"])


def test_ellipse_outline_holds_one_sigma_of_gaussian_points():
    # For a 2-D Gaussian the 1-sigma ellipse holds 1 - exp(-1/2) = 39.3% of the points.
    rng = np.random.default_rng(7)
    cov = np.array([[4.0, 1.5], [1.5, 1.0]])
    pts = rng.multivariate_normal([10.0, 5.0], cov, size=20_000)
    e = mt.covariance_ellipse(pts[:, 0], pts[:, 1])
    ang = math.radians(e["angle_deg"])
    dx, dy = pts[:, 0] - e["cx"], pts[:, 1] - e["cy"]
    u = dx * math.cos(ang) + dy * math.sin(ang)
    v = -dx * math.sin(ang) + dy * math.cos(ang)
    inside = np.mean((u / e["a"]) ** 2 + (v / e["b"]) ** 2 <= 1.0)
    assert inside == pytest.approx(1 - math.exp(-0.5), abs=0.01)


def test_step_settling_time_with_an_absolute_tolerance():
    # A decay onto a sawtooth: 5 + 100 exp(-t) + a +-2 packet triangle wave (period 1 s). A
    # relative band of 10% of 5 packets never holds the sawtooth: NaN; with 5 packets of
    # tolerance the band is 0.5 + 5 = 5.5 and the smoothed (1 s average: the triangle averages
    # out) series is inside once 100 exp(-t) averaged over the last second <= 5.5.
    t = np.arange(0.0, 20.0, 0.01)
    saw = 2.0 * (2.0 * np.abs((t % 1.0) - 0.5) * 2.0 - 1.0)
    x = 5.0 + 100.0 * np.exp(-t) + saw
    assert math.isnan(mt.step_settling_time(t, x, band=0.1, abs_tol=0.0))
    got = mt.step_settling_time(t, x, band=0.1, abs_tol=5.0, smoothing_s=1.0)
    # the trailing 1 s mean of 100 exp(-t) is 100 (e^(1) - 1) e^(-t) over [t - 1, t]: equal to
    # 5.5 at t = ln(100 (e - 1) / 5.5)
    want = math.log(100.0 * (math.e - 1.0) / 5.5)
    assert got == pytest.approx(want, abs=0.05)
    # no tolerance: the same as settling_time
    y = 20.0 + 100.0 * np.exp(-t)
    assert mt.step_settling_time(t, y, 0.1, 0.0) == mt.settling_time(t, y, 0.1)
    with pytest.raises(InputError, match="abs_tol"):
        mt.step_settling_time(t, y, 0.1, -1.0)
