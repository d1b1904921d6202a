//! Fast retransmit and fast recovery without SACK (RFC 5681 s. 3.2): the third duplicate ACK
//! halves the window (through the congestion controller) and retransmits the first
//! unacknowledged segment, each further duplicate ACK inflates the window by one segment, and
//! the first new ACK deflates it to ssthresh and ends recovery. `fast_recovery_ack` is shared
//! with NewReno ([`super::newreno`]), which adds RFC 6582's `recover` rules to it.

use super::{NewReno, Recovery, DUP_THRESH};
use crate::packet::Packet;
use crate::tcp::Sender;
use aqm::Time;

/// Reno's recovery (`[tcp] recovery = "reno"`): no state beyond the sender's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl Recovery for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, s: &mut Sender, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        fast_recovery_ack(s, None, ack, now, out);
    }

    fn on_timeout(&mut self, _s: &mut Sender, _now: Time) {}
}

/// One ACK with RFC 5681 fast recovery; with `newreno`, RFC 6582 s. 3.2's rules too (partial
/// ACKs retransmit the next hole and keep recovery until `recover` is acknowledged; a new
/// recovery only for duplicate ACKs above `recover`).
pub(super) fn fast_recovery_ack(
    s: &mut Sender,
    newreno: Option<&mut NewReno>,
    ack: &Packet,
    now: Time,
    out: &mut Vec<Packet>,
) {
    s.snd_wnd = ack.rwnd;
    let a = ack.seq;
    if a > s.snd_una {
        new_ack(s, newreno, ack, now, out);
    } else if a == s.snd_una && s.snd_max > s.snd_una {
        duplicate_ack(s, newreno, ack, now, out);
    }
    s.send_allowed(now, out);
}

/// An ACK of new data: growth outside recovery; in recovery, a partial ACK (NewReno) or the
/// end of recovery.
fn new_ack(
    s: &mut Sender,
    newreno: Option<&mut NewReno>,
    ack: &Packet,
    now: Time,
    out: &mut Vec<Packet>,
) {
    let a = ack.seq;
    let newly = a - s.snd_una;
    let delivered = s.reno_delivered(newly);
    s.advance_una(a, ack.ts, now);
    let mut sample = s.ack_sample(ack, newly, delivered, now);
    s.cc.on_ack_event(&sample);
    // A controller that sets cwnd itself (BBR): recovery leaves the window to it.
    let own = s.cc.controls_cwnd();
    // RFC 6298 s. 5.2-5.3, except that in NewReno fast recovery only the first partial
    // ACK restarts the timer (RFC 6582 s. 3.2 step 5 and s. 4, the "Impatient"
    // variant), so a window with many losses ends in a timeout instead of one
    // retransmission per round trip.
    let mut restart = true;
    if s.in_recovery {
        match newreno.filter(|n| a < n.recover) {
            // RFC 6582 s. 3.2 step 5: partial ACK: retransmit the first unacknowledged
            // segment, deflate by the amount acknowledged, add back one segment.
            Some(n) => {
                s.retransmit_head(now, out);
                if !own {
                    s.cwnd = (s.cwnd - newly as f64 + 1.0).max(1.0);
                }
                restart = !n.partial_seen;
                n.partial_seen = true;
            }
            // Full ACK (NewReno) or any new ACK (Reno): deflate to ssthresh, leave.
            None => {
                if !own {
                    s.cwnd = s.ssthresh;
                }
                s.in_recovery = false;
                s.dupacks = 0;
            }
        }
    } else {
        s.dupacks = 0;
        if !own {
            s.cwnd = s.cc.on_ack(s.cwnd, s.ssthresh, &sample);
        }
    }
    s.after_new_ack(restart, now);
    s.on_ecn_echo(ack, now);
    if own {
        s.cc_control(&mut sample);
    }
}

/// A duplicate ACK: inflation in recovery, fast retransmit at the third, else limited
/// transmit.
fn duplicate_ack(
    s: &mut Sender,
    newreno: Option<&mut NewReno>,
    ack: &Packet,
    now: Time,
    out: &mut Vec<Packet>,
) {
    // One segment delivered, as Linux's `tcp_add_reno_sack` ([`Sender::reno_delivered`]).
    let delivered = s.reno_delivered(0);
    let mut sample = s.ack_sample(ack, 0, delivered, now);
    s.cc.on_ack_event(&sample);
    let own = s.cc.controls_cwnd();
    s.dupacks += 1;
    if s.in_recovery {
        if !own {
            s.cwnd += 1.0; // RFC 5681 s. 3.2 step 4: inflate
        }
    } else if s.dupacks == DUP_THRESH {
        // RFC 6582 s. 3.2 step 1: only when the ACK covers more than `recover`.
        if newreno.as_deref().is_none_or(|n| n.may_enter(ack.seq)) {
            let flight = s.flight_for_ssthresh();
            s.ssthresh = s.cc.on_congestion(s.cwnd, flight, now);
            if let Some(n) = newreno {
                n.start(s.snd_max);
            }
            s.in_recovery = true;
            s.stats.fast_retransmits += 1;
            s.retransmit_head(now, out);
            if !own {
                s.cwnd = s.ssthresh + 3.0;
            }
            s.ecn_recover = s.snd_max;
        }
    } else {
        s.limited_transmit_newreno(now, out);
    }
    if own {
        s.cc_control(&mut sample);
    }
}
