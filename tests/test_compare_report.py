"""`aqmlab compare`, the HTML reports (rendered in headless Chromium), the progress bar."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import aqmlab_cli

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_compare_writes_table_csv_plots_and_report(small_scenario, tmp_path):
    out = tmp_path / "cmp"
    r = aqmlab_cli(
        "compare",
        str(small_scenario),
        "--aqm",
        "red,pie,droptail",
        "--param",
        "red.max_th=50",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"^\s+red\s+red\s+\d", r.stdout, re.M), r.stdout
    df = pd.read_csv(out / "compare.csv", index_col=0)
    assert list(df.index) == ["red", "pie", "droptail"]
    # <= 1 up to the rounding of a floating-point sum of partly-sent packets (a few ulps; the
    # link itself never serves faster than its rate: crates/sim/tests/link_rate.rs)
    assert (df["utilisation"] > 0.5).all() and (df["utilisation"] <= 1 + 1e-12).all()
    for label in df.index:
        assert (out / label / "summary.json").exists()
    # The --param override reached the run: RED's forced-drop threshold is 50 there.
    cfg = (out / "red" / "config.json").read_text()
    assert '"max_th": 50' in cfg
    html = (out / "report.html").read_text()
    # Queue/delay/drop overlays, delay CDFs, and one goodput figure on a shared scale.
    assert html.count("<img") == 3 and "data:image/png;base64," in html
    assert not list(out.glob("goodput_*.png"))
    assert "Metric definitions" in html and "burst ratio" in html
    # Titled as a comparison (not as the base scenario), portable (no path of this machine), and
    # the C column says when it differs from Ie_eff (Idd = 0 up to 100 ms, ITU-T G.107).
    assert "<h1>Comparison of 3 AQMs: red, pie, droptail</h1>" in html
    assert "file://" not in html and str(out) not in html
    assert "differs from Ie_eff only when fixed path delay + queueing delay &gt; 100 ms" in html


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--aqm", "red,nope"], "unknown AQM 'nope'"),
        (["--aqm", "red,red"], "repeated"),
        (["--aqm", "red", "--param", "red.max_th"], "label.parameter=value"),
        (["--aqm", "red", "--param", "pie.target=1"], "'pie' is not one of"),
        (["--aqm", "red", "--param", "red.w_q=2"], "aqm.w_q: must be in (0, 1]"),
    ],
)
def test_compare_bad_input_is_one_line(small_scenario, tmp_path, args, expect):
    r = aqmlab_cli("compare", str(small_scenario), *args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and expect in r.stderr, r.stderr
    assert not (tmp_path / "o" / "compare.csv").exists()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (make test installs it when run as root)",
)
def test_run_report_renders_in_headless_chromium(small_scenario, tmp_path):
    out = tmp_path / "run"
    assert aqmlab_cli("run", str(small_scenario), "--out", str(out), "--plots").returncode == 0
    dom = chromium_render(out / "report.html", tmp_path, "1200,1600")
    assert "<table>" in dom and dom.count("<img") == 3  # queue, delay, goodput
    assert "bottleneck" in dom.lower() or "small" in dom


def chromium_render(page: Path, tmp_path: Path, window: str) -> str:
    """Opens ``page`` in headless Chromium: returns the DOM after scripts ran, and checks that a
    screenshot of the rendered page (images decoded and drawn) is not blank."""
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'ud'}"]
    uri = page.as_uri()
    dom = subprocess.run([*common, "--dump-dom", uri], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-500:]
    shot = tmp_path / "shot.png"
    r = subprocess.run(
        [*common, f"--window-size={window}", f"--screenshot={shot}", uri],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and shot.stat().st_size > 50_000, r.stderr[-500:]
    return dom.stdout


def test_progress_bar_draws_only_when_enabled(capsys):
    from aqmlab.running.runner import _Progress

    _Progress(False)(5.0, 10.0, 1000)
    assert capsys.readouterr().err == ""
    bar = _Progress(True)
    bar(5.0, 10.0, 1000)
    bar.done()
    err = capsys.readouterr().err
    assert "5.0/10.0 s simulated" in err and "M events/s" in err and "#" * 15 in err


def test_cli_hides_the_bar_when_stderr_is_not_a_terminal(small_scenario, tmp_path):
    r = aqmlab_cli("run", str(small_scenario), "--out", str(tmp_path / "r"))
    assert r.returncode == 0 and r.stderr == ""
    assert os.path.exists(tmp_path / "r" / "summary.json")
