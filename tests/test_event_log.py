"""Event logs (issue 24 item 3, ``[output] events``): the Parquet log of a link's enqueues,
dequeues, drops and marks agrees with the link's counters in summary.json (conservation: every
window arrival is one enqueue or one drop on arrival; every drop and mark of a packet that
arrived in the window is one row), over each queue model and each drop cause."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import aqmlab
from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario

BASE = {
    "duration": "6s",
    "warmup": "1s",
    "topology": {"rate": "10Mbps", "delay": "5ms", "buffer": 40},
    "flows": [{"count": 4, "start_spread": "0.5s"}],
    "output": {"events": ["bottleneck", "reverse"]},
}

CASES = {
    # lazy FIFO: overflow drops on arrival
    "droptail": {"aqm": {"name": "droptail"}},
    # lazy FIFO: early drops and ECN marks on arrival (half the flows ECN-capable)
    "red-ecn": {
        "aqm": {"name": "red", "ecn": True},
        "flows": [{"count": 2, "tcp": {"ecn": True}}, {"count": 2}],
    },
    # real queue: head drops at dequeue
    "codel": {"aqm": {"name": "codel"}},
    # real queue: head marks (all flows ECN-capable) and head drops
    "codel-ecn": {
        "aqm": {"name": "codel", "ecn": True},
        "flows": [{"count": 2, "tcp": {"ecn": True}}, {"count": 2}],
    },
    # a queue discipline: drops from the fattest flow on overflow, head drops and marks inside
    "fq_codel": {
        "aqm": {"name": "fq_codel", "ecn": True},
        "topology": {"rate": "10Mbps", "delay": "5ms", "buffer": 20},
        "flows": [{"count": 2, "tcp": {"ecn": True}}, {"count": 2}],
    },
}


def _run(tmp_path, case: str):
    doc = json.loads(json.dumps(BASE))
    doc.update(CASES[case])
    out = tmp_path / case
    res = aqmlab.run(scenario.from_dict(doc), out=out)
    return res, out


@pytest.mark.parametrize("case", list(CASES))
def test_the_event_log_agrees_with_the_link_counters(tmp_path, case):
    res, out = _run(tmp_path, case)
    warm, end = 1_000_000_000, 6_000_000_000
    links = {lk["name"]: lk for lk in res.summary["links"]}
    bn = links["bottleneck"]
    t = pq.read_table(out / "events" / "bottleneck.parquet").to_pydict()
    n = len(t["t_ns"])
    assert n > 1000
    # In time order.
    assert all(a <= b for a, b in zip(t["t_ns"], t["t_ns"][1:], strict=False))
    rows = list(
        zip(t["t_ns"], t["event"], t["cause"], t["arrival_ns"], t["queue_pkts"], strict=True)
    )

    def count(event, causes=None, by_arrival=True, at_arrival=None):
        c = 0
        for tt, ev, cause, arr, _ in rows:
            when = arr if by_arrival else tt
            if ev != event or not warm <= when <= end:
                continue
            if causes is not None and cause not in causes:
                continue
            if at_arrival is not None and (tt == arr) != at_arrival:
                continue
            c += 1
        return c

    fq = case == "fq_codel"
    arrivals = count("enqueue", by_arrival=False)
    if not fq:  # a drop on arrival takes the place of the enqueue
        arrivals += count("drop", ("aqm", "overflow"), by_arrival=False)
    assert arrivals == bn["arrived"]
    assert count("drop", ("aqm", "aqm_head")) == bn["dropped_aqm"]
    assert count("drop", ("overflow",)) == bn["dropped_overflow"]
    assert count("mark") == bn["marked"]
    # Whole run: what was enqueued left, was dropped from the queue, or is still there.
    enq = sum(1 for r in rows if r[1] == "enqueue")
    deq = sum(1 for r in rows if r[1] == "dequeue")
    out_drops = sum(1 for r in rows if r[1] == "drop" and (r[2] == "aqm_head" or fq))
    if not fq:  # FQ-CoDel's drops log the queue before the call
        assert enq - deq - out_drops == rows[-1][4]
    # What the case exercises is there.
    causes = {r[2] for r in rows if r[1] == "drop"}
    want = {
        "droptail": {"overflow"},
        "red-ecn": {"aqm"},
        "codel": {"aqm_head"},
        "codel-ecn": {"aqm_head"},
        "fq_codel": {"aqm_head"},
    }[case]
    assert want <= causes, causes
    if "ecn" in case or fq:
        assert bn["marked"] > 0
    # Flows are named as in summary.json.
    assert set(t["flow"]) <= {f["name"] for f in res.summary["flows"]}
    # The reverse link's log exists too (the ACKs).
    rev = pq.read_table(out / "events" / "reverse.parquet")
    assert rev.num_rows > 0
    # No record files are left behind.
    assert not list((out / "events").glob("*.bin"))


def test_events_name_links_of_the_topology():
    doc = {**BASE, "output": {"events": ["bottlenek"]}}
    with pytest.raises(InputError, match=r"output.events\[0\]: no link named 'bottlenek'"):
        scenario.build_config(scenario.from_dict(doc))
    doc = {**BASE, "output": {"events": ["bottleneck", "bottleneck"]}}
    with pytest.raises(InputError, match="listed twice"):
        scenario.build_config(scenario.from_dict(doc))


def test_events_need_a_run_directory():
    with pytest.raises(InputError, match=r"output\.events: event logs and packet traces are"):
        aqmlab.run(scenario.from_dict(BASE))
