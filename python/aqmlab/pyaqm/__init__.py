"""Design an AQM in Python (issue 23): write a class with the Rust ``Aqm`` trait's hooks and run
it in the simulator, in sweeps and comparisons, as a built-in. See docs/design-an-aqm.md.

:mod:`aqmlab.pyaqm.api` is what an AQM is written against; :mod:`aqmlab.pyaqm.load` brings one
into a run.
"""

from aqmlab.pyaqm.api import ADMIT, DROP, MARK, THROTTLE, Aqm, Link, Param, Verdict

__all__ = ["ADMIT", "DROP", "MARK", "THROTTLE", "Aqm", "Link", "Param", "Verdict"]
