//! TCP Prague, the L4S team's scalable congestion control (draft-briscoe-iccrg-prague-congestion-
//! control; L4STeam/linux `net/ipv4/tcp_prague.c`), in the subset aqmlab models:
//!
//! - ECT(1) on every data segment (RFC 9331 s. 4.1; `prague_init` sets `TCP_ECN_ECT_1`), so a
//!   DualQ AQM classifies it into its L4S queue; pacing on (`SK_PACING_NEEDED`).
//! - A DCTCP-like estimate of the fraction of CE-marked segments, updated once per round trip
//!   with gain g = 1/16 (`prague_update_alpha`; the draft s. 2.3.1), starting at 1
//!   (`upscaled_alpha = PRAGUE_MAX_ALPHA`, the conservative start).
//! - On ECN feedback, at most once per round trip, cwnd = cwnd (1 - alpha / 2) (the draft
//!   s. 2.3.2; DCTCP's rule, RFC 8257 s. 3.3).
//! - Additive increase in congestion avoidance, for the segments acknowledged without a CE echo
//!   only (the draft s. 2.3.3), scaled for reduced RTT dependence by the `RTT_CONTROL_RATE`
//!   rule (`prague_rate_scaled_ai_ack_increase`, the draft s. 2.3.6): below the target RTT
//!   (25 ms, `prague_rtt_target`) the per-RTT increase is (srtt / target)^2 segments, so the
//!   rate grows by one segment per target RTT per target RTT whatever the flow's own RTT; at or
//!   above the target, one segment per RTT (Reno). Linux applies it after
//!   `prague_rtt_transition` rounds (default 100): here too.
//! - Slow start as Reno, left on the first ECN echo; a loss halves the window (Reno's
//!   response, `prague_ssthresh` on loss).
//! - Pacing at 100% of cwnd / srtt in congestion avoidance and 200% in slow start
//!   (`prague_update_pacing_rate`).
//!
//! Not modelled (stated in docs/l4s.md): AccECN feedback (the simulator's receiver echoes CE per
//! packet as DCTCP's, RFC 8257 s. 3.2, which carries the same per-segment CE information when
//! no ACK is lost); the classic-ECN-bottleneck fallback (the draft s. 2.4.2: Prague here always
//! responds to ECN as a scalable sender); fractional-window and TSO burst control.

use super::{AckSample, CongestionControl, Dctcp};
use aqm::{Time, NS_PER_SEC};

/// Estimation gain g (the draft s. 2.3.1; tcp_prague.c `prague_shift_g` = 4: 1/16): DCTCP's.
pub const G: f64 = super::dctcp::G;

/// The target RTT of the RTT-independence rule, ns (tcp_prague.c `prague_rtt_target`: 25 ms).
pub const RTT_TARGET_NS: f64 = 25e6;

/// Rounds before the RTT-independence rule applies (tcp_prague.c `prague_rtt_transition`: 100).
pub const RTT_TRANSITION: u64 = 100;

/// Prague's state.
#[derive(Clone, Debug)]
pub struct Prague {
    /// The CE-fraction estimate, kept as DCTCP keeps it (RFC 8257 s. 3.3: alpha from 1, one
    /// update per window of data, gain [`G`]).
    pub est: Dctcp,
    /// Rounds completed.
    pub rounds: u64,
    /// Window and smoothed RTT last seen (for the pacing rate), segments and ns.
    last_cwnd: f64,
    last_srtt: f64,
    in_slow_start: bool,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            est: Dctcp::default(),
            rounds: 0,
            last_cwnd: 0.0,
            last_srtt: 0.0,
            in_slow_start: true,
        }
    }
}

impl Prague {
    /// The additive increase per round trip, segments: (srtt / target)^2 below the target RTT
    /// once the transition rounds are over, else 1 (`RTT_CONTROL_RATE`).
    pub fn ai_per_rtt(&self, srtt_ns: f64) -> f64 {
        if self.rounds < RTT_TRANSITION || srtt_ns <= 0.0 || srtt_ns >= RTT_TARGET_NS {
            1.0
        } else {
            (srtt_ns / RTT_TARGET_NS).powi(2)
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_ack_event(&mut self, s: &AckSample) {
        self.last_srtt = s.srtt_ns;
        self.rounds += (s.snd_una >= self.est.window_end) as u64;
        self.est.on_ack_event(s);
    }

    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        let out = if cwnd < ssthresh {
            self.in_slow_start = true;
            cwnd + 1.0
        } else {
            self.in_slow_start = false;
            if s.ece {
                cwnd // no increase for CE-echoed segments
            } else {
                cwnd + self.ai_per_rtt(s.srtt_ns) * s.acked.max(1) as f64 / cwnd
            }
        };
        self.last_cwnd = out;
        out
    }

    fn on_congestion(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        self.in_slow_start = false;
        self.last_cwnd = (cwnd / 2.0).max(2.0);
        self.last_cwnd
    }

    fn on_ecn(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        self.in_slow_start = false;
        self.last_cwnd = (cwnd * (1.0 - self.est.alpha / 2.0)).max(2.0);
        self.last_cwnd
    }

    fn per_packet_ce_echo(&self) -> bool {
        true
    }

    fn ecn_alpha(&self) -> Option<f64> {
        Some(self.est.alpha)
    }

    fn pacing_rate(&self) -> Option<f64> {
        if self.last_srtt <= 0.0 || self.last_cwnd <= 0.0 {
            return None;
        }
        let ratio = if self.in_slow_start { 2.0 } else { 1.0 };
        Some(ratio * self.last_cwnd * NS_PER_SEC as f64 / self.last_srtt)
    }

    fn l4s(&self) -> bool {
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u32, ece: bool, snd_una: u32, snd_nxt: u32, srtt_ns: f64) -> AckSample {
        AckSample {
            acked: delivered,
            delivered,
            ece,
            snd_una,
            snd_nxt,
            srtt_ns,
            ..AckSample::default()
        }
    }

    /// Alpha over rounds with a given CE fraction, from 1 (the conservative start): a round of
    /// 20 with 5 echoed gives F = 0.25, alpha = 15/16 + 0.25/16 = 0.953125; the reduction on
    /// ECN is then cwnd (1 - alpha / 2): 40 -> 40 x 0.5234375 = 20.9375.
    #[test]
    fn alpha_per_round_and_the_proportional_reduction() {
        let mut p = Prague::default();
        p.est.window_end = 120;
        for k in 0..20 {
            p.on_ack_event(&ack(1, k < 5, 101 + k, 140, 20e6));
        }
        assert!((p.est.alpha - 0.953_125).abs() < 1e-12, "{}", p.est.alpha);
        assert_eq!(p.rounds, 1);
        assert!((p.on_ecn(40.0, 40, 0) - 20.9375).abs() < 1e-12);
    }

    /// RTT independence (RTT_CONTROL_RATE): after 100 rounds, a 5 ms flow adds (5/25)^2 = 0.04
    /// segment per RTT, so its rate (cwnd / RTT) grows by 0.04 / (5 ms)^2 = 1600 segments/s
    /// per second, as a 25 ms flow adding one segment per RTT: 1 / (25 ms)^2 = 1600. Above the
    /// target, Reno's one segment per RTT.
    #[test]
    fn additive_increase_is_rtt_independent_below_the_target() {
        let mut p = Prague::default();
        assert_eq!(p.ai_per_rtt(5e6), 1.0, "not before the transition rounds");
        p.rounds = RTT_TRANSITION;
        assert!((p.ai_per_rtt(5e6) - 0.04).abs() < 1e-12);
        let growth = |rtt_ns: f64, ai: f64| ai / (rtt_ns / 1e9).powi(2);
        assert!((growth(5e6, p.ai_per_rtt(5e6)) - growth(25e6, 1.0)).abs() < 1e-6);
        assert_eq!(p.ai_per_rtt(40e6), 1.0);
        // In congestion avoidance, 10 ACKs of one segment at cwnd 10 add ai_per_rtt in total.
        let mut w = 10.0;
        for _ in 0..10 {
            w = p.on_ack(w, 5.0, &ack(1, false, 0, 0, 5e6));
        }
        assert!((w - 10.04).abs() < 1e-3, "{w}");
        // A CE-echoed ACK adds nothing.
        assert_eq!(p.on_ack(10.0, 5.0, &ack(1, true, 0, 0, 5e6)), 10.0);
    }

    /// Pacing: 200% of cwnd / srtt in slow start, 100% in congestion avoidance.
    #[test]
    fn pacing_rate_ratios() {
        let mut p = Prague::default();
        p.on_ack_event(&ack(1, false, 1, 10, 20e6));
        p.on_ack(10.0, 100.0, &ack(1, false, 1, 10, 20e6)); // slow start: cwnd 11
        assert!((p.pacing_rate().unwrap() - 2.0 * 11.0 / 0.02).abs() < 1e-6);
        p.on_ack(20.0, 10.0, &ack(1, false, 1, 10, 20e6)); // CA: 20 + 1/20
        assert!((p.pacing_rate().unwrap() - 20.05 / 0.02).abs() < 1e-6);
        assert!(p.l4s() && p.needs_pacing() && p.per_packet_ce_echo());
    }
}
