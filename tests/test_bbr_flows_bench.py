"""benches/bbr_flows.py: its per-flow verdicts and its delay-shift test on hand-made runs, and
its refusals of bad input.

The verdicts are checked against ratios worked by hand: a flow whose simulator goodput is 2 %
above a kernel goodput that varies by 1 % is within 10 % ("yes"); one 30 % above is outside
("no"); one whose simulator goodput swings between 2 and 18 Mb/s over 20 seeds (mean 10, a
standard error of 1.8) cannot be told ("undecided").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benches" / "bbr_flows.py"
RTTS = [8, 16, 24, 32, 40, 48, 56, 64, 72, 80]


def _bench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _sim_run(d: Path, gp: list[float], **extra) -> None:
    """A simulator run's summary.json with these goodputs (Mb/s); ``extra``: ``seed``, ``loss``
    (the bottleneck's loss ratio), ``first`` (the flow that starts first), ``rtx`` (every
    flow's retransmissions per 100 segments sent), ``rwnd`` (the time the first flow and the
    others were held back by the receive window)."""
    d.mkdir(parents=True)
    flows = [
        {"base_rtt_s": (r + 0.148) / 1e3, "goodput_bps": g * 1e6}
        for r, g in zip(RTTS, gp, strict=True)
    ]
    if "first" in extra:
        for i, f in enumerate(flows):
            f["start_s"] = 0.1 if i == extra["first"] else 0.5 + i / 100
    if "rtx" in extra:
        for f in flows:
            f["retransmits"], f["segments_sent"] = extra["rtx"], 100
    if "rwnd" in extra:  # the first flow to start held back rwnd[0] s, the others rwnd[1]
        for i, f in enumerate(flows):
            f["rwnd_limited_s"] = extra["rwnd"][0 if i == extra["first"] else 1]
    links = [{"name": "bottleneck", "queue_mean_pkts": 100.0, "loss_ratio": extra.get("loss")}]
    summary = {"flows": flows, "links": links, "run": {"seed": extra.get("seed")}}
    (d / "summary.json").write_text(json.dumps(summary))


def _hand_made_runs(tmp_path: Path) -> Path:
    """The verdicts' hand-worked runs (below): writes the simulator's under runs/ and the
    kernel's digest; returns the digest."""
    # Kernel: every flow at 10 Mb/s, 9.9 and 10.1 in turn (mean 10.0).
    kernel = [
        {
            "name": f"dt-k-{i:02d}",
            "gp": [9.9 if i % 2 else 10.1] * 10,
            "rtt": RTTS,
            "queue": 100.0,
            "load": 0.1,
        }
        for i in range(1, 21)
    ]
    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": kernel, "codel": []}}))
    # Simulator, 20 seeds: flow 0 at 10.2 (ratio 1.02), flow 1 at 13 (1.30), flow 2 at 2 or 18
    # (mean 10, ratio interval about 0.65-1.35), flow 4 at 7.4 or 12.6 (mean 10 over the 21
    # seeds with seed 100's 10; standard deviation 2.6 sqrt(20/21) = 2.54, so the ratio's
    # standard error is 2.54 / sqrt(21) / 10 = 0.0554: 1.96 x 0.0554 = 0.109 > 0.1, undecided
    # on the 95 % interval, but 1.645 x 0.0554 = 0.091 < 0.1, within by the two one-sided
    # tests at 5 %), the rest at 10.
    for s in range(1, 21):
        gp = [10.2, 13.0, 2.0 if s % 2 else 18.0, 10.0, 7.4 if s % 2 else 12.6] + [10.0] * 5
        _sim_run(tmp_path / "runs" / f"dt-x-s{s:02d}", gp)
    # Seed 100 and above are read too (three digits).
    _sim_run(tmp_path / "runs" / "dt-x-s100", [10.2, 13.0, 10.0] + [10.0] * 7)
    # A run with a failed flow is left out, and said so.
    _sim_run(tmp_path / "runs" / "dt-x-s101", [0.0] * 10)
    bad = tmp_path / "runs" / "dt-x-s101" / "summary.json"
    s = json.loads(bad.read_text())
    s["flows"][3]["error"] = "g0.3: No route to host (os error 113)"
    bad.write_text(json.dumps(s))
    return digest


def test_table_verdicts_on_hand_made_runs(tmp_path: Path) -> None:
    digest = _hand_made_runs(tmp_path)
    r = _bench(
        "table",
        "--out",
        "runs",
        "--label",
        "x",
        "--kernel-digest",
        str(digest),
        "--boot",
        "2000",
        "--plot-ratio",
        "ratio.png",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "simulator 21 seeds" in r.stdout
    assert (tmp_path / "ratio.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "dt-x-s101: left out, a flow failed: g0.3: No route to host (os error 113)\n" in r.stderr
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
        for line in r.stdout.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    }
    assert rows["8"][4] == "yes" and rows["8"][3].startswith("1.02")
    assert rows["16"][4] == "no" and rows["16"][3].startswith("1.30")
    assert rows["24"][4] == "undecided"
    assert rows["32"][4] == "yes"
    # Columns: RTT, kernel, sim, ratio (95 %), verdict, 90 % interval, TOST verdict.
    assert [rows[r][6] for r in ("8", "16", "24", "32")] == ["yes", "no", "undecided", "yes"]
    assert rows["40"][4] == "undecided" and rows["40"][6] == "yes"
    # An exact simulator with these runs (by hand): flows 0, 1, 3 and 5-9 have ratio standard
    # errors under 0.003 (sure to be shown), flow 2's 0.17 (never), flow 4's 0.0554: 0.1 /
    # 0.0554 = 1.805 is below 1.96 (never on the 95 % interval) and 0.160 above 1.645: 2 x
    # Phi(0.160) - 1 = 0.127 by the two one-sided tests. So 8.0 and 8.1 flows of 10.
    assert "shown within 10 % for 8.0 (95 % interval) and 8.1 (TOST 5 %) of these 10" in r.stdout


def test_table_second_look_pools_digests_and_widens_intervals(tmp_path: Path) -> None:
    """The second look of docs/testbed.md: two digests' runs together (``--kernel-count``
    applied to each) and the intervals widened for two looks. The hand-made runs above split
    into two digests of ten give the same 20 kernel runs; flow 4's ratio has standard error
    0.0554 (above), so for two looks (Bonferroni) 2.241 x 0.0554 = 0.124 and 1.960 x 0.0554 =
    0.109 both exceed 0.1: undecided on the 97.5 % interval and by the TOST at 2.5 % alike,
    where one look showed it within by the TOST. An exact simulator: flow 4 is never shown
    (0.1 / 0.0554 = 1.805 < 1.960), so 8.0 flows of 10 by both."""
    digest = _hand_made_runs(tmp_path)
    runs = json.loads(digest.read_text())["runs"]["dt"]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    # CoDel's runs too (no simulator runs: no table), as --kernel-count asks of every AQM.
    codel = [dict(r, name=r["name"].replace("dt-", "codel-")) for r in runs]
    a.write_text(json.dumps({"runs": {"dt": runs[:10] + runs[15:], "codel": codel[:10]}}))
    b.write_text(json.dumps({"runs": {"dt": runs[10:15], "codel": codel[10:15]}}))
    args = ("table", "--out", "runs", "--label", "x", "--boot", "2000")
    one = _bench(*args, "--kernel-digest", str(digest), cwd=tmp_path)
    two = _bench(
        *args,
        *("--kernel-digest", str(a), "--kernel-digest", str(b), "--kernel-count", "5"),
        *("--looks", "2", "--plot-ratio", "r.png"),
        cwd=tmp_path,
    )
    assert two.returncode == 0, two.stderr
    # a: its first five by number (runs 1-5), b: all five of its (11-15).
    assert "FIFO: kernel 10 runs" in two.stdout
    pooled = _bench(
        *args,
        *("--kernel-digest", str(a), "--kernel-digest", str(b), "--kernel-count", "5"),
        cwd=tmp_path,
    )
    assert "FIFO: kernel 10 runs" in pooled.stdout
    full = _bench(
        *args, "--kernel-digest", str(a), "--kernel-digest", str(b), "--looks", "2", cwd=tmp_path
    )
    assert "FIFO: kernel 20 runs" in full.stdout
    assert "| sim / kernel (97.5% CI) | within 10%? | 95% CI | TOST 2.5% |" in full.stdout

    def rows(out: str) -> dict[str, list[str]]:
        return {
            line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in out.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()
        }

    r1, r2 = rows(one.stdout), rows(full.stdout)
    assert r1["40"][4] == "undecided" and r1["40"][6] == "yes"
    assert r2["40"][4] == "undecided" and r2["40"][6] == "undecided"
    # The same bootstrap draws at wider levels: every interval holds the one-look interval.
    for rtt in r1:
        lo1, hi1 = map(float, r1[rtt][3].split("(")[1].rstrip(")").split("-"))
        lo2, hi2 = map(float, r2[rtt][3].split("(")[1].rstrip(")").split("-"))
        assert lo2 <= lo1 and hi1 <= hi2
        assert r1[rtt][0:3] == r2[rtt][0:3]  # the same runs, the same means
    assert "for 8.0 (97.5 % interval) and 8.0 (TOST 2.5 %) of these 10" in full.stdout
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Fewer simulator seeds than --sim-count: refused before any table (the hand-made runs have
    # 21 complete seeds, seed 101's failed run left out).
    few = _bench(*args, "--kernel-digest", str(digest), "--sim-count", "22", cwd=tmp_path)
    assert few.returncode == 2 and few.stdout == ""
    assert few.stderr.endswith("--sim-count: 22 seeds asked for, the simulator's dt has 21\n")
    # FIFO has its 21; CoDel, with none, is refused too: every AQM is held to the count.
    codel = _bench(*args, "--kernel-digest", str(digest), "--sim-count", "21", cwd=tmp_path)
    assert codel.returncode == 2 and codel.stdout == ""
    assert codel.stderr.endswith("--sim-count: 21 seeds asked for, the simulator's codel has 0\n")
    # A run in both digests is refused: one line, exit 2.
    dup = _bench(*args, "--kernel-digest", str(digest), "--kernel-digest", str(a), cwd=tmp_path)
    assert dup.returncode == 2 and dup.stdout == ""
    assert dup.stderr == "--kernel-digest: run dt-k-01 is in two of the digests\n"


def test_count_says_how_far_a_sample_has_come_without_its_figures(tmp_path: Path) -> None:
    """``count``: complete runs, failed runs with their reason, runs with no summary, the load
    averages, how many more ``--kernel-count`` needs, and no goodput: three FIFO runs (one
    complete at load 0.4 -> 1.2, one failed, one stopped part-way) and two complete CoDel runs
    (load 3.0 -> 0.1 and 0.2 -> 0.3)."""
    runs = tmp_path / "runs"
    for name, load in (("dt-v-5001", (0.4, 1.2)), ("codel-v-5001", (3.0, 0.1))):
        _sim_run(runs / name, [12.345] * 10)
        (runs / name / "load.json").write_text(
            json.dumps({"before": [load[0], 0, 0], "after": [load[1], 0, 0]})
        )
    _sim_run(runs / "codel-v-5002", [12.345] * 10)
    (runs / "codel-v-5002" / "load.json").write_text(
        json.dumps({"before": [0.2, 0, 0], "after": [0.3, 0, 0]})
    )
    _sim_run(runs / "dt-v-5002", [12.345] * 10)
    s = json.loads((runs / "dt-v-5002" / "summary.json").read_text())
    s["flows"][9]["error"] = "g0.9: No route to host (os error 113)"
    (runs / "dt-v-5002" / "summary.json").write_text(json.dumps(s))
    (runs / "dt-v-5003").mkdir()
    r = _bench("count", "--out", "runs", "--kernel-label", "v", "--kernel-count", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "dt: 1 runs, load average 0.4-1.2 before and after (0 of 2 readings above 2.5); "
        "2 more for --kernel-count 3",
        "  failed, left out: dt-v-5002 (g0.9: No route to host (os error 113))",
        "  no summary (stopped part-way): dt-v-5003",
        "codel: 2 runs, load average 0.1-3.0 before and after (1 of 4 readings above 2.5); "
        "1 more for --kernel-count 3",
    ]
    assert "12.3" not in r.stdout


@pytest.mark.parametrize("blind", [False, True])
def test_testbed_blind_prints_no_goodput(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, blind: bool
) -> None:
    """``testbed --blind``: each run's line has its load averages and no goodput. The testbed
    itself is stood in for by a function returning a run's summary (its real runs are
    tests/test_testbed*.py's): what is checked is the bench's line."""
    import importlib.util
    import types

    import aqmlab.testbed

    spec = importlib.util.spec_from_file_location("bbr_flows_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def fake(sc, out, **kw):
        Path(out).mkdir(parents=True)
        flows = [{"goodput_bps": 12.345e6} for _ in range(10)]
        return types.SimpleNamespace(summary={"flows": flows})

    monkeypatch.setattr(aqmlab.testbed, "testbed", fake)
    bench.run_testbed(tmp_path, 1, "v", aqms=("dt",), seeded=True, first=5001, blind=blind)
    line = capsys.readouterr().out.strip()
    assert line.startswith("dt-v-5001: load ")
    assert ("goodput" in line) is not blind and ("12.3" in line) is not blind
    assert json.loads((tmp_path / "dt-v-5001" / "load.json").read_text())["before"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["sim", "--access-delays", "1,2"], "--access-delays"),
        (["sim", "--access-delays", "a,b"], "--access-delays"),
        (["sim", "--dither", "1.5"], "--dither"),
        (["sim", "--dither", "0.5", "--access-delays", "0.2,1,2,3,4,5,6,7,8,9"], "--dither"),
        (["sim", "--tcp", "cc=bbr"], "--tcp"),
        (["sim", "--tcp", "gso"], "--tcp"),
        (["sim", "--seeds", "1", "--tcp", "no_such_setting=1"], "--tcp"),
        (["sim", "--seeds", "5-2"], "--seeds"),
        (["table", "--sim-seeds", "x"], "--seeds / --sim-seeds"),
        (["table", "--kernel-runs", "0-3"], "--kernel-runs"),
        (["shift", "--a", "x"], "shift: --a and --b"),
        (["table", "--plot-time", "t.png"], "--plot-time"),
        (["testbed", "--first", "0"], "--first"),
        (["table", "--kernel-count", "0"], "--kernel-count"),
        (["table", "--looks", "0"], "--looks"),
        (["table", "--sim-count", "0"], "--sim-count"),
        (["table", "--looks", "x"], "argument --looks: invalid int value"),
        (["count", "--kernel-count", "2.5"], "argument --kernel-count: invalid int value"),
        (["nosuchjob"], "argument what: invalid choice"),
        (["table", "--plot-ratio", "no/such/dir/r.png"], "--plot-ratio"),
        (["table", "--plot", "no/such/dir/p.png"], "--plot"),
        (["table", "--plot-ratio", "r.png"], "--plot-ratio: no AQM"),
        (["table", "--kernel-count", "5", "--plot-time", "t.png"], "--kernel-count"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], field: str) -> None:
    r = _bench(*args, "--out", "runs", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(field), r.stderr
    assert not any((tmp_path / "runs").glob("*"))


def test_lt_without_runs_to_compare_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """``lt`` over labels that name no runs: one line (which runs it lacks, or, where the
    simulator's probe is not built, how to build it), exit 2, nothing written."""
    r = _bench("lt", "--label", "x", "--kernel-label", "y", "--out", "runs", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(("--kernel-label / --label: no kernel runs 'y'", "lt: ")), r.stderr
    assert not any((tmp_path / "runs").glob("*")) and not (tmp_path / "t.png").exists()


def test_table_refuses_other_flows(tmp_path: Path) -> None:
    kernel = [{"name": "dt-k-01", "gp": [10.0] * 10, "rtt": RTTS, "queue": 1.0, "load": 0.1}]
    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": kernel * 2, "codel": []}}))
    d = tmp_path / "runs" / "dt-x-s01"
    _sim_run(d, [10.0] * 10)
    s = json.loads((d / "summary.json").read_text())
    s["flows"][5]["base_rtt_s"] = 0.060  # 60 ms where the kernel's flow has 48
    (d / "summary.json").write_text(json.dumps(s))
    r = _bench(
        "table", "--out", "runs", "--label", "x", "--kernel-digest", str(digest), cwd=tmp_path
    )
    assert r.returncode == 2
    assert r.stderr.startswith("dt-x-s01: other flows") and r.stderr.count("\n") == 1
    assert r.stdout == ""  # refused before any table is printed


def test_shift_chi_square_worked_by_hand(tmp_path: Path) -> None:
    # Ten simulator runs "a" and ten kernel runs "b", every flow alternating 9 and 11 Mb/s (mean
    # 10, s.d. sqrt(10/9), s.e. 1/3), except flow 0 of "b" at 11 and 13 (mean 12). The change
    # of flow 0 is +2 with s.e. sqrt(2)/3: (2 / (sqrt(2)/3))^2 = 18; the other nine add 0. So
    # 18.0 on 10 d.f. (p = 0.055).
    for i in range(1, 11):
        lo = i % 2
        _sim_run(tmp_path / "runs" / f"dt-a-s{i:02d}", [9.0 if lo else 11.0] * 10)
        gp = [11.0 if lo else 13.0] + [9.0 if lo else 11.0] * 9
        _sim_run(tmp_path / "runs" / f"dt-kb-{i:02d}", gp)
    r = _bench("shift", "--out", "runs", "--a", "a", "--b", "kernel:kb", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "FIFO: a (10 runs) -> kernel:kb (10 runs)" in r.stdout
    assert "| 8 -> 8 | 10.0 | 12.0 | +2.0 +- 0.5 |" in r.stdout
    assert "sum of (change / s.e.)^2: 18.0 on 10 d.f., p 0.055" in r.stdout
    assert "codel: fewer than 2 runs" in r.stderr


def test_digest_merge_keeps_the_files_runs(tmp_path: Path) -> None:
    """``digest --merge``: the file's runs whose directories are gone stay, a run directory
    replaces the file's run of its name, and the runs come out in number order; a file of
    another label is refused."""
    old = [
        {"name": f"dt-tbs-{i:02d}", "gp": [float(i)] * 10, "rtt": RTTS, "queue": 1.0, "load": 0.1}
        for i in (1, 2, 3)
    ]
    digest = tmp_path / "digest.json"
    args = ("digest", "--out", "runs", "--kernel-label", "tbs", "--digest", str(digest), "--merge")

    def merge() -> subprocess.CompletedProcess:
        return _bench(*args, cwd=tmp_path)

    digest.write_text(json.dumps({"label": "tbs", "runs": {"dt": old, "codel": []}}))
    for i, g in ((10, 7.0), (3, 5.0)):
        _sim_run(tmp_path / "runs" / f"dt-tbs-{i:02d}", [g] * 10)
    r = merge()
    assert r.returncode == 0, r.stderr
    runs = json.loads(digest.read_text())["runs"]["dt"]
    assert [x["name"] for x in runs] == ["dt-tbs-01", "dt-tbs-02", "dt-tbs-03", "dt-tbs-10"]
    assert [x["gp"][0] for x in runs] == [1.0, 2.0, 5.0, 7.0]
    digest.write_text(json.dumps({"label": "tb", "runs": {"dt": old, "codel": []}}))
    r = merge()
    assert r.returncode == 2 and r.stderr.startswith("--merge: ") and r.stderr.count("\n") == 1
    assert json.loads(digest.read_text())["label"] == "tb"  # left as it was
    digest.write_text(json.dumps({"label": "tbs", "runs": {"dt": [{"name": "x"}]}}))
    r = merge()
    assert r.returncode == 2 and r.stderr == (
        f"--merge: cannot read {digest}: run name 'x' is not AQM-LABEL-NN\n"
    )


def test_table_kernel_runs_picks_runs_by_number(tmp_path: Path) -> None:
    kernel = [
        {"name": f"dt-k-{i:02d}", "gp": [10.0 + i % 2] * 10, "rtt": RTTS, "queue": 1.0, "load": 0.1}
        for i in range(1, 13)
    ]
    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": kernel, "codel": []}}))
    for s in (1, 2):
        _sim_run(tmp_path / "runs" / f"dt-x-s{s:02d}", [10.0 + s % 2] * 10)
    r = _bench(
        "table",
        *("--out", "runs", "--label", "x", "--kernel-digest", str(digest), "--boot", "200"),
        *("--kernel-runs", "3-7"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "FIFO: kernel 5 runs" in r.stdout and "simulator 2 seeds" in r.stdout


def test_table_kernel_count_takes_each_aqms_first_runs_and_refuses_fewer(tmp_path: Path) -> None:
    """FIFO's runs 1-12 lack run 4 and CoDel's lack run 2: the first 5 by number are runs 1-3,
    5, 6 and 1, 3-6, whatever order the digest holds them in; 12 are more than either has."""

    def runs(aqm: str, gone: int) -> list[dict]:
        return [
            {
                "name": f"{aqm}-k-{i:02d}",
                "gp": [float(i)] * 10,
                "rtt": RTTS,
                "queue": 1.0,
                "load": 0.1,
            }
            for i in range(12, 0, -1)
            if i != gone
        ]

    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": runs("dt", 4), "codel": runs("codel", 2)}}))
    for aqm in ("dt", "codel"):
        for s in (1, 2):
            _sim_run(tmp_path / "runs" / f"{aqm}-x-s{s:02d}", [3.0 + s % 2] * 10)
    args = ("--out", "runs", "--label", "x", "--kernel-digest", str(digest), "--boot", "200")
    r = _bench("table", *args, "--kernel-count", "5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "FIFO: kernel 5 runs" in r.stdout and "CoDel: kernel 5 runs" in r.stdout, r.stdout
    # the kernel's mean per flow: (1+2+3+5+6)/5 = 3.4 (FIFO), (1+3+4+5+6)/5 = 3.8 (CoDel)
    fifo, codel = r.stdout.split("CoDel: kernel")
    assert "| 8 | 3.4 +- " in fifo and "| 8 | 3.8 +- " in codel, r.stdout
    r = _bench("table", *args, "--kernel-count", "12", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr == (
        "--kernel-count: 12 runs asked for, the kernel's dt has 11\n"
    ), r.stderr


def test_table_losses_and_the_first_flow_worked_by_hand(tmp_path: Path) -> None:
    """20 seeds; in seed s flow s % 10 starts first and gets 20 Mb/s, the others 10: its share
    is 20/110 = 0.1818, each flow's mean share (first in 2 runs of 20) (2 x 20/110 + 18 x
    10/110) / 20 = 0.1, so the first flow ends 8.2 points above it, and is the largest in every
    run. The kernel's runs (seeds 1-20, their schedules the simulator's) are even: 0.0 points.
    Loss ratios 0.10 and 0.12, retransmissions 10 and 12 per 100 segments."""
    kernel = [
        {
            "name": f"dt-k-{i:02d}",
            "gp": [10.0] * 10,
            "rtt": RTTS,
            "queue": 100.0,
            "load": 0.1,
            "seed": i,
            "loss": 0.1,
            "rtx": [0.1] * 10,
            "start": None,
            "rwnd": [0.0] * 10,
        }
        for i in range(1, 21)
    ]
    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": kernel, "codel": []}}))
    for s in range(1, 21):
        gp = [20.0 if i == s % 10 else 10.0 for i in range(10)]
        _sim_run(
            tmp_path / "runs" / f"dt-x-s{s:02d}",
            gp,
            seed=s,
            loss=0.12,
            first=s % 10,
            rtx=12,
            rwnd=(0.5, 0.1),
        )
    r = _bench(
        "table", "--out", "runs", "--label", "x", "--kernel-digest", str(digest), cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "bottleneck loss ratio: kernel 0.1000 +- 0.0000 (20 runs), sim 0.1200" in out, out
    assert "10-15: 0.100 / 0.120 (200 / 180 flows)" in out, out
    assert "20-25: - / 0.120 (0 / 20 flows)" in out, out
    assert "mean +0.0 +- 0.0 points on the kernel (20 runs), +8.2 +- 0.0 in the simulator" in out, (
        out
    )
    assert "largest flow in 10% and 100% of runs" in out, out
    # Held back by the receive window, by start order: the simulator's first flow 0.5 s, the
    # others 0.1 (mean (0.5 + 9 x 0.1) / 10 = 0.14), every flow held back; the kernel's none.
    assert (
        "by start order 1st..last: kernel "
        + " ".join(["0.000"] * 10)
        + "; sim 0.500 "
        + " ".join(["0.100"] * 9)
        + "; all flows: kernel 0.000, sim 0.140; "
        "flows held back at all: kernel 0%, sim 100%"
    ) in out, out


def test_share_moves_worked_by_hand() -> None:
    """Two runs of two flows over four 1 s bins. Run 1 never changes its split (0.7 / 0.3),
    run 2 swaps it every second (0.7 0.3 0.7 0.3 and the complement). Pooled over both runs,
    the deviations from 0.5 at lag 1 s are (+0.2 -0.2) x 3 bins in run 1 paired with the same,
    and in run 2 each paired with its opposite: the products sum to 6 x 0.04 - 6 x 0.04 = 0, so
    the correlation is 0. The halves (bins 1-2 against 3-4): run 1 (0.7, 0.7), (0.3, 0.3), run 2
    (0.5, 0.5) twice: correlation 1. The mean change from one bin to the next: 0 in run 1's
    six steps, 40 points in run 2's six: 20 points."""
    sys.path.insert(0, str(BENCH.parent))
    import bbr_flows

    steady = [[0.7] * 4, [0.3] * 4]
    swapping = [[0.7, 0.3, 0.7, 0.3], [0.3, 0.7, 0.3, 0.7]]
    st = bbr_flows.move_stats([steady, swapping])
    assert st["1 s later"] == pytest.approx(0.0, abs=1e-12)
    assert "5 s later" not in st  # longer than the window
    assert st["halves"] == pytest.approx(1.0)
    assert st["1-bin change"] == pytest.approx(20.0)
    # The steady run alone: the split persists (correlation 1), nothing changes.
    alone = bbr_flows.move_stats([steady])
    assert alone["1 s later"] == pytest.approx(1.0) and alone["1-bin change"] == 0.0


def test_lt_stretches_worked_by_hand() -> None:
    """Samples every 0.1 s: gain 2.89 (STARTUP) to 0.3 s, then the gain cycle (1.25 at 0.4 s,
    0.75 at 0.5 s, 1 from 0.6 s to 1.0 s with the estimate 10 then 12 from 0.8 s), then the
    estimate pinned at 7 with gain 1 from 1.1 s to 2.5 s (1.4 s: a stretch), then the cycle
    again. Only 1.1-2.5 s is a stretch of gain 1 and one estimate for at least 1 s; 0.8-1.0 s
    is too short, and a stretch needs a positive estimate."""
    sys.path.insert(0, str(BENCH.parent))
    import bbr_flows

    t = [round(0.1 * i, 1) for i in range(30)]
    gain = [2.89] * 4 + [1.25, 0.75] + [1.0] * 5 + [1.0] * 15 + [1.25, 0.75, 1.0, 1.0]
    bw = [1, 2, 4, 8, 9, 9, 10, 10, 12, 12, 12] + [7] * 15 + [9, 9, 9, 9]
    assert bbr_flows.lt_stretches(t, bw, gain) == [(1.1, 2.5, 7.0)]
    # the same with no estimate yet (0) is not a stretch
    assert bbr_flows.lt_stretches(t, [0] * 30, [1.0] * 30) == []


def test_table_returns_the_ratios_it_prints(tmp_path: Path, capsys) -> None:
    """What ``--plot-ratio`` draws: per flow, the ratio of means and its intervals, the same as
    the table prints (kernel 9.9 and 10.1 in turn; simulator 0.01 Mb/s either side of 10.2, 13
    and 10 in turn: ratios 1.02, 1.30 and 1, each interval within 1.5 % of its ratio)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bbr_flows_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    kernel = [
        {"name": f"dt-k-{i:02d}", "gp": [9.9 if i % 2 else 10.1] * 10, "rtt": RTTS}
        for i in range(1, 21)
    ]
    for k in kernel:
        k.update(queue=100.0, load=0.1)
    digest = tmp_path / "digest.json"
    digest.write_text(json.dumps({"runs": {"dt": kernel, "codel": []}}))
    for s in range(1, 21):
        d = 0.01 if s % 2 else -0.01
        _sim_run(tmp_path / "runs" / f"dt-x-s{s:02d}", [x + d for x in [10.2, 13.0] + [10.0] * 8])
    got = bench.table(tmp_path / "runs", 500, "x", "tb", digest)
    assert list(got) == ["dt"]
    rows = {rtt: (r, c95, c90) for rtt, r, c95, c90 in got["dt"]}
    assert [rtt for rtt, *_ in got["dt"]] == RTTS
    for rtt, want in ((8, 1.02), (16, 1.30), (24, 1.0)):
        r, c95, c90 = rows[rtt]
        assert r == pytest.approx(want, abs=1e-9)
        # A resample's kernel mean moves by at most 0.1 / 10 (1 %), the simulator's by 0.01 / 10.
        assert want * 0.985 <= c95[0] <= c90[0] <= r <= c90[1] <= c95[1] <= want * 1.015
    printed = capsys.readouterr().out
    assert "| 16 | 10.0 +- 0.0 | 13.0 +- 0.0 | 1.30 (" in printed
    bench.plot_ratios(got, tmp_path / "r.png", "hand-made")
    assert (tmp_path / "r.png").stat().st_size > 0


def test_sim_digest_carries_the_simulators_runs(tmp_path: Path) -> None:
    """``digest --sim`` keeps the simulator's runs (seed order, a failed run left out as the
    table leaves it out) and ``table --sim-digest`` reads them: the same per-flow table, figure
    for figure, as from the run directories; ``--merge`` keeps seeds whose directories are gone.
    A digest of another label, or the kernel's, is refused in one line."""
    kdigest = _hand_made_runs(tmp_path)
    sdigest = tmp_path / "sim.json"
    args = ("table", "--out", "runs", "--label", "x", "--kernel-digest", str(kdigest))
    args += ("--boot", "500")
    sim_digest = ("digest", "--sim", "--out", "runs", "--label", "x", "--digest")
    r = _bench(*sim_digest, str(sdigest), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(sdigest.read_text())
    assert doc["side"] == "simulator" and doc["label"] == "x"
    names = [x["name"] for x in doc["runs"]["dt"]]
    assert names == [f"dt-x-s{s:02d}" for s in range(1, 21)] + ["dt-x-s100"]
    assert all("moves" not in x for x in doc["runs"]["dt"])

    def flow_rows(out: str) -> list[str]:
        return [
            x for x in out.splitlines() if x.startswith("| ") and x.split("|")[1].strip().isdigit()
        ]

    dirs = _bench(*args, cwd=tmp_path)
    dig = _bench(*args, "--sim-digest", str(sdigest), cwd=tmp_path)
    assert dirs.returncode == 0 and dig.returncode == 0, dig.stderr
    assert len(flow_rows(dirs.stdout)) == 10
    assert flow_rows(dig.stdout) == flow_rows(dirs.stdout)
    # Merge: seed 5's directory gone, seed 21 new: 22 seeds, in seed order.
    import shutil

    shutil.rmtree(tmp_path / "runs" / "dt-x-s05")
    _sim_run(tmp_path / "runs" / "dt-x-s21", [10.0] * 10)
    r = _bench(*sim_digest, str(sdigest), "--merge", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    names = [x["name"] for x in json.loads(sdigest.read_text())["runs"]["dt"]]
    assert names == [f"dt-x-s{s:02d}" for s in range(1, 22)] + ["dt-x-s100"]
    # Refusals: another label; the kernel's digest as the simulator's; merging sides.
    other = _bench(*args[:4], "y", *args[5:], "--sim-digest", str(sdigest), cwd=tmp_path)
    assert other.returncode == 2
    assert other.stderr == f"--sim-digest: {sdigest} holds runs labelled 'x', not 'y'\n"
    kd = _bench(*args, "--sim-digest", str(kdigest), cwd=tmp_path)
    assert kd.returncode == 2 and kd.stderr.startswith("--sim-digest: ")
    assert kd.stderr.count("\n") == 1
    kdigest.write_text(json.dumps({"label": "x", "runs": {"dt": [], "codel": []}}))
    r = _bench(*sim_digest, str(kdigest), "--merge", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == f"--merge: {kdigest} holds the kernel's runs, not the simulator's\n"
