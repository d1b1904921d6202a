"""Seed 001 (LaQ), Experiments 2-9: the queue statistics behind the claims, worked by hand on
made-up series, and the claims on hand-made points that follow the paper's text."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from aqmlab.reproduce import core, laq_dynamics

EXP = core.load_experiment("laq")


def test_queue_statistics_of_a_made_up_series_by_hand():
    # 100 s at 10 ms: 150 packets up to 50 s, 250 from 50 to 70 s, 200 after.
    t = np.arange(0.0, 100.0, 0.01)
    q = np.where(t < 50, 150.0, np.where(t < 70, 250.0, 200.0))
    s = laq_dynamics.link_stats(t, q, 200.0, 0.5)
    assert s["w_20_50"] == pytest.approx(150.0)
    assert s["w_55_70"] == pytest.approx(250.0)
    assert s["w_75_100"] == pytest.approx(200.0)
    assert s["mean_half"] == pytest.approx((20 * 250 + 30 * 200) / 50)
    # RMS distance from 200 over [10, 100): 40 s at 50 off, 20 s at 50 off, 30 s on target
    assert s["rms_dev"] == pytest.approx(math.sqrt((40 * 50**2 + 20 * 50**2) / 90), rel=1e-3)
    # std over [50, 80): 20 s at 250 and 10 s at 200: sqrt(p (1 - p)) x 50 with p = 2/3
    assert s["std_50_80"] == pytest.approx(50 * math.sqrt(2 / 3 * 1 / 3), rel=1e-3)
    assert s["peak"] == pytest.approx(250.0)
    assert s["settle"] == pytest.approx(70.0, abs=1.01)  # settles on 200 once the flows leave
    assert len(pd.read_json(pd.io.common.StringIO(s["trace"]))) == 200  # 0.5 s means


def test_a_window_the_run_does_not_reach_is_nan():
    t = np.arange(0.0, 40.0, 0.01)
    s = laq_dynamics.link_stats(t, np.full_like(t, 200.0), 200.0, 0.5)
    assert math.isnan(s["w_55_70"]) and math.isnan(s["std_50_80"])
    assert s["w_20_50"] != s["w_20_50"]  # 40 s run: [20, 50) is not covered


def _points(over: dict | None = None) -> pd.DataFrame:
    """Means per experiment as the paper's text describes them (every claim holds)."""
    over = over or {}
    base = {m: math.nan for m in laq_dynamics.METRICS}
    rows = []

    def add(exp, case, aqm, q_ref=200.0, **kw):
        r = {"experiment": exp, "case": case, "aqm": aqm, "q_ref": q_ref, "seeds": 1, **base}
        for k, v in kw.items():
            r[f"q1_{k}" if not k.startswith("q2_") else k] = v
        r.update(over.get((exp, case, aqm), {}))
        rows.append(r)

    add("exp2", "c", "laq", w_20_50=200, w_55_70=205, w_75_100=198, std_50_80=8)
    add("exp2", "c", "ared", std_50_80=20)
    add("exp2", "c", "ared-ns2-bytes", std_50_80=15)
    add("exp2", "c", "rem", std_50_80=60)
    add("exp2", "c", "pi", std_50_80=70)
    add("exp3", "c", "laq", settle=6.0, mean_half=200)
    add("exp3", "c", "ared", settle=12.0, mean_half=105)
    add("exp3", "c", "ared-ns2-bytes", settle=12.0, mean_half=105)
    add("exp3", "c", "rem", settle=45.0, mean_half=200)
    add("exp3", "c", "pi", settle=math.nan, mean_half=200)
    for a, dev, st in (("laq", 10, 5.0), ("ared", 90, 20.0), ("rem", 40, 35.0), ("pi", 50, 60.0)):
        add(
            "exp4",
            "c",
            a,
            mean_half=200,
            rms_dev=dev,
            settle=st,
            q2_mean_half=200,
            q2_rms_dev=dev - 2,
            q2_settle=st,
        )
    for n in (150, 250, 500, 1000):
        add("exp5", f"N = {n}", "laq", mean_half=200 + n / 100, settle=3.0)
    add("exp6", "2", "laq", mean_half=190, peak=260, settle=3.0)
    add("exp6", "50", "laq", mean_half=201, peak=230, settle=3.0)
    add("exp7", "80", "laq", mean_half=200, settle=2.0, std_4s=4.0)
    add("exp7", "160", "laq", mean_half=199, settle=3.0, std_4s=6.0)
    add("exp8", "100", "laq", q_ref=100.0, mean_half=101, peak=120, settle=2.0)
    add("exp8", "300", "laq", q_ref=300.0, mean_half=298, peak=320, settle=2.0)
    add("exp9", "a", "laq", mean_half=205, settle=20.0)
    add("exp9", "b", "laq", mean_half=196, settle=8.0)
    return pd.DataFrame(rows)


def test_every_claim_holds_on_points_that_follow_the_papers_text():
    c = pd.DataFrame(laq_dynamics.claims(_points(), EXP))
    assert set(c["experiment"]) == {f"exp{i}" for i in range(2, 10)}
    assert len(c) == 21
    assert c["holds"].all(), c[~c["holds"]][["claim", "evidence"]].to_string()
    v = core.claim_verdicts(c)
    assert set(v["verdict"]) == {"reproduced"}


@pytest.mark.parametrize(
    ("point", "value", "claim"),
    [
        (("exp2", "c", "laq"), {"q1_w_55_70": 260.0}, "before, while and after"),
        (("exp2", "c", "ared"), {"q1_std_50_80": 65.0}, "fluctuate much more"),
        (("exp3", "c", "laq"), {"q1_settle": 10.0}, "about 6 s"),
        (("exp3", "c", "ared"), {"q1_mean_half": 207.0}, "near 100 packets"),
        (("exp3", "c", "pi"), {"q1_settle": 25.0}, "more than 30 s"),
        (("exp4", "c", "rem"), {"q2_rms_dev": 5.0}, "closer to the target"),
        (("exp4", "c", "laq"), {"q2_rms_dev": 30.0}, "R4 stabilises"),
        (("exp5", "N = 1000", "laq"), {"q1_mean_half": 260.0}, "N = 150-1000"),
        (("exp6", "2", "laq"), {"q1_peak": 310.0}, "at both capacities"),
        (("exp7", "160", "laq"), {"q1_settle": 1.0}, "slightly later"),
        (("exp7", "160", "laq"), {"q1_std_4s": 20.0}, "almost the same"),
        (("exp9", "b", "laq"), {"q1_settle": math.nan}, "settles in both"),
    ],
)
def test_a_claim_fails_when_one_number_contradicts_it(point, value, claim):
    c = pd.DataFrame(laq_dynamics.claims(_points({point: value}), EXP))
    row = c[c["claim"].str.contains(claim)]
    assert len(row) == 1 and not row["holds"].iloc[0], row.to_string()
    assert c["holds"].sum() == len(c) - 1


def test_experiments_change_only_what_the_paper_names():
    base = core.load_scenario_dict("laq", EXP["scenario"])
    cases = {e: laq_dynamics._cases(EXP, e, base) for e in EXP["dynamics"]["full"]["experiments"]}
    (_, _, j), *_ = cases["exp2"]
    assert [f["count"] for f in j["flows"]] == [250, 100]
    assert (j["flows"][1]["start"], j["flows"][1]["stop"]) == ("50s", "70s")
    multi = cases["exp4"][0][2]
    assert multi["topology"]["hops"] == 5 and multi["topology"]["rate"] == "20Mbps"
    assert [f.get("src") for f in multi["flows"]] == [None, "cross2.src", "cross4.src"]
    assert all(f["count"] == 200 for f in multi["flows"])
    # set-1 crosses five 20 ms hops and two 10 ms access links each way: RTT 240 ms; set-2 and
    # set-3 one hop: 80 ms (s. 4.1.4)
    assert 2 * (5 * 20 + 2 * 10) == 240 and 2 * (20 + 2 * 10) == 80
    assert [c[2]["flows"][0]["count"] for c in cases["exp5"]] == [150, 250, 500, 1000]
    assert [c[2]["topology"]["rate"] for c in cases["exp6"]] == ["2Mbps", "50Mbps"]
    assert [c[2]["flows"][0]["rtt"] for c in cases["exp7"]] == ["80ms", "160ms"]
    assert [c[2]["aqm"]["q_ref"] for c in cases["exp8"]] == [100, 300]
    a, b = (c[2] for c in cases["exp9"])
    assert a["flows"][1]["start_spread"] == "50s" and a["flows"][1]["count"] == 100
    assert [f["rtt"] for f in b["flows"]] == ["80ms", "120ms", "160ms"]
    for e, cs in cases.items():  # every algorithm keeps Experiment 1's parameters
        for _, v, sc in cs:
            if e != "exp8":
                assert sc["aqm"] == EXP["aqm"][v]


def test_ns2_output_with_a_sampled_queue_is_parsed(monkeypatch):
    import subprocess
    from types import SimpleNamespace

    text = "q 0 0\nq 0.01 3\nq 0.02 7\nmean_queue=3.5 loss=1.0\n"
    monkeypatch.setattr(
        subprocess, "run", lambda *a, **k: SimpleNamespace(returncode=0, stdout=text, stderr="")
    )
    out = core.run_ns2("x.tcl", ["ARED", "1"])
    assert out["mean_queue"] == 3.5 and out["loss"] == 1.0
    assert out["_t"] == [0.0, 0.01, 0.02] and out["_q"] == [0.0, 3.0, 7.0]


def test_ns2_claims_judge_ared_rem_and_pi_alone():
    p = _points()
    p = p[p["aqm"].isin(["ared", "rem", "pi"]) & p["experiment"].isin(["exp2", "exp3"])]
    got = laq_dynamics.ns2_claims(p, EXP)
    assert set(got) == {
        "PI's and REM's queues fluctuate much more during the change than ARED's and LaQ's",
        "ARED holds its queue near 100 packets, not at the 200 target",
        "ARED settles in about 12 s",
        "REM and PI take more than 30 s to settle",
    }
    assert all(h for h, _ in got.values())
    p.loc[p["aqm"] == "ared", "q1_mean_half"] = 220.0
    assert not laq_dynamics.ns2_claims(p, EXP)[
        "ARED holds its queue near 100 packets, not at the 200 target"
    ][0]
