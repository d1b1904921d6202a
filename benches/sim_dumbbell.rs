//! Simulator speed and memory on the reference dumbbell (issue 2, SPEC "Performance targets"):
//! 100 NewReno bulk flows, 100 Mb/s bottleneck with 2 ms one-way delay, RED (min_th 50,
//! max_th 150, buffer 300 packets), 1 Gb/s access links with one-way delays 1..19 ms, 60 s.
//!
//! Reports bottleneck packets (arrivals at the bottleneck queue over the whole run) per wall-clock
//! second for each repetition, events per second, and the process's peak resident memory
//! (VmHWM). A second part runs 10,000 flows to show memory at scale. A third part runs the same
//! 100-flow dumbbell with `cubic` senders (CUBIC + SACK + PRR, issue 9: >= 1 M packets/s).
//! A fourth, `-- bbr` alone, runs it with BBR v1 senders (`cc = "bbr"`, SACK recovery, paced;
//! issue 22: >= 600 k packets per CPU-second).
//! Run: `cargo bench -p aqmlab-sim --bench sim_dumbbell` (release profile, one core);
//! `-- cubic` (or `-- newreno`, `-- bbr`) runs that 100-flow part alone, three times;
//! `reps=N` after it sets the repetitions (`reps=1` under callgrind).

use sim::config::{AqmConfig, TcpVariant};
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

/// The senders: a variant, and a congestion controller other than the variant's.
type Senders = (TcpVariant, Option<&'static str>);

fn dumbbell(flows: usize, seconds: u64, (variant, cc): Senders) -> Dumbbell {
    let mut tcp = default_tcp();
    tcp.variant = variant;
    tcp.cc = cc.map(str::to_string);
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
        tcp,
        duration_ns: seconds * 1_000_000_000,
        warmup_ns: 10_000_000_000,
        seed: 1,
        stagger_ns: 10_000_000,
    }
}

fn run(flows: usize, seconds: u64, variant: Senders) -> (f64, u64, u64, f64, f64) {
    let cfg = dumbbell(flows, seconds, variant).config();
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

/// `reps` runs of the 100-flow dumbbell with `variant`; prints each and the median rate.
fn reference(variant: Senders, reps: usize) {
    let mut rates = Vec::new();
    for rep in 0..reps {
        let (wall, pkts, events, util, q) = run(100, 60, variant);
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
        rates[reps / 2]
    );
}

/// Repetitions of a 100-flow part run alone: `reps=N` among the arguments, else 3.
fn reps_arg() -> usize {
    std::env::args()
        .find_map(|a| a.strip_prefix("reps=").and_then(|n| n.parse().ok()))
        .unwrap_or(3)
}

fn main() {
    // `cargo bench` passes --bench; `cubic` selects the CUBIC part alone.
    if std::env::args().any(|a| a == "cubic") {
        println!("reference dumbbell with cubic senders (CUBIC + SACK + PRR), 60 s simulated");
        reference((TcpVariant::Cubic, None), reps_arg());
        return;
    }
    if std::env::args().any(|a| a == "bbr") {
        println!("reference dumbbell with bbr senders (BBR v1 + SACK, paced), 60 s simulated");
        reference((TcpVariant::Sack, Some("bbr")), reps_arg());
        return;
    }
    if std::env::args().any(|a| a == "newreno") {
        println!("reference dumbbell, NewReno, 60 s simulated");
        reference((TcpVariant::NewReno, None), reps_arg());
        return;
    }
    println!("reference dumbbell: 100 flows, 100 Mb/s, RED 50/150/300, 60 s simulated");
    reference((TcpVariant::NewReno, None), 5);
    println!("  peak memory so far {:.1} MiB", peak_rss_mib());
    println!("scale: 10,000 flows, same dumbbell, 20 s simulated");
    let (wall, pkts, _, util, _) = run(10_000, 20, (TcpVariant::NewReno, None));
    println!(
        "  {pkts} bottleneck packets in {wall:.2} s wall = {:.0} pkts/s (util {util:.4}); peak memory {:.1} MiB (target < 1024)",
        pkts as f64 / wall,
        peak_rss_mib()
    );
    println!("reference dumbbell with cubic senders (CUBIC + SACK + PRR), 60 s simulated");
    reference((TcpVariant::Cubic, None), 3);
    println!("reference dumbbell with bbr senders (BBR v1 + SACK, paced), 60 s simulated");
    reference((TcpVariant::Sack, Some("bbr")), 3);
}
