"""One scenario under several AQMs: ``aqmlab compare SCENARIO --aqm red,pie,lindrop``.

Each variant is an ``[aqm]`` table. A name on ``--aqm`` is looked up, in order, among the
scenario's ``[compare.<label>]`` tables (label = the name; the table's ``name`` defaults to the
label), then the scenario's own ``[aqm]`` if it has that name, then the algorithm's defaults.
``--param label.key=value`` overrides one parameter (values are TOML: ``50``, ``"20ms"``,
``true``).
All variants run with the same seed, so their flows start at the same times.
"""

from __future__ import annotations

import json
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from aqmlab.errors import InputError
from aqmlab.running import runner
from aqmlab.scenario import schema as scenario

COLUMNS = [
    ("utilisation", "util", ".4f"),
    ("throughput_bps", "thr Mb/s", ".2f"),
    ("queue_mean_pkts", "q mean", ".1f"),
    ("queue_std_pkts", "q std", ".1f"),
    ("delay_mean_s", "delay ms", ".2f"),
    ("jitter_s", "jitter ms", ".3f"),
    ("loss_ratio", "loss", ".5f"),
    ("burst_ratio", "burst", ".3f"),
    ("ie_eff", "Ie_eff", ".2f"),
    ("impairment_c", "C", ".2f"),
    ("jain", "Jain", ".3f"),
]


@dataclass
class Comparison:
    """The runs of a comparison, by label."""

    scenario: scenario.Scenario
    results: dict[str, runner.Result]
    out_dir: Path | None = None

    def table(self) -> pd.DataFrame:
        """One row per variant: the bottleneck's metrics and Jain's index."""
        rows = []
        for label, r in self.results.items():
            b = r.bottleneck
            row = {"aqm": label, "algorithm": b["aqm"]}
            for key, _, _ in COLUMNS:
                row[key] = r.summary["fairness"]["jain_goodput"] if key == "jain" else b.get(key)
            rows.append(row)
        return pd.DataFrame(rows).set_index("aqm")

    def _repr_html_(self) -> str:
        """A notebook shows a comparison as its table."""
        return self.table().to_html(float_format=lambda x: f"{x:.4g}")

    def plot(self, zoom_s: float = 2.0) -> Any:
        """The overlaid bottleneck series as a matplotlib Figure."""
        from aqmlab.report import plots

        return plots.compare_figure(self, zoom_s)

    def text(self) -> str:
        """The table as aligned text, in display units (Mb/s, ms)."""
        df = self.table()
        head = ["aqm", "algorithm"] + [c[1] for c in COLUMNS]
        lines = [head]
        for label, row in df.iterrows():
            cells = [str(label), str(row["algorithm"])]
            for key, _, spec in COLUMNS:
                v = row[key]
                if v is None or (isinstance(v, float) and v != v):
                    cells.append("-")
                    continue
                if key == "throughput_bps":
                    v = v / 1e6
                elif key.endswith("_s"):
                    v = v * 1e3
                cells.append(format(v, spec))
            lines.append(cells)
        w = [max(len(r[i]) for r in lines) for i in range(len(head))]
        return "\n".join("  ".join(c.rjust(x) for c, x in zip(r, w, strict=True)) for r in lines)


def parse_value(raw: str, field: str) -> Any:
    """A command-line value as TOML (``50``, ``0.1``, ``true``, ``"20ms"``); bare words are
    strings."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except RecursionError:
        raise InputError(f"{field}: value nested too deeply") from None
    except tomllib.TOMLDecodeError:
        if raw.replace("_", "").replace("-", "").isalnum() or raw[:1].isdigit():
            return raw
        raise InputError(f"{field}: cannot read value {raw!r}") from None


def variants(
    sc: scenario.Scenario, names: list[str], params: list[str]
) -> dict[str, dict[str, Any]]:
    """The ``[aqm]`` table of each variant, with command-line overrides applied."""
    if not names or any(not n for n in names):
        raise InputError("--aqm: give a comma-separated list of algorithms, e.g. red,pie")
    if len(set(names)) != len(names):
        raise InputError(f"--aqm: a name is repeated in {','.join(names)}")
    from aqmlab import outdir

    out: dict[str, dict[str, Any]] = {}
    for label in names:
        outdir.safe_name(label, "--aqm")  # a label names its run's directory (issue 19)
        if label in sc.compare:
            table = {"name": label, **sc.compare[label]}
        elif sc.aqm.get("name") == label:
            table = dict(sc.aqm)
        else:
            table = {"name": label}
        out[label] = table
    for p in params:
        key, eq, raw = p.partition("=")
        label, dot, param = key.partition(".")
        if not eq or not dot or not param:
            raise InputError(f"--param: {p!r} must look like label.parameter=value")
        if label not in out:
            raise InputError(f"--param: {label!r} is not one of --aqm {','.join(names)}")
        out[label][param] = parse_value(raw, f"--param {key}")
    for label, table in out.items():
        # Validate every variant before running any (bad input loses nothing).
        scenario.check_values({"compare": {label: table}})
        probe = sc.model_copy(update={"aqm": table})
        scenario.build_config(probe)
        del label
    return out


def _run_one(args: tuple) -> tuple[str, runner.Result]:
    sc, label, table, seed, out, *engine = args
    v = sc.model_copy(update={"aqm": table, "name": f"{sc.name}/{label}"})
    if engine and engine[0] == "testbed":
        return label, _run_testbed(v, seed, out)
    return label, runner.run(v, seed=seed, out=out)


# --- engine dispatch (dropfn helper, issue 11): the same comparison on the testbed ---
ENGINES = ("sim", "testbed")


def _run_testbed(sc: scenario.Scenario, seed: int | None, out: Path | None) -> runner.Result:
    """One variant on the testbed (real Linux TCP through aqmlab-fwd; root), written like a
    simulated run."""
    from aqmlab import testbed

    return testbed.testbed(sc, seed=seed, out=out)


def _check_engine(engine: str, jobs: int) -> int:
    """The engine's name checked; testbed runs go one at a time (real time, shared cores)."""
    if engine not in ENGINES:
        raise InputError(f"--engine: must be one of {', '.join(ENGINES)} (got {engine!r})")
    if engine == "testbed":
        from aqmlab.testbed import _require_root

        _require_root()
        return 1
    return jobs


# --- end of the engine dispatch ---


def compare(
    sc: scenario.Scenario | str | Path | dict,
    aqms: list[str],
    params: list[str] | None = None,
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    jobs: int = 1,
    engine: str = "sim",
    progress: bool = False,
) -> Comparison:
    """Runs ``sc`` under each AQM of ``aqms``; with ``out``, writes each run to ``out/<label>``
    and the comparison (``compare.csv``, ``compare_queue.png``, ``report.html``) to ``out``.
    ``engine = "testbed"`` runs each variant on the testbed instead (root; one at a time).
    ``progress``: a line on stderr as each variant finishes."""
    jobs = _check_engine(engine, jobs)
    sc = runner._as_scenario(sc)
    table = variants(sc, aqms, params or [])
    out_p = Path(out) if out is not None else None
    if out_p is None:
        return _compare_into(sc, table, seed, None, jobs, engine, progress)
    from aqmlab import outdir

    # Written into <out>.partial and swapped in when complete: an earlier comparison there is
    # replaced only then, and a directory aqmlab did not write is refused, never emptied.
    with outdir.replacing(out_p, "out") as tmp:
        cmp = _compare_into(sc, table, seed, tmp, jobs, engine, progress)
    cmp.out_dir = out_p
    for label, r in cmp.results.items():
        r.out_dir = out_p / label
    return cmp


def _compare_into(
    sc: scenario.Scenario,
    table: dict[str, dict[str, Any]],
    seed: int | None,
    out_p: Path | None,
    jobs: int,
    engine: str,
    progress: bool = False,
) -> Comparison:
    tasks = [
        (sc, label, t, seed, out_p / label if out_p else None, engine) for label, t in table.items()
    ]
    results: dict[str, runner.Result] = {}

    def done(item: tuple[str, runner.Result]) -> None:
        results[item[0]] = item[1]
        if progress:
            print(f"compare: {item[0]} done ({len(results)}/{len(tasks)})", file=sys.stderr)

    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            for item in ex.map(_run_one, tasks):
                done(item)
    else:
        for t in tasks:
            done(_run_one(t))
    cmp = Comparison(sc, {label: results[label] for label in table}, out_p)
    if out_p is not None:
        (out_p / MANIFEST).write_text(
            json.dumps({"scenario": sc.model_dump(), "labels": list(table)}, indent=2) + "\n"
        )
        draw(cmp, out_p)
    return cmp


#: What ``aqmlab plot DIR`` needs to redraw a comparison: the base scenario and the labels.
MANIFEST = "compare.json"


def draw(
    cmp: Comparison, directory: Path, vector: bool = False, smooth_s: float | None = None
) -> None:
    """The figures, ``report.html`` and ``compare.csv`` of a comparison, into ``directory``
    (``compare.csv`` last: its presence marks the comparison complete)."""
    from aqmlab.report import html as report
    from aqmlab.report import plots

    formats = plots.VECTOR if vector else ()
    d = Path(directory)
    plots.compare_plot(cmp, d / "compare_queue.png", formats=formats, smooth_s=smooth_s)
    plots.compare_goodput_plot(cmp, d / "compare_goodput.png", formats=formats)
    plots.compare_delay_cdf_plot(cmp, d / "compare_delay.png", formats=formats)
    plots.compare_probe_plot(cmp, d / "compare_probe.png", formats=formats)
    report.write_comparison(cmp, d / "report.html")
    cmp.table().to_csv(d / "compare.csv")


def is_comparison(d: Path) -> bool:
    """Whether ``d`` is a directory written by :func:`compare`."""
    return (Path(d) / "compare.csv").is_file() and not (Path(d) / runner.SUMMARY).exists()


def load(d: str | Path) -> Comparison:
    """A finished comparison directory, read back (no run is repeated). Directories written
    before ``compare.json`` existed: the labels are ``compare.csv``'s rows and the base scenario
    is the first run's, its name without the ``/label`` suffix."""
    d = Path(d)
    if not is_comparison(d):
        raise InputError(f"results: {d} is not a complete comparison directory (no compare.csv)")
    man = d / MANIFEST
    if man.is_file():
        m = json.loads(man.read_text())
        labels, sc = m["labels"], scenario.from_dict(m["scenario"])
        from aqmlab import outdir

        for label in labels:  # each names a directory inside d, never one elsewhere
            outdir.safe_name(label, f"{MANIFEST} labels")
    else:
        labels = [str(x) for x in pd.read_csv(d / "compare.csv", index_col=0).index]
        first = json.loads((d / labels[0] / "scenario.json").read_text())
        first["name"] = first["name"].rsplit("/", 1)[0]
        sc = scenario.from_dict(first)
    return Comparison(sc, {label: runner.load(d / label) for label in labels}, d)
