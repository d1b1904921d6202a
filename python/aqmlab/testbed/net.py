"""The testbed's network: three namespaces joined by two veth pairs, everything named with one
unique prefix and created inside those namespaces only (the host's interfaces, routes and sysctls
are never touched)::

    <p>-snd [<p>s] ==veth== [<p>a] <p>-rtr [<p>b] ==veth== [<p>r] <p>-rcv
     senders: one address per host      aqmlab-fwd             receivers

The router namespace has no addresses: the forwarder bridges frames (ARP included) between its two
interfaces, so senders and receivers share one /16 and the kernel's own forwarding is off. With
``--neighbours static`` the end namespaces get permanent neighbour entries and no ARP crosses it.

Ownership: every namespace's name, and the run's temporary directory, carry the owning process as
``<pid>-<start time>-<pid namespace>`` (``aqtb1a2b3c-4242-987654-4026531836-rtr``). The start time
(clock ticks since boot, field 22 of ``/proc/<pid>/stat``) tells a reused pid from the owner, the
pid namespace's inode tells whether this process can see the owner at all. A run that finds
namespaces or temporary directories whose owner is gone (killed with SIGKILL, a power cut of the
process) removes them, and the processes still running in them, before it builds its own
(:func:`reclaim_stale`); those of a live run, or of a run in another pid namespace, are never
touched. Namespaces of aqmlab versions that did not record an owner (``aqtb1a2b3c-rtr``) are left
to ``aqmlab testbed --cleanup``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aqmlab.errors import InputError

PREFIX = "aqtb"
#: ``<prefix><6 hex>[-<pid>-<start>-<pidns>]-<role>``; the owner part is absent in namespaces of
#: versions before owners were recorded.
_NS_RE = re.compile(rf"^({PREFIX}[0-9a-f]{{6}})(?:-(\d+)-(\d+)-(\d+))?-(snd|rtr|rcv)$")
#: A run's temporary directory: ``aqmlab-testbed-<tag>-<pid>-<start>-<pidns>-<random>``.
TMP_PREFIX = "aqmlab-testbed-"
_TMP_RE = re.compile(rf"^{TMP_PREFIX}({PREFIX}[0-9a-f]{{6}})-(\d+)-(\d+)-(\d+)-[A-Za-z0-9_]+$")
SUBNET = "10.77"


def parse_proc_counters(text: str, groups: tuple[str, ...]) -> dict[str, int]:
    """Counters of ``/proc/net/netstat`` or ``/proc/net/snmp`` text (pairs of lines, ``Group:
    names...`` then ``Group: values...``) for the given groups, named group + counter as
    ``nstat`` names them (``TcpExtTCPTimeouts``)."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in itertools.pairwise(lines):
        g, _, names = head.partition(":")
        g2, _, values = vals.partition(":")
        if (
            g != g2
            or g not in groups
            or not names.split()
            or names.split()[0].lstrip("-").isdigit()
        ):
            continue
        for name, v in zip(names.split(), values.split(), strict=False):
            if v.lstrip("-").isdigit():
                out[g + name] = int(v)
    return out


def _start_time(pid: int) -> int | None:
    """A process's start time (clock ticks after boot, ``/proc/<pid>/stat`` field 22, proc(5)),
    None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces or ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])  # field 22 overall; fields[0] is field 3


def _pid_namespace() -> int:
    """The inode of this process's pid namespace (pids are only comparable inside one)."""
    return os.stat("/proc/self/ns/pid").st_ino


@dataclass(frozen=True)
class Owner:
    """The process that owns a testbed network: pid, start time and pid namespace."""

    pid: int
    start: int
    pidns: int

    @classmethod
    def me(cls) -> Owner:
        """This process."""
        pid = os.getpid()
        start = _start_time(pid)
        assert start is not None
        return cls(pid, start, _pid_namespace())

    def token(self) -> str:
        """The owner as it appears in names: ``<pid>-<start>-<pidns>``."""
        return f"{self.pid}-{self.start}-{self.pidns}"

    def alive(self) -> bool | None:
        """True while the owner runs, False once it is gone (its pid free or reused by a process
        started at another time), None when it cannot be told (another pid namespace)."""
        if self.pidns != _pid_namespace():
            return None
        return _start_time(self.pid) == self.start


def run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs a command, raising with its stderr when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def host_ip(side: str, j: int) -> str:
    """The address of the j-th host on a side (left: 10.77.0-127.x, right: 10.77.128-255.x)."""
    hi = j // 250 + (128 if side == "right" else 0)
    if j >= 250 * 128:
        raise ValueError("too many hosts for the testbed's address plan (at most 32000 a side)")
    return f"{SUBNET}.{hi}.{j % 250 + 1}"


def _kill_ns_processes(ns: str) -> None:
    r = run("ip", "netns", "pids", ns, check=False)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError, PermissionError):
            pass


def delete_namespace(ns: str) -> None:
    """Kills what still runs inside ``ns`` and deletes it (its veths go with it)."""
    _kill_ns_processes(ns)
    run("ip", "netns", "del", ns, check=False)


def leftover_namespaces() -> list[str]:
    """Namespaces that look like the testbed's (from this or an earlier run, live or not)."""
    r = run("ip", "netns", "list", check=False)
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln and _NS_RE.match(ln.split()[0])]


def namespace_owner(ns: str) -> Owner | None:
    """The owner recorded in a testbed namespace's name (None: an older name without one)."""
    m = _NS_RE.match(ns)
    if m is None or m.group(2) is None:
        return None
    return Owner(int(m.group(2)), int(m.group(3)), int(m.group(4)))


def _stale_tmpdirs() -> list[Path]:
    """Temporary directories of testbed runs whose owner is gone (ours: same uid, a directory)."""
    out = []
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return out
    for e in entries:
        m = _TMP_RE.match(e.name)
        if m is None:
            continue
        try:
            if not e.is_dir(follow_symlinks=False) or e.stat(follow_symlinks=False).st_uid != (
                os.geteuid()
            ):
                continue
        except OSError:
            continue
        if Owner(int(m.group(2)), int(m.group(3)), int(m.group(4))).alive() is False:
            out.append(Path(e.path))
    return out


def reclaim_stale() -> list[str]:
    """Removes the namespaces (with their veths and the processes in them) and temporary
    directories of testbed runs whose owner is gone; returns what it removed. Namespaces of live
    runs, of runs in another pid namespace and of older versions (no owner) are left alone."""
    gone = []
    for ns in leftover_namespaces():
        owner = namespace_owner(ns)
        if owner is not None and owner.alive() is False:
            delete_namespace(ns)
            gone.append(ns)
    for d in _stale_tmpdirs():
        shutil.rmtree(d, ignore_errors=True)
        gone.append(str(d))
    return gone


def cleanup_all() -> tuple[list[str], list[str]]:
    """``aqmlab testbed --cleanup``: what :func:`reclaim_stale` removes, plus namespaces without
    a recorded owner (older versions); returns (removed, left alone because their run is live or
    cannot be checked)."""
    gone = reclaim_stale()
    kept = []
    for ns in leftover_namespaces():
        owner = namespace_owner(ns)
        if owner is None:
            delete_namespace(ns)
            gone.append(ns)
        else:
            kept.append(ns)
    return gone, kept


class Net:
    """One testbed network; :meth:`close` removes everything it created."""

    def __init__(self) -> None:
        self.tag = PREFIX + secrets.token_hex(3)
        #: ``<tag>-<owner>``: the namespaces' and the temporary directory's common name part.
        self.base = f"{self.tag}-{Owner.me().token()}"
        self.snd, self.rtr, self.rcv = (f"{self.base}-{r}" for r in ("snd", "rtr", "rcv"))
        self.if_snd, self.if_a, self.if_b, self.if_rcv = (
            f"{self.tag}{c}" for c in ("s", "a", "b", "r")
        )
        self.created: list[str] = []
        self.notes: list[str] = []

    def exec(self, ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        """Runs a command inside one of this network's namespaces."""
        return run("ip", "netns", "exec", ns, *cmd, check=check)

    def _sysctl(self, ns: str, key: str, value: int | str) -> None:
        self.exec(ns, "sysctl", "-q", "-w", f"{key}={value}")

    def build(
        self, left: list[str], right: list[str], ecn: bool, sack: bool, rcv_ecn: bool = True
    ) -> None:
        """Creates the namespaces, veths and addresses; TCP settings go in the end namespaces
        (``rcv_ecn`` False: the receivers' namespace refuses ECN)."""
        for ns in (self.snd, self.rtr, self.rcv):
            run("ip", "netns", "add", ns)
            self.created.append(ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
            # No IPv6 chatter (router solicitations, DAD) through the forwarder.
            self._sysctl(ns, "net.ipv6.conf.all.disable_ipv6", 1)
            self._sysctl(ns, "net.ipv6.conf.default.disable_ipv6", 1)
        pairs = [
            (self.if_snd, self.snd, self.if_a, self.rtr),
            (self.if_b, self.rtr, self.if_rcv, self.rcv),
        ]
        for a, na, b, nb in pairs:
            run("ip", "link", "add", a, "netns", na, "type", "veth", "peer", "name", b, "netns", nb)
        for dev, ns in (
            (self.if_snd, self.snd),
            (self.if_a, self.rtr),
            (self.if_b, self.rtr),
            (self.if_rcv, self.rcv),
        ):
            run("ip", "-n", ns, "link", "set", dev, "mtu", "1500", "up")
            # Wire-size frames and full checksums: no segmentation or checksum offloads.
            self.exec(
                ns,
                "ethtool",
                "-K",
                dev,
                "tx",
                "off",
                "rx",
                "off",
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                check=False,
            )
        for ip in left:
            run("ip", "-n", self.snd, "addr", "add", f"{ip}/16", "dev", self.if_snd)
        for ip in right:
            run("ip", "-n", self.rcv, "addr", "add", f"{ip}/16", "dev", self.if_rcv)
        for ns in (self.snd, self.rcv):
            on = ecn and (rcv_ecn or ns == self.snd)
            self._sysctl(ns, "net.ipv4.tcp_ecn", 1 if on else 0)
            self._sysctl(ns, "net.ipv4.tcp_sack", 1 if sack else 0)
            self._sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)

    def _mac(self, ns: str, dev: str) -> str:
        """The hardware address of ``dev`` in namespace ``ns``."""
        r = run("ip", "-n", ns, "-j", "link", "show", "dev", dev)
        return json.loads(r.stdout)[0]["address"]

    def static_neighbours(self, left: list[str], right: list[str]) -> int:
        """Permanent neighbour entries (``aqmlab testbed --neighbours static``): each sender
        address knows every receiver address's hardware address and the other way round, so
        no ARP request crosses the forwarder and a connection's SYN leaves when TCP hands it
        down. The forwarder passes frames unchanged, so a receiver address's hardware address
        is the receivers' veth's. Returns the entries set."""
        n = 0
        for ns, dev, ips, peer_ns, peer_dev in (
            (self.snd, self.if_snd, right, self.rcv, self.if_rcv),
            (self.rcv, self.if_rcv, left, self.snd, self.if_snd),
        ):
            mac = self._mac(peer_ns, peer_dev)
            batch = "".join(
                f"neigh replace {ip} lladdr {mac} dev {dev} nud permanent\n" for ip in ips
            )
            r = subprocess.run(
                ["ip", "-n", ns, "-batch", "-"], input=batch, capture_output=True, text=True
            )
            if r.returncode != 0:
                raise RuntimeError(f"static neighbours in {ns}: {r.stderr.strip()}")
            n += len(ips)
        return n

    def set_tcp_sysctls(self, settings: dict[str, str]) -> dict[str, dict[str, str]]:
        """Sets extra ``net.ipv4.tcp_*`` sysctls (``aqmlab testbed --sysctl``) in the senders'
        and receivers' namespaces, after the testbed's own; returns the values read back per
        namespace. They are per network namespace on recent kernels (struct netns_ipv4), so the
        host's are not touched."""
        got: dict[str, dict[str, str]] = {}
        for role, ns in (("snd", self.snd), ("rcv", self.rcv)):
            got[role] = {}
            for key, value in settings.items():
                try:
                    self._sysctl(ns, key, value)
                except RuntimeError as e:  # a value the kernel refuses (the key was checked)
                    raise InputError(f"--sysctl {key}={value}: the kernel refused it ({e})") from e
                r = self.exec(ns, "sysctl", "-n", key, check=False)
                got[role][key] = r.stdout.strip()
        return got

    def tcp_counters(self, role: str) -> dict[str, int]:
        """The ``Tcp`` and ``TcpExt`` counters of the senders' (``role`` "snd") or receivers'
        ("rcv") namespace, as ``nstat -a`` names them (``TcpExtTCPSackRecovery``,
        ``TcpRetransSegs``), read from ``/proc/net/netstat`` and ``/proc/net/snmp`` there
        (per network namespace); {} when they cannot be read."""
        ns = self.snd if role == "snd" else self.rcv
        r = self.exec(ns, "cat", "/proc/net/netstat", "/proc/net/snmp", check=False)
        if r.returncode != 0:
            return {}
        return parse_proc_counters(r.stdout, ("Tcp", "TcpExt"))

    def offloads(self) -> dict[str, dict[str, str]]:
        """The offload settings of every veth end, as ethtool reports them."""
        out = {}
        for dev, ns in (
            (self.if_snd, self.snd),
            (self.if_a, self.rtr),
            (self.if_b, self.rtr),
            (self.if_rcv, self.rcv),
        ):
            r = self.exec(ns, "ethtool", "-k", dev, check=False)
            keep = (
                "tcp-segmentation-offload",
                "generic-segmentation-offload",
                "generic-receive-offload",
                "tx-checksumming",
            )
            out[dev] = {
                k.strip(): v.split()[0]
                for k, _, v in (ln.partition(":") for ln in r.stdout.splitlines())
                if k.strip() in keep and v.strip()
            }
        return out

    def route_options(
        self, init_cwnd: int, min_rto_ms: int, extra: dict[str, str] | None = None
    ) -> None:
        """Initial window and minimum RTO of the senders' and receivers' route (``ip route``),
        plus ``extra`` route metrics (``aqmlab testbed --route-option quickack=1``)."""
        more = [x for k, v in (extra or {}).items() for x in (k, v)]
        for ns, dev in ((self.snd, self.if_snd), (self.rcv, self.if_rcv)):
            r = run(
                "ip",
                "-n",
                ns,
                "route",
                "change",
                f"{SUBNET}.0.0/16",
                "dev",
                dev,
                "initcwnd",
                str(init_cwnd),
                "rto_min",
                f"{min_rto_ms}ms",
                *more,
                check=False,
            )
            if r.returncode != 0:
                self.notes.append(f"route options not set in {ns}: {r.stderr.strip()}")

    def workdir(self) -> tempfile.TemporaryDirectory:
        """A temporary directory named after this network and its owner (removed by the next
        run if this one is killed)."""
        return tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{self.base}-")

    def close(self) -> None:
        """Deletes everything this network created."""
        for ns in reversed(self.created):
            delete_namespace(ns)
        self.created.clear()
