//! TCP Prague, the L4S team's scalable congestion control (draft-briscoe-iccrg-prague-congestion-
//! control; L4STeam/linux `net/ipv4/tcp_prague.c`, read at commit 02573a21), in the parts that
//! shape a flow's window and rate:
//!
//! - **AccECN feedback** (`TCP_CONG_NEEDS_ACCECN`): the sender asks for AccECN in its SYN
//!   (RFC 9768, [`crate::tcp::accecn`]) and counts the CE-marked segments of each ACK from the
//!   ACE field ([`AckSample::ce`]).
//! - **Classic-ECN fallback** as the kernel does it: Prague takes no RFC 3168 feedback
//!   (`TCP_CONG_NO_FALLBACK_RFC3168`: a classic-ECN SYN-ACK turns ECN off), and without AccECN
//!   `prague_init` switches the flow to `prague_reno`, Reno's window rules with Not-ECT packets
//!   and no pacing ([`CongestionControl::on_ecn_mode`]).
//! - ECT(1) on every data segment (RFC 9331 s. 4.1; `prague_init` sets `TCP_ECN_ECT_1`), so a
//!   DualQ AQM classifies it into its L4S queue; pacing on (`SK_PACING_NEEDED`).
//! - **Alpha**, the EWMA of the fraction of CE-marked segments, once per round trip with gain
//!   g = 1/16 (`prague_update_alpha`; the draft s. 2.3.1): F = CE segments / segments delivered
//!   over the round, alpha = (1 - g) alpha + g F, from 1 (`PRAGUE_MAX_ALPHA`). Not updated before
//!   the first CE mark (`saw_ce`: "no proof that there's an AQM on the path"). Once RTT
//!   independence applies, an update also waits until the target RTT has passed since the last
//!   one (`prague_target_rtt_elapsed`).
//! - On CE feedback, at most once per round trip (the sender's CWR state), cwnd = cwnd
//!   (1 - alpha / 2) (`prague_enter_cwr`; the draft s. 2.3.2), and with RTT independence at
//!   most once per target RTT.
//! - Window growth per ACK for the segments delivered **without** CE, in and out of the CWR
//!   state (`prague_update_cwnd`: `acked -= ece_delta`): slow start one segment each, then
//!   `ai / cwnd` each, where ai is 1 or, for RTT independence (`RTT_CONTROL_RATE`,
//!   `prague_rate_scaled_ai_ack_increase`, the draft s. 2.3.6) once [`RTT_TRANSITION`] rounds
//!   after slow start have passed, (srtt / 25 ms)^2 below the 25 ms target, so the rate grows by
//!   one segment per target RTT per target RTT whatever the flow's own RTT.
//! - A loss halves the window (`prague_enter_loss`).
//! - Pacing at cwnd / srtt, doubled while cwnd < ssthresh / 2 (`prague_update_pacing_rate`).
//!
//! Simplified, so stated (docs/l4s.md): the window is the sender's, reduced at once on CE or
//! loss, where Linux keeps a fractional `frac_cwnd` and moves `snd_cwnd` towards it by one
//! segment per ACK; the classic-ECN-bottleneck detection (`prague_classic_ecn_detection`,
//! the draft s. 2.4.2) is not modelled, as the kernel's default leaves it off
//! (`prague_ecn_fallback = 0`); no TSO burst sizing (every segment is paced on its own).

use super::{AckSample, CongestionControl, Reno};
use crate::tcp::accecn::EcnMode;
use aqm::{Time, NS_PER_SEC};

/// Estimation gain g (the draft s. 2.3.1; tcp_prague.c `PRAGUE_SHIFT_G` = 4: 1/16).
pub const G: f64 = 1.0 / 16.0;

/// The target RTT of the RTT-independence rule, ns (tcp_prague.c `prague_rtt_target`: 25 ms).
pub const RTT_TARGET_NS: f64 = 25e6;

/// Rounds after slow start before the RTT-independence rule applies (tcp_prague.c
/// `DEFAULT_RTT_TRANSITION`, 500 at the commit read; earlier versions had 100 and 4).
pub const RTT_TRANSITION: u64 = 500;

/// Above this smoothed RTT no scaling is applied (tcp_prague.c `MAX_SCALED_RTT`: 100 ms).
pub const MAX_SCALED_RTT_NS: f64 = 100e6;

/// The smallest window after a reduction, segments (tcp_prague.c `MIN_CWND`).
pub const MIN_CWND: f64 = 2.0;

/// Prague's state.
#[derive(Clone, Debug)]
pub struct Prague {
    /// Alpha, the estimate of the fraction of segments CE-marked (from 1).
    pub alpha: f64,
    /// Rounds completed since slow start was left (tcp_prague.c `round`).
    pub rounds: u64,
    /// A CE mark has been seen (tcp_prague.c `saw_ce`).
    pub saw_ce: bool,
    /// AccECN was not negotiated: `prague_reno` (Reno, Not-ECT, unpaced).
    pub reno: bool,
    /// Segments delivered, and those CE-marked, since the flow's start (Linux `tp->delivered`,
    /// `tp->delivered_ce`).
    delivered: u64,
    delivered_ce: u64,
    /// Their values, and `snd_nxt`, when the current round began.
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u32,
    /// When alpha was last updated, and when the window was last reduced on CE, ns.
    alpha_stamp: Time,
    cwr_stamp: Option<Time>,
    /// Window, slow-start threshold and smoothed RTT last seen (for the pacing rate).
    last_cwnd: f64,
    last_ssthresh: f64,
    last_srtt: f64,
    in_slow_start: bool,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            alpha: 1.0,
            rounds: 0,
            saw_ce: false,
            reno: false,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            alpha_stamp: 0,
            cwr_stamp: None,
            last_cwnd: 0.0,
            last_ssthresh: f64::INFINITY,
            last_srtt: 0.0,
            in_slow_start: true,
        }
    }
}

/// One EWMA step of alpha with the round's CE fraction `f` (the draft s. 2.3.1).
#[inline]
pub fn ewma(alpha: f64, f: f64) -> f64 {
    ((1.0 - G) * alpha + G * f).min(1.0)
}

impl Prague {
    /// RTT independence applies: out of slow start, after [`RTT_TRANSITION`] rounds
    /// (`prague_is_rtt_indep`).
    pub fn rtt_indep(&self) -> bool {
        !self.in_slow_start && self.rounds >= RTT_TRANSITION
    }

    /// The additive increase per round trip, segments: (srtt / target)^2 below the target RTT
    /// once the transition rounds are over, else 1 (`RTT_CONTROL_RATE`).
    pub fn ai_per_rtt(&self, srtt_ns: f64) -> f64 {
        if self.rounds < RTT_TRANSITION
            || srtt_ns <= 0.0
            || srtt_ns > MAX_SCALED_RTT_NS
            || srtt_ns >= RTT_TARGET_NS
        {
            1.0
        } else {
            (srtt_ns / RTT_TARGET_NS).powi(2)
        }
    }

    /// The round trip is over (`prague_should_update_ewma`): `snd_una` has passed the round's
    /// `snd_nxt`, and with RTT independence the target RTT has passed since the last update.
    fn round_over(&self, s: &AckSample) -> bool {
        s.snd_una >= self.next_seq
            && (!self.rtt_indep() || s.now.saturating_sub(self.alpha_stamp) as f64 >= RTT_TARGET_NS)
    }

    /// `prague_update_alpha` and `prague_new_round`.
    fn end_round(&mut self, s: &AckSample) {
        if self.saw_ce {
            let ce = self.delivered_ce - self.old_delivered_ce;
            let n = (self.delivered - self.old_delivered).max(1);
            self.alpha = ewma(self.alpha, ce as f64 / n as f64);
            self.alpha_stamp = s.now;
        }
        self.next_seq = s.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !self.in_slow_start {
            self.rounds += 1;
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_ack_event(&mut self, s: &AckSample) {
        if self.reno {
            return;
        }
        self.last_srtt = s.srtt_ns;
        self.delivered += s.delivered as u64;
        self.delivered_ce += s.ce as u64;
        self.saw_ce |= s.ce > 0;
        if self.round_over(s) {
            self.end_round(s);
        }
    }

    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        if self.reno {
            return Reno.on_ack(cwnd, ssthresh, s);
        }
        self.last_ssthresh = ssthresh;
        self.in_slow_start = cwnd < ssthresh;
        // prague_update_cwnd: only the segments delivered without CE grow the window.
        let acked = s.delivered.saturating_sub(s.ce) as f64;
        let mut w = cwnd;
        let mut left = acked;
        if self.in_slow_start && left > 0.0 {
            // tcp_slow_start: up to ssthresh, the rest in congestion avoidance.
            let grown = (w + left).min(ssthresh);
            left -= grown - w;
            w = grown;
        }
        if left > 0.0 {
            w += self.ai_per_rtt(s.srtt_ns) * left / w;
        }
        self.last_cwnd = w;
        w
    }

    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        if self.reno {
            return Reno.on_congestion(cwnd, flight, now);
        }
        // prague_enter_loss: halve the window.
        self.in_slow_start = false;
        self.last_cwnd = (cwnd / 2.0).max(MIN_CWND);
        self.last_cwnd
    }

    fn on_ecn(&mut self, cwnd: f64, _flight: u32, now: Time) -> f64 {
        self.in_slow_start = false;
        // prague_enter_cwr: at most once per target RTT under RTT independence.
        if self.rtt_indep()
            && self
                .cwr_stamp
                .is_some_and(|t| (now.saturating_sub(t) as f64) < RTT_TARGET_NS)
        {
            return cwnd;
        }
        self.cwr_stamp = Some(now);
        self.last_cwnd = (cwnd * (1.0 - self.alpha / 2.0)).max(MIN_CWND);
        self.last_cwnd
    }

    fn ecn_alpha(&self) -> Option<f64> {
        (!self.reno).then_some(self.alpha)
    }

    fn pacing_rate(&self) -> Option<f64> {
        if self.reno || self.last_srtt <= 0.0 || self.last_cwnd <= 0.0 {
            return None;
        }
        let ratio = if self.last_cwnd < self.last_ssthresh / 2.0 {
            2.0
        } else {
            1.0
        };
        Some(ratio * self.last_cwnd * NS_PER_SEC as f64 / self.last_srtt)
    }

    fn l4s(&self) -> bool {
        !self.reno
    }

    fn needs_pacing(&self) -> bool {
        !self.reno
    }

    fn wants_accecn(&self) -> bool {
        true
    }

    fn on_ecn_mode(&mut self, mode: EcnMode) -> EcnMode {
        // TCP_CONG_NO_FALLBACK_RFC3168, then prague_init's switch to prague_reno.
        self.reno = mode != EcnMode::AccEcn;
        if self.reno {
            EcnMode::Off
        } else {
            mode
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u32, ce: u32, snd_una: u32, snd_nxt: u32, srtt_ns: f64) -> AckSample {
        AckSample {
            acked: delivered,
            delivered,
            ce,
            ece: ce > 0,
            snd_una,
            snd_nxt,
            srtt_ns,
            ..AckSample::default()
        }
    }

    /// Alpha after a round with a given CE fraction, by hand: from alpha = 1, a round of 20
    /// segments of which AccECN reports 5 CE-marked (F = 0.25) gives alpha = 15/16 + 0.25/16 =
    /// 0.953125; the reduction on CE is then cwnd (1 - alpha / 2): 40 -> 40 x 0.5234375 =
    /// 20.9375. A second round of 20 with none marked: alpha = 15/16 x 0.953125 = 0.8935546875.
    #[test]
    fn alpha_per_round_from_accecn_counts() {
        let mut p = Prague::default();
        p.on_ack_event(&ack(0, 0, 100, 120, 20e6)); // the first round ends at once: snd_nxt 120
        assert_eq!(p.alpha, 1.0, "no update before the first CE mark (saw_ce)");
        // Ten delayed ACKs of 2 segments; the CE counts 1, 2, 0, 2, 0, ... total 5.
        let ces = [1, 2, 0, 2, 0, 0, 0, 0, 0, 0];
        for (k, &c) in ces.iter().enumerate() {
            p.on_ack_event(&ack(2, c, 102 + 2 * k as u32, 140, 20e6));
        }
        assert!((p.alpha - 0.953_125).abs() < 1e-12, "{}", p.alpha);
        assert!((p.on_ecn(40.0, 40, 0) - 20.9375).abs() < 1e-12);
        for k in 0..10 {
            p.on_ack_event(&ack(2, 0, 122 + 2 * k, 160, 20e6));
        }
        assert!((p.alpha - 0.893_554_687_5).abs() < 1e-12, "{}", p.alpha);
    }

    /// prague_update_cwnd: a delayed ACK of 2 segments with 1 CE grows the window by one
    /// segment's worth; with 2 CE, not at all; in slow start, one segment per non-CE segment.
    #[test]
    fn only_segments_without_ce_grow_the_window() {
        let mut p = Prague::default();
        assert_eq!(p.on_ack(10.0, 100.0, &ack(2, 1, 0, 0, 20e6)), 11.0);
        assert_eq!(p.on_ack(10.0, 100.0, &ack(2, 0, 0, 0, 20e6)), 12.0);
        assert!((p.on_ack(20.0, 10.0, &ack(2, 1, 0, 0, 20e6)) - 20.05).abs() < 1e-12);
        assert_eq!(p.on_ack(20.0, 10.0, &ack(2, 2, 0, 0, 20e6)), 20.0);
        // Slow start up to ssthresh, the rest in congestion avoidance: 9 + 1, then 1/10.
        assert!((p.on_ack(9.0, 10.0, &ack(2, 0, 0, 0, 20e6)) - 10.1).abs() < 1e-12);
    }

    /// RTT independence (RTT_CONTROL_RATE): after the transition rounds, a 5 ms flow adds
    /// (5/25)^2 = 0.04 segment per RTT, so its rate (cwnd / RTT) grows by 0.04 / (5 ms)^2 =
    /// 1600 segments/s per second, as a 25 ms flow adding one segment per RTT: 1 / (25 ms)^2 =
    /// 1600. Above the target, Reno's one segment per RTT. And a second CE response within
    /// the target RTT is skipped.
    #[test]
    fn rtt_independence_below_the_target() {
        let mut p = Prague::default();
        assert_eq!(p.ai_per_rtt(5e6), 1.0, "not before the transition rounds");
        p.rounds = RTT_TRANSITION;
        assert!((p.ai_per_rtt(5e6) - 0.04).abs() < 1e-12);
        let growth = |rtt_ns: f64, ai: f64| ai / (rtt_ns / 1e9).powi(2);
        assert!((growth(5e6, p.ai_per_rtt(5e6)) - growth(25e6, 1.0)).abs() < 1e-6);
        assert_eq!(p.ai_per_rtt(40e6), 1.0);
        let mut w = 10.0;
        for _ in 0..10 {
            w = p.on_ack(w, 5.0, &ack(1, 0, 0, 0, 5e6));
        }
        assert!((w - 10.04).abs() < 1e-3, "{w}");
        p.alpha = 0.5;
        assert_eq!(p.on_ecn(40.0, 40, 0), 30.0);
        assert_eq!(
            p.on_ecn(30.0, 30, 10_000_000),
            30.0,
            "10 ms < 25 ms: no reduction"
        );
        assert_eq!(p.on_ecn(30.0, 30, 25_000_000), 22.5);
    }

    /// Pacing: 200% of cwnd / srtt while cwnd < ssthresh / 2, else 100%; the fallback to
    /// prague_reno: not L4S, unpaced, no alpha, Reno's growth, and no RFC 3168 feedback.
    #[test]
    fn pacing_and_the_fallback() {
        let mut p = Prague::default();
        p.on_ack_event(&ack(1, 0, 1, 10, 20e6));
        p.on_ack(10.0, f64::INFINITY, &ack(1, 0, 1, 10, 20e6)); // slow start: cwnd 11
        assert!((p.pacing_rate().unwrap() - 2.0 * 11.0 / 0.02).abs() < 1e-6);
        p.on_ack(20.0, 30.0, &ack(1, 0, 1, 10, 20e6)); // slow start, 21 >= 15: 100%
        assert!((p.pacing_rate().unwrap() - 21.0 / 0.02).abs() < 1e-6);
        assert!(p.l4s() && p.needs_pacing() && p.wants_accecn());
        assert_eq!(p.on_ecn_mode(EcnMode::AccEcn), EcnMode::AccEcn);
        assert_eq!(p.on_ecn_mode(EcnMode::Classic), EcnMode::Off);
        assert!(!p.l4s() && !p.needs_pacing() && p.pacing_rate().is_none());
        assert_eq!(p.ecn_alpha(), None);
        assert_eq!(p.on_ack(20.0, 10.0, &ack(1, 0, 0, 0, 20e6)), 20.05);
        assert_eq!(p.on_ecn_mode(EcnMode::Off), EcnMode::Off);
    }
}
