//! A dumbbell builder for Rust tests and benchmarks (the Python layer has the user-facing builders,
//! which write the same node and link layout).
//!
//! Layout: sender host i -- access link (rate, delay_i) -- router A == bottleneck == router B --
//! access link (rate, delay_i) -- receiver host i, one host pair per flow; the reverse direction
//! mirrors it with a DropTail bottleneck of the same rate, delay and buffer.

use crate::config::{
    AqmConfig, Config, FlowConfig, LinkConfig, NodeConfig, NodeKind, TcpConfig, TcpVariant,
};

/// What a dumbbell is made of.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    /// Number of flows (and host pairs).
    pub flows: usize,
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// Bottleneck one-way delay, ns.
    pub delay_ns: u64,
    /// Bottleneck buffer, packets.
    pub buffer_pkts: u32,
    /// AQM on the forward bottleneck.
    pub aqm: Option<AqmConfig>,
    /// Access link rate, bit/s.
    pub access_rate_bps: u64,
    /// One-way delay of flow i's two access links, ns (cycled when shorter than `flows`).
    pub access_delays_ns: Vec<u64>,
    /// TCP of every flow.
    pub tcp: TcpConfig,
    /// Run length, ns.
    pub duration_ns: u64,
    /// Warm-up, ns.
    pub warmup_ns: u64,
    /// Seed.
    pub seed: u64,
    /// Flow i starts at i * stagger, ns.
    pub stagger_ns: u64,
}

/// NewReno with a 1460-byte MSS, 200 ms minimum RTO, IW 10, no delayed ACKs.
pub fn default_tcp() -> TcpConfig {
    TcpConfig {
        variant: TcpVariant::NewReno,
        mss: 1460,
        header_bytes: 40,
        ack_bytes: 40,
        init_cwnd: 10.0,
        init_ssthresh: None,
        rwnd_segments: 100_000,
        min_rto_ns: 200_000_000,
        max_rto_ns: 60_000_000_000,
        init_rto_ns: 1_000_000_000,
        granularity_ns: 1_000_000,
        delack: false,
        delack_ns: 40_000_000,
        ecn: false,
        ect1: false,
        accecn: None,
        receiver_ecn: Default::default(),
        trace_cwnd: false,
        timestamps: false,
        handshake: false,
        resolve: false,
        limited_transmit: false,
        sack_window_span: false,
        cc: None,
        recovery: None,
        pacing: false,
        gso: false,
        pacing_credit: false,
        linux_rwnd: false,
        send_jitter_ns: 0,
        sack_compress: false,
    }
}

/// A link of `rate_bps` and `delay_ns` with a buffer of `buffer_pkts` packets.
#[allow(clippy::too_many_arguments)]
fn link(
    name: String,
    from: usize,
    to: usize,
    rate_bps: u64,
    delay_ns: u64,
    buffer_pkts: u32,
    aqm: Option<AqmConfig>,
    monitor: bool,
) -> LinkConfig {
    LinkConfig {
        name,
        from,
        to,
        rate_bps,
        delay_ns,
        buffer_pkts: Some(buffer_pkts),
        buffer_bytes: None,
        aqm,
        mean_pkt_bytes: 1500,
        monitor,
        rate_schedule: None,
        rate_repeat_ns: None,
        trace_ms: None,
        events_path: None,
        pcap_path: None,
    }
}

/// Buffer of an access link, packets (large enough never to drop).
const ACCESS_BUFFER_PKTS: u32 = 10_000;

impl Dumbbell {
    /// The two bottleneck links: `bottleneck` A -> B (index 0, with the AQM, monitored) and
    /// `reverse` B -> A (index 1, DropTail).
    fn bottlenecks(&self) -> Vec<LinkConfig> {
        let (r, d, b) = (self.rate_bps, self.delay_ns, self.buffer_pkts);
        vec![
            link("bottleneck".into(), 0, 1, r, d, b, self.aqm.clone(), true),
            link("reverse".into(), 1, 0, r, d, b, None, false),
        ]
    }

    /// Host pair `i` (sender node `s`, receiver `s + 1`) with its four access links appended to
    /// `links`, and the flow between them.
    fn host_pair(&self, i: usize, s: usize, links: &mut Vec<LinkConfig>) -> FlowConfig {
        let d = self.access_delays_ns[i % self.access_delays_ns.len()];
        let (r, l0) = (s + 1, links.len());
        let acc = |name: String, from, to| {
            link(
                name,
                from,
                to,
                self.access_rate_bps,
                d,
                ACCESS_BUFFER_PKTS,
                None,
                false,
            )
        };
        links.push(acc(format!("S{i}-A"), s, 0));
        links.push(acc(format!("B-R{i}"), 1, r));
        links.push(acc(format!("R{i}-B"), r, 1));
        links.push(acc(format!("A-S{i}"), 0, s));
        FlowConfig {
            name: format!("f{i}"),
            src: s,
            dst: r,
            path: vec![l0, 0, l0 + 1],
            rev_path: vec![l0 + 2, 1, l0 + 3],
            tcp: self.tcp.clone(),
            start_ns: i as u64 * self.stagger_ns,
            size_bytes: None,
            profile: None,
            poisson: None,
            source: None,
            stop_ns: None,
            trace_delivered: false,
            after: None,
            ecn_bits: 0,
        }
    }

    /// The run configuration.
    pub fn config(&self) -> Config {
        let node = |name: String, kind| NodeConfig { name, kind };
        let mut nodes = vec![
            node("A".into(), NodeKind::Router),
            node("B".into(), NodeKind::Router),
        ];
        let mut links = self.bottlenecks();
        let mut flows = Vec::with_capacity(self.flows);
        for i in 0..self.flows {
            let s = nodes.len();
            nodes.push(node(format!("S{i}"), NodeKind::Host));
            nodes.push(node(format!("R{i}"), NodeKind::Host));
            flows.push(self.host_pair(i, s, &mut links));
        }
        Config {
            seed: self.seed,
            duration_ns: self.duration_ns,
            warmup_ns: self.warmup_ns,
            sample_interval_ns: 10_000_000,
            max_samples: 100_000,
            nodes,
            links,
            flows,
        }
    }
}
