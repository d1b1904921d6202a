"""CoDel written in Python: RFC 8289 (Nichols, Jacobson, McGregor, Iyengar 2018), s. 5.5 the
dequeue state machine, s. 5.6 the control law, s. 5.3 maxpacket.

Decides exactly as the built-in ``codel`` (crates/aqm/src/codel.rs) with the same parameters,
including its deferred rescheduling of drop_next (the RFC's drop loop run one drop per dequeue):
tests/test_pyaqm_equal.py checks it.
"""

import math

from aqmlab import ADMIT, DROP, MARK, Aqm, Param


def control_law(t, interval_ns, count):
    """RFC 8289 s. 5.6: the next drop interval / sqrt(count) after t (at least 1 ns)."""
    step = interval_ns / math.sqrt(max(count, 1))
    return t + max(int(step), 1)


class Codel(Aqm):
    name = "codel.py"
    params = {
        "target": Param("5ms", "duration", "acceptable standing queue delay (s. 4.2)", min=1e-9),
        "interval": Param("100ms", "duration", "window above target before dropping (s. 4.3)"),
        "mtu": Param("1500B", "size", "maxpacket: no drop at or below this backlog, s. 5.3", min=1),
        "ecn": Param(False, "bool", "mark ECN-capable packets instead of dropping (RFC 3168)"),
    }

    def setup(self, link):
        self.target_ns = math.floor(self.target * 1e9 + 0.5)
        self.interval_ns = math.floor(self.interval * 1e9 + 0.5)
        if self.target_ns >= self.interval_ns:
            raise ValueError("target: must be < interval")
        self.mtu_bytes = math.floor(self.mtu + 0.5)
        self.count = self.lastcount = self.drop_next = self.ldelay = 0
        self.dropping = self.reschedule = self.was_dropping = False
        self.first_above_time = None
        self.drops = self.marks = self.drop_states = self.maxpacket = 0

    def enqueue(self, pkt, q, now):
        self.maxpacket = max(self.maxpacket, pkt.size_bytes)
        return ADMIT

    def should_drop(self, sojourn, backlog, now):
        """s. 5.5 dodequeue: ok_to_drop once sojourn has stayed above target for interval."""
        self.ldelay = sojourn
        if sojourn < self.target_ns or backlog <= self.mtu_bytes:
            self.first_above_time = None
            return False
        if self.first_above_time is None:
            self.first_above_time = now + self.interval_ns
            return False
        return now >= self.first_above_time

    def dequeue(self, pkt, sojourn, q, now):
        backlog = q.len_bytes
        ok = self.should_drop(sojourn, backlog, now)
        mark = self.ecn and pkt.ecn_capable
        if self.dropping:
            if not ok:
                self.dropping = self.reschedule = False
                return ADMIT
            if self.reschedule:
                self.drop_next = control_law(self.drop_next, self.interval_ns, self.count)
                self.reschedule = False
            if now < self.drop_next:
                return ADMIT
            self.count += 1
            if mark:
                self.drop_next = control_law(self.drop_next, self.interval_ns, self.count)
                self.marks += 1
                return MARK
            self.reschedule = True
            if backlog == 0:
                self.first_above_time = None
                self.dropping = self.reschedule = False
            self.drops += 1
            return DROP
        if not ok:
            return ADMIT
        # Entering the dropping state: restart near the last count if we left it recently (s. 5.5).
        # A queue that never dropped has no last dropping state to be recent (its drop_next is
        # the initial 0, which the simulator's clock starting at 0 would otherwise call recent).
        delta = (self.count - self.lastcount) & 0xFFFFFFFF
        recent = self.was_dropping and now - self.drop_next < 16 * self.interval_ns
        self.was_dropping = True
        self.count = delta if delta > 1 and recent else 1
        self.lastcount = self.count
        self.drop_next = control_law(now, self.interval_ns, self.count)
        self.dropping, self.reschedule = True, False
        self.drop_states += 1
        if mark:
            self.marks += 1
            return MARK
        if backlog == 0:
            self.first_above_time = None
        self.drops += 1
        return DROP

    def on_empty(self, now):
        """s. 5.5: dodequeue found no packet (a flow queue of fq ran empty): forget the time
        above target and leave the dropping state."""
        self.first_above_time = None
        self.dropping = self.reschedule = False

    def on_pushout(self, n, now):
        """fq pushed n packets of this queue out on overflow: Linux fq_codel_drop raises the
        queue's count by them (flow->cvars.count += i), so it signals harder."""
        self.count = min(self.count + n, 0xFFFFFFFF)

    def stats(self):
        return {
            "drops": self.drops,
            "marks": self.marks,
            "drop_states": self.drop_states,
            "count": self.count,
            "dropping": 1.0 if self.dropping else 0.0,
            "ldelay_s": self.ldelay / 1e9,
            "maxpacket": self.maxpacket,
        }
