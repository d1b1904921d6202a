"""``aqmlab new-aqm NAME`` (issue 23 item 5): the files it writes into a copy of the source tree,
formatted as ``cargo fmt`` leaves them, and one-line refusals of bad or taken names that write
nothing. (The generated crate's clippy and tests were run on a copy of the repository when this
was written: docs/design-an-aqm.md, "The Rust port"; a full cargo build is too slow for here.)"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, aqmlab_cli


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "crates" / "aqm" / "src"
    src.mkdir(parents=True)
    for f in ("lib.rs", "registry.rs", "red.rs"):
        shutil.copy(ROOT / "crates" / "aqm" / "src" / f, src / f)
    sched = tmp_path / "crates" / "qdisc" / "src" / "sched"
    sched.mkdir(parents=True)
    shutil.copy(ROOT / "crates" / "qdisc" / "src" / "sched" / "fq.rs", sched / "fq.rs")
    (tmp_path / "docs" / "algorithms").mkdir(parents=True)
    return tmp_path


def test_new_aqm_writes_the_file_registry_line_test_and_docs_page(tree):
    r = aqmlab_cli("new-aqm", "my_idea", "--root", str(tree))
    assert r.returncode == 0, r.stderr
    src = tree / "crates" / "aqm" / "src"
    rust = (src / "my_idea.rs").read_text()
    for part in (
        "//! MY-IDEA:", "//! Source:", "pub const PARAMS: &[ParamSpec]", "pub struct MyIdeaParams",
        "pub struct MyIdeaState", "pub struct MyIdeaStats", "pub fn over_threshold",
        "impl Aqm for MyIdea", "#[cfg(test)]", 'name: "my_idea"',
    ):  # fmt: skip
        assert part in rust, part
    lib = (src / "lib.rs").read_text()
    assert lib.count("pub mod my_idea;\n") == 1
    mods = [x for x in lib.splitlines() if x.startswith("pub mod ")]
    assert mods == sorted(mods)
    reg = (src / "registry.rs").read_text()
    assert reg.count("crate::my_idea::INFO,") == 1
    assert reg.index("crate::my_idea::INFO") < reg.index("];", reg.index("pub static REGISTRY"))
    assert "# `my_idea`" in (tree / "docs" / "algorithms" / "my_idea.md").read_text()
    # fq may run it on every flow queue: its list of per-queue AQMs is the registry's.
    fq = (tree / "crates" / "qdisc" / "src" / "sched" / "fq.rs").read_text()
    aqms = fq[fq.index("pub const QUEUE_AQMS") : fq.index("];", fq.index("pub const QUEUE_AQMS"))]
    assert aqms.count('"my_idea",') == 1 and aqms.rstrip().endswith('"my_idea",')
    rustfmt = shutil.which("rustfmt")
    if rustfmt:
        chk = subprocess.run(
            [rustfmt, "--check", "--edition", "2021", str(src / "my_idea.rs")],
            capture_output=True,
            text=True,
        )
        assert chk.returncode == 0, chk.stdout
    # The same name again is taken.
    again = aqmlab_cli("new-aqm", "my_idea", "--root", str(tree))
    assert again.returncode == 2 and "exists already" in again.stderr


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("red", "an AQM named 'red' exists already"),
        ("fq_codel", "'fq_codel' is reserved"),
        ("impl", "'impl' is reserved"),
        ("testing", "'testing' is reserved"),
        ("My-Idea", "NAME must be 2-31 characters"),
        ("9lives", "NAME must be 2-31 characters"),
        ("a", "NAME must be 2-31 characters"),
        ("x" * 40, "NAME must be 2-31 characters"),
        ("../evil", "NAME must be 2-31 characters"),
    ],
)
def test_bad_or_taken_names_are_one_line_exit_2_and_nothing_is_written(tree, name, expect):
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    r = aqmlab_cli("new-aqm", name, "--root", str(tree))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert expect in r.stderr
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_a_directory_without_the_sources_is_refused(tmp_path):
    r = aqmlab_cli("new-aqm", "my_idea", "--root", str(tmp_path))
    assert r.returncode == 2 and "no aqmlab source tree" in r.stderr
