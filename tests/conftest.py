"""Shared helpers for the test suite."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT, as Ctrl-C would.

    A shell that starts a job in the background (``make test &``, a CI runner's ``nohup``) sets
    SIGINT to "ignore", and children inherit that: Python then installs no KeyboardInterrupt
    handler and the child would rightly ignore the test's SIGINT. The child is given SIGINT's
    default disposition back, as a command started from an interactive terminal has it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


SMALL = """
name = "small"
duration = "6s"
warmup = "2s"
seed = 4

[topology]
type = "dumbbell"
rate = "20Mbps"
delay = "5ms"
buffer = 100
access_delay = ["2ms", "8ms"]

[aqm]
name = "red"
min_th = 20
max_th = 60

[[flows]]
count = 8
start_spread = "500ms"
"""


def aqmlab_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the installed ``aqmlab`` command as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
