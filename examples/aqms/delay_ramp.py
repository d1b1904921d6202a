"""DelayRamp: a new idea to try, the tutorial's (docs/design-an-aqm.md). RED's linear ramp, but
on the sojourn time a departing packet has waited rather than on an average queue length:
    p = 0                                  sojourn <= target
    p = (sojourn - target) / ramp          in between
    p = 1                                  sojourn >= target + ramp
and the departing packet is dropped (or ECN-marked) with probability p. Head drop on delay, as
CoDel (RFC 8289 s. 5.5); the linear ramp of RED (Floyd & Jacobson 1993, s. 4), with no averaging
and no count spacing: the simplest form, to see what they add.
"""

from aqmlab import ADMIT, DROP, MARK, Aqm, Param


def ramp(sojourn_s, target_s, ramp_s):
    """The drop probability of a packet that waited ``sojourn_s``."""
    return min(max((sojourn_s - target_s) / ramp_s, 0.0), 1.0)


class DelayRamp(Aqm):
    name = "delay_ramp"
    params = {
        "target": Param("5ms", "duration", "sojourn time below which nothing is dropped", min=0),
        "ramp": Param("20ms", "duration", "sojourn time above target where p reaches 1", min=1e-6),
        "ecn": Param(False, "bool", "mark ECN-capable packets instead of dropping them"),
    }

    def setup(self, link):
        self.p = 0.0
        self.drops = self.marks = 0

    def enqueue(self, pkt, q, now):
        return ADMIT

    def dequeue(self, pkt, sojourn, q, now):
        self.p = ramp(sojourn / 1e9, self.target, self.ramp)
        if self.p == 0.0 or self.rng.random() >= self.p:
            return ADMIT
        if self.ecn and pkt.ecn_capable:
            self.marks += 1
            return MARK
        self.drops += 1
        return DROP

    def drop_prob(self):
        return self.p

    def stats(self):
        return {"drops": self.drops, "marks": self.marks}
