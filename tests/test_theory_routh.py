"""Tests of aqmlab.theory.routh on textbook polynomials, cross-checked with numpy.roots."""

import numpy as np
import pytest

from aqmlab.errors import InputError
from aqmlab.theory.routh import parse_coefficients, routh


def _numpy_counts(coeffs, tol=1e-7):
    r = np.roots(coeffs)
    return int(np.sum(r.real > tol)), int(np.sum(np.abs(r.real) <= tol))


# (coefficients, right-half-plane roots, imaginary-axis roots, verdict, special case)
TEXTBOOK = [
    ([1, 6, 11, 6], 0, 0, "stable", None),  # (s+1)(s+2)(s+3)
    ([1, 10, 31, 1030], 2, 0, "unstable", None),  # Nise, Example 6.1
    ([1, 2, 3, 6, 5, 3], 2, 0, "unstable", "epsilon"),  # Nise, Example 6.2: zero first entry
    ([1, 1, 2, 2, 3], 2, 0, "unstable", "epsilon"),  # zero first entry in row s^2
    ([1, 2, 3, 4, 5], 2, 0, "unstable", None),  # Ogata: two sign changes
    ([1, 7, 6, 42, 8, 56], 0, 4, "marginally stable", "all zero"),  # Nise, Example 6.5
    ([1, 2, 24, 48, -25, -50], 1, 2, "unstable", "all zero"),  # Ogata: roots +-1, +-5j, -2
    ([1, 2, 1, 2], 0, 2, "marginally stable", "all zero"),  # (s + 2)(s^2 + 1)
    ([1, 0, 3, 0, 2], 0, 4, "marginally stable", "all zero"),  # (s^2 + 1)(s^2 + 2)
    ([1, 3, 2, 0], 0, 1, "marginally stable", "s = 0"),  # s (s+1)(s+2)
    ([-1, -6, -11, -6], 0, 0, "stable", None),  # negative leading coefficient
    ([2, -1], 1, 0, "unstable", None),
    ([1, 67.75, 296.875, 234.375], 0, 0, "stable", None),  # seed 001, Example 1
]


@pytest.mark.parametrize(("coeffs", "rhp", "imag", "verdict", "special"), TEXTBOOK)
def test_textbook_polynomials(coeffs, rhp, imag, verdict, special):
    res = routh(coeffs)
    assert res.rhp_roots == rhp == res.sign_changes
    assert res.imaginary_roots == imag
    assert res.verdict == verdict
    assert (rhp, imag) == _numpy_counts(coeffs)
    notes = " ".join(res.notes)
    if special == "epsilon":
        assert "epsilon" in notes
    elif special == "all zero":
        assert "all zero" in notes and res.auxiliary is not None
    elif special == "s = 0":
        assert res.origin_roots == 1
    else:
        assert not res.notes


def test_auxiliary_polynomial_and_rows_by_hand():
    res = routh([1, 2, 24, 48, -25, -50])
    assert res.auxiliary.tolist() == [2, 0, 48, 0, -50]
    # the zero s^3 row replaced by dA/ds = 8 s^3 + 96 s
    assert res.rows[2].tolist() == [8, 96, 0]
    assert res.first_column.tolist() == pytest.approx([1, 2, 8, 24, 112.6666666667, -50])
    # Nise Ex. 6.1 rows
    res = routh([1, 10, 31, 1030])
    assert res.first_column.tolist() == pytest.approx([1, 10, -72, 1030])


@pytest.mark.parametrize("seed", range(8))
def test_random_polynomials_against_numpy_roots(seed):
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 40:
        deg = int(rng.integers(2, 9))
        roots = rng.normal(0, 2, deg) + 0j
        n_pairs = int(rng.integers(0, deg // 2 + 1))
        for k in range(n_pairs):
            re, im = rng.normal(0, 2), abs(rng.normal(0, 3))
            roots[2 * k], roots[2 * k + 1] = complex(re, im), complex(re, -im)
        if np.min(np.abs(roots.real)) < 0.05:
            continue  # keep clear of the imaginary axis (a floating-point judgement call)
        coeffs = np.real(np.poly(roots)) * rng.uniform(0.5, 3)
        res = routh(coeffs)
        assert res.rhp_roots == int(np.sum(roots.real > 0)), coeffs
        assert res.verdict == ("stable" if res.rhp_roots == 0 else "unstable")
        checked += 1


def test_format_and_parse():
    text = routh("1, 67.75, 296.875, 234.375").format()
    assert "s^3" in text and "293.416" in text and "verdict: stable" in text
    assert parse_coefficients("0 0 1 2").tolist() == [1, 2]


@pytest.mark.parametrize(
    ("bad", "msg"),
    [
        ([], "degree >= 1"),
        ([0, 0, 0], "degree >= 1"),
        ([5], "degree >= 1"),
        ([1, float("nan"), 2], r"coefficients\[1\]: must be a finite number"),
        ("1, x, 2", "must be numbers"),
        ([[1, 2], [3, 4]], "1-D"),
    ],
)
def test_bad_input(bad, msg):
    with pytest.raises(InputError, match=msg):
        routh(bad)
