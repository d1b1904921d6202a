"""The testbed's event log (issue 24 item 3, ``[output] events``): the forwarder writes the
simulator's records (``crates/qdisc/src/events.rs``) for its directions and the run directory gets
``events/<direction>.parquet``. Checked against the forwarder's own counters (conservation), time
order, and the queue length each record states against the one replayed from the enqueues and
dequeues. The runs need root (namespaces) and skip with the reason elsewhere; the flow naming and
the refusals run anywhere."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from aqmlab.testbed import LEAD_S, event_flow_names


def _doc(aqm: dict, buffer: int, events: list[str]) -> dict:
    return {
        "duration": "3s",
        "warmup": "1s",
        "topology": {"rate": "20Mbps", "delay": "5ms", "buffer": buffer},
        "aqm": aqm,
        "tcp": {"ecn": bool(aqm.get("ecn"))},
        "flows": [{"count": 2}],
        "output": {"events": events},
    }


def _replay(ev: dict) -> list[int]:
    """Replays the bottleneck's single queue from its records: each enqueue adds its frame, each
    dequeue or head drop removes it; a mark is followed by its frame's enqueue (marked on
    arrival: the queue before it joins) or dequeue (at the head: the queue after it left). Checks
    each record's queue against the replay and the times' order; returns the counts of enqueue,
    dequeue, drop, mark."""
    q = qb = last = 0
    counts = {"enqueue": 0, "dequeue": 0, "drop": 0, "mark": 0}
    n = len(ev["t_ns"])
    for i in range(n):
        t, kind, cause, size = ev["t_ns"][i], ev["event"][i], ev["cause"][i], ev["size"][i]
        assert t >= last, f"row {i}: time went back"
        assert ev["arrival_ns"][i] <= t
        last = t
        counts[kind] += 1
        if kind == "enqueue":
            want = (q + 1, qb + size)
        elif kind == "dequeue" or (kind == "drop" and cause == "aqm_head"):
            want = (q - 1, qb - size)
        elif kind == "mark" and ev["event"][i + 1] == "dequeue":
            assert ev["arrival_ns"][i + 1] == ev["arrival_ns"][i]
            want = (q - 1, qb - size)
        else:
            want = (q, qb)
        if kind != "mark":
            q, qb = want
        assert (ev["queue_pkts"][i], ev["queue_bytes"][i]) == want, f"row {i}"
    return [counts[k] for k in ("enqueue", "dequeue", "drop", "mark")]


def _check(res, out, name: str = "bottleneck") -> tuple[list[int], dict]:
    ev = pq.read_table(out / "events" / f"{name}.parquet").to_pydict()
    enq, deq, drops, marks = _replay(ev)
    key = "forward" if name == "bottleneck" else "reverse"
    cons = res.summary["testbed"]["conservation"][key]
    # Whole run: every drop is a row; every frame sent started (at most one still on the wire).
    assert drops == cons["dropped"]
    assert cons["sent"] <= deq <= cons["sent"] + 1
    # The window (from the forwarder's warm-up, LEAD_S + warmup on its clock) by arrival, as
    # the summary counts it.
    w0 = round((LEAD_S + res.summary["run"]["warmup_s"]) * 1e9)
    lk = next(x for x in res.summary["links"] if x["name"] == name)
    inw = [a >= w0 for a in ev["arrival_ns"]]

    def rows(kind: str, causes: tuple[str, ...] = ("",)) -> int:
        return sum(
            1
            for i, k in enumerate(ev["event"])
            if k == kind and ev["cause"][i] in causes and inw[i]
        )

    assert lk["arrived"] == rows("enqueue") + rows("drop", ("aqm", "overflow"))
    assert lk["dropped_aqm"] == rows("drop", ("aqm", "aqm_head"))
    assert lk["dropped_overflow"] == rows("drop", ("overflow",))
    assert lk["marked"] == rows("mark")
    assert set(ev["flow"]) <= {f["name"] for f in res.summary["flows"]} | {"non-IPv4"}
    return [enq, deq, drops, marks], lk


def test_flow_names_follow_the_hosts_a_five_tuple_joins():
    flows = [
        {"name": "a", "src": "10.1.0.1", "dst": "10.2.0.1"},
        {"name": "b", "src": "10.1.0.2", "dst": "10.2.0.2"},
        {"name": "c", "src": "10.1.0.2", "dst": "10.2.0.2"},
    ]
    fwd = ["non-IPv4", "10.1.0.1:40000>10.2.0.1:5201", "10.2.0.1:5201>10.1.0.1:40000"]
    fwd.append("10.1.0.2:40001>10.2.0.2:5201")  # two flows join these hosts: the 5-tuple
    assert event_flow_names(fwd, flows) == ["non-IPv4", "a", "a", fwd[3]]


def test_events_of_links_the_forwarder_has_not_are_refused():
    from aqmlab import testbed

    sc = scenario.from_dict(_doc({"name": "droptail"}, 10, ["L0-A"]))
    with pytest.raises(InputError, match=r"output.events\[0\]: the testbed logs the forwarder's"):
        testbed._check_outputs(sc, "somewhere")
    sc = scenario.from_dict(_doc({"name": "droptail"}, 10, ["bottleneck"]))
    with pytest.raises(InputError, match=r"output.events: event logs are written into a run"):
        testbed._check_outputs(sc, None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from test_testbed import REASON

    if REASON is not None:
        pytest.skip(REASON)
    from aqmlab import testbed

    done = {}
    for key, aqm, buf in (
        ("droptail", {"name": "droptail"}, 12),
        ("codel", {"name": "codel", "ecn": True}, 200),
    ):
        out = tmp_path_factory.mktemp("tbev") / key
        sc = scenario.from_dict(_doc(aqm, buf, ["bottleneck", "reverse"]))
        done[key] = (testbed.testbed(sc, out=out, cc="cubic", plot=False), out)
    return done


def test_droptail_overflow_drops_in_the_log_are_the_forwarders(runs):
    res, out = runs["droptail"]
    (enq, _, drops, marks), lk = _check(res, out)
    assert lk["dropped_overflow"] > 0 and drops >= lk["dropped_overflow"]
    assert marks == 0 and enq > 1000
    _check(res, out, "reverse")
    assert not (out / "events" / "bottleneck.bin").exists(), "the records are converted"


def test_codel_ecn_marks_in_the_log_are_the_forwarders(runs):
    res, out = runs["codel"]
    (enq, _, _, marks), lk = _check(res, out)
    assert lk["marked"] > 0 and marks >= lk["marked"] and enq > 1000
    _check(res, out, "reverse")
