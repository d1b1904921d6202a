"""Testbed clean-up across runs (issue 19 item 3): a run killed with SIGKILL leaves nothing running
(its children die with it) and the next run reclaims its namespaces, veths and temporary
directory; a live run's namespaces are never touched by another run. Needs root and the
forwarder binaries (built here if cargo is there); skipped with the reason elsewhere."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from aqmlab import outdir
from aqmlab.testbed import net
from test_testbed import REASON, ROOT

needs_net = pytest.mark.skipif(REASON is not None, reason=str(REASON))
AQMLAB = str(Path(sys.executable).with_name("aqmlab"))
CC_LIST = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")

SHORT = (
    (ROOT / "scenarios" / "testbed" / "red-4-cubic.toml")
    .read_text()
    .replace('duration = "5s"', 'duration = "{dur}"')
)


def _scenario(tmp_path: Path, dur: str) -> Path:
    p = tmp_path / f"short-{dur}.toml"
    p.write_text(SHORT.replace("{dur}", dur))
    return p


def _owned_by(pid: int) -> list[str]:
    return [
        ns for ns in net.leftover_namespaces() if (o := net.namespace_owner(ns)) and o.pid == pid
    ]


def _tmpdirs_of(pid: int) -> list[Path]:
    return [
        p
        for p in Path(tempfile.gettempdir()).glob(f"{net.TMP_PREFIX}*")
        if p.name.split("-")[3:4] == [str(pid)]
    ]


def _ns_pids(ns: str) -> list[int]:
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split()]


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _start_run(sc: Path, out: Path) -> subprocess.Popen:
    # Its own session (setsid), as a user's terminal would start it: nothing of this test's
    # process group reaches it.
    return subprocess.Popen(
        [AQMLAB, "testbed", str(sc), "--out", str(out), "--no-plot"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _run_short(tmp_path: Path, name: str) -> subprocess.CompletedProcess:
    """A 2 s testbed run into ``tmp_path / name``, to its end; it must succeed."""
    r = subprocess.run(
        [AQMLAB, "testbed", str(_scenario(tmp_path, "2s")), "--out", str(tmp_path / name)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r


def _wait_running(p: subprocess.Popen, timeout: float = 60) -> list[str]:
    """Waits until the run's forwarder (router namespace) and traffic tools (the others) run;
    returns its namespaces."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert p.poll() is None, p.communicate()[1].decode()[-2000:]
        mine = _owned_by(p.pid)
        if len(mine) == 3 and all(_ns_pids(ns) for ns in mine):
            return mine
        time.sleep(0.1)
    raise AssertionError("the run did not start its forwarder and traffic tools in time")


@needs_net
def test_sigkilled_run_leaves_no_process_and_the_next_run_reclaims_the_rest(tmp_path):
    killed = _start_run(_scenario(tmp_path, "30s"), tmp_path / "killed")
    spaces = _wait_running(killed)
    children = sorted({pid for ns in spaces for pid in _ns_pids(ns)})
    tmpdirs = _tmpdirs_of(killed.pid)
    assert len(children) >= 3, children  # sink, source, forwarder
    assert len(tmpdirs) == 1, tmpdirs
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=10)
    # Its children die with it (PR_SET_PDEATHSIG), before any clean-up runs...
    deadline = time.time() + 10
    while time.time() < deadline and any(_running(c) for c in children):
        time.sleep(0.05)
    assert not [c for c in children if _running(c)], "children of the killed run still running"
    # ...but its namespaces and temporary directory are still there: nobody removed them.
    assert sorted(_owned_by(killed.pid)) == sorted(spaces)
    assert all(d.is_dir() for d in tmpdirs)
    assert not (tmp_path / "killed" / "summary.json").exists()

    nxt = _run_short(tmp_path, "next")
    summary = json.loads((tmp_path / "next" / "summary.json").read_text())
    # (issue 22 item 8) The congestion controls, as read inside the senders' namespace, are the
    # kernel's list, and the run said in one line which of aqmlab's names it lacks.
    cc = summary["testbed"]["congestion_controls"]
    assert set(cc["available"]) == set(CC_LIST.read_text().split())
    said = [ln for ln in nxt.stderr.splitlines() if "kernel congestion controls" in ln]
    assert len(said) == 1 and all(f"{k}: " in said[0] for k in cc["lacking"]), said
    # The next run removed the killed run's namespaces (both ends of every veth live in them,
    # so the veths went with them) and its temporary directory.
    assert _owned_by(killed.pid) == []
    assert not [d for d in tmpdirs if d.exists()]


@needs_net
def test_a_live_runs_namespaces_survive_another_runs_cleanup(tmp_path):
    live = _start_run(_scenario(tmp_path, "25s"), tmp_path / "live")
    try:
        spaces = _wait_running(live)
        _run_short(tmp_path, "other")
        # The other run started (and reclaimed stale leftovers) while this one was running:
        # its namespaces and processes are untouched, and it finishes normally.
        assert live.poll() is None, "the live run ended before the other run finished"
        assert sorted(_owned_by(live.pid)) == sorted(spaces)
        assert all(_ns_pids(ns) for ns in spaces)
        _, err = live.communicate(timeout=120)
        assert live.returncode == 0, err.decode()[-2000:]
        assert (tmp_path / "live" / "summary.json").is_file()
        assert _owned_by(live.pid) == [] and _tmpdirs_of(live.pid) == []
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
            net.reclaim_stale()


@needs_net
def test_reclaim_tells_live_dead_and_reused_pid_owners_apart():
    """Namespaces named after a live process, a dead one, and the live pid with another start
    time (a reused pid): only the live owner's survive; untagged (older) names are left to
    ``--cleanup``."""
    sleeper = subprocess.Popen(["sleep", "60"])
    done = subprocess.Popen(["true"])
    done.wait()
    pidns = os.stat("/proc/self/ns/pid").st_ino
    start = net._start_time(sleeper.pid)
    assert start is not None and net._start_time(done.pid) is None
    cases = {
        "live": net.Owner(sleeper.pid, start, pidns),
        "dead": net.Owner(done.pid, start, pidns),
        "reused": net.Owner(sleeper.pid, start + 1, pidns),
        "elsewhere": net.Owner(done.pid, start, pidns + 1),  # another pid namespace: unknown
    }
    names = {k: f"{net.PREFIX}{i:06x}-{o.token()}-rtr" for i, (k, o) in enumerate(cases.items())}
    legacy = f"{net.PREFIX}abcdef-rtr"
    dirs = {
        k: Path(tempfile.mkdtemp(prefix=f"{net.TMP_PREFIX}{names[k][:-4]}-"))
        for k in ("live", "dead")
    }
    try:
        for ns in [*names.values(), legacy]:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        gone = net.reclaim_stale()
        left = set(net.leftover_namespaces())
        assert names["live"] in left and names["elsewhere"] in left and legacy in left
        assert names["dead"] not in left and names["reused"] not in left
        assert names["dead"] in gone and names["reused"] in gone
        assert dirs["live"].is_dir() and not dirs["dead"].exists()
        # Once the live owner is gone, its namespace and directory go too.
        sleeper.kill()
        sleeper.wait()
        net.reclaim_stale()
        assert names["live"] not in net.leftover_namespaces() and not dirs["live"].exists()
    finally:
        sleeper.kill()
        sleeper.wait()
        for ns in [*names.values(), legacy]:
            net.delete_namespace(ns)
        for d in dirs.values():
            if d.exists():
                d.rmdir()


def _hold(
    scn: Path, out: Path, datagrams: int = 200, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen, str]:
    """Runs `aqmlab testbed --hold scn --out out` (with ``extra`` options), sends ``datagrams``
    UDP datagrams of 1000 B from the first left host to the first right host (port 9), ends the
    hold with SIGINT; the process (ended) and what it printed after its first line."""
    hold = subprocess.Popen(
        [AQMLAB, "testbed", "--hold", str(scn), "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        first = hold.stdout.readline()
        assert first.startswith("holding "), first + hold.stderr.read()
        snd = re.search(r"in (\S+-snd)", first)[1]
        assert snd in _owned_by(hold.pid) and len(_owned_by(hold.pid)) == 3
        # Datagrams from the first left host to the first right host (ARP included, which the
        # forwarder bridges too).
        send = (
            "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            f"s.bind(('{net.host_ip('left', 0)}', 0))\n"
            "import time\n"
            f"for i in range({datagrams}):\n"
            f"    s.sendto(b'x' * 1000, ('{net.host_ip('right', 0)}', 9)); time.sleep(0.002)"
        )
        subprocess.run(["ip", "netns", "exec", snd, sys.executable, "-c", send], check=True)
        time.sleep(0.5)
        assert hold.poll() is None
        os.killpg(hold.pid, signal.SIGINT)
        rest, err = hold.communicate(timeout=60)
    finally:
        if hold.poll() is None:
            hold.kill()
            hold.wait()
            net.reclaim_stale()
    assert hold.returncode == 0, err
    assert _owned_by(hold.pid) == [] and _tmpdirs_of(hold.pid) == []
    return hold, rest


@needs_net
def test_hold_builds_the_network_forwards_until_sigint_then_cleans_up_and_writes_stats(tmp_path):
    """`aqmlab testbed --hold` (issue 21 item 4): the printed namespaces exist, frames sent from a
    left host to a right host cross the forwarder, SIGINT ends it with the statistics written and
    nothing left behind."""
    out = tmp_path / "hold"
    _, rest = _hold(_scenario(tmp_path, "5s"), out)
    stats = json.loads((out / "forwarder.json").read_text())
    fwd = stats["conservation"]["forward"]
    assert fwd["received"] >= 200 and fwd["sent"] + fwd["dropped"] >= 200, fwd
    c = stats["conservation"]
    assert c["received"] == c["sent"] + c["dropped"] + c["in_system"]
    assert "bottleneck" in rest and f"wrote {out}: forwarder.json" in rest
    assert sorted(p.name for p in out.iterdir()) == [outdir.MARKER, "forwarder.json"]
    assert not out.with_name(out.name + ".partial").exists()
    # The sender resolved the receiver's address first: an ARP request and its reply crossed.
    assert stats["oddities"]["forwarded_non_ipv4"] >= 2, stats["oddities"]


@needs_net
def test_hold_with_static_neighbours_forwards_the_datagrams_and_no_arp(tmp_path):
    """`--hold --neighbours static`: the end hosts have permanent neighbour entries, so the
    forwarder sees the 200 datagrams and nothing else (no ARP request or reply)."""
    out = tmp_path / "hold"
    _hold(_scenario(tmp_path, "5s"), out, extra=("--neighbours", "static"))
    stats = json.loads((out / "forwarder.json").read_text())
    fwd = stats["conservation"]["forward"]
    assert fwd["received"] == 200 and fwd["sent"] + fwd["dropped"] == 200, fwd
    assert stats["oddities"]["forwarded_non_ipv4"] == 0, stats["oddities"]


@needs_net
@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_hold_writes_the_scenarios_pcap_and_event_log_of_the_users_traffic(tmp_path):
    """`--hold` with ``[output] pcap`` and ``events``: the user's 200 datagrams are in the
    bottleneck's pcap (tshark reads it) and in its event log under their 5-tuple, each one
    enqueued and each one sent or dropped as the forwarder counted."""
    import pyarrow.parquet as pq

    scn = tmp_path / "logged.toml"
    scn.write_text(
        SHORT.replace("{dur}", "5s")
        + '\n[output]\npcap = ["bottleneck"]\nevents = ["bottleneck"]\n'
    )
    out = tmp_path / "hold"
    _, rest = _hold(scn, out)
    assert "pcap/" in rest and "events/" in rest, rest
    fwd = json.loads((out / "forwarder.json").read_text())["conservation"]["forward"]
    udp = subprocess.run(
        [
            "tshark",
            "-n",
            "-r",
            str(out / "pcap" / "bottleneck.pcap"),
            "-Y",
            "udp.dstport == 9",
            "-T",
            "fields",
            "-e",
            "udp.length",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    # Each datagram that left the bottleneck, 1000 B of payload + the 8-byte UDP header.
    assert len(udp) == 200 - fwd["dropped"] and set(udp) == {"1008"}, (len(udp), fwd)
    ev = pq.read_table(out / "events" / "bottleneck.parquet").to_pydict()
    ours = [i for i, f in enumerate(ev["flow"]) if f.endswith(f"{net.host_ip('right', 0)}:9")]
    kinds = [ev["event"][i] for i in ours]
    assert kinds.count("enqueue") + kinds.count("drop") == 200
    assert kinds.count("dequeue") == 200 - kinds.count("drop")
    assert sum(1 for k in ev["event"] if k == "drop") == fwd["dropped"]
