"""The AQM algorithms compiled into aqmlab, with their parameters and defaults (from the Rust
registry, so this list is always what the simulator runs)."""

from __future__ import annotations

import json
from functools import cache

from aqmlab.errors import InputError

# typing only names types here, and `aqmlab list` pays for every module it loads (docs/code-map.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@cache
def catalog() -> list[dict[str, Any]]:
    """Every algorithm: name, summary, source and params (name, kind, default, help)."""
    from aqmlab import _core

    return list(_core.list_aqms())


def names() -> list[str]:
    """Registry names."""
    return [a["name"] for a in catalog()]


def get(name: str) -> dict[str, Any] | None:
    """The catalog entry of ``name``."""
    return next((a for a in catalog() if a["name"] == name), None)


def check(
    name: str,
    params: dict[str, Any],
    rate_bps: float,
    buffer: tuple[int | None, int | None],
    mean_pkt_bytes: int,
    field: str = "aqm",
) -> None:
    """Builds the algorithm once to validate its parameters against the link; raises
    :class:`InputError` naming ``field.param`` and what is allowed."""
    from aqmlab import _core

    try:
        _core.check_aqm(
            name, json.dumps(params), round(rate_bps), buffer[0], buffer[1], mean_pkt_bytes
        )
    except ValueError as e:
        msg = str(e)
        raise InputError(
            f"{field}.{msg}" if not msg.startswith("unknown AQM") else f"{field}.name: {msg}"
        ) from None


def format_default(p: dict[str, Any]) -> str:
    """A parameter's default as ``aqmlab list`` prints it (durations in ms or s)."""
    d = p["default"]
    if d is None:
        return "required"
    if isinstance(d, bool) or isinstance(d, str):
        return str(d).lower() if isinstance(d, bool) else d
    if p["kind"] == "duration":
        return f"{d * 1e3:g}ms" if d < 1 else f"{d:g}s"
    if p["kind"] == "rate":
        return f"{d / 1e6:g}Mbps"
    if p["kind"] == "size":
        return f"{d:g}B"
    return f"{d:g}"


def table(markdown: bool = False) -> str:
    """The catalog as text (``aqmlab list``) or Markdown (docs/algorithms.md)."""
    lines: list[str] = []
    for a in catalog():
        if markdown:
            lines += [f"### `{a['name']}`", "", f"{a['summary']}. Source: {a['source']}.", ""]
            if a["params"]:
                lines += ["| parameter | kind | default | meaning |", "| --- | --- | --- | --- |"]
                for p in a["params"]:
                    lines.append(
                        f"| `{p['name']}` | {p['kind']} | {format_default(p)} | {p['help']} |"
                    )
            else:
                lines.append("No parameters.")
            lines.append("")
        else:
            lines.append(f"{a['name']}: {a['summary']}")
            lines.append(f"    source: {a['source']}")
            for p in a["params"]:
                choices = f" one of {'/'.join(p['choices'])}" if "choices" in p else ""
                lines.append(
                    f"    {p['name']:<16} {p['kind']:<8} default {format_default(p):<10}{choices}"
                    f"  {p['help']}"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
