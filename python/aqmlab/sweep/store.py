"""A sweep's results on disk: one JSON record per run, consolidated into Parquet tables.

Layout of a sweep directory::

    sweep.json          the plan: name, axes, seeds, number of runs (rewritten at each start)
    runs/<key>.json     one record per finished run (ok or failed), written atomically
    series/<key>/       a run directory per run, only when the sweep keeps time series
    runs.parquet        one row per run: label, axis values, seed, status, every scalar metric
    points.parquet      one row per point: mean and 95% confidence half-width of each metric

A record is written to a temporary name and renamed (POSIX rename is atomic), so a run is either
wholly recorded or not at all, whenever the process is killed; the same key written twice leaves
one file. The Parquet tables are derived from the records and can always be rebuilt.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

RUNS = "runs"
META = ("key", "label", "aqm", "seed", "status", "error", "wall_s")


def record_path(out: Path, key: str) -> Path:
    """Where the record of run ``key`` lives."""
    return out / RUNS / f"{key}.json"


def write_record(out: Path, record: dict[str, Any]) -> None:
    """Writes a run's record atomically (temporary file, fsync, rename)."""
    final = record_path(out, record["key"])
    tmp = final.with_name(f".{record['key']}.{os.getpid()}.tmp")
    from aqmlab.running.runner import summary_json

    text = json.dumps({k: v for k, v in record.items() if k != "summary"}, sort_keys=True)
    body = summary_json(record["summary"]) if record.get("summary") is not None else "null"
    try:
        with open(tmp, "w") as f:
            f.write(text[:-1] + ', "summary": ' + body + "}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:  # a full disk: no stale temporary file is left behind
        tmp.unlink(missing_ok=True)
        raise


def prepare(out: Path) -> None:
    """Creates the directory (marked as aqmlab's, :mod:`aqmlab.outdir`) and removes temporary
    files left by a killed process."""
    from aqmlab import outdir

    (out / RUNS).mkdir(parents=True, exist_ok=True)
    if not (out / outdir.MARKER).exists():
        outdir.mark(out)
    prepare_cleanup(out)


def prepare_cleanup(out: Path) -> None:
    """Removes this sweep's temporary files and the ``series/<key>.partial`` directories of
    runs whose workers were stopped (after a failed write, or left by a killed process); never
    raises."""
    from aqmlab import outdir

    for stale in [*(out / RUNS).glob(".*.tmp"), *out.glob(".*.tmp")]:
        try:
            stale.unlink(missing_ok=True)
        except OSError:
            pass
    for partial in (out / "series").glob("*" + outdir.PARTIAL):
        outdir.discard(partial)


def problem(rec: Any, key: str) -> str | None:
    """What is wrong with a record read from ``runs/<key>.json`` (None: it is a valid record).

    A valid record is a JSON object with this ``key``, ``status`` "ok" or "failed", a ``point``
    object and an integer ``seed``; an "ok" record has a ``summary`` object with a ``links``
    list and a ``flows`` list, a failed one an ``error`` string. Anything else (``null``, ``[]``,
    ``{}``, a truncated summary) is damaged: the run is done again, never taken as done."""
    if not isinstance(rec, dict):
        return f"not a JSON object (a {type(rec).__name__})" if rec is not None else "null"
    if rec.get("key") != key:
        return f"its key is {rec.get('key')!r}, not the file's name"
    status = rec.get("status")
    if status not in ("ok", "failed"):
        return f"status is {status!r} (expected 'ok' or 'failed')"
    if not isinstance(rec.get("point"), dict) or not isinstance(rec.get("seed"), int):
        return "no point or seed"
    if status == "failed":
        return None if isinstance(rec.get("error"), str) else "a failed run without its error"
    summ = rec.get("summary")
    if not isinstance(summ, dict):
        return "an ok run without its summary"
    links, flows = summ.get("links"), summ.get("flows")
    if not isinstance(links, list) or not links or not all(isinstance(x, dict) for x in links):
        return "its summary has no links"
    if not isinstance(flows, list) or not all(isinstance(x, dict) for x in flows):
        return "its summary has no flows"
    if not all(isinstance(x.get("name"), str) for x in links):
        return "a link of its summary has no name"
    return None


def read(p: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The record at ``p`` and None, or None and what is wrong with it."""
    try:
        rec = json.loads(p.read_text())
    except OSError as e:
        return None, f"unreadable ({e.strerror or type(e).__name__})"
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None, "not valid JSON"
    why = problem(rec, p.stem)
    return (rec, None) if why is None else (None, why)


def finished_one(out: Path, key: str) -> str | None:
    """The status of run ``key`` if it is validly recorded, else None."""
    rec, _ = read(record_path(out, key))
    return None if rec is None else rec["status"]


def scan(out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Key -> status ("ok" or "failed") of every validly recorded run, and key -> what is wrong
    of every damaged record (run again by the engine, and reported)."""
    done, damaged = {}, {}
    for p in (out / RUNS).glob("*.json"):
        rec, why = read(p)
        if rec is None:
            damaged[p.stem] = why or "damaged"
        else:
            done[p.stem] = rec["status"]
    return done, damaged


def finished(out: Path) -> dict[str, str]:
    """Key -> status ("ok" or "failed") of every validly recorded run."""
    return scan(out)[0]


def scalars(summary: dict[str, Any]) -> dict[str, Any]:
    """Every scalar of a summary.json, flattened: ``<link>.<field>`` for each link (its
    ``aqm_stats`` as ``<link>.aqm_stats.<name>``), ``fairness.*``, ``run.*``; the per-flow list
    becomes ``flows.count``, ``flows.goodput_bps_sum``, ``flows.goodput_bps_mean``, and the sums of
    ``retransmits`` and ``timeouts``."""
    out: dict[str, Any] = {}

    def flat(prefix: str, d: dict[str, Any]) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                flat(f"{prefix}{k}.", v)
            elif v is None or isinstance(v, bool | int | float | str):
                out[f"{prefix}{k}"] = v

    for link in summary.get("links", []):
        flat(f"{link['name']}.", link)
    for section in ("fairness", "run"):
        flat(f"{section}.", summary.get(section, {}))
    flows = summary.get("flows", [])
    g = [f["goodput_bps"] for f in flows]
    out["flows.count"] = len(flows)
    out["flows.goodput_bps_sum"] = float(sum(g))
    out["flows.goodput_bps_mean"] = float(sum(g) / len(g)) if g else math.nan
    for k in ("retransmits", "timeouts"):
        out[f"flows.{k}"] = sum(f.get(k, 0) for f in flows)
    return out


def _row(rec: dict[str, Any]) -> dict[str, Any]:
    row = {k: rec.get(k) for k in META}
    row.update(rec.get("point", {}))
    if rec.get("summary"):
        row.update(scalars(rec["summary"]))
    return row


def table(out: Path) -> pd.DataFrame:
    """The tidy table of every recorded run, ordered by label, axis values and seed."""
    import pandas as pd

    rows = []  # one record in memory at a time: a summary can hold thousands of flows
    for p in sorted((out / RUNS).glob("*.json")):
        rec, _ = read(p)
        if rec is not None:  # a damaged record is not a run (the engine runs it again)
            rows.append(_row(rec))
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    order = json.loads((out / "sweep.json").read_text()) if (out / "sweep.json").is_file() else {}
    keys = {k: i for i, k in enumerate(order.get("keys", []))}
    df["_order"] = df["key"].map(keys)
    df = df.sort_values(["_order", "key"], na_position="last").drop(columns="_order")
    return df.reset_index(drop=True)


def aggregate(df: pd.DataFrame, axes: list[str] | None = None) -> pd.DataFrame:
    """One row per point (label + axis values) over its successful runs: ``n`` (the successful
    runs) and, for every numeric metric ``m``, ``m`` (the mean over the runs where ``m`` is
    finite) and ``m_ci95`` (the half-width of the 95% confidence interval of that mean, Student t
    with k-1 degrees of freedom: t(0.975, k-1) * s / sqrt(k), k the number of finite values; NaN
    when k < 2). A run where a metric is NaN (the burst ratio of a link that dropped nothing) is
    left out of that metric only, and the quantile and the standard error use the same k; when
    k < n for some point the metric also gets ``m_n`` = k, the sample behind its mean
    (docs/sweeps.md, "Confidence intervals").
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    ok = df[df["status"] == "ok"] if "status" in df else df
    if axes is None:
        axes = [c for c in df.columns if c not in META and "." in c and c.split(".")[0] in _SC_TOP]
    keys = ["label", *axes]
    metrics = [
        c
        for c in ok.columns
        if c not in META and c not in keys and pd.api.types.is_numeric_dtype(ok[c])
    ]
    rows = []
    t975: dict[int, float] = {}  # t(0.975, k-1) by k
    short: set[str] = set()  # metrics with fewer finite values than runs at some point
    for point, g in ok.groupby(keys, dropna=False, sort=False):
        row = dict(zip(keys, point, strict=True))
        n = len(g)
        row["n"] = n
        for m in metrics:
            x = g[m].to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            k = int(x.size)
            row[m] = float(x.mean()) if k else math.nan
            if k > 1 and k not in t975:
                t975[k] = float(stats.t.ppf(0.975, k - 1))
            row[f"{m}_ci95"] = float(t975[k] * x.std(ddof=1) / math.sqrt(k)) if k > 1 else math.nan
            row[f"{m}_n"] = k
            if k < n:
                short.add(m)
        rows.append(row)
    agg = pd.DataFrame(rows)
    drop = [f"{m}_n" for m in metrics if m not in short]
    return agg.drop(columns=drop) if not agg.empty else agg


# First components of a scenario's dotted paths (axis columns), as opposed to metric columns.
_SC_TOP = (
    "name",
    "description",
    "duration",
    "warmup",
    "seed",
    "topology",
    "aqm",
    "tcp",
    "flows",
    "output",
    "metrics",
)


def consolidate(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rewrites runs.parquet and points.parquet from the records (each atomically)."""
    df = table(out)
    meta = json.loads((out / "sweep.json").read_text()) if (out / "sweep.json").is_file() else {}
    axes = meta.get("axes")
    agg = aggregate(df, axes) if not df.empty else df
    for name, frame in (("runs.parquet", df), ("points.parquet", agg)):
        tmp = out / f".{name}.tmp"
        try:
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, out / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return df, agg


def load_sweep(path: str | Path, aggregated: bool = False) -> pd.DataFrame:
    """The results of a sweep directory: one row per run (or, with ``aggregated``, one per point
    with means and 95% confidence half-widths). Reads the records, so it also works on a sweep
    that is still running or was interrupted."""
    p = Path(path)
    if not (p / RUNS).is_dir():
        raise InputError(f"results: {p} is not a sweep directory (no {RUNS}/)")
    df = table(p)
    if not aggregated or df.empty:
        return df
    meta = json.loads((p / "sweep.json").read_text()) if (p / "sweep.json").is_file() else {}
    return aggregate(df, meta.get("axes"))
