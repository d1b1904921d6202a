"""Python AQMs in scenarios and runs (issue 23): where the class comes from, its parameters
checked against the link, and the factory the simulator calls for each link it guards.

In a scenario, ``[aqm] python = "my_aqm.py:MyAqm"`` (a path relative to the scenario file) plus
the class's parameters. When the scenario file is read, the module's source is read into the
table (``python = {file, class, source}``), so a run spec carries it to sweep workers and Dask
workers that have nothing installed, and a run directory's scenario.toml holds the code it ran.
In code, ``aqmlab.run(scenario, aqm=MyAqm(...))`` runs an instance (copied for each link).

As the per-flow-queue AQM of ``fq``: ``[aqm] name = "fq"``, ``queue_aqm = "python"`` and the
class with its parameters in ``[aqm.queue]`` (``python = "my_aqm.py:MyAqm"``); each flow queue
gets its own instance. ``aqmlab.run(scenario, aqm=obj)`` on a scenario whose AQM is ``fq`` sets
the per-queue AQM (copied for each queue) and keeps fq's own parameters.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import sys
import types
from pathlib import Path
from typing import Any

from aqmlab.errors import InputError, one_line
from aqmlab.pyaqm.api import Link

#: Instances given to ``aqmlab.run(..., aqm=...)`` while their run lasts, by token.
_INSTANCES: dict[str, Any] = {}
_TOKENS = itertools.count()
#: Modules loaded from source, by (source hash, file): each module is executed once per process.
_MODULES: dict[tuple[str, str], types.ModuleType] = {}


def _err(field: str, msg: str) -> InputError:
    return InputError(one_line(f"{field}.python: {msg}"))


def resolve(value: Any, base: Path, field: str) -> dict[str, Any]:
    """``"file.py:Class"`` (relative to ``base``) as ``{file, class, source}``; an already
    resolved table is checked and returned."""
    if isinstance(value, dict):
        if set(value) == {"instance", "label"}:
            return value
        if set(value) != {"file", "class", "source"} or not all(
            isinstance(v, str) for v in value.values()
        ):
            raise _err(field, "must be a string 'file.py:Class'")
        return value
    if not isinstance(value, str) or value.count(":") != 1:
        raise _err(field, f"must be a string 'file.py:Class' (got {value!r})")
    file, cls = value.split(":")
    if not file.endswith(".py") or not cls.isidentifier():
        raise _err(field, f"must be 'file.py:Class': a Python file, a class (got {value!r})")
    path = base / file
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _err(field, f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise _err(field, f"cannot read {path}: {e}") from None
    return {"file": file, "class": cls, "source": source}


def resolve_tables(data: dict[str, Any], base: Path) -> None:
    """Resolves, in place, the ``python`` key of every AQM table of a raw scenario (``[aqm]``,
    ``topology.reverse_aqm``, ``topology.links[i].aqm``, ``[compare.<label>]``)."""
    tables: list[tuple[Any, str]] = [(data.get("aqm"), "aqm")]
    topo = data.get("topology")
    if isinstance(topo, dict):
        tables.append((topo.get("reverse_aqm"), "topology.reverse_aqm"))
        links = topo.get("links")
        if isinstance(links, list):
            tables += [
                (x.get("aqm"), f"topology.links[{i}].aqm")
                for i, x in enumerate(links)
                if isinstance(x, dict)
            ]
    cmp = data.get("compare")
    if isinstance(cmp, dict):
        tables += [(t, f"compare.{k}") for k, t in cmp.items()]
    for t, field in tables:
        if isinstance(t, dict) and "python" in t:
            t["python"] = resolve(t["python"], base, field)
        queue = t.get("queue") if isinstance(t, dict) else None
        if isinstance(queue, dict) and "python" in queue:  # fq's per-queue AQM
            queue["python"] = resolve(queue["python"], base, f"{field}.queue")


def _module(spec: dict[str, Any], field: str) -> types.ModuleType:
    key = (hashlib.sha256(spec["source"].encode()).hexdigest(), spec["file"])
    mod = _MODULES.get(key)
    if mod is not None:
        return mod
    stem = "".join(c if c.isalnum() else "_" for c in Path(spec["file"]).stem)
    mod = types.ModuleType(f"aqmlab_user.{stem}_{key[0][:12]}")
    mod.__file__ = spec["file"]
    sys.modules[mod.__name__] = mod  # dataclasses and pickling look their module up
    try:
        exec(compile(spec["source"], spec["file"], "exec"), mod.__dict__)
    except Exception as e:
        del sys.modules[mod.__name__]
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) else ""
        raise _err(
            field, f"{spec['file']}{where}: loading raised {type(e).__name__}: {e}"
        ) from None
    _MODULES[key] = mod
    return mod


def load_class(spec: dict[str, Any], field: str) -> tuple[type, str]:
    """The class a resolved spec names, and its label (``file.py:Class``) for messages."""
    label = f"{spec['file']}:{spec['class']}"
    cls = getattr(_module(spec, field), spec["class"], None)
    if not isinstance(cls, type):
        raise _err(field, f"{spec['file']} has no class {spec['class']!r}")
    check_class(cls, label, field)
    return cls, label


def check_class(cls: type, label: str, field: str) -> None:
    """The hooks a simulator needs are there (one line naming the class otherwise)."""
    if not callable(getattr(cls, "enqueue", None)):
        raise _err(field, f"{label} has no enqueue(pkt, queue, now) method")
    if hasattr(cls, "next_update") != hasattr(cls, "update"):
        raise _err(field, f"{label}: define both next_update() and update(queue, now), or neither")


def _fresh(inst: Any) -> Any:
    """A copy of ``inst`` with none of a previous run's state (its RNG view and link)."""
    cls = type(inst)
    if not hasattr(inst, "__dict__"):  # __slots__: copied whole
        return copy.deepcopy(inst)
    obj = cls.__new__(cls)
    state = {k: v for k, v in vars(inst).items() if k not in ("rng", "link")}
    obj.__dict__.update(copy.deepcopy(state))
    return obj


def _maker(spec: dict[str, Any], values: dict[str, Any], field: str) -> tuple[Any, str, str]:
    """``(make, label, name)``: ``make(**link)`` returns a new, set-up instance for a link."""
    if "instance" in spec:
        inst = _INSTANCES.get(spec["instance"])
        if inst is None:
            raise _err(
                field,
                f"the AQM instance given to aqmlab.run ({spec['label']}) exists only in that "
                "run; a scenario names a file instead: python = 'file.py:Class'",
            )
        cls, label = type(inst), spec["label"]

        def new() -> Any:
            return _fresh(inst)
    else:
        cls, label = load_class(spec, field)

        def new() -> Any:
            return cls(**values)

    def make(**link: Any) -> Any:
        obj = new()
        obj.link = Link(**link)
        setup = getattr(obj, "setup", None)
        if setup is not None:
            setup(obj.link)
        return obj

    name = getattr(cls, "name", "") or cls.__name__
    return make, label, str(name)


_EXAMPLES = {"duration": "'5ms'", "rate": "'10Mbps'", "size": "'1500B'"}


def link_aqm(
    table: dict[str, Any], field: str, rate: float, buf: tuple, mean_pkt: int
) -> dict[str, Any]:
    """A Python AQM's table checked against its link: the class loads, its parameters are
    valid, and an instance sets up for this link. Returned as the simulator's AQM entry with
    the spec attached (taken off by :func:`extract` before the simulator sees it)."""
    t = {k: v for k, v in table.items() if k not in ("python", "name")}
    if "defaults" in t:
        raise InputError(f"{field}.defaults: not for a Python AQM (its class holds its defaults)")
    spec = resolve(table["python"], Path.cwd(), field)
    if "instance" in spec and t:
        raise InputError(
            f"{field}.{next(iter(t))}: the AQM instance given to aqmlab.run holds its parameters"
        )
    if "instance" not in spec:
        cls, label = load_class(spec, field)
        kinds = {k: getattr(p, "kind", "") for k, p in getattr(cls, "params", {}).items()}
        for k, v in t.items():  # as the built-ins' tables (scenario.schema.aqm_params)
            kind = kinds.get(k)
            if kind in _EXAMPLES and isinstance(v, int | float) and not isinstance(v, bool):
                raise InputError(
                    f"{field}.{k}: {v!r} has no unit; write a {kind} like {_EXAMPLES[kind]}"
                )
        try:
            values = cls(**t).param_values() if hasattr(cls, "param_values") else dict(t)
        except (ValueError, TypeError) as e:
            raise InputError(one_line(f"{field}.{e}")) from None
    else:
        values = {}
    make, label, _ = _maker(spec, values, field)
    link = {
        "rate_bps": round(rate),
        "buffer_pkts": buf[0],
        "buffer_bytes": buf[1],
        "mean_pkt_bytes": mean_pkt,
    }
    try:
        make(**link)
    except (ValueError, TypeError) as e:
        raise InputError(one_line(f"{field}.{e}")) from None
    except Exception as e:
        raise _err(field, f"{label}: setting up raised {type(e).__name__}: {e}") from None
    return {"name": "python", "params": values, "python": spec, "field": field}


def queue_link_aqm(
    table: dict[str, Any], field: str, rate: float, buf: tuple, mean_pkt: int, own: dict[str, Any]
) -> dict[str, Any]:
    """``fq`` with a Python AQM on every flow queue (``queue_aqm = "python"``, the class and
    its parameters in ``[aqm.queue]``): ``own`` is fq's own parameters, checked by the caller.
    The class is checked against the link as a plain link's Python AQM is; the simulator builds
    one fresh instance per flow queue."""
    queue = table.get("queue")
    if not isinstance(queue, dict) or "python" not in queue:
        raise InputError(
            f"{field}.queue.python: queue_aqm = 'python' needs the class in [aqm.queue]: "
            "python = 'file.py:Class'"
        )
    entry = link_aqm(queue, f"{field}.queue", rate, buf, mean_pkt)
    return {"name": table["name"], "params": {**own, "queue_aqm": "python"}, "queue": entry}


def python_field(data: dict[str, Any]) -> str | None:
    """The field of the first AQM table of a scenario (model dump) that is a Python AQM."""
    tables = [(data.get("aqm"), "aqm")]
    topo = data.get("topology") or {}
    tables.append((topo.get("reverse_aqm"), "topology.reverse_aqm"))
    for i, x in enumerate(topo.get("links") or []):
        if isinstance(x, dict):
            tables.append((x.get("aqm"), f"topology.links[{i}].aqm"))
    for t, f in tables:
        if isinstance(t, dict) and "python" in t:
            return f
        if isinstance(t, dict) and isinstance(t.get("queue"), dict) and "python" in t["queue"]:
            return f"{f}.queue"
    return None


def extract(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple[str, str, Any, str]]]:
    """The configuration the simulator reads (each Python AQM named ``python:N``) and, by that
    name, ``(label, name, make, field)`` for ``_core.simulate(python_aqms=...)`` (``field``:
    the table a failed hook's message names)."""
    specs: dict[str, tuple[str, str, Any, str]] = {}
    links = []
    for lk in cfg["links"]:
        a = lk.get("aqm")
        if a and a.get("name") == "python":
            key = f"python:{len(specs)}"
            make, label, name = _maker(a["python"], a["params"], a["field"])
            specs[key] = (label, name, make, "aqm.python")
            lk = {**lk, "aqm": {"name": key, "params": {}}}
        elif a and "queue" in a:  # fq with a Python AQM per flow queue: queue_aqm names it
            key = f"python:{len(specs)}"
            q = a["queue"]
            make, label, name = _maker(q["python"], q["params"], q["field"])
            specs[key] = (label, name, make, "aqm.queue.python")
            lk = {**lk, "aqm": {"name": a["name"], "params": {**a["params"], "queue_aqm": key}}}
        links.append(lk)
    return {**cfg, "links": links}, specs


class using_instance:  # noqa: N801 (a context manager used like a function)
    """While the ``with`` lasts, the scenario table ``{"python": spec}`` runs ``inst``."""

    def __init__(self, inst: Any) -> None:
        cls = type(inst)
        label = f"{cls.__module__}:{cls.__qualname__}"
        check_class(cls, label, "aqm")
        self.token = f"{label}#{next(_TOKENS)}"
        self.inst = inst
        self.table = {"python": {"instance": self.token, "label": label}}

    def __enter__(self) -> dict[str, Any]:
        _INSTANCES[self.token] = self.inst
        return self.table

    def __exit__(self, *exc: object) -> None:
        _INSTANCES.pop(self.token, None)
