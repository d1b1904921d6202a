"""Tests of aqmlab.running.metrics against independent truth: hand arithmetic, closed forms,
statistics."""

import itertools
import math

import numpy as np
import pytest

from aqmlab.errors import InputError
from aqmlab.running import metrics as m

# --------------------------------------------------------------------------------------------------
# Loss ratio
# --------------------------------------------------------------------------------------------------


def test_loss_ratio_by_hand():
    assert m.loss_ratio(1000, 25) == pytest.approx(0.025)
    assert m.loss_ratio(np.int64(8), np.int64(0)) == 0.0
    assert m.loss_ratio(4, 4) == 1.0
    assert math.isnan(m.loss_ratio(0, 0))


# --------------------------------------------------------------------------------------------------
# Burst ratio
# --------------------------------------------------------------------------------------------------


def test_burst_ratio_isolated_drops_below_one():
    # 10 arrivals, drops at positions 1, 4, 8: three runs of length 1.
    # L = 3/10 = 0.3, mean run = 3/3 = 1, B = 1 * (1 - 0.3) = 0.7 < 1.
    seq = [0, 1, 0, 0, 1, 0, 0, 0, 1, 0]
    assert m.burst_ratio(seq) == pytest.approx(0.7)


def test_burst_ratio_clustered_drops_above_one():
    # 12 arrivals, drops in two runs of 3 (positions 1-3 and 8-10).
    # L = 6/12 = 0.5, mean run = 6/2 = 3, B = 3 * (1 - 0.5) = 1.5 > 1.
    seq = [0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0]
    assert m.burst_ratio(seq) == pytest.approx(1.5)


def test_burst_ratio_runs_at_both_ends():
    # Runs touching the first and the last packet: runs {0,1} and {9}.
    # L = 3/10 = 0.3, mean run = 3/2 = 1.5, B = 1.5 * 0.7 = 1.05.
    seq = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 1], dtype=bool)
    assert m.burst_ratio(seq) == pytest.approx(1.05)


def test_burst_ratio_undefined_cases_are_nan():
    assert math.isnan(m.burst_ratio([]))
    assert math.isnan(m.burst_ratio([0, 0, 0]))
    assert math.isnan(m.burst_ratio([1, 1, 1]))  # L = 1: reference run length 1/(1-L) infinite
    assert math.isnan(m.burst_ratio_from_counts(0, 0, 0))
    assert math.isnan(m.burst_ratio_from_counts(5, 0, 0))
    assert math.isnan(m.burst_ratio_from_counts(5, 5, 1))


def test_burst_ratio_bernoulli_is_one():
    # For i.i.d. Bernoulli(p) losses B -> 1. Tolerance, by the delta method: with d = D/n and
    # r = R/n (R = number of run starts, sum of Y_i = X_i (1 - X_{i-1})), q = p(1-p):
    #   n Var(d) = q,  n Var(r) = q(1-q) - 2q^2 = q(1 - 3q)  (lag-1 covariance of Y is -q^2),
    #   n Cov(d, r) = q(1-p) - pq = q(1 - 2p).
    # B = d(1-d)/r has gradient a = (1-2p)/q in d and b = -1/q in r, so
    #   n Var(B) = a^2 q + b^2 q(1-3q) + 2ab q(1-2p) = [(1-3q) - (1-2p)^2] / q = q / q = 1,
    # i.e. sd(B) = 1/sqrt(n) whatever p (bias is O(1/n)). With n = 200_000, sd = 0.00224; we allow
    # 5 sd = 5/sqrt(n) = 0.0112.
    n = 200_000
    rng = np.random.default_rng(20220201)
    for p in (0.02, 0.2, 0.5):
        seq = rng.random(n) < p
        assert m.burst_ratio(seq) == pytest.approx(1.0, abs=5 / math.sqrt(n))


def _runs_by_groupby(seq):
    return sum(1 for key, _ in itertools.groupby(seq) if key)


def test_burst_ratio_counts_version_equals_sequence_version():
    rng = np.random.default_rng(7)
    cases = [
        [0, 1, 0, 0, 1, 0, 0, 0, 1, 0],
        [1, 1, 0, 0, 0, 0, 0, 0, 0, 1],
        [0, 1],
        [1, 0],
        list(rng.random(5000) < 0.1),
        # a two-state (Gilbert) chain: bursty losses
        list(np.cumsum(rng.random(5000) < 0.05) % 2 == 1),
    ]
    for seq in cases:
        seq = [int(v) for v in seq]
        counted = m.burst_ratio_from_counts(len(seq), sum(seq), _runs_by_groupby(seq))
        assert m.burst_ratio(seq) == pytest.approx(counted, rel=1e-12)


# --------------------------------------------------------------------------------------------------
# E-model: Ie_eff, Idd, C
# --------------------------------------------------------------------------------------------------


def test_ie_eff_by_hand():
    # L = 0.02, B = 2, Ie = 0, Bpl = 4.3: Ppl = 2, Ie_eff = 95 * 2 / (2/2 + 4.3) = 190 / 5.3
    assert m.ie_eff(0.02, 2.0) == pytest.approx(190 / 5.3)  # 35.8490566...
    # L = 0.01, B = 1 (random loss): Ppl = 1, Ie_eff = 95 * 1 / (1 + 4.3) = 17.9245283...
    assert m.ie_eff(0.01, 1.0) == pytest.approx(17.924528301886792)
    # L = 0.05, B = 1.5, Ie = 10, Bpl = 10: Ppl = 5, Ppl/B = 10/3,
    # Ie_eff = 10 + 85 * 5 / (10/3 + 10) = 10 + 425 / (40/3) = 10 + 31.875 = 41.875
    assert m.ie_eff(0.05, 1.5, ie=10.0, bpl=10.0) == pytest.approx(41.875)
    # No loss: Ppl = 0, Ie_eff = Ie whatever B (B is NaN when there are no losses)
    assert m.ie_eff(0.0, math.nan) == 0.0
    assert m.ie_eff(0.0, 1.3, ie=11.0) == 11.0
    # Loss but undefined B: NaN propagates
    assert math.isnan(m.ie_eff(0.1, math.nan))


def test_idd_threshold_at_100_ms():
    assert m.idd(0.0) == 0.0
    assert m.idd(0.05) == 0.0
    assert m.idd(0.1) == 0.0  # Ta = 100 ms: still the Ta <= 100 ms branch
    # just above: X = log2(1.01) = 0.01436, Idd ~ 25 X^6 (1 - 3/729) / 6 ~ 3.6e-11, positive, tiny
    assert 0.0 < m.idd(0.101) < 1e-9


def test_idd_known_points():
    # Ta = 200 ms, X = log10(2)/log10(2) = 1 (G.107's doubling point):
    #   2^(1/6) = 1.122462048309373, (1 + 1/729)^(1/6) = 1.000228493122874
    #   Idd = 25 * (1.122462048309373 - 3 * 1.000228493122874 + 2) = 25 * 0.121776568940751
    #       = 3.04441422351878
    assert m.idd(0.2) == pytest.approx(3.04441422351878, rel=1e-12)
    # Ta = 400 ms, X = 2: 65^(1/6) = 2.005174745150422, (1 + 64/729)^(1/6) = 1.014123725453172
    #   Idd = 25 * (2.005174745150422 - 3.042371176359517 + 2) = 25 * 0.962803568790905 = 24.0700892
    assert m.idd(0.4) == pytest.approx(24.07008921977263, rel=1e-12)
    # Ta = 800 ms, X = 3: 730^(1/6) = 3.000685479368622, (1 + 1)^(1/6) = 1.122462048309373
    #   Idd = 25 * (3.000685479368622 - 3.367386144928119 + 2) = 25 * 1.633299334440503 = 40.8324834
    assert m.idd(0.8) == pytest.approx(40.83248336101258, rel=1e-12)


def test_global_impairment_by_hand():
    # queue delay 50 ms + fixed path 150 ms = Ta 200 ms: Idd = 3.04441422351878 (above);
    # L = 0.02, B = 2: Ie_eff = 190/5.3 = 35.84905660377358; C = 38.89347082729236
    assert m.global_impairment(0.05, 0.02, 2.0, fixed_path_delay_s=0.15) == pytest.approx(
        38.89347082729236, rel=1e-12
    )
    # same with per-packet delays whose mean is 50 ms
    assert m.global_impairment(
        np.array([0.04, 0.06, 0.05]), 0.02, 2.0, fixed_path_delay_s=0.15
    ) == pytest.approx(38.89347082729236, rel=1e-12)
    # default fixed delay 0: Ta = 50 ms <= 100 ms, Idd = 0, C = Ie_eff
    assert m.global_impairment(0.05, 0.02, 2.0) == pytest.approx(190 / 5.3)
    # no loss, Ta = 300 + 100 = 400 ms: C = Idd(400 ms) = 24.07008921977263
    assert m.global_impairment(0.3, 0.0, math.nan, fixed_path_delay_s=0.1) == pytest.approx(
        24.07008921977263, rel=1e-12
    )


# --------------------------------------------------------------------------------------------------
# Settling time
# --------------------------------------------------------------------------------------------------


def test_settling_time_step_without_smoothing():
    t = np.arange(641) / 64  # 0 .. 10 s, dt = 1/64 s (exact in binary)
    x = np.where(t >= 3.0, 50.0, 0.0)
    assert m.settling_time(t, x, band=0.1) == 3.0


def test_settling_time_step_with_trailing_smoothing():
    # Window (t - 1 s, t] holds 64 samples. At t = 3 + k/64 it holds k + 1 samples of 50, so the
    # smoothed value is 50 (k + 1) / 64; inside the 10 % band of 50 when (k + 1) / 64 >= 0.9, i.e.
    # k + 1 >= 57.6, k = 57: t = 3 + 57/64 = 3.890625 s.
    t = np.arange(641) / 64
    x = np.where(t >= 3.0, 50.0, 0.0)
    assert m.settling_time(t, x, band=0.1, smoothing_s=1.0) == 3.890625


def test_settling_time_exponential_rise():
    # x = 100 (1 - exp(-t / tau)), tau = 1 s, final mean ~ 100 (over t >= 16 s: 100 - 3e-6).
    # Within 10 %: 100 exp(-t / tau) <= 10  <=>  t >= tau ln 10 = 2.302585 s; grid dt = 1 ms.
    dt, tau = 1e-3, 1.0
    t = np.arange(20001) * dt
    x = 100.0 * (1.0 - np.exp(-t / tau))
    ts = m.settling_time(t, x, band=0.1)
    assert tau * math.log(10) <= ts <= tau * math.log(10) + dt + 1e-12


def test_settling_time_exponential_decay():
    # x = 20 + 80 exp(-t / tau), tau = 2 s, final mean ~ 20; within 5 % (1 packet):
    # 80 exp(-t / 2) <= 1  <=>  t >= 2 ln 80 = 8.7641 s; grid dt = 1 ms, 40 s long.
    dt, tau = 1e-3, 2.0
    t = np.arange(40001) * dt
    x = 20.0 + 80.0 * np.exp(-t / tau)
    ts = m.settling_time(t, x, band=0.05)
    assert tau * math.log(80) <= ts <= tau * math.log(80) + dt + 1e-12


def test_settling_time_constant_and_never_settling():
    t = np.linspace(0.0, 10.0, 101)
    assert m.settling_time(t, np.full(101, 7.0)) == 0.0
    # persistent oscillation of +-50 % around 100: never within +-10 %
    assert math.isnan(m.settling_time(t, 100.0 + 50.0 * np.sin(2 * np.pi * t)))
    # a ramp: still moving through the final window
    assert math.isnan(m.settling_time(t, t))
    # a step inside the final window (t >= 8 s) has not settled by the time the final mean is taken
    assert math.isnan(m.settling_time(t, np.where(t >= 9.0, 50.0, 0.0)))


def test_settling_time_must_hold_over_the_final_window():
    t = np.linspace(0.0, 10.0, 101)  # dt = 0.1 s; final window t >= 8 s (21 samples)
    # a 0.3 s dip to 0 at t = 5.0, 5.1, 5.2: final mean 100, band +-20: settles at 5.3 s
    x = np.full(101, 100.0)
    x[50:53] = 0.0
    assert m.settling_time(t, x, band=0.2) == pytest.approx(5.3)
    # the same dip at t = 8.0, 8.1, 8.2, inside the final window: final mean = 100 * 18/21 = 85.71,
    # band +-17.14 holds 100 but not 0; the series leaves the band inside the window -> NaN
    x = np.full(101, 100.0)
    x[80:83] = 0.0
    assert math.isnan(m.settling_time(t, x, band=0.2))


# --------------------------------------------------------------------------------------------------
# Jitter, time-weighted mean and std, Jain's index, percentiles
# --------------------------------------------------------------------------------------------------


def test_jitter_by_hand():
    # |3-1| + |2-3| + |2-2| + |5-2| = 2 + 1 + 0 + 3 = 6 over 4 differences = 1.5
    assert m.jitter([1.0, 3.0, 2.0, 2.0, 5.0]) == pytest.approx(1.5)
    assert math.isnan(m.jitter([0.1]))
    assert math.isnan(m.jitter([]))


def test_time_weighted_mean_std_by_hand():
    # value 2 on [0,1), 4 on [1,3), 0 on [3,4]: mean = (2*1 + 4*2 + 0*1) / 4 = 10/4 = 2.5
    # var = (0.25*1 + 2.25*2 + 6.25*1) / 4 = 11/4 = 2.75, std = sqrt(2.75) = 1.6583124
    mean, std = m.time_weighted_mean_std([0.0, 1.0, 3.0], [2.0, 4.0, 0.0], 4.0)
    assert mean == pytest.approx(2.5)
    assert std == pytest.approx(math.sqrt(2.75))
    # same series shifted to start at warm-up t = 10 s, with a zero-length piece at 11 s
    mean, std = m.time_weighted_mean_std([10.0, 11.0, 11.0, 13.0], [2.0, 99.0, 4.0, 0.0], 14.0)
    assert mean == pytest.approx(2.5)
    assert std == pytest.approx(math.sqrt(2.75))
    # the sample mean of [2, 4, 0] would be 2: the time weighting matters
    mean, std = m.time_weighted_mean_std([5.0], [3.0], 6.0)
    assert (mean, std) == (3.0, 0.0)


def test_jain_index():
    assert m.jain_index([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert m.jain_index([0.0, 0.0, 7.0]) == pytest.approx(1 / 3)  # one hog of n = 3
    assert m.jain_index(np.r_[1e6, np.zeros(9)]) == pytest.approx(1 / 10)
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42 = 6/7
    assert m.jain_index([1.0, 2.0, 3.0]) == pytest.approx(6 / 7)
    assert math.isnan(m.jain_index([]))
    assert math.isnan(m.jain_index([0.0, 0.0]))


def test_percentiles_by_hand():
    # sorted 1..5, position h = 4 q / 100: q50 -> 2 -> 3; q90 -> 3.6 -> 4.6; q99 -> 3.96 -> 4.96
    p = m.percentiles([5.0, 1.0, 4.0, 2.0, 3.0])
    assert p == pytest.approx({50.0: 3.0, 90.0: 4.6, 99.0: 4.96})
    assert m.percentiles([1.0, 2.0], qs=[0, 100]) == {0.0: 1.0, 100.0: 2.0}
    assert all(math.isnan(v) for v in m.percentiles([]).values())


# --------------------------------------------------------------------------------------------------
# Bad arguments
# --------------------------------------------------------------------------------------------------

T = np.arange(10.0)
X = np.ones(10)

BAD = [
    ("arrived", lambda: m.loss_ratio(-1, 0)),
    ("arrived", lambda: m.loss_ratio(10.5, 1)),
    ("dropped", lambda: m.loss_ratio(10, -1)),
    ("dropped", lambda: m.loss_ratio(10, 11)),
    ("arrived", lambda: m.loss_ratio("many", 1)),
    ("arrived", lambda: m.burst_ratio_from_counts(-1, 0, 0)),
    ("dropped", lambda: m.burst_ratio_from_counts(3, 5, 1)),
    ("loss_runs", lambda: m.burst_ratio_from_counts(10, 3, 0)),
    ("loss_runs", lambda: m.burst_ratio_from_counts(10, 3, 4)),
    ("loss_runs", lambda: m.burst_ratio_from_counts(10, 0, 1)),
    ("loss_runs", lambda: m.burst_ratio_from_counts(5, 4, 3)),  # 3 runs need >= 2 admitted
    ("loss_runs", lambda: m.burst_ratio_from_counts(10, 3, -1)),
    ("loss_indicator", lambda: m.burst_ratio([0, 2, 1])),
    ("loss_indicator", lambda: m.burst_ratio([0, math.nan])),
    ("loss_indicator", lambda: m.burst_ratio([[0, 1], [1, 0]])),
    ("loss_ratio", lambda: m.ie_eff(-0.1, 1.0)),
    ("loss_ratio", lambda: m.ie_eff(1.5, 1.0)),
    ("burst_ratio", lambda: m.ie_eff(0.1, 0.0)),
    ("burst_ratio", lambda: m.ie_eff(0.1, -1.0)),
    ("burst_ratio", lambda: m.ie_eff(0.1, math.inf)),
    ("ie", lambda: m.ie_eff(0.1, 1.0, ie=-1.0)),
    ("ie", lambda: m.ie_eff(0.1, 1.0, ie=96.0)),
    ("bpl", lambda: m.ie_eff(0.1, 1.0, bpl=0.0)),
    ("one_way_delay_s", lambda: m.idd(-0.1)),
    ("one_way_delay_s", lambda: m.idd(math.nan)),
    ("one_way_delay_s", lambda: m.idd(math.inf)),
    ("one_way_delay_s", lambda: m.idd([0.1, 0.2])),
    ("queue_delay_s", lambda: m.global_impairment(-0.01, 0.01, 1.0)),
    ("queue_delay_s", lambda: m.global_impairment([], 0.01, 1.0)),
    ("queue_delay_s", lambda: m.global_impairment([0.1, -0.1], 0.01, 1.0)),
    ("fixed_path_delay_s", lambda: m.global_impairment(0.01, 0.01, 1.0, fixed_path_delay_s=-1)),
    ("loss_ratio", lambda: m.global_impairment(0.01, 2.0, 1.0)),
    ("band", lambda: m.settling_time(T, X, band=0.0)),
    ("band", lambda: m.settling_time(T, X, band=-0.1)),
    ("smoothing_s", lambda: m.settling_time(T, X, smoothing_s=-1.0)),
    ("final_fraction", lambda: m.settling_time(T, X, final_fraction=0.0)),
    ("final_fraction", lambda: m.settling_time(T, X, final_fraction=1.5)),
    ("t must be strictly increasing", lambda: m.settling_time(T[::-1], X)),
    ("t must contain", lambda: m.settling_time([], [])),
    ("x must have the same length", lambda: m.settling_time(T, X[:-1])),
    ("x must contain only finite", lambda: m.settling_time(T, np.r_[X[:-1], np.nan])),
    ("delays", lambda: m.jitter([-1.0, 2.0])),
    ("delays", lambda: m.jitter([[1.0, 2.0]])),
    ("t_end", lambda: m.time_weighted_mean_std([0.0, 1.0], [1.0, 2.0], 0.5)),
    ("t_end", lambda: m.time_weighted_mean_std([1.0], [1.0], 1.0)),
    ("t must be non-decreasing", lambda: m.time_weighted_mean_std([1.0, 0.0], [1.0, 2.0], 2.0)),
    ("x must have the same length", lambda: m.time_weighted_mean_std([0.0], [1.0, 2.0], 2.0)),
    ("values", lambda: m.jain_index([-1.0, 2.0])),
    ("values", lambda: m.jain_index([1.0, math.inf])),
    ("qs", lambda: m.percentiles([1.0, 2.0], qs=(101,))),
    ("qs", lambda: m.percentiles([1.0, 2.0], qs=(-1,))),
    ("samples", lambda: m.percentiles([1.0, math.nan])),
]


@pytest.mark.parametrize(("name", "call"), BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_bad_arguments_raise_input_error_naming_the_argument(name, call):
    with pytest.raises(InputError, match=name):
        call()
