"""The simulator against the dropping-function queue (seed 002 Theorem 1).

An open-loop Poisson source with exponentially distributed packet sizes feeds the ``dropfn`` AQM on
a single bottleneck: the queue is then exactly the birth-death chain of :mod:`.dropfn` with arrival
rate lambda, service rate mu = C / (8 E[size]) and admission probability 1 - d(n) in state n (n
counts the packet in service too: ``dropfn``'s ``queue_count = "system"``). The buffer is set far
above where d reaches 1, so the infinite-buffer solution applies.

Statistical error: the simulated means are time averages of a strongly autocorrelated process, so
their standard errors come from batch means (the measurement window cut into ``batches`` equal
parts; the spread of the batch means over sqrt(batches)), not from the sample count.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from aqmlab.theory import dropfn as theory
from aqmlab.theory import families

RATE = "100Mbps"
RATE_BPS = 100e6
PKT_BYTES = 1000.0


def scenario_for(family: str, scale: float, load: float, duration_s: float, seed: int) -> dict:
    """The scenario: one Poisson source at ``load``, the bottleneck guarded by ``dropfn``."""
    warm = max(5.0, duration_s * 0.05)
    return {
        "name": f"theory-{family}-{load:g}",
        "duration": f"{duration_s}s",
        "warmup": f"{warm}s",
        "seed": seed,
        "topology": {
            "type": "single-bottleneck",
            "rate": RATE,
            "delay": "1ms",
            "buffer": 100_000,
            "access_rate": "1000Gbps",
        },
        "aqm": {"name": "dropfn", "family": family, "scale": scale},
        "flows": [
            {
                "type": "poisson",
                "load": load,
                "packet_size": f"{PKT_BYTES:g}B",
                "size_distribution": "exponential",
                "rtt": "4ms",
            }
        ],
        "output": {"sample_interval": "1ms", "max_samples": 20_000_000},
    }


def _batch_se(t: np.ndarray, x: np.ndarray, t0: float, batches: int) -> tuple[float, float]:
    keep = t >= t0
    xs = x[keep]
    parts = np.array_split(xs, batches)
    means = np.array([p.mean() for p in parts if len(p)])
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(len(means)))


def sim_vs_theory(
    family: str,
    load: float,
    duration_s: float,
    *,
    target_mean: float = 50.0,
    calibration_load: float = 1.0,
    seed: int = 1,
    batches: int = 20,
) -> dict[str, Any]:
    """Simulates ``family`` (its scale calibrated so the theoretical mean is ``target_mean`` at
    ``calibration_load``, as seed 002 did) at ``load`` and returns the theoretical and simulated
    mean number in the system, loss ratio and utilisation with the simulation's standard errors."""
    from aqmlab.running import runner

    scale = theory.calibrate(family, target_mean, calibration_load)
    th = theory.analyze(family, load, None, scale=scale)
    res = runner.run(scenario_for(family, scale, load, duration_s, seed))
    b = res.bottleneck
    q = res.queue
    warm = res.summary["run"]["warmup_s"]
    # Number in system = waiting + the one in transmission; the link is busy whenever the system
    # is non-empty, so its time average is queue_mean + utilisation (exact, from the simulator's
    # integrals). Its standard error: batch means of the sampled waiting queue.
    mean_wait, se_wait = _batch_se(q["t_s"].to_numpy(), q["queue_pkts"].to_numpy(), warm, batches)
    sim_mean = b["queue_mean_pkts"] + b["utilisation"]
    # Loss ratio's standard error from the drop counts per batch is not exported per batch; use
    # the drop-probability series d(n(t)) sampled at the same instants (PASTA: the loss ratio is
    # the time average of d(n)), whose batch means estimate the same quantity. The sampled series
    # shows waiting packets only, so n is taken as waiting + 1 when any wait (approximate only
    # when the server is busy with nobody waiting, where d is smallest).
    table = families.table(family, scale, 100_000)
    n_sys = q["queue_pkts"].to_numpy().astype(int) + (q["queue_pkts"].to_numpy() > 0)
    dn = table[np.minimum(n_sys, len(table) - 1)]
    _, se_loss = _batch_se(q["t_s"].to_numpy(), dn, warm, batches)
    return {
        "family": family,
        "scale": scale,
        "load": load,
        "duration_s": duration_s,
        "theory_mean": th.mean_system,
        "sim_mean": sim_mean,
        "se_mean": se_wait,
        "theory_loss": th.loss_ratio,
        "sim_loss": b["loss_ratio"],
        "se_loss": se_loss,
        "theory_util": th.utilization,
        "sim_util": b["utilisation"],
        "packets": b["arrived"],
        "sim_waiting_mean_from_samples": mean_wait,
    }
