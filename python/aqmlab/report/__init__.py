"""The report layer: results turned into figures and pages, and scenarios compared side by side.

- :mod:`~aqmlab.report.plots`: the figures of a run and of a comparison (matplotlib);
- :mod:`~aqmlab.report.html`: self-contained HTML reports;
- :mod:`~aqmlab.report.compare`: one scenario run under several AQMs, and drawn;
- :mod:`~aqmlab.report.redraw`: a finished run or comparison directory redrawn (``aqmlab report``).

See docs/code-map.md.
"""
