//! BBR v1 as Linux's `net/ipv4/tcp_bbr.c` (draft-cardwell-iccrg-bbr-congestion-control-00):
//! a model of the path (max delivery rate over 10 round trips, min RTT over 10 s) sets the
//! pacing rate (gain x bw) and the window (gain x bw x min RTT, at least 4 segments), with
//! the state machine
//!
//! - STARTUP: pacing and cwnd gain 2/ln 2 (Linux's 739/256) until the pipe is full: 3 rounds
//!   in a row without 25% growth of the max-bw estimate (`bbr_check_full_bw_reached`);
//! - DRAIN: pacing gain 1/2.885 (88/256) until the packets in flight fall to one BDP;
//! - PROBE_BW: the 8-phase pacing-gain cycle 5/4, 3/4, 1 x 6, cwnd gain 2, one phase per min
//!   RTT (the 5/4 phase lasts until inflight reaches 5/4 BDP or a loss; the 3/4 phase ends
//!   early when inflight falls to one BDP); it starts at a random phase other than 3/4;
//! - PROBE_RTT: when the min RTT has not been refreshed for 10 s, cwnd 4 for max(200 ms, one
//!   round) after inflight reaches 4, then back to PROBE_BW (or STARTUP);
//!
//! with `bbr_set_cwnd`'s window (slow start toward the target, packet conservation in the
//! first round of recovery, the saved cwnd restored after it), the quantization budget
//! (`bbr_quantization_budget`: 3 x the TSO goal, rounded up to even, + 2 in the 5/4 phase), the
//! ACK-aggregation allowance (`bbr_update_ack_aggregation`), the 1% pacing margin and the
//! long-term (policer) bandwidth estimate (`lt_bw`, [`super::bbr_lt`]: two lossy intervals of
//! consistent rate set the bandwidth and gain 1 for 48 rounds).
//!
//! Differences from Linux (docs/simulator.md): real numbers instead of Linux's fixed point
//! (gains are Linux's exact fractions); no idle restart (the simulator's sources do not pause); the TSO goal of the
//! quantization budget is computed from the pacing rate as Linux does (pacing shift 10) with
//! 1500-byte packets for the 1.2 Mb/s threshold; the random start phase of PROBE_BW draws
//! from a generator seeded by the time and delivered count of the flow's first entry into
//! PROBE_BW (deterministic per run, different across flows); the initial pacing rate assumes
//! Linux's initial window of 10; a timeout's long-term sample counts the segments in flight at
//! the last ACK as the ones it marks lost; no undo (so no `bbr_undo_cwnd` reset).
//!
//! `cc = "bbr-ns3"` ([`Bbr::ns3_44`], for cross-checks) switches to ns-3.44's `TcpBbr`
//! (`src/internet/model/tcp-bbr.cc`) and its socket (`tcp-socket-base.cc`) where they depart
//! from Linux; `cc = "bbr-ns3:entry+exit"` switches only the named departures ([`Ns3Model`]).

use super::bbr_common::{self as common, AckAggregation, LossState};
pub use super::bbr_common::{
    rate_per_sec, CaState, Mode, CWND_GAIN, CWND_MIN, EXTRA_ACKED_MAX, EXTRA_ACKED_WIN_RTTS,
    FULL_BW_CNT, FULL_BW_THRESH, INIT_CWND, MIN_RTT_WIN, PACING_MARGIN, PROBE_RTT_TIME,
};
use super::bbr_lt::{LtBw, LtEvent, LtInput};
use super::{AckSample, CongestionControl};
use aqm::{Time, NS_PER_SEC};

/// STARTUP's gain, 2/ln 2 as Linux's `bbr_high_gain` = BBR_UNIT x 2885 / 1000 + 1.
pub const HIGH_GAIN: f64 = 739.0 / 256.0;
/// DRAIN's pacing gain, Linux's `bbr_drain_gain` = BBR_UNIT x 1000 / 2885.
pub const DRAIN_GAIN: f64 = 88.0 / 256.0;
/// PROBE_BW's pacing-gain cycle (`bbr_pacing_gain`).
pub const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Window of the max-bw filter, round trips (`bbr_bw_rtts` = CYCLE_LEN + 2).
pub const BW_RTTS: u64 = 10;
/// ns-3.44's STARTUP gain (tcp-bbr.cc l. 37-41, attribute `HighGain` = 2.89).
pub const NS3_HIGH_GAIN: f64 = 2.89;
/// ns-3.44's ACK-epoch reset, 4,096 bytes (tcp-bbr.cc l. 62-67, `AckEpochAckedResetThresh`),
/// in segments of the cross-check's 1,460 bytes: the first whole count at or above it (2.8).
pub const NS3_ACK_EPOCH_RESET: u64 = 3;
/// ns-3's initial ssthresh, UINT32_MAX bytes (tcp-socket.cc, `InitialSlowStartThreshold`), in
/// segments of 1,460 bytes: the window the socket sets on leaving recovery before BBR's first
/// DRAIN has set ssthresh (see [`Ns3Model::exit`]).
pub const NS3_NO_SSTHRESH: u32 = u32::MAX / 1460;

/// Where ns-3.44's `TcpBbr` departs from Linux's `tcp_bbr.c`, one switch each (all on for
/// `cc = "bbr-ns3"`, some for `cc = "bbr-ns3:NAME+NAME"`, names as the fields). Line numbers
/// are ns-3.44's `src/internet/model/tcp-bbr.cc` unless another file is named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ns3Model {
    /// `quanta`: send quantum one segment (l. 464-469, 726), so the quantization budget is 3
    /// segments, not rounded to even (l. 239-255; Linux 3 x the TSO goal, rounded up to
    /// even); the BDP is in bytes, whole segments below it (l. 248, the socket sends whole
    /// segments): floor where Linux's `bbr_bdp` rounds up.
    pub quanta: bool,
    /// `ackagg`: the ACK-aggregation epoch starts at the simulation time, lasts whole seconds
    /// (l. 518: `epochProp` is a `uint32_t`, so the expected delivery is 0 within the first
    /// second) and is reset once it holds [`NS3_ACK_EPOCH_RESET`] segments (l. 521-527).
    pub ack_agg: bool,
    /// `entry`: entering recovery sets cwnd = in flight + max(ACKed, 1) and starts packet
    /// conservation without starting a round (l. 746-753; Linux starts one,
    /// `next_rtt_delivered = delivered`), so conservation ends at the current round's end.
    pub entry: bool,
    /// `losses`: the sample's losses come off cwnd, and packet conservation holds, only in
    /// recovery (l. 577-583, 539-555; Linux: in every state, the Loss state included).
    pub losses: bool,
    /// `restore`: the saved window comes back only when recovery ends (`CwndEvent`
    /// `CA_EVENT_COMPLETE_CWR`, l. 756-765, raised by tcp-socket-base.cc l. 2210 on leaving
    /// CA_RECOVERY only): not after a timeout's Loss state; a timeout keeps the full-pipe
    /// reference bw (l. 740-745; Linux's `bbr_set_state` zeroes `full_bw`).
    pub restore: bool,
    /// `exit`: the socket sets cwnd = ssthresh on leaving recovery, after BBR's restore
    /// (tcp-socket-base.cc l. 2244-2247, whatever the congestion control); BBR's ssthresh is
    /// `InFlight(1)` taken when STARTUP ends (l. 348), until then ns-3's initial one
    /// ([`NS3_NO_SSTHRESH`]).
    pub exit: bool,
    /// `clock`: the gain cycle runs on the simulation time (l. 257-264, 270; Linux: the
    /// delivered time) and its and DRAIN's in-flight tests take the packets in flight as they
    /// are (l. 278, 282, 351), without `bbr_packets_in_net_at_edt`.
    pub clock: bool,
    /// `minrtt`: the min RTT takes the socket's last RTT sample on every ACK, kept from the
    /// last ACK that gave one, and an equal sample refreshes it (l. 357-367: `<=`; Linux: the
    /// ACK's own sample, `<`).
    pub min_rtt: bool,
    /// `tsrtt`: with timestamps, the socket's RTT sample is the timestamp echo's
    /// (tcp-socket-base.cc l. 3717-3750, 3786-3794) on a millisecond clock (tcp-option-ts.cc
    /// l. 123-145: whole ms, a sample under 1 ms taken as 1 us), and the echo is the first
    /// segment's of a delayed-ACK pair (l. 4476-4480, RFC 7323): the sample includes the
    /// wait for the second segment (Linux: the rate sample's RTT, of the latest segment
    /// sent). Used by `minrtt`'s last sample; on its own, the ACK's own sample with `<`.
    /// Without timestamps, the rate sample's RTT as Linux (ns-3 then times the latest
    /// segment sent, as Linux).
    pub ts_rtt: bool,
    /// `gain`: STARTUP gain [`NS3_HIGH_GAIN`] and DRAIN gain 1 / 2.89 (l. 37-41, 201, 326;
    /// Linux 739/256 and 88/256).
    pub gain: bool,
    /// `lostout`: the sample's losses are how much the count of segments marked lost and not
    /// yet delivered changed on this ACK, either way (tcp-socket-base.cc l. 1944-1946:
    /// `|currentLost - previousLost|` of `TcpTxBuffer::GetLost`, which falls when a segment
    /// marked lost is SACKed or cumulatively ACKed, tcp-tx-buffer.cc l. 629-634, 811-814):
    /// an ACK that delivers k segments marked lost and marks m counts |m - k| (Linux: m,
    /// `tp->lost` only grows). With `losses`, recovery takes each repaired segment off cwnd.
    pub lost_out: bool,
    /// `rtxsack`: a retransmission that is SACKed stays counted in flight until the cumulative
    /// ACK passes it or a timeout (ns-3.44's socket, not TcpBbr: `TcpTxBuffer::Update` keeps the
    /// item's retrans flag, tcp-tx-buffer.cc l. 808-818, and `BytesInFlight` adds the
    /// retransmitted bytes, l. 1055-1073; Linux's `tcp_sacktag_one` clears it). The in-flight
    /// count is the window's (`AvailableWindow`, tcp-socket-base.cc l. 3570-3575), NextSeg's
    /// pipe and the one BBR sees. Kept by the sender
    /// ([`crate::tcp::recovery::sack::Ns3RetransSacked`]), over SACK recovery only.
    pub rtx_sacked: bool,
    /// `nolt`: no long-term (policer) bandwidth estimate (ns-3.44's `TcpBbr` has none; Linux:
    /// [`super::bbr_lt`]).
    pub no_lt: bool,
    /// `ratestart`: the rate sample's start is kept from ACK to ACK and replaced only by a
    /// delivered segment sent under a higher delivered count (ns-3.44's `TcpRateLinux`, not
    /// TcpBbr: `m_rateSample` persists, tcp-rate-ops.h l. 237, and `SkbDelivered` tests
    /// `m_delivered > m_priorDelivered`, tcp-rate-ops.cc l. 173; Linux zeroes the sample on
    /// every ACK). Kept by the sender's rate state ([`crate::tcp::rate::RateState::ns3_keep_start`]).
    pub rate_start: bool,
    /// `rtofirst`: in fast recovery only the first partial ACK restarts the retransmission
    /// timer (ns-3.44's socket, not TcpBbr: `NewAck(ackNumber, m_isFirstPartialAck)`,
    /// tcp-socket-base.cc l. 2109-2118, the flag set again only on leaving recovery or Loss,
    /// l. 2201, 2221; RFC 6582 s. 4's "Impatient" variant). A lost retransmission then ends
    /// the recovery by a timeout one RTO after the first partial ACK, not after the last
    /// ACK that advanced snd_una (Linux and RFC 6298 s. 5.3 restart it on every ACK of new
    /// data). Kept by the SACK recovery ([`crate::tcp::recovery::sack::Sack`]).
    pub rto_first: bool,
    /// `partialrtx`: on each partial ACK in fast recovery the socket sends one segment by
    /// `DoRetransmit` (NextSeg without rule 3: a lost segment, else new data, else the head)
    /// outside the window, unless the new head was retransmitted already (ns-3.44's socket,
    /// not TcpBbr: tcp-socket-base.cc l. 2099-2103, 4086-4118). Not in [`Ns3Model::ALL`]: the
    /// five BBR rows have not been re-run with it. Sent by the SACK recovery
    /// ([`crate::tcp::recovery::sack::Sack`]).
    pub partial_rtx: bool,
    /// `rtotail`: after a timeout the sender resends a segment the timeout marked lost only
    /// below the highest SACKed one (or when none is SACKed), resuming as that rises, and
    /// sends new data otherwise (ns-3.44's socket, not TcpBbr: `TcpTxBuffer::NextSeg` rule 1,
    /// `m_startSeq < m_highestSack.second`, tcp-tx-buffer.cc l. 976-977; RFC 6675 s. 4
    /// NextSeg (1.b)). Linux without RACK resends every unSACKed segment after a timeout.
    /// Kept by the sender ([`crate::tcp::recovery::sack::Ns3RtoTail`]), over SACK recovery.
    pub rto_tail: bool,
    /// `roundkeep`: an ACK whose rate sample is invalid (delivered < 0 or a zero interval)
    /// keeps the previous ACK's round start (`UpdateBottleneckBandwidth` returns before
    /// `UpdateRound`, l. 620-625, which alone sets or clears `m_roundStart`, l. 603-618; Linux's
    /// `bbr_update_bw` clears `round_start` first). So a round start, or a timeout's (l. 744),
    /// is seen again by the full-pipe count (l. 300), the ACK-aggregation window (l. 507) and
    /// PROBE_RTT's round (l. 429) on the invalid-sample ACKs after it. In [`Ns3Model::ALL`]
    /// since 2026-11-29 (it ends STARTUP earlier; docs/crosscheck-ns3.md s. 1.5).
    pub round_keep: bool,
}

impl Ns3Model {
    /// `cc = "bbr-ns3"`: every departure but `partialrtx` (see [`Ns3Model::partial_rtx`]).
    pub const ALL: Ns3Model = Ns3Model {
        quanta: true,
        ack_agg: true,
        entry: true,
        losses: true,
        restore: true,
        exit: true,
        clock: true,
        min_rtt: true,
        ts_rtt: true,
        gain: true,
        lost_out: true,
        rtx_sacked: true,
        no_lt: true,
        rate_start: true,
        rto_first: true,
        partial_rtx: false,
        rto_tail: true,
        round_keep: true,
    };

    /// The departures named in `names`, joined by `+` (`"entry+exit"`).
    pub fn parse(names: &str) -> Result<Ns3Model, String> {
        let mut m = Ns3Model::default();
        for n in names.split('+') {
            let f = match n {
                "quanta" => &mut m.quanta,
                "ackagg" => &mut m.ack_agg,
                "entry" => &mut m.entry,
                "losses" => &mut m.losses,
                "restore" => &mut m.restore,
                "exit" => &mut m.exit,
                "clock" => &mut m.clock,
                "minrtt" => &mut m.min_rtt,
                "tsrtt" => &mut m.ts_rtt,
                "gain" => &mut m.gain,
                "lostout" => &mut m.lost_out,
                "rtxsack" => &mut m.rtx_sacked,
                "nolt" => &mut m.no_lt,
                "ratestart" => &mut m.rate_start,
                "rtofirst" => &mut m.rto_first,
                "rtotail" => &mut m.rto_tail,
                "partialrtx" => &mut m.partial_rtx,
                "roundkeep" => &mut m.round_keep,
                _ => {
                    return Err(format!(
                        "bbr-ns3: unknown departure {n:?} (quanta, ackagg, entry, losses, \
                         restore, exit, clock, minrtt, tsrtt, gain, lostout, rtxsack, ratestart, rtofirst, rtotail, nolt, partialrtx, roundkeep)"
                    ))
                }
            };
            *f = true;
        }
        Ok(m)
    }

    /// Any departure on.
    pub fn any(&self) -> bool {
        *self != Ns3Model::default()
    }
}
/// Kathleen Nichols' windowed max filter as Linux's `lib/win_minmax.c`: the best, second and
/// third best samples of the window, each with its time (here round count).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    /// The current max.
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    /// All three estimates set to `(t, v)` (`minmax_reset`).
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [(t, v); 3];
    }

    /// Adds the sample `v` at time `t` with window `win` (`minmax_running_max`).
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = (t, v);
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// BBR v1's state (Linux's `struct bbr`); bandwidths in segments per ns, times in ns.
#[derive(Clone, Debug)]
pub struct Bbr {
    /// Current mode.
    pub mode: Mode,
    /// Min RTT over the filter window, ns (`None`: no sample yet, Linux's ~0U).
    pub min_rtt: Option<Time>,
    /// When `min_rtt` was last set.
    pub min_rtt_stamp: Time,
    /// End of PROBE_RTT's 200 ms (`None`: inflight not yet down to 4).
    pub probe_rtt_done_stamp: Option<Time>,
    /// A round has passed at cwnd 4 in PROBE_RTT.
    pub probe_rtt_round_done: bool,
    /// Max delivery-rate filter over [`BW_RTTS`] rounds.
    pub bw: MaxFilter,
    /// Packet-timed rounds so far.
    pub rtt_cnt: u64,
    /// Connection's delivered count that ends the current round.
    pub next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (a delivered time).
    pub cycle_stamp: Time,
    /// Congestion state seen on the previous ACK.
    pub prev_ca_state: CaState,
    /// Packet conservation (first round of recovery).
    pub packet_conservation: bool,
    /// This ACK starts a round.
    pub round_start: bool,
    /// Current pacing gain.
    pub pacing_gain: f64,
    /// Current cwnd gain.
    pub cwnd_gain: f64,
    /// STARTUP found the pipe full.
    pub full_bw_reached: bool,
    /// Rounds without 25% growth.
    pub full_bw_cnt: u32,
    /// The bw STARTUP's growth is measured against.
    pub full_bw: f64,
    /// Index in [`PACING_GAIN`].
    pub cycle_idx: usize,
    /// An RTT sample has set the pacing rate.
    pub has_seen_rtt: bool,
    /// Window saved on entering recovery or PROBE_RTT.
    pub prior_cwnd: u32,
    /// Pacing rate, segments per second.
    pub pacing_rate: f64,
    /// The ACK-aggregation estimator.
    pub ack_agg: AckAggregation,
    /// The Loss state after a timeout.
    loss: LossState,
    /// Random state for PROBE_BW's start phase (seeded on first use).
    rng: u64,
    /// The controller asks the sender to mark the flight app-limited (PROBE_RTT).
    app_limited_req: bool,
    /// Earliest departure of the next paced segment (the sender's pacing clock).
    edt: Time,
    /// ns-3.44's departures from Linux in force (none: Linux's BBR).
    pub ns3: Ns3Model,
    /// ns-3's ssthresh, segments ([`Ns3Model::exit`]).
    pub ns3_ssthresh: u32,
    /// The last RTT sample, ns ([`Ns3Model::min_rtt`]).
    last_rtt: Option<Time>,
    /// The RTT sample of this ACK's timestamp echo, ns ([`Ns3Model::ts_rtt`]).
    ts_rtt: Option<Time>,
    /// Timestamps are on: echo samples have come.
    ts_on: bool,
    /// The long-term (policer) bandwidth estimate ([`super::bbr_lt`]).
    pub lt: LtBw,
    /// The connection's counters for the Loss state's long-term sample: delivered and its
    /// time at the last ACK; lost then plus the segments in flight after it, which the
    /// timeout marks lost (Linux's `tcp_timeout_mark_lost` runs before `bbr_set_state`; the
    /// simulator's sender marks them after telling the controller).
    lt_last: LtInput,
    /// Time of the last congestion event ([`CongestionControl::on_congestion`]), which comes
    /// just before a timeout.
    lt_now: Time,
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr {
            mode: Mode::Startup,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_stamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0.0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            // bbr_init_pacing_rate_from_rtt without an RTT: high_gain x 10 segments / 1 ms.
            pacing_rate: rate_per_sec(INIT_CWND as f64 / 1e6, HIGH_GAIN),
            ack_agg: AckAggregation::default(),
            loss: LossState::default(),
            rng: 0,
            app_limited_req: false,
            edt: 0,
            ns3: Ns3Model::default(),
            ns3_ssthresh: NS3_NO_SSTHRESH,
            last_rtt: None,
            ts_rtt: None,
            ts_on: false,
            lt: LtBw::default(),
            lt_last: LtInput::default(),
            lt_now: 0,
        }
    }
}

impl Bbr {
    /// ns-3.44's `TcpBbr` with the departures of `m` (`cc = "bbr-ns3"`: [`Ns3Model::ALL`]).
    pub fn ns3_44(m: Ns3Model) -> Self {
        let mut b = Bbr {
            ns3: m,
            ..Bbr::default()
        };
        b.pacing_gain = b.high_gain();
        b.cwnd_gain = b.high_gain();
        b.pacing_rate = rate_per_sec(INIT_CWND as f64 / 1e6, b.high_gain());
        b
    }

    /// The bandwidth estimate (segments per ns).
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term rate when in use ([`super::bbr_lt`]), else the max bw.
    pub fn bw_estimate(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_lt_bw_sampling` with `i` (off under [`Ns3Model::no_lt`]).
    /// `s`: the ACK's sample, or none on a timeout (the last ACK's delivered time then).
    fn lt_sample(&mut self, i: &LtInput, s: Option<&AckSample>) {
        if self.ns3.no_lt {
            return;
        }
        match self.lt.sample(i) {
            LtEvent::Policed => self.pacing_gain = 1.0,
            LtEvent::Expired => {
                let mut t = AckSample {
                    now: self.lt_now,
                    ..Default::default()
                };
                t.rate.delivered_time = i.delivered_time;
                self.reset_probe_bw_mode(s.unwrap_or(&t));
            }
            LtEvent::None => {}
        }
    }

    /// STARTUP's gain: Linux's [`HIGH_GAIN`], or ns-3's [`NS3_HIGH_GAIN`].
    pub fn high_gain(&self) -> f64 {
        if self.ns3.gain {
            NS3_HIGH_GAIN
        } else {
            HIGH_GAIN
        }
    }

    /// DRAIN's pacing gain: Linux's [`DRAIN_GAIN`], or ns-3's 1 / 2.89 (tcp-bbr.cc l. 326).
    pub fn drain_gain(&self) -> f64 {
        if self.ns3.gain {
            1.0 / NS3_HIGH_GAIN
        } else {
            DRAIN_GAIN
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain); the initial window before any RTT sample. ns-3
    /// ([`Ns3Model::quanta`]): whole segments below the BDP in bytes.
    pub fn bdp(&self, bw: f64, gain: f64) -> u32 {
        match self.min_rtt {
            Some(r) if self.ns3.quanta => (bw * r as f64 * gain + 1e-9).floor().max(0.0) as u32,
            _ => common::bdp(self.min_rtt, bw, gain),
        }
    }

    /// `bbr_tso_segs_goal` without a device limit: pacing rate x 2^-10 s in segments, at least 2
    /// (1 below 1.2 Mb/s, 100 segments per second of 1500 bytes), at most 127.
    pub fn tso_segs_goal(&self) -> u32 {
        ((self.pacing_rate / 1024.0) as u32)
            .max(self.min_tso())
            .min(127)
    }

    /// `bbr_min_tso_segs`: 1 segment below `bbr_min_tso_rate` (1.2 Mb/s, 100 segments of 1500
    /// bytes a second), else 2.
    fn min_tso(&self) -> u32 {
        if self.pacing_rate < 100.0 {
            1
        } else {
            2
        }
    }

    /// `bbr_quantization_budget`; ns-3 ([`Ns3Model::quanta`]): 3 segments, not rounded.
    pub fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = if self.ns3.quanta {
            cwnd + 3
        } else {
            (cwnd + 3 * self.tso_segs_goal() + 1) & !1
        };
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the BDP with a gain and the quantization budget.
    pub fn inflight(&self, bw: f64, gain: f64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight when the next paced segment leaves at `edt`;
    /// ns-3 ([`Ns3Model::clock`]): inflight.
    fn in_net_at_edt(&self, inflight: u32, now: Time, edt: Time) -> u32 {
        if self.ns3.clock {
            return inflight;
        }
        let tso = self.tso_segs_goal();
        common::in_net_at_edt(
            inflight,
            now,
            edt,
            self.bw_estimate(),
            self.pacing_gain,
            tso,
        )
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        self.prior_cwnd = common::save_cwnd(self.prior_cwnd, self.prev_ca_state, self.mode, cwnd);
    }

    fn advance_cycle_phase(&mut self, delivered_time: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = delivered_time;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than 3/4 (index 7 - rand(7), then
    /// advanced).
    fn reset_probe_bw_mode(&mut self, s: &AckSample) {
        self.mode = Mode::ProbeBw;
        if self.rng == 0 {
            self.rng = s.now ^ s.rate.total_delivered.rotate_left(32) ^ 0x5DEE_CE66;
        }
        let r = (common::splitmix(&mut self.rng) % 7) as usize;
        self.cycle_idx = PACING_GAIN.len() - 1 - r;
        let clock = if self.ns3.clock {
            s.now
        } else {
            s.rate.delivered_time
        };
        self.advance_cycle_phase(clock);
    }

    fn reset_mode(&mut self, s: &AckSample) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(s);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_bw`: rounds and the max-bw filter. ns-3 ([`Ns3Model::round_keep`]): an
    /// invalid sample leaves `round_start` as it was.
    fn update_bw(&mut self, s: &AckSample) {
        let rs = &s.rate;
        let valid = rs.delivered >= 0 && rs.interval_ns > 0;
        if valid || !self.ns3.round_keep {
            self.round_start = false;
        }
        if !valid {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let lt = LtInput {
            losses: rs.losses,
            app_limited: rs.is_app_limited,
            round_start: self.round_start,
            probe_bw: self.mode == Mode::ProbeBw,
            delivered: rs.total_delivered,
            lost: rs.total_lost,
            delivered_time: rs.delivered_time,
        };
        self.lt_sample(&lt, Some(s));
        let rs = &s.rate;
        let bw = rs.delivered as f64 / rs.interval_ns as f64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_is_next_cycle_phase` / `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, s: &AckSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let rs = &s.rate;
        let clock = if self.ns3.clock {
            s.now
        } else {
            rs.delivered_time
        };
        let full_length =
            clock.saturating_sub(self.cycle_stamp) > self.min_rtt.unwrap_or(Time::MAX);
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else {
            let inflight = self.in_net_at_edt(rs.prior_in_flight, s.now, self.edt);
            let bw = self.max_bw();
            if self.pacing_gain > 1.0 {
                full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain))
            } else {
                full_length || inflight <= self.inflight(bw, 1.0)
            }
        };
        if next {
            self.advance_cycle_phase(clock);
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, s: &AckSample) {
        if self.full_bw_reached || !self.round_start || s.rate.is_app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`; ns-3 ([`Ns3Model::exit`]) also sets its ssthresh to one BDP with
    /// the budget when STARTUP ends (tcp-bbr.cc l. 345-349).
    fn check_drain(&mut self, s: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ns3_ssthresh = self.inflight(self.max_bw(), 1.0);
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(s.rate.in_flight, s.now, self.edt)
                <= self.inflight(self.max_bw(), 1.0)
        {
            self.reset_probe_bw_mode(s);
        }
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter and PROBE_RTT.
    /// ns-3 ([`Ns3Model::min_rtt`]): the last sample on every ACK, refreshed by an equal one.
    fn update_min_rtt(&mut self, s: &AckSample, cwnd: &mut u32) {
        let rs = &s.rate;
        let expired = s.now > self.min_rtt_stamp + MIN_RTT_WIN;
        let own = if self.ns3.ts_rtt && self.ts_on {
            self.ts_rtt.take()
        } else {
            (rs.rtt_ns >= 0).then_some(rs.rtt_ns as Time)
        };
        if own.is_some() {
            self.last_rtt = own;
        }
        let (sample, lower) = if self.ns3.min_rtt {
            let r = self.last_rtt;
            (r, r.is_some_and(|r| self.min_rtt.is_none_or(|m| r <= m)))
        } else {
            (own, own.is_some_and(|r| self.min_rtt.is_none_or(|m| r < m)))
        };
        if let Some(r) = sample.filter(|_| lower || expired) {
            self.min_rtt = Some(r);
            self.min_rtt_stamp = s.now;
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            self.app_limited_req = true;
            if common::probe_rtt_done(
                &mut self.probe_rtt_done_stamp,
                &mut self.probe_rtt_round_done,
                &mut self.next_rtt_delivered,
                s,
                self.round_start,
                CWND_MIN,
            ) {
                // bbr_check_probe_rtt_done: after 200 ms and a round at cwnd 4, restore and
                // leave.
                self.min_rtt_stamp = s.now;
                *cwnd = (*cwnd).max(self.prior_cwnd);
                self.reset_mode(s);
            }
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let high = self.high_gain();
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (high, high),
            Mode::Drain => (self.drain_gain(), high),
            Mode::ProbeBw if self.lt.use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_pacing_rate`: the pacing rate only rises before the pipe is full.
    fn set_pacing_rate(&mut self, s: &AckSample, cwnd: u32) {
        let rate = rate_per_sec(self.bw_estimate(), self.pacing_gain);
        let high = self.high_gain();
        common::set_pacing_rate(
            &mut self.pacing_rate,
            &mut self.has_seen_rtt,
            s,
            cwnd,
            high,
            rate,
            self.full_bw_reached,
        );
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: `true` under packet conservation. ns-3: see
    /// [`Ns3Model::losses`], [`Ns3Model::entry`], [`Ns3Model::restore`], [`Ns3Model::exit`].
    fn recover_or_restore(&mut self, s: &AckSample, state: CaState, cwnd: &mut u32) -> bool {
        let rs = &s.rate;
        let acked = rs.acked_sacked;
        let entering = state == CaState::Recovery && self.prev_ca_state != CaState::Recovery;
        let lose = !self.ns3.losses || state == CaState::Recovery;
        if entering && self.ns3.entry {
            // CongestionStateSet(CA_RECOVERY) runs before CongControl, which then takes the
            // losses off (l. 543-547).
            self.packet_conservation = true;
            *cwnd = rs.in_flight + acked.max(1);
        }
        if rs.losses > 0 && lose {
            *cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let leaving = if self.ns3.restore {
            self.prev_ca_state == CaState::Recovery && state == CaState::Open
        } else {
            self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery
        };
        if entering && !self.ns3.entry {
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.total_delivered;
            *cwnd = rs.in_flight + acked;
        } else if leaving {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
            if self.ns3.exit && self.prev_ca_state == CaState::Recovery {
                *cwnd = self.ns3_ssthresh;
            }
        }
        self.prev_ca_state = state;
        if self.packet_conservation && (!self.ns3.losses || state == CaState::Recovery) {
            *cwnd = (*cwnd).max(rs.in_flight + acked);
            return true;
        }
        false
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, s: &AckSample, state: CaState, mut cwnd: u32) -> u32 {
        let mut acked = s.rate.acked_sacked;
        if acked > 0 && !self.recover_or_restore(s, state, &mut cwnd) {
            let bw = self.bw_estimate();
            let mut target = self.bdp(bw, self.cwnd_gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target);
            let slow_start = s.rate.total_delivered < INIT_CWND as u64;
            if self.ns3.exit && self.full_bw_reached && cwnd >= NS3_NO_SSTHRESH {
                // ns-3's window of UINT32_MAX bytes plus the ACKed bytes wraps round (l. 589):
                // ACKed - 1 bytes, whole segments one fewer than ACKed.
                cwnd = 0;
                acked = acked.saturating_sub(1);
            }
            cwnd = common::grow_cwnd(cwnd, acked, target, self.full_bw_reached, slow_start);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN);
        }
        cwnd
    }

    /// ns-3's `UpdateAckAggregation` (tcp-bbr.cc l. 494-537, [`Ns3Model::ack_agg`]) on the
    /// estimator's state: the epoch starts at the simulation time and counts whole seconds
    /// (l. 518), and ends at [`NS3_ACK_EPOCH_RESET`] segments (l. 521-527).
    fn ns3_update_ack_aggregation(&mut self, s: &AckSample, cwnd: u32) {
        let rs = &s.rate;
        if rs.acked_sacked == 0 || rs.delivered < 0 {
            return;
        }
        let bw = self.max_bw();
        let a = &mut self.ack_agg;
        a.next_round(self.round_start, EXTRA_ACKED_WIN_RTTS);
        let secs = s.now.saturating_sub(a.ack_epoch_stamp) / NS_PER_SEC;
        let mut expected = (bw * (secs * NS_PER_SEC) as f64) as u64;
        let acked = rs.acked_sacked as u64;
        if a.ack_epoch_acked <= expected || a.ack_epoch_acked + acked >= NS3_ACK_EPOCH_RESET {
            a.ack_epoch_acked = 0;
            a.ack_epoch_stamp = s.now;
            expected = 0;
        }
        a.ack_epoch_acked += acked;
        let extra = a.ack_epoch_acked.saturating_sub(expected).min(cwnd as u64);
        let i = a.extra_acked_win_idx;
        a.extra_acked[i] = a.extra_acked[i].max(extra);
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        self.ack_agg.cwnd(self.bw_estimate())
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        if self.ns3.any() {
            "bbr-ns3"
        } else {
            "bbr"
        }
    }

    fn on_ack(&mut self, cwnd: f64, _ssthresh: f64, _s: &AckSample) -> f64 {
        cwnd
    }

    /// `bbr_ssthresh`: saves cwnd for after recovery; ssthresh is not lowered.
    fn on_congestion(&mut self, cwnd: f64, _flight: u32, now: Time) -> f64 {
        self.save_cwnd(cwnd as u32);
        self.lt_now = now;
        f64::INFINITY
    }

    /// ns-3 ([`Ns3Model::ts_rtt`]): the echo's RTT on ns-3's millisecond timestamp clock.
    fn on_delay_sample(&mut self, rtt_ns: f64, now: Time) {
        if self.ns3.ts_rtt {
            const MS: Time = 1_000_000;
            let ms = crate::tcp::sender::ts_ticks(now, now.saturating_sub(rtt_ns as Time));
            self.ts_rtt = Some(if ms > 0 { ms * MS } else { 1_000 });
            self.ts_on = true;
        }
    }

    /// `bbr_set_state(TCP_CA_Loss)`: the next ACK is in the Loss state; full-pipe growth is
    /// measured afresh and the timeout ends a round. ns-3 ([`Ns3Model::restore`]) keeps
    /// `full_bw`.
    fn on_timeout(&mut self) {
        self.prev_ca_state = CaState::Loss;
        if !self.ns3.restore {
            self.full_bw = 0.0;
        }
        self.round_start = true;
        self.loss.on_timeout();
        // bbr_set_state's `bbr_lt_bw_sampling(sk, &{ .losses = 1 })`, at the last ACK's
        // counters (see [`Bbr::lt_last`]).
        let i = LtInput {
            losses: 1,
            round_start: true,
            probe_bw: self.mode == Mode::ProbeBw,
            ..self.lt_last
        };
        self.lt_sample(&i, None);
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }

    /// `bbr_init` after the handshake: the SYN's RTT as min RTT and the first window paced at
    /// high_gain x cwnd / SRTT (`bbr_init_pacing_rate_from_rtt`).
    fn on_connected(&mut self, cwnd: f64, srtt_ns: f64, now: Time) {
        if let Some((rate, rtt)) = common::init_from_handshake(cwnd, srtt_ns, self.high_gain()) {
            (self.pacing_rate, self.has_seen_rtt) = (rate, true);
            (self.min_rtt, self.min_rtt_stamp) = (Some(rtt), now);
        }
    }

    fn wants_rate_sample(&self) -> bool {
        true
    }

    fn counts_sacked_retransmissions(&self) -> bool {
        self.ns3.rtx_sacked
    }

    fn keeps_rate_sample_start(&self) -> bool {
        self.ns3.rate_start
    }

    fn restarts_rto_on_first_partial_ack_only(&self) -> bool {
        self.ns3.rto_first
    }

    fn sends_on_partial_ack(&self) -> bool {
        self.ns3.partial_rtx
    }
    fn resends_below_highest_sack_after_rto(&self) -> bool {
        self.ns3.rto_tail
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn min_tso_segs(&self) -> u32 {
        self.min_tso()
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

    /// `bbr_main`: update the model, then the pacing rate and the window.
    fn cong_control(&mut self, cwnd: f64, s: &AckSample) -> f64 {
        let ns3_sample;
        let s = if self.ns3.lost_out {
            let mut c = *s;
            c.rate.losses = s.rate.losses.abs_diff(s.rate.repaired);
            ns3_sample = c;
            &ns3_sample
        } else {
            s
        };
        self.edt = s.rate.edt;
        let (state, _) = self.loss.on_ack(s);
        // = `cwnd.floor().max(1.0) as u32` for every f64 (NaN and below 1 give 1 both ways), without
        // libm's floor call: a cast truncates toward zero and saturates.
        let mut w = (cwnd as u32).max(1);
        self.update_bw(s);
        self.lt_last = LtInput {
            delivered: s.rate.total_delivered,
            lost: s.rate.total_lost + u64::from(s.rate.in_flight),
            delivered_time: s.rate.delivered_time,
            ..LtInput::default()
        };
        let bw = self.bw_estimate();
        if self.ns3.ack_agg {
            self.ns3_update_ack_aggregation(s, w);
        } else {
            self.ack_agg
                .update(&s.rate, self.round_start, EXTRA_ACKED_WIN_RTTS, bw, w);
        }
        self.update_cycle_phase(s);
        self.check_full_bw_reached(s);
        self.check_drain(s);
        self.update_min_rtt(s, &mut w);
        self.update_gains();
        self.set_pacing_rate(s, w);
        self.set_cwnd(s, state, w) as f64
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
