//! The network description a run is built from: nodes, links, flows with their static paths, all in
//! base units (ns, bit/s, bytes). The Python layer writes it from a scenario file; Rust programs can
//! build it directly.

use serde::{Deserialize, Serialize};

/// A whole run.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random stream of the run.
    pub seed: u64,
    /// Simulated time, ns.
    pub duration_ns: u64,
    /// Metrics count from here, ns.
    pub warmup_ns: u64,
    /// Interval of the time series, ns.
    #[serde(default = "default_sample_interval")]
    pub sample_interval_ns: u64,
    /// At most this many points per series; past it the series is halved and its interval doubled.
    #[serde(default = "default_max_samples")]
    pub max_samples: usize,
    /// Nodes (hosts and routers).
    pub nodes: Vec<NodeConfig>,
    /// Unidirectional links.
    pub links: Vec<LinkConfig>,
    /// Flows.
    pub flows: Vec<FlowConfig>,
}

fn default_sample_interval() -> u64 {
    10_000_000
}
fn default_max_samples() -> usize {
    200_000
}

/// Host or router.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// An end system: the source or sink of flows.
    Host,
    /// A forwarding node.
    Router,
}

/// A node.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// Name, for reports.
    pub name: String,
    /// Kind.
    pub kind: NodeKind,
}

/// An AQM by name with its parameters (kept by the queue-discipline layer).
pub use qdisc::config::AqmConfig;

/// A unidirectional link with its output queue.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Name, for reports.
    pub name: String,
    /// Upstream node index.
    pub from: usize,
    /// Downstream node index.
    pub to: usize,
    /// Rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Buffer in packets (exactly one of the two buffer fields).
    #[serde(default)]
    pub buffer_pkts: Option<u32>,
    /// Buffer in bytes.
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// The AQM guarding the queue; `None` is DropTail.
    #[serde(default)]
    pub aqm: Option<AqmConfig>,
    /// Typical packet size on the link, bytes (for the AQM's conversions).
    #[serde(default = "default_mean_pkt")]
    pub mean_pkt_bytes: u32,
    /// Record time series and report this link in the summary.
    #[serde(default)]
    pub monitor: bool,
    /// A rate that varies: `[at_ns, rate_bps]` steps (the first at 0, times increasing);
    /// replaces `rate_bps` for the transmitter (`qdisc::rate::Schedule`).
    #[serde(default)]
    pub rate_schedule: Option<Vec<(u64, u64)>>,
    /// The schedule starts again every this many ns.
    #[serde(default)]
    pub rate_repeat_ns: Option<u64>,
    /// A mahimahi trace: delivery opportunities at these milliseconds, repeating
    /// (`qdisc::rate::Trace`); replaces `rate_bps` for the transmitter.
    #[serde(default)]
    pub trace_ms: Option<Vec<u64>>,
    /// Write the link's event log (`crate::events`) to this file.
    #[serde(default)]
    pub events_path: Option<String>,
    /// Write the packets leaving the link as a pcap file here (`crate::pcap`).
    #[serde(default)]
    pub pcap_path: Option<String>,
}

fn default_mean_pkt() -> u32 {
    1500
}

/// TCP variant.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// Reno (RFC 5681): fast recovery ends on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): fast recovery ends when `recover` is acknowledged.
    NewReno,
    /// Reno congestion control with SACK loss recovery (RFC 6675) and PRR (RFC 6937).
    Sack,
    /// CUBIC (RFC 9438) with SACK loss recovery and PRR: Linux's default.
    Cubic,
}

/// What ECN feedback one end of a TCP connection supports (RFC 9768 Table 2's "AccECN", "ECN",
/// "No ECN"): offered in the SYN, answered in the SYN-ACK (`tcp::accecn`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EcnSupport {
    /// Accurate ECN feedback (RFC 9768), and RFC 3168 with a peer that lacks it.
    #[default]
    AccEcn,
    /// RFC 3168 ECN feedback only.
    Ecn,
    /// No ECN.
    Off,
}

/// Loss recovery (`[tcp] recovery`), chosen apart from the congestion controller.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryKind {
    /// RFC 5681 s. 3.2 fast recovery: ends on the first new ACK.
    Reno,
    /// RFC 6582: partial ACKs retransmit the next hole; ends when `recover` is acknowledged.
    NewReno,
    /// RFC 6675 SACK loss recovery with PRR (RFC 6937).
    Sack,
    /// RACK-TLP (RFC 8985) loss detection with PRR, Linux's default.
    Rack,
}

impl TcpVariant {
    /// The preset's congestion controller (a name in `tcp::cc::REGISTRY`) and loss recovery.
    pub fn preset(self) -> (&'static str, RecoveryKind) {
        match self {
            TcpVariant::Reno => ("reno", RecoveryKind::Reno),
            TcpVariant::NewReno => ("reno", RecoveryKind::NewReno),
            TcpVariant::Sack => ("reno", RecoveryKind::Sack),
            TcpVariant::Cubic => ("cubic", RecoveryKind::Sack),
        }
    }
}

/// TCP settings of one flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Variant: a preset of congestion control and loss recovery ([`TcpVariant::preset`]).
    pub variant: TcpVariant,
    /// Congestion controller by name (`tcp::cc::REGISTRY`); `None`: the variant's.
    #[serde(default)]
    pub cc: Option<String>,
    /// Loss recovery; `None`: the variant's.
    #[serde(default)]
    pub recovery: Option<RecoveryKind>,
    /// Pacing as Linux's internal TCP pacing (`tcp::pacing`); off by default.
    #[serde(default)]
    pub pacing: bool,
    /// A paced sender sends bursts of segments as Linux's GSO/TSO autosizing
    /// (`tcp_tso_autosize`, net/ipv4/tcp_output.c): about 1 ms of the pacing rate at once,
    /// then waits for the whole burst's time (`tcp::pacing`); off by default (one segment at
    /// a time).
    #[serde(default)]
    pub gso: bool,
    /// A paced sender that leaves after its time takes up to half the burst's time off the
    /// next gap, as Linux's `tcp_update_skb_after_send` (`tcp::pacing`); off by default.
    #[serde(default)]
    pub pacing_credit: bool,
    /// The receiver advertises Linux 6.18's window (`tcp::rwnd`: about 64 KB at first, grown
    /// once per receiver RTT) instead of `rwnd_segments`; off by default.
    #[serde(default)]
    pub linux_rwnd: bool,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Header bytes added to each data segment on the wire.
    #[serde(default = "default_hdr")]
    pub header_bytes: u32,
    /// Size of an ACK on the wire.
    #[serde(default = "default_hdr")]
    pub ack_bytes: u32,
    /// Initial congestion window, segments.
    #[serde(default = "default_iw")]
    pub init_cwnd: f64,
    /// Initial slow-start threshold, segments (`None`: unlimited, RFC 5681 s. 3.1).
    #[serde(default)]
    pub init_ssthresh: Option<f64>,
    /// Receiver's advertised window, segments.
    pub rwnd_segments: u32,
    /// RTO lower bound, ns (RFC 6298 s. 2.4; ns-2 used 1 s, Linux 200 ms).
    pub min_rto_ns: u64,
    /// RTO upper bound, ns.
    #[serde(default = "default_max_rto")]
    pub max_rto_ns: u64,
    /// RTO before the first RTT sample, ns (RFC 6298 s. 2.1: 1 s).
    #[serde(default = "default_init_rto")]
    pub init_rto_ns: u64,
    /// Clock granularity G of RFC 6298 s. 2, ns.
    #[serde(default = "default_granularity")]
    pub granularity_ns: u64,
    /// Delayed ACKs (RFC 5681 s. 4.2: an ACK for at least every second segment).
    #[serde(default)]
    pub delack: bool,
    /// Delayed-ACK timeout, ns.
    #[serde(default = "default_delack")]
    pub delack_ns: u64,
    /// ECN-capable transport (RFC 3168).
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, data segments carry ECT(1), the L4S identifier (RFC 9331 s. 4.1), instead of
    /// classic ECT(0) (scenario files: `ecn = "l4s"`).
    #[serde(default)]
    pub ect1: bool,
    /// With `ecn`, the sender asks for AccECN feedback (RFC 9768) in its SYN; `None`: when its
    /// congestion controller needs it (TCP Prague). Without it, an ECN sender asks for RFC 3168.
    #[serde(default)]
    pub accecn: Option<bool>,
    /// The ECN feedback the receiver supports (RFC 9768 Table 2); AccECN by default, which
    /// answers an RFC 3168 sender with RFC 3168 feedback as before.
    #[serde(default)]
    pub receiver_ecn: EcnSupport,
    /// Record the congestion window as a time series.
    #[serde(default)]
    pub trace_cwnd: bool,
    /// TCP timestamps option (RFC 7323): 12 more bytes on every segment and ACK (10 of the
    /// option, 2 of padding, as Linux and ns-3 send it).
    #[serde(default)]
    pub timestamps: bool,
    /// Three-way handshake before data (RFC 9293 s. 3.5): the sender sends a SYN, the receiver
    /// answers with a SYN-ACK, and data starts when the SYN-ACK arrives (one RTT after the
    /// start, as in ns-3 and real stacks). Off: data at the start time, as ns-2's one-way agents.
    #[serde(default)]
    pub handshake: bool,
    /// With the handshake: the sender first resolves the receiver's link-layer address across
    /// the path's middle links (all but the first and last: the bottleneck and its reverse in a
    /// dumbbell), as on aqmlab's testbed, whose end hosts share one link layer through the
    /// forwarder (`tcp::handshake`). Off by default.
    #[serde(default)]
    pub resolve: bool,
    /// Limited transmit (RFC 3042 s. 2; with SACK, RFC 6675 s. 5 step 3): one new segment on each
    /// of the first two duplicate ACKs. Off by default (ns-2's agents; Linux has it on).
    #[serde(default)]
    pub limited_transmit: bool,
    /// SACK senders outside fast recovery: the window limits the span from snd_una (ns-2's
    /// `Agent/TCP/Sack1`, and aqmlab before 2026-11-28) instead of the unSACKed segments in
    /// flight (Linux's `tcp_packets_in_flight`, ns-3's `BytesInFlight`; the default).
    #[serde(default)]
    pub sack_window_span: bool,
    /// What the sender hands down at one instant (one send opportunity, a GSO burst) leaves it
    /// together a uniform random time in [0, this) later, order kept (`tcp::send_jitter`: Floyd
    /// and Jacobson's random processing time, ns-2's `overhead_`); 0, the default: segments
    /// leave at once.
    #[serde(default)]
    pub send_jitter_ns: u64,
    /// The receiver compresses SACKs as Linux does (`tcp::receiver`'s `SackCompress`: after
    /// three immediate duplicate ACKs at one `rcv_nxt`, the rest held up to min(1 ms, RTT / 20)
    /// or 44 of them); off, the default: every out-of-order segment is ACKed at once.
    #[serde(default)]
    pub sack_compress: bool,
}

/// Bytes of the timestamps option with its padding (RFC 7323 s. 3: kind, length, two 4-byte
/// values = 10; two NOPs align it to 12).
pub const TIMESTAMP_OPTION_BYTES: u32 = 12;

impl TcpConfig {
    /// The congestion controller's name: `cc`, else the variant's.
    pub fn cc_name(&self) -> &str {
        self.cc.as_deref().unwrap_or(self.variant.preset().0)
    }

    /// The loss recovery: `recovery`, else the variant's.
    pub fn recovery_kind(&self) -> RecoveryKind {
        self.recovery.unwrap_or(self.variant.preset().1)
    }

    /// Option bytes added to every segment and ACK on the wire.
    pub fn option_bytes(&self) -> u32 {
        if self.timestamps {
            TIMESTAMP_OPTION_BYTES
        } else {
            0
        }
    }
}

fn default_hdr() -> u32 {
    40
}
fn default_iw() -> f64 {
    10.0
}
fn default_max_rto() -> u64 {
    60_000_000_000
}
fn default_init_rto() -> u64 {
    1_000_000_000
}
fn default_granularity() -> u64 {
    1_000_000
}
fn default_delack() -> u64 {
    40_000_000
}

/// An edge marker's token-bucket profile (RIO / ModRED): packets within it are `In`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    /// Committed rate, bit/s.
    pub rate_bps: u64,
    /// Bucket depth, bytes.
    pub burst_bytes: u64,
}

/// An open-loop source: Poisson arrivals, packet sizes exponential (or fixed) with a mean, no
/// feedback (to check the simulator against queueing theory, e.g. M/M/1 with a dropping function).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Mean packet arrival rate, packets per second.
    pub rate_pps: f64,
    /// Mean packet size on the wire, bytes.
    pub mean_size_bytes: f64,
    /// Sizes exponentially distributed (rounded to whole bytes, at least 1); else all equal.
    #[serde(default = "default_true")]
    pub exponential: bool,
}

fn default_true() -> bool {
    true
}

/// A packet size with its share of a source's packets.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SizeShare {
    /// Size on the wire, bytes.
    pub bytes: u32,
    /// Fraction of packets (the shares of a table sum to 1).
    pub share: f64,
}

/// An on/off source (ns-2 `Traffic/Exponential`, `Traffic/Pareto`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    /// Rate during on periods, bit/s.
    pub rate_bps: f64,
    /// Packet sizes.
    pub sizes: Vec<SizeShare>,
    /// Mean on time, ns.
    pub on_mean_ns: f64,
    /// Mean off time, ns.
    pub off_mean_ns: f64,
    /// Pareto shape of on and off times (`None`: exponential).
    #[serde(default)]
    pub shape: Option<f64>,
}

/// An open-loop (UDP-like) source.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceConfig {
    /// Constant bit rate.
    Cbr {
        /// Rate, bit/s.
        rate_bps: f64,
        /// Packet sizes.
        sizes: Vec<SizeShare>,
    },
    /// On/off.
    OnOff(OnOffConfig),
    /// A latency probe (traffic/probe.rs): `bytes` every `interval_ns`, echoed back.
    Probe {
        /// Time between probes, ns.
        interval_ns: u64,
        /// Probe size on the wire, bytes.
        bytes: u32,
    },
}

/// One TCP flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Name, for reports.
    pub name: String,
    /// Sending host (node index).
    pub src: usize,
    /// Receiving host (node index).
    pub dst: usize,
    /// Links from src to dst, in order.
    pub path: Vec<usize>,
    /// Links from dst back to src, in order (the ACKs' path).
    pub rev_path: Vec<usize>,
    /// TCP settings (unused by an open-loop Poisson source).
    pub tcp: TcpConfig,
    /// An open-loop Poisson packet source instead of TCP (`rev_path` may then be empty).
    #[serde(default)]
    pub poisson: Option<PoissonConfig>,
    /// Another open-loop source instead of TCP (`rev_path` may then be empty).
    #[serde(default)]
    pub source: Option<SourceConfig>,
    /// The flow sends no new data from here, ns (`None`: until the end).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Record the bytes delivered to the receiver so far as a time series.
    #[serde(default)]
    pub trace_delivered: bool,
    /// Start time, ns.
    #[serde(default)]
    pub start_ns: u64,
    /// Bytes to send (`None`: a bulk flow that never ends).
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Edge marker profile.
    #[serde(default)]
    pub profile: Option<ProfileConfig>,
    /// Start when an earlier finite flow completes, a think time later (the next object of a
    /// web session); `start_ns` is then ignored.
    #[serde(default)]
    pub after: Option<AfterConfig>,
    /// Open-loop sources: the ECN codepoint of their packets, as the two bits of the IP header
    /// (0 Not-ECT, 2 ECT(0), 1 ECT(1); RFC 3168 s. 5). TCP flows set theirs with `tcp.ecn`.
    #[serde(default)]
    pub ecn_bits: u8,
}

/// A flow that starts when another one has completed (docs/scenarios.md, "Web sessions").
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AfterConfig {
    /// Index of the earlier finite TCP flow (in `flows`, before this one).
    pub flow: usize,
    /// Think time from that flow's completion (the ACK of its last segment) to this flow's
    /// start, ns.
    pub think_ns: u64,
}
