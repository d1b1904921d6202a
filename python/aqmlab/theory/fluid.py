"""TCP/AQM fluid model of Misra, Gong & Towsley (SIGCOMM 2000), in the simplified form of Hollot,
Misra, Towsley & Gong (INFOCOM 2001; IEEE TAC 47(6), 2002) that seed 001 uses (its Eqs 4-5):

    dW/dt = 1/R(t) - W(t) W(t - R(t)) p(t - R(t)) / (2 R(t - R(t)))
    dq/dt = N W(t) / R(t) - C                    (q kept in [0, B])
    R(t)  = q(t) / C + Tp

W: congestion window (packets) of each of N identical long-lived TCP Reno flows, q: bottleneck
queue (packets), C: capacity (packets/s), Tp: propagation part of the round trip (s), B: buffer
(packets), p: drop probability seen by the senders. p is closed by a fluid AQM law (:class:`Red`,
:class:`Pi`, :class:`Rem`, :class:`Laq`, :class:`DropFn`). When q = B and the flows send faster
than C, the excess is dropped too (overflow); the senders see 1 - (1 - p_aqm)(1 - p_overflow).
Drops are not subtracted from the queue's inflow (the model as published).

Equilibrium (seed 001 Eq 7): W0 = R0 C / N, p0 = 2 / W0^2, R0 = q0 / C + Tp, q0 from the AQM law.

Linearisation (Hollot et al. 2001/2002; seed 001 Eqs 8-13, with its K11 = -2N/(R^2 C),
K12 = -R C^2/(2 N^2), K21 = N/R, K22 = -1/R): from delta-p to delta-q the plant is

    P(s) = (C^2 / (2N)) e^{-s R0} / ((s + 2N/(R0^2 C)) (s + 1/R0)),

and the AQM law linearises to C(s) = num(s)/den(s) (from delta-q to delta-p). The characteristic
equation den_P den + (C^2/(2N)) num e^{-s R0} = 0 becomes a polynomial once e^{-s R0} is
approximated (``delay=``): Pade (1,1) or (2,2), Taylor of order 1 or 2, or ``paper``: seed 001's
printed second-order approximation 1 - sR + s^2 R/2 (its Eq 17; the s^2 term should read
s^2 R^2/2, but it is what produces the paper's Table 3). Gain and phase margins are computed on
the exact delay, e^{-j w R0}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from aqmlab.errors import InputError
from aqmlab.theory._util import show
from aqmlab.theory.families import get_family, validate_table
from aqmlab.theory.routh import RouthResult, routh

__all__ = [
    "DELAY_APPROXIMATIONS",
    "DropFn",
    "Equilibrium",
    "FluidTrace",
    "Laq",
    "Linearization",
    "Margins",
    "Network",
    "Pi",
    "PiDesign",
    "Red",
    "Rem",
    "characteristic_polynomial",
    "controller_tf",
    "delay_approximation",
    "equilibrium",
    "linearize",
    "margins",
    "pi_design",
    "simulate",
]


def _num(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a number (got {show(value)})") from None
    if math.isnan(v):
        raise InputError(f"{name}: must be a number (got {show(value)})")
    return v


def _pos(name: str, value: object, *, allow_inf: bool = False) -> float:
    v = _num(name, value)
    if not (v > 0 and (allow_inf or math.isfinite(v))):
        raise InputError(f"{name}: must be > 0 (got {show(value)})")
    return v


def _nonneg(name: str, value: object) -> float:
    v = _num(name, value)
    if not (v >= 0 and math.isfinite(v)):
        raise InputError(f"{name}: must be >= 0 (got {show(value)})")
    return v


def _prob(name: str, value: object) -> float:
    v = _num(name, value)
    if not 0.0 <= v <= 1.0:
        raise InputError(f"{name}: must be in [0, 1] (got {show(value)})")
    return v


# ----------------------------------------------------------------------------------------------
# Network and AQM laws
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Network:
    """A single bottleneck shared by N identical TCP flows.

    Attributes:
        n_flows: N > 0 (real numbers allowed: the fluid model does not need an integer).
        capacity: C > 0, packets per second.
        rtt: Tp > 0, the propagation part of the round-trip time, seconds (R = q/C + Tp).
        buffer: B > 0, packets (default infinite).
        w_max: largest window, packets (default infinite).
    """

    n_flows: float
    capacity: float
    rtt: float
    buffer: float = math.inf
    w_max: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_flows", _pos("n_flows", self.n_flows))
        object.__setattr__(self, "capacity", _pos("capacity", self.capacity))
        object.__setattr__(self, "rtt", _pos("rtt", self.rtt))
        object.__setattr__(self, "buffer", _pos("buffer", self.buffer, allow_inf=True))
        object.__setattr__(self, "w_max", _pos("w_max", self.w_max, allow_inf=True))

    def rtt_at(self, q: float) -> float:
        """R = q / C + Tp."""
        return q / self.capacity + self.rtt

    def p_required(self, q: float) -> float:
        """Drop probability that holds the flows at queue q: 2 / W0^2 with W0 = R(q) C / N."""
        w0 = self.rtt_at(q) * self.capacity / self.n_flows
        return 2.0 / (w0 * w0)


@dataclass(frozen=True)
class Red:
    """RED (Floyd & Jacobson 1993) as a fluid law (Hollot et al. 2001).

    The average x follows dx/dt = K (q - x) with K = -ln(1 - w_q) C (one EWMA step per packet,
    packets arriving at about C); p = max_p (x - min_th)/(max_th - min_th) between the thresholds,
    0 below; above max_th, 1, or with ``gentle`` (ns-2's default, on here too) linear from max_p to
    1 at 2 max_th. Defaults: seed 001's ARED thresholds 100 and 300 packets, max_p 0.1, w_q 0.002.
    """

    min_th: float = 100.0
    max_th: float = 300.0
    max_p: float = 0.1
    w_q: float = 0.002
    gentle: bool = True
    name: str = field(default="red", init=False)

    def __post_init__(self) -> None:
        lo = _nonneg("min_th", self.min_th)
        hi = _pos("max_th", self.max_th)
        if not hi > lo:
            raise InputError(f"max_th: must be > min_th = {lo:g} (got {hi:g})")
        _prob("max_p", self.max_p)
        w = _num("w_q", self.w_q)
        if not 0.0 < w < 1.0:
            raise InputError(f"w_q: must be in (0, 1) (got {show(self.w_q)})")

    def p_of(self, x: float) -> float:
        """RED's drop probability at average queue x."""
        if x < self.min_th:
            return 0.0
        if x < self.max_th:
            return self.max_p * (x - self.min_th) / (self.max_th - self.min_th)
        if self.gentle and x < 2 * self.max_th:
            return self.max_p + (1 - self.max_p) * (x - self.max_th) / self.max_th
        return 1.0

    def slope(self, x: float) -> float:
        """dp/dx at x (0 where p is flat)."""
        if self.min_th <= x < self.max_th:
            return self.max_p / (self.max_th - self.min_th)
        if self.gentle and self.max_th <= x < 2 * self.max_th:
            return (1 - self.max_p) / self.max_th
        return 0.0

    def k(self, capacity: float) -> float:
        """EWMA pole K = -ln(1 - w_q) C, 1/s."""
        return -math.log1p(-self.w_q) * capacity


@dataclass(frozen=True)
class Pi:
    """PI controller (Hollot et al. 2002), discretised at ``sampling_hz`` as in ns-2:

        p_k = p_{k-1} + a (q_k - q_ref) - b (q_{k-1} - q_ref),   clipped to [0, 1].

    Its continuous equivalent (Tustin) is C(s) = K_PI (s/z + 1)/s with K_PI = (a - b) f_s and
    K_PI / z = (a + b)/2. Defaults: seed 001's a, b, sampling frequency 170 Hz and q_ref 200.
    """

    a: float = 1.822e-5
    b: float = 1.816e-5
    q_ref: float = 200.0
    sampling_hz: float = 170.0
    name: str = field(default="pi", init=False)

    def __post_init__(self) -> None:
        a = _pos("a", self.a)
        b = _nonneg("b", self.b)
        if not a > b:
            raise InputError(
                f"b: must be < a = {a:g} so that the integral gain is positive (got {b:g})"
            )
        _nonneg("q_ref", self.q_ref)
        _pos("sampling_hz", self.sampling_hz)

    @property
    def k_pi(self) -> float:
        """Integral gain K_PI = (a - b) f_s."""
        return (self.a - self.b) * self.sampling_hz

    @property
    def z(self) -> float:
        """Zero of the PI controller, rad/s."""
        return self.k_pi / (0.5 * (self.a + self.b))


@dataclass(frozen=True)
class Rem:
    """REM (Athuraliya, Li, Low & Yin 2001), updated every ``interval`` seconds:

        price <- max(0, price + gamma (alpha (q - q_ref) + x T - C T)),   p = 1 - phi^(-price),

    with x T the packets that arrived during the interval T. Defaults are ns-2's (gamma 0.001,
    alpha ("inw") 1, phi 1.001, target ("pbo") 20 packets, update time 2 ms). Linearised, with
    x - C = dq/dt: C(s) = gamma ln(phi) (1 - p0) (s + alpha/T) / s.
    """

    gamma: float = 0.001
    alpha: float = 1.0
    phi: float = 1.001
    q_ref: float = 20.0
    interval: float = 0.002
    name: str = field(default="rem", init=False)

    def __post_init__(self) -> None:
        _pos("gamma", self.gamma)
        _pos("alpha", self.alpha)
        if not _num("phi", self.phi) > 1.0:
            raise InputError(f"phi: must be > 1 (got {show(self.phi)})")
        _nonneg("q_ref", self.q_ref)
        _pos("interval", self.interval)


@dataclass(frozen=True)
class Laq:
    """LaQ (seed 001).

    ``form="paper"``: the fluid law of seed 001 Eq 6 as printed, dp/dt = p + gamma (q - Q_ref)
    (p kept in [0, 1]); linearised (Eq 13) to C(s) = gamma / (s - 1). Its equilibrium is
    q0 = Q_ref - p0 / gamma.

    ``form="algorithm"``: the law of seed 001's Figure 1, sampled at ``sampling_hz``: the loss ratio
    l over the last M periods (drops / arrivals, arrivals counted once), its EWMA
    lbar <- w_m lbar + (1 - w_m) l, and p = lbar + gamma (q - Q_ref) clipped to [0, 1]. At
    equilibrium lbar = p, so q0 = Q_ref. Linearised with the window-and-EWMA filter taken as a
    first-order lag of time constant tau = M T / 2 + T w_m / (1 - w_m) (T = 1/sampling_hz):
    C(s) = gamma (s + 1/tau) / s.

    gamma is per packet of queue error (seed 001: 0.05); defaults M = 10, w_m = 0.1, 170 Hz,
    Q_ref = 200 packets.
    """

    gamma: float = 0.05
    q_ref: float = 200.0
    form: str = "paper"
    w_m: float = 0.1
    m: int = 10
    sampling_hz: float = 170.0
    name: str = field(default="laq", init=False)

    def __post_init__(self) -> None:
        _pos("gamma", self.gamma)
        _nonneg("q_ref", self.q_ref)
        if self.form not in ("paper", "algorithm"):
            raise InputError(f"form: must be 'paper' or 'algorithm' (got {self.form!r})")
        w = _num("w_m", self.w_m)
        if not 0.0 <= w < 1.0:
            raise InputError(f"w_m: must be in [0, 1) (got {show(self.w_m)})")
        m = _num("m", self.m)
        if not (m >= 1 and float(m).is_integer()):
            raise InputError(f"m: must be a whole number >= 1 (got {show(self.m)})")
        _pos("sampling_hz", self.sampling_hz)

    @property
    def tau(self) -> float:
        """Time constant of the loss-ratio estimate (algorithm form), seconds."""
        t = 1.0 / self.sampling_hz
        return self.m * t / 2.0 + t * self.w_m / (1.0 - self.w_m)


@dataclass(frozen=True)
class DropFn:
    """A dropping function of the instantaneous queue, p = d(q): a family and scale from
    :mod:`aqmlab.theory.families` (evaluated at real q), or a table d(0), d(1), ... interpolated
    linearly and extended by its last value. Linearised: C(s) = d'(q0) (a static gain; central
    difference)."""

    family: str | None = "linear"
    scale: float | None = None
    table: tuple[float, ...] | None = None
    name: str = field(default="dropfn", init=False)

    def __post_init__(self) -> None:
        if self.table is not None:
            object.__setattr__(self, "table", tuple(validate_table(self.table).tolist()))
        else:
            fam = get_family(str(self.family))
            if self.scale is None:
                raise InputError(f"scale: required for family '{fam.name}' ({fam.scale_meaning})")
            fam.check_scale(self.scale)

    def p_of(self, q: float) -> float:
        """d(q) at a real queue length q >= 0."""
        q = max(q, 0.0)
        if self.table is not None:
            t = self.table
            i = int(q)
            if i + 1 >= len(t):
                return t[-1]
            return t[i] + (q - i) * (t[i + 1] - t[i])
        fam = get_family(str(self.family))
        return min(max(float(fam._fn(np.float64(q), float(self.scale))), 0.0), 1.0)  # type: ignore[arg-type]

    def slope(self, q: float) -> float:
        """d'(q) by a central difference (one-sided at 0)."""
        h = 1e-4 * max(1.0, q) if self.table is None else 1e-3
        lo = max(q - h, 0.0)
        return (self.p_of(q + h) - self.p_of(lo)) / (q + h - lo)


Law = Red | Pi | Rem | Laq | DropFn


# ----------------------------------------------------------------------------------------------
# Equilibrium
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Equilibrium:
    """Operating point (seed 001 Eq 7): q0, W0 = R0 C / N, p0 = 2 / W0^2, R0 = q0 / C + Tp.

    ``feasible`` is False when p0 > 1 (W0 < sqrt 2: too many flows for the pipe); ``note`` says
    when the point is on a boundary (empty queue, full buffer).
    """

    q0: float
    w0: float
    p0: float
    r0: float
    feasible: bool
    note: str = ""


def equilibrium(net: Network, law: Law) -> Equilibrium:
    """The operating point of the fluid model closed by ``law`` (see :class:`Equilibrium`)."""
    B = net.buffer
    note = ""
    if isinstance(law, (Pi, Rem)) or (isinstance(law, Laq) and law.form == "algorithm"):
        q0 = law.q_ref
        if q0 >= B:
            raise InputError(f"q_ref: must be < buffer = {B:g} (got {q0:g})")
        note = "integral action: q0 = q_ref"
    elif isinstance(law, Laq):
        g, qr = law.gamma, law.q_ref

        def h(q: float) -> float:
            return q - qr + net.p_required(q) / g

        top = min(qr, B)
        if h(0.0) >= 0.0:
            q0, note = 0.0, "q0 = Q_ref - p0/gamma would be negative: empty queue"
        elif h(top) <= 0.0:
            q0, note = top, "equilibrium at the buffer limit"
        else:
            q0 = float(brentq(h, 0.0, top, xtol=1e-12))
            note = "q0 = Q_ref - p0/gamma (seed 001 Eq 6 at rest)"
    else:
        f = law.p_of

        def h(q: float) -> float:
            return f(q) - net.p_required(q)

        top = B if math.isfinite(B) else 1e9
        if h(0.0) >= 0.0:
            p = f(0.0)
            w0 = math.sqrt(2.0 / p)
            return Equilibrium(
                0.0,
                w0,
                p,
                net.rtt,
                p <= 1.0,
                "the AQM drops enough at an empty queue: the link is not saturated",
            )
        if h(top) < 0.0:
            q0, note = top, "the AQM alone cannot hold the flows: queue at the buffer (overflow)"
        else:
            q0 = float(brentq(h, 0.0, top, xtol=1e-10))
            eps = 1e-6 * max(1.0, q0)
            if f(q0 + eps) - f(max(q0 - eps, 0.0)) > 1e-4:
                note = "p jumps at q0 (a discontinuity of the law): the linearisation is not valid"
    r0 = net.rtt_at(q0)
    w0 = r0 * net.capacity / net.n_flows
    p0 = 2.0 / (w0 * w0)
    if p0 > 1.0:
        note = (note + "; " if note else "") + "p0 > 1: no equilibrium with W0 >= sqrt(2)"
    return Equilibrium(q0, w0, p0, r0, p0 <= 1.0, note)


# ----------------------------------------------------------------------------------------------
# Linearisation
# ----------------------------------------------------------------------------------------------

DELAY_APPROXIMATIONS = ("pade1", "pade2", "taylor1", "taylor2", "paper", "none")


def delay_approximation(rtt: float, method: str = "pade1") -> tuple[np.ndarray, np.ndarray]:
    """Rational approximation num(s)/den(s) of e^{-s R} (coefficients, highest power first).

    ``pade1``: (1 - sR/2)/(1 + sR/2); ``pade2``: (1 - sR/2 + s^2R^2/12)/(1 + sR/2 + s^2R^2/12);
    ``taylor1``: 1 - sR; ``taylor2``: 1 - sR + s^2R^2/2; ``paper``: 1 - sR + s^2R/2 (seed 001's
    printed approximation, kept to reproduce its Eq 17 and Table 3); ``none``: 1.
    """
    R = _pos("rtt", rtt)
    table = {
        "pade1": ([-R / 2, 1.0], [R / 2, 1.0]),
        "pade2": ([R * R / 12, -R / 2, 1.0], [R * R / 12, R / 2, 1.0]),
        "taylor1": ([-R, 1.0], [1.0]),
        "taylor2": ([R * R / 2, -R, 1.0], [1.0]),
        "paper": ([R / 2, -R, 1.0], [1.0]),
        "none": ([1.0], [1.0]),
    }
    if method not in table:
        raise InputError(
            f"delay: must be one of {', '.join(DELAY_APPROXIMATIONS)} (got {method!r})"
        )
    n, d = table[method]
    return np.array(n, dtype=float), np.array(d, dtype=float)


def _plant(n_flows: float, capacity: float, rtt: float) -> tuple[float, np.ndarray]:
    """Gain C^2/(2N) and denominator (s + 2N/(R^2 C))(s + 1/R) of the TCP/queue plant."""
    gain = capacity * capacity / (2.0 * n_flows)
    den = np.polymul([1.0, 2.0 * n_flows / (rtt * rtt * capacity)], [1.0, 1.0 / rtt])
    return gain, den


def controller_tf(law: Law, net: Network, eq: Equilibrium) -> tuple[np.ndarray, np.ndarray]:
    """Linearised AQM law C(s) = num(s)/den(s) from delta-q to delta-p (highest power first)."""
    if isinstance(law, Red):
        k = law.k(net.capacity)
        return np.array([law.slope(eq.q0) * k]), np.array([1.0, k])
    if isinstance(law, Pi):
        return np.array([law.k_pi / law.z, law.k_pi]), np.array([1.0, 0.0])
    if isinstance(law, Rem):
        g = law.gamma * math.log(law.phi) * (1.0 - min(eq.p0, 1.0))
        return np.array([g, g * law.alpha / law.interval]), np.array([1.0, 0.0])
    if isinstance(law, Laq):
        if law.form == "paper":
            return np.array([law.gamma]), np.array([1.0, -1.0])
        return np.array([law.gamma, law.gamma / law.tau]), np.array([1.0, 0.0])
    return np.array([law.slope(eq.q0)]), np.array([1.0])


def characteristic_polynomial(
    n_flows: float,
    capacity: float,
    rtt: float,
    num: np.ndarray | list[float],
    den: np.ndarray | list[float],
    delay: str = "pade1",
) -> np.ndarray:
    """Monic characteristic polynomial of the linearised loop (highest power first):

        den_P(s) den(s) D(s) + (C^2/(2N)) num(s) N(s),   e^{-sR} ~ N(s)/D(s),

    with den_P = (s + 2N/(R^2 C))(s + 1/R). Seed 001 Example 1 is
    ``characteristic_polynomial(250, 2500, 0.08, [0.05], [1, -1], delay="paper")``.
    """
    n = _pos("n_flows", n_flows)
    c = _pos("capacity", capacity)
    R = _pos("rtt", rtt)
    gain, den_p = _plant(n, c, R)
    dn, dd = delay_approximation(R, delay)
    poly = np.polyadd(
        np.polymul(np.polymul(den_p, np.asarray(den, float)), dd),
        gain * np.polymul(np.asarray(num, float), dn),
    )
    nz = np.flatnonzero(poly != 0.0)
    poly = poly[nz[0] :]
    return poly / poly[0]


@dataclass(frozen=True)
class Margins:
    """Stability margins of the open loop L(jw) = P(jw) C(jw), exact delay e^{-jwR}.

    Attributes:
        gain_margin: 1/|L| at the first phase crossover (phase = -180 deg); inf if none.
        gain_margin_db: 20 log10(gain_margin).
        phase_margin_deg: 180 + phase of L at the gain crossover (|L| = 1), the smallest over
            crossovers, in (-180, 180]; inf if |L| < 1 everywhere.
        gain_crossover: w where |L| = 1, rad/s (nan if none).
        phase_crossover: w where the phase is -180 deg, rad/s (nan if none).
        open_loop_rhp_poles: poles of L in the right half-plane; when > 0 the margins do not by
            themselves decide closed-loop stability (Nyquist needs encirclements).
    """

    gain_margin: float
    gain_margin_db: float
    phase_margin_deg: float
    gain_crossover: float
    phase_crossover: float
    open_loop_rhp_poles: int


def margins(
    n_flows: float,
    capacity: float,
    rtt: float,
    num: np.ndarray | list[float],
    den: np.ndarray | list[float],
) -> Margins:
    """Gain and phase margins of L(s) = (C^2/(2N)) num(s) e^{-sR} / (den_P(s) den(s)).

    The phase is the continuous sum of the angles of (jw - zero) minus those of (jw - pole),
    minus wR; crossovers are found on a log grid of w from 1e-5/R to 1e3/R and refined with
    brentq.
    """
    n = _pos("n_flows", n_flows)
    c = _pos("capacity", capacity)
    R = _pos("rtt", rtt)
    gain, den_p = _plant(n, c, R)
    num = np.trim_zeros(np.asarray(num, float), "f")
    den_all = np.polymul(den_p, np.asarray(den, float))
    zeros, poles = np.roots(num), np.roots(den_all)
    k = gain * num[0] / den_all[0]
    rhp = int(np.sum(poles.real > 1e-12))

    def mag(w: float) -> float:
        jw = 1j * w
        return float(abs(k) * np.prod(np.abs(jw - zeros)) / np.prod(np.abs(jw - poles)))

    def phase(w: float) -> float:
        jw = 1j * w
        ph = np.sum(np.angle(jw - zeros)) - np.sum(np.angle(jw - poles)) - w * R
        return float(ph + (math.pi if k < 0 else 0.0))

    grid = np.logspace(-5, 3, 4001) / R
    logm = np.array([math.log(mag(w)) for w in grid])
    ph = np.array([phase(w) for w in grid])

    pms, wgs = [], []
    for i in np.flatnonzero(np.sign(logm[:-1]) != np.sign(logm[1:])):
        w = brentq(lambda x: math.log(mag(x)), grid[i], grid[i + 1], xtol=1e-14, rtol=1e-12)
        pm = math.degrees(phase(w)) + 180.0
        pm = (pm + 180.0) % 360.0 - 180.0
        pms.append(pm if pm != -180.0 else 180.0)
        wgs.append(w)
    if pms:
        j = int(np.argmin(pms))
        pm, wg = pms[j], wgs[j]
    else:
        pm, wg = (math.inf, math.nan) if logm[0] < 0 else (math.nan, math.nan)

    gm, wp = math.inf, math.nan
    shifted = (ph + math.pi) / (2 * math.pi)  # integer where the phase is -180 + 360 k
    cell = np.floor(shifted)
    for i in np.flatnonzero(cell[:-1] != cell[1:]):
        target = max(cell[i], cell[i + 1])
        w = brentq(
            lambda x, t=target: (phase(x) + math.pi) / (2 * math.pi) - t,
            grid[i],
            grid[i + 1],
            xtol=1e-14,
            rtol=1e-12,
        )
        g = 1.0 / mag(w)
        if g < gm:
            gm, wp = g, w
        break  # the first phase crossover (lowest frequency)
    gm_db = 20 * math.log10(gm) if math.isfinite(gm) else math.inf
    return Margins(gm, gm_db, pm, wg, wp, rhp)


@dataclass(frozen=True)
class Linearization:
    """Everything about the linearised loop at the operating point.

    Attributes:
        equilibrium: the operating point.
        rtt: R0 used in the linearisation (equilibrium RTT, or Tp with ``r0="propagation"``).
        plant_gain: C^2/(2N); plant_poles: (2N/(R0^2 C), 1/R0), rad/s (poles at minus these).
        controller_num, controller_den: C(s).
        delay: the approximation of e^{-s R0}.
        char_poly: monic characteristic polynomial, highest power first.
        routh: its Routh table and verdict.
        roots: numpy.roots of char_poly (cross-check).
        margins: open-loop margins with the exact delay.
    """

    equilibrium: Equilibrium
    rtt: float
    plant_gain: float
    plant_poles: tuple[float, float]
    controller_num: np.ndarray
    controller_den: np.ndarray
    delay: str
    char_poly: np.ndarray
    routh: RouthResult
    roots: np.ndarray
    margins: Margins


def linearize(
    net: Network, law: Law, *, delay: str = "pade1", r0: str = "equilibrium"
) -> Linearization:
    """Linearise the fluid model closed by ``law`` at its equilibrium.

    ``r0="equilibrium"`` uses R0 = q0/C + Tp; ``r0="propagation"`` uses R0 = Tp, as seed 001's
    Example 1 does (it plugs R = 0.08 s, the propagation RTT, into Eqs 18-21).
    """
    if r0 not in ("equilibrium", "propagation"):
        raise InputError(f"r0: must be 'equilibrium' or 'propagation' (got {r0!r})")
    eq = equilibrium(net, law)
    R = eq.r0 if r0 == "equilibrium" else net.rtt
    num, den = controller_tf(law, net, eq)
    poly = characteristic_polynomial(net.n_flows, net.capacity, R, num, den, delay)
    gain, _ = _plant(net.n_flows, net.capacity, R)
    poles = (2.0 * net.n_flows / (R * R * net.capacity), 1.0 / R)
    if not np.any(num != 0.0):
        mg = Margins(math.inf, math.inf, math.inf, math.nan, math.nan, 0)
    else:
        mg = margins(net.n_flows, net.capacity, R, num, den)
    return Linearization(eq, R, gain, poles, num, den, delay, poly, routh(poly), np.roots(poly), mg)


# ----------------------------------------------------------------------------------------------
# PI design (Hollot et al. 2002)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PiDesign:
    """PI controller from Hollot et al.'s design rule; see :func:`pi_design`.

    ``premise_ok`` is False when z R+ >= 0.5: the TCP window pole is then not well below the queue
    pole 1/R+, which the rule assumes, and the default crossover omega_g = z may give a poor or
    negative phase margin (see ``margins``); pass a smaller ``omega_g``.
    """

    z: float
    omega_g: float
    k_pi: float
    a: float
    b: float
    sampling_hz: float
    margins: Margins
    premise_ok: bool

    def law(self, q_ref: float) -> Pi:
        """The designed controller as a :class:`Pi` law with target ``q_ref``."""
        return Pi(self.a, self.b, q_ref, self.sampling_hz)


def pi_design(
    n_min: float,
    capacity: float,
    rtt_max: float,
    sampling_hz: float,
    *,
    omega_g: float | None = None,
) -> PiDesign:
    """PI design rule of Hollot, Misra, Towsley & Gong (IEEE TAC 2002, Sec. V), for N >= n_min
    flows, capacity C and RTT <= rtt_max (R+):

    * the controller zero cancels the TCP window pole of the worst case: z = 2 N- / (R+^2 C);
    * the unity-gain crossover omega_g (default z, as in the paper's example; the rule assumes
      z << 1/R+) and K_PI such that |L(j omega_g)| = 1 for the plant at (N-, R+):
      K_PI = omega_g |j omega_g R+ + 1| (2 N-)^2 / (R+ C)^3;
    * the bilinear (Tustin) map at f_s = sampling_hz gives the ns-2 coefficients
      a = K_PI (1/z + 1/(2 f_s)), b = K_PI (1/z - 1/(2 f_s)).

    The margins are those of the design loop (N-, R+) with the exact delay. Hollot et al.'s
    published example (N- = 60, C = 3750, R+ = 0.246, 160 Hz: a = 1.822e-5, b = 1.816e-5) is
    matched to its 4 digits with omega_g = 0.52 rad/s; the default omega_g = z = 0.529 gives
    1.7 % more gain (see docs/theory.md).
    """
    n = _pos("n_min", n_min)
    c = _pos("capacity", capacity)
    R = _pos("rtt_max", rtt_max)
    fs = _pos("sampling_hz", sampling_hz)
    z = 2.0 * n / (R * R * c)
    wg = z if omega_g is None else _pos("omega_g", omega_g)
    k_pi = wg * math.hypot(1.0, wg * R) * (2.0 * n) ** 2 / (R * c) ** 3
    t2 = 0.5 / fs
    a, b = k_pi * (1.0 / z + t2), k_pi * (1.0 / z - t2)
    if not b > 0:
        raise InputError(f"sampling_hz: must be > z/2 = {z / 2:g} so that b > 0 (got {fs:g})")
    mg = margins(n, c, R, [k_pi / z, k_pi], [1.0, 0.0])
    return PiDesign(z, wg, k_pi, a, b, fs, mg, z * R < 0.5)


# ----------------------------------------------------------------------------------------------
# Integration of the delay differential equations
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluidTrace:
    """Time series of a fluid run (every ``dt``): t, W, q, p (seen by the senders), R.

    ``method`` states the integrator.
    """

    t: np.ndarray = field(repr=False)
    w: np.ndarray = field(repr=False)
    q: np.ndarray = field(repr=False)
    p: np.ndarray = field(repr=False)
    rtt: np.ndarray = field(repr=False)
    dt: float
    law: str
    method: str
    network: Network

    def summary(self, from_time: float | None = None) -> dict[str, float]:
        """Mean and std of q, mean W and p, and utilisation over t >= from_time (default: the
        second half of the run). Utilisation is 1 while q > 0, else min(1, N W/(R C))."""
        t0 = self.t[-1] / 2 if from_time is None else from_time
        sel = self.t >= t0
        q, w, r = self.q[sel], self.w[sel], self.rtt[sel]
        net = self.network
        util = np.where(q > 0, 1.0, np.minimum(1.0, net.n_flows * w / (r * net.capacity)))
        return {
            "from_time": float(t0),
            "mean_q": float(q.mean()),
            "std_q": float(q.std()),
            "mean_w": float(w.mean()),
            "mean_p": float(self.p[sel].mean()),
            "utilization": float(util.mean()),
        }


def simulate(
    net: Network,
    law: Law,
    duration: float,
    *,
    dt: float | None = None,
    w_init: float = 1.0,
    q_init: float = 0.0,
) -> FluidTrace:
    """Integrate the delay differential equations from W = w_init, q = q_init, p = 0.

    Method: fixed-step Heun (explicit trapezoidal, 2nd order) with a history buffer; the delayed
    values W, p, R at t - R(t) are linearly interpolated between stored steps (the initial values
    before t = 0). q is projected onto [0, B] and W onto [0, w_max]. Laws sampled in time (PI,
    REM, LaQ algorithm) update at their sampling instants, which the step divides exactly, and hold
    p in between; RED's average and LaQ's Eq-6 probability are integrated with the state.
    Default dt: min(1 ms, Tp/20, T/4 for sampled laws, 0.1/K for RED), T the sampling period.
    """
    T_end = _pos("duration", duration)
    w_init = _nonneg("w_init", w_init)
    q_init = _nonneg("q_init", q_init)
    N, C, Tp, B, wmax = net.n_flows, net.capacity, net.rtt, net.buffer, net.w_max
    q_init = min(q_init, B)
    period = None
    if isinstance(law, (Pi, Laq)) and not (isinstance(law, Laq) and law.form == "paper"):
        period = 1.0 / law.sampling_hz
    elif isinstance(law, Rem):
        period = law.interval
    h = min(1e-3, Tp / 20.0)
    if isinstance(law, Red):
        h = min(h, 0.1 / law.k(C))
    if dt is not None:
        h = _pos("dt", dt)
        if h > Tp / 2:
            raise InputError(f"dt: must be <= rtt/2 = {Tp / 2:g} (got {show(dt)})")
    if period is not None:
        h = period / math.ceil(period / min(h, period / 4.0) - 1e-9)
    steps = math.ceil(T_end / h - 1e-9)
    if steps > 20_000_000:
        raise InputError(f"duration: too many steps ({steps}); use a larger dt or shorter run")

    red_k = law.k(C) if isinstance(law, Red) else 0.0
    laq_paper = isinstance(law, Laq) and law.form == "paper"
    static = law.p_of if isinstance(law, DropFn) else None

    # sampled state
    p_hold = 0.0
    pi_q_prev = q_init
    rem_price = 0.0
    arrived_acc = 0.0
    dropped_acc = 0.0
    laq_win_a: list[float] = []
    laq_win_d: list[float] = []
    laq_lbar = 0.0
    steps_per_sample = round(period / h) if period is not None else 0

    def aqm_p(q: float, z: float) -> float:
        if isinstance(law, Red):
            return law.p_of(z)
        if laq_paper:
            return z
        if static is not None:
            return static(q)
        return p_hold

    def eff_p(p_aqm: float, q: float, inflow: float) -> float:
        if q >= B - 1e-9 and inflow > C:
            return 1.0 - (1.0 - p_aqm) * (C / inflow)
        return p_aqm

    R0 = q_init / C + Tp
    z0 = q_init if isinstance(law, Red) else 0.0
    p_first = eff_p(aqm_p(q_init, z0), q_init, N * w_init / R0)
    W_h = [w_init]
    P_h = [p_first]
    R_h = [R0]
    Q_h = [q_init]

    def delayed(tau: float) -> tuple[float, float, float]:
        if tau <= 0.0:
            return W_h[0], P_h[0], R_h[0]
        x = tau / h
        i = int(x)
        f = x - i
        if i + 1 >= len(W_h):
            return W_h[-1], P_h[-1], R_h[-1]
        return (
            W_h[i] + f * (W_h[i + 1] - W_h[i]),
            P_h[i] + f * (P_h[i + 1] - P_h[i]),
            R_h[i] + f * (R_h[i + 1] - R_h[i]),
        )

    def rhs(t: float, W: float, q: float, z: float) -> tuple[float, float, float]:
        R = q / C + Tp
        Wd, pd, Rd = delayed(t - R)
        dW = 1.0 / R - W * Wd * pd / (2.0 * Rd)
        if W <= 0.0 and dW < 0.0:
            dW = 0.0
        elif W >= wmax and dW > 0.0:
            dW = 0.0
        dq = N * W / R - C
        if (q <= 0.0 and dq < 0.0) or (q >= B and dq > 0.0):
            dq = 0.0
        if red_k:
            dz = red_k * (q - z)
        elif laq_paper:
            dz = z + law.gamma * (q - law.q_ref)  # type: ignore[union-attr]
            if (z <= 0.0 and dz < 0.0) or (z >= 1.0 and dz > 0.0):
                dz = 0.0
        else:
            dz = 0.0
        return dW, dq, dz

    W, q, z = w_init, q_init, z0
    for i in range(steps):
        t = i * h
        k1 = rhs(t, W, q, z)
        Wp, qp, zp = W + h * k1[0], q + h * k1[1], z + h * k1[2]
        qp = min(max(qp, 0.0), B)
        k2 = rhs(t + h, max(Wp, 0.0), qp, zp)
        W = min(max(W + 0.5 * h * (k1[0] + k2[0]), 0.0), wmax)
        q = min(max(q + 0.5 * h * (k1[1] + k2[1]), 0.0), B)
        z = z + 0.5 * h * (k1[2] + k2[2])
        if laq_paper:
            z = min(max(z, 0.0), 1.0)
        R = q / C + Tp
        inflow = N * W / R
        if period is not None:
            arrived_acc += inflow * h
            dropped_acc += inflow * h * P_h[-1]
            if (i + 1) % steps_per_sample == 0:
                if isinstance(law, Pi):
                    p_hold += law.a * (q - law.q_ref) - law.b * (pi_q_prev - law.q_ref)
                    p_hold = min(max(p_hold, 0.0), 1.0)
                    pi_q_prev = q
                elif isinstance(law, Rem):
                    excess = arrived_acc - C * period
                    rem_price = max(
                        0.0, rem_price + law.gamma * (law.alpha * (q - law.q_ref) + excess)
                    )
                    p_hold = 1.0 - law.phi ** (-rem_price)
                elif isinstance(law, Laq):
                    laq_win_a.append(arrived_acc)
                    laq_win_d.append(dropped_acc)
                    if len(laq_win_a) > law.m:
                        laq_win_a.pop(0)
                        laq_win_d.pop(0)
                    tot = sum(laq_win_a)
                    loss = sum(laq_win_d) / tot if tot > 0 else 0.0
                    laq_lbar = law.w_m * laq_lbar + (1.0 - law.w_m) * loss
                    p_hold = min(max(laq_lbar + law.gamma * (q - law.q_ref), 0.0), 1.0)
                arrived_acc = dropped_acc = 0.0
        W_h.append(W)
        P_h.append(eff_p(aqm_p(q, z), q, inflow))
        R_h.append(R)
        Q_h.append(q)

    t_arr = np.arange(len(W_h)) * h
    method = (
        f"fixed-step Heun (explicit trapezoidal), dt = {h:.6g} s, delayed terms linearly "
        "interpolated from the stored history"
    )
    return FluidTrace(
        t_arr, np.array(W_h), np.array(Q_h), np.array(P_h), np.array(R_h), h, law.name, method, net
    )
