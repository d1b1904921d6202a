"""BBR v1 per flow, the kernel's against the simulator's, over many runs (issue 22).

    sudo .venv/bin/python benches/bbr_flows.py testbed --runs 10 [--out runs/bbr_flows]
        [--aqm dt] [--kernel-label tbnocomp --sysctl net.ipv4.tcp_comp_sack_nr=0]
        [--route quickack=1] [--seeded --kernel-label tbs]
    .venv/bin/python benches/bbr_flows.py sim --seeds 1-30 [--label sim] [--tcp delack=true]
        [--access-delays 1.5,3.5,...,19.5] [--dither 0.5]
    .venv/bin/python benches/bbr_flows.py table [--label sim] [--boot 10000] [--plot FILE.png]
        [--kernel-digest docs/data/bbr_flows_kernel.json] [--kernel-label tbs --sim-seeds 1-16]
        [--kernel-runs 1-16]
    .venv/bin/python benches/bbr_flows.py digest [--kernel-label tb] [--digest FILE]
    .venv/bin/python benches/bbr_flows.py shift --a kernel:tbs --b kernel:tbsh

The networks of benches/fwd_vs_sim.py ``--bbr`` (docs/testbed.md, BBR v1 section):
``scenarios/crosscheck/{dt,codel}-het-n50.toml`` with 10 flows (100 Mb/s / 2 ms bottleneck,
buffer 300 packets, base RTTs 8, 16, ..., 80 ms), 30 s with 10 s of warm-up.

``testbed``: the kernel's ``bbr`` (SACK, RACK-TLP), one run at a time, FIFO and CoDel in turn,
each in ``{aqm}-tb-NN`` with the 1-minute load average before and after it (``load.json``);
``--sysctl``: extra ``net.ipv4.tcp_*`` settings of the end namespaces (``aqmlab testbed
--sysctl``) and ``--route``: extra route metrics (``aqmlab testbed --route``), for a variant with
its own ``--kernel-label`` (``{aqm}-{label}-NN``); ``--aqm``: one AQM only; ``--seeded``: run NN
uses seed NN, so the flows start as in simulator seed NN (by default every kernel run uses the
file's seed 1, one start schedule, while the simulator's seeds each have their own: compare
those with ``table --sim-seeds``, or seeded runs with the same seeds: ``--sim-seeds`` and
``--kernel-runs`` alike).
``sim``: the simulator's ``cc = "bbr"`` over ``recovery = "rack"``, one run per seed in
``{aqm}-{label}-sNN`` (``--tcp``: extra ``[tcp]`` settings for a variant, with its own label:
``--tcp 'mss="1448B"' --tcp 'header="66B"'`` puts the testbed's bytes on the wire, 1448 B of
payload in 1514 B frames, where the file's 1460 B in 1500 B give 1.8 % more goodput;
``--dither MS``: each seed's access delays moved by a uniform draw in [-MS, +MS], so the
per-flow means average over the delays' sub-millisecond details, which set the simulator's
split and not the kernel's: docs/testbed.md, "Exact delays"). ``--access-delays`` (testbed and
sim): the ten access links' delays instead of the file's 1, 3, ..., 19 ms.
``table``: reads the runs' ``summary.json`` (leaving out, with a line on stderr, a run in which
a flow failed) and prints, per AQM and flow (by base RTT), the mean
goodput and its standard error on each side, the ratio of the means with a 95 % bootstrap
interval (runs resampled on each side), whether that interval lies inside [0.9, 1.1] ("yes"),
outside it ("no") or neither ("undecided"), Welch's t-test and its Holm-adjusted p over the ten
flows; then per-run distribution statistics (Jain's index, the largest flows' shares, the shares
of three RTT classes) with bootstrap intervals and a Mann-Whitney test, the bottleneck's loss
ratio and the flows' retransmitted fractions by their goodput, how far the first flow to start
(by the seed's schedule) ends above its base RTT's mean share, and which flow was the
largest in how many runs (``--kernel-label``: the kernel runs of a variant). ``--plot``:
per-flow mean +- s.e. by base RTT, both sides.
``shift``: how each flow's mean changes from one set of runs to another (``--a``, ``--b``:
a simulator label, or ``kernel:LABEL``), with the chi-square sum over the flows
(docs/testbed.md, "Exact delays").
``digest``: the kernel runs' per-flow goodputs, mean queues and load averages in one JSON file
(``docs/data/bbr_flows_kernel.json`` is committed: the kernel runs of 2026-11-29 behind
docs/testbed.md's per-flow table), so ``table --kernel-digest FILE`` compares simulator
variants with the kernel without the testbed's half hour of runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]

#: The two queues compared: the scenario file's stem.
AQMS = ("dt", "codel")


#: The scenario files' access delays (ms): base RTTs 8, 16, ..., 80 ms.
FILE_ACCESS_MS = [1.0 + 2 * i for i in range(10)]


def _scenario(aqm: str, sim: bool, tcp: dict | None = None, access: list[float] | None = None):
    from aqmlab.scenario import schema as scenario

    d = tomllib.loads((ROOT / "scenarios" / "crosscheck" / f"{aqm}-het-n50.toml").read_text())
    d["name"] = f"{aqm}-het-n10"
    # --dither moves FILE_ACCESS_MS: they must be the file's.
    assert d["topology"]["access_delay"] == [f"{x:g}ms" for x in FILE_ACCESS_MS]
    if access:
        d["topology"]["access_delay"] = [f"{x:.4f}ms" for x in access]
    d["duration"], d["warmup"] = "30s", "10s"
    d["flows"][0]["count"] = 10
    d["tcp"].update(variant="sack")
    if sim:
        d["tcp"].update({"cc": "bbr", "recovery": "rack", **(tcp or {})})
    return scenario.from_dict(d)


def _next_index(out: Path, aqm: str, kind: str) -> int:
    have = [int(p.name.rsplit("-", 1)[1]) for p in out.glob(f"{aqm}-{kind}-[0-9]*")]
    return max(have, default=0) + 1


def run_testbed(
    out: Path,
    runs: int,
    label: str = "tb",
    sysctls: dict[str, str] | None = None,
    aqms: tuple[str, ...] = AQMS,
    route: dict[str, str] | None = None,
    seeded: bool = False,
    access: list[float] | None = None,
) -> None:
    """``runs`` kernel runs per AQM, alternating FIFO and CoDel, in ``{aqm}-{label}-NN``;
    ``sysctls``: extra ``net.ipv4.tcp_*`` settings of the senders' and receivers' namespaces;
    ``route``: extra metrics of their routes (``{"quickack": "1"}``); ``seeded``: run NN uses
    seed NN (the flows' start schedule of simulator seed NN) instead of the file's seed 1;
    ``access``: the access links' delays (ms) instead of the file's (a variant: its own label)."""
    from aqmlab import testbed

    for _ in range(runs):
        for aqm in aqms:
            i = _next_index(out, aqm, label)
            d = out / f"{aqm}-{label}-{i:02d}"
            before = os.getloadavg()
            res = testbed.testbed(
                _scenario(aqm, sim=False, access=access),
                out=d,
                seed=i if seeded else None,
                plot=False,
                cc="bbr",
                sysctls=sysctls,
                route=route,
            )
            after = os.getloadavg()
            (d / "load.json").write_text(json.dumps({"before": before, "after": after}))
            g = [f["goodput_bps"] / 1e6 for f in res.summary["flows"]]
            print(
                f"{d.name}: load {before[0]:.1f}->{after[0]:.1f} goodput "
                + " ".join(f"{x:.1f}" for x in g),
                flush=True,
            )


def run_sim(
    out: Path,
    seeds: list[int],
    label: str = "sim",
    tcp: dict | None = None,
    access: list[float] | None = None,
    dither: float = 0.0,
) -> None:
    """One simulator run per AQM and seed, in ``{aqm}-{label}-sNN``; ``tcp``: extra ``[tcp]``
    settings (a variant: ``delack = true``, ``timestamps = true``); ``access``: as
    :func:`run_testbed`; ``dither``: each seed's access delays moved by a uniform draw in
    [-dither, +dither] ms each (a random generator seeded with the seed), so its runs average
    over the delays' sub-millisecond details, which set the simulator's per-flow split
    (docs/testbed.md, "Exact delays")."""
    import random

    import aqmlab

    for seed in seeds:
        for aqm in AQMS:
            d = out / f"{aqm}-{label}-s{seed:02d}"
            if (d / "summary.json").exists():
                continue
            ms = access or FILE_ACCESS_MS
            if dither:
                rng = random.Random(seed)
                ms = [x + rng.uniform(-dither, dither) for x in ms]
            sc = _scenario(aqm, sim=True, tcp=tcp, access=ms if access or dither else None)
            res = aqmlab.run(sc, seed=seed, out=d)
            g = [f["goodput_bps"] / 1e6 for f in res.summary["flows"]]
            print(f"{d.name}: goodput " + " ".join(f"{x:.1f}" for x in g), flush=True)


#: RTT classes for the share statistics: (label, the flows' places in base-RTT order), so a
#: variant with other delays (``--access-delays``, ``--dither``) keeps them: the 2 shortest, the
#: next 4, the 4 longest.
CLASSES = (("8-16 ms", range(0, 2)), ("24-48 ms", range(2, 6)), ("56-80 ms", range(6, 10)))


def load_runs(out: Path, aqm: str, kind: str, kernel: bool | None = None) -> list[dict]:
    """Every run of one AQM and side: per-flow goodput (Mb/s, ordered by base RTT), base RTTs (ms),
    the mean queue and, for the testbed, the load average before the run; a run in which a
    flow failed (summary.json's ``error``) is left out, with a line on stderr. ``kind``: the runs'
    label; ``kernel``: whether they are testbed runs (``{aqm}-{kind}-NN``) or simulator seeds
    (``{aqm}-{kind}-sNN``); by default testbed runs only for the label "tb"."""
    runs = []
    kernel = kind == "tb" if kernel is None else kernel
    prefix = f"{aqm}-{kind}-" if kernel else f"{aqm}-{kind}-s"
    # Run and seed numbers are two digits or more (s07, s100): sorted by number, not by name.
    dirs = [d for d in out.glob(prefix + "[0-9]*") if d.name[len(prefix) :].isdigit()]
    for d in sorted(dirs, key=lambda d: int(d.name[len(prefix) :])):
        f = d / "summary.json"
        if not f.exists():
            continue
        s = json.loads(f.read_text())
        failed = [x["error"] for x in s["flows"] if x.get("error")]
        if failed:  # a flow that never ran (testbed: its ARP lost in the full queue)
            print(f"{d.name}: left out, a flow failed: {'; '.join(failed)}", file=sys.stderr)
            continue
        flows = sorted(s["flows"], key=lambda x: x["base_rtt_s"])
        load = (
            json.loads((d / "load.json").read_text())["before"][0]
            if (d / "load.json").exists()
            else None
        )
        bottleneck = next(x for x in s["links"] if x["name"] == "bottleneck")
        runs.append(
            {
                "name": d.name,
                "gp": [x["goodput_bps"] / 1e6 for x in flows],
                "rtt": [round(x["base_rtt_s"] * 1e3) for x in flows],
                "queue": bottleneck["queue_mean_pkts"],
                "load": load,
                # The run's seed (the flows' start schedule), the bottleneck's loss ratio and
                # each flow's retransmitted fraction of the segments it sent (whole run).
                "seed": s.get("run", {}).get("seed"),
                "loss": bottleneck.get("loss_ratio"),
                "rtx": _retransmitted(flows),
                # The scheduled starts: the simulator's start_s; the testbed's start_s is when
                # the connection was established, its schedule in scheduled_start_s (runs
                # since 2026-11-30; before, the same seed's simulator run has it).
                "start": _schedule(flows, kernel),
            }
        )
    return runs


def _retransmitted(flows: list[dict]) -> list[float] | None:
    """Each flow's retransmissions / segments sent (whole run), ``None`` where unknown."""
    if not all(isinstance(x.get("retransmits"), int) and x.get("segments_sent") for x in flows):
        return None
    return [round(x["retransmits"] / x["segments_sent"], 5) for x in flows]


def _schedule(flows: list[dict], kernel: bool) -> list[float] | None:
    """The flows' scheduled starts (s) from a run's summary, ``None`` where it lacks them."""
    key = "scheduled_start_s" if kernel else "start_s"
    if not all(isinstance(x.get(key), (int, float)) for x in flows):
        return None
    return [round(x[key], 6) for x in flows]


#: Where ``digest`` writes and ``table --kernel-digest`` reads by default.
DIGEST = ROOT / "docs" / "data" / "bbr_flows_kernel.json"


def write_digest(out: Path, path: Path, kernel_label: str = "tb") -> None:
    """The kernel runs labelled ``kernel_label`` under ``out``, as :func:`load_runs` reads them,
    with the kernel's release and the date, in one JSON file."""
    import datetime
    import platform

    runs = {aqm: load_runs(out, aqm, kernel_label, kernel=True) for aqm in AQMS}
    if not any(runs.values()):
        _die(f"--out: no kernel runs labelled {kernel_label!r} under {out}")
    doc = {
        "what": "kernel bbr per flow (benches/bbr_flows.py testbed), goodput Mb/s by base RTT",
        # The release of the machine that writes the digest: write it on the testbed machine.
        "host_kernel": platform.release(),
        "written": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "label": kernel_label,
        "runs": runs,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path}: " + ", ".join(f"{a} {len(r)} runs" for a, r in runs.items()))


def kernel_runs(
    out: Path, aqm: str, kernel_label: str, digest: Path | None, only: list[int] | None = None
) -> list[dict]:
    """The kernel's runs of one AQM: from ``digest`` when given, else the run directories;
    ``only``: the runs of these numbers (``{aqm}-{label}-NN``) only."""
    if digest is None:
        runs = load_runs(out, aqm, kernel_label, kernel=True)
    else:
        try:
            runs = json.loads(digest.read_text())["runs"].get(aqm, [])
        except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
            _die(f"--kernel-digest: cannot read {digest}: {e}")
    if only is None:
        return runs
    return [r for r in runs if int(r["name"].rsplit("-", 1)[1]) in only]


def _only_seeds(runs: list[dict], seeds: list[int] | None) -> list[dict]:
    """The simulator runs (``{aqm}-{label}-sNN``) of ``seeds`` only (all when ``None``)."""
    if seeds is None:
        return runs
    return [r for r in runs if int(r["name"].rsplit("-s", 1)[1]) in seeds]


def _die(msg: str) -> NoReturn:
    """Bad input: one line on stderr, exit code 2."""
    print(msg, file=sys.stderr)
    sys.exit(2)


def stats_of(gp) -> dict[str, float]:
    """Distribution statistics of one run that do not name a flow (shares of the total goodput);
    ``gp``: the goodputs in base-RTT order."""
    import numpy as np

    g = np.asarray(gp)
    tot = g.sum()
    st = {
        "Jain's index": tot**2 / (len(g) * (g**2).sum()),
        "largest flow's share": g.max() / tot,
        "two largest flows' share": np.sort(g)[-2:].sum() / tot,
    }
    for label, members in CLASSES:
        st[f"share of {label}"] = sum(g[i] for i in members) / tot
    return st


def _se(x) -> float:
    """The standard error of the mean of ``x`` (sample standard deviation / sqrt(n))."""
    import numpy as np

    return float(np.std(x, ddof=1) / np.sqrt(len(x)))


def _holm(ps: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (Holm 1979): the k-th smallest times (m - k + 1), made
    monotone, at most 1."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, run = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, ps[i] * (len(ps) - rank)))
        out[i] = run
    return out


def _boot_ci(
    a, b, n: int, rng
) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
    """95 % percentile bootstrap intervals of mean(a), mean(b) and mean(b) - mean(a), resampling
    runs independently on each side."""
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    ma = a[rng.integers(0, len(a), (n, len(a)))].mean(axis=1)
    mb = b[rng.integers(0, len(b), (n, len(b)))].mean(axis=1)

    def ci(x):
        return tuple(np.percentile(x, [2.5, 97.5]))

    return ci(ma), ci(mb), ci(mb - ma)


def _check_same_flows(tb: list[dict], sim: list[dict]) -> None:
    """The same flows on both sides: each base RTT within 4 ms of the kernel's first run's (a
    dithered simulator moves each access delay by under 1 ms, the RTT by under 4)."""
    rtts = tb[0]["rtt"]
    for r in tb + sim:
        if len(r["rtt"]) != len(rtts) or any(
            abs(a - b) > 4 for a, b in zip(r["rtt"], rtts, strict=True)
        ):
            _die(f"{r['name']}: other flows than {tb[0]['name']}'s (base RTTs {r['rtt']})")


def table(
    out: Path,
    boot: int,
    label: str = "sim",
    kernel_label: str = "tb",
    digest: Path | None = None,
    sim_seeds: list[int] | None = None,
    kernel_only: list[int] | None = None,
) -> None:
    """Prints the per-flow and distribution tables (Markdown) of the runs under ``out``: the
    kernel's runs labelled ``kernel_label`` (or those of ``digest``; ``kernel_only``: those
    numbers only) against the simulator runs labelled ``label`` (``sim_seeds``: those seeds
    only)."""
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(1)
    sides = {}
    for aqm in AQMS:  # every AQM's runs checked before anything is printed
        tb = kernel_runs(out, aqm, kernel_label, digest, kernel_only)
        sim = _only_seeds(load_runs(out, aqm, label), sim_seeds)
        if tb and sim:
            _check_same_flows(tb, sim)
            sides[aqm] = (tb, sim)
    for aqm, (tb, sim) in sides.items():
        rtts = tb[0]["rtt"]
        loads = [r["load"] for r in tb if r["load"] is not None]
        name = {"dt": "FIFO", "codel": "CoDel"}[aqm]
        print(
            f"\n{name}: kernel {len(tb)} runs (load average {min(loads):.1f}-{max(loads):.1f}), "
            f"simulator {len(sim)} seeds"
        )
        print(
            "\n| base RTT (ms) | kernel mean +- s.e. (Mb/s) | sim mean +- s.e. "
            "| sim / kernel (95% CI) | within 10%? | Welch p | Holm p |"
        )
        print("|---|---|---|---|---|---|---|")
        K = np.array([r["gp"] for r in tb])
        S = np.array([r["gp"] for r in sim])
        rows = []
        for j, rtt in enumerate(rtts):
            k, s = K[:, j], S[:, j]
            idx_k = rng.integers(0, len(k), (boot, len(k)))
            idx_s = rng.integers(0, len(s), (boot, len(s)))
            lo, hi = np.percentile(s[idx_s].mean(axis=1) / k[idx_k].mean(axis=1), [2.5, 97.5])
            p = stats.ttest_ind(s, k, equal_var=False).pvalue
            rows.append((rtt, k, s, lo, hi, p))
        holm = _holm([r[5] for r in rows])
        for (rtt, k, s, lo, hi, p), ph in zip(rows, holm, strict=True):
            # Within 10 % only if the whole 95 % interval of the ratio is in [0.9, 1.1]; outside
            # if the whole interval is; else the runs cannot tell.
            verdict = (
                "yes"
                if 0.9 <= lo and hi <= 1.1
                else ("no" if hi < 0.9 or lo > 1.1 else "undecided")
            )
            print(
                f"| {rtt} | {k.mean():.1f} +- {_se(k):.1f} | {s.mean():.1f} +- {_se(s):.1f} | "
                f"{s.mean() / k.mean():.2f} ({lo:.2f}-{hi:.2f}) | {verdict} | {p:.4f} | {ph:.3f} |"
            )
        tot_k, tot_s = K.sum(axis=1), S.sum(axis=1)
        qk, qs = np.mean([r["queue"] for r in tb]), np.mean([r["queue"] for r in sim])
        print(
            f"\ntotal goodput: kernel {tot_k.mean():.1f} +- {_se(tot_k):.1f}, "
            f"sim {tot_s.mean():.1f} +- {_se(tot_s):.1f} Mb/s; "
            f"mean queue kernel {qk:.1f}, sim {qs:.1f} pkts"
        )
        print(
            "\n| statistic (per run) | kernel mean (95% CI) | sim mean (95% CI) "
            "| sim - kernel (95% CI) | Mann-Whitney p |"
        )
        print("|---|---|---|---|---|")
        st_k = [stats_of(r["gp"]) for r in tb]
        st_s = [stats_of(r["gp"]) for r in sim]
        for key in st_k[0]:
            a, b = [x[key] for x in st_k], [x[key] for x in st_s]
            (al, ah), (bl, bh), (dl, dh) = _boot_ci(a, b, boot, rng)
            p = stats.mannwhitneyu(b, a).pvalue
            print(
                f"| {key} | {np.mean(a):.3f} ({al:.3f}-{ah:.3f}) "
                f"| {np.mean(b):.3f} ({bl:.3f}-{bh:.3f}) | "
                f"{np.mean(b) - np.mean(a):+.3f} ({dl:+.3f} to {dh:+.3f}) | {p:.3f} |"
            )
        _losses(tb, sim)
        _first_flow(tb, sim)
        hk = np.bincount(K.argmax(axis=1), minlength=len(rtts))
        hs = np.bincount(S.argmax(axis=1), minlength=len(rtts))
        print(
            "\nlargest flow's base RTT (runs): "
            + "; ".join(
                f"{rtt} ms: kernel {a}, sim {b}"
                for rtt, a, b in zip(rtts, hk, hs, strict=True)
                if a or b
            )
        )


#: ``table``'s classes of a flow's goodput (Mb/s) for the retransmitted fractions.
RATE_BINS = (0, 5, 10, 15, 20, 25, float("inf"))


def _losses(tb: list[dict], sim: list[dict]) -> None:
    """Prints the bottleneck's loss ratio and the flows' retransmitted fractions by goodput,
    both sides (runs whose summary lacks them, older digests, are skipped)."""
    import numpy as np

    def loss(runs):
        x = [r["loss"] for r in runs if r.get("loss") is not None]
        return f"{np.mean(x):.4f} +- {_se(x):.4f} ({len(x)} runs)" if len(x) > 1 else "-"

    print(f"\nbottleneck loss ratio: kernel {loss(tb)}, sim {loss(sim)}")

    def by_rate(runs):
        with_rtx = [r for r in runs if r.get("rtx")]
        gp = np.array([g for r in with_rtx for g in r["gp"]])
        rx = np.array([x for r in with_rtx for x in r["rtx"]])
        return [rx[(gp >= a) & (gp < b)] for a, b in itertools.pairwise(RATE_BINS)]

    k, s = by_rate(tb), by_rate(sim)
    cells = []
    for (a, b), xk, xs in zip(itertools.pairwise(RATE_BINS), k, s, strict=True):
        name = f"{a:g}-{b:g}" if b != float("inf") else f">{a:g}"
        cells.append(f"{name}: {_mean(xk)} / {_mean(xs)} ({len(xk)} / {len(xs)} flows)")
    print("retransmitted / sent by the flow's goodput (Mb/s), kernel / sim: " + "; ".join(cells))


def _mean(x) -> str:
    """``x``'s mean to three places, or "-" when empty."""
    return f"{sum(x) / len(x):.3f}" if len(x) else "-"


def _first_flow(tb: list[dict], sim: list[dict]) -> None:
    """Prints how far above its base RTT's mean share the first flow to start (by the run's
    seed's schedule) ends, and how often it is the largest, both sides. A kernel run's schedule
    is its own (``scheduled_start_s``) or, for older runs, its seed's simulator run's."""
    import numpy as np

    by_seed = {r["seed"]: r["start"] for r in sim if r.get("start") and r.get("seed") is not None}

    def first(runs):
        shares, firsts = [], []
        for r in runs:
            sched = r.get("start") or by_seed.get(r.get("seed"))
            if sched is None:
                continue
            g = np.asarray(r["gp"])
            shares.append(g / g.sum())
            firsts.append(int(np.argmin(sched)))
        if len(shares) < 2:
            return None
        sh, fi = np.array(shares), np.array(firsts)
        adv = 100 * (sh[np.arange(len(sh)), fi] - sh.mean(axis=0)[fi])
        # round(-1e-17, 1) + 0.0 is 0.0: no "-0.0" for a flow exactly at its mean.
        return (
            round(adv.mean(), 1) + 0.0,
            _se(adv),
            float((sh.argmax(axis=1) == fi).mean()),
            len(sh),
        )

    k, s = first(tb), first(sim)
    if k is None or s is None:
        return
    print(
        "the first flow to start (the seed's schedule): share above its base RTT's mean "
        f"{k[0]:+.1f} +- {k[1]:.1f} points on the kernel ({k[3]} runs), {s[0]:+.1f} +- {s[1]:.1f} "
        f"in the simulator ({s[3]}); the largest flow in {k[2]:.0%} and {s[2]:.0%} of runs"
    )


def _side(out: Path, aqm: str, spec: str) -> list[dict]:
    """``shift``'s runs: ``kernel:LABEL`` (testbed runs) or ``LABEL`` (simulator seeds)."""
    kernel = spec.startswith("kernel:")
    return load_runs(out, aqm, spec.removeprefix("kernel:"), kernel=kernel)


def shift(out: Path, a: str, b: str) -> None:
    """Prints, per AQM, how each flow's mean goodput changes from runs ``a`` to runs ``b`` (two
    sets of delays, or two models): the change with its standard error (Welch), and the sum of
    (change / s.e.)^2 over the flows, which is chi-square on as many degrees of freedom when
    no flow's mean changes (the flows' means taken as independent): the test of
    docs/testbed.md, "Exact delays". Flows are matched by their place in base-RTT order."""
    import numpy as np
    from scipy import stats

    for aqm in AQMS:
        ra, rb = _side(out, aqm, a), _side(out, aqm, b)
        if len(ra) < 2 or len(rb) < 2:
            print(f"{aqm}: fewer than 2 runs of {a!r} or {b!r}: skipped", file=sys.stderr)
            continue
        A = np.array([r["gp"] for r in ra])
        B = np.array([r["gp"] for r in rb])
        if A.shape[1] != B.shape[1]:
            _die(f"--b: {b!r} has {B.shape[1]} flows, {a!r} {A.shape[1]}")
        name = {"dt": "FIFO", "codel": "CoDel"}[aqm]
        print(f"\n{name}: {a} ({len(ra)} runs) -> {b} ({len(rb)} runs)\n")
        print("| base RTT (ms) | a mean | b mean | change +- s.e. (Mb/s) |")
        print("|---|---|---|---|")
        chi = 0.0
        for j in range(A.shape[1]):
            x, y = A[:, j], B[:, j]
            se = float(np.hypot(_se(x), _se(y)))
            d = y.mean() - x.mean()
            if se > 0:
                chi += (d / se) ** 2
            elif d != 0:  # no spread on either side, yet a change: no chance of it by noise
                chi = float("inf")
            print(
                f"| {ra[0]['rtt'][j]} -> {rb[0]['rtt'][j]} | {x.mean():.1f} | {y.mean():.1f} | "
                f"{d:+.1f} +- {se:.1f} |"
            )
        dof = A.shape[1]
        print(
            f"\nsum of (change / s.e.)^2: {chi:.1f} on {dof} d.f., p {stats.chi2.sf(chi, dof):.2g}"
        )


def plot(
    out: Path,
    path: Path,
    label: str = "sim",
    digest: Path | None = None,
    kernel_label: str = "tb",
    sim_seeds: list[int] | None = None,
    kernel_only: list[int] | None = None,
) -> None:
    """Per-flow mean goodput +- one standard error by base RTT, the kernel's (runs labelled
    ``kernel_label``, or ``digest``'s; ``kernel_only``: those numbers only) against the
    simulator's (``sim_seeds`` only, if given), one panel per AQM."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(AQMS), figsize=(10, 3.8), sharey=True)
    for ax, aqm in zip(axes, AQMS, strict=True):
        for kernel, name, colour, dx in (
            (True, "kernel bbr", "C0", -0.8),
            (False, f"simulator {label!r}", "C3", 0.8),
        ):
            if kernel:
                runs = kernel_runs(out, aqm, kernel_label, digest, kernel_only)
            else:
                runs = _only_seeds(load_runs(out, aqm, label), sim_seeds)
            if not runs:
                continue
            g = np.array([r["gp"] for r in runs])
            x = np.array(runs[0]["rtt"]) + dx
            se = g.std(axis=0, ddof=1) / np.sqrt(len(g))
            ax.errorbar(
                x,
                g.mean(axis=0),
                yerr=se,
                fmt="o",
                color=colour,
                capsize=3,
                label=f"{name} ({len(g)} runs)",
            )
        ax.set_title({"dt": "FIFO (300 packets)", "codel": "CoDel"}[aqm])
        ax.set_xlabel("base RTT (ms)")
        ax.set_xticks(range(8, 81, 8))
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("goodput, mean +- s.e. (Mb/s)")
    fig.suptitle("BBR v1, 10 flows, 100 Mb/s: per-flow goodput over runs (10-30 s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _seeds(text: str, option: str = "--seeds / --sim-seeds") -> list[int]:
    """``LO-HI`` or ``N`` (from 1) as a list; bad text: one line naming ``option``, exit 2."""
    lo, _, hi = text.partition("-")
    try:
        seeds = list(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        seeds = []
    if not seeds or seeds[0] < 1:
        _die(f"{option}: LO-HI or N, from 1 (got {text!r})")
    return seeds


def _tcp_setting(text: str) -> tuple[str, object]:
    key, eq, value = text.partition("=")
    try:
        if not eq or not key:
            raise ValueError("no KEY=")
        return key, tomllib.loads(f"v = {value}")["v"]
    except (ValueError, tomllib.TOMLDecodeError):
        _die(f"--tcp: KEY=VALUE with a TOML value, strings quoted: cc='\"bbr\"' (got {text!r})")


def _access(text: str) -> list[float]:
    try:
        ms = [float(x) for x in text.split(",")]
    except ValueError:
        _die(f"--access-delays: comma-separated milliseconds (got {text!r})")
    if len(ms) != 10 or not all(0 <= x < 1000 for x in ms):
        _die(f"--access-delays: ten delays from 0 to 1000 ms, one per flow (got {text!r})")
    return ms


def _parser() -> argparse.ArgumentParser:
    """The command line: the job and every option of the four."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("testbed", "sim", "table", "digest", "shift"))
    ap.add_argument("--out", default="runs/bbr_flows")
    ap.add_argument("--runs", type=int, default=10, help="testbed: runs per AQM")
    ap.add_argument("--seeds", default="1-30", help="sim: seeds, LO-HI")
    ap.add_argument("--boot", type=int, default=10000, help="table: bootstrap resamples")
    ap.add_argument(
        "--sim-seeds", help="table: the simulator's seeds LO-HI only (as --seeded kernel runs)"
    )
    ap.add_argument("--kernel-runs", help="table: the kernel's runs LO-HI only (their numbers)")
    ap.add_argument("--plot", help="table: also plot the per-flow means to this PNG")
    ap.add_argument("--label", default="sim", help="sim, table: the simulator runs' label")
    ap.add_argument(
        "--tcp", action="append", default=[], help="sim: an extra [tcp] setting, KEY=VALUE (TOML)"
    )
    ap.add_argument(
        "--sysctl",
        action="append",
        default=[],
        help="testbed: an extra net.ipv4.tcp_* setting of the end namespaces, KEY=VALUE",
    )
    ap.add_argument(
        "--route",
        action="append",
        default=[],
        help="testbed: an extra metric of the end namespaces' routes, KEY=VALUE (quickack=1)",
    )
    ap.add_argument("--kernel-label", default="tb", help="testbed, table: the kernel runs' label")
    ap.add_argument("--aqm", choices=AQMS, help="testbed: this AQM only")
    ap.add_argument(
        "--seeded",
        action="store_true",
        help="testbed: run NN uses seed NN (simulator seed NN's start schedule), not seed 1",
    )
    ap.add_argument(
        "--kernel-digest",
        type=Path,
        help="table: the kernel's runs from this digest (docs/data/bbr_flows_kernel.json)",
    )
    ap.add_argument("--digest", type=Path, default=DIGEST, help="digest: the file to write")
    ap.add_argument("--a", help="shift: the first runs, LABEL (simulator) or kernel:LABEL")
    ap.add_argument("--b", help="shift: the second runs, as --a")
    ap.add_argument(
        "--dither",
        type=float,
        default=0.0,
        help="sim: move each seed's access delays by up to this many ms (uniform, per seed)",
    )
    ap.add_argument(
        "--access-delays",
        help="testbed, sim: the ten access links' delays in ms, comma-separated (a variant: "
        "give it its own label), instead of the file's 1, 3, ..., 19",
    )
    return ap


def main() -> int:
    args = _parser().parse_args()
    out = Path(args.out)
    access = _access(args.access_delays) if args.access_delays else None
    if not 0 <= args.dither < 1:
        _die(f"--dither: from 0 to 1 ms (got {args.dither})")
    if args.dither > min(access or FILE_ACCESS_MS):
        _die(f"--dither: at most the smallest access delay, {min(access or FILE_ACCESS_MS)} ms")
    out.mkdir(parents=True, exist_ok=True)
    if args.what == "testbed":
        sysctls = dict(x.split("=", 1) for x in args.sysctl)
        aqms = (args.aqm,) if args.aqm else AQMS
        route = dict(x.split("=", 1) for x in args.route)
        run_testbed(out, args.runs, args.kernel_label, sysctls, aqms, route, args.seeded, access)
    elif args.what == "sim":
        from aqmlab.errors import InputError

        tcp = dict(_tcp_setting(x) for x in args.tcp)
        try:
            run_sim(out, _seeds(args.seeds), args.label, tcp, access, args.dither)
        except InputError as e:  # a --tcp setting the scenario refuses: its one line
            _die(f"--tcp: {e}")
    elif args.what == "digest":
        write_digest(out, args.digest, args.kernel_label)
    elif args.what == "shift":
        if not (args.a and args.b):
            _die("shift: --a and --b name the two sets of runs (LABEL or kernel:LABEL)")
        shift(out, args.a, args.b)
    else:
        seeds = _seeds(args.sim_seeds) if args.sim_seeds else None
        only = _seeds(args.kernel_runs, "--kernel-runs") if args.kernel_runs else None
        digest, klabel = args.kernel_digest, args.kernel_label
        table(out, args.boot, args.label, klabel, digest, seeds, only)
        if args.plot:
            plot(out, Path(args.plot), args.label, digest, klabel, seeds, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
