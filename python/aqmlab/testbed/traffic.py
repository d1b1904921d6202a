"""aqmlab's traffic tool for the testbed: bulk and finite TCP flows on the kernel's TCP, measured
with TCP_INFO (Linux ``struct tcp_info``), and UDP constant-bit-rate sources.

Runs inside a network namespace (``ip netns exec``)::

    python -m aqmlab.testbed.traffic sink PORT [UDP.json] # drains every connection and datagram
    python -m aqmlab.testbed.traffic source SPEC.json OUT.json   # prints ready, reads t0

The source starts each flow at ``t0 + start_s`` (``t0`` on CLOCK_MONOTONIC, shared by every
namespace), bound to its own source address, with its congestion control set by TCP_CONGESTION,
sends until ``t0 + duration_s`` (or its ``size_bytes``), and samples TCP_INFO every ``sample_s``.
Measured per flow: goodput from ``tcpi_bytes_acked`` over [warm-up, end]; retransmissions
(``tcpi_total_retrans``); the smoothed RTT (``tcpi_rtt``) sampled over the window (mean,
percentiles) and ``tcpi_min_rtt``; ``tcpi_delivered_ce`` (segments the receiver echoed as
CE-marked with ECE, RFC 3168 section 6.1.3: the ECN marks that reached the sender);
``tcpi_snd_cwnd``. A finite flow stops being sampled (and its socket is closed) once its last
byte is acknowledged, so that thousands of short transfers cost no sampling after they end.

UDP flows (``kind = "udp"``) are the simulator's ``cbr`` (ns-2 CBR): packet sizes (IPv4 packet
bytes, headers included) drawn per packet from the flow's shares, the gap after a packet its
transmission time at the flow's rate, from ``start_s`` until the end. One thread paces them all
on CLOCK_MONOTONIC; when it wakes late it sends every packet whose time has come (the long-run
rate is exact, the short-run spacing is as good as the scheduler). The sink counts the datagrams
of every source (address, port) and writes the counts to ``UDP.json`` on SIGTERM.
"""

from __future__ import annotations

import heapq
import json
import random
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

# struct tcp_info (include/uapi/linux/tcp.h): offsets of the fields read here.
_TCPI_LEN = 232
_FIELDS = {
    "options": (5, "B"),
    "rtt_us": (68, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "delivered": (192, "I"),
    "delivered_ce": (196, "I"),
}
TCPI_OPT_ECN = 8
SNDBUF = 4 << 20
SO_RCVBUFFORCE = 33  # asm-generic/socket.h
#: IPv4 (20 B) + UDP (8 B) headers: a UDP flow's packet size includes them, as the simulator's.
UDP_IP_HEADER = 28


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The fields of TCP_INFO this tool uses."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCPI_LEN)
    raw = raw + bytes(_TCPI_LEN - len(raw))
    return {k: struct.unpack_from("<" + f, raw, off)[0] for k, (off, f) in _FIELDS.items()}


def _mono() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _udp_drain(sock: socket.socket, counts: dict[str, list[int]]) -> None:
    buf = bytearray(1 << 16)
    while True:
        n, (ip, port) = sock.recvfrom_into(buf)
        c = counts.setdefault(f"{ip}:{port}", [0, 0])
        c[0] += 1
        c[1] += n + UDP_IP_HEADER


def sink(port: int, udp_out: str | None = None) -> None:
    """Accepts TCP connections on every address and drains them; counts UDP datagrams per source
    and writes them to ``udp_out`` on SIGTERM."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(4096)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # as root, past net.core.rmem_max: the sink must not be where datagrams are lost
    udp.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    udp.bind(("0.0.0.0", port))
    counts: dict[str, list[int]] = {}
    threading.Thread(target=_udp_drain, args=(udp, counts), daemon=True).start()

    def done(signum: int, frame: Any) -> None:
        if udp_out is not None:
            with open(udp_out, "w") as fh:
                json.dump(dict(counts), fh)
        sys.exit(0)

    signal.signal(signal.SIGTERM, done)
    print("ready", flush=True)

    def drain(c: socket.socket) -> None:
        buf = bytearray(1 << 18)
        with c:
            while c.recv_into(buf):
                pass

    while True:
        c, _ = srv.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


class _Flow:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.sock: socket.socket | None = None
        self.started: float | None = None
        self.done_at: float | None = None
        self.error: str | None = None
        self.rtts: list[float] = []
        self.acked_warm: tuple[float, int] | None = None
        self.last: dict[str, int] | None = None
        self.lock = threading.Lock()

    def run(self, t0: float, end: float, port: int) -> None:
        s = self.spec
        time.sleep(max(0.0, t0 + s["start_s"] - _mono()))
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, s["cc"].encode())
            # A deep send buffer: the kernel keeps sending while this (Python) thread waits for
            # a core on a loaded machine (the kernel caps it at net.core.wmem_max). It bounds
            # nothing else: cwnd stays the limit.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
            sock.bind((s["src"], 0))
            sock.settimeout(max(0.5, end - _mono()))
            sock.connect((s["dst"], port))
        except OSError as e:
            self.error = f"{s['name']}: {e}"
            return
        with self.lock:
            self.sock, self.started = sock, _mono()
        sock.settimeout(0.1)
        chunk = memoryview(bytes(1 << 17))
        left = s.get("size_bytes")
        while _mono() < end and (left is None or left > 0):
            n = len(chunk) if left is None else min(len(chunk), left)
            try:
                sent = sock.send(chunk[:n])
            except TimeoutError:
                continue
            except OSError as e:
                self.error = f"{s['name']}: {e}"
                return
            if left is not None:
                left -= sent

    def _base(self, warm: float, info: dict[str, int]) -> tuple[float, int]:
        """Bytes acknowledged at the warm-up instant: none for a flow that started after it,
        else the first sample after it (at most one sampling interval late)."""
        return (warm, 0 if (self.started or 0.0) >= warm else info["bytes_acked"])

    def sample(self, now: float, warm: float, end: float) -> None:
        with self.lock:
            if self.sock is None:
                return
            try:
                info = tcp_info(self.sock)
            except OSError:
                return
        self.last = info
        size = self.spec.get("size_bytes")
        if size is not None and self.done_at is None and info["bytes_acked"] >= size:
            self.done_at = now
            if now >= warm:
                self.acked_warm = self.acked_warm or self._base(warm, info)
            with self.lock:  # all acknowledged: nothing more to measure
                self.sock.close()
                self.sock = None
            return
        if now >= warm:
            if self.acked_warm is None:
                self.acked_warm = self._base(warm, info)
            if info["rtt_us"] > 0 and now <= end:
                self.rtts.append(info["rtt_us"] * 1e-6)


def _percentile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    ys = sorted(xs)
    return ys[min(len(ys) - 1, max(0, int(q * len(ys) + 0.999999) - 1))]


def _result(f: _Flow, t0: float, end: float, t_end: float) -> dict[str, Any]:
    info = f.last or {k: 0 for k in _FIELDS}
    good = None  # bytes acknowledged in [warm-up, end] over its length, as the simulator's
    if f.acked_warm is not None and t_end > f.acked_warm[0]:
        good = (info["bytes_acked"] - f.acked_warm[1]) * 8 / (t_end - f.acked_warm[0])
    return {
        "name": f.spec["name"],
        "error": f.error,
        "started": f.started is not None,
        "start_s": (f.started - t0) if f.started else None,
        "goodput_bps": good if good is not None else 0.0,
        "bytes_acked": info["bytes_acked"],
        "segments_sent": info["data_segs_out"],
        "delivered_segments": info["delivered"],
        "retransmits": info["total_retrans"],
        "delivered_ce": info["delivered_ce"],
        "ecn_negotiated": bool(info["options"] & TCPI_OPT_ECN),
        "rtt_samples": len(f.rtts),
        "rtt_mean_s": sum(f.rtts) / len(f.rtts) if f.rtts else None,
        "rtt_min_s": info["min_rtt_us"] * 1e-6 if info["min_rtt_us"] else None,
        "rtt_max_s": max(f.rtts) if f.rtts else None,
        "rtt_p50_s": _percentile(f.rtts, 0.5),
        "rtt_p90_s": _percentile(f.rtts, 0.9),
        "rtt_p99_s": _percentile(f.rtts, 0.99),
        "cwnd_final": info["snd_cwnd"],
        "completion_s": (f.done_at - f.started) if f.done_at and f.started else None,
    }


class _Udp:
    """One UDP CBR flow: its socket, size draws and counters."""

    def __init__(self, spec: dict[str, Any], seed: int) -> None:
        self.spec = spec
        self.rng = random.Random(f"{seed}/{spec['name']}")
        self.sizes = [max(UDP_IP_HEADER + 1, int(x["bytes"])) for x in spec["sizes"]]
        self.weights = [float(x["share"]) for x in spec["sizes"]]
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        self.sock.bind((spec["src"], 0))
        self.sock.setblocking(False)
        self.sent = [0, 0]  # packets, bytes (IPv4 packet sizes)
        self.sent_warm = [0, 0]
        self.errors = 0

    def send(self, port: int, payload: memoryview, warm: bool) -> float:
        """Sends one packet; returns its transmission time at the flow's rate (s)."""
        size = self.rng.choices(self.sizes, self.weights)[0]
        try:
            self.sock.sendto(payload[: size - UDP_IP_HEADER], (self.spec["dst"], port))
        except OSError:  # ENOBUFS, EAGAIN: a full socket queue, counted, not retried
            self.errors += 1
        else:
            self.sent[0] += 1
            self.sent[1] += size
            if warm:
                self.sent_warm[0] += 1
                self.sent_warm[1] += size
        return size * 8 / self.spec["rate_bps"]


def _udp_run(flows: list[_Udp], t0: float, warm: float, end: float, port: int) -> None:
    """Paces every UDP flow from one thread (a heap of next departure times)."""
    payload = memoryview(bytes(1 << 16))
    heap = [(t0 + f.spec["start_s"], k) for k, f in enumerate(flows)]
    heapq.heapify(heap)
    while heap:
        t, k = heap[0]
        stop = min(end, t0 + (flows[k].spec.get("stop_s") or end))
        if t >= stop:
            heapq.heappop(heap)
            continue
        now = _mono()
        if t > now:
            time.sleep(min(t - now, 0.005))
            continue
        gap = flows[k].send(port, payload, now >= warm)
        heapq.heapreplace(heap, (t + gap, k))


def _udp_result(f: _Udp, t0: float, warm: float, end: float) -> dict[str, Any]:
    ip, port = f.sock.getsockname()
    return {
        "name": f.spec["name"],
        "kind": "udp",
        "error": f"{f.errors} sends refused by the kernel" if f.errors else None,
        "started": f.sent[0] > 0,
        "start_s": f.spec["start_s"],
        "udp_sent": f.sent[0],
        "udp_sent_bytes": f.sent[1],
        "offered_bps": f.sent_warm[1] * 8 / max(1e-9, end - max(warm, t0 + f.spec["start_s"])),
        "source": f"{ip}:{port}",
    }


def source(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs the flows of ``spec`` and returns their measurements (in ``spec`` order)."""
    t0 = spec["t0_mono_ns"] / 1e9
    end = t0 + spec["duration_s"]
    warm = t0 + spec["warmup_s"]
    kinds = [s.get("kind", "tcp") for s in spec["flows"]]
    flows = [_Flow(s) for s, k in zip(spec["flows"], kinds, strict=True) if k == "tcp"]
    seed = spec.get("seed", 1)
    udps = [_Udp(s, seed) for s, k in zip(spec["flows"], kinds, strict=True) if k == "udp"]
    threads = [
        threading.Thread(target=f.run, args=(t0, end, spec["port"]), daemon=True) for f in flows
    ]
    if udps:
        threads.append(
            threading.Thread(target=_udp_run, args=(udps, t0, warm, end, spec["port"]), daemon=True)
        )
    for t in threads:
        t.start()
    step = spec.get("sample_s", 0.02)
    while (now := _mono()) < end:
        for f in flows:
            f.sample(now, warm, end)
        time.sleep(max(0.0, min(step, end - _mono())))
    t_end = _mono()
    for f in flows:
        f.sample(t_end, warm, end)
    tcp = iter([_result(f, t0, end, t_end) for f in flows])
    udp = iter([_udp_result(f, t0, warm, end) for f in udps])
    out = [next(tcp) if k == "tcp" else next(udp) for k in kinds]
    for f in [*flows, *udps]:
        if f.sock is not None:
            f.sock.close()
    return {"flows": out, "t_end_s": t_end - t0}


def main(argv: list[str]) -> int:
    """Entry point of ``python -m aqmlab.testbed.traffic``."""
    if len(argv) in (2, 3) and argv[0] == "sink":
        sink(int(argv[1]), argv[2] if len(argv) == 3 else None)
        return 0
    if len(argv) == 3 and argv[0] == "source":
        with open(argv[1]) as fh:
            spec = json.load(fh)
        # Ready to start: the orchestrator answers with the start instant (CLOCK_MONOTONIC, ns).
        print("ready", flush=True)
        spec["t0_mono_ns"] = int(sys.stdin.readline())
        res = source(spec)
        with open(argv[2], "w") as fh:
            json.dump(res, fh)
        return 0
    print(
        "usage: traffic sink PORT [UDP.json] | traffic source SPEC.json OUT.json", file=sys.stderr
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
