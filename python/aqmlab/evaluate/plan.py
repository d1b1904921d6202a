"""What ``aqmlab evaluate`` runs: each scenario under each AQM (:class:`Cell`) and the whole
plan (:class:`Plan`), made by :func:`aqmlab.evaluate.engine.plan` and read by the analysis and
the card."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aqmlab.evaluate import params as prm


@dataclass
class Cell:
    """One scenario under one AQM: its runs' keys, or why it did not run."""

    scenario: prm.Scenario
    aqm: str
    role: str  # "test" or "baseline"
    scenario_dict: dict[str, Any] | None = None
    missing: str | None = None  # a feature this build lacks
    not_applicable: str | None = None
    keys: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """Every cell and the sweep that runs them."""

    params: prm.Params
    aqms: list[str]
    baselines: list[str]
    quick: bool
    seeds: list[int]
    cells: list[Cell]

    @property
    def scenarios(self) -> list[prm.Scenario]:
        """The scenarios this plan runs: all of them, or under --quick those marked ``quick``
        (a sweep may keep only some of its points)."""
        return [s for s in self.params.scenarios if s.quick or not self.quick]
