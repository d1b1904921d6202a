"""The wheel (issue 13 item 6, issue 19 item 4): installs into a fresh virtualenv with no Rust
toolchain on PATH and runs a simulation, and as root a short testbed scenario on the forwarder and
traffic tool the wheel carries. Slow (a venv and the dependencies): `make dist-check` builds the
wheel and runs this with AQMLAB_WHEEL_TEST=1; otherwise it is skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SMALL

pytestmark = pytest.mark.skipif(
    not os.environ.get("AQMLAB_WHEEL_TEST"),
    reason="slow: run by `make dist-check` (AQMLAB_WHEEL_TEST=1) after `make dist`",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """(venv, environment without cargo, working directory) with the wheel installed."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    wheels = sorted((ROOT / "dist").glob("aqmlab-*-abi3-*.whl"))
    assert wheels, "no abi3 wheel in dist/ (make dist)"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # PATH holds the venv and the system directories only: no cargo, no rustc (the testbed
    # needs ip and ethtool, which live in the sbin directories).
    env = {"PATH": f"{venv / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tmp_path)}
    assert shutil.which("cargo", path=env["PATH"]) is None
    assert shutil.which("rustc", path=env["PATH"]) is None
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    r = subprocess.run(
        [*pip, "-c", str(ROOT / "constraints.txt"), str(wheels[-1])],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return venv, env, tmp_path


def test_wheel_installs_without_rust_and_runs(installed):
    venv, env, tmp_path = installed
    (tmp_path / "small.toml").write_text(SMALL)
    aqmlab = str(venv / "bin" / "aqmlab")
    run = subprocess.run(
        [aqmlab, "run", "small.toml", "--out", "r"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["links"][0]["name"] == "bottleneck" and 0.5 < s["links"][0]["utilisation"] <= 1
    # The package it ran is the installed one, not this checkout.
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import aqmlab; print(aqmlab.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert str(venv) in where.stdout, where.stdout
    ver = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "aqmlab", "--version"], env=env, capture_output=True
    )
    assert ver.returncode == 0 and ver.stdout.startswith(b"aqmlab ")


def test_wheel_carries_the_testbed_programs_and_runs_a_testbed_scenario(installed):
    venv, env, tmp_path = installed
    pkg = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import aqmlab, os; print(os.path.dirname(aqmlab.__file__))",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout.strip()
    progs = {n: Path(pkg) / "_bin" / n for n in ("aqmlab-fwd", "aqmlab-traffic")}
    for p in progs.values():  # in the wheel, installed executable
        assert p.is_file() and os.access(p, os.X_OK), p
    # They need no newer C library than the wheel's platform tag promises (manylinux_X_Y: glibc
    # X.Y; the tag is chosen from the extension module, the programs are built beside it).
    tag = re.search(r"manylinux_(\d+)_(\d+)", sorted((ROOT / "dist").glob("*.whl"))[-1].name)
    if tag and shutil.which("objdump"):
        for p in progs.values():
            syms = subprocess.run(["objdump", "-T", str(p)], capture_output=True, text=True).stdout
            need = max(
                (tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_([\d.]+)", syms)),
                default=(0,),
            )
            assert need <= (int(tag[1]), int(tag[2])), (p.name, need, tag[0])
    # They run on this platform (the traffic tool's bad-input path: one line, exit 2).
    r = subprocess.run([str(progs["aqmlab-traffic"]), "nonsense"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    if os.geteuid() != 0:
        pytest.skip("the testbed step needs root (network namespaces, raw sockets): run as root")
    for tool in ("ip", "ethtool"):
        if shutil.which(tool, path=env["PATH"]) is None:
            pytest.skip(f"the testbed step needs the {tool} command (Debian: iproute2, ethtool)")
    sc = (ROOT / "scenarios" / "testbed" / "red-4-cubic.toml").read_text()
    (tmp_path / "tb.toml").write_text(sc.replace('duration = "5s"', 'duration = "2s"'))
    run = subprocess.run(
        [str(venv / "bin" / "aqmlab"), "testbed", "tb.toml", "--out", "tb", "--no-plot"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    s = json.loads((tmp_path / "tb" / "summary.json").read_text())
    assert s["engine"] == "testbed"
    tb = s["testbed"]
    # The wheel's programs ran (the checkout's target/ is not reachable from the venv).
    assert tb["programs"] == {
        k: str(progs[f"aqmlab-{v}"]) for k, v in (("forwarder", "fwd"), ("traffic", "traffic"))
    }
    c = tb["conservation"]
    assert c["received"] > 1000 and c["received"] == c["sent"] + c["dropped"] + c["in_system"]
