#!/usr/bin/env python3
"""Cross-checks aqmlab's BBR v1 (crates/sim/src/tcp/cc/bbr.rs) against ns-3.44's TcpBbr
(docs/crosscheck-ns3.md, section "BBR v1").

The cases: bulk BBR flows (10 and 100) on tcp.py's dumbbell (100 Mb/s, 2 ms one way, buffer 300
packets, access delays 1-19 ms: base RTT 8-80 ms) through a FIFO and through FQ-CoDel. Both
sides pace and run BBR's own window over SACK recovery (aqmlab ``variant = "sack"``,
``cc = "bbr"``; ns-3 TcpBbr with PRR, which TcpBbr's CongControl overrides), with timestamps,
delayed ACKs (2 segments, 200 ms) and min RTO 1 s as tcp.py's ``default`` case. Everything else
(the runs, the cache, the tables) is tcp.py's.

    .venv/bin/python scripts/crosscheck_ns3.py bbr --jobs 2 --write-doc

aqmlab's side with ns-3.44's model choices (``cc = "bbr-ns3"``, or some of them,
``"bbr-ns3:entry+exit"``; crates/sim/src/tcp/cc/bbr.rs ``Ns3Model``) is a tagged run set:

    .venv/bin/python scripts/crosscheck_ns3.py bbr --cases bbr-fifo-n10 \
        --aqmlab-tcp 'cc="bbr-ns3"' --tag ns3

The like-for-like FQ-CoDel rows (CoDel's one-MTU test on the flow's own bytes, as ns-3's
FqCoDelQueueDisc; aqmlab ``mtu_per_flow = true``) run when named:

    .venv/bin/python scripts/crosscheck_ns3.py bbr --cases bbr-fq_codel-flow-n100

ns-3's side is taken from any cached run that ran ns3_dumbbell.cc with the same options on the
same network (a tagged run without ``--ns3-args``, an ``fq_codel-flow`` row beside its
``fq_codel`` row), so each aqmlab-only departure costs aqmlab runs only.

``--spread N`` runs aqmlab's side alone over seeds 1..N (no ns-3) and prints each case's mean and
standard error per metric: how far a 3-seed mean moves from seed to seed (the goodput under
heavy loss varies by several Mb/s per seed).

    .venv/bin/python scripts/crosscheck_ns3.py bbr --spread 20 --cases bbr-fifo-n10 \
        --aqmlab-tcp 'cc="bbr-ns3"' --tag ns3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tomllib
from pathlib import Path

from ns3check import tcp

BEGIN, END = "<!-- bbr-matrix:begin -->", "<!-- bbr-matrix:end -->"


#: Cases run only when ``--cases`` names them: FQ-CoDel with CoDel's one-MTU test on the flow's
#: own bytes (``mtu_per_flow = true``), ns-3's FqCoDelQueueDisc's test (tcp.py's ``fq_codel-flow``).
EXTRA_AQMS = ("fq_codel-flow",)


def matrix(quick: bool, duration: float, warmup: float, extra: bool = False) -> dict[str, dict]:
    """BBR x {FIFO, FQ-CoDel} x {10, 100} flows (``quick``: 10 flows only); ``extra`` adds the
    :data:`EXTRA_AQMS` rows."""
    out = {}
    for n in [10] if quick else [10, 100]:
        for aqm in ("fifo", "fq_codel", *(EXTRA_AQMS if extra else ())):
            c = tcp.dumbbell("bbr", aqm, n, duration, warmup)
            out[c["name"]] = c
    return out


def split_case(name: str) -> tuple[str, int]:
    """``bbr-AQM-nN`` -> (AQM, N); AQM may hold a hyphen (``fq_codel-flow``)."""
    rest, flows = name.removeprefix("bbr-").rsplit("-", 1)
    return rest, int(flows.removeprefix("n"))


def reuse_ns3(fresh: bool = False) -> None:
    """ns-3's side of a run from a cached run (any case, any tag) that ran ns-3 with the same
    options on the same network: a tagged run whose overrides are aqmlab's alone, or a row whose
    aqmlab setting ns-3 has no counterpart for (``fq_codel-flow`` runs ns-3's ``fq_codel``).
    ``fresh`` (``--fresh``): no reuse, ns-3 runs again."""
    if fresh:
        return
    run_ns3 = tcp.run_ns3

    def run(exe: Path, cfg: dict, sc: dict, d: Path, extra: list[str]) -> dict:
        flags, graph = " ".join(tcp.ns3_flags(cfg, sc, extra)), tcp.graph_text(cfg)
        for cached in sorted((d.parent.parent / "runs").glob("*.json")):
            ns3 = json.loads(cached.read_text())["ns3"]
            path, _, rest = ns3["command"].partition(" ")
            g = Path(path.removeprefix("--graph="))
            if rest == flags and g.exists() and g.read_text() == graph:
                tcp.log(f"{d.name}: ns-3's side from {cached.name}")
                return ns3
        return run_ns3(exe, cfg, sc, d, extra)

    tcp.run_ns3 = run


def spread(n: int, a: argparse.Namespace) -> None:
    """aqmlab's side alone over seeds 1..n: each case's mean and standard error per metric."""
    work = tcp.ROOT / "target" / "crosscheck-ns3-bbr" / "spread"
    for name in a.cases or ["bbr-fifo-n10"]:
        aqm, flows = split_case(name)
        rows = []
        for seed in range(1, n + 1):
            sc = tcp.dumbbell("bbr", aqm, flows, a.duration, a.warmup)
            sc["seed"] = seed
            for kv in a.aqmlab_tcp:
                k, v = kv.split("=", 1)
                sc["tcp"][k] = tomllib.loads(f"v = {v}")["v"]
            key = f"{name}.seed{seed}" + (f".{a.tag}" if a.tag else "")
            toml = work / f"{key}.toml"
            toml.parent.mkdir(parents=True, exist_ok=True)
            toml.write_text(tcp.dumps(sc))
            o = tcp.run_ours(toml, work / key)
            link = o["links"][0]
            rows.append(
                {
                    "goodput Mb/s": sum(o["goodput_bps"]) / 1e6,
                    "queue pkts": link["queue_mean_pkts"],
                    "loss %": 100 * link["loss_ratio"],
                    "util": link["utilisation"],
                    "timeouts": o["timeouts"],
                }
            )
        cells = []
        for k in rows[0]:
            v = [r[k] for r in rows]
            se = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
            cells.append(f"{k} {statistics.fmean(v):.2f} +- {se:.2f} (sd {se * len(v) ** 0.5:.2f})")
        print(f"{name} {a.tag or 'linux'} seeds 1-{n}: " + "; ".join(cells))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--tag", default="")
    ap.add_argument("--ns3-args", action="append", default=[])
    ap.add_argument("--spread", type=int, default=0)
    ap.add_argument("--cases", nargs="*")
    ap.add_argument("--aqmlab-tcp", action="append", default=[])
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--duration", type=float, default=15.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    known, _ = ap.parse_known_args(argv)
    if known.spread:
        spread(known.spread, known)
        return
    reuse_ns3(known.fresh)
    extra = any(split_case(c)[0] in EXTRA_AQMS for c in known.cases or [])

    def cases(quick: bool, duration: float, warmup: float) -> dict[str, dict]:
        return matrix(quick, duration, warmup, extra)

    tcp.main(argv, cases_fn=cases, markers=(BEGIN, END), label="bbr")
