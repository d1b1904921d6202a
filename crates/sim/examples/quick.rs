//! Runs a 10-flow RED dumbbell and prints the summary (a smoke check while developing).
use sim::config::AqmConfig;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let aqm_name = std::env::args().nth(2).unwrap_or("red".into());
    let aqm = (aqm_name != "droptail").then(|| AqmConfig {
        name: aqm_name,
        params: serde_json::from_str(r#"{"min_th": 50, "max_th": 150}"#).unwrap(),
    });
    let d = Dumbbell {
        flows: n,
        rate_bps: 100_000_000,
        delay_ns: 2_000_000,
        buffer_pkts: 300,
        aqm,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: (1..20).map(|ms| ms * 1_000_000).collect(),
        tcp: default_tcp(),
        duration_ns: 60_000_000_000,
        warmup_ns: 10_000_000_000,
        seed: 1,
        stagger_ns: 10_000_000,
    };
    let t = std::time::Instant::now();
    let mut sim = Sim::new(&d.config()).expect("config");
    let r = sim.run().expect("run");
    let wall = t.elapsed().as_secs_f64();
    let b = &r.summary.links[0];
    println!(
        "{}",
        serde_json::to_string_pretty(&r.summary.links).unwrap()
    );
    let jain = {
        let g: Vec<f64> = r.summary.flows.iter().map(|f| f.goodput_bps).collect();
        let s: f64 = g.iter().sum();
        s * s / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>())
    };
    let total_pkts = b.arrived as f64 * 60.0 / 50.0;
    println!(
        "wall {wall:.2}s events {} util {:.4} q {:.1} jain {jain:.3} ~pkts/s {:.0}",
        r.summary.run.events,
        b.utilisation,
        b.queue_mean_pkts,
        total_pkts / wall
    );
}
