"""Small helpers shared by the theory modules."""

from __future__ import annotations

import numbers


def show(value: object) -> str:
    """A value for an error message: numbers as ``%g`` (``-1``, ``0.5``, ``inf``), else repr."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{float(value):g}"
    return repr(value)
