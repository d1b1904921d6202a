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
        trace_cwnd: false,
        timestamps: false,
    }
}

impl Dumbbell {
    /// The run configuration.
    pub fn config(&self) -> Config {
        let mut nodes = vec![
            NodeConfig {
                name: "A".into(),
                kind: NodeKind::Router,
            },
            NodeConfig {
                name: "B".into(),
                kind: NodeKind::Router,
            },
        ];
        let mut links = Vec::new();
        let mk =
            |name: String, from, to, rate_bps, delay_ns, buffer_pkts, aqm, monitor| LinkConfig {
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
            };
        links.push(mk(
            "bottleneck".into(),
            0,
            1,
            self.rate_bps,
            self.delay_ns,
            self.buffer_pkts,
            self.aqm.clone(),
            true,
        ));
        links.push(mk(
            "reverse".into(),
            1,
            0,
            self.rate_bps,
            self.delay_ns,
            self.buffer_pkts,
            None,
            false,
        ));
        let mut flows = Vec::new();
        for i in 0..self.flows {
            let d = self.access_delays_ns[i % self.access_delays_ns.len()];
            let s = nodes.len();
            nodes.push(NodeConfig {
                name: format!("S{i}"),
                kind: NodeKind::Host,
            });
            nodes.push(NodeConfig {
                name: format!("R{i}"),
                kind: NodeKind::Host,
            });
            let r = s + 1;
            let l0 = links.len();
            let big = 10_000;
            links.push(mk(
                format!("S{i}-A"),
                s,
                0,
                self.access_rate_bps,
                d,
                big,
                None,
                false,
            ));
            links.push(mk(
                format!("B-R{i}"),
                1,
                r,
                self.access_rate_bps,
                d,
                big,
                None,
                false,
            ));
            links.push(mk(
                format!("R{i}-B"),
                r,
                1,
                self.access_rate_bps,
                d,
                big,
                None,
                false,
            ));
            links.push(mk(
                format!("A-S{i}"),
                0,
                s,
                self.access_rate_bps,
                d,
                big,
                None,
                false,
            ));
            flows.push(FlowConfig {
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
            });
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
