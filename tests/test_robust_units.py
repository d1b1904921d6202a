"""Units as network people write them (issue 13, item 8): tc's bit units are accepted, tc's
ambiguous ``kbps``/``mbps`` (bytes per second to tc) are refused naming both readings, and a
setting written in the wrong table is answered with where it lives."""

from __future__ import annotations

import pytest

from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario
from aqmlab.scenario import units
from conftest import SMALL

# tc(8), "UNITS": bit or a bare number = bit/s; kbit/mbit/gbit/tbit decimal; kibit.. binary.
TC_BITS = [
    ("100bit", 100),
    ("10kbit", 10_000),
    ("10Kbit", 10_000),
    ("100mbit", 100_000_000),
    ("100Mbit", 100_000_000),
    ("1gbit", 1_000_000_000),
    ("2Gbit", 2_000_000_000),
    ("1tbit", 10**12),
    ("1kibit", 1024),
    ("1mibit", 1024**2),
    ("1gibit", 1024**3),
]


@pytest.mark.parametrize(("text", "bps"), TC_BITS)
def test_tc_bit_units_are_bits_per_second(text, bps):
    assert units.rate_bps("topology.rate", text) == bps


@pytest.mark.parametrize(("text", "bps"), [("12.5MB/s", 100e6), ("1kB/s", 8e3), ("1GB/s", 8e9)])
def test_explicit_bytes_per_second_are_eight_bits_a_byte(text, bps):
    assert units.rate_bps("topology.rate", text) == pytest.approx(bps)


@pytest.mark.parametrize(
    ("text", "suggest"),
    [
        ("56kbps", "'56kbit' or '56Kbps'"),
        ("100mbps", "'100mbit' or '100Mbps'"),
        ("10gbps", "'10gbit' or '10Gbps'"),
    ],
)
def test_tc_byte_rate_spellings_are_refused_as_ambiguous(text, suggest):
    with pytest.raises(InputError) as e:
        units.rate_bps("topology.rate", text)
    msg = str(e.value)
    assert msg.startswith("topology.rate: unit ")
    assert "ambiguous" in msg and "bytes per second" in msg and suggest in msg


@pytest.mark.parametrize(("text", "bps"), [("100Mbps", 1e8), ("1Gbps", 1e9), ("64Kbps", 64e3)])
def test_upper_case_prefix_bps_stays_bits(text, bps):
    assert units.rate_bps("topology.rate", text) == bps


def test_a_tc_rate_gives_the_same_network_as_the_si_one():
    def bottleneck(rate: str) -> dict:
        sc = scenario.from_dict(
            {"topology": {"rate": rate, "access_rate": "1gbit"}, "flows": [{"count": 2}]}
        )
        return scenario.build_config(sc)["links"]

    assert bottleneck("20mbit") == bottleneck("20Mbps")


def _aqm_error(aqm: dict) -> str:
    with pytest.raises(InputError) as e:
        scenario.build_config(scenario.from_dict({"aqm": aqm, "flows": [{"count": 1}]}))
    return str(e.value)


def test_aqm_limit_is_answered_with_where_it_lives():
    msg = _aqm_error({"name": "red", "limit": 300})
    assert msg.startswith("aqm.limit: unknown parameter of red")
    assert "topology.buffer" in msg


def test_fq_codel_keeps_its_own_limit():
    sc = scenario.from_dict({"aqm": {"name": "fq_codel", "limit": 300}, "flows": [{"count": 1}]})
    assert scenario.build_config(sc)["links"][0]["aqm"]["params"]["limit"] == 300


@pytest.mark.parametrize(
    ("aqm", "expect"),
    [
        ({"name": "red", "probability": 0.1}, "max_p"),
        ({"name": "red", "min": 5}, "min_th"),
        ({"name": "codel", "bandwidth": "10Mbps"}, "topology.rate"),
        ({"name": "modred", "ecn": True}, "tcp.ecn"),
        ({"name": "red", "max_t": 5}, "did you mean 'max_th'"),
    ],
)
def test_a_setting_in_the_wrong_place_names_its_place(aqm, expect):
    assert expect in _aqm_error(aqm)


def test_tc_names_are_not_suggested_where_the_target_does_not_exist():
    # codel has no max_p: "probability" is just unknown there
    msg = _aqm_error({"name": "codel", "probability": 0.1})
    assert "max_p" not in msg.split("; allowed")[0]


def test_a_misplaced_topology_field_is_answered_too():
    with pytest.raises(InputError) as e:
        scenario.from_dict({"topology": {"limit": 300}})
    assert str(e.value).startswith("topology.limit: unknown field; the queue's limit is topology.b")
    with pytest.raises(InputError) as e:
        scenario.from_dict({"topology": {"bufer": 300}})
    assert "did you mean 'buffer'" in str(e.value)


def test_cli_refuses_mbps_in_one_line(tmp_path):
    from conftest import aqmlab_cli

    sc = tmp_path / "s.toml"
    sc.write_text(SMALL.replace('rate = "20Mbps"', 'rate = "20mbps"'))
    r = aqmlab_cli("run", str(sc), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: topology.rate: unit 'mbps' is ambiguous")
