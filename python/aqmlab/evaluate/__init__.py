"""``aqmlab evaluate``: an AQM judged by RFC 7928 ("Characterization Guidelines for Active Queue
Management") in one command.

    aqmlab evaluate codel                         # against fq_codel, pie and red
    aqmlab evaluate codel pie --baselines red --quick --out runs/card

In Python: ``aqmlab.evaluate.evaluate(["codel"], quick=True)``. The scenarios are in an editable
TOML file (shipped: ``aqmlab/data/rfc7928.toml``; ``--params FILE`` for your own). Modules:
:mod:`.params` (the scenario file), :mod:`.engine` (plan, feature probes, the sweep),
:mod:`.analyse` (the metrics and the comparison), :mod:`.card` (Markdown, HTML, CSV, plots).
See docs/evaluate.md.
"""

from __future__ import annotations

from aqmlab.evaluate.engine import DEFAULT_BASELINES, evaluate

__all__ = ["DEFAULT_BASELINES", "evaluate"]
