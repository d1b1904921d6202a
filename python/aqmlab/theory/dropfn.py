"""The single-server queue with a dropping function (seed 002, Theorem 1; Chydzinski, Barczyk &
Samociuk, "The single-server queue with the dropping function and infinite buffer", Math. Probl.
Eng. 2018, ID 3260428).

Model: Poisson arrivals of rate lambda, exponential service of rate mu, one server, load
rho = lambda / mu. A packet arriving when n packets are in the system (n counts the packet in
service) is dropped with probability d(n) and admitted with probability 1 - d(n). The number in
the system is a birth-death chain with birth rate lambda (1 - d(n)) and death rate mu, so

    P_n = P_0 prod_{i<n} rho (1 - d(i)),     P_0 = 1 / sum_{n>=0} prod_{i<n} rho (1 - d(i)),

which is Theorem 1's formula (1)-(2). With a finite buffer K (system capacity K, the packet in
service included) the chain lives on 0..K and an arrival that finds K packets is always dropped
(d(K) := 1). From P: mean and standard deviation of the number in the system (formula (3)); the
same for the waiting line only (max(N - 1, 0)); the loss ratio L = sum_n P_n d(n) (formula (4),
PASTA: arrivals see time averages); the output rate lambda (1 - L) = mu (1 - P_0); the mean
response time of accepted packets E[N] / (lambda (1 - L)) (formula (5), Little's law applied to the
admitted stream); and the burst ratio (see :func:`analyze`).

Infinite buffer: the chain is positive recurrent iff sum_n prod_{i<n} rho (1 - d(i)) converges. A
dropping function here is known on 0..m-1 and constant (its last value, ``tail``) beyond, so the
verdict is exact: stable if d reaches 1 somewhere (states above are never reached), else stable
iff rho (1 - d_inf) < 1; at rho (1 - d_inf) = 1 the terms are eventually constant, the sum
diverges and the chain is at best null recurrent: no stationary distribution (unstable).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.signal import lfilter

from aqmlab.errors import InputError
from aqmlab.theory._util import show
from aqmlab.theory.families import get_family, tabulate, validate_table

__all__ = [
    "DropFunction",
    "QueueResult",
    "Stability",
    "analyze",
    "as_dropfunction",
    "calibrate",
    "stability",
    "stationary_distribution",
]

#: Callables are tabulated on 0..DEFAULT_CALLABLE_N and extended by their last value.
DEFAULT_CALLABLE_N = 10_000
#: The geometric tail of an infinite buffer is kept explicitly until its relative mass < this.
TAIL_EPS = 1e-17
#: At most this many tail states are kept explicitly (the moments use closed forms regardless).
MAX_TAIL_STATES = 2_000_000


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def _positive(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a number > 0 (got {show(value)})") from None
    if not (math.isfinite(v) and v > 0):
        raise InputError(f"{name}: must be > 0 (got {show(value)})")
    return v


def _buffer(buffer: object) -> int | None:
    if buffer is None:
        return None
    if isinstance(buffer, str) and buffer.strip().lower() in ("inf", "infinite", "none"):
        return None
    try:
        v = float(buffer)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(
            f"buffer: must be a whole number >= 1 or infinite (got {show(buffer)})"
        ) from None
    if math.isinf(v) and v > 0:
        return None
    if not (math.isfinite(v) and v >= 1 and v.is_integer()):
        raise InputError(f"buffer: must be a whole number >= 1 or infinite (got {show(buffer)})")
    return int(v)


@dataclass(frozen=True)
class DropFunction:
    """A tabulated dropping function: d(n) = values[n] for n < len(values), ``tail`` beyond.

    Build one with :func:`as_dropfunction` (from a family name and scale, a table or a callable).
    """

    values: np.ndarray
    tail: float
    label: str = "table"

    def at(self, n_states: int) -> np.ndarray:
        """d(0), ..., d(n_states - 1)."""
        m = len(self.values)
        if n_states <= m:
            return self.values[:n_states].copy()
        return np.concatenate([self.values, np.full(n_states - m, self.tail)])

    def first_one(self) -> int | None:
        """Smallest n with d(n) = 1, or None."""
        idx = np.flatnonzero(self.values >= 1.0)
        if idx.size:
            return int(idx[0])
        return len(self.values) if self.tail >= 1.0 else None


def as_dropfunction(
    d: str | DropFunction | ArrayLike | Callable[[int], float],
    scale: float | None = None,
    *,
    n_max: int | None = None,
) -> DropFunction:
    """Turn a dropping-function specification into a :class:`DropFunction`.

    ``d`` may be a family name (then ``scale`` is required; see :mod:`aqmlab.theory.families`), a
    table d(0), d(1), ... (extended by its last value), a callable n -> d(n) (tabulated once on
    0..n_max, default 10000, then extended by its last value) or a DropFunction. ``n_max`` also
    caps how far a family is tabulated (used for finite buffers; families are otherwise tabulated
    until d reaches 1).
    """
    if isinstance(d, DropFunction):
        return d
    if isinstance(d, str):
        fam = get_family(d)
        if scale is None:
            raise InputError(
                f"scale: required for family '{fam.name}' ({fam.scale_meaning}); or give a target "
                "mean to calibrate it"
            )
        s = fam.check_scale(scale)
        sat = fam.saturation(s)
        if sat is None:
            return DropFunction(np.array([s]), s, f"{fam.name}(scale={s:g})")
        last = sat if n_max is None else min(sat, int(n_max))
        vals = fam.d(np.arange(last + 1, dtype=float), s)
        tail = 1.0 if last == sat else float(vals[-1])
        return DropFunction(vals, tail, f"{fam.name}(scale={s:g})")
    if callable(d):
        vals = tabulate(d, DEFAULT_CALLABLE_N if n_max is None else n_max)
        return DropFunction(vals, float(vals[-1]), "callable")
    vals = validate_table(d)
    return DropFunction(vals, float(vals[-1]), "table")


# ----------------------------------------------------------------------------------------------
# Stability
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stability:
    """Verdict on positive recurrence of the infinite-buffer chain.

    Attributes:
        stable: the chain has a stationary distribution.
        d_limit: lim d(n) (the table's tail value).
        tail_ratio: rho (1 - d_limit), the ratio of consecutive terms of the series in the tail.
        reason: one sentence saying why.
    """

    stable: bool
    d_limit: float
    tail_ratio: float
    reason: str


def stability(
    d: str | DropFunction | ArrayLike | Callable[[int], float],
    load: float,
    *,
    scale: float | None = None,
) -> Stability:
    """Positive-recurrence test of the infinite-buffer queue (see the module docstring)."""
    rho = _positive("load", load)
    df = as_dropfunction(d, scale)
    r = rho * (1.0 - df.tail)
    one = df.first_one()
    if one is not None:
        return Stability(
            True, df.tail, r, f"d reaches 1 at n = {one}: higher states are never reached"
        )
    if math.isclose(r, 1.0, rel_tol=1e-12, abs_tol=0.0):
        return Stability(
            False,
            df.tail,
            r,
            "rho*(1 - d_inf) = 1: the terms of the series are eventually constant, the series "
            "diverges (null recurrent at best)",
        )
    if r < 1.0:
        return Stability(
            True, df.tail, r, f"rho*(1 - d_inf) = {r:.6g} < 1: the series converges geometrically"
        )
    return Stability(False, df.tail, r, f"rho*(1 - d_inf) = {r:.6g} > 1: the series diverges")


# ----------------------------------------------------------------------------------------------
# Stationary solution
# ----------------------------------------------------------------------------------------------


@dataclass
class _Solution:
    pi: np.ndarray  # P_0..P_{n-1} (normalised by the full sum; truncated for an infinite tail)
    d: np.ndarray  # d(0..n-1) on the same states (d(K) = 1 for a finite buffer)
    p0: float
    mean: float
    second: float
    loss: float
    truncated_mass: float


def _solve(df: DropFunction, rho: float, buffer: int | None) -> _Solution:
    if df.at(1)[0] >= 1.0:
        raise InputError("dropping function: d(0) = 1 drops every packet; need d(0) < 1")
    log_rho = math.log(rho)
    if buffer is not None or df.first_one() is not None:
        if buffer is None:
            top = int(df.first_one())  # type: ignore[arg-type]
        else:
            one = df.first_one()
            top = buffer if one is None else min(buffer, one)
        dv = df.at(top + 1)
        dv[top] = 1.0
        with np.errstate(divide="ignore"):
            steps = log_rho + np.log1p(-dv[:-1])
        logt = np.concatenate([[0.0], np.cumsum(steps)])
        w = np.exp(logt - logt.max())
        z = w.sum()
        n = np.arange(top + 1, dtype=float)
        pi = w / z
        return _Solution(
            pi, dv, float(pi[0]), float(n @ pi), float((n * n) @ pi), float(dv @ pi), 0.0
        )
    st = stability(df, rho)
    if not st.stable:
        raise InputError(
            f"load: the infinite-buffer queue is unstable ({st.reason}), so it has no stationary "
            "mean; give a finite buffer, a lower load or a dropping function with "
            "rho*(1 - lim d) < 1"
        )
    m = len(df.values)
    r = st.tail_ratio
    dv = df.values
    steps = log_rho + np.log1p(-dv)
    logt = np.concatenate([[0.0], np.cumsum(steps)])  # t_0..t_m
    w = np.exp(logt - logt.max())
    wm = w[m]
    n = np.arange(m, dtype=float)
    s0, s1, s2 = 1.0 / (1.0 - r), r / (1.0 - r) ** 2, r * (1.0 + r) / (1.0 - r) ** 3
    z = w[:m].sum() + wm * s0
    mean = (n @ w[:m] + wm * (m * s0 + s1)) / z
    second = ((n * n) @ w[:m] + wm * (m * m * s0 + 2 * m * s1 + s2)) / z
    loss = (dv @ w[:m] + df.tail * wm * s0) / z
    k_tail = 1 if r == 0.0 else math.ceil(math.log(TAIL_EPS) / math.log(r))
    k_tail = max(1, min(k_tail, MAX_TAIL_STATES))
    tail_w = wm * np.exp(np.arange(k_tail) * math.log(r)) if r > 0 else np.array([wm])
    pi = np.concatenate([w[:m], tail_w]) / z
    dfull = np.concatenate([dv, np.full(len(tail_w), df.tail)])
    trunc = max(0.0, 1.0 - float(pi.sum()))
    return _Solution(pi, dfull, float(pi[0]), float(mean), float(second), float(loss), trunc)


def stationary_distribution(
    d: str | DropFunction | ArrayLike | Callable[[int], float],
    load: float,
    buffer: int | None = None,
    *,
    scale: float | None = None,
) -> np.ndarray:
    """Stationary probabilities P_0, P_1, ... of the number in the system (Theorem 1, (1)-(2)).

    For a finite buffer K the array has K + 1 entries. For an infinite buffer it is truncated where
    the remaining tail mass is below 1e-17 (relative), and ends where d reaches 1 if it does.
    Raises InputError if the infinite-buffer chain is unstable.
    """
    rho = _positive("load", load)
    k = _buffer(buffer)
    return _solve(as_dropfunction(d, scale, n_max=k), rho, k).pi


# ----------------------------------------------------------------------------------------------
# Loss runs
# ----------------------------------------------------------------------------------------------


def _death_right(v: np.ndarray, q: float, qpow: np.ndarray) -> np.ndarray:
    """(D v)_n where D[n, m] = (1-q) q^(n-m) for 1 <= m <= n and D[n, 0] = q^n."""
    w = v.copy()
    w[0] = 0.0
    s = lfilter([1.0], [1.0, -q], w)
    return (1.0 - q) * s + qpow * v[0]


def _death_left(x: np.ndarray, q: float, qpow: np.ndarray) -> np.ndarray:
    """(x D)_m for the same D (row vector times matrix)."""
    t = lfilter([1.0], [1.0, -q], x[::-1])[::-1]
    out = (1.0 - q) * t
    out[0] = float(x @ qpow)
    return out


def _runs(
    sol: _Solution, rho: float, max_len: int, tol: float
) -> tuple[float, float, np.ndarray, float]:
    """Mean loss-run length (exact), P(drop, next accepted), run-length pmf and its cut-off mass.

    Embedded at arrival epochs: an arrival sees state n (P_n by PASTA), is dropped with prob. d(n)
    (state stays n) or admitted (state n+1); before the next arrival the state can only go down,
    each of the n in the system leaving first with probability q = mu / (lambda + mu) per race,
    which is the kernel D above.
    """
    pi = np.concatenate([sol.pi, [0.0]])
    d = np.concatenate([sol.d, [sol.d[-1]]])
    q = 1.0 / (1.0 + rho)
    qpow = q ** np.arange(len(pi), dtype=float)
    loss = float(pi @ d)
    p_da = float((pi * d) @ _death_right(1.0 - d, q, qpow))
    if loss <= 0.0 or p_da <= 0.0:
        return math.nan, 0.0, np.zeros(0), 0.0
    mean_run = loss / p_da
    y = np.zeros_like(pi)
    y[1:] = pi[:-1] * (1.0 - d[:-1])  # admitted: n -> n + 1
    x = _death_left(y, q, qpow) * d  # first drop of a run
    start = float(x.sum())
    x /= start
    surv = [1.0]
    while surv[-1] > tol and len(surv) <= max_len:
        x = _death_left(x, q, qpow) * d
        surv.append(float(x.sum()))
    sv = np.array(surv)
    pmf = sv[:-1] - sv[1:]
    return mean_run, p_da, pmf, float(sv[-1])


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueResult:
    """All figures of the dropping-function queue. Times are in the unit of 1 / service_rate.

    Attributes:
        load: rho = lambda / mu.
        buffer: system capacity K, or None for an infinite buffer.
        service_rate, arrival_rate: mu and lambda = rho mu.
        dropfn: label of the dropping function.
        distribution: P_0, P_1, ... of the number in the system (truncated for an infinite buffer).
        mean_system, std_system: mean and standard deviation of the number in the system (the
            packet in service included; seed 002's "queue size").
        mean_queue, std_queue: the same for the waiting line only, max(N - 1, 0).
        loss_ratio: fraction of arriving packets dropped (by d and by a full buffer).
        output_rate: lambda (1 - L) = mu (1 - P_0), packets per unit time.
        utilization: 1 - P_0.
        mean_response_time: mean time in the system of an admitted packet (Little).
        mean_waiting_time: mean_response_time - 1 / mu.
        mean_run_length: mean length of runs of consecutive drops in arrival order (exact).
        burst_ratio: mean_run_length * (1 - L) (seed 002 after McGowan; 1 for independent drops);
            NaN when nothing is dropped.
        run_length_pmf: P(run length = j), j = 1, 2, ... (index 0 is j = 1), until the remaining
            mass is below 1e-12 or 100000 terms; ``run_tail_mass`` is what was cut.
        truncated_mass: probability mass of the infinite tail left out of ``distribution``.
    """

    load: float
    buffer: int | None
    service_rate: float
    arrival_rate: float
    dropfn: str
    distribution: np.ndarray = field(repr=False)
    mean_system: float
    std_system: float
    mean_queue: float
    std_queue: float
    loss_ratio: float
    output_rate: float
    utilization: float
    mean_response_time: float
    mean_waiting_time: float
    mean_run_length: float
    burst_ratio: float
    run_length_pmf: np.ndarray = field(repr=False)
    run_tail_mass: float
    truncated_mass: float

    def rows(self) -> list[tuple[str, str]]:
        """(label, formatted value) pairs for printing."""
        buf = "infinite" if self.buffer is None else str(self.buffer)
        return [
            ("dropping function", self.dropfn),
            ("load rho", f"{self.load:.6g}"),
            ("buffer (system capacity)", buf),
            ("mean number in system", f"{self.mean_system:.6g}"),
            ("std number in system", f"{self.std_system:.6g}"),
            ("mean waiting line (excl. service)", f"{self.mean_queue:.6g}"),
            ("std waiting line", f"{self.std_queue:.6g}"),
            ("loss ratio L", f"{self.loss_ratio:.6g}"),
            ("output rate lambda (1 - L)", f"{self.output_rate:.6g}"),
            ("utilization 1 - P0", f"{self.utilization:.6g}"),
            ("mean response time (accepted)", f"{self.mean_response_time:.6g}"),
            ("mean waiting time (accepted)", f"{self.mean_waiting_time:.6g}"),
            ("mean loss-run length", f"{self.mean_run_length:.6g}"),
            ("burst ratio B", f"{self.burst_ratio:.6g}"),
        ]


def analyze(
    d: str | DropFunction | ArrayLike | Callable[[int], float],
    load: float,
    buffer: int | None = None,
    *,
    scale: float | None = None,
    service_rate: float = 1.0,
    max_run_length: int = 100_000,
) -> QueueResult:
    """Solve the dropping-function queue (seed 002 Theorem 1) and return every figure.

    Args:
        d: family name (with ``scale``), table d(0), d(1), ..., callable, or DropFunction.
        load: rho = lambda / mu > 0.
        buffer: system capacity K >= 1 (the packet in service included), or None for infinite.
        scale: the family's scale parameter (see :mod:`aqmlab.theory.families`).
        service_rate: mu > 0; times are in its unit (default 1: times in mean service times).
        max_run_length: cap on the loss-run pmf length.

    Burst ratio: the mean run length is exact, L / P(arrival k dropped, arrival k+1 admitted), both
    from the chain embedded at arrival epochs (see ``_runs``); the run-length distribution follows
    by iterating the sub-stochastic drop-to-drop kernel from the state distribution at the first
    drop of a run until the remaining mass is below 1e-12.

    Raises InputError for bad input and for an unstable infinite-buffer system.
    """
    rho = _positive("load", load)
    mu = _positive("service_rate", service_rate)
    k = _buffer(buffer)
    df = as_dropfunction(d, scale, n_max=k)
    sol = _solve(df, rho, k)
    lam = rho * mu
    mean = sol.mean
    var = max(sol.second - mean * mean, 0.0)
    busy = 1.0 - sol.p0
    mean_q = mean - busy
    var_q = max(sol.second - 2 * mean + busy - mean_q * mean_q, 0.0)
    out = lam * (1.0 - sol.loss)
    resp = mean / out if out > 0 else math.inf
    mean_run, _, pmf, tail = _runs(sol, rho, max_run_length, 1e-12)
    burst = mean_run * (1.0 - sol.loss) if math.isfinite(mean_run) else math.nan
    return QueueResult(
        load=rho,
        buffer=k,
        service_rate=mu,
        arrival_rate=lam,
        dropfn=df.label,
        distribution=sol.pi,
        mean_system=mean,
        std_system=math.sqrt(var),
        mean_queue=mean_q,
        std_queue=math.sqrt(var_q),
        loss_ratio=sol.loss,
        output_rate=out,
        utilization=busy,
        mean_response_time=resp,
        mean_waiting_time=resp - 1.0 / mu,
        mean_run_length=mean_run,
        burst_ratio=burst,
        run_length_pmf=pmf,
        run_tail_mass=tail,
        truncated_mass=sol.truncated_mass,
    )


# ----------------------------------------------------------------------------------------------
# Calibration
# ----------------------------------------------------------------------------------------------


def _mean(df: DropFunction, rho: float, k: int | None) -> float:
    try:
        return _solve(df, rho, k).mean
    except InputError:
        return math.inf


def calibrate(
    family: str,
    target_mean: float,
    load: float,
    buffer: int | None = None,
    *,
    max_scale: float = 1e6,
) -> float:
    """Solve the family's scale so that the mean number in the system equals ``target_mean``.

    Seed 002 calibrated every function to a mean of 50 packets at load 1 (infinite buffer). The
    mean is monotone in the scale (larger scale -> smaller d -> longer queue; for ``constant`` the
    other way), so the root is bracketed and found with scipy.optimize.brentq (relative tolerance
    1e-12). ``step`` has an integer K: the K whose mean is closest to the target is returned
    (exact when such a K exists, e.g. K = 100 for 50 at load 1).

    Raises InputError when no scale achieves the target (the message gives the reachable range).
    """
    fam = get_family(family)
    target = _positive("target_mean", target_mean)
    rho = _positive("load", load)
    k = _buffer(buffer)

    def mean_at(s: float) -> float:
        return _mean(as_dropfunction(fam.name, s, n_max=k), rho, k)

    # the largest mean any scale can give: d = 0 below the buffer (M/M/1 or M/M/1/K)
    sup = _mean(DropFunction(np.zeros(1), 0.0, "zero"), rho, k)
    if fam.name == "constant":
        if k is None and rho >= 1.0:
            c_lo = 1.0 - (1.0 - 1e-12) / rho
            m_lo = mean_at(c_lo)
        else:
            c_lo, m_lo = 0.0, sup
        if not target < m_lo:
            raise InputError(
                f"target_mean: must be < {m_lo:.6g} for family 'constant' at load {rho:g} "
                f"(got {target:g})"
            )
        c_hi = 1.0 - 1e-12
        if not mean_at(c_hi) < target:
            raise InputError(f"target_mean: too small to reach with a constant d (got {target:g})")
        return float(brentq(lambda c: mean_at(c) - target, c_lo, c_hi, xtol=1e-15, rtol=1e-13))

    if not target < sup:
        raise InputError(
            f"target_mean: must be < {sup:.6g}, the mean without drops at load {rho:g} and buffer "
            f"{'infinite' if k is None else k} (got {target:g})"
        )
    lo = fam.scale_min if fam.scale_min_inclusive else 1e-3
    m_min = mean_at(lo)
    if not target > m_min:
        raise InputError(
            f"target_mean: must be > {m_min:.6g}, the smallest mean of family '{fam.name}' at "
            f"load {rho:g} (got {target:g})"
        )
    hi = max(lo * 2.0, 1.0)
    while mean_at(hi) < target:
        lo = hi
        hi *= 2.0
        if hi > min(max_scale, fam.scale_max):
            raise InputError(
                f"target_mean: no scale <= {min(max_scale, fam.scale_max):g} of family "
                f"'{fam.name}' gives a mean of {target:g} at load {rho:g}"
            )
    if fam.name == "step":
        a, b = math.ceil(lo), math.ceil(hi)  # mean(a) < target <= mean(b)
        while b - a > 1:
            mid = (a + b) // 2
            if mean_at(mid) < target:
                a = mid
            else:
                b = mid
        return float(a if abs(mean_at(a) - target) < abs(mean_at(b) - target) else b)
    return float(brentq(lambda s: mean_at(s) - target, lo, hi, xtol=1e-12, rtol=1e-12))
