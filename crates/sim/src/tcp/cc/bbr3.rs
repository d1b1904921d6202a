//! BBR v3 as google/bbr's `v3` branch, `net/ipv4/tcp_bbr.c` (BBR_VERSION 3), and
//! draft-ietf-ccwg-bbr-01: a model of the path with an upper bound (max bw over the last one or
//! two probing cycles, `bw_hi`; the inflight at which probing saw too much loss or ECN,
//! `inflight_hi`) and a short-term lower bound (`bw_lo`, `inflight_lo`, cut on loss or ECN
//! while not probing), with the state machine
//!
//! - STARTUP: pacing gain 2.77 (4 ln 2), cwnd gain 2, until 3 rounds in a row without 25%
//!   growth of the bw sample (`bbr_check_full_bw_reached`), or a recovery round with at least
//!   6 loss events and a loss rate over 2% (`bbr_check_loss_too_high_in_startup`,
//!   `bbr_full_loss_cnt`), or 2 rounds with a CE fraction of at least 50%
//!   (`bbr_full_ecn_cnt`); the two signal exits set `inflight_hi` to max(BDP, the latest
//!   round's delivered);
//! - DRAIN: pacing gain 1/2.885 until inflight is at most one BDP;
//! - PROBE_BW: DOWN (pacing 0.91) until inflight is at most both the BDP and `inflight_hi`
//!   less 15% headroom, CRUISE (pacing 1, cwnd capped at `inflight_hi` less headroom and at
//!   `inflight_lo`) until the wall-clock probe time (2 s + a random 0-1 s) or the
//!   Reno-coexistence bound (min(63, BDP) rounds + a random 0-1 round) has passed since DOWN
//!   began, REFILL (pacing 1, lower bounds reset) for one round, UP (pacing 1.25, cwnd gain
//!   2.25, `inflight_hi` raised by 1, 2, 4, ... segments per round while it limits the
//!   window) until the bw stops growing by 25% for 3 rounds, or inflight reaches
//!   `inflight_hi` after a previous probe went too high, or the loss rate exceeds 2% or the
//!   CE fraction 50% (then `inflight_hi` = max(inflight when the sampled segment was sent,
//!   0.7 x the target inflight), `bbr_handle_inflight_too_high`); then DOWN again;
//! - PROBE_RTT: when the min RTT of the last 5 s has not been refreshed, cwnd at most
//!   max(4, 0.5 x BDP) for max(200 ms, one round) once inflight is down to it; back to
//!   PROBE_BW (DOWN then CRUISE) or STARTUP; the min RTT filter itself spans 10 s;
//!
//! outside probing, once per round (`bbr_adapt_lower_bounds`): after a round with loss,
//! `bw_lo` = max(latest round's bw, 0.7 x `bw_lo`) and `inflight_lo` = max(latest round's
//! delivered, 0.7 x `inflight_lo`); after a round with ECN, `inflight_lo` x (1 - alpha / 3),
//! alpha the EWMA (gain 1/16, starting at 1) of the fraction of delivered segments CE-marked
//! per round. The model's bw is min(`bw_hi`, `bw_lo`); pacing is gain x bw, 1% below; the
//! window is gain x BDP + the ACK-aggregation allowance, bounded by the inflight model
//! (`bbr_bound_cwnd_for_inflight_model`).
//!
//! ECN: the receiver echoes CE packet by packet (Linux's `bbr_precise_ece_ack`, DCTCP's
//! state machine); the sender counts the segments an ACK with ECE delivers as CE-delivered
//! (`tp->delivered_ce`). Linux uses ECN only on a route marked `ecn_low` (shallow-threshold
//! marking) with a min RTT of at most 5 ms (`bbr_ecn_max_rtt_us`); here `[tcp] ecn` on the
//! flow stands for the route flag, and the 5 ms bound is kept. Without ECN the flow runs on
//! loss alone (no CE ever arrives).
//!
//! Differences from google/bbr v3 (docs/transports.md, "BBR v3"): real numbers instead of
//! Linux's 1/256 fixed point (gains and thresholds are the intended values: 0.7, 2%, 15%,
//! 1/16, 1/3, 0.91, 2.77); the per-lost-segment check (`bbr_skb_marked_lost` with
//! `bbr_inflight_hi_from_lost_skb`) is made on the ACK that marks the loss with that ACK's
//! rate sample, as `bbr_adapt_upper_bounds` does (so `inflight_hi` is the sampled segment's
//! `tx_in_flight`, not the exact prefix where the loss rate crossed 2%); no TLP-recovery
//! event, no undo of spurious recoveries, no idle restart, no PLB, no fast path (a CPU
//! saving); `is_cwnd_limited` is "the flight before an ACK filled the window" in this round
//! or the last; the TSO goal is Linux's formula with 1500-byte packets; the random draws
//! come from a generator seeded per flow by its first ACK (deterministic per run).

use super::bbr_common::{self as common, rate_per_sec, splitmix, AckAggregation, LossState};
pub use super::bbr_common::{
    CaState, Mode, CWND_GAIN, CWND_MIN, EXTRA_ACKED_MAX, EXTRA_ACKED_WIN_RTTS, FULL_BW_CNT,
    FULL_BW_THRESH, INIT_CWND, MIN_RTT_WIN, PACING_MARGIN, PROBE_RTT_TIME,
};
use super::{AckSample, CongestionControl};
use aqm::{Time, NS_PER_SEC};
use std::collections::VecDeque;

/// STARTUP's pacing gain, 4 ln 2 (`bbr_startup_pacing_gain`, draft s. 2.6
/// BBRStartupPacingGain).
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// STARTUP's and DRAIN's cwnd gain (`bbr_startup_cwnd_gain`).
pub const STARTUP_CWND_GAIN: f64 = 2.0;
/// DRAIN's pacing gain (`bbr_drain_gain` = 1000/2885).
pub const DRAIN_GAIN: f64 = 1000.0 / 2885.0;
/// Extra cwnd gain in PROBE_BW UP (`bbr_bw_probe_cwnd_gain` = 1 quarter).
pub const PROBE_UP_CWND_GAIN_EXTRA: f64 = 0.25;
/// PROBE_BW's pacing gains by phase (`bbr_pacing_gain`): UP, DOWN, CRUISE, REFILL.
pub const PACING_GAIN: [f64; 4] = [1.25, 0.91, 1.0, 1.0];
/// Interval between PROBE_RTTs: window of the probe-RTT min filter, ns
/// (`bbr_probe_rtt_win_ms`, draft ProbeRTTInterval).
pub const PROBE_RTT_WIN: Time = 5 * NS_PER_SEC;
/// PROBE_RTT's window as a fraction of the BDP (`bbr_probe_rtt_cwnd_gain`, draft
/// BBRProbeRTTCwndGain).
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// Multiplicative cut on loss: `inflight_hi` floor and lower bounds keep 1 - beta
/// (`bbr_beta` = 0.3, draft BBRBeta = 0.7 kept).
pub const BETA: f64 = 0.3;
/// Loss rate of a round (lost / inflight when sent) that means "too high" (`bbr_loss_thresh`,
/// draft BBRLossThresh).
pub const LOSS_THRESH: f64 = 0.02;
/// Loss events in a STARTUP recovery round that, with the loss rate over
/// [`LOSS_THRESH`], end STARTUP (`bbr_full_loss_cnt`).
pub const FULL_LOSS_CNT: u32 = 6;
/// Headroom left under `inflight_hi` after a probe went too high (`bbr_inflight_headroom`,
/// draft BBRHeadroom).
pub const HEADROOM: f64 = 0.15;
/// Gain of the ECN alpha EWMA (`bbr_ecn_alpha_gain`).
pub const ECN_ALPHA_GAIN: f64 = 1.0 / 16.0;
/// Cut of `inflight_lo` per ECN round: x (1 - alpha x factor) (`bbr_ecn_factor`).
pub const ECN_FACTOR: f64 = 1.0 / 3.0;
/// CE fraction that means "too high" (`bbr_ecn_thresh`).
pub const ECN_THRESH: f64 = 0.5;
/// Rounds with a CE fraction of at least [`ECN_THRESH`] that end STARTUP (`bbr_full_ecn_cnt`).
pub const FULL_ECN_CNT: u32 = 2;
/// After a cycle with ECN and no loss, the first round's `inflight_hi` increment as a fraction
/// of `inflight_hi` (`bbr_ecn_reprobe_gain`).
pub const ECN_REPROBE_GAIN: f64 = 0.5;
/// Largest min RTT at which ECN is used, ns (`bbr_ecn_max_rtt_us`).
pub const ECN_MAX_RTT: Time = 5_000_000;
/// Reno-coexistence bound on rounds between probes (`bbr_bw_probe_max_rounds`).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Random rounds added to that bound: 0 or 1 (`bbr_bw_probe_rand_rounds` = 2).
pub const BW_PROBE_RAND_ROUNDS: u64 = 2;
/// Wall-clock time between probes, at least, ns (`bbr_bw_probe_base_us`).
pub const BW_PROBE_BASE: Time = 2 * NS_PER_SEC;
/// Random time added to it, below, ns (`bbr_bw_probe_rand_us`).
pub const BW_PROBE_RAND: Time = NS_PER_SEC;
/// Bytes of a packet for the TSO goal (as [`super::bbr`]).
const PKT_BYTES: f64 = 1500.0;

/// PROBE_BW's phases (`enum bbr_pacing_gain_phase`, draft ProbeBW_*); the index is that of
/// [`PACING_GAIN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Push inflight up to probe for bw.
    Up = 0,
    /// Drain the queue the probe made.
    Down = 1,
    /// Use the pipe with headroom.
    Cruise = 2,
    /// Refill the pipe at the estimated bw before probing.
    Refill = 3,
}

/// What the ACKs arriving now say about bw probing (`enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing; not getting probe feedback.
    Init,
    /// Sending at the estimated bw to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// Feedback from the probe.
    ProbeFeedback,
    /// Probe stopped; feedback still arriving.
    ProbeStopping,
}

/// BBR v3's state (Linux's `struct bbr`); bandwidths in segments per ns, times in ns, windows
/// in segments; "no bound" is `f64::INFINITY` / `u32::MAX` (Linux's ~0U).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    /// Current mode.
    pub mode: Mode,
    /// Current PROBE_BW phase (meaningful in PROBE_BW).
    pub phase: Phase,
    /// Min RTT over [`MIN_RTT_WIN`], ns (`None`: no sample yet).
    pub min_rtt: Option<Time>,
    /// When `min_rtt` was set.
    pub min_rtt_stamp: Time,
    /// Min RTT over [`PROBE_RTT_WIN`] (`probe_rtt_min_us`).
    pub probe_rtt_min: Option<Time>,
    /// When `probe_rtt_min` was set.
    pub probe_rtt_min_stamp: Time,
    /// End of PROBE_RTT's 200 ms (`None`: inflight not yet down).
    pub probe_rtt_done_stamp: Option<Time>,
    /// A round has passed at the PROBE_RTT window.
    pub probe_rtt_round_done: bool,
    /// Packet-timed rounds so far.
    pub rtt_cnt: u64,
    /// Connection's delivered count that ends the current round.
    pub next_rtt_delivered: u64,
    /// This ACK starts a round.
    pub round_start: bool,
    /// Start of the current PROBE_BW phase (wall clock, for DOWN's probe timer).
    pub cycle_stamp: Time,
    /// Congestion state on the previous ACK.
    pub prev_ca_state: CaState,
    /// Current pacing gain.
    pub pacing_gain: f64,
    /// Current cwnd gain.
    pub cwnd_gain: f64,
    /// STARTUP found the pipe full (by bw plateau, loss or ECN).
    pub full_bw_reached: bool,
    /// The bw has plateaued recently (`full_bw_now`).
    pub full_bw_now: bool,
    /// Rounds without 25% growth.
    pub full_bw_cnt: u32,
    /// The bw sample growth is measured against.
    pub full_bw: f64,
    /// An RTT sample has set the pacing rate.
    pub has_seen_rtt: bool,
    /// Window saved on entering recovery or PROBE_RTT.
    pub prior_cwnd: u32,
    /// Pacing rate, segments per second.
    pub pacing_rate: f64,
    /// The ACK-aggregation estimator.
    ack_agg: AckAggregation,
    /// Consecutive STARTUP rounds with a CE fraction over [`ECN_THRESH`].
    pub startup_ecn_rounds: u32,
    /// Loss seen in this PROBE_BW cycle.
    pub loss_in_cycle: bool,
    /// ECN seen in this cycle.
    pub ecn_in_cycle: bool,
    /// Delivered count that ends the loss round.
    pub loss_round_delivered: u64,
    /// This ACK starts a loss round.
    pub loss_round_start: bool,
    /// Loss seen in this loss round.
    pub loss_in_round: bool,
    /// ECN seen in this round.
    pub ecn_in_round: bool,
    /// ACKs marking losses in this STARTUP round (saturating at 15).
    pub loss_events_in_round: u32,
    /// Max delivery rate in the latest round.
    pub bw_latest: f64,
    /// Lower bound on the sending rate.
    pub bw_lo: f64,
    /// Max bw samples of the previous and the current probing cycle.
    pub bw_hi: [f64; 2],
    /// Max segments delivered over a sample interval in the latest round.
    pub inflight_latest: u32,
    /// Lower bound on inflight.
    pub inflight_lo: u32,
    /// Upper bound on inflight.
    pub inflight_hi: u32,
    /// Segments delivered per `inflight_hi` increment in UP.
    pub bw_probe_up_cnt: u32,
    /// Segments (S)ACKed since the last increment.
    pub bw_probe_up_acks: u32,
    /// Rounds of UP (the increment doubles each round).
    pub bw_probe_up_rounds: u32,
    /// Wall-clock wait from DOWN's start to the next probe, ns.
    pub probe_wait: Time,
    /// ECN is used (`ecn_eligible`).
    pub ecn_eligible: bool,
    /// EWMA of the CE-marked fraction of delivered segments per round.
    pub ecn_alpha: f64,
    /// The rate samples reflect bw probing (react to "too high" once per probe).
    pub bw_probe_samples: bool,
    /// The last UP went too high.
    pub prev_probe_too_high: bool,
    /// The last UP stopped at `inflight_hi` because the one before went too high.
    pub stopped_risky_probe: bool,
    /// Rounds since the last probe (Reno-coexistence counter).
    pub rounds_since_probe: u32,
    /// What the ACKs say about probing.
    pub ack_phase: AckPhase,
    /// Delivered at the last alpha update.
    alpha_last_delivered: u64,
    /// CE-delivered at the last alpha update.
    alpha_last_delivered_ce: u64,
    /// Segments delivered by ACKs carrying ECE (`tp->delivered_ce`).
    pub delivered_ce: u64,
    /// (delivered, delivered_ce) after each ACK that delivered: the CE count when a sampled
    /// segment was sent (`tx.delivered_ce`) is that after the last ACK before it.
    ce_history: VecDeque<(u64, u64)>,
    /// The window was full before an ACK in the current round / the previous one.
    cwnd_limited: [bool; 2],
    /// Times PROBE_RTT was entered.
    pub probe_rtt_count: u32,
    /// Times `inflight_hi` was cut by a probe that went too high.
    pub too_high_count: u32,
    /// The window before a timeout (for `bbr_set_state(TCP_CA_Loss)`).
    cwnd_at_timeout: u32,
    /// The Loss state after a timeout.
    loss: LossState,
    rng: u64,
    app_limited_req: bool,
    edt: Time,
    last_delivered: u64,
}

impl Default for Bbr3 {
    /// `bbr_init`.
    fn default() -> Self {
        Bbr3 {
            mode: Mode::Startup,
            phase: Phase::Up,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_stamp: 0,
            prev_ca_state: CaState::Open,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0.0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            // bbr_init_pacing_rate_from_rtt without an RTT: gain x 10 segments / 1 ms.
            pacing_rate: rate_per_sec(INIT_CWND as f64 / 1e6, STARTUP_PACING_GAIN),
            ack_agg: AckAggregation::default(),
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            // Start sampling after the first full flight is ACKed.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_events_in_round: 0,
            bw_latest: 0.0,
            bw_lo: f64::INFINITY,
            bw_hi: [0.0; 2],
            inflight_latest: 0,
            inflight_lo: u32::MAX,
            inflight_hi: u32::MAX,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            probe_wait: 0,
            ecn_eligible: false,
            ecn_alpha: 1.0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            ack_phase: AckPhase::Init,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            delivered_ce: 0,
            ce_history: VecDeque::new(),
            cwnd_limited: [false; 2],
            probe_rtt_count: 0,
            too_high_count: 0,
            cwnd_at_timeout: 0,
            loss: LossState::default(),
            rng: 0,
            app_limited_req: false,
            edt: 0,
            last_delivered: 0,
        }
    }
}

/// What BBR reads from one ACK beyond [`AckSample`] (Linux's `rate_sample` fields it uses).
struct Ctx {
    /// The bw sample, segments per ns (0: none).
    sample_bw: f64,
    /// Segments CE-marked over the sample's interval (`rs->delivered_ce`).
    delivered_ce: u64,
    /// The ACK carried ECE (`rs->is_ece`).
    is_ece: bool,
    /// The window was full recently (`tp->is_cwnd_limited`).
    cwnd_limited: bool,
    /// Congestion state after the ACK.
    state: CaState,
}

impl Bbr3 {
    /// `bbr_max_bw`: the max of the last two cycles' bw samples.
    pub fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw`: the model's bw, min(`bw_hi`, `bw_lo`).
    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain); the initial window before any RTT sample.
    pub fn bdp(&self, bw: f64, gain: f64) -> u32 {
        common::bdp(self.min_rtt, bw, gain)
    }

    /// `bbr_tso_segs_goal` (v3): pacing rate x 2^-10 s, plus 64 KB halved per 512 us of min
    /// RTT, at most a 64 KB GSO burst, at least 2 segments.
    pub fn tso_segs_goal(&self) -> u32 {
        let mut bytes = self.pacing_rate * PKT_BYTES / 1024.0;
        let r = self.min_rtt.map_or(u32::MAX as u64, |m| (m / 1000) >> 9);
        if r < 32 {
            bytes += (65536u64 >> r) as f64;
        }
        // GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER (320 bytes).
        let bytes = bytes.min(65536.0 - 1.0 - 320.0);
        ((bytes / PKT_BYTES) as u32).max(2)
    }

    /// `bbr_quantization_budget` (v3): at least 3 TSO goals and 4 segments, + 2 in UP.
    pub fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal()).max(CWND_MIN);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the BDP with a gain and the quantization budget.
    pub fn inflight(&self, bw: f64, gain: f64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_target_inflight`: the BDP unless the window is below it.
    pub fn target_inflight(&self, cwnd: u32) -> u32 {
        self.inflight(self.bw(), 1.0).min(cwnd)
    }

    /// `bbr_inflight_with_headroom`: `inflight_hi` less 15% (at least 1), at least 4.
    pub fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom = ((self.inflight_hi as f64 * HEADROOM) as u32).max(1);
        self.inflight_hi.saturating_sub(headroom).max(CWND_MIN)
    }

    /// `bbr_probe_rtt_cwnd`: max(4, 0.5 x BDP).
    pub fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN).max(CWND_MIN)
    }

    /// `bbr_is_probing_bandwidth`: STARTUP, REFILL or UP.
    pub fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    /// `bbr_packets_in_net_at_edt`: inflight when the next paced segment leaves.
    fn in_net_at_edt(&self, inflight: u32, now: Time) -> u32 {
        let tso = self.tso_segs_goal();
        common::in_net_at_edt(inflight, now, self.edt, self.bw(), self.pacing_gain, tso)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        self.prior_cwnd = common::save_cwnd(self.prior_cwnd, self.prev_ca_state, self.mode, cwnd);
    }

    fn rand_below(&mut self, n: u64) -> u64 {
        splitmix(&mut self.rng) % n
    }

    /// `bbr_update_round_start`.
    fn update_round_start(&mut self, s: &AckSample) {
        self.round_start = false;
        let rs = &s.rate;
        if rs.interval_ns > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.round_start = true;
            self.rtt_cnt += 1;
        }
    }

    /// `bbr_update_ecn_alpha`: once per round, alpha += g (CE fraction of the round - alpha).
    /// Returns the round's CE fraction.
    fn update_ecn_alpha(&mut self, s: &AckSample) -> Option<f64> {
        if !self.ecn_eligible && self.min_rtt.is_some_and(|m| m <= ECN_MAX_RTT) {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = s.rate.total_delivered - self.alpha_last_delivered;
        let ce = self.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ratio = ce as f64 / delivered as f64;
        self.ecn_alpha =
            ((1.0 - ECN_ALPHA_GAIN) * self.ecn_alpha + ECN_ALPHA_GAIN * ratio).min(1.0);
        self.alpha_last_delivered = s.rate.total_delivered;
        self.alpha_last_delivered_ce = self.delivered_ce;
        self.check_ecn_too_high_in_startup(ratio);
        Some(ratio)
    }

    /// `bbr_check_ecn_too_high_in_startup`.
    fn check_ecn_too_high_in_startup(&mut self, ratio: f64) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// `bbr_handle_queue_too_high_in_startup`.
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), 1.0);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_is_inflight_too_high`: the sample's loss rate over 2% of what was in flight when
    /// its segment was sent, or (with ECN) its CE fraction over 50%.
    pub fn is_inflight_too_high(&self, s: &AckSample, delivered_ce: u64) -> bool {
        let rs = &s.rate;
        if rs.lost > 0
            && rs.tx_in_flight > 0
            && rs.lost as f64 > rs.tx_in_flight as f64 * LOSS_THRESH
        {
            return true;
        }
        delivered_ce > 0
            && rs.delivered > 0
            && self.ecn_eligible
            && delivered_ce as f64 > rs.delivered as f64 * ECN_THRESH
    }

    /// `bbr_raise_inflight_hi_slope`: each UP round doubles the increment.
    fn raise_inflight_hi_slope(&mut self, cwnd: u32) {
        let growth = 1u32 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (cwnd / growth).max(1);
    }

    /// `bbr_probe_inflight_hi_upward`.
    fn probe_inflight_hi_upward(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) {
        if !ctx.cwnd_limited || cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += s.rate.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cwnd);
        }
    }

    /// `bbr_handle_inflight_too_high`: `inflight_hi` = max(tx_in_flight, 0.7 x target
    /// inflight), once per probe; UP ends.
    fn handle_inflight_too_high(&mut self, s: &AckSample, cwnd: u32, now: Time) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        self.too_high_count += 1;
        if !s.rate.is_app_limited {
            let floor = (self.target_inflight(cwnd) as f64 * (1.0 - BETA)) as u32;
            self.inflight_hi = s.rate.tx_in_flight.max(floor);
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_bw_probe_down(s, now);
        }
    }

    /// `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, init_bw: bool, cwnd: u32) {
        if init_bw && self.bw_lo.is_infinite() {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds`: once per round outside probing, cut on loss (x 0.7, not
    /// below the latest round's delivery) and ECN (x (1 - alpha / 3)).
    fn adapt_lower_bounds(&mut self, cwnd: u32) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round {
            self.init_lower_bounds(false, cwnd);
            let cut = 1.0 - self.ecn_alpha * ECN_FACTOR;
            ecn_inflight_lo = (self.inflight_lo as f64 * cut) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(true, cwnd);
            self.bw_lo = self.bw_latest.max(self.bw_lo * (1.0 - BETA));
            let lo = (self.inflight_lo as f64 * (1.0 - BETA)) as u32;
            self.inflight_lo = self.inflight_latest.max(lo);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(f64::MIN_POSITIVE);
    }

    /// `bbr_reset_lower_bounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = u32::MAX;
    }

    /// `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_note_loss`: the round is a loss round.
    fn note_loss(&mut self, delivered: u64) {
        if !self.loss_in_round {
            self.loss_round_delivered = delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_update_latest_delivery_signals`.
    fn update_latest_delivery_signals(&mut self, s: &AckSample, ctx: &Ctx) {
        self.loss_round_start = false;
        let rs = &s.rate;
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(ctx.sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = rs.total_delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals`.
    fn advance_latest_delivery_signals(&mut self, s: &AckSample, ctx: &Ctx) {
        if self.loss_round_start {
            self.bw_latest = ctx.sample_bw;
            self.inflight_latest = s.rate.delivered.max(0) as u32;
        }
    }

    /// `bbr_update_congestion_signals`: the bw filter, and once per loss round the lower
    /// bounds.
    fn update_congestion_signals(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) {
        let rs = &s.rate;
        if rs.interval_ns <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || ctx.sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(ctx.sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(cwnd);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a recovery round in STARTUP, at
    /// least [`FULL_LOSS_CNT`] loss events and a loss rate over 2% end STARTUP.
    fn check_loss_too_high_in_startup(&mut self, s: &AckSample, ctx: &Ctx) {
        if self.full_bw_reached {
            return;
        }
        if s.rate.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && ctx.state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(s, ctx.delivered_ce)
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_full_bw_reached` (v3: the bw sample against 1.25 x the reference).
    fn check_full_bw_reached(&mut self, s: &AckSample, ctx: &Ctx) {
        if self.full_bw_now || s.rate.is_app_limited {
            return;
        }
        if ctx.sample_bw >= self.full_bw * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = ctx.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, s: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(s.rate.in_flight, s.now) <= self.inflight(self.max_bw(), 1.0)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(s, s.now);
        }
    }

    /// `bbr_pick_probe_wait`: 0-1 extra rounds, 2-3 s.
    fn pick_probe_wait(&mut self, s: &AckSample) {
        if self.rng == 0 {
            self.rng = s.now ^ s.rate.total_delivered.rotate_left(32) ^ 0xB3B3_0003;
        }
        self.rounds_since_probe = self.rand_below(BW_PROBE_RAND_ROUNDS) as u32;
        self.probe_wait = BW_PROBE_BASE + self.rand_below(BW_PROBE_RAND);
    }

    /// `bbr_start_bw_probe_refill`.
    fn start_bw_probe_refill(&mut self, s: &AckSample, up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = s.rate.total_delivered;
        self.phase = Phase::Refill;
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = s.rate.total_delivered;
        self.cycle_stamp = s.now;
        self.reset_full_bw();
        self.full_bw = ctx.sample_bw;
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(cwnd);
    }

    /// `bbr_start_bw_probe_down`: a new cycle; the probe timer starts.
    fn start_bw_probe_down(&mut self, s: &AckSample, now: Time) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait(s);
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = s.rate.total_delivered;
        self.phase = Phase::Down;
    }

    /// `bbr_start_bw_probe_cruise`.
    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    /// `bbr_adapt_upper_bounds`; `true` when it decided a phase change.
    fn adapt_upper_bounds(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            // Forget the previous cycle's bw samples (bbr_advance_max_bw_filter).
            if self.mode == Mode::ProbeBw && !s.rate.is_app_limited && self.bw_hi[1] > 0.0 {
                self.bw_hi[0] = self.bw_hi[1];
                self.bw_hi[1] = 0.0;
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(s, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(s, ctx.delivered_ce) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(s, cwnd, s.now);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            if s.rate.tx_in_flight > self.inflight_hi {
                self.inflight_hi = s.rate.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(s, ctx, cwnd);
            }
        }
        false
    }

    /// `bbr_is_reno_coexistence_probe_time`.
    fn is_reno_coexistence_probe_time(&self, cwnd: u32) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(cwnd));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_check_time_to_probe_bw`.
    fn check_time_to_probe_bw(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) -> bool {
        if self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && ctx.state == CaState::Open
        {
            let v = (self.inflight_hi as f64 * ECN_REPROBE_GAIN) as u64;
            let n = if v == 0 { 0 } else { 63 - v.leading_zeros() };
            self.start_bw_probe_refill(s, n);
            return true;
        }
        if s.now.saturating_sub(self.cycle_stamp) > self.probe_wait
            || self.is_reno_coexistence_probe_time(cwnd)
        {
            self.start_bw_probe_refill(s, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise`.
    fn check_time_to_cruise(&self, inflight: u32, bw: f64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(bw, 1.0)
    }

    /// `bbr_update_cycle_phase`: PROBE_BW's state machine.
    fn update_cycle_phase(&mut self, s: &AckSample, ctx: &Ctx, cwnd: u32) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(s, ctx, cwnd) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.in_net_at_edt(s.rate.prior_in_flight, s.now);
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(s, ctx, cwnd);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(s, ctx, cwnd);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if ctx.cwnd_limited && cwnd >= self.inflight_hi {
                    // inflight_hi limits the growth: measure the plateau afresh.
                    self.reset_full_bw();
                    self.full_bw = ctx.sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(s, s.now);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(s, ctx, cwnd) {
                    return;
                }
                if self.check_time_to_cruise(inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// `bbr_exit_probe_rtt`.
    fn exit_probe_rtt(&mut self, s: &AckSample) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(s, s.now);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_min_rtt`: the 5 s probe-RTT filter, the 10 s min-RTT filter, PROBE_RTT.
    fn update_min_rtt(&mut self, s: &AckSample, cwnd: &mut u32) {
        let rs = &s.rate;
        let probe_rtt_expired = s.now > self.probe_rtt_min_stamp + PROBE_RTT_WIN;
        if rs.rtt_ns >= 0
            && (self.probe_rtt_min.is_none_or(|m| (rs.rtt_ns as Time) < m) || probe_rtt_expired)
        {
            self.probe_rtt_min = Some(rs.rtt_ns as Time);
            self.probe_rtt_min_stamp = s.now;
        }
        let min_rtt_expired = s.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(p) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_rtt_expired {
                self.min_rtt = Some(p);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if probe_rtt_expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = rs.total_delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            self.app_limited_req = true;
            let target = self.probe_rtt_cwnd();
            if common::probe_rtt_done(
                &mut self.probe_rtt_done_stamp,
                &mut self.probe_rtt_round_done,
                &mut self.next_rtt_delivered,
                s,
                self.round_start,
                target,
            ) {
                // bbr_check_probe_rtt_done.
                self.probe_rtt_min_stamp = s.now;
                *cwnd = (*cwnd).max(self.prior_cwnd);
                self.exit_probe_rtt(s);
            }
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw => {
                let extra = if self.phase == Phase::Up {
                    PROBE_UP_CWND_GAIN_EXTRA
                } else {
                    0.0
                };
                (PACING_GAIN[self.phase as usize], CWND_GAIN + extra)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_pacing_rate`: the pacing rate only rises before the pipe is full.
    fn set_pacing_rate(&mut self, s: &AckSample, cwnd: u32) {
        let rate = rate_per_sec(self.bw(), self.pacing_gain);
        common::set_pacing_rate(
            &mut self.pacing_rate,
            &mut self.has_seen_rtt,
            s,
            cwnd,
            STARTUP_PACING_GAIN,
            rate,
            self.full_bw_reached,
        );
    }

    /// `bbr_set_cwnd` (v3: no packet conservation; slow start toward the target).
    fn set_cwnd(&self, s: &AckSample, mut cwnd: u32) -> u32 {
        let acked = s.rate.acked_sacked;
        if acked > 0 {
            let mut target = self.bdp(self.bw(), self.cwnd_gain);
            target += self.ack_agg.cwnd(self.bw());
            target = self.quantization_budget(target);
            let slow_start = cwnd < 2 * INIT_CWND;
            cwnd = common::grow_cwnd(cwnd, acked, target, self.full_bw_reached, slow_start);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        cwnd
    }

    /// `bbr_bound_cwnd_for_inflight_model`.
    fn bound_cwnd_for_inflight_model(&self, cwnd: u32) -> u32 {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.phase == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN);
        cwnd.min(cap)
    }

    /// CE-delivered when the sampled segment was sent (`tx.delivered_ce`): the count after
    /// the last ACK whose delivered total was at most the sample's `prior_delivered`.
    fn ce_at(&self, prior_delivered: u64) -> u64 {
        let i = self
            .ce_history
            .partition_point(|&(d, _)| d <= prior_delivered);
        if i == 0 {
            0
        } else {
            self.ce_history[i - 1].1
        }
    }

    /// Accounts the ACK's CE feedback and returns the sample's CE-delivered count.
    fn account_ce(&mut self, s: &AckSample) -> u64 {
        let rs = &s.rate;
        let before = self.ce_at(rs.prior_delivered);
        if s.ece {
            self.delivered_ce += rs.acked_sacked as u64;
        }
        if rs.total_delivered > self.last_delivered {
            self.last_delivered = rs.total_delivered;
            self.ce_history
                .push_back((rs.total_delivered, self.delivered_ce));
        }
        // Later samples' segments were sent later (their prior_delivered does not go back):
        // keep the entry in force at this one's and what follows.
        while self.ce_history.len() > 1 && self.ce_history[1].0 <= rs.prior_delivered {
            self.ce_history.pop_front();
        }
        if rs.delivered > 0 {
            self.delivered_ce.saturating_sub(before)
        } else {
            0
        }
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn on_ack(&mut self, cwnd: f64, _ssthresh: f64, _s: &AckSample) -> f64 {
        cwnd
    }

    /// `bbr_ssthresh`: saves cwnd; ssthresh is not lowered.
    fn on_congestion(&mut self, cwnd: f64, _flight: u32, _now: Time) -> f64 {
        self.save_cwnd(cwnd as u32);
        self.cwnd_at_timeout = cwnd as u32;
        f64::INFINITY
    }

    /// ECN is read per ACK in [`CongestionControl::cong_control`]; no RFC 3168 response.
    fn on_ecn(&mut self, _cwnd: f64, _flight: u32, _now: Time) -> f64 {
        f64::INFINITY
    }

    /// `bbr_set_state(TCP_CA_Loss)` and the timeout's losses (`bbr_note_loss`).
    fn on_timeout(&mut self) {
        self.prev_ca_state = CaState::Loss;
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
            self.inflight_lo = self.cwnd_at_timeout.max(self.prior_cwnd);
        }
        self.note_loss(self.last_delivered);
        self.loss.on_timeout();
    }

    fn per_packet_ce_echo(&self) -> bool {
        true
    }

    fn needs_ecn(&self) -> bool {
        false
    }

    fn ecn_alpha(&self) -> Option<f64> {
        Some(self.ecn_alpha)
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }

    /// `bbr_init` after the handshake: the SYN's RTT as min RTT (and PROBE_RTT's min) and the
    /// first window paced at the startup gain x cwnd / SRTT.
    fn on_connected(&mut self, cwnd: f64, srtt_ns: f64, now: Time) {
        let init = common::init_from_handshake(cwnd, srtt_ns, STARTUP_PACING_GAIN);
        if let Some((rate, rtt)) = init {
            (self.pacing_rate, self.has_seen_rtt) = (rate, true);
            (self.min_rtt, self.min_rtt_stamp) = (Some(rtt), now);
            (self.probe_rtt_min, self.probe_rtt_min_stamp) = (Some(rtt), now);
        }
    }

    fn wants_rate_sample(&self) -> bool {
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    /// `bbr_min_tso_segs` (tcp_bbr.c, v3 as v1): 1 segment below 1.2 Mb/s, else 2.
    fn min_tso_segs(&self) -> u32 {
        if self.pacing_rate * PKT_BYTES < 150_000.0 {
            1
        } else {
            2
        }
    }

    fn controls_cwnd(&self) -> bool {
        true
    }

    fn asks_app_limited(&mut self) -> bool {
        std::mem::take(&mut self.app_limited_req)
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    /// `bbr_main`.
    fn cong_control(&mut self, cwnd: f64, s: &AckSample) -> f64 {
        self.edt = s.rate.edt;
        let mut w = cwnd.floor().max(1.0) as u32;
        let (state, left_loss) = self.loss.on_ack(s);
        if left_loss {
            // bbr_set_state leaving TCP_CA_Loss: bbr_exit_loss_recovery.
            w = w.max(self.prior_cwnd);
        }
        if s.rate.losses > 0 {
            // bbr_skb_marked_lost's bbr_note_loss, before cong_control as in Linux.
            self.note_loss(s.rate.total_delivered);
        }
        let delivered_ce = self.account_ce(s);
        let rs = &s.rate;
        let limited_now = rs.prior_in_flight >= w;
        self.update_round_start(s);
        if self.round_start {
            self.cwnd_limited = [limited_now, self.cwnd_limited[0]];
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(s);
        } else {
            self.cwnd_limited[0] |= limited_now;
        }
        let ctx = Ctx {
            sample_bw: rs.rate().unwrap_or(0.0),
            delivered_ce,
            is_ece: s.ece,
            cwnd_limited: self.cwnd_limited[0] || self.cwnd_limited[1],
            state,
        };
        self.ecn_in_round |= self.ecn_eligible && ctx.is_ece;
        self.update_latest_delivery_signals(s, &ctx);
        // bbr_update_model.
        self.update_congestion_signals(s, &ctx, w);
        // bbr_update_ack_aggregation: one-round windows until the pipe is full.
        let win = if self.full_bw_reached {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let bw = self.bw();
        self.ack_agg.update(&s.rate, self.round_start, win, bw, w);
        self.check_loss_too_high_in_startup(s, &ctx);
        self.check_full_bw_reached(s, &ctx);
        self.check_drain(s);
        self.update_cycle_phase(s, &ctx, w);
        self.update_min_rtt(s, &mut w);
        self.update_gains();
        self.set_pacing_rate(s, w);
        w = self.set_cwnd(s, w);
        w = self.bound_cwnd_for_inflight_model(w);
        self.advance_latest_delivery_signals(s, &ctx);
        self.prev_ca_state = state;
        self.loss_in_cycle |= s.rate.lost > 0;
        self.ecn_in_cycle |= delivered_ce > 0;
        w as f64
    }
}

#[cfg(test)]
#[path = "bbr3_tests.rs"]
mod tests;
