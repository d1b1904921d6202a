#!/usr/bin/env python3
"""Cross-checks aqmlab's TCP senders (SACK + PRR, CUBIC) and AQMs against ns-3.44
(docs/crosscheck-ns3.md, section "ns-3's default TCP and CUBIC").

The matrix: TCP x AQM x number of flows on one dumbbell, plus a parking lot and web traffic.

* TCP ``default``: ns-3's default TCP with NewReno congestion control (TcpNewReno, PRR, SACK,
  timestamps, DelAckCount 2 with a 200 ms timer, MinRto 1 s) against aqmlab ``variant = "sack"``,
  ``timestamps = true``, ``delack = true``, ``delack_timeout = "200ms"``, ``min_rto = "1s"``;
  ``cubic``: the same with TcpCubic (HyStart off: aqmlab has none) against ``variant = "cubic"``;
  ``newreno``: the older cross-checks' model (NewReno without SACK, no timestamps, no delayed
  ACKs, min RTO 200 ms) against ns-3 NewReno with SACK (the older tables' "sack-on").
* AQM ``fifo`` (DropTail 300 packets), ``red-w0`` / ``red-w1`` (RED 50/150/0.1/0.002, gentle
  off, ``wait`` off / on = ns-3's ``Wait``), ``pie`` (RFC 8033 defaults), ``codel`` (5/100 ms),
  ``fq_codel`` (RFC 8290 defaults, limit = the buffer; ``fq_codel-flow``: CoDel's MTU test on the
  flow's bytes, as ns-3), ``fq_pie`` (ns-3.44 FqPieQueueDisc's defaults on aqmlab's ``fq`` +
  ``pie``), ``cobalt`` (ns-3.44 CobaltQueueDisc defaults), ``fq_cobalt`` (ns-3.44
  FqCobaltQueueDisc defaults, limit = the buffer); flow-queueing rows with the same quantum.
* The dumbbell: 100 Mb/s, 2 ms one way, buffer 300 packets both ways; access links 1 Gb/s with
  one-way delays 1, 3, ..., 19 ms cycled over the hosts (base RTT 8-80 ms, mean 44 ms).
* ``parking-lot``: 3 hops of 100 Mb/s / 2 ms / 300 packets, 10 long flows + 5 cross flows per
  hop; ``web``: Poisson arrivals of Pareto-sized objects (mean 50 kB, shape 1.3) at 80 % load.

aqmlab builds each network (its ``build_config``); the same nodes, links and flows (start times,
web arrival times and sizes, drawn once by aqmlab from the seed) go to ``scripts/ns3_dumbbell.cc
--graph``. ns-3 opens every connection with a handshake and aqmlab does not, so each ns-3 flow
starts one base RTT earlier than aqmlab's, and its data starts at about aqmlab's time (later by
the queueing its SYN and SYN-ACK meet); a flow whose aqmlab side opens with a handshake too
(``[tcp] handshake = true``) starts at the same time on both sides.

Usage (repository root, project venv; ns-3 in /work/ns3venv):

    .venv/bin/python scripts/crosscheck_ns3.py tcp --jobs 2           # the whole matrix
    .venv/bin/python scripts/crosscheck_ns3.py tcp --quick            # a small subset
    .venv/bin/python scripts/crosscheck_ns3.py tcp --cases default-red-w0-n10 \
        --ns3-args=--delAck=1 --aqmlab-tcp=delack=false --tag nodelack  # a diagnostic

Results are cached per run under ``--workdir`` (default ``target/crosscheck-ns3-tcp``); the
tables go to stdout and to ``WORKDIR/report.md`` (``--write-doc`` puts them into the doc).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import statistics
import sys
import time
import tomllib
from pathlib import Path

from ns3check import common as base
from ns3check.common import ROOT

DOC = ROOT / "docs" / "crosscheck-ns3.md"
BEGIN, END = "<!-- tcp-matrix:begin -->", "<!-- tcp-matrix:end -->"
HET = [f"{d}ms" for d in range(1, 20, 2)]
GOODPUT_TOL, QUEUE_TOL = 0.02, 0.15
#: aqmlab's `[tcp] cc` names -> ns3_dumbbell.cc's (a flow line's last field).
NS3_CC = {"reno": "newreno", "cubic": "cubic", "dctcp": "dctcp", "ledbat": "ledbat"}
DUMBBELL = {
    "type": "dumbbell",
    "rate": "100Mbps",
    "delay": "2ms",
    "buffer": 300,
    "reverse_buffer": 300,
    "access_rate": "1Gbps",
    "access_delay": HET,
}

_COMMON_TCP = {"mss": "1460B", "header": "40B", "init_cwnd": 10, "rwnd": "4MB"}
_NS3_DEFAULT = [
    "--recovery=prr",
    "--sack=1",
    "--timestamps=1",
    "--delAck=2",
    "--delAckTimeout=200",
    "--minRto=1000",
    "--limitedTransmit=0",
    "--hystart=0",
]
_AQMLAB_DEFAULT = {"timestamps": True, "delack": True, "delack_timeout": "200ms", "min_rto": "1s"}
TCPS = {
    "default": {
        "aqmlab": {**_COMMON_TCP, "variant": "sack", **_AQMLAB_DEFAULT},
        "ns3": ["--tcp=newreno", *_NS3_DEFAULT],
    },
    # BBR v1 (scripts/ns3check/bbr.py): aqmlab's tcp/cc/bbr.rs with SACK recovery against ns-3's
    # TcpBbr with PRR (which BBR's own window overrides on both sides), both paced.
    "bbr": {
        "aqmlab": {**_COMMON_TCP, "variant": "sack", "cc": "bbr", **_AQMLAB_DEFAULT},
        "ns3": ["--tcp=bbr", *_NS3_DEFAULT],
    },
    "cubic": {
        "aqmlab": {**_COMMON_TCP, "variant": "cubic", **_AQMLAB_DEFAULT},
        "ns3": ["--tcp=cubic", *_NS3_DEFAULT],
    },
    "newreno": {
        "aqmlab": {**_COMMON_TCP, "variant": "newreno", "min_rto": "200ms", "delack": False},
        "ns3": ["--tcp=newreno", "--recovery=classic", "--sack=1", "--timestamps=0", "--delAck=1"],
    },
}
_RED = {"name": "red", "min_th": 50, "max_th": 150, "max_p": 0.1, "w_q": 0.002, "gentle": False}
AQMS = {
    "fifo": {"name": "droptail"},
    "red-w0": {**_RED, "mode": "packet", "wait": False},
    "red-w1": {**_RED, "mode": "packet", "wait": True},
    "pie": {
        "name": "pie",
        "target": "15ms",
        "t_update": "15ms",
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst": "150ms",
        "estimator": "timestamp",
        "cap_drop_adjustment": True,
        "derandomize": False,
    },
    "codel": {"name": "codel", "target": "5ms", "interval": "100ms", "mtu": "1500B"},
    # RFC 8290 / Linux defaults on both sides, the limit being the link's buffer (300 packets),
    # the quantum 1514 B on both (ns-3's would be the device's Mtu, 1600 in ns3_dumbbell.cc).
    # CoDel's one-MTU test reads the whole qdisc's backlog in aqmlab (Linux), the flow's own
    # bytes in ns-3 (one CoDelQueueDisc per flow): `fq_codel-flow` is the like-for-like row.
    "fq_codel": {"name": "fq_codel", "quantum": "1514B"},
    "fq_codel-flow": {"name": "fq_codel", "quantum": "1514B", "mtu_per_flow": True},
    # ns-3.44's FqPieQueueDisc on aqmlab's `fq` + `pie` (aqmlab's `fq_pie` preset is Linux's:
    # tail drop at the limit, derandomised drops): head drops from the fattest queue (batch 64),
    # each queue's PIE at ns-3's (= RFC 8033's) defaults, no derandomisation, no early drop
    # while a queue holds at most 2 packets (ns-3 counts packets; 2 x 1512 B here), ECN on
    # (unused: no TCP negotiates it), quantum 1500 B on both sides.
    "fq_pie": {
        "name": "fq",
        "queue_aqm": "pie",
        "overflow": "fattest",
        "drop_batch": 64,
        "aqm_backlog": "flow",
        "quantum": "1500B",
        "queue.target": "15ms",
        "queue.t_update": "15ms",
        "queue.alpha": 0.125,
        "queue.beta": 1.25,
        "queue.max_burst": "150ms",
        "queue.estimator": "timestamp",
        "queue.cap_drop_adjustment": True,
        "queue.derandomize": False,
        "queue.ecn": True,
        "queue.mean_pkt_size": "1512B",
    },
    # ns-3.44 CobaltQueueDisc's defaults on both sides (5/100 ms, BLUE 1/256 and 1/4096, blue
    # threshold 400 ms, ECN off), the limit being the link's buffer.
    "cobalt": {"name": "cobalt"},
    # ns-3.44 FqCobaltQueueDisc's defaults on both sides (1024 flows, COBALT's defaults with ECN
    # on, quantum 1500 B, drop batch 64), the limit being the link's buffer; ns-3's quantum set
    # to 1500 B too (its own rule, the device's Mtu, gives 1600 in ns3_dumbbell.cc).
    "fq_cobalt": {"name": "fq_cobalt", "quantum": "1500B"},
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The cases


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v)  # strings and numbers: JSON's syntax is TOML's here


def dumps(d: dict) -> str:
    """TOML for a scenario: scalars, tables and arrays of tables one level deep."""
    out = [
        "\n".join(f"{k} = {_toml_value(v)}" for k, v in d.items() if not isinstance(v, dict | list))
    ]
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"[{k}]\n" + "\n".join(f"{kk} = {_toml_value(x)}" for kk, x in v.items()))
        elif isinstance(v, list):
            for t in v:
                flat = {kk: x for kk, x in t.items() if not isinstance(x, dict)}
                out.append(
                    f"[[{k}]]\n" + "\n".join(f"{kk} = {_toml_value(x)}" for kk, x in flat.items())
                )
                # A table inside an array entry (a flow group's own [flows.tcp]).
                for kk, sub in t.items():
                    if isinstance(sub, dict):
                        out.append(
                            f"[{k}.{kk}]\n"
                            + "\n".join(f"{a} = {_toml_value(b)}" for a, b in sub.items())
                        )
    return "\n\n".join(out) + "\n"


def _base(name: str, tcp: str, aqm: str, duration: float, warmup: float) -> dict:
    return {
        "name": name,
        "duration": f"{duration:g}s",
        "warmup": f"{warmup:g}s",
        "seed": 1,
        "aqm": AQMS[aqm],
        "tcp": dict(TCPS[tcp]["aqmlab"]),
    }


def dumbbell(tcp: str, aqm: str, n: int, duration: float, warmup: float) -> dict:
    """n bulk flows on the 100 Mb/s dumbbell, starting uniformly in [0.2, 1.2] s."""
    d = _base(f"{tcp}-{aqm}-n{n}", tcp, aqm, duration, warmup)
    d["topology"] = dict(DUMBBELL)
    d["flows"] = [{"count": n, "start": "0.2s", "start_spread": "1s"}]
    return d


def parking_lot(tcp: str, aqm: str, duration: float, warmup: float) -> dict:
    """3 hops; 10 long flows across all, 5 cross flows on each hop."""
    d = _base(f"{tcp}-{aqm}-parkinglot", tcp, aqm, duration, warmup)
    d["topology"] = {
        "type": "parking-lot",
        "hops": 3,
        "rate": "100Mbps",
        "delay": "2ms",
        "buffer": 300,
        "access_rate": "1Gbps",
        "access_delay": HET,
        "cross": 5,
    }
    spread = {"start": "0.2s", "start_spread": "1s"}
    d["flows"] = [{"count": 10, **spread}] + [
        {"count": 5, "src": f"cross{h}.src", "dst": f"cross{h}.dst", **spread} for h in (1, 2, 3)
    ]
    return d


def web(tcp: str, aqm: str, duration: float, warmup: float) -> dict:
    """Web objects between 10 host pairs: Poisson arrivals at 80 % of 100 Mb/s, Pareto sizes."""
    d = _base(f"{tcp}-{aqm}-web", tcp, aqm, duration, warmup)
    d["topology"] = {**DUMBBELL, "left": 10, "right": 10}
    rate = 0.8 * 100e6 / 8 / 50e3  # objects per second
    d["flows"] = [
        {"type": "web", "arrival_rate": rate, "object_size": "50kB", "shape": 1.3, "start": "0.2s"}
    ]
    return d


def matrix(quick: bool, duration: float, warmup: float) -> dict[str, dict]:
    """Every case of the cross-check by name, in the order they run (the most telling first)."""
    aqms = ["fifo", "red-w0", "codel"] if quick else list(AQMS)
    out = {}

    def add(c: dict) -> None:
        out[c["name"]] = c

    for n in [10, 100] if quick else [10, 100, 50]:
        for tcp in ("default", "cubic"):
            for aqm in aqms:
                add(dumbbell(tcp, aqm, n, duration, warmup))
        if n == 10:
            add(web("default", "fifo", duration, warmup))
            add(parking_lot("cubic", "red-w1", duration, warmup))
            if not quick:
                add(web("default", "pie", duration, warmup))
    if not quick:
        for aqm in ("fifo", "red-w0", "pie", "codel"):
            add(dumbbell("newreno", aqm, 10, duration, warmup))
    return out


# ---------------------------------------------------------------------------------------------
# The two sides


#: aqmlab's `fq` by its queue AQM -> ns3_dumbbell.cc's flow-queueing queue disc.
NS3_FQ = {"codel": "fq_codel", "pie": "fq_pie", "cobalt": "fq_cobalt"}


def ns3_aqm_name(aqm: dict) -> str:
    """ns3_dumbbell.cc's name of a link's AQM (aqmlab's JSON configuration of it)."""
    name = aqm.get("name", "droptail")
    if name == "fq":
        q = (aqm.get("params") or {}).get("queue_aqm", "codel")
        if q not in NS3_FQ:
            raise SystemExit(f"fq with queue_aqm {q}: ns-3 has no such queue disc")
        return NS3_FQ[q]
    return name


def ns3_aqm_flags(aqm: dict, pkt: int) -> list[str]:
    """ns3_dumbbell.cc options for an AQM table of AQMS."""
    if "quantum" in aqm:
        # The flow-queueing rows: ns-3 takes aqmlab's quantum (not its device's Mtu).
        return [f"--fqQuantum={int(str(aqm['quantum']).removesuffix('B'))}"]
    if aqm["name"] == "red":
        return [
            f"--minTh={aqm['min_th']}",
            f"--maxTh={aqm['max_th']}",
            f"--maxP={aqm['max_p']}",
            f"--wQ={aqm['w_q']}",
            f"--redWait={int(aqm['wait'])}",
            f"--redGentle={int(aqm['gentle'])}",
            f"--meanPktSize={pkt}",
        ]
    if aqm["name"] == "codel":
        return ["--codelTarget=5", "--codelInterval=100", "--codelMinBytes=1500"]
    if aqm["name"] == "pie":
        return [
            "--pieTarget=15",
            "--pieTupdate=15",
            "--pieA=0.125",
            "--pieB=1.25",
            "--pieMaxBurst=150",
            "--pieDqRate=0",
            "--pieCapDrop=1",
            "--pieDerandomize=0",
            f"--meanPktSize={pkt}",
        ]
    return []


def graph_text(cfg: dict) -> str:
    """aqmlab's network as ns3_dumbbell.cc --graph lines; ns-3's starts one handshake earlier,
    except a flow whose aqmlab side opens with a handshake too (``[tcp] handshake = true``):
    both sides then start it at the same time."""
    links = cfg["links"]
    lines = [f"node {n['kind']}" for n in cfg["nodes"]]
    for ln in links:
        if ln["buffer_pkts"] is None:
            raise SystemExit(f"link {ln['name']}: the ns-3 side needs buffers in packets")
        aqm = ns3_aqm_name(ln.get("aqm") or {})
        lines.append(
            f"link {ln['name']} {ln['from']} {ln['to']} {ln['rate_bps']} "
            f"{ln['delay_ns'] / 1e9:.9f} {ln['buffer_pkts']} {aqm} {int(ln['monitor'])}"
        )
    for f in cfg["flows"]:
        rtt = sum(links[i]["delay_ns"] for i in f["path"] + f["rev_path"]) / 1e9
        if (f.get("tcp") or {}).get("handshake"):
            rtt = 0.0
        start = f["start_ns"] / 1e9 - rtt
        if start < 0:
            raise SystemExit(
                f"flow {f['name']} starts before one RTT: no room for ns-3's handshake"
            )
        # A flow's own congestion control, in ns-3's name, when the scenario sets one
        # (scripts/ns3_dumbbell.cc sets it on the flow's sender host).
        cc = NS3_CC.get((f.get("tcp") or {}).get("cc") or "", "")
        lines.append(
            f"flow {f['src']} {f['dst']} {start:.9f} {f.get('size_bytes') or 0} {cc}".rstrip()
        )
    return "\n".join(lines) + "\n"


def run_ours(toml: Path, out: Path) -> dict:
    aqmlab = str(ROOT / ".venv" / "bin" / "aqmlab")
    res, wall, cpu = base.timed([aqmlab, "run", str(toml), "--out", str(out), "--quiet"], cwd=ROOT)
    if res.returncode != 0:
        raise RuntimeError(f"aqmlab run {toml.name} failed: {res.stderr.strip()}")
    s = json.loads((out / "summary.json").read_text())
    fl = s["flows"]
    return {
        "git": base.git_state(),
        "links": [
            {k: b[k] for k in ("name", "utilisation", "queue_mean_pkts", "loss_ratio", "arrived")}
            for b in s["links"]
        ],
        "goodput_bps": [f["goodput_bps"] for f in fl],
        "fct_s": [f["completion_s"] for f in fl],
        "size_bytes": [f["size_bytes"] for f in fl],
        "timeouts": sum(f["timeouts"] for f in fl),
        "fast_recoveries": sum(f["fast_retransmits"] for f in fl),
        "retransmits": sum(f["retransmits"] for f in fl),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def ns3_flags(cfg: dict, sc: dict, extra: list[str]) -> list[str]:
    """ns3_dumbbell.cc's options for a case but the network (``--graph``)."""
    pkt = 1460 + 40 + (12 if sc["tcp"].get("timestamps") else 0)
    return [
        f"--duration={cfg['duration_ns'] / 1e9}",
        f"--warmup={cfg['warmup_ns'] / 1e9}",
        f"--seed={cfg['seed']}",
        *ns3_aqm_flags(sc["aqm"], pkt),
        *TCPS[sc["name"].split("-")[0]]["ns3"],
        *extra,
    ]


def run_ns3(exe: Path, cfg: dict, sc: dict, d: Path, extra: list[str]) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    (d / "graph.txt").write_text(graph_text(cfg))
    cmd = [str(exe), f"--graph={d / 'graph.txt'}", *ns3_flags(cfg, sc, extra)]
    res, wall, cpu = base.timed(cmd)
    if res.returncode != 0:
        raise RuntimeError(f"ns-3 {sc['name']} failed: {res.stderr.strip()[-2000:]}")
    r = json.loads(res.stdout)
    if any(ln["tx_pairing_errors"] for ln in r["links"]):
        raise RuntimeError(f"ns-3 {sc['name']}: queue/device pairing errors")
    r.update(cpu_s=cpu, wall_s=wall, command=" ".join(cmd[1:]))
    return r


def run_case(exe: Path, sc: dict, seed: int, args: argparse.Namespace) -> dict:
    """Both sides of one case and seed (cached in the work directory)."""
    from aqmlab.scenario import schema as scenario

    key = f"{sc['name']}.{args.duration:g}s.seed{seed}" + (f".{args.tag}" if args.tag else "")
    cache = args.workdir / "runs" / f"{key}.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    if cache.exists() and not args.fresh:
        return json.loads(cache.read_text())
    sc = json.loads(json.dumps(sc))
    sc["seed"] = seed
    for kv in args.aqmlab_tcp:
        k, v = kv.split("=", 1)
        sc["tcp"][k] = tomllib.loads(f"v = {v}")["v"]
    toml = args.workdir / "cases" / f"{key}.toml"
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(dumps(sc))
    cfg = scenario.build_config(scenario.load(toml))
    log(f"{key}: aqmlab")
    ours = run_ours(toml, args.workdir / "ours" / key)
    log(f"{key}: ns-3")
    theirs = run_ns3(args.exe, cfg, sc, args.workdir / "ns3" / key, args.ns3_args)
    res = {"case": sc["name"], "seed": seed, "tag": args.tag, "ours": ours, "ns3": theirs}
    cache.write_text(json.dumps(res))
    log(f"{key}: done ({theirs['cpu_s']:.0f} s ns-3 CPU)")
    return res


# ---------------------------------------------------------------------------------------------
# Comparison


def compare(res: dict) -> dict:
    """The row of one run: goodput, queue per monitored link, FCT means, verdict."""
    o, t = res["ours"], res["ns3"]
    g_o, g_t = sum(o["goodput_bps"]), t["goodput_total_bps"]
    q_o = [ln["queue_mean_pkts"] for ln in o["links"]]
    q_t = [ln["queue_mean_pkts"] for ln in t["links"]]
    row = {
        "goodput": (g_o, g_t),
        "queue": (statistics.fmean(q_o), statistics.fmean(q_t)),
        "loss": (o["links"][0]["loss_ratio"], t["links"][0]["loss_ratio"]),
        "util": (o["links"][0]["utilisation"], t["links"][0]["utilisation"]),
        "timeouts": (o["timeouts"], t["timeouts"]),
        "per_link_queue": list(zip(q_o, q_t, strict=True)),
    }
    both = [
        (a, b)
        for a, b, s in zip(o["fct_s"], t["fct_s"], o["size_bytes"], strict=True)
        if s and a is not None and b is not None
    ]
    if both:
        row["fct"] = (statistics.fmean(a for a, _ in both), statistics.fmean(b for _, b in both))
        row["fct_n"] = (len(both), sum(1 for s in o["size_bytes"] if s))
    gd = g_o / g_t - 1 if g_t else float("inf")
    qd = row["queue"][0] / row["queue"][1] - 1 if row["queue"][1] else float("inf")
    row["diff"] = (gd, qd)
    row["pass"] = abs(gd) <= GOODPUT_TOL and abs(qd) <= QUEUE_TOL
    return row


def mean_rows(rows: list[dict]) -> dict:
    """Means over seeds of a case's rows."""
    out = {}
    for k in ("goodput", "queue", "loss", "util", "timeouts", "fct"):
        if k in rows[0]:
            out[k] = tuple(statistics.fmean(r[k][i] for r in rows) for i in (0, 1))
    g, q = out["goodput"], out["queue"]
    out["diff"] = (g[0] / g[1] - 1, q[0] / q[1] - 1)
    out["pass"] = abs(out["diff"][0]) <= GOODPUT_TOL and abs(out["diff"][1]) <= QUEUE_TOL
    if "fct_n" in rows[0]:
        out["fct_n"] = rows[0]["fct_n"]
    return out


def report(results: dict[str, list[dict]], meta: str) -> str:
    head = (
        "| case | goodput Mb/s aqmlab / ns-3 | diff | queue pkts aqmlab / ns-3 | diff | "
        "loss aqmlab / ns-3 | util aqmlab / ns-3 | timeouts aqmlab / ns-3 | FCT mean s aqmlab / ns-3 | "
        "within 2 % / 15 % |\n|" + " --- |" * 10
    )
    lines = [meta, "", head]
    for name, rows in results.items():
        r = mean_rows([compare(x) for x in rows])
        g, q, lo, u, to = r["goodput"], r["queue"], r["loss"], r["util"], r["timeouts"]
        fct = (
            f"{r['fct'][0]:.3f} / {r['fct'][1]:.3f} ({r['fct_n'][0]} of {r['fct_n'][1]})"
            if "fct" in r
            else ""
        )
        lines.append(
            f"| {name} | {g[0] / 1e6:.2f} / {g[1] / 1e6:.2f} | {r['diff'][0]:+.1%} | "
            f"{q[0]:.1f} / {q[1]:.1f} | {r['diff'][1]:+.1%} | {lo[0]:.2%} / {lo[1]:.2%} | "
            f"{u[0]:.3f} / {u[1]:.3f} | {to[0]:.0f} / {to[1]:.0f} | {fct} | "
            f"{'pass' if r['pass'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


BINS = [
    (0, 10e3, "<10kB"),
    (10e3, 100e3, "10-100kB"),
    (100e3, 1e6, "100kB-1MB"),
    (1e6, 1e18, ">=1MB"),
]


def details(results: dict[str, list[dict]]) -> str:
    """Per-hop queues of multi-link cases and FCT means by object size of web cases (seed 1)."""
    out = []
    for name, rows in results.items():
        r = rows[0]
        c = compare(r)
        if len(c["per_link_queue"]) > 1:
            hops = ", ".join(
                f"{ln['name']} {a:.1f} / {b:.1f}"
                for ln, (a, b) in zip(r["ours"]["links"], c["per_link_queue"], strict=True)
            )
            out.append(f"- `{name}` mean queue per hop, aqmlab / ns-3 (packets): {hops}.")
        o, t = r["ours"], r["ns3"]
        sizes = o["size_bytes"]
        if not any(sizes):
            continue
        parts = []
        for lo, hi, label in BINS:
            pairs = [
                (a, b)
                for a, b, s in zip(o["fct_s"], t["fct_s"], sizes, strict=True)
                if s and lo <= s < hi and a is not None and b is not None
            ]
            if pairs:
                ma = statistics.fmean(a for a, _ in pairs)
                mb = statistics.fmean(b for _, b in pairs)
                parts.append(f"{label} ({len(pairs)}): {ma:.3f} / {mb:.3f}")
        done = (
            sum(1 for a in o["fct_s"] if a is not None),
            sum(1 for b in t["fct_s"] if b is not None),
        )
        out.append(
            f"- `{name}` FCT mean by size, aqmlab / ns-3 (s), objects finished on both sides: "
            + "; ".join(parts)
            + f". Finished: aqmlab {done[0]}, ns-3 {done[1]} of {sum(1 for s in sizes if s)}."
        )
    if not out:
        return ""
    return (
        "Per-hop queues and web FCTs (seed "
        + str(results[next(iter(results))][0]["seed"])
        + "):\n\n"
        + "\n".join(out)
        + "\n"
    )


def write_doc(table: str, markers: tuple[str, str] = (BEGIN, END)) -> None:
    begin, end = markers
    text = DOC.read_text()
    if begin not in text:
        raise SystemExit(f"{DOC}: no {begin} marker")
    pre, rest = text.split(begin, 1)
    post = rest.split(end, 1)[1]
    DOC.write_text(pre + begin + "\n" + table + end + post)


def add_run_options(ap: argparse.ArgumentParser, workdir: Path) -> None:
    """The options of a cross-check built on :func:`run_case` (this one's and ``transports``)."""
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument("--duration", type=float, default=15.0, help="simulated seconds")
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    ap.add_argument("--jobs", type=int, default=2, help="cases run in parallel")
    ap.add_argument(
        "--ns3-args", action="append", default=[], help="an extra ns3_dumbbell.cc option (repeat)"
    )
    ap.add_argument(
        "--aqmlab-tcp",
        action="append",
        default=[],
        help="a [tcp] override, key=TOML value (repeat)",
    )
    ap.add_argument("--tag", default="", help="names a diagnostic run set (with the overrides)")
    ap.add_argument("--fresh", action="store_true", help="ignore cached runs")
    ap.add_argument("--write-doc", action="store_true", help="put the table into the doc")
    ap.add_argument("--ns3-venv", type=Path, default=Path("/work/ns3venv"))
    ap.add_argument("--workdir", type=Path, default=workdir)


def build_exe(a: argparse.Namespace) -> Path:
    """ns3_dumbbell.cc compiled for these options. One build directory per version of the
    program: a rebuild never replaces a binary that another invocation is running."""
    digest = hashlib.sha1(base.SRC.read_bytes()).hexdigest()[:12]
    (ROOT / "target" / "ns3-build" / digest).mkdir(parents=True, exist_ok=True)
    return base.build(a.ns3_venv, ROOT / "target" / "ns3-build" / digest)


def run_cases(cases: dict[str, dict], a: argparse.Namespace) -> dict[str, list[dict]]:
    """The cases named by ``--cases`` (default: all), every seed, ``--jobs`` at a time."""
    if a.cases:
        unknown = [c for c in a.cases if c not in cases]
        if unknown:
            raise SystemExit(f"--cases: unknown {', '.join(unknown)}; known: {', '.join(cases)}")
        cases = {c: cases[c] for c in a.cases}
    jobs = [(name, seed) for name in cases for seed in a.seeds]
    results: dict[str, list[dict]] = {name: [] for name in cases}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_case, a.exe, cases[n], s, a): n for n, s in jobs}
        for fu in cf.as_completed(futs):
            results[futs[fu]].append(fu.result())
    return results


def main(
    argv: list[str] | None = None,
    *,
    cases_fn=None,
    markers: tuple[str, str] = (BEGIN, END),
    label: str = "tcp",
) -> None:
    """The cross-check; another subcommand (bbr.py) passes its own cases, doc markers and
    label (its work directory is target/crosscheck-ns3-LABEL)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a subset: 10 and 100 flows, 3 AQMs")
    ap.add_argument("--cases", nargs="*", help="case names (default: the whole matrix)")
    add_run_options(ap, ROOT / "target" / f"crosscheck-ns3-{label}")
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    a.exe = build_exe(a)
    t0 = time.monotonic()
    results = run_cases((cases_fn or matrix)(a.quick, a.duration, a.warmup), a)
    git = base.git_state()
    meta = (
        f"Generated by `scripts/crosscheck_ns3.py {label}` on {time.strftime('%Y-%m-%d')} "
        f"(aqmlab {git}, ns-3 {base.ns3_version(a.ns3_venv)}; {a.duration:g} s simulated, "
        f"metrics after {a.warmup:g} s; seeds {', '.join(map(str, a.seeds))}"
        + (
            f"; tag {a.tag}: ns-3 {' '.join(a.ns3_args)} aqmlab {' '.join(a.aqmlab_tcp)}"
            if a.tag
            else ""
        )
        + f"; {time.monotonic() - t0:.0f} s wall)."
    )
    table = report(results, meta) + "\n" + details(results)
    print(table)
    (a.workdir / f"report{('.' + a.tag) if a.tag else ''}.md").write_text(table)
    if a.write_doc:
        write_doc(table, markers)
