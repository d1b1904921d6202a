//! RACK-TLP loss detection (RFC 8985; Linux's default, `net/ipv4/tcp_recovery.c`) with
//! Proportional Rate Reduction ([`super::prr`], RFC 6937) as the sending rate during recovery:
//! `[tcp] recovery = "rack"`. Units: segments (segment `k` ends at `k + 1`) and ns.
//!
//! - **RACK** (s. 6.2): each segment's last transmission time is kept ([`SentRecord`], filled by
//!   the sender at every transmission). On each ACK the most recently sent segment among those
//!   newly delivered (cumulatively or by SACK) sets RACK.xmit_ts and RACK.rtt
//!   (step 2, with its test for ACKs of an original transmission of a retransmitted segment:
//!   RTT below min_RTT, or the echoed timestamp older than the retransmission);
//!   a delivered never-retransmitted segment below RACK.fack sets RACK.reordering_seen (step 3);
//!   an unacknowledged segment sent before it (equal timestamps: by the order of transmission,
//!   where the RFC compares end sequences: see `sent_after`) is lost once
//!   `xmit_ts + RACK.rtt + RACK.reo_wnd <= now` (step 5), else the reordering timer is armed for
//!   the largest remaining time.
//! - **reo_wnd** (step 4): `min(RACK.min_RTT / 4, SRTT)`, but 0 while no reordering has been
//!   seen and the sender is in recovery or at least DupThresh segments are SACKed (so without
//!   reordering RACK is as quick as RFC 6675's DupThresh). **Simplified:** the receiver sends no
//!   DSACK (RFC 2883), so the DSACK-driven growth of the multiplier (RACK.reo_wnd_mult,
//!   reo_wnd_persist) never happens: the multiplier stays 1. RACK.min_RTT is the sender's smallest
//!   RTT sample of the connection (RFC 8985 and Linux use a windowed minimum).
//! - **Recovery** (s. 6.2.1, as Linux's `tcp_fastretrans_alert`): the first segment marked lost
//!   outside recovery starts it: ssthresh from the congestion controller, RecoveryPoint =
//!   HighData, PRR from FlightSize; on every ACK PRR's sndcnt (at least one segment before any is
//!   sent in the episode, Linux's `tcp_cwnd_reduction`) goes to lost segments first, lowest
//!   first, then to new data; cwnd = pipe + sndcnt, pipe being Linux's in_flight: unSACKed
//!   segments not marked lost, plus retransmissions in flight. Recovery ends when RecoveryPoint is
//!   acknowledged (cwnd = ssthresh); a new episode starts on the same ACK if a segment marked
//!   lost is still outstanding, retransmitted or not (Linux's `tcp_time_to_recover` tests
//!   `lost_out`, which counts lost segments until they are ACKed or SACKed). After a retransmission timeout the head and every
//!   unSACKed segment sent at least RACK.rtt ago are marked lost, a more recent one stays in
//!   flight (Linux's `tcp_timeout_mark_lost`), and no fast recovery starts before the data
//!   outstanding at the timeout is acknowledged, unless a retransmission is found lost; the
//!   sender's go-back-N resends the segments marked lost (Linux's CA_Loss), and under BBR the
//!   window restarts at in flight + 1 (`tcp_enter_loss`).
//! - **TLP** (s. 7): when an ACK acknowledges or SACKs new data and the sender is not in
//!   recovery and no probe is outstanding, a probe timeout PTO = 2 SRTT (+ TLP.max_ack_delay =
//!   200 ms, s. 7.2's WCDelAckT, when one segment is in flight; 1 s without an RTT sample), at
//!   most the RTO, replaces the retransmission timer. When it fires the sender sends one new
//!   segment if the receiver's window and the application allow, else retransmits the highest
//!   segment sent (s. 7.3), and arms the RTO. s. 7.4: an ACK beyond TLP.end_seq after a
//!   retransmitted probe means the probe repaired a loss: the congestion controller reduces
//!   (ssthresh = its loss response, cwnd = ssthresh), as Linux's `tcp_process_tlp_ack`.
//!   Without DSACK a probe that was not needed is not recognised as such (s. 7.4.1): the episode
//!   ends with that reduction too, or with a duplicate ACK without SACK blocks.
//!   **Simplified:** the PTO is armed only on ACKs, not re-armed after each transmission of new
//!   data as s. 7.2 and Linux do (`tcp_write_xmit` calls `tcp_schedule_loss_probe`, at
//!   min(PTO, the RTO's remaining time)); on the BBR per-flow bench that makes no measurable
//!   difference (docs/testbed.md, "The simulator's timeouts traced").
//!
//! One timer per flow (the sender's `rto_deadline`) serves the RTO, the reordering timer and the
//! PTO, as Linux's `icsk_pending` modes; [`Recovery::on_timer`] is told of every expiry first.
//! It is re-armed as Linux does (net/ipv4/tcp_input.c `tcp_ack`): after an ACK that advances
//! snd_una or SACKs data sent before the head's last transmission (FLAG_SET_XMIT_TIMER), unless
//! RACK armed the reordering timer; from now, or from the head's last transmission when the
//! reordering or probe timer was pending (`tcp_rearm_rto`); any other ACK leaves it as it is.
//! Retransmitting the head restarts the RTO unless the reordering timer is pending
//! (`tcp_xmit_retransmit_queue`); the reordering timer's expiry re-arms the RTO, not itself
//! (`tcp_rack_reo_timeout`).
//! Limited transmit (RFC 3042) is not used with RACK.

use super::{Prr, Recovery, DUP_THRESH};
use crate::packet::Packet;
use crate::tcp::cc::AckSample;
use crate::tcp::sender::linux_ts_rtt;
use crate::tcp::Sender;
use aqm::Time;
use std::collections::VecDeque;

/// TLP.max_ack_delay (RFC 8985 s. 7.2: WCDelAckT, 200 ms when the receiver's delayed-ACK timer
/// is unknown), ns.
pub const MAX_ACK_DELAY_NS: Time = 200_000_000;
/// PTO before any RTT sample (RFC 8985 s. 7.2: 1 s), ns.
pub const PTO_NO_RTT_NS: Time = 1_000_000_000;

/// Marked lost (Linux's TCPCB_LOST).
const LOST: u8 = 1;
/// A retransmission of it is in flight (Linux's TCPCB_SACKED_RETRANS).
const RETRANS: u8 = 2;
/// Ever retransmitted (RFC 8985's Segment.retransmitted, Linux's TCPCB_EVER_RETRANS).
const EVER_RETRANS: u8 = 4;

#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    xmit_ts: Time,
    /// Rank of its last transmission among all the flow's transmissions (from 1).
    order: u64,
    flags: u8,
}

/// RFC 8985 s. 5.2's per-segment variables of the outstanding segments: the time of each one's
/// last transmission and whether it was retransmitted or is marked lost. The sender records
/// every transmission ([`SentRecord::sent`]) when its recovery asks for it
/// ([`Recovery::keeps_send_times`]).
#[derive(Clone, Debug, Default)]
pub struct SentRecord {
    base: u32,
    segs: VecDeque<Seg>,
    /// Transmissions so far.
    sent: u64,
}

impl SentRecord {
    /// Segment `seg` is sent at `now` (`retx`: it was sent before).
    pub fn sent(&mut self, seg: u32, now: Time, retx: bool) {
        if self.segs.is_empty() {
            self.base = seg;
        }
        let Some(i) = seg.checked_sub(self.base).map(|i| i as usize) else {
            return; // below snd_una: nothing to record
        };
        if self.segs.len() <= i {
            self.segs.resize(i + 1, Seg::default());
        }
        self.sent += 1;
        let s = &mut self.segs[i];
        s.xmit_ts = now;
        s.order = self.sent;
        if retx {
            s.flags |= RETRANS | EVER_RETRANS;
        }
    }

    /// Forgets the segments below the cumulative ACK `una`.
    fn advance(&mut self, una: u32) {
        let n = (una.saturating_sub(self.base) as usize).min(self.segs.len());
        self.segs.drain(..n);
        self.base = self.base.max(una);
    }

    fn get(&self, seg: u32) -> Seg {
        seg.checked_sub(self.base)
            .and_then(|i| self.segs.get(i as usize))
            .copied()
            .unwrap_or_default()
    }

    /// Whether `seg`, recorded, is marked lost and not retransmitted since: what Linux's
    /// `tcp_xmit_retransmit_queue` resends.
    pub fn resend_due(&self, seg: u32) -> bool {
        seg.checked_sub(self.base)
            .and_then(|i| self.segs.get(i as usize))
            .is_some_and(|s| s.flags & LOST != 0 && s.flags & RETRANS == 0)
    }

    fn flags_mut(&mut self, seg: u32) -> Option<&mut u8> {
        let i = seg.checked_sub(self.base)? as usize;
        self.segs.get_mut(i).map(|s| &mut s.flags)
    }
}

/// What the one timer is for now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerMode {
    /// The retransmission timeout (the sender's).
    #[default]
    Rto,
    /// RACK's reordering timer (RFC 8985 s. 6.2 step 5).
    Reorder,
    /// TLP's probe timeout (RFC 8985 s. 7.2).
    Probe,
}

/// RACK-TLP's state (`[tcp] recovery = "rack"`); the SACK scoreboard is the sender's
/// ([`Sender::sb`]), the transmission record too ([`Sender::rack_sent`]).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts and the transmission's rank (in place of RACK.end_seq, see
    /// [`sent_after`]): the most recently sent delivered segment (rank 0: none yet).
    xmit_ts: Time,
    order: u64,
    /// RACK.rtt: the RTT of that segment, ns.
    pub rtt: Time,
    /// RACK.fack: the highest end of a delivered segment.
    fack: u32,
    /// RACK.reordering_seen.
    pub reordering_seen: bool,
    /// RACK.reo_wnd after the last ACK, ns.
    pub reo_wnd: Time,
    /// RecoveryPoint.
    recover: u32,
    recover_valid: bool,
    /// Proportional Rate Reduction of the current recovery.
    pub prr: Prr,
    /// What the timer is armed for.
    pub timer: TimerMode,
    /// TLP.end_seq (`None`: no probe outstanding) and TLP.is_retrans.
    pub tlp_end_seq: Option<u32>,
    tlp_is_retrans: bool,
    /// Loss probes sent.
    pub probes: u64,
    /// Congestion responses to losses repaired by a probe (s. 7.4.2).
    pub tlp_reductions: u64,
    /// A segment may be marked lost and not yet ACKed or SACKed (spares the scan for one on
    /// every ACK outside recovery).
    lost_seen: bool,
    /// The last loss detection marked lost a segment whose retransmission was in flight
    /// (Linux's FLAG_LOST_RETRANS: `retrans_out` fell in `tcp_identify_packet_loss`).
    lost_retrans: bool,
    /// The last loss detection marked a segment lost (Linux's in-flight count changed).
    newly_lost: bool,
    /// Newly delivered segments of the ACK being processed (kept to reuse the allocation).
    scratch: Vec<u32>,
}

/// RFC 8985 s. 6.2 RACK_sent_after: transmission (t1, rank o1) after (t2, o2). The RFC breaks a
/// tie of timestamps by the higher end sequence; here by the order of transmission (a counter),
/// which is the same for new data but right also for a retransmission that leaves in the same
/// nanosecond as new data (common in the simulator, where one ACK releases both at once).
#[inline]
fn sent_after(t1: Time, o1: u64, t2: Time, o2: u64) -> bool {
    t1 > t2 || (t1 == t2 && o1 > o2)
}

impl Recovery for Rack {
    fn name(&self) -> &'static str {
        "rack"
    }

    fn uses_sack(&self) -> bool {
        true
    }

    fn keeps_send_times(&self) -> bool {
        true
    }

    fn marks_losses(&self) -> bool {
        true
    }

    fn send_paced_in_recovery(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) -> bool {
        self.send_own(s, now, out);
        true
    }

    fn on_ack(&mut self, s: &mut Sender, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        s.snd_wnd = ack.rwnd;
        let a = ack.seq.min(s.snd_max);
        let newly = a.saturating_sub(s.snd_una);
        let flight_before = s.flight();
        self.collect_delivered(s, ack, a);
        let was_sacked = s.sacked_between(s.snd_una, a);
        let set_xmit = newly > 0 || self.sacked_sent_before_head(s, a);
        if let Some(r) = self.rtt_of_ack(s, ack, a, now) {
            s.rtt_sample(r);
        }
        if newly > 0 {
            s.advance_una(a, ack.ts, now);
        }
        let sb = s.sb.as_mut().expect("RACK sender has a scoreboard");
        sb.advance(s.snd_una);
        let sacked = sb.apply(&ack.sack, s.snd_max);
        self.update(s, ack, now); // steps 1-3
        if let Some(r) = s.rack_sent.as_mut() {
            r.advance(s.snd_una);
        }
        self.reo_wnd = self.reo_wnd(s); // step 4
        let timeout = self.detect_loss(s, now); // step 5
                                                // The sample after loss detection, as Linux's tcp_rate_gen after tcp_fastretrans_alert:
                                                // its `losses` are this ACK's RACK marks.
        let mut sample = s.ack_sample(ack, newly, newly - was_sacked + sacked, now);
        s.cc.on_ack_event(&sample);
        self.tlp_process_ack(s, ack, newly, flight_before, now);
        let delivered = sample.delivered as u64;
        // A controller that sets cwnd itself (BBR, Linux's `cong_control`): no PRR, no deflation
        // to ssthresh (Linux's tcp_end_cwnd_reduction returns early for it).
        let own = s.cc.controls_cwnd();
        self.window_step(s, newly, &sample, own, now, out);
        self.maybe_enter(s, delivered, now, out);
        if newly > 0 {
            s.after_new_ack(true, now);
            s.on_ecn_echo(ack, now);
        }
        let sent_before = s.snd_max;
        if own {
            s.cc_control(&mut sample);
            if s.in_recovery {
                self.send_own(s, now, out);
            }
        }
        if !s.in_recovery {
            s.send_allowed(now, out);
            if std::mem::take(&mut s.head_resent) {
                self.head_sent(s, s.snd_una, now);
            }
        }
        let progress = newly > 0 || sacked > 0 || s.snd_max > sent_before;
        self.arm(s, timeout, progress, set_xmit, now);
    }

    fn head_retransmitted(&mut self, s: &mut Sender, now: Time) {
        self.head_sent(s, s.snd_una, now);
    }

    fn on_timer(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) -> bool {
        match self.timer {
            TimerMode::Rto => false,
            TimerMode::Reorder => {
                // RFC 8985 s. 6.2 step 5 on expiry, as Linux's tcp_rack_reo_timeout
                // (net/ipv4/tcp_recovery.c): the timer stays "pending" as the reordering timer
                // while it runs (so a retransmission of the head does not restart the RTO:
                // tcp_xmit_retransmit_queue), then the RTO is re-armed from the head's last
                // transmission (tcp_rearm_rto); segments still within their reordering window
                // wait for the next ACK (the remaining time is not re-armed).
                self.detect_loss(s, now);
                if self.next_lost(s).is_some() {
                    if s.in_recovery {
                        self.recovery_step(s, 0, now, out);
                    } else if !self.after_timeout(s) || self.newly_lost {
                        // A segment newly marked lost starts recovery in any state but
                        // Recovery (CA_Loss included); no ACK, so no cong_control: the
                        // retransmissions go out on the window as it is.
                        self.enter(s, now);
                        self.recovery_step(s, 0, now, out);
                    }
                }
                if s.snd_una >= s.snd_max {
                    self.timer = TimerMode::Rto;
                    s.rto_deadline = None;
                } else {
                    self.rearm_rto(s, now);
                }
                true
            }
            TimerMode::Probe => {
                self.timer = TimerMode::Rto;
                self.send_probe(s, now, out);
                // s. 7.3: after a probe the RTO, not another PTO.
                s.rto_deadline = Some(now + s.rto);
                true
            }
        }
    }

    /// Linux's `tcp_timeout_mark_lost` (net/ipv4/tcp_input.c): the head and every unSACKed
    /// segment whose RACK time is up (sent at least RACK.rtt ago: `tcp_rack_skb_timeout(tp, skb,
    /// 0) <= 0`) are lost, in the rate state too; a segment sent more recently stays in flight.
    /// RecoveryPoint = HighData; no probe outstanding.
    fn on_timeout(&mut self, s: &mut Sender, now: Time) {
        self.recover = s.snd_max;
        self.recover_valid = true;
        self.tlp_end_seq = None;
        self.timer = TimerMode::Rto;
        self.lost_seen = true;
        let (una, rack_rtt) = (s.snd_una, self.rtt);
        let sb = s.sb.as_ref().expect("RACK sender has a scoreboard");
        let Some(r) = s.rack_sent.as_mut() else {
            return;
        };
        let due = |r: &SentRecord, seg: u32| seg == una || r.get(seg).xmit_ts + rack_rtt <= now;
        for seg in una..s.snd_max {
            if !sb.is_sacked(seg) && due(r, seg) {
                if let Some(f) = r.flags_mut(seg) {
                    *f = (*f | LOST) & !RETRANS;
                }
            }
        }
        if let Some(rate) = s.rate.as_mut() {
            rate.on_timeout_except(|seg| !due(r, seg));
        }
    }
}

impl Rack {
    fn record(s: &Sender) -> &SentRecord {
        s.rack_sent
            .as_ref()
            .expect("a RACK sender keeps send times")
    }

    /// The segments this ACK delivers: cumulatively acknowledged up to `a` and not SACKed before,
    /// and newly SACKed, in ascending order.
    fn collect_delivered(&mut self, s: &Sender, ack: &Packet, a: u32) {
        let sb = s.sb.as_ref().expect("RACK sender has a scoreboard");
        let d = &mut self.scratch;
        d.clear();
        d.extend((s.snd_una..a).filter(|&k| !sb.is_sacked(k)));
        for &(lo, hi) in &ack.sack {
            d.extend((lo.max(a)..hi.min(s.snd_max)).filter(|&k| !sb.is_sacked(k)));
        }
        d.sort_unstable();
        d.dedup();
    }

    /// The RTT sample of an ACK (ns), as Linux takes it (`tcp_clean_rtx_queue`,
    /// `tcp_sacktag_one`, `tcp_ack_update_rtt` in net/ipv4/tcp_input.c): from the send time of
    /// the lowest segment it acknowledges cumulatively and not SACKed before, unless a segment it
    /// acknowledges cumulatively was ever retransmitted (Karn); else from the lowest newly SACKed
    /// segment never retransmitted; else, with timestamps and snd_una advancing, from the echo
    /// on the millisecond TS clock ([`linux_ts_rtt`]).
    /// Called before `advance_una` (the send records still hold the acknowledged segments) and
    /// after `collect_delivered`.
    fn rtt_of_ack(&self, s: &Sender, ack: &Packet, a: u32, now: Time) -> Option<f64> {
        let rec = Self::record(s);
        let sb = s.sb.as_ref().expect("RACK sender has a scoreboard");
        let since = |k: u32| now.saturating_sub(rec.get(k).xmit_ts) as f64;
        let retx_acked = (s.snd_una..a).any(|k| rec.get(k).flags & EVER_RETRANS != 0);
        if !retx_acked {
            if let Some(k) = (s.snd_una..a).find(|&k| !sb.is_sacked(k)) {
                return Some(since(k));
            }
        }
        let first_sacked = self
            .scratch
            .iter()
            .copied()
            .find(|&k| k >= a && rec.get(k).flags & EVER_RETRANS == 0);
        if let Some(k) = first_sacked {
            return Some(since(k));
        }
        (s.params.timestamps && a > s.snd_una).then(|| linux_ts_rtt(now, ack.ts) as f64)
    }

    /// RFC 8985 s. 6.2 steps 2 (RACK_update) and 3 (RACK_detect_reordering) over the newly
    /// delivered segments.
    fn update(&mut self, s: &Sender, ack: &Packet, now: Time) {
        let rec = Self::record(s);
        let min_rtt = s.min_rtt_ns();
        let mut best: Option<(Time, u64)> = None;
        for &k in &self.scratch {
            let seg = rec.get(k);
            let end = k + 1;
            if seg.flags & EVER_RETRANS != 0 {
                let rtt = now.saturating_sub(seg.xmit_ts) as f64;
                // The ACK may be for the original transmission: no sample from it.
                let echo_older = s.params.timestamps && ack.ts < seg.xmit_ts;
                if echo_older || rtt < min_rtt {
                    continue;
                }
            } else if end < self.fack {
                self.reordering_seen = true;
            }
            self.fack = self.fack.max(end);
            if best.is_none_or(|(t, o)| sent_after(seg.xmit_ts, seg.order, t, o)) {
                best = Some((seg.xmit_ts, seg.order));
            }
        }
        if let Some((t, o)) = best {
            self.rtt = now.saturating_sub(t);
            if self.order == 0 || sent_after(t, o, self.xmit_ts, self.order) {
                self.xmit_ts = t;
                self.order = o;
            }
        }
    }

    /// RFC 8985 s. 6.2 step 4 without DSACK (multiplier 1).
    fn reo_wnd(&self, s: &Sender) -> Time {
        let sacked = s.sb.as_ref().map_or(0, |b| b.sacked_count());
        if !self.reordering_seen && (s.in_recovery || sacked >= DUP_THRESH) {
            return 0;
        }
        (s.min_rtt_ns() / 4.0).min(s.srtt_ns()).max(0.0) as Time
    }

    /// RFC 8985 s. 6.2 step 5 (RACK_detect_loss): marks lost the segments sent before
    /// RACK.xmit_ts whose time is up; returns the reordering timeout (0: none).
    fn detect_loss(&mut self, s: &mut Sender, now: Time) -> Time {
        if self.order == 0 {
            return 0;
        }
        let (una, max) = (s.snd_una, s.snd_max);
        let sb = s.sb.as_ref().expect("RACK sender has a scoreboard");
        let Some(rec) = s.rack_sent.as_mut() else {
            return 0;
        };
        let mut rate = s.rate.as_mut();
        let mut timeout: Time = 0;
        self.lost_retrans = false;
        self.newly_lost = false;
        for k in una..max {
            if sb.is_sacked(k) {
                continue;
            }
            let seg = rec.get(k);
            if seg.flags & LOST != 0 && seg.flags & RETRANS == 0 {
                continue; // lost, waiting for its retransmission
            }
            if !sent_after(self.xmit_ts, self.order, seg.xmit_ts, seg.order) {
                if seg.flags & EVER_RETRANS == 0 {
                    // First transmissions go out in sequence order: none later was sent before.
                    break;
                }
                continue;
            }
            let deadline = seg.xmit_ts + self.rtt + self.reo_wnd;
            if deadline <= now {
                if let Some(f) = rec.flags_mut(k) {
                    self.lost_retrans |= *f & RETRANS != 0;
                    self.newly_lost = true;
                    *f = (*f | LOST) & !RETRANS;
                    self.lost_seen = true;
                    if let Some(r) = rate.as_deref_mut() {
                        r.mark_seg_lost(k);
                    }
                }
            } else {
                timeout = timeout.max(deadline - now);
            }
        }
        timeout
    }

    /// The lowest segment marked lost and not retransmitted since.
    fn next_lost(&self, s: &Sender) -> Option<u32> {
        let rec = s.rack_sent.as_ref()?;
        let sb = s.sb.as_ref()?;
        (s.snd_una..s.snd_max).find(|&k| {
            let f = rec.get(k).flags;
            f & LOST != 0 && f & RETRANS == 0 && !sb.is_sacked(k)
        })
    }

    /// Linux's `tp->lost_out > 0`: an unSACKed segment above snd_una is marked lost, whether
    /// or not it has been retransmitted since.
    fn any_lost(&self, s: &Sender) -> bool {
        let (Some(rec), Some(sb)) = (s.rack_sent.as_ref(), s.sb.as_ref()) else {
            return false;
        };
        (s.snd_una..s.snd_max).any(|k| rec.get(k).flags & LOST != 0 && !sb.is_sacked(k))
    }

    /// Linux's in_flight: unSACKed segments not marked lost, plus retransmissions in flight.
    pub fn pipe(&self, s: &Sender) -> u32 {
        let (Some(rec), Some(sb)) = (s.rack_sent.as_ref(), s.sb.as_ref()) else {
            return s.flight();
        };
        (s.snd_una..s.snd_max)
            .filter(|&k| !sb.is_sacked(k))
            .map(|k| {
                let f = rec.get(k).flags;
                u32::from(f & LOST == 0) + u32::from(f & RETRANS != 0)
            })
            .sum()
    }

    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    fn after_timeout(&self, s: &Sender) -> bool {
        self.recover_valid && s.snd_una < self.recover && !s.in_recovery
    }

    /// Fast recovery begins (ssthresh from the controller, RecoveryPoint = HighData, PRR); the
    /// caller sends.
    fn enter(&mut self, s: &mut Sender, now: Time) {
        let flight = s.flight();
        s.ssthresh = s.cc.on_congestion(s.cwnd, flight, now);
        self.recover = s.snd_max;
        self.recover_valid = true;
        s.in_recovery = true;
        s.ecn_recover = s.snd_max;
        s.stats.fast_retransmits += 1;
        self.prr = Prr::start(flight);
        self.tlp_end_seq = None; // Linux's tcp_init_cwnd_reduction
    }

    /// Sends in recovery: PRR's step, or, under a controller that sets cwnd itself, what its
    /// window allows (`send_own`).
    fn recovery_step(&mut self, s: &mut Sender, delivered: u64, now: Time, out: &mut Vec<Packet>) {
        if s.cc.controls_cwnd() {
            self.send_own(s, now, out);
        } else {
            self.prr_step(s, delivered, now, out);
        }
    }

    /// The window after an ACK outside a controller that sets it itself: recovery ends at
    /// RecoveryPoint (cwnd = ssthresh, RFC 6937 s. 3.1 / Linux `tcp_end_cwnd_reduction`), PRR
    /// within it, the controller's growth outside it.
    fn window_step(
        &mut self,
        s: &mut Sender,
        newly: u32,
        sample: &AckSample,
        own: bool,
        now: Time,
        out: &mut Vec<Packet>,
    ) {
        if s.in_recovery {
            if s.snd_una >= self.recover {
                if !own {
                    s.cwnd = s.ssthresh;
                }
                s.in_recovery = false;
            } else if !own {
                self.prr_step(s, sample.delivered as u64, now, out);
            }
        } else if newly > 0 && !own {
            s.cwnd = s.cc.on_ack(s.cwnd, s.ssthresh, sample);
        }
    }

    /// Whether this ACK starts a recovery episode (and, after a timeout, where the go-back-N
    /// resumes).
    fn maybe_enter(&mut self, s: &mut Sender, delivered: u64, now: Time, out: &mut Vec<Packet>) {
        // Linux's tcp_time_to_recover: recovery starts while any segment is marked lost
        // (`tp->lost_out`, which keeps a lost segment until it is ACKed or SACKed, retransmitted
        // or not); so the ACK that ends an episode at RecoveryPoint starts the next one at once
        // when a retransmission of a later loss is still in flight (tcp_fastretrans_alert: the
        // exit check "D" runs before "E", which calls tcp_enter_recovery).
        //
        // After a timeout (Linux's CA_Loss) no recovery starts until the data outstanding then is
        // acknowledged, unless this ACK found a retransmission lost: tcp_fastretrans_alert's
        // TCP_CA_Loss case falls through to tcp_enter_recovery on FLAG_LOST_RETRANS, and the
        // lost segments are then retransmitted (the go-back-N alone never resends a segment it
        // has passed).
        let loss_ok = !self.after_timeout(s) || self.lost_retrans;
        if self.after_timeout(s) && self.newly_lost {
            // Linux's CA_Loss resends every segment marked lost (tcp_process_loss: REXMIT_LOST),
            // also one RACK marks after the timeout left it in flight: the go-back-N returns to it.
            if let Some(k) = self.next_lost(s) {
                s.snd_nxt = s.snd_nxt.min(k);
            }
        }
        if !s.in_recovery && loss_ok && self.lost_seen {
            if self.any_lost(s) {
                self.enter(s, now);
                // Linux's tcp_ack: tcp_fastretrans_alert starts recovery, tcp_cong_control sets
                // the window, tcp_xmit_recovery sends. PRR's first step does the last two; a
                // controller that sets cwnd itself (BBR: packet conservation from this ACK)
                // sends after its cc_control (`on_ack`), never on the window before it.
                if !s.cc.controls_cwnd() {
                    self.prr_step(s, delivered, now, out);
                }
            } else {
                self.lost_seen = false;
            }
        }
    }

    /// Linux's `tcp_xmit_retransmit_queue` (net/ipv4/tcp_output.c): retransmitting the head
    /// restarts the RTO, unless the reordering timer is pending.
    fn head_sent(&mut self, s: &mut Sender, seg: u32, now: Time) {
        if seg == s.snd_una && self.timer != TimerMode::Reorder {
            s.rto_deadline = Some(now + s.rto);
            self.timer = TimerMode::Rto;
        }
    }

    /// In recovery under a controller that sets cwnd itself (BBR): lost segments first, lowest
    /// first, then new data, while in flight (Linux's) < cwnd, each paced (Linux's
    /// `tcp_xmit_retransmit_queue` with the EDT pacing every segment goes through); a
    /// retransmission of the head restarts the RTO, as there ([`Rack::head_sent`]).
    fn send_own(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) {
        // The rate state keeps Linux's in-flight count under RACK's marks (the controller asks
        // for rate samples): the same as `pipe`, without a scan of the flight.
        let mut pipe = match s.rate.as_ref() {
            Some(r) => {
                debug_assert_eq!(r.in_flight, self.pipe(s), "rate state and RACK agree");
                r.in_flight
            }
            None => self.pipe(s),
        };
        while (pipe as f64) < s.cwnd.floor() {
            let Some(seg) = self.next_to_send(s) else {
                break;
            };
            if !s.pacer.allows(now) {
                break;
            }
            if s.pacer.on {
                s.pace_sent(now);
            }
            Self::send(s, seg, now, out);
            self.head_sent(s, seg, now);
            pipe += 1;
        }
    }

    /// What recovery sends next: the lowest lost segment, else new data if the application and
    /// the receiver's window allow.
    fn next_to_send(&self, s: &Sender) -> Option<u32> {
        let new_ok = s.more_data(s.snd_max) && s.snd_max < s.snd_una + s.snd_wnd.max(1);
        self.next_lost(s).or(new_ok.then_some(s.snd_max))
    }

    /// Sends `seg` (new data moves snd_max).
    fn send(s: &mut Sender, seg: u32, now: Time, out: &mut Vec<Packet>) {
        let p = s.make_segment(seg, now);
        out.push(p);
        if seg == s.snd_max {
            s.snd_max += 1;
            s.snd_nxt = s.snd_max;
        }
        s.arm_if_stopped(now);
    }

    /// One ACK (or reordering timeout) in recovery: PRR's sndcnt to lost segments, then new data.
    fn prr_step(&mut self, s: &mut Sender, delivered: u64, now: Time, out: &mut Vec<Packet>) {
        let pipe = self.pipe(s) as u64;
        let mut sndcnt = self.prr.on_ack(delivered, pipe, s.ssthresh);
        if self.prr.out == 0 {
            sndcnt = sndcnt.max(1); // Linux tcp_cwnd_reduction: the fast retransmit goes out
        }
        s.cwnd = (pipe + sndcnt) as f64;
        for _ in 0..sndcnt {
            let Some(seg) = self.next_to_send(s) else {
                break;
            };
            Self::send(s, seg, now, out);
            self.head_sent(s, seg, now);
            self.prr.sent(1);
        }
    }

    /// RFC 8985 s. 7.4.2 (TLP_process_ack) without DSACK.
    fn tlp_process_ack(
        &mut self,
        s: &mut Sender,
        ack: &Packet,
        newly: u32,
        flight: u32,
        now: Time,
    ) {
        let Some(end) = self.tlp_end_seq else {
            return;
        };
        let a = s.snd_una;
        if a < end {
            return;
        }
        if !self.tlp_is_retrans {
            self.tlp_end_seq = None; // a probe of new data was delivered
        } else if a > end {
            // The probe repaired a loss: the congestion response of a fast recovery.
            self.tlp_end_seq = None;
            if !s.in_recovery {
                let ssthresh = s.cc.on_congestion(s.cwnd, flight, now);
                // Under a controller that sets cwnd itself the window stays its own (Linux's
                // tcp_end_cwnd_reduction returns early for `cong_control`).
                if !s.cc.controls_cwnd() {
                    s.ssthresh = ssthresh;
                    s.cwnd = s.ssthresh.max(1.0);
                }
                self.tlp_reductions += 1;
            }
        } else if newly == 0 && ack.sack.iter().all(|&(lo, hi)| lo >= hi) {
            self.tlp_end_seq = None; // a duplicate ACK without SACK blocks
        }
    }

    /// RFC 8985 s. 7.2 TLP_calc_PTO, before the cap by the RTO.
    pub fn pto(s: &Sender) -> Time {
        let srtt = s.srtt_ns();
        if srtt <= 0.0 {
            return PTO_NO_RTT_NS;
        }
        let mut pto = (2.0 * srtt).round() as Time;
        if s.flight() == 1 {
            pto += MAX_ACK_DELAY_NS;
        }
        pto
    }

    /// Whether a probe may be scheduled (s. 7.2): not in recovery or after a timeout, no probe
    /// outstanding, data in flight.
    fn may_probe(&self, s: &Sender) -> bool {
        !s.in_recovery
            && !self.after_timeout(s)
            && self.tlp_end_seq.is_none()
            && s.snd_max > s.snd_una
    }

    /// Linux's FLAG_SET_XMIT_TIMER on an ACK that does not advance snd_una
    /// (`tcp_clean_rtx_queue`, net/ipv4/tcp_input.c): it gave an RTT sample from a newly SACKed
    /// segment never retransmitted (the lowest: `first_sackt`, [`Rack::rtt_of_ack`]) that was
    /// sent before the head's last transmission; "otherwise the timeout may continue to extend
    /// in loss recovery". Called after `collect_delivered`, before the records advance.
    fn sacked_sent_before_head(&self, s: &Sender, a: u32) -> bool {
        let rec = Self::record(s);
        let head = rec.get(s.snd_una).xmit_ts;
        self.scratch
            .iter()
            .copied()
            .find(|&k| k >= a && rec.get(k).flags & EVER_RETRANS == 0)
            .is_some_and(|k| rec.get(k).xmit_ts < head)
    }

    /// Linux's `tcp_rearm_rto` (net/ipv4/tcp_input.c): the RTO from now, or, when the timer was
    /// pending as the reordering timer or the probe timer, from the head's last transmission
    /// (`tcp_rto_delta_us`; at least 1 ns ahead).
    fn rearm_rto(&mut self, s: &mut Sender, now: Time) {
        let at = if self.timer != TimerMode::Rto {
            (Self::record(s).get(s.snd_una).xmit_ts + s.rto).max(now + 1)
        } else {
            now + s.rto
        };
        s.rto_deadline = Some(at);
        self.timer = TimerMode::Rto;
    }

    /// The one timer after an ACK, after Linux's `tcp_ack`: the reordering timer when RACK waits
    /// (`tcp_rack_mark_lost` clears FLAG_SET_XMIT_TIMER), else a PTO after progress (any ACK or
    /// SACK of new data: wider than Linux, which arms one only under FLAG_SET_XMIT_TIMER in Open
    /// or CWR) when a probe is allowed, else, when the ACK advanced snd_una or SACKed data sent before the head's
    /// last transmission (`set_xmit`: FLAG_SET_XMIT_TIMER), the RTO re-armed
    /// ([`Rack::rearm_rto`]); else the pending timer is left as it is.
    fn arm(
        &mut self,
        s: &mut Sender,
        reo_timeout: Time,
        progress: bool,
        set_xmit: bool,
        now: Time,
    ) {
        if s.snd_una >= s.snd_max {
            s.rto_deadline = None;
            self.timer = TimerMode::Rto;
        } else if reo_timeout > 0 {
            s.rto_deadline = Some(now + reo_timeout);
            self.timer = TimerMode::Reorder;
        } else if progress && self.may_probe(s) {
            s.rto_deadline = Some(now + Self::pto(s).min(s.rto));
            self.timer = TimerMode::Probe;
        } else if set_xmit || s.rto_deadline.is_none() {
            self.rearm_rto(s, now);
        }
    }

    /// RFC 8985 s. 7.3 TLP_send_probe: one new segment if allowed, else the highest one sent
    /// again (unless SACKed: nothing to probe).
    fn send_probe(&mut self, s: &mut Sender, now: Time, out: &mut Vec<Packet>) {
        let new_ok = s.snd_nxt == s.snd_max
            && s.more_data(s.snd_max)
            && s.snd_max < s.snd_una + s.snd_wnd.max(1);
        let seg = if new_ok { s.snd_max } else { s.snd_max - 1 };
        if !new_ok && s.sb.as_ref().is_some_and(|b| b.is_sacked(seg)) {
            return;
        }
        let p = s.make_segment(seg, now);
        out.push(p);
        if new_ok {
            s.snd_max += 1;
            s.snd_nxt = s.snd_max;
        }
        self.tlp_is_retrans = !new_ok;
        self.tlp_end_seq = Some(s.snd_max);
        self.probes += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RecoveryKind, TcpVariant};
    use crate::packet::RETX;
    use crate::tcp::tests::{ack, cfg};

    const MS: Time = 1_000_000;

    /// A RACK sender (timestamps on) whose RTT estimator has one 100 ms sample (SRTT = min_RTT =
    /// 100 ms: reo_wnd = 25 ms), nothing sent yet, and a RACK driven by the test itself.
    fn rack_sender() -> (Sender, Rack) {
        let mut c = cfg(TcpVariant::Sack);
        c.recovery = Some(RecoveryKind::Rack);
        c.timestamps = true;
        let mut s = Sender::new(&c, None, None);
        assert_eq!(s.recovery_name(), "rack");
        s.rtt_sample((100 * MS) as f64);
        (s, Rack::default())
    }

    /// Sends `n` new segments at `t`.
    fn send_at(s: &mut Sender, t: Time, n: u32) {
        s.cwnd = (s.flight() + n) as f64;
        let mut out = Vec::new();
        s.send_allowed(t, &mut out);
        assert_eq!(out.len(), n as usize);
    }

    /// An ACK of `una` echoing `ts`, SACKing `blocks`.
    fn sack(una: u32, ts_ms: Time, blocks: &[(u32, u32)]) -> Packet {
        let mut a = ack(una, ts_ms * MS);
        for (i, &b) in blocks.iter().enumerate() {
            a.sack[i] = b;
        }
        a
    }

    fn seqs(out: &[Packet]) -> Vec<u32> {
        out.iter().map(|p| p.seq).collect()
    }

    /// BBR over RACK (a controller that sets cwnd itself, as Linux's `cong_control`): its window
    /// counts packets in flight, not the span from snd_una (Linux's `tcp_cwnd_test`). 10 sent at
    /// 0 ms (min RTT 100 ms); at 100 ms an ACK SACKs 1..3 (2 segments: fewer than DupThresh, so RACK waits
    /// reo_wnd = 25 ms before marking 0 lost; the sender is not in recovery). By hand: BBR in
    /// STARTUP adds the 2 delivered to cwnd 10 -> 12 (`bbr_set_cwnd`), in flight = 10 - 2 = 8:
    /// 4 new segments (10..14) may leave, where a span rule (snd_nxt < snd_una + cwnd = 12)
    /// would allow 2.
    /// A BBR sender over RACK (pacing on) and the segments it sends until `until`, the pacing
    /// clock included.
    fn bbr_rack_sender() -> (Sender, Rack) {
        let mut c = cfg(TcpVariant::Sack);
        c.recovery = Some(RecoveryKind::Rack);
        c.cc = Some("bbr".into());
        let mut s = Sender::new(&c, None, None);
        s.rtt_sample((100 * MS) as f64); // min_RTT 100 ms: reo_wnd 25 ms
        (s, Rack::default())
    }

    fn paced_until(s: &mut Sender, until: Time, out: &mut Vec<Packet>) {
        while let Some(d) = s.pacer.deadline.filter(|&d| d <= until) {
            s.pacer.deadline = None;
            s.send_paced(d, out);
        }
    }

    #[test]
    fn bbr_window_counts_packets_in_flight_not_the_span() {
        let (mut s, mut r) = bbr_rack_sender();
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        paced_until(&mut s, MS, &mut out);
        assert_eq!(out.len(), 10, "the initial window");
        out.clear();
        r.on_ack(&mut s, &sack(0, 0, &[(1, 3)]), 100 * MS, &mut out);
        paced_until(&mut s, 120 * MS, &mut out); // paced at 2.89 x 12 / 100 ms
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 12.0);
        assert_eq!(
            (s.rate.as_ref().unwrap().in_flight, seqs(&out)),
            (12, vec![10, 11, 12, 13])
        );
    }

    /// BBR over RACK in recovery: retransmitting the head restarts the RTO (Linux's
    /// `tcp_xmit_retransmit_queue`), so a head whose retransmission RACK finds lost again is not
    /// left to a timer started at the last advance of snd_una.
    #[test]
    fn bbr_head_retransmission_restarts_the_rto() {
        let (mut s, mut r) = bbr_rack_sender();
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        paced_until(&mut s, MS, &mut out);
        let first_deadline = s.rto_deadline.expect("armed by the first send");
        out.clear();
        // 0 lost: 1..5 SACKed at 100 ms (4 >= DupThresh: reo_wnd 0, 0 marked lost at once).
        r.on_ack(&mut s, &sack(0, 0, &[(1, 5)]), 100 * MS, &mut out);
        assert!(s.in_recovery);
        assert_eq!(
            out.first().map(|p| p.seq),
            Some(0),
            "the head retransmitted first"
        );
        assert_eq!(s.rto_deadline, Some(100 * MS + s.rto));
        assert!(s.rto_deadline.unwrap() > first_deadline);
    }

    /// P1, P2, P3 (segments 0, 1, 2) sent 30 ms apart (more than reo_wnd); P1 and P3 lost.
    fn three_spaced(s: &mut Sender) {
        for t in [100, 130, 160] {
            send_at(s, t * MS, 1);
        }
        s.stop_new_data();
    }

    /// RFC 8985 s. 3.4.1 (tail drop): the SACK of P2 marks P1 lost (sent 30 ms before P2, more
    /// than reo_wnd = 25 ms, and P2's RTT has passed), so it is retransmitted as R1; when R1 is
    /// acknowledged, P3 (sent before R1) is marked lost and retransmitted. DupThresh-based
    /// recovery (RFC 6675) detects neither.
    #[test]
    fn rfc8985_example_tail_drop() {
        let (mut s, mut r) = rack_sender();
        three_spaced(&mut s);
        let mut out = Vec::new();
        r.on_ack(&mut s, &sack(0, 130, &[(1, 2)]), 230 * MS, &mut out);
        assert_eq!(
            r.reo_wnd,
            25 * MS,
            "min_RTT / 4: one segment SACKed, no reordering"
        );
        assert!(s.in_recovery);
        assert_eq!(seqs(&out), vec![0], "R1");
        assert!(out[0].flags & RETX != 0);
        assert_eq!(s.stats.fast_retransmits, 1);
        // R1 (sent at 230 ms) cumulatively acknowledged at 330 ms: RACK.xmit_ts = 230 ms; P3
        // was sent at 160 ms: lost.
        out.clear();
        r.on_ack(&mut s, &sack(2, 230, &[]), 330 * MS, &mut out);
        assert_eq!(seqs(&out), vec![2], "R3");
        assert_eq!(s.stats.timeouts, 0);
        // The same losses under RFC 6675 (DupThresh 3): the SACK of P2 starts nothing.
        let mut c = cfg(TcpVariant::Sack);
        c.timestamps = true;
        let mut d = Sender::new(&c, None, None);
        three_spaced(&mut d);
        let mut none = Vec::new();
        d.on_ack(&sack(0, 130, &[(1, 2)]), 230 * MS, &mut none);
        assert!(none.is_empty() && !d.in_recovery);
    }

    /// RFC 8985 s. 3.4.2 (lost retransmission): P1 and P2 lost; the SACK of P3 marks both lost
    /// (R1 and R2 go out together at 260 ms). R1 is lost again and R2 SACKed: R2 was sent after
    /// R1 (same time, later: RACK_sent_after) and its RTT has passed since R1 went out, so R1 is
    /// marked lost and sent again.
    #[test]
    fn rfc8985_example_lost_retransmission() {
        let (mut s, mut r) = rack_sender();
        three_spaced(&mut s);
        let mut out = Vec::new();
        r.on_ack(&mut s, &sack(0, 160, &[(2, 3)]), 260 * MS, &mut out);
        assert_eq!(seqs(&out), vec![0, 1], "R1, R2");
        out.clear();
        r.on_ack(&mut s, &sack(0, 260, &[(1, 3)]), 360 * MS, &mut out);
        assert_eq!(seqs(&out), vec![0], "R1 again");
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.retransmits, 3);
    }

    /// RFC 8985 s. 3.4.3 (reordering): P1 and P2 sent 10 ms apart; P2's SACK arrives first.
    /// P1 is not yet lost (100 + 100 + 25 > 210 ms): the reordering timer is armed for the 15 ms
    /// left. If P1 arrives in time nothing is retransmitted and reordering is recorded; if not,
    /// the timer marks it lost and fast recovery starts (no RTO).
    #[test]
    fn rfc8985_example_reordering_window_and_timer() {
        for p1_arrives in [true, false] {
            let (mut s, mut r) = rack_sender();
            send_at(&mut s, 100 * MS, 1);
            send_at(&mut s, 110 * MS, 1);
            s.stop_new_data();
            let mut out = Vec::new();
            r.on_ack(&mut s, &sack(0, 110, &[(1, 2)]), 210 * MS, &mut out);
            assert!(out.is_empty() && !s.in_recovery);
            assert_eq!(
                (r.timer, s.rto_deadline),
                (TimerMode::Reorder, Some(225 * MS))
            );
            if p1_arrives {
                r.on_ack(&mut s, &sack(2, 100, &[]), 215 * MS, &mut out);
                assert!(out.is_empty() && r.reordering_seen);
                assert_eq!(s.rto_deadline, None, "all acknowledged");
            } else {
                assert!(r.on_timer(&mut s, 225 * MS, &mut out));
                assert_eq!(seqs(&out), vec![0]);
                assert!(s.in_recovery);
                assert_eq!(s.stats.timeouts, 0);
            }
        }
    }

    /// Once reordering has been seen, reo_wnd stays min_RTT / 4 even with DupThresh segments
    /// SACKed (without reordering it would be 0, RFC 8985 s. 6.2 step 4).
    #[test]
    fn reordering_seen_keeps_the_window_open() {
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 5);
        let mut out = Vec::new();
        r.on_ack(&mut s, &sack(0, 100, &[(1, 4)]), 200 * MS, &mut out);
        assert_eq!(r.reo_wnd, 0, "3 SACKed, no reordering");
        let (mut s, mut r) = rack_sender();
        r.reordering_seen = true;
        send_at(&mut s, 100 * MS, 5);
        r.on_ack(&mut s, &sack(0, 100, &[(1, 4)]), 200 * MS, &mut out);
        assert_eq!(r.reo_wnd, 25 * MS);
        // All five were sent at once: segment 0 waits for reo_wnd (timer), not lost at once.
        assert!(!s.in_recovery);
        assert_eq!(r.timer, TimerMode::Reorder);
    }

    /// RFC 8985 s. 7 (TLP): ten segments, the last four lost. After the ACKs of the first six
    /// the PTO (2 SRTT = 200 ms) replaces the RTO; it fires, the last segment is sent again as a
    /// probe, and its SACK lets RACK mark the three before it lost: fast recovery instead of an
    /// RTO.
    #[test]
    fn tail_loss_probe_turns_a_tail_drop_into_fast_recovery() {
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 10);
        s.stop_new_data();
        let mut out = Vec::new();
        for k in 1..=6 {
            r.on_ack(&mut s, &ack(k, 100 * MS), 200 * MS, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(r.timer, TimerMode::Probe);
        assert_eq!(s.srtt_ns(), (100 * MS) as f64);
        assert_eq!(s.rto_deadline, Some(400 * MS), "PTO = 2 x SRTT");
        assert!(r.on_timer(&mut s, 400 * MS, &mut out));
        assert_eq!(seqs(&out), vec![9], "the highest segment, again");
        assert_eq!((r.probes, r.tlp_end_seq), (1, Some(10)));
        assert_eq!(s.rto_deadline, Some(400 * MS + s.rto), "then the RTO");
        out.clear();
        r.on_ack(&mut s, &sack(6, 400, &[(9, 10)]), 500 * MS, &mut out);
        assert!(s.in_recovery);
        assert_eq!(seqs(&out), vec![6, 7], "PRR: ssthresh 2, pipe 0");
        assert_eq!((s.stats.timeouts, s.stats.fast_retransmits), (0, 1));
    }

    /// s. 7.2: one segment in flight adds TLP.max_ack_delay; no RTT sample: 1 s; capped by the
    /// RTO.
    #[test]
    fn pto_values() {
        let (mut s, _) = rack_sender();
        send_at(&mut s, 0, 1);
        assert_eq!(Rack::pto(&s), 200 * MS + MAX_ACK_DELAY_NS);
        send_at(&mut s, 0, 1);
        assert_eq!(Rack::pto(&s), 200 * MS);
        let c = {
            let mut c = cfg(TcpVariant::Sack);
            c.recovery = Some(RecoveryKind::Rack);
            c
        };
        assert_eq!(Rack::pto(&Sender::new(&c, None, None)), PTO_NO_RTT_NS);
        // A short RTO caps it: SRTT 100 ms, min RTO 10 ms -> RTO 100 + 4 x 50 = 300 ms < 400.
        let (mut s, mut r) = rack_sender();
        s.params.min_rto = 10 * MS;
        s.rtt_sample((100 * MS) as f64);
        send_at(&mut s, 0, 2);
        let mut out = Vec::new();
        s.stop_new_data();
        r.on_ack(&mut s, &ack(1, 0), 100 * MS, &mut out);
        assert!(s.rto < 2 * 100 * MS + MAX_ACK_DELAY_NS);
        assert_eq!(s.rto_deadline, Some(100 * MS + s.rto));
    }

    /// s. 7.4: a retransmitted probe acknowledged exactly (ACK = TLP.end_seq) leaves the episode
    /// open (without DSACK the sender cannot tell whether the original arrived); an ACK beyond
    /// it means the probe repaired a loss: ssthresh and cwnd fall as in a fast recovery. A probe
    /// of new data ends the episode without a reduction.
    #[test]
    fn tlp_episode_ends_with_a_reduction_when_the_probe_repaired_a_loss() {
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 5);
        let mut out = Vec::new();
        for k in 1..=4 {
            let mut a = ack(k, 100 * MS);
            a.rwnd = 5 - k; // no new data may be sent: the probe retransmits segment 4
            r.on_ack(&mut s, &a, 200 * MS, &mut out);
        }
        assert!(out.is_empty());
        assert!(r.on_timer(&mut s, 400 * MS, &mut out));
        assert_eq!(seqs(&out), vec![4]);
        out.clear();
        s.cwnd = 10.0;
        r.on_ack(&mut s, &ack(5, 400 * MS), 500 * MS, &mut out);
        assert_eq!(r.tlp_end_seq, Some(5), "ACK = TLP.end_seq: undecided");
        assert!(!out.is_empty(), "new data after the ACK");
        let flight = s.flight();
        r.on_ack(&mut s, &ack(6, 500 * MS), 600 * MS, &mut out);
        assert_eq!(r.tlp_end_seq, None);
        assert_eq!(r.tlp_reductions, 1);
        assert_eq!(s.ssthresh, (flight as f64 / 2.0).max(2.0), "RFC 5681 eq. 4");
        // A probe of new data: delivered, no reduction.
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 3);
        r.on_ack(&mut s, &ack(1, 100 * MS), 200 * MS, &mut out);
        out.clear();
        let t = s.rto_deadline.unwrap();
        assert!(r.on_timer(&mut s, t, &mut out));
        assert!(out.iter().all(|p| p.flags & RETX == 0), "new data");
        let end = r.tlp_end_seq.unwrap();
        r.on_ack(&mut s, &ack(end, 300 * MS), 400 * MS, &mut out);
        assert_eq!((r.tlp_end_seq, r.tlp_reductions), (None, 0));
    }

    /// Linux's tcp_fastretrans_alert ends an episode when snd_una reaches high_seq and, on the
    /// same ACK, starts the next one if `lost_out` > 0 (`tcp_time_to_recover`): a lost segment
    /// counts until it is ACKed or SACKed, retransmitted or not. By hand (SRTT = min_RTT =
    /// 100 ms, PRR, RFC 5681 ssthresh = FlightSize / 2):
    /// - 100 ms: 0..9 sent.
    /// - 200 ms: 1..3 SACKed (3: reo_wnd 0): 0 lost; recovery, RecoveryPoint 10, ssthresh 5;
    ///   pipe 6 > 5: sndcnt = ceil(3 x 5 / 10) = 2: R0, 10.
    /// - 205 ms: 4..9 SACKed: pipe 2 (R0, 10) < 5: sndcnt = min(5 - 2, max(9 - 2, 6) + 1) = 3:
    ///   11, 12, 13.
    /// - 305 ms: 11..13 SACKed (sent at 205 ms): R0 and 10 (sent at 200 ms) are lost; pipe 0,
    ///   sndcnt = min(5, max(12 - 5, 3) + 1) = 5: R0', R10, 14, 15, 16.
    /// - 405 ms: R0' arrives (ACK 10, 11..13 SACKed): RecoveryPoint reached, but 10 (marked lost,
    ///   R10 in flight) is outstanding: a second episode starts on this ACK (RecoveryPoint 17),
    ///   and R10 is not sent again.
    #[test]
    fn recovery_restarts_at_recovery_point_while_a_lost_segment_is_outstanding() {
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 10);
        let mut out = Vec::new();
        r.on_ack(&mut s, &sack(0, 100, &[(1, 4)]), 200 * MS, &mut out);
        assert!(s.in_recovery);
        assert_eq!((seqs(&out), s.ssthresh), (vec![0, 10], 5.0));
        out.clear();
        r.on_ack(&mut s, &sack(0, 100, &[(1, 10)]), 205 * MS, &mut out);
        assert_eq!(seqs(&out), vec![11, 12, 13]);
        out.clear();
        r.on_ack(
            &mut s,
            &sack(0, 205, &[(1, 10), (11, 14)]),
            305 * MS,
            &mut out,
        );
        assert_eq!(seqs(&out), vec![0, 10, 14, 15, 16]);
        assert_eq!(s.stats.fast_retransmits, 1);
        out.clear();
        r.on_ack(&mut s, &sack(10, 305, &[(11, 14)]), 405 * MS, &mut out);
        assert_eq!(s.snd_una, 10);
        assert!(s.in_recovery, "a new episode on the exit ACK");
        assert_eq!((s.stats.fast_retransmits, r.recover), (2, 17));
        assert!(out.iter().all(|p| p.seq != 10), "R10 is in flight");
    }

    /// After an RTO every unSACKed segment sent RACK.rtt or more ago is lost and counted out of
    /// the pipe until resent.
    #[test]
    fn a_timeout_marks_everything_unsacked_lost() {
        let (mut s, mut r) = rack_sender();
        send_at(&mut s, 100 * MS, 6);
        let mut out = Vec::new();
        r.on_ack(&mut s, &sack(0, 100, &[(2, 3)]), 150 * MS, &mut out);
        assert_eq!(r.pipe(&s), 5);
        r.on_timeout(&mut s, 400 * MS);
        assert_eq!(r.pipe(&s), 0);
        assert_eq!(r.next_lost(&s), Some(0));
        s.rack_sent.as_mut().unwrap().sent(0, 300 * MS, true);
        assert_eq!(r.pipe(&s), 1, "lost and retransmitted: one in flight");
    }

    /// RTT samples as Linux takes them (`tcp_clean_rtx_queue`, `tcp_sacktag_one`,
    /// `tcp_ack_update_rtt`), without timestamps: the first segment of a window is lost and no
    /// ACK advances snd_una, yet the SACKs time the segments they cover. 10 sent at 0, no RTT
    /// sample yet (RTO 1 s). By hand: at 50 ms SACK 1..4, sample from segment 1 (sent at 0):
    /// SRTT 50, RTTVAR 25 ms (RFC 6298 s. 2.2), RTO = SRTT + max(4 RTTVAR, rto_min 200) =
    /// 250 ms (Linux's `rttvar_us` >= `tcp_rto_min_us`); at 60 ms SACK 1..6, sample 60 ms from
    /// segment 4: RTTVAR = 0.75 x 25 + 0.25 x |50 - 60| = 21.25, SRTT = 0.875 x 50 + 0.125 x 60
    /// = 51.25, RTO 251.25 ms. At 160 ms the cumulative ACK of 6 covers the retransmitted
    /// segment 0 and nothing is newly SACKed: no sample (Karn), SRTT stays.
    #[test]
    fn rtt_is_sampled_from_sacked_segments_as_linux() {
        let mut c = cfg(TcpVariant::Sack);
        c.recovery = Some(RecoveryKind::Rack);
        let mut s = Sender::new(&c, None, None);
        assert_eq!(s.rto, 1_000 * MS, "no sample yet");
        send_at(&mut s, 0, 10);
        let mut out = Vec::new();
        s.on_ack(&sack(0, 0, &[(1, 4)]), 50 * MS, &mut out);
        assert_eq!(s.srtt_ns(), (50 * MS) as f64);
        assert_eq!(s.rto, 250 * MS);
        assert!(s.in_recovery, "0 marked lost (3 SACKed: reo_wnd 0)");
        assert_eq!(out.first().map(|p| p.seq), Some(0), "retransmitted first");
        s.on_ack(&sack(0, 0, &[(1, 6)]), 60 * MS, &mut out);
        assert_eq!(s.srtt_ns(), 51.25 * MS as f64);
        assert_eq!(s.rto, 251_250_000);
        s.on_ack(&sack(6, 50, &[]), 160 * MS, &mut out);
        assert_eq!(s.snd_una, 6);
        assert_eq!(
            s.srtt_ns(),
            51.25 * MS as f64,
            "Karn: the ACK covers a retransmission"
        );
        assert_eq!(s.stats.rtt_n, 2, "two samples, both from SACKs");
    }

    /// The same with timestamps: the cumulative ACK of 6 at 160.7 ms delivers only the
    /// retransmission of 0 (sent at 50 ms) and nothing newly SACKed, so Linux times it through
    /// the echo (`tcp_ack_update_rtt`), on the millisecond TS clock (`tcp_rtt_tsopt_us`):
    /// 160 - 50 = 110 ms, not the 110.7 ms that passed. SRTT = 0.875 x 51.25 + 0.125 x 110 =
    /// 58.59375 ms; the third sample.
    #[test]
    fn with_timestamps_a_retransmissions_ack_is_timed_by_the_echo_in_whole_ms() {
        let mut c = cfg(TcpVariant::Sack);
        c.recovery = Some(RecoveryKind::Rack);
        c.timestamps = true;
        let mut s = Sender::new(&c, None, None);
        send_at(&mut s, 0, 10);
        let mut out = Vec::new();
        s.on_ack(&sack(0, 0, &[(1, 4)]), 50 * MS, &mut out);
        assert_eq!(out.first().map(|p| (p.seq, p.ts)), Some((0, 50 * MS)));
        s.on_ack(&sack(0, 0, &[(1, 6)]), 60 * MS, &mut out);
        assert_eq!(s.srtt_ns(), 51.25 * MS as f64);
        s.on_ack(&sack(6, 50, &[]), 160 * MS + 700_000, &mut out);
        assert_eq!(s.snd_una, 6);
        assert_eq!(s.srtt_ns(), 58.59375 * MS as f64);
        assert_eq!(s.stats.rtt_n, 3);
    }

    /// After a timeout (Linux's CA_Loss) a retransmission RACK finds lost starts a fast recovery
    /// that resends it (`tcp_rack_reo_timeout`: a newly lost segment starts recovery in any
    /// state but Recovery; on an ACK, tcp_fastretrans_alert's Loss case on FLAG_LOST_RETRANS),
    /// where the go-back-N, which has passed it, would leave it to the next timeout. By hand
    /// (timestamps, SRTT = min_RTT = 100 ms, RTO 300 ms, Reno): 8 sent at 0, all lost; the RTO
    /// at 300 ms resends 0 (cwnd 1); its ACK at 400 ms (cwnd 2) lets 1 and 2 go; 1 is lost
    /// again, the SACK of 2 at 500 ms gives RACK.rtt 100 ms and reo_wnd = min_RTT / 4 = 25 ms
    /// (one segment SACKed), so 1 is due at 400 + 100 + 25 = 525 ms: the reordering timer. At
    /// 525 ms 1 is marked lost, recovery starts and 1 is the first segment sent.
    #[test]
    fn a_retransmission_lost_after_a_timeout_starts_recovery() {
        let (mut s, _) = rack_sender();
        assert_eq!(s.rto, 300 * MS);
        send_at(&mut s, 0, 8);
        s.stop_new_data();
        let mut out = Vec::new();
        s.on_timeout(300 * MS, &mut out);
        assert_eq!((s.stats.timeouts, seqs(&out)), (1, vec![0]));
        out.clear();
        s.on_ack(&sack(1, 300, &[]), 400 * MS, &mut out);
        assert_eq!(seqs(&out), vec![1, 2]);
        out.clear();
        s.on_ack(&sack(1, 400, &[(2, 3)]), 500 * MS, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.rto_deadline, Some(525 * MS), "the reordering timer");
        out.clear();
        s.on_timeout(525 * MS, &mut out);
        assert_eq!(s.stats.timeouts, 1, "RACK's timer, not an RTO");
        assert!(s.in_recovery);
        assert_eq!(
            out.first().map(|p| p.seq),
            Some(1),
            "the lost retransmission resent"
        );
        assert_eq!(s.stats.fast_retransmits, 1);
    }

    /// Linux re-arms the RTO on an ACK that only SACKs when the SACKed data was sent before the
    /// head's last transmission (`tcp_clean_rtx_queue`: FLAG_SET_XMIT_TIMER, then
    /// `tcp_set_xmit_timer` -> `tcp_rearm_rto`), and retransmitting the head restarts it
    /// (`tcp_xmit_retransmit_queue`, the PRR path too). By hand (timestamps, SRTT = 100 ms,
    /// RTTVAR = 50 ms, RTO = SRTT + max(4 RTTVAR, 200 ms) = 300 ms, Reno): 10 sent at 0 (RTO due
    /// at 300 ms). At 100 ms SACK 1..4 (3 segments: reo_wnd 0): 0 is lost, recovery starts and
    /// PRR resends 0 at 100 ms: RTO due at 100 + 300 = 400 ms (the sample of 100 ms leaves SRTT
    /// 100, RTTVAR 37.5: RTO 300). At 150 ms SACK 4..6, sent at 0, before the head's
    /// retransmission: sample 150 ms, SRTT = 0.875 x 100 + 0.125 x 150 = 106.25 ms, RTTVAR =
    /// 0.75 x 37.5 + 0.25 x 50 = 40.625 ms, RTO = 106.25 + 200 = 306.25 ms, due at 456.25 ms.
    /// The old rule left it at 300 ms throughout (RFC 6298's timer from the first send).
    #[test]
    fn rto_rearmed_by_sacks_of_data_sent_before_the_head_retransmission() {
        let (mut s, _) = rack_sender();
        assert_eq!(s.rto, 300 * MS);
        send_at(&mut s, 0, 10);
        s.stop_new_data();
        assert_eq!(s.rto_deadline, Some(300 * MS));
        let mut out = Vec::new();
        s.on_ack(&sack(0, 0, &[(1, 4)]), 100 * MS, &mut out);
        assert!(s.in_recovery);
        assert_eq!(seqs(&out), vec![0], "the fast retransmit");
        assert_eq!(s.rto_deadline, Some(400 * MS), "the head's retransmission");
        out.clear();
        s.on_ack(&sack(0, 0, &[(1, 6)]), 150 * MS, &mut out);
        assert_eq!(s.rto, 306_250_000);
        assert_eq!(
            s.rto_deadline,
            Some(456_250_000),
            "a SACK of data sent before it"
        );
    }

    /// Linux's `tcp_timeout_mark_lost` with RACK: a timeout marks lost the head and the
    /// unSACKed segments sent at least RACK.rtt ago; one sent more recently stays in flight, and
    /// is not resent by the go-back-N (`tcp_xmit_retransmit_queue` resends lost segments only).
    /// By hand (timestamps, RTO 300 ms, Reno, 8 sent at 0, no more data): the RTO at 300 ms
    /// marks all 8 (RACK.rtt is still 0) and resends 0 (cwnd 1). Its ACK at 400 ms: RACK.rtt =
    /// 100 ms, cwnd 2, the go-back-N resends 1 and 2 at 400 ms. A timeout at 450 ms: 1 is the
    /// head (lost), 2 was sent 50 ms ago (< RACK.rtt: in flight), 3..7 were sent at 0 (lost);
    /// the go-back-N resends 1: in flight 2 (the old rule: 2 lost too, in flight 1).
    #[test]
    fn a_timeout_leaves_segments_sent_within_rack_rtt_in_flight() {
        let (mut s, r) = rack_sender();
        send_at(&mut s, 0, 8);
        s.stop_new_data();
        let mut out = Vec::new();
        s.on_timeout(300 * MS, &mut out);
        assert_eq!(seqs(&out), vec![0]);
        out.clear();
        s.on_ack(&sack(1, 300, &[]), 400 * MS, &mut out);
        assert_eq!(seqs(&out), vec![1, 2]);
        out.clear();
        s.on_timeout(450 * MS, &mut out);
        assert_eq!(seqs(&out), vec![1]);
        let rec = s.rack_sent.as_ref().unwrap();
        assert!(!rec.resend_due(2), "sent 50 ms ago: not marked lost");
        assert!((3..8).all(|k| rec.resend_due(k)));
        assert_eq!(r.pipe(&s), 2, "2 and the head's retransmission");
    }

    /// Linux's `tcp_enter_loss`: after the timeout's marks, cwnd = in flight + 1 (BBR, whose
    /// window counts the packets in flight, then starts from it: `bbr_set_cwnd`). BBR over RACK
    /// (SRTT 100 ms, RTO 300 ms), 10 sent at 0 (paced within 1 ms), no more data: the RTO at
    /// 300 ms marks all 10 (RACK.rtt is still 0: cwnd 0 + 1 = 1) and resends 0; its ACK at
    /// 400 ms (RACK.rtt 100 ms) lets BBR's window grow to its minimum of 4, and the go-back-N
    /// resends k segments 1..k, paced, by 450 ms. A timeout at 450 ms marks the head 1 and the
    /// segments sent at 0; 2..k, sent less than RACK.rtt ago, stay in flight: cwnd = (k - 1) + 1
    /// (the old rule: 1, nothing in flight), and the head goes out again (paced).
    #[test]
    fn bbr_window_after_a_timeout_is_in_flight_plus_one() {
        let (mut s, _) = bbr_rack_sender();
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        paced_until(&mut s, MS, &mut out);
        assert_eq!(out.len(), 10);
        s.stop_new_data();
        out.clear();
        s.on_timeout(300 * MS, &mut out);
        assert_eq!((s.cwnd, seqs(&out)), (1.0, vec![0]));
        out.clear();
        s.on_ack(&sack(1, 0, &[]), 400 * MS, &mut out);
        paced_until(&mut s, 449 * MS, &mut out);
        let k = out.len() as u32;
        assert!(k >= 2, "at least two resent: {:?}", seqs(&out));
        assert_eq!(seqs(&out), (1..=k).collect::<Vec<_>>());
        out.clear();
        s.on_timeout(450 * MS, &mut out);
        assert_eq!(s.cwnd, f64::from(k), "in flight (2..k) + 1");
        paced_until(&mut s, 500 * MS, &mut out);
        assert_eq!(seqs(&out), vec![1], "the head, paced");
        assert_eq!(s.rate.as_ref().unwrap().in_flight, k);
    }

    /// Linux's `tcp_xmit_retransmit_queue` restarts the RTO when it retransmits the head, on
    /// the go-back-N after a timeout too (CA_Loss), whoever calls it: here the pacing clock.
    /// BBR over RACK, as above, the timeout spurious (ACKs delayed): the RTO at 300 ms marks all
    /// 10 lost and resends 0. An ACK at 400 ms covers 0..5 (the originals arrived): 5, the new
    /// head, goes at once (the pacer idle since 300 ms). An ACK at 401 ms covers 5's original:
    /// 6 is the head, marked lost by the timeout; the ACK re-arms the RTO (401 ms + RTO), and
    /// the pacer, which holds the go-back-N until its next slot t1 > 401 ms, resends 6 there:
    /// the RTO restarts at t1 + RTO (before 2026-11-29 it stayed at 401 ms + RTO).
    #[test]
    fn a_paced_head_retransmission_after_a_timeout_restarts_the_rto() {
        let (mut s, _) = bbr_rack_sender();
        let mut out = Vec::new();
        s.send_allowed(0, &mut out);
        paced_until(&mut s, MS, &mut out);
        s.stop_new_data();
        out.clear();
        s.on_timeout(300 * MS, &mut out);
        assert_eq!(seqs(&out), vec![0]);
        out.clear();
        s.on_ack(&sack(5, 0, &[]), 400 * MS, &mut out);
        assert_eq!(seqs(&out), vec![5]);
        out.clear();
        s.on_ack(&sack(6, 0, &[]), 401 * MS, &mut out);
        assert!(
            out.is_empty(),
            "the pacer holds the go-back-N: {:?}",
            seqs(&out)
        );
        assert_eq!(
            s.rto_deadline,
            Some(401 * MS + s.rto),
            "re-armed by the ACK"
        );
        let t1 = s.pacer.deadline.expect("a pacing slot");
        assert!(t1 > 401 * MS);
        paced_until(&mut s, t1, &mut out);
        assert_eq!(out.first().map(|p| p.seq), Some(6), "the head, at its slot");
        assert_eq!(
            s.rto_deadline,
            Some(t1 + s.rto),
            "restarted by the head's retransmission"
        );
    }
}
