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
//! **Version 0.7** (commit 893e1479, 2024, the newest stored; [`Params::V07`], `cc = "prague"`
//! since 2026-11-29 and `"prague-0.7"`; `cc = "prague-0.6"` is 0.6) changes, each tested below:
//! alpha in 2^-24 units (`PRAGUE_ALPHA_BITS` 24); alpha starting at 0, the first CE mark
//! halving `frac_cwnd` (`prague_alpha_mode` 0); slow start copying `snd_cwnd` into
//! `frac_cwnd`; RTT independence after 4 rounds (`prague_rtt_transition`), with srtt and the
//! 25 ms target compared in `srtt_us` units (the CE and alpha gates at 25,000 us); the increase
//! divided by `frac_cwnd` itself and scaled by 1500 / MTU; `snd_cwnd` at least 2
//! (`MIN_CWND_RTT`); pacing at MTU / srtt x max(floor(`frac_cwnd`), packets in flight), at
//! least 100 kb/s (`MINIMUM_RATE`), which becomes `rate_bytes`; the rate-based mode at or
//! below 4 x 1500 B of window once CE was seen (`prague_cwnd_mode` 2): growth, CE and loss
//! responses on `rate_bytes`, `frac_cwnd` derived from it over the slow srtt EWMA `hsrtt_us`,
//! pacing 4/128 above `rate_bytes` in the first half of each virtual RTT after an alpha update
//! and 4/128 below in the second (`RATE_OFFSET`); **the segment size lowered** at each alpha
//! update (RTT-independent, not in a loss episode) to half the virtual window's bytes
//! (`prague_pacing_rate_to_max_mtu`, `MIN_CWND_VIRT` 2: `rate_bytes` x max(25 ms, srtt) in
//! the rate-based mode, else `frac_cwnd` x MTU x 25 ms / srtt below the target), between
//! `MIN_MSS` 150 B of payload and the flow's own size, `frac_cwnd` rescaled to the same
//! bytes and `snd_cwnd` and ssthresh with it (`prague_update_alpha`'s `tcp_sync_mss`; the
//! sender sends its new segments at [`CongestionControl::segment_payload`], a bulk flow
//! only). Not modelled at 0.7: `sk_max_pacing_rate` and `snd_cwnd_clamp` (unlimited here),
//! `tcp_bound_to_half_wnd` in `tcp_sync_mss` (the receiver's window is far larger), the
//! re-splitting of segments sent before the size fell when they are sent again (Linux's
//! `tcp_fragment` on retransmission; here they keep their size).
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
/// 0.7: alpha in units of 2^-24 (`PRAGUE_ALPHA_BITS` became 24).
pub const ALPHA_BITS_07: u32 = 24;
/// 0.7: the smallest `snd_cwnd` the fractional window rounds to (`MIN_CWND_RTT`).
pub const MIN_CWND_RTT: u32 = 2;
/// 0.7: the packets the virtual window is to hold before the segment size is lowered
/// (`MIN_CWND_VIRT`).
pub const MIN_CWND_VIRT: u64 = 2;
/// 0.7: the smallest payload the segment size is lowered to, bytes (`MIN_MSS`).
pub const MIN_MSS: u64 = 150;
/// 0.7: the pacing floor, 100 kb/s in bytes per second (`MINIMUM_RATE`).
pub const MINIMUM_RATE: u64 = 12_500;
/// 0.7: the packet size the increase is normalised to (`MTU_SYS`).
pub const MTU_SYS: u64 = 1500;
/// 0.7: the pacing swing of the rate-based mode, 4/128 (`RATE_OFFSET` >> `OFFSET_UNIT`).
pub const RATE_OFFSET: u64 = 4;
/// 0.7: `OFFSET_UNIT`.
pub const OFFSET_UNIT: u32 = 7;
/// 0.7: the gain of `hsrtt_us`, 2^-7 (`HSRTT_SHIFT`).
pub const HSRTT_SHIFT: u32 = 7;
/// 0.7: rate x srtt_us >> 23 approximates bytes per second x (srtt_us / 8e6 s)
/// (`RTT2SEC_SHIFT`).
pub const RTT2SEC_SHIFT: u32 = 23;
/// Linux's `TCP_INFINITE_SSTHRESH`, the initial ssthresh.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Which tcp_prague.c the controller follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// Commit 02573a21, module version 0.6 (`cc = "prague-0.6"`).
    V06,
    /// Commit 893e1479, module version 0.7 (2024), the newest stored (`cc = "prague"`,
    /// `"prague-0.7"`).
    V07,
}

/// Version 0.7's module parameters, as the kernel's defaults (`module_param` in
/// tcp_prague.c 893e1479); version 0.6's rules use none of them but `rtt_transition`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The version of tcp_prague.c followed.
    pub version: Version,
    /// `prague_rtt_transition`: rounds after slow start before RTT independence (0.7: 4;
    /// 0.6's [`RTT_TRANSITION`], 500).
    pub rtt_transition: u32,
    /// `prague_rtt_target`, us (25,000).
    pub rtt_target_us: u64,
    /// `prague_alpha_mode`: 0, alpha starts at 0 and the first CE mark halves the window; 1,
    /// alpha starts at 1 (0.6's rule).
    pub alpha_mode: u8,
    /// `prague_cwnd_mode`: 0 fractional window, 1 rate-based, 2 switch between them at
    /// `cwnd_transit` packets (default 2).
    pub cwnd_mode: u8,
    /// `prague_cwnd_transit`: the switching point, in `MTU_SYS` (1500 B) packets (4).
    pub cwnd_transit: u64,
    /// The flow's full packet size on the wire, bytes (0.7's `mtu_cache`, the
    /// `tcp_mss_to_mtu(mss_cache)` of `prague_init`): 1500 for the simulator's default mss 1460
    /// plus 40 header bytes; set from the flow by [`CongestionControl::on_segment_size`].
    pub mtu: u64,
}

impl Params {
    /// tcp_prague.c 02573a21 (0.6).
    pub const V06: Params = Params {
        version: Version::V06,
        rtt_transition: RTT_TRANSITION,
        rtt_target_us: 25_000,
        alpha_mode: 1,
        cwnd_mode: 0,
        cwnd_transit: 4,
        mtu: MTU_SYS,
    };
    /// tcp_prague.c 893e1479 (0.7) with its default module parameters.
    pub const V07: Params = Params {
        version: Version::V07,
        rtt_transition: 4,
        rtt_target_us: 25_000,
        alpha_mode: 0,
        cwnd_mode: 2,
        cwnd_transit: 4,
        mtu: MTU_SYS,
    };
}

/// Prague's state (the kernel's `struct prague` and the `tcp_sock` fields it reads or sets).
#[derive(Clone, Debug)]
pub struct Prague {
    /// The version followed and its module parameters.
    pub params: Params,
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
    /// 0.7: the internal pacing rate, bytes per second (`rate_bytes`).
    rate_bytes: u64,
    /// 0.7: the rate and window when a loss response began (`loss_rate_bytes`, `loss_cwnd`;
    /// kept for the undo, which is not modelled).
    loss_rate_bytes: u64,
    loss_cwnd: u32,
    /// 0.7: the slow EWMA of srtt_us, upscaled by 2^7 (`hsrtt_us`, gain 1/128 per round).
    hsrtt_us: u64,
    /// 0.7: the rate-based mode is on (`cwnd_mode`).
    rate_mode: bool,
    /// The packet size in use on the wire, bytes (`tcp_mss_to_mtu(tp->mss_cache)`): the
    /// flow's, [`Params::mtu`], until 0.7 lowers it (`prague_update_alpha`).
    mtu: u64,
    /// Header and option bytes of a segment (`tcp_mss_to_mtu(sk, 0)`), 40 until told.
    header: u64,
    /// 0.7 and a sender that honours [`CongestionControl::segment_payload`]: the segment
    /// size may be lowered.
    resizable: bool,
}

impl Default for Prague {
    /// The newest version, 0.7.
    fn default() -> Self {
        Prague::new(Params::V07)
    }
}

impl Prague {
    /// Prague as tcp_prague.c 02573a21 (0.6).
    pub fn v06() -> Self {
        Prague::new(Params::V06)
    }

    /// Prague with the given version and module parameters (`prague_init`'s alpha).
    pub fn new(params: Params) -> Self {
        let alpha_bits = match params.version {
            Version::V06 => ALPHA_BITS,
            Version::V07 => ALPHA_BITS_07,
        };
        Prague {
            params,
            reno: false,
            upscaled_alpha: if params.alpha_mode & 1 == 1 {
                (1u64 << alpha_bits) << SHIFT_G
            } else {
                0
            },
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
            rate_bytes: MINIMUM_RATE,
            loss_rate_bytes: 0,
            loss_cwnd: 0,
            hsrtt_us: 1 << (HSRTT_SHIFT + 3),
            rate_mode: params.cwnd_mode & 1 == 1,
            mtu: params.mtu,
            header: 40,
            resizable: false,
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

/// 0.7's EWMA step (`prague_update_alpha` at 893e1479): as [`ewma_upscaled`] with alpha in
/// 2^-24 units, F = (ce << 24) / delivered, the upscaled alpha at most 2^28.
#[inline]
pub fn ewma_upscaled_07(upscaled: u64, ce: u64, delivered: u64) -> u64 {
    let f = if ce > 0 {
        (ce << ALPHA_BITS_07) / delivered.clamp(1, u64::from(u32::MAX))
    } else {
        0
    };
    (upscaled - (upscaled >> SHIFT_G) + f).min((1 << ALPHA_BITS_07) << SHIFT_G)
}

/// 0.7's additive increase per non-CE segment, 2^-20 units (`prague_ai_ack_increase` at
/// 893e1479): one segment before `transition` rounds, without an RTT, above 100 ms or at or
/// above the target; else round((srtt << 20) srtt / target^2) with srtt and target both in
/// Linux's `srtt_us` units (eight times us; the target is `prague_rtt_target << 3`).
#[inline]
pub fn ai_ack_increase_07(srtt_us8: u64, round: u32, transition: u32, target_us: u64) -> u64 {
    let target = target_us << 3;
    if round < transition || srtt_us8 == 0 || srtt_us8 > 100_000 << 3 || srtt_us8 >= target {
        return ONE_CWND;
    }
    let divisor = target * target;
    ((srtt_us8 << CWND_UNIT) * srtt_us8 + (divisor >> 1)) / divisor
}

/// 0.7's reduction on entering CWR, alpha in 2^-24 units: (alpha frac + 2^24) >> 25.
#[inline]
pub fn cwr_reduction_07(alpha: u64, frac_cwnd: u64) -> u64 {
    (alpha * frac_cwnd + (1 << ALPHA_BITS_07)) >> (ALPHA_BITS_07 + 1)
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
        (self.upscaled_alpha >> SHIFT_G) as f64 / (1u64 << self.alpha_bits()) as f64
    }

    /// The version followed.
    pub fn version(&self) -> Version {
        self.params.version
    }

    fn v07(&self) -> bool {
        self.params.version == Version::V07
    }

    /// `PRAGUE_ALPHA_BITS`: 20 at 0.6, 24 at 0.7.
    fn alpha_bits(&self) -> u32 {
        if self.v07() {
            ALPHA_BITS_07
        } else {
            ALPHA_BITS
        }
    }

    /// 0.7: the rate-based mode applies (`prague_is_rtt_indep && cwnd_mode == 1`).
    fn rate_based(&self, cwnd: u32) -> bool {
        self.v07() && self.rate_mode && self.is_rtt_indep(cwnd)
    }

    /// 0.7: the internal pacing rate, bytes per second (`rate_bytes`).
    pub fn rate_bytes(&self) -> u64 {
        self.rate_bytes
    }

    /// 0.7: `prague_frac_cwnd_to_pacing_rate`: MTU x 8e6 / srtt_us (truncated) x frac_cwnd
    /// >> 20, at least [`MINIMUM_RATE`].
    fn frac_to_pacing_rate(&self, frac: u64) -> u64 {
        let per = 8_000_000 * self.mtu;
        let rate = per.checked_div(self.srtt_us8).unwrap_or(per);
        (((u128::from(rate) * u128::from(frac)) >> CWND_UNIT) as u64).max(MINIMUM_RATE)
    }

    /// 0.7: `prague_pacing_rate_to_frac_cwnd`: ceil((rate_bytes x rtt >> 3) / MTU), rtt the
    /// slow EWMA `hsrtt_us >> 7` (or srtt_us if 0), in 2^-20 segments.
    fn pacing_rate_to_frac(&self) -> u64 {
        let h = self.hsrtt_us >> HSRTT_SHIFT;
        let rtt = if h > 0 { h } else { self.srtt_us8 };
        let x =
            ((u128::from(self.rate_bytes) * u128::from(rtt)) >> (RTT2SEC_SHIFT - CWND_UNIT)) as u64;
        x.div_ceil(self.mtu)
    }

    /// 0.7: `prague_virtual_rtt`: max(target, srtt), `srtt_us` units.
    fn virtual_rtt(&self) -> u64 {
        (self.params.rtt_target_us << 3).max(self.srtt_us8)
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
    /// `rtt_transition` rounds ([`RTT_TRANSITION`] at 0.6, 4 at 0.7).
    pub fn is_rtt_indep(&self, cwnd: u32) -> bool {
        !self.in_slow_start(cwnd) && self.round >= self.params.rtt_transition
    }

    /// The target RTT, us, as the version compares elapsed times with it: 0.6 in 128 us
    /// units (24,960 us), 0.7 exactly (`prague_target_rtt(sk) >> 3`, 25,000 us).
    fn target_us(&self) -> u64 {
        if self.v07() {
            self.params.rtt_target_us
        } else {
            RTT_TARGET << RTT_UNIT
        }
    }

    /// `frac_cwnd`, set from the window the first time it is needed (`prague_init`; at 0.7
    /// also `alpha_stamp`, `rate_bytes` and `hsrtt_us`).
    fn frac(&mut self, cwnd: u32, now: Time) -> u64 {
        if self.frac_cwnd.is_none() && self.v07() {
            self.alpha_stamp_us = now / 1000;
            self.rate_bytes = (8_000_000 * self.mtu)
                .checked_div(self.srtt_us8)
                .map_or(MINIMUM_RATE, |r| {
                    (r * u64::from(cwnd.max(1))).max(MINIMUM_RATE)
                });
            if self.srtt_us8 > 0 {
                self.hsrtt_us = self.srtt_us8 << HSRTT_SHIFT;
            }
        }
        *self
            .frac_cwnd
            .get_or_insert(u64::from(cwnd.max(1)) << CWND_UNIT)
    }

    /// `prague_cwnd_changed`: the additive increase is computed again.
    fn cwnd_changed(&mut self) {
        self.ai_ack_increase = if self.v07() {
            let p = &self.params;
            ai_ack_increase_07(self.srtt_us8, self.round, p.rtt_transition, p.rtt_target_us)
        } else {
            ai_ack_increase(self.srtt_us8, self.round)
        };
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
        let v07 = self.v07();
        let mut w = cwnd;
        let mut frac = self.frac(w, s.now);
        let mut acked = i64::from(s.delivered);
        if s.ce > 0 {
            // 0.7, prague_alpha_mode 0: the first CE mark halves the window (alpha is 0).
            if v07 && !self.saw_ce && self.params.alpha_mode & 1 == 0 {
                frac = (frac + 1) >> 1;
                self.frac_cwnd = Some(frac);
            }
            self.saw_ce = true;
            acked -= i64::from(s.ce);
        }
        if acked > 0 && !self.in_loss && self.is_cwnd_limited(w) {
            if self.in_slow_start(w) {
                // tcp_slow_start raises snd_cwnd up to ssthresh; at 0.6 frac_cwnd is left as
                // it is, at 0.7 it is set to the new snd_cwnd.
                let grown = (u64::from(w) + acked as u64).min(u64::from(self.ssthresh)) as u32;
                acked -= i64::from(grown - w);
                w = grown;
                if v07 {
                    frac = u64::from(w) << CWND_UNIT;
                    self.frac_cwnd = Some(frac);
                }
                if acked == 0 {
                    self.cwnd_changed();
                    return w;
                }
            }
            let acked = acked as u64;
            if !v07 {
                let n = u64::from(frac_to_cwnd(frac));
                let increase = (acked * self.ai_ack_increase + (n >> 1)) / n;
                frac += increase.max(acked);
            } else if self.rate_based(w) {
                // Rate-based growth: MTU_SYS per virtual RTT per window's worth of ACKs.
                let vrtt = self.virtual_rtt();
                let increase = ((acked * MTU_SYS) << RTT2SEC_SHIFT) / vrtt;
                let divisor = self.mtu << RTT2SEC_SHIFT;
                let n = (self.rate_bytes * vrtt).div_ceil(divisor);
                self.rate_bytes += (increase + n / 2).checked_div(n).unwrap_or(0);
                frac = (frac + acked).max(self.pacing_rate_to_frac());
            } else {
                // Divided by frac_cwnd itself (in 2^-20 units), rounded; scaled by 1500 / MTU.
                let mut increase = acked * self.ai_ack_increase;
                increase = ((increase << CWND_UNIT) + frac / 2)
                    .checked_div(frac)
                    .unwrap_or(increase);
                increase = increase * MTU_SYS / self.mtu;
                frac += increase.max(acked);
                self.rate_bytes = (self.rate_bytes + acked).max(self.frac_to_pacing_rate(frac));
            }
            self.frac_cwnd = Some(frac);
        }
        // adjust: one segment per ACK towards ceil(frac_cwnd) (at 0.7 at least MIN_CWND_RTT);
        // a step down sets ssthresh.
        let target = if v07 {
            frac_to_cwnd(frac).max(MIN_CWND_RTT)
        } else {
            frac_to_cwnd(frac)
        };
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
        s.snd_una >= self.next_seq && (!self.is_rtt_indep(cwnd) || elapsed >= self.target_us())
    }

    /// `prague_update_alpha` (after the first CE mark) and `prague_new_round`; returns
    /// `snd_cwnd`, which 0.7's change of segment size may set.
    fn update_alpha(&mut self, mut cwnd: u32, s: &AckSample) -> u32 {
        if self.saw_ce {
            let ewma = if self.v07() {
                ewma_upscaled_07
            } else {
                ewma_upscaled
            };
            self.upscaled_alpha = ewma(
                self.upscaled_alpha,
                self.delivered_ce - self.old_delivered_ce,
                self.delivered - self.old_delivered,
            );
            self.alpha_stamp_us = s.now / 1000;
            if self.resizable && self.is_rtt_indep(cwnd) && !self.in_loss {
                cwnd = self.resize(cwnd);
            }
        }
        if self.v07() {
            // The slow srtt EWMA, gain 2^-7 per round, for the rate-based mode.
            self.hsrtt_us = self.hsrtt_us + self.srtt_us8 - (self.hsrtt_us >> HSRTT_SHIFT);
        }
        self.next_seq = s.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !self.in_slow_start(cwnd) {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.params.rtt_transition;
            }
        }
        self.cwnd_changed();
        cwnd
    }

    /// 0.7: `prague_pacing_rate_to_max_mtu`, the packet size, bytes, at which the virtual
    /// window holds [`MIN_CWND_VIRT`] packets: ceil(window bytes / 2), the window bytes
    /// `rate_bytes` x max(25 ms, srtt) (`>> RTT2SEC_SHIFT`) in the rate-based mode, else
    /// `frac_cwnd` x MTU scaled by target / srtt below the target RTT.
    pub fn max_mtu(&self, cwnd: u32) -> u64 {
        let bytes = if self.rate_based(cwnd) {
            let b = u128::from(self.rate_bytes) * u128::from(self.virtual_rtt());
            (b >> RTT2SEC_SHIFT) as u64
        } else {
            let target = u128::from(self.params.rtt_target_us << 3);
            let rtt = u128::from(self.srtt_us8);
            let mut scaled = u128::from(self.frac_cwnd.unwrap_or(ONE_CWND));
            if rtt < target {
                // The kernel divides by srtt_us unguarded; RTT independence implies a sample.
                scaled = scaled * target / rtt.max(1);
            }
            ((scaled * u128::from(self.mtu)) >> CWND_UNIT) as u64
        };
        bytes.div_ceil(MIN_CWND_VIRT)
    }

    /// 0.7: `prague_valid_mtu`: at most the flow's packet size, at least [`MIN_MSS`] of
    /// payload (the kernel passes the size as a u32).
    pub fn valid_mtu(&self, mtu: u64) -> u64 {
        (mtu as u32 as u64)
            .min(self.params.mtu)
            .max(MIN_MSS + self.header)
    }

    /// 0.7's change of segment size in `prague_update_alpha` (RTT independence on, not in a
    /// loss episode): the packet size becomes [`Prague::valid_mtu`] of
    /// [`Prague::max_mtu`]; if it changes, `frac_cwnd` is rescaled to the same bytes (x old /
    /// new, truncated), the MSS follows (`tcp_sync_mss`; here
    /// [`CongestionControl::segment_payload`]) and, if the rounded window differs, `snd_cwnd`
    /// is set to it at once and ssthresh rescaled likewise. Returns `snd_cwnd`.
    fn resize(&mut self, cwnd: u32) -> u32 {
        let used = self.mtu;
        let mtu = self.valid_mtu(self.max_mtu(cwnd));
        if used == mtu {
            return cwnd;
        }
        let frac = self.frac_cwnd.unwrap_or(ONE_CWND);
        let frac = frac * used / mtu;
        self.frac_cwnd = Some(frac);
        self.mtu = mtu;
        let new = frac_to_cwnd(frac).max(MIN_CWND_RTT);
        if new == cwnd {
            return cwnd;
        }
        // snd_ssthresh x mtu_used / mtu, stored back into the u32 field.
        self.ssthresh = (u64::from(self.ssthresh) * used / mtu) as u32;
        self.cwnd_changed();
        new
    }

    /// 0.7: the packet size in use on the wire, bytes (`tcp_mss_to_mtu(tp->mss_cache)`).
    pub fn mtu(&self) -> u64 {
        self.mtu
    }

    /// `prague_update_pacing_rate`: frac_cwnd x MTU / srtt, doubled while `snd_cwnd` <
    /// ssthresh / 2, in segments per second (the kernel's truncations to whole bytes per
    /// second left out: under 1 B/s).
    fn update_pacing(&mut self, cwnd: u32, s: &AckSample) {
        if self.v07() {
            self.update_pacing_07(cwnd, s);
            return;
        }
        let Some(frac) = self.frac_cwnd.filter(|_| self.srtt_us8 > 0) else {
            self.pacing = None;
            return;
        };
        let ratio = if cwnd < self.ssthresh / 2 { 2.0 } else { 1.0 };
        let per_window = ratio * 8e6 / self.srtt_us8 as f64;
        self.pacing = Some(per_window * frac as f64 / ONE_CWND as f64);
    }

    /// 0.7's `prague_update_pacing_rate`, in bytes per second as the kernel, handed to the
    /// sender in segments per second (divided by the MTU): in the rate-based mode
    /// `rate_bytes` 4/128 above in the first half of a virtual RTT after the last alpha
    /// update and 4/128 below in the second (`RATE_OFFSET`); else MTU x 8e6 / srtt_us
    /// (truncated) x max(floor(frac_cwnd), packets in flight), at least [`MINIMUM_RATE`],
    /// which becomes `rate_bytes`. Doubled while `snd_cwnd` < ssthresh / 2.
    fn update_pacing_07(&mut self, cwnd: u32, s: &AckSample) {
        let mut rate = if self.rate_based(cwnd) {
            let offset = (RATE_OFFSET * self.rate_bytes) >> OFFSET_UNIT;
            let elapsed = (s.now / 1000).saturating_sub(self.alpha_stamp_us);
            if self.virtual_rtt() >> 4 <= elapsed {
                self.rate_bytes - offset
            } else {
                self.rate_bytes + offset
            }
        } else {
            let frac = self.frac_cwnd.unwrap_or(ONE_CWND);
            let inflight = (frac >> CWND_UNIT).max(u64::from(s.rate.in_flight));
            let per = 8_000_000 * self.mtu;
            let per = per.checked_div(self.srtt_us8).unwrap_or(per);
            let r = (per * inflight).max(MINIMUM_RATE);
            self.rate_bytes = r;
            r
        };
        if cwnd < self.ssthresh / 2 {
            rate <<= 1;
        }
        // Without an RTT the kernel's rate is MTU x 8e6 x flight: in effect unpaced.
        self.pacing = (self.srtt_us8 > 0).then(|| rate as f64 / self.mtu as f64);
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
        match self.params.version {
            Version::V06 => "prague-0.6",
            Version::V07 => "prague-0.7",
        }
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
        self.frac(w, s.now);
        // prague_ca_open: the loss episode is over once out of recovery past its snd_max.
        if self.in_loss && !s.rate.in_recovery && s.snd_una >= self.loss_high {
            self.in_loss = false;
        }
        self.note_window_use(w, s);
        let w = self.update_cwnd(w, s);
        let w = if self.should_update_ewma(w, s) {
            self.update_alpha(w, s)
        } else {
            w
        };
        self.update_pacing(w, s);
        if self.v07() && self.params.cwnd_mode & 2 == 2 {
            // prague_cwnd_mode 2: the rate-based mode at or below cwnd_transit packets once a
            // CE mark has been seen; frac_cwnd and rate_bytes follow each other across.
            let cwnd_bytes = u64::from(w) * self.mtu;
            if self.saw_ce && cwnd_bytes <= self.params.cwnd_transit * MTU_SYS {
                self.rate_mode = true;
                self.frac_cwnd = Some(self.pacing_rate_to_frac());
            } else {
                self.rate_mode = false;
                self.rate_bytes = self.frac_to_pacing_rate(self.frac_cwnd.unwrap_or(ONE_CWND));
            }
        }
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
        let w = (cwnd as u32).max(1);
        let frac = self.frac(w, now);
        if !self.v07() {
            self.frac_cwnd = Some(frac - (frac >> 1));
        } else {
            self.loss_cwnd = w;
            self.loss_rate_bytes = self.rate_bytes;
            if self.rate_based(w) {
                self.rate_bytes -= self.rate_bytes >> 1;
                self.frac_cwnd = Some(self.pacing_rate_to_frac());
            } else {
                self.frac_cwnd = Some(frac - (frac >> 1));
                self.rate_bytes = self.frac_to_pacing_rate(frac - (frac >> 1));
            }
        }
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
        let frac = self.frac(w, now);
        let now_us = now / 1000;
        if self.is_rtt_indep(w) && self.target_us() > now_us.saturating_sub(self.cwr_stamp_us) {
            return self.ssthresh_f64();
        }
        self.cwr_stamp_us = now_us;
        let alpha = self.upscaled_alpha >> SHIFT_G;
        if !self.v07() {
            self.frac_cwnd = Some(frac - cwr_reduction(alpha, frac));
        } else if self.rate_based(w) {
            let reduction =
                ((u128::from(self.rate_bytes) * u128::from(alpha)) >> (ALPHA_BITS_07 + 1)) as u64;
            self.rate_bytes = (self.rate_bytes - reduction).max(MINIMUM_RATE);
            self.frac_cwnd = Some(self.pacing_rate_to_frac());
        } else {
            let f = frac - cwr_reduction_07(alpha, frac);
            self.frac_cwnd = Some(f);
            self.rate_bytes = self.frac_to_pacing_rate(f);
        }
        self.ssthresh_f64()
    }

    /// The flow's segment size (`prague_init`'s `mtu_cache`); 0.7 may lower it when the
    /// sender can honour it.
    fn on_segment_size(&mut self, mss: u32, header: u32, resizable: bool) -> bool {
        self.params.mtu = u64::from(mss + header);
        self.mtu = self.params.mtu;
        self.header = u64::from(header);
        self.resizable = resizable && self.v07();
        self.resizable
    }

    /// 0.7: the MSS `tcp_sync_mss` leaves, the packet size in use less the headers.
    fn segment_payload(&self) -> Option<u32> {
        (self.resizable && !self.reno).then(|| (self.mtu - self.header) as u32)
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
            ..Prague::v06()
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
        let mut p = Prague::v06();
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

    // ---- tcp_prague.c 893e1479 (0.7): each test fails under 0.6's rules.

    /// A 0.7 Prague out of slow start (ssthresh = cwnd), `frac_cwnd` = cwnd, upscaled alpha
    /// as given (2^-24 units x 16), srtt 20 ms, past the 4 transition rounds, a CE mark seen,
    /// the window full at the last ACK, in the fractional-window mode.
    fn in_ca07(cwnd: u32, upscaled_alpha: u64) -> Prague {
        Prague {
            frac_cwnd: Some(u64::from(cwnd) << CWND_UNIT),
            ssthresh: cwnd,
            upscaled_alpha,
            srtt_us8: 160_000,
            hsrtt_us: 160_000 << HSRTT_SHIFT,
            round: 4,
            saw_ce: true,
            next_seq: u32::MAX,
            is_cwnd_limited: true,
            cwnd_usage_seq: u32::MAX,
            ..Prague::default()
        }
    }

    /// PRAGUE_ALPHA_BITS 24: a round of 3 segments with 1 CE from alpha 0 gives upscaled
    /// (1 << 24) / 3 = 5,592,405, alpha 349,525 / 2^24; the CWR reduction of a 1000-segment
    /// window is (349,525 x 1000 x 2^20 + 2^24) >> 25 = 10,922,656 (0.6's 20 bits: alpha
    /// 21,845 / 2^20, reduction 10,922,500).
    #[test]
    fn v07_alpha_has_24_bits() {
        assert_eq!(ewma_upscaled_07(0, 1, 3), 5_592_405);
        assert_eq!(ewma_upscaled_07(1 << 28, 3, 3), 1 << 28, "at most 1");
        let mut p = in_ca07(1000, 5_592_405);
        p.round = 0; // no CWR gate
        p.on_ecn(1000.0, 1000, 0);
        assert_eq!(p.frac_cwnd, Some((1000 << 20) - 10_922_656));
        assert!((p.alpha() - 349_525.0 / 16_777_216.0).abs() < 1e-12);
    }

    /// prague_alpha_mode 0: alpha starts at 0; the first CE-reporting ACK enters CWR with
    /// reduction (0 + 2^24) >> 25 = 0, then halves frac_cwnd: (40 x 2^20 + 1) >> 1 = 20 x 2^20;
    /// snd_cwnd steps 40 -> 39. The round (2 segments, 2 CE) ends: upscaled alpha = 0 + 2^24,
    /// alpha 2^20 / 2^24 = 1/16; the next CWR takes (2^20 x 20 x 2^20 + 2^24) >> 25 = 655,360
    /// (1/32 of the window). Under 0.6 alpha starts at 1 and the second CWR halves again.
    #[test]
    fn v07_alpha_starts_at_zero_and_the_first_mark_halves_the_window() {
        let mut p = in_ca07(40, 0);
        p.saw_ce = false;
        p.round = 0;
        p.next_seq = 0;
        step(&mut p, 40.0, &ack(0, 0, 10, 20, 40), false); // a new round: snd_nxt 20
        let w = step(&mut p, 40.0, &ack(2, 2, 12, 30, 40), true);
        assert_eq!((w, p.frac_cwnd), (39.0, Some(20 << 20)));
        assert_eq!(p.upscaled_alpha, 0, "round not over");
        let w = step(&mut p, w, &ack(0, 0, 20, 30, 39), false);
        assert_eq!(p.upscaled_alpha, 1 << 24);
        let mut a = ack(0, 0, 22, 40, 38);
        a.now = 100 * MS;
        step(&mut p, w, &a, true);
        assert_eq!(p.frac_cwnd, Some((20 << 20) - 655_360));
    }

    /// Slow start at 0.7: tcp_slow_start raises snd_cwnd 10 -> 20 over five ACKs of 2 and
    /// frac_cwnd follows it (20 x 2^20); the pacing rate, doubled in slow start, is 2 x
    /// (8e6 x 1500 / 160,000 = 75,000 B/s per segment) x 20 = 3,000,000 B/s, 2000 segments/s
    /// (0.6: frac_cwnd stays 10 x 2^20, 1000 segments/s).
    #[test]
    fn v07_slow_start_copies_the_window_into_the_fractional_window() {
        let mut p = Prague::default();
        let mut w = 10.0;
        for k in 0..5 {
            w = step(&mut p, w, &ack(2, 0, 2 * k + 2, 30, w as u32), false);
        }
        assert_eq!(w, 20.0);
        assert_eq!(p.frac_cwnd, Some(20 << 20));
        assert!((p.pacing_rate().unwrap() - 2000.0).abs() < 1e-9);
    }

    /// RTT independence after 4 rounds with srtt and target in srtt_us units (8 x us; target
    /// 25,000 << 3 = 200,000): srtt 20.4 ms = 163,200, ai = (163,200^2 x 2^20 + 2 x 10^10) /
    /// (4 x 10^10) = 698,201 (0.6: 697,148 in 128 us units, and only from round 500); 24.96 ms
    /// = 199,680: 1,045,223 (0.6: one segment); 25 ms: one segment; round 3: one segment.
    #[test]
    fn v07_rtt_scaling_after_four_rounds_in_srtt_units() {
        let f = |srtt_us: u64, round| ai_ack_increase_07(8 * srtt_us, round, 4, 25_000);
        assert_eq!(f(20_400, 4), 698_201);
        assert_eq!(f(24_960, 4), 1_045_223);
        assert_eq!(f(25_000, 4), ONE_CWND);
        assert_eq!(f(20_400, 3), ONE_CWND);
        assert_eq!(f(0, 4), ONE_CWND);
        let mut p = in_ca07(40, 0);
        p.srtt_us8 = 8 * 20_400;
        p.cwnd_changed();
        assert_eq!(p.ai_ack_increase, 698_201);
    }

    /// prague_enter_cwr's gate at 0.7: `prague_target_rtt >> 3` = 25,000 us exactly. With alpha
    /// 1/2 (upscaled 2^27): at 1 s 40 -> 30 segments; at 1 s + 24.960 ms nothing (0.6's
    /// 24,960 us gate would reduce); at 1 s + 25.000 ms 30 -> 22.5.
    #[test]
    fn v07_cwr_gate_of_25000_us() {
        let mut p = in_ca07(40, 1 << 27);
        let t = 1_000 * MS;
        p.on_ecn(40.0, 40, t);
        assert_eq!(p.frac_cwnd, Some(30 << 20));
        p.on_ecn(40.0, 40, t + 24_960_000);
        assert_eq!(p.frac_cwnd, Some(30 << 20), "24.960 ms: skipped");
        p.on_ecn(40.0, 40, t + 25_000_000);
        assert_eq!(p.frac_cwnd, Some((45 << 20) / 2), "25.000 ms: reduced");
    }

    /// prague_update_cwnd at 0.7 divides by frac_cwnd itself, rounded: frac 75.5 segments =
    /// 79,167,488, an ACK of 2 without CE (ai one segment, round 0): (2 x 2^40 + 39,583,744) /
    /// 79,167,488 = 27,777, times 1500 / MTU 1500 (0.6 divides by ceil = 76: 27,594).
    #[test]
    fn v07_increase_divided_by_the_fractional_window() {
        let mut p = in_ca07(76, 0);
        p.round = 0;
        p.frac_cwnd = Some(79_167_488);
        step(&mut p, 76.0, &ack(2, 0, 10, 200, 76), false);
        assert_eq!(p.frac_cwnd, Some(79_167_488 + 27_777));
    }

    /// MIN_CWND_RTT: frac_cwnd half a segment rounds to snd_cwnd 2 at 0.7, so snd_cwnd 1 (as
    /// after a timeout) steps up to 2; 0.6 rounds to 1 and stays.
    #[test]
    fn v07_window_at_least_two() {
        let mut p = in_ca07(2, 0);
        p.frac_cwnd = Some(1 << 19);
        let w = step(&mut p, 1.0, &ack(0, 0, 10, 200, 1), false);
        assert_eq!(w, 2.0);
        let mut q = in_ca(2, 0);
        q.frac_cwnd = Some(1 << 19);
        assert_eq!(step(&mut q, 1.0, &ack(0, 0, 10, 200, 1), false), 1.0);
    }

    /// 0.7's pacing in the fractional-window mode: 75,000 B/s per segment at srtt 20 ms times
    /// max(floor(frac_cwnd), packets in flight): frac 30.7, 25 in flight: 2,250,000 B/s = 1500
    /// segments/s; 32 in flight: 1600 (0.6: 30.7 / 20 ms = 1535); frac 0.1, none in flight:
    /// the 12,500 B/s floor, 8.33 segments/s.
    #[test]
    fn v07_pacing_from_the_whole_window_or_the_flight() {
        let mut p = in_ca07(31, 0);
        let frac = (30.7 * ONE_CWND as f64) as u64;
        for (flight, want) in [(25, 1500.0), (32, 1600.0)] {
            p.frac_cwnd = Some(frac);
            let mut a = ack(0, 0, 10, 200, 31);
            a.rate.in_flight = flight;
            step(&mut p, 31.0, &a, false);
            assert!((p.pacing_rate().unwrap() - want).abs() < 1e-9, "{flight}");
        }
        // At the end of the ACK, out of the rate-based mode (31 x 1500 B > 6000 B), rate_bytes
        // is set from frac_cwnd: 75,000 x 32,191,283 >> 20 = 2,302,499.
        assert_eq!(p.rate_bytes(), 2_302_499);
        let mut q = in_ca07(31, 0);
        q.frac_cwnd = Some(ONE_CWND / 10);
        q.ssthresh = 2;
        step(&mut q, 2.0, &ack(0, 0, 10, 200, 2), false);
        assert!((q.pacing_rate().unwrap() - 12_500.0 / 1500.0).abs() < 1e-9);
    }

    /// prague_cwnd_mode 2: at or below 4 x 1500 B of window, once CE has been seen, the
    /// rate-based mode. snd_cwnd 4 = 6000 B: the mode switches on at the end of the ACK and
    /// frac_cwnd = ceil((rate 300,000 B/s x hsrtt 160,000 >> 3) / 1500) = 4,000,000. The
    /// pacing rate is rate_bytes + 4/128 of it (309,375 B/s, 206.25 segments/s) in the first
    /// half of the virtual RTT max(25 ms, srtt) after the last alpha update (12.5 ms), and -
    /// 4/128 (290,625 B/s, 193.75 segments/s) after. A window of 5 (7500 B) leaves the mode.
    #[test]
    fn v07_rate_based_mode_with_its_three_percent_swing() {
        let mut p = in_ca07(4, 1 << 27);
        p.rate_bytes = 300_000;
        p.alpha_stamp_us = 1_000_000;
        let mut a = ack(0, 0, 10, 200, 4);
        a.now = 1_010 * MS;
        step(&mut p, 4.0, &a, false); // frac mode still: rate_bytes = 75,000 x 4
        assert!(p.rate_mode);
        assert_eq!(p.frac_cwnd, Some(4_000_000));
        step(&mut p, 4.0, &a, false);
        assert!((p.pacing_rate().unwrap() - 206.25).abs() < 1e-9);
        a.now = 1_013 * MS;
        step(&mut p, 4.0, &a, false);
        assert!((p.pacing_rate().unwrap() - 193.75).abs() < 1e-9);
        // Rate-based CWR: 300,000 x 2^23 >> 25 = 75,000 off; frac from the rate: 3,000,000.
        p.on_ecn(4.0, 4, 2_000 * MS);
        assert_eq!((p.rate_bytes(), p.frac_cwnd), (225_000, Some(3_000_000)));
        // Rate-based loss: the rate halves, 112,500; frac 1,500,000.
        p.on_congestion(4.0, 4, 2_001 * MS);
        assert_eq!((p.rate_bytes(), p.frac_cwnd), (112_500, Some(1_500_000)));
        let mut q = in_ca07(5, 0);
        q.rate_mode = true;
        step(&mut q, 5.0, &ack(0, 0, 10, 200, 5), false);
        assert!(!q.rate_mode, "7500 B > 6000 B");
        assert_eq!(q.rate_bytes(), 375_000);
    }

    /// Rate-based growth: an ACK of 1 segment, virtual RTT 200,000 (25 ms): increase = (1500
    /// << 23) / 200,000 = 62,914; the window in packets ceil(300,000 x 200,000 / (1500 << 23))
    /// = 5; rate_bytes += (62,914 + 2) / 5 = 12,583 -> 312,583; frac_cwnd = max(4 x 2^20 + 1,
    /// ceil((312,583 x 160,000 >> 3) / 1500) = 4,167,774) = 4,194,305. The slow srtt EWMA at a
    /// round's end with srtt 40 ms: 160,000 x 128 + 320,000 - 160,000 = 20,640,000.
    #[test]
    fn v07_rate_based_growth_and_the_slow_rtt() {
        let mut p = in_ca07(4, 0);
        p.rate_bytes = 300_000;
        p.rate_mode = true;
        p.update_cwnd(4, &ack(1, 0, 10, 200, 4));
        assert_eq!((p.rate_bytes(), p.frac_cwnd), (312_583, Some(4_194_305)));
        p.srtt_us8 = 320_000;
        p.update_alpha(4, &ack(0, 0, 10, 200, 4));
        assert_eq!(p.hsrtt_us, 20_640_000);
    }

    // ---- 0.7's segment size (prague_update_alpha's tcp_sync_mss): each fails without it.

    /// A 0.7 Prague of a bulk flow (mss 1460, 40 header bytes) at `cwnd` = ssthresh, in the
    /// rate-based mode at `rate_bytes`, srtt 20 ms, RTT-independent, a CE mark seen.
    fn low_rate(cwnd: u32, rate_bytes: u64) -> Prague {
        let mut p = in_ca07(cwnd, 0);
        assert!(
            p.on_segment_size(1460, 40, true),
            "0.7, a bulk flow: resizes"
        );
        p.rate_mode = true;
        p.rate_bytes = rate_bytes;
        p
    }

    /// Rate-based, 1 Mb/s (125,000 B/s) at srtt 20 ms: the virtual RTT is max(25 ms, srtt) =
    /// 200,000 srtt_us units, the window 125,000 x 200,000 >> 23 = 2,980 B (2980.2), half of
    /// it 1,490 B: the packet size falls from 1500 to 1490, the MSS to 1450; frac_cwnd 2
    /// segments = 2,097,152 becomes 2,097,152 x 1500 / 1490 = 2,111,226 (truncated), whose
    /// ceiling is 3: snd_cwnd 2 -> 3 at once and ssthresh 2 x 1500 / 1490 = 2 (truncated).
    /// The pacing rate stays 125,000 B/s - 4/128 (the alpha update has just happened, so
    /// the first half-RTT: + 4/128 = 128,906 B/s), now 86.51 segments of 1490 B per second.
    #[test]
    fn v07_segment_size_falls_below_two_packets_per_virtual_rtt() {
        let mut p = low_rate(2, 125_000);
        p.frac_cwnd = Some(2 << 20);
        assert_eq!(p.max_mtu(2), 1490);
        let w = p.update_alpha(2, &ack(0, 0, 10, 200, 2));
        assert_eq!((w, p.mtu(), p.ssthresh()), (3, 1490, 2));
        assert_eq!(p.frac_cwnd, Some(2_111_226));
        assert_eq!(p.segment_payload(), Some(1450));
        // 1 Mb/s + 1 B/s more per 8.4 B of window: 125,900 B/s gives 3001 B, 1501 -> 1500.
        assert_eq!(low_rate(2, 125_900).max_mtu(2), 1501);
        let mut q = low_rate(2, 125_900);
        q.update_alpha(2, &ack(0, 0, 10, 200, 2));
        assert_eq!((q.mtu(), q.segment_payload()), (1500, Some(1460)));
    }

    /// 100 kb/s (MINIMUM_RATE, 12,500 B/s): 12,500 x 200,000 >> 23 = 298 B, half 149, below
    /// the floor MIN_MSS + headers = 190 B: the MSS is 150 B (the kernel's "down to 150
    /// bytes at 100kbps"); frac_cwnd 2,097,152 x 1500 / 190 = 16,556,463, snd_cwnd 16 and
    /// ssthresh 2 x 1500 / 190 = 15. Back at 250,000 B/s (2 Mb/s): 5,960 B, half 2,980,
    /// capped at the flow's 1500: the full MSS again, frac_cwnd x 190 / 1500 = 2,097,151.
    #[test]
    fn v07_segment_size_down_to_150_bytes_and_back() {
        let mut p = low_rate(2, 12_500);
        p.frac_cwnd = Some(2 << 20);
        let w = p.update_alpha(2, &ack(0, 0, 10, 200, 2));
        assert_eq!((w, p.mtu(), p.ssthresh()), (16, 190, 15));
        assert_eq!(p.frac_cwnd, Some(16_556_463));
        assert_eq!(p.segment_payload(), Some(150));
        p.rate_bytes = 250_000;
        let w = p.update_alpha(16, &ack(0, 0, 10, 200, 16));
        assert_eq!((p.mtu(), p.segment_payload()), (1500, Some(1460)));
        assert_eq!(p.frac_cwnd, Some(2_097_151));
        assert_eq!((w, p.ssthresh()), (2, 1));
    }

    /// The fractional-window mode (`prague_cwnd_mode` 0) at srtt 20 ms: the window is scaled
    /// to the 25 ms target, frac x 200,000 / 160,000. frac_cwnd 1,677,722 (1.6 segments):
    /// 2,097,152 x 1500 >> 20 = 3000 B, half 1500, no change; 1,600,000: 2,000,000 x 1500 >>
    /// 20 = 2861 B, half 1431 (rounded up): MSS 1391, frac_cwnd 1,600,000 x 1500 / 1431 =
    /// 1,677,148, snd_cwnd 2 unchanged (ceil 1.6), ssthresh unchanged.
    #[test]
    fn v07_segment_size_in_the_fractional_window_mode() {
        let mut p = Prague::new(Params {
            cwnd_mode: 0,
            ..Params::V07
        });
        p.on_segment_size(1460, 40, true);
        p.frac_cwnd = Some(1_677_722);
        p.ssthresh = 2;
        p.srtt_us8 = 160_000;
        p.round = 4;
        p.saw_ce = true;
        assert_eq!(p.max_mtu(2), 1500);
        p.update_alpha(2, &ack(0, 0, 10, 200, 2));
        assert_eq!(p.mtu(), 1500);
        p.frac_cwnd = Some(1_600_000);
        let w = p.update_alpha(2, &ack(0, 0, 10, 200, 2));
        assert_eq!((w, p.mtu(), p.ssthresh()), (2, 1431, 2));
        assert_eq!(p.frac_cwnd, Some(1_677_148));
        assert_eq!(p.segment_payload(), Some(1391));
    }

    /// When the segment size stays: in a loss episode, before the 4 transition rounds, in
    /// slow start, before the first CE mark (alpha is not updated), for a finite flow (the
    /// sender keeps its segment count) and at 0.6 (no such rule).
    #[test]
    fn v07_segment_size_kept() {
        type Case = (&'static str, fn(&mut Prague));
        let cases: [Case; 6] = [
            ("in loss", |p| p.in_loss = true),
            ("round 3", |p| p.round = 3),
            ("slow start", |p| p.ssthresh = 3),
            ("no CE yet", |p| p.saw_ce = false),
            ("finite flow", |p| {
                assert!(!p.on_segment_size(1460, 40, false))
            }),
            ("0.6", |p| {
                p.params = Params::V06;
                assert!(!p.on_segment_size(1460, 40, true));
            }),
        ];
        for (what, f) in cases {
            let mut p = low_rate(2, 12_500);
            f(&mut p);
            p.update_alpha(2, &ack(0, 0, 10, 200, 2));
            assert_eq!(p.mtu(), 1500, "{what}");
            assert!(p.segment_payload().is_none_or(|m| m == 1460), "{what}");
        }
    }
}
