//! SACK-based loss recovery (RFC 6675): the scoreboard of SACKed segments, IsLost, NextSeg and
//! the pipe estimate, and the sender's ACK processing that uses them with Proportional Rate
//! Reduction ([`super::prr`], RFC 6937) as the sending rate during recovery. Units: segments, so
//! RFC 6675's "(DupThresh - 1) x SMSS + 1 octets SACKed above" is "DupThresh segments SACKed
//! above". Rule (4) of NextSeg (the rescue retransmission, a MAY) is not implemented.

use super::prr::Ns3Prr;
use super::{Prr, Recovery, DUP_THRESH};
use crate::packet::{Packet, SackBlock};
use crate::tcp::Sender;
use aqm::Time;
use std::collections::VecDeque;

/// What the sender knows of the receiver's out-of-order data (RFC 6675 s. 3).
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// First segment tracked (snd_una).
    base: u32,
    /// SACKed flags of segments base, base + 1, ... up to the highest SACKed one.
    sacked: VecDeque<bool>,
    /// Number of SACKed segments at or above `base`.
    n_sacked: u32,
    /// Highest segment retransmitted in this recovery (RFC 6675 HighRxt).
    pub high_rxt: Option<u32>,
    /// The runs `[a, b)` of segments the last [`Scoreboard::apply`] newly SACKed, and the top of
    /// its blocks (the highest end of a non-empty one): what the delivery-rate state needs of
    /// the ACK ([`crate::tcp::rate::RateState::on_new_sacks`]) without walking the blocks again.
    newly: Vec<(u32, u32)>,
    top: Option<u32>,
}

impl Scoreboard {
    /// Forgets segments below the cumulative ACK `una`.
    pub fn advance(&mut self, una: u32) {
        while self.base < una {
            if let Some(s) = self.sacked.pop_front() {
                if s {
                    self.n_sacked -= 1;
                }
            }
            self.base += 1;
        }
    }

    /// Records the SACK blocks of an ACK (segments below `snd_max` only); returns the number of
    /// segments newly SACKed.
    pub fn apply(&mut self, blocks: &[SackBlock], snd_max: u32) -> u32 {
        let mut newly = 0;
        self.newly.clear();
        self.top = None;
        for &(a, b) in blocks {
            let (a, b) = (a.max(self.base), b.min(snd_max));
            if a >= b {
                continue;
            }
            self.top = self.top.max(Some(b));
            let need = (b - self.base) as usize;
            if self.sacked.len() < need {
                self.sacked.resize(need, false);
            }
            let mut run = None;
            for (x, seg) in self
                .sacked
                .range_mut((a - self.base) as usize..need)
                .zip(a..)
            {
                if !*x {
                    *x = true;
                    newly += 1;
                    run.get_or_insert(seg);
                } else if let Some(r) = run.take() {
                    self.newly.push((r, seg));
                }
            }
            if let Some(r) = run {
                self.newly.push((r, b));
            }
        }
        self.n_sacked += newly;
        newly
    }

    /// The runs of segments the last [`Scoreboard::apply`] newly SACKed, and the top of its
    /// blocks.
    pub(crate) fn last_sacks(&self) -> (&[(u32, u32)], Option<u32>) {
        (&self.newly, self.top)
    }

    /// Whether segment `s` has been SACKed.
    #[inline]
    pub fn is_sacked(&self, s: u32) -> bool {
        s >= self.base
            && self
                .sacked
                .get((s - self.base) as usize)
                .copied()
                .unwrap_or(false)
    }

    /// SACKed segments at or above the cumulative ACK.
    pub fn sacked_count(&self) -> u32 {
        self.n_sacked
    }

    /// SACKed segments below `s`.
    pub(crate) fn sacked_below(&self, s: u32) -> u32 {
        let upto = (s.saturating_sub(self.base) as usize).min(self.sacked.len());
        if upto == self.sacked.len() {
            // The whole board (the sender's in-flight count asks with snd_nxt = snd_max on
            // nearly every send): the running count, without the walk.
            return self.n_sacked;
        }
        // The deque's two slices summed as bytes (vectorised), not walked flag by flag.
        let (a, b) = self.sacked.as_slices();
        let in_a = upto.min(a.len());
        count_true(&a[..in_a]) + count_true(&b[..upto - in_a])
    }

    /// SACKed segments strictly above `s`.
    fn sacked_above(&self, s: u32) -> u32 {
        self.n_sacked - self.sacked_below(s + 1)
    }

    /// RFC 6675 IsLost(s): DupThresh segments SACKed above an unSACKed `s`.
    pub fn is_lost(&self, s: u32) -> bool {
        !self.is_sacked(s) && self.sacked_above(s) >= DUP_THRESH
    }

    /// One past the highest SACKed segment (`base` when none).
    pub fn high_sacked(&self) -> u32 {
        let top = self.sacked.iter().rposition(|&x| x).map_or(0, |i| i + 1);
        self.base + top as u32
    }

    /// RFC 6675 SetPipe: for each unSACKed segment below `snd_max`, 1 if not IsLost, plus 1 if
    /// it was retransmitted (at or below HighRxt).
    ///
    /// Counted by ranges rather than segment by segment (the same sum; the walk over the window
    /// was a tenth of a paced BBR dumbbell's CPU, docs/benchmarks.md 2026-11-28): an unSACKed
    /// segment is not lost exactly when it lies above the DupThresh-th highest SACKed segment
    /// (fewer than DupThresh SACKed above it), and the retransmitted ones are the unSACKed
    /// segments from the cumulative ACK to HighRxt.
    pub fn pipe(&self, snd_max: u32) -> u32 {
        let end = snd_max.max(self.base);
        let not_lost = match self.nth_highest_sacked(DUP_THRESH) {
            // Above it: the segments up to snd_max, DupThresh - 1 of them SACKed.
            Some(p) => end.saturating_sub(p + 1).saturating_sub(DUP_THRESH - 1),
            None => (end - self.base) - self.n_sacked,
        };
        let retransmitted = self.high_rxt.map_or(0, |h| {
            let top = (h.saturating_add(1)).clamp(self.base, end);
            (top - self.base) - self.sacked_below(top)
        });
        not_lost + retransmitted
    }

    /// The `n`-th highest SACKed segment (`n` >= 1), if at least `n` are SACKed.
    fn nth_highest_sacked(&self, n: u32) -> Option<u32> {
        if self.n_sacked < n {
            return None;
        }
        // From the top over the deque's two slices (the second holds the higher segments).
        let (a, b) = self.sacked.as_slices();
        let mut seen = 0;
        let mut nth = |x: &[bool]| {
            x.iter().rposition(|&x| {
                seen += x as u32;
                seen == n
            })
        };
        let i = match nth(b) {
            Some(i) => a.len() + i,
            None => nth(a)?,
        };
        Some(self.base + i as u32)
    }

    /// RFC 6675 NextSeg, rules (1)-(3): the lowest lost unSACKed segment above HighRxt; else new
    /// data (`new_data`: its number, when the windows and the application allow it); else the
    /// lowest unSACKed segment above HighRxt and below the highest SACKed one.
    pub fn next_seg(&self, new_data: Option<u32>) -> Option<u32> {
        let from = self.high_rxt.map_or(self.base, |h| (h + 1).max(self.base));
        // The lowest unSACKed segment above HighRxt and below the highest SACKed one; IsLost
        // when it lies below the DupThresh-th highest SACKed segment (DupThresh SACKed above),
        // found from the top of the board rather than by counting up from the bottom.
        let top = (self.high_sacked() - self.base) as usize;
        let first = self
            .sacked
            .range(((from - self.base) as usize).min(top)..top)
            .position(|&x| !x)
            .map(|i| from + i as u32);
        match first {
            Some(s) if self.nth_highest_sacked(DUP_THRESH).is_some_and(|p| s < p) => Some(s), // rule (1)
            _ => new_data.or(first), // rule (2), then rule (3)
        }
    }

    /// NextSeg as ns-3.44's `DoRetransmit` calls it (`isRecovery` false): rules (1) and (2)
    /// only. Rule (1) is [`Scoreboard::next_seg`]'s answer when that segment is lost (rule (3)
    /// returns the same lowest unSACKed segment when it is not).
    pub fn next_seg_no_rule3(&self, new_data: Option<u32>) -> Option<u32> {
        self.next_seg(None)
            .filter(|&s| self.is_lost(s))
            .or(new_data)
    }
}

/// The number of `true` flags in `x` (a sum of bytes the compiler vectorises).
fn count_true(x: &[bool]) -> u32 {
    x.iter().map(|&x| x as u32).sum()
}

/// ns-3.44's count of a SACKed retransmission as still in flight (`cc = "bbr-ns3:rtxsack"`,
/// [`crate::tcp::cc::bbr::Ns3Model::rtx_sacked`]): the segments retransmitted and then SACKed
/// that ns-3's `TcpTxBuffer::BytesInFlight` still counts, until the cumulative ACK passes them
/// or a timeout.
///
/// ns-3.44's `BytesInFlight` is sent - SACKed - lost + retransmitted over its sent list
/// (tcp-tx-buffer.cc l. 1055-1073). `Update` marks an item SACKed and clears its lost flag but
/// leaves its retrans flag and the retransmitted count (l. 808-818), which fall only when the
/// cumulative ACK removes the item (`RemoveFromCounts`, l. 616-635) or a timeout clears every
/// flag (`SetSentListLost`, l. 1260-1306). So a retransmission that is SACKed counts 1 - 1 - 0 +
/// 1 = 1 segment in flight. RFC 6675 SetPipe counts only unSACKed octets, and Linux clears
/// `TCPCB_SACKED_RETRANS` and `retrans_out` when it SACKs a retransmission
/// (net/ipv4/tcp_input.c, `tcp_sacktag_one`), as `rate.rs`'s count does.
#[derive(Clone, Debug, Default)]
pub struct Ns3RetransSacked {
    /// The segments held: retransmitted, SACKed, not yet cumulatively ACKed.
    held: std::collections::BTreeSet<u32>,
}

impl Ns3RetransSacked {
    /// Before the ACK's SACK blocks are delivered: each segment of `blocks` in `[lo, hi)` that
    /// `retransmitted_undelivered` says was retransmitted and is not yet delivered (so this ACK
    /// SACKs it) is held.
    pub fn on_sack(
        &mut self,
        blocks: &[SackBlock],
        lo: u32,
        hi: u32,
        retransmitted_undelivered: impl Fn(u32) -> bool,
    ) {
        for &(a, b) in blocks {
            for seg in a.max(lo)..b.min(hi) {
                if retransmitted_undelivered(seg) {
                    self.held.insert(seg);
                }
            }
        }
    }

    /// The cumulative ACK reached `una`: the segments below it leave the count.
    pub fn advance(&mut self, una: u32) {
        self.held = self.held.split_off(&una);
    }

    /// A timeout clears every retrans flag (`SetSentListLost`): none is held.
    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// Segments held: what ns-3 counts in flight beyond the RFC 6675 / Linux count.
    pub fn count(&self) -> u32 {
        self.held.len() as u32
    }

    /// The segments held, lowest first.
    pub fn segments(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.iter().copied()
    }
}

/// ns-3.44's choice of segment after a timeout (`cc = "bbr-ns3:rtotail"`,
/// [`crate::tcp::cc::bbr::Ns3Model::rto_tail`]): while snd_una is below HighData at the timeout
/// (ns-3's CA_LOSS, left when `m_recover` is ACKed, tcp-socket-base.cc l. 2219-2235), each
/// segment sent is NextSeg's (`SendPendingData` asks it in every state, l. 3433; rule 3 only in
/// CA_RECOVERY, l. 3432):
///
/// 1. the lowest segment that is lost, not retransmitted since the timeout, not SACKed, and
///    below the highest SACKed segment, or anywhere when no segment above snd_una is SACKed
///    (tcp-tx-buffer.cc l. 975-986: `m_startSeq < m_highestSack.second || !m_sackSeen`;
///    `DiscardUpTo` clears `m_sackSeen` once the cumulative ACK reaches the highest SACK, l.
///    756-760). Lost: every segment unSACKed at the timeout (`SetSentListLost(false)`, l.
///    1260-1306, which also clears every retrans flag; the SACKs are kept, tcp-socket-base.cc l.
///    3915-3939), and any segment with DupThresh SACKed segments above it (`UpdateLostCount`,
///    l. 866-909, on each ACK with new SACKs, new data sent after the timeout included). A
///    segment the timeout marked lost that arrives after all is SACKed (`Update` clears its
///    lost flag, l. 808-818) and never resent; one truly lost above every SACK waits until a
///    SACK above it arrives, or the cumulative ACK passes every SACK;
/// 2. else new data, when the application and the receiver's window allow (l. 1004-1022).
///
/// RFC 6675 s. 4 NextSeg (1.b) bounds rule 1 by the highest SACK alike. Linux without RACK
/// marks every unSACKed segment lost on a timeout (`tcp_timeout_mark_lost`, net/ipv4/
/// tcp_input.c) and `tcp_xmit_retransmit_queue` (tcp_output.c) resends every lost segment from
/// the head, with no such bound: the sender's walk from snd_una ([`Sender::send_allowed`]).
#[derive(Clone, Debug, Default)]
pub struct Ns3RtoTail {
    /// HighData at the last timeout (`m_recover`); `None` before the first.
    point: Option<u32>,
    /// Segments retransmitted since the last timeout and not yet cumulatively ACKed (ns-3's
    /// `m_retrans` flags).
    resent: std::collections::BTreeSet<u32>,
}

impl Ns3RtoTail {
    /// A timeout with HighData `snd_max`: every retrans flag cleared.
    pub fn on_timeout(&mut self, snd_max: u32) {
        self.point = Some(snd_max);
        self.resent.clear();
    }

    /// The cumulative ACK reached `una`; returns whether that ends the rule (HighData at the
    /// timeout ACKed: ns-3 leaves CA_LOSS).
    pub fn advance(&mut self, una: u32) -> bool {
        self.resent = self.resent.split_off(&una);
        let end = self.point.is_some_and(|p| una >= p);
        if end {
            self.point = None;
        }
        end
    }

    /// The rule applies: a timeout's data is still outstanding (CA_LOSS).
    pub fn active(&self) -> bool {
        self.point.is_some()
    }

    /// Segment `seg`, below HighData, was sent again.
    pub fn resent(&mut self, seg: u32) {
        self.resent.insert(seg);
    }

    /// NextSeg rules (1) and (2) above over `sb` (its base snd_una), HighData `snd_max`, and
    /// `new_data` the next new segment when it may be sent; `None` when neither applies.
    pub fn next_seg(&self, sb: &Scoreboard, snd_max: u32, new_data: Option<u32>) -> Option<u32> {
        let Some(point) = self.point else {
            return new_data;
        };
        let limit = if sb.sacked_count() == 0 {
            snd_max
        } else {
            sb.high_sacked().min(snd_max)
        };
        // IsLost (DupThresh SACKed above) for a segment below the DupThresh-th highest SACK.
        let lost_below = sb.nth_highest_sacked(DUP_THRESH);
        (sb.base..limit)
            .find(|&s| {
                !sb.is_sacked(s)
                    && !self.resent.contains(&s)
                    && (s < point || lost_below.is_some_and(|p| s < p))
            })
            .or(new_data)
    }
}

impl Sender {
    /// [`Sender::send_allowed`] under [`Ns3RtoTail`] while it applies: segments chosen by
    /// [`Ns3RtoTail::next_seg`] while the packets in flight (as the rate state counts them,
    /// ns-3's `BytesInFlight`: the timeout's lost segments do not count until sent again) are
    /// below cwnd, paced. Returns `false` (nothing done) when the rule does not apply. snd_nxt
    /// stays where the timeout put it (no limited transmit in the Loss state, as before) until
    /// the rule ends ([`Sender::advance_una`]: snd_nxt = snd_max, nothing left to walk).
    pub(crate) fn send_ns3_after_rto(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        if self.in_recovery || !self.ns3_rto_tail.as_ref().is_some_and(|t| t.active()) {
            return false;
        }
        let cwnd = (self.cwnd as u32).max(1);
        while self
            .rate
            .as_ref()
            .is_some_and(|r| r.in_flight + self.ns3_held() < cwnd)
        {
            let new_ok =
                self.more_data(self.snd_max) && self.snd_max < self.snd_una + self.snd_wnd.max(1);
            let (Some(t), Some(sb)) = (self.ns3_rto_tail.as_ref(), self.sb.as_ref()) else {
                break;
            };
            let Some(seg) = t.next_seg(sb, self.snd_max, new_ok.then_some(self.snd_max)) else {
                break;
            };
            if !self.pacer.allows(now) {
                break;
            }
            if self.pacer.on {
                self.pace_sent(now);
            }
            let p = self.make_segment(seg, now);
            out.push(p);
            if seg == self.snd_max {
                self.snd_max += 1;
            } else if let Some(t) = self.ns3_rto_tail.as_mut() {
                t.resent(seg);
            }
            self.arm_if_stopped(now);
        }
        true
    }
}

/// SACK loss recovery's state (`[tcp] recovery = "sack"`); the scoreboard is the sender's
/// ([`Sender::sb`]).
#[derive(Clone, Debug, Default)]
pub struct Sack {
    /// RFC 6675's RecoveryPoint (HighData when recovery or a timeout began).
    recover: u32,
    /// `recover` has been set.
    recover_valid: bool,
    /// Proportional Rate Reduction of the current recovery.
    pub prr: Prr,
    /// A partial ACK of the current recovery has restarted the retransmission timer (read only
    /// under [`crate::tcp::cc::CongestionControl::restarts_rto_on_first_partial_ack_only`]).
    partial_acked: bool,
    /// ns-3.44's PRR in place of RFC 6937's, under
    /// [`crate::tcp::cc::CongestionControl::uses_ns3_prr`] (set on entering recovery).
    ns3_prr: Option<Ns3Prr>,
}

impl Recovery for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn uses_sack(&self) -> bool {
        true
    }

    /// Linux's and ns-3's in-flight count outside recovery: SACKed segments free the window.
    fn window_by_pipe(&self) -> bool {
        true
    }

    /// Processes an ACK with SACK recovery (RFC 6675 s. 5) and PRR (RFC 6937).
    fn on_ack(&mut self, s: &mut Sender, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        s.snd_wnd = ack.rwnd;
        let a = ack.seq;
        let newly = a.saturating_sub(s.snd_una);
        let was_sacked = s.sacked_between(s.snd_una, a);
        let rtx_acked = self.ns3_prr.is_some() && s.in_recovery && ns3_rtx_acked(s, a);
        if newly > 0 {
            s.advance_una(a, ack.ts, now);
        }
        let sb = s.sb.as_mut().expect("SACK sender has a scoreboard");
        sb.advance(s.snd_una);
        let sacked = sb.apply(&ack.sack, s.snd_max);
        let head_lost = sb.is_lost(s.snd_una);
        let mut sample = s.ack_sample(ack, newly, newly - was_sacked + sacked, now);
        s.cc.on_ack_event(&sample);
        // A controller that sets cwnd itself (BBR, Linux's `cong_control`): no PRR, no
        // deflation to ssthresh (Linux's tcp_end_cwnd_reduction returns early for it).
        let own = s.cc.controls_cwnd();
        if s.in_recovery {
            if s.snd_una >= self.recover {
                // RFC 6675 s. 5: recovery ends when RecoveryPoint is acknowledged; RFC 6937:
                // cwnd = ssthresh.
                if !own {
                    s.cwnd = s.ssthresh;
                }
                s.in_recovery = false;
                s.dupacks = 0;
            } else {
                // PRR's window, then ns-3.44's segment on a partial ACK (a cross-check model,
                // off unless the controller asks), then PRR's sending, which that segment
                // counts against as ns-3's in-flight count does.
                let sndcnt = if own {
                    0
                } else if self.ns3_prr.is_some() {
                    self.ns3_prr_window(s, sample.delivered, sacked > 0, newly > 0, rtx_acked)
                } else {
                    self.prr_window(s, sample.delivered as u64)
                };
                let extra = if newly > 0 {
                    self.ns3_partial_ack_send(s, now, out)
                } else {
                    0
                };
                if !own {
                    self.prr_send(s, sndcnt.saturating_sub(extra), now, out);
                }
            }
        } else if newly > 0 {
            s.dupacks = 0;
            if !own {
                s.cwnd = s.cc.on_ack(s.cwnd, s.ssthresh, &sample);
            }
        } else if s.snd_max > s.snd_una {
            s.dupacks += 1;
        }
        let allowed = !self.recover_valid || s.snd_una >= self.recover;
        if !s.in_recovery
            && s.snd_max > s.snd_una
            && allowed
            && (s.dupacks >= DUP_THRESH || head_lost)
        {
            self.enter(s, now, out);
        } else if !s.in_recovery && newly == 0 {
            s.limited_transmit_sack(now, out);
        }
        if newly > 0 {
            // ns-3.44 (`bbr-ns3:rtofirst`): in recovery, an ACK of new data restarts the timer
            // only if it is the recovery's first (`NewAck(ackNumber, m_isFirstPartialAck)`,
            // tcp-socket-base.cc l. 2109; the ACK that enters recovery counts, as ns-3 enters
            // it in `DupAck` before taking the partial ACK, l. 2020, 2082).
            let restart = if s.in_recovery && s.cc.restarts_rto_on_first_partial_ack_only() {
                !std::mem::replace(&mut self.partial_acked, true)
            } else {
                true
            };
            s.after_new_ack(restart, now);
            s.on_ecn_echo(ack, now);
        }
        if own {
            s.cc_control(&mut sample);
            if s.in_recovery {
                s.send_by_next_seg(now, out);
            }
        }
        if !s.in_recovery {
            s.send_allowed(now, out);
        }
    }

    /// RecoveryPoint = HighData (no new recovery for the go-back-N's duplicate ACKs) and
    /// HighRxt forgotten: after a timeout every unSACKed segment is sent again.
    fn on_timeout(&mut self, s: &mut Sender, _now: Time) {
        self.recover = s.snd_max;
        self.recover_valid = true;
        if let Some(b) = s.sb.as_mut() {
            b.high_rxt = None;
        }
    }
}

impl Sack {
    /// RFC 6675 s. 5 step (4) with RFC 6937's initialisation: RecoveryPoint = HighData,
    /// ssthresh from the congestion controller, retransmit the first unacknowledged segment.
    fn enter(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) {
        let flight = s.flight();
        let flight_lt = s.flight_for_ssthresh();
        s.ssthresh = s.cc.on_congestion(s.cwnd, flight_lt, now);
        self.recover = s.snd_max;
        self.recover_valid = true;
        s.in_recovery = true;
        self.partial_acked = false;
        s.ecn_recover = s.snd_max;
        s.stats.fast_retransmits += 1;
        self.prr = Prr::start(flight);
        self.ns3_prr = s.cc.uses_ns3_prr().then(|| {
            let pipe = s.sb.as_ref().map_or(flight, |b| b.pipe(s.snd_max));
            Ns3Prr::start(pipe, s.params.mss)
        });
        s.retransmit_head(now, out);
        self.prr.sent(1);
        let sb = s.sb.as_mut().expect("SACK sender has a scoreboard");
        sb.high_rxt = Some(s.snd_una);
        if !s.cc.controls_cwnd() {
            s.cwnd = sb.pipe(s.snd_max) as f64;
        }
    }

    /// One ACK in recovery: PRR's sndcnt, and cwnd = pipe + sndcnt (RFC 6937 s. 3.1).
    fn prr_window(&mut self, s: &mut Sender, delivered: u64) -> u64 {
        let pipe = s.sb.as_ref().map_or(0, |b| b.pipe(s.snd_max)) as u64;
        let sndcnt = self.prr.on_ack(delivered, pipe, s.ssthresh);
        s.cwnd = (pipe + sndcnt) as f64;
        sndcnt
    }

    /// One ACK in recovery under ns-3.44's PRR ([`Ns3Prr`]): ns-3 calls `DoRecovery` once as a
    /// duplicate ACK when the ACK SACKs new data (`DupAck`, tcp-socket-base.cc l. 1775-1781) and
    /// once more for a partial ACK that delivered a segment (l. 2093-2096), each with the ACK's
    /// DeliveredData, the last setting the window; then whole segments go out while pipe is
    /// below it. Returns that number. `delivered` is the ACK's DeliveredData, `dupack` whether
    /// it SACKed new data, `partial` whether it moved snd_una, `rtx_acked` whether it
    /// cumulatively acknowledged a retransmission (`m_isRetransDataAcked`, l. 1874-1887).
    /// Not modelled: the entering ACK's own `DoRecovery` (its DeliveredData of one or two
    /// segments is not counted; ns-3 sends the fast retransmit alone there, as here).
    fn ns3_prr_window(
        &mut self,
        s: &mut Sender,
        delivered: u32,
        dupack: bool,
        partial: bool,
        rtx_acked: bool,
    ) -> u64 {
        let pipe = s.sb.as_ref().map_or(0, |b| b.pipe(s.snd_max));
        let sent = self.prr.out;
        let Some(p) = self.ns3_prr.as_mut() else {
            return 0;
        };
        if dupack {
            if let Some(w) = p.on_ack(delivered, true, rtx_acked, pipe, s.ssthresh, sent) {
                s.cwnd = w;
            }
        }
        if partial && delivered > 0 {
            if let Some(w) = p.on_ack(delivered, false, rtx_acked, pipe, s.ssthresh, sent) {
                s.cwnd = w;
            }
        }
        (s.cwnd - f64::from(pipe)).max(0.0).floor() as u64
    }

    /// ns-3.44's segment on a partial ACK in fast recovery, under
    /// [`crate::tcp::cc::CongestionControl::sends_on_partial_ack`]: unless the new head was
    /// retransmitted already (`TcpTxBuffer::IsRetransmittedDataAcked(ackNumber + segmentSize)`),
    /// `DoRetransmit` sends one segment chosen by NextSeg without rule (3) (a lost segment,
    /// else new data), else the head again, whatever the window (tcp-socket-base.cc l.
    /// 2099-2103, 4086-4118; tcp-tx-buffer.cc l. 949-1052 with `isRecovery` false). It is sent
    /// after PRR has set the window (l. 2093-2096) and counts in PRR's prr_out
    /// (`UpdateBytesSent`, l. 3341-3345) and in flight, so PRR's own sending on this ACK is one
    /// segment less; when PRR allows none, it goes out beyond the window. Returns the segments
    /// sent (0 or 1).
    ///
    /// HighRxt stands for ns-3's per-segment retransmitted flags: within a recovery NextSeg
    /// retransmits upwards, skipping only SACKed segments, so the head was retransmitted
    /// exactly when HighRxt is at or above it.
    fn ns3_partial_ack_send(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) -> u64 {
        if !s.cc.sends_on_partial_ack() || s.snd_una >= s.snd_max {
            return 0;
        }
        let sb = s.sb.as_ref().expect("SACK sender has a scoreboard");
        if sb.high_rxt.is_some_and(|h| h >= s.snd_una) {
            return 0;
        }
        let new_ok = s.more_data(s.snd_max) && s.snd_max < s.snd_una + s.snd_wnd.max(1);
        let seg = sb
            .next_seg_no_rule3(new_ok.then_some(s.snd_max))
            .unwrap_or(s.snd_una);
        s.send_next_seg(seg, now, out);
        self.prr.sent(1);
        1
    }

    /// PRR's sending: `sndcnt` segments chosen by NextSeg.
    fn prr_send(&mut self, s: &mut Sender, sndcnt: u64, now: Time, out: &mut Vec<Packet>) {
        for _ in 0..sndcnt {
            let Some(seg) = s.next_seg_now() else {
                break;
            };
            s.send_next_seg(seg, now, out);
            self.prr.sent(1);
        }
    }
}

/// Whether the ACK up to `a` cumulatively acknowledges a segment retransmitted in this recovery
/// and not SACKed, ns-3.44's `m_isRetransDataAcked` (`TcpTxBuffer::IsRetransmittedDataAcked`
/// for each segment acknowledged, tcp-socket-base.cc l. 1874-1887): within a recovery NextSeg
/// retransmits upwards skipping only SACKed segments, so those are the unSACKed segments from
/// snd_una to HighRxt.
fn ns3_rtx_acked(s: &Sender, a: u32) -> bool {
    let Some(h) = s.sb.as_ref().and_then(|b| b.high_rxt) else {
        return false;
    };
    let hi = a.min(h.saturating_add(1));
    hi > s.snd_una && s.sacked_between(s.snd_una, hi) < hi - s.snd_una
}

impl Sender {
    /// RFC 6675 NextSeg with new data allowed when the application and the receiver's window
    /// allow it.
    fn next_seg_now(&self) -> Option<u32> {
        let new_ok =
            self.more_data(self.snd_max) && self.snd_max < self.snd_una + self.snd_wnd.max(1);
        let new_data = new_ok.then_some(self.snd_max);
        self.sb.as_ref().and_then(|b| b.next_seg(new_data))
    }

    /// Sends `seg` chosen by NextSeg (new data moves snd_max, a retransmission HighRxt).
    fn send_next_seg(&mut self, seg: u32, now: Time, out: &mut Vec<Packet>) {
        let p = self.make_segment(seg, now);
        out.push(p);
        if seg == self.snd_max {
            self.snd_max += 1;
            self.snd_nxt = self.snd_max;
        } else if let Some(b) = self.sb.as_mut() {
            b.high_rxt = Some(seg);
        }
        self.arm_if_stopped(now);
    }

    /// In recovery under a controller that sets cwnd itself: RFC 6675 s. 5 step (C),
    /// segments chosen by NextSeg while pipe < cwnd (Linux's tcp_xmit_retransmit_queue under
    /// `cong_control`), paced when pacing is on (Linux paces retransmissions too).
    pub(crate) fn send_by_next_seg(&mut self, now: Time, out: &mut Vec<Packet>) {
        // ns-3.44's AvailableWindow under `bbr-ns3:rtxsack` also counts the SACKed
        // retransmissions ([`Ns3RetransSacked`]); 0 otherwise.
        let mut pipe = self.sb.as_ref().map_or(0, |b| b.pipe(self.snd_max)) + self.ns3_held();
        while (pipe as f64) < self.cwnd.floor() {
            let Some(seg) = self.next_seg_now() else {
                break;
            };
            if !self.pacer.allows(now) {
                break;
            }
            if self.pacer.on {
                self.pace_sent(now);
            }
            self.send_next_seg(seg, now, out);
            pipe += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scoreboard of RFC 6675's running example in segments: 0..10 outstanding, 0 and 4
    /// lost, SACKs for 1-3 and 5-9 arrived.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        assert_eq!(b.apply(&[(5, 10), (1, 4)], 10), 8);
        b
    }

    /// ns-3.44's SACKed retransmissions by hand: 0..10 sent, 2 and 5 retransmitted; an ACK
    /// SACKing 1..4 and 5..7 holds 2 and 5 (retransmitted, not yet delivered), not 1, 3, 6; the
    /// same block again holds nothing new; the cumulative ACK to 4 lets 2 go; a timeout, 5.
    #[test]
    fn ns3_sacked_retransmissions_count_until_the_cumulative_ack() {
        let mut h = Ns3RetransSacked::default();
        let mut delivered = [false; 10];
        let retrans = [2u32, 5];
        let blocks = [(1, 4), (5, 7)];
        h.on_sack(&blocks, 0, 10, |s| {
            retrans.contains(&s) && !delivered[s as usize]
        });
        assert_eq!(h.count(), 2);
        for (a, b) in blocks {
            for s in a..b {
                delivered[s as usize] = true;
            }
        }
        h.on_sack(&blocks, 0, 10, |s| {
            retrans.contains(&s) && !delivered[s as usize]
        });
        assert_eq!(h.count(), 2);
        // Blocks are clipped to [lo, hi): a block below snd_una holds nothing.
        h.on_sack(&[(0, 3)], 3, 10, |_| true);
        assert_eq!(h.count(), 2);
        h.advance(4);
        assert_eq!(h.count(), 1);
        h.clear();
        assert_eq!(h.count(), 0);
    }

    /// `bbr-ns3:rtotail` by hand (ns-3.44's NextSeg after a timeout, [`Ns3RtoTail`]). 0..20 in
    /// flight, 3-5 and 8 SACKed, a timeout (HighData 20): every unSACKed segment is lost, but
    /// rule 1 takes only those below the highest SACK (8): 0, 1, 2, 6, 7, then new data 20, 21
    /// (Linux without RACK: 0, 1, 2, 6, 7, 9, 10, ..., 19). An ACK to 6 with SACK 8, 11-12:
    /// 9 and 10 (now below 12), then 22. SACK 13-15 and 20-21 (the new data): 16-19, then 23
    /// (13-15 arrived and are not resent). Then the cumulative ACK to 16 (no SACK above it:
    /// ns-3 clears `m_sackSeen`): 20, 21 SACKed, 16-19 resent, nothing lost; 22 lost only once
    /// DupThresh segments above it are SACKed: after SACK 23-25 (24, 25 sent as new), 22 comes
    /// before 26. The cumulative ACK to 20 (HighData at the timeout) ends the rule.
    #[test]
    fn ns3_after_a_timeout_resends_only_below_the_highest_sack() {
        let mut b = Scoreboard::default();
        let mut t = Ns3RtoTail::default();
        let mut snd_max = 20;
        b.apply(&[(3, 6), (8, 9)], snd_max);
        t.on_timeout(snd_max);
        assert!(t.active());
        // Sends n segments as the sender does: NextSeg's choice, new data at snd_max.
        let mut send = |b: &Scoreboard, t: &mut Ns3RtoTail, n: usize| {
            let mut sent = Vec::new();
            for _ in 0..n {
                let Some(s) = t.next_seg(b, snd_max, Some(snd_max)) else {
                    break;
                };
                if s == snd_max {
                    snd_max += 1;
                } else {
                    t.resent(s);
                }
                sent.push(s);
            }
            sent
        };
        assert_eq!(send(&b, &mut t, 7), vec![0, 1, 2, 6, 7, 20, 21]);
        b.advance(6);
        assert!(!t.advance(6));
        b.apply(&[(8, 9), (11, 13)], 22);
        assert_eq!(send(&b, &mut t, 3), vec![9, 10, 22]);
        b.apply(&[(13, 16), (20, 22)], 23);
        assert_eq!(send(&b, &mut t, 5), vec![16, 17, 18, 19, 23]);
        // No new data allowed: nothing else is lost, nothing to send.
        assert_eq!(t.next_seg(&b, 24, None), None);
        b.advance(16);
        assert!(!t.advance(16));
        assert_eq!(b.sacked_count(), 2);
        assert_eq!(send(&b, &mut t, 2), vec![24, 25]);
        // 23-25 SACKed: 22 has three SACKed above it (IsLost), the timeout did not mark it.
        b.apply(&[(23, 26)], 26);
        assert_eq!(send(&b, &mut t, 2), vec![22, 26]);
        // Every SACK below the cumulative ACK (ns-3's `m_sackSeen` false): rule 1 takes every
        // segment the timeout marked lost and not resent, above the highest SACK too.
        let mut c = Scoreboard::default();
        let mut u = Ns3RtoTail::default();
        c.apply(&[(2, 4)], 10);
        u.on_timeout(10);
        assert_eq!(u.next_seg(&c, 10, Some(10)), Some(0));
        u.resent(0);
        u.resent(1);
        assert_eq!(u.next_seg(&c, 10, Some(10)), Some(10));
        c.advance(4);
        assert!(!u.advance(4));
        assert_eq!(u.next_seg(&c, 10, Some(10)), Some(4));
        assert!(u.advance(10), "HighData at the timeout ACKed: CA_LOSS ends");
        assert!(!u.active());
        assert_eq!(u.next_seg(&c, 12, Some(12)), Some(12));
    }

    #[test]
    fn apply_counts_and_sets_flags_across_the_deque_wrap() {
        // Random blocks on a board whose deque wraps (advanced as it grows), against a plain
        // array of flags updated segment by segment: the newly SACKed counts and every flag.
        let mut b = Scoreboard::default();
        let mut want = vec![false; 4000];
        let mut x: u64 = 3;
        let mut rnd = |m: u32| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u32 % m
        };
        for round in 0..3000u32 {
            let una = round / 2;
            b.advance(una);
            let snd_max = una + 60;
            let blocks: Vec<SackBlock> = (0..3)
                .map(|_| {
                    let a = una.saturating_sub(5) + rnd(70);
                    (a, a + rnd(40))
                })
                .collect();
            let mut newly = 0;
            for &(a, e) in &blocks {
                for s in a.max(una)..e.min(snd_max) {
                    newly += !want[s as usize] as u32;
                    want[s as usize] = true;
                }
            }
            assert_eq!(b.apply(&blocks, snd_max), newly, "round {round}");
            for s in una..snd_max + 40 {
                assert_eq!(
                    b.is_sacked(s),
                    want[s as usize],
                    "round {round}, segment {s}"
                );
            }
            let n = (una..snd_max + 40).filter(|&s| want[s as usize]).count();
            assert_eq!(b.sacked_count() as usize, n, "round {round}");
        }
    }

    #[test]
    fn is_lost_needs_dupthresh_sacked_segments_above() {
        let b = board();
        // 0: 8 SACKed above -> lost; 4: 5 above (5..9) -> lost.
        assert!(b.is_lost(0) && b.is_lost(4));
        assert!(!b.is_lost(1), "a SACKed segment is not lost");
        let mut c = Scoreboard::default();
        c.apply(&[(2, 4)], 10);
        // Only 2 SACKed above 0: not lost yet (DupThresh 3).
        assert!(!c.is_lost(0));
    }

    #[test]
    fn pipe_by_hand() {
        // snd_max 12: unSACKed 0, 4 (both lost: not counted), 10, 11 (not lost: 0 SACKed
        // above): pipe = 2. After retransmitting 0 (HighRxt 0): pipe = 3.
        let mut b = board();
        assert_eq!(b.pipe(12), 2);
        b.high_rxt = Some(0);
        assert_eq!(b.pipe(12), 3);
        // HighRxt 4: 0 and 4 both count once as retransmitted: 4.
        b.high_rxt = Some(4);
        assert_eq!(b.pipe(12), 4);
    }

    #[test]
    fn next_seg_rules_one_two_three() {
        let mut b = board();
        // Rule (1): lowest lost segment above HighRxt.
        assert_eq!(b.next_seg(Some(12)), Some(0));
        b.high_rxt = Some(0);
        assert_eq!(b.next_seg(Some(12)), Some(4));
        // Nothing lost above HighRxt 4: rule (2), new data.
        b.high_rxt = Some(4);
        assert_eq!(b.next_seg(Some(12)), Some(12));
        // No new data allowed, nothing unSACKed below the highest SACK above HighRxt: none.
        assert_eq!(b.next_seg(None), None);
        // Rule (3): SACKs for 7 and 8 only above 0..10: 6 is not lost (2 above) but is below
        // the highest SACKed: retransmitted when nothing else may be sent.
        let mut c = Scoreboard::default();
        c.apply(&[(7, 9)], 10);
        c.high_rxt = Some(5);
        assert!(!c.is_lost(6));
        assert_eq!(c.next_seg(None), Some(6));
        assert_eq!(c.next_seg(Some(10)), Some(10));
    }

    /// RFC 6675 SetPipe word for word: every segment from the cumulative ACK to HighData.
    fn pipe_by_rfc(b: &Scoreboard, snd_max: u32) -> u32 {
        let mut pipe = 0;
        for s in b.base..snd_max {
            if b.is_sacked(s) {
                continue;
            }
            if !b.is_lost(s) {
                pipe += 1;
            }
            if b.high_rxt.is_some_and(|h| s <= h) {
                pipe += 1;
            }
        }
        pipe
    }

    /// Every board of 0..12 outstanding segments with SACKs among 1..12 (2,048 patterns), after
    /// cumulative ACKs 0, 1 and 3, with HighRxt none, below, inside and above the board: `check`
    /// gets each and a description for its message.
    fn every_board(mut check: impl FnMut(&Scoreboard, &str)) {
        for bits in 0u32..1 << 11 {
            for una in [0, 1, 3] {
                let mut b = Scoreboard::default();
                for s in 1..12 {
                    if bits >> (s - 1) & 1 == 1 {
                        b.apply(&[(s, s + 1)], 14);
                    }
                }
                b.advance(una);
                for h in [None, Some(0), Some(2), Some(5), Some(11), Some(13)] {
                    b.high_rxt = h;
                    check(
                        &b,
                        &format!("SACKed {:#b}, una {una}, HighRxt {h:?}", bits << 1),
                    );
                }
            }
        }
    }

    #[test]
    fn pipe_by_ranges_is_setpipe_segment_by_segment() {
        // The sum by ranges against the RFC's loop (which uses IsLost as RFC 6675 s. 4 defines
        // it), HighData at and above the board's end.
        every_board(|b, what| {
            for snd_max in [12, 14] {
                assert_eq!(
                    b.pipe(snd_max),
                    pipe_by_rfc(b, snd_max),
                    "{what}, snd_max {snd_max}"
                );
            }
        });
    }

    /// RFC 6675 NextSeg rules (1)-(3) word for word.
    fn next_seg_by_rfc(b: &Scoreboard, new_data: Option<u32>) -> Option<u32> {
        let from = b.high_rxt.map_or(b.base, |h| (h + 1).max(b.base));
        let high = b.high_sacked();
        let unsacked = || (from..high).filter(|&s| !b.is_sacked(s));
        unsacked()
            .find(|&s| b.is_lost(s))
            .or(new_data)
            .or_else(|| unsacked().next())
    }

    #[test]
    fn next_seg_from_the_top_is_the_rfc_rules() {
        every_board(|b, what| {
            for new_data in [None, Some(14)] {
                assert_eq!(
                    b.next_seg(new_data),
                    next_seg_by_rfc(b, new_data),
                    "{what}, new data {new_data:?}"
                );
            }
        });
    }

    /// NextSeg as ns-3.44's `DoRetransmit` asks for it (`isRecovery` false,
    /// tcp-tx-buffer.cc l. 949-1052): rule (1) word for word (the lowest unSACKed segment above
    /// HighRxt, below the highest SACKed one, that IsLost), else the new data, never rule (3).
    #[test]
    fn next_seg_without_rule_three_is_rules_one_and_two() {
        every_board(|b, what| {
            let from = b.high_rxt.map_or(b.base, |h| (h + 1).max(b.base));
            let lost = (from..b.high_sacked()).find(|&s| !b.is_sacked(s) && b.is_lost(s));
            for new_data in [None, Some(14)] {
                assert_eq!(
                    b.next_seg_no_rule3(new_data),
                    lost.or(new_data),
                    "{what}, new data {new_data:?}"
                );
            }
        });
        // SACKs for 7 and 8 only above 0..10, HighRxt 5: 6 is not lost, so it is rule (3)'s
        // and not returned here.
        let mut c = Scoreboard::default();
        c.apply(&[(7, 9)], 10);
        c.high_rxt = Some(5);
        assert_eq!(c.next_seg(None), Some(6));
        assert_eq!(c.next_seg_no_rule3(None), None);
        assert_eq!(c.next_seg_no_rule3(Some(10)), Some(10));
    }

    #[test]
    fn the_cumulative_ack_moves_the_board() {
        let mut b = board();
        b.advance(4);
        // 4 remains lost (5 SACKed above), 1-3 are forgotten.
        assert!(b.is_lost(4));
        assert_eq!(b.pipe(10), 0);
        b.advance(10);
        assert_eq!(b.pipe(12), 2);
        assert_eq!(b.high_sacked(), 10);
    }
}
