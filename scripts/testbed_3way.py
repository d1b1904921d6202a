"""The kernel as a third witness on the ns-3 cross-check's networks: runs a cached cross-check
case file through `aqmlab testbed` (real Linux TCP in namespaces, aqmlab-fwd as the bottleneck)
and tabulates it beside the simulator's and ns-3's cached runs of the same file.

Usage (root; one run at a time, real time):

    sudo .venv/bin/python scripts/testbed_3way.py run --cases bbr-fifo-n10 bbr-fq_codel-n10 \\
        --seeds 1 2 3 --cc bbr --setting rack --setting notlp
    .venv/bin/python scripts/testbed_3way.py table --cases bbr-fifo-n10 --seeds 1 2 3

Case files and the other two sides come from a cross-check cache (`--cache`, default
/work/main/target/crosscheck-ns3-bbr, or -tcp): `cases/<case>.15s.seed<N>[.<tag>].toml` and
`runs/<case>.15s.seed<N>[.<tag>].json` (its "ours" and "ns3" parts). A seed with no cached
case file runs the seed-1 file with `--seed N`.

Kernel settings (`--setting`, net.ipv4 sysctls in the sender and receiver namespaces through
`aqmlab testbed --sysctl`):

- `rack`: the kernel's defaults (RACK-TLP loss detection, tcp_recovery 1, early_retrans 3);
- `notlp`: tcp_early_retrans 0 (no Tail Loss Probe; ns-3.44 has none) and tcp_recovery 0, which
  on Linux 6.17 and later changes nothing: RACK is the kernel's only SACK loss detection since
  commit 1c120191dcec ("tcp: remove obsolete and unused RFC3517/RFC6675 loss recovery code",
  June 2025; ip-sysctl.rst: "setting this bit to 0 has no effect"), so this kernel (6.18)
  cannot run BBR or CUBIC over SACK without RACK, as ns-3.44 and the cross-check rows do;
- `ns3like`: `notlp` plus tcp_frto 0 (no F-RTO, RFC 5682; ns-3.44 has none) and
  tcp_comp_sack_nr 0 (the receiver sends every SACK at once; Linux compresses them by default);
- `quickack`: the defaults with `quickack 1` on the routes: the receivers ACK every segment (no
  delayed ACKs), as ns-3's `--delAck=1` and aqmlab's `delack = false`.

Each run records the 1-minute load average before and after it (`load.json` beside the run) and
the kernel's TCP counters (summary.json `testbed.kernel_counters`, from the warm-up and the end).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTLP = {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0"}
#: setting -> (sysctls, route options) for `aqmlab testbed --sysctl/--route-option`.
SETTINGS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "rack": ({}, {}),
    "notlp": (NOTLP, {}),
    "ns3like": (NOTLP | {"net.ipv4.tcp_frto": "0", "net.ipv4.tcp_comp_sack_nr": "0"}, {}),
    "quickack": ({}, {"quickack": "1"}),
}


#: A kernel run whose flows were receive-window limited longer than this in all (seconds summed
#: over flows) had a starved sink: listed with --per-seed, left out of the means.
STARVED_S = 10.0


def case_file(cache: Path, case: str, seed: int, tag: str | None) -> tuple[Path, bool]:
    """The cached case file of (case, seed, tag); (file, True) when it is seed 1's and the seed
    must be overridden."""
    suffix = f".{tag}" if tag else ""
    f = cache / "cases" / f"{case}.15s.seed{seed}{suffix}.toml"
    if f.exists():
        return f, False
    return cache / "cases" / f"{case}.15s.seed1{suffix}.toml", True


def out_dir(workdir: Path, case: str, seed: int, setting: str, cc: str, rep: int) -> Path:
    """Where one kernel run goes."""
    r = f".r{rep}" if rep > 1 else ""
    return workdir / f"{case}.seed{seed}.{cc}.{setting}{r}"


def run(args: argparse.Namespace) -> None:
    """Runs every (case, seed, setting) on the testbed, one at a time; skips those done."""
    for case in args.cases:
        for seed in args.seeds:
            for setting in args.setting:
                out = out_dir(args.workdir, case, seed, setting, args.cc, args.rep)
                if (out / "summary.json").exists():
                    print(f"done already: {out}")
                    continue
                f, override = case_file(args.cache, case, seed, args.tag)
                cmd = [sys.executable, "-m", "aqmlab", "testbed", str(f), "--cc", args.cc]
                cmd += ["--out", str(out), "--no-plot"]
                if override:
                    cmd += ["--seed", str(seed)]
                sysctls, route = SETTINGS[setting]
                for k, v in sysctls.items():
                    cmd += ["--sysctl", f"{k}={v}"]
                for k, v in route.items():
                    cmd += ["--route-option", f"{k}={v}"]
                waited = 0
                while args.max_load and os.getloadavg()[0] > args.max_load and waited < 300:
                    time.sleep(10)  # a real-time run: wait (at most 5 min) for a calmer machine
                    waited += 10
                load0 = os.getloadavg()[0]
                t0 = time.time()
                print(f"{time.strftime('%H:%M:%S')} load {load0:.2f}: {' '.join(cmd)}", flush=True)
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                load1 = os.getloadavg()[0]
                (out / "load.json").write_text(
                    json.dumps({"before": load0, "after": load1, "start": t0, "cmd": cmd})
                )
                print(f"  load after {load1:.2f}, {time.time() - t0:.0f} s", flush=True)


def kernel_row(out: Path) -> dict:
    """One kernel run's figures: goodput (sum over flows), mean queue, loss, utilisation,
    retransmitted segments and the kernel's counters over the whole run and the window."""
    s = json.loads((out / "summary.json").read_text())
    link = next(x for x in s["links"] if x["name"] == "bottleneck")
    kc = s["testbed"].get("kernel_counters", {})
    end, warm = kc.get("end", {}).get("snd", {}), kc.get("warmup", {}).get("snd", {})
    rcv_end = kc.get("end", {}).get("rcv", {})

    def c(name: str, d: dict) -> int | None:
        return d.get(name)

    def win(name: str) -> int | None:
        return end[name] - warm[name] if name in end and name in warm else None

    load = json.loads((out / "load.json").read_text()) if (out / "load.json").exists() else {}
    cons = s["testbed"]["conservation"]
    return {
        # Time the receivers' windows limited the senders, summed over flows: a starved sink
        # (the traffic tool short of CPU) shows here; such runs are left out of the means.
        "rwnd_lim_s": sum(f.get("rwnd_limited_s") or 0 for f in s["flows"]),
        "aqm_drops": link.get("dropped_aqm"),
        "overflow": link.get("dropped_overflow"),
        # Frames the reverse direction carried per frame of the forward one (whole run).
        "acks_per_data": cons["reverse"]["received"] / max(1, cons["forward"]["received"]),
        "goodput": sum(f["goodput_bps"] for f in s["flows"]) / 1e6,
        "queue": link["queue_mean_pkts"],
        "loss": link["loss_ratio"],
        "util": link["utilisation"],
        "timeouts": c("TcpExtTCPTimeouts", end),
        "timeouts_win": win("TcpExtTCPTimeouts"),
        "retrans": c("TcpRetransSegs", end),
        "retrans_win": win("TcpRetransSegs"),
        "recoveries": c("TcpExtTCPSackRecovery", end),
        "lost_retrans": c("TcpExtTCPLostRetransmit", end),
        "tlp": c("TcpExtTCPLossProbes", end),
        "spurious_rto": c("TcpExtTCPSpuriousRTOs", end),
        "undo": sum(
            c(k, end) or 0
            for k in (
                "TcpExtTCPFullUndo",
                "TcpExtTCPPartialUndo",
                "TcpExtTCPDSACKUndo",
                "TcpExtTCPLossUndo",
            )
        ),
        "delayed_acks_rcv": c("TcpExtDelayedACKs", rcv_end),
        "sysctls": s["testbed"].get("sysctls", {}).get("snd", {}),
        "load": max(load.get("before", 0), load.get("after", 0)) if load else None,
    }


def cached_rows(cache: Path, case: str, seed: int, tag: str | None) -> tuple[dict, dict]:
    """The simulator's and ns-3's figures of (case, seed) from the cross-check cache."""
    suffix = f".{tag}" if tag else ""
    d = json.loads((cache / "runs" / f"{case}.15s.seed{seed}{suffix}.json").read_text())
    o, n = d["ours"], d["ns3"]
    ob = o["links"][0]
    run = cache / "ours" / f"{case}.15s.seed{seed}{suffix}" / "summary.json"
    link = {}
    if run.exists():
        link = next(x for x in json.loads(run.read_text())["links"] if x["name"] == "bottleneck")
    sim = {
        "aqm_drops": link.get("dropped_aqm"),
        "overflow": link.get("dropped_overflow"),
        "goodput": sum(o["goodput_bps"]) / 1e6,
        "queue": ob["queue_mean_pkts"],
        "loss": ob["loss_ratio"],
        "util": ob["utilisation"],
        "timeouts": o["timeouts"],
        "retrans": o["retransmits"],
        "recoveries": o.get("fast_recoveries"),
    }
    ns3 = {
        "aqm_drops": n.get("dropped_early"),
        "overflow": n.get("dropped_overflow"),
        "goodput": n["goodput_total_bps"] / 1e6,
        "queue": n["queue_mean_pkts"],
        "loss": n["loss_ratio"],
        "util": n["utilisation"],
        "timeouts": n["timeouts"],
        "timeouts_win": n.get("timeouts_window"),
        "retrans": n["retransmits"],
        "retrans_win": n.get("retransmits_window"),
        "recoveries": n.get("fast_recoveries"),
    }
    return sim, ns3


def _fmt(v, kind: str) -> str:
    if v is None:
        return "-"
    if kind == "loss":
        return f"{100 * v:.2f}%"
    if kind in ("goodput", "queue"):
        return f"{v:.1f}"
    if kind == "util":
        return f"{v:.3f}"
    if kind == "load":
        return f"{v:.1f}"
    if kind == "acks_per_data":
        return f"{v:.3f}"
    return f"{v:.0f}" if isinstance(v, (int, float)) else str(v)


def _mean(rows: list[dict], k: str):
    vals = [r[k] for r in rows if r.get(k) is not None]
    return sum(vals) / len(vals) if vals else None


def table(args: argparse.Namespace) -> None:
    """Prints a markdown table per case: sim / ns-3 / kernel settings, per seed and mean."""
    cols = [
        "goodput",
        "queue",
        "loss",
        "util",
        "timeouts",
        "timeouts_win",
        "retrans",
        "retrans_win",
    ]
    cols += ["recoveries", "lost_retrans", "tlp", "undo", "aqm_drops", "overflow"]
    cols += ["acks_per_data", "rwnd_lim_s", "load"]
    print("| case | seeds | side | " + " | ".join(cols) + " |")
    print("|" + " --- |" * (len(cols) + 3))
    for case in args.cases:
        per: dict[str, list[dict]] = {}
        for seed in args.seeds:
            try:
                sim, ns3 = cached_rows(args.cache, case, seed, args.tag)
                per.setdefault("sim", []).append(sim)
                per.setdefault("ns-3", []).append(ns3)
            except FileNotFoundError:
                pass
            for setting in args.setting:
                for rep in range(1, args.reps + 1):
                    out = out_dir(args.workdir, case, seed, setting, args.cc, rep)
                    if (out / "summary.json").exists():
                        row = kernel_row(out)
                        if row["rwnd_lim_s"] <= STARVED_S:
                            per.setdefault(f"kernel {args.cc} {setting}", []).append(row)
                        if args.per_seed:
                            cells = " | ".join(_fmt(row.get(k), k) for k in cols)
                            print(f"| {case} | {seed} (r{rep}) | kernel {setting} | {cells} |")
        for side, rows in per.items():
            cells = " | ".join(_fmt(_mean(rows, k), k) for k in cols)
            print(f"| {case} | {len(rows)} runs | {side} | {cells} |")


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["run", "table"])
    ap.add_argument("--cases", nargs="+", required=True)
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument("--setting", action="append", choices=sorted(SETTINGS))
    ap.add_argument("--cc", default="bbr", help="kernel congestion control (aqmlab testbed --cc)")
    ap.add_argument("--cache", type=Path, default=Path("/work/main/target/crosscheck-ns3-bbr"))
    ap.add_argument("--tag", help="the cached cross-check runs' tag (e.g. inflight)")
    ap.add_argument("--workdir", type=Path, default=ROOT / "target" / "testbed-3way")
    ap.add_argument("--rep", type=int, default=1, help="run number (a repeat of a loaded run)")
    ap.add_argument("--reps", type=int, default=1, help="table: runs per seed to read")
    ap.add_argument("--per-seed", action="store_true", help="table: a row per kernel run too")
    ap.add_argument("--max-load", type=float, help="run: wait until the 1-min load is below it")
    args = ap.parse_args()
    args.setting = args.setting or ["rack"]
    if args.what == "run":
        if os.geteuid() != 0:
            sys.exit("testbed_3way.py run: needs root (aqmlab testbed)")
        run(args)
    else:
        table(args)


if __name__ == "__main__":
    main()
