"""Ctrl-C (issue 13): a run stops within about a second of SIGINT, exits with 130, says so, and
leaves nothing that looks like a complete result. The signal is real: the run is a child process
in its own session (a process started with ``&`` by a non-interactive shell would ignore SIGINT),
interrupted while the simulator is running."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from conftest import sigint_as_from_a_terminal

# A run of hours: the interrupt always lands while it simulates. The simulated time per wall
# second differs by orders of magnitude between these two, so a check made every N simulated
# seconds cannot serve both; the simulator must check by wall time.
SLOW = """
name = "slow"
duration = "{duration}"
warmup = "1s"
[topology]
rate = "{rate}"
[[flows]]
count = {count}
"""
CASES = {
    "few-events-per-sim-second": {"duration": "100000s", "rate": "2Mbps", "count": 2},
    "many-events-per-sim-second": {"duration": "100000s", "rate": "1Gbps", "count": 50},
}

# Wall-time allowance for the interrupted process to exit: the simulator checks for signals
# every ~20 ms of wall time; the rest is Python unwinding. The machine is shared, hence the slack
# over the one second promised.
STOP_WITHIN_S = 1.0
SLACK_S = 1.0


@pytest.mark.parametrize(
    ("case", "after_s"),
    [
        ("many-events-per-sim-second", 1.0),  # while importing or building
        ("few-events-per-sim-second", 5.0),  # simulating
        ("many-events-per-sim-second", 5.0),
    ],
)
def test_sigint_stops_a_run_within_a_second_with_exit_130(tmp_path, case, after_s):
    sc = tmp_path / "slow.toml"
    sc.write_text(SLOW.format(**CASES[case]))
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        time.sleep(after_s)
        assert p.poll() is None, p.communicate()
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, (p.returncode, stderr)
    assert took < STOP_WITHIN_S + SLACK_S, f"stopped {took:.2f} s after SIGINT"
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""  # no summary table
    # nothing complete-looking: no output directory, no summary.json anywhere under tmp_path
    assert not out.exists()
    assert not list(tmp_path.rglob("summary.json"))
