"""Tests of the ``theory`` CLI command through a parser built with ``register``."""

import argparse

import pytest

from aqmlab.cli.theory import register
from aqmlab.errors import InputError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def run():
    parser = argparse.ArgumentParser(prog="aqmlab")
    sub = parser.add_subparsers(dest="command")
    register(sub)

    def _run(*argv):
        args = parser.parse_args(["theory", *argv])
        return args.func(args)

    return _run


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (["dropfn", "linear", "--scale", "100", "--load", "0"], r"load: must be > 0 \(got 0"),
        (["dropfn", "linear", "--scale", "100", "--load", "-1"], "load: must be > 0"),
        (["dropfn", "--table", "0,0.5,1.5", "--load", "0.5"], r"table\[2\]: must be in \[0, 1\]"),
        (["dropfn", "--table", "0,-0.1", "--load", "0.5"], r"table\[1\]"),
        (["dropfn", "linear", "--scale", "100", "--buffer", "0"], "buffer: must be a whole number"),
        (["dropfn", "linear", "--scale", "100", "--buffer", "-3"], "buffer"),
        (["dropfn", "--table", "0", "--load", "1"], "unstable"),  # M/M/1 at rho = 1
        (["dropfn", "constant", "--scale", "0.1", "--load", "2"], "unstable"),
        (["dropfn", "sigmoid", "--scale", "3"], "family: must be one of"),
        (["dropfn", "linear"], "scale: required"),
        (["dropfn", "linear", "--target-mean", "5", "--load", "0.5"], "target_mean"),
        (["dropfn", "linear", "--scale", "9", "--plot", "out.txt"], "plot"),
        (["fluid", "--flows", "0", "--no-sim"], r"n_flows: must be > 0 \(got 0"),
        (["fluid", "--flows", "-10", "--no-sim"], "n_flows: must be > 0"),
        (["fluid", "--rtt", "0", "--no-sim"], "rtt: must be > 0"),
        (["fluid", "--rtt", "-0.1", "--no-sim"], "rtt: must be > 0"),
        (["fluid", "--capacity", "0", "--no-sim"], "capacity: must be > 0"),
        (["fluid", "--aqm", "codel", "--no-sim"], "aqm: must be one of"),
        (["fluid", "--aqm", "dropfn", "--table", "0,2", "--no-sim"], r"table\[1\]"),
        (["fluid", "--delay", "exact", "--no-sim"], "delay: must be one of"),
        (["fluid", "--duration", "0"], "duration: must be > 0"),
        (["routh", "1", "nan"], "finite"),
        (["routh", "0", "0"], "degree >= 1"),
    ],
)
def test_bad_input_raises_input_error(run, argv, msg):
    with pytest.raises(InputError, match=msg):
        run(*argv)


def test_theory_needs_a_subcommand():
    parser = argparse.ArgumentParser(prog="aqmlab")
    register(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        parser.parse_args(["theory"])


def test_dropfn_calibrated_with_plot(run, tmp_path, capsys):
    out = tmp_path / "d.png"
    assert run("dropfn", "step", "--target-mean", "50", "--load", "1", "--plot", str(out)) == 0
    text = capsys.readouterr().out
    assert "calibrated scale: 100 " in text  # M/M/1/K at rho = 1: mean K/2
    assert "mean number in system" in text and "burst ratio B" in text
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_dropfn_table_finite_buffer_and_all(run, tmp_path, capsys):
    out = tmp_path / "t.png"
    assert run("dropfn", "--table", "0,0,0.2,0.5,1", "--load", "2", "--buffer", "3",
               "--plot", str(out)) == 0  # fmt: skip
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert run("dropfn", "all", "--target-mean", "50", "--load", "1") == 0
    text = capsys.readouterr().out
    for name in ("step", "linear", "doubly-linear", "linear-log", "constant"):
        assert f"  {name} " in text


def test_fluid_example1_with_plot(run, tmp_path, capsys):
    out = tmp_path / "f.png"
    code = run(
        "fluid", "--aqm", "laq", "--gamma", "0.05", "--delay", "paper", "--r0", "propagation",
        "--duration", "5", "--plot", str(out),
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "s^3 + 67.75 s^2 + 296.875 s + 234.375" in text
    assert "verdict: stable" in text
    assert out.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("aqm", ["red", "pi", "rem", "dropfn"])
def test_fluid_other_laws(run, aqm, capsys):
    extra = ["--scale", "700"] if aqm == "dropfn" else []
    assert run("fluid", "--aqm", aqm, "--duration", "2", *extra) == 0
    assert "characteristic polynomial" in capsys.readouterr().out


def test_fluid_pi_design(run, capsys):
    argv = ["fluid", "--aqm", "pi", "--pi-design", "--omega-g", "0.5", "--no-sim"]
    assert run(*argv) == 0
    text = capsys.readouterr().out
    assert "PI design (Hollot et al. 2002)" in text and "verdict: stable" in text


def test_routh(run, capsys):
    assert run("routh", "1", "2", "24", "48", "-25", "-50") == 0
    text = capsys.readouterr().out
    assert "verdict: unstable" in text
    assert "1 in the right half-plane, 2 on the imaginary axis" in text
    assert run("routh", "1,10,31,1030") == 0
    assert "2 in the right half-plane" in capsys.readouterr().out
