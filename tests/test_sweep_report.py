"""The sweep report and its figures (issue 10 item 5): rendered in headless Chromium like the run
report, figures as PNG, SVG and PDF."""

from __future__ import annotations

import pytest

from conftest import SMALL, aqmlab_cli
from test_compare_report import CHROMIUM, chromium_render

SWEEP = """
name = "rep"
base = "small.toml"
seeds = 2

[[variant]]
label = "red"
grid = {"aqm.max_p" = [0.05, 0.2], "aqm.max_th" = [40, 80]}

[[variant]]
set = {"aqm.name" = "apace"}
grid = {"aqm.max_p" = [0.1, 0.3]}
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    d = tmp_path_factory.mktemp("sw")
    (d / "small.toml").write_text(SMALL)
    (d / "sw.toml").write_text(SWEEP)
    r = aqmlab_cli("sweep", str(d / "sw.toml"), "--out", str(d / "out"), "--jobs", "2", "--plots")
    assert r.returncode == 0, r.stderr
    return d / "out"


def test_figures_exist_in_three_formats(swept):
    plots = swept / "plots"
    for stem in ("tradeoff_delay_utilisation", "tradeoff_delay_loss", "heatmap_red_delay"):
        assert (plots / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (plots / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
        assert b"<svg" in (plots / f"{stem}.svg").read_bytes()[:2000]
    assert (plots / "delay_mean_s_vs_aqm_max_p.png").stat().st_size > 10_000
    assert not (swept / ".report.partial").exists()


def test_report_lists_every_point_with_its_interval(swept):
    page = (swept / "report.html").read_text()
    # 4 RED points + 2 APACE points, each with n = 2 seeds.
    points = page.split("<h2>Points</h2>")[1].split("</table>")[0]
    assert points.count("<tr>") == 1 + 6  # header + one row per point
    assert points.count("<td>2</td>") == 6  # n
    assert points.count("&plusmn;") == 3 + 6 * 3  # headers + util, delay, loss per row
    assert "No run failed." in page and "Delay-utilisation trade-off" in page
    assert "plots/tradeoff_delay_utilisation.svg" in page


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_sweep_report_renders_in_headless_chromium(swept, tmp_path):
    dom = chromium_render(swept / "report.html", tmp_path, "1200,2400")
    n_img = dom.count("<img")
    assert n_img >= 5 and dom.count("data:image/png;base64,") == n_img
    assert "Sweep rep" in dom


def test_report_of_a_directory_that_is_neither_is_one_line(tmp_path):
    r = aqmlab_cli("report", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
