"""The tutorial notebook (examples/design-an-aqm.ipynb, issue 23 item 6) runs from top to bottom
in a fresh kernel, as a newcomer would run it: executed here with nbclient, so it never rots. It is
committed with its outputs (what docs/design-an-aqm.md shows); a fresh execution must give the
same tables (the runs are deterministic for their seeds)."""

from __future__ import annotations

import copy

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "examples" / "design-an-aqm.ipynb"


def _html(nb) -> list[str]:
    return [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]


def test_the_tutorial_notebook_runs_and_gives_the_outputs_it_shows():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    stored = nbformat.read(NOTEBOOK, as_version=4)
    nb = copy.deepcopy(stored)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outs if o.get("output_type") == "error"]
    html = _html(nb)
    # The run shows itself as HTML, the plots as images, the sweep and comparison as tables.
    assert any("aqmlab run" in h for h in html)
    assert sum("image/png" in o.get("data", {}) for o in outs) >= 3
    assert any("delay_ramp" in h and "fq_codel" in h and "pie" in h for h in html)
    assert any("delay_ramp.rs" in o.get("text", "") for o in outs)
    assert html == _html(stored), "the committed outputs are not the notebook's: re-execute it"
