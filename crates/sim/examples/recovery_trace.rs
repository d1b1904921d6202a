//! Debug aid: `recovery_trace CONFIG_JSON` runs the simulator on a run's `config.json` (written
//! by `aqmlab run`) and prints each TCP flow's entries into and exits from fast recovery and its
//! retransmission timeouts, in the line format of `scripts/ns3_dumbbell.cc --rtoTrace`, so that
//! `scripts/ns3check/episodes.py` times the recovery episodes of both simulators alike:
//!
//! ```text
//! rec T FLOW UNA HIGH           entry into fast recovery
//! rto T FLOW STATE UNA HIGH     a timeout (STATE 3: it came in recovery, else 0)
//! st T FLOW FROM TO UNA HIGH    a change of state: 0 open, 3 recovery, 4 loss
//! ```
//!
//! Sampled every 0.1 ms of simulated time (a change is stamped with the end of its step; an exit
//! from recovery and a new entry within one step, found by the count of fast retransmits, are
//! both printed). The
//! Loss state is BBR's view of it (`Bbr::prev_ca_state`, set from the sender's state on each
//! ACK): from a timeout until the ACK that leaves it.
use sim::tcp::cc::bbr_common::CaState;
use sim::tcp::cc::Bbr;
use sim::Sim;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: recovery_trace CONFIG_JSON");
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let step = 100_000;
    let n = sim.flows.len();
    let mut state = vec![0u8; n];
    let mut timeouts = vec![0u64; n];
    let mut entries = vec![0u64; n];
    let mut t = 0;
    while t < cfg.duration_ns {
        t += step;
        sim.run_until(t);
        let secs = t as f64 / 1e9;
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            let loss =
                s.cc.as_any()
                    .and_then(|a| a.downcast_ref::<Bbr>())
                    .is_some_and(|b| b.prev_ca_state == CaState::Loss);
            if s.stats.timeouts > timeouts[i] {
                timeouts[i] = s.stats.timeouts;
                println!(
                    "rto {secs:.4} {i} {} {} {}",
                    if state[i] == 3 { 3 } else { state[i] },
                    s.snd_una,
                    s.snd_max
                );
            }
            let now = if s.in_recovery {
                3
            } else if loss {
                4
            } else {
                0
            };
            // An ACK that ends a recovery may start the next one (the next hole is already
            // lost): an exit and an entry within one step.
            let entered = s.stats.fast_retransmits > entries[i];
            entries[i] = s.stats.fast_retransmits;
            if entered && now == 3 && state[i] == 3 {
                println!("st {secs:.4} {i} 3 0 {} {}", s.snd_una, s.snd_max);
                state[i] = 0;
            }
            if now != state[i] {
                if now == 3 {
                    println!("rec {secs:.4} {i} {} {}", s.snd_una, s.snd_max);
                }
                println!(
                    "st {secs:.4} {i} {} {now} {} {}",
                    state[i], s.snd_una, s.snd_max
                );
                state[i] = now;
            }
        }
    }
}
