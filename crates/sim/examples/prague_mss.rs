//! Debug aid (issue 22, docs/l4s.md "Prague at low rates"): `prague_mss CONFIG_JSON [STEP_MS]`
//! runs the simulator on a run's `config.json` and prints, every STEP_MS (default 1000) ms, each
//! TCP flow's payload per new segment (TCP Prague 0.7's `tcp_sync_mss`), its window, and, for
//! Prague, `rate_bytes`:
//!   T FLOW MSS CWND RATE_BYTES SSTHRESH ROUND ALPHA
//! then, per flow over the measurement window, the smallest, mean (over the samples) and largest
//! MSS and the segments of each size it sent (`SIZES first:payload ...`, the sender's record).
use sim::tcp::cc::Prague;
use sim::Sim;

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let path = arg(1).expect("usage: prague_mss CONFIG_JSON [STEP_MS]");
    let step_ms: u64 = arg(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let n = sim.flows.len();
    let mut seen: Vec<(u32, u32, f64, u32)> = vec![(u32::MAX, 0, 0.0, 0); n];
    let step = step_ms * 1_000_000;
    let mut t = 0;
    while t < cfg.duration_ns {
        t += step;
        sim.run_until(t);
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(e) = f.tcp() else { continue };
            let s = &e.sender;
            let mss = s.params.pkt_size - s.params.header;
            let p = s.cc.as_any().and_then(|a| a.downcast_ref::<Prague>());
            let (rate, ssthresh, round, alpha) = p.map_or((0, 0, 0, 0.0), |p| {
                (p.rate_bytes(), p.ssthresh(), p.round(), p.alpha())
            });
            println!(
                "{:.3} {i} {mss} {} {rate} {ssthresh} {round} {alpha:.3}",
                t as f64 * 1e-9,
                s.cwnd
            );
            if t > cfg.warmup_ns {
                let x = &mut seen[i];
                *x = (x.0.min(mss), x.1.max(mss), x.2 + f64::from(mss), x.3 + 1);
            }
        }
    }
    for (i, f) in sim.flows.iter().enumerate() {
        let Some(e) = f.tcp() else { continue };
        let (lo, hi, sum, k) = seen[i];
        let runs: Vec<String> = e
            .sender
            .seg_sizes
            .iter()
            .map(|(a, b)| format!("{a}:{b}"))
            .collect();
        println!(
            "flow {i} mss min {lo} mean {:.0} max {hi}; {} size changes; SIZES {}",
            sum / f64::from(k.max(1)),
            runs.len(),
            runs.iter()
                .rev()
                .take(6)
                .rev()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
