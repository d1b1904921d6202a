"""Analytic models of aqmlab (see docs/theory.md).

- :mod:`aqmlab.theory.families`: the dropping-function families of the ``dropfn`` AQM.
- :mod:`aqmlab.theory.dropfn`: the M/M/1 and M/M/1/K queue with a dropping function (seed 002,
  Theorem 1): stationary distribution, queue, loss, burst ratio, stability, calibration.
- :mod:`aqmlab.theory.fluid`: the TCP/AQM fluid model (Misra, Gong & Towsley; seed 001):
  integration, equilibrium, linearisation, characteristic polynomial, margins, PI design.
- :mod:`aqmlab.theory.routh`: the Routh-Hurwitz table.
- :mod:`aqmlab.cli.theory`: the ``aqmlab theory`` command.
"""

from aqmlab.theory.dropfn import (
    DropFunction,
    QueueResult,
    Stability,
    analyze,
    as_dropfunction,
    calibrate,
    stability,
    stationary_distribution,
)
from aqmlab.theory.families import FAMILIES, Family, get_family, table, tabulate, validate_table
from aqmlab.theory.fluid import (
    DropFn,
    Equilibrium,
    FluidTrace,
    Laq,
    Linearization,
    Margins,
    Network,
    Pi,
    PiDesign,
    Red,
    Rem,
    characteristic_polynomial,
    controller_tf,
    delay_approximation,
    equilibrium,
    linearize,
    margins,
    pi_design,
    simulate,
)
from aqmlab.theory.routh import RouthResult, parse_coefficients, routh

__all__ = [
    "FAMILIES",
    "DropFn",
    "DropFunction",
    "Equilibrium",
    "Family",
    "FluidTrace",
    "Laq",
    "Linearization",
    "Margins",
    "Network",
    "Pi",
    "PiDesign",
    "QueueResult",
    "Red",
    "Rem",
    "RouthResult",
    "Stability",
    "analyze",
    "as_dropfunction",
    "calibrate",
    "characteristic_polynomial",
    "controller_tf",
    "delay_approximation",
    "equilibrium",
    "get_family",
    "linearize",
    "margins",
    "parse_coefficients",
    "pi_design",
    "routh",
    "simulate",
    "stability",
    "stationary_distribution",
    "table",
    "tabulate",
    "validate_table",
]
