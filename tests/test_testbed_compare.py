"""`aqmlab compare --engine testbed` (issue 11 item 3): one scenario under several AQMs on the
testbed, read back by `aqmlab.load()` and shown in the comparison report like simulated runs.
Root only for the run; the refusals run anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import pandas as pd
import pytest

from test_testbed import SCENARIO, needs_net


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, check=False
    )


@needs_net
def test_compare_on_the_testbed_writes_runs_load_can_read(tmp_path):
    import aqmlab
    from aqmlab.report import compare

    with open(SCENARIO, "rb") as fh:
        sc = tomllib.load(fh)
    sc["duration"], sc["warmup"] = "3s", "1s"
    out = tmp_path / "cmp"
    cmp = compare.compare(sc, ["red", "droptail"], out=out, engine="testbed", jobs=2)
    t = pd.read_csv(out / "compare.csv", index_col=0)
    assert list(t.index) == ["red", "droptail"]
    assert list(t["algorithm"]) == ["red", "droptail"]
    for label in ("red", "droptail"):
        r = aqmlab.load(out / label)
        assert r.summary["engine"] == "testbed" and r.bottleneck["aqm"] == label
        c = r.summary["testbed"]["conservation"]
        assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]
        # the table is the runs' own numbers
        assert t.loc[label, "utilisation"] == pytest.approx(r.bottleneck["utilisation"])
        assert cmp.results[label].bottleneck["arrived"] == r.bottleneck["arrived"]
    html = (out / "report.html").read_text()
    assert "red" in html and "droptail" in html
    assert (out / "compare_queue.png").stat().st_size > 0


def test_compare_engine_refusals_are_one_line_exit_2(tmp_path):
    p = _cli("compare", str(SCENARIO), "--aqm", "red", "--engine", "ns3", "--out", str(tmp_path))
    assert p.returncode == 2 and "--engine" in p.stderr
    if os.geteuid() != 0:
        p = _cli("compare", str(SCENARIO), "--aqm", "red", "--engine", "testbed")
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "root" in p.stderr


def test_compare_engine_name_checked_in_python():
    from aqmlab.errors import InputError
    from aqmlab.report import compare

    with pytest.raises(InputError, match="--engine: must be one of sim, testbed"):
        compare.compare(SCENARIO, ["red"], engine="ns3")
