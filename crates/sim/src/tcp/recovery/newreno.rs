//! NewReno (RFC 6582 s. 3.2): Reno's fast recovery ([`super::reno`]) where a partial ACK
//! retransmits the next hole and recovery ends only when `recover` (the highest segment sent
//! when it began) is acknowledged; a new recovery starts only on duplicate ACKs above `recover`,
//! so one window's losses (or a timeout's go-back-N) cause one reduction.

use super::reno::fast_recovery_ack;
use super::Recovery;
use crate::packet::Packet;
use crate::tcp::Sender;
use aqm::Time;

/// NewReno's state.
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// RFC 6582's `recover`: the highest segment sent when recovery (or a timeout) began.
    pub(super) recover: u32,
    /// `recover` has been set (before the first congestion event any ACK may start recovery).
    pub(super) recover_valid: bool,
    /// A partial ACK was seen in this recovery (only the first restarts the timer).
    pub(super) partial_seen: bool,
}

impl NewReno {
    /// RFC 6582 s. 3.2 step 1: whether duplicate ACKs acknowledging up to `a` may start recovery.
    pub(super) fn may_enter(&self, a: u32) -> bool {
        !self.recover_valid || a > self.recover
    }

    /// Recovery begins with `snd_max` the highest segment sent (step 2: recover = HighData).
    pub(super) fn start(&mut self, snd_max: u32) {
        self.recover = snd_max;
        self.recover_valid = true;
        self.partial_seen = false;
    }
}

impl Recovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, s: &mut Sender, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        fast_recovery_ack(s, Some(self), ack, now, out);
    }

    /// RFC 6582 s. 3.2 step 1 with s. 4's note: after a timeout, recover = HighData, so the
    /// duplicate ACKs of the go-back-N retransmissions do not start another recovery.
    fn on_timeout(&mut self, s: &mut Sender, _now: Time) {
        self.recover = s.snd_max;
        self.recover_valid = true;
    }
}
