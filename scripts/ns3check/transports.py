#!/usr/bin/env python3
"""Cross-checks aqmlab's DCTCP and LEDBAT senders against ns-3.44's TcpDctcp and TcpLedbat
(docs/crosscheck-ns3.md, section "DCTCP and LEDBAT").

The cases run on the dumbbell of ``tcp`` (100 Mb/s, 2 ms one way; access links 1 Gb/s with
one-way delays 1, 3, ..., 19 ms; base RTT 8-80 ms) through ``tcp``'s machinery (``run_case``:
the same graph, flows and start times on both sides, cached runs) with ns-3's default TCP
settings (SACK, PRR, timestamps, DelAckCount 2 with a 200 ms timer, MinRto 1 s) on both sides:

* ``dctcp-red-n10`` / ``-n100``: TcpDctcp against aqmlab ``cc = "dctcp"``, ``ecn = true``,
  through RED as ns-3's ``examples/tcp/dctcp-example.cc`` sets it for its 1 Gb/s links:
  ``QW`` 1 (the instantaneous queue), ``MinTh`` 20, ``MaxTh`` 60 packets, ``UseEcn`` on,
  ``UseHardDrop`` off, ns-3's defaults ``LInterm`` 50 (max_p 0.02), ``Gentle`` and ``Wait`` on;
  buffer 300 packets. Not a pure step: the marking probability ramps from 0 at 20 packets to
  0.02 at 60 and (gentle) to 1 at 120. One difference remains in the models: above 2 x MaxTh
  ns-3 marks (UseHardDrop off) where aqmlab's RED drops (its forced drops stay drops); the
  loss column shows whether the queue got there.
* ``ledbat-fifo-1+1`` / ``-5+5`` / ``-50+50``: LEDBAT flows (ns-3 TcpLedbat, aqmlab ``cc = "ledbat"``)
  beside as many NewReno ones (ns-3 TcpNewReno, aqmlab ``variant = "sack"``) through a FIFO of
  1000 packets (120 ms at 100 Mb/s, above LEDBAT's 100 ms target); flows alternate
  LEDBAT / NewReno over the hosts. The table has the LEDBAT flows' share of the goodput.
* ``ledbat-fifo-1+0``: one LEDBAT flow alone through the same FIFO, where ns-3.44's window cap
  shows by itself: after its first recovery ns-3's window never changes again.

``--ledbat-cc ledbat-ns3`` runs aqmlab's LEDBAT flows with ns-3.44's cap (``cc = "ledbat-ns3"``,
crates/sim/src/tcp/cc/ledbat.rs) instead of RFC 6817's, cached under the tag ``ledbat-ns3``.

``--handshake`` opens aqmlab's LEDBAT-case flows with a handshake too (``[tcp] handshake =
true``), each started one base RTT earlier, at ns-3's application start: both SYNs then meet the
same queue, where by default aqmlab's first data leaves one base RTT after ns-3's SYN whatever
the queue (``tcp.graph_text``). ns-3's side is the same network and options as without it; the
tag gets ``-hs``.

ns-3's socket sends one segment on each partial ACK in recovery whatever the congestion control
(``DoRetransmit``, tcp-socket-base.cc l. 2099-2103); ``ledbat-ns3`` has that rule, and
``--aqmlab-tcp 'cc="newreno-ns3"'`` gives it to the NewReno flows too (Reno's window with it;
the LEDBAT flows keep their own ``cc``, and ns-3's graph and options are unchanged, so its cached
run is used: docs/crosscheck-ns3.md s. 3.2).

ns-3's side of a run is taken from any cached run of the same ns-3 command on the same network
(``bbr.reuse_ns3``), so a tagged run whose overrides are aqmlab's alone (``--ledbat-cc``,
``--handshake``, ``--aqmlab-tcp``) runs aqmlab only.

Usage (repository root, project venv; ns-3 in /work/ns3venv):

    .venv/bin/python scripts/crosscheck_ns3.py transports --jobs 2
    .venv/bin/python scripts/crosscheck_ns3.py transports --cases dctcp-red-n10
    .venv/bin/python scripts/crosscheck_ns3.py transports --duration 60 --warmup 20 \
        --cases ledbat-fifo-1+0 ledbat-fifo-1+1 ledbat-fifo-5+5 --ledbat-cc ledbat-ns3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from ns3check import bbr, tcp
from ns3check import common as base
from ns3check.common import ROOT

DOC = ROOT / "docs" / "crosscheck-ns3.md"
BEGIN, END = "<!-- transports:begin -->", "<!-- transports:end -->"

_COMMON = {**tcp._COMMON_TCP, "variant": "sack", **tcp._AQMLAB_DEFAULT}
# The transports of these cases, in tcp.TCPS (run_case finds a case's by its name's prefix).
TRANSPORTS = {
    "dctcp": {
        "aqmlab": {**_COMMON, "cc": "dctcp", "ecn": True},
        "ns3": ["--tcp=dctcp", "--redEcn=1", *tcp._NS3_DEFAULT],
    },
    "ledbat": {
        # The NewReno half; the LEDBAT flow groups set cc = "ledbat" themselves.
        "aqmlab": dict(_COMMON),
        "ns3": ["--tcp=newreno", *tcp._NS3_DEFAULT],
    },
}
#: RED as dctcp-example.cc (ns-3's defaults where the example sets nothing).
RED_DCTCP = {
    "name": "red",
    "min_th": 20,
    "max_th": 60,
    "max_p": 0.02,
    "w_q": 1.0,
    "gentle": True,
    "wait": True,
    "mode": "packet",
    "ecn": True,
}


def dctcp(n: int, duration: float, warmup: float) -> dict:
    d = {
        "name": f"dctcp-red-n{n}",
        "duration": f"{duration:g}s",
        "warmup": f"{warmup:g}s",
        "seed": 1,
        "aqm": RED_DCTCP,
        "tcp": dict(TRANSPORTS["dctcp"]["aqmlab"]),
        "topology": dict(tcp.DUMBBELL),
        "flows": [{"count": n, "start": "0.2s", "start_spread": "1s"}],
    }
    return d


def ledbat(k: int, duration: float, warmup: float, cc: str = "ledbat", reno: bool = True) -> dict:
    """k LEDBAT and (``reno``) k NewReno flows, alternating over the hosts, starting 50 ms
    apart; ``cc`` the aqmlab side's LEDBAT (``ledbat``, RFC 6817's cap, or ``ledbat-ns3``,
    ns-3.44's)."""
    flows = []
    per = 2 if reno else 1
    for i in range(k):
        led = (f"{side}{per * i}" for side in "LR")
        flows.append(
            {"count": 1, "start": f"{0.2 + 0.1 * i:g}s", "src": next(led), "dst": next(led)}
            | {"tcp": {"cc": cc}}
        )
        if reno:
            r = (f"{side}{2 * i + 1}" for side in "LR")
            flows.append(
                {"count": 1, "start": f"{0.25 + 0.1 * i:g}s", "src": next(r), "dst": next(r)}
            )
    return {
        "name": f"ledbat-fifo-{k}+{k if reno else 0}",
        "duration": f"{duration:g}s",
        "warmup": f"{warmup:g}s",
        "seed": 1,
        "aqm": {"name": "droptail"},
        "tcp": dict(TRANSPORTS["ledbat"]["aqmlab"]),
        "topology": {**tcp.DUMBBELL, "buffer": 1000, "left": per * k, "right": per * k},
        "flows": flows,
    }


def with_handshake(sc: dict) -> dict:
    """``sc`` with aqmlab's flows opening with a handshake (``[tcp] handshake = true``), each
    starting one base RTT (its path's propagation delays both ways) earlier: at the time ns-3's
    application starts (``tcp.graph_text``), so the two SYNs leave together and meet the same
    queue. ns-3's network and start times are unchanged. Flows of one connection each only."""
    from aqmlab.scenario import schema as scenario

    with tempfile.TemporaryDirectory() as d:
        toml = Path(d) / "case.toml"
        toml.write_text(tcp.dumps(sc))
        cfg = scenario.build_config(scenario.load(toml))
    if len(cfg["flows"]) != len(sc["flows"]):
        raise SystemExit(f"{sc['name']}: --handshake needs one connection per flow entry")
    out = json.loads(json.dumps(sc))
    out["tcp"]["handshake"] = True
    links = cfg["links"]
    for f, c in zip(out["flows"], cfg["flows"], strict=True):
        rtt = sum(links[i]["delay_ns"] for i in c["path"] + c["rev_path"])
        f["start"] = f"{(c['start_ns'] - rtt) / 1e9:.9f}s"
    return out


def cases(duration: float, warmup: float, ledbat_cc: str = "ledbat") -> dict[str, dict]:
    out = [
        dctcp(10, duration, warmup),
        ledbat(1, duration, warmup, ledbat_cc, reno=False),
        ledbat(1, duration, warmup, ledbat_cc),
        ledbat(5, duration, warmup, ledbat_cc),
        dctcp(100, duration, warmup),
        ledbat(50, duration, warmup, ledbat_cc),
    ]
    return {c["name"]: c for c in out}


def ledbat_share(res: dict, sc: dict) -> tuple[float, float] | None:
    """The LEDBAT flows' share of the goodput, aqmlab / ns-3 (flows in the scenario's order)."""
    led = [
        i
        for i, f in enumerate(sc["flows"])
        if str((f.get("tcp") or {}).get("cc", "")).startswith("ledbat")
    ]
    if not led:
        return None
    o, t = res["ours"]["goodput_bps"], res["ns3"]["goodput_bps"]
    return (sum(o[i] for i in led) / sum(o), sum(t[i] for i in led) / sum(t))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="*", help="case names (default: all)")
    ap.add_argument(
        "--ledbat-cc",
        choices=["ledbat", "ledbat-ns3"],
        default="ledbat",
        help="aqmlab's LEDBAT: RFC 6817's window cap (default) or ns-3.44's (a diagnostic; "
        "its runs are cached under the tag ledbat-ns3 unless --tag names another)",
    )
    ap.add_argument(
        "--handshake",
        action="store_true",
        help="aqmlab's LEDBAT-case flows open with a handshake, started at ns-3's application "
        "start (a diagnostic; the tag gets -hs)",
    )
    tcp.add_run_options(ap, ROOT / "target" / "crosscheck-ns3-transports")
    a = ap.parse_args(argv)
    if a.ledbat_cc != "ledbat" and not a.tag:
        a.tag = a.ledbat_cc
    if a.handshake and not a.tag.endswith("hs"):
        a.tag = f"{a.tag}-hs" if a.tag else "hs"
    bbr.reuse_ns3(a.fresh)
    a.workdir.mkdir(parents=True, exist_ok=True)
    tcp.TCPS.update(TRANSPORTS)
    tcp.NS3_CC.update({"ledbat-ns3": "ledbat"})  # ns-3's side is TcpLedbat either way
    a.exe = tcp.build_exe(a)
    todo = cases(a.duration, a.warmup, a.ledbat_cc)
    if a.handshake:
        todo = {k: with_handshake(v) if k.startswith("ledbat") else v for k, v in todo.items()}
    t0 = time.monotonic()
    results = tcp.run_cases(todo, a)
    meta = (
        f"Generated by `scripts/crosscheck_ns3.py transports` on {time.strftime('%Y-%m-%d')} "
        f"(aqmlab {base.git_state()}, ns-3 {base.ns3_version(a.ns3_venv)}; {a.duration:g} s "
        f"simulated, metrics after {a.warmup:g} s; seeds {', '.join(map(str, a.seeds))}; "
        + (f"aqmlab's LEDBAT cc = {a.ledbat_cc!r}; " if a.ledbat_cc != "ledbat" else "")
        + ("aqmlab's flows open with a handshake; " if a.handshake else "")
        + f"{time.monotonic() - t0:.0f} s wall)."
    )
    shares = []
    for name, rows in results.items():
        sh = [x for x in (ledbat_share(r, todo[name]) for r in rows) if x]
        if sh:
            o = statistics.fmean(x[0] for x in sh)
            t = statistics.fmean(x[1] for x in sh)
            shares.append(f"- `{name}`: LEDBAT flows' share of the goodput {o:.1%} / {t:.1%}.")
    text = tcp.report(results, meta) + ("\naqmlab / ns-3:\n\n" + "\n".join(shares) + "\n")
    print(text)
    (a.workdir / f"report{('.' + a.tag) if a.tag else ''}.md").write_text(text)
    if a.write_doc:
        doc = DOC.read_text()
        if BEGIN not in doc:
            raise SystemExit(f"{DOC}: no {BEGIN} marker")
        pre, rest = doc.split(BEGIN, 1)
        DOC.write_text(pre + BEGIN + "\n" + text + END + rest.split(END, 1)[1])
