"""A sweep file: a base scenario, axes over its fields, replications; expanded into run tasks.

Grammar (TOML; docs/sweeps.md has the worked example)::

    name = "red-max-p"                  # default: the file's stem
    base = "../scenarios/default.toml"  # a scenario file (relative to this file) or a [base] table
    seeds = 5                           # replications per point (seed, seed+1, ...) or a list
    series = false                      # keep each run's time series (a run directory per run)

    [grid]                              # every combination (product) of these axes
    "aqm.max_p" = [0.05, 0.1, 0.2]
    "topology.delay" = {start = 2, stop = 20, num = 4, unit = "ms"}   # a range

    [zip]                               # lists of equal length, taken together as one axis
    "aqm.min_th" = [20, 40]
    "aqm.max_th" = [60, 120]

    [[variant]]                         # per-AQM parameter sets: each adds its own points
    label = "apace"
    set = {"aqm.name" = "apace"}
    grid = {"aqm.max_p" = [0.1, 0.2]}

An axis names any scenario field by its dotted path (``aqm.max_p``, ``topology.delay``,
``flows[0].count``, ``tcp.variant``). Unquoted TOML keys (``aqm.max_p = [...]``) are nested tables
and mean the same. A point that sets ``aqm.name`` to another algorithm than the base's starts from
that algorithm's defaults (the base's parameters belong to the base's algorithm).

Everything is validated before anything runs: :func:`plan` raises :class:`InputError` with the
field, or with the coordinates of the first point whose scenario is invalid.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aqmlab.errors import InputError
from aqmlab.scenario import schema as scenario

_TOP = ("name", "base", "seeds", "series", "grid", "zip", "variant")
_VARIANT = ("label", "set", "grid", "zip")
_RANGE = {"start", "stop", "num", "step", "log", "unit"}
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


@dataclass(frozen=True)
class Task:
    """One run of a sweep: a fully resolved scenario and a seed, keyed by their hash."""

    key: str
    label: str
    point: dict[str, Any]
    seed: int
    scenario: dict[str, Any]


@dataclass
class Sweep:
    """A parsed sweep: its name, the points (label, coordinates, resolved scenario) and seeds."""

    name: str
    points: list[tuple[str, dict[str, Any], dict[str, Any]]]
    seeds: list[int]
    series: bool

    def tasks(self) -> list[Task]:
        """Every run: each point under each seed, in order."""
        return [
            Task(run_key(sc, seed), label, point, seed, sc)
            for label, point, sc in self.points
            for seed in self.seeds
        ]

    @property
    def axes(self) -> list[str]:
        """The dotted paths that vary, in first-seen order."""
        seen: dict[str, None] = {}
        for _, point, _ in self.points:
            seen.update(dict.fromkeys(point))
        return list(seen)


def run_key(sc: dict[str, Any], seed: int) -> str:
    """Hash of the resolved scenario, the seed and the code's identity (aqmlab's version and a hash
    of its modules, :func:`aqmlab.running.buildinfo.build_id`): a run's identity."""
    from aqmlab.running.buildinfo import build_id

    text = json.dumps({"scenario": sc, "seed": seed, "version": build_id()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _values(field: str, v: Any) -> list[Any]:
    """An axis's values: a non-empty list, or a range table."""
    if isinstance(v, list):
        if not v:
            raise InputError(f"{field}: empty list of values (give at least one)")
        return v
    if isinstance(v, dict):
        return _range(field, v)
    raise InputError(f"{field}: give a list of values or a range {{start, stop, num|step}}")


def _num(field: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise InputError(f"{field}: must be a finite number (got {v!r})")
    return v


def _range(field: str, r: dict[str, Any]) -> list[Any]:
    """``{start, stop, num}`` (evenly spaced, both ends included; ``log = true`` for a geometric
    series), or ``{start, stop, step}`` (start, start + step, ... up to stop); ``unit`` appended
    to each value ("ms" makes 2 -> "2ms")."""
    unknown = set(r) - _RANGE
    if unknown:
        raise InputError(f"{field}: unknown range key {sorted(unknown)[0]!r}; allowed: {_RANGE}")
    if "start" not in r or "stop" not in r or ("num" in r) == ("step" in r):
        raise InputError(f"{field}: a range needs start, stop and one of num or step")
    a, b = _num(f"{field}.start", r["start"]), _num(f"{field}.stop", r["stop"])
    if "num" in r:
        n = r["num"]
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 100_000:
            raise InputError(f"{field}.num: must be an integer in [1, 100000] (got {n!r})")
        if r.get("log"):
            if a <= 0 or b <= 0:
                raise InputError(f"{field}: a log range needs start and stop > 0")
            vals = [a * (b / a) ** (i / (n - 1)) if n > 1 else a for i in range(n)]
        else:
            vals = [a + (b - a) * i / (n - 1) if n > 1 else a for i in range(n)]
    else:
        step = _num(f"{field}.step", r["step"])
        if step == 0 or (b - a) / step < 0:
            raise InputError(f"{field}.step: must move from start towards stop (got {step})")
        count = math.floor((b - a) / step * (1 + 1e-12) + 1e-9) + 1
        if count > 100_000:
            raise InputError(f"{field}: more than 100000 values")
        vals = [a + i * step for i in range(count)]
    ints = all(isinstance(r.get(k, 0), int) for k in ("start", "stop", "step"))
    vals = [round(v) if ints and float(v).is_integer() else float(f"{v:.12g}") for v in vals]
    unit = r.get("unit")
    if unit is not None:
        if not isinstance(unit, str) or not unit.isalpha():
            raise InputError(f'{field}.unit: must be a unit word such as "ms" (got {unit!r})')
        vals = [f"{v:g}{unit}" for v in vals]
    return vals


def _axes(section: str, table: Any) -> dict[str, list[Any]]:
    """Dotted path -> values; nested tables (unquoted dotted keys) are flattened."""
    if not isinstance(table, dict):
        raise InputError(f"{section}: must be a table of field = values")
    out: dict[str, list[Any]] = {}

    def walk(prefix: str, t: dict[str, Any]) -> None:
        for k, v in t.items():
            path = f"{prefix}.{k}" if prefix else k
            if isinstance(v, dict) and not (set(v) <= _RANGE and v):
                walk(path, v)
            else:
                out[path] = _values(f"{section}.{path!r}", v)

    walk("", table)
    return out


def _points(section: str, grid: dict[str, list], zipped: dict[str, list]) -> list[dict[str, Any]]:
    lengths = {p: len(v) for p, v in zipped.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{p!r} has {n}" for p, n in lengths.items())
        raise InputError(f"{section}zip: zipped axes need equal lengths ({desc})")
    for p in zipped:
        if p in grid:
            raise InputError(f"{section}zip.{p!r}: also in {section}grid; give it in one place")
    zip_rows = [dict(zip(zipped, row, strict=True)) for row in zip(*zipped.values(), strict=True)]
    grid_rows = [dict(zip(grid, row, strict=True)) for row in itertools.product(*grid.values())]
    return [{**g, **z} for g in grid_rows for z in (zip_rows or [{}])]


def _parse_path(path: str) -> list[str | int]:
    out: list[str | int] = []
    for seg in path.split("."):
        m = _SEGMENT.match(seg)
        if not m:
            raise InputError(f"axis {path!r}: not a field path (e.g. aqm.max_p, flows[0].count)")
        out.append(m.group(1))
        out.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return out


def apply(base: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    """The scenario ``base`` (a model dump) with each dotted path of ``point`` set."""
    sc = json.loads(json.dumps(base))
    name = point.get("aqm.name")
    if name is not None and name != sc["aqm"].get("name"):
        sc["aqm"] = {"name": name}
    py = point.get("aqm.python")  # a Python AQM (aqmlab.pyaqm) starts from its own defaults too
    if py is not None and py != sc["aqm"].get("python"):
        sc["aqm"] = {"python": py}
    for path, value in point.items():
        keys = _parse_path(path)
        node: Any = sc
        for i, k in enumerate(keys[:-1]):
            nxt = keys[i + 1]
            if isinstance(k, int):
                if not isinstance(node, list) or k >= len(node):
                    have = len(node) if isinstance(node, list) else 0
                    raise InputError(f"axis {path!r}: index {k} out of range (there are {have})")
                node = node[k]
                continue
            if not isinstance(node, dict):
                raise InputError(f"axis {path!r}: {k!r} is not inside a table")
            if node.get(k) is None:
                node[k] = [] if isinstance(nxt, int) else {}
            node = node[k]
        last = keys[-1]
        if isinstance(last, int) or not isinstance(node, dict):
            raise InputError(f"axis {path!r}: must name a field, not a list element")
        node[last] = value
    return sc


def _seeds(v: Any, base_seed: int) -> list[int]:
    if isinstance(v, list):
        if not v or not all(isinstance(s, int) and not isinstance(s, bool) for s in v):
            raise InputError("seeds: a list of seeds must hold at least one integer")
        if len(set(v)) != len(v):
            raise InputError("seeds: a seed is repeated")
        return v
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 100_000:
        raise InputError(f"seeds: must be the number of replications, 1 to 100000 (got {v!r})")
    return [base_seed + i for i in range(v)]


def _base(doc: dict[str, Any], origin: Path | None) -> scenario.Scenario:
    base = doc.get("base", {})
    if isinstance(base, str):
        path = Path(base)
        if origin is not None and not path.is_absolute():
            path = origin.parent / path
        return scenario.load(path)
    if isinstance(base, dict):
        from aqmlab.pyaqm import load as pyaqm

        # A Python AQM's file is read now (relative to the sweep file, or the current directory
        # for a dict), so each run spec carries its source to the workers.
        base = json.loads(json.dumps(base))
        pyaqm.resolve_tables(base, origin.parent if origin is not None else Path.cwd())
        return scenario.from_dict(base)
    raise InputError("base: give a scenario file name or a [base] table")


def _variants(doc: dict[str, Any]) -> list[tuple[str | None, dict, dict, dict, str]]:
    raw = doc.get("variant", [])
    if not isinstance(raw, list):
        raise InputError("variant: write each variant as [[variant]]")
    if not raw:
        return [(None, {}, {}, {}, "")]
    out = []
    for i, v in enumerate(raw):
        where = f"variant[{i}]."
        unknown = set(v) - set(_VARIANT)
        if unknown:
            raise InputError(f"{where}{sorted(unknown)[0]}: unknown key; allowed: {_VARIANT}")
        sets = {p: vals[0] for p, vals in _axes(f"{where}set", _listify(v.get("set", {}))).items()}
        grid = _axes(f"{where}grid", v.get("grid", {}))
        zipped = _axes(f"{where}zip", v.get("zip", {}))
        label = v.get("label")
        if label is not None and not isinstance(label, str):
            raise InputError(f"{where}label: must be a string")
        out.append((label, sets, grid, zipped, where))
    return out


def _listify(t: Any) -> Any:
    """``set`` values are single values: wrap each leaf in a list so _axes reads it."""
    if not isinstance(t, dict):
        raise InputError("set: must be a table of field = value")
    return {k: _listify(v) if isinstance(v, dict) else [v] for k, v in t.items()}


def parse(doc: dict[str, Any], origin: Path | None = None, name: str | None = None) -> Sweep:
    """Validates a sweep document and resolves every point's scenario (nothing runs)."""
    scenario.check_values(doc)
    unknown = [k for k in doc if k not in _TOP]
    if unknown:
        raise InputError(f"{unknown[0]}: unknown key in a sweep file; allowed: {', '.join(_TOP)}")
    base = _base(doc, origin)
    base_dump = base.model_dump()
    seeds = _seeds(doc.get("seeds", 1), base.seed)
    series = doc.get("series", False)
    if not isinstance(series, bool):
        raise InputError(f"series: must be true or false (got {series!r})")
    grid = _axes("grid", doc.get("grid", {}))
    zipped = _axes("zip", doc.get("zip", {}))
    common = _points("", grid, zipped)
    points: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    seen: set[str] = set()
    for label, sets, vgrid, vzip, where in _variants(doc):
        for own in _points(where, vgrid, vzip):
            for c in common:
                point = {**sets, **own, **c}
                sc = _validated(base_dump, point, origin)
                lab = label or str(sc["aqm"].get("name", ""))
                ident = json.dumps([lab, sc], sort_keys=True)
                if ident in seen:
                    continue  # the same point twice (overlapping variants) runs once
                seen.add(ident)
                points.append((lab, point, sc))
    name = doc.get("name", name or "sweep")
    from aqmlab import outdir

    outdir.safe_name(name, "name (the default output directory runs/<name> comes from it)")
    return Sweep(name, points, seeds, series)


def _coords(point: dict[str, Any]) -> str:
    return ", ".join(f"{p}={v!r}" for p, v in point.items()) or "the base scenario"


def _validated(
    base_dump: dict[str, Any], point: dict[str, Any], origin: Path | None = None
) -> dict[str, Any]:
    """The point's scenario as a model dump, checked as a run would check it (a Python AQM's
    file read, relative to the sweep file, so the run spec carries its source to workers)."""
    try:
        data = apply(base_dump, point)
        if "aqm.python" in point:
            from aqmlab.pyaqm import load as pyaqm

            pyaqm.resolve_tables(data, origin.parent if origin is not None else Path.cwd())
        sc = scenario.from_dict(data)
        scenario.build_config(sc)
    except InputError as e:
        raise InputError(f"sweep point ({_coords(point)}): {e}") from None
    return sc.model_dump()


def load(path: str | Path) -> Sweep:
    """Reads and validates a sweep file."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise InputError(f"sweep: no such file: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"sweep: cannot read {p}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"sweep: {p.name} is not valid TOML: {e}") from None
    except RecursionError:
        raise InputError(f"sweep: {p.name} nests arrays or tables too deeply to read") from None
    return parse(doc, origin=p, name=p.stem)
