"""`aqmlab testbed --sysctl` / `--route-option` and the kernel's TCP counters in a testbed run
(2026-11-28): what is accepted, what is refused, and how /proc/net/{netstat,snmp} text is read.
The counter text is the kernel's format (a names line, then a values line, per group), written
by hand here; the root test runs with TLP off and delayed ACKs off and checks, from the
kernel's own counters, that the receivers sent no delayed ACK."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aqmlab.errors import InputError
from aqmlab.testbed import check_route_options, check_sysctls, net

ROOT = Path(__file__).resolve().parents[1]
SNMP = """Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 1000
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens RetransSegs
Tcp: 1 200 120000 -1 10 417
Udp: InDatagrams NoPorts
Udp: 5 0
"""
NETSTAT = """TcpExt: SyncookiesSent TCPTimeouts TCPSackRecovery TCPLostRetransmit
TcpExt: 0 3 1641 5154
IpExt: InNoRoutes InOctets
IpExt: 0 123456
"""


def test_counters_are_named_as_nstat_names_them():
    got = net.parse_proc_counters(NETSTAT + SNMP, ("Tcp", "TcpExt"))
    assert got == {
        "TcpExtSyncookiesSent": 0,
        "TcpExtTCPTimeouts": 3,
        "TcpExtTCPSackRecovery": 1641,
        "TcpExtTCPLostRetransmit": 5154,
        "TcpRtoAlgorithm": 1,
        "TcpRtoMin": 200,
        "TcpRtoMax": 120000,
        "TcpMaxConn": -1,
        "TcpActiveOpens": 10,
        "TcpRetransSegs": 417,
    }


def test_only_namespaced_tcp_sysctls_are_accepted():
    assert check_sysctls(
        {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_rmem": "4096 131072 6291456"}
    ) == {
        "net.ipv4.tcp_recovery": "0",
        "net.ipv4.tcp_rmem": "4096 131072 6291456",
    }
    for bad in ({"net.core.rmem_max": "1"}, {"kernel.panic": "1"}, {"net.ipv4.ip_forward": "1"}):
        with pytest.raises(InputError, match=r"only net\.ipv4\.tcp_"):
            check_sysctls(bad)
    for bad_value in ("", "1;reboot", "$(id)"):
        with pytest.raises(InputError, match="number or a word"):
            check_sysctls({"net.ipv4.tcp_recovery": bad_value})
    # A name of the right form that this kernel does not have: refused before any namespace.
    with pytest.raises(InputError, match="no such setting"):
        check_sysctls({"net.ipv4.tcp_no_such_setting": "1"})


def test_only_known_route_options_are_accepted():
    assert check_route_options({"quickack": "1"}) == {"quickack": "1"}
    assert check_route_options({"initrwnd": "2000"}) == {"initrwnd": "2000"}
    with pytest.raises(InputError, match="accepted are quickack"):
        check_route_options({"rto_min": "5"})
    with pytest.raises(InputError, match="whole number"):
        check_route_options({"quickack": "yes"})


def test_cli_refuses_a_setting_without_a_value_before_running():
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "aqmlab",
            "testbed",
            str(ROOT / "scenarios/testbed/red-4-cubic.toml"),
            "--sysctl",
            "net.ipv4.tcp_recovery",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2, r.stderr
    assert "KEY=VALUE" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and ip")
def test_a_run_records_its_settings_and_the_kernel_counters(tmp_path):
    from aqmlab import testbed

    host = Path("/proc/sys/net/ipv4/tcp_early_retrans").read_text()
    res = testbed.testbed(
        ROOT / "scenarios/testbed/red-4-cubic.toml",
        cc="cubic",
        out=tmp_path / "run",
        plot=False,
        sysctls={"net.ipv4.tcp_early_retrans": "0"},
        route={"quickack": "1"},
    )
    tb = res.summary["testbed"]
    assert tb["sysctls"] == {r: {"net.ipv4.tcp_early_retrans": "0"} for r in ("snd", "rcv")}
    assert all("quickack 1" in tb["routes"][r] for r in ("snd", "rcv"))
    kc = tb["kernel_counters"]
    # Four connections were opened by the senders, after the warm-up none more.
    assert kc["end"]["snd"]["TcpActiveOpens"] == 4
    assert kc["warmup"]["snd"]["TcpActiveOpens"] == 4
    assert kc["end"]["rcv"]["TcpPassiveOpens"] == 4
    assert kc["end"]["snd"]["TcpOutSegs"] >= kc["warmup"]["snd"]["TcpOutSegs"] > 0
    # quickack: the receivers ACK every segment, none by the delayed-ACK timer; no loss probe.
    assert kc["end"]["rcv"]["TcpExtDelayedACKs"] == 0
    assert kc["end"]["snd"]["TcpExtTCPLossProbes"] == 0
    # The host's own setting is untouched.
    assert Path("/proc/sys/net/ipv4/tcp_early_retrans").read_text() == host
    json.dumps(res.summary)  # the run directory's summary stays JSON
