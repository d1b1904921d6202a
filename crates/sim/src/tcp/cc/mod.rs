//! Congestion control: how the window grows on ACKs and what it falls to on a congestion event,
//! one algorithm per file behind [`CongestionControl`] (as Linux's `tcp_congestion_ops` and
//! quiche's congestion hooks keep it apart from loss recovery). Windows are in segments.

pub mod cubic;
pub mod reno;

pub use cubic::Cubic;
pub use reno::Reno;

use aqm::Time;

/// What the sender tells its congestion controller and what it asks of it.
pub trait CongestionControl {
    /// `acked` segments newly acknowledged at `now` outside loss recovery; returns the new
    /// window. `srtt_ns` is the smoothed RTT (0 before the first sample), `min_rtt_ns` the
    /// smallest RTT sample.
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, acked: u32, now: Time, min_rtt_ns: f64) -> f64;
    /// A congestion event (loss detected, ECN echo or timeout) with window `cwnd` and
    /// `flight` segments outstanding; returns the new ssthresh.
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64;
    /// A retransmission timeout (after [`CongestionControl::on_congestion`]).
    fn on_timeout(&mut self) {}
}

/// The controllers aqmlab has (an enum rather than a trait object: one call per ACK, no
/// indirection on the simulator's hot path).
#[derive(Clone, Debug)]
pub enum Cc {
    /// RFC 5681.
    Reno(Reno),
    /// RFC 9438.
    Cubic(Cubic),
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, acked: u32, now: Time, min_rtt_ns: f64) -> f64 {
        match self {
            Cc::Reno(c) => c.on_ack(cwnd, ssthresh, acked, now, min_rtt_ns),
            Cc::Cubic(c) => c.on_ack(cwnd, ssthresh, acked, now, min_rtt_ns),
        }
    }

    #[inline]
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        match self {
            Cc::Reno(c) => c.on_congestion(cwnd, flight, now),
            Cc::Cubic(c) => c.on_congestion(cwnd, flight, now),
        }
    }

    fn on_timeout(&mut self) {
        match self {
            Cc::Reno(c) => c.on_timeout(),
            Cc::Cubic(c) => c.on_timeout(),
        }
    }
}
