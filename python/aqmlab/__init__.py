"""aqmlab: design, test and compare Active Queue Management algorithms."""

from aqmlab.errors import InputError

__all__ = ["InputError"]
__version__ = "0.1.0"
