"""`aqmlab sweep`: the sweep file, validation before running, local workers, records, confidence
intervals, resuming after real signals (issue 10)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.running import runner
from aqmlab.sweep import engine, spec, store
from conftest import ROOT, SMALL, aqmlab_cli, sigint_as_from_a_terminal

SWEEP = """
name = "t"
base = "small.toml"
seeds = 2

[grid]
"aqm.max_p" = [0.05, 0.1]

[zip]
"aqm.min_th" = [10, 20]
"aqm.max_th" = [40, 60]
"""


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "small.toml").write_text(SMALL)
    (tmp_path / "sw.toml").write_text(SWEEP)
    return tmp_path


def _doc(extra: str = "") -> dict:
    import tomllib

    return {"base": tomllib.loads(SMALL), **tomllib.loads(extra)}


# ---- the sweep file ----------------------------------------------------------------------------


def test_grid_zip_and_seeds_expand_to_the_product(sweep_dir):
    sw = spec.load(sweep_dir / "sw.toml")
    # grid of 2 x zip of 2 = 4 points, x 2 seeds (4, 5: the base's seed and the next).
    assert len(sw.points) == 4 and sw.seeds == [4, 5]
    coords = [(p["aqm.max_p"], p["aqm.min_th"], p["aqm.max_th"]) for _, p, _ in sw.points]
    assert coords == [(0.05, 10, 40), (0.05, 20, 60), (0.1, 10, 40), (0.1, 20, 60)]
    assert sw.points[1][2]["aqm"] == {"name": "red", "min_th": 20, "max_th": 60, "max_p": 0.05}
    tasks = sw.tasks()
    assert len(tasks) == 8 and len({t.key for t in tasks}) == 8


def test_every_sweep_file_in_the_repository_validates():
    files = sorted((ROOT / "sweeps").glob("*.toml"))
    assert files
    for p in files:
        assert spec.load(p).tasks(), p


def test_ranges_give_the_hand_computed_values():
    assert spec._range("r", {"start": 0.05, "stop": 0.2, "num": 4}) == [0.05, 0.1, 0.15, 0.2]
    assert spec._range("r", {"start": 100, "stop": 200, "step": 50}) == [100, 150, 200]
    assert spec._range("r", {"start": 2, "stop": 20, "num": 3, "unit": "ms"}) == [
        "2ms",
        "11ms",
        "20ms",
    ]
    assert spec._range("r", {"start": 1, "stop": 100, "num": 3, "log": True}) == [1, 10, 100]


def test_variants_give_each_aqm_its_own_parameters():
    doc = _doc(
        """
        [[variant]]
        label = "red"
        grid = {"aqm.max_p" = [0.1], "aqm.max_th" = [60, 80]}
        [[variant]]
        set = {aqm = {name = "apace"}}
        grid = {"aqm.max_p" = [0.1, 0.2, 0.3]}
        """
    )
    sw = spec.parse(doc)
    labels = [lab for lab, _, _ in sw.points]
    assert labels == ["red", "red", "apace", "apace", "apace"]
    # APACE starts from its own defaults: RED's min_th/max_th of the base are not carried over.
    assert sw.points[2][2]["aqm"] == {"name": "apace", "max_p": 0.1}
    assert sw.axes == ["aqm.max_p", "aqm.max_th", "aqm.name"]


def test_flow_count_and_topology_paths_reach_the_scenario():
    sw = spec.parse(_doc('[grid]\n"flows[0].count" = [3]\ntopology.delay = ["7ms"]'))
    sc = sw.points[0][2]
    assert sc["flows"][0]["count"] == 3 and sc["topology"]["delay"] == "7ms"


@pytest.mark.parametrize(
    ("body", "expect"),
    [
        ('[grid]\n"topology.rat" = ["1Mbps"]', "topology.rat: unknown field"),
        ('[grid]\n"aqm.max_p" = []', "grid.'aqm.max_p': empty list"),
        ('[grid]\n"topology.delay" = ["2ms", "5 parsecs"]', "topology.delay='5 parsecs'"),
        ('[zip]\n"aqm.min_th" = [1, 2]\n"aqm.max_th" = [50]', "zipped axes need equal lengths"),
        ("seeds = 0", "seeds: must be the number of replications"),
        ('[grid]\n"flows[3].count" = [1]', "index 3 out of range"),
        ('[grid]\n"aqm.max_p" = [0.1, 7.0]', "aqm.max_p=7.0"),
        ("grdi = 1", "grdi: unknown key in a sweep file"),
        ('[grid]\n"aqm.max_p" = {start = 1, stop = 2}', "one of num or step"),
    ],
)
def test_bad_sweep_files_are_one_line_exit_2_and_run_nothing(sweep_dir, body, expect):
    (sweep_dir / "bad.toml").write_text(f'base = "small.toml"\n{body}\n')
    out = sweep_dir / "out"
    r = aqmlab_cli("sweep", str(sweep_dir / "bad.toml"), "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and expect in r.stderr, r.stderr
    assert not out.exists()


# ---- confidence intervals ------------------------------------------------------------------------


def test_aggregate_is_the_mean_and_student_t_half_width():
    df = pd.DataFrame(
        {
            "key": list("abcde"),
            "label": ["x", "x", "x", "y", "y"],
            "status": ["ok"] * 5,
            "aqm.max_p": [0.1, 0.1, 0.1, 0.2, 0.2],
            "m": [1.0, 2.0, 3.0, 5.0, 5.0],
        }
    )
    agg = store.aggregate(df, ["aqm.max_p"])
    x = agg[agg["label"] == "x"].iloc[0]
    # n = 3: s = 1, t(0.975, 2) = 4.302652729749464 (tables), half-width = t * s / sqrt(3).
    assert x["n"] == 3 and x["m"] == 2.0
    assert x["m_ci95"] == pytest.approx(4.302652729749464 / math.sqrt(3), rel=1e-12)
    y = agg[agg["label"] == "y"].iloc[0]
    assert y["m"] == 5.0 and y["m_ci95"] == 0.0
    one = store.aggregate(df.iloc[:1], ["aqm.max_p"]).iloc[0]
    assert one["n"] == 1 and math.isnan(one["m_ci95"])


# ---- running -------------------------------------------------------------------------------------


def test_sweep_records_runs_identical_to_single_runs_and_resumes(sweep_dir):
    out = sweep_dir / "out"
    r = aqmlab_cli("sweep", str(sweep_dir / "sw.toml"), "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "8 runs: 0 already recorded, 8 run now, 0 failed" in r.stdout
    df = aqmlab.load_sweep(out)
    assert len(df) == 8 and set(df["status"]) == {"ok"} and df["key"].is_unique
    assert pd.read_parquet(out / "runs.parquet")["key"].tolist() == df["key"].tolist()
    # A sweep run is the same run as `aqmlab run` of its resolved scenario and seed.
    task = spec.load(sweep_dir / "sw.toml").tasks()[3]
    rec = json.loads(store.record_path(out, task.key).read_text())
    single = runner.run(task.scenario, seed=task.seed)
    assert runner.summary_json(rec["summary"]) == runner.summary_json(single.summary)
    points = pd.read_parquet(out / "points.parquet")
    assert len(points) == 4 and (points["n"] == 2).all()
    assert "bottleneck.utilisation_ci95" in points
    # Same command again: nothing to run. An added axis value reuses the unchanged runs.
    again = aqmlab_cli("sweep", str(sweep_dir / "sw.toml"), "--out", str(out))
    assert "8 runs: 8 already recorded, 0 run now" in again.stdout, again.stdout
    (sweep_dir / "sw.toml").write_text(SWEEP.replace("[0.05, 0.1]", "[0.05, 0.1, 0.15]"))
    more = aqmlab_cli("sweep", str(sweep_dir / "sw.toml"), "--out", str(out), "--jobs", "2")
    assert "12 runs: 8 already recorded, 4 run now, 0 failed" in more.stdout, more.stdout


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(sweep_dir, tmp_path):
    sw = spec.load(sweep_dir / "sw.toml")
    sc = sw.points[0][2]
    broken = json.loads(json.dumps(sc))
    broken["topology"]["rate"] = "fast"  # invalid: bypasses validation, as a run-time failure
    sw.points.insert(1, ("broken", {"aqm.max_p": -1}, broken))
    res = engine.run(sw, tmp_path / "o", jobs=2, quiet=True)
    assert res.total == 10 and res.ran == 10 and res.failed == 2
    df = aqmlab.load_sweep(tmp_path / "o")
    bad = df[df["status"] == "failed"]
    assert set(bad["label"]) == {"broken"} and bad["error"].str.contains("topology.rate").all()
    assert (df[df["label"] != "broken"]["status"] == "ok").all()
    # Failures are kept on a plain rerun, retried with retry_failed.
    assert engine.run(sw, tmp_path / "o", jobs=1, quiet=True).ran == 0
    assert engine.run(sw, tmp_path / "o", jobs=1, quiet=True, retry_failed=True).ran == 2


def test_python_api_sweep_callable_and_load_sweep(sweep_dir, monkeypatch):
    monkeypatch.chdir(sweep_dir)
    res = aqmlab.sweep("sw.toml", jobs=1, quiet=True)
    assert res.out == Path("runs") / "t" and res.ran == 8
    agg = aqmlab.load_sweep("runs/t", aggregated=True)
    assert len(agg) == 4 and (agg["bottleneck.utilisation"] > 0.5).all()
    with pytest.raises(InputError, match="not a sweep directory"):
        aqmlab.load_sweep("nowhere")


# ---- interruptions with real signals -------------------------------------------------------------


def _start(sweep_dir: Path, out: Path) -> subprocess.Popen:
    # Runs long enough (about 0.5 s each) for a signal to land while some are in progress.
    slow = SMALL.replace('duration = "6s"', 'duration = "120s"').replace("count = 8", "count = 40")
    (sweep_dir / "small.toml").write_text(slow)
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(sweep_dir / "sw.toml"), "--out", str(out)]
    return subprocess.Popen(
        [*cmd, "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_as_from_a_terminal,
    )


def _children(pid: int) -> list[int]:
    """The sweep's worker processes (not multiprocessing's resource tracker)."""
    try:
        kids = [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    out = []
    for k in kids:
        try:
            cmd = Path(f"/proc/{k}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd:
            out.append(k)
    return out


def _wait_for_records(out: Path, n: int, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if (out / "runs").is_dir() and len(list((out / "runs").glob("*.json"))) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} runs recorded after {timeout} s")


def _gone(pids: list[int], timeout: float = 60) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not any(Path(f"/proc/{p}").exists() for p in pids):
            return
        time.sleep(0.05)
    raise AssertionError(f"processes {pids} still alive")


def _check_complete_after_resume(sweep_dir: Path, out: Path, before: set[str]) -> None:
    r = aqmlab_cli("sweep", str(sweep_dir / "sw.toml"), "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    keys = {t.key for t in spec.load(sweep_dir / "sw.toml").tasks()}
    assert f"8 runs: {len(before)} already recorded, {8 - len(before)} run now" in r.stdout
    df = aqmlab.load_sweep(out)
    assert set(df["key"]) == keys and len(df) == 8 and (df["status"] == "ok").all()
    assert not list((out / "runs").glob(".*.tmp"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_killing_the_parent_loses_and_duplicates_nothing(sweep_dir, sig):
    out = sweep_dir / "out"
    p = _start(sweep_dir, out)
    _wait_for_records(out, 1)
    workers = _children(p.pid)
    p.send_signal(sig)
    code = p.wait(timeout=60)
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -9}[sig]
    _gone(workers)  # orphaned workers end by themselves (after recording their run)
    before = {f.stem for f in (out / "runs").glob("*.json")}
    assert 1 <= len(before) < 8
    for f in (out / "runs").glob("*.json"):
        assert json.loads(f.read_text())["status"] == "ok"
    _check_complete_after_resume(sweep_dir, out, before)


def test_killing_a_worker_reruns_its_run(sweep_dir):
    out = sweep_dir / "out"
    p = _start(sweep_dir, out)
    _wait_for_records(out, 1)
    workers = _children(p.pid)
    assert workers, "no worker processes"
    os.kill(workers[0], signal.SIGKILL)
    stdout, stderr = p.communicate(timeout=180)
    assert p.returncode == 0, stderr
    assert b"8 runs: 0 already recorded, 8 run now, 0 failed" in stdout
    df = aqmlab.load_sweep(out)
    assert len(df) == 8 and df["key"].is_unique and (df["status"] == "ok").all()


# ---- Dask ----------------------------------------------------------------------------------------


def test_dask_local_cluster_gives_the_same_runs_as_local_workers(sweep_dir):
    pytest.importorskip("dask.distributed")
    sw = spec.load(sweep_dir / "sw.toml")
    local = engine.run(sw, sweep_dir / "local", jobs=2, quiet=True)
    dask = engine.run(sw, sweep_dir / "dask", jobs=2, dask="local", quiet=True)
    assert local.ran == dask.ran == 8 and local.failed == dask.failed == 0
    for t in sw.tasks():
        a = json.loads(store.record_path(sweep_dir / "local", t.key).read_text())
        b = json.loads(store.record_path(sweep_dir / "dask", t.key).read_text())
        assert runner.summary_json(a["summary"]) == runner.summary_json(b["summary"])
        assert (a["label"], a["point"], a["seed"]) == (b["label"], b["point"], b["seed"])


def test_an_unreachable_scheduler_is_one_line_after_a_bounded_wait(sweep_dir):
    pytest.importorskip("dask.distributed")
    import socket

    with socket.socket() as s:  # a port nobody listens on (bound, never listening)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        t0 = time.monotonic()
        r = aqmlab_cli(
            "sweep",
            str(sweep_dir / "sw.toml"),
            "--out",
            str(sweep_dir / "o"),
            "--dask",
            f"tcp://127.0.0.1:{port}",
        )
        took = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "--dask: no Dask scheduler answered" in r.stderr
    assert took < 60 and not (sweep_dir / "o").exists()
