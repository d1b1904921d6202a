"""BBR v1 per flow, the kernel's against the simulator's, over many runs (issue 22).

    sudo .venv/bin/python benches/bbr_flows.py testbed --runs 10 [--out runs/bbr_flows]
        [--aqm dt] [--kernel-label tbnocomp --sysctl net.ipv4.tcp_comp_sack_nr=0]
        [--route quickack=1] [--seeded --kernel-label tbs] [--first 605]
    .venv/bin/python benches/bbr_flows.py sim --seeds 1-30 [--label sim] [--tcp delack=true]
        [--access-delays 1.5,3.5,...,19.5] [--dither 0.5]
    .venv/bin/python benches/bbr_flows.py table [--label sim] [--boot 10000] [--plot FILE.png]
        [--kernel-digest docs/data/bbr_flows_kernel.json] [--kernel-label tbs --sim-seeds 1-16]
        [--kernel-runs 1-16] [--kernel-count 1200] [--kernel-digest B.json --looks 2]
        [--sim-digest docs/data/bbr_flows_sim_LABEL.json]
    .venv/bin/python benches/bbr_flows.py digest [--kernel-label tb] [--digest FILE] [--merge]
    .venv/bin/python benches/bbr_flows.py digest --sim --label sim [--digest FILE] [--merge]
    .venv/bin/python benches/bbr_flows.py shift --a kernel:tbs --b kernel:tbsh
    .venv/bin/python benches/bbr_flows.py lt --label sim --kernel-label tbs

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
``--kernel-runs`` alike). ``--kernel-count N``: each AQM's first N kernel runs by number, refused
when it has fewer (issue 22's verdict is fixed to one look at 1200: docs/testbed.md).
``sim``: the simulator's ``cc = "bbr"`` over ``recovery = "rack"``, one run per seed in
``{aqm}-{label}-sNN`` (``--tcp``: extra ``[tcp]`` settings for a variant, with its own label:
``--tcp timestamps=true --tcp 'mss="1448B"' --tcp 'header="54B"'`` puts the testbed's bytes on
the wire, 1448 B of payload in 1514 B frames, where the file's 1460 B in 1500 B give 1.8 % more
goodput, and takes RTT samples from the timestamp echo as the kernel does;
``--dither MS``: each seed's access delays moved by a uniform draw in [-MS, +MS], so the
per-flow means average over the delays' sub-millisecond details, which set the simulator's
split and not the kernel's: docs/testbed.md, "Exact delays"). ``--access-delays`` (testbed and
sim): the ten access links' delays instead of the file's 1, 3, ..., 19 ms.
``table``: reads the runs' ``summary.json`` (leaving out, with a line on stderr, a run in which
a flow failed) and prints, per AQM and flow (by base RTT), the mean
goodput and its standard error on each side, the ratio of the means with a 95 % bootstrap
interval (runs resampled on each side), whether that interval lies inside [0.9, 1.1] ("yes"),
outside it ("no") or neither ("undecided"), the same verdict on the 90 % interval (the two
one-sided tests at 5 %, TOST: the usual test of "within 10 %"), Welch's t-test and its
Holm-adjusted p over the ten flows, and how many of the ten flows an exact simulator would be
shown within 10 % for with as many runs on each side (how many runs the criterion needs);
then per-run distribution statistics (Jain's index, the largest flows' shares, the shares
of three RTT classes) with bootstrap intervals and a Mann-Whitney test, the bottleneck's loss
ratio and the flows' retransmitted fractions by their goodput, how far the first flow to start
(by the seed's schedule) ends above its base RTT's mean share, and which flow was the
largest in how many runs (``--kernel-label``: the kernel runs of a variant); for runs with
delivered-bytes series (both sides record them, ``output.flow_series``, since 2026-11-30), how
the shares move (a flow's 1 s share against its share 1, 5 and 10 s later, and the two halves
of the window); for runs that report it (the simulator's since 2026-11-30), the time the
receive window held each flow back, by start order. ``--plot``: per-flow mean +- s.e. by base
RTT, both sides; ``--plot-time``: Jain's index of the flows' 0.5 s throughputs and the first
flow's share over the run, both sides (runs with series, of --kernel-runs / --sim-seeds when given).
``lt``: BBR v1's long-term (policer) rate on both sides: the kernel's runs with BBR state
series (the testbed's ``flow_<flow>.parquet``: TCP_CC_INFO every 20 ms) against the
simulator's runs of the same seeds (``bbr_probe`` on their ``config.json``, every 20 ms), by
the same signature (:func:`lt_stretches`): when each flow first shows it, at what rate, and
how much of 10-30 s is spent so.
``shift``: how each flow's mean changes from one set of runs to another (``--a``, ``--b``:
a simulator label, or ``kernel:LABEL``), with the chi-square sum over the flows
(docs/testbed.md, "Exact delays").
``--first N`` (testbed): number the runs from N at least (with ``--seeded``, seeds too), to
continue a digest's runs whose directories are gone (``digest --merge`` then adds them to it).
``digest``: the kernel runs' per-flow goodputs, mean queues and load averages in one JSON file
(``docs/data/bbr_flows_kernel.json`` is committed: the kernel runs of 2026-11-29 behind
docs/testbed.md's per-flow table), so ``table --kernel-digest FILE`` compares simulator
variants with the kernel without the testbed's half hour of runs; ``--merge``: keeps the runs
the file holds (a run directory under ``--out`` replaces the file's run of its name).
``digest --sim``: the simulator's runs labelled ``--label`` likewise (seed order, without the
per-second shares, ``docs/data/bbr_flows_sim_LABEL.json`` by default), so a sample of
thousands of seeds made over several sessions, whose run directories do not outlive them, is
kept; ``table --sim-digest FILE`` reads the simulator's runs from it (the same numbers as the
run directories', less the share moves, which need the series).
``count --kernel-label L [--kernel-count N]``: how far a kernel sample has come (runs, failed
runs and their reasons, load averages, how many more N needs) without a figure of its results;
``testbed --blind`` likewise prints no goodputs.
``table --kernel-digest A --kernel-digest B``: both digests' runs together (``--kernel-count``
takes each one's first N); ``--looks N``: the per-flow intervals widened for N looks at the
same question (Bonferroni: 2 gives the 97.5 % interval and the TOST at 2.5 %), the second
look of docs/testbed.md ("The second look, fixed in advance").
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import numpy as np

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
    # each flow's delivered bytes over time (10 ms in the simulator, 20 ms on the testbed):
    # how the shares move (table's lines, --plot-time)
    d.setdefault("output", {})["flow_series"] = True
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
    first: int = 1,
    neighbours: str = "resolve",
    blind: bool = False,
) -> None:
    """``runs`` kernel runs per AQM, alternating FIFO and CoDel, in ``{aqm}-{label}-NN``
    (NN: one past the highest under ``out``, at least ``first``: a digest's runs continued on
    another machine or day keep their numbers and seeds apart);
    ``sysctls``: extra ``net.ipv4.tcp_*`` settings of the senders' and receivers' namespaces;
    ``route``: extra metrics of their routes (``{"quickack": "1"}``); ``seeded``: run NN uses
    seed NN (the flows' start schedule of simulator seed NN) instead of the file's seed 1;
    ``access``: the access links' delays (ms) instead of the file's (a variant: its own label);
    ``neighbours``: ``aqmlab testbed --neighbours`` ("static": no ARP across the bottleneck; a
    variant: its own label); ``blind``: each run's line gives its load averages only, not its
    goodputs (a sample not to be looked at before its look: docs/testbed.md, "The second
    look")."""
    from aqmlab import testbed

    for _ in range(runs):
        for aqm in aqms:
            i = max(_next_index(out, aqm, label), first)
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
                neighbours=neighbours,
            )
            after = os.getloadavg()
            (d / "load.json").write_text(json.dumps({"before": before, "after": after}))
            g = [f["goodput_bps"] / 1e6 for f in res.summary["flows"]]
            figures = "" if blind else " goodput " + " ".join(f"{x:.1f}" for x in g)
            print(f"{d.name}: load {before[0]:.1f}->{after[0]:.1f}{figures}", flush=True)


def count_runs(out: Path, label: str, count: int | None = None) -> None:
    """How far a kernel sample has come, without a figure of its results (a sample not to be
    looked at before its look): per AQM, the complete runs under ``out`` labelled ``label``,
    the failed ones (a flow that never connected: left out of every table) with their reason,
    the directories with no summary (a run stopped part-way), the load averages before and
    after the runs, and how many more runs ``count`` (``--kernel-count``) needs."""
    for aqm in AQMS:
        prefix = f"{aqm}-{label}-"
        dirs = [d for d in out.glob(prefix + "[0-9]*") if d.name[len(prefix) :].isdigit()]
        good, failed, partial, loads = 0, [], [], []
        for d in sorted(dirs, key=lambda d: int(d.name[len(prefix) :])):
            if not (d / "summary.json").exists():
                partial.append(d.name)
                continue
            flows = json.loads((d / "summary.json").read_text())["flows"]
            errors = [f["error"] for f in flows if f.get("error")]
            if errors:
                failed.append(f"{d.name} ({errors[0]})")
                continue
            good += 1
            if (d / "load.json").exists():
                ld = json.loads((d / "load.json").read_text())
                loads += [ld["before"][0], ld["after"][0]]
        line = f"{aqm}: {good} runs"
        if loads:
            high = sum(x > 2.5 for x in loads)
            line += (
                f", load average {min(loads):.1f}-{max(loads):.1f} before and after "
                f"({high} of {len(loads)} readings above 2.5)"
            )
        if count is not None:
            line += f"; {max(count - good, 0)} more for --kernel-count {count}"
        print(line)
        for x in failed:
            print(f"  failed, left out: {x}")
        for x in partial:
            print(f"  no summary (stopped part-way): {x}")


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


def load_runs(
    out: Path, aqm: str, kind: str, kernel: bool | None = None, series: bool = True
) -> list[dict]:
    """Every run of one AQM and side: per-flow goodput (Mb/s, ordered by base RTT), base RTTs (ms),
    the mean queue and, for the testbed, the load average before the run; a run in which a
    flow failed (summary.json's ``error``) is left out, with a line on stderr. ``kind``: the runs'
    label; ``kernel``: whether they are testbed runs (``{aqm}-{kind}-NN``) or simulator seeds
    (``{aqm}-{kind}-sNN``); by default testbed runs only for the label "tb". ``series``: also
    each run's per-second shares (``moves``, from its delivered-bytes series; ``None`` without)."""
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
                # each flow's share of the flows' delivered bytes in 1 s bins from the warm-up
                # on (runs with output.flow_series), flows by base RTT
                "moves": _shares_over_time(d, flows, s["run"]) if series else None,
                # each flow's time held back by its receiver's window (s, whole run: Linux's
                # tcpi_rwnd_limited; the simulator's since 2026-11-30), None where unknown
                "rwnd": _rwnd_limited(flows),
            }
        )
    return runs


#: The bins of ``moves`` (s): a flow's share of each second's delivered bytes.
MOVE_BIN_S = 1.0


def _delivered_over_time(d: Path, flows: list[dict], edges) -> np.ndarray | None:
    """The bytes each flow delivered in each bin between ``edges`` (s; flows x bins), from the
    run's ``delivered_<flow>.parquet`` (``output.flow_series``): ``None`` when a flow's series
    is missing."""
    import numpy as np
    import pyarrow.parquet as pq

    files = [d / f"delivered_{x.get('name')}.parquet" for x in flows]
    if not all(f.exists() for f in files):
        return None
    rows = []
    for f in files:
        t = pq.read_table(f, columns=["t_s", "delivered_bytes"])
        v = np.interp(edges, t.column("t_s").to_numpy(), t.column("delivered_bytes").to_numpy())
        rows.append(np.diff(v))
    return np.array(rows)


def _shares_over_time(d: Path, flows: list[dict], run: dict) -> list[list[float]] | None:
    """Each flow's share of the bytes the flows delivered in each ``MOVE_BIN_S`` bin from the
    warm-up to the end (flows x bins, 4 decimals), from the run's delivered-bytes series:
    ``None`` when a flow's series is missing."""
    import numpy as np

    if not (d / f"delivered_{flows[0].get('name')}.parquet").exists():
        return None
    edges = np.arange(run["warmup_s"], run["duration_s"] + 1e-9, MOVE_BIN_S)
    r = _delivered_over_time(d, flows, edges)
    if r is None or len(edges) < 2:
        return None
    tot = r.sum(axis=0)
    if not np.all(tot > 0):
        return None
    return np.round(r / tot, 4).tolist()


def _retransmitted(flows: list[dict]) -> list[float] | None:
    """Each flow's retransmissions / segments sent (whole run), ``None`` where unknown."""
    if not all(isinstance(x.get("retransmits"), int) and x.get("segments_sent") for x in flows):
        return None
    return [round(x["retransmits"] / x["segments_sent"], 5) for x in flows]


def _rwnd_limited(flows: list[dict]) -> list[float] | None:
    """Each flow's ``rwnd_limited_s`` (s), ``None`` where a flow lacks it."""
    if not all(isinstance(x.get("rwnd_limited_s"), (int, float)) for x in flows):
        return None
    return [round(x["rwnd_limited_s"], 4) for x in flows]


def _schedule(flows: list[dict], kernel: bool) -> list[float] | None:
    """The flows' scheduled starts (s) from a run's summary, ``None`` where it lacks them."""
    key = "scheduled_start_s" if kernel else "start_s"
    if not all(isinstance(x.get(key), (int, float)) for x in flows):
        return None
    return [round(x[key], 6) for x in flows]


#: Where ``digest`` writes and ``table --kernel-digest`` reads by default.
DIGEST = ROOT / "docs" / "data" / "bbr_flows_kernel.json"


def _run_number(run: dict) -> int:
    """A kernel run's number, NN of its name ``{aqm}-{label}-NN`` (ValueError if it has none)."""
    tail = str(run["name"]).rsplit("-", 1)[-1]
    if "-" not in str(run["name"]) or not tail.isdigit():
        raise ValueError(f"run name {run['name']!r} is not AQM-LABEL-NN")
    return int(tail)


def _seed_number(run: dict) -> int:
    """A simulator run's seed, NN of its name ``{aqm}-{label}-sNN`` (ValueError if it has none)."""
    tail = str(run["name"]).rsplit("-s", 1)[-1]
    if "-s" not in str(run["name"]) or not tail.isdigit():
        raise ValueError(f"run name {run['name']!r} is not AQM-LABEL-sNN")
    return int(tail)


def write_digest(
    out: Path, path: Path, kernel_label: str = "tb", merge: bool = False, sim: bool = False
) -> None:
    """The kernel runs labelled ``kernel_label`` under ``out``, as :func:`load_runs` reads them,
    with the kernel's release and the date, in one JSON file; ``merge``: with the runs the file
    already holds (same label; a run under ``out`` replaces the file's run of its name), in run
    order, so runs made on other days, whose directories are gone, are kept. ``sim``: the
    simulator's runs labelled ``kernel_label`` instead (``{aqm}-{label}-sNN``, in seed order),
    without their per-second shares (``moves``: 1.6 kB a run, most of a run's line), so that
    thousands of seeds made over several sessions fit one file for ``table --sim-digest``."""
    import datetime
    import platform

    side = "simulator" if sim else "kernel"
    key = _seed_number if sim else _run_number
    kept: dict[str, list[dict]] = {aqm: [] for aqm in AQMS}
    if merge:  # the file first: a refusal comes before any run is read
        try:
            old = json.loads(path.read_text())
            if (theirs := old.get("label")) != kernel_label:
                _die(f"--merge: {path} holds runs labelled {theirs!r}, not {kernel_label!r}")
            if (kind := old.get("side", "kernel")) != side:
                _die(f"--merge: {path} holds the {kind}'s runs, not the {side}'s")
            kept = {aqm: sorted(old["runs"].get(aqm, []), key=key) for aqm in AQMS}
        except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
            _die(f"--merge: cannot read {path}: {e}")
    # The simulator's digest keeps no shares: its runs' series are not read.
    runs = {aqm: load_runs(out, aqm, kernel_label, not sim, series=not sim) for aqm in AQMS}
    if not any(runs.values()):
        _die(f"--out: no {side} runs labelled {kernel_label!r} under {out}")
    for aqm in AQMS:
        have = {r["name"]: r for r in kept[aqm]}
        have.update((r["name"], r) for r in runs[aqm])
        runs[aqm] = sorted(have.values(), key=key)
        if sim:
            runs[aqm] = [{k: v for k, v in r.items() if k != "moves"} for r in runs[aqm]]
    doc = {
        "what": f"{side} bbr per flow (benches/bbr_flows.py {'sim' if sim else 'testbed'}), "
        "goodput Mb/s by base RTT" + (" (no per-second shares)" if sim else ""),
        "side": side,
        # The release of the machine that writes the digest: write it on the testbed machine.
        "host_kernel": platform.release(),
        "written": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "label": kernel_label,
        "runs": runs,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_digest_text(doc))
    print(f"wrote {path}: " + ", ".join(f"{a} {len(r)} runs" for a, r in runs.items()))


def sim_runs(out: Path, aqm: str, label: str, digest: Path | None = None) -> list[dict]:
    """The simulator's runs of one AQM labelled ``label``: from ``digest`` (``digest --sim``)
    when given, else the run directories (:func:`load_runs`). A digest of another label or of
    the kernel's runs is refused in one line."""
    if digest is None:
        return load_runs(out, aqm, label)
    try:
        doc = json.loads(digest.read_text())
        runs = doc["runs"].get(aqm, [])
        for r in runs:
            _seed_number(r)
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
        _die(f"--sim-digest: cannot read {digest}: {e}")
    if doc.get("side") != "simulator":
        _die(
            f"--sim-digest: {digest} holds the kernel's runs (digest --sim writes the simulator's)"
        )
    if doc.get("label") != label:
        _die(f"--sim-digest: {digest} holds runs labelled {doc.get('label')!r}, not {label!r}")
    return runs


def _digest_text(doc: dict) -> str:
    """``doc`` as JSON with one run a line (compact; a run's changes stay one line's diff)."""
    head = {k: v for k, v in doc.items() if k != "runs"}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append(' "runs": {')
    for i, (aqm, runs) in enumerate(doc["runs"].items()):
        lines.append(f"  {json.dumps(aqm)}: [")
        lines += [
            "   " + json.dumps(r, separators=(",", ":")) + ("," if j < len(runs) - 1 else "")
            for j, r in enumerate(runs)
        ]
        lines.append("  ]" + ("," if i < len(doc["runs"]) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def kernel_runs(
    out: Path,
    aqm: str,
    kernel_label: str,
    digest: Path | list[Path] | None,
    only: list[int] | None = None,
    count: int | None = None,
) -> list[dict]:
    """The kernel's runs of one AQM: from ``digest`` when given, else the run directories;
    ``only``: the runs of these numbers (``{aqm}-{label}-NN``) only; ``count``: the first
    ``count`` of them by number (fewer: refused in one line, so that a look fixed in advance
    at that many runs is that look). Several digests (the second look of docs/testbed.md
    pools two samples): each one's runs chosen so, then together; a run name in two of them is
    refused."""
    if isinstance(digest, list):
        runs = [r for d in digest for r in kernel_runs(out, aqm, kernel_label, d, only, count)]
        seen = Counter(r["name"] for r in runs)
        twice = sorted(n for n, k in seen.items() if k > 1)
        if twice:
            _die(f"--kernel-digest: run {twice[0]} is in two of the digests")
        return runs
    if digest is None:
        runs = load_runs(out, aqm, kernel_label, kernel=True)
    else:
        try:
            runs = json.loads(digest.read_text())["runs"].get(aqm, [])
        except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
            _die(f"--kernel-digest: cannot read {digest}: {e}")
    if only is not None:
        runs = [r for r in runs if _run_number(r) in only]
    if count is None:
        return runs
    if len(runs) < count:
        _die(f"--kernel-count: {count} runs asked for, the kernel's {aqm} has {len(runs)}")
    return sorted(runs, key=_run_number)[:count]


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


def _within(lo: float, hi: float) -> str:
    """The verdict on a ratio's interval: "yes" (within 10 %) if all of it lies in [0.9, 1.1],
    "no" if all of it lies outside, else "undecided" (the runs cannot tell). On the 95 %
    interval this is a test at 2.5 % each side; on the 90 % interval it is the two one-sided
    tests at 5 % (Schuirmann 1987, the equivalence test of bioequivalence studies), and for the
    claim "every flow within 10 %" the intersection-union test of the flows' tests needs no
    correction for their number (Berger 1982)."""
    if 0.9 <= lo and hi <= 1.1:
        return "yes"
    return "no" if hi < 0.9 or lo > 1.1 else "undecided"


def _pct(alpha: float, tail: int = 2) -> str:
    """A level as the table's headers write it: ``_pct(0.05)`` "95%", ``_pct(0.025)``
    "97.5%"; ``tail=1``: the one-sided test's level itself (``_pct(0.05, 1)`` "5%")."""
    return f"{(alpha if tail == 1 else 1 - alpha) * 100:g}%"


def _exact_power(K, S, looks: int = 1) -> None:
    """How many flows an exact simulator would be shown within 10 % for, with these numbers of
    runs and the two sides' run-to-run spreads: per flow the chance that the interval of the
    ratio lies in [0.9, 1.1] when the true ratio is 1 (normal approximation, the ratio's
    standard error by the delta method: sqrt(cv_k^2 / n_k + cv_s^2 / n_s)); ``looks``: at the
    levels :func:`table` widens its intervals to."""
    import numpy as np
    from scipy.stats import norm

    cv = [x.std(axis=0, ddof=1) / x.mean(axis=0) for x in (K, S)]
    sig = np.sqrt(cv[0] ** 2 / len(K) + cv[1] ** 2 / len(S))
    out = []
    for z in (norm.ppf(1 - 0.025 / looks), norm.ppf(1 - 0.05 / looks)):
        m = 0.1 / sig - z
        out.append(np.where(m > 0, 2 * norm.cdf(m) - 1, 0.0).sum())
    print(
        f"\nan exact simulator would be shown within 10 % for {out[0]:.1f} "
        f"({_pct(0.05 / looks).replace('%', ' %')} interval) and "
        f"{out[1]:.1f} (TOST {_pct(0.05 / looks, 1).replace('%', ' %')}) "
        f"of these {len(sig)} flows on average with these runs "
        f"(the ratio's s.e. {sig.min():.3f}-{sig.max():.3f})"
    )


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
    digest: Path | list[Path] | None = None,
    sim_seeds: list[int] | None = None,
    kernel_only: list[int] | None = None,
    kernel_count: int | None = None,
    looks: int = 1,
    sim_count: int | None = None,
    sim_digest: Path | None = None,
) -> dict[str, list[tuple]]:
    """Prints the per-flow and distribution tables (Markdown) of the runs under ``out``: the
    kernel's runs labelled ``kernel_label`` (or those of ``digest``; ``kernel_only``: those
    numbers only; ``kernel_count``: the first that many, :func:`kernel_runs`) against the
    simulator runs labelled ``label`` (``sim_seeds``: those seeds only). Returns, per AQM, each
    flow's (base RTT, ratio sim / kernel, 95 % interval, 90 % interval) for
    :func:`plot_ratios`. ``looks``: the criterion's intervals widened for that many looks at
    the question (Bonferroni: levels 1 - 0.05 / looks and 1 - 0.10 / looks, so 97.5 % and
    95 % for two); the per-run statistics keep their 95 % intervals. ``sim_count``: each AQM
    must have that many simulator runs (fewer: refused in one line, so that a look fixed at
    that many seeds is that look). ``sim_digest``: the simulator's runs from that file
    (:func:`sim_runs`) instead of the run directories."""
    import numpy as np

    rng = np.random.default_rng(1)
    sides, ratios_of = {}, {}
    for aqm in AQMS:  # every AQM's runs checked before anything is printed
        tb = kernel_runs(out, aqm, kernel_label, digest, kernel_only, kernel_count)
        sim = _only_seeds(sim_runs(out, aqm, label, sim_digest), sim_seeds)
        if sim_count is not None and len(sim) < sim_count:
            _die(f"--sim-count: {sim_count} seeds asked for, the simulator's {aqm} has {len(sim)}")
        if tb and sim:
            _check_same_flows(tb, sim)
            sides[aqm] = (tb, sim)
    for aqm, (tb, sim) in sides.items():
        loads = [r["load"] for r in tb if r["load"] is not None]
        name = {"dt": "FIFO", "codel": "CoDel"}[aqm]
        print(
            f"\n{name}: kernel {len(tb)} runs (load average {min(loads):.1f}-{max(loads):.1f}), "
            f"simulator {len(sim)} seeds"
        )
        ratios_of[aqm] = _flow_table(tb, sim, boot, rng, looks)
        _run_stats(tb, sim, boot, rng)
        _losses(tb, sim)
        _first_flow(tb, sim)
        _moves(tb, sim, min(boot, 2000), rng)
        _rwnd_by_start(tb, sim)
        _largest(tb, sim)
    return ratios_of


def _flow_table(tb: list[dict], sim: list[dict], boot: int, rng, looks: int) -> list[tuple]:
    """:func:`table`'s criterion: per flow the means, the ratio with its bootstrap intervals
    (runs resampled on each side, ``boot`` times, from ``rng``), the verdicts, Welch's test
    with Holm's correction, then what an exact simulator would show and the totals. Returns
    each flow's (base RTT, ratio, wide interval, TOST interval)."""
    import numpy as np
    from scipy import stats

    print(
        "\n| base RTT (ms) | kernel mean +- s.e. (Mb/s) | sim mean +- s.e. "
        f"| sim / kernel ({_pct(0.05 / looks)} CI) | within 10%? | {_pct(0.10 / looks)} CI "
        f"| TOST {_pct(0.05 / looks, 1)} | Welch p | Holm p |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    K = np.array([r["gp"] for r in tb])
    S = np.array([r["gp"] for r in sim])
    rows = []
    for j, rtt in enumerate(tb[0]["rtt"]):
        k, s = K[:, j], S[:, j]
        idx_k = rng.integers(0, len(k), (boot, len(k)))
        idx_s = rng.integers(0, len(s), (boot, len(s)))
        ratios = s[idx_s].mean(axis=1) / k[idx_k].mean(axis=1)
        q = (2.5 / looks, 5 / looks, 100 - 5 / looks, 100 - 2.5 / looks)
        lo, lo90, hi90, hi = np.percentile(ratios, q)
        p = stats.ttest_ind(s, k, equal_var=False).pvalue
        rows.append((rtt, k, s, (lo, hi), (lo90, hi90), p))
    holm = _holm([r[5] for r in rows])
    for (rtt, k, s, ci95, ci90, p), ph in zip(rows, holm, strict=True):
        print(
            f"| {rtt} | {k.mean():.1f} +- {_se(k):.1f} | {s.mean():.1f} +- {_se(s):.1f} | "
            f"{s.mean() / k.mean():.2f} ({ci95[0]:.2f}-{ci95[1]:.2f}) | {_within(*ci95)} | "
            f"{ci90[0]:.2f}-{ci90[1]:.2f} | {_within(*ci90)} | {p:.4f} | {ph:.3f} |"
        )
    _exact_power(K, S, looks)
    tot_k, tot_s = K.sum(axis=1), S.sum(axis=1)
    qk, qs = np.mean([r["queue"] for r in tb]), np.mean([r["queue"] for r in sim])
    print(
        f"\ntotal goodput: kernel {tot_k.mean():.1f} +- {_se(tot_k):.1f}, "
        f"sim {tot_s.mean():.1f} +- {_se(tot_s):.1f} Mb/s; "
        f"mean queue kernel {qk:.1f}, sim {qs:.1f} pkts"
    )
    return [(rtt, s.mean() / k.mean(), c95, c90) for rtt, k, s, c95, c90, _ in rows]


def _run_stats(tb: list[dict], sim: list[dict], boot: int, rng) -> None:
    """:func:`table`'s per-run distribution statistics (:func:`stats_of`): each side's mean
    with a 95 % bootstrap interval, the difference's, and a Mann-Whitney test."""
    import numpy as np
    from scipy import stats

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


def _largest(tb: list[dict], sim: list[dict]) -> None:
    """Which flow (by base RTT) was the largest in how many runs, on each side."""
    import numpy as np

    rtts = tb[0]["rtt"]
    hk = np.bincount(np.array([r["gp"] for r in tb]).argmax(axis=1), minlength=len(rtts))
    hs = np.bincount(np.array([r["gp"] for r in sim]).argmax(axis=1), minlength=len(rtts))
    print(
        "\nlargest flow's base RTT (runs): "
        + "; ".join(
            f"{rtt} ms: kernel {a}, sim {b}"
            for rtt, a, b in zip(rtts, hk, hs, strict=True)
            if a or b
        )
    )


def plot_ratios(ratios_of: dict[str, list[tuple]], path: Path, note: str, looks: int = 1) -> None:
    """The criterion's figure: each flow's ratio of mean goodputs (simulator / kernel) with its
    95 % interval (thin) and 90 % interval (thick: the TOST's), against the band of +-10 %, one
    panel per AQM (``ratios_of`` from :func:`table`; ``note``: the runs, under the title;
    ``looks``: the levels :func:`table` widened the intervals to, for the legend)."""
    wide, tost = (_pct(a / looks).replace("%", " %") for a in (0.05, 0.10))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(ratios_of), figsize=(10, 3.8), sharey=True, squeeze=False)
    for ax, (aqm, rows) in zip(axes[0], ratios_of.items(), strict=True):
        ax.axhspan(0.9, 1.1, color="C2", alpha=0.12, label="within 10 %")
        ax.axhline(1.0, color="grey", lw=0.8)
        for rtt, r, c95, c90 in rows:
            shown = 0.9 <= c95[0] and c95[1] <= 1.1
            colour = "C0" if shown else "C3"
            ax.plot([rtt, rtt], c95, color=colour, lw=1)
            ax.plot([rtt, rtt], c90, color=colour, lw=4, alpha=0.6)
            ax.plot(rtt, r, "o", color=colour, ms=4)
        ax.set_title({"dt": "FIFO (300 packets)", "codel": "CoDel"}.get(aqm, aqm))
        ax.set_xlabel("base RTT (ms)")
        ax.set_xticks([row[0] for row in rows])
        ax.grid(alpha=0.3)
    lo = min(0.87, *(c[0] - 0.01 for rows in ratios_of.values() for _, _, c, _ in rows))
    hi = max(1.13, *(c[1] + 0.01 for rows in ratios_of.values() for _, _, c, _ in rows))
    axes[0][0].set_ylim(lo, hi)
    axes[0][0].set_ylabel("goodput, simulator / kernel")
    axes[0][0].plot([], [], color="C0", lw=4, alpha=0.6, label=f"shown within ({wide})")
    axes[0][0].plot([], [], color="C3", lw=4, alpha=0.6, label=f"not shown ({wide})")
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.suptitle(
        f"BBR v1, 10 flows, 100 Mb/s: per-flow goodput ratio (thin {wide}, thick {tost})\n{note}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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


def _schedules(sim: list[dict]):
    """A run's flows' scheduled starts: its own (``start``) or, for a kernel run from before
    they were recorded, its seed's simulator run's; ``None`` when neither is known."""
    by_seed = {r["seed"]: r["start"] for r in sim if r.get("start") and r.get("seed") is not None}
    return lambda r: r.get("start") or by_seed.get(r.get("seed"))


def _first_flow(tb: list[dict], sim: list[dict]) -> None:
    """Prints how far above its base RTT's mean share the first flow to start (by the run's
    seed's schedule) ends, and how often it is the largest, both sides. A kernel run's schedule
    is its own (``scheduled_start_s``) or, for older runs, its seed's simulator run's."""
    import numpy as np

    schedule = _schedules(sim)

    def first(runs):
        shares, firsts = [], []
        for r in runs:
            sched = schedule(r)
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


#: ``table``'s lags (s) for how a flow's share persists.
MOVE_LAGS = (1, 5, 10)


def move_stats(moves) -> dict[str, float]:
    """How the shares of a set of runs move: ``moves`` is runs x flows x bins of per-bin shares
    (:func:`_shares_over_time`). The correlation of a flow's share in a bin with its share
    ``L`` s later (pooled over runs, flows and bins; 1 means the split never changes), of its
    mean share over the first half of the window with its mean over the second half, and the
    mean absolute change of a flow's share from one bin to the next (points of share)."""
    import numpy as np

    m = np.asarray(moves, dtype=float)
    n = m.shape[2]
    out = {}
    for lag in MOVE_LAGS:
        k = round(lag / MOVE_BIN_S)
        if k < n:
            out[f"{lag} s later"] = float(
                np.corrcoef(m[:, :, :-k].ravel(), m[:, :, k:].ravel())[0, 1]
            )
    h = n // 2
    out["halves"] = float(
        np.corrcoef(m[:, :, :h].mean(axis=2).ravel(), m[:, :, h:].mean(axis=2).ravel())[0, 1]
    )
    out["1-bin change"] = float(100 * np.abs(np.diff(m, axis=2)).mean())
    return out


def _moves(tb: list[dict], sim: list[dict], boot: int, rng) -> None:
    """Prints :func:`move_stats` of both sides' runs that have delivered-bytes series, each with
    a 95 % bootstrap interval (runs resampled)."""
    import numpy as np

    k = [r["moves"] for r in tb if r.get("moves")]
    s = [r["moves"] for r in sim if r.get("moves")]
    if len(k) >= 2 and not s:
        print(
            "how the shares move: the simulator's runs have no per-second shares here "
            "(a --sim-digest keeps none; their run directories have them)"
        )
    if len(k) < 2 or len(s) < 2 or np.shape(k)[1:] != np.shape(s)[1:]:
        return

    def with_ci(runs):
        runs = np.asarray(runs)
        point = move_stats(runs)
        draws = [move_stats(runs[rng.integers(0, len(runs), len(runs))]) for _ in range(boot)]
        return {
            key: (v, *np.percentile([d[key] for d in draws], [2.5, 97.5]))
            for key, v in point.items()
        }

    a, b = with_ci(k), with_ci(s)
    print(
        f"how the shares move ({MOVE_BIN_S:g} s bins from the warm-up on; kernel {len(k)} runs, "
        f"sim {len(s)}): correlation of a flow's share with its share "
        + "; ".join(
            f"{key}: kernel {a[key][0]:.3f} ({a[key][1]:.3f}-{a[key][2]:.3f}), "
            f"sim {b[key][0]:.3f} ({b[key][1]:.3f}-{b[key][2]:.3f})"
            for key in a
            if key != "1-bin change"
        )
        + f"; mean change from one bin to the next: kernel {a['1-bin change'][0]:.2f} "
        f"({a['1-bin change'][1]:.2f}-{a['1-bin change'][2]:.2f}), sim {b['1-bin change'][0]:.2f} "
        f"({b['1-bin change'][1]:.2f}-{b['1-bin change'][2]:.2f}) points"
    )


def _rwnd_by_start(tb: list[dict], sim: list[dict]) -> None:
    """Prints the mean time the flows were held back by their receivers' windows (whole run,
    s), by their place in the seed's start schedule, both sides, and the share of flows held
    back at all."""
    import numpy as np

    schedule = _schedules(sim)

    def by_start(runs):
        rows = []
        for r in runs:
            sched = schedule(r)
            if r.get("rwnd") is None or sched is None:
                continue
            rows.append(np.asarray(r["rwnd"])[np.argsort(sched, kind="stable")])
        return np.array(rows) if len(rows) >= 2 else None

    k, s = by_start(tb), by_start(sim)
    if k is None or s is None:
        return
    print(
        f"held back by the receive window (s, whole run; kernel {len(k)} runs, sim {len(s)}), "
        "by start order 1st..last: kernel "
        + " ".join(f"{x:.3f}" for x in k.mean(axis=0))
        + "; sim "
        + " ".join(f"{x:.3f}" for x in s.mean(axis=0))
        + f"; all flows: kernel {k.mean():.3f}, sim {s.mean():.3f}; flows held back at all: "
        f"kernel {(k > 0).mean():.0%}, sim {(s > 0).mean():.0%}"
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
    digest: Path | list[Path] | None = None,
    kernel_label: str = "tb",
    sim_seeds: list[int] | None = None,
    kernel_only: list[int] | None = None,
    kernel_count: int | None = None,
    sim_digest: Path | None = None,
) -> None:
    """Per-flow mean goodput +- one standard error by base RTT, the kernel's (runs labelled
    ``kernel_label``, or ``digest``'s; ``kernel_only``: those numbers only; ``kernel_count``:
    the first that many) against the simulator's (``sim_seeds`` only, if given; from
    ``sim_digest`` when given), one panel per AQM."""
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
                runs = kernel_runs(out, aqm, kernel_label, digest, kernel_only, kernel_count)
            else:
                runs = _only_seeds(sim_runs(out, aqm, label, sim_digest), sim_seeds)
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


#: ``lt``: a stretch of gain 1 with an unchanged bandwidth estimate at least this long (s) is
#: taken for BBR v1's long-term (policer) rate in use: PROBE_BW's gain cycle has a 1.25 phase
#: every 8 min RTTs (under 1 s here), and the long-term rate holds for 48 round trips.
LT_STRETCH_S = 1.0


def lt_stretches(t, bw, gain) -> list[tuple[float, float, float]]:
    """(start, end, bandwidth) of each stretch of samples with pacing gain 1 and the same
    positive bandwidth estimate lasting at least ``LT_STRETCH_S``: the long-term rate's
    signature in a series of BBR's state (the kernel's TCP_CC_INFO or the simulator's)."""
    out, i, n = [], 0, len(t)
    while i < n:
        if gain[i] == 1.0 and bw[i] > 0:
            j = i
            while j + 1 < n and gain[j + 1] == 1.0 and bw[j + 1] == bw[i]:
                j += 1
            if t[j] - t[i] >= LT_STRETCH_S:
                out.append((float(t[i]), float(t[j]), float(bw[i])))
            i = j + 1
        else:
            i += 1
    return out


def _kernel_states(d: Path) -> dict[str, tuple] | None:
    """A kernel run's BBR state per flow (``flow_<flow>.parquet``): name -> (scheduled start,
    t, bandwidth in Mb/s of payload, pacing gain, None)."""
    import pyarrow.parquet as pq

    s = json.loads((d / "summary.json").read_text())
    out = {}
    for f in s["flows"]:
        p = d / f"flow_{f['name']}.parquet"
        if f.get("error") or not p.exists():
            return None
        x = pq.read_table(p)
        if "bbr_bw_bps" not in x.column_names:
            return None
        bw = x.column("bbr_bw_bps").to_numpy() / 1e6
        gain = x.column("bbr_pacing_gain").to_numpy()
        out[f["name"]] = (f["scheduled_start_s"], x.column("t_s").to_numpy(), bw, gain, None)
    return out


def _sim_states(d: Path, probe: Path, step_ms: int = 20) -> dict[str, tuple] | None:
    """A simulator run's BBR state per flow, from ``bbr_probe`` on its ``config.json`` every
    ``step_ms``: name -> (start, t, bandwidth in Mb/s of payload, pacing gain, lt flag)."""
    import re
    import subprocess

    import numpy as np

    if not (d / "config.json").exists() or not (d / "summary.json").exists():
        return None
    s = json.loads((d / "summary.json").read_text())
    cfg = json.loads((d / "config.json").read_text())
    # bbr_probe prints rates in Mb/s of whole packets (mss + header + 12 B of timestamps when
    # on); the kernel's are of payload
    tcp = cfg["flows"][0]["tcp"]
    payload = tcp["mss"] / (tcp["mss"] + tcp["header_bytes"] + (12 if tcp["timestamps"] else 0))
    txt = subprocess.run(
        [str(probe), str(d / "config.json"), str(step_ms)], capture_output=True, text=True
    ).stdout
    rows: dict[int, list] = {}
    for line in txt.splitlines():
        kv = dict(re.findall(r" (bw|pg|lt) ([0-9.]+)", line))
        w = line.split()
        rows.setdefault(int(w[1]), []).append(
            (float(w[0]), float(kv["bw"]) * payload, float(kv["pg"]), int(kv["lt"]))
        )
    out = {}
    for i, f in enumerate(s["flows"]):
        a = np.array(rows.get(i, []))
        if len(a) == 0:
            return None
        out[f["name"]] = (f["start_s"], a[:, 0], a[:, 1], a[:, 2], a[:, 3])
    return out


def _lt_summary(side: list[dict]) -> dict[str, str | None]:
    """:func:`lt_table`'s figures of one side's runs (name -> (start, t, bw, gain, flag) each):
    by start order, the first long-term stretch's start, rate and rate over the highest
    estimate before it; the share of 10-30 s in stretches; the simulator's flag's share of
    it."""
    import numpy as np

    first, pin, ratio, share, flagged = [], [], [], [], []
    for states in side:
        order = sorted(states, key=lambda n: states[n][0])
        for k, name in enumerate(order):
            _, t, bw, gain, flag = states[name]
            st = lt_stretches(t, bw, gain)
            inside = np.zeros(len(t), bool)
            for a, b, _ in st:
                inside |= (t >= a) & (t <= b)
            window = (t >= 10) & (t <= 30)
            share.append(inside[window].mean())
            if flag is not None and inside[window].any():
                flagged.append((inside & (flag == 1))[window].sum() / inside[window].sum())
            if st:
                a, _, v = st[0]
                before = bw[(t < a) & np.isfinite(bw)]
                first.append((k, a))
                pin.append((k, v))
                ratio.append((k, v / before.max() if before.size and before.max() > 0 else np.nan))

    def by_order(xs):
        xs = np.array(xs)
        return " ".join(
            f"{np.nanmean(xs[xs[:, 0] == k, 1]):.2f}" if (xs[:, 0] == k).any() else "-"
            for k in range(10)
        )

    return {
        "starts (s)": by_order(first),
        "pinned at (Mb/s)": by_order(pin),
        "pinned / highest before": by_order(ratio),
        "share of 10-30 s": f"{np.mean(share):.3f}",
        "flagged": f"{np.mean(flagged):.2f}" if flagged else None,
    }


def lt_table(out: Path, label: str, kernel_label: str, probe: Path) -> None:
    """Prints, per AQM, for the kernel's runs with BBR state series and the simulator's runs
    of the same seeds: when each flow (by start order) first shows the long-term rate
    (:func:`lt_stretches`), the rate it is pinned at, that rate over the highest estimate
    before it, and the share of 10-30 s spent so; for the simulator, how much of that time its
    own ``lt_use_bw`` flag was set (the proxy's precision)."""

    compared, skipped = 0, []
    for aqm in AQMS:
        prefix = f"{aqm}-{kernel_label}-"
        kernel, sim = [], []
        for d in sorted(out.glob(prefix + "[0-9]*")):
            if not d.name[len(prefix) :].isdigit():
                continue
            k = _kernel_states(d)
            if k is None:
                continue
            seed = int(d.name[len(prefix) :])
            si = _sim_states(out / f"{aqm}-{label}-s{seed:02d}", probe)
            if si is None:
                continue
            kernel.append(k)
            sim.append(si)
        if len(kernel) < 2:
            skipped.append(
                f"{aqm}: fewer than 2 kernel runs with BBR state and their seeds' {label!r} runs"
            )
            continue
        compared += 1
        a, b = _lt_summary(kernel), _lt_summary(sim)
        name = {"dt": "FIFO", "codel": "CoDel"}[aqm]
        print(
            f"\n{name}: BBR's long-term rate, kernel {len(kernel)} runs, simulator the same seeds"
        )
        print("by start order 1st..last")
        for key in ("starts (s)", "pinned at (Mb/s)", "pinned / highest before"):
            print(f"  first {key}: kernel {a[key]}; sim {b[key]}")
        print(
            f"  share of 10-30 s at the long-term rate: kernel {a['share of 10-30 s']}, sim "
            f"{b['share of 10-30 s']} (the simulator's lt_use_bw set in {b['flagged']} of it)"
        )
    if compared:
        for line in skipped:
            print(line, file=sys.stderr)
    else:
        _die(
            f"--kernel-label / --label: no kernel runs {kernel_label!r} with BBR state series "
            f"(output.flow_series, runs since 2026-11-30) beside simulator runs {label!r} of "
            f"their seeds under {out}"
        )


#: ``--plot-time``'s bins (s) over the whole run.
TIME_BIN_S = 0.5


def _time_profile(
    out: Path, aqm: str, label: str, kernel: bool, only: list[int] | None = None
) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Over the runs of one side with delivered-bytes series (``only``: those numbers only):
    their number, the mean Jain's index of the flows' throughputs in each ``TIME_BIN_S`` bin
    from 0 to 30 s, and the mean share of the flow that starts first (by the seed's schedule)
    in each bin."""
    import numpy as np

    prefix = f"{aqm}-{label}-" if kernel else f"{aqm}-{label}-s"
    edges = np.arange(0.0, 30.0 + 1e-9, TIME_BIN_S)
    jain, first = [], []
    for d in out.glob(prefix + "[0-9]*"):
        number = d.name[len(prefix) :]
        if not number.isdigit() or not (d / "summary.json").exists():
            continue
        if only is not None and int(number) not in only:
            continue
        s = json.loads((d / "summary.json").read_text())
        if any(x.get("error") for x in s["flows"]) or s["run"].get("duration_s") != 30.0:
            continue
        r = _delivered_over_time(d, s["flows"], edges)
        if r is None:
            continue
        key = "scheduled_start_s" if kernel else "start_s"
        if not all(key in x for x in s["flows"]):
            continue
        i = int(np.argmin([x[key] for x in s["flows"]]))
        tot, sq = r.sum(axis=0), (r**2).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            jain.append(np.where(sq > 0, tot**2 / (len(r) * sq), np.nan))
            first.append(np.where(tot > 0, r[i] / tot, np.nan))
    if len(jain) < 2:
        return None
    return len(jain), np.nanmean(jain, axis=0), np.nanmean(first, axis=0)


def plot_time(
    out: Path,
    path: Path,
    label: str,
    kernel_label: str,
    sim_seeds: list[int] | None = None,
    kernel_only: list[int] | None = None,
) -> None:
    """Jain's index of the flows' throughputs and the first flow's share over the run (0.5 s
    bins, means over the runs with delivered-bytes series; ``sim_seeds``, ``kernel_only``: those
    runs only), kernel against simulator, one column per AQM."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(2, len(AQMS), figsize=(10, 6), sharex=True, sharey="row")
    t = np.arange(0.0, 30.0, TIME_BIN_S) + TIME_BIN_S / 2
    drawn = False
    for col, aqm in enumerate(AQMS):
        for kernel, lab, name, colour, only in (
            (True, kernel_label, "kernel bbr", "C0", kernel_only),
            (False, label, f"simulator {label!r}", "C3", sim_seeds),
        ):
            prof = _time_profile(out, aqm, lab, kernel, only)
            if prof is None:
                continue
            drawn = True
            n, jain, first = prof
            axes[0, col].plot(t, jain, color=colour, label=f"{name} ({n} runs)")
            axes[1, col].plot(t, first, color=colour, label=f"{name} ({n} runs)")
        axes[0, col].set_title({"dt": "FIFO (300 packets)", "codel": "CoDel"}[aqm])
        axes[1, col].set_xlabel("time (s); flows start in [0, 1 s], warm-up ends at 10 s")
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
            ax.axvline(10, color="grey", lw=0.8, ls=":")
        if axes[0, col].get_legend_handles_labels()[0]:
            axes[0, col].legend()
    if not drawn:
        _die(f"--plot-time: no runs with delivered-bytes series under {out}")
    axes[0, 0].set_ylabel("Jain's index of the flows'\nthroughputs in 0.5 s")
    axes[1, 0].set_ylabel("share of the flow\nthat starts first")
    fig.suptitle("BBR v1, 10 flows, 100 Mb/s: how evenly the link is split over the run")
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


def _testbed_options(ap: argparse.ArgumentParser) -> None:
    """The options of ``testbed``: which runs, and the end hosts' settings (variants)."""
    g = ap.add_argument_group("testbed (the kernel's runs)")
    g.add_argument("--runs", type=int, default=10, help="runs per AQM")
    g.add_argument("--aqm", choices=AQMS, help="this AQM only")
    g.add_argument(
        "--seeded",
        action="store_true",
        help="run NN uses seed NN (simulator seed NN's start schedule), not seed 1",
    )
    g.add_argument(
        "--first",
        type=int,
        default=1,
        help="number runs (and, --seeded, seeds) from this one at least",
    )
    g.add_argument(
        "--sysctl",
        action="append",
        default=[],
        help="an extra net.ipv4.tcp_* setting of the end namespaces, KEY=VALUE",
    )
    g.add_argument(
        "--route",
        action="append",
        default=[],
        help="an extra metric of the end namespaces' routes, KEY=VALUE (quickack=1)",
    )
    g.add_argument(
        "--neighbours",
        default="resolve",
        choices=("resolve", "static"),
        help="the end hosts' neighbour entries (aqmlab testbed --neighbours; static is a "
        "variant: give it its own --kernel-label)",
    )
    g.add_argument(
        "--blind",
        action="store_true",
        help="print each run's load averages only, not its goodputs (a sample not to be "
        "looked at before its look; `count` says how far it has come)",
    )


def _sim_options(ap: argparse.ArgumentParser) -> None:
    """The options of ``sim``: which seeds, and the simulator's variants."""
    g = ap.add_argument_group("sim (the simulator's runs)")
    g.add_argument("--seeds", default="1-30", help="seeds, LO-HI")
    g.add_argument(
        "--tcp", action="append", default=[], help="an extra [tcp] setting, KEY=VALUE (TOML)"
    )
    g.add_argument(
        "--dither",
        type=float,
        default=0.0,
        help="move each seed's access delays by up to this many ms (uniform, per seed)",
    )


def _table_options(ap: argparse.ArgumentParser) -> None:
    """The options of ``table``: which runs are compared, and the figures."""
    g = ap.add_argument_group("table (the comparison)")
    g.add_argument("--boot", type=int, default=10000, help="bootstrap resamples")
    g.add_argument("--sim-seeds", help="the simulator's seeds LO-HI only (as --seeded kernel runs)")
    g.add_argument("--kernel-runs", help="the kernel's runs LO-HI only (their numbers)")
    g.add_argument(
        "--sim-count",
        type=int,
        help="each AQM's simulator seeds (of --sim-seeds), at least N (fewer: refused)",
    )
    g.add_argument(
        "--kernel-count", type=int, help="each AQM's first N kernel runs by number (fewer: refused)"
    )
    g.add_argument(
        "--kernel-digest",
        type=Path,
        action="append",
        help="the kernel's runs from this digest (docs/data/bbr_flows_kernel.json); given "
        "twice, both digests' runs together (--kernel-count applies to each)",
    )
    g.add_argument(
        "--sim-digest",
        type=Path,
        help="the simulator's runs labelled --label from this digest (digest --sim) instead "
        "of the run directories",
    )
    g.add_argument(
        "--looks",
        type=int,
        default=1,
        help="widen the per-flow intervals for this many looks at the question (Bonferroni: "
        "2 gives the 97.5 %% interval and the TOST at 2.5 %%)",
    )
    g.add_argument("--plot", help="also plot the per-flow means to this PNG")
    g.add_argument(
        "--plot-ratio",
        help="also plot each flow's ratio with its 95 %% and 90 %% intervals to this PNG",
    )
    g.add_argument(
        "--plot-time",
        help="also plot Jain's index and the first flow's share over the run to this PNG "
        "(runs with delivered-bytes series)",
    )


class _Parser(argparse.ArgumentParser):
    """argparse's parser with a bad option value in one line (the option and what was wrong),
    exit code 2, as the bench's own refusals."""

    def error(self, message: str) -> NoReturn:
        print(message, file=sys.stderr)
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    """The command line: the job, the options several jobs share, then each job's own."""
    ap = _Parser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("testbed", "sim", "table", "digest", "shift", "lt", "count"))
    ap.add_argument(
        "--out",
        default="runs/bbr_flows",
        help="the runs directory (written, and read by every job)",
    )
    ap.add_argument("--label", default="sim", help="sim, table: the simulator runs' label")
    ap.add_argument("--kernel-label", default="tb", help="testbed, table: the kernel runs' label")
    ap.add_argument(
        "--access-delays",
        help="testbed, sim: the ten access links' delays in ms, comma-separated (a variant: "
        "give it its own label), instead of the file's 1, 3, ..., 19",
    )
    ap.add_argument(
        "--digest",
        type=Path,
        help=f"digest: the file to write (default {DIGEST.relative_to(ROOT)}; with --sim, "
        "docs/data/bbr_flows_sim_LABEL.json)",
    )
    ap.add_argument(
        "--sim",
        action="store_true",
        help="digest: the simulator's runs labelled --label (without their per-second shares), "
        "not the kernel's",
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="digest: keep the runs the file holds (a run under --out replaces its namesake)",
    )
    ap.add_argument("--a", help="shift: the first runs, LABEL (simulator) or kernel:LABEL")
    ap.add_argument("--b", help="shift: the second runs, as --a")
    _testbed_options(ap)
    _sim_options(ap)
    _table_options(ap)
    return ap


def _check_args(args: argparse.Namespace, access: list[float] | None) -> None:
    """Every option refused before any work: one line, exit 2."""
    if not 0 <= args.dither < 1:
        _die(f"--dither: from 0 to 1 ms (got {args.dither})")
    if args.dither > min(access or FILE_ACCESS_MS):
        _die(f"--dither: at most the smallest access delay, {min(access or FILE_ACCESS_MS)} ms")
    if args.first < 1:
        _die(f"--first: a run number, 1 or more (got {args.first})")
    if args.kernel_count is not None and args.kernel_count < 1:
        _die(f"--kernel-count: a number of runs, 1 or more (got {args.kernel_count})")
    if args.sim_count is not None and args.sim_count < 1:
        _die(f"--sim-count: a number of seeds, 1 or more (got {args.sim_count})")
    if args.looks < 1:
        _die(f"--looks: a number of looks, 1 or more (got {args.looks})")
    if args.kernel_count is not None and args.plot_time:
        _die("--kernel-count: not with --plot-time (it reads the run directories' series)")
    if args.sim_digest is not None and args.plot_time:
        _die("--sim-digest: not with --plot-time (it reads the run directories' series)")
    for opt, png in (
        ("--plot", args.plot),
        ("--plot-ratio", args.plot_ratio),
        ("--plot-time", args.plot_time),
    ):
        if png and not Path(png).resolve().parent.is_dir():
            _die(f"{opt}: {png}: its directory does not exist")


def _table_job(args: argparse.Namespace, out: Path) -> None:
    """``table`` and its figures, as the command line asks."""
    seeds = _seeds(args.sim_seeds) if args.sim_seeds else None
    only = _seeds(args.kernel_runs, "--kernel-runs") if args.kernel_runs else None
    digests, klabel = args.kernel_digest, args.kernel_label
    digest = digests[0] if digests and len(digests) == 1 else digests
    count = args.kernel_count
    ratios_of = table(
        out,
        args.boot,
        args.label,
        klabel,
        digest,
        seeds,
        only,
        count,
        args.looks,
        args.sim_count,
        args.sim_digest,
    )
    if args.plot_ratio and not ratios_of:
        _die("--plot-ratio: no AQM has both kernel and simulator runs to draw")
    if args.plot_ratio:
        kname = klabel if not digests else " + ".join(d.name for d in digests)
        note = f"kernel {kname}, simulator {args.label!r}"
        plot_ratios(ratios_of, Path(args.plot_ratio), note, args.looks)
    if args.plot:
        plot(out, Path(args.plot), args.label, digest, klabel, seeds, only, count, args.sim_digest)
    if args.plot_time:
        plot_time(out, Path(args.plot_time), args.label, klabel, seeds, only)


def main() -> int:
    args = _parser().parse_args()
    out = Path(args.out)
    access = _access(args.access_delays) if args.access_delays else None
    _check_args(args, access)
    if args.what in ("testbed", "sim"):  # the jobs that write runs; the others only read
        out.mkdir(parents=True, exist_ok=True)
    if args.what == "testbed":
        sysctls = dict(x.split("=", 1) for x in args.sysctl)
        aqms = (args.aqm,) if args.aqm else AQMS
        route = dict(x.split("=", 1) for x in args.route)
        run_testbed(
            out,
            args.runs,
            args.kernel_label,
            sysctls,
            aqms,
            route,
            args.seeded,
            access,
            args.first,
            args.neighbours,
            args.blind,
        )
    elif args.what == "sim":
        from aqmlab.errors import InputError

        tcp = dict(_tcp_setting(x) for x in args.tcp)
        try:
            run_sim(out, _seeds(args.seeds), args.label, tcp, access, args.dither)
        except InputError as e:  # a --tcp setting the scenario refuses: its one line
            _die(f"--tcp: {e}")
    elif args.what == "digest":
        if args.sim:
            path = args.digest or ROOT / "docs" / "data" / f"bbr_flows_sim_{args.label}.json"
            write_digest(out, path, args.label, args.merge, sim=True)
        else:
            write_digest(out, args.digest or DIGEST, args.kernel_label, args.merge)
    elif args.what == "count":
        count_runs(out, args.kernel_label, args.kernel_count)
    elif args.what == "lt":
        probe = ROOT / "target" / "release" / "examples" / "bbr_probe"
        if not probe.exists():
            _die(f"lt: {probe} is missing: cargo build --release -p aqmlab-sim --example bbr_probe")
        lt_table(out, args.label, args.kernel_label, probe)
    elif args.what == "shift":
        if not (args.a and args.b):
            _die("shift: --a and --b name the two sets of runs (LABEL or kernel:LABEL)")
        shift(out, args.a, args.b)
    else:
        _table_job(args, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
