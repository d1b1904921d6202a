#!/usr/bin/env python3
"""Cross-checks aqmlab's SACK / PRR / CUBIC senders against ns-3.44 on the dumbbells of
``scenarios/crosscheck`` (docs/crosscheck-ns3.md, section "SACK, PRR and CUBIC").

Both sides run ns-3's default TCP: TcpCubic with PRR recovery, SACK, timestamps (1512-byte
packets, 52-byte ACKs), delayed ACKs (every second segment, 200 ms timer: ns-3's DelAckTimeout),
minimum RTO 1 s; aqmlab as ``[tcp] variant = "cubic"``, ``timestamps = true``, ``delack = true``,
``delack_timeout = "200ms"``, ``min_rto = "1s"``. The network (access delays, start times, buffer,
AQM parameters) is aqmlab's own description of each case, as in ``scripts/crosscheck_ns3.py``.
RED runs twice on each side: ``wait`` off and on (ns-3's ``Wait``).

Usage (repository root, project venv; ns-3 in /work/ns3venv):

    .venv/bin/python scripts/crosscheck_ns3_tcp.py --cases red-het-n10 --wait 0 1

Prints one line per run and writes JSON results under ``target/crosscheck-ns3-tcp``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "python"))

import crosscheck_ns3 as base  # noqa: E402
import crosscheck_ns3_codel as codel  # noqa: E402

SCEN_DIR = ROOT / "scenarios" / "crosscheck"
PKT = 1460 + 40 + 12
TCP = {
    "variant": "cubic",
    "timestamps": True,
    "delack": True,
    "delack_timeout": "200ms",
    "min_rto": "1s",
}
NS3_TCP = [
    "--recovery=prr",
    "--sack=1",
    "--timestamps=1",
    "--delAck=2",
    "--minRto=1000",
]


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return json.dumps(v)  # strings and numbers: JSON's syntax is TOML's here


def dumps(d: dict) -> str:
    """TOML for a scenario: scalars, lists, tables and arrays of tables one level deep."""
    top = [f"{k} = {_value(v)}" for k, v in d.items() if not isinstance(v, dict | list)]
    top += [f"{k} = {_value(v)}" for k, v in d.items() if isinstance(v, list) and not v]
    out = ["\n".join(top)]
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"[{k}]\n" + "\n".join(f"{kk} = {_value(x)}" for kk, x in v.items()))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for t in v:
                out.append(f"[[{k}]]\n" + "\n".join(f"{kk} = {_value(x)}" for kk, x in t.items()))
    return "\n\n".join(out) + "\n"


def write_case(case: str, wait: bool, workdir: Path, cc: str = "cubic") -> Path:
    """The case's scenario with ns-3's default TCP (and RED's ``wait``), as a TOML file;
    ``cc = "newreno"`` swaps CUBIC for NewReno congestion control (aqmlab's ``sack`` variant)."""
    d = tomllib.loads((SCEN_DIR / f"{case}.toml").read_text())
    d["tcp"] = {**d["tcp"], **TCP, "variant": "cubic" if cc == "cubic" else "sack"}
    if d["aqm"]["name"] == "red":
        d["aqm"]["wait"] = wait
    p = workdir / "cases" / f"{case}.{cc}.wait{int(wait)}.toml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(dumps(d))
    return p


def ns3(exe: Path, toml: Path, wait: bool, workdir: Path, cc: str = "cubic") -> dict:
    """Runs the ns-3 side of one case."""
    from aqmlab import scenario

    cfg = scenario.build_config(scenario.load(toml))
    links = cfg["links"]
    b = links[0]
    delays = [links[f["path"][0]]["delay_ns"] / 1e6 for f in cfg["flows"]]
    starts = [f["start_ns"] / 1e9 for f in cfg["flows"]]
    d = workdir / "ns3" / toml.stem
    d.mkdir(parents=True, exist_ok=True)
    (d / "delays.txt").write_text("\n".join(f"{x:.6f}" for x in delays) + "\n")
    (d / "starts.txt").write_text("\n".join(f"{x:.9f}" for x in starts) + "\n")
    aqm = b["aqm"]["name"]
    flags = []
    if aqm == "red":
        p = b["aqm"]["params"]
        flags = [
            f"--minTh={p['min_th']}",
            f"--maxTh={p['max_th']}",
            f"--maxP={p['max_p']}",
            f"--wQ={p['w_q']}",
            f"--redWait={int(wait)}",
            "--redGentle=0",
        ]
    cmd = [
        str(exe),
        f"--flows={len(cfg['flows'])}",
        f"--aqm={aqm}",
        f"--buffer={b['buffer_pkts']}",
        f"--delays={d / 'delays.txt'}",
        f"--starts={d / 'starts.txt'}",
        f"--duration={cfg['duration_ns'] / 1e9}",
        f"--warmup={cfg['warmup_ns'] / 1e9}",
        f"--seed={cfg['seed']}",
        f"--meanPktSize={PKT}",
        *flags,
        *NS3_TCP,
        f"--tcp={cc}",
    ]
    res, _wall, cpu = base.timed(cmd)
    if res.returncode != 0:
        raise RuntimeError(f"ns-3 {toml.stem} failed: {res.stderr.strip()[-2000:]}")
    r = json.loads(res.stdout)
    r["cpu_s"], r["command"] = cpu, " ".join(cmd[1:])
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["red-het-n10"])
    ap.add_argument("--wait", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--cc", nargs="+", default=["cubic"], choices=["cubic", "newreno"])
    ap.add_argument("--ns3-venv", type=Path, default=Path("/work/ns3venv"))
    ap.add_argument("--workdir", type=Path, default=ROOT / "target" / "crosscheck-ns3-tcp")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    exe = codel.build(a.ns3_venv, a.workdir)
    runs = [(case, cc, w) for case in a.cases for cc in a.cc for w in a.wait]
    for case, cc, wait in runs:
        if "red" not in case and wait:
            continue
        toml = write_case(case, bool(wait), a.workdir, cc)
        ours = codel.run_ours(toml, a.workdir, 1)
        theirs = ns3(exe, toml, bool(wait), a.workdir, cc)
        q3 = theirs["qdisc_mean_pkts"] + theirs["devq_mean_pkts"]
        g3 = theirs["goodput_total_bps"]
        res = {"case": case, "cc": cc, "wait": wait, "ours": ours, "ns3": theirs}
        (a.workdir / f"{toml.stem}.json").write_text(json.dumps(res, indent=1))
        print(
            f"{case} {cc} wait={wait}: goodput ours {ours['goodput_total_bps'] / 1e6:.2f} "
            f"ns-3 {g3 / 1e6:.2f} Mb/s ({ours['goodput_total_bps'] / g3 - 1:+.1%}); "
            f"mean queue ours {ours['queue_mean_pkts']:.1f} ns-3 {q3:.1f} "
            f"({ours['queue_mean_pkts'] / q3 - 1:+.1%}); loss ours {ours['loss_ratio']:.4f} "
            f"ns-3 {theirs['loss_ratio']:.4f}; timeouts ours {ours['timeouts']}; "
            f"ns-3 cpu {theirs['cpu_s']:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
