"""Running a scenario and reading results back (the run layer: no plots, no reports).

A run directory holds ``summary.json`` (deterministic: the same scenario and seed give the same
bytes), ``config.json`` (the network the simulator ran), ``scenario.json``, one Parquet file per
time series and ``run.json`` (wall-clock time and speed; not deterministic, so kept apart). It is
written under ``<dir>.partial`` and renamed when complete, so an interrupted run never leaves a
directory that looks complete. Plots and the HTML report are the presentation layer's
(:mod:`aqmlab.report.html`); a caller may add them to the directory before it is completed through
``extra_outputs``.

This module imports neither pandas nor matplotlib nor scipy: a run costs the simulation, numpy,
pydantic and (when writing) pyarrow. The DataFrames of a :class:`Result` are built on first use.
numpy and pyarrow are imported on a second thread while the simulator runs (it releases the GIL),
so on a machine with two cores their ~0.1 s of import overlaps the simulation instead of adding
to it.
"""

from __future__ import annotations

import io
import json
import math
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from aqmlab.errors import InputError
from aqmlab.scenario import probe
from aqmlab.scenario import schema as scenario

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SUMMARY = "summary.json"

#: A time series as named columns of equal length (``t_s`` first).
Columns = dict[str, "np.ndarray"]


class Result:
    """The outcome of a run: ``summary`` (the dict of summary.json), the time series, and the
    DataFrames ``links``, ``flows``, ``series`` and ``queue`` (built with pandas on first use)."""

    def __init__(
        self,
        summary: dict[str, Any],
        columns: dict[str, Columns] | None = None,
        *,
        scenario: dict[str, Any] | None = None,
        out_dir: Path | None = None,
        wall_s: float = float("nan"),
        series: dict[str, pd.DataFrame] | None = None,
        links: pd.DataFrame | None = None,
        flows: pd.DataFrame | None = None,
    ) -> None:
        """``columns`` are the time series as numpy columns; a producer that has DataFrames
        (the testbed) may give ``series`` instead, and its own ``links``/``flows`` tables."""
        self.summary = summary
        self.columns = columns or {}
        self._series: dict[str, pd.DataFrame] | None = None
        if series is not None:
            self._series = dict(series)
            for name, df in series.items():
                self.columns[name] = {c: df[c].to_numpy() for c in df.columns}
        self.scenario = scenario
        self.out_dir = out_dir
        self.wall_s = wall_s
        self._links = links
        self._flows = flows

    def _repr_html_(self) -> str:
        """A notebook shows a run as a small table (as pandas objects do): what ran and the
        bottleneck's headline metrics."""
        import html

        b = self.bottleneck
        run = self.summary.get("run", {})
        fair = self.summary.get("fairness", {})

        def cell(v: Any, spec: str, scale: float = 1.0) -> str:
            ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            return format(v * scale, spec) if ok else "-"

        name = (self.scenario or {}).get("name", "")
        rows = [
            ("AQM", html.escape(str(b.get("aqm", "")))),
            ("link", html.escape(str(b.get("name", "")))),
            ("simulated / warm-up", f"{cell(run.get('duration_s'), 'g')} s / "
             f"{cell(run.get('warmup_s'), 'g')} s"),
            ("flows", str(len(self.summary.get("flows", [])))),
            ("utilisation", cell(b.get("utilisation"), ".4f")),
            ("throughput", cell(b.get("throughput_bps"), ".2f", 1e-6) + " Mb/s"),
            ("mean queue", cell(b.get("queue_mean_pkts"), ".1f") + " packets"),
            ("mean queueing delay", cell(b.get("delay_mean_s"), ".2f", 1e3) + " ms"),
            ("loss ratio", cell(b.get("loss_ratio"), ".5f")),
            ("Jain's index (goodput)", cell(fair.get("jain_goodput"), ".3f")),
        ]  # fmt: skip
        body = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows
        )
        where = f" in {html.escape(str(self.out_dir))}" if self.out_dir else ""
        return f"<div><b>aqmlab run</b> {html.escape(str(name))}{where}<table>{body}</table></div>"

    def plot_queue(self, smooth_s: float | None = None) -> Any:
        """The bottleneck's queue, delay and drop probability as a matplotlib Figure."""
        from aqmlab.report import plots

        return plots.queue_plot(self, None, smooth_s=smooth_s)

    def plot_goodput(self) -> Any:
        """Per-flow goodput as a matplotlib Figure."""
        from aqmlab.report import plots

        return plots.goodput_plot(self)

    @property
    def bottleneck(self) -> dict[str, Any]:
        """The summary of the AQM-guarded bottleneck link (in a parking-lot or general topology,
        which has no link named ``bottleneck``, the first monitored link)."""
        links = self.summary["links"]
        return next((x for x in links if x["name"] == "bottleneck"), links[0])

    @property
    def links(self) -> pd.DataFrame:
        """One row per monitored link (the summary's scalars)."""
        if self._links is not None:
            return self._links
        import pandas as pd

        return pd.DataFrame(self.summary["links"]).drop(columns=["aqm_stats"], errors="ignore")

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow."""
        if self._flows is not None:
            return self._flows
        import pandas as pd

        return pd.DataFrame(self.summary["flows"])

    @property
    def series(self) -> dict[str, pd.DataFrame]:
        """The time series by name (``link:<name>``), one DataFrame each."""
        if self._series is None:
            import pandas as pd

            self._series = {k: pd.DataFrame(v) for k, v in self.columns.items()}
        return self._series

    @property
    def queue(self) -> pd.DataFrame:
        """The bottleneck's time series (t_s, queue_pkts, queue_bytes, avg_queue, drop_prob)."""
        return self.series[f"link:{self.bottleneck['name']}"]


def _clean(x: Any) -> Any:
    """NaN and infinities become null, so summary.json is strict JSON."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _enrich(
    summary: dict[str, Any], sc: scenario.Scenario, series: dict[str, Columns]
) -> dict[str, Any]:
    """Adds the metrics computed from the simulator's counters and series (docs/metrics.md)."""
    from aqmlab.running import metrics

    m = sc.metrics
    fixed = float(m.fixed_path_delay)  # seconds (parsed when the scenario was validated)
    smoothing = float(m.settling_smoothing)
    warm = summary["run"]["warmup_s"]
    for link in summary["links"]:
        drops = link["dropped_aqm"] + link["dropped_overflow"]
        a = link["arrived"]
        b = metrics.burst_ratio_from_counts(a, drops, link["loss_runs"]) if a > 0 else math.nan
        link["burst_ratio"] = b
        L = link["loss_ratio"] if link["loss_ratio"] is not None else math.nan
        finite = math.isfinite(L)
        link["ie_eff"] = metrics.ie_eff(L, b, ie=m.ie, bpl=m.bpl) if finite else math.nan
        d = link["delay_mean_s"]
        link["impairment_c"] = (
            metrics.global_impairment(d, L, b, fixed_path_delay_s=fixed, ie=m.ie, bpl=m.bpl)
            if finite and d is not None and math.isfinite(d)
            else math.nan
        )
        q = series.get(f"link:{link['name']}")
        link["settling_time_s"] = math.nan
        if q is not None and len(q["t_s"]) > 4:
            link["settling_time_s"] = metrics.settling_time(
                q["t_s"],
                q["queue_pkts"],
                band=m.settling_band,
                smoothing_s=smoothing,
                final_fraction=m.settling_final_fraction,
            )
    summary["fairness"] = metrics.fairness(summary["flows"])
    summary["fct"] = metrics.fct_summary(summary["flows"])
    summary["probe"] = probe.summary(summary["flows"])
    summary["scenario"] = {"name": sc.name, "description": sc.description}
    summary["metric_parameters"] = {
        "fixed_path_delay_s": fixed,
        "ie": m.ie,
        "bpl": m.bpl,
        "settling_band": m.settling_band,
        "settling_smoothing_s": smoothing,
        "settling_final_fraction": m.settling_final_fraction,
        "warmup_s": warm,
    }
    summary["definitions"] = "docs/metrics.md"
    return summary


def _series_columns(raw: dict[str, Any]) -> dict[str, Columns]:
    import numpy as np

    """The simulator's little-endian buffers as numpy columns (times in seconds)."""
    out = {}
    for name, (t_bytes, cols) in raw.items():
        table = {"t_s": np.frombuffer(t_bytes, dtype="<u8").astype(float) / 1e9}
        for c, b in cols.items():
            table[c] = np.frombuffer(b, dtype="<f8")
        out[name] = table
    return out


class _Progress:
    """A one-line progress bar on stderr: simulated time done / total and events per second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.ticker = None  # lines while a large network is built (limits.BuildTicker)

    def __call__(self, now_s: float, end_s: float, events: int) -> None:
        if not self.enabled:
            return
        self.stop_ticker()
        frac = min(1.0, now_s / end_s) if end_s > 0 else 1.0
        el = time.perf_counter() - self.t0
        bar = "#" * int(frac * 30)
        rate = events / el if el > 0 else 0.0
        sys.stderr.write(
            f"\r[{bar:<30}] {now_s:8.1f}/{end_s:.1f} s simulated  {rate / 1e6:6.2f} M events/s"
        )
        sys.stderr.flush()

    def stage(self, text: str) -> None:
        """A line saying what a long preparation step is doing."""
        if self.enabled:
            el = time.perf_counter() - self.t0
            sys.stderr.write(f"[{el:6.1f} s] {text}\n")
            sys.stderr.flush()

    def stop_ticker(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

    def done(self) -> None:
        self.stop_ticker()
        if self.enabled:
            sys.stderr.write("\n")


def _as_scenario(sc: scenario.Scenario | str | Path | dict) -> scenario.Scenario:
    if isinstance(sc, scenario.Scenario):
        return sc
    if isinstance(sc, dict):
        return scenario.from_dict(sc)
    return scenario.load(sc)


#: Called with the result and the ``.partial`` directory before it is completed: how a caller
#: adds files (plots, a report) without the runner knowing about them.
ExtraOutputs = Callable[[Result, Path], None]


def run(
    sc: scenario.Scenario | str | Path | dict,
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    extra_outputs: ExtraOutputs | None = None,
    aqm: Any = None,
) -> Result:
    """Runs a scenario (an object, a dict or a TOML path) and returns its :class:`Result`.

    With ``out``, writes the run directory there (replacing an earlier one only once the new one
    is complete); ``extra_outputs`` may add files to it first. ``aqm``, an instance of a Python
    AQM class (:mod:`aqmlab.pyaqm`), replaces the scenario's ``[aqm]`` (a copy of it guards each
    link that table guards); when that AQM is the ``fq`` scheduler, it replaces fq's per-queue
    AQM instead (a copy on every flow queue), fq's own parameters kept.
    """
    sc = _as_scenario(sc)
    if aqm is not None:
        from aqmlab.pyaqm import load as pyaqm

        with pyaqm.using_instance(aqm) as table:
            old = sc.aqm if isinstance(sc.aqm, dict) else {}
            if old.get("name") == "fq":
                own = {k: v for k, v in old.items() if k not in ("queue_aqm", "queue")}
                table = {**own, "queue_aqm": "python", "queue": table}
            sc = sc.model_copy(update={"aqm": table})
            return run(sc, seed=seed, out=out, progress=progress, extra_outputs=extra_outputs)
    from aqmlab import _core

    if out is not None:  # refused before simulating, not after (issue 13)
        from aqmlab import outdir

        outdir.check(out, "out")
    elif sc.output.events or sc.output.pcap:
        key = "events" if sc.output.events else "pcap"
        raise InputError(
            f"output.{key}: event logs and packet traces are written into a run directory; "
            "give one (aqmlab run --out DIR, or aqmlab.run(..., out=DIR))"
        )
    bar = _Progress(progress)
    _announce_build(sc, bar)
    try:
        cfg = scenario.build_config(sc, seed)
    except BaseException:
        bar.stop_ticker()
        raise
    end_s = cfg["duration_ns"] / 1e9
    py_aqms = None
    if any(
        (lk.get("aqm") or {}).get("name") == "python" or "queue" in (lk.get("aqm") or {})
        for lk in cfg["links"]
    ):
        from aqmlab.pyaqm import load as pyaqm

        cfg, py_aqms = pyaqm.extract(cfg)
    streamed = sc.output.events or sc.output.pcap
    partial = _start_logs(sc, cfg, Path(out)) if streamed and out is not None else None
    flow_names = [f["name"] for f in cfg["flows"]] if partial is not None else []
    # The description as text; the dicts (GBs for a million flows) are freed before simulating.
    cfg = _config_text(cfg)
    t0 = bar.t0 = time.perf_counter()
    preload = threading.Thread(target=_preload, args=(out is not None,), daemon=True)
    # The simulator takes the GIL back for its progress callbacks: a short switch interval keeps
    # it from waiting the default 5 ms for the importing thread each time.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    preload.start()
    try:
        summary_json, raw = _core.simulate(cfg, bar, max(end_s / 50, 0.05), py_aqms)
    except ValueError as e:
        _discard(partial)
        raise InputError(str(e)) from None
    except BaseException:
        _discard(partial)
        raise
    finally:
        bar.done()
        preload.join()
        sys.setswitchinterval(interval)
    wall = time.perf_counter() - t0
    columns = _series_columns(raw)
    summary = _enrich(json.loads(summary_json), sc, columns)
    res = Result(summary, columns, scenario=sc.model_dump(), wall_s=wall)
    if out is not None:
        if partial is not None:
            _finish_logs(sc, partial, flow_names)
        res.out_dir = write(res, cfg, Path(out), extra_outputs, partial=partial)
    return res


def _start_logs(sc: scenario.Scenario, cfg: dict, out: Path) -> Path:
    """The run's partial directory, made before the run, with the event logs' record files
    named in the configuration (the simulator streams into them)."""
    from aqmlab import outdir
    from aqmlab.running import events

    partial = outdir.start(out)
    for key in ("events", "pcap"):
        if getattr(sc.output, key):
            (partial / key).mkdir()
    wanted, traced = set(sc.output.events), set(sc.output.pcap)
    for lk in cfg["links"]:
        if lk["name"] in wanted:
            lk["events_path"] = str(events.record_path(partial, lk["name"]))
        if lk["name"] in traced:
            lk["pcap_path"] = str(partial / "pcap" / f"{lk['name']}.pcap")
    return partial


def _finish_logs(sc: scenario.Scenario, partial: Path, flow_names: list[str]) -> None:
    """Turns the record files into ``events/<link>.parquet``."""
    from aqmlab import outdir
    from aqmlab.running import events

    try:
        for name in sc.output.events:
            rec = events.record_path(partial, name)
            events.to_parquet(rec, partial / "events" / f"{name}.parquet", flow_names)
    except OSError as e:
        outdir.discard(partial)
        raise outdir.fault(e, partial) from None
    except BaseException:
        outdir.discard(partial)
        raise


def _discard(partial: Path | None) -> None:
    if partial is not None:
        from aqmlab import outdir

        outdir.discard(partial)


def _preload(writing: bool) -> None:
    """Imports what the rest of a run needs (numpy; pyarrow when writing) while the simulator,
    which releases the GIL, runs on the other core. A failed import is left for the real import
    after the run to report."""
    try:
        import numpy  # noqa: F401

        from aqmlab.running import metrics  # noqa: F401

        if writing:
            import pyarrow.parquet  # noqa: F401
    except Exception:  # reported by the import that follows
        pass


def _write_parquet(table: Columns, path: Path) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    # float64 arrays from raw buffers: pa.array(ndarray) and pa.table(dict) import pandas
    # (0.3-0.5 s) only to test whether their argument is a pandas object. The simulator's
    # series are all float64; other producers' columns (the testbed's) go through pa.array.
    arrays = []
    for v in table.values():
        if v.dtype == np.float64:
            x = np.ascontiguousarray(v, dtype="<f8")
            arrays.append(pa.Array.from_buffers(pa.float64(), len(x), [None, pa.py_buffer(x)]))
        else:
            arrays.append(pa.array(v))
    pq.write_table(pa.Table.from_arrays(arrays, names=list(table)), path)


# Issue 13 item 15: a large network is described and built for a while before the first
# simulated second; say what is being built, with the memory estimate, so the wait is explained.
_LARGE = 20_000


def _announce_build(sc: scenario.Scenario, bar: _Progress):
    from aqmlab.scenario import limits

    size = limits.check(sc)
    if size.flows + size.hosts >= _LARGE:
        bar.stage(
            f"building the network: {size.flows:,} flows, {size.hosts:,} hosts "
            f"(estimated peak memory {limits.fmt_bytes(size.memory_bytes())})"
        )
        if bar.enabled:
            bar.ticker = limits.BuildTicker(size)
    return size


def _config_text(cfg: dict) -> str:
    """The network description as the simulator reads it and config.json keeps it (indented for
    networks small enough to read)."""
    buf = io.StringIO()
    write_json(cfg, buf)
    return buf.getvalue()


def write_json(obj: Any, f: IO[str], level: int = 0) -> None:
    """Writes ``obj`` as strict, sorted-key JSON that people can read and that is fast to make:
    objects are indented level by level; a list of objects gets one compact line per element (a
    flow, a link); everything else is compact. Every compact piece is made by ``json.dumps``'s C
    encoder, so a 100-flow summary takes a few milliseconds where ``indent=2`` (which forces the
    pure-Python encoder) took tens, and the text is streamed, element by element, so a
    million-flow summary never exists as one string. ``json.load`` reads it back unchanged."""
    pad = "  " * (level + 1)
    if isinstance(obj, dict) and obj:
        f.write("{")
        for i, key in enumerate(sorted(obj)):
            f.write(("," if i else "") + "\n" + pad + json.dumps(key) + ": ")
            write_json(obj[key], f, level + 1)
        f.write("\n" + "  " * level + "}")
    elif isinstance(obj, list) and obj and isinstance(obj[0], dict):
        f.write("[")
        for i, item in enumerate(obj):
            f.write(("," if i else "") + "\n" + pad + json.dumps(item, sort_keys=True))
        f.write("\n" + "  " * level + "]")
    else:
        f.write(json.dumps(obj, sort_keys=True))


def write(
    res: Result,
    cfg: dict | str,
    out: Path,
    extra_outputs: ExtraOutputs | None = None,
    partial: Path | None = None,
) -> Path:
    """Writes a run directory atomically (see the module doc): under ``<out>.partial``, swapped
    in when complete (:mod:`aqmlab.outdir`); a write that fails (a full disk) removes the partial
    directory and raises a one-line :class:`aqmlab.outdir.OutputError`. ``partial``: the one
    already started (it holds what the run streamed, e.g. event logs)."""
    from aqmlab import outdir

    if partial is None:
        partial = outdir.start(out)
    try:
        _write_files(res, cfg, partial, extra_outputs)
    except OSError as e:
        outdir.discard(partial)
        raise (e if isinstance(e, outdir.OutputError) else outdir.fault(e, out)) from None
    except BaseException:
        outdir.discard(partial)
        raise
    return outdir.commit(partial, out)


def _write_files(
    res: Result, cfg: dict | str, partial: Path, extra_outputs: ExtraOutputs | None
) -> None:
    (partial / "config.json").write_text(cfg if isinstance(cfg, str) else _config_text(cfg))
    (partial / "scenario.json").write_text(
        json.dumps(res.scenario, indent=2, sort_keys=True) + "\n"
    )
    for name, table in res.columns.items():
        kind, _, obj = name.partition(":")
        _write_parquet(table, partial / f"{kind}_{obj}.parquet")
    if extra_outputs is not None:
        extra_outputs(res, partial)
    run_info = {
        "wall_s": res.wall_s,
        "events": res.summary["run"]["events"],
        "events_per_s": res.summary["run"]["events"] / res.wall_s if res.wall_s > 0 else None,
    }
    (partial / "run.json").write_text(json.dumps(run_info, indent=2) + "\n")
    # summary.json last: its presence marks the directory complete.
    with (partial / SUMMARY).open("w") as f:  # streamed: no whole-file string (a GB at 1M flows)
        write_json(_clean(res.summary), f)  # = summary_json's text
        f.write("\n")


def summary_json(summary: dict[str, Any]) -> str:
    """The text of summary.json: strict JSON (NaN as null), sorted keys, so it is byte-stable."""
    buf = io.StringIO()
    write_json(_clean(summary), buf)
    return buf.getvalue() + "\n"


def load(path: str | Path) -> Result:
    """Reads a run directory written by :func:`run`; refuses an incomplete one."""
    import pyarrow.parquet as pq

    p = Path(path)
    if p.name.endswith(".partial") or not (p / SUMMARY).is_file():
        raise InputError(f"results: {p} is not a complete run directory (no {SUMMARY})")
    summary = json.loads((p / SUMMARY).read_text())
    columns = {}
    for f in sorted(p.glob("*.parquet")):
        kind, _, obj = f.stem.partition("_")
        t = pq.read_table(f)
        columns[f"{kind}:{obj}"] = {c: t.column(c).to_numpy() for c in t.column_names}
    sc_file = p / "scenario.json"
    sc = json.loads(sc_file.read_text()) if sc_file.is_file() else None
    return Result(summary, columns, scenario=sc, out_dir=p)
