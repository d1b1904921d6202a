"""A Python AQM as the per-flow-queue AQM of the ``fq`` scheduler (issue 23 item 2):
``[aqm] name = "fq"``, ``queue_aqm = "python"``, the class and its parameters in ``[aqm.queue]``.

The independent truth is CoDel written twice (examples/aqms/codel.py from RFC 8289, Linux
fq_codel's hooks; crates/aqm/src/codel.rs): on every flow queue of the same ``fq`` they must give
the same run as the built-in ``fq`` + ``codel`` (and so as the ``fq_codel`` preset), apart from
the names (the AQM's, and fq's counter ``codel_drops``, named ``aqm_drops`` under any other AQM).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import aqmlab
from conftest import ROOT, aqmlab_cli

CODEL = ROOT / "examples" / "aqms" / "codel.py"

#: (load, ECN, CoDel parameters): three loads, ECN off and on.
CASES = [
    ("light", False, {}),
    ("medium", True, {"ecn": True}),
    ("heavy", False, {"target": "2ms", "interval": "50ms"}),
]


def _scenario(load: str, ecn: bool, aqm: str) -> str:
    rate, flows, buffer = {
        "light": ("20Mbps", 4, 100),
        "medium": ("10Mbps", 16, 80),
        "heavy": ("5Mbps", 40, 60),
    }[load]
    return f"""
name = "fq-{load}"
duration = "12s"
warmup = "2s"
seed = 7

[topology]
type = "dumbbell"
rate = "{rate}"
delay = "10ms"
buffer = {buffer}

[tcp]
ecn = {"true" if ecn else "false"}

[[flows]]
count = {flows}
start_spread = "1s"

{aqm}
"""


def _toml(params: dict) -> str:
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in params.items())


def _without_names(summary: dict) -> str:
    s = json.loads(json.dumps(summary))
    for link in s["links"]:
        link.pop("aqm", None)
        st = link.get("aqm_stats") or {}
        if "codel_drops" in st:
            st["aqm_drops"] = st.pop("codel_drops")
    return json.dumps(s, sort_keys=True)


@pytest.mark.parametrize(("load", "ecn", "params"), CASES)
def test_python_codel_per_flow_queue_runs_as_the_builtin_fq_codel(tmp_path, load, ecn, params):
    (tmp_path / "aqms").mkdir()
    shutil.copy(CODEL, tmp_path / "aqms" / "codel.py")
    py = tmp_path / "py.toml"  # the file is found relative to the scenario, not the cwd
    py.write_text(
        _scenario(
            load,
            ecn,
            '[aqm]\nname = "fq"\nqueue_aqm = "python"\n[aqm.queue]\n'
            'python = "aqms/codel.py:Codel"\n' + _toml(params),
        )
    )
    builtin = aqmlab.run(
        aqmlab.load_scenario(_write(tmp_path / "b.toml", load, ecn, "fq", params, queue=True))
    )
    preset = aqmlab.run(
        aqmlab.load_scenario(_write(tmp_path / "p.toml", load, ecn, "fq_codel", params))
    )
    python = aqmlab.run(aqmlab.load_scenario(py))
    b = builtin.bottleneck
    assert b["aqm"] == "fq" and python.bottleneck["aqm"] == "fq"
    st = b["aqm_stats"]
    signals = st["codel_drops"] + st["ecn_marks"]
    assert signals > 20, f"the scenario must make CoDel act (got {signals} signals)"
    if ecn:
        assert st["ecn_marks"] > 0, "ECN on: the scenario must produce marks"
    assert _without_names(python.summary) == _without_names(builtin.summary)
    assert _without_names(preset.summary) == _without_names(builtin.summary)
    # In code: the instance given to run() becomes fq's per-queue AQM, fq's own params kept.
    base = aqmlab.load_scenario(_write(tmp_path / "o.toml", load, ecn, "fq", {}, queue=True))
    inst = _codel_class()(**params)
    in_code = aqmlab.run(base, aqm=inst)
    assert in_code.bottleneck["aqm"] == "fq"
    assert _without_names(in_code.summary) == _without_names(builtin.summary)


def _codel_class():
    import importlib.util

    spec = importlib.util.spec_from_file_location("aqmlab_example_codel_fq", CODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Codel


def _write(path: Path, load: str, ecn: bool, name: str, params: dict, queue=False) -> Path:
    if queue:
        aqm = f'[aqm]\nname = "{name}"\nqueue_aqm = "codel"\n[aqm.queue]\n' + _toml(params)
    else:
        aqm = f'[aqm]\nname = "{name}"\n' + _toml(params)
    path.write_text(_scenario(load, ecn, aqm))
    return path


BAD = [
    ('python = "aqms/nope.py:Codel"', "aqm.queue.python: no such file:"),
    ('python = "aqms/codel.py:Nope"', "aqm.queue.python: aqms/codel.py has no class 'Nope'"),
    ('python = "aqms/codel.py:Codel"\nqux = 3', "aqm.queue.qux: unknown parameter of Codel"),
    ('python = "aqms/codel.py:Codel"\ntarget = 5', "aqm.queue.target: 5 has no unit"),
    ('python = "aqms/codel.py:Codel"\ntarget = "1s"', "aqm.queue.target: must be < interval"),
    ("target = '5ms'", "aqm.queue.python: queue_aqm = 'python' needs the class in [aqm.queue]"),
]


@pytest.mark.parametrize(("queue", "expect"), BAD)
def test_a_bad_per_queue_python_aqm_is_one_line_exit_2(tmp_path, queue, expect):
    (tmp_path / "aqms").mkdir()
    shutil.copy(CODEL, tmp_path / "aqms" / "codel.py")
    aqm = '[aqm]\nname = "fq"\nqueue_aqm = "python"\n[aqm.queue]\n' + queue + "\n"
    (tmp_path / "s.toml").write_text(_scenario("light", False, aqm))
    r = aqmlab_cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert expect in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_a_python_queue_aqm_needs_fq_and_the_testbed_refuses_it(tmp_path):
    (tmp_path / "aqms").mkdir()
    shutil.copy(CODEL, tmp_path / "aqms" / "codel.py")
    q = '\nqueue_aqm = "python"\n[aqm.queue]\npython = "aqms/codel.py:Codel"\n'
    (tmp_path / "s.toml").write_text(_scenario("light", False, '[aqm]\nname = "fq_codel"' + q))
    r = aqmlab_cli("run", str(tmp_path / "s.toml"), "--quiet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "aqm.queue_aqm: a Python AQM per flow queue needs name = 'fq'" in r.stderr
    (tmp_path / "s.toml").write_text(_scenario("light", False, '[aqm]\nname = "fq"' + q))
    r = aqmlab_cli("testbed", str(tmp_path / "s.toml"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "aqm.queue.python: the testbed cannot run an AQM written in Python" in r.stderr


def test_a_sweep_carries_the_per_queue_class_to_its_workers(tmp_path):
    from aqmlab.running import runner
    from aqmlab.sweep import engine, spec, store

    (tmp_path / "aqms").mkdir()
    shutil.copy(CODEL, tmp_path / "aqms" / "codel.py")
    aqm = '[aqm]\nname = "fq"\nqueue_aqm = "python"\n[aqm.queue]\npython = "aqms/codel.py:Codel"\n'
    (tmp_path / "s.toml").write_text(_scenario("heavy", False, aqm))
    (tmp_path / "sw.toml").write_text(
        'name = "pyfq"\nbase = "s.toml"\nseeds = 1\n[grid]\n"aqm.queue.target" = ["1ms", "20ms"]\n'
    )
    sw = spec.load(tmp_path / "sw.toml")
    (tmp_path / "aqms" / "codel.py").unlink()  # workers get the source from the run spec
    res = engine.run(sw, tmp_path / "out", jobs=2, quiet=True)
    assert res.ran == 2 and res.failed == 0
    drops = []
    for t in sw.tasks():
        rec = json.loads(store.record_path(tmp_path / "out", t.key).read_text())
        single = runner.run(t.scenario, seed=t.seed)
        assert runner.summary_json(rec["summary"]) == runner.summary_json(single.summary)
        drops.append((t.scenario["aqm"]["queue"]["target"], single.bottleneck))
    # The swept target reaches every queue's instance: a 1 ms target signals more than 20 ms.
    by = {str(k): v["aqm_stats"]["aqm_drops"] for k, v in drops}
    assert by["1ms"] > by["20ms"], by


def test_a_hook_raising_in_a_flow_queue_stops_the_run_in_one_line(tmp_path):
    (tmp_path / "c.py").write_text(
        "class C:\n    def enqueue(self, pkt, q, now):\n"
        "        return 0 * (1 // (3 - min(q.len_pkts, 3)))\n"
    )
    aqm = '[aqm]\nname = "fq"\nqueue_aqm = "python"\nflows = 1\n[aqm.queue]\npython = "c.py:C"\n'
    (tmp_path / "s.toml").write_text(_scenario("heavy", False, aqm))
    r = aqmlab_cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "aqm.queue.python: c.py:C.enqueue raised ZeroDivisionError" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


class _BuiltinCodelNoHooks:
    """The built-in CoDel driven from Python (``_core.BuiltinAqm``) as fq's per-queue AQM,
    forwarding the packet hooks only: the scheduler's ``on_empty`` / ``on_pushout`` are lost."""

    name = "builtin-codel"

    def __init__(self, params: dict) -> None:
        self.params_json = json.dumps(params)

    def setup(self, link) -> None:
        from aqmlab import _core

        self.inner = _core.BuiltinAqm(
            "codel",
            self.params_json,
            link.rate_bps,
            link.buffer_pkts,
            link.buffer_bytes,
            link.mean_pkt_bytes,
        )

    def enqueue(self, pkt, q, now):
        return self.inner.enqueue(pkt, q, now, self.rng)

    def dequeue(self, pkt, sojourn, q, now):
        return self.inner.dequeue(pkt, sojourn, q, now, self.rng)

    def stats(self):
        return dict(self.inner.stats())


class _BuiltinCodel(_BuiltinCodelNoHooks):
    """The same, forwarding the scheduler's hooks to the built-in as fq does for its own."""

    def on_empty(self, now):
        self.inner.on_empty(now)

    def on_pushout(self, n, now):
        self.inner.on_pushout(n, now)


class _OnlyOnEmpty(_BuiltinCodelNoHooks):
    def on_empty(self, now):
        self.inner.on_empty(now)


class _OnlyOnPushout(_BuiltinCodelNoHooks):
    def on_pushout(self, n, now):
        self.inner.on_pushout(n, now)


@pytest.mark.parametrize(
    ("load", "ecn", "params", "partials"),
    [
        # Measured: heavy needs both hooks; medium (ECN) only on_pushout (no queue empties
        # while CoDel is in its dropping state there).
        (
            "heavy",
            False,
            {"target": 0.002, "interval": 0.05},
            ("_BuiltinCodelNoHooks", "_OnlyOnEmpty", "_OnlyOnPushout"),
        ),
        ("medium", True, {"ecn": True}, ("_BuiltinCodelNoHooks", "_OnlyOnEmpty")),
    ],
)
def test_a_builtin_aqm_wrapped_per_flow_queue_runs_as_the_builtin_fq(
    tmp_path, load, ecn, params, partials
):
    """``_core.BuiltinAqm("codel")`` per fq queue, its scheduler hooks forwarded, gives the run
    of the built-in fq + codel; without the hooks (CoDel's RFC 8289 s. 5.5 reset on an empty
    queue, fq_codel's count raised by pushed-out packets) the run differs, so the hooks matter
    on these networks and the equality is their forwarding's doing."""
    units = {k: (f"{v * 1e3:g}ms" if k in ("target", "interval") else v) for k, v in params.items()}
    base = aqmlab.load_scenario(_write(tmp_path / "b.toml", load, ecn, "fq", units, queue=True))
    builtin = aqmlab.run(base)
    st = builtin.bottleneck["aqm_stats"]
    assert st["codel_drops"] + st["ecn_marks"] > 20, st
    wrapped = aqmlab.run(base, aqm=_BuiltinCodel(params))
    assert wrapped.bottleneck["aqm"] == "fq"
    assert _without_names(wrapped.summary) == _without_names(builtin.summary)
    assert st["overlimit_drops"] > 0  # fq pushed packets out: on_pushout was called
    for name in partials:
        run = aqmlab.run(base, aqm=globals()[name](params))
        assert _without_names(run.summary) != _without_names(builtin.summary), name
