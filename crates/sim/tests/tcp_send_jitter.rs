//! `[tcp] send_jitter` (`crates/sim/src/tcp/send_jitter.rs`) in the whole simulator: each
//! data segment leaves its sender a uniform random time in [0, J) later, order kept.
//!
//! - A stop-and-wait flow's RTT grows by J/2 on average (the uniform distribution's mean) and
//!   its throughput falls accordingly (one segment per RTT).
//! - Order is kept: a bulk flow with noise much longer than its segments' spacing has no
//!   retransmission (a reordered segment would make duplicate ACKs and a spurious fast
//!   retransmit) and fills the link as without.
//! - What a sender hands down at one instant (its first window, a GSO burst, what one ACK
//!   releases) leaves together: one draw per send opportunity, as ns-2's `overhead_` delays a
//!   send opportunity and Linux takes a GSO burst down the stack in one go.
//! - Floyd and Jacobson's phase effects ("On Traffic Phase Effects in Packet-Switched
//!   Gateways", 1992): two Reno flows through a drop-tail gateway split the link by the
//!   sub-service-time part of their RTT difference when their timing is exact (periodic in
//!   it, one flow starved at some differences), and neither starves once each source adds a
//!   random time of up to one bottleneck service time.

use sim::config::TcpVariant;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

mod common;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// One flow over `common::idle_dumbbell` for `duration` ns.
fn one_idle_flow(tcp: sim::config::TcpConfig, duration: u64) -> sim::results::Results {
    Sim::new(&common::idle_dumbbell(1, tcp, duration).config())
        .unwrap()
        .run()
        .unwrap()
}

/// Stop and wait (a receive window of one segment) over the idle 24 ms path of
/// `common::idle_dumbbell`: each segment waits for the ACK of the one before, so every RTT
/// sample is the base RTT plus that segment's noise. Base RTT: 2 x (1 + 10 + 1) ms of
/// propagation, three 1500 B transmissions at 100 Mb/s (360 us) and three 40 B ones (9.6 us)
/// = 24.3696 ms. With J = 2 ms the mean RTT is 1 ms longer (J / 2); over 60 s, ~2,400 samples
/// of s.d. J / sqrt(12) = 0.58 ms give a standard error of 0.012 ms, so 0.06 ms is five of
/// them. Segments delivered: 60 s / mean RTT.
#[test]
fn stop_and_wait_rtt_grows_by_half_the_jitter() {
    let base = 24.3696e-3;
    for (j, want) in [(0, base), (2 * MS, base + 1e-3)] {
        let mut tcp = default_tcp();
        tcp.rwnd_segments = 1;
        tcp.send_jitter_ns = j;
        let r = one_idle_flow(tcp, 60 * S);
        let f = &r.summary.flows[0];
        eprintln!(
            "J {j} ns: mean RTT {:.4} ms (min {:.4}, max {:.4}), {} segments",
            f.rtt_mean_s * 1e3,
            f.rtt_min_s * 1e3,
            f.rtt_max_s * 1e3,
            f.delivered_segments
        );
        assert!(
            (f.rtt_mean_s - want).abs() < 6e-5,
            "mean RTT {}",
            f.rtt_mean_s
        );
        assert!(f.rtt_min_s >= base - 1e-7 && f.rtt_max_s < base + j as f64 * 1e-9 + 1e-7);
        let n = 60.0 / want;
        assert!(
            (f.delivered_segments as f64 - n).abs() <= 0.01 * n,
            "{} segments, expected {n:.0}",
            f.delivered_segments
        );
        assert_eq!(f.retransmits, 0);
    }
}

/// One bulk flow capped at 300 segments (1.5 x the 200-packet BDP of the idle path: the
/// 1000-packet buffer never fills) with noise of 2 ms, about 17 segments' spacing at 100 Mb/s:
/// without order kept, segments would overtake each other by up to 2 ms. With it, no
/// duplicate ACK ever triggers a retransmission and the link is as full as without noise.
#[test]
fn bulk_flow_keeps_order() {
    let mut util = vec![];
    for j in [0, 2 * MS] {
        let mut tcp = default_tcp();
        tcp.variant = TcpVariant::Sack;
        tcp.rwnd_segments = 300;
        tcp.send_jitter_ns = j;
        let r = one_idle_flow(tcp, 10 * S);
        let f = &r.summary.flows[0];
        assert_eq!(
            (f.retransmits, f.fast_retransmits, f.timeouts),
            (0, 0, 0),
            "J {j}"
        );
        util.push(r.summary.links[0].utilisation);
    }
    eprintln!("utilisation without / with noise: {util:?}");
    assert!(
        util[0] > 0.95 && (util[1] - util[0]).abs() < 0.01,
        "{util:?}"
    );
}

/// Flow 1's share of two Reno flows through a drop-tail gateway (8 Mb/s, 1000 B packets: a
/// 1 ms service time, 15 packets of buffer, 10 ms; access links 80 Mb/s), flow 1's access
/// delay 5 ms and flow 2's 5 ms + `extra_us` (each host has two access links, so its RTT is
/// longer by 4 x `extra_us`), 100 s after 20 s of warm-up.
fn share_of_flow_1(extra_us: u64, jitter_ns: u64, seed: u64) -> f64 {
    let mut tcp = default_tcp();
    tcp.variant = TcpVariant::Reno;
    tcp.mss = 960;
    tcp.send_jitter_ns = jitter_ns;
    let d = Dumbbell {
        flows: 2,
        rate_bps: 8_000_000,
        delay_ns: 10 * MS,
        buffer_pkts: 15,
        aqm: None,
        access_rate_bps: 80_000_000,
        access_delays_ns: vec![5 * MS, 5 * MS + extra_us * US],
        tcp,
        duration_ns: 120 * S,
        warmup_ns: 20 * S,
        seed,
        stagger_ns: 0,
    };
    let r = Sim::new(&d.config()).unwrap().run().unwrap();
    let g: Vec<f64> = r.summary.flows.iter().map(|f| f.goodput_bps).collect();
    g[0] / (g[0] + g[1])
}

/// Floyd and Jacobson's phase effects, and their remedy. Flow 2's RTT (40 ms of propagation
/// plus 1.2 ms of transmissions) is longer than flow 1's by 0, 0.2, ..., 4 ms: four service
/// times. With exact timing the split is periodic in the difference with the service time, as
/// the paper describes: in each period there are differences at which flow 1 gets almost
/// nothing (measured: 6-12 %, with ~150 timeouts in 100 s) and others at which it gets half or
/// more; so a sub-millisecond change of one path decides which flow starves. With each segment
/// delayed by a uniform time of up to one service time (their "random overhead") no split
/// starves a flow (measured: 0.29-0.50; the longer path stays a little ahead, 0.35-0.42 for
/// most differences, also under SACK recovery, not investigated further), and 0.2 ms more on
/// one path moves the split by less than half as much as the exact timing's largest step
/// (measured: 0.15 against 0.45).
#[test]
fn random_overhead_removes_drop_tail_phase_effects() {
    // RTT difference 4 x extra: one service time (1 ms) is 5 steps of 50 us.
    let extras: Vec<u64> = (0..=20).map(|k| 50 * k).collect();
    let exact: Vec<f64> = extras.iter().map(|&e| share_of_flow_1(e, 0, 1)).collect();
    let noisy: Vec<f64> = extras
        .iter()
        .map(|&e| (1..=2).map(|s| share_of_flow_1(e, MS, s)).sum::<f64>() / 2.0)
        .collect();
    eprintln!("flow 1's share, exact: {exact:.3?}");
    eprintln!("flow 1's share, noise of one service time: {noisy:.3?}");
    let range = |v: &[f64]| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    for k in 0..4 {
        // Period k: RTT differences k .. k + 1 ms.
        let (lo, hi) = range(&exact[5 * k..=5 * k + 5]);
        assert!(
            lo < 0.15 && hi > 0.45,
            "exact, period {k}: shares {lo:.3}-{hi:.3}"
        );
    }
    // How much 0.2 ms more on one path moves the split: the largest change between neighbours.
    let jump = |v: &[f64]| {
        v.windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .fold(0.0, f64::max)
    };
    let (je, jn) = (jump(&exact), jump(&noisy));
    assert!(
        je > 0.4 && jn < je / 2.0,
        "largest step: exact {je:.3}, noise {jn:.3}"
    );
    let (nlo, nhi) = range(&noisy);
    assert!(
        nlo >= 0.25 && nhi <= 0.75,
        "with noise: shares {nlo:.3}-{nhi:.3}"
    );
}

/// The first window (10 segments of 1500 B, handed down together at the start) with J = 5 ms:
/// one draw delays it as a whole, so it crosses the sender's 100 Mb/s access link back to back,
/// its departures exactly one transmission (120 us) apart, the first within [120 us, J + 120
/// us), in each of five seeds. Ten draws, order kept, would leave it so only when the first
/// draw is the largest (about one seed in ten); otherwise spread over milliseconds. Read from the
/// access link's pcap tap.
#[test]
fn a_window_handed_down_at_once_leaves_together() {
    use pcap_file::pcap::PcapReader;
    for seed in 1..=5 {
        let mut tcp = default_tcp();
        tcp.send_jitter_ns = 5 * MS;
        let path = std::env::temp_dir().join(format!(
            "send_jitter_burst_{}_{seed}.pcap",
            std::process::id()
        ));
        let mut d = common::idle_dumbbell(1, tcp, 20 * MS);
        d.seed = seed;
        let mut cfg = d.config();
        let access = cfg.links.iter_mut().find(|l| l.name == "S0-A").unwrap();
        access.pcap_path = Some(path.to_string_lossy().into_owned());
        Sim::new(&cfg).unwrap().run().unwrap();
        let mut rd = PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut t = Vec::new();
        while let Some(p) = rd.next_packet() {
            t.push(p.unwrap().timestamp.as_nanos() as u64);
        }
        std::fs::remove_file(&path).ok();
        // 20 ms: the first window only (the base RTT is 24 ms).
        assert_eq!(t.len(), 10, "seed {seed}: {t:?}");
        let tx = 1500 * 8 * 1_000_000_000 / 100_000_000; // 120 us
        assert!(t[0] >= tx && t[0] < 5 * MS + tx, "seed {seed}: {t:?}");
        for w in t.windows(2) {
            assert_eq!(w[1] - w[0], tx, "seed {seed}: {t:?}");
        }
    }
}
