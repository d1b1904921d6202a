"""aqmlab: design, test and compare Active Queue Management algorithms.

The main entry points::

    import aqmlab
    res = aqmlab.run("scenarios/default.toml")     # or a dict, or aqmlab.Scenario(...)
    res.bottleneck["utilisation"], res.queue, res.flows
    res = aqmlab.load("runs/demo")
"""

from aqmlab.errors import InputError

__all__ = ["InputError", "Scenario", "load", "load_scenario", "run"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy, so that `import aqmlab.theory` needs neither the Rust extension nor pandas.
    if name in ("run", "load"):
        from aqmlab import runner

        return getattr(runner, name)
    if name == "Scenario":
        from aqmlab.scenario import Scenario

        return Scenario
    if name == "load_scenario":
        from aqmlab.scenario import load

        return load
    raise AttributeError(name)
