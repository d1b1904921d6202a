"""The fluid model against the packet simulator (issue 6, point 4) on a smaller version of seed
001's single bottleneck, in the regime the fluid model is made for: 25 Reno flows instead of 250
(20 Mb/s, 1000-byte packets, base RTT 80 ms, 600-packet buffer), so that W0 = 16 packets and
p0 = 0.0078 rather than W0 = 1.6 and p0 = 0.78 (aqmlab.theory.fluid_vs_sim and docs/theory.md
section 8 compare the full setting). Law: PI with seed 001's gains, q_ref = 200.

PI integrates the queue error, so both models must hold the queue at q_ref on average: the fluid
trajectory converges to q0 = q_ref, and the simulator's time-average queue after warm-up must be
within a tolerance of it. The parameters of both sides come from the same scenario file through
the script's own mapping (scenarios/seed001/single-bottleneck-pi.toml), so the test also checks
that mapping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.theory import fluid as fl
from aqmlab.theory import fluid_vs_sim as mod

ROOT = Path(__file__).resolve().parents[1]
N_SMALL = 25
DURATION_S, WARMUP_S = 60.0, 20.0
SEEDS = (1, 2, 3)
# Tolerance on each seed's time-average queue over [20, 60] s. Measured (seeds 1-10, this exact
# setting): per-seed means 197.5-202.4 packets, mean 199.9, standard deviation across seeds 1.8
# packets (the 10-ms queue samples themselves have a std of 28-38 packets; the 40-s average
# smooths them). 10 packets (5 % of q_ref) is more than 5 of those standard deviations, so the
# check does not trip on the seed, yet a controller that misses its target, a wrong q_ref or a
# mis-converted capacity / RTT on either side moves the mean by far more than that.
TOLERANCE_PKTS = 10.0


@pytest.fixture(scope="module")
def small():
    """The seed-001 PI scenario shrunk to 25 flows and 60 s, and its fluid counterpart."""
    base = aqmlab.load_scenario(mod.SCEN / "single-bottleneck-pi.toml")
    sc = mod.shrink(base, N_SMALL, DURATION_S, WARMUP_S)
    net, _ = mod.fluid_network(sc)
    law = mod.fluid_law(dict(sc.aqm))
    return sc, net, law


def test_the_mapping_gives_the_stated_network(small):
    _, net, law = small
    assert (net.n_flows, net.capacity, net.rtt, net.buffer) == (N_SMALL, 2500.0, 0.08, 600.0)
    assert isinstance(law, fl.Pi)
    assert (law.a, law.b, law.q_ref, law.sampling_hz) == (1.822e-5, 1.816e-5, 200.0, 170.0)


def test_fluid_trajectory_converges_to_q0(small):
    _, net, law = small
    eq = fl.equilibrium(net, law)
    assert eq.q0 == 200.0 and eq.feasible
    assert eq.p0 == pytest.approx(2 / 16**2)  # W0 = R0 C / N = 0.16 * 2500 / 25
    tr = fl.simulate(net, law, DURATION_S)
    last = tr.t >= DURATION_S - 10
    # measured: |q - q0| <= 0.002 packets and p within 1e-6 of p0 over the last 10 s. The start
    # (q = 0, W = 1) is far from q0 and the queue overshoots it (276 packets at t = 5 s), so the
    # run does converge rather than sit there from the outset.
    assert tr.q.max() > 1.2 * eq.q0
    assert np.max(np.abs(tr.q[last] - eq.q0)) < 1.0
    assert np.max(np.abs(tr.p[last] - eq.p0)) < 0.01 * eq.p0
    assert np.max(np.abs(tr.w[last] - eq.w0)) < 0.01 * eq.w0


@pytest.mark.parametrize("seed", SEEDS)
def test_simulated_queue_averages_to_the_fluid_equilibrium(small, seed):
    sc, net, law = small
    q0 = fl.equilibrium(net, law).q0
    res = aqmlab.run(sc, seed=seed)
    df = res.queue
    q = df["queue_pkts"].to_numpy()[df["t_s"].to_numpy() >= WARMUP_S]
    assert res.bottleneck["utilisation"] > 0.99  # the link stays busy: the PI has a queue to act on
    assert abs(q.mean() - q0) < TOLERANCE_PKTS, (q.mean(), q0)
    # the simulator's own time-weighted summary must say the same (same window)
    assert res.bottleneck["queue_mean_pkts"] == pytest.approx(q.mean(), abs=2.0)


def _with_rate(rate: object) -> aqmlab.Scenario:
    data = aqmlab.load_scenario(mod.SCEN / "single-bottleneck-pi.toml").model_dump()
    data["topology"]["rate"] = rate
    return aqmlab.Scenario.model_validate(data)


def test_a_rate_schedule_is_one_line_naming_the_field():
    """The fluid model has one constant C: a rate schedule is refused by name, not by a
    TypeError from float() (the old behaviour)."""
    sc = _with_rate([{"at": "0s", "rate": "20Mbps"}, {"at": "10s", "rate": "10Mbps"}])
    with pytest.raises(InputError, match=r"topology\.rate must be one constant rate") as e:
        mod.fluid_network(sc)
    assert "rate schedule" in str(e.value) and "\n" not in str(e.value)
    # A constant rate written as a one-step list is still a schedule in the file: refused too.
    with pytest.raises(InputError, match="rate schedule"):
        mod.fluid_network(_with_rate([{"at": "0s", "rate": "20Mbps"}]))
    # The plain rate gives C = 20 Mb/s / (8 x 1000 B).
    assert mod.fluid_network(_with_rate("20Mbps"))[0].capacity == 2500.0


def test_the_script_reports_bad_input_on_one_line_with_exit_code_2(tmp_path, monkeypatch, capsys):
    """python -m aqmlab.theory.fluid_vs_sim with a scenario the model cannot take: exit code 2,
    one line on stderr naming the field, no traceback, no figure or doc written."""
    text = (mod.SCEN / "single-bottleneck-pi.toml").read_text()
    bad = text.replace(
        'rate = "20Mbps"',
        'rate = [{ at = "0s", rate = "20Mbps" }, { at = "100s", rate = "10Mbps" }]',
    )
    assert bad != text
    (tmp_path / "single-bottleneck-pi.toml").write_text(bad)
    monkeypatch.setattr(mod, "SCEN", tmp_path)
    monkeypatch.setattr(mod, "IMG", tmp_path / "img")
    monkeypatch.setattr(mod, "DOC", tmp_path / "theory.md")
    assert mod.main(["--laws", "pi", "--seeds", "1", "--no-doc"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "topology.rate" in err
    assert "Traceback" not in err
    assert not (tmp_path / "img").exists() and not (tmp_path / "theory.md").exists()
