"""What every ns-3 cross-check shares: where ns-3 is (the ``ns3`` wheel's venv), the one ns-3
program (``scripts/ns3_dumbbell.cc``) and its build, timed runs, the git state a run was made from,
and the Markdown table helpers."""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "scripts" / "ns3_dumbbell.cc"
NS3_LIBS = ["core", "network", "internet", "traffic-control", "applications", "point-to-point"]
#: The older cross-checks' two ns-3 TCP configurations (dumbbell, codel).
VARIANTS = {"sack-off": ["--sack=0"], "sack-on": ["--sack=1"]}
MSS, PKT = 1460, 1500


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ns3_prefix(venv: Path) -> Path:
    hits = sorted(glob.glob(str(venv / "lib" / "python3*" / "site-packages" / "ns3")))
    if not hits:
        sys.exit(
            f"no ns3 package under {venv}; install it: python3 -m venv {venv} && "
            f"{venv}/bin/pip install ns3==3.44.post0"
        )
    return Path(hits[0])


def ns3_version(venv: Path) -> str:
    out = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.metadata as m; print(m.version('ns3'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def build(venv: Path, workdir: Path, name: str = "ns3_dumbbell") -> Path:
    """Compiles ns3_dumbbell.cc against the wheel's headers and libraries (if out of date) into
    ``workdir/name``."""
    prefix = ns3_prefix(venv)
    exe = workdir / name
    if exe.exists() and exe.stat().st_mtime > SRC.stat().st_mtime:
        return exe
    libdir = prefix / "lib64"
    # The wheel's libraries are a release build with NS3_LOG_ENABLE and NS3_ASSERT_ENABLE (from its
    # cmake targets); compile with the same definitions.
    cmd = [
        "g++",
        "-O2",
        "-std=c++20",
        "-DNS3_BUILD_PROFILE_RELEASE",
        "-DNS3_LOG_ENABLE",
        "-DNS3_ASSERT_ENABLE",
        f"-I{prefix / 'include'}",
        str(SRC),
        "-o",
        str(exe),
        "-Wl,--no-as-needed",
        f"-L{libdir}",
        *[f"-lns3.44-{lib}" for lib in NS3_LIBS],
        f"-Wl,-rpath,{libdir}",
    ]
    log("compiling " + SRC.name)
    subprocess.run(cmd, check=True)
    return exe


def timed(cmd: list[str], **kw) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs cmd; returns the result, its wall-clock seconds and the CPU seconds it used."""
    # Output goes to files, not pipes: nothing reads a pipe before the process ends, so an
    # output above the pipe's capacity (~64 kB: a run with thousands of flows) would block it.
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, text=True, **kw)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    res = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    return res, wall, ru.ru_utime + ru.ru_stime


def git_state() -> str:
    """The commit aqmlab runs from, and any uncommitted changes to the Rust crates."""
    git = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    changed = subprocess.run(
        ["git", "status", "--short", "--", "crates"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()[1::2]
    if changed:
        git += " with uncommitted changes to " + ", ".join(f"`{c}`" for c in changed)
    return git


def f3(x: float) -> str:
    return f"{x:.3f}"


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def kpps(x: float) -> str:
    return f"{x / 1e3:,.0f}k"


def table(rows: list[list[str]], head: list[str]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def ms(x: float) -> str:
    return f"{1e3 * x:.2f}"


def add_cache_options(ap: argparse.ArgumentParser, workdir: Path, doc: Path, what: str) -> None:
    """The options the dumbbell and CoDel cross-checks share: where ns-3 is, where their results
    are cached, and the doc section they rewrite (``what`` names it in the help)."""
    ap.add_argument("--ns3-venv", type=Path, default=Path("/work/ns3venv"))
    ap.add_argument("--workdir", type=Path, default=workdir)
    ap.add_argument("--fresh", action="store_true", help="ignore cached results")
    ap.add_argument("--rerun-ours", action="store_true", help="rerun aqmlab, keep cached ns-3 runs")
    ap.add_argument(
        "--report-only", action="store_true", help=f"rewrite the {what} from cached results"
    )
    ap.add_argument("--doc", type=Path, default=doc)


def cached_results(args: argparse.Namespace) -> tuple[Path, dict]:
    """The results cache of ``args.workdir`` (created) and what it holds (nothing with --fresh)."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    cache = args.workdir / "results.json"
    return cache, (json.loads(cache.read_text()) if cache.exists() and not args.fresh else {})
