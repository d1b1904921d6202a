"""The testbed: a scenario file run on real Linux TCP through ``aqmlab-fwd`` (crates/fwd) in
network namespaces, with results in the simulator's format (``aqmlab.load()`` and the reports
read them as they read simulated runs). See docs/testbed.md.

    import aqmlab.testbed
    res = aqmlab.testbed.testbed("scenarios/testbed/red-4-cubic.toml", out="runs/tb")

Needs root (CAP_NET_ADMIN, CAP_NET_RAW). Everything it creates is named ``aqtb<6 hex>-<owner>`` and
removed on exit, on error and on SIGINT/SIGTERM. Its processes die with it (``PR_SET_PDEATHSIG``),
and what a run killed with SIGKILL left (namespaces, veths, temporary directory) is removed by the
next run (:func:`aqmlab.testbed.net.reclaim_stale`) or by :func:`cleanup`; a live run's are never
touched.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import outdir
from aqmlab.errors import InputError
from aqmlab.testbed import net

if TYPE_CHECKING:
    from aqmlab.testbed import plan

__all__ = ["check_neighbours", "check_route_options", "check_sysctls", "cleanup", "testbed"]

PORT = 5001
#: The traffic tool (source and sink) runs at this niceness: in the paper the senders and
#: receivers are hosts of their own; here they share two cores with the forwarder and unrelated
#: work, and a starved source falls behind its Poisson arrivals and CBR schedule (offered load
#: below the configured one), a starved sink leaves data unread.
TRAFFIC_NICE = -10
# The forwarder starts this long before the flows' time origin (its clock and warm-up include it).
LEAD_S = 0.3


# Capability numbers (linux/capability.h): CAP_NET_ADMIN 12, CAP_NET_RAW 13.
_NET_CAPS = {"CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13}


def _missing_caps(status: str) -> list[str]:
    """The network capabilities absent from a /proc/<pid>/status text's effective set."""
    line = next((x for x in status.splitlines() if x.startswith("CapEff:")), None)
    if line is None:
        return []  # not Linux's format: let the first namespace operation say what is wrong
    eff = int(line.split()[1], 16)
    return [name for name, bit in _NET_CAPS.items() if not eff >> bit & 1]


def _require_root() -> None:
    if os.geteuid() != 0:
        raise InputError(
            "testbed: needs root (CAP_NET_ADMIN and CAP_NET_RAW) to create network namespaces "
            "and raw sockets; run it as root"
        )
    try:
        missing = _missing_caps(Path("/proc/self/status").read_text())
    except OSError:
        missing = []
    if missing:  # root in a container or under a capability bounding set without them
        raise InputError(
            f"testbed: runs as root but without {' and '.join(missing)} (a container or a "
            "reduced capability set); grant them, e.g. docker run --cap-add NET_ADMIN,NET_RAW"
        )
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise InputError(
                f"testbed: the {tool!r} command is missing (Debian: iproute2, ethtool)"
            )


#: Where an installed wheel keeps the testbed's programs (``make dist`` puts them there).
PACKAGED_BIN = Path(__file__).resolve().parents[1] / "_bin"


def _binary(name: str, env: str) -> Path:
    """A crates/fwd binary: $<env>, the wheel's copy (aqmlab/_bin), the checkout's release build
    (``make build``), or PATH."""
    given = os.environ.get(env)
    cands = [Path(given)] if given else []
    cands.append(PACKAGED_BIN / name)
    cands.append(Path(__file__).resolve().parents[3] / "target" / "release" / name)
    found = shutil.which(name)
    if found:
        cands.append(Path(found))
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise InputError(
        f"testbed: the {name} binary was not found; in a checkout run 'make build' (or "
        f"'cargo build --release -p aqmlab-fwd'), or set {env}"
    )


def forwarder_binary() -> Path:
    """The ``aqmlab-fwd`` binary: $AQMLAB_FWD, the wheel's, the checkout's or PATH's."""
    return _binary("aqmlab-fwd", "AQMLAB_FWD")


def traffic_binary() -> Path:
    """The traffic tool ``aqmlab-traffic`` (crates/fwd/src/bin/traffic): $AQMLAB_TRAFFIC, the
    wheel's, the checkout's or PATH's."""
    return _binary("aqmlab-traffic", "AQMLAB_TRAFFIC")


class _TerminatedError(Exception):
    """SIGTERM arrived: unwind and clean up like on SIGINT."""


def _on_term(signum: int, frame: Any) -> None:
    raise _TerminatedError()


def cleanup() -> tuple[list[str], list[str]]:
    """``aqmlab testbed --cleanup``: removes what killed runs left (and namespaces of older
    versions, which recorded no owner); returns (removed, left alone: live runs')."""
    _require_root()
    return net.cleanup_all()


# linux/prctl.h
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def _child_setup(parent: int, raise_priority: bool) -> Any:
    """The preexec function of every child: it gets SIGKILL when this process dies, however it
    dies (``PR_SET_PDEATHSIG``, prctl(2); kept across ``ip netns exec`` and ``taskset``, which
    exec without forking), so a killed run leaves no forwarder or traffic tool running. If this
    process died before the prctl took effect, the child exits at once."""
    prctl = _LIBC.prctl  # looked up before the fork: the child only calls it

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        if raise_priority:
            _raise_priority()

    return setup


def _start(cmd: list[str], ns: str, raise_priority: bool = False, **kw: Any) -> subprocess.Popen:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, *cmd],
        text=True,
        preexec_fn=_child_setup(os.getpid(), raise_priority),
        **kw,
    )


def _wait_ready(p: subprocess.Popen, what: str, timeout: float = 10.0) -> str:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        raise RuntimeError(f"{what} did not start within {timeout:g} s")
    line = p.stdout.readline().strip()
    if not line.startswith("ready"):
        err = p.stderr.read() if p.stderr else ""
        raise RuntimeError(f"{what} failed to start: {err.strip() or line}")
    return line


def _cpus() -> tuple[list[int], list[int]]:
    """The forwarder's core (the last one this process may use) and the traffic tool's (the
    others): the SCHED_FIFO forwarder owns its core, and the traffic tool, at raised priority,
    does not wait behind it (sharing a core with a real-time task, a task waits even when another
    core runs only ordinary work). One core: no pinning."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return [], []
    return cpus[-1:], cpus[:-1]


def _raise_priority() -> None:
    """In the child before exec: its own session and so its own scheduler autogroup (with
    sched_autogroup_enabled, CPU time is shared between sessions first, and a plain nice only
    ranks processes inside their session), that group at :data:`TRAFFIC_NICE`."""
    os.setsid()
    try:
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(TRAFFIC_NICE))
    except OSError:  # no autogroups in this kernel: the plain nice below is what counts
        pass
    os.setpriority(os.PRIO_PROCESS, 0, TRAFFIC_NICE)


def _pin(cpus: list[int]) -> list[str]:
    return ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []


def _udp_counts(sink: subprocess.Popen, path: Path) -> dict[str, list[int]]:
    """Stops the sink (SIGTERM: it writes its UDP counts) and reads them: source -> [packets,
    bytes]."""
    sink.terminate()
    try:
        sink.wait(timeout=5)
    except subprocess.TimeoutExpired:
        sink.kill()
    return json.loads(path.read_text()) if path.exists() else {}


def _set_up(
    p: plan.Plan,
    n: net.Net,
    sysctls: dict[str, str] | None,
    route: dict[str, str] | None,
    neighbours: str,
) -> dict:
    """Builds the network ``n`` as the plan says, with the extra sysctls, route metrics and
    neighbour entries; returns what was set, for the summary's ``testbed`` section."""
    from aqmlab.testbed import plan

    n.build(p.left_ips, p.right_ips, ecn=p.ecn, sack=p.sack, rcv_ecn=p.receiver_ecn)
    n.route_options(p.init_cwnd, p.min_rto_ms, route)
    entries = n.static_neighbours(p.left_ips, p.right_ips) if neighbours == "static" else 0
    routes = {
        r: n.exec(ns, "ip", "route", check=False).stdout.strip()
        for r, ns in (("snd", n.snd), ("rcv", n.rcv))
    }
    set_sysctls = n.set_tcp_sysctls(sysctls) if sysctls else {}
    offl = n.offloads()
    # As the senders see it: the list is the kernel's, read inside their namespace.
    ccs = n.exec(n.snd, "cat", plan.AVAILABLE_CC, check=False).stdout.split()
    _, lacking = plan.congestion_controls(probe=False)
    return {
        "offloads": offl,
        "notes": n.notes,
        "prefix": n.tag,
        "programs": {"forwarder": str(forwarder_binary()), "traffic": str(traffic_binary())},
        "congestion_controls": {"available": ccs, "lacking": lacking},
        "sysctls": set_sysctls,
        "routes": routes,
        "neighbours": {"mode": neighbours, "static_entries": entries},
    }


def _start_traffic(
    p: plan.Plan, n: net.Net, work: Path, procs: list[subprocess.Popen], cpus: list[int]
) -> tuple[subprocess.Popen, subprocess.Popen]:
    """Starts the traffic tool's sink (receivers) and source (senders) on ``cpus``, each once
    it says it is ready; returns (sink, source), also appended to ``procs``."""
    tool = [*_pin(cpus), str(traffic_binary())]
    sink = _start(
        [*tool, "sink", str(PORT), str(work / "udp_sink.json")],
        n.rcv,
        raise_priority=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    procs.append(sink)
    _wait_ready(sink, "traffic sink")
    (work / "traffic.json").write_text(json.dumps(dict(p.traffic, port=PORT)))
    src = _start(
        [*tool, "source", str(work / "traffic.json"), str(work / "traffic_out.json")],
        n.snd,
        raise_priority=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    procs.append(src)
    _wait_ready(src, "traffic source")
    return sink, src


def _start_forwarder(
    p: plan.Plan, n: net.Net, work: Path, procs: list[subprocess.Popen], cpus: list[int]
) -> tuple[subprocess.Popen, int]:
    """Starts aqmlab-fwd in the router namespace on ``cpus`` for the lead time and the run;
    returns it (also appended to ``procs``) and its clock when it became ready (ns)."""
    fcfg = dict(p.fwd_config, left=n.if_a, right=n.if_b)
    fcfg["duration_ns"] = int((LEAD_S + p.duration_s) * 1e9)
    fcfg["warmup_ns"] = int((LEAD_S + p.warmup_s) * 1e9)
    (work / "fwd.json").write_text(json.dumps(fcfg))
    fwd = _start(
        [*_pin(cpus), str(forwarder_binary()), str(work / "fwd.json"), str(work / "fwd_out.json")],
        n.rtr,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    procs.append(fwd)
    return fwd, int(_wait_ready(fwd, "aqmlab-fwd").split()[1])


def _stop(procs: list[subprocess.Popen]) -> None:
    """Terminates the programs still running (killed after 3 s)."""
    for pr in procs:
        if pr.poll() is None:
            pr.terminate()
            try:
                pr.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pr.kill()


def _run_network(
    p: plan.Plan,
    n: net.Net,
    work: Path,
    sysctls: dict[str, str] | None = None,
    route: dict[str, str] | None = None,
    neighbours: str = "resolve",
) -> tuple[dict, dict, dict]:
    """Builds the network ``n``, runs forwarder and traffic, returns (forwarder stats, traffic,
    notes). ``sysctls``: extra ``net.ipv4.tcp_*`` settings for the end namespaces; ``route``:
    extra route metrics of their routes; ``neighbours``: :data:`NEIGHBOURS`."""
    import threading

    procs: list[subprocess.Popen] = []
    counters: dict[str, dict[str, dict[str, int]]] = {}
    timer: threading.Timer | None = None
    try:
        env = _set_up(p, n, sysctls, route, neighbours)
        fwd_cpu, other_cpus = _cpus()
        sink, src = _start_traffic(p, n, work, procs, other_cpus)
        fwd, t_fwd = _start_forwarder(p, n, work, procs, fwd_cpu)
        src.stdin.write(f"{t_fwd + int(LEAD_S * 1e9)}\n")
        src.stdin.flush()

        def at_warmup() -> None:
            counters["warmup"] = {r: n.tcp_counters(r) for r in ("snd", "rcv")}

        # The kernel's TCP counters at the warm-up (to a few ms) and at the end: the window's
        # counts are the difference (timeouts, recoveries: what TCP_INFO does not give).
        timer = threading.Timer(LEAD_S + p.warmup_s, at_warmup)
        timer.start()
        _, err = src.communicate(timeout=LEAD_S + p.duration_s + 60)
        if src.returncode != 0:
            raise RuntimeError(f"traffic source failed: {err.strip()[-500:]}")
        timer.join()
        counters["end"] = {r: n.tcp_counters(r) for r in ("snd", "rcv")}
        fwd.wait(timeout=LEAD_S + p.duration_s + 30)
        if fwd.returncode != 0:
            raise RuntimeError(f"aqmlab-fwd failed: {fwd.stderr.read().strip()}")
        stats = json.loads((work / "fwd_out.json").read_text())
        traffic = json.loads((work / "traffic_out.json").read_text())
        traffic["udp_received"] = _udp_counts(sink, work / "udp_sink.json")
        env["kernel_counters"] = counters
        return stats, traffic, env
    finally:
        if timer is not None:
            timer.cancel()
        _stop(procs)
        n.close()


_SYSCTL_RE = re.compile(r"^net\.ipv4\.tcp_[a-z0-9_]+$")


def check_sysctls(settings: dict[str, str]) -> dict[str, str]:
    """Extra sysctls for the end namespaces: only ``net.ipv4.tcp_*`` keys (per network
    namespace, so the host's stay as they are) with a value of digits, letters, dots and spaces
    (``tcp_rmem`` takes three numbers); anything else is refused in one line naming it."""
    out = {}
    for key, value in settings.items():
        if not _SYSCTL_RE.match(key):
            raise InputError(
                f"--sysctl {key}: only net.ipv4.tcp_* settings are accepted (they are per "
                "network namespace; the testbed sets them in its sender and receiver namespaces)"
            )
        if not Path("/proc/sys", *key.split(".")).exists():
            raise InputError(f"--sysctl {key}: this kernel has no such setting (/proc/sys)")
        v = str(value).strip()
        if not v or not re.fullmatch(r"[A-Za-z0-9_. ]+", v):
            raise InputError(f"--sysctl {key}={value}: the value must be a number or a word")
        out[key] = v
    return out


#: Route metrics ``--route-option`` accepts (ip-route(8)): ``quickack 1`` turns the receivers'
#: delayed ACKs off (RTAX_QUICKACK: an ACK for every segment), as ns-3's ``DelAckCount 1``.
ROUTE_OPTIONS = ("quickack", "initrwnd")

#: How the end hosts learn each other's hardware addresses (``aqmlab testbed --neighbours``):
#: "resolve", ARP on demand, its requests and replies crossing the forwarder's queues (the
#: default, and the testbed's only behaviour before it was an option); "static", permanent
#: neighbour entries set before the traffic starts (docs/testbed.md, "Neighbour entries").
NEIGHBOURS = ("resolve", "static")


def check_neighbours(mode: str) -> str:
    """``mode`` when it is one of :data:`NEIGHBOURS`; else refused in one line."""
    if mode not in NEIGHBOURS:
        raise InputError(f"--neighbours {mode}: accepted are {', '.join(NEIGHBOURS)}")
    return mode


def check_route_options(options: dict[str, str]) -> dict[str, str]:
    """Extra route metrics for the end namespaces' routes: only :data:`ROUTE_OPTIONS`, each
    with a whole-number value; anything else refused in one line naming it."""
    out = {}
    for key, value in options.items():
        if key not in ROUTE_OPTIONS:
            raise InputError(
                f"--route-option {key}: accepted are {', '.join(ROUTE_OPTIONS)} (initcwnd and "
                "rto_min come from the scenario's tcp.init_cwnd and tcp.min_rto)"
            )
        if not str(value).strip().isdigit():
            raise InputError(f"--route-option {key}={value}: the value must be a whole number")
        out[key] = str(value).strip()
    return out


def _refuse_python_aqm(sc: Any) -> None:
    """An AQM written in Python (aqmlab.pyaqm) cannot run in the forwarder: refused in one line."""
    from aqmlab.pyaqm import load as pyaqm

    field = pyaqm.python_field(sc.model_dump())
    if field is not None:
        raise InputError(
            f"{field}.python: the testbed cannot run an AQM written in Python: its forwarder "
            "(aqmlab-fwd) is a separate Rust binary that forwards each packet in microseconds "
            "and embeds no Python; run it in the simulator, or port it to Rust (aqmlab new-aqm)"
        )


def _run_guarded(
    p: plan.Plan,
    partial: Path | None,
    sysctls: dict[str, str],
    route: dict[str, str],
    neighbours: str,
) -> tuple[dict, dict, dict]:
    """:func:`_run_network` on a new network, after removing what runs killed with SIGKILL
    left (their owner gone; live runs' are not touched); SIGTERM ends it as Ctrl-C does, and
    on any failure the partial logs directory (``partial``) is discarded."""
    net.reclaim_stale()
    old = signal.signal(signal.SIGTERM, _on_term)
    try:
        n = net.Net()
        with n.workdir() as tmp:
            return _run_network(p, n, Path(tmp), sysctls, route, neighbours)
    except _TerminatedError:
        if partial is not None:
            outdir.discard(partial)
        raise KeyboardInterrupt from None
    except BaseException:
        if partial is not None:
            outdir.discard(partial)
        raise
    finally:
        signal.signal(signal.SIGTERM, old)


def testbed(
    sc: Any,
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    plot: bool = True,
    cc: str | None = None,
    sysctls: dict[str, str] | None = None,
    route: dict[str, str] | None = None,
    neighbours: str = "resolve",
):
    """Runs a scenario (object, dict or TOML path) on the testbed; returns a runner ``Result``
    (written as a run directory when ``out`` is given). ``cc`` (newreno, sack, cubic, bbr) replaces
    every flow group's TCP variant, for kernel congestion controls the scenario schema lacks.
    ``sysctls`` ({"net.ipv4.tcp_recovery": "0"}): extra ``net.ipv4.tcp_*`` settings of the
    senders' and receivers' namespaces (:func:`check_sysctls`), recorded in ``testbed.sysctls``.
    ``route`` ({"quickack": "1"}): extra metrics of their routes (:func:`check_route_options`;
    ``testbed.routes`` keeps ``ip route`` as set). ``neighbours`` (:data:`NEIGHBOURS`):
    "static" gives the end hosts permanent neighbour entries, so no ARP crosses the bottleneck
    (``testbed.neighbours``)."""
    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    sc = runner._as_scenario(sc)
    _refuse_python_aqm(sc)
    _require_root()
    if out is not None:  # refused before the run, not after it (issue 19)
        outdir.check(out, "out")
    sysctls = check_sysctls(sysctls or {})
    route = check_route_options(route or {})
    check_neighbours(neighbours)
    cfg = scenario.build_config(sc, seed)
    p = plan.make(sc, cfg, cc, static_neighbours=neighbours == "static")
    _check_outputs(sc, out)
    forwarder_binary()
    traffic_binary()
    logged = sc.output.pcap or sc.output.events
    partial = _start_logs(sc, p, Path(out)) if logged and out is not None else None
    t0 = time.perf_counter()
    stats, traffic, env = _run_guarded(p, partial, sysctls, route, neighbours)
    wall = time.perf_counter() - t0
    if partial is not None and sc.output.events:
        try:
            _finish_events(sc, p, stats, partial)
        except BaseException:
            outdir.discard(partial)
            raise
    res = plan.result(sc, cfg, p, stats, traffic, env, LEAD_S, wall)
    # A flow that never ran (its connect refused, its first packets' ARP lost three times in
    # the full queue: "No route to host") has zeros for figures: said, not passed off.
    for f in res.summary.get("flows", []):
        if f.get("error"):
            print(f"warning: testbed: flow {f['error']}; its figures are zeros", file=sys.stderr)
    if out is not None:
        extra = None
        if plot:
            from aqmlab.report import html as report

            extra = report.run_outputs
        res.out_dir = runner.write(res, cfg, Path(out), extra, partial=partial)
    return res


def _check_outputs(sc: Any, out: str | Path | None) -> None:
    """The outputs the testbed can write: pcap and event logs of the forwarder's two
    directions, into a run directory."""
    from aqmlab.errors import InputError

    for key in ("pcap", "events"):
        for i, name in enumerate(getattr(sc.output, key)):
            if name not in ("bottleneck", "reverse"):
                raise InputError(
                    f"output.{key}[{i}]: the testbed logs the forwarder's 'bottleneck' and "
                    f"'reverse' directions only (got {name!r})"
                )
    if sc.output.pcap and out is None:
        raise InputError("output.pcap: packet traces are written into a run directory; give --out")
    if sc.output.events and out is None:
        raise InputError("output.events: event logs are written into a run directory; give --out")


def _start_logs(sc: Any, p: Any, out: Path) -> Path:
    """The run's partial directory, made before the run: the forwarder writes
    ``pcap/<direction>.pcap`` (Ethernet frames as sent, ns since its start) and the event logs'
    record files (``crates/qdisc/src/events.rs``) into it."""
    from aqmlab.running import events

    partial = outdir.start(out)
    for key in ("pcap", "events"):
        if getattr(sc.output, key):
            (partial / key).mkdir()
    for key in ("forward", "reverse"):
        name = p.fwd_config[key]["name"]
        if name in sc.output.pcap:
            p.fwd_config[key]["pcap_path"] = str(partial / "pcap" / f"{name}.pcap")
        if name in sc.output.events:
            p.fwd_config[key]["events_path"] = str(events.record_path(partial, name))
    return partial


def event_flow_names(fwd_flows: list[str], flows: list[dict]) -> list[str]:
    """Names for the forwarder's flow indices (``src:sport>dst:dport``, index 0 every non-IPv4
    frame): the scenario flow whose hosts the 5-tuple joins, either way (its data and its ACKs),
    when exactly one flow joins them; else the 5-tuple as the forwarder wrote it. ``flows``: the
    plan's traffic flows (``name``, ``src``, ``dst`` addresses)."""
    by_pair: dict[frozenset[str], list[str]] = {}
    for f in flows:
        by_pair.setdefault(frozenset((f["src"], f["dst"])), []).append(f["name"])
    names = []
    for k, tup in enumerate(fwd_flows):
        if k == 0 or ">" not in tup:
            names.append(tup)
            continue
        a, b = tup.split(">")
        owners = by_pair.get(frozenset((a.rsplit(":", 1)[0], b.rsplit(":", 1)[0])), [])
        names.append(owners[0] if len(owners) == 1 else tup)
    return names


def _finish_events(
    sc: Any, p: Any, stats: dict, partial: Path, flows: list[dict] | None = None
) -> None:
    """Turns the forwarder's record files into ``events/<direction>.parquet`` with the flows
    named (:func:`event_flow_names`; ``flows`` defaults to the plan's traffic flows, ``[]``
    names every flow by its 5-tuple); a log the forwarder could not complete fails the run."""
    from aqmlab.running import events

    logs = stats.get("event_log", {})
    for name in sc.output.events:
        log = logs.get(name)
        if log is None:
            raise RuntimeError(f"aqmlab-fwd wrote no event log for {name!r}")
        if log.get("error"):
            raise RuntimeError(f"aqmlab-fwd: event log of {name!r} incomplete: {log['error']}")
        names = event_flow_names(log["flows"], p.traffic["flows"] if flows is None else flows)
        rec = events.record_path(partial, name)
        rows = events.to_parquet(rec, partial / "events" / f"{name}.parquet", names)
        if rows != log["rows"]:
            raise RuntimeError(
                f"event log of {name!r}: {rows} records read, the forwarder wrote {log['rows']}"
            )


def _hold_summary(stats: dict) -> list[str]:
    """Per link: packets, drops, marks, queue and queueing delay the forwarder measured."""
    lines = []
    for lk in stats["links"]:
        mean, p99 = lk.get("delay_mean_s"), lk.get("delay_p99_s")
        line = (
            f"{lk['name']} ({lk['aqm']}): {lk['arrived']} packets arrived, dropped "
            f"{lk['dropped_aqm']} by the AQM and {lk['dropped_overflow']} on overflow, "
            f"{lk['marked']} marked"
        )
        if lk["arrived"] and mean is not None:
            line += (
                f"; queue mean {lk['queue_mean_pkts']:.1f} / max {lk['queue_max_pkts']} packets; "
                f"queueing delay mean {mean * 1e3:.2f} ms"
            )
            line += f", p99 {p99 * 1e3:.2f} ms" if p99 is not None else ""
        lines.append(line)
    return lines


def _hold_banner(sc: Any, p: Any, n: Any, fcfg: dict) -> str:
    """What ``--hold`` prints once the network is up: the bottleneck, the hosts' addresses and
    namespaces, and iperf3 / ping commands to run through it (with the scenario's congestion
    control as iperf3's ``-C``: per connection, as the traffic tool sets it; a namespace's
    default is not settable here)."""
    ccs = sorted({f["cc"] for f in p.traffic["flows"] if f["cc"] != "udp"})
    cc_opt = f" -C {ccs[0]}" if ccs else ""
    l0, r0 = p.left_ips[0], p.right_ips[0]
    aqm = fcfg["forward"]["aqm"]["name"]
    return (
        f"holding {sc.name}: {fcfg['forward']['rate_bps'] / 1e6:g} Mb/s bottleneck, "
        f"{aqm}; left hosts {p.left_ips[0]}..{p.left_ips[-1]} in {n.snd}, right hosts "
        f"{p.right_ips[0]}..{p.right_ips[-1]} in {n.rcv}\n"
        f"  sudo ip netns exec {n.rcv} iperf3 -s -B {r0} -D\n"
        f"  sudo ip netns exec {n.snd} iperf3 -c {r0} -B {l0} -t 30{cc_opt}\n"
        f"  sudo ip netns exec {n.snd} ping -I {l0} {r0}\n"
        "Ctrl-C (or SIGTERM) ends the hold, removes the network and writes the "
        "forwarder's statistics."
    )


def _hold_until_interrupted(fwd: subprocess.Popen) -> None:
    """Waits for Ctrl-C / SIGTERM (or the forwarder's own end), then stops the forwarder so
    that it writes its statistics; a forwarder that failed is an error with its message."""
    try:
        while fwd.poll() is None:
            time.sleep(0.2)
    except (KeyboardInterrupt, _TerminatedError):
        pass
    if fwd.poll() is None:
        fwd.terminate()
    fwd.wait(timeout=30)
    if fwd.returncode != 0:
        raise RuntimeError(f"aqmlab-fwd failed: {fwd.stderr.read().strip()}")


def _hold_network(
    sc: Any, p: plan.Plan, n: net.Net, work: Path, fwd_bin: Path, neighbours: str
) -> dict:
    """Builds the network ``n`` and starts the forwarder with no end, prints how to use the
    hosts and holds until interrupted; returns the forwarder's statistics (the forwarder is
    killed on the way out if it still runs)."""
    n.build(p.left_ips, p.right_ips, ecn=p.ecn, sack=p.sack, rcv_ecn=p.receiver_ecn)
    n.route_options(p.init_cwnd, p.min_rto_ms)
    if neighbours == "static":
        n.static_neighbours(p.left_ips, p.right_ips)
    fcfg = dict(p.fwd_config, left=n.if_a, right=n.if_b, duration_ns=0, warmup_ns=0)
    (work / "fwd.json").write_text(json.dumps(fcfg))
    fwd = _start(
        [*_pin(_cpus()[0]), str(fwd_bin), str(work / "fwd.json"), str(work / "fwd_out.json")],
        n.rtr,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_ready(fwd, "aqmlab-fwd")
        print(_hold_banner(sc, p, n, fcfg), flush=True)
        _hold_until_interrupted(fwd)
        return json.loads((work / "fwd_out.json").read_text())
    finally:
        if fwd.poll() is None:
            fwd.kill()


def hold(
    sc: Any,
    *,
    out: str | Path,
    seed: int | None = None,
    cc: str | None = None,
    neighbours: str = "resolve",
) -> dict:
    """``aqmlab testbed --hold``: builds the scenario's network (its hosts' addresses, the
    bottleneck's rate, buffer, delays and AQM in the forwarder) without the traffic tool, prints
    how to run programs on the hosts, and holds it until SIGINT/SIGTERM; then removes everything
    and writes the forwarder's statistics to ``out``/forwarder.json (returned), with the
    scenario's ``[output] pcap`` and ``events`` of the forwarder's two directions
    (``pcap/<direction>.pcap``, ``events/<direction>.parquet``, flows named by their 5-tuple:
    the traffic is the user's, not the scenario's). ``out`` is written as a run directory is:
    into ``<out>.partial``, renamed to ``out`` once complete. ``neighbours``: as for
    :func:`testbed`."""
    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    sc = runner._as_scenario(sc)
    _refuse_python_aqm(sc)
    _require_root()
    check_neighbours(neighbours)
    cfg = scenario.build_config(sc, seed)
    p = plan.make(sc, cfg, cc)
    out = outdir.check(out, "--out")
    _check_outputs(sc, out)
    fwd_bin = forwarder_binary()
    net.reclaim_stale()
    old = signal.signal(signal.SIGTERM, _on_term)
    # Ctrl-C ends the hold even where SIGINT was ignored when this process started (a shell
    # starts background jobs so).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    n = net.Net()
    partial = _start_logs(sc, p, out)
    try:
        with n.workdir() as tmp:
            stats = _hold_network(sc, p, n, Path(tmp), fwd_bin, neighbours)
        if sc.output.events:
            _finish_events(sc, p, stats, partial, flows=[])
        (partial / "forwarder.json").write_text(json.dumps(stats, indent=1))
        outdir.commit(partial, out)
    except BaseException:
        outdir.discard(partial)
        raise
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)
        n.close()
    for line in _hold_summary(stats):
        print(line)
    print(f"wrote {out}: {outdir.listing(out)}")
    return stats
