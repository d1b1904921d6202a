"""The scenario layer: what a run simulates, from the user's TOML to the network the simulator runs.

- :mod:`~aqmlab.scenario.schema`: the scenario file's models (validated, one line per error) and
  :func:`~aqmlab.scenario.schema.build_config`, which writes the simulator's network;
- :mod:`~aqmlab.scenario.units`: strings with units (``"10Mbps"``, ``"20ms"``) to numbers;
- :mod:`~aqmlab.scenario.limits`: what a run may ask for, checked before anything is built;
- :mod:`~aqmlab.scenario.topology`, :mod:`~aqmlab.scenario.traffic`,
  :mod:`~aqmlab.scenario.probe`: the graph, the flows routed on it, latency probes;
- :mod:`~aqmlab.scenario.algorithms`, :mod:`~aqmlab.scenario.ns2_defaults`: the AQMs the
  extension offers and ns-2's parameter defaults.

Nothing here runs a simulation or draws; see docs/code-map.md.
"""
