"""From a scenario to a testbed plan (addresses, forwarder configuration, traffic), and from the
forwarder's and traffic tool's measurements back to a run ``Result`` in the simulator's schema.

The simulator's network description (``scenario.build_config``) is the single source: the
bottleneck and reverse links give the forwarder's rates, buffers and AQMs; each flow's one-way
delay is the sum of the propagation delays on its path (access up, bottleneck, access down), which
the forwarder applies per (source, destination) address pair. Scenario features real stacks cannot
reproduce are refused with one line naming the field.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aqmlab.errors import InputError
from aqmlab.testbed import net

# scenario TCP variant -> (Linux congestion control, SACK on).
# Linux's "reno" module is NewReno (RFC 6582) loss recovery; without SACK it is the simulator's
# `newreno`. Classic Reno (no partial-ACK handling) does not exist in Linux.
VARIANTS = {
    "newreno": ("reno", False),
    "sack": ("reno", True),
    "cubic": ("cubic", True),
    "bbr": ("bbr", True),
    "dctcp": ("dctcp", True),
    "prague": ("prague", True),
}

#: The traffic tool's TCP_INFO interval (s): per-flow RTT samples and delivered-bytes series.
SAMPLE_S = 0.02

#: aqmlab's transport names (the simulator's variants and issue 22's) that no Linux congestion
#: control module implements, with the reason.
NO_LINUX = {
    "reno": "Linux has no classic Reno recovery (its reno module is NewReno)",
    "ledbat": "Linux has no LEDBAT module (tcp_lp is TCP-LP, a different algorithm)",
    "ledbat-ns3": "ns-3.44's LEDBAT window cap, a cross-check variant; Linux has no LEDBAT module",
    "bbr3": "mainline Linux's bbr is BBR v1; BBR v3 is in google/bbr's v3 tree only",
    "bbr-ns3": "ns-3.44 TcpBbr's model choices, a cross-check variant (Linux's bbr is bbr)",
    "newreno-ns3": "ns-3.44's partial-ACK retransmission, a cross-check variant (Linux's is reno)",
}

#: aqmlab's congestion controllers (`[tcp] cc`) -> Linux modules; LEDBAT has none (NO_LINUX).
#: The simulator's Prague versions (`prague-0.6`, `prague-0.7`: tcp_prague.c at two commits,
#: docs/l4s.md) all run the kernel's `prague` module, whichever version it is.
CC_LINUX = {
    "reno": "reno",
    "cubic": "cubic",
    "dctcp": "dctcp",
    "bbr": "bbr",
    "prague": "prague",
    "prague-0.6": "prague",
    "prague-0.7": "prague",
}

#: aqmlab's loss recoveries (`[tcp] recovery`) -> SACK on. Linux recovers with RACK-TLP and SACK
#: (or NewReno without SACK) whatever is chosen; classic Reno recovery it lacks (NO_LINUX).
RECOVERY_SACK = {"newreno": False, "sack": True, "rack": True}

#: Where a module outside mainline Linux comes from (said when it is missing).
_OUT_OF_TREE = {"prague": "not in mainline Linux (the L4S team's kernel tree has tcp_prague)"}

AVAILABLE_CC = "/proc/sys/net/ipv4/tcp_available_congestion_control"

#: Linux modules that ask for the kernel's own TCP pacing in their init (``sk_pacing_status =
#: SK_PACING_NEEDED``: tcp_bbr.c ``bbr_init``, the L4S team's tcp_prague.c); the others are paced
#: only under an fq qdisc, which the testbed does not install.
LINUX_PACED = {"bbr", "prague"}


def _try_load(cc: str) -> str | None:
    """Asks the kernel for congestion control ``cc`` as the traffic tool does (TCP_CONGESTION on
    a socket: as root the kernel loads its module ``tcp_<cc>`` if it can); None when it works,
    else why not."""
    import errno
    import os
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        return None
    except OSError as e:
        if e.errno != errno.ENOENT:
            return f"refused by the kernel ({os.strerror(e.errno or 0)})"
    if cc in _OUT_OF_TREE:
        return _OUT_OF_TREE[cc]
    mods = f"/lib/modules/{os.uname().release}"
    if not os.path.isdir(mods):
        return f"not built in and module tcp_{cc} not loadable ({mods} absent)"
    return f"not built in and module tcp_{cc} not loadable"


def congestion_controls(probe: bool = True) -> tuple[list[str], dict[str, str]]:
    """The kernel's congestion controls (after trying to load those aqmlab's names need, when
    ``probe``) and, for each of aqmlab's names the testbed cannot run, why."""
    lacking = dict(NO_LINUX)
    for name, (cc, _) in VARIANTS.items():
        if probe and cc not in _available_cc():
            why = _try_load(cc)
            if why is not None:
                lacking[name] = why
        elif cc not in _available_cc():
            lacking[name] = "not in this kernel"
    return sorted(_available_cc()), lacking


def lacking_line(lacking: dict[str, str]) -> str:
    """One line: which of aqmlab's transport names the testbed lacks here, and why."""
    return "; ".join(f"{k}: {v}" for k, v in sorted(lacking.items()))


#: The forwarder runs under SCHED_FIFO at this priority, as a forwarding box's packet path would:
#: on a loaded machine a forwarder at the normal priority waits for a core behind every other
#: process, its rings overflow (frames lost outside the AQM) and its departure clock slips
#: (utilisation below the configured rate). It sleeps between events, so it takes only what the
#: traffic needs, and the kernel's RT throttling leaves other processes 5% of each core.
FWD_RT_PRIORITY = 50


@dataclass
class Plan:
    """What the testbed builds and runs."""

    left_ips: list[str]
    right_ips: list[str]
    ecn: bool
    #: Whether the receivers accept ECN (``tcp.receiver_ecn`` other than ``"off"``): their
    #: namespace's ``net.ipv4.tcp_ecn`` is 0 otherwise, so a sender's ECN setup SYN is answered
    #: without ECN (RFC 3168 s. 6.1.1). The kernel's feedback is RFC 3168's either way.
    receiver_ecn: bool
    sack: bool
    init_cwnd: int
    min_rto_ms: int
    duration_s: float
    warmup_s: float
    fwd_config: dict[str, Any]
    traffic: dict[str, Any]
    differences: list[str] = field(default_factory=list)


def _available_cc() -> set[str]:
    try:
        with open(AVAILABLE_CC) as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def _tcp_setting(sc, i: int, key: str) -> tuple[Any, str]:
    g = sc.flows[i]
    if key in g.tcp:
        return g.tcp[key], f"flows[{i}].tcp.{key}"
    return getattr(sc.tcp, key), f"tcp.{key}"


def _cc_and_recovery(sc, i: int, cc: str, sack: bool, fld: str) -> tuple[str, bool, str]:
    """The group's `cc` and `recovery` when set (they replace the variant's halves): the Linux
    module, SACK on, and the field that chose the module."""
    name, cfld = _tcp_setting(sc, i, "cc")
    if name is not None:
        # A cross-check variant with its switches named (``bbr-ns3:entry+exit``) by its base.
        base = name.split(":", 1)[0]
        if name not in CC_LINUX and base in NO_LINUX:
            raise InputError(f"{cfld}: {name!r} cannot run on the testbed: {NO_LINUX[base]}")
        cc, fld = CC_LINUX.get(name, name), cfld
    rec, rfld = _tcp_setting(sc, i, "recovery")
    if rec is not None:
        if rec not in RECOVERY_SACK:
            raise InputError(
                f"{rfld}: {rec!r} cannot run on the testbed: Linux has no classic Reno recovery "
                "(its reno module is NewReno); use newreno, sack or rack"
            )
        sack = RECOVERY_SACK[rec]
    return cc, sack, fld


def _check_flows(sc, cc_override: str | None) -> tuple[list[str], bool, bool]:
    """Per group: the congestion control; refuses what real stacks cannot do. ``cc_override``
    (a key of :data:`VARIANTS`) replaces every group's variant."""
    ccs, eccns, sacks = [], set(), set()
    avail = _available_cc()
    for i, g in enumerate(sc.flows):
        if g.type not in ("tcp", "web", "cbr"):
            raise InputError(
                f"flows[{i}].type: {g.type!r} sources cannot run on the testbed (real kernel TCP "
                "and UDP CBR only); use type = 'tcp', 'web' or 'cbr'"
            )
        if g.type == "cbr":
            ccs.append("udp")
            continue
        if g.profile is not None:
            raise InputError(f"flows[{i}].profile: edge marking is not supported on the testbed")
        cc, sack, fld = _group_cc(sc, i, cc_override, avail)
        ecn, efld = _tcp_setting(sc, i, "ecn")
        _check_ecn(sc, i, ecn, efld, cc)
        eccns.add((bool(ecn), _tcp_setting(sc, i, "receiver_ecn")[0] != "off"))
        sacks.add(sack)
        if len(eccns) > 1:
            raise InputError(
                f"{efld}: ECN is set per namespace on the testbed; every flow group must agree"
            )
        if len(sacks) > 1:
            raise InputError(
                f"{fld}: SACK is set per namespace on the testbed; "
                "mixing newreno with sack/cubic/bbr is not supported"
            )
        ccs.append(cc)
    return ccs, (eccns.pop() if eccns else (False, True)), (sacks.pop() if sacks else True)


def _group_cc(sc, i: int, cc_override: str | None, avail: set[str]) -> tuple[str, bool, str]:
    """TCP group ``i``'s Linux congestion control and whether it has SACK, with the field that
    chose them; refuses a variant Linux lacks and a module this kernel cannot load."""
    variant, fld = _tcp_setting(sc, i, "variant")
    if cc_override is not None:
        variant, fld = cc_override, "cc"
    if variant in NO_LINUX:
        raise InputError(f"{fld}: {variant!r} cannot run on the testbed: {NO_LINUX[variant]}")
    if variant in VARIANTS:
        cc, sack = VARIANTS[variant]
        if cc_override is None:
            cc, sack, fld = _cc_and_recovery(sc, i, cc, sack, fld)
    elif cc_override is not None and variant in avail:
        cc, sack = variant, True  # any other congestion control of this kernel, with SACK
    else:
        raise InputError(
            f"{fld}: {variant!r} is neither one of aqmlab's names ({', '.join(VARIANTS)}) "
            f"nor a congestion control of this kernel ({' '.join(sorted(avail))})"
        )
    why = _try_load(cc) if avail and cc not in avail else None
    if why is not None:
        raise InputError(
            f"{fld}: the kernel has no {cc!r} congestion control: {why} "
            f"(it has {' '.join(sorted(_available_cc()))})"
        )
    return cc, sack, fld


def _accecn_kernel() -> str:
    """Whether this kernel offers AccECN (RFC 9768) as ``net.ipv4.tcp_ecn = 3`` (Linux 6.18's
    Documentation/networking/ip-sysctl.rst), tried in a scratch network namespace: a phrase
    for the refusal."""
    import subprocess
    import uuid

    ns = f"aqtb-accecn-{uuid.uuid4().hex[:8]}"
    try:
        made = subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode == 0
        if not made:
            return "whether this kernel has it could not be tried (no network namespace)"
        r = subprocess.run(
            ["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.tcp_ecn=3"],
            capture_output=True,
        )
        if r.returncode != 0:
            return f"this kernel ({os.uname().release}) has none (net.ipv4.tcp_ecn refuses 3)"
        return "the testbed does not set it up (net.ipv4.tcp_ecn = 3 is not applied)"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _check_ecn(sc, i: int, ecn: Any, efld: str, cc: str) -> None:
    """Refuses the ECN settings the kernel's TCP cannot give: ECT(1) from a congestion control
    other than an L4S one, and AccECN feedback."""
    if ecn == "l4s" and cc != "prague":
        raise InputError(
            f"{efld}: 'l4s' (ECT(1), RFC 9331) cannot run on the testbed with {cc!r}: Linux's "
            "TCP sends ECT(1) only for an L4S congestion control (TCP Prague, not in mainline); "
            "use ecn = true (classic ECN, ECT(0)) or the simulator"
        )
    accecn, afld = _tcp_setting(sc, i, "accecn")
    if accecn:
        raise InputError(
            f"{afld}: AccECN (RFC 9768) cannot run on the testbed: {_accecn_kernel()}; "
            "run it in the simulator"
        )


def _groups(sc, flows: list[dict]) -> list[int]:
    """The group index of every flow of the configuration: a web group has one flow per object,
    so groups are told apart by the flow names (``<group name or g<i>>.<j>``)."""
    label = {(g.name or f"g{i}"): i for i, g in enumerate(sc.flows)}
    if len(label) != len(sc.flows):
        raise InputError("flows: the testbed needs distinct group names (name = ...)")
    return [label[f["name"].rsplit(".", 1)[0]] for f in flows]


def _dir_config(link: dict, mean_pkt: int) -> dict[str, Any]:
    d = {
        "name": link["name"],
        "rate_bps": link["rate_bps"],
        "mean_pkt_bytes": mean_pkt,
        "aqm": link.get("aqm", {"name": "droptail", "params": {}}),
        "default_delay_ns": link["delay_ns"],
        "delays": [],
    }
    # A capacity that varies: the forwarder's departure clock follows the same schedule or trace
    # from its start (crates/fwd/src/path.rs, qdisc::rate).
    for key in ("rate_schedule", "rate_repeat_ns", "trace_ms"):
        if link.get(key) is not None:
            d[key] = link[key]
    if link["buffer_pkts"]:
        d["buffer_pkts"] = link["buffer_pkts"]
    else:
        d["buffer_bytes"] = link["buffer_bytes"]
    return d


def _addresses(
    links: list[dict], nodes: list[dict], bott: dict
) -> tuple[dict[int, str], dict[str, list[str]]]:
    """An address for each host on either side of the bottleneck, in the order of the links
    that join them to it: node index -> address, and each side's addresses."""
    ip: dict[int, str] = {}
    sides: dict[str, list[str]] = {"left": [], "right": []}
    for lk in links:
        a, b = lk["from"], lk["to"]
        if b == bott["from"] and nodes[a]["kind"] == "host" and a not in ip:
            ip[a] = net.host_ip("left", len(sides["left"]))
            sides["left"].append(ip[a])
        if a == bott["to"] and nodes[b]["kind"] == "host" and b not in ip:
            ip[b] = net.host_ip("right", len(sides["right"]))
            sides["right"].append(ip[b])
    return ip, sides


def _flow_spec(f: dict, a: str, b: str, cc: str, links: list[dict]) -> dict[str, Any]:
    """The traffic tool's description of one flow of the simulator configuration, from
    address ``a`` to ``b`` under congestion control ``cc`` ("udp" for an open-loop source)."""
    spec = {"name": f["name"], "src": a, "dst": b, "cc": cc}
    spec["start_s"] = f["start_ns"] / 1e9
    spec["base_rtt_s"] = sum(links[x]["delay_ns"] for x in f["path"] + f["rev_path"]) / 1e9
    spec["path_rate_bps"] = min(links[x]["rate_bps"] for x in f["path"])
    if cc == "udp":
        src = f["source"]
        spec.update(kind="udp", rate_bps=src["rate_bps"], sizes=src["sizes"])
        if f.get("stop_ns") is not None:
            spec["stop_s"] = f["stop_ns"] / 1e9
    else:
        spec["size_bytes"] = f.get("size_bytes")
    return spec


def make(sc, cfg: dict[str, Any], cc: str | None = None, static_neighbours: bool = False) -> Plan:
    """The plan of a scenario whose simulator configuration is ``cfg`` (``cc``: see
    :func:`_check_flows`)."""
    ccs, (ecn, rcv_ecn), sack = _check_flows(sc, cc)
    links = cfg["links"]
    bott = next(lk for lk in links if lk["name"] == "bottleneck")
    rev = next(lk for lk in links if lk["name"] == "reverse")
    ip, sides = _addresses(links, cfg["nodes"], bott)
    fwd = _dir_config(bott, bott.get("mean_pkt_bytes", 1500))
    rv = _dir_config(rev, rev.get("mean_pkt_bytes", 40))
    seen = set()
    flows, group_of = [], _groups(sc, cfg["flows"])
    for k, f in enumerate(cfg["flows"]):
        a, b = ip[f["src"]], ip[f["dst"]]
        if (a, b) not in seen:
            seen.add((a, b))
            fwd["delays"].append(
                {"src": a, "dst": b, "delay_ns": sum(links[x]["delay_ns"] for x in f["path"])}
            )
            rv["delays"].append(
                {"src": b, "dst": a, "delay_ns": sum(links[x]["delay_ns"] for x in f["rev_path"])}
            )
        flows.append(_flow_spec(f, a, b, ccs[group_of[k]], links))
    t = sc.tcp
    p = Plan(
        left_ips=sides["left"],
        right_ips=sides["right"],
        ecn=ecn,
        receiver_ecn=rcv_ecn,
        sack=sack,
        init_cwnd=max(1, round(t.init_cwnd)),
        min_rto_ms=max(1, round(t.min_rto * 1e3)),
        duration_s=cfg["duration_ns"] / 1e9,
        warmup_s=cfg["warmup_ns"] / 1e9,
        fwd_config={
            "sample_interval_ns": cfg["sample_interval_ns"],
            "max_samples": cfg["max_samples"],
            "seed": cfg["seed"],
            "forward": fwd,
            "reverse": rv,
            "throttle_window_bytes": round(t.mss),
            "report_interval_ns": 1_000_000_000,
            "rt_priority": FWD_RT_PRIORITY,
        },
        traffic={
            "duration_s": cfg["duration_ns"] / 1e9,
            "warmup_s": cfg["warmup_ns"] / 1e9,
            "sample_s": SAMPLE_S,
            "seed": cfg["seed"],
            "flows": flows,
            # each TCP flow's bytes acknowledged and state at every sample (output.flow_series)
            "series": bool(sc.output.flow_series),
            "max_samples": cfg["max_samples"],
        },
    )
    p.differences = _differences(sc, ccs, static_neighbours)
    return p


def _differences(sc, ccs: list[str], static_neighbours: bool = False) -> list[str]:
    """What the testbed does differently from the simulator for this scenario (reported): the
    path, the connections' starts, what is measured, and the senders' model, in that order
    (``ccs``: each group's Linux module, or "udp", as :func:`_check_flows` gives them)."""
    return (
        _path_differences(sc)
        + _start_differences(sc, static_neighbours)
        + _measurement_differences(sc)
        + _pacing_differences(sc, ccs)
        + _sender_differences(sc)
    )


def _path_differences(sc) -> list[str]:
    """The access links, the frames on the wire and the bytes they carry."""
    d = [
        "access links: only their propagation delays are reproduced (per address pair in the "
        "forwarder); their rates and buffers are not",
        "the forwarder serialises whole Ethernet frames (IP packet + 14 B header) at the link rate",
    ]
    wire = sc.tcp.mss + sc.tcp.header + (12 if sc.tcp.timestamps else 0)
    if not (sc.tcp.mss == 1448 and wire == 1514):
        # 1448 / 1514 = 95.6 % of the link is payload on the testbed, 1460 / 1500 = 97.3 % in
        # the simulator by default: its goodputs 1.8 % higher for that alone.
        d.append(
            f"Linux's segments carry 1448 B of payload in 1514 B frames (timestamps, Ethernet); "
            f'the simulator\'s {sc.tcp.mss:g} B in {wire:g} B packets: tcp.mss = "1448B" with '
            f'tcp.header = "66B" (or "54B" with tcp.timestamps) puts the same bytes on the wire'
        )
    return d


def _start_differences(sc, static_neighbours: bool = False) -> list[str]:
    """How a TCP flow starts: ARP (unless the neighbours are static) and the handshake, and
    what its start_s means."""
    d = []
    arp = "" if static_neighbours else "resolves the address (ARP, across the bottleneck) and "
    if not sc.tcp.handshake:
        # Measured on the BBR bench (docs/testbed.md, "One draw per burst"): 6-7 % of its
        # flows connected a second or more late, a SYN or an ARP request lost in the full
        # queue; none of the first flows to start.
        d.append(
            f"Linux {arp}handshakes before "
            "sending data, and re-sends a SYN lost in a full queue after 1 s; with "
            "tcp.handshake = false the simulator's flows send data at their start time"
        )
    elif not sc.tcp.resolve and not static_neighbours:
        d.append(
            "Linux resolves the address (ARP, across the bottleneck) before the SYN leaves, "
            "and the SYN's round trip (BBR's first min RTT) includes it; with tcp.resolve = "
            "false the simulator's SYN leaves at the start (--neighbours static gives the "
            "testbed's hosts permanent entries instead)"
        )
    elif sc.tcp.resolve and static_neighbours:
        d.append(
            "the testbed's neighbour entries are static (--neighbours static): Linux's SYN "
            "leaves at the start; with tcp.resolve = true the simulator's waits for an address "
            "resolution across the bottleneck"
        )
    d.append(
        "a TCP flow's start_s is when its connection was established (the scheduled start, "
        f"also in scheduled_start_s, plus {'' if static_neighbours else 'ARP, '}the handshake "
        "and any lost SYN); the "
        "simulator's start_s is the scheduled start"
    )
    return d


def _measurement_differences(sc) -> list[str]:
    """Linux's own TCP, and what TCP_INFO gives of it: RTTs, counters, series."""
    d = [
        "Linux TCP: timestamps, delayed ACKs, pacing and its own RTO estimator; tcp.delack, "
        "tcp.rwnd, tcp.max_rto, tcp.init_rto and tcp.init_ssthresh are not applied",
        f"per-flow RTT is the kernel's smoothed RTT (tcpi_rtt) sampled every {SAMPLE_S * 1e3:g} ms",
        "per-flow timeouts, fast retransmits and ECN window reductions are not in TCP_INFO: null",
    ]
    if sc.output.flow_series:
        d.append(
            f"output.flow_series: a TCP flow's delivered bytes are the sender's bytes "
            f"acknowledged (tcpi_bytes_acked, about half a round trip after the receiver has "
            f"them) every {SAMPLE_S * 1e3:g} ms; the simulator's are the receiver's in-order "
            f"bytes every output.sample_interval; the testbed adds the kernel's TCP state "
            f"(series flow:<flow>: cwnd, ca_state, pacing and delivery rates, the receiver's "
            f"window and the receive-window chrono so far, BBR's estimate and gains); UDP "
            f"flows have no series on the testbed"
        )
    return d


def _pacing_differences(sc, ccs: list[str]) -> list[str]:
    """Which flows each side paces, and, when the kernel paces some, how its pacing clock
    differs from the simulator's (GSO bursts, the credit for a late departure)."""
    d = []
    for i, cc in enumerate(ccs):
        pacing, fld = _tcp_setting(sc, i, "pacing")
        if pacing and cc != "udp" and cc not in LINUX_PACED:
            d.append(
                f"{fld} = true paces the simulator's flows of group {i}; Linux's {cc} is not "
                "paced without an fq qdisc, which the testbed does not install (only bbr and "
                "prague pace themselves)"
            )
    if not any(cc in LINUX_PACED for cc in ccs):
        return d  # no flow is paced on the testbed: GSO bursts and the credit do not arise
    if not sc.tcp.gso:
        d.append(
            "Linux TCP paces in GSO bursts (tcp_tso_autosize: 2 segments and more back to "
            "back); with tcp.gso = false the simulator paces one segment at a time"
        )
    if not sc.tcp.pacing_credit:
        d.append(
            "Linux's pacing clock takes credit for a late departure (the next gap shortened "
            "by up to half, tcp_update_skb_after_send); with tcp.pacing_credit = false the "
            "simulator's restarts from the late departure"
        )
    return d


def _sender_differences(sc) -> list[str]:
    """The simulator's sender, receiver and header models against Linux's, in that order."""
    return _sender_model(sc) + _receiver_model(sc) + _header_model(sc)


def _sender_model(sc) -> list[str]:
    """The sender's window (SACK's pipe) and its timing noise against Linux's."""
    d = []
    if sc.tcp.sack_window == "span":
        d.append(
            "tcp.sack_window 'span' (ns-2's Sack1): Linux's window counts the segments in "
            "flight, SACKed ones not counted ('pipe')"
        )
    if sc.tcp.send_jitter > 0:
        d.append(
            f"tcp.send_jitter {sc.tcp.send_jitter * 1e6:g} us is the simulator's model of a "
            "host's timing noise; on the testbed the kernel's own noise applies"
        )
    else:
        d.append(
            "the kernel's segments leave with tens of microseconds of timing noise; with "
            "tcp.send_jitter = 0 the simulator's leave at exact instants (drop-tail phase "
            "effects: docs/testbed.md, 'Exact delays')"
        )
    return d


def _receiver_model(sc) -> list[str]:
    """The receivers' window and SACK compression against Linux's receivers."""
    d = []
    if sc.tcp.rwnd_model == "fixed":
        d.append(
            "Linux's receivers advertise about 64 KB at first and widen the window once per RTT "
            "(tcp_rcv_space_adjust), narrowed by data held out of order; with tcp.rwnd_model = "
            "'fixed' the simulator's receivers advertise tcp.rwnd from the first ACK"
        )
    else:
        d.append(
            "tcp.rwnd_model 'linux' models Linux 6.18's receive window with an estimated "
            "scaling ratio, whole segments as bytes and no memory-pressure paths "
            "(docs/transports.md)"
        )
    if sc.tcp.sack_compress:
        d.append(
            "tcp.sack_compress models Linux's SACK compression (tcp_comp_sack_*), which the "
            "kernel's receivers do anyway; the model times it from the receiver's RTT estimate "
            "only (Linux: that or SRTT, the smaller)"
        )
    else:
        d.append(
            "Linux's receivers compress SACKs (after 3 immediate duplicate ACKs the rest wait "
            "up to min(1 ms, RTT / 20), at most 44; blocks most recent first); with "
            "tcp.sack_compress = false the simulator's receivers ACK every out-of-order "
            "segment at once, blocks highest first"
        )
    return d


def _header_model(sc) -> list[str]:
    """Timestamps (and the RTT samples they give) and the MSS against Linux TCP's."""
    d = []
    if not sc.tcp.timestamps:
        d.append(
            "Linux TCP has timestamps on: an ACK of retransmitted segments alone is an RTT "
            "sample through the echo, in whole milliseconds (BBR's min RTT, RACK's estimator); "
            "with tcp.timestamps = false the simulator's senders have none there "
            '(tcp.timestamps = true with tcp.header = "54B" does as Linux)'
        )
    if sc.tcp.mss not in (1460, 1448):  # 1448: the wire line of _path_differences
        d.append(
            f"tcp.mss {sc.tcp.mss}: the MTU is 1500 B, so Linux's MSS is 1460 B "
            "(1448 B with timestamps)"
        )
    return d


def _udp_summary(f: dict, spec: dict, received: dict, duration_s: float) -> dict[str, Any]:
    """A UDP flow's summary: packets sent (after warm-up) and received (whole run: the sink
    counts per source without timestamps); goodput over the flow's whole active time."""
    got_pkts, got_bytes = received.get(f["source"], [0, 0])
    active = max(1e-9, duration_s - spec["start_s"])
    tcp_only = ("rtt_mean_s", "rtt_min_s", "rtt_max_s", "rtt_p50_s", "rtt_p90_s", "rtt_p99_s")
    return {
        "name": f["name"],
        "src": spec["src"],
        "dst": spec["dst"],
        "start_s": spec["start_s"],
        "goodput_bps": got_bytes * 8 / active,
        "offered_bps": f["offered_bps"],
        "udp_sent": f["udp_sent"],
        "udp_received": got_pkts,
        "udp_loss": 1 - got_pkts / f["udp_sent"] if f["udp_sent"] else None,
        "segments_sent": f["udp_sent"],
        "delivered_segments": 0,
        "retransmits": 0,
        "timeouts": 0,
        "fast_retransmits": 0,
        "ecn_reductions": 0,
        "delivered_ce": 0,
        "rtt_samples": 0,
        **dict.fromkeys(tcp_only),
        "cwnd_final": None,
        "completion_s": None,
        **dict.fromkeys(("busy_s", "rwnd_limited_s", "sndbuf_limited_s")),
        "size_bytes": None,
        "base_rtt_s": spec["base_rtt_s"],
        "path_rate_bps": spec["path_rate_bps"],
        "congestion_control": "udp",
        "error": f["error"],
    }


def _flow_summary(f: dict, spec: dict) -> dict[str, Any]:
    return {
        "name": f["name"],
        "src": spec["src"],
        "dst": spec["dst"],
        "start_s": f["start_s"] if f["start_s"] is not None else math.nan,
        "scheduled_start_s": spec["start_s"],
        "goodput_bps": f["goodput_bps"],
        "delivered_segments": f["delivered_segments"],
        "segments_sent": f["segments_sent"],
        "retransmits": f["retransmits"],
        "timeouts": None,
        "fast_retransmits": None,
        "ecn_reductions": None,
        "delivered_ce": f["delivered_ce"],
        "ecn_negotiated": f["ecn_negotiated"],
        "congestion_control": spec["cc"],
        "error": f["error"],
        "size_bytes": spec.get("size_bytes"),
        "base_rtt_s": spec["base_rtt_s"],
        "path_rate_bps": spec["path_rate_bps"],
        **{
            k: f[k]
            for k in (
                "rtt_samples",
                "rtt_mean_s",
                "rtt_min_s",
                "rtt_max_s",
                "rtt_p50_s",
                "rtt_p90_s",
                "rtt_p99_s",
                "cwnd_final",
                "completion_s",
            )
        },
        # testbed only (TCP_INFO): time with data in flight and the parts of it limited by the
        # receive window or the send buffer rather than cwnd
        **{k: f.get(k) for k in ("busy_s", "rwnd_limited_s", "sndbuf_limited_s")},
    }


#: The sender's state kept at every TCP_INFO sample with ``output.flow_series`` (series
#: ``flow:<flow>``): cwnd (segments), tcpi_ca_state (0 Open, 1 Disorder, 2 CWR, 3 Recovery,
#: 4 Loss), pacing and delivery rates (bit/s), the receiver's advertised window as the sender
#: last saw it (tcpi_snd_wnd, bytes), the time so far the receive window limited the sender
#: (tcpi_rwnd_limited, s); with BBR its TCP_CC_INFO (bandwidth estimate in bit/s, min RTT in s,
#: pacing and cwnd gains).
STATE_COLUMNS = (
    "cwnd",
    "ca_state",
    "pacing_rate_bps",
    "delivery_rate_bps",
    "snd_wnd_bytes",
    "rwnd_limited_s",
    "bbr_bw_bps",
    "bbr_min_rtt_s",
    "bbr_pacing_gain",
    "bbr_cwnd_gain",
)


def _column(values: list) -> np.ndarray:
    """A JSON column as floats (``null``, a value the kernel did not give, as NaN)."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _delivered_series(traffic: dict) -> dict[str, dict[str, np.ndarray]]:
    """Each TCP flow's ``delivered:<flow>`` series (``output.flow_series``): the sender's bytes
    acknowledged (tcpi_bytes_acked) at every TCP_INFO sample, t = 0 at the scenario's origin;
    and its ``flow:<flow>`` series, the sender's state then (:data:`STATE_COLUMNS`)."""
    out = {}
    for f in traffic["flows"]:
        s = f.get("series")
        if s:
            t = _column(s["t_s"])
            out[f"delivered:{f['name']}"] = {
                "t_s": t,
                "delivered_bytes": _column(s["bytes_acked"]),
            }
            out[f"flow:{f['name']}"] = {"t_s": t} | {
                c: _column(s[c]) for c in STATE_COLUMNS if c in s
            }
    return out


def _series(raw: dict, lead_s: float) -> dict[str, dict[str, np.ndarray]]:
    """The forwarder's series as the runner's columns (numpy arrays by name), from t = 0 on."""
    out = {}
    for name, s in raw.items():
        t = np.asarray(s["t_ns"], dtype=float) / 1e9 - lead_s
        keep = t >= 0
        cols = {"t_s": t[keep]}
        for c, v in s["cols"].items():
            cols[c] = np.asarray(v, dtype=float)[keep]
        out[name] = cols
    return out


def result(sc, cfg, p: Plan, stats: dict, traffic: dict, env: dict, lead_s: float, wall: float):
    """The run ``Result`` of a testbed run, in the simulator's schema plus a ``testbed`` section."""
    from aqmlab.running import runner

    series = _series(stats["series"], lead_s)
    series.update(_delivered_series(traffic))
    cons = stats["conservation"]
    summary: dict[str, Any] = {
        "run": {
            "duration_s": p.duration_s,
            "warmup_s": p.warmup_s,
            "seed": cfg["seed"],
            "events": cons["received"],
            "packets_sent": cons["received"],
            "packets_delivered": cons["sent"],
            "packets_dropped": cons["dropped"],
        },
        "engine": "testbed",
        "links": stats["links"],
        "flows": [
            _udp_summary(f, s, traffic.get("udp_received", {}), p.duration_s)
            if s.get("kind") == "udp"
            else _flow_summary(f, s)
            for f, s in zip(traffic["flows"], p.traffic["flows"], strict=True)
        ],
    }
    summary = runner._enrich(summary, sc, series)
    summary["testbed"] = {
        "conservation": cons,
        "buffer_violations": stats["buffer_violations"],
        "oddities": stats["oddities"],
        "rings": stats["rings"],
        "timestamps": stats["timestamps"],
        "forwarder_cpu_s": stats["cpu_s"],
        "forwarder_elapsed_s": stats["elapsed_s"],
        "forwarder_scheduling": stats.get("scheduling"),
        "traffic_source_cpu_s": traffic.get("cpu_s"),
        "udp_pacer": traffic.get("udp_pacer"),
        "throttle_rewrites": stats["throttle_rewrites"],
        "ecn": p.ecn,
        "sack": p.sack,
        "differences": p.differences,
        **env,
    }
    return runner.Result(summary, series, scenario=sc.model_dump(), wall_s=wall)
