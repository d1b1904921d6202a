"""What a researcher sees (issue 19): smoothed plots that show what their title says, every hop
of a chain, helpful messages for a bare number and a misspelt name, ``wrote`` lines that list
every file written, and ``compare --quiet``."""

from __future__ import annotations

import numpy as np
import pytest

import aqmlab
from aqmlab.report import plots
from conftest import aqmlab_cli

BASE = {
    "duration": "4s",
    "warmup": "1s",
    "topology": {"rate": "10Mbps", "buffer": 100},
    "aqm": {"name": "red"},
    "flows": [{"count": 6}],
}

PROBE_TOML = """
name = "withprobe"
duration = "2s"
warmup = "0.5s"
[topology]
rate = "10Mbps"
buffer = 100
[aqm]
name = "red"
[[flows]]
count = 3
[[flows]]
type = "probe"
name = "ping"
"""


@pytest.fixture
def figures(monkeypatch):
    """The figures the plotting functions draw, kept instead of saved."""
    drawn = []
    monkeypatch.setattr(plots, "save", lambda fig, path, formats=(): drawn.append(fig) or path)
    return drawn


def _lines(ax, label):
    return [ln for ln in ax.get_lines() if ln.get_label() == label]


def test_smoothing_also_smooths_reds_average_so_the_queue_stays_visible(figures, tmp_path):
    res = aqmlab.run(BASE)
    plots.queue_plot(res, tmp_path / "q.png", smooth_s=0.5)
    ax = figures[0].axes[0]
    assert "0.5 s moving average" in ax.get_title()
    q, avg = res.queue["queue_pkts"].to_numpy(), res.queue["avg_queue"].to_numpy()
    drawn = {id(ln) for ln in ax.get_lines()}
    # Raw traces are faint; each labelled (smoothed) line is the moving average of its series.
    for label, raw in (("queue", q), ("average (AQM)", avg)):
        (line,) = _lines(ax, label)
        y = np.asarray(line.get_ydata(), dtype=float)
        assert not np.allclose(y, raw), f"{label} is drawn raw under a smoothed title"
        # Independent: the centred 0.5 s window mean at a point in the middle of the run.
        t = res.queue["t_s"].to_numpy()
        i = len(t) // 2
        inside = np.abs(t - t[i]) <= 0.25 + 1e-9
        assert y[i] == pytest.approx(raw[inside].mean(), rel=0.05, abs=0.5)
    faint = [ln for ln in ax.get_lines() if ln.get_alpha() is not None and ln.get_alpha() <= 0.3]
    assert len(faint) == 2 and len(drawn) == 4


def test_a_parking_lot_plots_every_hop(figures, tmp_path):
    d = {
        **BASE,
        "topology": {"type": "parking-lot", "hops": 3, "rate": "10Mbps", "buffer": 100},
        "flows": [{"count": 4}, {"count": 2, "src": "cross3.src", "dst": "cross3.dst"}],
    }
    res = aqmlab.run(d)
    assert plots.hop_links(res) == ["hop1", "hop2", "hop3"]
    plots.queue_plot(res, tmp_path / "q.png")
    fig = figures[0]
    for ax in fig.axes:  # queue, delay and drop probability: one line per hop
        assert [ln.get_label() for ln in ax.get_lines() if ln.get_label().startswith("hop")] == [
            "hop1",
            "hop2",
            "hop3",
        ]
    assert "3 bottlenecks" in fig.axes[0].get_title()


def test_a_single_bottleneck_plot_is_unchanged(figures, tmp_path):
    res = aqmlab.run(BASE)
    assert plots.hop_links(res) == ["bottleneck"]
    plots.queue_plot(res, tmp_path / "q.png")
    ax = figures[0].axes[0]
    assert [ln.get_label() for ln in ax.get_lines()] == ["queue", "average (AQM)"]


@pytest.mark.parametrize(
    "field, value, hint",
    [
        ("rate", 100, "'100' is not a rate; write e.g. '100Mbps'"),
        ("delay", 2, "'2' is not a duration"),
    ],
)
def test_a_bare_number_gets_the_unit_hint(field, value, hint):
    with pytest.raises(aqmlab.InputError) as bare:
        aqmlab.run({**BASE, "topology": {field: value}})
    with pytest.raises(aqmlab.InputError) as text:
        aqmlab.run({**BASE, "topology": {field: str(value)}})
    assert hint in str(bare.value) and hint in str(text.value)
    assert str(bare.value).startswith(f"topology.{field}: ")


@pytest.mark.parametrize(
    "d, hint",
    [
        ({"aqm": {"name": "codle"}}, "(did you mean 'codel'?)"),
        ({"aqm": {"name": "PIE"}}, "(did you mean 'pie'?)"),
        ({"topology": {"type": "parkinglot"}}, "(did you mean 'parking-lot'?)"),
        ({"topology": {"type": "dumbel"}}, "(did you mean 'dumbbell'?)"),
    ],
)
def test_a_misspelt_aqm_or_topology_gets_did_you_mean(d, hint):
    with pytest.raises(aqmlab.InputError, match=r"\(did you mean") as e:
        aqmlab.run({**BASE, **d})
    assert hint in str(e.value)


def test_wrote_lines_list_every_file_and_compare_takes_quiet(tmp_path):
    sc = tmp_path / "p.toml"
    sc.write_text(PROBE_TOML)
    r = aqmlab_cli("run", str(sc), "--out", str(tmp_path / "r"), "--quiet", "--plots")
    assert r.returncode == 0, r.stderr
    wrote = r.stdout.strip().splitlines()[-1]
    for f in ("probe.png", "queue.png", "delay.png", "goodput.png", "report.html", "summary.json"):
        assert f in wrote, wrote
    on_disk = {p.name for p in (tmp_path / "r").iterdir() if not p.name.startswith(".")}
    named = {f for f in on_disk if not f.endswith(".parquet")}
    assert all(f in wrote for f in named)
    assert f"{len(on_disk) - len(named)} time series .parquet" in wrote

    r = aqmlab_cli("compare", str(sc), "--aqm", "red,pie", "--out", str(tmp_path / "c"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "compare_probe.png" in r.stdout.strip().splitlines()[-1]
    r = aqmlab_cli("plot", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    assert "compare_probe.png" in r.stdout and "compare_queue.png" in r.stdout
    r = aqmlab_cli("plot", str(tmp_path / "r"))
    assert "probe.png" in r.stdout
