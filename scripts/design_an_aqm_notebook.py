"""Writes examples/design-an-aqm.ipynb (the tutorial of docs/design-an-aqm.md, issue 23 item 6)
and executes it, keeping its text and table outputs (not its images: they are redrawn when the
notebook runs, and would make the file megabytes). tests/test_notebook.py re-executes it and
requires the same tables.

    .venv/bin/python scripts/design_an_aqm_notebook.py
"""

import argparse

import nbclient
import nbformat as nbf

argparse.ArgumentParser(
    description=__doc__.split("\n\n")[0], epilog="It takes no arguments."
).parse_args()

cells = []


def md(s):
    cells.append(nbf.v4.new_markdown_cell(s.strip()))


def code(s):
    cells.append(nbf.v4.new_code_cell(s.strip()))


md("""
# Design an AQM in Python

The loop of [docs/design-an-aqm.md](../docs/design-an-aqm.md), on one new idea: **DelayRamp**,
RED's linear ramp applied to the sojourn time of each departing packet. Prototype in Python, run it
in the simulator with real TCP, sweep its parameter with confidence intervals, compare it with
FQ-CoDel and PIE, then start the Rust port. Small scenarios, so the notebook runs in a minute (the
test suite executes it: `tests/test_notebook.py`).
""")
code("""
import tempfile
from pathlib import Path

import aqmlab
from aqmlab.report import compare
from aqmlab.sweep import plots as sweep_plots

# The repository's examples/ directory (the notebook runs from there, or from the repository).
EXAMPLES = Path.cwd() if Path("aqms").is_dir() else Path("examples")
WORK = Path(tempfile.mkdtemp(prefix="design-an-aqm-"))
""")
md("""
## 1. The prototype

A class with the hooks of the Rust `Aqm` trait: `enqueue` on arrival, `dequeue` at the head (it is
defined, so the simulator calls it for every departure), `drop_prob` for the time series, `stats`
for the summary. Parameters are declared with their units and defaults; `self.rng` is the link's
seeded generator.
""")
code("""
print((EXAMPLES / "aqms" / "delay_ramp.py").read_text())
""")
md("## 2. A run, with plots inline")
code("""
scenario = {
    "name": "tutorial",
    "duration": "15s",
    "warmup": "5s",
    "seed": 1,
    "topology": {"type": "dumbbell", "rate": "10Mbps", "delay": "10ms", "buffer": 200},
    "aqm": {"python": str((EXAMPLES / "aqms" / "delay_ramp.py").resolve()) + ":DelayRamp"},
    "flows": [{"count": 10, "start_spread": "1s"}],
}
res = aqmlab.run(scenario)
res
""")
code("""
res.plot_queue()
""")
md("""
## 3. A sweep of its parameter, with 95% confidence intervals

The sweep's run specs carry the module's source, so the same sweep runs on Dask workers that have
nothing installed (`dask="local"` or a scheduler's address).
""")
code("""
study = {
    "name": "ramp",
    "base": scenario,
    "seeds": 3,
    "grid": {"aqm.ramp": ["5ms", "20ms", "80ms"]},
}
aqmlab.sweep(study, out=WORK / "ramp", jobs=2, quiet=True)
points = aqmlab.load_sweep(WORK / "ramp", aggregated=True)
cols = [
    "aqm.ramp",
    "n",
    "bottleneck.delay_mean_s",
    "bottleneck.delay_mean_s_ci95",
    "bottleneck.utilisation",
    "bottleneck.utilisation_ci95",
]
points[cols]
""")
code("""
points["ramp_ms"] = points["aqm.ramp"].str.rstrip("ms").astype(float)
sweep_plots.metric_vs_axis(points, ["ramp_ms"], "ramp_ms", "bottleneck.delay_mean_s")
""")
md("""
## 4. Against FQ-CoDel and PIE

The same scenario, the same seed, under each AQM; a Python AQM is one more `[compare.<label>]`
table.
""")
code("""
sc = aqmlab.Scenario.model_validate(
    {**scenario, "compare": {"delay_ramp": {"python": scenario["aqm"]["python"]}}}
)
cmp = compare.compare(sc, ["fq_codel", "pie", "delay_ramp"])
cmp
""")
code("""
cmp.plot()
""")
md("""
## 5. The Rust port

`aqmlab new-aqm delay_ramp` writes `crates/aqm/src/delay_ramp.rs` (citation header, ParamSpec
table, params / state / stats apart, a harness test), its registry line and
`docs/algorithms/delay_ramp.md`; it builds and passes `make test` as generated, with a placeholder
rule. Porting means filling in the rule (`ramp()` above) and its tests; then point
`tests/test_pyaqm_equal.py` at it to prove the two decide alike. Here it writes into a scratch copy
of the sources, to show the file.
""")
code("""
import shutil
import subprocess
import sys

repo = EXAMPLES.resolve().parent
scratch = WORK / "repo"
shutil.copytree(repo / "crates" / "aqm" / "src", scratch / "crates" / "aqm" / "src")
(scratch / "docs" / "algorithms").mkdir(parents=True)
out = subprocess.run(
    [sys.executable, "-m", "aqmlab", "new-aqm", "delay_ramp", "--root", str(scratch)],
    capture_output=True, text=True, check=True,
)
print(out.stdout.replace(str(scratch), "<scratch>"))
print("\\n".join((scratch / "crates/aqm/src/delay_ramp.rs").read_text().splitlines()[:30]))
""")
nb = nbf.v4.new_notebook(
    cells=cells,
    metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
)
nbclient.NotebookClient(
    nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "."}}
).execute()
for c in nb.cells:
    if c.cell_type == "code":
        c.outputs = [o for o in c.outputs if o.get("name") != "stderr"]
        for o in c.outputs:
            o.get("data", {}).pop("image/png", None)
nbf.write(nb, "examples/design-an-aqm.ipynb")
