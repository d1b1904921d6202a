"""aqmlab's version (pyproject.toml's), alone so that reading it loads nothing else."""

__version__ = "0.1.0"
