"""The plots of issue 24: a multi-hop run's delay plot draws every hop (it drew only the first),
and the delay-goodput trade-off draws each AQM's per-run points and their covariance ellipse."""

from __future__ import annotations

import numpy as np
import pytest

import aqmlab
from aqmlab.report import plots
from aqmlab.running.metrics import covariance_ellipse


@pytest.fixture
def captured(monkeypatch):
    figs = []

    def keep(fig, path, formats=()):
        figs.append(fig)
        return path

    monkeypatch.setattr(plots, "save", keep)
    return figs


def test_delay_plot_draws_every_hop(captured, tmp_path):
    res = aqmlab.run(
        {
            "duration": "3s",
            "warmup": "1s",
            "topology": {"type": "parking-lot", "hops": 3, "rate": "10Mbps", "buffer": 100},
            "aqm": {"name": "codel"},
            "flows": [{"count": 3}, {"count": 2, "src": "cross2.src", "dst": "cross2.dst"}],
        }
    )
    plots.delay_plot(res, tmp_path / "d.png")
    (fig,) = captured
    over_time, cdf = fig.axes[:2]
    labels = over_time.get_legend_handles_labels()[1]
    assert {"hop1", "hop2", "hop3"} <= set(labels)
    assert [ln.get_label() for ln in cdf.get_lines()][:3] == ["hop1", "hop2", "hop3"]
    # each hop's CDF ends at 1 (the fraction of its packets)
    for ln in cdf.get_lines()[:3]:
        assert ln.get_ydata()[-1] == pytest.approx(1.0, abs=1e-9)


def test_tradeoff_plot_points_and_ellipses(captured, tmp_path):
    rng = np.random.default_rng(1)
    pts = {
        "a": (rng.normal(5, 1, 6), rng.normal(9, 0.2, 6)),
        "b": (np.array([20.0]), np.array([9.5])),  # one run: its point, no ellipse
    }
    plots.tradeoff_plot([("s. 8", pts)], tmp_path / "t.png")
    (fig,) = captured
    ax = fig.axes[0]
    offsets = [c.get_offsets() for c in ax.collections]
    assert [len(o) for o in offsets] == [6, 1]
    outline = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 2]
    assert len(outline) == 1  # the ellipse of "a" only
    e = covariance_ellipse(*pts["a"])
    x, y = outline[0].get_xdata(), outline[0].get_ydata()
    assert np.mean(x) == pytest.approx(e["cx"], rel=0.02)
    assert np.mean(y) == pytest.approx(e["cy"], rel=0.02)
    # the outline's farthest point from the centre is the semi-major axis
    r = np.hypot(x - e["cx"], y - e["cy"])
    assert r.max() == pytest.approx(e["a"], rel=1e-3)


def _chain(aqm: str):
    return aqmlab.run(
        {
            "duration": "3s",
            "warmup": "1s",
            "topology": {"type": "parking-lot", "hops": 2, "rate": "10Mbps", "buffer": 100},
            "aqm": {"name": aqm},
            "flows": [{"count": 3}, {"count": 2, "src": "cross2.src", "dst": "cross2.dst"}],
        }
    )


def test_comparison_of_chains_draws_every_hop(captured, tmp_path):
    from types import SimpleNamespace

    cmp = SimpleNamespace(
        results={"codel": _chain("codel"), "red": _chain("red")},
        scenario=SimpleNamespace(name="chain"),
    )
    fig = plots.compare_figure(cmp)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert {"codel", "codel hop2", "red", "red hop2"} <= set(labels)
    # the second hop's queue is the series of link hop2, drawn dashed
    line = next(ln for ln in fig.axes[0].get_lines() if ln.get_label() == "codel hop2")
    assert line.get_linestyle() == "--"
    q2 = cmp.results["codel"].series["link:hop2"]["queue_pkts"].to_numpy()
    assert np.array_equal(line.get_ydata(), q2)
    plots.plt.close(fig)
    plots.compare_delay_cdf_plot(cmp, tmp_path / "cdf.png")
    (cdf,) = captured
    names = [ln.get_label() for ln in cdf.axes[0].get_lines()]
    assert names == ["codel hop1", "codel hop2", "red hop1", "red hop2"]
