//! Debug aid (issue 22): `bbr_state_trace CONFIG_JSON` runs the simulator on a run's
//! `config.json` and prints every BBR sender's state each 10 ms in the line format of
//! `scripts/ns3_dumbbell.cc --bbrTrace`, with the bottleneck's queue and the sender's unSACKed
//! segments above snd_una appended:
//!
//! ```text
//! T FLOW STATE PG CG MINRTT PACING BW CWND INFLIGHT CA BACKLOG DROPS QUEUE OUTSTANDING
//! ```
//!
//! STATE 0 startup, 1 drain, 2 probe_bw, 3 probe_rtt; MINRTT ms; PACING, BW bit/s of whole
//! packets; CWND, INFLIGHT segments (INFLIGHT as ns-3's `BytesInFlight`: the rate state's count
//! plus the SACKed retransmissions `bbr-ns3:rtxsack` holds); CA 0 open, 3 recovery, 4 loss;
//! BACKLOG and DROPS 0 (not kept); QUEUE the first link's packets waiting; OUTSTANDING
//! snd_max - snd_una less the SACKed segments (what the network may hold of the flow).
use sim::tcp::cc::bbr_common::CaState;
use sim::tcp::cc::bbr_common::Mode;
use sim::tcp::cc::Bbr;
use sim::Sim;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: bbr_state_trace CONFIG_JSON");
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let step = 10_000_000;
    let mut t = 0;
    while t + step <= cfg.duration_ns {
        t += step;
        sim.run_until(t);
        let queue = sim.links.first().map_or(0, |l| l.len_pkts());
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            let Some(b) = s.cc.as_any().and_then(|a| a.downcast_ref::<Bbr>()) else {
                continue;
            };
            let bits = |segs_per_s: f64| segs_per_s * s.params.pkt_size as f64 * 8.0;
            let state = match b.mode {
                Mode::Startup => 0,
                Mode::Drain => 1,
                Mode::ProbeBw => 2,
                Mode::ProbeRtt => 3,
            };
            let ca = if s.in_recovery {
                3
            } else if b.prev_ca_state == CaState::Loss {
                4
            } else {
                0
            };
            let in_flight = s.rate.as_ref().map_or(0, |r| r.in_flight)
                + s.ns3_rtx_sacked.as_ref().map_or(0, |h| h.count());
            let sacked = s.sb.as_ref().map_or(0, |sb| sb.sacked_count());
            let outstanding = (s.snd_max - s.snd_una).saturating_sub(sacked);
            println!(
                "{:.2} {} {} {} {} {:.3} {:.0} {:.0} {} {} {} 0 0 {} {}",
                t as f64 / 1e9,
                i,
                state,
                b.pacing_gain,
                b.cwnd_gain,
                b.min_rtt.unwrap_or(0) as f64 / 1e6,
                bits(b.pacing_rate),
                bits(b.bw_estimate() * 1e9),
                s.cwnd,
                in_flight,
                ca,
                queue,
                outstanding
            );
        }
    }
}
