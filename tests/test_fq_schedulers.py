"""`fq` with any per-queue AQM, its presets `fq_codel`, `fq_pie` and `fq_cobalt`, and CoDel's
`ce_threshold`
(issue 21 items 2, 3, 5) through the scenario schema and the real CLI. Their bad values are in
tests/test_algorithm_params.py's table."""

from __future__ import annotations

import json
import tomllib

from conftest import SMALL, aqmlab_cli


def _run(aqm: dict, tcp: dict | None = None) -> dict:
    from aqmlab.running import runner
    from aqmlab.scenario import schema as scenario

    data = tomllib.loads(SMALL)
    data["aqm"] = aqm
    if tcp is not None:
        data["tcp"] = tcp
    data["duration"] = "4s"
    data["warmup"] = "1s"
    return runner.run(scenario.from_dict(data)).summary


def test_fq_with_codel_in_the_sub_table_is_fq_codel():
    """`fq` + `codel` with ECN on (the sub-table) gives the same run as the `fq_codel` preset,
    whose CoDel has ECN on by default (RFC 8290 s. 5.2.6): same link figures, same counters."""
    a = _run({"name": "fq", "queue_aqm": "codel", "queue": {"ecn": True, "target": "5ms"}})
    b = _run({"name": "fq_codel"})
    links_a = json.dumps(a["links"], sort_keys=True).replace('"fq"', '"fq_codel"')
    assert links_a == json.dumps(b["links"], sort_keys=True)
    # The sub-table is applied: a different CoDel target changes the run.
    c = _run({"name": "fq", "queue": {"ecn": True, "target": "1ms", "interval": "20ms"}})
    assert json.dumps(c["links"], sort_keys=True) != links_a


def test_fq_pie_and_fq_with_pie_run_and_report_their_counters():
    """PIE only drops once its timer has raised the probability: early drops prove that the
    simulator drives the scheduler's periodic update (one timer for every queue)."""
    link = _run({"name": "fq_pie"})["links"][0]
    assert link["aqm"] == "fq_pie"
    assert {"aqm_drops", "overmemory", "overlimit_drops"} <= set(link["aqm_stats"])
    assert link["dropped_aqm"] > 0 and link["aqm_stats"]["aqm_drops"] > 0, link
    link = _run({"name": "fq", "queue_aqm": "pie", "queue": {"target": "10ms"}})["links"][0]
    assert link["aqm"] == "fq" and "aqm_drops" in link["aqm_stats"]


def test_fq_cobalt_is_fq_with_cobalt_spelled_out():
    """The `fq_cobalt` preset (ns-3.44 FqCobaltQueueDisc) gives the same run as `fq` + `cobalt`
    written out as docs/algorithms/fq_cobalt.md shows it: every link figure and counter equal,
    apart from the qdisc's name, with Not-ECT and with ECN-capable (ECT(0)) senders."""
    spelled = {
        "name": "fq",
        "queue_aqm": "cobalt",
        "aqm_backlog": "flow",
        "quantum": "1500B",
        "queue": {"ecn": True},
    }
    for tcp in (None, {"ecn": True}):
        a = _run(spelled, tcp)
        b = _run({"name": "fq_cobalt"}, tcp)
        links_a = json.dumps(a["links"], sort_keys=True).replace('"fq"', '"fq_cobalt"')
        assert links_a == json.dumps(b["links"], sort_keys=True), tcp
        assert b["links"][0]["aqm"] == "fq_cobalt"


def test_fq_cobalt_marks_ecn_capable_packets_by_default():
    """ECN on by default (ns-3's FqCobalt UseEcn: true, unlike its single-queue Cobalt): with
    ECT(0) senders COBALT's CoDel marks instead of dropping; `ecn = false` turns marks into drops.
    With Not-ECT senders there is nothing to mark."""
    on = _run({"name": "fq_cobalt"}, {"ecn": True})["links"][0]["aqm_stats"]
    off = _run({"name": "fq_cobalt", "ecn": False}, {"ecn": True})["links"][0]["aqm_stats"]
    plain = _run({"name": "fq_cobalt"})["links"][0]["aqm_stats"]
    assert on["ecn_marks"] > 0, on
    assert off["ecn_marks"] == 0 and off["aqm_drops"] > on["aqm_drops"], (on, off)
    assert plain["ecn_marks"] == 0 and plain["aqm_drops"] > 0, plain


def test_list_shows_the_schedulers_with_parameters_defaults_and_units():
    r = aqmlab_cli("list")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for name in ("fq", "fq_pie", "fq_codel", "fq_cobalt"):
        assert f"\n{name}" in "\n" + out or f" {name} " in out, name
    for needle in ("queue_aqm", "ecn_prob", "memory_limit", "ce_threshold", "tupdate", "15ms"):
        assert needle in out, needle
    # fq_cobalt's block, with ns-3's defaults and units.
    block = out.split("\nfq_cobalt:", 1)[1].split("\n\n", 1)[0]
    for needle in ("blue_threshold", "400ms", "1500B", "10240", "ecn"):
        assert needle in block, (needle, block)
