"""Scenario fuzzing at scale (issue 19 item 5): ``--cases`` generated bad scenarios
(:mod:`aqmlab.running.fuzz`: wrong types, huge, negative, NaN/inf, unit typos, unknown keys, deep
nesting, long strings, unicode, binary bytes, duplicate keys, enormous counts, blank keys,
1 ns update periods, missing sections) through ``aqmlab.run`` in a worker process, each with a
``--timeout``, and every ``--cli-every``-th through ``aqmlab run FILE`` as a subprocess.

    .venv/bin/python benches/fuzz_scenarios.py [--cases 10000] [--seed 19] [--timeout 10]

Prints the outcome counts as a Markdown table for docs/benchmarks.md ("Scenario fuzzing") and
the first findings (anything but an accepted scenario or a one-line refusal) in full. Exit code
1 when there is any finding.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aqmlab.running import fuzz


def _cli(case: fuzz.Case, d: Path, timeout_s: float) -> tuple[str, str]:
    """The case through ``aqmlab run``: accepted (exit 0), clean (exit 2 with one ``error:``
    line), or a finding."""
    text = case.toml if case.toml is not None else fuzz.to_toml(case.data or {})
    if text is None:
        return "skipped", ""
    p = d / f"c{case.index}.toml"
    p.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        r = subprocess.run(
            [sys.executable, "-m", "aqmlab", "run", str(p), "--out", str(d / "o"), "--quiet"],
            capture_output=True,
            text=True,
            timeout=timeout_s + 10,
            cwd=d,
        )
    except subprocess.TimeoutExpired:
        return "hang", "over the time limit"
    lines = r.stderr.strip().splitlines()
    if "panicked" in r.stderr:
        return "panic", r.stderr[-300:]
    if r.returncode < 0:
        return "crash", f"signal {-r.returncode}"
    if "Traceback" in r.stderr or r.returncode not in (0, 2):
        return "traceback", f"exit {r.returncode}: {r.stderr[-300:]}"
    if r.returncode == 2 and not (len(lines) == 1 and lines[0].startswith("error: ")):
        return "long", r.stderr[:300]
    return ("accepted" if r.returncode == 0 else "clean"), lines[0] if lines else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    ap.add_argument("--cli-every", type=int, default=50, help="every N-th case also via the CLI")
    a = ap.parse_args()

    cases = fuzz.generate(a.cases, seed=a.seed)
    api: collections.Counter = collections.Counter()
    cli: collections.Counter = collections.Counter()
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    findings: list[str] = []
    slowest = (0.0, "")
    t0 = time.perf_counter()
    with fuzz.Harness(timeout_s=a.timeout) as h, tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            c0 = time.perf_counter()
            outcome, detail = h.run(case)
            dt = time.perf_counter() - c0
            slowest = max(slowest, (dt, case.describe()[:120]))
            api[outcome] += 1
            kinds[case.kind][outcome] += 1
            if outcome not in ("accepted", "clean"):
                findings.append(f"api {outcome}: {detail}\n    {case.describe()}")
            if case.index % a.cli_every == 0:
                outcome, detail = _cli(case, Path(tmp), a.timeout)
                cli[outcome] += 1
                if outcome not in ("accepted", "clean", "skipped"):
                    findings.append(f"cli {outcome}: {detail}\n    {case.describe()}")
    wall = time.perf_counter() - t0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    cols = list(fuzz.OUTCOMES)
    print(f"{a.cases} cases (seed {a.seed}, {a.timeout:g} s limit each), {wall:.0f} s wall, "
          f"load {load:.1f}; slowest case {slowest[0]:.2f} s")  # fmt: skip
    print()
    print("| through | cases | " + " | ".join(cols) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in cols) + " |")
    n_cli = sum(v for k, v in cli.items() if k != "skipped")
    for name, c, n in (("`aqmlab.run`", api, a.cases), ("`aqmlab run FILE`", cli, n_cli)):
        print(f"| {name} | {n} | " + " | ".join(str(c.get(k, 0)) for k in cols) + " |")
    print()
    print("| kind | cases | accepted | clean |")
    print("| --- | ---: | ---: | ---: |")
    for k in fuzz.KINDS:
        c = kinds[k]
        print(f"| {k} | {sum(c.values())} | {c['accepted']} | {c['clean']} |")
    for f in findings[:20]:
        print(f, file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
