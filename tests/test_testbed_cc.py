"""The testbed's congestion controls (issue 22 item 8): every one the kernel lists can be chosen
with --cc, and one line says which of aqmlab's names the kernel lacks and why. These read the
kernel's own list (/proc) as the independent truth; no root needed."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from aqmlab.testbed import plan

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "testbed" / "red-4-cubic.toml"
PROC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _sc():
    return scenario.from_dict(tomllib.loads(SCENARIO.read_text()))


def _flow_ccs(p: plan.Plan) -> set[str]:
    return {f["cc"] for f in p.traffic["flows"]}


@pytest.mark.skipif(not PROC.exists(), reason="needs Linux's /proc/sys/net/ipv4")
def test_every_kernel_control_is_offered_and_each_missing_name_has_a_reason():
    have, lacking = plan.congestion_controls()
    kernel = set(PROC.read_text().split())  # read after the probe, which may load modules
    assert set(have) == kernel
    # aqmlab's names without a Linux module are always lacking, with why.
    assert "Reno" in lacking["reno"] and "LEDBAT" in lacking["ledbat"]
    for name, (module, _) in plan.VARIANTS.items():
        # A name is lacking exactly when its module is not in the kernel's list.
        assert (name in lacking) == (module not in kernel), (name, module, kernel)
        if name in lacking:
            assert lacking[name].strip(), name
    line = plan.lacking_line(lacking)
    assert "\n" not in line and all(f"{k}: " in line for k in lacking)
    # Every control the kernel has runs: aqmlab's names through their mapping, others as named.
    sc = _sc()
    cfg = scenario.build_config(sc)
    for cc in kernel:
        name = {"reno": "sack"}.get(cc, cc)  # aqmlab's `reno` is classic Reno, refused
        assert _flow_ccs(plan.make(sc, cfg, name)) == {cc}


def test_a_kernel_control_outside_aqmlabs_names_runs_with_sack(monkeypatch):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic", "vegas"})
    sc = _sc()
    p = plan.make(sc, scenario.build_config(sc), "vegas")
    assert _flow_ccs(p) == {"vegas"} and p.sack


@pytest.mark.parametrize(
    ("cc", "why"),
    [
        ("ledbat", "no LEDBAT module"),
        ("reno", "no classic Reno"),
        ("nosuchcc", "neither one of aqmlab's names"),
    ],
)
def test_controls_it_cannot_run_are_one_line_naming_cc(monkeypatch, cc, why):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    sc = _sc()
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc), cc)
    msg = str(e.value)
    assert msg.startswith("cc: ") and why in msg and "\n" not in msg, msg


def test_a_mapped_module_the_kernel_cannot_load_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    monkeypatch.setattr(plan, "_try_load", lambda cc: f"module tcp_{cc} not loadable")
    sc = _sc()
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc), "dctcp")
    assert str(e.value).startswith("cc: the kernel has no 'dctcp'"), str(e.value)
    assert "module tcp_dctcp not loadable" in str(e.value)


def _with_tcp(**kv):
    d = tomllib.loads(SCENARIO.read_text())
    d.setdefault("tcp", {}).update(kv)
    return scenario.from_dict(d)


def test_the_scenarios_cc_and_recovery_choose_the_module_and_sack(monkeypatch):
    # `[tcp] cc` replaces the variant's congestion control, `recovery` its SACK setting (the
    # scenario's variant is newreno: Linux reno without SACK).
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic", "dctcp", "bbr"})
    for kv, cc, sack in [
        ({"cc": "dctcp"}, "dctcp", False),
        ({"cc": "dctcp", "recovery": "sack"}, "dctcp", True),
        ({"cc": "reno", "recovery": "newreno"}, "reno", False),
        ({"cc": "cubic", "recovery": "rack"}, "cubic", True),
    ]:
        sc = _with_tcp(**kv)
        p = plan.make(sc, scenario.build_config(sc))
        assert (_flow_ccs(p), p.sack) == ({cc}, sack), kv


@pytest.mark.parametrize(
    ("kv", "start", "why"),
    [
        ({"cc": "dctcp"}, "tcp.cc: the kernel has no 'dctcp'", "(it has cubic reno)"),
        ({"cc": "prague-0.7", "ecn": True}, "tcp.cc: the kernel has no 'prague'", "tcp_prague "),
        ({"cc": "ledbat"}, "tcp.cc: 'ledbat' cannot run", "no LEDBAT module"),
        ({"cc": "ledbat-ns3"}, "tcp.cc: 'ledbat-ns3' cannot run", "no LEDBAT module"),
        ({"cc": "bbr3"}, "tcp.cc: 'bbr3' cannot run", "bbr is BBR v1"),
        ({"cc": "bbr-ns3"}, "tcp.cc: 'bbr-ns3' cannot run", "ns-3.44 TcpBbr's"),
        ({"cc": "bbr-ns3:entry+exit"}, "tcp.cc: 'bbr-ns3:entry+exit' cannot run", "TcpBbr"),
        ({"cc": "newreno-ns3"}, "tcp.cc: 'newreno-ns3' cannot run", "partial-ACK"),
        ({"recovery": "reno"}, "tcp.recovery: 'reno' cannot run", "no classic Reno"),
    ],
)
def test_a_scenario_cc_the_kernel_lacks_is_one_line_naming_the_field(monkeypatch, kv, start, why):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    monkeypatch.setattr(plan, "_try_load", lambda cc: f"module tcp_{cc} not loadable")
    sc = _with_tcp(**kv)
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc))
    msg = str(e.value)
    assert msg.startswith(start) and why in msg and "\n" not in msg, msg


def test_ect1_from_a_classic_kernel_cc_is_one_line_naming_the_field(monkeypatch):
    # Linux's TCP sends ECT(1) only for an L4S congestion control; cubic would send ECT(0), a
    # silent change of the scenario's meaning.
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    sc = _with_tcp(cc="cubic", ecn="l4s")
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc))
    msg = str(e.value)
    assert msg.startswith("tcp.ecn: 'l4s' (ECT(1), RFC 9331) cannot run") and "\n" not in msg


def test_accecn_is_refused_in_one_line_with_what_the_kernel_said(monkeypatch):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    sc = _with_tcp(cc="cubic", ecn=True, accecn=True)
    with pytest.raises(InputError) as e:
        plan.make(sc, scenario.build_config(sc))
    msg = str(e.value)
    assert msg.startswith("tcp.accecn: AccECN (RFC 9768) cannot run on the testbed: ")
    assert msg.endswith("run it in the simulator") and "\n" not in msg, msg
    # Whatever this kernel is, the reason names it (root: the namespace probe's answer).
    assert "this kernel" in msg or "the testbed does not set it up" in msg, msg


@pytest.mark.parametrize(("rcv", "accepts"), [("off", False), ("ecn", True), ("accecn", True)])
def test_receiver_ecn_sets_whether_the_receivers_accept_ecn(monkeypatch, rcv, accepts):
    monkeypatch.setattr(plan, "_available_cc", lambda: {"reno", "cubic"})
    sc = _with_tcp(cc="cubic", ecn=True, receiver_ecn=rcv)
    p = plan.make(sc, scenario.build_config(sc))
    assert (p.ecn, p.receiver_ecn) == (True, accepts)
