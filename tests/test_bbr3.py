"""BBR v3 (``cc = "bbr3"``) from scenario files: ECN optional, and the shipped ECN example gives
the figures docs/transports.md ("BBR v3") reports."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import aqmlab_cli

ROOT = Path(__file__).resolve().parents[1]

SHORT = (
    'duration = "3s"\nwarmup = "1s"\n[topology]\nrate = "10Mbps"\ndelay = "5ms"\nbuffer = 50\n'
    '[aqm]\nname = "droptail"\n[tcp]\nvariant = "sack"\ncc = "{cc}"\n[[flows]]\ncount = 2\n'
)


def test_bbr3_runs_without_ecn_where_dctcp_is_refused(tmp_path):
    for cc, code in (("bbr3", 0), ("dctcp", 2)):
        p = tmp_path / f"{cc}.toml"
        p.write_text(SHORT.format(cc=cc))
        out = tmp_path / cc
        r = aqmlab_cli("run", str(p), "--out", str(out), "--quiet")
        assert r.returncode == code, r.stderr
        if code:
            # One line naming the field, no traceback.
            assert "tcp.ecn" in r.stderr and "Traceback" not in r.stderr
            assert len(r.stderr.strip().splitlines()) == 1
        else:
            s = json.loads((out / "summary.json").read_text())
            assert s["links"][0]["utilisation"] > 0.9


def test_the_ecn_example_holds_the_l4s_queue_near_its_step(tmp_path):
    out = tmp_path / "out"
    sc = ROOT / "scenarios" / "examples" / "bbr3-ecn-dualpi2.toml"
    r = aqmlab_cli("run", str(sc), "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    b = s["links"][0]
    # docs/transports.md: utilisation 0.981, mean delay 1.25 ms (DualPI2's step: 1 ms), no loss.
    assert b["dropped_aqm"] + b["dropped_overflow"] == 0
    assert b["marked"] > 0
    assert b["utilisation"] > 0.95
    assert 1e-3 < b["delay_mean_s"] < 1.5e-3
    assert sum(f["retransmits"] for f in s["flows"]) == 0
