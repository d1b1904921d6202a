//! What BBR v1 ([`super::bbr`], Linux's `net/ipv4/tcp_bbr.c`) and BBR v3 ([`super::bbr3`],
//! google/bbr's `v3` branch of the same file) do the same way, kept once here: the shared
//! constants and modes, the pacing-rate arithmetic (`bbr_rate_bytes_per_sec`,
//! `bbr_set_pacing_rate`), `bbr_bdp`, the ACK-aggregation estimator
//! (`bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`), `bbr_packets_in_net_at_edt`,
//! `bbr_save_cwnd`, the window's growth in `bbr_set_cwnd`, PROBE_RTT's wait
//! (`bbr_update_min_rtt` / `bbr_check_probe_rtt_done`) and the Loss-state bookkeeping the
//! simulator does for `bbr_set_state`. Where the two versions differ, the caller passes what
//! differs (the bw, the aggregation window, the PROBE_RTT window, the slow-start condition).
//! Bandwidths are in segments per ns, times in ns, windows in segments.

use super::AckSample;
use crate::tcp::rate::RateSample;
use aqm::{Time, NS_PER_SEC};

/// PROBE_BW's cwnd gain (`bbr_cwnd_gain`).
pub const CWND_GAIN: f64 = 2.0;
/// Window of the min-RTT filter, ns (`bbr_min_rtt_win_sec`).
pub const MIN_RTT_WIN: Time = 10 * NS_PER_SEC;
/// Time at the PROBE_RTT window, ns (`bbr_probe_rtt_mode_ms`, draft ProbeRTTDuration).
pub const PROBE_RTT_TIME: Time = 200_000_000;
/// Smallest window, segments (`bbr_cwnd_min_target`).
pub const CWND_MIN: u32 = 4;
/// Growth that counts as "still growing" (`bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without that growth that mean the pipe is full (`bbr_full_bw_cnt`).
pub const FULL_BW_CNT: u32 = 3;
/// Pacing below the estimate, percent (`bbr_pacing_margin_percent`).
pub const PACING_MARGIN: f64 = 0.01;
/// Linux's initial window (`TCP_INIT_CWND`).
pub const INIT_CWND: u32 = 10;
/// Rounds of the ACK-aggregation max filter (`bbr_extra_acked_win_rtts`).
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Cap of the ACK-aggregation allowance, ns of bw (`bbr_extra_acked_max_us`).
pub const EXTRA_ACKED_MAX: Time = 100_000_000;

/// BBR's modes (`enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up to fill the pipe.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Steady state: v1 cycles the pacing gain around the estimate, v3 runs the DOWN /
    /// CRUISE / REFILL / UP cycle.
    ProbeBw,
    /// Cut inflight to measure the min RTT (v1: to 4 segments; v3: to max(4, BDP / 2)).
    ProbeRtt,
}

/// Linux's congestion-avoidance states as BBR sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// `TCP_CA_Open`.
    Open,
    /// `TCP_CA_Recovery`.
    Recovery,
    /// `TCP_CA_Loss` (after a retransmission timeout).
    Loss,
}

/// A bw (segments per ns) with a gain as a pacing rate, segments per second, 1% below
/// (`bbr_rate_bytes_per_sec`).
pub fn rate_per_sec(bw: f64, gain: f64) -> f64 {
    bw * gain * NS_PER_SEC as f64 * (1.0 - PACING_MARGIN)
}

/// `bbr_init` after a handshake whose SYN was timed (`srtt_ns` > 0): the pacing rate
/// `bbr_init_pacing_rate_from_rtt` sets, `high_gain` x cwnd / SRTT, and the min RTT, the SYN's
/// (`tcp_min_rtt`) (net/ipv4/tcp_bbr.c; google/bbr v3 the same with its startup gain). `None`
/// without an RTT: the 1 ms default set at construction stays.
pub fn init_from_handshake(cwnd: f64, srtt_ns: f64, high_gain: f64) -> Option<(f64, Time)> {
    (srtt_ns > 0.0).then(|| (rate_per_sec(cwnd / srtt_ns, high_gain), srtt_ns as Time))
}

/// SplitMix64 (a seed mixer) for the random draws (v1's start phase, v3's probe wait).
pub fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `bbr_bdp`: ceil(bw x min_rtt x gain); the initial window before any RTT sample.
pub fn bdp(min_rtt: Option<Time>, bw: f64, gain: f64) -> u32 {
    match min_rtt {
        None => INIT_CWND,
        Some(r) => {
            let w = bw * r as f64 * gain;
            // Linux rounds up after its fixed-point product; guard float noise.
            (w - 1e-9).ceil().max(0.0) as u32
        }
    }
}

/// `bbr_set_pacing_rate`: the first RTT sample sets `high_gain` x cwnd / SRTT
/// (`bbr_init_pacing_rate_from_rtt`); then the model's `rate` (from [`rate_per_sec`]) is taken
/// once the pipe is full, before that only when it is higher.
pub fn set_pacing_rate(
    pacing_rate: &mut f64,
    has_seen_rtt: &mut bool,
    s: &AckSample,
    cwnd: u32,
    high_gain: f64,
    rate: f64,
    full_bw_reached: bool,
) {
    if !*has_seen_rtt && s.srtt_ns > 0.0 {
        *has_seen_rtt = true;
        *pacing_rate = rate_per_sec(cwnd as f64 / s.srtt_ns, high_gain);
    }
    if full_bw_reached || rate > *pacing_rate {
        *pacing_rate = rate;
    }
}

/// `bbr_packets_in_net_at_edt`: `inflight` less what the bottleneck delivers at `bw` until the
/// next paced segment leaves at `edt`, plus a TSO goal when the pacing gain is above 1.
pub fn in_net_at_edt(inflight: u32, now: Time, edt: Time, bw: f64, gain: f64, tso: u32) -> u32 {
    let interval = edt.max(now) - now;
    let delivered = (bw * interval as f64) as u32;
    let mut at_edt = inflight;
    if gain > 1.0 {
        at_edt += tso;
    }
    at_edt.saturating_sub(delivered)
}

/// `bbr_save_cwnd`: the window to restore after recovery or PROBE_RTT, given the one saved.
pub fn save_cwnd(prior_cwnd: u32, prev_ca_state: CaState, mode: Mode, cwnd: u32) -> u32 {
    if prev_ca_state < CaState::Recovery && mode != Mode::ProbeRtt {
        cwnd
    } else {
        prior_cwnd.max(cwnd)
    }
}

/// The growth of `bbr_set_cwnd` toward `target`: capped at it once the pipe is full, before
/// that growing by the ACKed segments while below it or while `slow_start` holds; at least
/// [`CWND_MIN`].
pub fn grow_cwnd(
    cwnd: u32,
    acked: u32,
    target: u32,
    full_bw_reached: bool,
    slow_start: bool,
) -> u32 {
    let mut cwnd = cwnd;
    if full_bw_reached {
        cwnd = (cwnd + acked).min(target);
    } else if cwnd < target || slow_start {
        cwnd += acked;
    }
    cwnd.max(CWND_MIN)
}

/// PROBE_RTT's wait in `bbr_update_min_rtt`: once inflight is down to `target`, 200 ms and a
/// round from then (`done_stamp`, `round_done`); `true` when both have passed, where
/// `bbr_check_probe_rtt_done` restores the window and leaves the mode.
pub fn probe_rtt_done(
    done_stamp: &mut Option<Time>,
    round_done: &mut bool,
    next_rtt_delivered: &mut u64,
    s: &AckSample,
    round_start: bool,
    target: u32,
) -> bool {
    if done_stamp.is_none() && s.rate.in_flight <= target {
        *done_stamp = Some(s.now + PROBE_RTT_TIME);
        *round_done = false;
        *next_rtt_delivered = s.rate.total_delivered;
    } else if let Some(d) = *done_stamp {
        if round_start {
            *round_done = true;
        }
        return *round_done && s.now > d;
    }
    false
}

/// The ACK-aggregation estimator (`bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`):
/// the segments ACKed beyond what the bw explains since the epoch began, max-filtered over
/// two windows of rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckAggregation {
    /// Start of the ACK-aggregation epoch.
    pub ack_epoch_stamp: Time,
    /// Segments (S)ACKed in the epoch.
    pub ack_epoch_acked: u64,
    /// Max extra ACKed in the current and previous windows.
    pub extra_acked: [u64; 2],
    /// Rounds in the current extra-ACKed window.
    pub extra_acked_win_rtts: u32,
    /// Current extra-ACKed window.
    pub extra_acked_win_idx: usize,
}

impl AckAggregation {
    /// `bbr_update_ack_aggregation` with the model's `bw` and `win` rounds per window (v1:
    /// always [`EXTRA_ACKED_WIN_RTTS`]; v3: 1 until the pipe is full).
    pub fn update(&mut self, rs: &RateSample, round_start: bool, win: u32, bw: f64, cwnd: u32) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_ns <= 0 {
            return;
        }
        self.next_round(round_start, win);
        let epoch = rs.delivered_time.saturating_sub(self.ack_epoch_stamp);
        let mut expected = (bw * epoch as f64) as u64;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked as u64 >= 1 << 20
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = rs.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked as u64).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(cwnd as u64);
        let i = self.extra_acked_win_idx;
        self.extra_acked[i] = self.extra_acked[i].max(extra);
    }

    /// At a round start, the round count of the current window, and the other window (emptied)
    /// once it has `win` rounds.
    pub fn next_round(&mut self, round_start: bool, win: u32) {
        if round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= win {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
    }

    /// `bbr_ack_aggregation_cwnd`: the larger window's max, at most [`EXTRA_ACKED_MAX`] of `bw`.
    pub fn cwnd(&self, bw: f64) -> u32 {
        let max = (bw * EXTRA_ACKED_MAX as f64) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max) as u32
    }
}

/// The Loss state the simulator tracks for `bbr_set_state(TCP_CA_Loss)`: a timeout puts the
/// next ACK in Loss, which lasts until the highest segment sent at the timeout is ACKed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossState {
    /// The timeout's highest segment sent: the Loss state lasts until it is acknowledged.
    loss_high: Option<u32>,
    /// A timeout happened and the next ACK enters the Loss state.
    loss_pending: bool,
    in_loss: bool,
}

impl LossState {
    /// A retransmission timeout.
    pub fn on_timeout(&mut self) {
        self.loss_pending = true;
        self.in_loss = true;
    }

    /// The congestion state of this ACK, and whether it leaves the Loss state.
    pub fn on_ack(&mut self, s: &AckSample) -> (CaState, bool) {
        if self.loss_pending {
            self.loss_pending = false;
            self.loss_high = Some(s.rate.high_data);
        }
        let mut left = false;
        // Loss ends when the data outstanding at the timeout is acknowledged, or when the
        // recovery starts a fast recovery before (RACK finding a retransmission lost:
        // tcp_fastretrans_alert's TCP_CA_Loss case, tcp_rack_reo_timeout).
        let recovered = self.loss_high.is_some_and(|h| s.snd_una >= h);
        if self.in_loss && (recovered || s.rate.in_recovery) {
            self.in_loss = false;
            self.loss_high = None;
            left = true;
        }
        let state = if self.in_loss {
            CaState::Loss
        } else if s.rate.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        };
        (state, left)
    }
}
