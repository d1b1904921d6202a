"""The summary tables a finished run prints: links, flow groups and latency probes (``aqmlab run``,
``aqmlab demo`` and ``aqmlab testbed``)."""

from __future__ import annotations

import sys


def _fmt(x: object, spec: str) -> str:
    if x is None:
        return "-"
    try:
        return format(x, spec)
    except (TypeError, ValueError):
        return str(x)


def _ms(x: object, spec: str = ".2f") -> str:
    return "-" if x is None else _fmt(x * 1e3, spec)  # type: ignore[operator]


def _print_rows(rows: list[tuple], out) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)), file=out)


def print_summary(res, out=sys.stdout) -> None:
    """The summary tables of a run: links (with queueing-delay percentiles), flow groups (Jain's
    index of bulk groups, completion times of finite ones) and latency probes."""
    s = res.summary
    print(
        f"scenario {s['scenario']['name']}: {len(s['flows'])} flows, "
        f"{s['run']['duration_s']:g} s simulated (metrics after {s['run']['warmup_s']:g} s), "
        f"seed {s['run']['seed']}",
        file=out,
    )
    rows = [
        (
            "link",
            "aqm",
            "util",
            "thr Mb/s",
            "q mean",
            "q std",
            "q seen",
            "delay ms",
            "p50 ms",
            "p99 ms",
            "loss",
            "aqm drops",
            "ovfl drops",
            "marks",
        ),
    ]
    for link in s["links"]:
        rows.append(
            (
                link["name"],
                link["aqm"],
                _fmt(link["utilisation"], ".4f"),
                _fmt(link["throughput_bps"] / 1e6, ".2f"),
                _fmt(link["queue_mean_pkts"], ".1f"),
                _fmt(link["queue_std_pkts"], ".1f"),
                _fmt(link["queue_seen_mean_pkts"], ".1f"),
                _ms(link["delay_mean_s"]),
                _ms(link.get("delay_p50_s")),
                _ms(link.get("delay_p99_s")),
                _fmt(link["loss_ratio"], ".5f"),
                str(link["dropped_aqm"]),
                str(link["dropped_overflow"]),
                str(link["marked"]),
            )
        )
    _print_rows(rows, out)
    _print_flows(s, out)


def _print_flows(s: dict, out) -> None:
    from aqmlab.running import metrics

    g = [f["goodput_bps"] for f in s["flows"]]
    tcp = [f for f in s["flows"] if metrics.flow_kind(f) in ("bulk", "finite")]
    rtts = [f["rtt_mean_s"] for f in tcp if f["rtt_mean_s"] is not None]
    print(
        f"flows: goodput total {sum(g) / 1e6:.2f} Mb/s, mean {sum(g) / len(g) / 1e6:.3f} Mb/s, "
        f"Jain (bulk flows) {_fmt(s['fairness']['jain_goodput'], '.4f')}, "
        f"retransmits {sum(f['retransmits'] for f in s['flows'])}, "
        f"timeouts {sum(f['timeouts'] for f in s['flows'])}, "
        f"mean TCP RTT {(sum(rtts) / len(rtts) * 1e3) if rtts else float('nan'):.1f} ms",
        file=out,
    )
    groups = metrics.group_table(s)
    if len(groups) > 1 or any(r["kind"] != "bulk" for r in groups):
        head = ("group", "kind", "flows", "Mb/s", "Jain", "done", "FCT mean", "median", "p99")
        rows = [(*head, "slowdown med", "p99")]
        for r in groups:
            fin = r["kind"] == "finite"
            rows.append(
                (
                    r["group"],
                    r["kind"],
                    str(r["flows"]),
                    _fmt(r["goodput_bps"] / 1e6, ".2f"),
                    _fmt(r["jain"], ".4f"),
                    f"{r['finished']}/{r['flows']}" if fin else "-",
                    _ms(r.get("mean_s"), ".1f") + (" ms" if r.get("mean_s") is not None else ""),
                    _ms(r.get("median_s"), ".1f"),
                    _ms(r.get("p99_s"), ".1f"),
                    _fmt(r.get("slowdown_median"), ".2f"),
                    _fmt(r.get("slowdown_p99"), ".2f"),
                )
            )
        print("flow groups (Jain: bulk groups only; FCT of finished finite transfers):", file=out)
        _print_rows(rows, out)
    for p in s.get("probe", []):
        print(
            f"probe {p['flow']} ({p['src']} -> {p['dst']} and back): {p['echoes']} echoes of "
            f"{p['sent']} sent, RTT min {_ms(p['rtt_min_s'])} mean {_ms(p['rtt_mean_s'])} "
            f"p50 {_ms(p['rtt_p50_s'])} p90 {_ms(p['rtt_p90_s'])} p99 {_ms(p['rtt_p99_s'])} ms",
            file=out,
        )
