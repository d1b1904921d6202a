//! BBR v1 (`crates/sim/src/tcp/cc/bbr.rs`) in the whole simulator, against what the BBR paper
//! (Cardwell et al., ACM Queue 14(5), 2016) and tcp_bbr.c's design give: one flow fills a
//! bottleneck with a deep buffer while keeping its queue near zero (its window is 2 BDP at most
//! and it paces at the estimated rate), where CUBIC fills the buffer; flows of the same RTT
//! share the link evenly; every end-of-run invariant of the run holds.

mod common;

use sim::config::{RecoveryKind, TcpVariant};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const S: u64 = 1_000_000_000;

/// 20 Mb/s, base RTT 24 ms (1 + 10 + 1 ms each way), buffer 400 packets (10 BDP), 2 s of
/// warm-up.
fn run(cc: &str, flows: usize, duration: u64) -> sim::results::Results {
    run_with(cc, flows, duration, RecoveryKind::Sack, 400)
}

/// The same with a loss recovery and a buffer (packets).
fn run_with(
    cc: &str,
    flows: usize,
    duration: u64,
    recovery: RecoveryKind,
    buffer: u32,
) -> sim::results::Results {
    let mut tcp = default_tcp();
    tcp.variant = TcpVariant::Sack;
    tcp.cc = Some(cc.into());
    tcp.recovery = Some(recovery);
    let d = Dumbbell {
        rate_bps: 20_000_000,
        buffer_pkts: buffer,
        warmup_ns: 2 * S,
        ..common::idle_dumbbell(flows, tcp, duration)
    };
    Sim::new(&d.config()).unwrap().run().unwrap()
}

#[test]
fn one_flow_fills_the_link_with_a_small_queue() {
    let bbr = run("bbr", 1, 12 * S);
    let cubic = run("cubic", 1, 12 * S);
    let (b, c) = (&bbr.summary.links[0], &cubic.summary.links[0]);
    eprintln!(
        "bbr: util {:.4} queue mean {:.1} max {}; cubic: util {:.4} queue mean {:.1}",
        b.utilisation, b.queue_mean_pkts, b.queue_max_pkts, c.utilisation, c.queue_mean_pkts
    );
    // PROBE_RTT (once in 10 s, ~200 ms + a round at 4 packets) costs about 2%.
    assert!(b.utilisation >= 0.96, "utilisation {}", b.utilisation);
    // BDP = 20 Mb/s x 24 ms / 1500 B = 40 packets; BBR's queue stays below one BDP on
    // average, CUBIC's fills a good part of the 400-packet buffer.
    assert!(b.queue_mean_pkts < 40.0, "bbr queue {}", b.queue_mean_pkts);
    assert!(c.queue_mean_pkts > 4.0 * b.queue_mean_pkts);
    assert_eq!(bbr.summary.flows[0].timeouts, 0);
}

#[test]
fn flows_of_one_rtt_share_evenly() {
    let r = run("bbr", 4, 20 * S);
    let g: Vec<f64> = r.summary.flows.iter().map(|f| f.goodput_bps).collect();
    let sum: f64 = g.iter().sum();
    let jain = sum * sum / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>());
    eprintln!("goodputs {g:?} jain {jain:.3}");
    assert!(jain >= 0.9, "Jain index {jain}");
    assert!(r.summary.links[0].utilisation >= 0.95);
}

#[test]
fn bbr1_is_an_alias() {
    let a = run("bbr", 1, 3 * S);
    let b = run("bbr1", 1, 3 * S);
    assert_eq!(
        a.summary.flows[0].goodput_bps,
        b.summary.flows[0].goodput_bps
    );
}

/// Over RACK-TLP (`recovery = "rack"`, Linux's default) BBR runs as over SACK: one flow fills
/// the link with a small queue (before 2026-11-25 BBR's window stayed at 10 under RACK: a 20
/// Mb/s link with a 24 ms RTT carried 10 x 1500 B / 24 ms = 5 Mb/s). With 4 flows and a
/// 30-packet buffer (0.75 BDP) the 2-BDP windows overflow it; RACK finds the lost
/// retransmissions, so the link stays busy without timeouts piling up.
#[test]
fn over_rack_too() {
    let one = run_with("bbr", 1, 12 * S, RecoveryKind::Rack, 400);
    let b = &one.summary.links[0];
    assert!(b.utilisation >= 0.96, "utilisation {}", b.utilisation);
    assert!(b.queue_mean_pkts < 40.0, "bbr queue {}", b.queue_mean_pkts);
    let four = run_with("bbr", 4, 12 * S, RecoveryKind::Rack, 30);
    let l = &four.summary.links[0];
    let timeouts: u64 = four.summary.flows.iter().map(|f| f.timeouts).sum();
    eprintln!(
        "rack, 4 flows, buffer 30: util {:.4} loss {:.4} timeouts {timeouts}",
        l.utilisation, l.loss_ratio
    );
    assert!(l.loss_ratio > 0.0, "the buffer overflows");
    assert!(l.utilisation >= 0.95, "utilisation {}", l.utilisation);
    assert!(timeouts <= 2, "timeouts {timeouts}");
}
