"""``aqmlab evaluate``: plans the guideline's scenarios for each AQM, runs them as one resumable
sweep (local cores or Dask), and hands the records to the analysis and the card.

Output directory (``--out``, default ``runs/evaluate/<aqms>[-quick]``)::

    sweep/      the sweep (sweep.json, runs/<key>.json, series/<key>/): resumed by the same command
    card/       the report card (report.html, report.md, card.csv, runs.csv, *.png), written as
                card.partial and swapped in when complete
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from aqmlab import outdir
from aqmlab.errors import InputError, one_line
from aqmlab.evaluate import params as prm
from aqmlab.evaluate.plan import Cell, Plan

DEFAULT_BASELINES = ("fq_codel", "pie", "red")


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def check_names(aqms: list[str], baselines: list[str]) -> None:
    """Every name must be a registered AQM; no AQM twice."""
    from aqmlab.scenario import algorithms

    known = algorithms.names()
    for field_, names in (("AQM", aqms), ("--baselines", baselines)):
        for n in names:
            if n not in known:
                raise InputError(f"{field_}: unknown AQM {n!r}; registered: {', '.join(known)}")
    every = aqms + baselines
    dup = next((n for n in every if every.count(n) > 1), None)
    if dup is not None:
        raise InputError(f"AQM: {dup!r} is given twice (under test and as a baseline, or twice)")
    if not aqms:
        raise InputError("AQM: name at least one AQM to evaluate")


def _ecn_capable() -> set[str]:
    from aqmlab.scenario import algorithms

    return {a["name"] for a in algorithms.catalog() if any(p["name"] == "ecn" for p in a["params"])}


def probe(sc_dict: dict[str, Any]) -> str | None:
    """None if the simulator runs this scenario, else why not (one line): the scenario is
    validated and simulated for 50 ms. This is how the card finds that a feature another part of
    aqmlab provides (BBR, LEDBAT, the fq scheduler, a rate schedule) is missing from this build."""
    from aqmlab.running import runner
    from aqmlab.scenario import schema

    tiny = {**sc_dict, "duration": "50ms", "warmup": "0s"}
    try:
        sc = schema.from_dict(tiny)
        schema.build_config(sc)
        runner.run(sc)
    except InputError as e:
        return one_line(str(e))
    except Exception as e:  # the simulator refused it in another way: still "missing"
        return one_line(f"{type(e).__name__}: {e}")
    return None


def plan(
    aqms: list[str],
    baselines: list[str],
    params: prm.Params,
    quick: bool,
    quiet: bool = True,
) -> Plan:
    """Builds every cell; a scenario whose requirement this build lacks is marked missing (probed
    once per scenario, with the first AQM it applies to)."""
    check_names(aqms, baselines)
    ecn = _ecn_capable()
    seeds_n = int(params.setting("seeds", quick))
    cells: list[Cell] = []
    probed: dict[str, str | None] = {}
    for sc in params.scenarios:
        if quick and not sc.quick:
            continue
        for name in aqms + baselines:
            cell = Cell(sc, name, "test" if name in aqms else "baseline")
            try:
                cell.scenario_dict = prm.build(params, sc, name, quick, ecn)
            except prm.NotApplicableError as e:
                cell.not_applicable = str(e)
                cells.append(cell)
                continue
            if sc.requires:
                if sc.id not in probed:
                    probed[sc.id] = probe(cell.scenario_dict)
                    if probed[sc.id] is not None:
                        _say(f"evaluate: {sc.id} (s. {sc.section}): missing: {sc.requires}", quiet)
                if probed[sc.id] is not None:
                    cell.missing = f"{sc.requires} — {probed[sc.id]}"
            cells.append(cell)
    from aqmlab.scenario import schema

    base_seed = 1
    seeds = [base_seed + i for i in range(seeds_n)]
    for c in cells:  # every runnable cell validated up front: a bad file fails before any run
        if c.scenario_dict is None or c.missing:
            continue
        try:
            sc = schema.from_dict(c.scenario_dict)
            schema.build_config(sc)
        except InputError as e:
            s = c.scenario
            if s.requires or s.aqm_wrap is not None or s.ecn:
                # a feature that exists but not for this AQM (say, a scheduler whose queues take
                # only some AQMs): this cell is not applicable, the rest of the card goes on
                c.not_applicable = one_line(str(e))
                c.scenario_dict = None
                continue
            raise InputError(f"--params: scenario {c.scenario.id} with {c.aqm}: {e}") from None
        c.scenario_dict = sc.model_dump()
    return Plan(params, aqms, baselines, quick, seeds, cells)


def sweep_of(pl: Plan, name: str):
    """The sweep that runs every runnable cell under every seed (series kept: the card plots
    time series and computes the loss synchronisation and settling times from them)."""
    from aqmlab.sweep.spec import Sweep, run_key

    points = []
    for c in pl.cells:
        if c.scenario_dict is None or c.missing:
            continue
        points.append(
            (
                f"{c.scenario.id}/{c.aqm}",
                {"scenario": c.scenario.id, "aqm_under": c.aqm},
                c.scenario_dict,
            )
        )
        c.keys = [run_key(c.scenario_dict, s) for s in pl.seeds]
    return Sweep(name, points, pl.seeds, series=True)


def default_out(aqms: list[str], quick: bool) -> Path:
    """``runs/evaluate/<aqm>+<aqm>[-quick]``."""
    return Path("runs") / "evaluate" / ("+".join(aqms) + ("-quick" if quick else ""))


def evaluate(
    aqms: list[str],
    *,
    baselines: list[str] | None = None,
    quick: bool = False,
    out: str | Path | None = None,
    params_file: str | Path | None = None,
    jobs: int | None = None,
    dask: str | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Runs (or resumes) the evaluation and writes the card; returns the card's tables."""
    from aqmlab.evaluate import analyse, card
    from aqmlab.sweep import engine

    t0 = time.perf_counter()
    baselines = list(DEFAULT_BASELINES) if baselines is None else baselines
    baselines = [b for b in baselines if b not in aqms] if baselines is not None else []
    params = prm.load(params_file)
    out_p = outdir.check(out or default_out(aqms, quick), "--out")
    for a in aqms:
        outdir.safe_name(a, "AQM")
    pl = plan(aqms, baselines, params, quick, quiet)
    sw = sweep_of(pl, "evaluate")
    runnable = sum(1 for c in pl.cells if c.keys)
    _say(
        f"evaluate: {', '.join(aqms)} against {', '.join(baselines) or 'no baseline'}: "
        f"{len(pl.scenarios)} scenarios, {runnable} scenario x AQM cells x {len(pl.seeds)} "
        f"seed(s) = {runnable * len(pl.seeds)} runs{' (quick)' if quick else ''}",
        quiet,
    )
    try:
        out_p.mkdir(parents=True, exist_ok=True)
        outdir.mark(out_p)
    except OSError as e:
        raise outdir.fault(e, out_p) from None
    outcome = engine.run(sw, out_p / "sweep", jobs=jobs, dask=dask, quiet=quiet)
    _say(
        f"evaluate: {outcome.ran} runs done now, {outcome.reused} reused, {outcome.failed} failed"
        + (f" (first: {outcome.first_error})" if outcome.first_error else ""),
        quiet,
    )
    _say("evaluate: computing the metrics and writing the card", quiet)
    t1 = time.perf_counter()
    tables = analyse.analyse(pl, out_p / "sweep")
    with outdir.replacing(out_p / "card", "--out") as tmp:
        card.write(pl, tables, tmp, wall_s=time.perf_counter() - t0)
    wall = time.perf_counter() - t0
    _say(f"evaluate: card in {time.perf_counter() - t1:.1f} s", quiet)
    tables["out_dir"] = out_p
    tables["card_dir"] = out_p / "card"
    tables["wall_s"] = wall
    return tables
