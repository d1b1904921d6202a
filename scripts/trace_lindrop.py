"""One cell of seed 000's reproduction (``aqmlab reproduce lindrop``) in aqmlab and, with
``--ns2``, in ns-2.35, with time series: the tool behind docs/reproductions.md's seed 000 item 5
(where aqmlab and ns-2 differ on the same network).

    python scripts/trace_lindrop.py LAN moderate red --seed 1
    python scripts/trace_lindrop.py LAN moderate red --set wait=false --set w_q=0.002
    python scripts/trace_lindrop.py LAN moderate red --ns2 --ns2-set "wait_ false"

``--set k=v`` changes one of the cell's [aqm] parameters (a number, true/false or a string);
``--buffer`` its buffer. Prints one line per engine: throughput, mean and std of the queue
(packets), loss, the share of 10 ms samples with an empty queue, early/forced drops and the mean
of the algorithm's average queue and probability where it has them; ``--series DIR`` keeps the
sampled series as TSV.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from aqmlab.reproduce import core, lindrop
from aqmlab.scenario import units

HOOK = Path(__file__).with_name("ns2_lindrop_trace.tcl")


def _value(s: str):
    if s in ("true", "false"):
        return s == "true"
    try:
        return float(s) if any(c in s for c in ".e") else int(s)
    except ValueError:
        return s


def _stats(q: np.ndarray) -> str:
    return f"queue {q.mean():6.1f} +- {q.std():5.1f} pkts, empty {100 * np.mean(q == 0):4.1f}%"


def run_aqmlab(args: argparse.Namespace) -> None:
    import aqmlab

    exp = core.load_experiment("lindrop")
    base = core.load_scenario_dict("lindrop", exp["scenario"])
    sc = lindrop.scenario_for(base, exp, args.delay, args.level, args.aqm, quick=False)
    for kv in args.set:
        k, v = kv.split("=", 1)
        sc["aqm"][k] = _value(v)
    if args.buffer:
        sc["topology"]["buffer"] = _value(args.buffer)
    sc["duration"] = args.duration
    res = aqmlab.run(sc, seed=args.seed)
    b = res.bottleneck
    q = res.queue
    extra = ""
    for col in ("avg_queue", "drop_prob"):
        if col in q:
            extra += f", mean {col} {q[col].mean():.4g}"
    st = dict(b.get("aqm_stats") or {})
    print(
        f"aqmlab {args.set or ''}: {b['throughput_bps'] / 1e6:7.3f} Mb/s, "
        f"{_stats(q['queue_pkts'].to_numpy())}, loss {100 * b['loss_ratio']:.3f}%, "
        f"aqm {st}{extra}"
    )
    if args.series:
        Path(args.series).mkdir(parents=True, exist_ok=True)
        q.to_csv(Path(args.series) / f"aqmlab-{args.aqm}-s{args.seed}.tsv", sep="\t", index=False)


def run_ns2(args: argparse.Namespace) -> None:
    exp = core.load_experiment("lindrop")
    c = exp["congestion"][args.level]
    delay_ms = units.seconds("delay", exp["delays"][args.delay]) * 1e3
    buf = args.buffer or str(exp["aqm"][args.aqm]["buffer"])
    trace = Path(args.series or "/tmp") / f"ns2-{args.aqm}-s{args.seed}.tsv"
    trace.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "NS2_TRACE": str(trace), "NS2_SET": " ".join(args.ns2_set)}
    script = core.experiment_dir("lindrop") / exp["ns2"]["script"]
    cmd = ["ns", str(script), f"{delay_ms:g}", str(c["connections"]), str(c["web_rate"])]
    cmd += [exp["ns2"]["queues"][args.aqm], buf, str(args.seed)]
    cmd += [f"{units.seconds('duration', args.duration):g}", str(HOOK)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    kv = dict(x.split("=", 1) for x in out.split("\n")[-2].split())
    rows = np.genfromtxt(trace, delimiter="\t", names=True)
    extra = "".join(
        f", mean {n} {rows[n].mean():.4g}"
        for n in ("ave_", "prob1_", "prob_")
        if n in rows.dtype.names
    )
    print(
        f"ns-2   {args.ns2_set or ''}: {float(kv['throughput_mbps']):7.3f} Mb/s, "
        f"{_stats(rows['qpkts'])}, loss {float(kv['loss_pct']):.3f}%, "
        f"drops {kv['drops']}, mean pkt {kv['mean_pkt_bytes']} B{extra}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("delay", choices=["LAN", "WAN_100", "WAN_300"])
    ap.add_argument("level", choices=lindrop.LEVELS)
    ap.add_argument("aqm")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", default="100s")
    ap.add_argument("--set", action="append", default=[], help="k=v: an [aqm] parameter")
    ap.add_argument("--buffer", help="the bottleneck buffer (packets, or a size like 150kB)")
    ap.add_argument("--ns2", action="store_true", help="also run ns-2.35 (not the aqmlab run)")
    ap.add_argument("--ns2-set", action="append", default=[], help="'var value' on ns-2's queue")
    ap.add_argument("--series", help="directory for the sampled series (TSV)")
    args = ap.parse_args(argv)
    if args.ns2:
        run_ns2(args)
    else:
        run_aqmlab(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
