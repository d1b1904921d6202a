"""The ``aqmlab`` command: :mod:`~aqmlab.cli.main` parses the command line and dispatches; each
subcommand's module is imported only when that subcommand runs, so ``aqmlab --help`` and
``aqmlab list`` start fast. :mod:`~aqmlab.cli.summary` prints a run's tables;
:mod:`~aqmlab.cli.testbed`, :mod:`~aqmlab.cli.reproduce` and :mod:`~aqmlab.cli.theory` add their
subcommands. See docs/code-map.md.
"""
