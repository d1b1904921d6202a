"""`aqmlab reproduce`: the paper's numbers as transcribed, the ranking rule, the confidence
intervals, and a quick reproduction end to end (resumed from its cache)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from aqmlab.reproduce import core


def test_modred_tables_transcribed_whole_and_spot_checked_against_the_paper():
    pub = core.load_published("modred")
    # Tables 2 and 3: 3 node counts x 4 loads x 3 buffers x 3 algorithms each.
    assert pub.groupby("table").size().to_dict() == {"Table 2": 108, "Table 3": 108}

    def cell(table, nodes, load, buf, aqm):
        m = pub[
            (pub["table"] == table)
            & (pub["nodes"] == nodes)
            & (pub["load"] == load)
            & (pub["buffer"] == buf)
            & (pub["aqm"] == aqm)
        ]
        assert len(m) == 1
        return float(m["value"].iloc[0])

    # Read off the paper's Tables 2 and 3 by hand (seed 004, s. 4).
    assert cell("Table 2", 16, 0.25, 25, "droptail") == 0.36
    assert cell("Table 2", 64, 1.0, 250, "modred") == 0.78
    assert cell("Table 2", 32, 0.75, 100, "red") == 4.01
    assert cell("Table 3", 64, 0.75, 100, "red") == 83.7
    assert cell("Table 3", 16, 0.25, 100, "modred") == 99.6
    assert cell("Table 3", 64, 1.0, 25, "droptail") == 93.1


def test_ranking_rule_judges_only_the_pairs_the_paper_orders():
    paper = {"droptail": 1.0, "red": 2.0, "modred": 1.0}  # droptail and modred tie
    assert core.rank_agreement(paper, {"droptail": 0.5, "red": 3.0, "modred": 0.9}, "lower")
    assert core.rank_agreement(paper, {"droptail": 0.9, "red": 3.0, "modred": 0.5}, "lower")
    assert not core.rank_agreement(paper, {"droptail": 0.5, "red": 0.4, "modred": 0.9}, "lower")
    # a tie of ours where the paper orders strictly does not reproduce the order
    assert not core.rank_agreement({"a": 1.0, "b": 2.0}, {"a": 5.0, "b": 5.0}, "lower")
    assert core.rank_agreement({"a": 1.0, "b": 2.0}, {"a": 7.0, "b": 9.0}, "higher")
    assert not core.rank_agreement({"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 1.0}, "higher")
    # with a 1% tie band: 99.96 vs 99.98 differ by 0.02% and are not judged; 90 vs 99 are
    pub = {"a": 99.96, "b": 99.98, "c": 90.0}
    assert not core.rank_agreement(pub, {"a": 99.9, "b": 99.8, "c": 80.0}, "higher")
    assert core.rank_agreement(pub, {"a": 99.9, "b": 99.8, "c": 80.0}, "higher", tie=0.01)
    assert not core.rank_agreement(pub, {"a": 99.9, "b": 99.8, "c": 99.95}, "higher", tie=0.01)


def _groups(order: str) -> dict[str, int]:
    """Each name's place in an order string ("a > b = c": a 0, b 1, c 1)."""
    out, k = {}, 0
    for tok in order.split():
        if tok == ">":
            k += 1
        elif tok != "=":
            out[tok] = k
    return out


def test_ranking_shows_our_ties_and_holds_reads_off_the_shown_orders():
    # seed 004, 16 nodes, load 0.5, buffer 100 (issue 19): neither DropTail nor ModRED loses a
    # packet in ours, so ours is "droptail = modred > red", and the paper's strict
    # "droptail > modred" does not hold; shown as a strict order before, it read like the paper's.
    t = pd.DataFrame(
        {
            "table": "Table 2",
            "row": 1,
            "metric": "loss_rate",
            "aqm": ["droptail", "modred", "red"],
            "paper": [0.01, 0.05, 0.2],
            "ours": [0.0, 0.0, 0.3],
        }
    )
    r = core.ranking("loss_rate", t, ["row"], "aqm", "lower").iloc[0]
    assert r["paper_order"] == "droptail > modred > red"
    assert r["our_order"] == "droptail = modred > red"
    assert not r["holds"]
    assert core.order_text({"a": 1.0, "b": 1.0, "c": 1.0}, "higher") == "a = b = c"
    assert core.order_text({"a": 99.0, "b": 100.0}, "higher", tie=0.02) == "b = a"
    # every outcome: holds exactly when each pair the paper's string separates is separated the
    # same way in ours (values drawn from a few integers, so that ties are common)
    rng = np.random.default_rng(7)
    names = ["a", "b", "c", "d"]
    for _ in range(2000):
        paper = dict(zip(names, rng.integers(0, 3, 4).astype(float), strict=True))
        ours = dict(zip(names, rng.integers(0, 3, 4).astype(float), strict=True))
        better = "lower" if rng.random() < 0.5 else "higher"
        gp = _groups(core.order_text(paper, better))
        go = _groups(core.order_text(ours, better))
        shown = all(
            gp[x] == gp[y] or ((gp[x] < gp[y]) == (go[x] < go[y]) and go[x] != go[y])
            for x in names
            for y in names
            if x < y
        )
        assert core.rank_agreement(paper, ours, better) == shown, (paper, ours, better)


def test_claim_verdicts_count_untestable_claims_apart():
    c = pd.DataFrame(
        {
            "table": ["Fig. 5", "Fig. 5", "Fig. 7", "Fig. 7", "Fig. 8"],
            "holds": [True, False, True, True, False],
            "testable": [True, False, True, False, False],
        }
    )
    v = core.claim_verdicts(c).set_index("table")
    assert v.loc["Fig. 5", "verdict"] == "reproduced"  # its one testable claim holds
    assert v.loc["Fig. 5", "rows_ranking_holds"] == "1/1 (1 not testable)"
    assert v.loc["Fig. 7", "verdict"] == "reproduced"
    assert v.loc["Fig. 8", "verdict"] == "not testable"
    assert core.claim_verdict(False, testable=False) == "not testable"
    assert core.claim_verdict(False) == "does not hold"


def test_confidence_interval_is_students_t_over_seeds():
    runs = pd.DataFrame({"k": ["x"] * 3 + ["y"], "m": [1.0, 2.0, 3.0, 5.0]})
    agg = core.aggregate(runs, ["k"], ["m"]).set_index("k")
    assert agg.loc["x", "m"] == pytest.approx(2.0)
    # t(0.975, 2) = 4.302653; s = 1; n = 3
    assert agg.loc["x", "m_ci"] == pytest.approx(4.302653 / 3**0.5, rel=1e-5)
    assert agg.loc["y", "m_ci"] == 0.0 and agg.loc["y", "seeds"] == 1


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_every_seed_paper_is_plugged_in():
    from aqmlab.reproduce import PAPERS

    # the five seed papers (shared/seeds/README.md): 000 lindrop ... 004 modred
    assert set(PAPERS) == {"lindrop", "laq", "dropfn", "apace", "modred"}
    assert core.check_papers(["all"], PAPERS) == list(PAPERS)


def test_unknown_paper_is_one_line_exit_2(tmp_path):
    p = _cli("reproduce", "lindrop-typo", "--out", str(tmp_path))
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "paper" in p.stderr and "modred" in p.stderr
    assert not any(tmp_path.iterdir())


def test_laq_routh_table_from_the_fluid_model_against_table3():
    from aqmlab.reproduce import laq

    t = laq.routh_cells().set_index("metric")
    # Example 1 by hand (Eqs 19-21, 23): a2 = 12.5 + 31.25 + 25 - 1 = 67.75 (printed 68),
    # a1 = 390.625 - 12.5 - 31.25 - 50 = 296.875 (printed 296.625), a0 = 625 - 390.625 = 234.375,
    # L1 = (a2 a1 - a0) / a2 = 293.416 (printed 293.178, from the rounded a2 and a1).
    assert t.loc["routh_s2_col1", "ours"] == pytest.approx(67.75)
    assert t.loc["routh_s3_col2", "ours"] == pytest.approx(296.875)
    assert t.loc["routh_s0_col1", "ours"] == pytest.approx(234.375)
    assert t.loc["routh_s1_col1", "ours"] == pytest.approx((67.75 * 296.875 - 234.375) / 67.75)
    assert t.loc["routh_s1_col1", "paper"] == 293.178
    assert bool(t["stable_ours"].iloc[0])


def test_quick_reproduction_of_all_papers_end_to_end_and_resumed(tmp_path):
    p = _cli("reproduce", "all", "--quick", "--out", str(tmp_path), "--jobs", "2")
    assert p.returncode == 0, p.stderr
    laq_summary = json.loads((tmp_path / "laq" / "summary.json").read_text())
    assert {v["table"]: v["verdict"] for v in laq_summary["verdicts"]}["Table 3"] == "reproduced"
    assert (tmp_path / "laq" / "table1.png").stat().st_size > 0
    # --quick runs Experiments 7 and 8 (Figs 15, 16) of the eight queue-dynamics experiments
    laq_claims = pd.read_csv(tmp_path / "laq" / "claims.csv")
    assert set(laq_claims["table"]) == {"Fig. 15", "Fig. 16"}
    assert laq_claims["evidence"].str.len().min() > 10
    assert (tmp_path / "laq" / "dynamics.png").stat().st_size > 0
    claims = pd.read_csv(tmp_path / "apace" / "claims.csv")
    assert set(claims["table"]) == {
        *("Fig. 9", "Fig. 11", "Fig. 12", "Figs. 13-14"),  # s. 7
        *("Fig. 18", "Fig. 19", "Fig. 20", "Fig. 21", "Fig. 22", "Figs. 23-24"),  # s. 8
    }
    assert (tmp_path / "apace" / "multi.png").stat().st_size > 0
    assert claims["evidence"].str.len().min() > 10
    out = tmp_path / "modred"
    for f in (
        "report.html",
        "report.md",
        "cells.csv",
        "rankings.csv",
        "runs.parquet",
        "loss_rate.png",
    ):
        assert (out / f).stat().st_size > 0, f
    summary = json.loads((out / "summary.json").read_text())
    assert {v["table"] for v in summary["verdicts"]} == {"Table 2", "Table 3"}
    cells = pd.read_csv(out / "cells.csv")
    # every published cell of the quick grid has our value; the loss and delivery columns of one
    # run are complementary (delivery = 100 - loss)
    assert cells["ours"].notna().all() and len(cells) == 2 * 2 * 2 * 2 * 3
    runs = pd.read_parquet(out / "runs.parquet")
    ours = runs[runs["engine"] == "aqmlab"]
    assert ((ours["loss_pct"] + ours["delivery_pct"] - 100).abs() < 1e-9).all()
    cache = sorted((out / "runs" / "sweep" / "runs").glob("*.json"))  # one record per aqmlab run
    assert len(cache) == 2 * 2 * 2 * 7  # nodes x loads x buffers x (3 algorithms + 4 readings)
    # resume: remove one finished run; only it is run again, the others are reused untouched
    mtimes = {c.name: c.stat().st_mtime_ns for c in cache}
    cache[0].unlink()
    p2 = _cli("reproduce", "modred", "--quick", "--out", str(tmp_path), "--jobs", "1")
    assert p2.returncode == 0, p2.stderr
    after = {c.name: c.stat().st_mtime_ns for c in (out / "runs" / "sweep" / "runs").glob("*.json")}
    assert set(after) == set(mtimes)
    changed = [n for n in after if after[n] != mtimes[n]]
    assert changed == [cache[0].name]


def test_apace_operating_point_claims_on_hand_made_points():
    from aqmlab.reproduce import apace

    def pts(rows):
        cols = ["experiment", "aqm", "max_th", "max_p", "delay", "utilisation"]
        return pd.DataFrame([dict(zip(cols, ["fig13-16", *r], strict=True)) for r in rows])

    # RED (20 ms, 0.95) is achieved by APACE (19 ms, 0.99); RED (5 ms, 0.80) by none: APACE's
    # lowest delay is 8 ms. APACE's delays 8-40 ms do not span RED's 5-30 ms.
    p = pts(
        [
            ("apace", -1, 0.1, 0.040, 0.999),
            ("apace", -1, 1.0, 0.008, 0.990),
            ("apace", -1, 0.5, 0.019, 0.990),
            ("red", 50, 0.1, 0.020, 0.950),
            ("red", 50, 1.0, 0.005, 0.800),
            ("red", 200, 0.1, 0.030, 0.990),
        ]
    )
    span, every = apace._figs13_16(p)
    assert not span["holds"] and "8.0-40.0 ms" in span["evidence"]
    assert not every["holds"] and "(2/3)" in every["claim"]
    # with an APACE point at (5 ms, 0.85) every RED point is achieved and the range is spanned
    p2 = pd.concat([p, pts([("apace", -1, 2.0, 0.005, 0.85)])], ignore_index=True)
    span2, every2 = apace._figs13_16(p2)
    assert every2["holds"] and span2["holds"]


def test_apace_multiple_bottleneck_tradeoff_claims_on_hand_made_points():
    from aqmlab.reproduce import apace_s8

    cols = ["experiment", "aqm", "max_th", "max_p", "knob", "delay", "utilisation", "loss"]
    rows = [
        ("apace", -1, 0.1, 0.0, 0.005, 0.97, 0.03),
        ("apace", -1, 1.0, 0.0, 0.010, 0.99, 0.02),
        ("apace", -1, 1.0, 0.99, 0.002, 0.60, 0.09),  # alpha 0.99: not on the Fig. 21 curve
        ("red", 15, 0.1, -1, 0.006, 0.95, 0.05),  # achieved: APACE (5 ms, 0.97, 3%)
        ("red", 15, 1.0, -1, 0.004, 0.90, 0.06),  # not: no APACE point at <= 4.2 ms
        ("paqm", -1, -1, 40, 0.003, 0.96, 0.04),  # not: no APACE point at <= 3.15 ms
        ("avq", -1, -1, 0.1, 0.012, 0.98, 0.025),  # achieved: APACE (10 ms, 0.99, 2%)
        ("sred", -1, -1, 40, 0.011, 0.995, 0.03),  # better than APACE on delay-utilisation
    ]
    p = pd.DataFrame([dict(zip(cols, ["fig21-24", *r], strict=True)) for r in rows])
    util, loss, sred, flat, red_drop = apace_s8._figs21_22(p)
    assert not util["holds"] and "(2/4)" in util["claim"]
    assert "avq 1/1" in util["evidence"] and "red 1/2" in util["evidence"]
    assert not loss["holds"] and "(2/4)" in loss["claim"]
    assert sred["holds"] and sred["evidence"].startswith("1 of 1")
    # APACE alpha 0 spans 0.97-0.99: within 0.05, all >= 0.9 (the alpha 0.99 point is not in it)
    assert flat["holds"] and "0.970-0.990" in flat["evidence"]
    # RED max_th 15: 0.95 at best, 0.90 at max_p 1: a drop of more than 0.01
    assert red_drop["holds"]
    # s. 8.3: APACE's spread over every (max_p, alpha) point, 0.60-0.99, is larger than RED's
    (spread,) = apace_s8._figs23_24(p)
    assert not spread["holds"] and "APACE 0.390" in spread["evidence"]


def test_lindrop_connection_split_follows_section_4_2():
    from aqmlab.reproduce import lindrop

    # s. 4.2: 10% 536-byte FTP; of the 1500-byte connections 75% FTP, 25% web (by hand:
    # 100 -> 10 small, 90 large, 67.5 -> 68 FTP, 22 web; 1000 -> 100, 900, 675, 225)
    assert lindrop.flow_counts(10) == {"ftp_1500": 7, "ftp_536": 1, "web_slots": 2}
    assert lindrop.flow_counts(100) == {"ftp_1500": 68, "ftp_536": 10, "web_slots": 22}
    assert lindrop.flow_counts(1000) == {"ftp_1500": 675, "ftp_536": 100, "web_slots": 225}
    # each scenario's web slots take about 18 s of its Poisson rate (why the rates read as
    # heavy / moderate / low)
    exp = core.load_experiment("lindrop")
    for level, c in exp["congestion"].items():
        slots = lindrop.flow_counts(c["connections"])["web_slots"]
        assert 15 <= slots / c["web_rate"] <= 19, level


def test_lindrop_scenarios_carry_table2_and_section_4_2(monkeypatch):
    from aqmlab.reproduce import lindrop
    from aqmlab.scenario import schema as scenario

    exp = core.load_experiment("lindrop")
    base = core.load_scenario_dict("lindrop", exp["scenario"])
    sc = lindrop.scenario_for(base, exp, "WAN_300", "heavy", "red", quick=False)
    v = scenario.from_dict(sc)  # validates
    # Table 2's 300 is ns-2's queue-limit; ns-2's RED counts it in bytes (queue_in_bytes_) of
    # mean_pktsize_ 500 B: 150 kB in aqmlab, 300 still handed to ns-2. PI's is in packets.
    # The model holds the parsed buffer (packets, bytes) and keeps the text as written.
    assert v.topology.buffer == (None, 150_000) and str(v.topology.buffer) == "150kB"
    assert sc["topology"]["delay"] == "300ms"
    monkeypatch.setattr(core, "ns2_available", lambda: True)
    key = {"delay": "WAN_300", "congestion": "heavy", "aqm": "red"}
    red_ns2 = lindrop._ns2_specs(exp, key, sc, 1)
    assert len(red_ns2) == 1 and red_ns2[0].scenario["args"][4] == "300"
    pi = lindrop.scenario_for(base, exp, "WAN_300", "heavy", "pi", quick=False)
    assert pi["topology"]["buffer"] == 300
    assert sc["aqm"]["min_th"] == 50 and sc["aqm"]["max_th"] == 150
    assert [f["count"] for f in sc["flows"][:2]] == [675, 100]
    assert sc["flows"][2]["arrival_rate"] == 12.5
    dt = lindrop.scenario_for(base, exp, "LAN", "low", "droptail", quick=True)
    assert dt["topology"]["buffer"] == 100 and dt["duration"] == "30s"


def test_lindrop_tables_transcribed_whole_and_spot_checked_against_the_paper():
    pub = core.load_published("lindrop")
    assert pub.groupby("table").size().to_dict() == {"Table 3": 24, "Table 4": 48, "Table 5": 48}

    def cell(table, delay, congestion, aqm):
        m = pub[
            (pub["table"] == table)
            & (pub["delay"] == delay)
            & (pub["congestion"] == congestion)
            & (pub["aqm"] == aqm)
        ]
        assert len(m) == 1
        return float(m["value"].iloc[0])

    # read off seed 000's Tables 3-5 by hand
    assert cell("Table 3", "LAN", "low", "avq") == 75.90
    assert cell("Table 4", "WAN_100", "heavy", "lindrop") == 98.19
    assert cell("Table 4", "WAN_300", "low", "droptail") == 15.32
    assert cell("Table 5", "WAN_100", "heavy", "lindrop") == 282.66
    assert cell("Table 5", "WAN_300", "moderate", "anaqm") == 3.85
