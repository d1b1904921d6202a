//! CUBIC (RFC 9438, as Linux's `net/ipv4/tcp_cubic.c` runs it): beta 0.7, C 0.4, fast
//! convergence, the Reno-friendly region; windows in segments, time in seconds.
//!
//! - s. 4.2: W_cubic(t) = C (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C) (eq. 1-2);
//!   per ACK in congestion avoidance cwnd += (target - cwnd) / cwnd with target =
//!   W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd] (s. 4.4-4.5). RTT is the minimum RTT, as
//!   Linux's `delay_min`.
//! - s. 4.3: W_est += alpha_cubic x acked / cwnd, alpha_cubic = 3 (1 - beta) / (1 + beta) until
//!   W_est reaches cwnd_prior, 1 after; when W_cubic(t) < W_est, cwnd = W_est.
//! - s. 4.6-4.7: on a congestion event ssthresh = max(cwnd beta, 2) (Linux uses cwnd, not the
//!   flight size); W_max = cwnd (1 + beta) / 2 when cwnd < the previous W_max (fast
//!   convergence), else cwnd; a new epoch starts at the next ACK in congestion avoidance.
//! - The window grows by the segments an ACK of new data newly delivers
//!   ([`super::AckSample::delivered`]: SACKed earlier ones not again), as Linux's `acked_sacked`.
//! - Slow start grows by the segments acknowledged up to ssthresh (Linux `tcp_slow_start`; the
//!   acknowledgements beyond ssthresh are not carried into congestion avoidance). HyStart is not
//!   modelled (a simplification: Linux leaves slow start earlier on a delay increase).

use super::{AckSample, CongestionControl};
use aqm::{Time, NS_PER_SEC};

/// Multiplicative decrease factor (RFC 9438 s. 4.6).
pub const BETA: f64 = 0.7;
/// Cubic scaling constant, segments / s^3 (RFC 9438 s. 5).
pub const C: f64 = 0.4;

/// CUBIC's state.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// Window just before the last reduction (after fast convergence), segments.
    pub w_max: f64,
    /// Time for W_cubic to reach W_max from the epoch start, s.
    pub k: f64,
    /// Start of the current congestion-avoidance epoch.
    pub epoch_start: Option<Time>,
    /// W_cubic's plateau of this epoch (W_max, or cwnd when above it).
    pub origin: f64,
    /// The Reno-friendly estimate W_est, segments.
    pub w_est: f64,
    /// cwnd before the last reduction.
    pub cwnd_prior: f64,
    /// Fast convergence on.
    pub fast_convergence: bool,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic {
            w_max: 0.0,
            k: 0.0,
            epoch_start: None,
            origin: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
            fast_convergence: true,
        }
    }
}

/// W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 eq. 1).
#[inline]
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

/// K = cbrt((W_max - cwnd_epoch) / C) (RFC 9438 eq. 2), 0 when the window is above W_max.
#[inline]
pub fn k_of(w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / C).cbrt()
}

/// alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 eq. 4): Reno's average rate at beta 0.7.
pub fn alpha_cubic() -> f64 {
    3.0 * (1.0 - BETA) / (1.0 + BETA)
}

impl Cubic {
    fn start_epoch(&mut self, cwnd: f64, now: Time) {
        self.epoch_start = Some(now);
        self.w_est = cwnd;
        if cwnd < self.w_max {
            self.k = k_of(self.w_max, cwnd);
            self.origin = self.w_max;
        } else {
            self.k = 0.0;
            self.origin = cwnd;
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        // The segments this ACK newly delivered (Linux's acked_sacked, ns-3's segmentsAcked).
        let (acked, now, min_rtt_ns) = (s.delivered, s.now, s.min_rtt_ns);
        if cwnd < ssthresh {
            // Linux tcp_slow_start: grow by the segments acknowledged, not past ssthresh.
            return (cwnd + acked as f64).min(ssthresh.max(cwnd + 1.0));
        }
        if self.epoch_start.is_none() {
            self.start_epoch(cwnd, now);
        }
        let t = (now - self.epoch_start.unwrap_or(now)) as f64 / NS_PER_SEC as f64;
        let rtt = min_rtt_ns / NS_PER_SEC as f64;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            alpha_cubic()
        };
        self.w_est += alpha * acked as f64 / cwnd;
        if w_cubic(t, self.k, self.origin) < self.w_est {
            return self.w_est.max(cwnd); // Reno-friendly region (s. 4.3)
        }
        let target = w_cubic(t + rtt, self.k, self.origin).clamp(cwnd, 1.5 * cwnd);
        cwnd + (target - cwnd) / cwnd * acked as f64
    }

    fn on_congestion(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        self.epoch_start = None;
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        (cwnd * BETA).max(2.0)
    }

    fn on_timeout(&mut self) {
        self.epoch_start = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// An ACK of `acked` segments at `now` with minimum RTT `min_rtt_ns`.
    fn ack(acked: u32, now: Time, min_rtt_ns: f64) -> AckSample {
        AckSample {
            now,
            acked,
            delivered: acked,
            min_rtt_ns,
            ..AckSample::default()
        }
    }

    #[test]
    fn constants_and_k_by_hand() {
        // alpha = 3 * 0.3 / 1.7 = 0.5294; K for W_max 100 after a reduction to 70: cbrt(75).
        assert!((alpha_cubic() - 0.9 / 1.7).abs() < 1e-12);
        assert!((k_of(100.0, 70.0) - 4.217_163_3).abs() < 1e-6);
        assert_eq!(w_cubic(4.0, 4.0, 100.0), 100.0);
        // W_cubic(0) = W_max - C K^3 = cwnd_epoch.
        assert!((w_cubic(0.0, k_of(100.0, 70.0), 100.0) - 70.0).abs() < 1e-9);
    }

    #[test]
    fn slow_start_grows_by_the_acked_segments_up_to_ssthresh() {
        let mut c = Cubic::default();
        assert_eq!(c.on_ack(10.0, 100.0, &ack(3, 0, 0.0)), 13.0);
        // A cumulative ACK of 30 segments after a timeout (cwnd 2, ssthresh 7): 7, not 32.
        assert_eq!(c.on_ack(2.0, 7.0, &ack(30, 0, 0.0)), 7.0);
        assert!(c.epoch_start.is_none(), "no epoch in slow start");
    }

    #[test]
    fn a_reduction_sets_ssthresh_and_fast_convergence() {
        let mut c = Cubic::default();
        assert_eq!(c.on_congestion(100.0, 100, 0), 70.0);
        assert_eq!(c.w_max, 100.0);
        // A second loss below W_max: W_max = 80 x 1.7 / 2 = 68 (s. 4.7).
        assert_eq!(c.on_congestion(80.0, 80, 0), 56.0);
        assert!((c.w_max - 68.0).abs() < 1e-12);
        assert_eq!(c.on_congestion(2.0, 2, 0), 2.0, "ssthresh at least 2");
    }

    /// Drives `c` from cwnd 70 (after a loss at 100) with one window of ACKs per RTT, spread
    /// evenly, and returns (t, cwnd) after each RTT.
    fn drive(c: &mut Cubic, mut cwnd: f64, rtt: Time, rtts: usize) -> Vec<(f64, f64)> {
        let mut now = 0;
        let mut out = Vec::new();
        for _ in 0..rtts {
            let n = cwnd.floor().max(1.0) as u64;
            for i in 0..n {
                cwnd = c.on_ack(cwnd, 1.0, &ack(1, now + rtt * i / n, rtt as f64));
            }
            now += rtt;
            out.push((now as f64 / 1e9, cwnd));
        }
        out
    }

    #[test]
    fn window_follows_w_cubic_of_t_in_the_cubic_region() {
        // Loss at 100: cwnd 70, K = cbrt(75) = 4.217 s, RTT 100 ms. W_cubic(t) by hand:
        // t = 1: 0.4 (1 - 4.217)^3 + 100 = 86.69; t = 3: 99.28; t = K: 100; t = 5: 100.19.
        // The window follows W_cubic(t + RTT) one RTT late, so it sits on W_cubic(t) within a
        // segment or two; the Reno estimate (70 + 0.53 per RTT: 96.5 at t = 5) stays below
        // until about t = 5.8, when it passes W_cubic and takes over (Reno-friendly region).
        let mut c = Cubic::default();
        let cwnd = c.on_congestion(100.0, 100, 0);
        let trace = drive(&mut c, cwnd, 100 * MS, 51);
        for (t, want) in [(1.0, 86.69), (3.0, 99.28), (4.2, 100.0), (5.0, 100.19)] {
            let got = trace
                .iter()
                .find(|(tt, _)| (tt - t).abs() < 0.05)
                .unwrap()
                .1;
            assert!(
                (got - want).abs() < 1.5,
                "t = {t}: cwnd {got}, W_cubic {want}"
            );
        }
    }

    #[test]
    fn short_rtts_put_cubic_in_the_reno_friendly_region() {
        // W_max 20, cwnd 14, K = cbrt(15) = 2.47 s, RTT 1 ms. In 50 ms W_cubic(0.05) =
        // 20 + 0.4 (0.05 - 2.47)^3 = 14.3, while W_est, by hand from s. 4.3: +0.529 per RTT
        // until it reaches cwnd_prior = 20 (12 RTTs: 14 + 12 x 0.529 = 20.35), then +1 per RTT:
        // ~ 20.35 + 38 = 58 after 50 RTTs. cwnd must be W_est.
        let mut c = Cubic::default();
        let cwnd = c.on_congestion(20.0, 20, 0);
        assert_eq!(cwnd, 14.0);
        let trace = drive(&mut c, cwnd, MS, 50);
        let (t, w) = trace[49];
        assert!(w_cubic(t, c.k, c.origin) < c.w_est);
        assert!((w - c.w_est).abs() < 1e-9);
        assert!((w - 58.0).abs() < 2.0, "cwnd {w}");
    }
}
