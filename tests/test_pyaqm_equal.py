"""RED and CoDel written again in Python (examples/aqms/) decide exactly as the built-ins (issue 23
item 4): the same drop and mark sequence, packet by packet, and the same summary apart from the
AQM's name, on three scenarios each (different loads, ECN off and on).

The independent truth is the two writings: the Python files follow the paper and RFC 8289; the
Rust ones (crates/aqm/src/red.rs, codel.rs) were written earlier, separately. The built-in's
sequence is recorded by driving it hook by hook from Python (``_core.BuiltinAqm``) inside the
same simulator, with the link's own RNG.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import aqmlab
from aqmlab import _core

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "aqms"


def example(name: str):
    """Module ``examples/aqms/<name>.py`` (loaded by path: the examples are not a package)."""
    spec = importlib.util.spec_from_file_location(f"aqmlab_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


Red, Codel = example("red").Red, example("codel").Codel

#: Decision logs of the recorders, by key: a run copies its AQM, so the log lives outside it.
LOGS: dict[str, list[tuple]] = {}


class Recorder:
    """Forwards every hook to ``inner`` (a Python AQM, or a built-in when ``builtin`` names
    one) and logs each verdict with its time, flow and hook."""

    def __init__(self, key: str, inner: object = None, builtin: tuple | None = None) -> None:
        self.key, self.inner, self.builtin = key, inner, builtin
        LOGS[key] = []

    def setup(self, link: aqmlab.pyaqm.Link) -> None:
        if self.builtin is not None:
            name, params = self.builtin
            self.inner = _core.BuiltinAqm(
                name,
                json.dumps(params),
                link.rate_bps,
                link.buffer_pkts,
                link.buffer_bytes,
                link.mean_pkt_bytes,
            )
            if self.inner.wants_dequeue():
                self.dequeue = self._dequeue
        else:
            self.inner.link = link
            self.inner.setup(link)
            if hasattr(self.inner, "dequeue"):
                self.dequeue = self._dequeue
        self.drop_prob = self.inner.drop_prob if hasattr(self.inner, "drop_prob") else None
        self.avg_queue = self.inner.avg_queue if hasattr(self.inner, "avg_queue") else None

    def enqueue(self, pkt, q, now):
        if self.builtin is not None:
            v = self.inner.enqueue(pkt, q, now, self.rng)
        else:
            self.inner.rng = self.rng
            v = self.inner.enqueue(pkt, q, now)
        if v:
            LOGS[self.key].append(("enq", now, pkt.flow, int(v)))
        return v

    def _dequeue(self, pkt, sojourn, q, now):
        if self.builtin is not None:
            v = self.inner.dequeue(pkt, sojourn, q, now, self.rng)
        else:
            v = self.inner.dequeue(pkt, sojourn, q, now)
        if v:
            LOGS[self.key].append(("deq", now, pkt.flow, int(v)))
        return v

    def stats(self):
        return dict(self.inner.stats())


def _scenario(load: str, ecn: bool, aqm: dict) -> dict:
    rate, flows, buffer = {
        "light": ("20Mbps", 4, 100),
        "medium": ("10Mbps", 16, 80),
        "heavy": ("5Mbps", 40, 60),
    }[load]
    return {
        "name": f"eq-{load}",
        "duration": "12s",
        "warmup": "2s",
        "seed": 7,
        "topology": {"type": "dumbbell", "rate": rate, "delay": "10ms", "buffer": buffer},
        "aqm": aqm,
        "tcp": {"ecn": ecn},
        "flows": [{"count": flows, "start_spread": "1s"}],
    }


def _without_name(summary: dict) -> str:
    s = json.loads(json.dumps(summary))
    for link in s["links"]:
        link.pop("aqm", None)
    return json.dumps(s, sort_keys=True)


CASES = [
    ("red", "light", False, {"min_th": 5, "max_th": 15, "w_q": 0.002, "max_p": 0.1}),
    ("red", "medium", True, {"min_th": 10, "max_th": 30, "gentle": True, "ecn": True}),
    ("red", "heavy", False, {"min_th": 10, "max_th": 25, "wait": True, "gentle": True}),
    ("codel", "light", False, {}),
    ("codel", "medium", True, {"ecn": True}),
    ("codel", "heavy", False, {"target": "2ms", "interval": "50ms"}),
]


@pytest.mark.parametrize(("name", "load", "ecn", "params"), CASES)
def test_python_port_decides_as_the_builtin(name, load, ecn, params):
    cls = {"red": Red, "codel": Codel}[name]
    sc = _scenario(load, ecn, {"name": name, **params})
    builtin = aqmlab.run(sc)
    python = aqmlab.run(sc, aqm=cls(**params))
    b = builtin.bottleneck
    assert python.bottleneck["aqm"] == f"{name}.py" and b["aqm"] == name
    signals = b["aqm_stats"].get("marks", 0) + b["dropped_aqm"]
    assert signals > 20, f"the scenario must make {name} act (got {signals} signals)"
    if ecn:
        assert b["aqm_stats"]["marks"] > 0, "ECN on: the scenario must produce marks"
    assert _without_name(python.summary) == _without_name(builtin.summary)
    for col in ("drop_prob", "avg_queue"):
        if col in builtin.queue:
            assert python.queue[col].tolist() == builtin.queue[col].tolist()

    # Packet by packet: both recorded in the same simulator, the built-in driven from Python.
    rust_params = dict(params)
    for k in ("target", "interval"):
        if k in rust_params:
            rust_params[k] = float(rust_params[k].rstrip("ms")) / 1e3
    rec_rust = aqmlab.run(sc, aqm=Recorder(f"{name}-{load}-rust", builtin=(name, rust_params)))
    rec_py = aqmlab.run(sc, aqm=Recorder(f"{name}-{load}-py", inner=cls(**params)))
    seq_rust, seq_py = LOGS[f"{name}-{load}-rust"], LOGS[f"{name}-{load}-py"]
    st = b["aqm_stats"]  # whole-run counters, as the log (the window's are in dropped_aqm)
    keys = ("early_drops", "forced_drops", "marks") if name == "red" else ("drops", "marks")
    assert len(seq_rust) == sum(st[k] for k in keys) >= signals
    assert seq_py == seq_rust
    # The recorder changes nothing: its runs are the direct runs.
    assert _without_name(rec_rust.summary) == _without_name(builtin.summary)
    assert _without_name(rec_py.summary) == _without_name(builtin.summary)
