"""The sweep store (issue 19): each record is validated when read (a damaged one is run again
and reported once, never taken as done), a full disk is one line with exit code 1 and no stale
temporary files, and confidence intervals use the same sample for the quantile and the standard
error when a metric is NaN in some runs."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from aqmlab.sweep import store
from conftest import aqmlab_cli

BASE = """
name = "base"
duration = "1.5s"
warmup = "0.5s"
[topology]
rate = "10Mbps"
buffer = 100
[aqm]
name = "red"
[[flows]]
count = 2
"""


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(BASE)
    p = tmp_path / "sw.toml"
    p.write_text('name = "st"\nbase = "base.toml"\nseeds = 2\n[grid]\n"aqm.max_p" = [0.05, 0.2]\n')
    return p


@pytest.mark.parametrize("damage", ["null", "[]", "{}", "{not json"])
def test_a_damaged_record_is_run_again_and_reported_once(damage, sweep_file, tmp_path):
    out = tmp_path / "out"
    r = aqmlab_cli("sweep", str(sweep_file), "--out", str(out), "--quiet", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    records = sorted((out / "runs").glob("*.json"))
    assert len(records) == 4
    victim = records[1]
    good = json.loads(victim.read_text())
    victim.write_text(damage)
    # The issue: null / [] made every later sweep die with an AttributeError; {} was taken as
    # done, the point then had n = 1 and the lost run was neither re-run nor reported.
    r = aqmlab_cli("sweep", str(sweep_file), "--out", str(out), "--quiet", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    warn = [x for x in r.stderr.splitlines() if "damaged" in x]
    assert len(warn) == 1 and victim.stem in warn[0], r.stderr
    assert "3 already recorded, 1 run now" in r.stdout
    again = json.loads(victim.read_text())
    assert again["status"] == "ok" and again["summary"] == good["summary"]  # same seed, same run
    pts = pd.read_parquet(out / "points.parquet")
    assert list(pts["n"]) == [2, 2]


def test_reading_skips_damaged_records_without_raising(tmp_path):
    (tmp_path / "runs").mkdir(parents=True)
    for i, body in enumerate(["null", "[]", "{}", "3", '"s"', '{"key": "k4", "status": "ok"}']):
        (tmp_path / "runs" / f"k{i}.json").write_text(body)
    done, damaged = store.scan(tmp_path)
    assert done == {} and len(damaged) == 6
    assert store.table(tmp_path).empty
    assert store.finished_one(tmp_path, "k2") is None


def _rows(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "key": [f"k{i}" for i in range(len(values))],
            "label": "red",
            "aqm": "red",
            "seed": range(len(values)),
            "status": "ok",
            "error": None,
            "wall_s": 1.0,
            "aqm.max_p": 0.1,
            "bottleneck.burst_ratio": values,
            "bottleneck.utilisation": [0.9 + 0.01 * i for i in range(len(values))],
        }
    )


def test_confidence_interval_with_nan_runs_uses_the_finite_sample():
    # The case: the burst ratio finite in 3 of 6 runs.
    x = [1.0, math.nan, 1.4, math.nan, 2.1, math.nan]
    agg = store.aggregate(_rows(x), ["aqm.max_p"])
    row = agg.iloc[0]
    finite = np.array([1.0, 1.4, 2.1])
    k = finite.size
    # Independent: scipy's t interval of the 3 finite values.
    lo, hi = stats.t.interval(0.95, k - 1, loc=finite.mean(), scale=stats.sem(finite))
    assert row["bottleneck.burst_ratio"] == pytest.approx(finite.mean())
    assert row["bottleneck.burst_ratio_ci95"] == pytest.approx((hi - lo) / 2, rel=1e-12)
    assert row["n"] == 6 and row["bottleneck.burst_ratio_n"] == 3
    # The numbers of the issue: s = 1 gives 4.303/sqrt(3) = 2.484; with the wrong quantile
    # t(0.975, 5) = 2.571 the half-width was 2.571/sqrt(3). Ratio as in the issue, 2.943/1.758.
    wrong = stats.t.ppf(0.975, 5) * finite.std(ddof=1) / math.sqrt(3)
    assert row["bottleneck.burst_ratio_ci95"] / wrong == pytest.approx(2.943 / 1.758, rel=1e-3)
    # A metric finite in every run has no _n column, and its interval uses all 6.
    assert "bottleneck.utilisation_n" not in agg.columns
    u = np.array([0.9 + 0.01 * i for i in range(6)])
    lo, hi = stats.t.interval(0.95, 5, loc=u.mean(), scale=stats.sem(u))
    assert row["bottleneck.utilisation_ci95"] == pytest.approx((hi - lo) / 2, rel=1e-12)


def test_one_finite_value_has_a_mean_and_no_interval():
    agg = store.aggregate(_rows([math.nan, 3.0, math.nan]), ["aqm.max_p"])
    row = agg.iloc[0]
    assert row["bottleneck.burst_ratio"] == 3.0 and math.isnan(row["bottleneck.burst_ratio_ci95"])
    assert row["bottleneck.burst_ratio_n"] == 1


@contextlib.contextmanager
def _tiny_filesystem(where: Path, size: str):
    """A tmpfs of ``size`` mounted at ``where`` (root only; skips elsewhere)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a full disk is simulated with a tmpfs mount, which needs root")
    where.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", f"aqmlab-{uuid.uuid4().hex[:8]}", where],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()[:80]})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_during_a_sweep_is_one_line_exit_1_and_leaves_no_tmp(tmp_path, sweep_file):
    sweep_file.write_text(
        'name = "st"\nbase = "base.toml"\nseeds = 3\nseries = true\n'
        '[grid]\n"aqm.max_p" = [0.05, 0.1, 0.2, 0.3]\n'
    )
    with _tiny_filesystem(tmp_path / "small", "400k") as fs:
        out = fs / "out"
        args = ["sweep", str(sweep_file), "--out", str(out), "--quiet", "--jobs", "2"]
        r = subprocess.run(
            [sys.executable, "-m", "aqmlab", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        # The issue: six multi-line worker tracebacks. Now one line, said once.
        assert len(lines) == 1 and "No space left on device" in lines[0], r.stderr
        assert "Traceback" not in r.stderr
        assert list(out.rglob("*.tmp")) == [] and list(out.rglob("*.partial")) == []
        for rec in (out / "runs").glob("*.json"):  # what was recorded is whole
            assert store.read(rec)[1] is None


def test_a_full_disk_during_a_run_is_one_line_exit_1_and_no_partial(tmp_path):
    (tmp_path / "s.toml").write_text(BASE.replace('"1.5s"', '"20s"'))
    with _tiny_filesystem(tmp_path / "small", "64k") as fs:
        r = aqmlab_cli("run", str(tmp_path / "s.toml"), "--out", str(fs / "r"), "--quiet")
        assert r.returncode == 1, (r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: cannot write"), r.stderr
        assert "No space left on device" in lines[0]
        assert sorted(p.name for p in fs.iterdir()) == []  # the 2 MB .partial is gone
