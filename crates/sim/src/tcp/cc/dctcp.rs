//! DCTCP (RFC 8257; Linux `net/ipv4/tcp_dctcp.c`): Reno's window growth with an ECN response
//! in proportion to the extent of congestion.
//!
//! - s. 3.3: over each window of data (one observation window: until `snd_una` passes the
//!   `snd_nxt` of the window's start, as Linux's `!before(snd_una, next_seq)`), count the segments acknowledged and those acknowledged
//!   with ECE; at its end alpha = (1 - g) alpha + g F, F = the fraction with ECE, g = 1/16.
//!   Alpha starts at 1 (Linux's `dctcp_alpha_on_init`, the conservative choice of s. 3.3).
//!   A duplicate ACK counts one segment (as Linux counts it one MSS).
//! - s. 3.3: on ECE, at most once per window (the sender's RFC 3168 rule), cwnd = cwnd
//!   (1 - alpha / 2), and ssthresh the same.
//! - s. 3.4: on a loss, as conventional TCP: ssthresh = max(cwnd / 2, 2) (Linux's
//!   `dctcp_react_to_loss`).
//! - s. 3.2: the receiver echoes CE packet by packet (the two-state machine with delayed ACKs
//!   is in [`crate::tcp::receiver`]), asked for through
//!   [`CongestionControl::per_packet_ce_echo`].
//!
//! Floating-point alpha (Linux keeps it in 1/1024ths): the same recurrence without rounding.

use super::{AckSample, CongestionControl};
use aqm::Time;

/// Estimation gain g (RFC 8257 s. 4.2: 1/16).
pub const G: f64 = 1.0 / 16.0;

/// DCTCP's state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Estimate of the fraction of segments marked (RFC 8257 DCTCP.Alpha).
    pub alpha: f64,
    /// Segments acknowledged in the current observation window (DCTCP.BytesAcked, in segments).
    pub acked: u64,
    /// Those acknowledged with ECE (DCTCP.BytesMarked).
    pub marked: u64,
    /// End of the observation window (DCTCP.WindowEnd): a segment number.
    pub window_end: u32,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack_event(&mut self, s: &AckSample) {
        // RFC 8257 s. 3.3 steps 1-7.
        // The segments acknowledged, and those CE-marked (all of them when the ACK carries
        // DCTCP's per-packet echo; AccECN's count when negotiated).
        self.acked += s.delivered as u64;
        self.marked += s.ce as u64;
        if s.snd_una >= self.window_end {
            let f = if self.acked > 0 {
                self.marked as f64 / self.acked as f64
            } else {
                0.0
            };
            self.alpha = (1.0 - G) * self.alpha + G * f;
            self.window_end = s.snd_nxt;
            self.acked = 0;
            self.marked = 0;
        }
    }

    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        super::reno::Reno.on_ack(cwnd, ssthresh, s)
    }

    fn on_congestion(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        (cwnd / 2.0).max(2.0)
    }

    fn on_ecn(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        (cwnd * (1.0 - self.alpha / 2.0)).max(2.0)
    }

    fn per_packet_ce_echo(&self) -> bool {
        true
    }

    fn ecn_alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u32, ece: bool, snd_una: u32, snd_nxt: u32) -> AckSample {
        AckSample {
            acked: delivered,
            delivered,
            ece,
            ce: if ece { delivered } else { 0 },
            snd_una,
            snd_nxt,
            ..AckSample::default()
        }
    }

    /// Feeds one window of `n` segments from `start`, the first `marked` of them with ECE, one
    /// ACK each, while the sender has sent up to `start + 2n` (the next window's end).
    fn window(d: &mut Dctcp, start: u32, n: u32, marked: u32) {
        for k in 0..n {
            d.on_ack_event(&ack(1, k < marked, start + k + 1, start + 2 * n));
        }
    }

    #[test]
    fn alpha_after_windows_with_a_given_ce_fraction() {
        let mut d = Dctcp {
            alpha: 0.0,
            window_end: 120,
            ..Dctcp::default()
        };
        // A window of 20 with 5 marked: F = 0.25; alpha = 15/16 x 0 + 1/16 x 0.25 = 0.015625.
        window(&mut d, 100, 20, 5);
        assert!((d.alpha - 0.015_625).abs() < 1e-12, "{}", d.alpha);
        // The next window (ends at 140) all marked: alpha = 15/16 x 0.015625 + 1/16 =
        // 0.0146484375 + 0.0625 = 0.0771484375.
        window(&mut d, 120, 20, 20);
        assert!((d.alpha - 0.077_148_437_5).abs() < 1e-12, "{}", d.alpha);
        // Alpha moves only at the window's end: mid-window ACKs leave it.
        let a = d.alpha;
        d.on_ack_event(&ack(1, true, 141, 200));
        assert_eq!(d.alpha, a);
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        // With F = 0.5 every window, alpha -> 0.5: (1 - g)^k decays from 1 to 0.5 + 0.5 x
        // (15/16)^k; after 100 windows within 0.5 x (15/16)^100 = 0.00078.
        let mut d = Dctcp {
            window_end: 10,
            ..Dctcp::default()
        };
        for w in 0..100u32 {
            window(&mut d, 10 * w, 10, 5);
        }
        let want = 0.5 + 0.5 * (15.0f64 / 16.0).powi(100);
        assert!((d.alpha - want).abs() < 1e-9, "{} vs {want}", d.alpha);
    }

    #[test]
    fn the_window_falls_by_alpha_over_two_on_ece_and_by_half_on_loss() {
        let mut d = Dctcp {
            alpha: 0.25,
            ..Dctcp::default()
        };
        // RFC 8257 s. 3.3: cwnd 40 x (1 - 0.125) = 35.
        assert_eq!(d.on_ecn(40.0, 40, 0), 35.0);
        // s. 3.4: a loss halves as conventional TCP.
        assert_eq!(d.on_congestion(40.0, 40, 0), 20.0);
        // Alpha 1 (every segment marked): halve, as Reno on ECN.
        d.alpha = 1.0;
        assert_eq!(d.on_ecn(40.0, 40, 0), 20.0);
    }
}
