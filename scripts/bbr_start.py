"""BBR v1's first seconds, the kernel's against the simulator's (issue 22; docs/testbed.md, BBR
v1 section, "The first seconds").

    sudo .venv/bin/python scripts/bbr_start.py testbed --runs 6 --aqm dt [--out runs/bbr_start]
    .venv/bin/python scripts/bbr_start.py sim --seeds 1-8 [--out runs/bbr_start]
    .venv/bin/python scripts/bbr_start.py compare [--out runs/bbr_start] [--until 3]

The networks of ``benches/bbr_flows.py`` (``{dt,codel}-het-n50.toml``, 10 flows, 100 Mb/s
bottleneck, 300-packet buffer, base RTTs 8-80 ms), shortened to ``--duration`` (6 s; the first
seconds do not depend on it) and with the bottleneck's event log on (``[output] events``:
every enqueue, drop and dequeue with its flow, on both sides).

``testbed``: one kernel ``bbr`` run at a time in ``{aqm}-tb-NN``; while it runs, every
``--step`` s (0.05) a sampler inside the senders' namespace runs ``ss -tinH '( dport = :5001
)'`` and stamps it with CLOCK_MONOTONIC, the clock of the traffic source's time origin
(``aqmlab-traffic``: t0 = the forwarder's ``ready`` time + ``testbed.LEAD_S``), so the samples
are in the scenario's time (``ss.jsonl``). ``sim``: the simulator's ``cc = "bbr"`` (``recovery =
"rack"``) per seed in ``{aqm}-sim-sNN`` and ``crates/sim/examples/bbr_probe`` on its
config.json every ``--step`` s (``probe.txt``). ``compare``: per flow and side, its start (the
first sample that shows it), when it leaves STARTUP (the first sample with a pacing gain below
2.8) and its bandwidth estimate then, its largest bandwidth estimate until ``--until`` s, the
largest packets in flight (the kernel's ``unacked - sacked - lost + retrans_out``), whether the long-term estimate is in use (the kernel: a
``bw`` unchanged between two samples at pacing gain 1; the simulator: its ``lt`` flag), and from
the event log the fraction of its arrivals at the bottleneck dropped until ``--until``; and per
AQM the bottleneck's drop fraction and mean queue in 0.5 s bins, the split of its departures by
flow (Jain's index, largest share) in 1-3 s and 3-5.7 s, and, in runs of 10 s or more, how the
flows' packets arrive in bursts and which of them are dropped (:func:`burst_loss`, 3-9.5 s).
Options for variants: ``--kernel-label`` with ``--sysctl`` / ``--route`` (``initrwnd=2000``),
``--label`` with ``--tcp KEY=VALUE``, ``--duration``, ``--step``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

#: Pacing gains below this are not STARTUP's (2/ln 2 = 2.885, Linux's ``bbr_high_gain``).
STARTUP_GAIN = 2.8

#: Windows (s) of the bottleneck departures' split in ``compare`` (the runs are 6 s long).
SPLIT_WINDOWS = ((1.0, 3.0), (3.0, 5.7))

_UNITS = {"bps": 1e-6, "Kbps": 1e-3, "Mbps": 1.0, "Gbps": 1e3}


def _mbps(text: str) -> float:
    """``ss``'s rate (``12.3Mbps``, ``980Kbps``, ``12bps``) in Mb/s."""
    m = re.fullmatch(r"([0-9.]+)([KMG]?bps)", text)
    if not m:
        raise ValueError(f"not an ss rate: {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_ss(text: str) -> dict[str, dict]:
    """One ``ss -tinH`` output: per destination address, the BBR fields (``bw`` and the
    ``pacing_rate`` / ``delivery_rate`` in Mb/s, ``mrtt`` ms, the gains) and the counters
    (``cwnd``, ``unacked``, ``retrans`` total, ``lost``)."""
    out: dict[str, dict] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        head = lines[i].split()
        i += 1
        # State, Recv-Q, Send-Q, local and peer address (``-H``: no header line).
        if len(head) < 5 or ":" not in head[4]:
            continue
        body = lines[i] if i < len(lines) and lines[i][:1].isspace() else ""
        if body:
            i += 1
        dst = head[4].rsplit(":", 1)[0]
        d: dict = {"state": head[0]}
        m = re.search(
            r"bbr:\(bw:([^,]+),mrtt:([0-9.]+)(?:,pacing_gain:([0-9.]+))?"
            r"(?:,cwnd_gain:([0-9.]+))?\)",
            body,
        )
        if m:
            d["bw"] = _mbps(m.group(1))
            d["mrtt"] = float(m.group(2))
            d["pg"] = float(m.group(3)) if m.group(3) else None
            d["cg"] = float(m.group(4)) if m.group(4) else None
        for key in ("cwnd", "unacked", "lost", "sacked"):
            m = re.search(rf"\b{key}:(\d+)", body)
            d[key] = int(m.group(1)) if m else 0
        m = re.search(r"\bretrans:(\d+)/(\d+)", body)
        d["retrans_out"], d["retrans"] = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        # tcp_packets_in_flight: packets_out - (sacked_out + lost_out) + retrans_out.
        d["inflight"] = d["unacked"] - d["sacked"] - d["lost"] + d["retrans_out"]
        m = re.search(r"\bsnd_wnd:(\d+)", body)
        d["snd_wnd"] = int(m.group(1)) if m else None
        m = re.search(r"\brwnd_limited:(\d+)ms", body)
        d["rwnd_limited_ms"] = int(m.group(1)) if m else 0
        for key in ("pacing_rate", "delivery_rate"):
            m = re.search(rf"\b{key} (\S+)", body)
            d[key] = _mbps(m.group(1)) if m else None
        out[dst] = d
    return out


def _scenario(aqm: str, sim: bool, duration: float, tcp: dict | None = None):
    """``benches/bbr_flows.py``'s network, ``duration`` s long, the bottleneck's events logged."""
    import tomllib

    from aqmlab.scenario import schema as scenario

    d = tomllib.loads((ROOT / "scenarios" / "crosscheck" / f"{aqm}-het-n50.toml").read_text())
    d["name"] = f"{aqm}-het-n10"
    # The bench's 10 s warm-up in runs of 20 s or more (goodput over the same window as its).
    d["duration"], d["warmup"] = f"{duration}s", f"{10.0 if duration >= 20 else duration / 2}s"
    d["flows"][0]["count"] = 10
    d["tcp"].update(variant="sack")
    if sim:
        d["tcp"].update(cc="bbr", recovery="rack", **(tcp or {}))
    d.setdefault("output", {})["events"] = ["bottleneck"]
    return scenario.from_dict(d)


def _sampler_code(path: Path, t0_ns: int, step: float, until: float) -> str:
    return (
        "import json,subprocess,time\n"
        f"f=open({str(path)!r},'w')\n"
        f"t0={t0_ns}\n"
        f"nxt=time.clock_gettime_ns(time.CLOCK_MONOTONIC)\n"
        f"while True:\n"
        f"    t=time.clock_gettime_ns(time.CLOCK_MONOTONIC)\n"
        f"    if t-t0>{int(until * 1e9)}: break\n"
        f"    o=subprocess.run(['ss','-tinH','( dport = :5001 )'],capture_output=True,text=True).stdout\n"
        f"    f.write(json.dumps({{'t':(t-t0)/1e9,'ss':o}})+'\\n')\n"
        f"    nxt+={int(step * 1e9)}\n"
        f"    time.sleep(max(0,(nxt-time.clock_gettime_ns(time.CLOCK_MONOTONIC))/1e9))\n"
    )


def run_testbed(
    out: Path,
    runs: int,
    aqms: list[str],
    step: float,
    duration: float,
    label: str = "tb",
    sysctls: dict[str, str] | None = None,
    route: dict[str, str] | None = None,
    gso_max_segs: int | None = None,
) -> None:
    """``runs`` kernel runs per AQM with ``ss`` sampled in the senders' namespace, in
    ``{aqm}-{label}-NN``; ``sysctls``, ``route``: as ``benches/bbr_flows.py testbed``;
    ``gso_max_segs``: the end hosts' devices' GSO limit (1: every segment its own packet)."""
    import bbr_flows

    from aqmlab import testbed
    from aqmlab.testbed import net

    orig = testbed._wait_ready
    sampler: list[subprocess.Popen] = []
    state: dict = {}

    def wait_ready(p, what, timeout=10.0):
        line = orig(p, what, timeout)
        if what == "aqmlab-fwd":
            t0 = int(line.split()[1]) + int(testbed.LEAD_S * 1e9)
            ns = [
                x.split()[0]
                for x in subprocess.run(
                    ["ip", "netns", "list"], capture_output=True, text=True
                ).stdout.splitlines()
                if x.split() and x.split()[0].startswith("aqtb") and x.split()[0].endswith("-snd")
            ]
            if len(ns) != 1:
                raise RuntimeError(f"expected one testbed senders' namespace, found {ns}")
            code = _sampler_code(state["ss"], t0, step, duration)
            sampler.append(
                subprocess.Popen(["ip", "netns", "exec", ns[0], sys.executable, "-c", code])
            )
        return line

    testbed._wait_ready = wait_ready
    orig_route = net.Net.route_options
    if gso_max_segs:
        # The senders' and receivers' veth ends carry at most this many segments a GSO packet
        # (sk_gso_max_segs, taken by each socket from its device at connect time).
        def route_options(self, *args, **kw):
            orig_route(self, *args, **kw)
            for ns, dev in ((self.snd, self.if_snd), (self.rcv, self.if_rcv)):
                subprocess.run(
                    ["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(gso_max_segs)],
                    check=True,
                )

        net.Net.route_options = route_options
    out.mkdir(parents=True, exist_ok=True)
    try:
        for _ in range(runs):
            for aqm in aqms:
                i = bbr_flows._next_index(out, aqm, label)
                d = out / f"{aqm}-{label}-{i:02d}"
                state["ss"] = out / f".{d.name}.ss.jsonl"
                before = os.getloadavg()
                kw = {"plot": False, "cc": "bbr", "sysctls": sysctls, "route": route}
                testbed.testbed(_scenario(aqm, False, duration), out=d, **kw)
                after = os.getloadavg()
                sampler.pop().wait(timeout=30)
                state["ss"].rename(d / "ss.jsonl")
                (d / "load.json").write_text(json.dumps({"before": before, "after": after}))
                print(f"{d.name}: load {before[0]:.1f}->{after[0]:.1f}", flush=True)
                time.sleep(1)
    finally:
        testbed._wait_ready = orig
        net.Net.route_options = orig_route
        for s in sampler:
            s.kill()


def run_sim(
    out: Path,
    seeds: list[int],
    step: float,
    duration: float,
    probe: Path,
    tcp: dict,
    label: str = "sim",
) -> None:
    """The simulator per AQM and seed, then ``bbr_probe`` on its config.json; ``tcp``: extra
    ``[tcp]`` settings."""
    import aqmlab

    for seed in seeds:
        for aqm in ("dt", "codel"):
            d = out / f"{aqm}-{label}-s{seed:02d}"
            if not (d / "summary.json").exists():
                aqmlab.run(_scenario(aqm, True, duration, tcp), seed=seed, out=d)
            # The same configuration without the event log (bbr_probe writes no run directory).
            cfg = re.sub(
                r'"events_path": *"[^"]*"', '"events_path": null', (d / "config.json").read_text()
            )
            (d / "probe_config.json").write_text(cfg)
            text = subprocess.run(
                [str(probe), str(d / "probe_config.json"), str(int(step * 1e3))],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            (d / "probe.txt").write_text(text)
            print(d.name, flush=True)


def _probe_samples(path: Path, names: list[str]) -> dict[str, list[dict]]:
    """``bbr_probe``'s lines as per-flow samples with the ``ss`` field names."""
    res: dict[str, list[dict]] = {n: [] for n in names}
    for line in path.read_text().splitlines():
        w = line.split()
        t, i = float(w[0]), int(w[1])
        kv = dict(re.findall(r"\b(cwnd|bw|pg|mode|inflight|retx|lt|pacing) (\S+)", line))
        res[names[i]].append(
            {
                "t": t,
                "bw": float(kv["bw"]),
                "pg": float(kv["pg"]),
                "mode": kv["mode"],
                "inflight": int(kv["inflight"]),
                "cwnd": int(kv["cwnd"]),
                "retrans": int(kv["retx"]),
                "lt": kv["lt"] == "1",
                "pacing_rate": float(kv["pacing"]),
            }
        )
    return res


def _ss_samples(path: Path, by_dst: dict[str, str]) -> dict[str, list[dict]]:
    res: dict[str, list[dict]] = {n: [] for n in by_dst.values()}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        for dst, d in parse_ss(rec["ss"]).items():
            if dst in by_dst and "bw" in d:
                res[by_dst[dst]].append(dict(d, t=rec["t"]))
    return res


def flow_timeline(samples: list[dict], until: float, kernel: bool) -> dict:
    """One flow's first-seconds summary from its samples (see the module's docstring)."""
    s = [x for x in samples if x["t"] <= until]
    row: dict = {
        "first": samples[0]["t"] if samples else None,
        "estab": next((x["t"] for x in samples if x.get("state", "ESTAB") != "SYN-SENT"), None),
    }
    active = [x for x in s if x["pg"] is not None and x["bw"] > 0]
    exit_ = next((x for x in active if x["pg"] < STARTUP_GAIN), None)
    row["exit"] = exit_["t"] if exit_ else None
    last_startup = [
        x for x in active if x["pg"] >= STARTUP_GAIN and (not exit_ or x["t"] < exit_["t"])
    ]
    row["bw_exit"] = last_startup[-1]["bw"] if last_startup and exit_ else None
    row["bw_peak"] = max((x["bw"] for x in s), default=0.0)
    row["inflight_peak"] = max((x["inflight"] for x in s), default=0)
    if kernel:
        lt = sum(
            1
            for a, b in itertools.pairwise(s)
            if a["bw"] == b["bw"] and b["pg"] == 1.0 and b["bw"] > 0
        )
    else:
        lt = sum(1 for x in s if x.get("lt"))
    row["lt"] = lt
    row["n"] = len(s)
    return row


def jain(x) -> float:
    """Jain's fairness index of the amounts ``x``: (sum x)^2 / (n sum x^2)."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


#: Two data packets of a flow arriving at the bottleneck closer than this (ns) are one burst.
BURST_GAP_NS = 20_000

#: The window (s) of :func:`burst_loss` in ``compare`` (runs of at least 10 s: ``--duration 15``).
BURST_WINDOW = (3.0, 9.5)

#: Flow classes by arrival rate at the bottleneck (Mb/s) for :func:`burst_loss`.
RATE_CLASSES = ((0.0, 10.0), (10.0, 25.0), (25.0, 1e9))


def burst_loss(arrivals, lo: float, hi: float) -> list[dict]:
    """Per flow, from the bottleneck's arrivals (``enqueue`` and ``drop`` events of data packets:
    columns ``flow``, ``arrival_ns``, ``event``) in [lo, hi) s: its arrival rate (Mb/s of
    1,500-byte packets), the fraction of its packets that follow one of its own within
    :data:`BURST_GAP_NS` (in a burst), the mean burst length, and the drop fraction of the first
    packets of bursts, of the later ones, and of all."""
    import numpy as np

    w = arrivals[(arrivals["arrival_ns"] >= lo * 1e9) & (arrivals["arrival_ns"] < hi * 1e9)]
    out = []
    for flow, g in w.groupby(w["flow"].astype(str)):
        g = g.sort_values("arrival_ns")
        t = g["arrival_ns"].to_numpy(dtype=np.int64)
        later = np.r_[False, np.diff(t) < BURST_GAP_NS]
        drop = (g["event"] == "drop").to_numpy()
        first = ~later
        out.append(
            {
                "flow": flow,
                "rate": len(t) * 1500 * 8 / (hi - lo) / 1e6,
                "in_burst": float(later.mean()),
                "mean_burst": len(t) / int(first.sum()),
                "drop_first": float(drop[first].mean()),
                "drop_later": float(drop[later].mean()) if later.any() else float("nan"),
                "drop": float(drop.mean()),
            }
        )
    return out


def _events(d: Path, lead: float):
    import pandas as pd

    e = pd.read_parquet(d / "events" / "bottleneck.parquet")
    e["t"] = e["t_ns"] / 1e9 - lead
    return e


def run_compare(out: Path, until: float, label: str = "sim", kernel_label: str = "tb") -> None:
    """Prints the per-flow and per-bin tables for every AQM, both sides."""
    import numpy as np

    for aqm in ("dt", "codel"):
        for kind in (kernel_label, label):
            runs = sorted(out.glob(f"{aqm}-{kind}-*[0-9]"))
            runs = [d for d in runs if (d / "summary.json").exists()]
            if not runs:
                continue
            rows_by_rtt: dict[int, list[dict]] = {}
            bins: list[list[tuple[float, float]]] = []
            splits: list[list[tuple[float, float]]] = [[] for _ in SPLIT_WINDOWS]
            bursts: list[dict] = []
            for d in runs:
                summ = json.loads((d / "summary.json").read_text())
                flows = summ["flows"]
                names = [f["name"] for f in flows]
                rtt = {f["name"]: round(f["base_rtt_s"] * 1e3) for f in flows}
                if kind == kernel_label:
                    smp = _ss_samples(d / "ss.jsonl", {f["dst"]: f["name"] for f in flows})
                    lead = 0.3
                else:
                    smp = _probe_samples(d / "probe.txt", names)
                    lead = 0.0
                e = _events(d, lead)
                e0 = e[e["t"] <= until]
                arr = e0[e0["event"].isin(["enqueue", "drop"])]
                starts = {f["name"]: f["start_s"] for f in flows}
                for n in names:
                    r = flow_timeline(smp[n], until, kind == kernel_label)
                    a = arr[arr["flow"] == n]
                    r["loss"] = float((a["event"] == "drop").mean()) if len(a) else float("nan")
                    r["arrivals"] = len(a)
                    r["start_s"] = starts[n]
                    r["run"] = d.name
                    rows_by_rtt.setdefault(rtt[n], []).append(r)
                # bottleneck bins
                b = []
                for lo in np.arange(0, until, 0.5):
                    w = e[(e["t"] >= lo) & (e["t"] < lo + 0.5)]
                    a = w[w["event"].isin(["enqueue", "drop"])]
                    df = float((a["event"] == "drop").mean()) if len(a) else 0.0
                    q = float(w["queue_pkts"].mean()) if len(w) else 0.0
                    b.append((df, q))
                bins.append(b)
                data = e[e["event"].isin(["enqueue", "drop"]) & (e["size"] > 1000)].copy()
                data["arrival_ns"] = data["arrival_ns"] - int(lead * 1e9)
                if data["arrival_ns"].max() >= BURST_WINDOW[1] * 1e9:
                    bursts += burst_loss(data, *BURST_WINDOW)
                # The split of the bottleneck's departures in two windows (Jain, largest share).
                dq = e[e["event"] == "dequeue"]
                for w, (lo, hi) in enumerate(SPLIT_WINDOWS):
                    c = dq[(dq["t"] >= lo) & (dq["t"] < hi)]["flow"].astype(str).value_counts()
                    c = c.reindex(names, fill_value=0).to_numpy(dtype=float)
                    if c.sum() > 0:
                        splits[w].append((jain(c), c.max() / c.sum()))
            print(f"\n## {aqm} {kind}: {len(runs)} runs, first {until} s (medians over runs)")
            print(
                "| base RTT | start (s) | STARTUP exit (s) | bw at exit (Mb/s) | peak bw (Mb/s) "
                "| peak in flight | loss | lt samples |"
            )
            print("|---|---|---|---|---|---|---|---|")
            for k in sorted(rows_by_rtt):
                rs = rows_by_rtt[k]

                def med(key, rs=rs):
                    v = [
                        x[key]
                        for x in rs
                        if x[key] is not None
                        and not (isinstance(x[key], float) and np.isnan(x[key]))
                    ]
                    return float(np.median(v)) if v else float("nan")

                noexit = sum(1 for x in rs if x["exit"] is None)
                print(
                    f"| {k} ms | {med('start_s'):.2f} | {med('exit'):.2f}"
                    f"{f' ({noexit} none)' if noexit else ''} | {med('bw_exit'):.1f} "
                    f"| {med('bw_peak'):.1f} (max {max(x['bw_peak'] for x in rs):.1f}) "
                    f"| {med('inflight_peak'):.0f} (max {max(x['inflight_peak'] for x in rs)}) "
                    f"| {med('loss'):.2f} | {sum(x['lt'] for x in rs)} |"
                )
            print(
                "flows by start (before / from 0.5 s): n, bw at STARTUP exit (median), peak bw "
                "(median, 90th percentile, largest, how many above 40 Mb/s), in flight (90th pct.)"
            )
            for name, sel in (("before", lambda x: x < 0.5), ("from", lambda x: x >= 0.5)):
                rs = [x for v in rows_by_rtt.values() for x in v if sel(x["start_s"] or 9.0)]
                if not rs:
                    continue
                ex = [x["bw_exit"] for x in rs if x["bw_exit"] is not None]
                pk = np.array([x["bw_peak"] for x in rs])
                fl = np.array([x["inflight_peak"] for x in rs])
                print(
                    f"  {name} 0.5 s: {len(rs)}, {np.median(ex) if ex else float('nan'):.1f}, "
                    f"{np.median(pk):.1f} / {np.percentile(pk, 90):.1f} / {pk.max():.1f} / "
                    f"{int((pk > 40).sum())}, {np.percentile(fl, 90):.0f}"
                )
            print(
                "bottleneck departures by flow, Jain / largest share (means over runs): "
                + ", ".join(
                    f"{lo:g}-{hi:g} s {np.mean([x[0] for x in v]):.3f} / "
                    f"{np.mean([x[1] for x in v]):.3f}"
                    for (lo, hi), v in zip(SPLIT_WINDOWS, splits, strict=True)
                    if v
                )
            )
            if bursts:
                print(
                    f"bursts at the bottleneck, {BURST_WINDOW[0]:g}-{BURST_WINDOW[1]:g} s, by "
                    "flow rate: rate, in a burst, mean burst, drop first / later / all (means)"
                )
                for rlo, rhi in RATE_CLASSES:
                    c = [x for x in bursts if rlo <= x["rate"] < rhi]
                    if not c:
                        continue

                    def m(key, c=c):
                        v = [x[key] for x in c if x[key] == x[key]]  # NaN: no such packet
                        return float(np.mean(v)) if v else float("nan")

                    print(
                        f"  {rlo:g}-{min(rhi, 999):g} Mb/s ({len(c)} flows): {m('rate'):.1f}, "
                        f"{m('in_burst'):.2f}, {m('mean_burst'):.2f}, {m('drop_first'):.3f} / "
                        f"{m('drop_later'):.3f} / {m('drop'):.3f}"
                    )
            arrb = np.array(bins)
            print(
                "bottleneck, 0.5 s bins from 0: drop fraction (median, max over runs) / mean queue"
            )
            print(
                "  "
                + "  ".join(
                    f"[{i * 0.5:.1f}) {np.median(arrb[:, i, 0]):.2f},{arrb[:, i, 0].max():.2f}"
                    f"/{np.median(arrb[:, i, 1]):.0f}"
                    for i in range(arrb.shape[1])
                )
            )


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=("testbed", "sim", "compare"))
    ap.add_argument("--out", default="runs/bbr_start")
    ap.add_argument("--runs", type=int, default=6, help="testbed: runs per AQM")
    ap.add_argument("--aqm", choices=("dt", "codel"), help="testbed: this AQM only")
    ap.add_argument("--seeds", default="1-8", help="sim: seeds, LO-HI")
    ap.add_argument("--step", type=float, default=0.05, help="sampling step, s")
    ap.add_argument("--duration", type=float, default=6.0, help="each run's length, s")
    ap.add_argument("--label", default="sim", help="sim, compare: the simulator runs' label")
    ap.add_argument("--kernel-label", default="tb", help="testbed, compare: the kernel runs' label")
    ap.add_argument(
        "--gso-max-segs", type=int, help="testbed: the end hosts' devices' gso_max_segs"
    )
    ap.add_argument("--sysctl", action="append", default=[], help="testbed: KEY=VALUE")
    ap.add_argument("--route", action="append", default=[], help="testbed: route metric KEY=VALUE")
    ap.add_argument("--tcp", action="append", default=[], help="sim: KEY=VALUE [tcp] setting")
    ap.add_argument(
        "--probe",
        default=str(ROOT / "target" / "release" / "examples" / "bbr_probe"),
        help="sim: the bbr_probe binary",
    )
    ap.add_argument("--until", type=float, default=3.0, help="compare: the first seconds")
    a = ap.parse_args()
    out = Path(a.out)
    if a.what == "testbed":
        kv = [dict(x.partition("=")[::2] for x in xs) for xs in (a.sysctl, a.route)]
        run_testbed(
            out,
            a.runs,
            [a.aqm] if a.aqm else ["dt", "codel"],
            a.step,
            a.duration,
            a.kernel_label,
            kv[0] or None,
            kv[1] or None,
            a.gso_max_segs,
        )
    elif a.what == "sim":
        tcp = {}
        for kv in a.tcp:
            k, _, v = kv.partition("=")
            tcp[k] = {"true": True, "false": False}.get(v, v)
        run_sim(out, _seeds(a.seeds), a.step, a.duration, Path(a.probe), tcp, a.label)
    else:
        run_compare(out, a.until, a.label, a.kernel_label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
