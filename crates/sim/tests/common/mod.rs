//! Helpers shared by the whole-simulator tests.
#![allow(dead_code)] // each test file uses some of them

use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// Drops the data packets (size > 100 B) whose arrival numbers (1-based) are listed.
#[derive(Debug)]
pub struct DropArrivals {
    /// Arrival numbers of the data packets to drop.
    pub drop: Vec<u64>,
    /// Data packets seen so far.
    pub n: u64,
}

impl Aqm for DropArrivals {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn enqueue(&mut self, p: &PacketMeta, _: &QueueView, _: Time, _: &mut AqmRng) -> Verdict {
        if p.size_bytes <= 100 {
            return Verdict::Admit;
        }
        self.n += 1;
        if self.drop.contains(&self.n) {
            Verdict::Drop
        } else {
            Verdict::Admit
        }
    }
}

/// `flows` host pairs on an idle path of 100 Mb/s links: access links of 1 ms, a bottleneck of
/// 10 ms with 1000 packets of buffer (base RTT 24 ms; a 1500 B segment takes 120 us per link, a
/// 40 B packet 3.2 us), no warm-up, seed 1, every flow starting at 0.
pub fn idle_dumbbell(
    flows: usize,
    tcp: sim::config::TcpConfig,
    duration_ns: u64,
) -> sim::topo::Dumbbell {
    sim::topo::Dumbbell {
        flows,
        rate_bps: 100_000_000,
        delay_ns: 10_000_000,
        buffer_pkts: 1000,
        aqm: None,
        access_rate_bps: 100_000_000,
        access_delays_ns: vec![1_000_000],
        tcp,
        duration_ns,
        warmup_ns: 0,
        seed: 1,
        stagger_ns: 0,
    }
}
