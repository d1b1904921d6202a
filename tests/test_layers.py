"""Layers and start-up cost (issue 10 items 6-7, issue 13 items 7 and 9).

The run layer (runner, scenario, metrics) never imports the presentation layer (plots, report) nor
pandas/matplotlib/scipy; the CLI's start-up does not load the theory (scipy) unless asked; a run's
summary.json is byte for byte what the code path before this split wrote. Timings are checked by
benches/, not here: these tests check which modules a process loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from conftest import ROOT, aqmlab_cli

HEAVY = (
    "pandas",
    "matplotlib",
    "scipy",
    "aqmlab.report.plots",
    "aqmlab.report.html",
    "aqmlab.theory",
)


def _modules_after(code: str) -> set[str]:
    """The top-level names in sys.modules after running ``code`` in a fresh interpreter."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def test_a_cli_run_loads_no_presentation_and_no_pandas(small_scenario, tmp_path):
    mods = _modules_after(
        "from aqmlab.cli import main as cli\n"
        f"assert cli.main(['run', {str(small_scenario)!r}, '--out', {str(tmp_path / 'r')!r}]) == 0"
    )
    assert (tmp_path / "r" / "summary.json").is_file()
    loaded = [m for m in HEAVY if m in mods]
    assert loaded == [], f"a plain run imported {loaded}"


@pytest.mark.parametrize("args", [["--help"], ["list"], ["run", "--help"]])
def test_start_up_does_not_load_the_theory_or_scipy(args):
    mods = _modules_after(
        "from aqmlab.cli import main as cli\n"
        f"try:\n    cli.main({args!r})\nexcept SystemExit:\n    pass"
    )
    loaded = [m for m in (*HEAVY, "numpy", "pydantic") if m in mods]
    assert loaded == [], f"{args} imported {loaded}"


@pytest.mark.parametrize("args", [["--help"], ["list"]])
def test_start_up_loads_no_subcommand_package(args):
    # What once made --help and list slow (docs/benchmarks.md, "CLI start-up"): parsing imported
    # the testbed package (subprocess, tempfile, hashlib...), and the package face pathlib/typing.
    mods = _modules_after(
        "from aqmlab.cli import main as cli\n"
        f"try:\n    cli.main({args!r})\nexcept SystemExit:\n    pass"
    )
    heavy = ("aqmlab.testbed", "aqmlab.reproduce", "aqmlab.running", "subprocess", "pathlib")
    loaded = [m for m in heavy if m in mods]
    assert loaded == [], f"{args} imported {loaded}"


def test_theory_is_still_listed_and_runs_when_named():
    top = aqmlab_cli("--help")
    assert top.returncode == 0 and "theory" in top.stdout
    r = aqmlab_cli("theory", "routh", "1", "2", "3")
    assert r.returncode == 0, r.stderr
    # s^2 + 2s + 3: all first-column entries positive, so stable (Routh-Hurwitz).
    assert "s^0" in r.stdout and "stable" in r.stdout.lower()


def test_version_and_python_dash_m():
    from aqmlab import __version__

    v = aqmlab_cli("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"aqmlab {__version__}"
    r = subprocess.run(
        [sys.executable, "-m", "aqmlab", "--version"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and r.stdout == v.stdout


def test_report_command_draws_plots_of_a_finished_run(small_scenario, tmp_path):
    out = tmp_path / "r"
    assert aqmlab_cli("run", str(small_scenario), "--out", str(out)).returncode == 0
    assert not (out / "report.html").exists() and not (out / "queue.png").exists()
    before = (out / "summary.json").read_bytes()
    r = aqmlab_cli("report", str(out))
    assert r.returncode == 0, r.stderr
    page = (out / "report.html").read_text()
    # queue, queueing delay, goodput
    assert page.count("data:image/png;base64,") == 3 and "<h1>small</h1>" in page
    assert (out / "queue.png").stat().st_size > 10_000
    assert (out / "summary.json").read_bytes() == before
    assert not (out / ".report.partial").exists()
    bad = aqmlab_cli("report", str(tmp_path / "nothing"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


def _old_runner(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """runner.py as it was before the run/presentation split (commit aaec059), as a module."""
    try:
        src = subprocess.run(
            ["git", "show", "aaec059:python/aqmlab/runner.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the pre-split runner is not available (no git history)")
    # Its imports, moved to where those modules live now (python/aqmlab grouped by layer, issue 20).
    moved = {
        "from aqmlab import metrics, scenario, units\n": "from aqmlab.running import metrics\n"
        "from aqmlab.scenario import schema as scenario, units\n",
        "from aqmlab import plots, report\n": "from aqmlab.report import html as report, plots\n",
        # The model holds these in seconds since units are parsed at validation (issue 20).
        'units.seconds("metrics.fixed_path_delay", m.fixed_path_delay)': "m.fixed_path_delay",
        'units.seconds("metrics.settling_smoothing", m.settling_smoothing)': "m.settling_smoothing",
    }
    for before, now in moved.items():
        assert before in src
        src = src.replace(before, now)
    mod = types.ModuleType("aqmlab_old_runner")
    monkeypatch.setitem(sys.modules, mod.__name__, mod)  # dataclasses look their module up
    exec(compile(src, "old_runner.py", "exec"), mod.__dict__)
    return mod


def _diff(old, new, path: str = "") -> set[str]:
    """Fails on any value of ``old`` missing or different in ``new``; returns the added paths."""
    if isinstance(old, dict):
        added = {f"{path}.{k}" for k in new if k not in old}
        for k, v in old.items():
            assert k in new, f"{path}.{k} missing"
            added |= _diff(v, new[k], f"{path}.{k}")
        return added
    if isinstance(old, list):
        assert len(old) == len(new), path
        pairs = enumerate(zip(old, new, strict=True))
        return set().union(*(_diff(u, v, f"{path}[{i}]") for i, (u, v) in pairs))
    assert old == new or (old != old and new != new), f"{path}: {old!r} != {new!r}"
    return set()


def test_summary_keeps_every_value_of_the_pre_split_code_path(
    small_scenario, tmp_path, monkeypatch
):
    from aqmlab.scenario import schema as scenario

    old = _old_runner(monkeypatch)
    sc = scenario.load(small_scenario)
    old.run(sc, seed=9, out=tmp_path / "old", plot=False)
    r = aqmlab_cli("run", str(small_scenario), "--seed", "9", "--out", str(tmp_path / "new"))
    assert r.returncode == 0, r.stderr
    old_s = json.loads((tmp_path / "old" / "summary.json").read_text())
    new_s = json.loads((tmp_path / "new" / "summary.json").read_text())
    # Every value of the old summary is in the new one, unchanged; the new summary only adds
    # fields (issue 9's per-group fairness and flow completion times, issue 13's probe list).
    added = _diff(old_s, new_s)
    assert added <= {".fairness.groups", ".fct", ".probe"}, added
    # The Parquet series hold the same values too.
    import pandas as pd

    q_old = pd.read_parquet(tmp_path / "old" / "link_bottleneck.parquet")
    q_new = pd.read_parquet(tmp_path / "new" / "link_bottleneck.parquet")
    assert q_old.equals(q_new)


def test_bash_completion_completes_commands_and_options(tmp_path):
    script = aqmlab_cli("completion", "bash")
    assert script.returncode == 0, script.stderr
    (tmp_path / "c.sh").write_text(script.stdout)
    probe = (
        f"source {tmp_path / 'c.sh'}\n"
        'COMP_WORDS=(aqmlab sw); COMP_CWORD=1; _shtab_aqmlab; echo "${COMPREPLY[@]}"\n'
        'COMP_WORDS=(aqmlab sweep --dr); COMP_CWORD=2; _shtab_aqmlab; echo "${COMPREPLY[@]}"\n'
    )
    r = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()[:2]
    assert first.split() == ["sweep"] and second.split() == ["--dry-run"]


def test_vector_plots_on_request(small_scenario, tmp_path):
    out = tmp_path / "r"
    assert aqmlab_cli("run", str(small_scenario), "--out", str(out), "--vector").returncode == 0
    for stem in ("queue", "goodput"):
        assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert b"<svg" in (out / f"{stem}.svg").read_bytes()[:2000]
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
    # Reproducible: drawing again gives the same SVG bytes (no creation date inside).
    first = (out / "queue.svg").read_bytes()
    assert aqmlab_cli("report", str(out), "--vector").returncode == 0
    assert (out / "queue.svg").read_bytes() == first


def test_a_result_built_from_dataframes_writes_and_reads_back(tmp_path):
    """Producers other than the simulator (the testbed) hand the runner DataFrames."""
    import numpy as np
    import pandas as pd

    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario

    sc = scenario.from_dict(__import__("tomllib").loads(SMALL_SHORT))
    sim = runner.run(sc)
    q = pd.DataFrame({"t_s": [0.0, 0.5, 1.0], "queue_pkts": [0.0, 3.0, 1.0], "n": [1, 2, 3]})
    res = runner.Result(sim.summary, series={"link:bottleneck": q}, scenario={"name": "x"})
    out = runner.write(res, scenario.build_config(sc), tmp_path / "r")
    back = runner.load(out)
    assert back.queue.equals(q) and back.queue["n"].dtype == np.int64
    assert back.summary == json.loads(runner.summary_json(sim.summary))


SMALL_SHORT = """
duration = "1s"
warmup = "0s"
[topology]
rate = "10Mbps"
[[flows]]
count = 2
"""
