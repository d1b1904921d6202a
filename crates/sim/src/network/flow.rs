//! One flow (path, sender, receiver, open-loop source) and its builder from the configuration.

use super::error::{cfg_err, SimError};
use crate::config::{Config, FlowConfig, NodeKind};
use crate::series::Series;
use crate::tcp::send_jitter::SendJitter;
use crate::tcp::{Marker, Receiver, Sender};
use crate::throttle::Throttle;
use crate::traffic::{self, OpenLoop};
use aqm::Time;

/// A TCP flow's two ends.
pub struct TcpEnds {
    /// Sender.
    pub sender: Sender,
    /// Receiver.
    pub receiver: Receiver,
    /// The sending host's timing noise (`[tcp] send_jitter`; `None`: off).
    pub jitter: Option<SendJitter>,
}

/// What carries a flow's data: a TCP connection, or an open-loop source (CBR, Poisson, on-off,
/// latency probe) whose packets no transport acknowledges.
// Not boxed: TCP flows are the many and their ends are read on every packet; an open-loop flow
// leaves a few hundred bytes unused.
#[allow(clippy::large_enum_variant)]
pub enum Transport {
    /// A TCP sender and receiver.
    Tcp(TcpEnds),
    /// An open-loop source.
    OpenLoop(OpenLoop),
}

/// One flow: its path and its transport.
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
    /// Address resolution's paths (`[tcp] resolve`): the data and ACK paths without their
    /// first and last links; empty without it.
    pub resolve: (Vec<u32>, Vec<u32>),
    /// TCP or open loop.
    pub transport: Transport,
    /// Start time.
    pub start: Time,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Congestion window series, when asked for.
    pub cwnd_series: Option<Series>,
    /// ModRED's pending ACK-window clamp for this flow.
    pub throttle: Throttle,
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

impl Flow {
    /// The TCP ends, when the flow is TCP.
    #[inline]
    pub fn tcp(&self) -> Option<&TcpEnds> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            Transport::OpenLoop(_) => None,
        }
    }

    /// The TCP ends, mutably.
    #[inline]
    pub fn tcp_mut(&mut self) -> Option<&mut TcpEnds> {
        match &mut self.transport {
            Transport::Tcp(t) => Some(t),
            Transport::OpenLoop(_) => None,
        }
    }

    /// The open-loop source, when the flow is one.
    #[inline]
    pub fn source(&self) -> Option<&OpenLoop> {
        match &self.transport {
            Transport::OpenLoop(s) => Some(s),
            Transport::Tcp(_) => None,
        }
    }

    /// The open-loop source, mutably.
    #[inline]
    pub fn source_mut(&mut self) -> Option<&mut OpenLoop> {
        match &mut self.transport {
            Transport::OpenLoop(s) => Some(s),
            Transport::Tcp(_) => None,
        }
    }
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
    /// Of the packets received, those CE-marked on the way (the receiver reads the codepoint).
    pub ce: u64,
}

impl UdpStats {
    pub(crate) fn record(&mut self, delay: u64) {
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

/// The largest `[tcp] send_jitter`, ns (1 s: noise beyond any host's).
pub const MAX_SEND_JITTER_NS: u64 = 1_000_000_000;

/// The checks of one flow's configuration that need no path (its paths are checked by
/// [`Feeders::walk`]): its hosts, its TCP settings and its congestion controller, which it
/// returns.
fn check_flow(
    cfg: &Config,
    fc: &FlowConfig,
    field: &str,
) -> Result<Box<dyn crate::tcp::cc::CongestionControl>, SimError> {
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
    if t.send_jitter_ns > MAX_SEND_JITTER_NS {
        return cfg_err(format!(
            "{field}.tcp.send_jitter: at most 1 s (got {} ns)",
            t.send_jitter_ns
        ));
    }
    let cc = crate::tcp::cc::build(t.cc_name())
        .map_err(|e| SimError::Config(format!("{field}.tcp.cc: {e}")))?;
    let needs_ecn = cc.needs_ecn() || cc.wants_accecn();
    if needs_ecn && !t.ecn && fc.poisson.is_none() && fc.source.is_none() {
        return cfg_err(format!(
            "{field}.tcp.ecn: cc {:?} reacts to ECN marks only: set ecn = true",
            cc.name()
        ));
    }
    if cc.needs_timestamps() && !t.timestamps && fc.poisson.is_none() && fc.source.is_none() {
        return cfg_err(format!(
            "{field}.tcp.timestamps: cc {:?} measures delay from echoed timestamps: set \
             timestamps = true",
            cc.name()
        ));
    }
    let open_loop_cfg = fc.poisson.is_some() || fc.source.is_some();
    if fc.ecn_bits != 0 && (!open_loop_cfg || !matches!(fc.ecn_bits, 1 | 2)) {
        return cfg_err(format!(
            "{field}.ecn: an open-loop source sends Not-ECT (0), ECT(0) (2) or ECT(1) (1); a TCP \
             flow sets its codepoint with tcp.ecn (got {})",
            fc.ecn_bits
        ));
    }
    if fc.stop_ns.is_some_and(|s| s <= fc.start_ns) {
        return cfg_err(format!("{field}.stop: must be after start"));
    }
    if t.resolve && !open_loop_cfg {
        if !t.handshake {
            return cfg_err(format!(
                "{field}.tcp.resolve: resolves the address before the SYN: set handshake = true"
            ));
        }
        if fc.path.len() < 3 || fc.rev_path.len() < 3 {
            return cfg_err(format!(
                "{field}.tcp.resolve: the paths need a link between their first and last (the \
                 request crosses the middle links only)"
            ));
        }
    }
    Ok(cc)
}

/// Flow `i` of the configuration, checked (its paths are checked by [`Feeders::walk`]).
pub(super) fn build_flow(cfg: &Config, i: usize, fc: &FlowConfig) -> Result<Flow, SimError> {
    let field = format!("flows[{i}] ({})", fc.name);
    let cc = check_flow(cfg, fc, &field)?;
    let t = &fc.tcp;
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
            ecn_flags: crate::packet::ecn_flags(aqm::Ecn::from_bits(fc.ecn_bits)),
        });
    let mut source = source;
    if let Some(s) = source.as_mut().filter(|s| s.source.echo()) {
        s.echo = Some(traffic::probe::EchoStats::new(cfg.max_samples)); // latency probe
    }
    let open_loop = source.is_some();
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
        resolve: resolve_paths(fc, open_loop),
        transport: match source {
            Some(s) => Transport::OpenLoop(s),
            None => Transport::Tcp(tcp_ends(cfg, i, fc, limit, marker, cc.as_ref())),
        },
        start: fc.start_ns,
        mss: t.mss,
        // An open-loop flow has no window to trace.
        cwnd_series: (t.trace_cwnd && !open_loop)
            .then(|| Series::new(vec!["cwnd"], cfg.sample_interval_ns, cfg.max_samples)),
        throttle: Throttle::default(),
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

/// Address resolution's paths (`[tcp] resolve`): the data and ACK paths without their first
/// and last links (checked to have three or more); empty without it.
fn resolve_paths(fc: &FlowConfig, open_loop: bool) -> (Vec<u32>, Vec<u32>) {
    if !fc.tcp.resolve || open_loop {
        return (Vec::new(), Vec::new());
    }
    let middle = |p: &[usize]| p[1..p.len() - 1].iter().map(|&l| l as u32).collect();
    (middle(&fc.path), middle(&fc.rev_path))
}

/// Flow `i`'s sender and receiver (`limit`: segments to send; `marker`: its edge marker) and
/// its timing noise.
fn tcp_ends(
    cfg: &Config,
    i: usize,
    fc: &FlowConfig,
    limit: Option<u32>,
    marker: Option<Marker>,
    cc: &dyn crate::tcp::cc::CongestionControl,
) -> TcpEnds {
    let t = &fc.tcp;
    let sender = Sender::new(t, limit, marker);
    // The receiver's ECN feedback mode: what the handshake gives (RFC 9768 Table 2); with the
    // handshake simulated, its SYN sets it again.
    let (_, mode) = crate::tcp::accecn::negotiate(sender.params.ecn_support, t.receiver_ecn);
    TcpEnds {
        sender,
        receiver: Receiver::new(t)
            .finite(limit)
            .per_packet_ce_echo(cc.per_packet_ce_echo())
            .ecn_mode(mode),
        jitter: SendJitter::new(
            t.send_jitter_ns,
            cfg.seed ^ 0x3C6E_F372_FE94_F82B ^ (i as u64).wrapping_mul(0x9E37_79B9),
        ),
    }
}

/// Links each flow that starts after another one (`after`, web sessions) to it: the earlier
/// flow gets the successor and the think time, and the later one waits (its start is the end of
/// the run until its predecessor completes). Checked: the earlier flow comes first in `flows`,
/// both are TCP, the earlier one is finite, and a flow has at most one successor.
pub(super) fn link_sessions(cfg: &Config, flows: &mut [Flow]) -> Result<(), SimError> {
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
