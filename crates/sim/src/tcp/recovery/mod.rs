//! Loss recovery, apart from congestion control: what to retransmit and how fast during
//! recovery, one algorithm per file behind [`Recovery`] (as ns-3 keeps `TcpRecoveryOps` apart
//! from `TcpCongestionOps`), chosen by `[tcp] recovery` ([`build`]):
//! - [`reno`]: RFC 5681 s. 3.2 fast retransmit / fast recovery (ends on the first new ACK);
//! - [`newreno`]: RFC 6582 (partial ACKs, `recover`);
//! - [`sack`]: RFC 6675 SACK loss recovery with Proportional Rate Reduction ([`prr`], RFC 6937);
//! - [`rack`]: RACK-TLP (RFC 8985) time-based loss detection and tail loss probes, with PRR.
//!
//! Limited transmit (RFC 3042) is in [`limited`]. The sender keeps what every part of it reads:
//! the duplicate-ACK count, the in-recovery flag (RTT sampling and ECN consult it) and the SACK
//! scoreboard (a go-back-N after a timeout skips SACKed segments, RFC 6675 s. 5.1); a recovery
//! keeps its own state (NewReno's `recover`, SACK's RecoveryPoint and PRR).

pub mod limited;
pub mod newreno;
pub mod prr;
pub mod rack;
pub mod reno;
pub mod sack;

pub use newreno::NewReno;
pub use prr::Prr;
pub use rack::Rack;
pub use reno::Reno;
pub use sack::{Sack, Scoreboard};

use crate::config::RecoveryKind;
use crate::packet::Packet;
use crate::tcp::Sender;
use aqm::Time;

/// RFC 5681 / RFC 6675's DupThresh.
pub const DUP_THRESH: u32 = 3;

/// A loss-recovery algorithm: it processes every ACK of an established connection (growing the
/// window through the sender's congestion controller outside recovery) and forgets its episode
/// on a retransmission timeout.
pub trait Recovery: std::fmt::Debug + Send {
    /// The name used in `[tcp] recovery`.
    fn name(&self) -> &'static str;

    /// Whether the sender keeps a SACK scoreboard for this recovery.
    fn uses_sack(&self) -> bool {
        false
    }

    /// Whether, outside recovery, the sender's window limits the segments in flight (SACKed
    /// ones not counted) rather than the span from snd_una ([`Sender::send_allowed`]).
    fn window_by_pipe(&self) -> bool {
        false
    }

    /// Whether the sender records each segment's last transmission time for this recovery
    /// ([`rack::SentRecord`]).
    fn keeps_send_times(&self) -> bool {
        false
    }

    /// Whether the recovery marks lost segments in the delivery-rate state itself
    /// ([`crate::tcp::rate::RateState::mark_seg_lost`], RACK's time-based marks) instead of the
    /// rate state's RFC 6675 IsLost.
    fn marks_losses(&self) -> bool {
        false
    }

    /// The pacing clock released the sender in recovery under a controller that sets cwnd itself
    /// (BBR): sends what the recovery chooses while in flight < cwnd; `false` when this recovery
    /// leaves it to the sender's RFC 6675 NextSeg.
    fn send_paced_in_recovery(
        &mut self,
        _s: &mut Sender,
        _now: Time,
        _out: &mut Vec<Packet>,
    ) -> bool {
        false
    }

    /// The sender's one timer expired while the recovery had it armed for its own purpose
    /// (RACK's reordering timer, TLP's probe timeout): returns whether it handled the expiry
    /// (else it is the retransmission timeout).
    fn on_timer(&mut self, _s: &mut Sender, _now: Time, _out: &mut Vec<Packet>) -> bool {
        false
    }

    /// The sender's own send loop ([`Sender::send_allowed`], after a timeout) retransmitted the
    /// head at `now` (RACK restarts the RTO, as Linux's `tcp_xmit_retransmit_queue`).
    fn head_retransmitted(&mut self, _s: &mut Sender, _now: Time) {}

    /// Processes an ACK; segments to send go to `out`.
    fn on_ack(&mut self, s: &mut Sender, ack: &Packet, now: Time, out: &mut Vec<Packet>);

    /// The retransmission timer expired at `now` (the sender has already left recovery and set
    /// ssthresh): what the recovery must remember of it.
    fn on_timeout(&mut self, s: &mut Sender, now: Time);
}

/// The recovery `kind` names (`[tcp] recovery`).
pub fn build(kind: RecoveryKind) -> Box<dyn Recovery> {
    match kind {
        RecoveryKind::Reno => Box::new(Reno),
        RecoveryKind::NewReno => Box::new(NewReno::default()),
        RecoveryKind::Sack => Box::new(Sack::default()),
        RecoveryKind::Rack => Box::new(Rack::default()),
    }
}
