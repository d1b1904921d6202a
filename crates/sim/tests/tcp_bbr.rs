//! BBR v1 (`crates/sim/src/tcp/cc/bbr.rs`) in the whole simulator, against what the BBR paper
//! (Cardwell et al., ACM Queue 14(5), 2016) and tcp_bbr.c's design give: one flow fills a
//! bottleneck with a deep buffer while keeping its queue near zero (its window is 2 BDP at most
//! and it paces at the estimated rate), where CUBIC fills the buffer; flows of the same RTT
//! share the link evenly; every end-of-run invariant of the run holds.

mod common;

use sim::config::TcpVariant;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const S: u64 = 1_000_000_000;

/// 20 Mb/s, base RTT 24 ms (1 + 10 + 1 ms each way), buffer 400 packets (10 BDP), 2 s of
/// warm-up.
fn run(cc: &str, flows: usize, duration: u64) -> sim::results::Results {
    let mut tcp = default_tcp();
    tcp.variant = TcpVariant::Sack;
    tcp.cc = Some(cc.into());
    let d = Dumbbell {
        rate_bps: 20_000_000,
        buffer_pkts: 400,
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
