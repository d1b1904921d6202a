"""Routh-Hurwitz stability test of a real polynomial.

Given a_0 s^n + a_1 s^(n-1) + ... + a_n, the Routh table has rows s^n, s^(n-1), ..., s^0; the
first two rows hold the even- and odd-indexed coefficients and every further entry is

    b_j = (r1[0] * r0[j+1] - r0[0] * r1[j+1]) / r1[0]

from the two rows above (r0 above r1). The number of sign changes in the first column equals the
number of roots in the open right half-plane (Routh 1877, Hurwitz 1895; any control textbook, e.g.
Ogata, Modern Control Engineering, Sec. 5-6, or Nise, Control Systems Engineering, Ch. 6).

Special cases, both handled:

* a zero first entry in a row that is not all zero: replaced by a small positive epsilon (the
  limit epsilon -> 0+; numerically epsilon = ``eps`` times the row's largest magnitude);
* an all-zero row (at s^(k-1)): the roots include pairs symmetric about the origin, the roots of
  the auxiliary polynomial A(s) built from the row above (power k); the zero row is replaced by the
  coefficients of dA/ds. Of A's k roots, those in the right half-plane are the sign changes from
  A's row down; the other k - 2 * that are on the imaginary axis.

Roots at the origin (trailing zero coefficients) are factored out first and counted as
imaginary-axis roots. The verdict is ``stable`` (every root in the open left half-plane),
``unstable`` (a root in the right half-plane) or ``marginally stable`` (none in the right
half-plane, some on the imaginary axis; repeated imaginary roots would make it unstable, which the
table does not tell). An entry computed as the difference of two terms is set to exactly zero
when it is below ``zero_tol`` times the larger term (floating-point cancellation of an exact
zero).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from aqmlab.errors import InputError
from aqmlab.theory._util import show

__all__ = ["RouthResult", "parse_coefficients", "routh"]


@dataclass(frozen=True)
class RouthResult:
    """The Routh table and what it says.

    Attributes:
        coefficients: the polynomial as given (leading zeros removed), highest power first.
        rows: the table rows after the special-case substitutions, all of the same width.
        powers: the power of s labelling each row.
        first_column: rows[i][0] for every row.
        sign_changes: sign changes in the first column = roots in the open right half-plane.
        rhp_roots: same as sign_changes.
        imaginary_roots: roots on the imaginary axis (origin included).
        origin_roots: roots at s = 0.
        auxiliary: the first auxiliary polynomial used, if any (highest power first).
        notes: which special cases occurred and where.
        verdict: ``stable``, ``unstable`` or ``marginally stable``.
    """

    coefficients: np.ndarray
    rows: list[np.ndarray] = field(repr=False)
    powers: list[int]
    first_column: np.ndarray
    sign_changes: int
    rhp_roots: int
    imaginary_roots: int
    origin_roots: int
    auxiliary: np.ndarray | None
    notes: list[str]
    verdict: str

    def format(self, digits: int = 6) -> str:
        """The table as text, one row per power of s, then the counts and the verdict."""
        cells = [[f"{v:.{digits}g}" for v in row] for row in self.rows]
        width = max((len(c) for row in cells for c in row), default=1)
        lines = []
        for p, row in zip(self.powers, cells, strict=True):
            lines.append(f"s^{p:<3d}| " + "  ".join(c.rjust(width) for c in row))
        lines.append(f"sign changes in the first column: {self.sign_changes}")
        lines.append(
            f"roots: {self.rhp_roots} in the right half-plane, {self.imaginary_roots} on the "
            f"imaginary axis"
        )
        lines.extend(f"note: {n}" for n in self.notes)
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines)


def parse_coefficients(values: ArrayLike | str, field_name: str = "coefficients") -> np.ndarray:
    """Coefficients (highest power first) from numbers or a comma/space separated string."""
    if isinstance(values, str):
        parts = values.replace(",", " ").split()
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise InputError(f"{field_name}: must be numbers (got {values!r})") from None
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{field_name}: must be a list of real numbers") from None
    if arr.ndim != 1:
        raise InputError(f"{field_name}: must be a 1-D list of real numbers")
    if not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InputError(f"{field_name}[{i}]: must be a finite number (got {show(float(arr[i]))})")
    nz = np.flatnonzero(arr != 0.0)
    if nz.size == 0 or arr.size - nz[0] < 2:
        raise InputError(
            f"{field_name}: need a polynomial of degree >= 1 (at least two coefficients, the "
            "leading one nonzero)"
        )
    return arr[nz[0] :]


def _sign_changes(col: np.ndarray) -> int:
    s = np.sign(col)
    s = s[s != 0]
    return int(np.count_nonzero(s[1:] != s[:-1]))


def routh(
    coefficients: ArrayLike | str, *, eps: float = 1e-9, zero_tol: float = 1e-12
) -> RouthResult:
    """Build the Routh table of a real polynomial (highest power first) and give the verdict."""
    given = parse_coefficients(coefficients)
    a = given.copy()
    nz = np.flatnonzero(a != 0.0)
    origin = len(a) - 1 - int(nz[-1])
    a = a[: int(nz[-1]) + 1]
    if a[0] < 0:
        a = -a
    n = len(a) - 1
    width = n // 2 + 1
    notes: list[str] = []
    if origin:
        notes.append(f"{origin} root(s) at s = 0 factored out before the table")

    def pad(v: np.ndarray) -> np.ndarray:
        out = np.zeros(width)
        out[: len(v)] = v
        return out

    if n == 0:
        rows = [pad(a)]
        powers = [0]
        col = np.array([a[0]])
        verdict = "marginally stable" if origin else "stable"
        return RouthResult(given, rows, powers, col, 0, 0, origin, origin, None, notes, verdict)

    rows = [pad(a[0::2]), pad(a[1::2])]
    aux: np.ndarray | None = None
    aux_row: int | None = None
    aux_deg = 0

    def fix(k: int) -> None:
        nonlocal aux, aux_row, aux_deg
        row = rows[k]
        if np.all(row == 0.0):
            p = n - (k - 1)  # power of the row above
            above = rows[k - 1]
            powers_above = p - 2 * np.arange(width)
            deriv = np.where(powers_above > 0, above * powers_above, 0.0)
            rows[k] = deriv
            if aux is None:
                coeffs = np.zeros(p + 1)
                coeffs[0::2] = above[: p // 2 + 1]
                aux, aux_row, aux_deg = coeffs, k - 1, p
            notes.append(
                f"row s^{n - k} was all zero: replaced by the derivative of the auxiliary "
                f"polynomial of row s^{p}"
            )
        elif row[0] == 0.0:
            e = eps * float(np.max(np.abs(row)))
            row[0] = e
            notes.append(f"zero first entry in row s^{n - k}: replaced by epsilon = {e:.3g}")

    fix(1)
    for k in range(2, n + 1):
        r0, r1 = rows[k - 2], rows[k - 1]
        new = np.zeros(width)
        for j in range(width - 1):
            left, right = r0[j + 1], r0[0] * r1[j + 1] / r1[0]
            new[j] = left - right
            # a difference of two (nearly) equal terms is an exact zero lost to rounding
            if abs(new[j]) <= zero_tol * max(abs(left), abs(right)):
                new[j] = 0.0
        rows.append(new)
        fix(k)

    col = np.array([r[0] for r in rows])
    changes = _sign_changes(col)
    imag = origin
    if aux is not None and aux_row is not None:
        aux_rhp = _sign_changes(col[aux_row:])
        imag += aux_deg - 2 * aux_rhp
    if changes > 0:
        verdict = "unstable"
    elif imag > 0:
        verdict = "marginally stable"
    elif any("epsilon" in s for s in notes):
        # a zero in the first column without a sign change: roots on the imaginary axis
        verdict = "marginally stable"
        notes.append("epsilon case without sign change: a root lies on the imaginary axis")
    else:
        verdict = "stable"
    powers = [n - k for k in range(n + 1)]
    return RouthResult(
        given, rows, powers, col, changes, changes, imag, origin, aux, notes, verdict
    )
