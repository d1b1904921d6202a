"""Plots people would rather look at than read: the queue over time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from aqmlab.runner import Result


def queue_plot(res: Result, path: Path, title: str = "") -> Path:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
