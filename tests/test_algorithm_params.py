"""Bad parameters of every algorithm family (issues 3 and 4) reach the user as one line naming
`aqm.<parameter>`, with exit code 2, through the real CLI; good defaults run."""

from __future__ import annotations

import pytest

from aqmlab.scenario import algorithms
from conftest import SMALL, aqmlab_cli

AQM_BLOCK = '[aqm]\nname = "red"\nmin_th = 20\nmax_th = 60\n'


def _with_aqm(body: str) -> str:
    assert AQM_BLOCK in SMALL
    return SMALL.replace(AQM_BLOCK, "[aqm]\n" + body + "\n")


BAD = [
    # issue 3
    ('name = "lindrop"\nn_pu = 1.0', "aqm.n_pu"),
    ('name = "lindrop"\nn_pd = 1.0', "aqm.n_pd"),
    ('name = "lindrop"\navg_min = 30\navg_max = 30', "aqm.avg_max"),
    ('name = "lindrop"\navg_max = 100', "aqm.avg_max"),  # buffer is 100 packets
    ('name = "laq"\nm = 0', "aqm.m"),
    ('name = "apace"\nm = 0', "aqm.m"),
    ('name = "apace"\nalpha = 1.0', "aqm.alpha"),
    ('name = "apace"\nalpha = -0.1', "aqm.alpha"),
    ('name = "apace"\nmax_p = 0', "aqm.max_p"),
    ('name = "apace"\nmax_p = 1.5', "aqm.max_p"),
    ('name = "dropfn"\ntable = [0.0, 0.5, 1.2]', "aqm.table"),
    ('name = "dropfn"\ntable = [0.0, -0.1]', "aqm.table"),
    ('name = "modred"\nmin_th_out = 20\nmax_th_out = 10', "aqm."),
    # issue 4
    ('name = "pi"\na = -0.001', "aqm.a"),
    ('name = "pi"\nq_ref = 500', "aqm.q_ref"),
    ('name = "rem"\nphi = 0.9', "aqm.phi"),
    ('name = "rem"\ngamma = -1', "aqm.gamma"),
    ('name = "avq"\ngamma = 0', "aqm.gamma"),
    ('name = "avq"\ngamma = 1.2', "aqm.gamma"),
    ('name = "ared"\nbeta = 1.5', "aqm.beta"),
    ('name = "anaqm"\ngain = -1', "aqm.gain"),
    ('name = "paqm"\norder = 0', "aqm.order"),
    ('name = "blue"\nd1 = -0.1', "aqm.d1"),
    ('name = "sred"\np_max = 1.5', "aqm.p_max"),
    ('name = "codel"\ntarget = "200ms"', "aqm.target"),
    ('name = "codel"\ntarget = 5', "aqm.target: 5 has no unit"),
    ('name = "pie"\nalpha = -0.125', "aqm.alpha"),
    ('name = "fq_codel"\nquantum = 0', "aqm.quantum"),
    ('name = "fq_codel"\ntarget = "200ms"', "aqm.target"),
    # issue 21: fq and its per-queue AQM's sub-table, fq_pie, ce_threshold
    ('name = "fq"\n[aqm.queue]\ntarget = "-5ms"', "aqm.queue.target"),
    ('name = "fq"\n[aqm.queue]\nbogus = 1', "aqm.queue.bogus"),
    ('name = "fq"\nqueue_aqm = "pie"\n[aqm.queue]\ninterval = "100ms"', "aqm.queue.interval"),
    ('name = "fq"\nqueue_aqm = "fq_codel"', "aqm.queue_aqm"),
    ('name = "fq"\nqueue_aqm = "nope"', "aqm.queue_aqm"),
    ('name = "fq"\noverflow = "head"', "aqm.overflow"),
    ('name = "fq"\nqueue = 3', "aqm.queue"),
    ('name = "fq_pie"\necn_prob = 1.5', "aqm.ecn_prob"),
    ('name = "fq_pie"\ntupdate = "0ms"', "aqm.tupdate"),
    ('name = "fq_pie"\nflows = 0', "aqm.flows"),
    ('name = "fq_cobalt"\nincrement = 1.5', "aqm.increment"),
    ('name = "fq_cobalt"\ntarget = "200ms"', "aqm.target"),
    ('name = "fq_cobalt"\nflows = 0', "aqm.flows"),
    ('name = "fq_cobalt"\nqueue_aqm = "codel"', "aqm.queue_aqm"),
    ('name = "fq_cobalt"\nblue_threshold = 0.4', "aqm.blue_threshold: 0.4 has no unit"),
    ('name = "fq_codel"\nce_threshold = "-1ms"', "aqm.ce_threshold"),
    (
        'name = "fq_codel"\nce_threshold = "1ms"\nce_threshold_selector = 2\nce_threshold_mask = 1',
        "aqm.ce_threshold_selector",
    ),
    ('name = "codel"\nce_threshold_mask = 300', "aqm.ce_threshold_mask"),
]


@pytest.mark.parametrize(("body", "expect"), BAD, ids=[b[0].replace("\n", " ") for b in BAD])
def test_bad_algorithm_parameter_is_one_line(tmp_path, body, expect):
    sc = tmp_path / "s.toml"
    sc.write_text(_with_aqm(body))
    r = aqmlab_cli("run", str(sc), "--out", str(tmp_path / "o"))
    assert r.returncode == 2, (body, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], r.stderr
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize("name", algorithms.names())
def test_every_algorithm_runs_by_name_with_its_defaults(name):
    import tomllib

    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario

    data = tomllib.loads(SMALL)
    data["aqm"] = {"name": name}
    if name == "dropfn":
        data["aqm"] = {"name": "dropfn", "family": "linear", "scale": 200}
    data["duration"] = "4s"
    data["warmup"] = "1s"
    res = runner.run(scenario.from_dict(data))
    b = res.bottleneck
    assert b["aqm"] == name
    assert 0 < b["utilisation"] <= 1
    assert b["queue_max_pkts"] <= 100
