"""Run identities (resumable sweeps and reproductions) follow the code, not only the version."""

from __future__ import annotations

from aqmlab.reproduce import core
from aqmlab.running import buildinfo
from aqmlab.sweep.spec import run_key


def test_a_run_of_another_build_is_not_reused(monkeypatch):
    sc = {"name": "x", "duration": "1s"}
    before = run_key(sc, 1)
    assert run_key(sc, 1) == before  # stable within one build
    # an algorithm fixed without a new version: the Rust extension's hash changes
    monkeypatch.setattr(buildinfo, "build_id", lambda: "0.1.0+another")
    assert run_key(sc, 1) != before
    spec = core.RunSpec({"aqm": "red"}, sc, 1)
    d3 = spec.digest()
    monkeypatch.setattr(buildinfo, "build_id", lambda: "0.1.0+a-fourth")
    assert spec.digest() != d3


def test_build_id_hashes_the_extension_and_the_modules():
    bid = buildinfo.build_id()
    version, digest = bid.split("+")
    assert version and len(digest) == 16
    assert any(buildinfo._PKG.glob("_core*.so")), "the hash must cover the built extension"


def test_an_ns2_run_is_keyed_by_its_script_content_not_its_path(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for d in (a, b):
        (d / "dumbbell.tcl").write_text("puts x=1\n")

    def spec(d):
        sc = {"script": str(d / "dumbbell.tcl"), "args": ["RED"], "tail": []}
        return core.RunSpec({"aqm": "red"}, sc, 1, None, "ns2")

    assert spec(a).digest() == spec(b).digest()  # a checkout elsewhere reuses the runs
    (b / "dumbbell.tcl").write_text("puts x=2\n")
    assert spec(a).digest() != spec(b).digest()  # a changed script runs again
