"""Runs a set of scenarios with two aqmlab installations and diffs their summary.json byte for
byte: a refactor of the TCP code (crates/sim/src/tcp) must leave every result unchanged.

Usage: python scripts/tcp_equivalence.py OLD NEW [WORKDIR]

OLD and NEW are `aqmlab` executables, or directories of results stored by an earlier run
(WORKDIR/old or WORKDIR/new: DIR/<case>/summary.json).

The set: the repository's scenarios/*.toml (default, examples, seed001), and short dumbbells
covering each TCP variant with and without delayed ACKs, ECN, the handshake, limited transmit,
timestamps, web sessions, CBR, on/off and Poisson sources, a latency probe, and ModRED's ACK
throttle.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

BASE = """
name = "{name}"
duration = "{duration}"
warmup = "2s"
seed = 7

[topology]
type = "dumbbell"
rate = "20Mbps"
delay = "5ms"
buffer = 100
access_rate = "1Gbps"
access_delay = ["1ms", "8ms", "20ms"]

[aqm]
{aqm}

[tcp]
{tcp}

[[flows]]
count = 8
start_spread = "1s"
{extra}
"""

RED = 'name = "red"\nmin_th = 20\nmax_th = 60\nmax_p = 0.1\nw_q = 0.002'
RED_ECN = RED + "\necn = true"


def cases():
    """(name, scenario text) pairs."""
    out = []
    for v in ["reno", "newreno", "sack", "cubic"]:
        for opts, tag in [
            ("", "plain"),
            ("delack = true", "delack"),
            ("ecn = true", "ecn"),
            ("handshake = true\ntimestamps = true", "hs-ts"),
            ("limited_transmit = true", "lt"),
        ]:
            aqm = RED_ECN if tag == "ecn" else RED
            tcp = f'variant = "{v}"\n{opts}'
            out.append(
                (
                    f"{v}-{tag}",
                    BASE.format(name=f"{v}-{tag}", duration="12s", aqm=aqm, tcp=tcp, extra=""),
                )
            )
    web = """
[[flows]]
name = "web"
type = "web"
arrival_rate = 20
objects = 3
think_time = "100ms"
"""
    for v in ["newreno", "cubic"]:
        out.append(
            (
                f"web-{v}",
                BASE.format(
                    name=f"web-{v}",
                    duration="12s",
                    aqm=RED,
                    tcp=f'variant = "{v}"\nhandshake = true',
                    extra=web,
                ),
            )
        )
    udp = """
[[flows]]
name = "cbr"
type = "cbr"
rate = "2Mbps"
packet_size = "500B"

[[flows]]
name = "onoff"
type = "onoff"
rate = "3Mbps"
on_time = "200ms"
off_time = "300ms"
packet_size = "1000B"

[[flows]]
name = "poisson"
type = "poisson"
rate = "1Mbps"
packet_size = "800B"

[[flows]]
name = "ping"
type = "probe"
"""
    out.append(
        (
            "open-loop",
            BASE.format(
                name="open-loop",
                duration="12s",
                aqm='name = "codel"',
                tcp='variant = "sack"',
                extra=udp,
            ),
        )
    )
    out.append(
        (
            "fq-codel",
            BASE.format(
                name="fq-codel",
                duration="12s",
                aqm='name = "fq_codel"',
                tcp='variant = "cubic"\necn = true',
                extra=udp,
            ),
        )
    )
    repo = pathlib.Path(__file__).resolve().parent.parent
    mod = (repo / "scenarios/testbed/modred-4-cubic.toml").read_text()
    out.append(("modred", mod))
    for sub in ["", "examples", "seed001"]:
        for p in sorted((repo / "scenarios" / sub).glob("*.toml")):
            out.append((p.stem, p.read_text()))
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("old", help="`aqmlab` executable, or a results folder of an earlier run")
    ap.add_argument("new", help="the same, for the build to compare")
    ap.add_argument(
        "workdir", nargs="?", help="where scenarios and results go (default: a temp dir)"
    )
    a = ap.parse_args()
    old, new = a.old, a.new
    work = pathlib.Path(a.workdir or tempfile.mkdtemp(prefix="tcpeq-"))
    bad = []
    for name, text in cases():
        scen = work / f"{name}.toml"
        scen.parent.mkdir(parents=True, exist_ok=True)
        scen.write_text(text)
        res = {}
        for tag, exe in [("old", old), ("new", new)]:
            if pathlib.Path(exe).is_dir():
                f = pathlib.Path(exe) / name / "summary.json"
                res[tag] = f.read_bytes() if f.exists() else "missing"
                continue
            d = work / tag / name
            r = subprocess.run(
                [exe, "run", str(scen), "--quiet", "--out", str(d)], capture_output=True, text=True
            )
            if r.returncode != 0:
                res[tag] = f"exit {r.returncode}: {r.stderr.strip()[-300:]}"
            else:
                res[tag] = (d / "summary.json").read_bytes()
        same = res["old"] == res["new"]
        print(
            f"{'same' if same else 'DIFF'} {name}"
            + ("" if isinstance(res["old"], bytes) else f" ({res['old']})")
        )
        if not same:
            bad.append(name)
    print(f"{len(bad)} differ" + (": " + ", ".join(bad) if bad else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
