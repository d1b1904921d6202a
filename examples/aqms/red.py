"""RED written in Python: Floyd & Jacobson, "Random Early Detection Gateways for Congestion
Avoidance", IEEE/ACM ToN 1993, s. 4 and Fig. 2; gentle: Floyd, "Recommendation on using the
gentle_ variant of RED", 2000; wait: ns-2 red.cc (modify_p).

Packet mode only (avg and thresholds in packets). Decides exactly as the built-in ``red``
(crates/aqm/src/red.rs) with the same parameters: tests/test_pyaqm_equal.py checks it.
"""

from aqmlab import ADMIT, DROP, MARK, Aqm, Param


class Red(Aqm):
    name = "red.py"
    params = {
        "min_th": Param(5.0, "real", "lower threshold of avg, packets", min=0),
        "max_th": Param(15.0, "real", "upper threshold of avg, packets"),
        "w_q": Param(0.002, "real", "EWMA weight of the average queue", min=1e-12, max=1),
        "max_p": Param(0.1, "real", "drop probability at avg = max_th", min=1e-12, max=1),
        "gentle": Param(False, "bool", "p rises from max_p to 1 between max_th and 2 max_th"),
        "wait": Param(False, "bool", "ns-2 wait_: no early drop until count*pb >= 1"),
        "ecn": Param(False, "bool", "mark ECN-capable packets instead of early drops"),
        "mean_pkt_size": Param(None, "size", "s of the idle decay; default: the link's mean"),
    }

    def setup(self, link):
        if not self.min_th < self.max_th:
            raise ValueError(f"max_th: must be > min_th (got {self.max_th} <= {self.min_th})")
        if link.buffer_pkts is not None and self.max_th > link.buffer_pkts:
            raise ValueError(f"max_th: must not exceed the buffer ({link.buffer_pkts} packets)")
        s = self.mean_pkt_size or float(link.mean_pkt_bytes)
        self.pkt_time_ns = s * 8.0 * 1e9 / max(link.rate_bps, 1)  # s/C, idle-decay unit (s. 4)
        self.avg, self.count, self.last_pb = 0.0, -1, 0.0
        self.early_drops = self.marks = self.forced_drops = 0

    def base_prob(self, avg):
        """pb of s. 4 (None: above max_th, or 2 max_th when gentle: a forced drop)."""
        lo, hi, mp = self.min_th, self.max_th, self.max_p
        if avg < lo:
            return 0.0
        if avg < hi:
            return mp * (avg - lo) / (hi - lo)
        if self.gentle and avg < 2.0 * hi:
            return mp + (1.0 - mp) * (avg - hi) / hi
        return None

    def spacing(self, pb, count):
        """pa from pb and the count since the last drop: pb / (1 - count pb) (Fig. 2), or
        ns-2's wait_ form pb / (2 - count pb), 0 below count pb = 1."""
        if self.wait:
            cp = count * pb
            return 0.0 if cp < 1.0 else min(pb / (2.0 - cp), 1.0) if cp < 2.0 else 1.0
        d = 1.0 - count * pb
        return 1.0 if d <= pb else min(pb / d, 1.0)

    def enqueue(self, pkt, q, now):
        w = self.w_q
        if q.idle_since is not None and q.len_pkts == 0:  # idle: decay as m small packets (s. 4)
            m = max(now - q.idle_since, 0) / self.pkt_time_ns
            self.avg = self.avg * (1.0 - w) ** m
        else:
            self.avg = (1.0 - w) * self.avg + w * q.len_pkts
        pb = self.base_prob(self.avg)
        if pb is None:
            self.last_pb, self.count = 1.0, 0
            self.forced_drops += 1
            return DROP
        if pb == 0.0:
            self.count, self.last_pb = -1, 0.0
            return ADMIT
        self.count += 1
        self.last_pb = pb
        if self.rng.random() < self.spacing(pb, self.count):
            self.count = 0
            if self.ecn and pkt.ecn_capable:
                self.marks += 1
                return MARK
            self.early_drops += 1
            return DROP
        return ADMIT

    def drop_prob(self):
        return self.last_pb

    def avg_queue(self):
        return self.avg

    def stats(self):
        return {
            "early_drops": self.early_drops,
            "marks": self.marks,
            "forced_drops": self.forced_drops,
        }
