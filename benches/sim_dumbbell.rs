//! Simulator speed and memory on the reference dumbbell (issue 2, SPEC "Performance targets"):
//! 100 NewReno bulk flows, 100 Mb/s bottleneck with 2 ms one-way delay, RED (min_th 50,
//! max_th 150, buffer 300 packets), 1 Gb/s access links with one-way delays 1..19 ms, 60 s.
//!
//! Reports bottleneck packets (arrivals at the bottleneck queue over the whole run) per wall-clock
//! second for each repetition, events per second, and the process's peak resident memory
//! (VmHWM). A second part runs 10,000 flows to show memory at scale.
//! Run: `cargo bench -p aqmlab-sim --bench sim_dumbbell` (release profile, one core).

use sim::config::AqmConfig;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn dumbbell(flows: usize, seconds: u64) -> Dumbbell {
    Dumbbell {
        flows,
        rate_bps: 100_000_000,
        delay_ns: 2_000_000,
        buffer_pkts: 300,
        aqm: Some(AqmConfig {
            name: "red".into(),
            params: serde_json::from_str(r#"{"min_th": 50, "max_th": 150}"#).unwrap(),
        }),
        access_rate_bps: 1_000_000_000,
        access_delays_ns: (1..=19).map(|ms| ms * 1_000_000).collect(),
        tcp: default_tcp(),
        duration_ns: seconds * 1_000_000_000,
        warmup_ns: 10_000_000_000,
        seed: 1,
        stagger_ns: 10_000_000,
    }
}

fn run(flows: usize, seconds: u64) -> (f64, u64, u64, f64, f64) {
    let cfg = dumbbell(flows, seconds).config();
    let t = Instant::now();
    let mut sim = Sim::new(&cfg).expect("config");
    let r = sim.run().expect("run");
    let wall = t.elapsed().as_secs_f64();
    let pkts = sim.links[0].stats.total_arrived;
    (
        wall,
        pkts,
        r.summary.run.events,
        r.summary.links[0].utilisation,
        r.summary.links[0].queue_mean_pkts,
    )
}

fn main() {
    // `cargo bench` passes --bench; ignore arguments.
    println!("reference dumbbell: 100 flows, 100 Mb/s, RED 50/150/300, 60 s simulated");
    let mut rates = Vec::new();
    for rep in 0..5 {
        let (wall, pkts, events, util, q) = run(100, 60);
        let rate = pkts as f64 / wall;
        rates.push(rate);
        println!(
            "  rep {rep}: {pkts} bottleneck packets in {wall:.3} s wall = {:.0} pkts/s, {:.2} M events/s (util {util:.4}, mean queue {q:.1})",
            rate,
            events as f64 / wall / 1e6
        );
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "  median {:.0} bottleneck packets per wall-clock second (target >= 1,000,000)",
        rates[2]
    );
    println!("  peak memory so far {:.1} MiB", peak_rss_mib());
    println!("scale: 10,000 flows, same dumbbell, 20 s simulated");
    let (wall, pkts, _, util, _) = run(10_000, 20);
    println!(
        "  {pkts} bottleneck packets in {wall:.2} s wall = {:.0} pkts/s (util {util:.4}); peak memory {:.1} MiB (target < 1024)",
        pkts as f64 / wall,
        peak_rss_mib()
    );
}
