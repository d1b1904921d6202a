//! Debug aid (issue 22): `phantom_probe CONFIG_JSON [FROM_S]` runs the simulator on a run's
//! `config.json` and prints, over the 10 ms samples from FROM_S seconds (default 5) to the end,
//! the mean over samples of the sum over TCP flows of: the packets in flight as the rate state
//! counts them (Linux's `tcp_packets_in_flight`), the SACKed retransmissions `bbr-ns3:rtxsack`
//! adds to that count (ns-3.44's `BytesInFlight`; 0 under other controllers), and the share of
//! flow-samples in recovery. The ns-3 side of the same figures is `ns3_dumbbell.cc
//! --phantomTrace` (its COUNTED and SACKRTX columns; docs/crosscheck-ns3.md s. 1.5).
use sim::Sim;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: phantom_probe CONFIG_JSON [FROM_S]");
    let from_s: f64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let step = 10_000_000;
    let from = (from_s * 1e9) as u64;
    let (mut n, mut in_flight, mut held, mut rec, mut flow_samples) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut t = 0;
    while t + step <= cfg.duration_ns {
        t += step;
        sim.run_until(t);
        if t <= from {
            continue;
        }
        n += 1;
        for f in &sim.flows {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            in_flight += u64::from(s.rate.as_ref().map_or(0, |r| r.in_flight));
            held += u64::from(s.ns3_rtx_sacked.as_ref().map_or(0, |h| h.count()));
            rec += u64::from(s.in_recovery);
            flow_samples += 1;
        }
    }
    let n = n.max(1) as f64;
    println!(
        "samples {} in_flight {:.1} rtx_sacked_held {:.1} counted {:.1} in_recovery {:.2}",
        n,
        in_flight as f64 / n,
        held as f64 / n,
        (in_flight + held) as f64 / n,
        rec as f64 / flow_samples.max(1) as f64
    );
}
