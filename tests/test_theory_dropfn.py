"""Tests of aqmlab.theory.families and aqmlab.theory.dropfn against independent truth: M/M/1 and
M/M/1/K closed forms, the constant-d equivalence, brute-force sums, and a Monte-Carlo simulation
of the same Markov chain for the burst ratio."""

import math

import numpy as np
import pytest

from aqmlab.errors import InputError
from aqmlab.theory import dropfn as dq
from aqmlab.theory.families import FAMILIES, get_family, table, tabulate, validate_table

# --------------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_values_in_unit_interval_and_nondecreasing(name):
    fam = FAMILIES[name]
    scale = 0.3 if name == "constant" else 37.5
    n = np.arange(0, 2000, dtype=float)
    d = fam.d(n, scale)
    assert d.shape == n.shape
    assert np.all((d >= 0) & (d <= 1))
    assert fam.nondecreasing and np.all(np.diff(d) >= 0)
    sat = fam.saturation(scale)
    if name == "constant":
        assert sat is None and np.all(d == 0.3)
    else:
        assert d[0] == 0.0
        assert np.all(d[sat:] == 1.0)
        assert d[sat - 1] < 1.0


@pytest.mark.parametrize(
    ("name", "n", "expected"),
    [
        ("step", [9, 10, 11], [0, 1, 1]),
        ("linear", [0, 5, 10, 20], [0, 0.5, 1, 1]),
        ("doubly-linear", [0, 5, 7.5, 10], [0, 0.1, 0.55, 1]),
        ("quadratic", [5, 10], [0.25, 1]),
        ("cubic", [5, 10], [0.125, 1]),
        ("linear-cubic", [5, 10], [(0.5 + 0.125) / 2, 1]),
        ("exponential", [10, 400], [1 - math.exp(-1), 1]),
        ("linear-log", [0, 10], [0, 1]),
    ],
)
def test_family_shapes_by_hand(name, n, expected):
    assert FAMILIES[name].d(np.array(n, float), 10.0) == pytest.approx(expected, abs=1e-15)


def test_linear_log_is_linear_times_its_log():
    g = 1 + (math.e - 1) * 0.3
    assert FAMILIES["linear-log"].d(3.0, 10.0) == pytest.approx(g * math.log(g) / math.e)


def test_table_and_validation():
    t = table("linear", 4, 6)
    assert t.tolist() == [0, 0.25, 0.5, 0.75, 1, 1, 1]
    with pytest.raises(InputError, match=r"table\[2\]: must be in \[0, 1\] \(got 1.5\)"):
        validate_table([0, 0.2, 1.5, 0.3])
    with pytest.raises(InputError, match=r"table\[0\]"):
        validate_table([-0.1])
    with pytest.raises(InputError, match=r"table\[1\]"):
        validate_table([0.0, float("nan")])
    with pytest.raises(InputError, match="non-empty"):
        validate_table([])
    assert tabulate(lambda n: min(1.0, n / 4), 5).tolist() == [0, 0.25, 0.5, 0.75, 1, 1]
    with pytest.raises(InputError, match=r"\[3\]"):
        tabulate(lambda n: n / 2, 4)


def test_family_errors():
    with pytest.raises(InputError, match="family: must be one of"):
        get_family("sigmoid")
    with pytest.raises(InputError, match="scale: must be > 0"):
        FAMILIES["linear"].d([1.0], 0.0)
    with pytest.raises(InputError, match="scale: must be >= 0 and <= 1"):
        FAMILIES["constant"].d([1.0], 1.5)
    with pytest.raises(InputError, match="scale: must be >= 1"):
        table("step", 0.5, 3)
    with pytest.raises(InputError, match="n_max"):
        table("linear", 3, -1)


# --------------------------------------------------------------------------------------------------
# Closed forms
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.3, 0.7, 0.95])
def test_mm1_closed_forms(rho):
    mu = 2.0
    r = dq.analyze([0.0], rho, service_rate=mu)
    assert r.mean_system == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert r.std_system == pytest.approx(math.sqrt(rho) / (1 - rho), rel=1e-12)
    assert r.mean_queue == pytest.approx(rho**2 / (1 - rho), rel=1e-12)
    assert r.std_queue == pytest.approx(
        math.sqrt(rho**2 * (1 + rho - rho**2)) / (1 - rho), rel=1e-10
    )
    assert r.loss_ratio == 0.0
    assert r.output_rate == pytest.approx(rho * mu, rel=1e-12)
    assert r.mean_response_time == pytest.approx(1 / (mu - rho * mu), rel=1e-12)
    assert math.isnan(r.burst_ratio)
    pi = dq.stationary_distribution([0.0], rho)
    n = np.arange(len(pi))
    assert pi == pytest.approx((1 - rho) * rho**n, rel=1e-10, abs=1e-300)
    assert 1 - pi.sum() < 1e-15


@pytest.mark.parametrize(("rho", "K"), [(0.5, 5), (0.8, 10), (1.0, 20), (1.7, 12)])
def test_mm1k_closed_forms(rho, K):
    n = np.arange(K + 1)
    if rho == 1.0:
        pk = np.full(K + 1, 1 / (K + 1))
        mean = K / 2
    else:
        pk = (1 - rho) * rho**n / (1 - rho ** (K + 1))
        mean = rho / (1 - rho) - (K + 1) * rho ** (K + 1) / (1 - rho ** (K + 1))
    loss = pk[-1]
    # the same queue three ways: a zero table with a finite buffer, the step family (d0) with an
    # infinite buffer, and the step family with a larger finite buffer
    for spec, kw in [
        ([0.0], {"buffer": K}),
        ("step", {"scale": K}),
        ("step", {"scale": K, "buffer": K + 7}),
    ]:
        r = dq.analyze(spec, rho, **kw)
        assert r.distribution == pytest.approx(pk, rel=1e-12)
        assert r.mean_system == pytest.approx(mean, rel=1e-12)
        assert r.loss_ratio == pytest.approx(loss, rel=1e-12)
        assert r.mean_response_time == pytest.approx(mean / (rho * (1 - loss)), rel=1e-12)
        # drops happen only at n = K; the next arrival is dropped again iff it comes before a
        # departure (probability rho/(1+rho)): runs are geometric with mean 1 + rho
        assert r.mean_run_length == pytest.approx(1 + rho, rel=1e-12)
        assert r.burst_ratio == pytest.approx((1 + rho) * (1 - loss), rel=1e-12)


@pytest.mark.parametrize(("rho", "c"), [(0.6, 0.0), (1.0, 0.2), (2.5, 0.7)])
def test_constant_d_is_mm1_with_thinned_load(rho, c):
    r_eff = rho * (1 - c)
    r = dq.analyze("constant", rho, scale=c)
    assert r.mean_system == pytest.approx(r_eff / (1 - r_eff), rel=1e-12)
    assert r.std_system == pytest.approx(math.sqrt(r_eff) / (1 - r_eff), rel=1e-12)
    assert r.loss_ratio == pytest.approx(c, rel=1e-12, abs=1e-15)
    if c > 0:
        # independent drops: geometric runs of mean 1/(1-c), burst ratio exactly 1
        assert r.mean_run_length == pytest.approx(1 / (1 - c), rel=1e-12)
        assert r.burst_ratio == pytest.approx(1.0, rel=1e-12)
        assert r.run_length_pmf[:5] == pytest.approx((1 - c) * c ** np.arange(5), rel=1e-10)


def test_constant_d_finite_buffer():
    rho, c, K = 1.4, 0.25, 8
    r_eff = rho * (1 - c)
    n = np.arange(K + 1)
    pk = (1 - r_eff) * r_eff**n / (1 - r_eff ** (K + 1))
    r = dq.analyze("constant", rho, K, scale=c)
    assert r.distribution == pytest.approx(pk, rel=1e-12)
    assert r.loss_ratio == pytest.approx(c * (1 - pk[-1]) + pk[-1], rel=1e-12)


def test_brute_force_product_formula_and_geometric_tail():
    # a table whose tail (0.4) keeps rho*(1 - 0.4) < 1: compare the closed-form tail with a long
    # explicit sum of Theorem 1's products
    d = [0.0, 0.1, 0.3, 0.2, 0.5, 0.4]
    rho = 1.5
    terms = [1.0]
    for i in range(20000):
        terms.append(terms[-1] * rho * (1 - (d[i] if i < len(d) else d[-1])))
    t = np.array(terms)
    p = t / t.sum()
    n = np.arange(len(p))
    dn = np.array([d[i] if i < len(d) else d[-1] for i in range(len(p))])
    r = dq.analyze(d, rho)
    assert r.mean_system == pytest.approx(n @ p, rel=1e-12)
    assert r.std_system == pytest.approx(math.sqrt((n * n) @ p - (n @ p) ** 2), rel=1e-12)
    assert r.loss_ratio == pytest.approx(dn @ p, rel=1e-12)
    assert r.distribution[:50] == pytest.approx(p[:50], rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_flow_balance_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    d = np.sort(rng.uniform(0, 1, 30))
    for buf in (None, 25):
        r = dq.analyze(d, 1.3, buf, service_rate=3.0)
        # admitted rate = departure rate: lambda (1 - L) = mu (1 - P0)
        assert r.output_rate == pytest.approx(3.0 * r.utilization, rel=1e-12)
        assert r.mean_waiting_time == pytest.approx(r.mean_response_time - 1 / 3.0, rel=1e-12)
        tail = r.run_tail_mass
        assert r.run_length_pmf.sum() + tail == pytest.approx(1.0, abs=1e-12)
        mean_from_pmf = np.arange(1, len(r.run_length_pmf) + 1) @ r.run_length_pmf
        assert mean_from_pmf == pytest.approx(r.mean_run_length, rel=1e-9)


# --------------------------------------------------------------------------------------------------
# Stability
# --------------------------------------------------------------------------------------------------


def test_stability_verdicts():
    assert not dq.stability([0.0], 1.0).stable  # boundary rho (1 - d_inf) = 1
    assert not dq.stability("constant", 1.2, scale=0.1).stable  # 1.08 > 1
    assert not dq.stability("constant", 1.5, scale=1 / 3).stable  # exactly 1: null recurrent
    assert dq.stability("constant", 1.2, scale=0.2).stable  # 0.96 < 1
    assert dq.stability("linear", 50.0, scale=10).stable  # d reaches 1
    assert dq.stability([0.0, 0.5, 1.0, 0.0], 9.0).stable  # states above 2 never reached
    assert dq.stability([0.0, 0.2], 1.2).stable  # tail ratio 0.96
    with pytest.raises(InputError, match="load: the infinite-buffer queue is unstable"):
        dq.analyze([0.0], 1.0)
    with pytest.raises(InputError, match="unstable"):
        dq.analyze("constant", 2.0, scale=0.25)
    # a finite buffer is always fine
    assert dq.analyze([0.0], 1.0, buffer=4).mean_system == pytest.approx(2.0)


def test_bad_input():
    with pytest.raises(InputError, match=r"load: must be > 0 \(got -1\)"):
        dq.analyze("linear", -1, scale=10)
    with pytest.raises(InputError, match="load: must be > 0"):
        dq.analyze("linear", 0, scale=10)
    with pytest.raises(InputError, match="buffer: must be a whole number >= 1"):
        dq.analyze("linear", 1, 0, scale=10)
    with pytest.raises(InputError, match="buffer"):
        dq.analyze("linear", 1, 2.5, scale=10)
    with pytest.raises(InputError, match=r"d\(0\) = 1"):
        dq.analyze([1.0, 0.5], 0.5)
    with pytest.raises(InputError, match="scale: required"):
        dq.analyze("linear", 1.0)
    with pytest.raises(InputError, match="service_rate"):
        dq.analyze("linear", 1.0, scale=3, service_rate=0)
    with pytest.raises(InputError, match=r"table\[1\]"):
        dq.analyze([0.0, 2.0], 0.5)


# --------------------------------------------------------------------------------------------------
# Calibration (seed 002: mean 50 at load 1)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FAMILIES))
def test_calibrate_seed002(name):
    s = dq.calibrate(name, 50, 1.0)
    r = dq.analyze(name, 1.0, scale=s)
    assert r.mean_system == pytest.approx(50, rel=1e-9)
    if name == "step":
        assert s == 100  # M/M/1/K at rho = 1: mean K/2
    if name == "constant":
        assert s == pytest.approx(1 / 51, rel=1e-10)  # M/M/1 mean r/(1-r) = 50 at r = 50/51


def test_calibrate_finite_buffer_and_errors():
    s = dq.calibrate("quadratic", 20, 1.1, buffer=100)
    assert dq.analyze("quadratic", 1.1, 100, scale=s).mean_system == pytest.approx(20, rel=1e-9)
    with pytest.raises(InputError, match="target_mean: must be < 1"):
        dq.calibrate("linear", 5, 0.5)  # M/M/1 at 0.5 has mean 1: no drops cannot go above
    with pytest.raises(InputError, match="target_mean: must be >"):
        dq.calibrate("cubic", 0.2, 1.0)  # the smallest mean is rho/(1+rho) = 0.5
    with pytest.raises(InputError, match="target_mean: must be > 0"):
        dq.calibrate("cubic", -3, 1.0)
    with pytest.raises(InputError, match="load"):
        dq.calibrate("cubic", 3, 0)
    with pytest.raises(InputError, match="target_mean: must be <"):
        dq.calibrate("linear", 60, 1.0, buffer=100)  # M/M/1/100 at rho = 1: mean 50


# --------------------------------------------------------------------------------------------------
# Burst ratio against a Monte-Carlo simulation of the same chain
# --------------------------------------------------------------------------------------------------


def _simulate_chain(d, rho, buffer, n_arrivals, rng):
    """Embedded chain at arrivals: drop with d(n), else n+1; then Geometric departures (each event
    is a departure with probability 1/(1+rho)) stopped by the next arrival or an empty system."""
    lam_share = rho / (1 + rho)
    deaths = rng.geometric(lam_share, n_arrivals) - 1  # departures before the next arrival
    u = rng.random(n_arrivals)
    dl = list(d)
    last = dl[-1]
    drops = np.empty(n_arrivals, dtype=bool)
    n = 0
    for k in range(n_arrivals):
        dn = 1.0 if (buffer is not None and n >= buffer) else (dl[n] if n < len(dl) else last)
        if u[k] < dn:
            drops[k] = True
        else:
            drops[k] = False
            n += 1
        n = max(n - int(deaths[k]), 0)
    return drops


def _loss_and_burst(drops):
    loss = drops.mean()
    starts = np.count_nonzero(drops[1:] & ~drops[:-1]) + int(drops[0])
    mean_run = drops.sum() / starts
    return loss, mean_run, mean_run * (1 - loss)


@pytest.mark.parametrize(
    ("spec", "scale", "rho", "buffer"),
    [("linear", 30.0, 1.3, None), ("cubic", 25.0, 1.1, 18), ("step", 10, 0.9, None)],
)
def test_burst_ratio_against_monte_carlo(spec, scale, rho, buffer):
    """Tolerance: 40 batch means of 10^4 arrivals; the batch standard error SE is estimated from
    the batches and the test allows 4 SE (a false alarm probability below 1e-4 for a normal
    estimate). It also checks SE < 0.03, so the test can fail."""
    exact = dq.analyze(spec, rho, buffer, scale=scale)
    d = dq.as_dropfunction(spec, scale, n_max=buffer).at(400)
    rng = np.random.default_rng(20240601)
    n_batches, per_batch = 40, 10_000
    drops = _simulate_chain(d, rho, buffer, n_batches * per_batch + 2_000, rng)[2_000:]
    batches = drops.reshape(n_batches, per_batch)
    stats = np.array([_loss_and_burst(b) for b in batches])
    mean = stats.mean(axis=0)
    se = stats.std(axis=0, ddof=1) / math.sqrt(n_batches)
    assert se[2] < 0.03
    assert abs(mean[0] - exact.loss_ratio) <= 4 * se[0]
    assert abs(mean[1] - exact.mean_run_length) <= 4 * se[1]
    assert abs(mean[2] - exact.burst_ratio) <= 4 * se[2]
    # the run-length distribution: P(run = 1) from all runs pooled
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], drops.astype(int), [0]]))))[::2]
    p1 = np.mean(runs == 1)
    se1 = math.sqrt(p1 * (1 - p1) / len(runs))
    assert abs(p1 - exact.run_length_pmf[0]) <= 5 * se1 + 0.005
