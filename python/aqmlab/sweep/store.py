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
    with open(tmp, "w") as f:
        f.write(text[:-1] + ', "summary": ' + body + "}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)


def prepare(out: Path) -> None:
    """Creates the directory and removes temporary files left by a killed process."""
    (out / RUNS).mkdir(parents=True, exist_ok=True)
    for stale in (out / RUNS).glob(".*.tmp"):
        stale.unlink(missing_ok=True)


def finished_one(out: Path, key: str) -> str | None:
    """The status of run ``key`` if it is recorded, else None."""
    try:
        return json.loads(record_path(out, key).read_text()).get("status", "failed")
    except (OSError, json.JSONDecodeError):
        return None


def finished(out: Path) -> dict[str, str]:
    """Key -> status ("ok" or "failed") of every recorded run."""
    done = {}
    for p in (out / RUNS).glob("*.json"):
        try:
            rec = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # cannot happen with atomic writes; a damaged file counts as missing
        done[p.stem] = rec.get("status", "failed")
    return done


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
        try:
            rows.append(_row(json.loads(p.read_text())))
        except (OSError, json.JSONDecodeError):
            continue
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    order = json.loads((out / "sweep.json").read_text()) if (out / "sweep.json").is_file() else {}
    keys = {k: i for i, k in enumerate(order.get("keys", []))}
    df["_order"] = df["key"].map(keys)
    df = df.sort_values(["_order", "key"], na_position="last").drop(columns="_order")
    return df.reset_index(drop=True)


def aggregate(df: pd.DataFrame, axes: list[str] | None = None) -> pd.DataFrame:
    """One row per point (label + axis values) over its successful runs: ``n`` and, for every
    numeric metric ``m``, ``m`` (the mean) and ``m_ci95`` (the half-width of the 95% confidence
    interval of the mean, Student t with n-1 degrees of freedom: t * s / sqrt(n); NaN when n < 2).
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
    for point, g in ok.groupby(keys, dropna=False, sort=False):
        row = dict(zip(keys, point, strict=True))
        n = len(g)
        row["n"] = n
        t = stats.t.ppf(0.975, n - 1) if n > 1 else math.nan
        for m in metrics:
            x = g[m].to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            row[m] = float(x.mean()) if x.size else math.nan
            row[f"{m}_ci95"] = (
                float(t * x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 and n > 1 else math.nan
            )
        rows.append(row)
    return pd.DataFrame(rows)


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
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, out / name)
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
