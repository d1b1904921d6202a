"""Plots people would rather look at than read: the queue over time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

matplotlib.rcParams["svg.hashsalt"] = "aqmlab"  # fixed element ids: the same plot, the same SVG

if TYPE_CHECKING:
    from aqmlab.runner import Result


#: The vector formats written beside a PNG on request (papers want SVG or PDF).
VECTOR = ("svg", "pdf")


def save(fig, path: Path, formats: tuple[str, ...] = ()) -> Path:
    """Writes ``fig`` to ``path`` and, for each of ``formats``, beside it with that suffix (no
    creation date in SVG/PDF, so the files are reproducible); closes the figure."""
    path = Path(path)
    fig.savefig(path, dpi=110)
    for fmt in formats:
        fig.savefig(path.with_suffix(f".{fmt}"), metadata={"Date": None} if fmt != "png" else None)
    plt.close(fig)
    return path


def queue_plot(res: Result, path: Path, title: str = "", formats: tuple[str, ...] = ()) -> Path:
    """Bottleneck queue length (and the AQM's average and drop probability when it has them)."""
    q = res.queue
    has_p = "drop_prob" in q
    fig, axes = plt.subplots(2 if has_p else 1, 1, figsize=(9, 5.5 if has_p else 3.6), sharex=True)
    ax = axes[0] if has_p else axes
    ax.plot(q["t_s"], q["queue_pkts"], lw=0.7, label="queue")
    if "avg_queue" in q:
        ax.plot(q["t_s"], q["avg_queue"], lw=1.0, label="average (AQM)")
    warm = res.summary["run"]["warmup_s"]
    ax.axvline(warm, color="grey", ls=":", lw=0.8)
    b = res.bottleneck
    ax.set_ylabel("packets")
    ax.set_title(
        f"{title}  [{b['aqm']}]  util {b['utilisation']:.3f}, "
        f"mean queue {b['queue_mean_pkts']:.1f} pkts",
        fontsize=10,
    )
    ax.legend(loc="upper right", fontsize=8)
    if has_p:
        axes[1].plot(q["t_s"], q["drop_prob"], lw=0.7, color="tab:red")
        axes[1].set_ylabel("drop probability")
        axes[1].axvline(warm, color="grey", ls=":", lw=0.8)
        axes[1].set_xlabel("time (s)")
    else:
        ax.set_xlabel("time (s)")
    fig.tight_layout()
    return save(fig, path, formats)


def goodput_plot(res: Result, path: Path, formats: tuple[str, ...] = ()) -> Path:
    """Per-flow goodput over the measurement window, sorted, with the fair share marked."""
    g = res.flows["goodput_bps"].to_numpy() / 1e6
    fig, ax = plt.subplots(figsize=(9, 3.2))
    order = g.argsort()[::-1]
    if len(g) <= 2000:
        ax.bar(range(len(g)), g[order], width=0.9, color="tab:blue")
    else:  # one filled curve, not N bars (10,000 bars took a minute; issue 13, item 15)
        ax.fill_between(range(len(g)), g[order], step="mid", color="tab:blue", lw=0)
    fair = res.bottleneck["throughput_bps"] / 1e6 * 1460 / 1500 / max(len(g), 1)
    ax.axhline(fair, color="grey", ls="--", lw=0.8, label="equal share")
    ax.set_xlabel("flows, by goodput")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(
        f"per-flow goodput (Jain {res.summary['fairness']['jain_goodput']:.3f})", fontsize=10
    )
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return save(fig, path, formats)


def compare_plot(cmp, path: Path, zoom_s: float = 2.0, formats: tuple[str, ...] = ()) -> Path:
    """Overlaid bottleneck queue lengths of a comparison (like seed 001's Figures 5-7): the whole
    run, a ``zoom_s`` window in the middle of the measurement period, and the drop probabilities
    (y range from the values after warm-up, so a start-up spike does not flatten the rest)."""
    import numpy as np

    fig, axes = plt.subplots(3, 1, figsize=(10, 8.4))
    warm = next(iter(cmp.results.values())).summary["run"]["warmup_s"]
    end = next(iter(cmp.results.values())).summary["run"]["duration_s"]
    mid = (warm + end) / 2
    z0, z1 = mid - zoom_s / 2, mid + zoom_s / 2
    pmax = 0.0
    for label, res in cmp.results.items():
        q = res.queue
        axes[0].plot(q["t_s"], q["queue_pkts"], lw=0.6, label=label)
        w = q[(q["t_s"] >= z0) & (q["t_s"] <= z1)]
        axes[1].plot(w["t_s"], w["queue_pkts"], lw=1.0, label=label)
        if "drop_prob" in q:
            axes[2].plot(q["t_s"], q["drop_prob"], lw=0.6, label=label)
            after = q["drop_prob"][q["t_s"] >= warm].to_numpy()
            if after.size:
                pmax = max(pmax, float(np.nanmax(after)))
    axes[0].axvspan(z0, z1, color="grey", alpha=0.15)
    axes[0].set_ylabel("queue (packets)")
    axes[0].set_title(f"{cmp.scenario.name}: bottleneck queue", fontsize=10)
    axes[0].legend(loc="upper right", fontsize=8, ncol=6)
    axes[1].set_ylabel("queue (packets)")
    axes[1].set_title(f"zoom: {z0:g}-{z1:g} s", fontsize=9)
    axes[2].set_ylabel("drop probability")
    axes[2].set_xlabel("time (s)")
    if pmax > 0:
        axes[2].set_ylim(0, pmax * 1.1)
    axes[2].set_title("drop probability (y range: after warm-up)", fontsize=9)
    fig.tight_layout()
    return save(fig, path, formats)
