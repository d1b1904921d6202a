"""The running layer: a scenario run and its results measured and kept.

- :mod:`~aqmlab.running.runner`: runs the Rust simulator, writes and reads run directories
  (:class:`~aqmlab.running.runner.Result`);
- :mod:`~aqmlab.running.metrics`: the metrics of docs/metrics.md, pure functions;
- :mod:`~aqmlab.running.buildinfo`: the identity of the code a run was made with.

It never draws (that is :mod:`aqmlab.report`); see docs/code-map.md.
"""
