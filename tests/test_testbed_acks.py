"""scripts/testbed_acks.py on a hand-built capture (already parsed: its `read` gives these
frames): segments per ACK and the ACK delay, worked by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import testbed_acks as ta

S, R = "10.77.0.1", "10.77.128.1"


def _frames(rows):
    return pd.DataFrame(rows, columns=ta.COLS)


# One flow seen at the receiver: data at 0, 0.1, 1.1 and 1.2 ms; the receiver's ACKs at 0.05 ms
# (the first: dropped), 2.2 ms with a SACK block (header 44 bytes: it covers the segments of
# 0.1, 1.1 and 1.2 ms, 2.1 ms after the first of them), 2.3 ms without (32 bytes, timestamps
# only; nothing arrived since). A segment of another flow and an ACK to it do not count.
FRAMES = _frames(
    [
        (0.000000, S, R, 40000, 5001, 1448, 32),
        (0.000050, R, S, 5001, 40000, 0, 32),
        (0.000100, S, R, 40000, 5001, 1448, 32),
        (0.001100, S, R, 40000, 5001, 1448, 32),
        (0.001150, "10.77.0.2", R, 40001, 5001, 1448, 32),
        (0.001160, R, "10.77.0.2", 5001, 40001, 0, 44),
        (0.001200, S, R, 40000, 5001, 1448, 32),
        (0.002200, R, S, 5001, 40000, 0, 44),
        (0.002300, R, S, 5001, 40000, 0, 32),
    ]
)


def test_segments_and_delay_of_each_ack():
    a = ta.acks(FRAMES)
    assert a.flow.tolist() == [f"{S}:40000"] * 2
    assert a.sack.tolist() == [True, False]
    assert a.segs.tolist() == [3, 0]
    assert a.delay_us.iloc[0] == pytest.approx(2100.0)
    assert np.isnan(a.delay_us.iloc[1])


def test_per_flow_summary():
    p = ta.per_flow(ta.acks(FRAMES))
    row = p.iloc[0]
    assert row["acks"] == 2
    assert row["sack share"] == pytest.approx(0.5)
    assert row["segs/ack sack"] == pytest.approx(3.0)
    assert row["segs/ack plain"] == pytest.approx(0.0)
    assert row["acks > 2 segs"] == pytest.approx(0.5)
    assert row["sack delay p50 us"] == pytest.approx(2100.0)
