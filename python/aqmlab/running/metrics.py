"""Metric definitions: pure functions from simulator output (numpy arrays, counts) to floats.

Every function states its definition and source in its docstring; ``docs/metrics.md`` collects them,
together with the metrics the simulator computes in Rust. Bad arguments raise
:class:`aqmlab.errors.InputError` with a message naming the argument and what is allowed. Where a
metric is undefined for the data given (no arrivals, no losses, fewer than two delays, ...), the
result is NaN, as each docstring says.

Sources:

- seed 002: Barczyk & Chydzinski, "AQM based on the queue length: A real-network study",
  PLoS ONE 2022 (loss ratio, burst ratio, impairment factors I and C).
- ITU-T G.107, the E-model (effective equipment impairment Ie,eff and delay impairment Idd).
- R. Jain, D. Chiu, W. Hawe, "A quantitative measure of fairness and discrimination for resource
  allocation in shared computer systems", DEC-TR-301, 1984 (Jain's index).
- RFC 7928 (Kuhn, Natarajan, Khademi, Ros 2016), s. 2.2 (flow startup time), s. 2.4 (loss
  synchronisation, after Hassayoun & Ros), s. 2.7 (the delay-goodput trade-off and its ellipses,
  after Winstein & Balakrishnan, "TCP ex Machina", SIGCOMM 2013).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from aqmlab.errors import InputError

__all__ = [
    "burst_ratio",
    "burst_ratio_from_counts",
    "covariance_ellipse",
    "cwnd_reductions",
    "global_impairment",
    "idd",
    "ie_eff",
    "jain_index",
    "jitter",
    "loss_ratio",
    "loss_synchronisation",
    "percentiles",
    "settling_time",
    "startup_time",
    "step_settling_time",
    "time_weighted_mean_std",
]

# ----------------------------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------------------------


def _scalar(name: str, value: object) -> float:
    """A real scalar as float, or InputError naming ``name``."""
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be a number, got a boolean ({value!r})")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if arr.ndim != 0:
        raise InputError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return float(arr)


def _finite(name: str, value: object) -> float:
    x = _scalar(name, value)
    if not math.isfinite(x):
        raise InputError(f"{name} must be a finite number, got {x!r}")
    return x


def _count(name: str, value: object) -> int:
    """A non-negative whole number (packet counter)."""
    x = _finite(name, value)
    if x < 0 or not x.is_integer():
        raise InputError(f"{name} must be a non-negative whole number (a count), got {value!r}")
    return int(x)


def _series(name: str, values: ArrayLike, *, nonnegative: bool = False) -> np.ndarray:
    """A 1-D array of finite floats (possibly empty)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a 1-D array of numbers") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must contain only finite numbers (no NaN or inf)")
    if nonnegative and arr.size and arr.min() < 0:
        raise InputError(f"{name} must contain only values >= 0, got minimum {arr.min()!r}")
    return arr


def _loss_ratio_arg(value: object) -> float:
    x = _finite("loss_ratio", value)
    if not 0.0 <= x <= 1.0:
        raise InputError(f"loss_ratio must be in [0, 1], got {x!r}")
    return x


# ----------------------------------------------------------------------------------------------
# Loss
# ----------------------------------------------------------------------------------------------


def loss_ratio(arrived: int, dropped: int) -> float:
    """Loss ratio L = dropped / arrived.

    Definition (seed 002, Section 2): the fraction of arriving packets that were dropped, by the AQM
    or by the overflowed buffer. ``arrived`` counts every packet that arrived at the queue (admitted
    or not), ``dropped`` every packet lost there, whatever the cause. ECN-marked packets are not
    drops.

    Args:
        arrived: packets that arrived, a whole number >= 0.
        dropped: packets dropped, a whole number with 0 <= dropped <= arrived.

    Returns:
        L in [0, 1]; NaN when ``arrived`` is 0 (no arrivals, loss ratio undefined).

    Raises:
        InputError: a count is negative or not whole, or ``dropped > arrived``.
    """
    n = _count("arrived", arrived)
    d = _count("dropped", dropped)
    if d > n:
        raise InputError(f"dropped must be <= arrived, got dropped={d} > arrived={n}")
    if n == 0:
        return math.nan
    return d / n


def burst_ratio_from_counts(arrived: int, dropped: int, loss_runs: int) -> float:
    """Burst ratio B from streaming counters (seed 002's definition, after McGowan).

    With A arrivals, D drops and R maximal runs of consecutive drops (in arrival order):

        L = D / A,  mean loss-run length = D / R,  B = (D / R) * (1 - L).

    B is the observed mean loss-run length divided by the mean loss-run length of independent
    (Bernoulli) losses at the same loss ratio, 1 / (1 - L). B = 1: losses look independent; B < 1:
    losses tend to be isolated; B > 1: losses cluster. Sources: seed 002, Section 2 ("the ratio of
    the average number of packets dropped in a row, divided by the theoretical number of packets
    dropped in a row ... for a purely random and independent loss"), and its reference [32], J. W.
    McGowan, "Burst ratio: a measure of bursty loss on packet-based networks", US Patent 6,931,017
    (2005).

    A "loss run" is a maximal block of consecutive dropped arrivals; two runs are separated by at
    least one admitted arrival, so R <= A - D + 1.

    Args:
        arrived: A, a whole number >= 0.
        dropped: D, a whole number with 0 <= D <= A.
        loss_runs: R, a whole number; 0 when D = 0, otherwise 1 <= R <= min(D, A - D + 1).

    Returns:
        B > 0 (at least 1 - L, as every run has length >= 1). NaN when there are no losses
        (D = 0: no loss runs to measure) or when every arrival is lost (D = A > 0: the reference
        run length 1 / (1 - L) is infinite).

    Raises:
        InputError: a count is negative or not whole, or the counts are inconsistent as above.
    """
    n = _count("arrived", arrived)
    d = _count("dropped", dropped)
    r = _count("loss_runs", loss_runs)
    if d > n:
        raise InputError(f"dropped must be <= arrived, got dropped={d} > arrived={n}")
    if d == 0:
        if r != 0:
            raise InputError(f"loss_runs must be 0 when dropped is 0, got loss_runs={r}")
        return math.nan
    if r < 1 or r > d:
        raise InputError(f"loss_runs must be in [1, dropped={d}] when there are drops, got {r}")
    if r > n - d + 1:
        raise InputError(
            f"loss_runs must be <= arrived - dropped + 1 = {n - d + 1} (runs are separated by "
            f"admitted packets), got {r}"
        )
    if d == n:
        return math.nan
    return (d / r) * (1.0 - d / n)


def burst_ratio(loss_indicator: ArrayLike) -> float:
    """Burst ratio B of a 0/1 loss sequence in arrival order (seed 002's definition).

    ``loss_indicator[i]`` is 1 if the i-th arriving packet was dropped (AQM or overflow), 0 if it
    was admitted (an ECN-marked packet counts as admitted). With A = len, D = number of ones, R =
    number of maximal runs of consecutive ones:

        B = (mean length of runs of consecutive losses) * (1 - L) = (D / R) * (1 - D / A).

    This is the observed mean loss-run length over 1 / (1 - L), the mean run length of independent
    losses at the same loss ratio (seed 002, Section 2; McGowan, US Patent 6,931,017). Equal to
    :func:`burst_ratio_from_counts` on the sequence's counts.

    Args:
        loss_indicator: 1-D array of 0/1 (or booleans), in arrival order.

    Returns:
        B > 0; NaN when there are no losses (including an empty sequence) or when every packet is
        lost.

    Raises:
        InputError: not 1-D, or a value other than 0 and 1.
    """
    arr = np.asarray(loss_indicator)
    if arr.ndim != 1:
        raise InputError(f"loss_indicator must be a 1-D array of 0/1, got shape {arr.shape}")
    if arr.dtype != np.bool_:
        try:
            values = arr.astype(float)
        except (TypeError, ValueError):
            raise InputError("loss_indicator must contain only 0 and 1") from None
        if not np.all((values == 0.0) | (values == 1.0)):
            raise InputError("loss_indicator must contain only 0 and 1")
        arr = values == 1.0
    n = int(arr.size)
    d = int(np.count_nonzero(arr))
    r = int(np.count_nonzero(arr[1:] & ~arr[:-1])) + int(n > 0 and bool(arr[0]))
    return burst_ratio_from_counts(n, d, r)


# ----------------------------------------------------------------------------------------------
# E-model impairments (ITU-T G.107)
# ----------------------------------------------------------------------------------------------


def ie_eff(loss_ratio: float, burst_ratio: float, ie: float = 0.0, bpl: float = 4.3) -> float:
    """Effective equipment impairment factor Ie,eff of the E-model (seed 002's factor "I").

        Ppl = 100 * L  (packet-loss probability in percent)
        Ie,eff = Ie + (95 - Ie) * Ppl / (Ppl / BurstR + Bpl)

    Source: ITU-T G.107 (Section 7, "Equipment impairment factor"), as used by seed 002, formula
    (6), with its defaults Ie = 0 and Bpl = 4.3 (the seed calls Bpl "R"). G.107's BurstR is the
    burst ratio B of :func:`burst_ratio`.

    Args:
        loss_ratio: L in [0, 1].
        burst_ratio: B > 0, or NaN (as :func:`burst_ratio` returns when it is undefined).
        ie: equipment impairment at zero loss, 0 <= ie <= 95 (codec dependent; 0 for G.711).
        bpl: packet-loss robustness factor Bpl > 0.

    Returns:
        Ie,eff in [Ie, 95). When L = 0 the result is Ie whatever B is (Ppl = 0); when L > 0 and B is
        NaN the result is NaN.

    Raises:
        InputError: an argument outside the ranges above.
    """
    L = _loss_ratio_arg(loss_ratio)
    B = _scalar("burst_ratio", burst_ratio)
    if not math.isnan(B) and not (math.isfinite(B) and B > 0):
        raise InputError(f"burst_ratio must be a finite number > 0 (or NaN), got {B!r}")
    ie_ = _finite("ie", ie)
    if not 0.0 <= ie_ <= 95.0:
        raise InputError(f"ie must be in [0, 95], got {ie_!r}")
    bpl_ = _finite("bpl", bpl)
    if bpl_ <= 0:
        raise InputError(f"bpl must be > 0, got {bpl_!r}")
    ppl = 100.0 * L
    if ppl == 0.0:
        return ie_
    if math.isnan(B):
        return math.nan
    return ie_ + (95.0 - ie_) * ppl / (ppl / B + bpl_)


def idd(one_way_delay_s: float) -> float:
    """Delay impairment Idd of the E-model (ITU-T G.107, Section 7, "Delay impairment factor").

    With Ta the one-way (absolute) delay in milliseconds:

        Idd = 0                                                            if Ta <= 100 ms
        Idd = 25 * ((1 + X^6)^(1/6) - 3 * (1 + (X/3)^6)^(1/6) + 2)         if Ta >  100 ms
        X   = log10(Ta / 100) / log10(2)   (= log2(Ta / 100))

    Idd is continuous at 100 ms (X = 0 gives 25 * (1 - 3 + 2) = 0). Later editions of G.107 add
    delay-sensitivity parameters whose defaults give exactly this form.

    Args:
        one_way_delay_s: Ta in seconds, finite and >= 0.

    Returns:
        Idd >= 0.

    Raises:
        InputError: negative or non-finite delay.
    """
    ta_s = _finite("one_way_delay_s", one_way_delay_s)
    if ta_s < 0:
        raise InputError(f"one_way_delay_s must be >= 0, got {ta_s!r}")
    ta_ms = 1000.0 * ta_s
    if ta_ms <= 100.0:
        return 0.0
    x = math.log2(ta_ms / 100.0)
    return 25.0 * ((1.0 + x**6) ** (1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0) ** 6) ** (1.0 / 6.0) + 2.0)


def global_impairment(
    queue_delay_s: ArrayLike,
    loss_ratio: float,
    burst_ratio: float,
    fixed_path_delay_s: float = 0.0,
    ie: float = 0.0,
    bpl: float = 4.3,
) -> float:
    """Global impairment C combining delay and loss: aqmlab's stated substitute for seed 002's C.

    Seed 002 combines the mean queue and its loss impairment I into a "global impairment factor" C,
    its formula (7), but the formula itself is lost from the seed text (only the sentence
    introducing it survives). aqmlab does NOT reproduce formula (7); it uses this substitute, built
    from the same E-model (ITU-T G.107) that gives seed 002's I:

        Ta = fixed_path_delay_s + mean queueing delay
        C  = Idd(Ta) + Ie,eff(L, B; Ie, Bpl)

    with :func:`idd` and :func:`ie_eff`. Since Idd is 0 up to Ta = 100 ms, the fixed one-way path
    delay (propagation, serialisation, codec and jitter-buffer delay: whatever the user's use case
    adds to the queue's delay) matters; with the default 0, queueing delay counts only beyond
    100 ms. Values of C are therefore not comparable with seed 002's Fig 8.

    Args:
        queue_delay_s: the mean queueing delay in seconds, or a 1-D array of per-packet
            queueing delays whose mean is used; finite, >= 0, not empty.
        loss_ratio: L in [0, 1].
        burst_ratio: B > 0 or NaN (see :func:`ie_eff`).
        fixed_path_delay_s: one-way delay added to the queueing delay, seconds, >= 0.
        ie: see :func:`ie_eff`, 0 <= ie <= 95.
        bpl: see :func:`ie_eff`, > 0.

    Returns:
        C >= 0 (NaN when L > 0 and B is NaN).

    Raises:
        InputError: an argument outside the ranges above.
    """
    if np.ndim(queue_delay_s) == 0:
        mean_q = _finite("queue_delay_s", queue_delay_s)
        if mean_q < 0:
            raise InputError(f"queue_delay_s must be >= 0, got {mean_q!r}")
    else:
        arr = _series("queue_delay_s", queue_delay_s, nonnegative=True)
        if arr.size == 0:
            raise InputError("queue_delay_s must not be empty")
        mean_q = float(arr.mean())
    fixed = _finite("fixed_path_delay_s", fixed_path_delay_s)
    if fixed < 0:
        raise InputError(f"fixed_path_delay_s must be >= 0, got {fixed!r}")
    return idd(fixed + mean_q) + ie_eff(loss_ratio, burst_ratio, ie=ie, bpl=bpl)


# ----------------------------------------------------------------------------------------------
# Time series
# ----------------------------------------------------------------------------------------------


def settling_time(
    t: ArrayLike,
    x: ArrayLike,
    band: float = 0.1,
    smoothing_s: float = 0.0,
    final_fraction: float = 0.2,
) -> float:
    """Settling time of a sampled series (e.g. the queue length) around its final mean.

    Definition (aqmlab's; the SPEC asks for band and smoothing to be parameters and stated):

    1. Final mean m: the mean of the raw samples with t >= t_f, where
       t_f = t[-1] - final_fraction * (t[-1] - t[0]) (the last ``final_fraction`` of the time span).
    2. Smoothing: s[i] = mean of the samples x[j] with t[i] - smoothing_s < t[j] <= t[i] (a
       trailing, causal moving average over ``smoothing_s`` seconds; fewer samples near the start;
       ``smoothing_s = 0`` means no smoothing, s = x). A trailing average lags: for a clean step it
       delays the settling time by up to ``(1 - band) * smoothing_s``.
    3. s[i] is inside the band if |s[i] - m| <= band * |m| (relative band; if m = 0 only s = 0 is
       inside).
    4. The settling time is t[k] for the smallest k such that s[i] is inside the band for every
       i >= k.

    The series "never settles" (NaN) unless it is inside the band at every sample from t_f on: a
    series that has not settled by the start of the window that defines its final mean has no
    settled value to report.

    Args:
        t: sample times in seconds, 1-D, strictly increasing, at least one sample.
        x: sample values, 1-D, same length as ``t``, finite.
        band: relative half-width of the band, > 0 (0.1 = +-10 % of the final mean).
        smoothing_s: width of the trailing moving average in seconds, >= 0.
        final_fraction: fraction of the time span, in (0, 1], over which the final mean is taken.

    Returns:
        The settling time (a value of ``t``), t[0] if the series is in the band throughout, or NaN
        if it never settles.

    Raises:
        InputError: bad shapes, non-increasing ``t``, or a parameter outside the ranges above.
    """
    tt = _series("t", t)
    xx = _series("x", x)
    if tt.size == 0:
        raise InputError("t must contain at least one sample")
    if xx.size != tt.size:
        raise InputError(f"x must have the same length as t ({tt.size}), got {xx.size}")
    if tt.size > 1 and not np.all(np.diff(tt) > 0):
        raise InputError("t must be strictly increasing")
    band_ = _finite("band", band)
    if band_ <= 0:
        raise InputError(f"band must be > 0 (a relative half-width, e.g. 0.1), got {band_!r}")
    w = _finite("smoothing_s", smoothing_s)
    if w < 0:
        raise InputError(f"smoothing_s must be >= 0 (seconds; 0 = no smoothing), got {w!r}")
    ff = _finite("final_fraction", final_fraction)
    if not 0.0 < ff <= 1.0:
        raise InputError(f"final_fraction must be in (0, 1], got {ff!r}")

    return _settled_at(tt, xx, band_, w, ff, 0.0)


def _settled_at(
    tt: np.ndarray, xx: np.ndarray, band: float, w: float, ff: float, tol: float
) -> float:
    """The settling time of :func:`settling_time`'s definition with the band ``band * |m| + tol``
    (arguments validated by the caller)."""
    t_f = tt[-1] - ff * (tt[-1] - tt[0])
    k_f = int(np.searchsorted(tt, t_f, side="left"))
    m = float(xx[k_f:].mean())
    if w > 0:
        csum = np.concatenate(([0.0], np.cumsum(xx)))
        left = np.searchsorted(tt, tt - w, side="right")
        idx = np.arange(tt.size)
        s = (csum[idx + 1] - csum[left]) / (idx + 1 - left)
    else:
        s = xx
    outside = np.flatnonzero(np.abs(s - m) > band * abs(m) + tol)
    if outside.size == 0:
        return float(tt[0])
    k = int(outside[-1]) + 1
    if k > k_f:
        return math.nan
    return float(tt[k])


def jitter(delays: ArrayLike) -> float:
    """Jitter: mean absolute difference of consecutive delays (SPEC, Metrics).

        J = (1 / (n - 1)) * sum_{i=1}^{n-1} |d[i] - d[i-1]|

    The delays are taken in the order given (aqmlab passes queueing delays in the order packets
    start transmission). This is the plain mean, not RFC 3550's exponentially smoothed interarrival
    jitter.

    Args:
        delays: 1-D array of delays (any time unit; the result has the same unit), finite, >= 0.

    Returns:
        J >= 0; NaN with fewer than two delays.

    Raises:
        InputError: not 1-D, non-finite or negative values.
    """
    d = _series("delays", delays, nonnegative=True)
    if d.size < 2:
        return math.nan
    return float(np.mean(np.abs(np.diff(d))))


def time_weighted_mean_std(t: ArrayLike, x: ArrayLike, t_end: float) -> tuple[float, float]:
    """Time-weighted mean and standard deviation of a piecewise-constant series.

    x[i] holds on [t[i], t[i+1]), the last value on [t[-1], t_end]. With durations dt[i] and
    T = t_end - t[0]:

        mean = sum x[i] dt[i] / T
        std  = sqrt( sum (x[i] - mean)^2 dt[i] / T )   (population standard deviation)

    This is how the queue length's mean and standard deviation are defined (SPEC, Metrics): for
    [warmup, end], pass the queue value at warm-up as the first sample with t[0] = warmup.

    Args:
        t: change times, 1-D, non-decreasing (repeated times give zero-length pieces), not empty.
        x: values, 1-D, same length as ``t``, finite.
        t_end: end of the averaging window, >= t[-1] and > t[0].

    Returns:
        (mean, std).

    Raises:
        InputError: bad shapes, decreasing ``t``, or ``t_end`` outside the range above.
    """
    tt = _series("t", t)
    xx = _series("x", x)
    if tt.size == 0:
        raise InputError("t must contain at least one sample")
    if xx.size != tt.size:
        raise InputError(f"x must have the same length as t ({tt.size}), got {xx.size}")
    if tt.size > 1 and np.any(np.diff(tt) < 0):
        raise InputError("t must be non-decreasing")
    end = _finite("t_end", t_end)
    if end < tt[-1]:
        raise InputError(f"t_end must be >= the last time t[-1] = {tt[-1]!r}, got {end!r}")
    if end <= tt[0]:
        raise InputError(f"t_end must be > the first time t[0] = {tt[0]!r}, got {end!r}")
    dt = np.diff(np.append(tt, end))
    total = end - tt[0]
    mean = float(np.sum(xx * dt) / total)
    var = float(np.sum((xx - mean) ** 2 * dt) / total)
    return mean, math.sqrt(max(var, 0.0))


# ----------------------------------------------------------------------------------------------
# Fairness and distributions
# ----------------------------------------------------------------------------------------------


def jain_index(values: ArrayLike) -> float:
    """Jain's fairness index J = (sum x)^2 / (n * sum x^2).

    Source: Jain, Chiu & Hawe, DEC-TR-301 (1984). aqmlab applies it to per-flow goodputs. J = 1 when
    all shares are equal, J = 1/n when one flow takes everything; 1/n <= J <= 1.

    Args:
        values: 1-D array of non-negative shares (e.g. per-flow goodput), finite.

    Returns:
        J; NaN for an empty array or when every share is 0.

    Raises:
        InputError: not 1-D, non-finite or negative values.
    """
    v = _series("values", values, nonnegative=True)
    sq = float(np.sum(v * v))
    if v.size == 0 or sq == 0.0:
        return math.nan
    return float(np.sum(v)) ** 2 / (v.size * sq)


def percentiles(samples: ArrayLike, qs: Iterable[float] = (50, 90, 99)) -> dict[float, float]:
    """Percentiles of a sample, as ``{q: value}``.

    Uses numpy's default (linear interpolation between order statistics, "type 7" of Hyndman & Fan
    1996): for sorted samples y[0..n-1] the q-th percentile is at position h = (n - 1) q / 100,
    y[floor h] + (h - floor h) (y[floor h + 1] - y[floor h]).

    Args:
        samples: 1-D array of finite numbers (e.g. per-packet delays).
        qs: percentiles to compute, each in [0, 100].

    Returns:
        A dict mapping each q (as float) to its percentile; NaN values for an empty sample.

    Raises:
        InputError: bad samples, or a q outside [0, 100].
    """
    s = _series("samples", samples)
    try:
        q_arr = np.atleast_1d(np.asarray(list(qs) if not np.isscalar(qs) else [qs], dtype=float))
    except (TypeError, ValueError):
        raise InputError("qs must be a sequence of numbers in [0, 100]") from None
    if q_arr.ndim != 1 or not np.all(np.isfinite(q_arr)) or np.any((q_arr < 0) | (q_arr > 100)):
        raise InputError(f"qs must be numbers in [0, 100], got {q_arr.tolist()!r}")
    if s.size == 0:
        return {float(q): math.nan for q in q_arr}
    vals = np.percentile(s, q_arr)
    return {float(q): float(v) for q, v in zip(q_arr, vals, strict=True)}


# ---------------------------------------------------------------------------------------------
# Finite transfers and fairness per flow group (docs/metrics.md, "Flow completion times").

#: Size bins of the FCT summary: (label, lower bound inclusive, upper bound exclusive), bytes.
SIZE_BINS = (
    ("<10kB", 0.0, 1e4),
    ("10kB-100kB", 1e4, 1e5),
    ("100kB-1MB", 1e5, 1e6),
    (">=1MB", 1e6, math.inf),
)


def ideal_fct(size_bytes: float, base_rtt_s: float, path_rate_bps: float) -> float:
    """The completion time of a transfer alone on its path with no window limit: one base
    round-trip time plus the payload at the slowest link's rate (the reference of FCT slowdowns,
    Alizadeh et al., pFabric, SIGCOMM 2013, s. 5)."""
    size = _scalar("size_bytes", size_bytes)
    rtt = _scalar("base_rtt_s", base_rtt_s)
    rate = _scalar("path_rate_bps", path_rate_bps)
    if size <= 0 or rtt < 0 or rate <= 0:
        raise InputError("ideal_fct: size > 0, base RTT >= 0 and rate > 0 required")
    return rtt + size * 8 / rate


def _fct_stats(fct: list[float], slow: list[float]) -> dict[str, float | int]:
    if not fct:
        return {"count": 0}
    f, s = np.asarray(fct), np.asarray(slow)
    return {
        "count": len(fct),
        "mean_s": float(f.mean()),
        "median_s": float(np.median(f)),
        "p99_s": float(np.percentile(f, 99)),
        "slowdown_mean": float(s.mean()),
        "slowdown_median": float(np.median(s)),
        "slowdown_p99": float(np.percentile(s, 99)),
    }


def fct_summary(flows: list[dict]) -> dict:
    """FCT of the finite TCP flows that finished: mean, median, p99, slowdown (FCT / ideal FCT)
    overall, by size bin (:data:`SIZE_BINS`) and by flow group; ``unfinished`` counts those still
    running at the end (not in the statistics, which therefore favour short flows if many
    remain)."""
    finite = [f for f in flows if f.get("size_bytes") is not None]
    done = [f for f in finite if f.get("completion_s") is not None]
    out: dict = {"finite_flows": len(finite), "unfinished": len(finite) - len(done)}
    rows = []
    for f in done:
        ideal = ideal_fct(f["size_bytes"], f["base_rtt_s"], f["path_rate_bps"])
        rows.append((f["size_bytes"], f["completion_s"], f["completion_s"] / ideal))
    out["all"] = _fct_stats([r[1] for r in rows], [r[2] for r in rows])
    out["by_size"] = {
        label: _fct_stats(
            [r[1] for r in rows if lo <= r[0] < hi], [r[2] for r in rows if lo <= r[0] < hi]
        )
        for label, lo, hi in SIZE_BINS
    }
    groups: dict[str, list[tuple]] = {}
    for f, r in zip(done, rows, strict=True):
        groups.setdefault(flow_group(f["name"]), []).append(r)
    out["groups"] = {g: _fct_stats([r[1] for r in v], [r[2] for r in v]) for g, v in groups.items()}
    return out


def flow_group(name: str) -> str:
    """The group of a flow named ``group.index`` (the names the scenario builder gives)."""
    return name.rsplit(".", 1)[0]


def fairness(flows: list[dict]) -> dict:
    """Jain's index of goodput per flow group, and ``jain_goodput`` over the bulk TCP flows only
    (no size, not open-loop): finite transfers and open-loop sources are never folded into one
    index with bulk flows (their goodputs measure how much they had to send, not their share)."""
    groups: dict[str, list[float]] = {}
    for f in flows:
        groups.setdefault(flow_group(f["name"]), []).append(f["goodput_bps"])
    bulk = [
        f["goodput_bps"] for f in flows if f.get("size_bytes") is None and f.get("udp_sent") is None
    ]
    return {
        "jain_goodput": jain_index(np.asarray(bulk, dtype=float)) if bulk else math.nan,
        "groups": {g: jain_index(np.asarray(v, dtype=float)) for g, v in groups.items()},
    }


def flow_kind(f: dict) -> str:
    """``probe`` (latency probe), ``open-loop`` (poisson, cbr, onoff), ``finite`` (a TCP
    transfer of a given size: tcp with ``size``, web objects) or ``bulk`` (TCP, never ends)."""
    if f.get("probe"):
        return "probe"
    if f.get("udp_sent") is not None:
        return "open-loop"
    return "finite" if f.get("size_bytes") is not None else "bulk"


def group_table(summary: dict) -> list[dict]:
    """One row per flow group, in the order of the flows: its kind, flow count, total goodput,
    Jain's index (bulk groups only: a finite transfer's goodput measures its size, and an
    open-loop flow's its offered rate, not a share), and for finite groups the completion-time
    statistics of :func:`fct_summary` (``finished``, ``unfinished``, FCT mean/median/p99,
    slowdown)."""
    rows: dict[str, dict] = {}
    for f in summary["flows"]:
        g = flow_group(f["name"])
        r = rows.setdefault(g, {"group": g, "kind": flow_kind(f), "flows": 0, "goodput_bps": 0.0})
        r["flows"] += 1
        r["goodput_bps"] += f["goodput_bps"] or 0.0
        if f.get("size_bytes") is not None:
            r["finished"] = r.get("finished", 0) + (f.get("completion_s") is not None)
    jains = summary.get("fairness", {}).get("groups", {})
    fct = summary.get("fct", {}).get("groups", {})
    for g, r in rows.items():
        r["jain"] = jains.get(g) if r["kind"] == "bulk" else None
        if r["kind"] == "finite":
            r["unfinished"] = r["flows"] - r["finished"]
            r.update({k: v for k, v in fct.get(g, {}).items() if k != "count"})
    return list(rows.values())


# ----------------------------------------------------------------------------------------------
# RFC 7928 metrics (issue 24): loss synchronisation, flow startup, the delay-goodput ellipse
# ----------------------------------------------------------------------------------------------


def cwnd_reductions(t: ArrayLike, cwnd: ArrayLike) -> np.ndarray:
    """The times at which a sender's congestion window went down: ``t[i]`` for every sample with
    ``cwnd[i] < cwnd[i - 1]``. A window cut of a loss-based sender (loss or ECN echo) is the
    sender's reaction to a congestion signal; several cuts within one sampling interval count
    once (the resolution is the sample interval).

    Args:
        t: sample times in seconds, 1-D, non-decreasing.
        cwnd: window samples, same length as ``t``, finite and >= 0.

    Returns:
        The times of the reductions, in order (empty if the window never went down).
    """
    tt = _series("t", t)
    w = _series("cwnd", cwnd, nonnegative=True)
    if w.size != tt.size:
        raise InputError(f"cwnd must have the same length as t ({tt.size}), got {w.size}")
    if tt.size > 1 and np.any(np.diff(tt) < 0):
        raise InputError("t must be non-decreasing")
    if tt.size < 2:
        return np.empty(0)
    return tt[1:][np.diff(w) < 0]


def loss_synchronisation(events: list[ArrayLike], gap_s: float) -> dict[str, float | int]:
    """Loss synchronisation among flows (RFC 7928 s. 2.4), as the *synchronisation rate* of
    Hassayoun & Ros (the guideline's reference for the metric: S. Hassayoun, D. Ros, "Loss
    synchronization and router buffer sizing with high-speed versions of TCP", IEEE INFOCOM
    Workshops 2008).

    Definition (stated here as aqmlab computes it):

    1. ``events[i]`` are the times flow ``i`` saw a congestion signal (a drop, or as
       :func:`cwnd_reductions` observes it, a window cut). ``N = len(events)`` counts every flow,
       also those that saw none.
    2. All the times of all the flows, pooled and sorted, are split into **congestion events**:
       an event starts at the first time not yet in an event and takes every time less than
       ``gap_s`` after that start (``gap_s`` is typically one round-trip time: the signals a
       queue sends in one overflow episode reach the senders within about one RTT). Events are
       anchored at their start rather than chained (a time within ``gap_s`` of the previous one
       but not of the event's start opens a new event): with chaining, flows signalled often but
       independently (as under a flow-queue scheduler) would merge into one event holding every
       flow and look globally synchronised.
    3. In event ``k``, ``n_k`` is the number of distinct flows with at least one signal in it, and
       ``r_k = n_k / N``.
    4. The synchronisation rate is ``R = (1/K) sum_k r_k`` over the ``K`` events: the mean
       fraction of the flows hit together. ``R = 1``: every event hits every flow (global
       synchronisation); ``R = 1/N``: each event hits one flow (fully desynchronised).

    Returns:
        ``{"rate": R, "events": K, "flows": N, "max_fraction": max_k r_k}``; ``rate`` and
        ``max_fraction`` are NaN when there is no event or no flow.

    Raises:
        InputError: ``gap_s`` not a positive finite number, or a flow's times not finite.
    """
    gap = _finite("gap_s", gap_s)
    if gap <= 0:
        raise InputError(f"gap_s must be > 0 (seconds, e.g. one RTT), got {gap!r}")
    n = len(events)
    owner, times = [], []
    for i, e in enumerate(events):
        x = _series(f"events[{i}]", e)
        times.append(x)
        owner.append(np.full(x.size, i))
    if n == 0 or not any(x.size for x in times):
        return {"rate": math.nan, "events": 0, "flows": n, "max_fraction": math.nan}
    t_all = np.concatenate(times)
    who = np.concatenate(owner)
    order = np.argsort(t_all, kind="stable")
    t_all, who = t_all[order], who[order]
    bounds = [0]
    while True:  # the next event starts at the first time >= its start + gap
        nxt = int(np.searchsorted(t_all, t_all[bounds[-1]] + gap, side="left"))
        if nxt >= t_all.size:
            break
        bounds.append(nxt)
    bounds.append(t_all.size)
    fractions = [len(set(who[a:b].tolist())) / n for a, b in itertools.pairwise(bounds)]
    return {
        "rate": float(np.mean(fractions)),
        "events": len(fractions),
        "flows": n,
        "max_fraction": float(max(fractions)),
    }


def startup_time(t: ArrayLike, delivered: ArrayLike, start_s: float) -> float:
    """Flow startup time (RFC 7928 s. 2.2: the time from a flow's start until data begins to
    arrive): the first sample time at which the flow's delivered-bytes counter is above zero,
    minus ``start_s``. The resolution is the series' sample interval (the time is that of the
    first sample *after* the first delivery).

    Returns:
        The startup time in seconds, NaN if nothing was delivered by the last sample.
    """
    tt = _series("t", t)
    d = _series("delivered", delivered, nonnegative=True)
    if d.size != tt.size:
        raise InputError(f"delivered must have the same length as t ({tt.size}), got {d.size}")
    s0 = _finite("start_s", start_s)
    got = np.flatnonzero(d > 0)
    if got.size == 0:
        return math.nan
    return max(0.0, float(tt[got[0]]) - s0)


def covariance_ellipse(x: ArrayLike, y: ArrayLike, nstd: float = 1.0) -> dict[str, float]:
    """The covariance ellipse of points (x_i, y_i), as the delay-goodput plots of RFC 7928 s. 2.7
    draw one per AQM (after Winstein & Balakrishnan, SIGCOMM 2013, Fig. 4, and the ns-3
    aqm-eval-suite): centre at the means; semi-axes ``nstd * sqrt(lambda)`` for the eigenvalues
    ``lambda`` of the sample covariance matrix (ddof = 1), the major axis along the eigenvector of
    the larger one, at ``angle_deg`` from the x axis (counter-clockwise).

    Returns:
        ``{"cx", "cy", "a", "b", "angle_deg"}`` (``a >= b``); a, b and the angle are NaN with
        fewer than two points.
    """
    xs = _series("x", x)
    ys = _series("y", y)
    if xs.size != ys.size or xs.size == 0:
        raise InputError(f"x and y must be non-empty and of equal length ({xs.size}, {ys.size})")
    k = _finite("nstd", nstd)
    if k <= 0:
        raise InputError(f"nstd must be > 0, got {k!r}")
    cx, cy = float(xs.mean()), float(ys.mean())
    if xs.size < 2:
        return {"cx": cx, "cy": cy, "a": math.nan, "b": math.nan, "angle_deg": math.nan}
    cov = np.cov(np.vstack([xs, ys]), ddof=1)
    vals, vecs = np.linalg.eigh(cov)  # ascending eigenvalues
    vals = np.clip(vals, 0.0, None)
    major = vecs[:, 1]
    angle = math.degrees(math.atan2(major[1], major[0]))
    if angle < -90:
        angle += 180
    elif angle > 90:
        angle -= 180
    return {
        "cx": cx,
        "cy": cy,
        "a": k * math.sqrt(vals[1]),
        "b": k * math.sqrt(vals[0]),
        "angle_deg": angle,
    }


def step_settling_time(
    t: ArrayLike,
    x: ArrayLike,
    band: float = 0.1,
    abs_tol: float = 0.0,
    smoothing_s: float = 0.0,
    final_fraction: float = 0.2,
) -> float:
    """Settling time after a step (RFC 7928 s. 8.2.6: how fast the queue adapts when the capacity
    changes), with an absolute tolerance: :func:`settling_time`'s definition with the band
    ``|s - m| <= band * |m| + abs_tol`` instead of ``band * |m|``.

    The absolute part is what lets a queue that never holds still settle: under an AQM, a few
    TCP flows keep a sawtooth around a small mean, which a purely relative band (say +-10% of
    5 packets) never contains; ``abs_tol`` (in the unit of ``x``) says how close is close
    enough. With ``abs_tol = 0`` this is :func:`settling_time`.

    ``t`` is measured from the step (``t[0]`` the first sample after it); returns the settling
    time as a value of ``t``, ``t[0]`` if inside throughout, NaN if not inside at every sample of
    the last ``final_fraction`` of the span.
    """
    tol = _finite("abs_tol", abs_tol)
    if tol < 0:
        raise InputError(f"abs_tol must be >= 0 (in the unit of x), got {tol!r}")
    if tol == 0:
        return settling_time(t, x, band, smoothing_s, final_fraction)
    tt = _series("t", t)
    xx = _series("x", x)
    if tt.size == 0 or xx.size != tt.size:
        raise InputError(f"t and x must be non-empty and of equal length ({tt.size}, {xx.size})")
    if tt.size > 1 and not np.all(np.diff(tt) > 0):
        raise InputError("t must be strictly increasing")
    band_ = _finite("band", band)
    w = _finite("smoothing_s", smoothing_s)
    ff = _finite("final_fraction", final_fraction)
    if band_ < 0 or w < 0 or not 0.0 < ff <= 1.0:
        raise InputError("band >= 0, smoothing_s >= 0 and final_fraction in (0, 1] required")
    return _settled_at(tt, xx, band_, w, ff, tol)
