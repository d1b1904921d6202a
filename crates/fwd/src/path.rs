//! One direction of the forwarder: delay lines (a one-way delay per source/destination pair) in
//! front of a bottleneck queue guarded by a `crates/aqm` algorithm and served by a departure clock.
//!
//! Time is the forwarder's monotonic clock in ns. Every frame carries its arrival time at the
//! forwarder; it joins the queue at `arrival + delay` and its transmission starts at
//! `max(join, end of the previous transmission)` and lasts `8 * size / rate` (the serialisation
//! time of the frame: a departure clock, not a token bucket). The frame is handed to the
//! output interface when its transmission ends. Events are processed in time order up to the
//! wall-clock instant the caller gives, so late wake-ups delay the hand-over but never change the
//! schedule, and the long-run departure rate is the configured one.
//!
//! The queue is the layer's AQM-guarded FIFO (`qdisc::fifo::Fifo`, the simulator's queue type) run
//! on the clock since the forwarder's start; this file keeps the delay lines, the departure clock,
//! the frames and the whole-run counters.
//!
//! The statistics follow the simulator's definitions (docs/metrics.md): queue length counts waiting
//! frames (not the one on the wire), queueing delay is join to start of transmission, window
//! counts start at the warm-up.

use crate::frame::{self, Ipv4, Transport};
use crate::throttle::FlowKey;
use aqm::fq_codel::FqPacket;
use aqm::params::Buffer;
use aqm::{Aqm, AqmRng, PacketMeta, Time, Verdict, NS_PER_SEC};
use qdisc::events::{Cause, EventKind, EventLog};
use qdisc::fifo::{Books, Fifo, FifoPacket};
use qdisc::rate::VarClock;
use qdisc::sample::queue_series;
use qdisc::sched::{SchedDrop, Scheduler};
use qdisc::series::Series;
use qdisc::summary::LinkSummary;
use qdisc::{Tagged, Ticket, WindowStats};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A frame inside the forwarder.
#[derive(Debug)]
pub struct Frame {
    /// The bytes, as received.
    pub buf: Vec<u8>,
    /// The parsed IPv4 header, when there is one.
    pub ip: Option<Ipv4>,
    /// What the AQM sees.
    pub meta: PacketMeta,
    /// When it joins the queue (arrival + delay), ns.
    pub join: Time,
    /// Its arrival in the measurement window (set when it joins the queue).
    pub ticket: Ticket,
}

impl FqPacket for Frame {
    fn flow_id(&self) -> u32 {
        self.meta.flow
    }
    fn size_bytes(&self) -> u32 {
        self.buf.len() as u32
    }
    fn ecn(&self) -> aqm::Ecn {
        self.meta.ecn
    }
    /// Sets CE in the IPv4 header (checksum fixed) of an ECN-capable frame, and in what the
    /// AQM and the queue discipline see of it (`meta.ecn`, the parsed header): a marked frame
    /// reads back as CE, as the simulator's packets do.
    fn set_ce(&mut self) {
        if let Some(ip) = self.ip.as_mut() {
            if frame::mark_ce(&mut self.buf, ip) {
                ip.ecn = frame::ECN_CE;
                self.meta.ecn = aqm::Ecn::Ce;
            }
        }
    }
    /// The IPv4 source and destination (per-host fairness, CAKE).
    fn hosts(&self) -> Option<(u32, u32)> {
        self.ip.as_ref().map(|ip| (ip.src, ip.dst))
    }
}

impl FifoPacket for Frame {
    #[inline]
    fn meta(&self) -> PacketMeta {
        self.meta
    }
}

/// The books a FIFO call writes to: the direction's window counters, series and event log.
macro_rules! books {
    ($s:ident) => {
        &mut Books {
            win: &mut $s.stats,
            series: Some(&mut $s.series),
            events: $s.events.as_deref_mut(),
        }
    };
}

/// Counters of one direction over the whole run, for the conservation check
/// `received = sent + dropped + in_system`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Conservation {
    /// Frames handed to this direction.
    pub received: u64,
    /// Frames handed to the output interface.
    pub sent: u64,
    /// Frames dropped by the AQM or on overflow.
    pub dropped: u64,
}

/// The settings of one direction.
#[derive(Clone, Debug)]
pub struct PathConfig {
    /// Name in the summary (`bottleneck`, `reverse`).
    pub name: String,
    /// Departure rate, bit/s.
    pub rate_bps: u64,
    /// Buffer of the queue.
    pub buffer: Buffer,
    /// Delay for frames of pairs not listed (ARP, unknown hosts), ns.
    pub default_delay: Time,
    /// One-way delay by (source, destination) IPv4 address, ns.
    pub delays: HashMap<(u32, u32), Time>,
    /// Measurement window start, ns since the forwarder's start.
    pub warmup: Time,
    /// The engine runs this far behind the wall clock (so frames the ring hands over late are
    /// still in time order); delays are shortened by it, so frames leave on time. The smallest
    /// one-way delay the forwarder can apply is this lag.
    pub lag: Time,
    /// Interval of the time series, ns.
    pub sample_interval: Time,
    /// Bound on the points per series.
    pub max_samples: usize,
}

/// One direction: delay lines, queue, departure clock, statistics.
#[derive(Debug)]
pub struct Path {
    cfg: PathConfig,
    lines: BTreeMap<Time, VecDeque<Frame>>,
    /// The AQM-guarded FIFO (`qdisc::fifo`, the simulator's queue type) on the clock since
    /// `start`, with the queue's length; a queue discipline's direction uses only its length and
    /// random stream.
    fifo: Fifo<Frame>,
    /// A queue discipline (`fq_codel`, ...) holds the frames instead of the FIFO when set.
    sched: Option<Box<dyn Scheduler<Tagged<Frame>>>>,
    on_wire: Option<(Frame, Time)>,
    /// A capacity that varies (rate schedule or mahimahi trace, `qdisc::rate`), in ns since
    /// `start`; `None`: the fixed `rate_bps`.
    var: Option<Box<VarClock>>,
    /// A trace's next delivery opportunity, when the head waits for it.
    hold: Option<Time>,
    /// The packet-trace tap (`[output] pcap`): frames as they leave.
    pcap: Option<Box<FramePcap>>,
    /// The event log (`[output] events`, `qdisc::events`): enqueues, dequeues, drops and marks
    /// with times in ns since `start`.
    events: Option<Box<EventLog>>,
    /// Why the event log stopped (a write error): the log is then incomplete.
    pub events_error: Option<String>,
    idle_since: Time,
    clock: Time,
    start: Time,
    flows: HashMap<FlowKey, u32>,
    /// Window statistics (from the warm-up on), as the simulator keeps them (`crates/qdisc`).
    stats: WindowStats,
    series: Series,
    /// Whole-run counters.
    pub totals: Conservation,
}

fn flow_key(ip: &Ipv4) -> FlowKey {
    match ip.l4 {
        Transport::Tcp { sport, dport, .. } | Transport::Udp { sport, dport } => {
            (ip.src, ip.dst, sport, dport)
        }
        Transport::None => (ip.src, ip.dst, 0, 0),
    }
}

impl Path {
    /// A direction starting at `start` (the forwarder's clock at start-up).
    pub fn new(cfg: PathConfig, aqm: Box<dyn Aqm>, rng: AqmRng, start: Time) -> Self {
        let series = queue_series(Some(aqm.as_ref()), cfg.sample_interval, cfg.max_samples);
        let fifo = Fifo::new(Some(aqm), rng, cfg.buffer, cfg.warmup, Time::MAX);
        Path {
            cfg,
            lines: BTreeMap::new(),
            fifo,
            sched: None,
            on_wire: None,
            var: None,
            hold: None,
            pcap: None,
            events: None,
            events_error: None,
            idle_since: start,
            clock: start,
            start,
            flows: HashMap::new(),
            stats: WindowStats::default(),
            series,
            totals: Conservation::default(),
        }
    }

    /// This direction with a queue discipline (e.g. FQ-CoDel, RFC 8290) holding the frames in
    /// place of the single queue and its AQM.
    pub fn with_scheduler(mut self, sched: Box<dyn Scheduler<Tagged<Frame>>>) -> Self {
        self.sched = Some(sched);
        self.fifo.set_aqm(None);
        self.series = queue_series(None, self.cfg.sample_interval, self.cfg.max_samples);
        self
    }

    /// This direction with a capacity that varies (the same serving rules as the simulator's
    /// links, `qdisc::rate`, on the forwarder's clock from its start).
    pub fn with_clock(mut self, clock: VarClock) -> Self {
        self.var = Some(Box::new(clock));
        self
    }

    /// This direction writing the frames it sends to a pcap file at `path` (Ethernet link type,
    /// nanosecond timestamps: each frame's departure time, since the forwarder's start).
    pub fn with_pcap(mut self, path: &str) -> Result<Self, String> {
        self.pcap = Some(Box::new(FramePcap::create(path)?));
        Ok(self)
    }

    /// This direction writing its event log to `path` (`qdisc::events`: the simulator's records;
    /// times and arrivals in ns since the forwarder's start, the arrival being the frame's join
    /// time at the queue, after its delay line).
    pub fn with_events(mut self, path: &str) -> Result<Self, String> {
        self.events = Some(Box::new(EventLog::create(path)?));
        Ok(self)
    }

    /// The event log's flows in index order (`flow` of its records): index 0 is every non-IPv4
    /// frame, then each IPv4 5-tuple `src:sport>dst:dport` as it first appeared (`None`: no log).
    pub fn event_flows(&self) -> Option<Vec<String>> {
        if self.events.is_none() && self.events_error.is_none() {
            return None;
        }
        let mut names = vec![String::new(); self.flows.len() + 1];
        names[0] = "non-IPv4".into();
        for (&(src, dst, sp, dp), &i) in &self.flows {
            let (a, b) = (std::net::Ipv4Addr::from(src), std::net::Ipv4Addr::from(dst));
            names[i as usize] = format!("{a}:{sp}>{b}:{dp}");
        }
        Some(names)
    }

    /// Records written to the event log so far (`None`: no log).
    pub fn event_rows(&self) -> Option<u64> {
        self.events.as_ref().map(|e| e.rows)
    }

    /// Logs an event at `t` of frame `f` (its flow, join time and size), with the queue now.
    #[inline]
    fn log(&mut self, t: Time, kind: EventKind, cause: Cause, f: &Frame) {
        let (p, b, s) = (self.fifo.len_pkts(), self.fifo.len_bytes(), self.start);
        log_event(self.events.as_deref_mut(), s, t, kind, cause, f, (p, b));
    }

    /// The end of a transmission of `bytes` that starts at `t` (a trace's opportunity: see
    /// [`Path::wait_for_opportunity`]).
    /// A trace's opportunities carry 1500 bytes of IP packets (`qdisc::rate::TRACE_MTU`): a
    /// frame counts without its Ethernet header there; a schedule clocks whole frames, as the
    /// fixed rate does.
    fn tx_end(&mut self, t: Time, bytes: usize) -> Time {
        match self.var.as_deref_mut() {
            None => t + self.tx_ns(bytes),
            Some(c) => {
                let size = match c {
                    VarClock::Trace(_) => bytes.saturating_sub(frame::ETH_HLEN).max(1),
                    VarClock::Schedule(_) => bytes,
                };
                self.start + c.serve(t - self.start, size as u32).1
            }
        }
    }

    /// A trace-driven direction serves its queue only at delivery opportunities: `true` when the
    /// head must wait for the next one (then held in `hold`).
    fn wait_for_opportunity(&mut self, t: Time) -> bool {
        if self.hold.is_some() {
            return true;
        }
        let queued = self
            .sched
            .as_ref()
            .map_or(self.fifo.stored() > 0, |f| !f.is_empty());
        let start = self.start;
        let Some(c) = self.var.as_deref_mut().filter(|_| queued) else {
            return false;
        };
        let at = start + c.next_start(t - start);
        if at > t {
            self.hold = Some(at);
            return true;
        }
        false
    }

    /// The direction's name (`bottleneck`, `reverse`).
    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    /// The AQM's name.
    pub fn aqm_name(&self) -> &'static str {
        if let Some(s) = &self.sched {
            s.name()
        } else {
            self.fifo.aqm().map_or("droptail", |a| a.name())
        }
    }

    fn aqm_stats(&self) -> Vec<(&'static str, f64)> {
        match &self.sched {
            Some(s) => s.stats(),
            None => self.fifo.aqm().map_or_else(Vec::new, |a| a.stats()),
        }
    }

    /// Frames inside this direction now (delay lines, queue, on the wire).
    pub fn in_system(&self) -> u64 {
        let lines: usize = self.lines.values().map(VecDeque::len).sum();
        lines as u64 + self.fifo.len_pkts() as u64 + u64::from(self.on_wire.is_some())
    }

    /// The flow index of a frame (assigned in order of first appearance; 0 for non-IPv4).
    fn flow_of(&mut self, ip: Option<&Ipv4>) -> u32 {
        let Some(ip) = ip else { return 0 };
        let n = self.flows.len() as u32 + 1;
        *self.flows.entry(flow_key(ip)).or_insert(n)
    }

    /// A frame arrived from the input interface at `at`.
    pub fn receive(&mut self, buf: Vec<u8>, ip: Option<Ipv4>, at: Time) {
        self.totals.received += 1;
        let delay = ip
            .and_then(|p| self.cfg.delays.get(&(p.src, p.dst)).copied())
            .unwrap_or(self.cfg.default_delay);
        let meta = PacketMeta {
            flow: self.flow_of(ip.as_ref()),
            size_bytes: buf.len() as u32,
            ecn: ip.map_or(aqm::Ecn::NotEct, |p| aqm::Ecn::from_bits(p.ecn)),
            precedence: aqm::Precedence::Out,
        };
        let f = Frame {
            buf,
            ip,
            meta,
            join: at + delay.saturating_sub(self.cfg.lag),
            ticket: Ticket::OUTSIDE,
        };
        self.lines.entry(delay).or_default().push_back(f);
    }

    /// The next instant something happens inside (a frame joins the queue, a transmission ends,
    /// the AQM's periodic update), or `None`.
    pub fn next_event(&self) -> Option<Time> {
        let join = self
            .lines
            .values()
            .filter_map(|l| l.front().map(|f| f.join))
            .min();
        let wire = self.on_wire.as_ref().map(|(_, end)| *end).or(self.hold);
        let update = match &self.sched {
            Some(s) => s.next_update().map(|u| u + self.start),
            None => self.fifo.next_update().map(|u| u + self.start),
        };
        [join, wire, update].into_iter().flatten().min()
    }

    /// Since when the transmitter has been idle at `t`, on the clock since `start` (`None`: a
    /// frame is on the wire): the last time the queue was found empty.
    fn tx_idle(&self, t: Time) -> Option<Time> {
        self.on_wire
            .is_none()
            .then(|| self.idle_since.min(t) - self.start)
    }

    fn in_window(&self, t: Time) -> bool {
        self.fifo.in_window(t - self.start)
    }

    /// The queue becomes `pkts` frames and `bytes` bytes at `at` (`qdisc::fifo::Fifo::set_len`).
    fn set_len(&mut self, at: Time, pkts: u32, bytes: u64) {
        let rel = at - self.start;
        self.fifo.set_len(rel, pkts, bytes, books!(self));
    }

    /// Frames whose queue exceeded the configured buffer after admission (must stay 0).
    pub fn buffer_violations(&self) -> u64 {
        self.fifo.buffer_violations
    }

    /// A frame joins the queue at `t`; returns the AQM's verdict when the frame was admitted.
    fn join(&mut self, mut f: Frame, t: Time) -> Option<Verdict> {
        f.join = t;
        if self.sched.is_some() {
            let inw = self.in_window(t);
            f.ticket = self.stats.book.arrive(inw);
            let lp = self.fifo.len_pkts();
            self.stats.arrival(inw, lp, f.meta.size_bytes);
            self.join_sched(f, t);
            return None;
        }
        let (rel, tx_idle) = (t - self.start, self.tx_idle(t));
        let v = self.fifo.enqueue(f, rel, tx_idle, books!(self));
        self.totals.dropped += u64::from(v.is_none());
        v
    }

    /// A frame joins the queue discipline at `t`; frames it drops (e.g. FQ-CoDel's fattest-flow
    /// drops over its limit, RFC 8290 s. 4.1, counted as overflow drops) are counted as the
    /// simulator counts them.
    fn join_sched(&mut self, f: Frame, t: Time) {
        let rel = t - self.start;
        let (lp, lb, start) = (self.fifo.len_pkts(), self.fifo.len_bytes(), self.start);
        let (flow, size) = (f.meta.flow, f.buf.len() as u32);
        let sched = self.sched.as_mut().expect("scheduler direction");
        let (totals, stats) = (&mut self.totals, &mut self.stats);
        let mut ev = self.events.as_deref_mut();
        let ticket = f.ticket;
        sched.enqueue(
            Tagged::new(f, ticket),
            rel,
            &mut self.fifo.rng,
            &mut |d, why| {
                let ev = ev.as_deref_mut();
                sched_drop(totals, stats, ev, (start, t), (lp, lb), &d, why, false);
            },
        );
        let (np, nb) = (sched.len_pkts(), sched.len_bytes());
        self.set_len(t, np, nb);
        // As the simulator logs it: the enqueue after the discipline's own drops, if any.
        if let Some(e) = self.events.as_deref_mut() {
            let (kind, none) = (EventKind::Enqueue, Cause::None);
            e.push(t - start, kind, none, flow, rel, size, np, nb);
        }
    }

    /// The queue discipline's next frame at `t` (head drops and marks counted), if any.
    fn dequeue_sched(&mut self, t: Time) -> Option<Frame> {
        let rel = t - self.start;
        let (lp, lb, start) = (self.fifo.len_pkts(), self.fifo.len_bytes(), self.start);
        let sched = self.sched.as_mut().expect("scheduler direction");
        let (totals, stats) = (&mut self.totals, &mut self.stats);
        let mut ev = self.events.as_deref_mut();
        let out = sched.dequeue(rel, &mut self.fifo.rng, &mut |d, why| {
            let ev = ev.as_deref_mut();
            sched_drop(totals, stats, ev, (start, t), (lp, lb), &d, why, true);
        });
        let (np, nb) = (sched.len_pkts(), sched.len_bytes());
        self.set_len(t, np, nb);
        let tagged = out?;
        qdisc::verdict::count_fq_mark(tagged.marked, tagged.ticket, &mut self.stats);
        if tagged.marked {
            self.log(t, EventKind::Mark, Cause::None, &tagged.pkt);
        }
        self.log(t, EventKind::Dequeue, Cause::None, &tagged.pkt);
        Some(tagged.pkt)
    }

    /// Serialisation time of `bytes` at the configured rate, ns.
    pub fn tx_ns(&self, bytes: usize) -> Time {
        (bytes as u128 * 8 * NS_PER_SEC as u128 / self.cfg.rate_bps as u128) as Time
    }

    fn record_sojourn(&mut self, sojourn: Time, t: Time) {
        if self.in_window(t) {
            self.stats.delay(sojourn);
        }
    }

    /// Starts the next transmission at `t` when the wire is free (head drops by the AQM's
    /// dequeue verdict happen here).
    fn start_next(&mut self, t: Time) {
        while self.on_wire.is_none() {
            if self.wait_for_opportunity(t) {
                return;
            }
            if self.sched.is_some() {
                let Some(f) = self.dequeue_sched(t) else {
                    self.idle_since = t;
                    return;
                };
                self.stats.book.settle(f.ticket, false);
                self.record_sojourn(t - f.join, t);
                let end = self.tx_end(t, f.buf.len());
                self.on_wire = Some((f, end));
                return;
            }
            // Head drops by the AQM's dequeue verdict happen in the FIFO.
            let (rel, tx_idle) = (t - self.start, self.tx_idle(t));
            let (out, drops) = self.fifo.dequeue(rel, tx_idle, books!(self));
            self.totals.dropped += drops;
            let Some(h) = out else {
                self.idle_since = t;
                return;
            };
            self.record_sojourn(rel - h.arrival, t);
            let f = h.pkt;
            let end = self.tx_end(t, f.buf.len());
            self.on_wire = Some((f, end));
        }
    }

    /// Runs every event up to `now`; frames whose transmission ended are appended to `out`.
    /// `verdicts` receives the admitted frames' flow keys with their verdict (for ModRED's
    /// throttle table).
    pub fn advance(
        &mut self,
        now: Time,
        out: &mut Vec<Frame>,
        verdicts: &mut Vec<(FlowKey, Verdict)>,
    ) {
        while let Some(te) = self.next_event().filter(|&t| t <= now) {
            // A frame read late from the ring may carry a join time before events already
            // processed: it joins now (the engine's clock never goes back).
            let t = te.max(self.clock);
            self.clock = t;
            if let Some((f, end)) = self.on_wire.take_if(|(_, end)| *end <= t) {
                self.totals.sent += 1;
                if self.in_window(end) {
                    // (a trace's opportunity can come sooner than a frame's time at the mean rate)
                    let begin = end.saturating_sub(self.tx_ns(f.buf.len()));
                    let w0 = self.start + self.cfg.warmup;
                    let frac = if begin >= w0 || self.var.is_some() {
                        1.0
                    } else {
                        (end - w0) as f64 / (end - begin).max(1) as f64
                    };
                    // A trace's capacity is in IP bytes: its frames count without their
                    // Ethernet header, so the utilisation compares like with like.
                    let bytes = match self.var.as_deref() {
                        Some(VarClock::Trace(_)) => f.buf.len().saturating_sub(frame::ETH_HLEN),
                        _ => f.buf.len(),
                    };
                    self.stats.tx_bytes += bytes as f64 * frac;
                }
                if let Some(p) = self.pcap.as_deref_mut() {
                    p.write(&f.buf, end - self.start);
                }
                out.push(f);
                self.start_next(t);
                continue;
            }
            if self.hold.is_some_and(|h| h <= t) {
                // A trace's delivery opportunity: the head may go now.
                self.hold = None;
                self.start_next(t);
                continue;
            }
            if let Some(s) = self.sched.as_mut() {
                if let Some(u) = s.next_update().filter(|&u| u + self.start <= t) {
                    s.update(u, &mut self.fifo.rng);
                    // A shaper's wait may be what ended (CAKE): the wire may start again.
                    self.start_next(t);
                    continue;
                }
            } else if let Some(u) = self.fifo.next_update().filter(|&u| u + self.start <= t) {
                let tx_idle = self.tx_idle(t);
                self.fifo.update(u, tx_idle, Some(&mut self.series));
                continue;
            }
            let key = self
                .lines
                .iter()
                .filter_map(|(k, l)| l.front().map(|f| (f.join, *k)))
                .min()
                .map(|(_, k)| k)
                .expect("an event at t comes from a delay line");
            let line = self.lines.get_mut(&key).expect("line exists");
            let f = line.pop_front().expect("non-empty line");
            if line.is_empty() {
                self.lines.remove(&key);
            }
            let fk = f.ip.as_ref().map(flow_key);
            if let Some(v) = self.join(f, t) {
                if let Some(k) = fk {
                    verdicts.push((k, v));
                }
            }
            self.start_next(t);
        }
        self.clock = self.clock.max(now);
    }

    /// The summary of this direction at `now` (statistics over [warm-up, now]).
    pub fn summary(&mut self, now: Time) -> LinkSummary {
        self.set_len(now, self.fifo.len_pkts(), self.fifo.len_bytes());
        if let Some(p) = self.pcap.as_deref_mut() {
            p.flush(); // the trace is complete up to every summary (the last one included)
        }
        if let Some(e) = self.events.as_deref_mut() {
            // The log is complete up to every summary; a write error is said once and the
            // log stops there (`EventLog::close` keeps the first one).
            if let Err(err) = e.close() {
                eprintln!("aqmlab-fwd: events: {err}; the log stops there");
                self.events = None;
                self.events_error = Some(err);
            }
        }
        let w0 = self.start + self.cfg.warmup;
        let window = now.saturating_sub(w0).max(1) as f64;
        // A varying capacity: the capacity offered over the window.
        let rate = self.var.as_ref().map_or(self.cfg.rate_bps, |c| {
            let (lo, hi) = (w0 - self.start, now.saturating_sub(self.start));
            (c.offered_bits(lo, hi) / (window / NS_PER_SEC as f64)).round() as u64
        });
        let mut s = self.stats.summary(
            self.cfg.name.clone(),
            self.aqm_name().to_string(),
            rate,
            window,
            self.aqm_stats(),
        );
        s.capacity = self.var.as_ref().map(|c| c.kind());
        s
    }

    /// The time series recorded so far (times relative to the start, ns).
    pub fn series(&self) -> &Series {
        &self.series
    }
}

/// Logs an event at `t` (the forwarder's clock; written relative to `start`) of frame `f`: its
/// flow, join time (its arrival at the queue) and size, with the queue `q` (packets, bytes).
#[inline]
fn log_event(
    ev: Option<&mut EventLog>,
    start: Time,
    t: Time,
    kind: EventKind,
    cause: Cause,
    f: &Frame,
    q: (u32, u64),
) {
    if let Some(e) = ev {
        let (flow, size) = (f.meta.flow, f.buf.len() as u32);
        e.push(t - start, kind, cause, flow, f.join - start, size, q.0, q.1);
    }
}

/// Counts and logs a frame a queue discipline dropped (`at_head`: in its dequeue) at `at.1`
/// (the forwarder's clock started at `at.0`), with the queue `q` as it was before the call.
#[allow(clippy::too_many_arguments)]
fn sched_drop(
    totals: &mut Conservation,
    stats: &mut WindowStats,
    ev: Option<&mut EventLog>,
    at: (Time, Time),
    q: (u32, u64),
    d: &Tagged<Frame>,
    why: SchedDrop,
    at_head: bool,
) {
    record_drop(totals, stats, d.ticket, why == SchedDrop::Aqm);
    let cause = Cause::of_sched(why, at_head);
    log_event(ev, at.0, at.1, EventKind::Drop, cause, &d.pkt, q);
}

/// Counts a drop; `ticket` places the frame in the window by its arrival.
fn record_drop(totals: &mut Conservation, stats: &mut WindowStats, ticket: Ticket, by_aqm: bool) {
    totals.dropped += 1;
    stats.drop(ticket, by_aqm);
}

/// The file under a [`FramePcap`]: shared with its `PcapWriter`, so the tap can flush it (the
/// writer has no flush of its own).
#[derive(Clone)]
struct SharedFile(std::sync::Arc<std::sync::Mutex<std::io::BufWriter<std::fs::File>>>);

impl std::io::Write for SharedFile {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("pcap file lock").write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().expect("pcap file lock").flush()
    }
}

/// A pcap file of the frames a direction sends (`pcap-file`; the frames are written as they are).
pub struct FramePcap {
    w: pcap_file::pcap::PcapWriter<SharedFile>,
    file: SharedFile,
    path: String,
    /// The first write error (the tap stops; said once on stderr at the next summary).
    pub error: Option<String>,
    reported: bool,
    /// Frames written.
    pub frames: u64,
}

impl std::fmt::Debug for FramePcap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FramePcap({}, {} frames)", self.path, self.frames)
    }
}

impl FramePcap {
    fn create(path: &str) -> Result<Self, String> {
        use pcap_file::{pcap::PcapHeader, DataLink, Endianness, TsResolution};
        let f = std::fs::File::create(path).map_err(|e| format!("cannot create {path}: {e}"))?;
        let file = SharedFile(std::sync::Arc::new(std::sync::Mutex::new(
            std::io::BufWriter::with_capacity(1 << 20, f),
        )));
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let w = pcap_file::pcap::PcapWriter::with_header(file.clone(), header)
            .map_err(|e| format!("writing {path}: {e}"))?;
        Ok(FramePcap {
            w,
            file,
            path: path.to_string(),
            error: None,
            reported: false,
            frames: 0,
        })
    }

    fn write(&mut self, frame: &[u8], t: Time) {
        if self.error.is_some() {
            return;
        }
        let ts = std::time::Duration::from_nanos(t);
        let rec = pcap_file::pcap::PcapPacket::new(ts, frame.len() as u32, frame);
        match self.w.write_packet(&rec) {
            Ok(_) => self.frames += 1,
            Err(e) => self.error = Some(format!("writing {}: {e}", self.path)),
        }
    }

    fn flush(&mut self) {
        use std::io::Write;
        if let Err(e) = self.file.flush() {
            self.error
                .get_or_insert(format!("writing {}: {e}", self.path));
        }
        if let Some(e) = self.error.as_ref().filter(|_| !self.reported) {
            eprintln!("aqmlab-fwd: pcap: {e}; the trace stops there");
            self.reported = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::{LinkContext, ParamMap};

    /// The settings of a test direction and what its AQM is told of the link.
    fn settings(rate: u64, buf: u32, delays: &[((u32, u32), Time)]) -> (PathConfig, LinkContext) {
        let cfg = PathConfig {
            name: "bottleneck".into(),
            rate_bps: rate,
            buffer: Buffer::Packets(buf),
            default_delay: 0,
            delays: delays.iter().copied().collect(),
            warmup: 0,
            lag: 0,
            sample_interval: 1_000_000,
            max_samples: 1000,
        };
        let ctx = LinkContext {
            rate_bps: rate,
            buffer: cfg.buffer,
            mean_pkt_bytes: 1500,
        };
        (cfg, ctx)
    }

    fn path(aqm: &str, rate: u64, buf: u32, delays: &[((u32, u32), Time)]) -> Path {
        let (cfg, ctx) = settings(rate, buf, delays);
        let a = aqm::build(aqm, &ParamMap::new(), &ctx).unwrap();
        Path::new(cfg, a, aqm::rng_from_seed(1), 1_000)
    }

    fn ipv4(src: u32, dst: u32, len: usize) -> (Vec<u8>, Ipv4) {
        let mut b = vec![0u8; len];
        b[12] = 0x08;
        b[14] = 0x45;
        b[15] = 0x02; // ECT(0)
        b[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
        b[23] = 17;
        b[26..30].copy_from_slice(&src.to_be_bytes());
        b[30..34].copy_from_slice(&dst.to_be_bytes());
        let c = frame::ipv4_checksum(&b[14..34]);
        b[24..26].copy_from_slice(&c.to_be_bytes());
        let p = frame::parse(&b).unwrap();
        (b, p)
    }

    #[test]
    fn departure_clock_spaces_frames_by_serialisation_time_after_the_delay() {
        // 12 Mb/s: a 1500-byte frame takes exactly 1 ms. Delay 5 ms for pair (1, 2).
        let mut p = path("droptail", 12_000_000, 100, &[((1, 2), 5_000_000)]);
        for _ in 0..10 {
            let (b, ip) = ipv4(1, 2, 1500);
            p.receive(b, Some(ip), 1_000);
        }
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(1_000 + 5_000_000 + 999_999, &mut out, &mut v);
        assert!(
            out.is_empty(),
            "nothing leaves before join + one serialisation time"
        );
        let mut ends = Vec::new();
        for k in 1..=10u64 {
            p.advance(1_000 + 5_000_000 + k * 1_000_000, &mut out, &mut v);
            ends.push(out.len());
        }
        assert_eq!(ends, (1..=10).collect::<Vec<_>>());
        assert_eq!(p.totals.sent, 10);
        assert_eq!(
            p.totals.received,
            p.totals.sent + p.totals.dropped + p.in_system()
        );
        let s = p.summary(1_000 + 5_000_000 + 10_000_000);
        // Queue: 9, 8, ... 0 waiting for 1 ms each over a 15 ms window = 45/15 = 3 packets.
        assert!(
            (s.queue_mean_pkts - 3.0).abs() < 1e-6,
            "{}",
            s.queue_mean_pkts
        );
        assert_eq!(s.queue_max_pkts, 9);
        // Waits 0..9 ms, mean 4.5 ms.
        assert!((s.delay_mean_s - 4.5e-3).abs() < 1e-9);
    }

    #[test]
    fn a_trace_serves_the_queue_only_at_its_opportunities() {
        // The ten-line trace of qdisc::rate's tests: opportunities at 1, 1, 2, 4, 4, 4, 7, 8, 9,
        // 10 ms from the path's start. Six 1514-byte frames (1500-byte IP packets) arrive at
        // the start with no delay: one per opportunity, so they leave at 1, 1, 2, 4, 4, 4 ms.
        let trace = qdisc::rate::Trace::new(vec![1, 1, 2, 4, 4, 4, 7, 8, 9, 10]).unwrap();
        let mut p = path("codel", 12_000_000, 100, &[]).with_clock(VarClock::Trace(trace));
        for _ in 0..6 {
            let (b, ip) = ipv4(1, 2, 1514);
            p.receive(b, Some(ip), 1_000);
        }
        let (mut out, mut v) = (Vec::new(), Vec::new());
        let mut seen = Vec::new();
        for ms in 0..=5u64 {
            p.advance(1_000 + ms * 1_000_000, &mut out, &mut v);
            seen.push(out.len());
        }
        assert_eq!(seen, vec![0, 2, 3, 3, 6, 6]);
        assert_eq!(p.totals.sent, 6);
        // Offered over [0, 10 ms]: the ten opportunities of 12,000 bits over 10 ms = 12 Mb/s.
        let s = p.summary(1_000 + 10_000_000);
        assert_eq!(s.capacity, Some("trace"));
        assert_eq!(s.rate_bps, 12_000_000);
    }

    #[test]
    fn overflow_drops_and_conservation_hold() {
        let mut p = path("droptail", 1_000_000, 5, &[]);
        for i in 0..20 {
            let (b, ip) = ipv4(1, 2, 100);
            p.receive(b, Some(ip), 1_000 + i);
        }
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(2_000, &mut out, &mut v);
        // One on the wire, 5 waiting, 14 overflowed.
        assert_eq!((p.totals.dropped, p.in_system()), (14, 6));
        assert_eq!(
            p.totals.received,
            p.totals.sent + p.totals.dropped + p.in_system()
        );
        assert_eq!(p.buffer_violations(), 0);
        let s = p.summary(2_000);
        assert_eq!((s.dropped_overflow, s.loss_runs), (14, 1));
    }

    #[test]
    fn per_pair_delays_reorder_departures_by_join_time() {
        let mut p = path(
            "droptail",
            1_000_000_000,
            100,
            &[((1, 2), 10_000_000), ((3, 2), 1_000_000)],
        );
        let (a, ia) = ipv4(1, 2, 100);
        let (b, ib) = ipv4(3, 2, 100);
        p.receive(a, Some(ia), 1_000);
        p.receive(b, Some(ib), 2_000);
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(20_000_000, &mut out, &mut v);
        let srcs: Vec<u32> = out.iter().map(|f| f.ip.unwrap().src).collect();
        assert_eq!(srcs, vec![3, 1]);
    }

    #[test]
    fn a_frame_read_late_joins_at_the_engine_clock_never_in_the_past() {
        // 12 Mb/s: 1500 B take 1 ms. Frame A departs at 1 ms; frame B, stamped 0.5 ms but read
        // at 5 ms (after A's departure was processed), joins at 5 ms and ends at 6 ms.
        let mut p = path("droptail", 12_000_000, 100, &[]);
        let (mut out, mut v) = (Vec::new(), Vec::new());
        let (a, ia) = ipv4(1, 2, 1500);
        p.receive(a, Some(ia), 1_000);
        p.advance(5_000_000, &mut out, &mut v);
        assert_eq!(out.len(), 1);
        let (b, ib) = ipv4(1, 2, 1500);
        p.receive(b, Some(ib), 500_000);
        p.advance(5_999_999, &mut out, &mut v);
        assert_eq!(out.len(), 1, "B cannot use link time that already passed");
        p.advance(6_000_000, &mut out, &mut v);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn dualpi2_step_marks_l4s_frames_in_their_ipv4_headers() {
        // 12 Mb/s: a 1500-byte frame takes 1 ms. Ten ECT(1) frames join the L queue at once and
        // one ECT(0) frame the C queue; DualPI2's step marks the L frames that waited more than
        // 1 ms (RFC 9332's native L4S AQM) by setting CE in the IPv4 header, checksum fixed
        // (RFC 1624); p' is 0 (no update before 16 ms), so the classic frame keeps ECT(0).
        let (cfg, ctx) = settings(12_000_000, 1000, &[]);
        let sched = qdisc::sched::build("dualpi2", &ParamMap::new(), &ctx)
            .unwrap()
            .unwrap();
        let dt = aqm::build("droptail", &ParamMap::new(), &ctx).unwrap();
        let mut p = Path::new(cfg, dt, aqm::rng_from_seed(1), 0).with_scheduler(sched);
        let with_tos = |src: u32, ecn: u8| {
            let (mut b, _) = ipv4(src, 2, 1500);
            b[15] = ecn;
            b[24..26].copy_from_slice(&[0, 0]);
            let c = frame::ipv4_checksum(&b[14..34]);
            b[24..26].copy_from_slice(&c.to_be_bytes());
            let ip = frame::parse(&b).unwrap();
            (b, ip)
        };
        for _ in 0..10 {
            let (b, ip) = with_tos(1, 0b01);
            p.receive(b, Some(ip), 0);
        }
        let (b, ip) = with_tos(3, 0b10);
        p.receive(b, Some(ip), 0);
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(15_000_000, &mut out, &mut v);
        assert_eq!(out.len(), 11);
        let mut ce = 0;
        for f in &out {
            let q = frame::parse(&f.buf).unwrap();
            let stored = u16::from_be_bytes([f.buf[24], f.buf[25]]);
            assert_eq!(stored, frame::ipv4_checksum(&f.buf[14..34]), "checksum");
            match (q.src, aqm::Ecn::from_bits(q.ecn)) {
                (1, aqm::Ecn::Ce) => ce += 1,
                (1, aqm::Ecn::Ect1) => {}
                (3, aqm::Ecn::Ect0) => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        // The first L frames leave within 1 ms of their arrival; the later ones waited longer.
        assert!((7..=9).contains(&ce), "{ce} L frames marked");
        let stats = p.summary(15_000_000).aqm_stats;
        assert_eq!(stats["marks_l_step"], ce as f64);
        assert_eq!((stats["arrived_l"], stats["arrived_c"]), (10.0, 1.0));
    }

    #[test]
    fn fq_codel_serves_a_new_thin_flow_before_a_fat_backlog() {
        // RFC 8290 s. 4.2: a queue that becomes active goes on the new-flow list and is served
        // before the old ones. 50 frames of flow (1, 2) wait; one frame of (3, 2) arrives later.
        let (cfg, ctx) = settings(12_000_000, 1000, &[]);
        let fq = qdisc::sched::build("fq_codel", &ParamMap::new(), &ctx)
            .unwrap()
            .unwrap();
        let dt = aqm::build("droptail", &ParamMap::new(), &ctx).unwrap();
        let mut p = Path::new(cfg, dt, aqm::rng_from_seed(1), 0).with_scheduler(fq);
        for _ in 0..50 {
            let (b, ip) = ipv4(1, 2, 1500);
            p.receive(b, Some(ip), 0);
        }
        let (b, ip) = ipv4(3, 2, 1500);
        p.receive(b, Some(ip), 2_500_000);
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(100_000_000, &mut out, &mut v);
        assert_eq!(out.len(), 51);
        let pos = out.iter().position(|f| f.ip.unwrap().src == 3).unwrap();
        assert!(pos <= 4, "the thin flow's frame left at position {pos}");
        assert_eq!(p.aqm_name(), "fq_codel");
        assert_eq!(
            p.totals.received,
            p.totals.sent + p.totals.dropped + p.in_system()
        );
    }

    /// A temporary file path for an event log.
    fn log_path(name: &str) -> String {
        let dir = std::env::temp_dir().join(format!("fwd-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name).to_str().unwrap().to_string()
    }

    /// Replays a single queue's log: times never go back; each enqueue adds its frame to the
    /// queue and each dequeue or drop at the head removes it, so the replayed queue equals each
    /// record's `queue_pkts`/`queue_bytes` (after the event; a drop on arrival leaves it as it
    /// was). A mark is followed by its frame's enqueue (marked on arrival: the queue before it
    /// joins) or dequeue (marked at the head: the queue after it left), as the simulator logs
    /// them. Returns the counts by kind: enqueue, dequeue, drop, mark.
    fn replay(recs: &[qdisc::events::Record]) -> [u64; 4] {
        let (mut q, mut qb, mut last, mut n) = (0i64, 0i64, 0, [0u64; 4]);
        for (i, r) in recs.iter().enumerate() {
            assert!(r.t >= last, "time went back: {r:?}");
            assert!(r.arrival <= r.t, "{r:?}");
            last = r.t;
            n[r.kind as usize] += 1;
            let mut want = match (r.kind, r.cause) {
                (0, _) => (q + 1, qb + r.size as i64),
                (1, _) | (2, 3) => (q - 1, qb - r.size as i64),
                _ => (q, qb),
            };
            if r.kind == 3 {
                let nx = recs[i + 1];
                assert_eq!((nx.t, nx.flow, nx.arrival), (r.t, r.flow, r.arrival));
                if nx.kind == 1 {
                    want = (q - 1, qb - r.size as i64);
                } else {
                    assert_eq!(nx.kind, 0, "{nx:?}");
                }
            } else {
                (q, qb) = want;
            }
            let got = (r.queue_pkts as i64, r.queue_bytes as i64);
            assert_eq!(got, want, "{r:?}");
        }
        n
    }

    #[test]
    fn the_event_log_of_an_overflowing_droptail_queue_matches_its_counters() {
        // 1 Mb/s, 5 frames of buffer: of 20 frames at once one starts, 5 wait, 14 overflow.
        let path = log_path("droptail.bin");
        let mut p = path_of("droptail", 1_000_000, 5)
            .with_events(&path)
            .unwrap();
        for i in 0..20 {
            let (b, ip) = ipv4(1, 2, 100);
            p.receive(b, Some(ip), 1_000 + i);
        }
        let (mut out, mut v) = (Vec::new(), Vec::new());
        p.advance(1_000_000_000, &mut out, &mut v);
        let s = p.summary(1_000_000_000);
        let recs = qdisc::events::read_records(&path).unwrap();
        let n = replay(&recs);
        assert_eq!(n, [6, 6, 14, 0]);
        assert_eq!((p.totals.dropped, p.totals.sent), (14, 6));
        assert_eq!(s.dropped_overflow, 14);
        assert!(recs.iter().filter(|r| r.kind == 2).all(|r| r.cause == 2));
        // Frames join at their arrival (no delay); the first starts at once, then every 800 us.
        assert_eq!((recs[0].t, recs[0].kind, recs[1].kind), (0, 0, 1));
        let deq: Vec<u64> = recs.iter().filter(|r| r.kind == 1).map(|r| r.t).collect();
        assert_eq!(
            deq,
            vec![0, 800_000, 1_600_000, 2_400_000, 3_200_000, 4_000_000]
        );
        assert_eq!(
            p.event_flows().unwrap(),
            vec!["non-IPv4", "0.0.0.1:0>0.0.0.2:0"]
        );
        assert!(recs.iter().all(|r| r.flow == 1 && r.size == 100));
    }

    /// A direction with `aqm` (its defaults, ECN as given), a packet buffer, no delays.
    fn path_of(aqm: &str, rate: u64, buf: u32) -> Path {
        path_ecn(aqm, rate, buf, false)
    }

    fn path_ecn(aqm: &str, rate: u64, buf: u32, ecn: bool) -> Path {
        let (cfg, ctx) = settings(rate, buf, &[]);
        let mut params = ParamMap::new();
        if ecn {
            params.insert("ecn".into(), aqm::params::ParamValue::Bool(true));
        }
        let start = 1_000;
        match qdisc::sched::build(
            aqm,
            &qdisc::sched::with_link_defaults(params.clone(), cfg.buffer),
            &ctx,
        ) {
            Some(sched) => {
                let dt = aqm::build("droptail", &ParamMap::new(), &ctx).unwrap();
                Path::new(cfg, dt, aqm::rng_from_seed(1), start).with_scheduler(sched.unwrap())
            }
            None => {
                let a = aqm::build(aqm, &params, &ctx).unwrap();
                Path::new(cfg, a, aqm::rng_from_seed(1), start)
            }
        }
    }

    /// 400 ECT(0) frames of 1500 bytes at 24 Mb/s into a 12 Mb/s direction (twice its rate,
    /// for 200 ms), then 300 ms to drain.
    fn overload(p: &mut Path) -> Vec<Frame> {
        let (mut out, mut v) = (Vec::new(), Vec::new());
        for i in 0..400u64 {
            let (b, ip) = ipv4(1 + (i % 3) as u32, 9, 1500);
            let at = 1_000 + i * 500_000;
            p.advance(at, &mut out, &mut v);
            p.receive(b, Some(ip), at);
        }
        p.advance(1_000 + 500_000_000, &mut out, &mut v);
        out
    }

    #[test]
    fn the_event_log_of_codel_with_ecn_counts_its_marks_and_head_drops() {
        // CoDel marks ECT(0) frames at the head (RFC 8289 s. 5.5, ECN on); without ECN it drops
        // them there. Each mark row is a frame that left with CE; drop rows are the counters'.
        for ecn in [true, false] {
            let path = log_path(&format!("codel-{ecn}.bin"));
            let mut p = path_ecn("codel", 12_000_000, 1000, ecn)
                .with_events(&path)
                .unwrap();
            let out = overload(&mut p);
            let s = p.summary(1_000 + 500_000_000);
            let recs = qdisc::events::read_records(&path).unwrap();
            let n = replay(&recs);
            let ce = out.iter().filter(|f| f.meta.ecn == aqm::Ecn::Ce).count() as u64;
            let ce_bytes = out
                .iter()
                .filter(|f| frame::parse(&f.buf).unwrap().ecn == frame::ECN_CE)
                .count() as u64;
            assert_eq!(ce, ce_bytes, "what the AQM sees agrees with the header");
            assert_eq!(n[0], 400, "every frame was admitted");
            assert_eq!(n[1], p.totals.sent, "all sent by the end");
            assert_eq!(n[2], p.totals.dropped);
            assert_eq!((n[3], s.marked), (ce, ce));
            assert_eq!(s.dropped_aqm, n[2]);
            if ecn {
                assert!(ce >= 3 && n[2] == 0, "marks {ce}, drops {}", n[2]);
            } else {
                assert!(ce == 0 && n[2] >= 3, "marks {ce}, drops {}", n[2]);
                assert!(recs.iter().filter(|r| r.kind == 2).all(|r| r.cause == 3));
            }
            assert_eq!(
                p.totals.received,
                p.totals.sent + p.totals.dropped + p.in_system()
            );
        }
    }

    #[test]
    fn the_event_log_of_fq_codel_replays_its_queue() {
        // A queue discipline: drops and marks inside it are logged with the queue before the
        // call, so the replay checks enqueues and dequeues only and counts the rest.
        let path = log_path("fq_codel.bin");
        let mut p = path_ecn("fq_codel", 12_000_000, 1000, true)
            .with_events(&path)
            .unwrap();
        let out = overload(&mut p);
        let s = p.summary(1_000 + 500_000_000);
        let recs = qdisc::events::read_records(&path).unwrap();
        let mut n = [0u64; 4];
        let mut last = 0;
        for r in &recs {
            assert!(r.t >= last);
            last = r.t;
            n[r.kind as usize] += 1;
        }
        let ce = out.iter().filter(|f| f.meta.ecn == aqm::Ecn::Ce).count() as u64;
        assert_eq!((n[0], n[1], n[2]), (400, p.totals.sent, p.totals.dropped));
        assert_eq!((n[3], s.marked), (ce, ce));
        assert!(ce > 0);
    }

    #[test]
    fn set_ce_marks_the_header_and_what_the_aqm_sees() {
        let (b, ip) = ipv4(1, 2, 100);
        let mut f = Frame {
            buf: b,
            ip: Some(ip),
            meta: PacketMeta {
                ecn: aqm::Ecn::Ect0,
                ..PacketMeta::of_size(100)
            },
            join: 0,
            ticket: Ticket::OUTSIDE,
        };
        f.set_ce();
        assert_eq!(FqPacket::ecn(&f), aqm::Ecn::Ce);
        assert_eq!(f.ip.unwrap().ecn, frame::ECN_CE);
        let q = frame::parse(&f.buf).unwrap();
        assert_eq!(q.ecn, frame::ECN_CE);
        let stored = u16::from_be_bytes([f.buf[24], f.buf[25]]);
        assert_eq!(stored, frame::ipv4_checksum(&f.buf[14..34]));
        // Not ECN-capable: untouched.
        let (mut b, _) = ipv4(1, 2, 100);
        b[15] = 0;
        b[24..26].copy_from_slice(&[0, 0]);
        let c = frame::ipv4_checksum(&b[14..34]);
        b[24..26].copy_from_slice(&c.to_be_bytes());
        let ip = frame::parse(&b).unwrap();
        let mut g = Frame {
            buf: b.clone(),
            ip: Some(ip),
            meta: PacketMeta::of_size(100),
            join: 0,
            ticket: Ticket::OUTSIDE,
        };
        g.set_ce();
        assert_eq!((FqPacket::ecn(&g), g.buf == b), (aqm::Ecn::NotEct, true));
    }
}
