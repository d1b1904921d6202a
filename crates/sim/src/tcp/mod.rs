//! TCP at segment level: a sender whose congestion control ([`cc`]) and loss recovery
//! ([`recovery`]) are separate parts, and a receiver ([`receiver`]) with cumulative ACKs and SACK
//! blocks. Sequence numbers count segments.
//!
//! Variants (`[tcp] variant`, [`TcpVariant`]):
//! - `reno`: RFC 5681 congestion control and fast recovery (ends on the first new ACK);
//! - `newreno`: RFC 5681 + NewReno recovery (RFC 6582 s. 3.2, partial ACKs, `recover`);
//! - `sack`: RFC 5681 congestion control + SACK loss recovery (RFC 6675 scoreboard, IsLost,
//!   NextSeg, pipe) with Proportional Rate Reduction (RFC 6937, PRR-SSRB);
//! - `cubic`: CUBIC (RFC 9438) + SACK recovery + PRR: Linux's default.
//!
//! The variants are presets ([`TcpVariant::preset`]) of a congestion controller, chosen by name
//! from [`cc::REGISTRY`] (`[tcp] cc`: `reno`, `cubic`, `dctcp`, `ledbat`), and a loss recovery
//! (`[tcp] recovery`: `reno`, `newreno`, `sack`, `rack`); either half can be set apart. Optional pacing
//! ([`pacing`], Linux's internal pacing) and sending-host timing noise ([`send_jitter`]).
//!
//! Common to all: retransmission timer RFC 6298 (s. 2 estimator, s. 5 timer management,
//! backoff); ECN RFC 3168 s. 6.1 (one reduction per window, CWR/ECE) or AccECN feedback
//! (RFC 9768, [`accecn`], negotiated in the handshake); delayed ACKs RFC 5681
//! s. 4.2; RTT samples from every ACK through the echoed timestamp (RFC 7323 s. 4.1; the header
//! bytes of the option are counted when `timestamps` is on). Optional: the three-way handshake
//! ([`handshake`]; off, a flow sends at its start time as ns-2's one-way agents do) and limited
//! transmit ([`recovery::limited`], RFC 3042).

pub mod accecn;
pub mod cc;
pub mod handshake;
pub mod pacing;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rwnd;
pub mod send_jitter;
pub mod sender;

#[cfg(test)]
mod accecn_tests;
#[cfg(test)]
mod sack_compress_tests;
#[cfg(test)]
mod tests;

pub use crate::config::TcpVariant;
pub use receiver::{AckReason, Receiver, ReceiverStats};
pub use sender::Sender;

use aqm::{Precedence, Time, NS_PER_SEC};

/// Logarithmic RTT histogram for percentiles: 50 buckets per decade from 1 us to 1000 s.
pub const RTT_BUCKETS_PER_DECADE: f64 = 50.0;
/// Number of RTT histogram buckets.
pub const RTT_BUCKETS: usize = 450;

/// Sender counters.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments sent (including retransmissions).
    pub segs_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// SYNs sent again after the SYN's timer expired (not counted in `timeouts`).
    pub syn_retransmits: u64,
    /// New segments sent by limited transmit (RFC 3042).
    pub limited_transmits: u64,
    /// Time the receive window stopped new data, ns, closed intervals only
    /// ([`Sender::rwnd_limited_ns`] adds the open one).
    pub rwnd_limited_ns: u64,
    /// Window reductions on ECN echo.
    pub ecn_reductions: u64,
    /// RTT samples taken.
    pub rtt_n: u64,
    /// Their sum, ns.
    pub rtt_sum: f64,
    /// Smallest, ns.
    pub rtt_min: f64,
    /// Largest, ns.
    pub rtt_max: f64,
    /// Histogram of samples (see [`RTT_BUCKETS_PER_DECADE`]) over the buckets seen.
    pub rtt_hist: crate::sparse_hist::SparseHist,
}

/// Token-bucket edge marker: packets within the profile are `In`.
#[derive(Clone, Debug)]
pub struct Marker {
    rate_bps: f64,
    depth: f64,
    tokens: f64,
    last: Time,
}

impl Marker {
    /// A full bucket.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        Marker {
            rate_bps: rate_bps as f64,
            depth: burst_bytes as f64,
            tokens: burst_bytes as f64,
            last: 0,
        }
    }

    /// Colours a packet of `size` bytes sent at `now`.
    pub fn colour(&mut self, size: u32, now: Time) -> Precedence {
        let dt = (now - self.last) as f64 / NS_PER_SEC as f64;
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate_bps / 8.0).min(self.depth);
        if self.tokens >= size as f64 {
            self.tokens -= size as f64;
            Precedence::In
        } else {
            Precedence::Out
        }
    }
}
