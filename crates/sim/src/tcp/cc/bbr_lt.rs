//! BBR v1's long-term ("policer") bandwidth estimate, Linux's `net/ipv4/tcp_bbr.c`
//! (`bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling(_interval)`):
//! after a first loss, the flow measures its average delivery rate over sampling intervals
//! of 4 to 16 round trips that end on a loss with at least 50/256 (~20 %) of the interval's
//! delivered count lost; when two intervals in a row agree within 1/8 or 4 kbit/s, it takes
//! their mean as its bandwidth (`lt_use_bw`, Linux's `bbr_bw`) and paces at gain 1 for 48
//! round trips of PROBE_BW, then starts afresh. An app-limited sample or an interval past 16
//! rounds resets the sampling.
//!
//! Rates here are segments per ns, as [`super::bbr::Bbr`]'s; Linux's stamps are whole ms
//! (`div_u64(delivered_mstamp, USEC_PER_MSEC)`), kept so.

use aqm::Time;

/// Minimum round trips in a sampling interval (`bbr_lt_intvl_min_rtts`).
pub const LT_INTVL_MIN_RTTS: u32 = 4;
/// Loss ratio (lost / delivered, in 1/256) that makes an interval "lossy"
/// (`bbr_lt_loss_thresh`).
pub const LT_LOSS_THRESH: u64 = 50;
/// Two intervals' rates are consistent when they differ by at most this fraction
/// (`bbr_lt_bw_ratio` = BBR_UNIT / 8).
pub const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or by at most this many bytes per second (`bbr_lt_bw_diff` = 4000 bit/s / 8), as
/// `bbr_rate_bytes_per_sec` computes it: with the 1 % pacing margin.
pub const LT_BW_DIFF_BYTES: f64 = 4000.0 / 8.0;
/// Segment size for [`LT_BW_DIFF_BYTES`], bytes (the simulator's default MSS; Linux's
/// `mss_cache`).
pub const LT_MSS: f64 = 1460.0;
/// Round trips of PROBE_BW that use the long-term rate before sampling restarts
/// (`bbr_lt_bw_max_rtts`).
pub const LT_BW_MAX_RTTS: u32 = 48;

const MS: Time = 1_000_000;

/// The connection's counters an update reads (Linux's `tp->delivered`, `tp->lost`,
/// `tp->delivered_mstamp`) and the sample's facts (`rs->losses`, `rs->is_app_limited`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LtInput {
    /// Segments newly marked lost by this ACK (the Loss state's call: 1).
    pub losses: u32,
    /// The sample is application-limited.
    pub app_limited: bool,
    /// This ACK starts a round trip (the Loss state's call: always).
    pub round_start: bool,
    /// The flow is in PROBE_BW.
    pub probe_bw: bool,
    /// Connection's total delivered.
    pub delivered: u64,
    /// Connection's total marked lost.
    pub lost: u64,
    /// Time of the latest delivery, ns.
    pub delivered_time: Time,
}

/// What an update asks of the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtEvent {
    /// Nothing.
    None,
    /// Policing found: the long-term rate is in use; pace at gain 1 from now on.
    Policed,
    /// The long-term rate has been used for [`LT_BW_MAX_RTTS`] rounds: back to gain cycling
    /// (`bbr_reset_probe_bw_mode`).
    Expired,
}

/// The long-term estimator's state (Linux's `lt_*` fields of `struct bbr`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LtBw {
    /// Taking samples (a loss has started an interval).
    pub is_sampling: bool,
    /// Round trips in the current interval, or since the long-term rate is in use.
    pub rtt_cnt: u32,
    /// The long-term rate is the bandwidth estimate.
    pub use_bw: bool,
    /// Long-term rate, segments per ns (0: none).
    pub bw: f64,
    /// Delivered count when the interval began.
    pub last_delivered: u64,
    /// Delivery time when the interval began, whole ms.
    pub last_stamp_ms: u64,
    /// Lost count when the interval began.
    pub last_lost: u64,
}

impl LtBw {
    /// `bbr_reset_lt_bw_sampling_interval`: a new interval starts at `i`'s counters.
    pub fn reset_interval(&mut self, i: &LtInput) {
        self.last_stamp_ms = i.delivered_time / MS;
        self.last_delivered = i.delivered;
        self.last_lost = i.lost;
        self.rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`: no rate, not sampling, a new interval.
    pub fn reset(&mut self, i: &LtInput) {
        self.bw = 0.0;
        self.use_bw = false;
        self.is_sampling = false;
        self.reset_interval(i);
    }

    /// `bbr_lt_bw_interval_done`: an interval measured `bw`; policed if it agrees with the
    /// previous interval's.
    fn interval_done(&mut self, bw: f64, i: &LtInput) -> LtEvent {
        if self.bw > 0.0 {
            let diff = (bw - self.bw).abs();
            let diff_bytes = diff * 1e9 * LT_MSS * (1.0 - super::bbr_common::PACING_MARGIN);
            if diff <= LT_BW_RATIO * self.bw || diff_bytes <= LT_BW_DIFF_BYTES {
                self.bw = (bw + self.bw) / 2.0;
                self.use_bw = true;
                self.rtt_cnt = 0;
                return LtEvent::Policed;
            }
        }
        self.bw = bw;
        self.reset_interval(i);
        LtEvent::None
    }

    /// `bbr_lt_bw_sampling`, on every ACK after the round count (and on entering the Loss
    /// state, with one loss and a round start).
    pub fn sample(&mut self, i: &LtInput) -> LtEvent {
        if self.use_bw {
            if i.probe_bw && i.round_start {
                self.rtt_cnt += 1;
                if self.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset(i);
                    return LtEvent::Expired;
                }
            }
            return LtEvent::None;
        }
        // Sampling starts at a loss, once the policer's tokens are gone.
        if !self.is_sampling {
            if i.losses == 0 {
                return LtEvent::None;
            }
            self.reset_interval(i);
            self.is_sampling = true;
        }
        if i.app_limited {
            self.reset(i);
            return LtEvent::None;
        }
        if i.round_start {
            self.rtt_cnt += 1;
        }
        if self.rtt_cnt < LT_INTVL_MIN_RTTS {
            return LtEvent::None;
        }
        if self.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset(i);
            return LtEvent::None;
        }
        // The interval ends on a loss, with enough of them.
        if i.losses == 0 {
            return LtEvent::None;
        }
        let lost = i.lost.saturating_sub(self.last_lost);
        let delivered = i.delivered.saturating_sub(self.last_delivered);
        if delivered == 0 || (lost << 8) < LT_LOSS_THRESH * delivered {
            return LtEvent::None;
        }
        let t_ms = (i.delivered_time / MS) as i64 - self.last_stamp_ms as i64;
        if t_ms < 1 {
            return LtEvent::None;
        }
        let bw = delivered as f64 / (t_ms as f64 * MS as f64);
        self.interval_done(bw, i)
    }
}

#[cfg(test)]
#[path = "bbr_lt_tests.rs"]
mod tests;
