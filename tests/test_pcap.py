"""Packet traces (issue 24 item 3, ``[output] pcap``): tshark reads every file with no malformed
packet and every IPv4/TCP checksum good; a link's packet count equals its transmissions (the
dequeues of its event log); the TCP fields are what the simulator did (sequence numbers, SACK,
ECN); tshark's RTT analysis on a host's two links agrees with the sender's RTT samples."""

from __future__ import annotations

import shutil
import statistics
import subprocess

import pyarrow.parquet as pq
import pytest

import aqmlab
from aqmlab.scenario import schema as scenario

pytestmark = pytest.mark.skipif(
    shutil.which("tshark") is None or shutil.which("mergecap") is None,
    reason="tshark and mergecap are not installed (Debian: apt-get install -y tshark; the "
    "Makefile's set-up installs it when run as root)",
)

LINKS = ["bottleneck", "reverse", "L0-A", "A-L0"]
DOC = {
    "duration": "6s",
    "warmup": "1s",
    # No access delay: a host's access links are where its own capture would be.
    "topology": {"rate": "10Mbps", "delay": "10ms", "buffer": 100, "access_delay": "0ms"},
    "aqm": {"name": "codel", "ecn": True},
    "tcp": {"variant": "sack", "ecn": True},
    "flows": [{"count": 3, "start_spread": "0.5s"}],
    "output": {"pcap": LINKS, "events": ["bottleneck"]},
}


def _tshark(path, *args: str) -> list[str]:
    r = subprocess.run(
        ["tshark", "-n", "-r", str(path), *args], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return [x for x in r.stdout.splitlines() if x.strip()]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap") / "run"
    res = aqmlab.run(scenario.from_dict(DOC), out=out)
    return res, out


def test_tshark_reads_every_trace_with_good_checksums_and_no_malformed_packet(run):
    _, out = run
    for name in LINKS:
        p = out / "pcap" / f"{name}.pcap"
        assert len(_tshark(p, "-T", "fields", "-e", "frame.number")) > 100, name
        assert _tshark(p, "-Y", "_ws.malformed || _ws.expert.severity >= error") == [], name
        bad = _tshark(
            p,
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-Y",
            "ip.checksum.status != 1 || tcp.checksum.status != 1",
        )
        assert bad == [], (name, bad[:3])


def test_the_bottleneck_trace_holds_its_transmissions_with_their_tcp_fields(run):
    res, out = run
    p = out / "pcap" / "bottleneck.pcap"
    ev = pq.read_table(out / "events" / "bottleneck.parquet").to_pydict()
    dequeues = [t for t, e in zip(ev["t_ns"], ev["event"], strict=True) if e == "dequeue"]
    rows = _tshark(
        p,
        "-T",
        "fields",
        "-E",
        "separator=,",
        "-e",
        "tcp.srcport",
        "-e",
        "tcp.seq_raw",
        "-e",
        "tcp.len",
        "-e",
        "ip.dsfield.ecn",
    )
    # One packet per transmission started (a CoDel link: its dequeues).
    assert len(rows) == len(dequeues)
    mss = 1460
    # Data segments: payload mss, sequence numbers on segment boundaries, from the flows' ports.
    ports = {10000, 10001, 10002}
    for r in rows:
        port, seq, length, ecn = r.split(",")
        assert int(port) in ports and int(length) == mss and int(seq) % mss == 0
        assert int(ecn) in (2, 3)  # ECT(0), or CE set here
    marked = sum(1 for r in rows if r.endswith(",3"))
    bn = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    # Every CE mark of this link is in the trace (CE is set only here: one AQM on the path).
    assert marked >= bn["marked"] > 0
    # The ACKs on the reverse link carry SACK blocks in bytes after losses or marks-free drops.
    acks = _tshark(
        out / "pcap" / "reverse.pcap",
        "-Y",
        "tcp.options.sack_le",
        "-T",
        "fields",
        "-e",
        "tcp.options.sack_le",
    )
    if bn["dropped_aqm"] + bn["dropped_overflow"] > 0:
        assert acks, "drops but no SACK blocks"
        assert all(int(x.split(",")[0]) % mss == 0 for x in acks)


def test_tshark_ack_rtt_on_a_host_agrees_with_the_sender(run, tmp_path):
    # A capture on host L0 is its two access links merged. tshark times every ACK of new data
    # (here ~1,500 samples in the window); the simulated sender times one segment per RTT (RFC
    # 6298 without timestamps: ~170 samples), so the two means are of different samples of one
    # quantity: they agree within 1% (measured: 32.83 ms and 33.03 ms, 0.6%). The access links
    # have no propagation delay, so the capture point is the host's (the 1 Gb/s serialisation of
    # a segment, 12 us, is the only offset).
    res, out = run
    both = tmp_path / "L0.pcap"
    up, down = out / "pcap" / "L0-A.pcap", out / "pcap" / "A-L0.pcap"
    subprocess.run(["mergecap", "-w", str(both), str(up), str(down)], check=True, timeout=120)
    rows = _tshark(
        both,
        "-Y",
        "tcp.analysis.ack_rtt && tcp.srcport == 5001",
        "-T",
        "fields",
        "-e",
        "frame.time_epoch",
        "-e",
        "tcp.analysis.ack_rtt",
    )
    # The measurement window: ACKs from the warm-up (1 s) on.
    rtts = [float(r.split()[1]) for r in rows if float(r.split()[0]) >= 1.0]
    flow = res.summary["flows"][0]
    assert (flow["src"], flow["dst"]) == ("L0", "R0")
    assert len(rtts) > 5 * flow["rtt_samples"] > 500
    mean = statistics.fmean(rtts)
    assert mean == pytest.approx(flow["rtt_mean_s"], rel=0.01), (mean, flow["rtt_mean_s"])


def test_the_forwarder_writes_the_frames_it_sends(tmp_path):
    # The testbed (root, namespaces): the forwarder's two directions as pcap files of Ethernet
    # frames; every frame it sent is in them (its conservation counters) and tshark reads them.
    from test_testbed import REASON

    if REASON is not None:
        pytest.skip(REASON)
    from aqmlab import testbed

    doc = {
        "duration": "3s",
        "warmup": "1s",
        "topology": {"rate": "20Mbps", "delay": "5ms", "buffer": 100},
        "aqm": {"name": "codel", "ecn": True},
        "tcp": {"ecn": True},
        "flows": [{"count": 2}],
        "output": {"pcap": ["bottleneck", "reverse"]},
    }
    out = tmp_path / "tb"
    res = testbed.testbed(scenario.from_dict(doc), out=out, cc="cubic", plot=False)
    cons = res.summary["testbed"]["conservation"]
    for name, key in (("bottleneck", "forward"), ("reverse", "reverse")):
        p = out / "pcap" / f"{name}.pcap"
        assert len(_tshark(p, "-T", "fields", "-e", "frame.number")) == cons[key]["sent"] > 100
        assert _tshark(p, "-Y", "_ws.malformed") == []
    # CE marks set by the forwarder's CoDel are in the bottleneck's trace (the summary counts
    # those of the window, the trace all of them).
    ce = _tshark(out / "pcap" / "bottleneck.pcap", "-Y", "ip.dsfield.ecn == 3")
    bn = next(lk for lk in res.summary["links"] if lk["name"] == "bottleneck")
    assert len(ce) >= bn["marked"]
