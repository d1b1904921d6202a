"""Python AQMs (issue 23): the bridge's hooks and views, a scenario's ``[aqm] python = ...``,
``run``/``compare``/``sweep`` (local workers and a Dask LocalCluster, the module's source carried
in the run spec), reproducibility, and every kind of bad input as one line with exit code 2."""

from __future__ import annotations

import itertools
import json
import shutil
import tomllib
from pathlib import Path

import pytest

import aqmlab
from aqmlab.running import runner
from aqmlab.sweep import engine, spec, store
from conftest import ROOT, SMALL, aqmlab_cli

#: A random dropper with a timer: exercises every view, the RNG and update/next_update.
MODULE = '''
from aqmlab import ADMIT, DROP, Aqm, Param


class Coin(Aqm):
    """Drops each arrival with probability p while the queue holds more than k packets."""

    params = {
        "p": Param(0.05, "real", "drop probability above k", min=0, max=1),
        "k": Param(10, "int", "queue length, packets, above which packets may drop", min=0),
        "period": Param("10ms", "duration", "update period", min=1e-3),
    }

    def setup(self, link):
        self.period_ns = round(self.period * 1e9)
        self.next_t = self.period_ns
        self.updates = 0
        self.coin_drops = 0
        self.bytes_seen = 0

    def enqueue(self, pkt, q, now):
        self.bytes_seen += pkt.size_bytes
        if q.len_pkts > self.k and self.rng.random() < self.p:
            self.coin_drops += 1
            return DROP
        return ADMIT

    def next_update(self):
        return self.next_t

    def update(self, q, now):
        assert now == self.next_t, (now, self.next_t)
        self.updates += 1
        self.next_t += self.period_ns

    def drop_prob(self):
        return self.p

    def stats(self):
        return {"updates": self.updates, "coin_drops": self.coin_drops, "bytes": self.bytes_seen}
'''


@pytest.fixture
def pydir(tmp_path: Path) -> Path:
    (tmp_path / "aqms").mkdir()
    (tmp_path / "aqms" / "coin.py").write_text(MODULE)
    body = SMALL.replace('name = "red"\nmin_th = 20\nmax_th = 60', 'python = "aqms/coin.py:Coin"')
    (tmp_path / "s.toml").write_text(body + "\n[compare.pyred]\npython = 'red.py:Red'\n")
    shutil.copy(ROOT / "examples" / "aqms" / "red.py", tmp_path / "red.py")
    return tmp_path


def test_a_scenario_names_a_python_aqm_relative_to_itself_and_runs_reproducibly(pydir, tmp_path):
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    elsewhere = tmp_path / "aqms"  # run from another directory: the path is the scenario's
    r = aqmlab_cli("run", str(pydir / "s.toml"), "--out", str(out1), "--quiet", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    r = aqmlab_cli("run", str(pydir / "s.toml"), "--out", str(out2), "--quiet")
    assert r.returncode == 0, r.stderr
    a, b = (out1 / "summary.json").read_bytes(), (out2 / "summary.json").read_bytes()
    assert a == b  # byte-identical for a seed
    link = next(x for x in json.loads(a)["links"] if x["name"] == "bottleneck")
    st = link["aqm_stats"]
    assert link["aqm"] == "Coin"
    assert st["updates"] == 6_000 / 10  # one update per 10 ms over the 6 s run, on time
    assert st["coin_drops"] > 0 and link["dropped_aqm"] > 0
    # The counters of the window (after 2 s) are at most the whole run's.
    assert link["dropped_aqm"] <= st["coin_drops"]
    # The scenario written with the run carries the module's source (reproducible elsewhere).
    written = json.loads((out1 / "scenario.json").read_text())
    assert "class Coin(Aqm)" in written["aqm"]["python"]["source"]
    again = aqmlab.run(aqmlab.Scenario.model_validate(written))  # it runs again from the record
    assert runner.summary_json(again.summary) == a.decode()
    # Another seed draws other numbers from the simulator's RNG.
    other = aqmlab.run(aqmlab.load_scenario(pydir / "s.toml"), seed=5)
    assert other.bottleneck["aqm_stats"]["coin_drops"] != st["coin_drops"]


def test_views_carry_what_the_rust_ones_do():
    seen = []

    class Probe:
        def enqueue(self, pkt, q, now):
            seen.append((pkt.size_bytes, pkt.flow, pkt.ecn, pkt.ecn_capable, q.len_pkts, now))
            assert q.len_bytes >= q.len_pkts * 40 and (q.idle_since is None or q.len_pkts == 0)
            return aqmlab.ADMIT

    sc = aqmlab.Scenario.model_validate(
        {**tomllib.loads(SMALL), "tcp": {"ecn": True}, "duration": "3s"}
    )
    res = aqmlab.run(sc, aqm=Probe())
    assert res.bottleneck["aqm"] == "Probe"
    sizes = {s[0] for s in seen}
    assert 1500 in sizes  # 1460 B segments + 40 B of headers
    assert {s[1] for s in seen} == set(range(8))  # every flow crosses the bottleneck
    assert {s[2] for s in seen} == {2} and all(s[3] for s in seen)  # ECT(0) with ECN on
    assert all(a[5] <= b[5] for a, b in itertools.pairwise(seen))  # in time order


def test_compare_puts_builtins_and_python_aqms_in_one_table(pydir, tmp_path):
    r = aqmlab_cli(
        "compare", str(pydir / "s.toml"), "--aqm", "red,pyred", "--param", "red.min_th=5",
        "--param", "pyred.min_th=5", "--out", str(tmp_path / "c"), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    red = next(x for x in rows if x.split()[:1] == ["red"])
    pyred = next(x for x in rows if x.split()[:1] == ["pyred"])
    assert pyred.split()[1] == "red.py"
    assert red.split()[2:] == pyred.split()[2:]  # the same decisions: the same metrics


def test_sweep_runs_a_python_aqm_locally_and_on_dask_with_the_source_in_the_spec(pydir):
    (pydir / "sw.toml").write_text(
        'name = "py"\nbase = "s.toml"\nseeds = 1\n[grid]\n"aqm.p" = [0.02, 0.2]\n'
    )
    sw = spec.load(pydir / "sw.toml")
    (pydir / "aqms" / "coin.py").unlink()  # workers get the source from the run spec
    local = engine.run(sw, pydir / "local", jobs=2, quiet=True)
    assert local.ran == 2 and local.failed == 0
    recs = {}
    for t in sw.tasks():
        rec = json.loads(store.record_path(pydir / "local", t.key).read_text())
        recs[t.key] = rec
        single = runner.run(t.scenario, seed=t.seed)
        assert runner.summary_json(rec["summary"]) == runner.summary_json(single.summary)
    drops = sorted(r["summary"]["links"][0]["aqm_stats"]["coin_drops"] for r in recs.values())
    assert drops[0] < drops[1]  # the swept parameter reaches the class
    pytest.importorskip("dask.distributed")
    dask = engine.run(sw, pydir / "dask", jobs=2, dask="local", quiet=True)
    assert dask.ran == 2 and dask.failed == 0
    for t in sw.tasks():
        b = json.loads(store.record_path(pydir / "dask", t.key).read_text())
        assert runner.summary_json(b["summary"]) == runner.summary_json(recs[t.key]["summary"])


BAD_MODULES = {
    "no_enqueue": ("class C:\n    pass\n", "coin.py:C has no enqueue(pkt, queue, now) method"),
    "raises": (
        "class C:\n    def enqueue(self, pkt, q, now):\n"
        "        return 0 * (1 // (3 - min(q.len_pkts, 3)))\n",
        "coin.py:C.enqueue raised ZeroDivisionError: integer division or modulo by zero",
    ),
    "wrong_type": (
        "class C:\n    def enqueue(self, pkt, q, now):\n        return 'drop'\n",
        "coin.py:C.enqueue returned 'drop'; it must return a Verdict",
    ),
    "bool": (
        "class C:\n    def enqueue(self, pkt, q, now):\n        return True\n",
        "coin.py:C.enqueue returned True; it must return a Verdict",
    ),
    "slow": (
        "import time\nclass C:\n    def enqueue(self, pkt, q, now):\n"
        "        if q.len_pkts > 5:\n            time.sleep(1.2)\n        return 0\n",
        "coin.py:C.enqueue took 1.2 s (a hook may take at most 1 s)",
    ),
    "syntax": ("class C(:\n", "coin.py (line 1): loading raised SyntaxError"),
    "stats": (
        "class C:\n    def enqueue(self, pkt, q, now):\n        return 0\n"
        "    def stats(self):\n        return [1]\n",
        "coin.py:C.stats must return a dict of name -> number",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MODULES))
def test_a_bad_class_or_hook_is_one_line_exit_2_and_nothing_written(pydir, tmp_path, case):
    source, expect = BAD_MODULES[case]
    (pydir / "aqms" / "coin.py").write_text(source)
    (pydir / "s.toml").write_text((pydir / "s.toml").read_text().replace(":Coin", ":C"))
    out = tmp_path / "run"
    r = aqmlab_cli("run", str(pydir / "s.toml"), "--out", str(out), "--quiet")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "aqm.python:" in r.stderr and expect in r.stderr, r.stderr
    assert not out.exists() and not list(tmp_path.glob("run*"))


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (('"aqms/coin.py:Coin"', '"aqms/nope.py:Coin"'), "aqm.python: no such file:"),
        (('"aqms/coin.py:Coin"', '"aqms/coin.py:Nope"'), "coin.py has no class 'Nope'"),
        (('"aqms/coin.py:Coin"', '"aqms/coin.py"'), "aqm.python: must be a string 'file.py:Class'"),
        (('"aqms/coin.py:Coin"', '"aqms/coin.py:Coin"\nq = 3'), "aqm.q: unknown parameter of Coin"),
        (('"aqms/coin.py:Coin"', '"aqms/coin.py:Coin"\np = 2'), "aqm.p: must be <= 1 (got 2)"),
        (
            ('"aqms/coin.py:Coin"', '"aqms/coin.py:Coin"\nperiod = 5'),
            "aqm.period: 5 has no unit; write a duration",
        ),
        (('"aqms/coin.py:Coin"', '"aqms/coin.py:Coin"\nk = 1.5'), "aqm.k: must be a whole number"),
    ],
)
def test_a_bad_python_aqm_table_is_one_line_exit_2(pydir, tmp_path, edit, expect):
    (pydir / "s.toml").write_text((pydir / "s.toml").read_text().replace(*edit))
    r = aqmlab_cli("run", str(pydir / "s.toml"), "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert expect in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_the_testbed_refuses_a_python_aqm_in_one_line(pydir):
    r = aqmlab_cli("testbed", str(pydir / "s.toml"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "aqm.python: the testbed cannot run an AQM written in Python" in r.stderr


def test_the_public_api_is_listed_and_the_classes_are_there():
    for name in ("Aqm", "Param", "Verdict", "ADMIT", "DROP", "MARK", "run", "sweep"):
        assert name in dir(aqmlab)
        assert getattr(aqmlab, name) is not None
    assert int(aqmlab.DROP) == 1 and aqmlab.Verdict(2) is aqmlab.MARK
    with pytest.raises(ValueError, match="x: unknown parameter of Aqm; allowed: none"):
        aqmlab.Aqm(x=1)


def test_a_result_shows_itself_in_a_notebook_and_plots_return_figures():
    from matplotlib.figure import Figure

    from aqmlab.report import compare, plots

    res = aqmlab.run(tomllib.loads(SMALL))
    page = res._repr_html_()
    b = res.bottleneck
    assert "<table>" in page and ">red<" in page
    assert f"{b['utilisation']:.4f}" in page and f"{b['queue_mean_pkts']:.1f} packets" in page
    for fig in (res.plot_queue(), res.plot_goodput(), plots.delay_plot(res)):
        assert isinstance(fig, Figure) and fig.axes
    cmp = compare.Comparison(aqmlab.Scenario.model_validate(tomllib.loads(SMALL)), {"red": res})
    assert "<table" in cmp._repr_html_() and isinstance(cmp.plot(), Figure)


def test_ctrl_c_during_a_python_hook_is_an_interruption_not_a_hook_error(tmp_path):
    """SIGINT while a hook runs (its KeyboardInterrupt) stops the run as Ctrl-C does elsewhere:
    exit 130, "interrupted", nothing written; not reported as the hook's fault."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import sigint_as_from_a_terminal

    (tmp_path / "slow.py").write_text(
        "import time\nclass Slow:\n    def enqueue(self, pkt, q, now):\n"
        "        time.sleep(0.001)\n        return 0\n"
    )
    sc = tmp_path / "s.toml"
    sc.write_text(
        'name = "slow"\nduration = "1000s"\nwarmup = "1s"\n[aqm]\npython = "slow.py:Slow"\n'
        "[[flows]]\ncount = 2\n"
    )
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        time.sleep(4.0)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGINT)
        _, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, (p.returncode, stderr)
    assert "interrupted" in stderr and "aqm.python" not in stderr and "Traceback" not in stderr
    assert not out.exists()
