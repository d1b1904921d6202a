"""Plots a paper can use (issue 13 items 3 and 4): vector output, smoothing, warm-up handled,
the comparison's figures, `aqmlab plot DIR` redrawing without simulating, FCT and per-group Jain
in the CLI summary and the report."""

from __future__ import annotations

import json
import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from aqmlab.report import compare, plots
from aqmlab.running import runner
from conftest import aqmlab_cli

MIX = """
name = "mix"
duration = "15s"
warmup = "2s"
[topology]
type = "dumbbell"
rate = "10Mbps"
delay = "5ms"
buffer = 100
access_delay = "1ms"
[aqm]
name = "pie"
[[flows]]
name = "bulk"
count = 4
[[flows]]
name = "web"
type = "web"
arrival_rate = 5
[[flows]]
name = "ping"
type = "probe"
"""


@pytest.fixture
def mix(tmp_path):
    p = tmp_path / "mix.toml"
    p.write_text(MIX)
    return p


def test_y_range_is_taken_after_the_warmup():
    t = np.arange(0, 10, 0.01)
    y = np.where(t < 1, 1.0, 0.05 + 0.01 * np.sin(t))  # a start-up spike to 1, then ~0.05
    fig, ax = plt.subplots()
    plots._ylim_after(ax, t, [y], warm=2.0)
    lo, hi = ax.get_ylim()
    plt.close(fig)
    assert lo == 0 and hi == pytest.approx(y[t >= 2].max() * 1.08)


def test_cli_and_report_show_fct_per_group_and_jain_of_bulk_flows_only(mix, tmp_path):
    out = tmp_path / "run"
    r = aqmlab_cli("run", str(mix), "--out", str(out), "--plots")
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    flows = s["flows"]
    bulk = [f["goodput_bps"] for f in flows if f["name"].startswith("bulk.")]
    web = [f for f in flows if f["name"].startswith("web.")]
    assert web and all(f["size_bytes"] for f in web)
    # Jain (Jain, Chiu & Hawe 1984) by hand over the 4 bulk flows: web transfers and the probe
    # never enter it.
    jain = sum(bulk) ** 2 / (len(bulk) * sum(g * g for g in bulk))
    assert s["fairness"]["jain_goodput"] == pytest.approx(jain, rel=1e-12)
    assert f"Jain (bulk flows) {jain:.4f}" in r.stdout
    # The web group's FCT median from the per-flow completion times, by hand.
    done = sorted(f["completion_s"] for f in web if f["completion_s"] is not None)
    median_ms = np.median(done) * 1e3
    line = next(x for x in r.stdout.splitlines() if x.split()[:2] == ["web", "finite"])
    cells = line.split()
    assert cells[5] == f"{len(done)}/{len(web)}"
    assert float(cells[8]) == pytest.approx(median_ms, abs=0.051)
    # Bulk row: Jain; web and probe rows: none (their goodput is not a share).
    bulk_line = next(x for x in r.stdout.splitlines() if x.split()[:2] == ["bulk", "bulk"])
    assert bulk_line.split()[4] == f"{jain:.4f}"
    assert re.search(r"^\s*ping\s+probe\s+1\s+\S+\s+-", r.stdout, re.M), r.stdout
    assert re.search(r"^probe ping\.0 \(L0 -> R0 and back\): \d+ echoes", r.stdout, re.M)
    html = (out / "report.html").read_text()
    assert "<h2>Flow groups</h2>" in html and "<h2>Latency probe</h2>" in html
    assert f"<td>{median_ms:.1f}</td>" in html
    assert html.count("<img") == 4  # queue, delay, probe, goodput


def test_plot_redraws_a_run_with_options_without_simulating(mix, tmp_path):
    out = tmp_path / "run"
    assert aqmlab_cli("run", str(mix), "--out", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r = aqmlab_cli("plot", str(out), "--smooth", "0.5s", "--vector")
    assert r.returncode == 0, r.stderr
    for stem in ("queue", "delay", "probe", "goodput"):
        for ext in ("png", "svg", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 1000, f"{stem}.{ext}"
    # The results are untouched: nothing was simulated again.
    for name, data in before.items():
        assert (out / name).read_bytes() == data, name
    assert "0.5 s moving average" in (out / "queue.svg").read_text()
    assert not list(out.glob(".report.partial*"))
    bad = aqmlab_cli("plot", str(out), "--smooth", "fast")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--smooth" in bad.stderr


def test_compare_figures_and_redraw(small_scenario, tmp_path):
    out = tmp_path / "cmp"
    r = aqmlab_cli("compare", str(small_scenario), "--aqm", "red,codel,droptail", "--out", str(out))
    assert r.returncode == 0, r.stderr
    cmp = compare.load(out)
    assert list(cmp.results) == ["red", "codel", "droptail"] and cmp.scenario.name == "small"
    for f in ("compare_queue.png", "compare_goodput.png", "compare_delay.png"):
        (out / f).unlink()
    r = aqmlab_cli("plot", str(out), "--vector", "--smooth", "200ms")
    assert r.returncode == 0, r.stderr
    for stem in ("compare_queue", "compare_goodput", "compare_delay"):
        for ext in ("png", "svg", "pdf"):
            assert (out / f"{stem}.{ext}").is_file(), f"{stem}.{ext}"
    svg = (out / "compare_queue.svg").read_text()
    # The drop-probability panel names the AQMs that have no probability, and has a legend.
    assert "no drop probability: codel, droptail" in svg
    fig = plots.compare_figure(compare.load(out))
    texts = [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    plt.close(fig)
    assert texts == ["red"]
    assert (out / "compare.csv").is_file() and (out / "report.html").is_file()
    # A comparison written before compare.json existed is read from its runs.
    (out / "compare.json").unlink()
    again = compare.load(out)
    assert list(again.results) == ["red", "codel", "droptail"] and again.scenario.name == "small"


def test_goodput_figure_of_a_comparison_uses_one_scale(small_scenario, tmp_path):
    cmp = compare.compare(small_scenario, ["red", "droptail"], out=tmp_path / "c")
    path = plots.compare_goodput_plot(cmp, tmp_path / "g.png", formats=("svg",))
    assert path.stat().st_size > 10_000
    # Every flow's goodput is within the shared axis: the box plot draws them all on one scale.
    top = max(f["goodput_bps"] for r in cmp.results.values() for f in r.summary["flows"]) / 1e6
    assert math.isfinite(top) and top > 0
    assert "goodput per flow (Mb/s)" in (tmp_path / "g.svg").read_text()


def test_run_result_probe_series_feeds_the_probe_plot(mix, tmp_path):
    res = runner.run(mix)
    pr = plots.probes(res)
    assert list(pr) == ["ping.0"]
    (row,) = res.summary["probe"]
    warm = res.summary["run"]["warmup_s"]
    after = pr["ping.0"]["rtt_s"][pr["ping.0"]["t_s"] >= warm]
    # The plotted samples are the summary's echoes: same count, same extremes, same mean.
    assert len(after) == row["echoes"]
    assert after.min() == pytest.approx(row["rtt_min_s"], abs=1e-12)
    assert after.max() == pytest.approx(row["rtt_max_s"], abs=1e-12)
    assert after.mean() == pytest.approx(row["rtt_mean_s"], rel=1e-9)
    assert plots.probe_plot(res, tmp_path / "p.png") is not None
