//! TCP at segment level: a Reno / NewReno sender and a receiver with cumulative ACKs and SACK
//! information.
//!
//! Sources: congestion control RFC 5681 (slow start and congestion avoidance per ACK, fast
//! retransmit after three duplicate ACKs, fast recovery); NewReno RFC 6582 s. 3.2 (partial ACKs,
//! `recover`); retransmission timer RFC 6298 (s. 2 estimator, s. 5 timer management, backoff);
//! ECN RFC 3168 s. 6.1 (one reduction per window, CWR/ECE); delayed ACKs RFC 5681 s. 4.2;
//! SACK blocks RFC 2018 s. 4. Sequence numbers count segments. There is no handshake: a flow starts
//! sending at its start time (as ns-2's one-way agents do).

use crate::config::{TcpConfig, TcpVariant};
use crate::packet::{Kind, Packet, SackBlock, CE, CWR, ECE, ECT, RETX};
use aqm::{Precedence, Time, NS_PER_SEC};

/// Logarithmic RTT histogram for percentiles: 50 buckets per decade from 1 us to 1000 s.
pub const RTT_BUCKETS_PER_DECADE: f64 = 50.0;
/// Number of RTT histogram buckets.
pub const RTT_BUCKETS: usize = 450;

/// Sender counters.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments sent (including retransmissions).
    pub segs_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Window reductions on ECN echo.
    pub ecn_reductions: u64,
    /// RTT samples taken.
    pub rtt_n: u64,
    /// Their sum, ns.
    pub rtt_sum: f64,
    /// Smallest, ns.
    pub rtt_min: f64,
    /// Largest, ns.
    pub rtt_max: f64,
    /// Histogram of samples (see [`RTT_BUCKETS_PER_DECADE`]) over the buckets seen.
    pub rtt_hist: crate::sparse_hist::SparseHist,
}

/// Token-bucket edge marker: packets within the profile are `In`.
#[derive(Clone, Debug)]
pub struct Marker {
    rate_bps: f64,
    depth: f64,
    tokens: f64,
    last: Time,
}

impl Marker {
    /// A full bucket.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        Marker {
            rate_bps: rate_bps as f64,
            depth: burst_bytes as f64,
            tokens: burst_bytes as f64,
            last: 0,
        }
    }

    /// Colours a packet of `size` bytes sent at `now`.
    pub fn colour(&mut self, size: u32, now: Time) -> Precedence {
        let dt = (now - self.last) as f64 / NS_PER_SEC as f64;
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate_bps / 8.0).min(self.depth);
        if self.tokens >= size as f64 {
            self.tokens -= size as f64;
            Precedence::In
        } else {
            Precedence::Out
        }
    }
}

/// A TCP sender.
#[derive(Clone, Debug)]
pub struct Sender {
    variant: TcpVariant,
    /// Bytes of a data segment on the wire.
    pub pkt_size: u32,
    ecn: bool,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send.
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// Peer's advertised window, segments.
    pub snd_wnd: u32,
    dupacks: u32,
    /// In fast recovery.
    pub in_recovery: bool,
    recover: u32,
    recover_valid: bool,
    partial_seen: bool,
    ecn_recover: u32,
    cwr_pending: bool,
    srtt: f64,
    rttvar: f64,
    /// Current retransmission timeout, ns.
    pub rto: Time,
    has_rtt: bool,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
    /// When the retransmission timer expires (`None`: stopped).
    pub rto_deadline: Option<Time>,
    /// Time of the pending timer event, if any (one event per flow at a time).
    pub rto_event: Option<Time>,
    limit: Option<u32>,
    /// Time the last segment was acknowledged (finite flows).
    pub done_at: Option<Time>,
    marker: Option<Marker>,
    /// Counters.
    pub stats: SenderStats,
}

impl Sender {
    /// A sender for `cfg`; `limit_segments` bounds a finite flow.
    pub fn new(cfg: &TcpConfig, limit_segments: Option<u32>, marker: Option<Marker>) -> Self {
        Sender {
            variant: cfg.variant,
            pkt_size: cfg.mss + cfg.header_bytes,
            ecn: cfg.ecn,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.init_cwnd,
            ssthresh: cfg.init_ssthresh.unwrap_or(f64::INFINITY),
            snd_wnd: cfg.rwnd_segments,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            recover_valid: false,
            partial_seen: false,
            ecn_recover: 0,
            cwr_pending: false,
            srtt: 0.0,
            rttvar: 0.0,
            rto: cfg.init_rto_ns,
            has_rtt: false,
            min_rto: cfg.min_rto_ns,
            max_rto: cfg.max_rto_ns,
            granularity: cfg.granularity_ns,
            rto_deadline: None,
            rto_event: None,
            limit: limit_segments,
            done_at: None,
            marker,
            stats: SenderStats::default(),
        }
    }

    /// Segments in flight (RFC 5681's FlightSize, in segments).
    #[inline]
    pub fn flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// Smoothed RTT, ns (0 before the first sample).
    pub fn srtt_ns(&self) -> f64 {
        self.srtt
    }

    /// ssthresh after a congestion event: max(FlightSize / 2, 2 segments) (RFC 5681 eq. 4).
    #[inline]
    pub fn halve(flight: u32) -> f64 {
        (flight as f64 / 2.0).max(2.0)
    }

    /// RFC 6298 s. 2.2-2.3: the estimator after a sample `r` (ns).
    pub fn rtt_sample(&mut self, r: f64) {
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        let rto = self.srtt + (self.granularity as f64).max(4.0 * self.rttvar);
        self.rto = (rto.round() as Time).clamp(self.min_rto, self.max_rto);
        let s = &mut self.stats;
        s.rtt_n += 1;
        s.rtt_sum += r;
        s.rtt_min = if s.rtt_n == 1 { r } else { s.rtt_min.min(r) };
        s.rtt_max = s.rtt_max.max(r);
        let b = ((r.max(1e3) / 1e3).log10() * RTT_BUCKETS_PER_DECADE) as usize;
        s.rtt_hist.add(b.min(RTT_BUCKETS - 1));
    }

    /// Sends no new data from now on (a flow group's stop time); what was sent is still
    /// recovered and acknowledged.
    pub fn stop_new_data(&mut self) {
        self.limit = Some(self.limit.map_or(self.snd_max, |l| l.min(self.snd_max)));
    }

    fn more_data(&self, seg: u32) -> bool {
        self.limit.is_none_or(|l| seg < l)
    }

    fn make_segment(&mut self, seg: u32, now: Time) -> Packet {
        let mut flags = if self.ecn { ECT } else { 0 };
        if seg < self.snd_max {
            flags |= RETX;
            self.stats.retransmits += 1;
        }
        if self.cwr_pending && flags & RETX == 0 {
            flags |= CWR;
            self.cwr_pending = false;
        }
        self.stats.segs_sent += 1;
        let precedence = match &mut self.marker {
            Some(m) => m.colour(self.pkt_size, now),
            None => Precedence::Out,
        };
        Packet {
            flow: 0,
            seq: seg,
            size: self.pkt_size,
            hop: 0,
            kind: Kind::Data,
            flags,
            precedence,
            ts: now,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        }
    }

    /// RFC 6298 s. 5.1: start the timer if it is not running.
    fn arm_if_stopped(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// Sends what the window allows into `out`.
    pub fn send_allowed(&mut self, now: Time, out: &mut Vec<Packet>) {
        let win = (self.cwnd.floor() as u32).min(self.snd_wnd).max(1);
        while self.snd_nxt < self.snd_una + win && self.more_data(self.snd_nxt) {
            let p = self.make_segment(self.snd_nxt, now);
            out.push(p);
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
            self.arm_if_stopped(now);
        }
    }

    fn retransmit_head(&mut self, now: Time, out: &mut Vec<Packet>) {
        let p = self.make_segment(self.snd_una, now);
        out.push(p);
        self.arm_if_stopped(now);
    }

    /// Processes an ACK; segments to send go to `out`.
    pub fn on_ack(&mut self, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        self.snd_wnd = ack.rwnd;
        let a = ack.seq;
        if a > self.snd_una {
            let newly = a - self.snd_una;
            // Timestamps (RFC 7323) make every ACK of new data a valid sample, retransmissions
            // included (the echo names the transmission).
            self.rtt_sample(now.saturating_sub(ack.ts) as f64);
            self.snd_una = a;
            if self.snd_nxt < a {
                self.snd_nxt = a;
            }
            // RFC 6298 s. 5.2-5.3: stop the timer when all is acknowledged, else restart it;
            // except that in NewReno fast recovery only the first partial ACK restarts it
            // (RFC 6582 s. 3.2 step 5 and s. 4, the "Impatient" variant), so a window with many
            // losses ends in a timeout instead of one retransmission per round trip.
            let mut restart = true;
            if self.in_recovery {
                if self.variant == TcpVariant::Reno || a >= self.recover {
                    // Full ACK (NewReno) or any new ACK (Reno): deflate to ssthresh, leave.
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // RFC 6582 s. 3.2 step 5: partial ACK: retransmit the first unacknowledged
                    // segment, deflate by the amount acknowledged, add back one segment.
                    self.retransmit_head(now, out);
                    self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                    restart = !self.partial_seen;
                    self.partial_seen = true;
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += 1.0; // slow start, RFC 5681 eq. 2
                } else {
                    self.cwnd += 1.0 / self.cwnd; // congestion avoidance, RFC 5681 eq. 3
                }
            }
            if self.snd_una >= self.snd_max {
                self.rto_deadline = None;
            } else if restart {
                self.rto_deadline = Some(now + self.rto);
            }
            if self.limit.is_some_and(|l| self.snd_una >= l) && self.done_at.is_none() {
                self.done_at = Some(now);
            }
            // RFC 3168 s. 6.1.2: at most one reduction per window of data.
            if ack.flags & ECE != 0
                && self.ecn
                && !self.in_recovery
                && self.snd_una > self.ecn_recover
            {
                self.ssthresh = Self::halve(self.flight());
                self.cwnd = self.ssthresh.max(1.0);
                self.ecn_recover = self.snd_max;
                self.cwr_pending = true;
                self.stats.ecn_reductions += 1;
            }
        } else if a == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0; // RFC 5681 s. 3.2 step 4: inflate
            } else if self.dupacks == 3 {
                // RFC 6582 s. 3.2 step 1: only when the ACK covers more than `recover`.
                let allowed =
                    self.variant == TcpVariant::Reno || !self.recover_valid || a > self.recover;
                if allowed {
                    self.ssthresh = Self::halve(self.flight());
                    self.recover = self.snd_max;
                    self.recover_valid = true;
                    self.in_recovery = true;
                    self.partial_seen = false;
                    self.stats.fast_retransmits += 1;
                    self.retransmit_head(now, out);
                    self.cwnd = self.ssthresh + 3.0;
                    self.ecn_recover = self.snd_max;
                }
            }
        }
        self.send_allowed(now, out);
    }

    /// The retransmission timer expired at `now` (RFC 6298 s. 5.4-5.6, RFC 5681 s. 3.1 eq. 4).
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        // RFC 5681 s. 3.1 eq. 4: ssthresh no more than max(FlightSize / 2, 2). During NewReno
        // fast recovery the flight includes data sent under the "artificially inflated" window
        // (RFC 6582 s. 3.2 step 4), so a timeout there keeps the ssthresh already chosen for this
        // congestion event when that is lower: a timeout never raises ssthresh.
        let half = Self::halve(self.flight());
        self.ssthresh = if self.in_recovery {
            half.min(self.ssthresh)
        } else {
            half
        };
        self.cwnd = 1.0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.recover_valid = true;
        self.snd_nxt = self.snd_una;
        self.rto = (self.rto * 2).min(self.max_rto);
        self.send_allowed(now, out);
    }
}

/// Receiver counters.
#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// In-order segments delivered to the application in the measurement window.
    pub delivered_window: u64,
    /// In-order segments delivered in the whole run.
    pub delivered_total: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Segments that arrived already held (duplicates).
    pub duplicates: u64,
}

/// A TCP receiver.
#[derive(Clone, Debug)]
pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    ooo: Vec<SackBlock>,
    last_block: Option<SackBlock>,
    rwnd: u32,
    ack_size: u32,
    delack: bool,
    delack_ns: Time,
    unacked: u32,
    pending_ts: Time,
    /// Delayed-ACK deadline.
    pub delack_deadline: Option<Time>,
    /// Time of the pending delayed-ACK event.
    pub delack_event: Option<Time>,
    ece: bool,
    /// Counters.
    pub stats: ReceiverStats,
}

impl Receiver {
    /// A receiver for `cfg`.
    pub fn new(cfg: &TcpConfig) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_block: None,
            rwnd: cfg.rwnd_segments,
            ack_size: cfg.ack_bytes,
            delack: cfg.delack,
            delack_ns: cfg.delack_ns,
            unacked: 0,
            pending_ts: 0,
            delack_deadline: None,
            delack_event: None,
            ece: false,
            stats: ReceiverStats::default(),
        }
    }

    fn insert_ooo(&mut self, s: u32) -> SackBlock {
        // Sorted, disjoint, half-open blocks; merge neighbours.
        let i = self.ooo.partition_point(|b| b.1 < s);
        if i < self.ooo.len() && self.ooo[i].0 <= s && s < self.ooo[i].1 {
            self.stats.duplicates += 1;
            return self.ooo[i];
        }
        if i < self.ooo.len() && self.ooo[i].1 == s {
            self.ooo[i].1 = s + 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == s + 1 {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
            }
            return self.ooo[i];
        }
        if i < self.ooo.len() && self.ooo[i].0 == s + 1 {
            self.ooo[i].0 = s;
            return self.ooo[i];
        }
        self.ooo.insert(i, (s, s + 1));
        self.ooo[i]
    }

    fn ack(&mut self, flow: u32, ts: Time) -> Packet {
        self.stats.acks_sent += 1;
        self.unacked = 0;
        self.delack_deadline = None;
        // RFC 2018 s. 4: the block holding the latest segment first, then other recent blocks.
        let mut sack = [(0, 0); 3];
        let mut n = 0;
        if let Some(b) = self.last_block {
            if let Some(cur) = self.ooo.iter().find(|x| x.0 <= b.0 && b.0 < x.1) {
                sack[0] = *cur;
                n = 1;
            }
        }
        for b in self.ooo.iter().rev() {
            if n == 3 {
                break;
            }
            if n == 0 || *b != sack[0] {
                sack[n] = *b;
                n += 1;
            }
        }
        Packet {
            flow,
            seq: self.rcv_nxt,
            size: self.ack_size,
            hop: 0,
            kind: Kind::Ack,
            flags: if self.ece { ECE } else { 0 },
            precedence: Precedence::Out,
            ts,
            rwnd: self.rwnd,
            sack,
            enq_time: 0,
        }
    }

    /// A data segment arrives at `now`; returns the ACK to send now, if any. `in_window` says
    /// whether deliveries count toward goodput.
    pub fn on_data(&mut self, d: &Packet, now: Time, in_window: bool) -> Option<Packet> {
        // RFC 3168 s. 6.1.3: echo CE until CWR is seen.
        if d.flags & CWR != 0 {
            self.ece = false;
        }
        if d.flags & CE != 0 {
            self.ece = true;
        }
        let s = d.seq;
        if s == self.rcv_nxt {
            let had_gap = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            let mut delivered = 1u64;
            while let Some(&(a, b)) = self.ooo.first() {
                if a <= self.rcv_nxt {
                    delivered += (b.max(self.rcv_nxt) - self.rcv_nxt) as u64;
                    self.rcv_nxt = self.rcv_nxt.max(b);
                    self.ooo.remove(0);
                } else {
                    break;
                }
            }
            self.stats.delivered_total += delivered;
            if in_window {
                self.stats.delivered_window += delivered;
            }
            self.last_block = None;
            // RFC 5681 s. 4.2: ACK at once when filling a gap; else every second segment or on
            // the timer.
            if !self.delack || had_gap || d.flags & CE != 0 {
                return Some(self.ack(d.flow, d.ts));
            }
            self.unacked += 1;
            if self.unacked >= 2 {
                return Some(self.ack(d.flow, self.pending_ts.min(d.ts)));
            }
            self.pending_ts = d.ts;
            self.delack_deadline = Some(now + self.delack_ns);
            None
        } else if s > self.rcv_nxt {
            self.last_block = Some(self.insert_ooo(s));
            Some(self.ack(d.flow, d.ts)) // out of order: immediate duplicate ACK
        } else {
            self.stats.duplicates += 1;
            Some(self.ack(d.flow, d.ts))
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timer(&mut self, flow: u32, now: Time) -> Option<Packet> {
        match self.delack_deadline {
            Some(t) if t <= now && self.unacked > 0 => Some(self.ack(flow, self.pending_ts)),
            _ => None,
        }
    }

    /// SACK blocks held (for tests and a future SACK sender).
    pub fn blocks(&self) -> &[SackBlock] {
        &self.ooo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            variant,
            mss: 1460,
            header_bytes: 40,
            ack_bytes: 40,
            init_cwnd: 10.0,
            init_ssthresh: None,
            rwnd_segments: 1000,
            min_rto_ns: 200_000_000,
            max_rto_ns: 60_000_000_000,
            init_rto_ns: 1_000_000_000,
            granularity_ns: 1_000_000,
            delack: false,
            delack_ns: 40_000_000,
            ecn: false,
            trace_cwnd: false,
        }
    }

    fn ack(seq: u32, ts: Time) -> Packet {
        Packet {
            flow: 0,
            seq,
            size: 40,
            hop: 0,
            kind: Kind::Ack,
            flags: 0,
            precedence: Precedence::Out,
            ts,
            rwnd: 1000,
            sack: [(0, 0); 3],
            enq_time: 0,
        }
    }

    /// A sender in congestion avoidance with `w` segments outstanding from 100.
    fn sender_at(variant: TcpVariant, w: u32) -> Sender {
        let mut s = Sender::new(&cfg(variant), None, None);
        s.snd_una = 100;
        s.snd_nxt = 100 + w;
        s.snd_max = 100 + w;
        s.cwnd = w as f64;
        s.ssthresh = 1.0;
        s
    }

    #[test]
    fn three_dupacks_halve_the_window_and_retransmit_the_head() {
        let mut s = sender_at(TcpVariant::NewReno, 20);
        let mut out = Vec::new();
        for _ in 0..2 {
            s.on_ack(&ack(100, 0), 1000, &mut out);
        }
        assert!(out.is_empty() && !s.in_recovery);
        s.on_ack(&ack(100, 0), 1000, &mut out);
        // RFC 5681 s. 3.2: ssthresh = FlightSize / 2 = 10, cwnd = ssthresh + 3 = 13.
        assert_eq!(s.ssthresh, 10.0);
        assert_eq!(s.cwnd, 13.0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 100);
        assert!(out[0].flags & RETX != 0);
        // The full ACK ends recovery with cwnd = ssthresh.
        out.clear();
        s.on_ack(&ack(120, 500), 2000, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn newreno_partial_ack_retransmits_and_stays_in_recovery_reno_leaves() {
        let mut s = sender_at(TcpVariant::NewReno, 20);
        let mut out = Vec::new();
        for _ in 0..3 {
            s.on_ack(&ack(100, 0), 1000, &mut out);
        }
        out.clear();
        // Partial ACK up to 105 (recover = 120): retransmit 105, cwnd 13 - 5 + 1 = 9.
        s.on_ack(&ack(105, 0), 2000, &mut out);
        assert!(s.in_recovery);
        assert_eq!(out[0].seq, 105);
        assert_eq!(s.cwnd, 9.0);

        // Only the first partial ACK restarts the timer (RFC 6582 s. 3.2 step 5).
        let d1 = s.rto_deadline;
        assert_eq!(d1, Some(2000 + s.rto));
        s.on_ack(&ack(107, 0), 3000, &mut out);
        assert!(s.in_recovery);
        assert_eq!(
            s.rto_deadline, d1,
            "a second partial ACK must not restart the timer"
        );

        let mut r = sender_at(TcpVariant::Reno, 20);
        for _ in 0..3 {
            r.on_ack(&ack(100, 0), 1000, &mut out);
        }
        r.on_ack(&ack(105, 0), 2000, &mut out);
        assert!(!r.in_recovery);
        assert_eq!(r.cwnd, 10.0);
    }

    #[test]
    fn rto_follows_rfc6298_and_backs_off() {
        let mut s = Sender::new(&cfg(TcpVariant::NewReno), None, None);
        // First sample R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50 = 300 ms.
        s.rtt_sample(100e6);
        assert_eq!(s.rto, 300_000_000);
        // Second sample 100 ms: RTTVAR = 0.75 * 50 = 37.5, SRTT = 100, RTO = 250 ms.
        s.rtt_sample(100e6);
        assert_eq!(s.rto, 250_000_000);
        // Small RTTs are held at the 200 ms minimum.
        for _ in 0..50 {
            s.rtt_sample(1e6);
        }
        assert_eq!(s.rto, 200_000_000);
        let mut out = Vec::new();
        s.snd_max = 10;
        s.snd_nxt = 10;
        s.cwnd = 10.0;
        s.on_timeout(5, &mut out);
        assert_eq!(s.rto, 400_000_000);
        assert_eq!(s.cwnd, 1.0);
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
    }

    #[test]
    fn a_timeout_in_fast_recovery_never_raises_ssthresh() {
        let mut s = sender_at(TcpVariant::NewReno, 20);
        let mut out = Vec::new();
        for _ in 0..3 {
            s.on_ack(&ack(100, 0), 1000, &mut out);
        }
        assert_eq!(s.ssthresh, 10.0);
        // 40 more duplicate ACKs inflate cwnd to 53 and release 33 new segments: flight 53.
        for _ in 0..40 {
            s.on_ack(&ack(100, 0), 2000, &mut out);
        }
        assert_eq!(s.flight(), 53);
        s.on_timeout(3000, &mut out);
        assert_eq!(s.ssthresh, 10.0, "not FlightSize / 2 = 26.5");
        assert_eq!(s.cwnd, 1.0);
    }

    #[test]
    fn ecn_echo_reduces_once_per_window() {
        let mut c = cfg(TcpVariant::NewReno);
        c.ecn = true;
        let mut s = Sender::new(&c, None, None);
        s.snd_una = 100;
        s.snd_nxt = 120;
        s.snd_max = 120;
        s.cwnd = 20.0;
        s.ssthresh = 1.0;
        let mut out = Vec::new();
        let mut e = ack(101, 0);
        e.flags = ECE;
        s.on_ack(&e, 10, &mut out);
        assert_eq!(s.stats.ecn_reductions, 1);
        let w = s.cwnd;
        e.seq = 102;
        s.on_ack(&e, 20, &mut out);
        assert_eq!(
            s.stats.ecn_reductions, 1,
            "second echo within the window is ignored"
        );
        assert!(s.cwnd >= w);
        // cwnd 9.5 < flight 18: nothing may be sent yet; CWR rides the next new segment.
        assert!(out.is_empty());
        let mut plain = ack(115, 0);
        plain.flags = 0;
        s.on_ack(&plain, 30, &mut out);
        assert!(!out.is_empty());
        assert!(out[0].flags & CWR != 0);
        assert_eq!(out.iter().filter(|p| p.flags & CWR != 0).count(), 1);
    }

    #[test]
    fn receiver_acks_cumulatively_and_reports_sack_blocks() {
        let mut r = Receiver::new(&cfg(TcpVariant::NewReno));
        let mut d = ack(0, 0);
        d.kind = Kind::Data;
        for s in [0u32, 1, 3, 4, 6] {
            d.seq = s;
            let a = r.on_data(&d, 0, true).unwrap();
            if s == 6 {
                assert_eq!(a.seq, 2);
                assert_eq!(a.sack[0], (6, 7));
                assert_eq!(a.sack[1], (3, 5));
            }
        }
        assert_eq!(r.blocks(), &[(3, 5), (6, 7)]);
        d.seq = 2;
        let a = r.on_data(&d, 0, true).unwrap();
        assert_eq!(a.seq, 5);
        assert_eq!(r.stats.delivered_total, 5);
    }

    #[test]
    fn delayed_acks_ack_every_second_segment() {
        let mut c = cfg(TcpVariant::NewReno);
        c.delack = true;
        let mut r = Receiver::new(&c);
        let mut d = ack(0, 0);
        d.kind = Kind::Data;
        d.seq = 0;
        assert!(r.on_data(&d, 0, true).is_none());
        d.seq = 1;
        assert_eq!(r.on_data(&d, 0, true).unwrap().seq, 2);
        d.seq = 2;
        assert!(r.on_data(&d, 100, true).is_none());
        assert_eq!(r.on_delack_timer(0, 100 + 40_000_000).unwrap().seq, 3);
    }
}
