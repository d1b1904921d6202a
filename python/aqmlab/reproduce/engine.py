"""Runs a reproduction and judges it: the verdict rule of the package doc."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

import pandas as pd

from aqmlab import outdir
from aqmlab.reproduce import core
from aqmlab.reproduce.papers import PAPERS

RANK_OK = 0.8
REL_OK = 0.25


def verdicts(cells: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """One verdict per published table, by the rule in the package doc. A table with no ranking
    to check (a Routh table) is judged on its values alone."""
    rows = []
    for table, g in cells.groupby("table", sort=False):
        r = ranks[ranks["table"] == table] if len(ranks) else ranks
        frac = float(r["holds"].mean()) if len(r) else float("nan")
        rel = float(g["rel_diff"].abs().median())
        rank_ok = frac >= RANK_OK if len(r) else True
        if rank_ok and rel <= REL_OK:
            v = "reproduced"
        elif rank_ok and len(r):
            v = "reproduced in ranking only"
        else:
            v = "not reproduced"
        rows.append(
            {
                "table": table,
                "metrics": ", ".join(dict.fromkeys(g["metric"])),
                "cells": len(g),
                "rows_ranking_holds": f"{int(r['holds'].sum())}/{len(r)}" if len(r) else "n/a",
                "ranking_fraction": frac,
                "median_abs_rel_diff": rel,
                "verdict": v,
            }
        )
    return pd.DataFrame(rows)


def reproduce(
    paper: str,
    *,
    quick: bool = False,
    out: str | Path | None = None,
    jobs: int | None = None,
    dask: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Runs (or resumes) one paper's reproduction and writes its comparison to ``out``
    (default ``runs/reproduce/<paper>[-quick]``). Returns the tables as DataFrames."""
    (name,) = core.check_papers([paper], PAPERS)
    mod = importlib.import_module(PAPERS[name])
    # A directory aqmlab did not write is refused before any run (issue 19); a reproduction's own
    # directory is resumed (its runs/ store) and its tables rewritten.
    out = outdir.check(out or f"runs/reproduce/{name}{'-quick' if quick else ''}", "--out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        outdir.mark(out)
    except OSError as e:
        raise outdir.fault(e, out) from None
    specs = mod.specs(quick)
    t0 = time.perf_counter()
    runs = core.run_specs(specs, out / "runs", jobs=jobs, progress=progress, dask=dask, name=name)
    tables = mod.compare(runs)
    if hasattr(mod, "verdicts"):  # a paper judged by its claims rather than by tables
        tables["verdicts"] = mod.verdicts(tables)
    else:
        tables["verdicts"] = verdicts(tables["cells"], tables["rankings"])
    tables["runs"] = runs
    from aqmlab.reproduce import output

    output.write(name, mod, tables, out, quick=quick, wall_s=time.perf_counter() - t0)
    tables["out_dir"] = out
    return tables
