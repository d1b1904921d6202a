//! Reno congestion control (RFC 5681 s. 3.1): slow start adds one segment per ACK (eq. 2),
//! congestion avoidance 1/cwnd per ACK (eq. 3), ssthresh = max(FlightSize / 2, 2) on a
//! congestion event (eq. 4).

use super::{AckSample, CongestionControl};
use aqm::Time;

/// RFC 5681's window rules; no state of its own.
#[derive(Clone, Debug, Default)]
pub struct Reno;

/// ssthresh after a congestion event: max(FlightSize / 2, 2 segments) (RFC 5681 eq. 4).
#[inline]
pub fn halve(flight: u32) -> f64 {
    (flight as f64 / 2.0).max(2.0)
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    #[inline]
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, _s: &AckSample) -> f64 {
        // One increase per ACK, whatever it covers (as ns-2's Reno and the previous aqmlab
        // sender; RFC 5681 s. 3.1 allows at most SMSS per ACK in slow start).
        if cwnd < ssthresh {
            cwnd + 1.0 // slow start, RFC 5681 eq. 2
        } else {
            cwnd + 1.0 / cwnd // congestion avoidance, RFC 5681 eq. 3
        }
    }

    #[inline]
    fn on_congestion(&mut self, _cwnd: f64, flight: u32, _now: Time) -> f64 {
        halve(flight)
    }
}

/// Reno's window rules with ns-3.44's sending on partial ACKs and its PRR (`cc = "newreno-ns3"`, a
/// cross-check model): the aqmlab side of ns-3's `TcpNewReno` flows where a cross-check gives
/// the controller beside them ns-3's socket rules (`ledbat-ns3`; docs/crosscheck-ns3.md s.
/// 3.2). The rule is `TcpSocketBase`'s, so ns-3 applies it whatever the congestion control
/// ([`CongestionControl::sends_on_partial_ack`]).
#[derive(Clone, Debug, Default)]
pub struct RenoNs3;

impl CongestionControl for RenoNs3 {
    fn name(&self) -> &'static str {
        "newreno-ns3"
    }

    #[inline]
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        Reno.on_ack(cwnd, ssthresh, s)
    }

    #[inline]
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        Reno.on_congestion(cwnd, flight, now)
    }

    fn sends_on_partial_ack(&self) -> bool {
        true
    }

    fn uses_ns3_prr(&self) -> bool {
        true
    }
}
