"""Issue 19: the simulator's window counters (arrivals, drops, loss runs) on legal inputs that
used to break them, and the burst ratio they give (docs/metrics.md, "Burst ratio B").

Each scenario is a reproduction from the issue; the expected values follow from the definitions:
a run whose every window arrival is dropped has one loss run and B undefined (NaN); a drop is
counted in the window only when its packet arrived in it, so drops never exceed arrivals.
"""

from __future__ import annotations

import math

from aqmlab.running import runner
from aqmlab.scenario import schema as scenario


def _links(doc):
    return runner.run(scenario.from_dict(doc)).summary["links"]


def check_window_counts(link: dict) -> None:
    """0 <= loss_runs <= dropped <= arrived, and loss_runs >= 1 when something was dropped."""
    a = link["arrived"]
    d = link["dropped_aqm"] + link["dropped_overflow"]
    r = link["loss_runs"]
    assert 0 <= r <= d <= a, (link["name"], a, d, r)
    assert (r >= 1) == (d > 0), (link["name"], d, r)


def test_a_buffer_smaller_than_a_packet_drops_every_arrival_in_one_run():
    # Was: "loss_runs must be in [1, dropped=20] ... got 0" (drops before the warm-up hid the run).
    doc = {
        "duration": "1s",
        "warmup": "0.2s",
        "topology": {"rate": "100Mbps", "buffer": "100B"},
        "flows": [{"count": 3, "start_spread": "1s"}],
    }
    (bn,) = [x for x in _links(doc) if x["name"] == "bottleneck"]
    assert bn["arrived"] > 0
    assert bn["dropped_overflow"] == bn["arrived"]
    assert bn["loss_runs"] == 1
    assert math.isnan(bn["burst_ratio"])  # every arrival lost: B undefined (docs/metrics.md)


def test_a_dropfn_dropping_everything_gives_one_loss_run():
    # Was: "loss_runs must be in [1, dropped=...] ... got 0".
    doc = {
        "duration": "1s",
        "warmup": "0.2s",
        "topology": {"rate": "10Mbps"},
        "aqm": {"name": "dropfn", "table": [1]},
        "flows": [{"type": "poisson", "load": 0.5}],
    }
    (bn,) = [x for x in _links(doc) if x["name"] == "bottleneck"]
    # Poisson at 0.5 x 10 Mb/s over 0.8 s: ~333 packets of 1500 B (mean), all dropped.
    assert bn["arrived"] > 200
    assert bn["dropped_aqm"] == bn["arrived"]
    assert bn["loss_runs"] == 1
    assert math.isnan(bn["burst_ratio"])


def test_head_drops_of_packets_queued_before_the_warm_up_are_not_window_drops():
    # A huge initial window fills a CoDel queue before the warm-up; CoDel drops those packets at
    # the head after it. Was counted as window drops (issue 19: "dropped must be <= arrived").
    doc = {
        "duration": "3s",
        "warmup": "0.3s",
        "tcp": {"init_cwnd": 1e12},
        "topology": {
            "type": "general",
            "nodes": [
                {"name": "h1", "kind": "host"},
                {"name": "h2", "kind": "host"},
                {"name": "a"},
                {"name": "b"},
            ],
            "links": [
                {"from": "h1", "to": "a", "rate": "1Gbps", "delay": "1ms"},
                {
                    "from": "a",
                    "to": "b",
                    "rate": "10Mbps",
                    "delay": "10ms",
                    "buffer": 100000,
                    "aqm": {"name": "codel"},
                    "monitor": True,
                },
                {"from": "b", "to": "h2", "rate": "1Gbps", "delay": "1ms"},
            ],
        },
        "flows": [{"src": "h1", "dst": "h2"}],
    }
    for link in _links(doc):
        check_window_counts(link)
