"""The simulator reproduces the dropping-function queue (seed 002 Theorem 1): an open-loop
Poisson source with exponential sizes through the ``dropfn`` AQM, three families, loads 0.9, 1.0,
1.2. CI runs 400 s per case (about 5 million packets) and allows 4 batch-means standard errors or
2%, whichever is larger; the long version (scripts/theory_vs_sim.py, 3000 s per case) shows the
2% agreement with its standard errors in docs/theory.md."""

from __future__ import annotations

import pytest

from aqmlab.theory.validate import sim_vs_theory


@pytest.mark.parametrize("family", ["linear", "exponential", "cubic"])
@pytest.mark.parametrize("load", [0.9, 1.0, 1.2])
def test_simulated_queue_matches_theorem_1(family, load):
    r = sim_vs_theory(family, load, 400.0, seed=11)
    tol_mean = max(0.02 * r["theory_mean"], 4 * r["se_mean"])
    assert abs(r["sim_mean"] - r["theory_mean"]) <= tol_mean, r
    tol_loss = max(0.02 * r["theory_loss"], 4 * r["se_loss"], 1e-4)
    assert abs(r["sim_loss"] - r["theory_loss"]) <= tol_loss, r
    assert abs(r["sim_util"] - r["theory_util"]) <= 0.01, r
