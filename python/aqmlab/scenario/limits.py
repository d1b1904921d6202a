"""What a run may ask for, checked before anything is built (docs/scenarios.md, "Limits").

A scenario can name sizes that cannot be simulated on any machine (``topology.right =
100000000``) or not on this one (a million flows with little free memory). Both are refused in one
line before the network is built, instead of a run that grows until the system kills it:

- counts beyond the documented limits below are refused whatever the machine;
- within them, the run's memory is estimated from the counts (coefficients measured on the
  reference dumbbell, see docs/benchmarks.md) and refused when it exceeds the memory available
  (``MemAvailable`` of /proc/meminfo, or the cgroup limit, or ``AQMLAB_MEMORY_BUDGET``), with the
  estimate in the message.

The output location is checked here too, before a run, so a run is never simulated only to fail
when its results cannot be written.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aqmlab.errors import InputError, show
from aqmlab.scenario import units

if TYPE_CHECKING:
    from aqmlab.scenario.schema import Scenario

#: Flows in one run (all groups together).
MAX_FLOWS = 1_000_000
#: Hosts on one side of a dumbbell (``topology.left`` / ``topology.right``).
MAX_HOSTS_PER_SIDE = 1_000_000
#: Bottlenecks in a parking-lot chain (``topology.hops``; the seed papers use 3 to 8).
MAX_HOPS = 1_000
#: Largest scenario file read, bytes (a scenario is a few kB; a bigger file is not one).
MAX_SCENARIO_BYTES = 16 * 1024 * 1024

# Memory model, bytes (whole process: Python, the network description, the simulator, the
# results). Measured as peak RSS of 0.5 s runs (benches/memory_per_flow.py, docs/benchmarks.md):
# 100,000 flows over one host pair, and one flow over 100,000 hosts, against an empty run.
#: Python with numpy, pandas and matplotlib imported, a one-flow run written with its plots.
BASE_BYTES = 250 * 2**20
#: Per flow: its description, sender and receiver state, its summary and results row.
PER_FLOW_BYTES = 2_600
#: Per host: its node and its two access links (description and simulator state).
PER_HOST_BYTES = 2_200
#: Per point of a time series column (the simulator's f64/u64, NumPy copy, Parquet writing).
PER_SAMPLE_BYTES = 3 * 8
#: Columns of a link's time series (time, queue packets, queue bytes, AQM average, probability).
LINK_SERIES_COLUMNS = 5
#: Environment variable overriding the memory a run may use (a size: "4GB", "500MiB").
BUDGET_ENV = "AQMLAB_MEMORY_BUDGET"


@dataclass(frozen=True)
class Size:
    """The counts of a run that its memory depends on."""

    flows: int
    hosts: int
    monitored_links: int
    traced_flows: int
    samples: int

    def memory_bytes(self) -> int:
        """Estimated peak memory of the whole run, bytes."""
        series = (
            self.monitored_links * (LINK_SERIES_COLUMNS + 1) + self.traced_flows * 2
        ) * self.samples
        return (
            BASE_BYTES
            + PER_FLOW_BYTES * self.flows
            + PER_HOST_BYTES * self.hosts
            + PER_SAMPLE_BYTES * series
        )


def fmt_bytes(n: float) -> str:
    """``1.5 GB``, ``320 MB``: decimal units, as people read memory sizes."""
    for unit, k in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n:.0f} B"


def _side_hosts(spec: object, n_flows: int) -> int:
    if spec is None:
        return n_flows
    return len(spec) if isinstance(spec, list) else int(spec)  # type: ignore[arg-type]


def _parking_lot_hosts(topo: object, n_flows: int) -> int:
    """Hosts of a parking lot (``left`` + ``right`` + 2 ``cross`` per hop), within the limits."""
    hops, cross = topo.hops, topo.cross  # type: ignore[attr-defined]
    # Below 1 is the topology's to refuse ("must be at least 1 bottleneck"); here the upper limits.
    if hops is not None and hops > MAX_HOPS:
        raise InputError(
            f"topology.hops: must be in [1, {MAX_HOPS}] bottlenecks (got {show(hops)})"
        )
    if cross > MAX_HOSTS_PER_SIDE:
        raise InputError(
            f"topology.cross: must be in [1, {MAX_HOSTS_PER_SIDE}] hosts per hop "
            f"(got {show(cross)})"
        )
    hosts = 2 * max(cross, 1) * max(hops or 1, 1)
    for side in ("left", "right"):
        n = _side_hosts(getattr(topo, side), n_flows)
        if n > MAX_HOSTS_PER_SIDE:
            raise InputError(
                f"topology.{side}: must be in [1, {MAX_HOSTS_PER_SIDE}] hosts (got {show(n)})"
            )
        hosts += n
    if hosts > 2 * MAX_HOSTS_PER_SIDE:
        raise InputError(
            f"topology: a parking lot of {show(hosts)} hosts (left + right + 2 x cross x hops) is "
            f"more than the {2 * MAX_HOSTS_PER_SIDE} allowed; lower topology.cross or hops"
        )
    return hosts


def size_of(sc: Scenario) -> Size:
    """The counts of ``sc``, refusing any beyond the limits (one line naming the field)."""
    n_flows = 0
    for i, g in enumerate(sc.flows):
        if g.count > MAX_FLOWS:
            raise InputError(f"flows[{i}].count: at most {MAX_FLOWS} flows (got {show(g.count)})")
        n_flows += g.count
    if n_flows > MAX_FLOWS:
        raise InputError(f"flows: at most {MAX_FLOWS} flows in all groups together (got {n_flows})")
    topo = sc.topology
    if topo.type == "dumbbell":
        hosts = 0
        for side in ("left", "right"):
            n = _side_hosts(getattr(topo, side), n_flows)
            if n < 1:
                raise InputError(f"topology.{side}: must be at least 1 host (got {n})")
            if n > MAX_HOSTS_PER_SIDE:
                raise InputError(
                    f"topology.{side}: at most {MAX_HOSTS_PER_SIDE} hosts per side (got {show(n)})"
                )
            hosts += n
    elif topo.type == "parking-lot":
        hosts = _parking_lot_hosts(topo, n_flows)
    else:
        hosts = 2 * n_flows
    duration, interval = sc.duration, sc.output.sample_interval
    samples = min(max(sc.output.max_samples, 16), math.ceil(duration / interval) + 1)
    monitored = 2 + 2 * hosts if sc.output.monitor_all_links else 1
    traced = 0
    for g in sc.flows:
        if {**sc.tcp.model_dump(), **g.tcp}.get("trace_cwnd"):
            traced += g.count
    return Size(n_flows, hosts, monitored, traced, samples)


def available_bytes() -> tuple[int, str]:
    """Memory a run may use, bytes, and where that figure comes from."""
    raw = os.environ.get(BUDGET_ENV)
    if raw:
        return int(units.size_bytes(BUDGET_ENV, raw.strip())), BUDGET_ENV
    best: tuple[int, str] | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                best = (int(line.split()[1]) * 1024, "available memory")
    except (OSError, ValueError, IndexError):
        pass
    try:
        cg = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if cg.isdigit() and (best is None or int(cg) < best[0]):
            best = (int(cg), "the cgroup's memory limit")
    except OSError:
        pass
    if best is None:
        try:
            best = (os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "free memory")
        except (ValueError, OSError, AttributeError):
            best = (2**62, "unknown")
    return best


def check(sc: Scenario) -> Size:
    """Refuses ``sc`` when a count is beyond the limits or its memory exceeds what is available."""
    size = size_of(sc)
    need = size.memory_bytes()
    have, source = available_bytes()
    if need > have:
        raise InputError(
            f"flows: this run needs an estimated {fmt_bytes(need)} of memory "
            f"({size.flows} flows, {size.hosts} hosts, {size.monitored_links} monitored links), "
            f"more than the {fmt_bytes(have)} of {source}; use fewer flows or hosts "
            f"(or set {BUDGET_ENV} to allow more)"
        )
    return size


def check_output_dir(out: str | Path, field: str = "--out") -> Path:
    """Refuses an output directory that cannot be created or replaced, before a run starts
    (:func:`aqmlab.outdir.check`: kept here for callers of the earlier name)."""
    from aqmlab import outdir

    return outdir.check(out, field)


def rss_bytes() -> int:
    """This process's resident memory now, bytes (0 where /proc is missing)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class BuildTicker:
    """While a large network is being described and built (minutes for a million flows, before
    the first simulated second), a line on stderr every ``every_s`` seconds: time so far and the
    memory reached against the estimate, which grows with the part built."""

    def __init__(self, size: Size, every_s: float = 2.0) -> None:
        import threading

        self.estimate = size.memory_bytes()
        self.every_s = every_s
        self.t0 = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        import sys

        while not self._stop.wait(self.every_s):
            el = time.perf_counter() - self.t0
            sys.stderr.write(
                f"\r[{el:6.1f} s] building the network: {fmt_bytes(rss_bytes())} of an "
                f"estimated {fmt_bytes(self.estimate)}   "
            )
            sys.stderr.flush()

    def stop(self) -> None:
        """Ends the lines (idempotent)."""
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join()
            import sys

            sys.stderr.write("\n")
            sys.stderr.flush()
