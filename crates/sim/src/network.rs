//! The run: builds links and flows from a [`Config`], moves packets through them in event order,
//! and checks the invariants at the end.
//!
//! Events are needed only where order matters. A link whose packets all come from one upstream
//! (one host, or one link) and whose AQM needs no timer is *chained*: it is processed the moment
//! the upstream delivers, even ahead of the clock, because its arrivals are in time order anyway.
//! In a dumbbell this leaves four events per data packet (bottleneck arrival, receiver, reverse
//! bottleneck, sender) however many access links there are.

use crate::config::{Config, FlowConfig, LinkConfig, NodeKind};
use crate::event::{Event, EventQueue};
use crate::link::{Link, Outcome};
use crate::packet::{Kind, Packet};
use crate::results::{self, Results};
use crate::series::Series;
use crate::tcp::{Marker, Receiver, Sender};
use crate::throttle::Throttle;
use crate::traffic::{self, OpenLoop};
use aqm::params::{Buffer, LinkContext};
use aqm::{Time, Verdict};
use std::fmt;

/// Why a run could not be built or did not end cleanly.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The configuration is invalid; the message names the field.
    Config(String),
    /// An end-of-run invariant failed; the run's results are not to be trusted.
    Invariant(Vec<String>),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "{m}"),
            SimError::Invariant(v) => write!(f, "invariant violated: {}", v.join("; ")),
        }
    }
}

impl std::error::Error for SimError {}

/// One flow: its path, its sender and its receiver.
pub struct Flow {
    /// Name.
    pub name: String,
    /// Source host.
    pub src: usize,
    /// Destination host.
    pub dst: usize,
    /// Data path (link indices).
    pub path: Vec<u32>,
    /// ACK path.
    pub rev: Vec<u32>,
    /// Sender.
    pub sender: Sender,
    /// Receiver.
    pub receiver: Receiver,
    /// Start time.
    pub start: Time,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Congestion window series, when asked for.
    pub cwnd_series: Option<Series>,
    /// ModRED's pending ACK-window clamp for this flow.
    pub throttle: Throttle,
    /// The open-loop source, when the flow is one.
    pub source: Option<OpenLoop>,
    /// Bytes delivered to the destination in the measurement window (open-loop sources).
    pub bytes_window: u64,
    /// No new data from here (`Time::MAX`: never stops).
    pub stop: Time,
    /// Bytes to send (`None`: bulk or open-loop).
    pub size_bytes: Option<u64>,
    /// One-way delays of an open-loop flow's packets (sent in the measurement window).
    pub udp: UdpStats,
    /// Bytes delivered to the receiver so far (payload in order for TCP, wire bytes for
    /// open-loop flows), when traced, with its series.
    pub delivered: Option<(f64, Series)>,
    /// The flow that starts when this one completes, and the think time before it (web
    /// sessions); taken when it is scheduled.
    pub next: Option<(u32, Time)>,
}

/// What the receiver of an open-loop flow measured: packets received that were sent in the
/// measurement window, their one-way delays, and the RFC 3550 s. 6.4.1 interarrival jitter
/// (mean |D(i-1, i)| over consecutive packets, without the 1/16 smoothing).
#[derive(Clone, Debug, Default)]
pub struct UdpStats {
    /// Packets received (sent at or after the warm-up).
    pub received: u64,
    /// Sum of one-way delays, ns.
    pub delay_sum_ns: f64,
    /// Largest one-way delay, ns.
    pub delay_max_ns: u64,
    /// Sum of |D(i-1, i)|, ns.
    pub jitter_sum_ns: f64,
    last_delay: Option<u64>,
    /// One-way delay histogram (for percentiles).
    pub hist: crate::hist::Hist,
    /// Packets sent in the window still in the network at the end (not lost).
    pub in_flight: u64,
}

impl UdpStats {
    fn record(&mut self, delay: u64) {
        self.received += 1;
        self.delay_sum_ns += delay as f64;
        self.delay_max_ns = self.delay_max_ns.max(delay);
        if let Some(p) = self.last_delay {
            self.jitter_sum_ns += (delay as f64 - p as f64).abs();
        }
        self.last_delay = Some(delay);
        self.hist.add(delay);
    }
}

/// A simulation run.
pub struct Sim {
    /// Node names.
    pub node_names: Vec<String>,
    /// Links.
    pub links: Vec<Link>,
    /// Flows.
    pub flows: Vec<Flow>,
    ev: EventQueue,
    /// Current time.
    pub now: Time,
    /// End of the run.
    pub end: Time,
    /// Start of the measurement window.
    pub warmup: Time,
    /// Seed.
    pub seed: u64,
    out: Vec<Packet>,
    /// Packets handed to the first link by hosts.
    pub injected: u64,
    /// Packets handed to their destination host.
    pub delivered: u64,
    /// Packets dropped on any link.
    pub dropped: u64,
    /// Packets whose next arrival would fall after the end.
    pub beyond: u64,
    /// Events processed.
    pub events: u64,
    /// Invariant violations found while running.
    pub violations: Vec<String>,
}

/// FQ-CoDel's parameters; its shared `limit` defaults to the link's buffer in packets.
pub fn fq_params(a: &crate::config::AqmConfig, buffer: Buffer) -> Result<aqm::ParamMap, String> {
    let mut m = a.param_map()?;
    if let Buffer::Packets(n) = buffer {
        m.entry("limit".into())
            .or_insert(aqm::ParamValue::Num(n as f64));
    }
    Ok(m)
}

fn cfg_err<T>(msg: String) -> Result<T, SimError> {
    Err(SimError::Config(msg))
}

/// Checks the run-wide fields.
fn check_run(cfg: &Config) -> Result<(), SimError> {
    if cfg.duration_ns == 0 {
        return cfg_err("duration: must be > 0".into());
    }
    if cfg.warmup_ns >= cfg.duration_ns {
        return cfg_err(format!(
            "warmup: must be shorter than duration (got warmup {} ns >= duration {} ns)",
            cfg.warmup_ns, cfg.duration_ns
        ));
    }
    if cfg.sample_interval_ns == 0 {
        return cfg_err("sample_interval: must be > 0".into());
    }
    if cfg.flows.is_empty() {
        return cfg_err("flows: at least one flow is required".into());
    }
    Ok(())
}

/// The AQM (or FQ-CoDel queue discipline) of a link.
type Guard = (Option<Box<dyn aqm::Aqm>>, Option<Box<crate::link::FqQueue>>);

fn build_guard(lc: &LinkConfig, field: &str, ctx: &LinkContext) -> Result<Guard, SimError> {
    let name_err = |e: aqm::ParamError| {
        if e.param.is_empty() {
            SimError::Config(format!("{field}.aqm: {}", e.msg))
        } else {
            SimError::Config(format!("{field}.aqm.{}: {}", e.param, e.msg))
        }
    };
    match &lc.aqm {
        None => Ok((None, None)),
        Some(a) if a.name == "droptail" && a.params.is_empty() => Ok((None, None)),
        Some(a) if a.name == "fq_codel" => {
            let m = fq_params(a, ctx.buffer)
                .map_err(|e| SimError::Config(format!("{field}.aqm.{e}")))?;
            let fq = aqm::fq_codel::build_fq_codel(&m, ctx).map_err(name_err)?;
            Ok((None, Some(Box::new(fq))))
        }
        Some(a) => {
            let m = a
                .param_map()
                .map_err(|e| SimError::Config(format!("{field}.aqm.{e}")))?;
            Ok((Some(aqm::build(&a.name, &m, ctx).map_err(name_err)?), None))
        }
    }
}

/// Link `i` of the configuration, checked.
fn build_link(cfg: &Config, i: usize, lc: &LinkConfig) -> Result<Link, SimError> {
    let n_nodes = cfg.nodes.len();
    let field = format!("links[{i}] ({})", lc.name);
    if lc.from >= n_nodes || lc.to >= n_nodes {
        return cfg_err(format!(
            "{field}: from/to must name one of the {n_nodes} nodes"
        ));
    }
    if lc.rate_bps == 0 {
        return cfg_err(format!("{field}.rate: must be > 0 bit/s"));
    }
    let buffer = match (lc.buffer_pkts, lc.buffer_bytes) {
        (Some(p), None) if p > 0 => Buffer::Packets(p),
        (None, Some(b)) if b > 0 => Buffer::Bytes(b),
        _ => {
            return cfg_err(format!(
                "{field}.buffer: give exactly one positive buffer, in packets or in bytes"
            ))
        }
    };
    if lc.mean_pkt_bytes == 0 {
        return cfg_err(format!("{field}.mean_pkt_bytes: must be > 0"));
    }
    let ctx = LinkContext {
        rate_bps: lc.rate_bps,
        buffer,
        mean_pkt_bytes: lc.mean_pkt_bytes,
    };
    let (aqm, fq) = build_guard(lc, &field, &ctx)?;
    let rng = aqm::rng_from_seed(cfg.seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i as u64 + 1)));
    let mut link = Link::new(
        lc.name.clone(),
        lc.from,
        lc.to,
        lc.rate_bps,
        lc.delay_ns,
        buffer,
        aqm,
        rng,
        lc.monitor,
        cfg.warmup_ns,
        cfg.duration_ns,
        cfg.sample_interval_ns,
        cfg.max_samples,
    );
    if fq.is_some() {
        link.fq = fq;
        link.real = true;
    }
    Ok(link)
}

/// Which upstream feeds each link: a link fed by one upstream only can be chained.
struct Feeders {
    /// None = not yet seen; Some(k) with k = usize::MAX - host for hosts.
    first: Vec<Option<usize>>,
    multi: Vec<bool>,
}

impl Feeders {
    /// Checks that `path` leads from host `a` to host `b` over existing links, noting feeders.
    fn walk(
        &mut self,
        links: &[Link],
        path: &[usize],
        (a, b): (usize, usize),
        field: &str,
    ) -> Result<(), SimError> {
        if path.is_empty() || path.len() > u16::MAX as usize {
            return cfg_err(format!("{field}: must hold 1 to 65535 links"));
        }
        let mut at = a;
        for (k, &l) in path.iter().enumerate() {
            if l >= links.len() || links[l].from != at {
                return cfg_err(format!(
                    "{field}[{k}]: link must start where the previous one ended"
                ));
            }
            let f = if k == 0 { usize::MAX - a } else { path[k - 1] };
            match self.first[l] {
                None => self.first[l] = Some(f),
                Some(g) if g != f => self.multi[l] = true,
                _ => {}
            }
            at = links[l].to;
        }
        if at != b {
            return cfg_err(format!("{field}: must end at its destination host"));
        }
        Ok(())
    }
}

/// Flow `i` of the configuration, checked (its paths are checked by [`Feeders::walk`]).
fn build_flow(cfg: &Config, i: usize, fc: &FlowConfig) -> Result<Flow, SimError> {
    let field = format!("flows[{i}] ({})", fc.name);
    for (which, node) in [("src", fc.src), ("dst", fc.dst)] {
        if node >= cfg.nodes.len() || cfg.nodes[node].kind != NodeKind::Host {
            return cfg_err(format!("{field}.{which}: must be a host"));
        }
    }
    let t = &fc.tcp;
    if t.mss == 0 {
        return cfg_err(format!("{field}.mss: must be > 0"));
    }
    if t.init_cwnd.is_nan() || t.init_cwnd < 1.0 || t.rwnd_segments == 0 || t.min_rto_ns == 0 {
        return cfg_err(format!(
            "{field}.tcp: init_cwnd >= 1, rwnd >= 1 segment, min_rto > 0 required"
        ));
    }
    if fc.stop_ns.is_some_and(|s| s <= fc.start_ns) {
        return cfg_err(format!("{field}.stop: must be after start"));
    }
    let source = traffic::build(fc.poisson.as_ref(), fc.source.as_ref(), &field)
        .map_err(SimError::Config)?
        .map(|source| OpenLoop {
            source,
            rng: aqm::rng_from_seed(
                cfg.seed ^ 0xA5A5_5A5A_0F0F_F0F0 ^ (i as u64).wrapping_mul(0x9E37_79B9),
            ),
            sent: 0,
            sent_window: 0,
            echo: None,
        });
    let mut source = source;
    if let Some(s) = source.as_mut().filter(|s| s.source.echo()) {
        s.echo = Some(traffic::probe::EchoStats::new(cfg.max_samples)); // latency probe
    }
    let limit = fc
        .size_bytes
        .map(|b| b.div_ceil(t.mss as u64).max(1) as u32);
    let marker = fc
        .profile
        .as_ref()
        .map(|p| Marker::new(p.rate_bps, p.burst_bytes));
    Ok(Flow {
        name: fc.name.clone(),
        src: fc.src,
        dst: fc.dst,
        path: fc.path.iter().map(|&l| l as u32).collect(),
        rev: fc.rev_path.iter().map(|&l| l as u32).collect(),
        sender: Sender::new(t, limit, marker),
        receiver: Receiver::new(t).finite(limit),
        start: fc.start_ns,
        mss: t.mss,
        cwnd_series: t
            .trace_cwnd
            .then(|| Series::new(vec!["cwnd"], cfg.sample_interval_ns, cfg.max_samples)),
        throttle: Throttle::default(),
        source,
        bytes_window: 0,
        stop: fc.stop_ns.unwrap_or(Time::MAX),
        size_bytes: fc.size_bytes,
        udp: UdpStats::default(),
        delivered: fc.trace_delivered.then(|| {
            let s = Series::new(
                vec!["delivered_bytes"],
                cfg.sample_interval_ns,
                cfg.max_samples,
            );
            (0.0, s)
        }),
        next: None,
    })
}

/// Links each flow that starts after another one (`after`, web sessions) to it: the earlier
/// flow gets the successor and the think time, and the later one waits (its start is the end of
/// the run until its predecessor completes). Checked: the earlier flow comes first in `flows`,
/// both are TCP, the earlier one is finite, and a flow has at most one successor.
fn link_sessions(cfg: &Config, flows: &mut [Flow]) -> Result<(), SimError> {
    for (i, fc) in cfg.flows.iter().enumerate() {
        let Some(a) = &fc.after else { continue };
        let field = format!("flows[{i}] ({}).after.flow", fc.name);
        let Some(p) = cfg.flows.get(a.flow).filter(|_| a.flow < i) else {
            return cfg_err(format!(
                "{field}: must name an earlier flow (got {})",
                a.flow
            ));
        };
        let tcp = |f: &FlowConfig| f.poisson.is_none() && f.source.is_none();
        if !tcp(fc) || !tcp(p) || p.size_bytes.is_none() {
            return cfg_err(format!(
                "{field}: both flows must be TCP and the earlier one finite (size_bytes)"
            ));
        }
        if flows[a.flow].next.is_some() {
            return cfg_err(format!(
                "{field}: flows[{}] already has a successor (a session is a chain)",
                a.flow
            ));
        }
        flows[a.flow].next = Some((i as u32, a.think_ns));
        flows[i].start = cfg.duration_ns;
    }
    Ok(())
}

impl Sim {
    /// Builds a run, checking the configuration.
    pub fn new(cfg: &Config) -> Result<Sim, SimError> {
        check_run(cfg)?;
        let mut links = Vec::with_capacity(cfg.links.len());
        for (i, lc) in cfg.links.iter().enumerate() {
            links.push(build_link(cfg, i, lc)?);
        }
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut feeders = Feeders {
            first: vec![None; links.len()],
            multi: vec![false; links.len()],
        };
        for (i, fc) in cfg.flows.iter().enumerate() {
            let flow = build_flow(cfg, i, fc)?;
            let field = format!("flows[{i}] ({})", fc.name);
            feeders.walk(&links, &fc.path, (fc.src, fc.dst), &format!("{field}.path"))?;
            if flow.source.is_none() || !fc.rev_path.is_empty() {
                let f = format!("{field}.rev_path");
                feeders.walk(&links, &fc.rev_path, (fc.dst, fc.src), &f)?;
            }
            flows.push(flow);
        }
        link_sessions(cfg, &mut flows)?;
        for (l, link) in links.iter_mut().enumerate() {
            let timer = link.aqm.as_ref().is_some_and(|a| a.next_update().is_some());
            link.chained = feeders.first[l].is_some() && !feeders.multi[l] && !link.real && !timer;
        }
        let mut sim = Sim {
            node_names: cfg.nodes.iter().map(|n| n.name.clone()).collect(),
            links,
            flows,
            ev: EventQueue::default(),
            now: 0,
            end: cfg.duration_ns,
            warmup: cfg.warmup_ns,
            seed: cfg.seed,
            out: Vec::new(),
            injected: 0,
            delivered: 0,
            dropped: 0,
            beyond: 0,
            events: 0,
            violations: Vec::new(),
        };
        for (f, flow) in sim.flows.iter().enumerate() {
            if cfg.flows[f].after.is_none() {
                sim.ev.push(flow.start, Event::FlowStart(f as u32));
            }
            if flow.stop != Time::MAX {
                sim.ev.push(flow.stop, Event::FlowStop(f as u32));
            }
        }
        for (l, link) in sim.links.iter().enumerate() {
            if let Some(t) = link.aqm.as_ref().and_then(|a| a.next_update()) {
                sim.ev.push(t, Event::AqmUpdate(l as u32));
            }
        }
        Ok(sim)
    }

    /// Replaces the AQM of link `l` before the run starts (tests use scripted droppers).
    pub fn replace_aqm(&mut self, l: usize, aqm: Box<dyn aqm::Aqm>) {
        let link = &mut self.links[l];
        let timer = aqm.next_update().is_some();
        link.real = aqm.wants_dequeue();
        if link.real || timer {
            link.chained = false;
        }
        if let Some(t) = aqm.next_update() {
            self.ev.push(t, Event::AqmUpdate(l as u32));
        }
        link.aqm = Some(aqm);
    }

    fn path_of(&self, p: &Packet) -> &[u32] {
        let f = &self.flows[p.flow as usize];
        match p.kind {
            Kind::Data => &f.path,
            Kind::Ack => &f.rev,
        }
    }

    /// A packet leaves its current link and reaches the next node at `at`: schedules what comes
    /// next, or returns the next link when that one is chained.
    #[inline]
    fn after_link(&mut self, mut pkt: Packet, at: Time) -> Option<(Packet, u32, Time)> {
        if at > self.end {
            self.beyond += 1;
            if pkt.kind == Kind::Data && pkt.ts >= self.warmup {
                self.flows[pkt.flow as usize].udp.in_flight += 1;
            }
            return None;
        }
        let path = self.path_of(&pkt);
        let next = pkt.hop as usize + 1;
        if next < path.len() {
            let l = path[next];
            pkt.hop = next as u16;
            if self.links[l as usize].chained {
                return Some((pkt, l, at));
            }
            self.ev.push(at, Event::LinkArrive(l, pkt));
        } else {
            self.ev.push(at, Event::HostArrive(pkt));
        }
        None
    }

    /// A packet enters link `l` at `t` (and, through chained links, as far as it goes now).
    fn enter_link(&mut self, mut pkt: Packet, mut l: u32, mut t: Time) {
        loop {
            let f = pkt.flow as usize;
            let link = &mut self.links[l as usize];
            if pkt.kind == Kind::Ack {
                pkt.rwnd = self.flows[f].throttle.on_ack(link.from, pkt.rwnd);
            }
            let mut verdict = Verdict::Admit;
            let outcome = link.arrive(&mut pkt, t, &mut verdict);
            // ModRED's ACK-window rewrite: only a throttle, or a flow with one pending, needs it.
            let fl = &mut self.flows[f];
            if pkt.kind == Kind::Data
                && !matches!(outcome, Outcome::Dropped)
                && (verdict == Verdict::Throttle || fl.throttle.is_active())
            {
                if let Some(a) = link.aqm.as_ref() {
                    fl.throttle.on_data(link.from, verdict, a.throttle_hold());
                }
            }
            match outcome {
                Outcome::Dropped => return,
                Outcome::Queued => {
                    self.try_start(l, t);
                    return;
                }
                Outcome::Forward(at) => match self.after_link(pkt, at) {
                    Some((p, nl, nt)) => {
                        pkt = p;
                        l = nl;
                        t = nt;
                    }
                    None => return,
                },
            }
        }
    }

    fn try_start(&mut self, l: u32, t: Time) {
        if !self.links[l as usize].can_start() {
            return;
        }
        if let Some((pkt, at, end_tx)) = self.links[l as usize].start_next(t) {
            self.ev.push(end_tx, Event::TxDone(l));
            if let Some((p, nl, nt)) = self.after_link(pkt, at) {
                self.enter_link(p, nl, nt);
            }
        }
    }

    fn inject_out(&mut self, f: usize, t: Time) {
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            p.flow = f as u32;
            p.hop = 0;
            self.injected += 1;
            let l = self.path_of(&p)[0];
            self.enter_link(p, l, t);
        }
        self.out = out;
        // One pending timer event per flow; a deadline that moved earlier gets its own event.
        let s = &mut self.flows[f].sender;
        if let Some(d) = s.rto_deadline {
            if s.rto_event.is_none_or(|e| e > d) {
                s.rto_event = Some(d);
                self.ev.push(d, Event::Rto(f as u32));
            }
        }
        let fl = &mut self.flows[f];
        if let Some(cs) = &mut fl.cwnd_series {
            cs.fill_before(t + 1, &[fl.sender.cwnd]);
        }
    }

    fn on_host(&mut self, pkt: Packet, t: Time) {
        self.delivered += 1;
        let f = pkt.flow as usize;
        match pkt.kind {
            Kind::Data if self.flows[f].source.is_some() => {
                let fl = &mut self.flows[f];
                if let Some((b, s)) = &mut fl.delivered {
                    s.fill_before(t + 1, &[*b]);
                    *b += pkt.size as f64;
                }
                if t >= self.warmup {
                    fl.bytes_window += pkt.size as u64;
                }
                if pkt.ts >= self.warmup {
                    fl.udp.record(t - pkt.ts);
                }
                if fl.source.as_ref().is_some_and(|s| s.echo.is_some()) {
                    // A latency probe: the destination turns the packet around.
                    self.out.push(Packet {
                        kind: Kind::Ack,
                        ..pkt
                    });
                    self.inject_out(f, t);
                }
            }
            Kind::Ack if self.flows[f].source.is_some() => {
                let w = self.warmup;
                if let Some(e) = self.flows[f].source.as_mut().and_then(|s| s.echo.as_mut()) {
                    e.record(pkt.ts, t, w);
                }
            }
            Kind::Data => {
                let in_window = t >= self.warmup;
                let fl = &mut self.flows[f];
                if let Some((b, s)) = &mut fl.delivered {
                    s.fill_before(t + 1, &[*b]);
                }
                let ack = fl.receiver.on_data(&pkt, t, in_window);
                if let Some((b, _)) = &mut fl.delivered {
                    *b = fl.receiver.stats.delivered_total as f64 * fl.mss as f64;
                }
                if let Some(mut a) = ack {
                    a.flow = f as u32;
                    self.out.push(a);
                    self.inject_out(f, t);
                }
                let r = &mut self.flows[f].receiver;
                if let Some(d) = r.delack_deadline {
                    if r.delack_event.is_none_or(|e| e > d) {
                        r.delack_event = Some(d);
                        self.ev.push(d, Event::DelAck(f as u32));
                    }
                }
            }
            Kind::Ack => {
                if pkt.seq > self.flows[f].sender.snd_max {
                    self.violations.push(format!(
                        "flow {}: ACK for segment {} beyond the highest sent {}",
                        self.flows[f].name, pkt.seq, self.flows[f].sender.snd_max
                    ));
                }
                let mut out = std::mem::take(&mut self.out);
                self.flows[f].sender.on_ack(&pkt, t, &mut out);
                self.out = out;
                self.inject_out(f, t);
                if self.flows[f].next.is_some() && self.flows[f].sender.done_at.is_some() {
                    self.start_next(f);
                }
            }
        }
    }

    /// Flow `f` has completed: its session's next flow starts a think time later (if that is
    /// within the run).
    fn start_next(&mut self, f: usize) {
        let Some((n, think)) = self.flows[f].next.take() else {
            return;
        };
        let at = self.flows[f].sender.done_at.expect("completed") + think;
        if at <= self.end {
            self.flows[n as usize].start = at;
            self.ev.push(at, Event::FlowStart(n));
        }
    }

    /// An open-loop source emits a packet at `t` and schedules the next one.
    fn emit(&mut self, f: u32, t: Time) {
        let fl = &mut self.flows[f as usize];
        if t >= fl.stop {
            return;
        }
        let src = fl.source.as_mut().expect("source");
        let (size, gap) = src.source.emit(&mut src.rng);
        let seq = src.sent as u32;
        src.sent += 1;
        if t >= self.warmup {
            src.sent_window += 1;
        }
        self.ev.push(t + gap, Event::SourceEmit(f));
        self.out.push(Packet {
            flow: f,
            seq,
            size,
            hop: 0,
            kind: Kind::Data,
            flags: 0,
            precedence: aqm::Precedence::Out,
            ts: t,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        });
        self.inject_out(f as usize, t);
    }

    /// Runs until the clock passes `until` (or the end). Returns true when the run is over.
    pub fn run_until(&mut self, until: Time) -> bool {
        let stop = until.min(self.end);
        while let Some(t) = self.ev.peek_time() {
            if t > stop {
                break;
            }
            let (t, ev) = self.ev.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            match ev {
                Event::LinkArrive(l, p) => self.enter_link(p, l, t),
                Event::HostArrive(p) => self.on_host(p, t),
                Event::TxDone(l) => {
                    self.links[l as usize].tx_done(t);
                    self.try_start(l, t);
                }
                Event::Rto(f) => {
                    let s = &mut self.flows[f as usize].sender;
                    if s.rto_event != Some(t) {
                        continue; // superseded by an earlier event
                    }
                    s.rto_event = None;
                    match s.rto_deadline {
                        Some(d) if d <= t => {
                            let mut out = std::mem::take(&mut self.out);
                            self.flows[f as usize].sender.on_timeout(t, &mut out);
                            self.out = out;
                        }
                        _ => {}
                    }
                    self.inject_out(f as usize, t);
                }
                Event::DelAck(f) => {
                    let r = &mut self.flows[f as usize].receiver;
                    if r.delack_event != Some(t) {
                        continue;
                    }
                    r.delack_event = None;
                    if let Some(mut a) = r.on_delack_timer(f, t) {
                        a.flow = f;
                        self.out.push(a);
                        self.inject_out(f as usize, t);
                    } else if let Some(d) = r.delack_deadline {
                        r.delack_event = Some(d);
                        self.ev.push(d, Event::DelAck(f));
                    }
                }
                Event::FlowStart(f) if self.flows[f as usize].source.is_some() => {
                    let src = self.flows[f as usize].source.as_mut().expect("source");
                    let gap = src.source.first_gap(&mut src.rng);
                    self.ev.push(t + gap, Event::SourceEmit(f));
                }
                Event::SourceEmit(f) => self.emit(f, t),
                Event::FlowStart(f) => {
                    let mut out = std::mem::take(&mut self.out);
                    self.flows[f as usize].sender.start(t, &mut out);
                    self.out = out;
                    self.inject_out(f as usize, t);
                }
                Event::FlowStop(f) => self.flows[f as usize].sender.stop_new_data(),
                Event::AqmUpdate(l) => {
                    if let Some(n) = self.links[l as usize].aqm_update(t) {
                        self.ev.push(n.max(t + 1), Event::AqmUpdate(l));
                    }
                }
            }
        }
        if self.ev.peek_time().is_none_or(|t| t > self.end) {
            self.now = self.end;
            return true;
        }
        self.now = stop;
        false
    }

    /// Runs to the end and checks the invariants.
    pub fn run(&mut self) -> Result<Results, SimError> {
        self.run_until(self.end);
        self.finish()
    }

    /// Closes every link's books at the end; returns the violations of queue conservation and
    /// of the buffer bound.
    fn close_links(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        for l in &mut self.links {
            l.finish(self.end);
            let s = &l.stats;
            let held = l.waiting_at_end() as u64;
            if s.total_arrived != s.total_dropped + s.total_started + held {
                v.push(format!(
                    "link {}: arrivals {} != departures {} + drops {} + queued {}",
                    l.name, s.total_arrived, s.total_started, s.total_dropped, held
                ));
            }
            v.extend(l.window_violation());
            if s.buffer_violations > 0 {
                v.push(format!(
                    "link {}: queue exceeded its buffer {} times",
                    l.name, s.buffer_violations
                ));
            }
        }
        v
    }

    /// Packets still travelling in events at the end; counts the open-loop flows' packets
    /// still in the network (in events, in queues) as in flight, not lost.
    fn count_in_flight(&mut self) -> u64 {
        let mut in_events = 0u64;
        for e in self.ev.iter() {
            if let Event::LinkArrive(_, p) | Event::HostArrive(p) = e {
                in_events += 1;
                let fl = &mut self.flows[p.flow as usize];
                if fl.source.is_some() && p.kind == Kind::Data && p.ts >= self.warmup {
                    fl.udp.in_flight += 1;
                }
            }
        }
        for l in &self.links {
            for (f, n) in l.queued_per_flow(self.warmup) {
                self.flows[f as usize].udp.in_flight += n;
            }
            if let Some(fq) = &l.fq {
                // The open-loop flow's FQ-CoDel queue (whatever the packets' send times).
                for (f, fl) in self.flows.iter_mut().enumerate() {
                    if fl.source.is_some() {
                        fl.udp.in_flight += fq.queue_len(fq.queue_of(f as u32)).0 as u64;
                    }
                }
            }
        }
        in_events
    }

    /// Closes the books at the end and checks the invariants (SPEC, Simulator): every queue
    /// conserves packets, no queue exceeded its buffer, the network conserves packets, every
    /// ACK covers only data that was sent.
    pub fn finish(&mut self) -> Result<Results, SimError> {
        let end = self.end;
        let mut v = std::mem::take(&mut self.violations);
        v.extend(self.close_links());
        let in_events = self.count_in_flight();
        let stored: u64 = self.links.iter().map(|l| l.stored() as u64).sum();
        // Drops happen on arrival, at the head (CoDel) and inside queue disciplines (FQ-CoDel's
        // limit): the links' own counts are the network's.
        self.dropped = self.links.iter().map(|l| l.stats.total_dropped).sum();
        if self.injected != self.delivered + self.dropped + self.beyond + in_events + stored {
            v.push(format!(
                "network: sent {} != delivered {} + dropped {} + in flight {} + queued {}",
                self.injected,
                self.delivered,
                self.dropped,
                self.beyond + in_events,
                stored
            ));
        }
        for fl in &mut self.flows {
            if fl.receiver.rcv_nxt > fl.sender.snd_max {
                v.push(format!(
                    "flow {}: receiver holds {} segments in order but only {} were sent",
                    fl.name, fl.receiver.rcv_nxt, fl.sender.snd_max
                ));
            }
            if fl.sender.snd_una > fl.sender.snd_max {
                v.push(format!(
                    "flow {}: acknowledged beyond what was sent",
                    fl.name
                ));
            }
            let cwnd = fl.sender.cwnd;
            if let Some(cs) = &mut fl.cwnd_series {
                cs.fill_before(end + 1, &[cwnd]);
            }
            if let Some((b, s)) = &mut fl.delivered {
                if fl.source.is_none() {
                    *b = fl.receiver.stats.delivered_total as f64 * fl.mss as f64;
                }
                s.fill_before(end + 1, &[*b]);
            }
        }
        if !v.is_empty() {
            return Err(SimError::Invariant(v));
        }
        Ok(results::collect(self))
    }
}
