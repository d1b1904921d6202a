//! TCP Prague, the L4S team's scalable congestion control (draft-briscoe-iccrg-prague-congestion-
//! control; L4STeam/linux `net/ipv4/tcp_prague.c` at commit 02573a21, "0.6"), as the kernel's
//! fixed-point arithmetic does it:
//!
//! - **AccECN feedback** (`TCP_CONG_NEEDS_ACCECN`): the sender asks for AccECN in its SYN
//!   (RFC 9768, [`crate::tcp::accecn`]) and counts the CE-marked segments of each ACK from the
//!   ACE field ([`AckSample::ce`], the kernel's `rs->ece_delta`).
//! - **Classic-ECN fallback** as the kernel does it: Prague takes no RFC 3168 feedback
//!   (`TCP_CONG_NO_FALLBACK_RFC3168`: a classic-ECN SYN-ACK turns ECN off), and without AccECN
//!   `prague_init` switches the flow to `prague_reno`, Reno's window rules with Not-ECT packets
//!   and no pacing ([`CongestionControl::on_ecn_mode`]).
//! - ECT(1) on every data segment (RFC 9331 s. 4.1; `prague_init` sets `TCP_ECN_ECT_1`), so a
//!   DualQ AQM classifies it into its L4S queue; pacing on (`SK_PACING_NEEDED`).
//! - **Linux's `cong_control` hook** ([`CongestionControl::controls_cwnd`]): the kernel's Prague
//!   sets `snd_cwnd` itself on every ACK, in and out of CWR and Recovery, with no PRR and no
//!   deflation to ssthresh; its `ssthresh` hook returns `snd_ssthresh` unchanged, so ssthresh
//!   is what the window stepping below leaves in it ([`Prague::ssthresh`]).
//! - **The fractional window** (`frac_cwnd`, units of 2^-20 segment): every change of the
//!   window is made to it; `snd_cwnd` then moves by **one segment per ACK** towards
//!   ceil(`frac_cwnd`) (`prague_update_cwnd`'s `adjust`), and each step down sets ssthresh to
//!   the new `snd_cwnd`. The pacing rate follows `frac_cwnd` at once.
//! - **Alpha**, the EWMA of the fraction of CE-marked segments, once per round trip with gain
//!   g = 1/16, kept upscaled by 1/g in units of 2^-20 (`prague_update_alpha`; the draft
//!   s. 2.3.1), from 1, not updated before the first CE mark (`saw_ce`). Once RTT independence
//!   applies an update also waits until the target RTT has passed since the last one.
//! - On entering CWR (an ACK reporting CE, at most once per round trip: the sender holds CWR
//!   until an ACK passes the `snd_nxt` of the reduction), `frac_cwnd -= (alpha frac_cwnd + 1/2)
//!   / 2` (`prague_enter_cwr`, the draft s. 2.3.2); with RTT independence, nothing if the last
//!   reduction is less than the target RTT old, the sender staying in CWR all the same.
//! - Growth per ACK for the segments delivered **without** CE (`acked -= ece_delta`), only
//!   when the window was full (`tcp_is_cwnd_limited`) and not in a loss episode: in slow start
//!   `tcp_slow_start` raises `snd_cwnd` **and not `frac_cwnd`** (at this commit; later versions
//!   copy `snd_cwnd` into it), else `frac_cwnd += max(acked, round(acked ai / ceil(frac_cwnd)))`,
//!   where ai is one segment or, for RTT independence (`RTT_CONTROL_RATE`, the draft s. 2.3.6)
//!   once [`RTT_TRANSITION`] rounds after slow start have passed and below the target RTT,
//!   (srtt / target)^2 with both in the kernel's 128 us units (`prague_ai_ack_increase`).
//! - A loss (entering Recovery, or a timeout) halves `frac_cwnd` and stops the growth until the
//!   episode ends (`prague_enter_loss`, `in_loss`).
//! - Pacing at `frac_cwnd` x MTU / srtt, doubled while `snd_cwnd` < ssthresh / 2
//!   (`prague_update_pacing_rate`), set at the end of every ACK.
//!
//! Not modelled, so stated (docs/l4s.md): the classic-ECN-bottleneck detection
//! (`prague_classic_ecn_detection`, the draft s. 2.4.2; the kernel's default leaves it off,
//! `prague_ecn_fallback = 0`), TSO burst sizing (every segment is paced on its own), the undo
//! of a spurious loss response (`prague_cwnd_undo`). `tcp_is_cwnd_limited` is Linux's (5.19 and
//! later: `tcp_cwnd_validate` latches "the window was full" for a round trip) evaluated at each
//! ACK from the flight before it, the flight after the last transmission.

use super::{AckSample, CongestionControl, Reno};
use crate::tcp::accecn::EcnMode;
use aqm::Time;

/// Fixed point of the window: `frac_cwnd` counts 2^-20 segments (tcp_prague.c `CWND_UNIT`).
pub const CWND_UNIT: u32 = 20;
/// One segment in `frac_cwnd` units (`ONE_CWND`).
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// Fixed point of alpha (`PRAGUE_ALPHA_BITS`): alpha = 1 is 2^20.
pub const ALPHA_BITS: u32 = 20;
/// Alpha = 1 (`PRAGUE_MAX_ALPHA`).
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// The EWMA gain g = 2^-4 (`PRAGUE_SHIFT_G`); alpha is kept upscaled by 2^4.
pub const SHIFT_G: u32 = 4;
/// Rounds after slow start before the RTT-independence rule applies (`DEFAULT_RTT_TRANSITION`,
/// 500 at the commit read; earlier versions had 100, later ones 4).
pub const RTT_TRANSITION: u32 = 500;
/// The kernel's RTT unit for the scaling, 2^7 us (`RTT_UNIT`: `US2RTT(x)` = x >> 7).
pub const RTT_UNIT: u32 = 7;
/// The target RTT in 128 us units: `US2RTT(prague_rtt_target)` = 25,000 >> 7 = 195, so the
/// target is in effect 195 x 128 = 24,960 us.
pub const RTT_TARGET: u64 = 25_000 >> RTT_UNIT;
/// The cap on the scaled RTT (`MAX_SCALED_RTT`, 100,000), compared, as the kernel does, with
/// the RTT in 128 us units (so it binds only above 12.8 s).
pub const MAX_SCALED_RTT: u64 = 100_000;
/// The smallest `snd_cwnd` a step down leaves (`MIN_CWND`).
pub const MIN_CWND: u32 = 2;
/// Linux's `TCP_INFINITE_SSTHRESH`, the initial ssthresh.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Prague's state (the kernel's `struct prague` and the `tcp_sock` fields it reads or sets).
#[derive(Clone, Debug)]
pub struct Prague {
    /// AccECN was not negotiated: `prague_reno` (Reno, Not-ECT, unpaced).
    pub reno: bool,
    /// Alpha upscaled by 2^4, units of 2^-20 (`upscaled_alpha`).
    upscaled_alpha: u64,
    /// The fractional window, units of 2^-20 segment (`frac_cwnd`); `None` until first seen.
    frac_cwnd: Option<u64>,
    /// The additive increase per non-CE segment, units of 2^-20 (`ai_ack_increase`).
    ai_ack_increase: u64,
    /// Linux's `tp->snd_ssthresh` as Prague's stepping sets it.
    ssthresh: u32,
    /// Rounds completed since slow start was left (`round`).
    round: u32,
    /// A CE mark has been seen (`saw_ce`).
    saw_ce: bool,
    /// In a loss episode: no growth (`in_loss`); it ends when `snd_una` passes `loss_high`
    /// out of recovery (`prague_ca_open`).
    in_loss: bool,
    loss_high: u32,
    /// `tp->delivered`, `tp->delivered_ce` and their values, and `snd_nxt`, at the round's start.
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u32,
    /// When alpha was last updated and the window last reduced on CE, us (`alpha_stamp`,
    /// `cwr_stamp`, `tcp_mstamp` units).
    alpha_stamp_us: u64,
    cwr_stamp_us: u64,
    /// Linux's `tp->srtt_us`: eight times the smoothed RTT in us.
    srtt_us8: u64,
    /// `tcp_cwnd_validate`'s latch: `is_cwnd_limited`, `max_packets_out`, `cwnd_usage_seq`.
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u32,
    /// `snd_una` and `snd_max` at the last ACK.
    last_snd_una: u32,
    last_snd_max: u32,
    /// The pacing rate set at the end of the last ACK, segments per second.
    pacing: Option<f64>,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            reno: false,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            frac_cwnd: None,
            ai_ack_increase: ONE_CWND,
            ssthresh: INFINITE_SSTHRESH,
            round: 0,
            saw_ce: false,
            in_loss: false,
            loss_high: 0,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            alpha_stamp_us: 0,
            cwr_stamp_us: 0,
            srtt_us8: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            last_snd_una: 0,
            last_snd_max: 0,
            pacing: None,
        }
    }
}

/// One EWMA step of the upscaled alpha with a round of `ce` CE-marked segments out of
/// `delivered` (`prague_update_alpha`): F = (ce << 20) / delivered, truncated;
/// upscaled = upscaled - upscaled / 16 + F, at most 2^24.
#[inline]
pub fn ewma_upscaled(upscaled: u64, ce: u64, delivered: u64) -> u64 {
    let f = if ce > 0 {
        (ce << ALPHA_BITS) / delivered.clamp(1, u64::from(u32::MAX))
    } else {
        0
    };
    (upscaled - (upscaled >> SHIFT_G) + f).min(MAX_ALPHA << SHIFT_G)
}

/// The additive increase per non-CE segment, 2^-20 units, for a smoothed RTT of `srtt_us8`
/// (eight times us) in round `round` (`prague_ai_ack_increase` with
/// `prague_rate_scaled_ai_ack_increase`): one segment before the transition rounds, at or
/// above the target, or without an RTT; else round((rtt << 20) rtt / target^2), rtt and
/// target in 128 us units.
#[inline]
pub fn ai_ack_increase(srtt_us8: u64, round: u32) -> u64 {
    let rtt = (srtt_us8 >> 3) >> RTT_UNIT;
    if round < RTT_TRANSITION || rtt == 0 || rtt > MAX_SCALED_RTT || rtt >= RTT_TARGET {
        return ONE_CWND;
    }
    let divisor = RTT_TARGET * RTT_TARGET;
    ((rtt << CWND_UNIT) * rtt + (divisor >> 1)) / divisor
}

/// The reduction of `frac_cwnd` on entering CWR with alpha (2^-20 units) `alpha`
/// (`prague_enter_cwr`): (alpha frac + 2^20) >> 21, i.e. alpha / 2 of the window with the
/// rounding unbiased.
#[inline]
pub fn cwr_reduction(alpha: u64, frac_cwnd: u64) -> u64 {
    (alpha * frac_cwnd + MAX_ALPHA) >> (ALPHA_BITS + 1)
}

/// `snd_cwnd` as the fractional window rounds it: ceil(frac / 2^20), at least 1
/// (`prague_frac_cwnd_to_snd_cwnd`).
#[inline]
pub fn frac_to_cwnd(frac_cwnd: u64) -> u32 {
    (((frac_cwnd + ONE_CWND - 1) >> CWND_UNIT) as u32).max(1)
}

impl Prague {
    /// Alpha (`upscaled_alpha >> PRAGUE_SHIFT_G`), as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> SHIFT_G) as f64 / MAX_ALPHA as f64
    }

    /// The fractional window, segments (`None` before the first ACK or event).
    pub fn frac_cwnd(&self) -> Option<f64> {
        self.frac_cwnd.map(|f| f as f64 / ONE_CWND as f64)
    }

    /// Linux's `snd_ssthresh` as Prague leaves it ([`INFINITE_SSTHRESH`] until the first step
    /// down of the window).
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// Rounds completed since slow start was left.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// `tcp_in_slow_start`: `snd_cwnd` below ssthresh.
    fn in_slow_start(&self, cwnd: u32) -> bool {
        cwnd < self.ssthresh
    }

    /// RTT independence applies (`prague_is_rtt_indep`): out of slow start and after
    /// [`RTT_TRANSITION`] rounds.
    pub fn is_rtt_indep(&self, cwnd: u32) -> bool {
        !self.in_slow_start(cwnd) && self.round >= RTT_TRANSITION
    }

    /// `frac_cwnd`, set from the window the first time it is needed (`prague_init`).
    fn frac(&mut self, cwnd: u32) -> u64 {
        *self
            .frac_cwnd
            .get_or_insert(u64::from(cwnd.max(1)) << CWND_UNIT)
    }

    /// `prague_cwnd_changed`: the additive increase is computed again.
    fn cwnd_changed(&mut self) {
        self.ai_ack_increase = ai_ack_increase(self.srtt_us8, self.round);
    }

    /// `tcp_cwnd_validate`'s latch (Linux 5.19 and later), at the ACK: the flight before it is
    /// the flight after the last transmission, which was window-limited if it reached `cwnd`;
    /// "limited" is kept until a window of data sent after it is acknowledged.
    fn note_window_use(&mut self, cwnd: u32, s: &AckSample) {
        let flight = s.rate.prior_in_flight;
        let limited = flight >= cwnd;
        if self.last_snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && flight > self.max_packets_out)
        {
            self.is_cwnd_limited = limited;
            self.max_packets_out = flight;
            self.cwnd_usage_seq = s.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`: the window was full lately, or in slow start below twice the
    /// largest flight.
    fn is_cwnd_limited(&self, cwnd: u32) -> bool {
        self.is_cwnd_limited
            || (self.in_slow_start(cwnd) && u64::from(cwnd) < 2 * u64::from(self.max_packets_out))
    }

    /// `prague_update_cwnd`: growth of the fractional window for the segments delivered
    /// without CE, then `snd_cwnd` one step towards it; returns the new `snd_cwnd`.
    fn update_cwnd(&mut self, cwnd: u32, s: &AckSample) -> u32 {
        let mut w = cwnd;
        let mut frac = self.frac(w);
        let mut acked = i64::from(s.delivered);
        if s.ce > 0 {
            self.saw_ce = true;
            acked -= i64::from(s.ce);
        }
        if acked > 0 && !self.in_loss && self.is_cwnd_limited(w) {
            if self.in_slow_start(w) {
                // tcp_slow_start raises snd_cwnd up to ssthresh; frac_cwnd is left as it is.
                let grown = (u64::from(w) + acked as u64).min(u64::from(self.ssthresh)) as u32;
                acked -= i64::from(grown - w);
                w = grown;
                if acked == 0 {
                    self.cwnd_changed();
                    return w;
                }
            }
            let n = u64::from(frac_to_cwnd(frac));
            let increase = (acked as u64 * self.ai_ack_increase + (n >> 1)) / n;
            frac += increase.max(acked as u64);
            self.frac_cwnd = Some(frac);
        }
        // adjust: one segment per ACK towards ceil(frac_cwnd); a step down sets ssthresh.
        let target = frac_to_cwnd(frac);
        if w > target && w > MIN_CWND {
            w -= 1;
            self.ssthresh = w;
            self.cwnd_changed();
        } else if w < target {
            w += 1;
            self.cwnd_changed();
        }
        w
    }

    /// `prague_should_update_ewma`: the round trip is over (`snd_una` has passed the round's
    /// `snd_nxt`) and, under RTT independence, the target RTT has passed since the last update.
    fn should_update_ewma(&self, cwnd: u32, s: &AckSample) -> bool {
        let elapsed = (s.now / 1000).saturating_sub(self.alpha_stamp_us);
        s.snd_una >= self.next_seq
            && (!self.is_rtt_indep(cwnd) || elapsed >= RTT_TARGET << RTT_UNIT)
    }

    /// `prague_update_alpha` (after the first CE mark) and `prague_new_round`.
    fn update_alpha(&mut self, cwnd: u32, s: &AckSample) {
        if self.saw_ce {
            self.upscaled_alpha = ewma_upscaled(
                self.upscaled_alpha,
                self.delivered_ce - self.old_delivered_ce,
                self.delivered - self.old_delivered,
            );
            self.alpha_stamp_us = s.now / 1000;
        }
        self.next_seq = s.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !self.in_slow_start(cwnd) {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = RTT_TRANSITION;
            }
        }
        self.cwnd_changed();
    }

    /// `prague_update_pacing_rate`: frac_cwnd x MTU / srtt, doubled while `snd_cwnd` <
    /// ssthresh / 2, in segments per second (the kernel's truncations to whole bytes per
    /// second left out: under 1 B/s).
    fn update_pacing(&mut self, cwnd: u32) {
        let Some(frac) = self.frac_cwnd.filter(|_| self.srtt_us8 > 0) else {
            self.pacing = None;
            return;
        };
        let ratio = if cwnd < self.ssthresh / 2 { 2.0 } else { 1.0 };
        let per_window = ratio * 8e6 / self.srtt_us8 as f64;
        self.pacing = Some(per_window * frac as f64 / ONE_CWND as f64);
    }

    /// The kernel's ssthresh as the sender keeps it (infinite until set).
    fn ssthresh_f64(&self) -> f64 {
        if self.ssthresh >= INFINITE_SSTHRESH {
            f64::INFINITY
        } else {
            f64::from(self.ssthresh)
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
        // Linux's tp->srtt_us (eight times the smoothed RTT in us), tp->delivered and
        // tp->delivered_ce: updated while the ACK is processed, before the CWR and
        // congestion-control hooks run.
        self.srtt_us8 = (s.srtt_ns / 125.0) as u64;
        self.delivered += u64::from(s.delivered);
        self.delivered_ce += u64::from(s.ce);
        self.last_snd_max = s.snd_max;
    }

    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        if self.reno {
            return Reno.on_ack(cwnd, ssthresh, s);
        }
        cwnd // the window is set in cong_control
    }

    /// `prague_cong_control`: `prague_update_cwnd`, the round's alpha update, the pacing rate.
    fn cong_control(&mut self, cwnd: f64, s: &AckSample) -> f64 {
        let w = (cwnd as u32).max(1);
        self.frac(w);
        // prague_ca_open: the loss episode is over once out of recovery past its snd_max.
        if self.in_loss && !s.rate.in_recovery && s.snd_una >= self.loss_high {
            self.in_loss = false;
        }
        self.note_window_use(w, s);
        let w = self.update_cwnd(w, s);
        if self.should_update_ewma(w, s) {
            self.update_alpha(w, s);
        }
        self.update_pacing(w);
        self.last_snd_una = s.snd_una;
        f64::from(w)
    }

    /// `prague_enter_loss` (entering Recovery, or `CA_EVENT_LOSS` at a timeout): the
    /// fractional window halves and grows no more until the episode ends; ssthresh is left
    /// alone (`prague_ssthresh`).
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        if self.reno {
            return Reno.on_congestion(cwnd, flight, now);
        }
        let frac = self.frac((cwnd as u32).max(1));
        self.frac_cwnd = Some(frac - (frac >> 1));
        self.in_loss = true;
        self.loss_high = self.last_snd_max;
        self.cwnd_changed();
        self.ssthresh_f64()
    }

    /// `prague_enter_cwr`: alpha / 2 of the fractional window, unless RTT independence
    /// applies and the last reduction is less than the target RTT old; `snd_cwnd` and
    /// ssthresh are left to the per-ACK stepping.
    fn on_ecn(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        if self.reno {
            return Reno.on_congestion(cwnd, flight, now);
        }
        let w = (cwnd as u32).max(1);
        let frac = self.frac(w);
        let now_us = now / 1000;
        if self.is_rtt_indep(w)
            && (RTT_TARGET << RTT_UNIT) > now_us.saturating_sub(self.cwr_stamp_us)
        {
            return self.ssthresh_f64();
        }
        self.cwr_stamp_us = now_us;
        let alpha = self.upscaled_alpha >> SHIFT_G;
        self.frac_cwnd = Some(frac - cwr_reduction(alpha, frac));
        self.ssthresh_f64()
    }

    fn ecn_alpha(&self) -> Option<f64> {
        (!self.reno).then(|| self.alpha())
    }

    fn pacing_rate(&self) -> Option<f64> {
        if self.reno {
            None
        } else {
            self.pacing
        }
    }

    fn wants_rate_sample(&self) -> bool {
        true // for the flight before each ACK (tcp_is_cwnd_limited)
    }

    fn controls_cwnd(&self) -> bool {
        !self.reno // Linux's cong_control hook; prague_reno has cong_avoid
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

    const MS: Time = 1_000_000;

    /// An ACK newly delivering `delivered` segments of which `ce` CE-marked, with `flight`
    /// segments in flight before it, srtt 20 ms.
    fn ack(delivered: u32, ce: u32, snd_una: u32, snd_nxt: u32, flight: u32) -> AckSample {
        let mut s = AckSample {
            acked: delivered,
            delivered,
            ce,
            ece: ce > 0,
            snd_una,
            snd_nxt,
            snd_max: snd_nxt,
            srtt_ns: 20e6,
            ..AckSample::default()
        };
        s.rate.prior_in_flight = flight;
        s
    }

    /// One ACK as the sender hands it over (`on_ack_event`, the CWR entry when it reports CE
    /// and `cwr`, then `cong_control`); returns the new window.
    fn step(p: &mut Prague, cwnd: f64, s: &AckSample, cwr: bool) -> f64 {
        p.on_ack_event(s);
        if cwr {
            p.on_ecn(cwnd, s.rate.prior_in_flight, s.now);
        }
        p.cong_control(cwnd, s)
    }

    /// A Prague out of slow start (ssthresh = cwnd) with `frac_cwnd` = cwnd and alpha as given
    /// (2^-20 units), whose window was full at the last ACK.
    fn in_ca(cwnd: u32, alpha: u64) -> Prague {
        Prague {
            frac_cwnd: Some(u64::from(cwnd) << CWND_UNIT),
            ssthresh: cwnd,
            upscaled_alpha: alpha << SHIFT_G,
            srtt_us8: 160_000,
            next_seq: u32::MAX,
            is_cwnd_limited: true,
            cwnd_usage_seq: u32::MAX,
            ..Prague::default()
        }
    }

    /// prague_enter_cwr with alpha = 1/2 (2^19) on a window of 100: reduction = (2^19 x
    /// 100 x 2^20 + 2^20) >> 21 = 100 x 2^18 (the added half truncates away) = 25 segments, so
    /// frac_cwnd = 75 x 2^20 at once, but snd_cwnd steps down one segment per ACK, 99, 98, ...,
    /// ssthresh following it, and stops at 75 after 25 ACKs; the pacing rate follows frac_cwnd
    /// at once: 75 / 20 ms = 3750 segments/s. (The old model set the window to 75 at once.)
    #[test]
    fn the_window_steps_down_one_segment_per_ack_to_the_fractional_window() {
        let mut p = in_ca(100, 1 << 19);
        let mut w = 100.0;
        let a = ack(2, 2, 10, 200, 100); // both segments CE: no growth
        w = step(&mut p, w, &a, true);
        assert_eq!(p.frac_cwnd, Some(75 << 20));
        assert_eq!((w, p.ssthresh()), (99.0, 99));
        assert!((p.pacing_rate().unwrap() - 3750.0).abs() < 1e-9);
        for _ in 0..30 {
            w = step(&mut p, w, &a, false);
        }
        assert_eq!((w, p.ssthresh()), (75.0, 75));
        assert_eq!(cwr_reduction(1 << 19, 100 << 20), 25 << 20);
    }

    /// prague_update_cwnd out of slow start, ai = 2^20 (before the transition rounds): frac 75
    /// x 2^20, an ACK of 2 segments without CE adds (2 x 2^20 + 75 / 2) / 75 = 2,097,189 / 75 =
    /// 27,962 (truncated), and snd_cwnd jumps to ceil(frac) = 76 at once; the next adds (2 x
    /// 2^20 + 38) / 76 = 27,594 (divided by ceil(frac), not by snd_cwnd): frac = 78,698,756.
    /// With 1 CE of 2, half that. Not window-limited (flight 70 < 76 after the latch's round
    /// trip): no growth.
    #[test]
    fn growth_in_the_kernels_fixed_point() {
        let mut p = in_ca(75, 1 << 19);
        let w = step(&mut p, 75.0, &ack(2, 0, 10, 200, 75), false);
        assert_eq!(p.frac_cwnd, Some((75 << 20) + 27_962));
        assert_eq!(w, 76.0);
        let w = step(&mut p, w, &ack(2, 0, 12, 200, 76), false);
        assert_eq!(p.frac_cwnd, Some(78_698_756));
        assert_eq!(w, 76.0);
        let w = step(&mut p, w, &ack(2, 1, 14, 200, 76), false);
        assert_eq!(p.frac_cwnd, Some(78_698_756 + (1 << 20) / 76));
        // Window not full: the latch holds until snd_una passes its snd_nxt (200), then lapses.
        step(&mut p, w, &ack(2, 0, 201, 300, 70), false);
        let before = p.frac_cwnd;
        step(&mut p, w, &ack(2, 0, 203, 300, 70), false);
        assert_eq!(p.frac_cwnd, before, "not cwnd-limited: no growth");
    }

    /// RTT_CONTROL_RATE in the kernel's 128 us units, target 25,000 >> 7 = 195: at srtt
    /// 20.4 ms, rtt = 20,400 >> 7 = 159 and ai = (159^2 x 2^20 + 38,025 / 2) / 195^2 =
    /// 697,148 (0.66485 of a segment; (20.4 / 25)^2 would be 0.66586); 5 ms: 39 units, 41,943;
    /// 24.96 ms is 195 units, at the target: one segment; 24.959 ms, 194 units: 1,037,849.
    /// Before 500 rounds: one segment.
    #[test]
    fn rtt_scaled_increase_in_128_us_units() {
        assert_eq!(ai_ack_increase(8 * 20_400, RTT_TRANSITION), 697_148);
        assert_eq!(ai_ack_increase(8 * 5_000, RTT_TRANSITION), 41_943);
        assert_eq!(ai_ack_increase(8 * 24_960, RTT_TRANSITION), ONE_CWND);
        assert_eq!(ai_ack_increase(8 * 24_959, RTT_TRANSITION), 1_037_849);
        assert_eq!(ai_ack_increase(8 * 20_400, RTT_TRANSITION - 1), ONE_CWND);
        assert_eq!(ai_ack_increase(0, RTT_TRANSITION), ONE_CWND);
    }

    /// prague_enter_cwr's gate under RTT independence: RTT2US(195) = 24,960 us must have passed
    /// since the last reduction. At 1 s a reduction (alpha 1/2: 40 -> 30); at 1 s + 24.959 ms
    /// none; at 1 s + 24.960 ms one (30 -> 22.5). Out of RTT independence (round 499) no gate.
    #[test]
    fn cwr_gate_of_195_units_of_128_us() {
        let mut p = in_ca(40, 1 << 19);
        p.round = RTT_TRANSITION;
        let t = 1_000 * MS;
        p.on_ecn(40.0, 40, t);
        assert_eq!(p.frac_cwnd, Some(30 << 20));
        p.on_ecn(40.0, 40, t + 24_959_000);
        assert_eq!(p.frac_cwnd, Some(30 << 20), "24.959 ms: skipped");
        p.on_ecn(40.0, 40, t + 24_960_000);
        assert_eq!(p.frac_cwnd, Some((45 << 20) / 2), "24.960 ms: reduced");
        let mut q = in_ca(40, 1 << 19);
        q.round = RTT_TRANSITION - 1;
        q.on_ecn(40.0, 40, t);
        q.on_ecn(40.0, 40, t + MS);
        assert_eq!(q.frac_cwnd, Some((45 << 20) / 2));
    }

    /// prague_update_alpha in fixed point, from upscaled alpha 2^24 (alpha 1): a round of 20
    /// segments with 5 CE, F = (5 << 20) / 20 = 262,144, upscaled = 2^24 - 2^20 + 262,144 =
    /// 15,990,784 (alpha 0.953125); a round of 3 with 1 CE: F = 2^20 / 3 = 349,525
    /// (truncated), upscaled = 15,990,784 - 999,424 + 349,525 = 15,340,885. The ACK that ends
    /// a round and reports CE reduces the window with the alpha before the round's update
    /// (prague_enter_cwr runs before prague_cong_control): 40 x 2^20 -> 40 x 2^20 -
    /// (999,424 x 40 x 2^20 + 2^20) >> 21.
    #[test]
    fn alpha_per_round_in_fixed_point_and_after_the_reduction() {
        assert_eq!(ewma_upscaled(1 << 24, 5, 20), 15_990_784);
        assert_eq!(ewma_upscaled(15_990_784, 1, 3), 15_340_885);
        assert_eq!(ewma_upscaled(1 << 24, 3, 3), 1 << 24, "at most 1");
        let mut p = in_ca(40, 1 << 20);
        p.next_seq = 0;
        step(&mut p, 40.0, &ack(0, 0, 100, 120, 40), false); // a new round: snd_nxt 120
        let ces = [1, 2, 0, 2, 0, 0, 0, 0, 0];
        for (k, &c) in ces.iter().enumerate() {
            step(&mut p, 40.0, &ack(2, c, 102 + 2 * k as u32, 140, 40), false);
        }
        assert_eq!(p.upscaled_alpha, 1 << 24, "round not over");
        // The tenth ACK passes 120 and reports no CE; then a round of one ACK with CE.
        step(&mut p, 40.0, &ack(2, 0, 120, 140, 40), false);
        assert_eq!(p.upscaled_alpha, 15_990_784);
        let frac = p.frac_cwnd.unwrap();
        step(&mut p, 40.0, &ack(2, 1, 141, 160, 40), true);
        let reduced = frac - cwr_reduction(15_990_784 >> 4, frac);
        assert!(
            p.frac_cwnd.unwrap() >= reduced,
            "reduced with alpha 0.953125"
        );
        assert!(p.frac_cwnd.unwrap() < reduced + (1 << 20) / 20);
    }

    /// Slow start at commit 02573a21: tcp_slow_start raises snd_cwnd (10 -> 20 over five ACKs
    /// of 2), frac_cwnd stays at the initial 10 x 2^20, so the pacing rate, 2 x frac / srtt =
    /// 1000 segments/s at 20 ms, does not grow with it. The first ACK whose segments are all
    /// CE-marked grows nothing and steps snd_cwnd down (ssthresh = 19: slow start is over).
    #[test]
    fn slow_start_leaves_the_fractional_window_behind() {
        let mut p = Prague::default();
        let mut w = 10.0;
        for k in 0..5 {
            w = step(&mut p, w, &ack(2, 0, 2 * k + 2, 30, w as u32), false);
        }
        assert_eq!(w, 20.0);
        assert_eq!(p.frac_cwnd, Some(10 << 20));
        assert!((p.pacing_rate().unwrap() - 1000.0).abs() < 1e-9);
        w = step(&mut p, w, &ack(2, 2, 12, 30, 20), true);
        assert_eq!((w, p.ssthresh()), (19.0, 19));
        assert_eq!(p.frac_cwnd, Some(5 << 20), "alpha 1 halves it");
    }

    /// prague_enter_loss: frac_cwnd halves (40 -> 20), no growth while in recovery (snd_cwnd
    /// steps 40 -> 39 -> ...), growth again once recovery is over past the loss's snd_max.
    #[test]
    fn a_loss_halves_the_fractional_window_and_stops_growth() {
        let mut p = in_ca(40, 1 << 19);
        p.on_ack_event(&ack(0, 0, 10, 50, 40));
        p.on_congestion(40.0, 40, 0);
        assert_eq!(p.frac_cwnd, Some(20 << 20));
        let mut a = ack(2, 0, 12, 50, 40);
        a.rate.in_recovery = true;
        let w = step(&mut p, 40.0, &a, false);
        assert_eq!((w, p.frac_cwnd), (39.0, Some(20 << 20)));
        let w = step(&mut p, w, &ack(2, 0, 50, 60, 39), false);
        assert_eq!(w, 38.0);
        assert_eq!(p.frac_cwnd, Some((20 << 20) + ((2 << 20) + 10) / 20));
    }

    /// Pacing: 100% of frac_cwnd / srtt out of slow start; the fallback to prague_reno: not
    /// L4S, unpaced, no alpha, Reno's growth, no cong_control, no RFC 3168 feedback.
    #[test]
    fn pacing_and_the_fallback() {
        let mut p = in_ca(30, 1 << 19);
        step(&mut p, 30.0, &ack(2, 2, 10, 200, 30), false);
        assert!((p.pacing_rate().unwrap() - 30.0 / 0.02).abs() < 1e-9);
        assert!(p.l4s() && p.needs_pacing() && p.wants_accecn() && p.controls_cwnd());
        assert_eq!(p.on_ecn_mode(EcnMode::AccEcn), EcnMode::AccEcn);
        assert_eq!(p.on_ecn_mode(EcnMode::Classic), EcnMode::Off);
        assert!(!p.l4s() && !p.needs_pacing() && p.pacing_rate().is_none());
        assert!(!p.controls_cwnd());
        assert_eq!(p.ecn_alpha(), None);
        assert_eq!(p.on_ack(20.0, 10.0, &ack(1, 0, 0, 0, 20)), 20.05);
        assert_eq!(p.on_ecn_mode(EcnMode::Off), EcnMode::Off);
    }
}
