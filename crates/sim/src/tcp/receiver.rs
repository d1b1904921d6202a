//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018 s. 4), delayed ACKs (RFC 5681
//! s. 4.2), ECN echo (RFC 3168 s. 6.1.3), timestamp echo (RFC 7323 s. 3: `ts` of the segment that
//! triggered the ACK, or of the earliest unacknowledged one under delayed ACKs); under DCTCP
//! (RFC 8257 s. 3.2) CE is echoed packet by packet instead, through a two-state machine that
//! sends an immediate ACK for the held segments when the CE state changes. In AccECN mode
//! (RFC 9768, [`super::accecn`]) the ACE field on every ACK carries the CE packet counter
//! instead, with its own immediate-ACK rules.

use super::accecn::{self, AccEcnReceiver, EcnMode};
use super::rwnd::LinuxRwnd;
use crate::config::{EcnSupport, TcpConfig};
use crate::packet::{Kind, Packet, SackBlock, CE, CWR, ECE, SYN};
use aqm::{Precedence, Time};

/// Why the receiver sent an ACK (diagnostics: [`ReceiverStats::acks_by_reason`]; the classes of
/// `scripts/ns3_dumbbell.cc --ackTrace`, so the two sides count alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckReason {
    /// An in-order segment with no gap before or after: the second since the last ACK (RFC 5681
    /// s. 4.2 "at least every second full-sized segment"), or every segment without delayed ACKs.
    Count,
    /// The segment starts above `rcv_nxt`: a gap exists (RFC 5681 s. 4.2 "immediately when an
    /// out-of-order segment arrives").
    OutOfOrder,
    /// The segment moved `rcv_nxt` past its own end: it filled (the first) gap (RFC 5681 s. 4.2,
    /// "fills in all or part of a gap").
    Fill,
    /// An in-order segment below a gap it does not reach: out-of-order data is still held.
    Hole,
    /// The segment lies wholly below `rcv_nxt` (a duplicate).
    Old,
    /// The delayed-ACK timer expired.
    Timer,
    /// Anything else: CE (RFC 3168, DCTCP's state change, AccECN), the last segment of a finite
    /// transfer.
    Other,
}

impl AckReason {
    /// Every reason, in the order of [`ReceiverStats::acks_by_reason`].
    pub const ALL: [AckReason; 7] = [
        AckReason::Count,
        AckReason::OutOfOrder,
        AckReason::Fill,
        AckReason::Hole,
        AckReason::Old,
        AckReason::Timer,
        AckReason::Other,
    ];

    /// The name `ns3_dumbbell.cc --ackTrace` writes for it.
    pub fn name(self) -> &'static str {
        match self {
            AckReason::Count => "count",
            AckReason::OutOfOrder => "ooo",
            AckReason::Fill => "fill",
            AckReason::Hole => "hole",
            AckReason::Old => "old",
            AckReason::Timer => "timer",
            AckReason::Other => "other",
        }
    }
}

/// Receiver counters.
#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// In-order segments delivered to the application in the measurement window.
    pub delivered_window: u64,
    /// In-order segments delivered in the whole run.
    pub delivered_total: u64,
    /// [`ReceiverStats::delivered_total`] before the first delivery in the measurement window
    /// (the first segment counted in it), for the payload bytes of segments of several sizes.
    pub window_from: Option<u64>,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Segments that arrived already held (duplicates).
    pub duplicates: u64,
    /// Data segments that arrived (SYNs not counted).
    pub segments: u64,
    /// ACKs sent, by reason, indexed as [`AckReason::ALL`] (not SYN-ACKs).
    pub acks_by_reason: [u64; 7],
    /// Out-of-order ACKs held back and folded into a later one (`[tcp] sack_compress`; Linux's
    /// `TcpExtTCPAckCompressed`).
    pub acks_compressed: u64,
}

/// Linux's SACK compression (`__tcp_ack_snd_check`, net/ipv4/tcp_input.c, since 4.18) with the
/// default sysctls: while data is held out of order, the first [`SackCompress::IMMEDIATE`]
/// ACKs at one `rcv_nxt` leave at once (`TCP_FASTRETRANS_THRESH`, so the sender sees its
/// duplicate ACKs); later ones are held and sent as one when a timer of min(1 ms, RTT / 20)
/// expires (`tcp_comp_sack_delay_ns`, the receiver's RTT estimate or SRTT, the smaller), when
/// [`SackCompress::MAX`] are held (`tcp_comp_sack_nr`), or with any other ACK. Its SACK blocks
/// come from Linux's array of the [`SackCompress::BLOCKS`] most recently changed blocks
/// (`tp->selective_acks`, `tcp_sack_new_ofo_skb`): the block a segment joins moves to the front,
/// a new one is put there and the oldest forgotten when the array is full (the held ACKs sent
/// first); an ACK carries the first three (RFC 2018 s. 4: the most recently reported first).
#[derive(Clone, Debug, Default)]
pub(super) struct SackCompress {
    /// `tp->compressed_ack`: ACKs held since the last one sent.
    held: u32,
    /// `tp->compressed_ack_rcv_nxt`.
    rcv_nxt: u32,
    /// `tp->dup_ack_counter`: immediate ACKs sent at `rcv_nxt`.
    immediate: u32,
    /// One segment of each block of the array, the most recently changed first.
    recent: Vec<u32>,
}

impl SackCompress {
    /// `TCP_FASTRETRANS_THRESH`.
    const IMMEDIATE: u32 = 3;
    /// `net.ipv4.tcp_comp_sack_nr`.
    const MAX: u32 = 44;
    /// `net.ipv4.tcp_comp_sack_delay_ns`.
    const DELAY_NS: Time = 1_000_000;
    /// `TCP_NUM_SACKS`: the blocks Linux remembers.
    const BLOCKS: usize = 4;

    /// Would segment `seg`, queued out of order (`ooo` as it now is), push a block out of the
    /// array: a block of its own (joining none of the array's) with the array full?
    fn would_forget(&self, seg: u32, ooo: &[SackBlock]) -> bool {
        let cur = block_of(ooo, seg);
        let (mut live, mut joins) = (0, false);
        for i in self.recent.iter().filter_map(|&x| block_of(ooo, x)) {
            live += 1;
            joins |= Some(i) == cur;
        }
        live >= Self::BLOCKS && !joins
    }

    /// Segment `seg` was queued out of order (`ooo` as it now is): its block moves to the front
    /// of the array (blocks it joined leave it), the oldest forgotten past [`Self::BLOCKS`].
    fn note(&mut self, seg: u32, ooo: &[SackBlock]) {
        let cur = block_of(ooo, seg);
        self.recent.retain(|&x| {
            let b = block_of(ooo, x);
            b.is_some() && b != cur
        });
        self.recent.insert(0, seg);
        self.recent.truncate(Self::BLOCKS);
    }

    /// The array's blocks as they now are in `ooo` (those still held), most recent first, at
    /// most three.
    fn blocks(&mut self, ooo: &[SackBlock]) -> [SackBlock; 3] {
        let mut out = [(0, 0); 3];
        let mut n = 0;
        self.recent.retain(|&x| block_of(ooo, x).is_some());
        for &x in &self.recent {
            let b = ooo[block_of(ooo, x).expect("held")];
            if n < 3 && !out[..n].contains(&b) {
                out[n] = b;
                n += 1;
            }
        }
        out
    }

    /// The timer's delay with receiver RTT `rtt` (`None`: none measured, the 1 ms cap).
    pub(super) fn delay(rtt: Option<Time>) -> Time {
        rtt.map_or(Self::DELAY_NS, |r| (r / 20).min(Self::DELAY_NS))
    }

    /// An out-of-order segment at `rcv_nxt`: is its ACK to be held?
    fn hold(&mut self, rcv_nxt: u32) -> bool {
        if self.held >= Self::MAX {
            return false;
        }
        if self.rcv_nxt != rcv_nxt {
            self.rcv_nxt = rcv_nxt;
            self.immediate = 0;
        }
        if self.immediate < Self::IMMEDIATE {
            self.immediate += 1;
            return false;
        }
        self.held += 1;
        true
    }
}

/// The index of the block of `ooo` holding segment `x`, if one does.
fn block_of(ooo: &[SackBlock], x: u32) -> Option<usize> {
    ooo.iter().position(|b| b.0 <= x && x < b.1)
}

/// Payload bytes held out of order in `blocks`, whole segments of `mss` bytes.
fn held_bytes(blocks: &[SackBlock], mss: u32) -> u64 {
    let held: u32 = blocks.iter().map(|b| b.1 - b.0).sum();
    u64::from(held) * u64::from(mss)
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
    /// DCTCP's CE echo (RFC 8257 s. 3.2) instead of RFC 3168's latch.
    ce_per_packet: bool,
    /// DCTCP's state: the CE bit of the last data segment received.
    ce_state: bool,
    /// An ACK sent before the one [`Receiver::on_data`] returns (DCTCP's state change with a
    /// delayed ACK pending), taken with [`Receiver::take_extra`].
    extra: Option<Packet>,
    /// Segments of a finite transfer: the last one is acknowledged at once.
    total: Option<u32>,
    /// The ECN feedback this end supports (`[tcp] receiver_ecn`).
    support: EcnSupport,
    /// The feedback mode negotiated (by the first SYN, or set by the network builder).
    mode: EcnMode,
    /// A SYN has set the mode.
    syn_seen: bool,
    /// AccECN's counters, in AccECN mode.
    accecn: Option<AccEcnReceiver>,
    /// Header and option bytes of a data segment (its payload, for AccECN's byte counters, is
    /// the rest).
    header: u32,
    /// Linux's receive window (`[tcp] rwnd_model = "linux"`, [`super::rwnd`]); `None`: `rwnd`.
    linux_rwnd: Option<LinuxRwnd>,
    /// Payload bytes per segment.
    mss: u32,
    /// The time of the event being handled (an ACK's send time, for [`super::rwnd`]).
    clock: Time,
    /// Linux's SACK compression (`[tcp] sack_compress`); `None`: every out-of-order segment
    /// is acknowledged at once.
    sack_compress: Option<SackCompress>,
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
            ack_size: cfg.ack_bytes + cfg.option_bytes(),
            delack: cfg.delack,
            delack_ns: cfg.delack_ns,
            unacked: 0,
            pending_ts: 0,
            delack_deadline: None,
            delack_event: None,
            ece: false,
            ce_per_packet: false,
            ce_state: false,
            extra: None,
            total: None,
            support: cfg.receiver_ecn,
            mode: EcnMode::Classic,
            syn_seen: false,
            accecn: None,
            header: cfg.header_bytes + cfg.option_bytes(),
            linux_rwnd: cfg.linux_rwnd.then(|| LinuxRwnd::new(cfg.mss)),
            mss: cfg.mss,
            clock: 0,
            sack_compress: cfg.sack_compress.then(SackCompress::default),
            stats: ReceiverStats::default(),
        }
    }

    /// Sets the ECN feedback mode (the network builder, when the handshake is not simulated:
    /// [`accecn::negotiate`]). Classic until set, as before AccECN.
    pub fn ecn_mode(mut self, mode: EcnMode) -> Self {
        self.set_mode(mode);
        self
    }

    fn set_mode(&mut self, mode: EcnMode) {
        self.mode = mode;
        self.accecn = (mode == EcnMode::AccEcn).then(AccEcnReceiver::default);
    }

    /// The feedback mode.
    pub fn mode(&self) -> EcnMode {
        self.mode
    }

    /// AccECN's counters (in AccECN mode).
    pub fn accecn(&self) -> Option<&AccEcnReceiver> {
        self.accecn.as_ref()
    }

    /// A receiver of a finite transfer of `segments` segments (`None`: bulk). The segment that
    /// completes it is acknowledged at once, not after the delayed-ACK timer, as a real receiver
    /// acknowledges a segment carrying FIN at once (RFC 9293 s. 3.10.7.4, eighth step; RFC 1122
    /// s. 4.2.3.2 lets an ACK be delayed only while more data is expected).
    pub fn finite(mut self, segments: Option<u32>) -> Self {
        self.total = segments;
        self
    }

    /// Echoes CE as DCTCP's receiver (RFC 8257 s. 3.2) when `on`.
    pub fn per_packet_ce_echo(mut self, on: bool) -> Self {
        self.ce_per_packet = on;
        self
    }

    /// The ACK sent just before the last one [`Receiver::on_data`] returned, if any.
    #[inline]
    pub fn take_extra(&mut self) -> Option<Packet> {
        self.extra.take()
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

    fn ack(&mut self, flow: u32, ts: Time, why: AckReason) -> Packet {
        self.stats.acks_sent += 1;
        self.stats.acks_by_reason[why as usize] += 1;
        self.unacked = 0;
        self.delack_deadline = None;
        if let Some(c) = self.sack_compress.as_mut() {
            // tcp_event_ack_sent: the held ACKs go with this one, all counted as saved (the
            // timer takes one off first: tcp_compressed_ack_kick).
            self.stats.acks_compressed += u64::from(c.held);
            c.held = 0;
            let sack = c.blocks(&self.ooo);
            return self.ack_packet(flow, ts, sack);
        }
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
        self.ack_packet(flow, ts, sack)
    }

    /// The ACK itself: `rcv_nxt`, the ECN feedback, the window and `sack`.
    #[inline]
    fn ack_packet(&mut self, flow: u32, ts: Time, sack: [SackBlock; 3]) -> Packet {
        Packet {
            flow,
            seq: self.rcv_nxt,
            size: self.ack_size,
            hop: 0,
            kind: Kind::Ack,
            flags: match self.accecn.as_mut() {
                Some(a) => accecn::ace_flags(a.on_ack_sent()),
                None if self.ece => ECE,
                None => 0,
            },
            precedence: Precedence::Out,
            ts,
            rwnd: self.window(),
            sack,
            enq_time: 0,
        }
    }

    /// The window an ACK advertises: `rwnd`, or Linux's ([`super::rwnd`]).
    fn window(&mut self) -> u32 {
        match self.linux_rwnd.as_mut() {
            None => self.rwnd,
            Some(l) => {
                let held = held_bytes(&self.ooo, self.mss);
                l.on_ack_sent(self.clock, self.rcv_nxt);
                l.advertise(self.rcv_nxt, held)
            }
        }
    }

    /// Linux's receive window after data segment `d` arrived at `now` (`in_order`: it moved
    /// `rcv_nxt`, and the application reads at once; else it is held out of order).
    fn linux_rwnd_after(&mut self, d: &Packet, now: Time, in_order: bool) {
        let Some(l) = self.linux_rwnd.as_mut() else {
            return;
        };
        let span = self
            .ooo
            .last()
            .map_or(0, |b| b.1.saturating_sub(self.rcv_nxt));
        let span = u64::from(span) * u64::from(self.mss);
        // The segment's `rwnd` field carries the cumulative ACK its sender held (the echo).
        l.on_segment(now, d.ts, d.rwnd, held_bytes(&self.ooo, self.mss));
        if in_order {
            l.on_read(now, self.rcv_nxt, span);
        } else {
            l.on_out_of_order(span);
        }
    }

    /// A data segment arrives at `now`; returns the ACK to send now, if any. `in_window` says
    /// whether deliveries count toward goodput.
    pub fn on_data(&mut self, d: &Packet, now: Time, in_window: bool) -> Option<Packet> {
        self.clock = now;
        if d.flags & SYN != 0 {
            return Some(self.syn_ack(d)); // every SYN, first or repeated (RFC 9293 s. 3.5)
        }
        let ce_now = self.on_ecn(d);
        self.stats.segments += 1;
        let s = d.seq;
        if s == self.rcv_nxt {
            self.in_order(d, now, in_window, ce_now)
        } else if s > self.rcv_nxt {
            self.out_of_order(d, now)
        } else {
            self.stats.duplicates += 1;
            Some(self.ack(d.flow, d.ts, AckReason::Old))
        }
    }

    /// A segment above `rcv_nxt`: held, and its ACK sent at once (RFC 5681 s. 4.2), or with
    /// `[tcp] sack_compress` held as Linux holds it ([`SackCompress`]).
    fn out_of_order(&mut self, d: &Packet, now: Time) -> Option<Packet> {
        let s = d.seq;
        let dups = self.stats.duplicates;
        self.last_block = Some(self.insert_ooo(s));
        if self.stats.duplicates == dups {
            self.linux_rwnd_after(d, now, false); // a held duplicate is dropped unseen
        }
        if let Some(c) = self.sack_compress.as_ref() {
            if c.held > SackCompress::IMMEDIATE && c.would_forget(s, &self.ooo) {
                // tcp_sack_new_ofo_skb: the held ACKs leave before a block is forgotten, with
                // the array as it was.
                self.extra = Some(self.ack(d.flow, self.pending_ts, AckReason::Timer));
            }
        }
        if let Some(c) = self.sack_compress.as_mut() {
            c.note(s, &self.ooo);
            if c.hold(self.rcv_nxt) {
                // The held ACKs leave as one on the timer (armed by the first), echoing the
                // latest segment; any other ACK takes them along.
                if self.unacked == 0 {
                    self.pending_ts = d.ts;
                }
                let rtt = self.linux_rwnd.as_ref().and_then(LinuxRwnd::rtt);
                let at = now + SackCompress::delay(rtt);
                if self.delack_deadline.is_none_or(|t| at < t) {
                    self.delack_deadline = Some(at);
                }
                return None;
            }
        }
        Some(self.ack(d.flow, d.ts, AckReason::OutOfOrder)) // immediate duplicate ACK
    }

    /// The ECN feedback state for an arriving data segment; whether the segment's ECN asks for
    /// an ACK at once (RFC 3168 receivers ACK a CE segment at once; DCTCP's state machine
    /// instead, which may queue an ACK of the held segments in `extra`; AccECN's rules in
    /// AccECN mode).
    fn on_ecn(&mut self, d: &Packet) -> bool {
        let ce = d.flags & CE != 0;
        if let Some(a) = self.accecn.as_mut() {
            // RFC 9768 s. 3.2, s. 3.2.2.5.1: count, and ACK at once on a change to CE or the
            // second CE mark since the last ACK.
            return a.on_data(d.ecn().bits(), d.size.saturating_sub(self.header));
        }
        if self.ce_per_packet {
            // RFC 8257 s. 3.2: on a change of CE state with an ACK held back, acknowledge the
            // held segments at once with the old state, then take the new one.
            if ce != self.ce_state {
                if self.unacked > 0 {
                    self.extra = Some(self.ack(d.flow, self.pending_ts, AckReason::Other));
                }
                self.ce_state = ce;
            }
            self.ece = ce;
            return false;
        }
        // RFC 3168 s. 6.1.3: echo CE until CWR is seen.
        if d.flags & CWR != 0 {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
        ce
    }

    /// The segment at `rcv_nxt`: deliver it and the held data it joins; ACK at once when it
    /// fills a gap or out-of-order data is held (RFC 5681 s. 4.2), on `ce_now`, or at the end
    /// of a finite transfer; else every second segment or on the timer.
    fn in_order(&mut self, d: &Packet, now: Time, in_window: bool, ce_now: bool) -> Option<Packet> {
        let s = d.seq;
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
        if in_window {
            self.stats
                .window_from
                .get_or_insert(self.stats.delivered_total);
            self.stats.delivered_window += delivered;
        }
        self.stats.delivered_total += delivered;
        self.last_block = None;
        self.linux_rwnd_after(d, now, true);
        let complete = self.total.is_some_and(|n| self.rcv_nxt >= n);
        if had_gap {
            let why = if self.rcv_nxt > s + 1 {
                AckReason::Fill
            } else {
                AckReason::Hole
            };
            return Some(self.ack(d.flow, d.ts, why));
        }
        if complete || ce_now {
            return Some(self.ack(d.flow, d.ts, AckReason::Other));
        }
        if !self.delack {
            return Some(self.ack(d.flow, d.ts, AckReason::Count));
        }
        self.unacked += 1;
        if self.unacked >= 2 {
            return Some(self.ack(d.flow, self.pending_ts.min(d.ts), AckReason::Count));
        }
        self.pending_ts = d.ts;
        self.delack_deadline = Some(now + self.delack_ns);
        None
    }

    /// The answer to a SYN: a SYN-ACK of ACK size echoing the SYN's timestamp (header-only; not
    /// counted in `acks_sent`), its ECN flags from RFC 9768 Table 2 ([`accecn::server_answer`]).
    /// The first SYN sets the feedback mode; a later one does not change it (s. 3.1.5).
    fn syn_ack(&mut self, syn: &Packet) -> Packet {
        let (mode, ecn_flags) = accecn::server_answer(self.support, syn.flags, syn.ecn().bits());
        if !self.syn_seen {
            self.syn_seen = true;
            self.set_mode(mode);
        }
        Packet {
            flow: syn.flow,
            seq: 0,
            size: self.ack_size,
            hop: 0,
            kind: Kind::Ack,
            flags: SYN | ecn_flags,
            precedence: Precedence::Out,
            ts: syn.ts,
            rwnd: match self.linux_rwnd {
                Some(_) => LinuxRwnd::initial_segments(self.mss),
                None => self.rwnd,
            },
            sack: [(0, 0); 3],
            enq_time: 0,
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack_timer(&mut self, flow: u32, now: Time) -> Option<Packet> {
        self.clock = now;
        let held = self.sack_compress.as_ref().is_some_and(|c| c.held > 0);
        match self.delack_deadline {
            Some(t) if t <= now && (self.unacked > 0 || held) => {
                if let Some(c) = self.sack_compress.as_mut() {
                    c.held = c.held.saturating_sub(1); // this ACK is sent: not saved
                }
                Some(self.ack(flow, self.pending_ts, AckReason::Timer))
            }
            _ => None,
        }
    }

    /// SACK blocks held (for tests and a future SACK sender).
    pub fn blocks(&self) -> &[SackBlock] {
        &self.ooo
    }
}
