"""Plots people would rather look at than read: the queue and the queueing delay over time, the
delay distribution, the latency probe's RTT, per-flow goodput, and the overlays of a comparison.

Every plot is a PNG, and with ``formats`` also SVG and PDF beside it (:data:`VECTOR`). Time
series that are raw 10 ms samples can be smoothed (``smooth_s``: a centred moving average over
that many seconds, drawn over the raw trace, which stays visible in a light tone). The warm-up
is shaded grey, and y ranges are computed from the values after it, so a start-up spike does not
flatten the rest. Definitions of what is plotted: docs/metrics.md, "Plots".
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np

if "ipykernel" not in sys.modules:  # in a notebook, its inline backend shows the Figures
    matplotlib.use("Agg")
import matplotlib.pyplot as plt

matplotlib.rcParams["svg.hashsalt"] = "aqmlab"  # fixed element ids: the same plot, the same SVG

if TYPE_CHECKING:
    from aqmlab.running.runner import Result


#: The vector formats written beside a PNG on request (papers want SVG or PDF).
VECTOR = ("svg", "pdf")

#: Line styles of a chain's second, third, ... hop in a comparison's overlays (the first is solid).
_HOP_STYLES = ("--", ":", "-.")

#: Parameters of delay-based AQMs that name their target queueing delay.
_TARGET_PARAMS = ("target", "target_delay")


def save(fig, path: Path | None, formats: tuple[str, ...] = ()) -> Any:
    """Writes ``fig`` to ``path`` and, for each of ``formats``, beside it with that suffix (no
    creation date in SVG/PDF, so the files are reproducible); closes the figure. With ``path``
    None, writes nothing and returns the matplotlib Figure (a notebook shows it as the cell's
    value; closed to pyplot, so it is shown once): every plot function returns its Figure when
    called without a path."""
    if path is None:
        plt.close(fig)
        return fig
    path = Path(path)
    fig.savefig(path, dpi=110)
    for fmt in formats:
        fig.savefig(path.with_suffix(f".{fmt}"), metadata={"Date": None} if fmt != "png" else None)
    plt.close(fig)
    return path


# --- data behind the plots (tested against theory in tests/test_plots_delay.py) ---------------


def smooth(t: np.ndarray, y: np.ndarray, window_s: float | None) -> np.ndarray:
    """Centred moving average of ``y`` over ``window_s`` seconds (samples evenly spaced in ``t``;
    NaN samples, e.g. intervals without packets, are skipped). ``None`` or 0: ``y`` unchanged."""
    y = np.asarray(y, dtype=float)
    if not window_s or len(t) < 2:
        return y
    dt = float(t[1] - t[0])
    n = max(1, round(window_s / dt))
    if n == 1:
        return y
    ok = np.isfinite(y)
    kernel = np.ones(n)
    num = np.convolve(np.where(ok, y, 0.0), kernel, mode="same")
    den = np.convolve(ok.astype(float), kernel, mode="same")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), np.nan)


def delay_series(res: Result, link: str | None = None) -> dict[str, np.ndarray]:
    """The queueing delay of ``link`` (default: the bottleneck) per sample interval: ``t_s``
    (interval start), ``delay_mean_s`` and ``delay_max_s`` (mean and largest sojourn of the
    packets whose transmission started in the interval; NaN when none did), ``packets``."""
    name = link or res.bottleneck["name"]
    s = res.series.get(f"delay:{name}")
    if s is None:
        raise KeyError(f"no delay series for link {name!r} (a run written before they existed?)")
    return {c: np.asarray(s[c], dtype=float) for c in s}


def delay_cdf(res: Result, link: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of the queueing delay of ``link`` over the measurement window: delays
    ``x`` (s) at the edges of the simulator's log-linear histogram and the exact fraction ``F``
    of packets whose delay is below each (between edges, within 1/32 of the value)."""
    name = link or res.bottleneck["name"]
    s = res.series[f"delaycdf:{name}"]
    return np.asarray(s["t_s"], dtype=float), np.asarray(s["cdf"], dtype=float)


def delay_target_s(res: Result) -> float | None:
    """The target queueing delay of the run's AQM (CoDel, PIE, FQ-CoDel, ARED...), s, or
    ``None`` when it has none (the scenario's value, else the algorithm's default)."""
    from aqmlab.errors import InputError
    from aqmlab.scenario import algorithms, units

    sc = res.scenario or {}
    table = sc.get("aqm") or {}
    entry = algorithms.get(res.bottleneck["aqm"])
    if entry is None:
        return None
    for p in entry["params"]:
        if p["name"] in _TARGET_PARAMS and p["kind"] == "duration":
            v = table.get(p["name"], p["default"])
            if isinstance(v, int | float):
                return float(v)  # the catalog's defaults, and bare numbers, are seconds
            try:
                return units.seconds(f"aqm.{p['name']}", v)
            except InputError:
                return None
    return None


def probes(res: Result) -> dict[str, dict[str, np.ndarray]]:
    """The RTT series of each latency probe: ``t_s`` (send time) and ``rtt_s``, by flow name."""
    return {
        k.partition(":")[2]: {c: np.asarray(v[c], dtype=float) for c in v}
        for k, v in res.series.items()
        if k.startswith("probe:")
    }


def ecdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical distribution of ``x`` as a step: sorted values and i / n."""
    x = np.sort(np.asarray(x, dtype=float)[np.isfinite(x)])
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


# --- drawing helpers ---------------------------------------------------------------------------


def _warmup(ax, warm: float) -> None:
    if warm > 0:
        ax.axvspan(0, warm, color="grey", alpha=0.12, lw=0, label="_warm-up")


def _trace(ax, t, y, smooth_s, label=None, color=None, lw=0.7) -> None:
    """A raw trace, and over it its moving average when ``smooth_s`` is given."""
    if smooth_s:
        (line,) = ax.plot(t, y, lw=0.5, alpha=0.25, color=color)
        ax.plot(t, smooth(t, y, smooth_s), lw=1.4, color=line.get_color(), label=label)
    else:
        ax.plot(t, y, lw=lw, color=color, label=label)


def _ylim_after(ax, t, ys: list, warm: float, floor: float = 0.0) -> None:
    """Y range from the values after the warm-up (a start-up spike would flatten the rest)."""
    top = floor
    for y in ys:
        y = np.asarray(y, dtype=float)[np.asarray(t) >= warm]
        y = y[np.isfinite(y)]
        if y.size:
            top = max(top, float(y.max()))
    if top > 0:
        ax.set_ylim(0, top * 1.08)


def _smooth_note(smooth_s: float | None) -> str:
    return f", {smooth_s:g} s moving average over the raw samples" if smooth_s else ""


# --- one run ----------------------------------------------------------------------------------


def queue_plot(
    res: Result,
    path: Path | None = None,
    title: str = "",
    formats: tuple[str, ...] = (),
    smooth_s: float | None = None,
) -> Any:
    """Bottleneck queue length (and the AQM's average), its queueing delay in ms (with the
    AQM's target when it has one), and the drop probability when the AQM has one. A chain of
    bottlenecks (a parking lot: ``hop1``, ``hop2``, ...) gets every hop, one line each."""
    hops = hop_links(res)
    if len(hops) > 1:
        return _hops_plot(res, hops, path, title, formats, smooth_s)
    q = res.queue
    has_p = "drop_prob" in q
    has_d = f"delay:{res.bottleneck['name']}" in res.series
    n = 1 + has_d + has_p
    fig, axes = plt.subplots(n, 1, figsize=(9, 2.2 + 2.0 * n), sharex=True, squeeze=False)
    axes = axes[:, 0]
    warm = res.summary["run"]["warmup_s"]
    t = q["t_s"].to_numpy()
    ax = axes[0]
    _warmup(ax, warm)
    _trace(ax, t, q["queue_pkts"].to_numpy(), smooth_s, label="queue")
    if "avg_queue" in q:  # smoothed like the queue, so the queue stays visible under it
        _trace(ax, t, q["avg_queue"].to_numpy(), smooth_s, label="average (AQM)", lw=1.0)
    _ylim_after(ax, t, [q["queue_pkts"]], warm)
    b = res.bottleneck
    ax.set_ylabel("queue (packets)")
    d_ms = b.get("delay_mean_s")
    ax.set_title(
        f"{title}  [{b['aqm']}]  util {b['utilisation']:.3f}, mean queue "
        f"{b['queue_mean_pkts']:.1f} pkts"
        + (f", mean delay {d_ms * 1e3:.2f} ms" if d_ms is not None else "")
        + _smooth_note(smooth_s),
        fontsize=9,
    )
    ax.legend(loc="upper right", fontsize=8)
    k = 1
    if has_d:
        _delay_panel(axes[k], res, smooth_s, warm)
        k += 1
    if has_p:
        _warmup(axes[k], warm)
        _trace(axes[k], t, q["drop_prob"].to_numpy(), smooth_s, color="tab:red")
        _ylim_after(axes[k], t, [q["drop_prob"]], warm)
        axes[k].set_ylabel("drop probability")
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return save(fig, path, formats)


def hop_links(res: Result) -> list[str]:
    """The bottlenecks of a chain (a parking lot's ``hop1``, ``hop2``, ... in order) that have
    a time series; otherwise just the bottleneck's name."""
    hops = [
        x["name"]
        for x in res.summary["links"]
        if re.fullmatch(r"hop\d+", x["name"]) and f"link:{x['name']}" in res.series
    ]
    hops.sort(key=lambda n: int(n[3:]))
    return hops or [res.bottleneck["name"]]


def _hops_plot(
    res: Result,
    hops: list[str],
    path: Path | None,
    title: str,
    formats: tuple[str, ...],
    smooth_s: float | None,
) -> Path:
    """:func:`queue_plot` for a chain of bottlenecks: queue, queueing delay and drop probability
    of every hop, one colour per hop."""
    links = {x["name"]: x for x in res.summary["links"]}
    series = {h: res.series[f"link:{h}"] for h in hops}
    has_p = any("drop_prob" in q for q in series.values())
    has_d = any(f"delay:{h}" in res.series for h in hops)
    n = 1 + has_d + has_p
    fig, axes = plt.subplots(n, 1, figsize=(9, 2.2 + 2.0 * n), sharex=True, squeeze=False)
    axes = axes[:, 0]
    warm = res.summary["run"]["warmup_s"]
    for ax in axes:
        _warmup(ax, warm)
    k_d, k_p = 1, 1 + has_d
    for i, h in enumerate(hops):
        q, color = series[h], f"C{i % 10}"
        t = q["t_s"].to_numpy()
        _trace(axes[0], t, q["queue_pkts"].to_numpy(), smooth_s, label=h, color=color)
        if has_d and f"delay:{h}" in res.series:
            d = delay_series(res, h)
            _trace(axes[k_d], d["t_s"], d["delay_mean_s"] * 1e3, smooth_s, label=h, color=color)
        if has_p and "drop_prob" in q:
            _trace(axes[k_p], t, q["drop_prob"].to_numpy(), smooth_s, label=h, color=color)
    axes[0].set_ylabel("queue (packets)")
    means = ", ".join(f"{h} {links[h]['queue_mean_pkts']:.1f}" for h in hops)
    axes[0].set_title(
        f"{title}  [{links[hops[0]]['aqm']}]  {len(hops)} bottlenecks; mean queue (pkts) {means}"
        + _smooth_note(smooth_s),
        fontsize=9,
    )
    axes[0].legend(loc="upper right", fontsize=8, ncol=min(len(hops), 4))
    if has_d:
        axes[k_d].set_ylabel("queueing delay (ms)")
    if has_p:
        axes[k_p].set_ylabel("drop probability")
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return save(fig, path, formats)


def _delay_panel(ax, res: Result, smooth_s: float | None, warm: float) -> None:
    d = delay_series(res)
    t, y = d["t_s"], d["delay_mean_s"] * 1e3
    _warmup(ax, warm)
    _trace(ax, t, y, smooth_s, label="mean per interval", color="tab:purple")
    target = delay_target_s(res)
    if target is not None:
        ax.axhline(target * 1e3, color="k", ls="--", lw=0.8, label=f"target {target * 1e3:g} ms")
    _ylim_after(ax, t, [y], warm, floor=(target or 0) * 1e3)
    ax.set_ylabel("queueing delay (ms)")
    ax.legend(loc="upper right", fontsize=8)


def delay_plot(
    res: Result,
    path: Path | None = None,
    formats: tuple[str, ...] = (),
    smooth_s: float | None = None,
) -> Any:
    """Queueing delay of the bottleneck: over time (mean and largest per interval, ms) and its
    distribution over the measurement window (CDF, with p50/p99 marked). A chain of bottlenecks
    (a parking lot's ``hop1``, ``hop2``, ...) gets every hop, one colour per hop (before, only the
    first hop was drawn)."""
    hops = [h for h in hop_links(res) if f"delay:{h}" in res.series] or [res.bottleneck["name"]]
    links = {x["name"]: x for x in res.summary["links"]}
    many = len(hops) > 1
    warm = res.summary["run"]["warmup_s"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1.7, 1]})
    _warmup(a1, warm)
    target = delay_target_s(res)
    t = np.zeros(0)
    means = []
    for i, h in enumerate(hops):
        d = delay_series(res, h)
        t = d["t_s"]
        color = f"C{i % 10}" if many else "tab:purple"
        if not many:
            a1.plot(t, d["delay_max_s"] * 1e3, lw=0.4, color="tab:orange", alpha=0.45, label="max")
        _trace(a1, t, d["delay_mean_s"] * 1e3, smooth_s, label=h if many else "mean", color=color)
        means.append(d["delay_mean_s"][d["t_s"] >= warm] * 1e3)
        if not many:
            _ylim_after(a1, t, [d["delay_max_s"] * 1e3], warm)
        x, F = delay_cdf(res, h)
        a2.plot(
            np.concatenate([[0.0], x * 1e3]),
            np.concatenate([[0.0], F]),
            lw=1.2,
            color=f"C{i % 10}",
            label=h if many else None,
        )
    if many:  # the y range from the values after the warm-up, as for one hop
        _ylim_after(a1, np.zeros(0), [], warm, floor=max(np.nanmax(m, initial=0.0) for m in means))
    if target is not None:
        a1.axhline(target * 1e3, color="k", ls="--", lw=0.8, label=f"target {target * 1e3:g} ms")
        a2.axvline(target * 1e3, color="k", ls="--", lw=0.8)
    a1.set_xlabel("time (s)")
    a1.set_ylabel("queueing delay (ms)")
    b = links[hops[0]]
    what = f"{len(hops)} hops" if many else b["name"]
    a1.set_title(
        f"{what} [{b['aqm']}]: delay per {_interval(t):g} s interval" + _smooth_note(smooth_s),
        fontsize=9,
    )
    a1.legend(loc="upper right", fontsize=8)
    if not many:
        for key, ls in (("delay_p50_s", ":"), ("delay_p99_s", "--")):
            v = b.get(key)
            if v is not None:
                a2.axvline(
                    v * 1e3, color="grey", ls=ls, lw=0.8, label=f"{key[6:9]} {v * 1e3:.2f} ms"
                )
    a2.set_xlabel("queueing delay (ms)")
    a2.set_ylabel("fraction of packets")
    a2.set_ylim(0, 1.01)
    a2.set_title("CDF over the measurement window", fontsize=9)
    a2.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return save(fig, path, formats)


def _interval(t: np.ndarray) -> float:
    return float(t[1] - t[0]) if len(t) > 1 else 0.0


def probe_plot(
    res: Result,
    path: Path | None = None,
    formats: tuple[str, ...] = (),
    smooth_s: float | None = None,
) -> Any:
    """Latency probes: RTT of every echo over time, and the CDF of the RTTs of probes sent in
    the measurement window. ``None`` (nothing drawn) when the run has no probe."""
    pr = probes(res)
    if not pr:
        return None
    warm = res.summary["run"]["warmup_s"]
    base = {f["name"]: f["base_rtt_s"] for f in res.summary["flows"]}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [1.7, 1]})
    _warmup(a1, warm)
    for name, s in pr.items():
        _trace(a1, s["t_s"], s["rtt_s"] * 1e3, smooth_s, label=name)
        x, F = ecdf(s["rtt_s"][s["t_s"] >= warm] * 1e3)
        a2.step(x, F, where="post", label=name)
        if name in base:
            a2.axvline(base[name] * 1e3, color="grey", ls=":", lw=0.8)
    after = [v["rtt_s"][v["t_s"] >= warm] for v in pr.values()]
    top = max((float(np.nanmax(a)) for a in after if a.size), default=0.0)
    if top > 0:
        a1.set_ylim(0, top * 1e3 * 1.08)
    a1.set_xlabel("probe send time (s)")
    a1.set_ylabel("RTT (ms)")
    a1.set_title("latency probe RTT" + _smooth_note(smooth_s), fontsize=9)
    a1.legend(loc="upper right", fontsize=8)
    a2.set_xlabel("RTT (ms)")
    a2.set_ylabel("fraction of probes")
    a2.set_ylim(0, 1.01)
    a2.set_title("CDF (dotted: propagation RTT)", fontsize=9)
    fig.tight_layout()
    return save(fig, path, formats)


def _bulk_goodputs(res: Result) -> np.ndarray:
    """Goodputs (Mb/s) of the bulk TCP flows (no size, not open-loop, not probes); all flows if
    there are none."""
    flows = res.summary["flows"]
    bulk = [f for f in flows if f.get("size_bytes") is None and f.get("udp_sent") is None]
    return np.asarray([f["goodput_bps"] for f in (bulk or flows)], dtype=float) / 1e6


def goodput_plot(res: Result, path: Path | None = None, formats: tuple[str, ...] = ()) -> Any:
    """Per-flow goodput of the bulk flows over the measurement window, sorted, with the equal
    share marked (finite transfers and open-loop flows are left out, as from Jain's index)."""
    g = _bulk_goodputs(res)
    fig, ax = plt.subplots(figsize=(9, 3.2))
    order = g.argsort()[::-1]
    if len(g) <= 2000:
        ax.bar(range(len(g)), g[order], width=0.9, color="tab:blue")
    else:  # one filled curve, not N bars (10,000 bars took a minute; issue 13, item 15)
        ax.fill_between(range(len(g)), g[order], step="mid", color="tab:blue", lw=0)
    if len(g):
        ax.axhline(g.mean(), color="grey", ls="--", lw=0.8, label="mean (equal share)")
    ax.set_xlabel("bulk flows, by goodput")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(
        f"per-flow goodput (Jain {_num(res.summary['fairness']['jain_goodput'], '.3f')})",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return save(fig, path, formats)


def _num(v: Any, spec: str) -> str:
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, spec)


# --- a comparison -----------------------------------------------------------------------------


def compare_plot(
    cmp,
    path: Path,
    zoom_s: float = 2.0,
    formats: tuple[str, ...] = (),
    smooth_s: float | None = None,
) -> Path:
    """Overlaid bottleneck series of a comparison (like seed 001's Figures 5-7): the queue over
    the whole run, a ``zoom_s`` window in the middle of the measurement period, the queueing
    delay (ms), and the drop probabilities of the AQMs that have one (the others are named).
    The warm-up is shaded and y ranges come from the values after it."""
    return save(compare_figure(cmp, zoom_s, smooth_s), path, formats)


def compare_figure(cmp, zoom_s: float = 2.0, smooth_s: float | None = None):
    """The figure of :func:`compare_plot` (axes: queue, zoom, delay, drop probability). A chain of
    bottlenecks draws its other hops too, dashed and dotted in the AQM's colour (before, only the
    first hop)."""
    first = next(iter(cmp.results.values())).summary["run"]
    warm, end = first["warmup_s"], first["duration_s"]
    mid = (warm + end) / 2
    z0, z1 = mid - zoom_s / 2, mid + zoom_s / 2
    fig, axes = plt.subplots(4, 1, figsize=(10, 11))
    no_p = []
    qs, ds, ps = [], [], []
    for k, (label, res) in enumerate(cmp.results.items()):
        color = f"C{k}"
        q = res.queue
        t = q["t_s"].to_numpy()
        _trace(axes[0], t, q["queue_pkts"].to_numpy(), smooth_s, label=label, color=color)
        qs.append((t, q["queue_pkts"].to_numpy()))
        w = q[(q["t_s"] >= z0) & (q["t_s"] <= z1)]
        axes[1].plot(w["t_s"], w["queue_pkts"], lw=1.0, label=label, color=color)
        if f"delay:{res.bottleneck['name']}" in res.series:
            d = delay_series(res)
            _trace(axes[2], d["t_s"], d["delay_mean_s"] * 1e3, smooth_s, label=label, color=color)
            ds.append((d["t_s"], d["delay_mean_s"] * 1e3))
        for j, h in enumerate(hop_links(res)[1:]):  # a chain: its other hops, dashed/dotted
            ls = _HOP_STYLES[j % len(_HOP_STYLES)]
            qh = res.series[f"link:{h}"]
            th, yh = qh["t_s"].to_numpy(), qh["queue_pkts"].to_numpy()
            axes[0].plot(th, yh, lw=0.7, ls=ls, color=color, label=f"{label} {h}")
            qs.append((th, yh))
            if f"delay:{h}" in res.series:
                dh = delay_series(res, h)
                axes[2].plot(dh["t_s"], dh["delay_mean_s"] * 1e3, lw=0.7, ls=ls, color=color)
                ds.append((dh["t_s"], dh["delay_mean_s"] * 1e3))
        if "drop_prob" in q:
            _trace(axes[3], t, q["drop_prob"].to_numpy(), smooth_s, label=label, color=color)
            ps.append((t, q["drop_prob"].to_numpy()))
        else:
            no_p.append(label)
    for ax, data in ((axes[0], qs), (axes[2], ds), (axes[3], ps)):
        _warmup(ax, warm)
        top = 0.0
        for t, y in data:
            y = y[(t >= warm) & np.isfinite(y)]
            top = max(top, float(y.max()) if y.size else 0.0)
        if top > 0:
            ax.set_ylim(0, top * 1.08)
        ax.set_xlim(0, end)
    axes[0].axvspan(z0, z1, color="gold", alpha=0.18)
    axes[0].set_ylabel("queue (packets)")
    axes[0].set_title(
        f"{cmp.scenario.name}: bottleneck queue under {len(cmp.results)} AQMs "
        f"(grey: warm-up; yellow: zoom){_smooth_note(smooth_s)}",
        fontsize=10,
    )
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=min(8, len(names)), fontsize=9)
    axes[1].set_ylabel("queue (packets)")
    axes[1].set_title(f"zoom, raw samples: {z0:g}-{z1:g} s", fontsize=9)
    axes[2].set_ylabel("queueing delay (ms)")
    axes[2].set_title("mean queueing delay per interval (y range: after warm-up)", fontsize=9)
    axes[3].set_ylabel("drop probability")
    axes[3].set_xlabel("time (s)")
    note = f"; no drop probability: {', '.join(no_p)}" if no_p else ""
    axes[3].set_title(f"drop probability (y range: after warm-up){note}", fontsize=9)
    if ps:
        axes[3].legend(loc="upper right", fontsize=8, ncol=min(6, len(ps)))
    else:
        axes[3].text(
            0.5,
            0.5,
            "no AQM here has a drop probability",
            ha="center",
            transform=axes[3].transAxes,
            color="grey",
        )
    fig.tight_layout(rect=(0, 0, 1, 0.975))
    return fig


def compare_goodput_plot(cmp, path: Path | None = None, formats: tuple[str, ...] = ()) -> Any:
    """Per-flow goodput of the bulk flows under each AQM on one shared scale: a box plot (box:
    quartiles, whiskers: 5th-95th percentile, dots: every flow) and the CDFs."""
    labels = list(cmp.results)
    data = [_bulk_goodputs(cmp.results[k]) for k in labels]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    a1.boxplot(data, whis=(5, 95), showfliers=False, medianprops={"color": "k"})
    a1.set_xticks(range(1, len(labels) + 1), labels)
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for k, g in enumerate(data, start=1):
        a1.plot(k + rng.uniform(-0.15, 0.15, len(g)), g, ".", ms=3, alpha=0.5, color=f"C{k - 1}")
    a1.set_ylabel("goodput per flow (Mb/s)")
    a1.set_ylim(bottom=0)
    jains = [cmp.results[k].summary["fairness"]["jain_goodput"] for k in labels]
    a1.set_title(
        "bulk flows; Jain: "
        + ", ".join(f"{k} {_num(j, '.3f')}" for k, j in zip(labels, jains, strict=True)),
        fontsize=9,
    )
    for k, g in enumerate(data):
        x, F = ecdf(g)
        a2.step(x, F, where="post", label=labels[k], color=f"C{k}")
    a2.set_xlabel("goodput per flow (Mb/s)")
    a2.set_ylabel("fraction of flows")
    a2.set_xlim(left=0)
    a2.set_title("CDF of per-flow goodput", fontsize=9)
    a2.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return save(fig, path, formats)


def compare_delay_cdf_plot(cmp, path: Path | None = None, formats: tuple[str, ...] = ()) -> Any:
    """The bottleneck queueing-delay CDFs of a comparison on one axis (ms)."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for k, (label, res) in enumerate(cmp.results.items()):
        hops = hop_links(res)
        for j, h in enumerate(hops):  # a chain: every hop, the first solid
            if f"delaycdf:{h}" not in res.series:
                continue
            x, F = delay_cdf(res, h)
            ax.plot(
                np.concatenate([[0.0], x * 1e3]),
                np.concatenate([[0.0], F]),
                lw=1.2,
                ls="-" if j == 0 else _HOP_STYLES[(j - 1) % len(_HOP_STYLES)],
                label=label if len(hops) == 1 else f"{label} {h}",
                color=f"C{k}",
            )
    ax.set_xlabel("queueing delay (ms)")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.01)
    ax.set_xlim(left=0)
    ax.set_title("bottleneck queueing delay, CDF over the measurement window", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    else:  # e.g. testbed runs, which record no per-packet delay distribution
        ax.text(0.5, 0.5, "no delay distribution recorded", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    return save(fig, path, formats)


def compare_probe_plot(cmp, path: Path, formats: tuple[str, ...] = ()) -> Path | None:
    """The latency probes' RTT CDFs under each AQM on one axis (ms), over the probes sent in the
    measurement window; ``None`` (nothing drawn) when the runs have no probe."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    drawn = False
    for k, (label, res) in enumerate(cmp.results.items()):
        warm = res.summary["run"]["warmup_s"]
        for name, s in probes(res).items():
            x, F = ecdf(s["rtt_s"][s["t_s"] >= warm] * 1e3)
            tag = label if len(probes(res)) == 1 else f"{label}: {name}"
            ax.step(x, F, where="post", label=tag, color=f"C{k}")
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("probe RTT (ms)")
    ax.set_ylabel("fraction of probes")
    ax.set_ylim(0, 1.01)
    ax.set_title("latency probe RTT under load, CDF over the measurement window", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return save(fig, path, formats)


# --- the delay-goodput trade-off (RFC 7928 s. 2.7) ---------------------------------------------


def ellipse_points(e: dict[str, float], n: int = 181) -> tuple[np.ndarray, np.ndarray]:
    """The outline of an ellipse from :func:`aqmlab.running.metrics.covariance_ellipse`."""
    th = np.linspace(0.0, 2 * np.pi, n)
    ang = math.radians(e["angle_deg"])
    u, v = e["a"] * np.cos(th), e["b"] * np.sin(th)
    return e["cx"] + u * math.cos(ang) - v * math.sin(ang), e["cy"] + u * math.sin(
        ang
    ) + v * math.cos(ang)


def tradeoff_axes(
    ax, points: dict[str, tuple[np.ndarray, np.ndarray]], title: str = "", nstd: float = 1.0
) -> None:
    """The delay-goodput trade-off of RFC 7928 s. 2.7 on ``ax``: for each AQM its per-run points
    (x: mean queueing delay, ms; y: goodput, Mb/s) and, with two runs or more, their covariance
    ellipse (``nstd`` standard deviations, :func:`aqmlab.running.metrics.covariance_ellipse`), as
    Flent and the ns-3 aqm-eval-suite draw them (after Winstein & Balakrishnan, SIGCOMM 2013).
    Better is up (more goodput) and left (less delay)."""
    from aqmlab.running.metrics import covariance_ellipse

    for i, (name, (x, y)) in enumerate(points.items()):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = x[ok], y[ok]
        if not x.size:
            continue
        color = f"C{i % 10}"
        ax.scatter(x, y, s=14, color=color, label=name, zorder=3)
        e = covariance_ellipse(x, y, nstd)
        if math.isfinite(e["a"]) and e["a"] > 0:
            ex, ey = ellipse_points(e)
            ax.plot(ex, ey, color=color, lw=1.0)
        ax.plot([e["cx"]], [e["cy"]], marker="+", color=color, ms=9)
    ax.set_xlabel("mean queueing delay (ms)")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")


def tradeoff_plot(
    panels: list[tuple[str, dict[str, tuple[np.ndarray, np.ndarray]]]],
    path: Path,
    formats: tuple[str, ...] = (),
    nstd: float = 1.0,
) -> Path:
    """One :func:`tradeoff_axes` panel per scenario, side by side (three per row)."""
    n = max(len(panels), 1)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    for ax, (title, pts) in zip(axes.flat, panels, strict=False):
        tradeoff_axes(ax, pts, title, nstd)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"delay-goodput trade-off: per-run points, {nstd:g}-sigma covariance ellipse per AQM "
        "(better: up and left)",
        fontsize=9,
    )
    fig.tight_layout()
    return save(fig, path, formats)
