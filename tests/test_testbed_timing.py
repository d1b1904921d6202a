"""scripts/testbed_timing.py on hand-built captures (already parsed: its `read` gives these
frames): the pairs' one-way delay difference and the pacing gaps, worked by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import testbed_timing as tt


def _frame(rows):
    return pd.DataFrame(rows, columns=tt.COLS)


# One flow: two GSO pairs (segments 2 us apart) 1 ms apart, then a lone segment 1 ms later.
SND = _frame(
    [
        (0.000000, "10.77.0.1", 5001, 0, 1448),
        (0.000002, "10.77.0.1", 5001, 1448, 1448),
        (0.001000, "10.77.0.1", 5001, 2896, 1448),
        (0.001002, "10.77.0.1", 5001, 4344, 1448),
        (0.002002, "10.77.0.1", 5001, 5792, 1448),
    ]
)
# Received: the first pair 121 us apart at the far end (an exact path: one-way delays 10.000 and
# 10.119 ms, difference 119 us), the second 130 us apart (difference 128 us), the lone one.
RCV = _frame(
    [
        (0.010000, "10.77.0.1", 5001, 0, 1448),
        (0.010121, "10.77.0.1", 5001, 1448, 1448),
        (0.011000, "10.77.0.1", 5001, 2896, 1448),
        (0.011130, "10.77.0.1", 5001, 4344, 1448),
        (0.012002, "10.77.0.1", 5001, 5792, 1448),
    ]
)


def test_pair_noise_is_the_one_way_delay_difference_within_each_pair():
    dd = tt.pair_noise(SND, RCV)
    assert sorted(dd.round(6)) == pytest.approx([119.0, 128.0])


def test_pacing_counts_the_back_to_back_gaps():
    p = tt.pacing(SND)
    assert p["segments"].tolist() == [5]
    # gaps 2, 998, 2, 1000 us: two of four below 20 us, median (2 + 998) / 2 = 500 us
    assert p["gaps < 20 us"].tolist() == [0.5]
    assert p["median gap us"].tolist() == pytest.approx([500.0])
