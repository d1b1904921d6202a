"""`aqmlab run`, `aqmlab list` and the Python API, end to end."""

from __future__ import annotations

import json
import math

import pandas as pd

import aqmlab
from aqmlab.scenario import schema as scenario
from conftest import ROOT, SMALL, aqmlab_cli


def test_run_writes_summary_series_and_plot(small_scenario, tmp_path):
    out = tmp_path / "res"
    r = aqmlab_cli("run", str(small_scenario), "--out", str(out), "--plots")
    assert r.returncode == 0, r.stderr
    assert "bottleneck" in r.stdout and "Jain" in r.stdout
    s = json.loads((out / "summary.json").read_text())
    b = s["links"][0]
    assert b["name"] == "bottleneck" and b["aqm"] == "red"
    assert 0.5 < b["utilisation"] <= 1.0
    assert len(s["flows"]) == 8
    q = pd.read_parquet(out / "link_bottleneck.parquet")
    assert {"t_s", "queue_pkts", "avg_queue", "drop_prob"} <= set(q.columns)
    # 10 ms samples at 0, 0.01, ..., 6.00 s inclusive.
    assert len(q) == 601
    assert q["t_s"].iloc[-1] == 6.0
    assert q["queue_pkts"].max() <= 100
    assert (out / "queue.png").stat().st_size > 10_000
    assert not (tmp_path / "res.partial").exists()


def test_same_scenario_and_seed_give_a_byte_identical_summary(small_scenario, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, seed in ((a, "7"), (b, "7"), (c, "8")):
        r = aqmlab_cli("run", str(small_scenario), "--out", str(d), "--seed", seed)
        assert r.returncode == 0, r.stderr
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    assert (a / "summary.json").read_bytes() != (c / "summary.json").read_bytes()


def test_python_api_returns_dataframes_and_load_reads_them_back(tmp_path):
    sc = scenario.from_dict(__import__("tomllib").loads(SMALL))
    res = aqmlab.run(sc, out=tmp_path / "r")
    assert isinstance(res.flows, pd.DataFrame) and len(res.flows) == 8
    assert isinstance(res.queue, pd.DataFrame)
    # Goodput of all flows is below the bottleneck's throughput times the payload share.
    total = res.flows["goodput_bps"].sum()
    assert total <= res.bottleneck["throughput_bps"] * 1460 / 1500 * 1.02
    back = aqmlab.load(tmp_path / "r")
    assert back.summary["links"][0]["utilisation"] == res.summary["links"][0]["utilisation"]
    assert back.queue.equals(res.queue)
    jain = res.summary["fairness"]["jain_goodput"]
    assert 1 / 8 <= jain <= 1


def test_load_refuses_an_incomplete_directory(tmp_path):
    (tmp_path / "x.partial").mkdir()
    (tmp_path / "y").mkdir()
    for d in ("x.partial", "y"):
        try:
            aqmlab.load(tmp_path / d)
        except aqmlab.InputError as e:
            assert "not a complete run directory" in str(e)
        else:
            raise AssertionError("an incomplete directory was read")


def test_list_shows_every_algorithm_with_parameters_and_defaults():
    r = aqmlab_cli("list")
    assert r.returncode == 0
    assert "droptail" in r.stdout and "red:" in r.stdout
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("w_q"))
    assert "0.002" in line
    md = aqmlab_cli("list", "--markdown").stdout
    assert "### `red`" in md and "| `max_th` |" in md


def test_demo_scenario_file_matches_the_embedded_default():
    assert (ROOT / "scenarios" / "default.toml").read_text() == (
        ROOT / "python" / "aqmlab" / "data" / "default.toml"
    ).read_text()


def test_every_scenario_in_the_repository_validates():
    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        cfg = scenario.build_config(scenario.load(p))
        assert cfg["flows"], p
        assert not math.isnan(cfg["duration_ns"])


def test_summary_and_config_text_read_back_to_the_same_values():
    """write_json (summary.json, config.json) is a format change only: json.loads gives back
    exactly the object written, including empty containers, nested lists of objects, unicode
    and the key order json.dumps(sort_keys=True) would give."""
    import io
    import json

    from aqmlab.running.runner import summary_json, write_json

    obj = {
        "z": [{"b": 1, "a": [1.5, None, "é"]}, {"c": {}}],
        "a": {"nested": {"x": [], "y": [[1, 2], {"k": True}]}, "empty": {}},
        "m": [1, 2, 3],
        "s": 'quote " and newline \n',
    }
    buf = io.StringIO()
    write_json(obj, buf)
    text = buf.getvalue()
    assert json.loads(text) == obj
    assert list(json.loads(text)) == sorted(obj)  # keys sorted at every level
    assert text.count("\n") > 5  # indented, not one line
    assert json.loads(summary_json({"v": float("nan"), "f": [{"x": float("inf")}]})) == {
        "v": None,
        "f": [{"x": None}],
    }
