//! Web-traffic speed (issue 9, "Speed"): objects arriving as a Poisson process of 500 per second
//! with Pareto sizes (shape 1.3, seed 000's shape; mean 20 kB so that the offered load, 80 Mb/s,
//! stays below the 100 Mb/s RED bottleneck of the reference dumbbell: at seed 000's 50 kB mean,
//! 500 objects/s would offer 200 Mb/s), each object a finite NewReno transfer over one of 50 host
//! pairs, 30 s simulated. Reports bottleneck packets per wall-clock second, events per second,
//! objects finished and the peak resident memory, for three repetitions.
//! Run: `cargo bench -p aqmlab-sim --bench sim_web` (release profile, one core).

use rand::Rng;
use sim::config::AqmConfig;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;
use std::time::Instant;

const RATE_PER_S: f64 = 500.0;
const MEAN_BYTES: f64 = 20_000.0;
const SHAPE: f64 = 1.3;

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn config(seconds: u64) -> sim::Config {
    let mut cfg = Dumbbell {
        flows: 50,
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
        warmup_ns: 5_000_000_000,
        seed: 1,
        stagger_ns: 0,
    }
    .config();
    // Objects: Poisson arrivals, Pareto sizes (scale = mean (a - 1) / a), host pairs cycled.
    let pairs = std::mem::take(&mut cfg.flows);
    let mut rng = aqm::rng_from_seed(42);
    let xm = MEAN_BYTES * (SHAPE - 1.0) / SHAPE;
    let mut t = 0.0;
    for k in 0.. {
        t += -(1.0 - rng.random::<f64>()).ln() / RATE_PER_S;
        if t * 1e9 >= cfg.duration_ns as f64 {
            break;
        }
        let u: f64 = 1.0 - rng.random::<f64>();
        let mut f = pairs[k % pairs.len()].clone();
        f.name = format!("web.{k}");
        f.start_ns = (t * 1e9) as u64;
        f.size_bytes = Some((xm / u.powf(1.0 / SHAPE)).ceil() as u64);
        cfg.flows.push(f);
    }
    cfg
}

fn main() {
    let cfg = config(30);
    let objects = cfg.flows.len();
    println!("web dumbbell: {objects} objects in 30 s ({RATE_PER_S}/s, Pareto mean {MEAN_BYTES} B, shape {SHAPE})");
    let mut rates = Vec::new();
    for rep in 0..3 {
        let t = Instant::now();
        let mut sim = Sim::new(&cfg).expect("config");
        let r = sim.run().expect("run");
        let wall = t.elapsed().as_secs_f64();
        let pkts = sim.links[0].stats.total_arrived;
        let done = r
            .summary
            .flows
            .iter()
            .filter(|f| f.completion_s.is_some())
            .count();
        let b = &r.summary.links[0];
        println!(
            "rep {rep}: {wall:.2} s wall, {pkts} bottleneck packets, {:.2} M packets/s, {:.2} M events/s, utilisation {:.3}, {done}/{objects} objects finished",
            pkts as f64 / wall / 1e6,
            r.summary.run.events as f64 / wall / 1e6,
            b.utilisation
        );
        rates.push(pkts as f64 / wall);
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "median {:.2} M bottleneck packets per wall-clock second; peak RSS {:.0} MiB",
        rates[1] / 1e6,
        peak_rss_mib()
    );
}
