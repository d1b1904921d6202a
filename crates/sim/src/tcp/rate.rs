//! The delivery-rate sample, as Linux's `net/ipv4/tcp_rate.c` (and
//! draft-cheng-iccrg-delivery-rate-estimation): each transmission records the connection's
//! delivery state at that moment ([`TxRecord`]); an ACK that delivers segments yields a
//! [`RateSample`] from the record of the most recently sent of them:
//!
//! - `delivered` = connection's delivered now - the record's `delivered`;
//! - `interval` = max(send_elapsed, ack_elapsed), send_elapsed = that segment's send time -
//!   the record's `first_tx` (the send time of the first segment of its flight), ack_elapsed =
//!   now - the record's `delivered_time` (`tcp_rate_gen`: the larger of the two, so ACK
//!   compression cannot inflate the rate);
//! - a sample whose interval is shorter than the min RTT gives no rate (interval -1, `delivered`
//!   kept), as Linux;
//! - `is_app_limited`: the record was sent while the connection was application-limited
//!   (`tcp_rate_check_app_limited`: no more data to send and fewer than cwnd in flight; cleared
//!   once `delivered` passes the mark). A connection starts with the mark set (Linux's
//!   `tp->app_limited = ~0U` in `tcp_init_sock`): the first flight's samples are app-limited.
//!
//! Units: segments and ns. The sender keeps one record per segment from `snd_una` to `snd_max`
//! (this file owns it; another recovery, RACK, may read the send times). The record is kept only
//! when the congestion controller asks for rate samples
//! ([`super::cc::CongestionControl::wants_rate_sample`]), so other controllers pay nothing.
//!
//! Loss marking: a segment counts as lost (`tp->lost`, `rs->losses` of the ACK that marked it)
//! when DupThresh segments above it are SACKed (RFC 6675 IsLost, as the SACK recovery decides)
//! or on a retransmission timeout (all outstanding, as `tcp_enter_loss`; under RACK all but the
//! segments sent less than RACK.rtt ago, [`RateState::on_timeout_except`], as
//! `tcp_timeout_mark_lost`). A retransmission that is lost again is not detected until a timeout,
//! which marks it lost again and counts it in `lost` again (`tcp_mark_skb_lost`: a segment LOST
//! and SACKED_RETRANS is "lost again", `tcp_notify_skb_loss_event` adds it to `tp->lost`; before
//! 2026-11-29 it was counted once). Under RACK (`[tcp] recovery = "rack"`) the recovery marks the
//! losses instead ([`RateState::external_losses`], [`RateState::mark_seg_lost`]): RACK's time-based
//! marks, lost retransmissions included, as Linux's `tp->lost` counts them.
//!
//! ns-3.44's variant (`cc = "bbr-ns3:ratestart"`, [`RateState::ns3_keep_start`], a cross-check
//! model; line numbers of ns-3.44, commit 43dce67): `TcpRateLinux` keeps its rate sample from
//! ACK to ACK (`m_rateSample`, tcp-rate-ops.h l. 237) and a delivered segment becomes the
//! sample's start only if the connection's delivered count when it was sent is above the kept
//! start's
//! (`SkbDelivered`, tcp-rate-ops.cc l. 173: `m_priorDelivered == 0 || m_delivered >
//! m_priorDelivered`; SACKed segments first, `ReadOptions` before `DiscardUpTo`,
//! tcp-socket-base.cc l. 1861, 1890). An ACK that delivers only segments sent under the kept
//! start's count keeps its send-elapsed and ack-elapsed (taken on the ACK that chose it) while
//! `GenerateSample` counts every segment delivered since (l. 91-92): the interval lags and the
//! rate is high. An interval below the min RTT zeroes the kept prior time (l. 107), so later
//! ACKs give no sample until a new start is chosen (l. 72). Linux starts each ACK's sample
//! afresh (`struct rate_sample rs = { .prior_delivered = 0 }` in `tcp_ack`).

use aqm::Time;
use std::collections::VecDeque;

/// RFC 6675's DupThresh (segments SACKed above a hole that mark it lost).
const DUP_THRESH: u32 = super::recovery::DUP_THRESH;

/// What one transmission of a segment recorded (Linux's `tcp_skb_cb.tx` with the skb's send time).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TxRecord {
    /// Time of this (re)transmission (`skb->skb_mstamp_ns`).
    pub sent: Time,
    /// Connection's `delivered` when it was sent.
    pub delivered: u64,
    /// Connection's `delivered_time` when it was sent (`tx.delivered_mstamp`).
    pub delivered_time: Time,
    /// Send time of the first segment of the flight it belongs to (`tx.first_tx_mstamp`).
    pub first_tx: Time,
    /// Sent while application-limited (`tx.is_app_limited`).
    pub app_limited: bool,
    /// It is a retransmission (`TCPCB_RETRANS`).
    pub retrans: bool,
    /// Delivered (cumulatively acknowledged or SACKed).
    pub acked: bool,
    /// Marked lost (counted once in the connection's `lost`).
    pub lost: bool,
    /// Packets in flight just after this transmission, itself included (`tx.in_flight`, added
    /// to Linux by the BBRv3 patches).
    pub in_flight: u32,
    /// Connection's `lost` when it was sent (`tx.lost`, BBRv3 patches).
    pub lost_at_send: u64,
}

/// One ACK's rate sample (Linux's `struct rate_sample`), with the connection's totals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Connection's delivered count when the sample's segment was sent (`prior_delivered`).
    pub prior_delivered: u64,
    /// Segments delivered over the interval; -1: no sample segment on this ACK (none delivered,
    /// or ns-3's zeroed start). Set, as Linux's, when the interval is below the min RTT.
    pub delivered: i64,
    /// Length of the interval, ns; -1: no valid sample.
    pub interval_ns: i64,
    /// The sample's segment was sent while application-limited.
    pub is_app_limited: bool,
    /// The sample's segment was a retransmission.
    pub is_retrans: bool,
    /// Segments newly delivered by this ACK (cumulative + SACKed, `acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost by this ACK (`losses`).
    pub losses: u32,
    /// Segments marked lost (retransmitted or not) that this ACK delivered: by how much ns-3's
    /// count of segments marked lost (`TcpTxBuffer::m_lostOut`) falls on this ACK.
    pub repaired: u32,
    /// RTT of the most recently sent segment this ACK delivered that was not retransmitted, ns;
    /// -1: none (`rtt_us`).
    pub rtt_ns: i64,
    /// Packets in flight before the ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// Packets in flight after the ACK (`tcp_packets_in_flight`): sent, not delivered, not
    /// marked lost unless retransmitted since.
    pub in_flight: u32,
    /// Connection's total delivered after the ACK (`tp->delivered`).
    pub total_delivered: u64,
    /// Connection's total marked lost (`tp->lost`).
    pub total_lost: u64,
    /// Time of the latest delivery (`tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// The sender is in loss recovery after this ACK (set by the sender before
    /// [`super::cc::CongestionControl::cong_control`]).
    pub in_recovery: bool,
    /// One past the highest segment sent (`snd_max`, set as `in_recovery`).
    pub high_data: u32,
    /// Earliest departure of the next paced segment (the pacer's clock, Linux's
    /// `tcp_wstamp_ns`; set as `in_recovery`).
    pub edt: Time,
    /// Packets in flight when the sample's segment was sent, itself included
    /// (`rs->tx_in_flight`, BBRv3 patches); 0 without a sample segment.
    pub tx_in_flight: u32,
    /// Segments marked lost since the sample's segment was sent (`rs->lost` = `tp->lost` -
    /// `tx.lost`, BBRv3 patches); 0 without a sample segment.
    pub lost: u64,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_delivered: 0,
            delivered: -1,
            interval_ns: -1,
            is_app_limited: false,
            is_retrans: false,
            acked_sacked: 0,
            losses: 0,
            repaired: 0,
            rtt_ns: -1,
            prior_in_flight: 0,
            in_flight: 0,
            total_delivered: 0,
            total_lost: 0,
            delivered_time: 0,
            in_recovery: false,
            high_data: 0,
            edt: 0,
            tx_in_flight: 0,
            lost: 0,
        }
    }
}

impl RateSample {
    /// The delivery rate, segments per ns (`None` when the sample is invalid).
    pub fn rate(&self) -> Option<f64> {
        (self.delivered >= 0 && self.interval_ns > 0)
            .then(|| self.delivered as f64 / self.interval_ns as f64)
    }
}

/// The per-ACK choice of the sample's segment (the most recently sent one delivered).
#[derive(Clone, Copy, Debug, Default)]
struct Pick {
    have: bool,
    sent: Time,
    seq: u32,
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Time,
    app_limited: bool,
    retrans: bool,
    tx_in_flight: u32,
    lost_at_send: u64,
    /// Send time of the newest never-retransmitted segment the cumulative ACK delivered
    /// (`last_ackt` in `tcp_clean_rtx_queue`).
    rtt_sent: Option<Time>,
    /// Send time of the newest never-retransmitted segment a SACK block delivered
    /// (`last_sackt` in `tcp_sacktag_one`).
    sack_rtt_sent: Option<Time>,
    /// The cumulative ACK delivered a segment that was retransmitted (`FLAG_RETRANS_DATA_ACKED`):
    /// Linux then takes no timing from the cumulative ACK (Karn).
    cum_retrans: bool,
    /// ns-3's kept start only: now - the start's `delivered_time`, taken on the ACK that chose
    /// it (`m_ackElapsed`).
    ack_elapsed: Time,
    /// ns-3's kept start only: its prior time is not zeroed (`!m_priorTime.IsZero()`).
    valid: bool,
}

/// The sender's per-segment send records and the connection's delivery state.
#[derive(Clone, Debug)]
pub struct RateState {
    /// Sequence number of `recs[0]` (`snd_una` after the last ACK).
    base: u32,
    recs: VecDeque<TxRecord>,
    /// Segments delivered since the start (`tp->delivered`).
    pub delivered: u64,
    /// Time of the latest delivery (`tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// Send time of the first segment of the current flight (`tp->first_tx_mstamp`).
    pub first_tx: Time,
    /// Application-limited mark: `Some(d)`: limited until `delivered` exceeds `d`
    /// (`tp->app_limited`, 0 meaning none).
    pub app_limited: Option<u64>,
    /// Segments marked lost since the start (`tp->lost`).
    pub lost: u64,
    /// Packets in flight (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Lowest segment not yet examined for loss marking.
    lost_scan: u32,
    pick: Pick,
    /// Segments delivered by the ACK being processed.
    acked_now: u32,
    /// Segments marked lost by the ACK being processed.
    lost_now: u32,
    /// Segments marked lost that the ACK being processed delivered.
    repaired_now: u32,
    /// In flight before the ACK being processed.
    prior_in_flight: Option<u32>,
    /// The recovery marks losses itself ([`RateState::mark_seg_lost`], RACK): no RFC 6675 IsLost
    /// marking from SACK blocks.
    pub external_losses: bool,
    /// ns-3.44's `TcpRateLinux` rule (module doc): the sample's start is kept across ACKs and
    /// replaced only by a segment sent under a higher delivered count (`bbr-ns3:ratestart`).
    pub ns3_keep_start: bool,
    /// The ACK's deliveries under [`RateState::ns3_keep_start`]: (segment, its record, SACKed
    /// rather than cumulatively ACKed), chosen from in ns-3's order when the sample is taken.
    ns3_batch: Vec<(u32, TxRecord, bool)>,
}

impl Default for RateState {
    fn default() -> Self {
        RateState {
            base: 0,
            recs: VecDeque::new(),
            delivered: 0,
            delivered_time: 0,
            first_tx: 0,
            // tcp_init_sock: tp->app_limited = ~0U: the first flight is app-limited.
            app_limited: Some(0),
            lost: 0,
            in_flight: 0,
            lost_scan: 0,
            pick: Pick::default(),
            acked_now: 0,
            lost_now: 0,
            repaired_now: 0,
            prior_in_flight: None,
            external_losses: false,
            ns3_keep_start: false,
            ns3_batch: Vec::new(),
        }
    }
}

impl Pick {
    /// Segment `seq`, whose record is `r`, becomes the sample's start.
    fn take(&mut self, seq: u32, r: &TxRecord) {
        self.have = true;
        self.sent = r.sent;
        self.seq = seq;
        self.prior_delivered = r.delivered;
        self.prior_time = r.delivered_time;
        self.send_elapsed = r.sent.saturating_sub(r.first_tx);
        self.app_limited = r.app_limited;
        self.retrans = r.retrans;
        self.tx_in_flight = r.in_flight;
        self.lost_at_send = r.lost_at_send;
    }
}

impl RateState {
    /// The record of segment `seq`, if it is still held.
    pub fn record(&self, seq: u32) -> Option<&TxRecord> {
        seq.checked_sub(self.base)
            .and_then(|i| self.recs.get(i as usize))
    }

    /// Segment `seq` leaves at `now`; `packets_out` segments were sent and not cumulatively
    /// acknowledged before it (`tcp_rate_skb_sent`).
    pub fn on_send(&mut self, seq: u32, now: Time, packets_out: u32) {
        if packets_out == 0 {
            // The flight starts now: the interval begins with this send.
            self.first_tx = now;
            self.delivered_time = now;
        }
        if self.recs.is_empty() {
            self.base = seq;
        }
        let Some(i) = seq.checked_sub(self.base).map(|i| i as usize) else {
            return;
        };
        let rec = TxRecord {
            sent: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_tx: self.first_tx,
            app_limited: self.app_limited.is_some(),
            retrans: false,
            acked: false,
            lost: false,
            in_flight: 0,
            lost_at_send: self.lost,
        };
        if i < self.recs.len() {
            let old = self.recs[i];
            // A retransmission: back in flight unless it still was (an RTO resends what was
            // in flight, marked lost just before).
            if old.acked {
                return;
            }
            if old.lost && !old.retrans {
                self.in_flight += 1;
            }
            self.recs[i] = TxRecord {
                retrans: true,
                lost: old.lost,
                in_flight: self.in_flight,
                ..rec
            };
        } else {
            while self.recs.len() < i {
                // Never happens with a contiguous sender; keep indexing right if it does.
                self.recs.push_back(TxRecord {
                    acked: true,
                    ..TxRecord::default()
                });
            }
            self.in_flight += 1;
            self.recs.push_back(TxRecord {
                in_flight: self.in_flight,
                ..rec
            });
        }
    }

    /// Starts an ACK's accounting (before any delivery); `in_flight` is the flight before it.
    fn begin(&mut self) {
        if self.prior_in_flight.is_none() {
            self.prior_in_flight = Some(self.in_flight);
            if self.ns3_keep_start {
                // ns-3's m_rateSample outlives the ACK; only the RTT sample is the ACK's own.
                self.pick.rtt_sent = None;
                self.pick.sack_rtt_sent = None;
                self.pick.cum_retrans = false;
                self.ns3_batch.clear();
            } else {
                self.pick = Pick::default();
            }
            self.acked_now = 0;
            self.lost_now = 0;
            self.repaired_now = 0;
        }
    }

    /// Segment `seq` is delivered (`tcp_rate_skb_delivered`); `sacked`: by a SACK block, not
    /// the cumulative ACK.
    fn deliver(&mut self, seq: u32, sacked: bool) {
        let Some(i) = seq.checked_sub(self.base).map(|i| i as usize) else {
            return;
        };
        let Some(r) = self.recs.get_mut(i) else {
            return;
        };
        if r.acked {
            return;
        }
        r.acked = true;
        if !r.lost || r.retrans {
            self.in_flight -= 1;
        }
        let r = *r;
        self.delivered += 1;
        self.acked_now += 1;
        self.repaired_now += u32::from(r.lost);
        if self.ns3_keep_start {
            self.ns3_batch.push((seq, r, sacked));
        }
        let p = &mut self.pick;
        // The most recently sent (later send time; same time: higher sequence), as
        // tcp_skb_sent_after.
        if self.ns3_keep_start {
            // Chosen in `gen`, in ns-3's order.
        } else if !p.have || r.sent > p.sent || (r.sent == p.sent && seq > p.seq) {
            p.take(seq, &r);
            // Later deliveries' intervals start at this segment's send (tp->first_tx_mstamp).
            self.first_tx = r.sent;
        }
        if r.retrans {
            p.cum_retrans |= !sacked;
        } else {
            let t = if sacked {
                &mut p.sack_rtt_sent
            } else {
                &mut p.rtt_sent
            };
            if t.is_none_or(|t| r.sent > t) {
                *t = Some(r.sent);
            }
        }
    }

    /// A cumulative ACK moves `snd_una` from `from` to `to`: those segments are delivered and
    /// their records dropped.
    pub fn on_cum_ack(&mut self, from: u32, to: u32) {
        self.begin();
        for s in from..to {
            self.deliver(s, false);
        }
        while self.base < to {
            if self.recs.pop_front().is_none() {
                self.base = to;
                break;
            }
            self.base += 1;
        }
    }

    /// The ACK's SACK blocks (segments in `[lo, hi)` only), each walked whole: the tests'
    /// reference for [`RateState::on_new_sacks`], which the sender uses (since 2026-11-28 the
    /// scoreboard says which segments an ACK newly SACKed).
    #[cfg(test)]
    pub fn on_sack(&mut self, blocks: &[(u32, u32)], lo: u32, hi: u32) {
        self.begin();
        let mut top = None;
        for &(a, b) in blocks {
            let (a, b) = (a.max(lo), b.min(hi));
            // Segments without a record (below `base`, beyond the last send) and segments
            // delivered before are what `deliver` leaves alone: they are skipped here without
            // its lookups, since a block is walked again on every ACK that carries it.
            let end = b.min(self.base.saturating_add(self.recs.len() as u32));
            let mut s = a.max(self.base);
            while s < end {
                // The next record not yet delivered, found by the deque's iterator rather than
                // by indexing each segment.
                let from = (s - self.base) as usize;
                let Some(k) = self
                    .recs
                    .range(from..(end - self.base) as usize)
                    .position(|r| !r.acked)
                else {
                    break;
                };
                s += k as u32;
                self.deliver(s, true);
                s += 1;
            }
            if a < b {
                top = top.max(Some(b));
            }
        }
        if let Some(top) = top.filter(|_| !self.external_losses) {
            self.mark_lost(top);
        }
    }

    /// The ACK's SACK information as the scoreboard found it ([`Scoreboard::last_sacks`]): the
    /// runs of newly SACKed segments are delivered, and IsLost marks below `top` (the highest
    /// end of the ACK's blocks). The same as walking the blocks whole (`on_sack`, kept as the
    /// tests' reference), since a segment the scoreboard had SACKed before was delivered here by
    /// the ACK that SACKed it, without walking every block again on every ACK that carries it.
    ///
    /// [`Scoreboard::last_sacks`]: crate::tcp::recovery::Scoreboard
    pub fn on_new_sacks(&mut self, runs: &[(u32, u32)], top: Option<u32>) {
        self.begin();
        for &(a, b) in runs {
            for seg in a..b {
                self.deliver(seg, true);
            }
        }
        if let Some(top) = top.filter(|_| !self.external_losses) {
            self.mark_lost(top);
        }
    }

    /// The recovery marked segment `seq` lost (RACK; `tcp_mark_skb_lost`): out of flight, counted
    /// in `lost`, a retransmission lost again included; delivered or already-marked segments
    /// are left alone.
    pub fn mark_seg_lost(&mut self, seq: u32) {
        self.begin();
        let Some(r) = seq
            .checked_sub(self.base)
            .and_then(|i| self.recs.get_mut(i as usize))
        else {
            return;
        };
        if r.acked || (r.lost && !r.retrans) {
            return;
        }
        r.lost = true;
        r.retrans = false;
        self.in_flight -= 1;
        self.lost += 1;
        self.lost_now += 1;
    }

    /// RFC 6675 IsLost below the highest SACKed segment `top` (exclusive): every undelivered
    /// segment with DupThresh SACKed segments above it is marked lost, once.
    fn mark_lost(&mut self, top: u32) {
        // The lost boundary: the DupThresh-th highest delivered segment.
        let mut above = 0;
        let mut bound = None;
        let mut s = top;
        while s > self.base && s > self.lost_scan {
            s -= 1;
            if self.record(s).is_some_and(|r| r.acked) {
                above += 1;
                if above == DUP_THRESH {
                    bound = Some(s);
                    break;
                }
            }
        }
        let Some(bound) = bound else {
            return;
        };
        for s in self.lost_scan.max(self.base)..bound {
            let i = (s - self.base) as usize;
            let r = &mut self.recs[i];
            if !r.acked && !r.lost {
                r.lost = true;
                if !r.retrans {
                    self.in_flight -= 1;
                }
                self.lost += 1;
                self.lost_now += 1;
            }
        }
        self.lost_scan = self.lost_scan.max(bound);
    }

    /// A retransmission timeout: every outstanding undelivered segment is marked lost
    /// (`tcp_enter_loss`); nothing is in flight.
    pub fn on_timeout(&mut self) {
        self.on_timeout_except(|_| false);
        self.in_flight = 0;
    }

    /// A retransmission timeout that leaves the segments `keep` names as they are (RACK's
    /// recently sent ones: Linux's `tcp_timeout_mark_lost`); every other outstanding undelivered
    /// segment is marked lost and out of flight, and counted in `lost`, a retransmission marked
    /// lost before included (Linux's `tcp_mark_skb_lost`: `tp->lost` grows for a segment not yet
    /// marked and for one LOST and SACKED_RETRANS, lost again). Not a rate sample's loss (the
    /// next ACK's `rs->losses` counts only that ACK's marks).
    pub fn on_timeout_except(&mut self, keep: impl Fn(u32) -> bool) {
        let base = self.base;
        for (i, r) in self.recs.iter_mut().enumerate() {
            if !r.acked && (!r.lost || r.retrans) && !keep(base + i as u32) {
                self.lost += 1;
                r.lost = true;
                r.retrans = false;
                self.in_flight = self.in_flight.saturating_sub(1);
            }
        }
        self.lost_scan = self.base + self.recs.len() as u32;
    }

    /// The send time the ACK's RTT sample is timed from (`ca_rtt_us` in
    /// `tcp_clean_rtx_queue`, net/ipv4/tcp_input.c): the newest never-retransmitted segment a
    /// SACK block delivered; else the newest the cumulative ACK delivered, unless the
    /// cumulative ACK also delivered a retransmitted segment (`FLAG_RETRANS_DATA_ACKED`: Linux
    /// then drops the cumulative ACK's timing; before 2026-11-30 it was kept here). With ns-3's
    /// kept sample start (`cc = "bbr-ns3:ratestart"`) the newest of either, as before: ns-3's rate sample has no RTT, and its
    /// BBR's min RTT comes from its own estimator (`bbr.rs`, `on_delay_sample`).
    fn rtt_sent(&self, p: &Pick) -> Option<Time> {
        if self.ns3_keep_start {
            return p.rtt_sent.max(p.sack_rtt_sent);
        }
        p.sack_rtt_sent.or(p.rtt_sent.filter(|_| !p.cum_retrans))
    }

    /// Ends an ACK's accounting at `now` with `min_rtt_ns` the sender's min RTT
    /// (`tcp_rate_gen`): the sample.
    pub fn gen(&mut self, now: Time, min_rtt_ns: f64) -> RateSample {
        self.begin();
        let prior_in_flight = self.prior_in_flight.take().unwrap_or(self.in_flight);
        if self.app_limited.is_some_and(|m| self.delivered > m) {
            self.app_limited = None;
        }
        if self.acked_now > 0 {
            self.delivered_time = now;
        }
        if self.ns3_keep_start {
            self.ns3_choose_start(now);
        }
        let p = self.pick;
        let mut rs = RateSample {
            acked_sacked: self.acked_now,
            losses: self.lost_now,
            repaired: self.repaired_now,
            rtt_ns: self
                .rtt_sent(&p)
                .map_or(-1, |t| now.saturating_sub(t) as i64),
            prior_in_flight,
            in_flight: self.in_flight,
            total_delivered: self.delivered,
            total_lost: self.lost,
            delivered_time: self.delivered_time,
            is_app_limited: p.app_limited,
            is_retrans: p.retrans,
            prior_delivered: p.prior_delivered,
            ..RateSample::default()
        };
        if !p.have {
            return rs;
        }
        rs.tx_in_flight = p.tx_in_flight;
        rs.lost = self.lost - p.lost_at_send;
        let send_elapsed = p.send_elapsed as i64;
        let ack_elapsed = if self.ns3_keep_start {
            // tcp-rate-ops.cc l. 72: a zeroed prior time gives no sample.
            if !p.valid {
                return rs;
            }
            p.ack_elapsed as i64
        } else {
            self.delivered_time.saturating_sub(p.prior_time) as i64
        };
        let interval = send_elapsed.max(ack_elapsed);
        // tcp_rate_gen sets `rs->delivered` before it looks at the interval (ns-3's
        // GenerateSample too, tcp-rate-ops.cc l. 92): a sample discarded below the min RTT
        // still carries its delivered count, which BBR v3's ECN test
        // (`bbr_is_inflight_too_high`: `rs->delivered > 0`) and ns-3's `UpdateAckAggregation`
        // (`m_delivered < 0` only) read. Before 2026-11-29 it was -1 here.
        rs.delivered = (self.delivered - p.prior_delivered) as i64;
        // Linux: an interval below min RTT means mis-timed delivery (e.g. ACK compression or
        // a retransmission's stale record): no rate (interval -1).
        if (interval as f64) < min_rtt_ns {
            // ns-3 (l. 107) also zeroes the kept prior time.
            self.pick.valid = false;
            return rs;
        }
        rs.interval_ns = interval;
        rs
    }

    /// ns-3.44's `SkbDelivered` (tcp-rate-ops.cc l. 159-192) over the ACK's deliveries in
    /// ns-3's order (SACKed segments first, then the cumulative ACK's; each part by sequence):
    /// a segment becomes the kept sample's start when the kept start's delivered count is 0 or
    /// below the segment's; its ack-elapsed is taken now.
    fn ns3_choose_start(&mut self, now: Time) {
        let mut batch = std::mem::take(&mut self.ns3_batch);
        batch.sort_by_key(|&(seq, _, sacked)| (!sacked, seq));
        let p = &mut self.pick;
        for &(seq, r, _) in &batch {
            if p.prior_delivered == 0 || r.delivered > p.prior_delivered {
                p.take(seq, &r);
                p.valid = true;
                p.ack_elapsed = now.saturating_sub(r.delivered_time);
                // m_rate.m_firstSentTime = the segment's send time (l. 183).
                self.first_tx = r.sent;
            }
        }
        batch.clear();
        self.ns3_batch = batch;
    }

    /// `tcp_rate_check_app_limited` when the sender has no more data to send and fewer than
    /// cwnd segments in flight: samples taken until this flight is delivered are app-limited.
    pub fn mark_app_limited(&mut self) {
        self.app_limited = Some((self.delivered + self.in_flight as u64).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// A steady flight: 10 segments sent 1 ms apart from t = 0, each ACKed alone 100 ms
    /// after its send. By hand (tcp_rate.c), the ACK of segment 9 at 109 ms: the record of 9
    /// was sent at 9 ms with delivered = 0 (nothing delivered before 100 ms), first_tx = 0 ->
    /// send_elapsed = 9 ms; delivered_time at send = 0 -> ack_elapsed = 109 ms; interval =
    /// max = 109 ms; delivered = 10 - 0 = 10: 10 / 109 ms.
    #[test]
    fn first_flight_by_hand() {
        let mut r = RateState::default();
        for s in 0..10u32 {
            r.on_send(s, s as Time * MS, s);
        }
        let mut last = RateSample::default();
        for s in 0..10u32 {
            r.on_cum_ack(s, s + 1);
            last = r.gen((100 + s as Time) * MS, 100.0 * MS as f64);
        }
        assert_eq!(last.delivered, 10);
        assert_eq!(last.interval_ns, 109 * MS as i64);
        assert_eq!(last.prior_delivered, 0);
        assert_eq!(last.rtt_ns, 100 * MS as i64);
        // Sent before any delivery: the initial app-limited mark (tcp_init_sock).
        assert!(last.is_app_limited);
        assert_eq!((last.total_delivered, last.in_flight), (10, 0));
    }

    /// Second round: segment 10 sent at 100 ms (when 0 was ACKed: delivered 1,
    /// delivered_time 100 ms, first_tx = 0's send time 0), ACKed at 200 ms with 11 delivered.
    /// send_elapsed = 100 - 0 = 100 ms, ack_elapsed = 200 - 100 = 100 ms: 10 segments / 100 ms
    /// = the bottleneck's 1 segment per 10 ms... here 0.1 segment per ms.
    #[test]
    fn second_round_measures_the_ack_clock() {
        let mut r = RateState::default();
        for s in 0..10u32 {
            r.on_send(s, s as Time * 10 * MS, s);
        }
        // Segment s is ACKed at 100 + 10 s ms; each ACK releases segment s + 10.
        let mut got = Vec::new();
        for s in 0..20u32 {
            let now = (100 + 10 * s as Time) * MS;
            r.on_cum_ack(s, s + 1);
            let rs = r.gen(now, 100.0 * MS as f64);
            got.push(rs);
            r.on_send(s + 10, now, 9);
        }
        // ACK of segment 10 (index 10) at 200 ms: prior_delivered = 1 (delivered when 10 was
        // sent), delivered now 11 -> 10 segments; interval = max(100 - 90, 200 - 100) = 100 ms.
        let rs = got[10];
        assert_eq!(rs.prior_delivered, 1);
        assert_eq!(rs.delivered, 10);
        assert_eq!(rs.interval_ns, 100 * MS as i64);
        assert!((rs.rate().unwrap() - 0.1 / MS as f64).abs() < 1e-15);
        // Sent after the first delivery cleared the mark: not app-limited.
        assert!(!rs.is_app_limited);
        // First flight: ACK of 0 at 100 ms: interval max(0, 100) = 100 ms, 1 segment.
        assert_eq!((got[0].delivered, got[0].interval_ns), (1, 100 * MS as i64));
    }

    /// An interval below min RTT gives no rate (tcp_rate_gen's check: `rs->interval_us = -1`)
    /// but keeps the delivered count it set before the check: one segment sent at 0 with
    /// delivered 0, ACKed at 50 ms, min RTT 100 ms -> delivered 1 - 0 = 1, interval -1.
    #[test]
    fn interval_below_min_rtt_is_discarded() {
        let mut r = RateState::default();
        r.on_send(0, 0, 0);
        r.on_cum_ack(0, 1);
        let rs = r.gen(50 * MS, 100.0 * MS as f64);
        assert_eq!((rs.delivered, rs.interval_ns), (1, -1));
        assert_eq!(rs.rate(), None);
        assert_eq!(rs.acked_sacked, 1);
    }

    /// SACKs deliver, IsLost marks losses once, the flight excludes lost segments until they
    /// are retransmitted: 10 sent, 0 lost, SACKs for 1..=4 arrive.
    #[test]
    fn sack_delivery_and_loss_marking() {
        let mut r = RateState::default();
        for s in 0..10u32 {
            r.on_send(s, s as Time * MS, s);
        }
        r.on_sack(&[(1, 3)], 0, 10);
        let a = r.gen(100 * MS, 50.0 * MS as f64);
        // Two SACKed above 0: not lost yet (DupThresh 3).
        assert_eq!((a.acked_sacked, a.losses, a.in_flight), (2, 0, 8));
        r.on_sack(&[(1, 4)], 0, 10);
        let b = r.gen(101 * MS, 50.0 * MS as f64);
        // Third SACK: 0 is lost; flight = 10 - 3 SACKed - 1 lost.
        assert_eq!(
            (b.acked_sacked, b.losses, b.in_flight, b.total_lost),
            (1, 1, 6, 1)
        );
        r.on_sack(&[(1, 5)], 0, 10);
        let c = r.gen(102 * MS, 50.0 * MS as f64);
        assert_eq!((c.losses, c.total_lost), (0, 1), "counted once");
        // Retransmitting 0 puts it back in flight; its delivery is a retransmission's sample.
        r.on_send(0, 103 * MS, 10);
        assert_eq!(r.in_flight, 6);
        r.on_cum_ack(0, 5);
        let d = r.gen(200 * MS, 50.0 * MS as f64);
        assert_eq!((d.acked_sacked, d.in_flight, d.total_delivered), (1, 5, 5));
        // The lost segment's delivery: ns-3's lost count falls by one, Linux's stays.
        assert_eq!((d.repaired, d.losses, d.total_lost), (1, 0, 1));
        assert_eq!((a.repaired, b.repaired, c.repaired), (0, 0, 0));
        assert!(d.is_retrans);
        assert_eq!(d.rtt_ns, -1, "no RTT from a retransmission (Karn)");
    }

    /// `tcp_clean_rtx_queue`'s Karn rule over a whole cumulative ACK (net/ipv4/tcp_input.c):
    /// when it delivers any retransmitted segment (`FLAG_RETRANS_DATA_ACKED`) it gives no
    /// timing at all, not even from the never-retransmitted segments it also delivers; a
    /// never-retransmitted segment newly SACKed by the same ACK still times it (`last_sackt`).
    #[test]
    fn a_cumulative_ack_over_a_retransmission_is_not_timed() {
        // Segments 0..10 sent at 0..9 ms; 2 is lost and resent at 50 ms; the receiver held
        // its SACKs, so the ACK that the retransmission triggers (at 80 ms) cumulatively
        // delivers 2 and never-SACKed 3..10 at once.
        let send = |r: &mut RateState| {
            for s in 0..10u32 {
                r.on_send(s, s as Time * MS, s);
            }
            r.on_cum_ack(0, 2);
            let _ = r.gen(40 * MS, 30.0 * MS as f64);
            r.on_send(2, 50 * MS, 8);
        };
        let mut r = RateState::default();
        send(&mut r);
        r.on_cum_ack(2, 10);
        let a = r.gen(80 * MS, 30.0 * MS as f64);
        assert_eq!(a.acked_sacked, 8);
        // Before 2026-11-30 this was 80 - 9 = 71 ms, the newest original's (9 ms) time.
        assert_eq!(
            a.rtt_ns, -1,
            "no timing from a cumulative ACK over a retransmission"
        );

        // The same, but the ACK (cumulative to 8) also newly SACKs 9: timed from 9's send.
        let mut r = RateState::default();
        send(&mut r);
        r.on_cum_ack(2, 8);
        r.on_sack(&[(9, 10)], 8, 10);
        let b = r.gen(80 * MS, 30.0 * MS as f64);
        assert_eq!(b.acked_sacked, 7);
        assert_eq!(
            b.rtt_ns,
            (80 - 9) * MS as i64,
            "the SACKed original times it"
        );

        // Without a retransmission among them the cumulative ACK is timed from its newest
        // original: all ten never resent, one ACK of 0..10 at 80 ms: 80 - 9 ms.
        let mut r = RateState::default();
        for s in 0..10u32 {
            r.on_send(s, s as Time * MS, s);
        }
        r.on_cum_ack(0, 10);
        let c = r.gen(80 * MS, 30.0 * MS as f64);
        assert_eq!(c.rtt_ns, (80 - 9) * MS as i64);
    }

    /// Linux's `tcp_timeout_mark_lost` -> `tcp_mark_skb_lost`: a timeout counts in `tp->lost`
    /// every outstanding segment not marked lost and every retransmission of one marked lost
    /// before (LOST and SACKED_RETRANS: "retransmits that are lost again"). By hand: 0..5 sent;
    /// SACKs of 1..4 mark 0 lost (IsLost: 3 SACKed above): lost 1, in flight 5 - 3 - 1 = 1 (4);
    /// 0 is retransmitted (in flight 2); the timeout marks the retransmission of 0 again and 4
    /// for the first time: lost 1 + 2 = 3, in flight 0. The segment sent next carries
    /// `lost_at_send` 3, and none of these is a sample's loss.
    #[test]
    fn a_timeout_counts_a_lost_retransmission_again() {
        let mut r = RateState::default();
        for s in 0..5u32 {
            r.on_send(s, s as Time * MS, s);
        }
        r.on_sack(&[(1, 4)], 0, 5);
        let a = r.gen(100 * MS, 50.0 * MS as f64);
        assert_eq!((a.losses, a.total_lost, a.in_flight), (1, 1, 1));
        r.on_send(0, 101 * MS, 5);
        assert_eq!(r.in_flight, 2);
        r.on_timeout();
        assert_eq!((r.lost, r.in_flight), (3, 0));
        r.on_send(5, 400 * MS, 5);
        assert_eq!(r.recs.back().map(|x| x.lost_at_send), Some(3));
        r.on_cum_ack(0, 6);
        let b = r.gen(500 * MS, 50.0 * MS as f64);
        assert_eq!((b.losses, b.total_lost), (0, 3));
    }

    /// The sender's path (the scoreboard's newly SACKed runs and top, [`RateState::on_new_sacks`])
    /// and the blocks walked whole ([`RateState::on_sack`]) leave the same state after every ACK:
    /// 2,000 ACKs of random blocks (overlapping, repeated, beyond snd_max) and cumulative ACKs
    /// over a window that slides and grows, retransmissions and a timeout now and then.
    #[test]
    fn new_sack_runs_equal_the_blocks_walked_whole() {
        let (mut a, mut b) = (RateState::default(), RateState::default());
        let mut sb = crate::tcp::recovery::Scoreboard::default();
        let (mut una, mut max) = (0u32, 0u32);
        let mut x: u64 = 11;
        let mut rnd = |n: u32| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((x >> 33) % u64::from(n)) as u32
        };
        for t in 0..2_000u64 {
            for _ in 0..rnd(4) {
                a.on_send(max, t * MS, max - una);
                b.on_send(max, t * MS, max - una);
                max += 1;
            }
            if rnd(10) == 0 && una < max {
                let seg = una + rnd(max - una);
                a.on_send(seg, t * MS, max - una);
                b.on_send(seg, t * MS, max - una);
            }
            let mut blocks = [(0u32, 0u32); 3];
            for blk in blocks.iter_mut().take(rnd(4) as usize) {
                let lo = una + rnd(max - una + 3);
                *blk = (lo, lo + 1 + rnd(8));
            }
            let to = (una + rnd(3)).min(max);
            if to > una {
                a.on_cum_ack(una, to);
                b.on_cum_ack(una, to);
                una = to;
            }
            sb.advance(una);
            sb.apply(&blocks, max);
            let (runs, top) = sb.last_sacks();
            a.on_new_sacks(runs, top);
            b.on_sack(&blocks, una, max);
            if rnd(200) == 0 {
                a.on_timeout();
                b.on_timeout();
            }
            let (ra, rb) = (a.gen(t * MS, 1e6), b.gen(t * MS, 1e6));
            assert_eq!(format!("{ra:?}"), format!("{rb:?}"), "ACK {t}");
            assert_eq!((a.in_flight, a.lost), (b.in_flight, b.lost), "ACK {t}");
        }
        assert!(
            a.delivered > 1_000 && a.lost > 0,
            "the walk covered deliveries and losses"
        );
    }

    #[test]
    fn app_limited_mark_clears_after_the_flight() {
        let mut r = RateState::default();
        r.on_send(0, 0, 0);
        r.on_cum_ack(0, 1);
        r.gen(100 * MS, 0.0);
        assert_eq!(r.app_limited, None);
        r.on_send(1, 100 * MS, 0);
        r.on_send(2, 100 * MS, 1);
        r.mark_app_limited();
        // Limited until delivered > 1 + 2 in flight = 3.
        assert_eq!(r.app_limited, Some(3));
        r.on_send(3, 101 * MS, 2);
        r.on_cum_ack(1, 4);
        let s = r.gen(200 * MS, 0.0);
        // The sample's segment (3) was sent under the mark; delivered 4 > 3 clears it.
        assert!(s.is_app_limited);
        assert_eq!(r.app_limited, None);
    }

    #[test]
    fn timeout_marks_all_outstanding_lost() {
        let mut r = RateState::default();
        for s in 0..5u32 {
            r.on_send(s, 0, s);
        }
        r.on_timeout();
        assert_eq!((r.lost, r.in_flight), (5, 0));
        r.on_send(0, MS, 5);
        assert_eq!(r.in_flight, 1);
    }

    /// ns-3.44's kept sample start (`bbr-ns3:ratestart`) against Linux's per-ACK start, worked
    /// from tcp-rate-ops.cc (`SkbDelivered` l. 159-192, `GenerateSample` l. 46-126) and
    /// tcp_rate.c. Segment 0 is sent alone at 10 ms and ACKed at 110 ms; segments 1-4 are sent
    /// at 110, 120, 130, 140 ms (delivered = 1, delivered time 110 ms, first_tx 110 ms in each
    /// record) and ACKed one by one at 210, 220, 230, 240 ms; segment 5 at 215 ms (after 1's ACK:
    /// delivered 2, delivered time 210 ms; first_tx 110 ms, 1's send) is ACKed at 315 ms; an
    /// ACK at 245 ms delivers nothing. min RTT 50 ms.
    ///
    /// - ACK of 0 (both): start 0, ack_elapsed 110 - 10 = 100, send_elapsed 0: 1 / 100 ms.
    /// - ACK of 1 (both): 1 was sent under delivered 1 > 0: ack_elapsed 210 - 110 = 100,
    ///   send_elapsed 0: (2 - 1) / 100 ms.
    /// - ACK of 2: Linux: 2's record, send_elapsed 120 - 110 = 10, ack_elapsed 220 - 110 = 110:
    ///   (3 - 1) / 110 ms. ns-3: 2's delivered count 1 is not above the kept 1: the start stays
    ///   1's, with its ack_elapsed 100 and send_elapsed 0: (3 - 1) / 100 ms.
    /// - ACK of 3: Linux 3 / max(20, 120) = 3 / 120 ms; ns-3 3 / 100 ms. ACK of 4: Linux 4 / 130
    ///   ms; ns-3 4 / 100 ms.
    /// - The empty ACK at 245 ms: Linux none; ns-3 the kept start again: 4 / 100 ms.
    /// - ACK of 5: 5 was sent under delivered 2 > 1, so ns-3 takes it as Linux does: send_elapsed
    ///   215 - 110 = 105, ack_elapsed 315 - 210 = 105: (6 - 2) / 105 ms on both.
    #[test]
    fn ns3_keeps_the_sample_start_across_acks() {
        let run = |keep: bool| {
            let mut r = RateState {
                ns3_keep_start: keep,
                ..RateState::default()
            };
            let min_rtt = (50 * MS) as f64;
            let mut got = Vec::new();
            r.on_send(0, 10 * MS, 0);
            r.on_cum_ack(0, 1);
            got.push(r.gen(110 * MS, min_rtt));
            for (k, seg) in (1..5).enumerate() {
                r.on_send(seg, (110 + 10 * k as Time) * MS, k as u32);
            }
            r.on_cum_ack(1, 2);
            got.push(r.gen(210 * MS, min_rtt));
            r.on_send(5, 215 * MS, 3);
            for (seg, t) in [(2, 220), (3, 230), (4, 240)] {
                r.on_cum_ack(seg, seg + 1);
                got.push(r.gen(t * MS, min_rtt));
            }
            got.push(r.gen(245 * MS, min_rtt));
            r.on_cum_ack(5, 6);
            got.push(r.gen(315 * MS, min_rtt));
            got.iter()
                .map(|s| {
                    (
                        s.delivered,
                        if s.interval_ns < 0 {
                            -1
                        } else {
                            s.interval_ns / MS as i64
                        },
                    )
                })
                .collect::<Vec<_>>()
        };
        let linux = [
            (1, 100),
            (1, 100),
            (2, 110),
            (3, 120),
            (4, 130),
            (-1, -1),
            (4, 105),
        ];
        let ns3 = [
            (1, 100),
            (1, 100),
            (2, 100),
            (3, 100),
            (4, 100),
            (4, 100),
            (4, 105),
        ];
        assert_eq!(run(false), linux);
        assert_eq!(run(true), ns3);
    }
}
