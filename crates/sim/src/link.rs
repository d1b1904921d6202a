//! A unidirectional link: an output queue guarded by an AQM, a transmitter at a fixed rate, and a
//! propagation delay.
//!
//! The queue is the layer's AQM-guarded FIFO (`qdisc::fifo::Fifo`, the same type as the
//! forwarder's), or a queue discipline that stores the packets itself (`qdisc::sched`). What is
//! the link's own: the transmitter (its rate clock and when it is busy), the whole-run counters,
//! the delay and throughput recording, and one of two ways to serve the FIFO, chosen per link:
//! - *lazy FIFO*, for every AQM that decides only on arrival: the departure time of a FIFO packet is
//!   known when it arrives (`max(now, busy_until) + size / rate`), so no departure event is needed.
//!   The link keeps only the start times of waiting packets and retires them as time passes; the
//!   FIFO admits them (`Fifo::admit_passing`) and counts their length.
//! - *real queue*, for AQMs with a dequeue hook (CoDel, PIE with timestamps): the FIFO stores the
//!   packets and a transmission-done event starts the next one, so the head decision sees the
//!   true sojourn.
//!
//! Metrics are counted over the measurement window [warmup, end] by the time each thing happens.

use crate::events::{Cause, EventKind, EventLog};
use crate::packet::{Packet, CE};
use crate::series::Series;
use aqm::fq_codel::FqPacket;
use aqm::params::Buffer;
use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use qdisc::fifo::{Books, Fifo, FifoPacket};
use qdisc::rate::VarClock;
use qdisc::sched::{SchedDrop, Scheduler};
use qdisc::{Tagged, Ticket, WindowStats};
use std::collections::VecDeque;

/// A queue discipline holding the simulator's packets, each with its place in the measurement
/// window.
pub type SchedQueue = dyn Scheduler<Tagged<Packet>>;

/// The books a FIFO call writes to: the link's window counters, series and event log.
macro_rules! books {
    ($s:ident) => {
        &mut Books {
            win: &mut $s.stats.win,
            series: $s.series.as_mut(),
            events: $s.events.as_deref_mut(),
        }
    };
}

/// Counters of one link: the measurement window's (shared with the forwarder, `crates/qdisc`)
/// and the whole run's, for the conservation check.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    /// The window's counters and integrals (docs/metrics.md).
    pub win: WindowStats,
    /// Whole-run counts for the conservation check.
    pub total_arrived: u64,
    /// Whole-run drops.
    pub total_dropped: u64,
    /// Whole-run packets that started transmission.
    pub total_started: u64,
    /// Buffer violations seen (must stay 0; set from the FIFO's count by [`Link::finish`]).
    pub buffer_violations: u64,
}

/// What happened to an arriving packet.
pub enum Outcome {
    /// It leaves the link and reaches the next node at this time.
    Forward(Time),
    /// It waits in a real queue; a later event sends it.
    Queued,
    /// It was dropped.
    Dropped,
}

impl FqPacket for Packet {
    fn flow_id(&self) -> u32 {
        self.flow
    }
    fn size_bytes(&self) -> u32 {
        self.size
    }
    fn ecn(&self) -> aqm::Ecn {
        Packet::ecn(self)
    }
    fn set_ce(&mut self) {
        self.flags |= CE;
    }
    /// ACKs (and an address resolution's reply) travel the flow's reverse direction (per-host
    /// fairness swaps its hosts).
    fn reverse(&self) -> bool {
        use crate::packet::Kind;
        self.kind == Kind::Ack || (self.kind == Kind::Resolve && self.seq == 1)
    }
}

impl FifoPacket for Packet {
    #[inline]
    fn meta(&self) -> PacketMeta {
        Packet::meta(self)
    }
}

/// One link.
pub struct Link {
    /// Name for reports.
    pub name: String,
    /// Upstream node.
    pub from: usize,
    /// Downstream node.
    pub to: usize,
    /// Rate, bit/s (a link whose capacity varies: its mean offered rate, for the AQM's
    /// conversions).
    pub rate_bps: u64,
    /// The clock of a link whose capacity varies (rate schedule or trace, `crate::rate`);
    /// `None`: the fixed `rate_bps` ([`Link::tx_ns`]).
    pub clock: Option<Box<VarClock>>,
    /// The event log (`[output] events`), when asked for.
    pub events: Option<Box<EventLog>>,
    /// The packet-trace tap (`[output] pcap`), when asked for.
    pub pcap: Option<Box<crate::pcap::PcapTap>>,
    /// Propagation delay, ns.
    pub delay_ns: Time,
    /// The AQM-guarded FIFO (its AQM `None`: DropTail) with the queue's length; a scheduler's
    /// link uses only its length and random stream.
    fifo: Fifo<Packet>,
    /// A queue discipline that stores the packets itself (`fq_codel`, ...): replaces the FIFO
    /// and the AQM.
    pub sched: Option<Box<SchedQueue>>,
    /// The wake-up scheduled for a scheduler's held-back packet.
    wake_at: Option<Time>,
    /// Stored packets and transmission events (the AQM has a dequeue hook).
    pub real: bool,
    /// Processed as soon as its single upstream delivers, possibly ahead of the clock.
    pub chained: bool,
    /// Reported in the summary with its time series.
    pub monitor: bool,
    // Lazy FIFO: start times and sizes of waiting packets.
    waiting: VecDeque<(Time, u32)>,
    busy: bool,
    busy_until: Time,
    // Time charged beyond the exact transmission times so far, ns x bit/s (< rate).
    tx_owed: u64,
    tx_owed_before: u64,
    /// Counters.
    pub stats: LinkStats,
    /// Time series (monitored links).
    pub series: Option<Series>,
    /// Queueing delays binned by the time their transmission started, ns (monitored links).
    pub delay_series: Option<crate::series::BinSeries>,
    warmup: Time,
    end: Time,
}

impl Link {
    /// A link; `aqm` `None` means DropTail.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        from: usize,
        to: usize,
        rate_bps: u64,
        delay_ns: Time,
        buffer: Buffer,
        aqm: Option<Box<dyn Aqm>>,
        rng: AqmRng,
        monitor: bool,
        warmup: Time,
        end: Time,
        sample_interval: Time,
        max_samples: usize,
    ) -> Self {
        let real = aqm.as_ref().is_some_and(|a| a.wants_dequeue());
        let series = monitor
            .then(|| qdisc::sample::queue_series(aqm.as_deref(), sample_interval, max_samples));
        Link {
            name,
            from,
            to,
            rate_bps,
            clock: None,
            events: None,
            pcap: None,
            delay_ns,
            fifo: Fifo::new(aqm, rng, buffer, warmup, end),
            sched: None,
            wake_at: None,
            real,
            chained: false,
            monitor,
            waiting: VecDeque::new(),
            busy: false,
            busy_until: 0,
            tx_owed: 0,
            tx_owed_before: 0,
            stats: LinkStats::default(),
            series,
            delay_series: monitor
                .then(|| crate::series::BinSeries::new(sample_interval, max_samples)),
            warmup,
            end,
        }
    }

    /// The AQM guarding the FIFO (`None`: DropTail, or a queue discipline).
    pub fn aqm(&self) -> Option<&dyn Aqm> {
        self.fifo.aqm()
    }

    /// Replaces the AQM guarding the FIFO (before the run starts).
    pub fn set_aqm(&mut self, aqm: Option<Box<dyn Aqm>>) {
        self.fifo.set_aqm(aqm);
    }

    /// The buffer.
    pub fn buffer(&self) -> Buffer {
        self.fifo.buffer()
    }

    /// Transmission time of the next `size` bytes sent, whole ns. Each time is rounded up and the
    /// excess carried to the next packet, so the link's busy time after n packets is the exact
    /// time of their bits rounded up to a whole ns: it never serves faster than its rate (issue
    /// 13 item 14), and never slower by 1 ns or more in total.
    #[inline]
    pub fn tx_ns(&mut self, size: u32) -> Time {
        let need = size as u64 * 8 * NS_PER_SEC; // ns x bit/s
        self.tx_owed_before = self.tx_owed;
        if need <= self.tx_owed {
            self.tx_owed -= need;
            return 0;
        }
        let t = (need - self.tx_owed).div_ceil(self.rate_bps);
        self.tx_owed = self.tx_owed + t * self.rate_bps - need;
        t
    }

    /// A packet of `size` bytes may start at `ready`: when its transmission starts and ends
    /// (a fixed rate starts it at once; a trace at its next delivery opportunity).
    #[inline]
    fn depart(&mut self, ready: Time, size: u32) -> (Time, Time) {
        match self.clock.as_deref_mut() {
            None => (ready, ready + self.tx_ns(size)),
            Some(c) => c.serve(ready, size),
        }
    }

    /// Real queue of a trace-driven link: when its idle transmitter can next start (the next
    /// delivery opportunity), if that is after `t`. The transmitter is then held busy until
    /// that time, when a transmission-done event starts the head packet: the queue is served
    /// only at opportunities, so the AQM's dequeue decision sees the sojourn at that instant.
    pub fn defer_start(&mut self, t: Time) -> Option<Time> {
        let at = self.clock.as_deref_mut()?.next_start(t);
        if at > t {
            self.busy = true;
            Some(at)
        } else {
            None
        }
    }

    /// Logs an event of a packet of `flow` that arrived at `arrival`, with the queue length now.
    #[inline]
    fn log(&mut self, t: Time, kind: EventKind, cause: Cause, flow: u32, arrival: Time, size: u32) {
        let ev = self.events.as_deref_mut();
        self.fifo.log(ev, t, kind, cause, flow, arrival, size);
    }

    /// Packets waiting now.
    pub fn len_pkts(&self) -> u32 {
        self.fifo.len_pkts()
    }

    /// Since when the transmitter has been idle at `t` (`None`: busy): the end of the last
    /// transmission.
    #[inline]
    fn tx_idle(&self, t: Time) -> Option<Time> {
        (!self.busy && self.busy_until <= t).then_some(self.busy_until)
    }

    /// The queue as an AQM sees it at `t` (after `sync(t)`).
    #[inline]
    pub fn view(&self, t: Time) -> QueueView {
        self.fifo.view(self.tx_idle(t))
    }

    /// Records every sample instant strictly before `t` with the state held until now.
    #[inline]
    pub fn touch(&mut self, t: Time) {
        self.fifo.touch(t, self.series.as_mut());
    }

    /// The queue length changes at `at` by `dpkts` packets and `dbytes` bytes.
    #[inline]
    fn change(&mut self, at: Time, dpkts: i32, dbytes: i64) {
        self.fifo.change(at, dpkts, dbytes, books!(self));
    }

    /// Lazy FIFO: retires the waiting packets whose transmission starts at or before `t`.
    #[inline]
    pub fn sync(&mut self, t: Time) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > t {
                break;
            }
            self.waiting.pop_front();
            self.stats.total_started += 1;
            self.change(start, -1, -(size as i64));
            if let Some((flow, arrival)) = self.events.as_mut().and_then(|e| e.pending.pop_front())
            {
                self.log(start, EventKind::Dequeue, Cause::None, flow, arrival, size);
            }
        }
    }

    #[inline]
    fn in_window(&self, t: Time) -> bool {
        self.fifo.in_window(t)
    }

    fn record_delay(&mut self, start: Time, arrival: Time) {
        if let Some(ds) = self.delay_series.as_mut().filter(|_| start <= self.end) {
            ds.add(start, (start - arrival) as f64);
        }
        if self.in_window(start) {
            self.stats.win.delay(start - arrival);
        }
    }

    /// Counts the part of a transmission inside the window. The packet occupies the link over
    /// its exact interval (the whole-ns one shifted back by the carried excess of [`Link::tx_ns`]),
    /// so the bytes counted in any window never exceed rate x window.
    fn record_tx(&mut self, start: Time, end_tx: Time, size: u32) {
        if self.clock.is_some() {
            // A varying capacity: the bytes spread evenly over the transmission (a trace's
            // packet sent at one opportunity counts at that instant).
            if end_tx == start {
                if self.in_window(start) {
                    self.stats.win.tx_bytes += size as f64;
                }
                return;
            }
            let (s, e) = (start as f64, end_tx as f64);
            let lo = s.max(self.warmup as f64);
            let hi = e.min(self.end as f64);
            if hi > lo {
                self.stats.win.tx_bytes += size as f64 * (hi - lo) / (e - s);
            }
            return;
        }
        // Nothing carried and the whole transmission inside the window (the usual case): the
        // share below is size x d / d with d = end_tx - start a whole number of ns, both
        // products exact in f64 (under 2^53), so it is `size` exactly; added without the
        // conversions and the division, the same sum.
        if self.tx_owed_before == 0
            && self.tx_owed == 0
            && end_tx > start
            && start >= self.warmup
            && end_tx <= self.end
        {
            self.stats.win.tx_bytes += size as f64;
            return;
        }
        // Nothing carried (the usual case: a whole number of ns per packet) subtracts 0 / r = 0
        // exactly: the divisions are spared, the result is the same.
        let shifted = |t: Time, owed: u64| {
            if owed == 0 {
                t as f64
            } else {
                t as f64 - owed as f64 / self.rate_bps as f64
            }
        };
        let s = shifted(start, self.tx_owed_before);
        let e = shifted(end_tx, self.tx_owed);
        let lo = s.max(self.warmup as f64);
        let hi = e.min(self.end as f64);
        if hi > lo && e > s {
            self.stats.win.tx_bytes += size as f64 * (hi - lo) / (e - s);
        }
    }

    /// A packet arrives at `t`. Lazy FIFO links forward it at once (its departure is known);
    /// real queues hold it until `start_next` sends it. `verdict_out` receives the admitting
    /// verdict (Throttle matters to the caller).
    #[inline]
    pub fn arrive(&mut self, pkt: &mut Packet, t: Time, verdict_out: &mut Verdict) -> Outcome {
        if self.sched.is_some() {
            return self.arrive_sched(pkt, t);
        }
        if self.real {
            self.stats.total_arrived += 1;
            pkt.enq_time = t;
            let tx_idle = self.tx_idle(t);
            let Some(v) = self.fifo.enqueue(*pkt, t, tx_idle, books!(self)) else {
                self.stats.total_dropped += 1;
                return Outcome::Dropped;
            };
            *verdict_out = v;
            return Outcome::Queued;
        }
        self.sync(t);
        self.stats.total_arrived += 1;
        let tx_idle = self.tx_idle(t);
        let Some(v) = self.fifo.admit_passing(pkt, t, tx_idle, books!(self)) else {
            self.stats.total_dropped += 1;
            return Outcome::Dropped;
        };
        *verdict_out = v;
        let (start, end_tx) = self.depart(t.max(self.busy_until), pkt.size);
        self.busy_until = end_tx;
        if start > t {
            self.waiting.push_back((start, pkt.size));
            self.change(t, 1, pkt.size as i64);
            if let Some(ev) = self.events.as_deref_mut() {
                ev.pending.push_back((pkt.flow, t));
                self.log(t, EventKind::Enqueue, Cause::None, pkt.flow, t, pkt.size);
            }
            self.fifo.check_buffer();
        } else {
            self.stats.total_started += 1;
            if self.events.is_some() {
                self.log(t, EventKind::Enqueue, Cause::None, pkt.flow, t, pkt.size);
                self.log(t, EventKind::Dequeue, Cause::None, pkt.flow, t, pkt.size);
            }
        }
        self.record_delay(start, t);
        self.record_tx(start, end_tx, pkt.size);
        if let Some(p) = self.pcap.as_deref_mut() {
            p.write(pkt, end_tx);
        }
        Outcome::Forward(end_tx + self.delay_ns)
    }

    /// A queue discipline takes the packet; it may drop it or push out others (an overlimit
    /// drop counts as an overflow, e.g. FQ-CoDel's fattest-flow drop, RFC 8290 s. 4.1).
    fn arrive_sched(&mut self, pkt: &mut Packet, t: Time) -> Outcome {
        self.touch(t);
        self.stats.total_arrived += 1;
        let inw = self.in_window(t);
        let (lp, lb) = (self.fifo.len_pkts(), self.fifo.len_bytes());
        self.stats.win.arrival(inw, lp, pkt.size);
        pkt.enq_time = t;
        let ticket = self.stats.win.book.arrive(inw);
        let sched = self.sched.as_mut().expect("scheduler link");
        let stats = &mut self.stats;
        let mut ev = self.events.as_deref_mut();
        // Each drop is placed by its own arrival.
        sched.enqueue(
            Tagged::new(*pkt, ticket),
            t,
            &mut self.fifo.rng,
            &mut |d, why| {
                record_drop(stats, d.ticket, why == SchedDrop::Aqm);
                let cause = Cause::of_sched(why, false);
                log_drop(ev.as_deref_mut(), t, cause, &d.pkt, (lp, lb));
            },
        );
        let (np, nb) = (sched.len_pkts(), sched.len_bytes());
        self.fifo.set_len(t, np, nb, books!(self));
        self.log(t, EventKind::Enqueue, Cause::None, pkt.flow, t, pkt.size);
        Outcome::Queued
    }

    /// Data packets sent at or after `since` waiting in the FIFO of a real queue, by flow.
    pub fn queued_per_flow(&self, since: Time) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = Vec::new();
        for h in self.fifo.iter() {
            let p = &h.pkt;
            if p.kind == crate::packet::Kind::Data && p.ts >= since {
                out.push((p.flow, 1));
            }
        }
        out
    }

    /// Real queue: whether the transmitter is idle with packets waiting.
    pub fn can_start(&self) -> bool {
        self.real
            && !self.busy
            && (self.fifo.stored() > 0 || self.sched.as_ref().is_some_and(|s| !s.is_empty()))
    }

    /// Real queue with a scheduler that held its next packet back (a shaper): the time to try
    /// again, once per wait (the caller schedules one wake-up for it).
    pub fn sched_wait(&mut self) -> Option<Time> {
        let w = self.sched.as_ref()?.next_update()?;
        if self.wake_at == Some(w) {
            return None;
        }
        self.wake_at = Some(w);
        Some(w)
    }

    /// The scheduler's wait is over at `t`.
    pub fn sched_wake(&mut self, t: Time) {
        self.wake_at = None;
        if let Some(s) = self.sched.as_mut() {
            s.update(t, &mut self.fifo.rng);
        }
    }

    /// Real queue: the transmitter finished at `t`.
    pub fn tx_done(&mut self, t: Time) {
        self.busy = false;
        self.busy_until = t;
    }

    /// Real queue: the next packet to send at `t` from the queue discipline (its drops and
    /// marks counted and logged), if any.
    fn dequeue_sched(&mut self, t: Time) -> Option<Packet> {
        let sched = self.sched.as_mut()?;
        let stats = &mut self.stats;
        let (lp, lb) = (self.fifo.len_pkts(), self.fifo.len_bytes());
        let mut ev = self.events.as_deref_mut();
        let out = sched.dequeue(t, &mut self.fifo.rng, &mut |d, why| {
            record_drop(stats, d.ticket, why == SchedDrop::Aqm);
            let cause = Cause::of_sched(why, true);
            log_drop(ev.as_deref_mut(), t, cause, &d.pkt, (lp, lb));
        });
        let (np, nb) = (sched.len_pkts(), sched.len_bytes());
        self.fifo.set_len(t, np, nb, books!(self));
        let tagged = out?;
        let pkt = tagged.pkt;
        qdisc::verdict::count_fq_mark(tagged.marked, tagged.ticket, &mut self.stats.win);
        let (f, a, z) = (pkt.flow, pkt.enq_time, pkt.size);
        if tagged.marked {
            self.log(t, EventKind::Mark, Cause::None, f, a, z);
        }
        self.log(t, EventKind::Dequeue, Cause::None, f, a, z);
        self.stats.win.book.settle(tagged.ticket, false);
        Some(pkt)
    }

    /// Real queue: takes head packets, letting the AQM drop at the head, until one is sent.
    /// Returns it with its arrival time at the next node and the time its transmission ends.
    pub fn start_next(&mut self, t: Time) -> Option<(Packet, Time, Time)> {
        let pkt = if self.sched.is_some() {
            self.dequeue_sched(t)?
        } else {
            let tx_idle = self.tx_idle(t);
            let (out, drops) = self.fifo.dequeue(t, tx_idle, books!(self));
            self.stats.total_dropped += drops;
            out?.pkt
        };
        self.stats.total_started += 1;
        self.busy = true;
        let end_tx = self.depart(t, pkt.size).1;
        self.busy_until = end_tx;
        self.record_delay(t, pkt.enq_time);
        self.record_tx(t, end_tx, pkt.size);
        if let Some(p) = self.pcap.as_deref_mut() {
            p.write(&pkt, end_tx);
        }
        Some((pkt, end_tx + self.delay_ns, end_tx))
    }

    /// Runs the AQM's periodic update at `t`; returns when it wants the next one.
    pub fn aqm_update(&mut self, t: Time) -> Option<Time> {
        if !self.real {
            self.sync(t);
        }
        self.touch(t);
        if let Some(s) = self.sched.as_mut() {
            // A scheduler's periodic update (e.g. fq_pie's PIE on every queue).
            s.update(t, &mut self.fifo.rng);
            return s.next_update();
        }
        let tx_idle = self.tx_idle(t);
        self.fifo.update(t, tx_idle, self.series.as_mut())
    }

    /// Packets stored now (conservation: lazy FIFOs store none, their packets travel as events).
    pub fn stored(&self) -> usize {
        self.fifo.stored() + self.sched.as_ref().map_or(0, |s| s.len_pkts() as usize)
    }

    /// Brings counters and series up to the end of the run.
    pub fn finish(&mut self, end: Time) {
        if !self.real {
            self.sync(end);
        }
        self.change(end, 0, 0);
        self.touch(end + 1);
        if let Some(ds) = &mut self.delay_series {
            ds.cover(end);
        }
        self.stats.buffer_violations = self.fifo.buffer_violations;
    }

    /// The measurement window's invariants at the end (docs/metrics.md): `0 <= loss_runs <=
    /// dropped <= arrived` (`loss_runs >= 1` when something was dropped), the same arrivals
    /// counted by the book and by the counters, and window arrivals = sent + dropped + still
    /// queued. `None` when they hold.
    pub fn window_violation(&self) -> Option<String> {
        let s = &self.stats;
        let b = &s.win.book;
        let mut held = self.fifo.iter().filter(|h| h.ticket.in_window()).count();
        if let Some(s) = &self.sched {
            s.for_each_packet(&mut |p| held += p.ticket.in_window() as usize);
        }
        if b.arrived != s.win.arrived || b.dropped != s.win.dropped_aqm + s.win.dropped_overflow {
            return Some(format!(
                "link {}: window book (arrived {}, dropped {}) != counters (arrived {}, dropped {})",
                self.name,
                b.arrived,
                b.dropped,
                s.win.arrived,
                s.win.dropped_aqm + s.win.dropped_overflow
            ));
        }
        b.check(held as u64)
            .map(|e| format!("link {}: {e}", self.name))
    }

    /// Packets waiting at the end (lazy FIFO bookkeeping).
    pub fn waiting_at_end(&self) -> usize {
        self.waiting.len() + self.stored()
    }

    /// The name of what guards the queue.
    pub fn aqm_name(&self) -> &'static str {
        if let Some(s) = &self.sched {
            s.name()
        } else {
            self.fifo.aqm().map_or("droptail", |a| a.name())
        }
    }

    /// The counters of the AQM or queue discipline.
    pub fn aqm_stats(&self) -> Vec<(&'static str, f64)> {
        match (&self.sched, self.fifo.aqm()) {
            (Some(s), _) => s.stats(),
            (None, Some(a)) => a.stats(),
            _ => Vec::new(),
        }
    }
}

/// Logs a drop inside FQ-CoDel (the queue `q` as it was before the call).
#[inline]
fn log_drop(ev: Option<&mut EventLog>, t: Time, cause: Cause, p: &Packet, q: (u32, u64)) {
    if let Some(e) = ev {
        e.push(
            t,
            EventKind::Drop,
            cause,
            p.flow,
            p.enq_time,
            p.size,
            q.0,
            q.1,
        );
    }
}

/// Counts a drop; `ticket` places the packet in the window by its arrival.
#[inline]
fn record_drop(stats: &mut LinkStats, ticket: Ticket, aqm_drop: bool) {
    stats.total_dropped += 1;
    stats.win.drop(ticket, aqm_drop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(size: u32) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            size,
            hop: 0,
            kind: Kind::Data,
            flags: 0,
            precedence: aqm::Precedence::Out,
            ts: 0,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        }
    }

    #[test]
    fn bursts_make_the_arrival_seen_queue_exceed_the_time_average() {
        // 125 B at 1 Gb/s: tau = 1 us per packet. Bursts of 5 every 100 us for 10 periods.
        // Per burst, arrivals see 0 (goes straight to the wire), 0, 1, 2, 3 waiting: mean 1.2.
        // Waiting packets over a period: 4 for tau, 3, 2, 1: integral 10 tau per 100 tau: 0.1.
        let period = 100_000;
        let end = 10 * period;
        let mut l = Link::new(
            "l".into(),
            0,
            1,
            1_000_000_000,
            0,
            Buffer::Packets(100),
            None,
            aqm::rng_from_seed(1),
            true,
            0,
            end,
            10_000,
            1000,
        );
        for k in 0..10 {
            for _ in 0..5 {
                let mut v = Verdict::Admit;
                assert!(matches!(
                    l.arrive(&mut pkt(125), k * period, &mut v),
                    Outcome::Forward(_)
                ));
            }
        }
        l.finish(end);
        let s = &l.stats;
        assert_eq!(s.win.arrived, 50);
        assert!((s.win.seen_sum / s.win.arrived as f64 - 1.2).abs() < 1e-12);
        assert!(
            (s.win.q_int / end as f64 - 0.1).abs() < 1e-12,
            "{}",
            s.win.q_int / end as f64
        );
        // Queueing delays: 0, 1, 2, 3, 4 us per burst: mean 2 us; jitter over consecutive
        // packets: |1|*4 within a burst, |0-4| = 4 across bursts: (40 + 9 * 4) / 49.
        assert!((s.win.delay_sum_ns / s.win.delay_n as f64 - 2000.0).abs() < 1e-9);
        assert!((s.win.delay_absdiff_sum / 49.0 - 76_000.0 / 49.0).abs() < 1e-9);
        assert_eq!(s.total_arrived, s.total_started);
        // Samples every 10 us: the one at a burst instant sees the 4 waiting packets.
        let ser = l.series.as_ref().unwrap();
        assert_eq!(ser.cols[0][10], 4.0);
        assert_eq!(ser.cols[0][11], 0.0);
    }
    /// A test AQM that keeps a real queue (it has a dequeue hook) and drops on arrival by a
    /// two-state Gilbert-Elliott chain: from Good to Bad with probability `p` per arrival, from
    /// Bad to Good with `r`; every arrival in Bad is dropped. `r = 1 - p` makes the drops
    /// independent with probability `p`. `head_drop_all` drops every packet at the head instead.
    #[derive(Debug)]
    struct Gilbert {
        p: f64,
        r: f64,
        bad: bool,
        head_drop_all: bool,
    }

    impl Aqm for Gilbert {
        fn name(&self) -> &'static str {
            "gilbert"
        }
        fn enqueue(
            &mut self,
            _pkt: &aqm::PacketMeta,
            _q: &QueueView,
            _now: Time,
            rng: &mut AqmRng,
        ) -> Verdict {
            use rand::Rng;
            let u: f64 = rng.random();
            self.bad = if self.bad { u >= self.r } else { u < self.p };
            if self.bad && !self.head_drop_all {
                Verdict::Drop
            } else {
                Verdict::Admit
            }
        }
        fn wants_dequeue(&self) -> bool {
            true
        }
        fn dequeue(
            &mut self,
            _pkt: &aqm::PacketMeta,
            _sojourn: Time,
            _q: &QueueView,
            _now: Time,
            _rng: &mut AqmRng,
        ) -> Verdict {
            if self.head_drop_all {
                Verdict::Drop
            } else {
                Verdict::Admit
            }
        }
    }

    fn real_link(aqm: Gilbert, warmup: Time, end: Time) -> Link {
        Link::new(
            "l".into(),
            0,
            1,
            12_000_000, // 1500 B take 1 ms
            0,
            Buffer::Packets(10_000_000),
            Some(Box::new(aqm)),
            aqm::rng_from_seed(7),
            false,
            warmup,
            end,
            1_000_000,
            100,
        )
    }

    /// Drives a real-queue link with Poisson arrivals of 1500 B at `load` times its rate until
    /// `end`: transmissions start when the previous one ends, so departures fall between arrivals.
    fn drive(l: &mut Link, load: f64, end: Time) {
        use rand_distr::{Distribution, Exp};
        let mut rng = aqm::rng_from_seed(11);
        let gap = Exp::new(load / 1e6).unwrap(); // mean 1 ms / load, in ns
        let mut next_arrival = 0.0f64;
        let mut done: Option<Time> = None;
        loop {
            let ta = next_arrival as Time;
            if let Some(td) = done.filter(|&td| td <= ta) {
                l.tx_done(td);
                done = l.start_next(td).map(|(_, _, e)| e);
                continue;
            }
            if ta > end {
                break;
            }
            let mut v = Verdict::Admit;
            l.arrive(&mut pkt(1500), ta, &mut v);
            if done.is_none() && l.can_start() {
                done = l.start_next(ta).map(|(_, _, e)| e);
            }
            next_arrival += gap.sample(&mut rng);
        }
        l.finish(end);
    }

    fn burst_ratio(s: &LinkStats) -> f64 {
        let (a, d, r) = (
            s.win.arrived as f64,
            s.win.book.dropped as f64,
            s.win.book.runs as f64,
        );
        (d / r) * (1.0 - d / a)
    }

    #[test]
    fn independent_drops_on_a_queue_that_keeps_packets_give_burst_ratio_one() {
        // Issue 19: with the runs split at each departure, 25% independent drops on a queue
        // at load 1.3 gave B ~ 0.88. Counted in arrival order B = 1; for Bernoulli losses over n
        // arrivals sd(B) ~ 1/sqrt(n) (docs/metrics.md): n ~ 520,000, so 5 sd ~ 0.007.
        let end = 400 * NS_PER_SEC;
        let g = Gilbert {
            p: 0.25,
            r: 0.75,
            bad: false,
            head_drop_all: false,
        };
        let mut l = real_link(g, NS_PER_SEC, end);
        drive(&mut l, 1.3, end);
        let s = &l.stats;
        let n = s.win.arrived as f64;
        assert!(n > 400_000.0);
        let b = burst_ratio(s);
        assert!(
            (b - 1.0).abs() < 5.0 / n.sqrt(),
            "B = {b} over {n} arrivals"
        );
        assert!(l.window_violation().is_none(), "{:?}", l.window_violation());
    }

    #[test]
    fn gilbert_elliott_drops_give_burst_ratio_one_over_p_plus_r() {
        // Loss runs are the Bad sojourns, geometric with mean 1/r; L = p/(p+r); so
        // B = (1/r)(1 - L) = 1/(p + r). p = 0.05, r = 0.3: B = 2.857. Runs ~ n p (1 - L)
        // ~ 22,000, run-length sd sqrt(1 - r)/r = 2.79: sd(B) ~ 2.79 / sqrt(22,000) * (1 - L)
        // ~ 0.016; tolerance 0.08 (5 sd).
        let end = 400 * NS_PER_SEC;
        let (p, r) = (0.05, 0.3);
        let g = Gilbert {
            p,
            r,
            bad: false,
            head_drop_all: false,
        };
        let mut l = real_link(g, NS_PER_SEC, end);
        drive(&mut l, 1.3, end);
        let b = burst_ratio(&l.stats);
        assert!(
            (b - 1.0 / (p + r)).abs() < 0.08,
            "B = {b}, want {}",
            1.0 / (p + r)
        );
        let loss = l.stats.win.book.dropped as f64 / l.stats.win.arrived as f64;
        assert!((loss - p / (p + r)).abs() < 0.01, "L = {loss}");
        assert!(l.window_violation().is_none(), "{:?}", l.window_violation());
    }

    #[test]
    fn head_drops_after_the_warm_up_of_packets_that_arrived_before_it_are_not_counted() {
        // Issue 19 ("dropped must be <= arrived"): 20 packets arrive before the warm-up at 1 s
        // and one after; every packet is dropped at the head. Only the one that arrived in the
        // window counts: arrived 1, dropped 1, one run.
        let g = Gilbert {
            p: 0.0,
            r: 1.0,
            bad: false,
            head_drop_all: true,
        };
        let end = 2 * NS_PER_SEC;
        let mut l = real_link(g, NS_PER_SEC, end);
        for i in 0..20 {
            let mut v = Verdict::Admit;
            l.arrive(&mut pkt(1500), i, &mut v);
        }
        let mut v = Verdict::Admit;
        l.arrive(&mut pkt(1500), NS_PER_SEC + 5, &mut v);
        assert!(
            l.start_next(NS_PER_SEC + 10).is_none(),
            "every packet is dropped"
        );
        l.finish(end);
        let s = &l.stats;
        assert_eq!(
            (s.win.arrived, s.win.dropped_aqm, s.win.book.runs),
            (1, 1, 1)
        );
        assert_eq!(s.total_dropped, 21);
        assert!(l.window_violation().is_none(), "{:?}", l.window_violation());
    }

    #[test]
    fn a_loss_run_spanning_the_window_start_is_counted_once() {
        // Issue 19 (dropfn table = [1]): every packet dropped on arrival, before and after the
        // warm-up. The window's loss indicator is all 1s: one run (it was 0 runs before).
        let g = Gilbert {
            p: 1.0,
            r: 0.0,
            bad: false,
            head_drop_all: false,
        };
        let end = 2 * NS_PER_SEC;
        let mut l = real_link(g, NS_PER_SEC, end);
        for i in 0..40 {
            let mut v = Verdict::Admit;
            l.arrive(&mut pkt(1500), i * NS_PER_SEC / 20, &mut v);
        }
        l.finish(end);
        let s = &l.stats;
        assert_eq!(
            (s.win.arrived, s.win.dropped_aqm, s.win.book.runs),
            (20, 20, 1)
        );
        assert!(l.window_violation().is_none(), "{:?}", l.window_violation());
    }
}
