"""aqmlab: design, test and compare Active Queue Management algorithms.

The main entry points::

    import aqmlab
    res = aqmlab.run("scenarios/default.toml")     # or a dict, or aqmlab.Scenario(...)
    res.bottleneck["utilisation"], res.queue, res.flows
    res = aqmlab.load("runs/demo")
    aqmlab.sweep("study.toml", out="runs/study")   # many runs; see docs/sweeps.md
    df = aqmlab.load_sweep("runs/study")

Importing ``aqmlab`` is cheap: every module (the Rust extension, pandas, the theory's scipy) is
loaded on first use.
"""

from __future__ import annotations

from aqmlab._version import __version__ as __version__
from aqmlab.errors import InputError

# Neither typing nor pathlib at import: both only name types here, and `aqmlab --help` pays for
# every module the package's face loads (docs/benchmarks.md, "Start-up").
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from aqmlab.running.runner import Result
    from aqmlab.scenario.schema import Scenario

__all__ = [
    "ADMIT",
    "DROP",
    "MARK",
    "THROTTLE",
    "Aqm",
    "InputError",
    "Param",
    "Scenario",
    "Verdict",
    "load",
    "load_scenario",
    "load_sweep",
    "run",
    "sweep",
]
_PYAQM = ("ADMIT", "DROP", "MARK", "THROTTLE", "Aqm", "Param", "Verdict")


def run(
    sc: Scenario | str | Path | dict[str, Any],
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    plot: bool = False,
    aqm: Any = None,
) -> Result:
    """Runs a scenario (an object, a dict or a TOML path) and returns its Result.

    ``aqm``: an AQM written in Python (an instance of a :class:`aqmlab.Aqm` subclass, or of any
    class with its hooks) in place of the scenario's ``[aqm]``; see docs/design-an-aqm.md.

    With ``out``, writes the run directory there; with ``plot`` as well, its ``queue.png``,
    ``goodput.png`` and ``report.html`` (they can also be drawn later: ``aqmlab report DIR``).
    """
    from aqmlab.running import runner

    extra = None
    if plot:
        from aqmlab.report import html as report

        extra = report.run_outputs
    return runner.run(sc, seed=seed, out=out, progress=progress, extra_outputs=extra, aqm=aqm)


def __dir__() -> list[str]:
    """The public API (``dir(aqmlab)``), whichever submodules happen to be loaded."""
    return sorted([*__all__, "__version__"])


def __getattr__(name: str) -> Any:
    # Lazy, so that `import aqmlab.theory` needs neither the Rust extension nor pandas.
    if name == "load":
        from aqmlab.running import runner

        return runner.load
    if name in _PYAQM:  # the Python AQM API (docs/design-an-aqm.md)
        from aqmlab.pyaqm import api

        return getattr(api, name)
    if name == "Scenario":
        from aqmlab.scenario.schema import Scenario

        return Scenario
    if name == "load_scenario":
        from aqmlab.scenario.schema import load

        return load
    if name in ("sweep", "load_sweep"):
        # aqmlab.sweep is a package whose module object is callable: aqmlab.sweep(...) runs one.
        import aqmlab.sweep as _sweep_pkg

        return _sweep_pkg if name == "sweep" else _sweep_pkg.load_sweep
    raise AttributeError(name)
