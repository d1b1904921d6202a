"""`aqmlab evaluate` (issue 24 item 1): the quick card end to end (what CI runs), resuming, the
features other parts of aqmlab provide reported as missing when absent, bad input, and the
per-run metrics against hand-worked numbers."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aqmlab.evaluate import analyse, card
from aqmlab.evaluate import params as prm

AQMLAB = [sys.executable, "-m", "aqmlab"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [*AQMLAB, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=900
    )


@pytest.fixture(scope="module")
def quick_card(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    d = tmp_path_factory.mktemp("evaluate")
    p = _run("evaluate", "codel", "--quick", "--out", "card", cwd=d)
    return d / "card", p


def test_quick_card_runs_every_section(quick_card):
    out, p = quick_card
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    c = out / "card"
    for f in ("report.md", "report.html", "card.csv", "runs.csv", "verdicts.csv", "summary.json"):
        assert (c / f).is_file(), f
    md = (c / "report.md").read_text()
    for _, title in card.SECTIONS:
        assert f"## {title}" in md
    runs = pd.read_csv(c / "runs.csv")
    status = pd.read_csv(c / "status.csv") if (c / "status.csv").stat().st_size > 1 else None
    shipped = prm.load()
    for sc in shipped.scenarios:
        ran = set(runs.loc[runs["scenario"] == sc.id, "aqm"])
        if not sc.quick:  # a sweep's point that --quick leaves out
            assert not ran, sc.id
            continue
        if sc.requires is None and not sc.ecn and sc.aqm_wrap is None and not sc.byte_mode:
            assert ran == {"codel", "fq_codel", "pie", "red"}, sc.id
        elif not ran:  # a scenario that did not run says why, in the card and in status.csv
            assert status is not None
            why = status.loc[status["scenario"] == sc.id, "status"]
            assert len(why) and all(w.startswith(("missing:", "n/a:")) for w in why), sc.id
            assert f"{sc.id}" in md
    # the delay-goodput plot of every section, the every-hop plot of s. 10
    assert (c / "tradeoff_s8.png").is_file()
    assert (c / "hops_multi-aqm_codel.png").is_file()
    assert (c / "rtt_rtt-fairness.png").is_file()  # s. 6.2's curve
    assert (c / "rate_rate-range.png").is_file()  # s. 8.3's delay against the rate
    # s. 4.4 in byte mode: RED runs it, an AQM without a byte mode says so
    bm = status[status["scenario"] == "packet-sizes-byte-mode"].set_index("aqm")["status"]
    assert set(bm.index) == {"codel", "fq_codel", "pie"}
    assert all("has no byte mode" in w for w in bm)
    assert set(runs.loc[runs["scenario"] == "packet-sizes-byte-mode", "aqm"]) == {"red"}
    assert "## Not measured by this card" in md and "s. 11" in md
    assert "<img" in (c / "report.html").read_text()


def test_quick_card_metrics_obey_their_bounds(quick_card):
    out, _ = quick_card
    runs = pd.read_csv(out / "card" / "runs.csv")
    assert (runs["utilisation"] <= 1 + 1e-9).all()
    assert ((runs["loss_ratio"] >= 0) & (runs["loss_ratio"] <= 1)).all()
    # the goodput shares of a run's groups add up to one (conservation)
    shares = runs[[c for c in runs.columns if c.startswith("share_")]].fillna(0).sum(axis=1)
    assert np.allclose(shares, 1.0)
    # loss synchronisation of N flows lies in [1/N, 1]; heavy congestion has 50 bulk flows
    heavy = runs[runs["scenario"] == "heavy-congestion"]["sync_rate"].dropna()
    assert len(heavy) and ((heavy >= 1 / 50 - 1e-12) & (heavy <= 1)).all()
    j = runs["jain"].dropna()
    assert ((j > 0) & (j <= 1 + 1e-9)).all()


def test_quick_card_resumes_without_running_again(quick_card):
    out, _ = quick_card
    before = (out / "card" / "card.csv").read_bytes()
    p = _run("evaluate", "codel", "--quick", "--out", str(out), cwd=out.parent)
    assert p.returncode == 0, p.stderr
    assert "0 runs done now" in p.stderr
    assert (out / "card" / "card.csv").read_bytes() == before
    assert not (out / "card.partial").exists()


def test_bad_input_is_one_line_exit_2(tmp_path):
    p = _run("evaluate", "nosuchaqm", "--quick", "--out", "x", cwd=tmp_path)
    assert p.returncode == 2 and "AQM: unknown AQM 'nosuchaqm'" in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "x").exists()
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    p = _run("evaluate", "codel", "--quick", "--out", str(mine), cwd=tmp_path)
    assert p.returncode == 2 and "--out" in p.stderr
    assert sorted(os.listdir(mine)) == ["thesis.tex"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[scenario]]\nid = "a"\nsection = "5"\ntitle = "t"\ncolour = 1\n')
    p = _run("evaluate", "codel", "--params", str(bad), "--out", "y", cwd=tmp_path)
    assert p.returncode == 2 and "scenario[0].colour: unknown key" in p.stderr
    bad.write_text(
        '[[scenario]]\nid = "a"\nsection = "5"\ntitle = "t"\n[[scenario.run.flows]]\ncount = -3\n'
    )
    p = _run("evaluate", "codel", "--params", str(bad), "--out", "y", cwd=tmp_path)
    assert p.returncode == 2 and "scenario a with codel" in p.stderr and "count" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "y" / "card").exists()


def test_settling_after_capacity_steps_hand_worked():
    # Queue after each step: 20 + 100 exp(-(t - step) / 1 s). Unsmoothed, band 10 % of the final
    # mean (20.0, to 1e-3): inside once 100 exp(-tau) <= 2.0, tau = ln 50 = 3.91 s (+ one 10 ms
    # sample at most).
    t = np.arange(0.0, 30.0, 0.01)
    steps = [10.0, 20.0]
    x = np.full_like(t, 20.0)
    for s in steps:
        m = t >= s
        x[m] = 20.0 + 100.0 * np.exp(-(t[m] - s))
    summary = {
        "metric_parameters": {
            "settling_band": 0.1,
            "settling_smoothing_s": 0.0,
            "settling_final_fraction": 0.2,
        },
        "links": [{"name": "bottleneck"}],
    }
    series = {"link:bottleneck": {"t_s": t, "queue_pkts": x}}
    out = analyse._settling(summary, series, steps, end=30.0, tol_pkts=0.0)
    tau = math.log(100.0 / (0.1 * 20.0))
    assert out["settle_step1_s"] == pytest.approx(tau, abs=0.011)
    assert out["settle_step2_s"] == pytest.approx(tau, abs=0.011)
    assert out["settle_down_s"] == out["settle_step1_s"]
    assert out["settle_up_s"] == out["settle_step2_s"]
    assert out["unsettled_steps"] == 0
    # with 5 packets of absolute tolerance: inside once 100 exp(-tau) <= 2 + 5, tau = ln(100/7)
    out = analyse._settling(summary, series, steps, end=30.0, tol_pkts=5.0)
    assert out["settle_s"] == pytest.approx(math.log(100.0 / 7.0), abs=0.011)


def test_compare_rule():
    # 5 % of the baseline's value, or the two CI half-widths, must be exceeded
    assert analyse.compare("lower", 9.0, math.nan, 10.0, math.nan) == 1
    assert analyse.compare("lower", 9.6, math.nan, 10.0, math.nan) == 0
    assert analyse.compare("lower", 9.0, 0.8, 10.0, 0.5) == 0
    assert analyse.compare("higher", 9.0, math.nan, 10.0, math.nan) == -1
    # closer to one: 1.02 beats 0.8 (|ln| 0.02 < 0.22)
    assert analyse.compare("one", 1.02, math.nan, 0.8, math.nan) == 1
    assert analyse.compare("one", 0.5, math.nan, 1.0, math.nan) == -1


def test_capacity_schedule_is_explicit_steps():
    p = prm.load()
    sc = next(s for s in p.scenarios if s.id == "varying-capacity")
    run = prm.build(p, sc, "codel", quick=False, ecn_capable=set())
    assert run["topology"]["rate"] == [
        {"at": "0s", "rate": "100Mbps"},
        {"at": "20s", "rate": "10Mbps"},
        {"at": "40s", "rate": "100Mbps"},
        {"at": "60s", "rate": "10Mbps"},
    ]
    assert prm.step_times(sc, False, 80.0) == [20.0, 40.0, 60.0]


def test_not_applicable_cells_say_why():
    p = prm.load()
    ecn = next(s for s in p.scenarios if s.id == "ecn")
    with pytest.raises(prm.NotApplicableError, match="droptail has no ECN option"):
        prm.build(p, ecn, "droptail", quick=True, ecn_capable={"codel"})
    assert prm.build(p, ecn, "codel", quick=True, ecn_capable={"codel"})["aqm"]["ecn"] is True
    sched = next(s for s in p.scenarios if s.id == "scheduler")
    with pytest.raises(prm.NotApplicableError, match="itself a flow-queue scheduler"):
        prm.build(p, sched, "fq_codel", quick=True, ecn_capable=set())
    assert prm.build(p, sched, "pie", quick=True, ecn_capable=set())["aqm"] == {
        "name": "fq",
        "queue_aqm": "pie",
    }


def test_plan_marks_a_feature_missing_by_trying_it(tmp_path):
    # A scenario needing something no build has: the probe's own message is kept.
    from aqmlab.evaluate import engine

    f = tmp_path / "p.toml"
    f.write_text(
        '[[scenario]]\nid = "x"\nsection = "5.2"\ntitle = "t"\nrequires = "a warp drive"\n'
        '[scenario.run.tcp]\ncc = "warp"\n[[scenario.run.flows]]\ncount = 1\n'
        '[[scenario]]\nid = "y"\nsection = "5.1"\ntitle = "t"\n[[scenario.run.flows]]\ncount = 1\n'
    )
    pl = engine.plan(["codel"], ["pie"], prm.load(f), quick=True)
    x = [c for c in pl.cells if c.scenario.id == "x"]
    assert len(x) == 2 and all(c.missing and c.missing.startswith("a warp drive") for c in x)
    assert all("warp" in c.missing.split("—", 1)[1] for c in x)
    assert all(c.missing is None for c in pl.cells if c.scenario.id == "y")


def test_capacity_plot_marks_the_steps(tmp_path, monkeypatch):
    # The s. 8.2.6 figure from a run's queue series (made here: the rate schedule is another
    # branch's), one panel per AQM with a dotted line at each step.
    from types import SimpleNamespace

    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab.report import plots

    p = prm.load()
    sc = next(s for s in p.scenarios if s.id == "varying-capacity")
    t = np.arange(0.0, 80.0, 0.01)
    for key in ("k1", "k2"):
        d = tmp_path / "series" / key
        d.mkdir(parents=True)
        tab = pa.table({"t_s": t, "queue_pkts": np.sin(t) + 5.0, "queue_bytes": t})
        pq.write_table(tab, d / "link_bottleneck.parquet")
    runs = pd.DataFrame(
        [
            {"scenario": sc.id, "aqm": "codel", "key": "k1", "settle_s": 1.5},
            {"scenario": sc.id, "aqm": "pie", "key": "k2", "settle_s": float("nan")},
        ]
    )
    figs = []
    monkeypatch.setattr(plots, "save", lambda fig, path, formats=(): figs.append(fig) or path)
    pl = SimpleNamespace(quick=False)
    assert card._capacity_plot(pl, runs, tmp_path, sc, tmp_path / "c.png")
    (fig,) = figs
    ax1, ax2 = fig.axes
    steps = [ln.get_xdata()[0] for ln in ax1.get_lines()[1:]]
    assert steps == [20.0, 40.0, 60.0]
    assert "1.5 s" in ax1.get_title() and "- s" in ax2.get_title()


def test_a_feature_refused_for_one_aqm_is_not_applicable_for_that_aqm_only(tmp_path):
    # The ECN scenario with an ECN option the simulator refuses for one AQM (here: a parameter
    # red does not accept) makes red's cell "n/a: <the simulator's message>", not an error.
    from aqmlab.evaluate import engine

    f = tmp_path / "p.toml"
    f.write_text(
        "[aqm.red]\nmax_th = 100000\n"
        '[[scenario]]\nid = "e"\nsection = "4.5"\ntitle = "t"\necn = true\n'
        "[[scenario.run.flows]]\ncount = 1\ntcp = { ecn = true }\n"
    )
    pl = engine.plan(["codel"], ["red"], prm.load(f), quick=True)
    cells = {c.aqm: c for c in pl.cells}
    assert cells["codel"].scenario_dict is not None and cells["codel"].not_applicable is None
    assert cells["red"].scenario_dict is None and "max_th" in cells["red"].not_applicable


def test_sync_from_an_event_log_uses_the_window_drops_per_flow():
    # Two bulk flows; the event log has drops of a at 11.0 and 13.0 s, of b at 11.05 s and a mark
    # of b at 13.02 s, and a drop of a packet that arrived in the warm-up (left out). Gap = base
    # RTT 0.1 s: events {11.0, 11.05} (a, b) and {13.0, 13.02} (a, b): R = 1.
    summary = {
        "run": {"warmup_s": 10.0, "duration_s": 20.0},
        "links": [{"name": "bottleneck"}],
        "flows": [
            {"name": n, "goodput_bps": 1e6, "base_rtt_s": 0.1, "size_bytes": None}
            for n in ("g0.0", "g0.1")
        ],
    }
    drops = {
        "t_s": np.array([10.5, 11.0, 11.05, 13.0, 13.02]),
        "arrival_s": np.array([9.9, 10.9, 11.0, 12.9, 13.0]),
        "flow": np.array(["g0.1", "g0.0", "g0.1", "g0.0", "g0.1"], dtype=object),
    }
    row = analyse.run_metrics(summary, {"drops:bottleneck": drops}, [])
    assert row["sync_from_drops"] == 1.0
    assert row["sync_events"] == 2 and row["sync_rate"] == 1.0


def test_rtt_sweep_makes_one_scenario_per_rtt():
    p = prm.load()
    pts = [s for s in p.scenarios if s.family == "rtt-fairness"]
    rtts = ["5ms", "10ms", "20ms", "50ms", "100ms", "200ms", "400ms", "560ms"]
    assert [s.id for s in pts] == [f"rtt-fairness-{r}" for r in rtts]  # RFC 7928 s. 6.2: 5-560 ms
    assert [s.family_x for s in pts] == pytest.approx([0.05, 0.1, 0.2, 0.5, 1, 2, 4, 5.6])
    assert [s.quick for s in pts] == [r in ("20ms", "200ms") for r in rtts]
    run = prm.build(p, pts[0], "codel", quick=False, ecn_capable=set())
    assert [g["rtt"] for g in run["flows"]] == ["100ms", "5ms"]
    assert run["topology"]["delay"] == "1ms"  # a 5 ms path needs a bottleneck below 2.5 ms
    from aqmlab.evaluate import engine

    assert {c.scenario.id for c in engine.plan(["codel"], [], p, quick=True).cells} >= {
        "rtt-fairness-20ms",
        "rtt-fairness-200ms",
    }
    assert not any(
        c.scenario.id == "rtt-fairness-5ms" for c in engine.plan(["codel"], [], p, quick=True).cells
    )


def test_rate_sweep_sets_the_bottleneck_rate():
    p = prm.load()
    pts = [s for s in p.scenarios if s.family == "rate-range"]
    assert [s.family_x for s in pts] == pytest.approx([1, 3, 10, 30, 100])
    assert [s.quick for s in pts] == [True, False, False, True, False]
    run = prm.build(p, pts[-1], "red", quick=False, ecn_capable=set())
    assert run["topology"]["rate"] == "100Mbps" and run["topology"]["buffer"] == 1000
    assert run["aqm"]["min_th"] == 20  # one parameter set at every rate


def test_rtt_sweep_bad_input_names_the_field(tmp_path):
    base = '[[scenario]]\nid = "r"\nsection = "6.2"\ntitle = "t"\n'
    flows = '[[scenario.run.flows]]\nrtt = "100ms"\n[[scenario.run.flows]]\nrtt = "20ms"\n'
    for sweep, msg in (
        ('rtt_sweep = { group = 0, rtts = ["5ms"] }', "rtt_sweep.group"),
        ("rtt_sweep = { group = 1, rtts = [] }", "rtt_sweep.rtts"),
        ('rtt_sweep = { group = 1, rtts = ["5ms"], quick_rtts = ["7ms"] }', "quick_rtts"),
        ('rtt_sweep = { group = 1, rtts = ["5ms"], step = 2 }', "rtt_sweep.step: unknown key"),
        ('rate_sweep = { rates = ["fast"] }', "rate_sweep.rates"),
        ('rate_sweep = { rates = ["1Mbps"], quick_rates = ["2Mbps"] }', "quick_rates"),
    ):
        with pytest.raises(prm.InputError, match=msg):
            prm.parse(__import__("tomllib").loads(base + sweep + "\n" + flows))


def test_byte_mode_is_set_where_the_aqm_has_one():
    p = prm.load()
    sc = next(s for s in p.scenarios if s.id == "packet-sizes-byte-mode")
    run = prm.build(p, sc, "red", quick=True, ecn_capable=set())
    assert run["aqm"]["mode"] == "byte" and run["aqm"]["min_th"] == 20
    assert run["topology"]["buffer"] == "600kB"
    with pytest.raises(prm.NotApplicableError, match="codel has no byte mode"):
        prm.build(p, sc, "codel", quick=True, ecn_capable=set())


def test_signal_ratio_counts_arrivals_and_drops_per_flow_in_the_event_log(tmp_path):
    # Hand-made event log (warm-up 1 s). Flow large.0: 4 packets arrive in the window (3
    # enqueues, 1 drop on arrival), 1 of them dropped: 1/4. Flow small.0: 5 enqueues, one later
    # dropped at the head (CoDel: no second arrival) and one marked: 2/5 -> ratio (2/5)/(1/4) =
    # 1.6. A packet of large.0 that arrived in the warm-up (enqueue and drop) counts nowhere.
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        ("enqueue", "", "large.0", 0.5),
        ("drop", "aqm", "large.0", 0.6),
        ("enqueue", "", "large.0", 1.1),
        ("enqueue", "", "large.0", 1.2),
        ("drop", "aqm", "large.0", 1.3),
        ("enqueue", "", "large.0", 1.4),
        *[("enqueue", "", "small.0", 1.0 + k / 10) for k in range(5)],
        ("drop", "aqm_head", "small.0", 1.2),
        ("mark", "", "small.0", 1.3),
    ]
    f = tmp_path / "bottleneck.parquet"
    pq.write_table(
        pa.table(
            {
                "event": [r[0] for r in rows],
                "cause": [r[1] for r in rows],
                "flow": [r[2] for r in rows],
                "arrival_ns": [int(r[3] * 1e9) for r in rows],
            }
        ),
        f,
    )
    counts = analyse._signals(f, warm_s=1.0)
    assert counts == {"large.0": (4, 1), "small.0": (5, 2)}
    summary = {
        "run": {"warmup_s": 1.0, "duration_s": 10.0},
        "links": [{"name": "bottleneck"}],
        "flows": [
            {"name": n, "goodput_bps": 1e6, "base_rtt_s": 0.1, "size_bytes": None}
            for n in ("large.0", "small.0")
        ],
    }
    row = analyse.run_metrics(summary, {"signals:bottleneck": counts}, [])
    assert row["signal_ratio"] == pytest.approx((2 / 5) / (1 / 4))
    assert math.isnan(analyse.run_metrics(summary, {}, [])["signal_ratio"])  # no event log


def test_family_plot_draws_one_curve_per_aqm_and_the_references(tmp_path, monkeypatch):
    from aqmlab.report import plots

    p = prm.load()
    pts = [s for s in p.scenarios if s.family == "rtt-fairness"][:3]
    cells = pd.DataFrame(
        [
            {"scenario": s.id, "aqm": a, "metric": "ratio", "mean": m, "ci95": 0.1}
            for s, m in zip(pts, (2.0, 1.5, 1.2), strict=True)
            for a in ("codel", "red")
        ]
    )
    figs = []
    monkeypatch.setattr(plots, "save", lambda fig, path, formats=(): figs.append(fig) or path)
    assert card._family_plot(cells, pts, ["codel", "red", "pie"], tmp_path / "x.png")
    (ax,) = figs[0].axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["equal goodputs", "1 / RTT ratio (Reno, equal p)", "codel", "red"]
    ref = ax.get_lines()[1]
    assert list(ref.get_ydata()) == pytest.approx([1 / 0.05, 1 / 0.1, 1 / 0.2])
