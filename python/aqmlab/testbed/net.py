"""The testbed's network: three namespaces joined by two veth pairs, everything named with one
unique prefix and created inside those namespaces only (the host's interfaces, routes and sysctls
are never touched)::

    <p>-snd [<p>s] ==veth== [<p>a] <p>-rtr [<p>b] ==veth== [<p>r] <p>-rcv
     senders: one address per host      aqmlab-fwd             receivers

The router namespace has no addresses: the forwarder bridges frames (ARP included) between its two
interfaces, so senders and receivers share one /16 and the kernel's own forwarding is off.
"""

from __future__ import annotations

import re
import secrets
import signal
import subprocess

PREFIX = "aqtb"
_NS_RE = re.compile(rf"^{PREFIX}[0-9a-f]{{6}}-(snd|rtr|rcv)$")
SUBNET = "10.77"


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
            import os

            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError, PermissionError):
            pass


def delete_namespace(ns: str) -> None:
    """Kills what still runs inside ``ns`` and deletes it (its veths go with it)."""
    _kill_ns_processes(ns)
    run("ip", "netns", "del", ns, check=False)


def leftover_namespaces() -> list[str]:
    """Namespaces that look like the testbed's (from this or an earlier run)."""
    r = run("ip", "netns", "list", check=False)
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln and _NS_RE.match(ln.split()[0])]


def cleanup_all() -> list[str]:
    """Deletes every testbed namespace; returns their names."""
    names = leftover_namespaces()
    for ns in names:
        delete_namespace(ns)
    return names


class Net:
    """One testbed network; :meth:`close` removes everything it created."""

    def __init__(self) -> None:
        self.tag = PREFIX + secrets.token_hex(3)
        self.snd, self.rtr, self.rcv = (f"{self.tag}-{r}" for r in ("snd", "rtr", "rcv"))
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

    def build(self, left: list[str], right: list[str], ecn: bool, sack: bool) -> None:
        """Creates the namespaces, veths and addresses; TCP settings go in the end namespaces."""
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
            self._sysctl(ns, "net.ipv4.tcp_ecn", 1 if ecn else 0)
            self._sysctl(ns, "net.ipv4.tcp_sack", 1 if sack else 0)
            self._sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1)

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

    def route_options(self, init_cwnd: int, min_rto_ms: int) -> None:
        """Initial window and minimum RTO of the senders' and receivers' route (``ip route``)."""
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
                check=False,
            )
            if r.returncode != 0:
                self.notes.append(f"route options not set in {ns}: {r.stderr.strip()}")

    def close(self) -> None:
        """Deletes everything this network created."""
        for ns in reversed(self.created):
            delete_namespace(ns)
        self.created.clear()
