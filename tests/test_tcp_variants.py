"""``[tcp] variant`` = sack / cubic and ``timestamps`` from a scenario file to the simulator."""

from __future__ import annotations

import json

import pytest

from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from conftest import aqmlab_cli

BASE = {
    "duration": "4s",
    "warmup": "1s",
    "topology": {"rate": "10Mbps", "delay": "5ms", "buffer": 50},
    "aqm": {"name": "red", "min_th": 5, "max_th": 15, "wait": True},
    "flows": [{"count": 4}],
}


def test_timestamps_add_twelve_bytes_to_segments_and_acks():
    sc = scenario.from_dict({**BASE, "tcp": {"variant": "cubic", "timestamps": True}})
    cfg = scenario.build_config(sc)
    t = cfg["flows"][0]["tcp"]
    assert t["variant"] == "cubic" and t["timestamps"] is True
    b = next(lk for lk in cfg["links"] if lk["name"] == "bottleneck")
    # RFC 7323 s. 3: 10-byte option + 2 NOPs: 1460 + 40 + 12 on the wire.
    assert b["mean_pkt_bytes"] == 1512


def test_unknown_variant_names_the_field():
    with pytest.raises(InputError, match=r"^tcp\.variant"):
        scenario.build_config(scenario.from_dict({**BASE, "tcp": {"variant": "bbr"}}))


@pytest.mark.parametrize("variant", ["sack", "cubic"])
def test_sack_and_cubic_runs_fill_the_link(tmp_path, variant):
    p = tmp_path / "s.toml"
    p.write_text(
        'duration = "8s"\nwarmup = "2s"\n[topology]\nrate = "10Mbps"\ndelay = "5ms"\n'
        'buffer = 50\n[aqm]\nname = "red"\nmin_th = 5\nmax_th = 15\nwait = true\n'
        f'[tcp]\nvariant = "{variant}"\ntimestamps = true\n[[flows]]\ncount = 4\n'
    )
    out = tmp_path / "out"
    r = aqmlab_cli("run", str(p), "--out", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["links"][0]["utilisation"] > 0.9
    assert sum(f["fast_retransmits"] for f in s["flows"]) > 0
