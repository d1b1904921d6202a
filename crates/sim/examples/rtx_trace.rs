//! Debug aid (issue 22): `rtx_trace CONFIG_JSON [FROM_S]` runs the simulator on a run's
//! `config.json` and prints, every 10 ms from FROM_S seconds (default 5), each TCP flow's
//! retransmitted segments above snd_una in the line format of `scripts/ns3_dumbbell.cc
//! --rtxTrace`, so that `scripts/ns3check/rtxlife.py` follows them alike on both simulators:
//!
//! ```text
//! T FLOW UNA CA UNSACKED SACKED
//! ```
//!
//! UNSACKED: segments whose last transmission was a retransmission, neither SACKed nor
//! delivered (the rate state's records); SACKED: the SACKed retransmissions `bbr-ns3:rtxsack`
//! holds (ns-3.44's items SACKed with their retrans flag set); comma-separated, "-" when empty.
//! CA: 3 in fast recovery, 4 while `bbr-ns3:rtotail` applies after a timeout (ns-3's CA_LOSS),
//! else 0.
use sim::Sim;

fn list(v: impl Iterator<Item = u32>) -> String {
    let s: Vec<String> = v.map(|x| x.to_string()).collect();
    if s.is_empty() {
        "-".into()
    } else {
        s.join(",")
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: rtx_trace CONFIG_JSON [FROM_S]");
    let from_s: f64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let step = 10_000_000;
    let from = (from_s * 1e9) as u64;
    let mut t = 0;
    while t + step <= cfg.duration_ns {
        t += step;
        sim.run_until(t);
        if t < from {
            continue;
        }
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            let ca = if s.in_recovery {
                3
            } else if s.ns3_rto_tail.as_ref().is_some_and(|r| r.active()) {
                4
            } else {
                0
            };
            let unsacked = (s.snd_una..s.snd_max).filter(|&q| {
                !s.sb.as_ref().is_some_and(|b| b.is_sacked(q))
                    && s.rate
                        .as_ref()
                        .and_then(|r| r.record(q))
                        .is_some_and(|r| r.retrans && !r.acked)
            });
            let sacked = s.ns3_rtx_sacked.iter().flat_map(|h| h.segments());
            println!(
                "{} {} {} {} {} {}",
                t as f64 / 1e9,
                i,
                s.snd_una,
                ca,
                list(unsacked),
                list(sacked)
            );
        }
    }
}
