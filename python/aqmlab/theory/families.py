"""Dropping-function families of the ``dropfn`` AQM: the single source of truth for their shapes.

A dropping function d(n) gives the probability of dropping a packet that arrives when n packets
are in the system (seed 002, Section 2; Chydzinski, Barczyk & Samociuk 2018). The Rust ``dropfn``
AQM receives a table d(0..n_max) computed by :func:`table`; this module is where the shapes live.

Seed 002 (Barczyk & Chydzinski, PLoS ONE 2022) used nine functions d0-d8 whose formulas were lost
from its text; its reference list gives the shapes. Each family here has a shape fixed by the
convention documented on it and ONE scale parameter. With x = n / s (s the scale):

============== ============================================ ===============================
name           d(n) (clipped to [0, 1])                     scale s
============== ============================================ ===============================
step           0 for n < s, 1 for n >= s                    K: system capacity (d0)
linear         x                                            queue length where d reaches 1
doubly-linear  0.2 x for x <= 1/2, 0.1 + 1.8 (x - 1/2)      queue length where d reaches 1
exponential    1 - exp(-x)  (exactly 1 for x >= 40)         queue length where d = 1 - 1/e
quadratic      x**2                                         queue length where d reaches 1
cubic          x**3                                         queue length where d reaches 1
linear-cubic   (x + x**3) / 2                               queue length where d reaches 1
linear-log     g ln(g) / e, g = 1 + (e - 1) x               queue length where d reaches 1
constant       c for every n                                c: the drop probability (d8)
============== ============================================ ===============================

Sources of the shapes (seed 002's references): linear = RED [Floyd & Jacobson 1993] with
min_th = 0 and max_p = 1 at max_th = s; doubly-linear = a broken line with increasingly steeper
slope [Rosolen, Bonaventure & Leduc 1999], here RED's "gentle" shape: max_p = 0.1 at s/2, then on
to 1 at s, so the second slope is nine times the first; exponential = REM's 1 - phi**(-x)
[Athuraliya et al. 2001] with phi = e;
quadratic and cubic = the polynomials of nonlinear RED [Zhou, Yeung & Li 2006; Augustyn et al.
2010]; linear-cubic = the equal-weight mixture of a linear and a cubic function [Feng et al. 2017];
linear-log = a linear function times its logarithm [Patel & Karmeshu 2019], shifted so that
d(0) = 0 and scaled so that d(s) = 1. Every family is nondecreasing in n; all but ``constant`` have
d(0) = 0 and reach exactly 1 (``exponential`` at n = 40 s, where 1 - d < 5e-18).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from aqmlab.errors import InputError
from aqmlab.theory._util import show

__all__ = [
    "FAMILIES",
    "Family",
    "get_family",
    "table",
    "tabulate",
    "validate_table",
]

#: Largest scale accepted for the queue-length scales (tabulation cost is linear in it).
MAX_SCALE = 1e7
#: ``exponential`` is set to exactly 1 from x = n / s >= this value (1 - d < 5e-18 there).
EXP_CUTOFF = 40.0


def _x(n: np.ndarray, s: float) -> np.ndarray:
    return np.maximum(n, 0.0) / s


def _step(n: np.ndarray, s: float) -> np.ndarray:
    return np.where(n >= s, 1.0, 0.0)


def _linear(n: np.ndarray, s: float) -> np.ndarray:
    return _x(n, s)


def _doubly_linear(n: np.ndarray, s: float) -> np.ndarray:
    x = _x(n, s)
    return np.where(x <= 0.5, 0.2 * x, 0.1 + 1.8 * (x - 0.5))


def _exponential(n: np.ndarray, s: float) -> np.ndarray:
    x = _x(n, s)
    return np.where(x >= EXP_CUTOFF, 1.0, -np.expm1(-x))


def _quadratic(n: np.ndarray, s: float) -> np.ndarray:
    return _x(n, s) ** 2


def _cubic(n: np.ndarray, s: float) -> np.ndarray:
    return _x(n, s) ** 3


def _linear_cubic(n: np.ndarray, s: float) -> np.ndarray:
    x = _x(n, s)
    return 0.5 * (x + x**3)


def _linear_log(n: np.ndarray, s: float) -> np.ndarray:
    g = 1.0 + (math.e - 1.0) * np.minimum(_x(n, s), 1.0)
    return g * np.log(g) / math.e


def _constant(n: np.ndarray, c: float) -> np.ndarray:
    return np.full(np.shape(n), c, dtype=float)


@dataclass(frozen=True)
class Family:
    """One dropping-function family: a fixed shape and one scale parameter.

    Attributes:
        name: the family's name (``linear``, ``step``, ...).
        doc: the formula and its source.
        scale_meaning: what the scale parameter is.
        scale_min, scale_max: the valid scale range (``scale_min_inclusive`` says whether the lower
            end is allowed; the upper end always is).
        seed002: seed 002's name for the function where known (d0, d8) or inferred (d1-d7 follow the
            order in which seed 002 lists the shapes and their references; the text lost the
            formulas, so this pairing is an inference).
        nondecreasing: d(n) never decreases in n.
    """

    name: str
    doc: str
    scale_meaning: str
    scale_min: float
    scale_max: float
    scale_min_inclusive: bool
    seed002: str
    nondecreasing: bool
    _fn: Callable[[np.ndarray, float], np.ndarray]

    def check_scale(self, scale: float, field: str = "scale") -> float:
        """Return ``scale`` as float, or raise InputError naming ``field`` and the valid range."""
        try:
            s = float(scale)
        except (TypeError, ValueError):
            raise InputError(f"{field}: must be a number (got {show(scale)})") from None
        lo_ok = s >= self.scale_min if self.scale_min_inclusive else s > self.scale_min
        if not (math.isfinite(s) and lo_ok and s <= self.scale_max):
            op = ">=" if self.scale_min_inclusive else ">"
            raise InputError(
                f"{field}: must be {op} {self.scale_min:g} and <= {self.scale_max:g} for family "
                f"'{self.name}' ({self.scale_meaning}) (got {show(scale)})"
            )
        return s

    def d(self, n: ArrayLike, scale: float) -> np.ndarray:
        """d(n) for queue lengths ``n`` (array or scalar, n >= 0; real n allowed for fluid models).

        Returns a float array of the shape of ``n`` with values in [0, 1].
        """
        s = self.check_scale(scale)
        arr = np.asarray(n, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0):
            raise InputError("n: queue lengths must be finite and >= 0")
        return np.clip(self._fn(arr, s), 0.0, 1.0)

    def saturation(self, scale: float) -> int | None:
        """Smallest integer n0 with d(n) == 1 exactly for every n >= n0, or None if d never
        reaches 1 (``constant`` with c < 1)."""
        s = self.check_scale(scale)
        if self.name == "constant":
            return 0 if s >= 1.0 else None
        if self.name == "exponential":
            # 1 - exp(-x) rounds to exactly 1.0 a little before the cut-off x = 40
            lo = math.floor(37.0 * s)
            n = np.arange(lo, math.ceil(EXP_CUTOFF * s) + 1, dtype=float)
            below = np.flatnonzero(self._fn(n, s) < 1.0)
            return lo if below.size == 0 else lo + int(below[-1]) + 1
        return math.ceil(s)

    def limit(self, scale: float) -> float:
        """lim d(n) as n -> infinity."""
        s = self.check_scale(scale)
        return s if self.name == "constant" else 1.0


_QLEN = "queue length (packets in the system) at which d first reaches 1"

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        Family(
            "step",
            "d(n) = 0 for n < K, 1 for n >= K: a plain FIFO of K places (tail drop). "
            "Seed 002's d0.",
            "K, the system capacity (d = 1 from n = K on; a fractional K acts as ceil(K))",
            1.0,
            MAX_SCALE,
            True,
            "d0",
            True,
            _step,
        ),
        Family(
            "linear",
            "d(n) = min(1, n/s): RED's linear shape with min_th = 0, max_p = 1 at max_th = s "
            "(Floyd & Jacobson 1993).",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d1 (inferred)",
            True,
            _linear,
        ),
        Family(
            "doubly-linear",
            "Broken line through (0, 0), (s/2, 0.1), (s, 1): two slopes, the second nine times "
            "steeper (Rosolen, Bonaventure & Leduc 1999); gentle RED with max_p = 0.1.",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d2 (inferred)",
            True,
            _doubly_linear,
        ),
        Family(
            "exponential",
            "d(n) = 1 - exp(-n/s), REM's 1 - phi^(-x) with phi = e (Athuraliya et al. 2001); "
            "set to exactly 1 for n >= 40 s.",
            "queue length at which d = 1 - 1/e (about 0.632)",
            0.0,
            MAX_SCALE / EXP_CUTOFF,
            False,
            "d3 (inferred)",
            True,
            _exponential,
        ),
        Family(
            "quadratic",
            "d(n) = min(1, (n/s)^2): second-degree nonlinear RED (Zhou, Yeung & Li 2006).",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d4 (inferred)",
            True,
            _quadratic,
        ),
        Family(
            "cubic",
            "d(n) = min(1, (n/s)^3): third-degree polynomial (Augustyn, Domanski & Domanska 2010).",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d5 (inferred)",
            True,
            _cubic,
        ),
        Family(
            "linear-cubic",
            "d(n) = min(1, (x + x^3)/2), x = n/s: equal mixture of linear and cubic "
            "(Feng, Huang, Xu & Chang 2017).",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d6 (inferred)",
            True,
            _linear_cubic,
        ),
        Family(
            "linear-log",
            "d(n) = g ln(g) / e with g = 1 + (e - 1) min(1, n/s): a linear function times its "
            "logarithm (Patel & Karmeshu 2019), normalised to d(0) = 0, d(s) = 1.",
            _QLEN,
            0.0,
            MAX_SCALE,
            False,
            "d7 (inferred)",
            True,
            _linear_log,
        ),
        Family(
            "constant",
            "d(n) = c for every n: random drop independent of the queue. Seed 002's d8.",
            "c, the drop probability",
            0.0,
            1.0,
            True,
            "d8",
            True,
            _constant,
        ),
    ]
}


def get_family(name: str) -> Family:
    """The :class:`Family` called ``name``, or InputError listing the valid names."""
    fam = FAMILIES.get(str(name))
    if fam is None:
        raise InputError(f"family: must be one of {', '.join(FAMILIES)} (got {name!r})")
    return fam


def _check_n_max(n_max: object) -> int:
    try:
        v = float(n_max)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"n_max: must be a whole number >= 0 (got {show(n_max)})") from None
    if not (math.isfinite(v) and v >= 0 and v.is_integer()):
        raise InputError(f"n_max: must be a whole number >= 0 (got {show(n_max)})")
    if v > 5e7:
        raise InputError(f"n_max: must be <= 50000000 (got {show(n_max)})")
    return int(v)


def table(family: str, scale: float, n_max: int) -> np.ndarray:
    """Tabulate a family: the float64 array d(0), d(1), ..., d(n_max).

    This is what the Rust ``dropfn`` AQM receives; queue lengths beyond n_max use d(n_max).
    """
    fam = get_family(family)
    n = _check_n_max(n_max)
    return fam.d(np.arange(n + 1, dtype=float), scale)


def validate_table(values: ArrayLike | Sequence[float], field: str = "table") -> np.ndarray:
    """Check a user-given dropping-function table and return it as a float64 array.

    The table is d(0), d(1), ... (index = queue length). Every value must be a finite number in
    [0, 1]; the error names the first offending index, e.g. ``table[3]: must be in [0, 1] (got
    1.2)``. The table must be one-dimensional and non-empty.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{field}: must be a list of numbers in [0, 1]") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"{field}: must be a non-empty 1-D list of numbers in [0, 1]")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0.0) & (arr <= 1.0)))
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{field}[{i}]: must be in [0, 1] (got {show(float(arr[i]))})")
    return arr


def tabulate(
    func: Callable[[int], float], n_max: int, field: str = "dropping function"
) -> np.ndarray:
    """Tabulate a Python callable once: [func(0), ..., func(n_max)], validated like a table."""
    n = _check_n_max(n_max)
    vals = []
    for i in range(n + 1):
        try:
            vals.append(float(func(i)))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{field}: d({i}) is not a number ({exc})") from None
    return validate_table(vals, field=field)
