"""The scenario file of ``aqmlab evaluate`` (shipped: ``aqmlab/data/rfc7928.toml``): reading,
checking, and turning one scenario and one AQM into a scenario dict the simulator runs.

The file's grammar is described at its top. Everything is checked before anything runs: a bad
key or value is an :class:`InputError` naming ``scenario[<i>].<field>`` (exit code 2).
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from aqmlab.errors import InputError, show

_TOP = ("settings", "defaults", "aqm", "byte_mode", "scenario")
_SETTINGS = ("duration", "warmup", "seeds", "sample_interval", "quick")
_SCENARIO = (
    "id",
    "section",
    "title",
    "note",
    "requires",
    "run",
    "reverse_aqm",
    "aqm_wrap",
    "ecn",
    "capacity",
    "duration",
    "flow_series",
    "judge",
    "byte_mode",
    "rtt_sweep",
    "rate_sweep",
)
_DIRECTIONS = ("lower", "higher", "one", "none")
_CAPACITY = ("high", "low", "period", "quick_period", "tolerance_pkts")
_RTT_SWEEP = ("group", "rtts", "quick_rtts")
_RATE_SWEEP = ("rates", "quick_rates")


@dataclass
class Scenario:
    """One test of the guideline: its id, RFC 7928 section, title, what it needs, and the partial
    scenario (``run``) the AQM is put into."""

    id: str
    section: str
    title: str
    note: str
    run: dict[str, Any]
    requires: str | None = None
    reverse_aqm: bool = False
    aqm_wrap: dict[str, Any] | None = None
    ecn: bool = False
    capacity: dict[str, str] | None = None
    duration: str | None = None
    flow_series: bool = False
    judge: dict[str, str] = field(default_factory=dict)
    byte_mode: bool = False
    #: a point of a sweep: the sweep's id, its kind (``rtt``: ``rtt_sweep``, ``rate``:
    #: ``rate_sweep``), this point's x (the ratio of the swept group's base RTT to the first
    #: group's; the bottleneck's rate in Mb/s) and label
    family: str | None = None
    family_kind: str = ""
    family_x: float = math.nan
    family_label: str = ""
    family_title: str = ""
    family_ref: str = ""
    #: run under --quick too (a sweep's ``quick_rtts`` keep only some points)
    quick: bool = True

    @property
    def group(self) -> str:
        """The card's section: ``4.4``, ``4.5``, ``4.6`` on their own, else the top number."""
        parts = self.section.split(".")
        return ".".join(parts[:2]) if parts[0] == "4" else parts[0]


@dataclass
class Params:
    """A parsed scenario file."""

    settings: dict[str, Any]
    defaults: dict[str, Any]
    aqm_params: dict[str, dict[str, Any]]
    scenarios: list[Scenario] = field(default_factory=list)
    source: str = ""
    byte_mode: dict[str, dict[str, Any]] = field(default_factory=dict)

    def setting(self, key: str, quick: bool) -> Any:
        """``[settings.quick].key`` under --quick when given there, else ``[settings].key``."""
        if quick and key in self.settings.get("quick", {}):
            return self.settings["quick"][key]
        return self.settings[key]


def default_path() -> Path:
    """The shipped scenario file."""
    return Path(str(resources.files("aqmlab") / "data" / "rfc7928.toml"))


def _unknown(where: str, table: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for k in table:
        if k not in allowed:
            raise InputError(f"{where}{k}: unknown key; allowed: {', '.join(allowed)}")


def _table(where: str, v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise InputError(f"{where}: must be a table (got {show(v)})")
    return v


def parse(doc: dict[str, Any], source: str = "") -> Params:
    """Checks a scenario document and returns it parsed."""
    from aqmlab import outdir

    _unknown("", doc, _TOP)
    settings = _table("settings", doc.get("settings", {}))
    _unknown("settings.", settings, _SETTINGS)
    quick = _table("settings.quick", settings.get("quick", {}))
    _unknown("settings.quick.", quick, _SETTINGS[:-1])
    for where, tab in (("settings", settings), ("settings.quick", quick)):
        seeds = tab.get("seeds", 1)
        if not isinstance(seeds, int) or isinstance(seeds, bool) or not 1 <= seeds <= 1000:
            raise InputError(f"{where}.seeds: must be an integer in [1, 1000] (got {show(seeds)})")
    settings = {"duration": "40s", "warmup": "10s", "seeds": 1, **settings}
    settings.setdefault("sample_interval", "10ms")
    defaults = _table("defaults", doc.get("defaults", {}))
    aqm_params = _table("aqm", doc.get("aqm", {}))
    for name, tab in aqm_params.items():
        _table(f"aqm.{name}", tab)
    byte_mode = _table("byte_mode", doc.get("byte_mode", {}))
    for name, tab in byte_mode.items():
        if not _table(f"byte_mode.{name}", tab):
            raise InputError(f"byte_mode.{name}: give the parameters that turn byte mode on")
    raw = doc.get("scenario", [])
    if not isinstance(raw, list) or not raw:
        raise InputError("scenario: give at least one [[scenario]]")
    scenarios, seen = [], set()
    for i, s in enumerate(raw):
        where = f"scenario[{i}]."
        _table(f"scenario[{i}]", s)
        _unknown(where, s, _SCENARIO)
        for key in ("id", "section", "title"):
            if not isinstance(s.get(key), str) or not s[key]:
                raise InputError(f"{where}{key}: required, a non-empty string")
        sid = outdir.safe_name(s["id"], f"{where}id")
        if sid in seen:
            raise InputError(f"{where}id: {sid!r} is used by an earlier scenario")
        seen.add(sid)
        sec = s["section"]
        if not all(p.isdigit() for p in sec.split(".")):
            raise InputError(f"{where}section: an RFC 7928 section number like 8.2.6 (got {sec!r})")
        for key in ("reverse_aqm", "ecn", "flow_series", "byte_mode"):
            if not isinstance(s.get(key, False), bool):
                raise InputError(f"{where}{key}: must be true or false")
        cap = s.get("capacity")
        if cap is not None:
            _unknown(f"{where}capacity.", _table(f"{where}capacity", cap), _CAPACITY)
            for key in ("high", "low", "period"):
                if key not in cap:
                    raise InputError(f"{where}capacity.{key}: required (a rate or a duration)")
            tol = cap.get("tolerance_pkts", 5)
            if isinstance(tol, bool) or not isinstance(tol, int | float) or not 0 <= tol < 1e9:
                raise InputError(f"{where}capacity.tolerance_pkts: a number of packets >= 0")
        wrap = s.get("aqm_wrap")
        if wrap is not None and "name" not in _table(f"{where}aqm_wrap", wrap):
            raise InputError(f"{where}aqm_wrap.name: required (the scheduler's name)")
        judge = _table(f"{where}judge", s.get("judge", {}))
        for m, d in judge.items():
            if d not in _DIRECTIONS:
                raise InputError(
                    f"{where}judge.{m}: one of {', '.join(_DIRECTIONS)} (got {show(d)})"
                )
        one = Scenario(
            id=sid,
            section=sec,
            title=s["title"],
            note=str(s.get("note", "")),
            run=_table(f"{where}run", s.get("run", {})),
            requires=s.get("requires"),
            reverse_aqm=s.get("reverse_aqm", False),
            aqm_wrap=wrap,
            ecn=s.get("ecn", False),
            capacity=cap,
            duration=s.get("duration"),
            flow_series=s.get("flow_series", False),
            judge=judge,
            byte_mode=s.get("byte_mode", False),
        )
        if "rtt_sweep" in s and "rate_sweep" in s:
            raise InputError(f"{where}rate_sweep: one sweep per scenario (rtt_sweep is given)")
        if "rtt_sweep" in s:
            points = _rtt_sweep(where, one, _table(f"{where}rtt_sweep", s["rtt_sweep"]))
        elif "rate_sweep" in s:
            points = _rate_sweep(where, one, _table(f"{where}rate_sweep", s["rate_sweep"]))
        else:
            points = [one]
        for pt in points:
            if pt.id in seen and pt is not one:
                raise InputError(
                    f"{where}id: {pt.id!r} (a sweep's point) is used by an earlier scenario"
                )
            seen.add(pt.id)
        scenarios.extend(points)
    return Params(settings, defaults, aqm_params, scenarios, source, byte_mode)


def _rtt_sweep(where: str, sc: Scenario, sw: dict[str, Any]) -> list[Scenario]:
    """The points of an ``rtt_sweep`` (RFC 7928 s. 6.2): one scenario per base RTT of flow group
    ``group``, id ``<id>-<rtt>``, the RTT ratio to the first group's base RTT as its x."""
    from aqmlab.scenario import units

    _unknown(f"{where}rtt_sweep.", sw, _RTT_SWEEP)
    flows = sc.run.get("flows")
    g = sw.get("group")
    if not isinstance(flows, list) or len(flows) < 2:
        raise InputError(f"{where}rtt_sweep: the scenario needs two flow groups (run.flows)")
    if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g < len(flows):
        raise InputError(
            f"{where}rtt_sweep.group: the index of the swept flow group, 1 to {len(flows) - 1} "
            f"(group 0 is the reference; got {show(g)})"
        )
    ref_text = flows[0].get("rtt") if isinstance(flows[0], dict) else None
    if ref_text is None:
        raise InputError(f"{where}run.flows[0].rtt: required with rtt_sweep (the reference RTT)")
    ref = float(units.seconds(f"{where}run.flows[0].rtt", ref_text))
    if not ref > 0:
        raise InputError(f"{where}run.flows[0].rtt: must be > 0 with rtt_sweep (got {ref_text!r})")
    return _points(
        where,
        sc,
        sw,
        ("rtts", "quick_rtts", 'durations like "20ms"'),
        lambda r: float(units.seconds(f"{where}rtt_sweep.rtts", r)) / ref,
        lambda run, r: run["flows"].__setitem__(g, {**run["flows"][g], "rtt": r}),
        {"family_kind": "rtt", "family_ref": ref_text, "title": f"{sc.title}: {ref_text} against"},
    )


def _rate_sweep(where: str, sc: Scenario, sw: dict[str, Any]) -> list[Scenario]:
    """The points of a ``rate_sweep`` (RFC 7928 s. 8.3, s. 12: one parameter set across network
    conditions): one scenario per bottleneck rate, id ``<id>-<rate>``, the rate in Mb/s as x."""
    from aqmlab.scenario import units

    _unknown(f"{where}rate_sweep.", sw, _RATE_SWEEP)
    return _points(
        where,
        sc,
        sw,
        ("rates", "quick_rates", 'rates like "10Mbps"'),
        lambda r: float(units.rate_bps(f"{where}rate_sweep.rates", r)) / 1e6,
        lambda run, r: run.setdefault("topology", {}).__setitem__("rate", r),
        {"family_kind": "rate", "title": f"{sc.title}:"},
    )


def _points(
    where: str,
    sc: Scenario,
    sw: dict[str, Any],
    keys: tuple[str, str, str],
    x_of: Any,
    apply: Any,
    extra: dict[str, Any],
) -> list[Scenario]:
    """A sweep's points: for each value of ``sw[keys[0]]`` a copy of ``sc`` with the value applied
    to its run (``apply``), id ``<id>-<value>``, x ``x_of(value)`` (> 0), run under --quick when
    listed in ``sw[keys[1]]`` (default: all)."""
    what, quick_key, like = keys
    kind = "rtt_sweep" if what == "rtts" else "rate_sweep"
    values = sw.get(what)
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise InputError(f"{where}{kind}.{what}: a non-empty list of {like}")
    quick = sw.get(quick_key, values)
    if not isinstance(quick, list) or not quick or any(q not in values for q in quick):
        raise InputError(f"{where}{kind}.{quick_key}: a non-empty list taken from {what}")
    out = []
    for v in values:
        x = x_of(v)
        if not x > 0:
            raise InputError(f"{where}{kind}.{what}: every value must be > 0 (got {v!r})")
        run = copy.deepcopy(sc.run)
        apply(run, v)
        fields = {
            **sc.__dict__,
            "run": run,
            "family": sc.id,
            "family_x": x,
            "family_label": v,
            "family_title": sc.title,
            "quick": v in quick,
            **extra,
        }
        fields["id"] = f"{sc.id}-{v}"
        fields["title"] = f"{extra['title']} {v}"
        out.append(Scenario(**fields))
    return out


def load(path: str | Path | None = None) -> Params:
    """Reads the scenario file (default: the shipped one)."""
    p = Path(path) if path is not None else default_path()
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise InputError(f"--params: no such file: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--params: cannot read {p}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"--params: {p.name} is not valid TOML: {e}") from None
    return parse(doc, str(p))


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _seconds(text: Any, where: str) -> float:
    from aqmlab.scenario import units

    return float(units.seconds(where, text))


class NotApplicableError(Exception):
    """The scenario does not apply to this AQM (say, ECN for an AQM without an ECN option)."""


def aqm_table(p: Params, sc: Scenario, name: str, ecn_capable: set[str]) -> dict[str, Any]:
    """The ``[aqm]`` table of ``name`` in scenario ``sc``: its parameters from ``[aqm.<name>]``,
    ECN on when the scenario asks, wrapped in a scheduler when the scenario asks."""
    table = {"name": name, **p.aqm_params.get(name, {})}
    if sc.byte_mode:
        if name not in p.byte_mode:
            raise NotApplicableError(
                f"{name} has no byte mode (the scenario file's [byte_mode] names the AQMs that "
                "have one)"
            )
        table.update(p.byte_mode[name])
    if sc.ecn:
        if name not in ecn_capable:
            raise NotApplicableError(f"{name} has no ECN option")
        table["ecn"] = True
    if sc.aqm_wrap is not None:
        if name.startswith("fq"):
            raise NotApplicableError(f"{name} is itself a flow-queue scheduler")
        wrap = json.loads(json.dumps(sc.aqm_wrap).replace("{aqm}", name))
        table = {**wrap}
    return table


def build(p: Params, sc: Scenario, name: str, quick: bool, ecn_capable: set[str]) -> dict[str, Any]:
    """The scenario dict of ``sc`` with AQM ``name`` (validated later, by the sweep's plan)."""
    run = _merge(p.defaults, sc.run)
    duration = sc.duration if (sc.duration and not quick) else p.setting("duration", quick)
    warmup = p.setting("warmup", quick)
    d = _seconds(duration, f"scenario {sc.id}: duration")
    run["name"] = f"rfc7928-{sc.id}-{name}"
    run["duration"] = duration
    run["warmup"] = warmup
    run["aqm"] = aqm_table(p, sc, name, ecn_capable)
    if sc.reverse_aqm:
        run.setdefault("topology", {})["reverse_aqm"] = copy.deepcopy(run["aqm"])
    out = run.setdefault("output", {})
    out.setdefault("sample_interval", p.setting("sample_interval", quick))
    if sc.flow_series:
        out["flow_series"] = True
    tcp = run.setdefault("tcp", {})
    tcp.setdefault("trace_cwnd", True)
    flows = []
    for j, g in enumerate(run.get("flows", [])):
        g = dict(g)
        for key, target in (("start_at", "start"), ("stop_at", "stop")):
            if key in g:
                f = g.pop(key)
                if not isinstance(f, int | float) or isinstance(f, bool) or not 0 <= f <= 1:
                    raise InputError(f"scenario {sc.id}: flows[{j}].{key}: a fraction in [0, 1]")
                g[target] = f"{f * d:g}s"
        flows.append(g)
    run["flows"] = flows
    if sc.capacity is not None:
        cap = sc.capacity
        period = cap.get("quick_period", cap["period"]) if quick else cap["period"]
        per = _seconds(period, f"scenario {sc.id}: capacity.period")
        if per <= 0:
            raise InputError(f"scenario {sc.id}: capacity.period: must be > 0")
        steps, t, k = [], 0.0, 0
        while t < d - 1e-9:
            steps.append({"at": f"{t:g}s", "rate": cap["high"] if k % 2 == 0 else cap["low"]})
            t, k = t + per, k + 1
        run.setdefault("topology", {})["rate"] = steps
    return run


def step_times(sc: Scenario, quick: bool, duration_s: float) -> list[float]:
    """The times the capacity of ``sc`` changes (empty without a ``capacity``)."""
    if sc.capacity is None:
        return []
    cap = sc.capacity
    per = _seconds(cap.get("quick_period", cap["period"]) if quick else cap["period"], "period")
    out, t = [], per
    while t < duration_s - 1e-9:
        out.append(t)
        t += per
    return out
