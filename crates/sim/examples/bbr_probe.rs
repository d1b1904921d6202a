//! Temporary debug aid (not committed): BBR state of every flow every 100 ms from a run's config.json.
use sim::tcp::cc::Bbr;
use sim::Sim;

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let cfg: sim::config::Config =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut sim = Sim::new(&cfg).unwrap();
    let mut t = 0;
    while t < cfg.duration_ns {
        t += 250_000_000;
        sim.run_until(t);
        for (i, f) in sim.flows.iter().enumerate() {
            let s = &f.tcp().unwrap().sender;
            let b = s.cc.as_any().unwrap().downcast_ref::<Bbr>().unwrap();
            println!(
                "{:.2} {} cwnd {} bw {:.2} mrtt {:.1} mode {:?} pg {} extra {:?} pacing {:.2} rec {} inflight {}",
                t as f64 / 1e9, i, s.cwnd, b.max_bw() * 1e9 * 1500.0 * 8.0 / 1e6,
                b.min_rtt.unwrap_or(0) as f64 / 1e6, b.mode, b.pacing_gain, b.extra_acked,
                b.pacing_rate * 1500.0 * 8.0 / 1e6, s.in_recovery, s.rate.as_ref().map_or(0, |r| r.in_flight)
            );
        }
    }
}
