"""Strings with units are parsed once, when a scenario is validated (issue 20, item 3): the model
holds numbers in base units, and building the simulator's network parses nothing again.

Before this change, loading a scenario parsed nothing and ``build_config`` parsed its unit strings
as it went, back and forth between the builders and ``units.py``: 19 for the built-in default
scenario, 28 for scenarios/default.toml. Now each value is parsed exactly once, by the model (25
and 34 fields, defaults included), and the builders use the numbers.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from aqmlab.scenario import schema, units
from aqmlab.scenario.units import Buffer, Quantity

ROOT = Path(__file__).resolve().parent.parent


def _values(obj: object) -> list[object]:
    """Every value held by a model tree (fields of nested models and lists), depth first."""
    out: list[object] = []
    if isinstance(obj, schema.BaseModel):
        for name in type(obj).model_fields:
            out += _values(getattr(obj, name))
    elif isinstance(obj, list) and not isinstance(obj, Buffer):
        for x in obj:
            out += _values(x)
    else:
        out.append(obj)
    return out


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records the string of every call of the one function that reads a unit string."""
    calls: list[str] = []
    real = units._parse

    def counting(value: object, *a: object, **kw: object) -> float:
        calls.append(str(value))
        return real(value, *a, **kw)

    monkeypatch.setattr(units, "_parse", counting)
    return calls


@pytest.mark.parametrize(
    "path",
    ["scenarios/default.toml", "scenarios/examples/latency_probe.toml", None],
    ids=["default.toml", "latency_probe.toml", "built-in default"],
)
def test_each_unit_string_is_parsed_once_and_build_parses_none(
    path: str | None, parse_calls: list[str]
) -> None:
    sc = schema.load(ROOT / path) if path else schema.Scenario()
    held = [v for v in _values(sc) if isinstance(v, Quantity)]
    # One parse per quantity the model holds (a buffer written as a whole number of packets is
    # not a unit string), in the order the fields are declared.
    assert parse_calls == [q.text for q in held]
    assert len(held) >= 20
    n = len(parse_calls)
    schema.build_config(sc)
    assert parse_calls[n:] == [], "build_config parsed unit strings again"


def test_a_string_buffer_and_every_flow_kind_are_parsed_at_validation(
    parse_calls: list[str],
) -> None:
    sc = schema.from_dict(
        {
            "duration": "3s",
            "warmup": "1s",
            "topology": {"buffer": "450kB", "access_delay": ["1ms", "3ms"]},
            "flows": [
                {"count": 2, "size": "1MB", "start": "0.5s", "stop": "2s"},
                {"type": "onoff", "rate": "1Mbps", "on_time": "100ms", "off_time": "200ms"},
                {"type": "web", "arrival_rate": 2, "object_size": "20kB", "think_time": "1s"},
                {"type": "probe", "interval": "20ms"},
            ],
        }
    )
    n = len(parse_calls)
    assert "450kB" in parse_calls and "20kB" in parse_calls
    schema.build_config(sc)
    assert parse_calls[n:] == []


def test_the_model_holds_base_units_and_dumps_the_users_words() -> None:
    data = {
        "duration": "1.5min",
        "topology": {"rate": "10Mbps", "delay": "2ms", "buffer": "30pkt", "access_buffer": 50},
        "flows": [{"count": 1, "packet_size": "1.5kB"}],
    }
    sc = schema.from_dict(data)
    assert sc.duration == 90.0  # 1.5 x 60 s
    assert sc.topology.rate == 10e6 and sc.topology.delay == pytest.approx(2e-3)
    assert tuple(sc.topology.buffer) == (30, None)
    assert tuple(sc.topology.access_buffer) == (50, None)
    assert sc.flows[0].packet_size == 1500.0
    dump = sc.model_dump()
    assert dump["duration"] == "1.5min" and dump["topology"]["rate"] == "10Mbps"
    assert dump["topology"]["buffer"] == "30pkt" and dump["topology"]["access_buffer"] == 50
    assert dump["flows"][0]["packet_size"] == "1.5kB"
    assert dump["tcp"]["mss"] == "1460B"  # a default, as the schema writes it
    # A dump validates back to the same numbers (a run directory's scenario.json re-runs).
    again = schema.Scenario.model_validate(dump)
    assert again.model_dump() == dump and again.duration == sc.duration
    # Messages quote what the user wrote; a format spec formats the number.
    assert f"{sc.duration}" == "1.5min" and str(sc.topology.rate) == "10Mbps"
    assert f"{sc.topology.rate:g}" == "1e+07"
    # Sweep workers get scenarios by pickle.
    back = pickle.loads(pickle.dumps(sc))
    assert back.model_dump() == dump and back.topology.buffer == sc.topology.buffer


def test_errors_still_name_the_field_and_what_is_allowed() -> None:
    cases = {
        ("topology", "rate", "100"): "topology.rate: '100' is not a rate; write e.g. '100Mbps'",
        ("tcp", "min_rto", "0ms"): "tcp.min_rto: must be > 0 (got '0ms')",
        ("topology", "buffer", "0pkt"): "topology.buffer: must be a whole number of packets",
    }
    for (table, key, value), want in cases.items():
        with pytest.raises(schema.InputError) as e:
            schema.from_dict({table: {key: value}})
        assert str(e.value).startswith(want), str(e.value)
    with pytest.raises(schema.InputError) as e:
        schema.from_dict({"flows": [{"type": "web", "arrival_rate": 1, "think_time": "-1s"}]})
    assert str(e.value) == "flows[0].think_time: must be >= 0 (got '-1s')"
