"""Output safety (issue 19): a user's directory is never emptied, an aqmlab output directory is
replaced only when the new one is complete, names that become file names are checked up front,
and nothing is written outside the directory the user named. Each test is a reproduction from
the issue."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import aqmlab
from aqmlab import outdir
from aqmlab.report import compare
from aqmlab.running import runner
from conftest import aqmlab_cli

TINY = """
name = "tiny"
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


def _one_error_line(r, code: int = 2) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


@pytest.mark.parametrize("command", ["run", "compare", "sweep"])
def test_an_existing_directory_that_is_not_aqmlab_output_is_refused_never_emptied(
    command, tiny, tmp_path
):
    # The issue: `aqmlab run X --out DIR` deleted a thesis.tex that was in DIR.
    user = tmp_path / "thesis"
    user.mkdir()
    (user / "thesis.tex").write_text("\\documentclass{book} % years of work\n")
    (user / "figs").mkdir()
    (user / "figs" / "a.pdf").write_bytes(b"%PDF-1.5")
    before = _tree(user)
    if command == "run":
        r = aqmlab_cli("run", str(tiny), "--out", str(user), "--quiet")
    elif command == "compare":
        r = aqmlab_cli("compare", str(tiny), "--aqm", "red,pie", "--out", str(user))
    else:
        sw = tmp_path / "s.toml"
        sw.write_text(f'base = "{tiny}"\nseeds = 1\n[grid]\n"aqm.max_p" = [0.1]\n')
        r = aqmlab_cli("sweep", str(sw), "--out", str(user), "--quiet")
    line = _one_error_line(r)
    assert "--out" in line and "not an aqmlab output directory" in line
    assert _tree(user) == before  # not a byte lost, nothing added
    assert not (tmp_path / "thesis.partial").exists() and not (tmp_path / "thesis.old").exists()


def test_the_python_api_refuses_it_too(tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me")
    with pytest.raises(aqmlab.InputError, match="not an aqmlab output directory"):
        aqmlab.run(TINY_DICT, out=user)
    assert (user / "notes.txt").read_text() == "keep me"


TINY_DICT = {
    "duration": "1.5s",
    "warmup": "0.5s",
    "topology": {"rate": "10Mbps", "buffer": 100},
    "aqm": {"name": "red"},
    "flows": [{"count": 2}],
}


def test_an_aqmlab_directory_is_replaced_only_once_the_new_one_is_complete(tmp_path, monkeypatch):
    out = tmp_path / "r"
    aqmlab.run(TINY_DICT, out=out, seed=1)
    old = _tree(out)
    assert (out / outdir.MARKER).is_file()

    # A second run that fails while writing leaves the first one whole.
    def boom(*a, **k):
        raise RuntimeError("failed half-way")

    monkeypatch.setattr(runner, "_write_parquet", boom)
    with pytest.raises(RuntimeError):
        aqmlab.run(TINY_DICT, out=out, seed=2)
    assert _tree(out) == old
    assert not (tmp_path / "r.partial").exists()
    monkeypatch.undo()
    aqmlab.run(TINY_DICT, out=out, seed=2)
    assert json.loads((out / "summary.json").read_text())["run"]["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no .partial, no .old


def test_an_empty_existing_directory_is_used(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    aqmlab.run(TINY_DICT, out=out)
    assert (out / "summary.json").is_file()


def test_proc_path_is_one_line_exit_2(tiny):
    # Regression: "internal error: FileNotFoundError", exit 1 (fixed once, came back).
    for command in (
        ["run", str(tiny), "--quiet"],
        ["compare", str(tiny), "--aqm", "red"],
    ):
        r = aqmlab_cli(*command, "--out", "/proc/nope/x")
        line = _one_error_line(r)
        assert "--out" in line and "/proc/nope/x" in line


@pytest.mark.parametrize("label", ["../../x", "/abs/dir", "a/b", "..", ".hidden"])
def test_compare_labels_that_are_not_one_file_name_are_refused_up_front(label, tmp_path):
    target = tmp_path / "abs"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    label = str(target) if label == "/abs/dir" else label
    sc = tmp_path / "c.toml"
    sc.write_text(TINY + f'\n[compare."{label}"]\nname = "pie"\n')
    work = tmp_path / "work"
    work.mkdir()
    r = aqmlab_cli("compare", str(sc), "--aqm", label, "--out", "cmp", cwd=work)
    line = _one_error_line(r)
    assert line.startswith("error: --aqm:") and "file name" in line
    assert sorted(p.name for p in work.iterdir()) == []  # nothing written anywhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["abs", "c.toml", "work"]
    assert (target / "keep.txt").read_text() == "keep"


@pytest.mark.parametrize("name", ["../../x", "/tmp/elsewhere", ".."])
def test_a_scenario_name_cannot_move_the_default_output(name, tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(TINY.replace('name = "tiny"', f"name = {json.dumps(name)}"))
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    for command in (["run", str(sc), "--quiet"], ["compare", str(sc), "--aqm", "red"]):
        r = aqmlab_cli(*command, cwd=work)
        line = _one_error_line(r)
        assert line.startswith("error: name") and "file name" in line
    assert list(work.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "a",
        "s.toml",
    ]


def test_a_sweep_name_cannot_move_the_default_output(tiny, tmp_path):
    sw = tmp_path / "s.toml"
    sw.write_text(f'name = ".."\nbase = "{tiny}"\n[grid]\n"aqm.max_p" = [0.1]\n')
    r = aqmlab_cli("sweep", str(sw), "--quiet", cwd=tmp_path)
    assert "name" in _one_error_line(r)
    assert not (tmp_path / "runs").exists()


def test_a_probe_name_with_a_slash_is_refused_before_the_run(tmp_path):
    # The issue: it failed only after the whole simulation, leaving a .partial directory.
    d = {**TINY_DICT, "flows": [{"count": 2}, {"type": "probe", "name": "a/b"}]}
    with pytest.raises(aqmlab.InputError, match=r"flows\[1\]\.name: 'a/b'"):
        aqmlab.run(d, out=tmp_path / "r")
    assert list(tmp_path.iterdir()) == []


def test_compare_writes_into_a_sibling_and_swaps(tiny, tmp_path):
    out = tmp_path / "cmp"
    first = compare.compare(str(tiny), ["red", "pie"], out=out, jobs=1)
    assert first.out_dir == out and first.results["red"].out_dir == out / "red"
    assert (out / "compare.csv").is_file() and (out / "red" / "summary.json").is_file()
    # A second comparison with other AQMs replaces it whole: no stale run of the first.
    compare.compare(str(tiny), ["codel"], out=out, jobs=1)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["codel"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmp", "tiny.toml"]


def test_a_full_disk_during_a_run_is_one_line_and_cleans_the_partial(tiny, tmp_path, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runner, "_write_parquet", full)
    with pytest.raises(outdir.OutputError, match="No space left on device; free some space"):
        aqmlab.run(TINY_DICT, out=tmp_path / "r")
    assert list(tmp_path.glob("r*")) == []


def test_safe_name_rules():
    for ok in ("red", "red-2", "PIE_15ms", "é", "a.b", "with space"):
        assert outdir.safe_name(ok, "f") == ok
    for bad in ("", ".", "..", "../x", "/x", "a/b", "a\\b", ".x", "-x", "a\x00b", "x" * 300, 5):
        with pytest.raises(aqmlab.InputError, match=r"^f: "):
            outdir.safe_name(bad, "f")


def test_a_users_directory_with_one_common_name_is_not_taken_for_aqmlab_output(tmp_path):
    # A config.json or summary.json alone is a user's file; only aqmlab's sets of names count.
    for name in ("config.json", "summary.json", "compare.csv", "sweep.json"):
        d = tmp_path / name.replace(".", "_")
        d.mkdir()
        (d / name).write_text("{}")
        (d / "mine.txt").write_text("keep")
        assert not outdir.is_output_dir(d)
        with pytest.raises(aqmlab.InputError, match="not an aqmlab output directory"):
            outdir.check(d)
    old_run = tmp_path / "old_run"
    old_run.mkdir()
    for name in ("summary.json", "scenario.json", "run.json"):
        (old_run / name).write_text("{}")
    assert outdir.is_output_dir(old_run)


def test_reproduce_refuses_a_users_directory_before_any_run(tmp_path):
    """`reproduce PAPER --out DIR` writes DIR/<paper>: a user's directory there is refused before
    any run and left as it was (it would have had its report.md and summary.json overwritten)."""
    mine = tmp_path / "laq"
    mine.mkdir()
    (mine / "report.md").write_text("my notes")
    r = aqmlab_cli("reproduce", "laq", "--quick", "--out", str(tmp_path), cwd=tmp_path)
    line = _one_error_line(r)
    assert "not an aqmlab output directory" in line and "--out" in line
    assert sorted(p.name for p in mine.iterdir()) == ["report.md"]
    assert (mine / "report.md").read_text() == "my notes"


def test_reproduce_recognises_an_earlier_reproduction_as_its_own(tmp_path):
    earlier = tmp_path / "laq"
    (earlier / "runs").mkdir(parents=True)
    (earlier / "report.md").write_text("")
    (earlier / "summary.json").write_text("{}")
    assert outdir.is_output_dir(earlier)
    assert outdir.check(earlier, "--out") == earlier


def test_a_damaged_ns2_cache_entry_is_run_again(tmp_path):
    from aqmlab.reproduce import core

    good, bad, cut = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    good.write_text('{"links": []}')
    bad.write_text("null")
    cut.write_text('{"links": [')
    assert core._cached(good)
    assert not core._cached(bad) and not core._cached(cut)
    assert not core._cached(tmp_path / "missing.json")


@pytest.mark.skipif(
    __import__("os").geteuid() != 0, reason="the testbed needs root (CAP_NET_ADMIN, CAP_NET_RAW)"
)
def test_testbed_refuses_a_users_directory_before_the_run(tiny, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x")
    r = aqmlab_cli("testbed", str(tiny), "--out", str(mine), cwd=tmp_path)
    line = _one_error_line(r)
    assert "not an aqmlab output directory" in line
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
