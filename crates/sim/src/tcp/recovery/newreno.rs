//! Fast retransmit and fast recovery without SACK: Reno (RFC 5681 s. 3.2: recovery ends on the
//! first new ACK) and NewReno (RFC 6582 s. 3.2: partial ACKs retransmit the next hole, recovery
//! ends when `recover` is acknowledged).

use super::DUP_THRESH;
use crate::config::RecoveryKind;
use crate::packet::Packet;
use crate::tcp::Sender;
use aqm::Time;

impl Sender {
    /// Processes an ACK with Reno / NewReno recovery; segments to send go to `out`.
    pub(crate) fn on_ack_newreno(&mut self, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        self.snd_wnd = ack.rwnd;
        let a = ack.seq;
        if a > self.snd_una {
            let newly = a - self.snd_una;
            self.advance_una(a, ack.ts, now);
            let sample = self.ack_sample(ack, newly, newly, now);
            self.cc.on_ack_event(&sample);
            // RFC 6298 s. 5.2-5.3, except that in NewReno fast recovery only the first partial
            // ACK restarts the timer (RFC 6582 s. 3.2 step 5 and s. 4, the "Impatient"
            // variant), so a window with many losses ends in a timeout instead of one
            // retransmission per round trip.
            let mut restart = true;
            if self.in_recovery {
                if self.recovery == RecoveryKind::Reno || a >= self.recover {
                    // Full ACK (NewReno) or any new ACK (Reno): deflate to ssthresh, leave.
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // RFC 6582 s. 3.2 step 5: partial ACK: retransmit the first unacknowledged
                    // segment, deflate by the amount acknowledged, add back one segment.
                    self.retransmit_head(now, out);
                    self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                    restart = !self.partial_seen;
                    self.partial_seen = true;
                }
            } else {
                self.dupacks = 0;
                self.cwnd = self.cc.on_ack(self.cwnd, self.ssthresh, &sample);
            }
            self.after_new_ack(restart, now);
            self.on_ecn_echo(ack, now);
        } else if a == self.snd_una && self.snd_max > self.snd_una {
            // A duplicate ACK: one segment delivered (as Linux's `tcp_add_reno_sack`).
            let sample = self.ack_sample(ack, 0, 1, now);
            self.cc.on_ack_event(&sample);
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0; // RFC 5681 s. 3.2 step 4: inflate
            } else if self.dupacks == DUP_THRESH {
                // RFC 6582 s. 3.2 step 1: only when the ACK covers more than `recover`.
                let allowed =
                    self.recovery == RecoveryKind::Reno || !self.recover_valid || a > self.recover;
                if allowed {
                    let flight = self.flight_for_ssthresh();
                    self.ssthresh = self.cc.on_congestion(self.cwnd, flight, now);
                    self.recover = self.snd_max;
                    self.recover_valid = true;
                    self.in_recovery = true;
                    self.partial_seen = false;
                    self.stats.fast_retransmits += 1;
                    self.retransmit_head(now, out);
                    self.cwnd = self.ssthresh + 3.0;
                    self.ecn_recover = self.snd_max;
                }
            } else {
                self.limited_transmit_newreno(now, out);
            }
        }
        self.send_allowed(now, out);
    }
}
