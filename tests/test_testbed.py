"""The testbed on real packets (issue 11): real Linux cubic flows through aqmlab-fwd, malformed
frames on the wire, refusals, clean-up. The network tests need root (CAP_NET_ADMIN, CAP_NET_RAW)
and skip with the reason elsewhere; the refusal tests run anywhere."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab.cli import main as cli
from aqmlab.testbed import net

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "testbed" / "red-4-cubic.toml"
FWD = ROOT / "target" / "release" / "aqmlab-fwd"
TRAFFIC = ROOT / "target" / "release" / "aqmlab-traffic"
AQMLAB = str(Path(sys.executable).with_name("aqmlab"))


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (CAP_NET_ADMIN, CAP_NET_RAW) for namespaces and raw sockets"
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            return f"needs the {tool} command"
    if not (FWD.exists() and TRAFFIC.exists()):
        r = subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "aqmlab-fwd"], cwd=ROOT, capture_output=True
        )
        if r.returncode != 0 or not (FWD.exists() and TRAFFIC.exists()):
            return "aqmlab-fwd and aqmlab-traffic could not be built"
    return None


REASON = _why_not()
needs_net = pytest.mark.skipif(REASON is not None, reason=str(REASON))


@pytest.fixture(scope="module")
def red_run(tmp_path_factory):
    """One 5 s run: 4 cubic flows with ECN through RED at 20 Mb/s, each flow's delivered bytes
    recorded (``output.flow_series``)."""
    import tomllib

    import aqmlab
    from aqmlab import testbed

    d = tomllib.loads(SCENARIO.read_text())
    d.setdefault("output", {})["flow_series"] = True
    out = tmp_path_factory.mktemp("tb") / "red"
    res = testbed.testbed(d, out=out, cc="cubic")
    return res, aqmlab.load(out)


@needs_net
def test_real_cubic_flows_through_red_conserve_fill_and_get_ecn_marks(red_run):
    res, loaded = red_run
    tb = res.summary["testbed"]
    c = tb["conservation"]
    # Packet conservation in the forwarder, in total and per direction.
    assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]
    for d in ("forward", "reverse"):
        assert c[d]["received"] >= c[d]["sent"] + c[d]["dropped"]
    assert c["received"] > 4000, "20 Mb/s for 5 s is about 8000 full frames"
    # No frame lost outside the AQM: the kernel stored every frame in the forwarder's rings
    # (a starved forwarder loses them there, unseen by the link's statistics).
    rings = tb["rings"]
    assert rings["left_kernel_drops"] == 0 and rings["right_kernel_drops"] == 0, rings
    # It ran as a forwarding box's packet path does, ahead of ordinary work on its core.
    assert tb["forwarder_scheduling"].startswith("SCHED_FIFO"), tb["forwarder_scheduling"]
    b = res.bottleneck
    # Utilisation over [warm-up, end] of the configured 20 Mb/s; on failure, what limited the
    # senders (TCP_INFO: receive window = a starved sink, send buffer = a starved source) and
    # what the forwarder got (its CPU, its scheduling, frames its rings lost).
    why = {
        "flows": [
            {k: f.get(k) for k in ("name", "busy_s", "rwnd_limited_s", "sndbuf_limited_s")}
            for f in res.summary["flows"]
        ],
        **{k: tb.get(k) for k in ("forwarder_cpu_s", "forwarder_scheduling", "rings")},
    }
    assert b["utilisation"] >= 0.9, why
    # The queue never exceeds the 100-packet buffer: summary, series and the forwarder's check.
    assert b["queue_max_pkts"] <= 100
    assert res.queue["queue_pkts"].max() <= 100
    assert tb["buffer_violations"] == 0
    # ECN: RED marked, ECN was negotiated, and the marks came back to the senders as ECE.
    assert b["marked"] > 0
    flows = res.summary["flows"]
    assert all(f["ecn_negotiated"] for f in flows)
    assert sum(f["delivered_ce"] for f in flows) > 0
    assert all(f["error"] is None and f["goodput_bps"] > 0 for f in flows)
    # A connection is established one round trip after its SYN at the earliest: the forwarder
    # holds each packet for its path's propagation delay both ways.
    for f in flows:
        assert f["start_s"] >= f["scheduled_start_s"] + 0.99 * f["base_rtt_s"], f
    # Every veth end had its offloads off.
    for feats in tb["offloads"].values():
        assert feats["tcp-segmentation-offload"] == "off"
        assert feats["generic-segmentation-offload"] == "off"
        assert feats["generic-receive-offload"] == "off"
    # Nothing left behind.
    assert not [n for n in net.leftover_namespaces() if n.startswith(tb["prefix"])]
    # The results read back like a simulated run, report included.
    assert loaded.summary["engine"] == "testbed"
    assert loaded.bottleneck["marked"] == b["marked"]
    assert (res.out_dir / "report.html").is_file()


@needs_net
def test_real_flows_delivered_bytes_over_time_add_up_to_what_the_forwarder_carried(red_run):
    import numpy as np

    from aqmlab.testbed import plan

    res, loaded = red_run
    flows = res.summary["flows"]
    run = res.summary["run"]
    acked_end = 0.0
    for f in flows:
        c = loaded.columns[f"delivered:{f['name']}"]
        t, b = c["t_s"], c["delivered_bytes"]
        # One point per TCP_INFO sample from the origin to the end, never decreasing, nothing
        # before the connection was established.
        assert t[0] < plan.SAMPLE_S and t[-1] >= run["duration_s"] - plan.SAMPLE_S, t
        assert np.all(np.diff(b) >= 0)
        assert np.all(b[t < f["start_s"]] == 0)
        assert len(t) >= run["duration_s"] / plan.SAMPLE_S * 0.9
        # Its slope over [warm-up, end] is the flow's goodput (both from tcpi_bytes_acked).
        i = np.searchsorted(t, run["warmup_s"])
        slope = (b[-1] - b[i]) * 8 / (t[-1] - t[i])
        assert slope == pytest.approx(f["goodput_bps"], rel=0.02), f["name"]
        acked_end += b[-1]
        # The sender's state at the same samples: a window once connected, Linux's congestion
        # states (0 Open .. 4 Loss), no BBR fields for cubic.
        st = loaded.columns[f"flow:{f['name']}"]
        assert len(st["t_s"]) == len(t) and st["cwnd"].max() >= 2
        assert set(np.unique(st["ca_state"])) <= {0.0, 1.0, 2.0, 3.0, 4.0}
        assert "bbr_bw_bps" not in st
        # The receiver's window as the sender saw it: open once data flows, within TCP's
        # largest (65535 << 14, RFC 7323 s. 2.3); the receive-window chrono only grows and
        # ends at or below the flow's final figure (read once more after the last sample).
        w = st["snd_wnd_bytes"][t > f["start_s"] + 0.5]
        assert w.min() > 0 and w.max() <= 65535 << 14
        rl = st["rwnd_limited_s"]
        assert np.all(np.diff(rl) >= 0) and rl[-1] <= f["rwnd_limited_s"] + 1e-6
    # Conservation against an independent counter: the senders' acknowledged payload is what
    # the forwarder delivered forwards (full frames carry 1448 B: timestamps on), less SYNs,
    # ARP, retransmissions and the frames still in flight at the end.
    carried = res.summary["testbed"]["conservation"]["forward"]["sent"] * 1448
    assert 0.9 * carried <= acked_end <= carried, (acked_end, carried)
    assert any("output.flow_series" in x for x in res.summary["testbed"]["differences"])


def _frame(dst_mac: bytes, src_mac: bytes, ethertype: int, payload: bytes) -> bytes:
    return dst_mac + src_mac + struct.pack("!H", ethertype) + payload


def _ipv4(total: int, ihl_words: int = 5, opts: bytes = b"", frag: int = 0x4000) -> bytes:
    h = struct.pack(
        "!BBHHHBBH4s4s",
        0x40 | ihl_words,
        0,
        total,
        1,
        frag,
        64,
        17,
        0,
        socket.inet_aton(net.host_ip("left", 0)),
        socket.inet_aton(net.host_ip("right", 0)),
    )
    return h + opts


@needs_net
def test_malformed_frames_on_the_wire_are_dropped_and_counted_never_crash(tmp_path):
    n = net.Net()
    try:
        n.build([net.host_ip("left", 0)], [net.host_ip("right", 0)], ecn=False, sack=True)
        cfg = {
            "left": n.if_a,
            "right": n.if_b,
            "duration_ns": 2_500_000_000,
            "sample_interval_ns": 10_000_000,
            "forward": {
                "name": "bottleneck",
                "rate_bps": 10_000_000,
                "buffer_pkts": 50,
                "mean_pkt_bytes": 1000,
                "aqm": {"name": "red"},
            },
            "reverse": {
                "name": "reverse",
                "rate_bps": 10_000_000,
                "buffer_pkts": 50,
                "mean_pkt_bytes": 100,
                "aqm": {"name": "droptail"},
            },
        }
        (tmp_path / "c.json").write_text(json.dumps(cfg))
        fwd = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                n.rtr,
                str(FWD),
                str(tmp_path / "c.json"),
                str(tmp_path / "o.json"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert fwd.stdout.readline().startswith("ready")
        bcast, src = b"\xff" * 6, b"\x02\x00\x00\x00\x00\x01"
        payload = b"x" * 40
        frames = {
            "bad_ipv4_header": _frame(bcast, src, 0x0800, b"\x43" + bytes(30)),  # IHL 3
            "bad_ipv4_length": _frame(bcast, src, 0x0800, _ipv4(900) + payload),  # > frame
            "ipv6": _frame(bcast, src, 0x86DD, b"\x60" + bytes(60)),
            "options": _frame(bcast, src, 0x0800, _ipv4(24 + 40, 6, b"\x01\x01\x01\x00") + payload),
            "fragment": _frame(bcast, src, 0x0800, _ipv4(20 + 40, frag=0x2000 | 8) + payload),
            "runt": _frame(bcast, src, 0x0800, b"\x45"),
        }
        code = (
            "import socket,sys,json\n"
            "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
            f"s.bind(({n.if_snd!r},0))\n"
            "for h in json.loads(sys.argv[1]): s.send(bytes.fromhex(h))\n"
        )
        blob = json.dumps([f.hex() for f in frames.values()])
        subprocess.run(["ip", "netns", "exec", n.snd, sys.executable, "-c", code, blob], check=True)
        _, err = fwd.communicate(timeout=10)
        assert fwd.returncode == 0, err
        stats = json.loads((tmp_path / "o.json").read_text())
    finally:
        n.close()
    odd = stats["oddities"]
    assert odd["dropped_malformed"].get("bad_ipv4_header", 0) >= 2  # IHL 3 and the runt
    assert odd["dropped_malformed"].get("bad_ipv4_length", 0) >= 1
    assert odd["forwarded_non_ipv4"] >= 1  # IPv6 passes unchanged
    assert odd["ipv4_options"] >= 1 and odd["ipv4_fragments"] >= 1
    c = stats["conservation"]
    assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]


def _cli(args: list[str], capsys) -> tuple[int, str]:
    code = cli.main(args)
    return code, capsys.readouterr().err.strip()


def test_without_root_one_line_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, err = _cli(["testbed", str(SCENARIO)], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "root" in err


def test_root_without_the_network_capabilities_is_one_line_exit_2(monkeypatch, capsys):
    import aqmlab.testbed as tb

    # linux/capability.h: CAP_NET_ADMIN is bit 12, CAP_NET_RAW bit 13. A full root set is
    # 0x1ffffffffff; the same with both cleared (a container without them) is 0x1ffffffcfff.
    full, reduced = 0x1FFFFFFFFFF, 0x1FFFFFFFFFF & ~(1 << 12 | 1 << 13)
    assert tb._missing_caps(f"Name:\tx\nCapEff:\t{full:016x}\n") == []
    assert tb._missing_caps(f"CapEff:\t{reduced:016x}\n") == ["CAP_NET_ADMIN", "CAP_NET_RAW"]
    only_raw = full & ~(1 << 13)
    assert tb._missing_caps(f"CapEff:\t{only_raw:016x}\n") == ["CAP_NET_RAW"]
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(tb, "_missing_caps", lambda status: ["CAP_NET_ADMIN"])
    code, err = _cli(["testbed", str(SCENARIO)], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "CAP_NET_ADMIN" in err


def test_an_unknown_neighbours_mode_is_one_line_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # refused before root is asked for
    code, err = _cli(["testbed", str(SCENARIO), "--neighbours", "arp"], capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "--neighbours arp" in err and "resolve, static" in err, err


@needs_net
def test_static_neighbours_open_each_connection_one_round_trip_after_its_start(
    red_run, tmp_path, capsys
):
    """By default each sender resolves its receiver's address by ARP across the forwarder (a
    request forward, a reply back: frames it passes as non-IPv4), so a connection opens no
    sooner than that round trip over the bottleneck (2 x 5 ms in this scenario) plus the SYN's
    (the base RTT). With ``--neighbours static`` the end hosts have permanent entries, no ARP
    crosses the forwarder and the four flows, started together on an empty queue, connect one
    base RTT after their start (give or take the traffic tool's scheduling)."""
    res, _ = red_run
    tb = res.summary["testbed"]
    assert tb["neighbours"] == {"mode": "resolve", "static_entries": 0}
    assert tb["oddities"]["forwarded_non_ipv4"] >= 2 * len(res.summary["flows"]), tb["oddities"]
    for f in res.summary["flows"]:
        assert f["start_s"] - f["scheduled_start_s"] >= f["base_rtt_s"] + 0.0099, f
    out = tmp_path / "static"
    code = cli.main(
        ["testbed", str(SCENARIO), "--cc", "cubic", "--neighbours", "static", "--out", str(out)]
    )
    capsys.readouterr()
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    tb = summary["testbed"]
    assert tb["neighbours"] == {"mode": "static", "static_entries": 8}  # 4 each way
    assert tb["oddities"]["forwarded_non_ipv4"] == 0, tb["oddities"]
    assert not any("ARP" in x for x in tb["differences"]), tb["differences"]
    flows = summary["flows"]
    assert len(flows) == 4 and all(f["error"] is None and f["goodput_bps"] > 0 for f in flows)
    for f in flows:
        waited = f["start_s"] - f["scheduled_start_s"]
        assert f["base_rtt_s"] * 0.99 <= waited < f["base_rtt_s"] + 0.005, f


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"flows": [{"type": "poisson", "load": 0.5}]}, "flows[0].type"),
        ({"tcp": {"variant": "reno"}}, "tcp.variant"),
        (
            {"flows": [{"count": 1, "tcp": {"ecn": True}}, {"count": 1, "tcp": {"ecn": False}}]},
            "flows[1].tcp.ecn",
        ),
    ],
)
def test_unsupported_scenario_features_refused_naming_the_field(tmp_path, monkeypatch, edit, field):
    import tomllib

    from aqmlab.errors import InputError
    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    d = tomllib.loads(SCENARIO.read_text())
    d.update(edit)
    sc = scenario.from_dict(d)
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc))
    assert str(e.value).startswith(field + ":"), str(e.value)


@needs_net
def test_sigterm_removes_everything_and_cleanup_removes_leftovers(tmp_path):
    before = set(net.leftover_namespaces())
    p = subprocess.Popen(
        [AQMLAB, "testbed", str(SCENARIO), "--out", str(tmp_path / "x")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 20
    while time.time() < deadline and not (set(net.leftover_namespaces()) - before):
        time.sleep(0.1)
    assert set(net.leftover_namespaces()) - before, "the run created its namespaces"
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=20)
    assert p.returncode != 0
    assert not (set(net.leftover_namespaces()) - before)
    assert not (tmp_path / "x" / "summary.json").exists()
    # A leftover from a killed run (a namespace with the testbed's prefix) goes with --cleanup.
    subprocess.run(["ip", "netns", "add", "aqtb00beef-rtr"], check=True)
    r = subprocess.run([AQMLAB, "testbed", "--cleanup"], capture_output=True, text=True)
    assert r.returncode == 0 and "aqtb00beef-rtr" in r.stdout
    assert "aqtb00beef-rtr" not in net.leftover_namespaces()


@needs_net
def test_modred_throttle_rewrites_real_acks(tmp_path):
    from aqmlab import testbed

    res = testbed.testbed(
        ROOT / "scenarios" / "testbed" / "modred-4-cubic.toml", out=tmp_path / "m", cc="cubic"
    )
    tb = res.summary["testbed"]
    c = tb["conservation"]
    assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]
    # ModRED throttled flows, and the forwarder clamped real ACK windows for them.
    assert res.bottleneck["throttled"] > 0
    assert tb["throttle_rewrites"] > 0


@pytest.mark.skipif(not TRAFFIC.exists(), reason="aqmlab-traffic not built")
def test_traffic_tool_bad_input_is_one_line_exit_2(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(TRAFFIC), *args], capture_output=True, text=True, timeout=10)

    spec = {"duration_s": 1, "warmup_s": 0, "port": 5001, "flows": []}
    cases = [
        ((), "usage"),
        (("sink", "99999"), "PORT"),
        (("source", str(tmp_path / "missing.json"), str(tmp_path / "o.json")), "missing.json"),
    ]
    bad_ip = dict(spec, flows=[{"name": "g0.0", "src": "10.1.2", "dst": "x", "start_s": 0}])
    (tmp_path / "ip.json").write_text(json.dumps(bad_ip))
    cases.append((("source", str(tmp_path / "ip.json"), str(tmp_path / "o.json")), "g0.0"))
    bad_udp = dict(
        spec,
        flows=[
            {
                "name": "u.0",
                "kind": "udp",
                "src": "127.0.0.1",
                "dst": "127.0.0.1",
                "start_s": 0,
                "rate_bps": 1e6,
                "sizes": [],
            }
        ],
    )
    (tmp_path / "udp.json").write_text(json.dumps(bad_udp))
    cases.append((("source", str(tmp_path / "udp.json"), str(tmp_path / "o.json")), "sizes"))
    for args, word in cases:
        r = run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and word in r.stderr, r.stderr
        assert "panicked" not in r.stderr
    assert not (tmp_path / "o.json").exists()


@needs_net
def test_receivers_that_refuse_ecn_leave_the_real_flows_without_it():
    """``tcp.receiver_ecn = "off"``: the receivers' namespace refuses ECN, so the kernel's
    handshake leaves every flow without it (RFC 3168 s. 6.1.1) and RED, its ECN on, can only
    drop: no frame leaves marked, no CE reaches a receiver."""
    import tomllib

    from aqmlab import testbed
    from aqmlab.scenario import schema as scenario

    d = tomllib.loads(SCENARIO.read_text())
    d["duration"], d["tcp"]["receiver_ecn"] = "2s", "off"
    res = testbed.testbed(scenario.from_dict(d), cc="cubic")
    flows = res.summary["flows"]
    assert flows and not any(f["ecn_negotiated"] for f in flows), flows
    assert sum(f["delivered_ce"] for f in flows) == 0
    assert res.bottleneck["marked"] == 0 and res.bottleneck["dropped_aqm"] > 0


def _plan_differences(monkeypatch, tcp: dict, static_neighbours: bool = False) -> list[str]:
    """The testbed plan's ``differences`` for the RED scenario with ``tcp`` settings added (as
    root, without touching the network)."""
    import tomllib

    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    d = tomllib.loads(SCENARIO.read_text())
    d.setdefault("tcp", {}).update(tcp)
    sc = scenario.from_dict(d)
    return plan.make(sc, scenario.build_config(sc), static_neighbours=static_neighbours).differences


@pytest.mark.parametrize(
    ("tcp", "wire"),
    [
        ({}, "1460 B in 1500 B packets"),  # the default: 20 B IP + 20 B TCP
        ({"mss": "1448B", "header": "66B"}, None),  # + 12 B timestamps + 14 B Ethernet
        ({"mss": "1448B", "header": "54B", "timestamps": True}, None),
        ({"mss": "1448B", "header": "40B", "timestamps": True}, "1448 B in 1500 B packets"),
    ],
)
def test_the_plan_says_when_the_simulator_puts_other_bytes_on_the_wire(monkeypatch, tcp, wire):
    """Linux's 1448 B of payload (1460 less the 12 B timestamps option) travel in 1514 B frames
    (+ 20 IP, 20 TCP, 12 timestamps, 14 Ethernet): the plan names the simulator's sizes and the
    settings that match, and says nothing when they already do."""
    lines = [x for x in _plan_differences(monkeypatch, tcp) if "1514 B" in x]
    if wire is None:
        assert lines == []
    else:
        assert len(lines) == 1 and wire in lines[0] and 'tcp.header = "66B"' in lines[0], lines


@pytest.mark.parametrize("compress", [False, True])
def test_the_plan_says_how_the_simulators_receivers_send_sacks(monkeypatch, compress):
    """Linux's receivers compress SACKs; the plan says the simulator's do not unless
    tcp.sack_compress is on, and then what its model leaves out."""
    diffs = _plan_differences(monkeypatch, {"sack_compress": compress})
    lines = [x for x in diffs if "compress" in x]
    assert len(lines) == 1, diffs
    assert ("tcp.sack_compress = false" in lines[0]) is not compress, lines
    assert ("SRTT" in lines[0]) is compress, lines


@pytest.mark.parametrize("timestamps", [False, True])
def test_the_plan_says_when_the_simulators_senders_have_no_timestamps(monkeypatch, timestamps):
    """Linux's senders take an RTT sample from the timestamp echo of an ACK of retransmissions
    alone (BBR's min RTT hears it during recovery); the plan says the simulator's do not
    unless tcp.timestamps is on, and which settings match."""
    diffs = _plan_differences(monkeypatch, {"timestamps": timestamps})
    lines = [x for x in diffs if "tcp.timestamps = false" in x]
    assert len(lines) == (0 if timestamps else 1), diffs
    assert all('tcp.header = "54B"' in x for x in lines), lines


@pytest.mark.parametrize(
    ("tcp", "unpaced", "clock"),
    [
        ({}, False, False),  # NewReno on both sides, unpaced: no pacing line at all
        ({"pacing": True}, True, False),  # the simulator paces; Linux's reno does not
        ({"cc": "bbr"}, False, True),  # both pace: the kernel's GSO bursts and credit said
        ({"cc": "bbr", "gso": True, "pacing_credit": True}, False, False),  # modelled
    ],
)
def test_the_plan_says_which_flows_each_side_paces(monkeypatch, tcp, unpaced, clock):
    """Linux paces bbr and prague itself, other modules only under an fq qdisc (which the
    testbed does not install): the plan says when the simulator paces flows the kernel will
    not, and speaks of the kernel's pacing clock (GSO bursts, credit) only when it paces."""
    diffs = _plan_differences(monkeypatch, tcp)
    lines = [x for x in diffs if "is not paced" in x]
    assert len(lines) == int(unpaced), diffs
    assert all("tcp.pacing = true" in x and "reno" in x for x in lines), lines
    gso = [x for x in diffs if "GSO bursts" in x]
    credit = [x for x in diffs if "takes credit" in x]
    assert len(gso) == len(credit) == int(clock), diffs


@pytest.mark.parametrize(
    ("tcp", "static", "line"),
    [
        ({"handshake": False}, False, "tcp.handshake = false"),
        ({"handshake": True}, False, "tcp.resolve = false"),
        ({"handshake": True, "resolve": True}, False, None),
        ({"handshake": False}, True, "tcp.handshake = false"),
        ({"handshake": True}, True, None),
        ({"handshake": True, "resolve": True}, True, "tcp.resolve = true"),
    ],
)
def test_the_plan_says_when_the_simulator_skips_the_handshake(monkeypatch, tcp, static, line):
    """Linux's flows resolve the address and handshake before their data (a SYN lost in a full
    queue costs 1 s); the plan says so unless the simulator's handshake is on, then that its SYN
    skips the resolution unless tcp.resolve is on, and always what the testbed's start_s means.
    With static neighbour entries no ARP is spoken of, and tcp.resolve is the difference."""
    diffs = _plan_differences(monkeypatch, tcp, static)
    starts = [x for x in diffs if "start_s" in x]
    lines = [x for x in diffs if ("handshake" in x or "tcp.resolve" in x) and x not in starts]
    assert len(lines) == (line is not None), diffs
    assert all(line in x for x in lines), lines
    assert len(starts) == 1 and "scheduled_start_s" in starts[0], diffs
    assert all(("ARP" in x) is not static for x in lines + starts), diffs


def test_flow_series_reach_the_traffic_tool_and_come_back_as_series(monkeypatch):
    """``output.flow_series`` asks the traffic tool for its samples (``series``, with the run's
    ``max_samples``); its output becomes ``delivered:<flow>`` (bytes acknowledged) and
    ``flow:<flow>`` (the sender's state), a value the kernel did not give (``null``, BBR's
    fields before the connection) as NaN; a flow without series (UDP) has neither."""
    import math
    import tomllib

    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    d = tomllib.loads(SCENARIO.read_text())
    sc = scenario.from_dict(d)
    assert plan.make(sc, scenario.build_config(sc)).traffic["series"] is False
    d.setdefault("output", {})["flow_series"] = True
    sc = scenario.from_dict(d)
    cfg = scenario.build_config(sc)
    traffic = plan.make(sc, cfg).traffic
    assert traffic["series"] is True and traffic["max_samples"] == cfg["max_samples"]
    out = {
        "flows": [
            {
                "name": "g0.0",
                "series": {
                    "t_s": [0.0, 0.02],
                    "bytes_acked": [0, 2896],
                    "cwnd": [0, 10],
                    "ca_state": [0, 0],
                    "pacing_rate_bps": [0, 8000000],
                    "delivery_rate_bps": [0, 4000000],
                    "snd_wnd_bytes": [0, 65160],
                    "rwnd_limited_s": [0.0, 0.0],
                    "bbr_bw_bps": [None, 4000000.0],
                    "bbr_min_rtt_s": [None, 0.024],
                    "bbr_pacing_gain": [None, 2.88671875],
                    "bbr_cwnd_gain": [None, 2.88671875],
                },
            },
            {"name": "u0.0"},
        ]
    }
    s = plan._delivered_series(out)
    assert sorted(s) == ["delivered:g0.0", "flow:g0.0"]
    assert list(s["delivered:g0.0"]["delivered_bytes"]) == [0.0, 2896.0]
    st = s["flow:g0.0"]
    assert sorted(st) == sorted(("t_s", *plan.STATE_COLUMNS))
    assert math.isnan(st["bbr_bw_bps"][0]) and st["bbr_bw_bps"][1] == 4e6
    assert st["cwnd"][1] == 10.0
