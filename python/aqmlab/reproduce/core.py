"""The paper-independent half of `aqmlab reproduce`: experiment files, cached runs, the
side-by-side comparison with a paper's published numbers and the ranking check.

A paper plugs in as one module (``aqmlab.reproduce.<paper>``) with an :class:`Paper`-shaped set of
functions; everything it shares with the others lives here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tomllib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from aqmlab.errors import InputError

EXPERIMENTS = Path(__file__).resolve().parent.parent / "experiments"


def experiment_dir(paper: str) -> Path:
    """The directory of a paper's experiment files (``experiments/<paper>/``)."""
    return EXPERIMENTS / paper


def load_experiment(paper: str) -> dict[str, Any]:
    """A paper's ``experiment.toml``."""
    with open(experiment_dir(paper) / "experiment.toml", "rb") as f:
        return tomllib.load(f)


def load_scenario_dict(paper: str, name: str) -> dict[str, Any]:
    """A scenario file of a paper's experiment as a dict (validated when run)."""
    with open(experiment_dir(paper) / name, "rb") as f:
        return tomllib.load(f)


def load_published(paper: str, name: str = "published.csv") -> pd.DataFrame:
    """The paper's published numbers, one row per table cell."""
    return pd.read_csv(experiment_dir(paper) / name, comment="#")


@dataclass
class RunSpec:
    """One simulation of a reproduction: its coordinates, what to run and the seed.

    ``engine`` is ``"aqmlab"`` (``scenario`` is a scenario dict) or ``"ns2"`` (``scenario`` holds
    ``{"script": path, "args": [...]}`` for the ``ns`` binary, which prints ``key=value`` pairs).
    With ``series`` (aqmlab only) the run's directory, time series included, is kept, and the
    summary handed to ``extract`` carries its path as ``"_run_dir"``.
    """

    key: dict[str, Any]
    scenario: dict[str, Any]
    seed: int
    extract: Callable[[dict[str, Any]], dict[str, float]] = field(repr=False, default=None)  # type: ignore[assignment]
    engine: str = "aqmlab"
    series: bool = False

    def digest(self) -> str:
        """A hash of everything that decides the run's result: engine, scenario, seed and the
        code (aqmlab's build identity; for ns-2, the script's content rather than its path)."""
        from aqmlab.running.buildinfo import build_id, file_id

        sc = self.scenario
        if self.engine == "ns2":
            sc = {**sc, "script": file_id(sc["script"])}
        blob = json.dumps(
            {
                "engine": self.engine,
                "scenario": sc,
                "seed": self.seed,
                "version": build_id() if self.engine == "aqmlab" else "ns-2",
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _run_one(engine: str, scenario: dict[str, Any], seed: int) -> dict[str, Any]:
    """Worker of the ns-2 runs: runs one and returns its key=value output."""
    return run_ns2(scenario["script"], [*scenario["args"], str(seed), *scenario["tail"]])


def ns2_available() -> bool:
    """Whether ns-2's ``ns`` binary is on PATH (Debian package ns2)."""
    import shutil

    return shutil.which("ns") is not None


def run_ns2(script: str, args: list[str], timeout_s: float = 600.0) -> dict[str, Any]:
    """Runs an ns-2 script and parses the ``key=value`` pairs of its last output line; lines
    ``q TIME VALUE`` (a sampled queue) become the lists ``_t`` and ``_q``."""
    import subprocess

    p = subprocess.run(
        ["ns", script, *args], capture_output=True, text=True, timeout=timeout_s, check=False
    )
    lines = [x for x in p.stdout.splitlines() if "=" in x]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"ns {Path(script).name} {' '.join(args)}: {p.stderr.strip()[-300:]}")
    out: dict[str, Any] = {k: float(v) for k, v in (kv.split("=", 1) for kv in lines[-1].split())}
    samples = [x.split()[1:3] for x in p.stdout.splitlines() if x.startswith("q ")]
    if samples:
        out["_t"] = [float(t) for t, _ in samples]
        out["_q"] = [float(q) for _, q in samples]
    return out


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def run_specs(
    specs: list[RunSpec],
    cache: Path,
    jobs: int | None = None,
    progress: bool = True,
    dask: str | None = None,
    name: str = "reproduce",
) -> pd.DataFrame:
    """Runs every spec not already finished and returns one row per run: its key, engine, seed
    and the metrics its ``extract`` took from the summary.

    aqmlab runs go through the sweep engine (``aqmlab.sweep``: every local core or a Dask
    cluster, one record per run written atomically under ``cache/sweep``, so an interrupted
    reproduction resumes where it stopped); ns-2 runs are cached one JSON file each under
    ``cache/ns2``. A failed aqmlab run stops the reproduction with its error (a table with a
    missing cell would be misleading)."""
    cache.mkdir(parents=True, exist_ok=True)
    ours = [s for s in specs if s.engine == "aqmlab"]
    load_plain = _run_aqmlab(
        [s for s in ours if not s.series], cache / "sweep", jobs, progress, dask, name, False
    )
    load_series = _run_aqmlab(
        [s for s in ours if s.series], cache / "sweep-series", jobs, progress, dask, name, True
    )

    def load_aqmlab(s: RunSpec) -> dict[str, Any]:
        return load_series(s) if s.series else load_plain(s)

    load_ns2 = _run_ns2([s for s in specs if s.engine == "ns2"], cache / "ns2", jobs, progress)
    # One summary in memory at a time: a paper's runs (1,000-connection summaries by the hundred)
    # would otherwise all be held at once just to take a few metrics from each.
    rows = []
    for s in specs:
        summary = load_aqmlab(s) if s.engine == "aqmlab" else load_ns2(s)
        rows.append({**s.key, "engine": s.engine, "seed": s.seed, **s.extract(summary)})
    return pd.DataFrame(rows)


def _run_aqmlab(
    specs: list[RunSpec],
    out: Path,
    jobs: int | None,
    progress: bool,
    dask: str | None,
    name: str,
    series: bool,
) -> Callable[[RunSpec], dict[str, Any]]:
    """Runs the specs not yet recorded as one sweep in ``out`` (keeping each run's directory
    when ``series``); returns the loader of one spec's summary."""
    from aqmlab.sweep import engine, store
    from aqmlab.sweep.spec import Sweep, run_key

    def load(s: RunSpec) -> dict[str, Any]:
        key = run_key(s.scenario, s.seed)
        rec, why = store.read(store.record_path(out, key))
        if rec is None:  # damaged after the sweep validated it: one line, never a traceback
            raise InputError(
                f"reproduce: the record of run {s.key} seed {s.seed} is damaged ({why}); "
                "run the reproduction again to redo it"
            )
        if rec.get("status") != "ok":
            raise InputError(f"reproduce: run {s.key} seed {s.seed} failed: {rec.get('error')}")
        if series:
            return {**rec["summary"], "_run_dir": str(out / "series" / key)}
        return rec["summary"]

    if not specs:
        return load
    seeds = sorted({s.seed for s in specs})
    points: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    pairs = set()
    for s in specs:
        label = ",".join(f"{k}={v}" for k, v in s.key.items())
        ident = json.dumps([label, s.scenario], sort_keys=True)
        points.setdefault(ident, (label, s.key, s.scenario))
        pairs.add((ident, s.seed))
    if len(pairs) != len(points) * len(seeds):
        raise ValueError("reproduce: every point of a paper must run under the same seeds")
    sw = Sweep(name, list(points.values()), seeds, series=series)
    engine.run(sw, out, jobs=jobs, dask=dask, quiet=not progress)
    for s in specs:  # every failure is reported before any table is made
        load(s)
    return load


def _run_ns2(
    specs: list[RunSpec], cache: Path, jobs: int | None, progress: bool
) -> Callable[[RunSpec], dict[str, Any]]:
    """Runs the ns-2 specs not yet cached; returns the loader of one spec's output."""

    def load(s: RunSpec) -> dict[str, Any]:
        return json.loads((cache / f"{s.digest()}.json").read_text())

    if not specs:
        return load
    cache.mkdir(parents=True, exist_ok=True)
    todo = {s.digest(): s for s in specs if not _cached(cache / f"{s.digest()}.json")}
    jobs = max(1, jobs or os.cpu_count() or 1)
    if todo:
        bar = _bar(len(specs), len(specs) - len(todo), progress)
        try:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futs = {
                    pool.submit(_run_one, s.engine, s.scenario, s.seed): d for d, s in todo.items()
                }
                for fut in as_completed(futs):
                    _write_atomic(cache / f"{futs[fut]}.json", fut.result())
                    bar.update(1)
        finally:
            bar.close()
    return load


def _cached(p: Path) -> bool:
    """Whether ``p`` holds an ns-2 run's output: a JSON object (a damaged or truncated file is run
    again, as a damaged sweep record is)."""
    try:
        return isinstance(json.loads(p.read_text()), dict)
    except (OSError, ValueError, RecursionError):
        return False


def _bar(total: int, done: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=done,
        unit="run",
        desc="ns-2",
        disable=not enabled or None,  # None: off when stderr is not a terminal
        leave=False,
    )


def aggregate(runs: pd.DataFrame, keys: list[str], metrics: list[str]) -> pd.DataFrame:
    """Mean over seeds per point, with the half-width of a 95% Student-t confidence interval
    (``<metric>_ci``; 0 with a single seed)."""
    from scipy import stats

    g = runs.groupby(keys, sort=False)
    out = g[metrics].mean()
    n = g.size()
    for m in metrics:
        sd = g[m].std(ddof=1).fillna(0.0)
        t = n.map(lambda k: stats.t.ppf(0.975, k - 1) if k > 1 else 0.0)
        out[f"{m}_ci"] = t * sd / n.pow(0.5)
    out["seeds"] = n
    return out.reset_index()


def with_ns2(
    cells: pd.DataFrame,
    runs: pd.DataFrame,
    keys: list[str],
    metrics: list[str],
    compared: dict[str, tuple[str, str]],
) -> pd.DataFrame:
    """``cells`` with an ``ns2`` column: the mean over seeds of the ns-2 runs of the same point
    and metric (NaN where ns-2 did not run it: an algorithm it lacks, or no ``ns`` installed)."""
    ns2 = runs[runs["engine"] == "ns2"]
    if not len(ns2):
        return cells
    n = aggregate(ns2, keys, metrics)
    for pub_metric, (col, _) in compared.items():
        m = n[[*keys, col]].rename(columns={col: f"ns2_{pub_metric}"})
        cells = cells.merge(m, on=keys, how="left")
    cells["ns2"] = cells.apply(lambda r: r.get(f"ns2_{r['metric']}"), axis=1)
    return cells.drop(columns=[f"ns2_{m}" for m in compared])


def side_by_side(
    ours: pd.DataFrame, published: pd.DataFrame, keys: list[str], metric_map: dict[str, str]
) -> pd.DataFrame:
    """One row per published cell: the paper's value, ours (mean and CI), the difference and the
    relative difference (``NaN`` where the paper's value is 0).

    ``metric_map`` maps a published metric name to the column of ``ours`` it is compared with."""
    parts = []
    for pub_metric, our_col in metric_map.items():
        p = published[published["metric"] == pub_metric]
        o = ours[[*keys, our_col, f"{our_col}_ci"]].rename(
            columns={our_col: "ours", f"{our_col}_ci": "ours_ci"}
        )
        m = p.merge(o, on=keys, how="left")
        m["ours_metric"] = our_col
        parts.append(m)
    t = pd.concat(parts, ignore_index=True).rename(columns={"value": "paper"})
    t["diff"] = t["ours"] - t["paper"]
    t["rel_diff"] = t["diff"] / t["paper"].where(t["paper"] != 0)
    return t


def _tied(a: float, b: float, tie: float) -> bool:
    """Whether two values count as equal: equal, or apart by at most ``tie`` times the larger
    magnitude."""
    return a == b or abs(a - b) <= tie * max(abs(a), abs(b))


def rank_agreement(
    values_paper: dict[str, float],
    values_ours: dict[str, float],
    better: str,
    tie: float = 0.0,
    our_tie: float = 0.0,
) -> bool:
    """Whether our values order the algorithms as the paper's do: every pair the paper orders
    strictly is ordered the same way, and strictly, by ours (pairs the paper ties are not
    judged; a pair the paper separates and ours ties does not hold). With ``tie`` > 0, pairs the
    paper separates by at most ``tie`` times the larger magnitude count as ties; ``our_tie`` is
    the same for ours."""
    names = list(values_paper)
    sign = 1.0 if better == "higher" else -1.0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pa, pb = values_paper[a], values_paper[b]
            if _tied(pa, pb, tie):
                continue
            oa, ob = values_ours[a], values_ours[b]
            if _tied(oa, ob, our_tie) or (sign * (oa - ob) > 0) != (sign * (pa - pb) > 0):
                return False
    return True


def order_text(values: dict[str, float], better: str, tie: float = 0.0) -> str:
    """The algorithms best first, ``>`` between them, ``=`` where a value is tied (within ``tie``:
    see :func:`rank_agreement`) with the one before it: "droptail > modred = red"."""
    names = sorted(values, key=values.get, reverse=better == "higher")
    out = names[:1]
    for prev, n in itertools.pairwise(names):
        out += ["=" if _tied(values[prev], values[n], tie) else ">", n]
    return " ".join(out)


def ranking(
    pub_metric: str,
    t: pd.DataFrame,
    row_keys: list[str],
    col: str,
    better: str,
    tie: float = 0.0,
    our_tie: float = 0.0,
) -> pd.DataFrame:
    """Per table row (``row_keys``), the algorithms (``col``) ordered best first by the paper and
    by us, ties shown (``=``), and whether the paper's order holds (``tie``, ``our_tie``: see
    :func:`rank_agreement`)."""
    rows = []
    for key, g in t[t["metric"] == pub_metric].groupby(row_keys, sort=False):
        paper = dict(zip(g[col], g["paper"], strict=True))
        ours = dict(zip(g[col], g["ours"], strict=True))
        rows.append(
            {
                "table": g["table"].iloc[0],
                **dict(zip(row_keys, key if isinstance(key, tuple) else (key,), strict=True)),
                "metric": pub_metric,
                "paper_order": order_text(paper, better, tie),
                "our_order": order_text(ours, better, our_tie),
                "holds": rank_agreement(paper, ours, better, tie, our_tie),
            }
        )
    return pd.DataFrame(rows)


def claim_verdict(holds: bool, testable: bool = True) -> str:
    """One claim's verdict: *holds*, *does not hold*, or *not testable* (what survives of the
    paper cannot decide it: e.g. it tells apart functions that our inferred shapes make the same
    within the buffer)."""
    if not testable:
        return "not testable"
    return "holds" if holds else "does not hold"


def claim_verdicts(claims: pd.DataFrame) -> pd.DataFrame:
    """The verdict of a paper judged by its claims (``table``, ``holds`` and optionally
    ``testable`` per claim): per figure or table, *reproduced* when every testable claim about it
    holds, *reproduced in part* when some do, *not reproduced* when none does, *not testable* when
    none of its claims is testable. Untestable claims are counted apart, never as failures."""
    rows = []
    for fig, g in claims.groupby("table", sort=False):
        t = g["testable"].astype(bool) if "testable" in g else pd.Series(True, index=g.index)
        n, ok, nt = int(t.sum()), int(g.loc[t, "holds"].astype(bool).sum()), int((~t).sum())
        if n == 0:
            v = "not testable"
        else:
            v = "reproduced" if ok == n else ("reproduced in part" if ok else "not reproduced")
        rows.append(
            {
                "table": fig,
                "metrics": "claims",
                "cells": len(g),
                "rows_ranking_holds": f"{ok}/{n}" + (f" ({nt} not testable)" if nt else ""),
                "ranking_fraction": ok / n if n else float("nan"),
                "median_abs_rel_diff": float("nan"),
                "verdict": v,
            }
        )
    return pd.DataFrame(rows)


def check_papers(names: Iterable[str], known: Iterable[str]) -> list[str]:
    """Validates a ``reproduce`` paper argument (``all`` expands)."""
    known = list(known)
    out: list[str] = []
    for n in names:
        if n == "all":
            out.extend(k for k in known if k not in out)
        elif n in known:
            out.append(n)
        else:
            raise InputError(f"paper: unknown '{n[:40]}'; one of {', '.join(known)}, all")
    return out
