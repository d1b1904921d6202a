//! Debug aid: `goodput_ledger CONFIG_JSON` runs the simulator on a run's `config.json` (written
//! by `aqmlab run`) and prints, per TCP flow and summed, where the measurement window's data
//! segments went, for `scripts/ns3check/ledger.py`'s ns-3 side (docs/crosscheck-ns3.md s. 1.5):
//!
//! ```text
//! flow I SENT RETX ARRIVED DUP DELIVERED HELD_W HELD_E
//! ```
//!
//! SENT the segments the sender sent in the window (first transmissions and retransmissions),
//! RETX the retransmissions among them; ARRIVED the data segments that reached the receiver in
//! the window, DUP those it already held (in order or out of order); DELIVERED the segments
//! delivered in order to the application in the window (the goodput's count); HELD_W and HELD_E
//! the out-of-order segments the receiver held at the window's start and end. Then, since every
//! arrival is a duplicate, delivered, or held: ARRIVED - DUP = DELIVERED + HELD_E - HELD_W.
//! Then the window's duplicates by the sender's state, sampled every 0.1 ms (`recovery_trace`'s
//! states: open, recovery, BBR's Loss), and those wholly below RCV.NXT (`old`):
//!
//! ```text
//! dup open N recovery N loss N old N
//! dup after_rto_100ms N rcv_nxt_above_snd_una N
//! ```
//!
//! (the second line: within 100 ms after the flow's last timeout; while the receiver's RCV.NXT
//! was above the sender's snd_una, i.e. the cumulative ACK covering the duplicate was on its way).
use sim::tcp::cc::bbr_common::CaState;
use sim::tcp::cc::Bbr;
use sim::tcp::AckReason;
use sim::Sim;

/// One flow's counters at an instant.
#[derive(Clone, Copy, Default)]
struct Snap {
    sent: u64,
    retx: u64,
    arrived: u64,
    dup: u64,
    delivered: u64,
    held: u64,
}

fn snap(sim: &Sim) -> Vec<Snap> {
    sim.flows
        .iter()
        .map(|f| match f.tcp() {
            Some(t) => Snap {
                sent: t.sender.stats.segs_sent,
                retx: t.sender.stats.retransmits,
                arrived: t.receiver.stats.segments,
                dup: t.receiver.stats.duplicates,
                delivered: t.receiver.stats.delivered_total,
                held: t
                    .receiver
                    .blocks()
                    .iter()
                    .map(|b| u64::from(b.1 - b.0))
                    .sum(),
            },
            None => Snap::default(),
        })
        .collect()
}

/// ACKs the receivers sent for segments wholly below RCV.NXT, summed over the flows.
fn old_acks(sim: &Sim) -> u64 {
    let old = AckReason::Old as usize;
    sim.flows
        .iter()
        .filter_map(|f| f.tcp())
        .map(|t| t.receiver.stats.acks_by_reason[old])
        .sum()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: goodput_ledger CONFIG_JSON");
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    sim.run_until(cfg.warmup_ns);
    let w = snap(&sim);
    // Duplicates by the sender's state at the end of each 0.1 ms step.
    let mut by_state = [0u64; 3];
    let mut dups: Vec<u64> = w.iter().map(|x| x.dup).collect();
    // Duplicates within 100 ms of the flow's last timeout, and those that came while the
    // receiver's RCV.NXT was above the sender's snd_una (its cumulative ACK on the way).
    let (mut after_rto, mut acked_ahead) = (0u64, 0u64);
    let mut rto: Vec<(u64, u64)> = sim
        .flows
        .iter()
        .map(|f| (f.tcp().map_or(0, |c| c.sender.stats.timeouts), 0))
        .collect();
    let old_w = old_acks(&sim);
    let mut t = cfg.warmup_ns;
    while t < cfg.duration_ns {
        t = (t + 100_000).min(cfg.duration_ns);
        sim.run_until(t);
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(c) = f.tcp() else { continue };
            let d = c.receiver.stats.duplicates - dups[i];
            dups[i] = c.receiver.stats.duplicates;
            if c.sender.stats.timeouts > rto[i].0 {
                rto[i] = (c.sender.stats.timeouts, t);
            }
            if rto[i].1 > 0 && t - rto[i].1 < 100_000_000 {
                after_rto += d;
            }
            if c.receiver.rcv_nxt > c.sender.snd_una {
                acked_ahead += d;
            }
            let loss = c
                .sender
                .cc
                .as_any()
                .and_then(|a| a.downcast_ref::<Bbr>())
                .is_some_and(|b| b.prev_ca_state == CaState::Loss);
            let k = if c.sender.in_recovery {
                1
            } else if loss {
                2
            } else {
                0
            };
            by_state[k] += d;
        }
    }
    let old_e = old_acks(&sim);
    let e = snap(&sim);
    let mut tot = [0u64; 7];
    for (i, (a, b)) in w.iter().zip(&e).enumerate() {
        let row = [
            b.sent - a.sent,
            b.retx - a.retx,
            b.arrived - a.arrived,
            b.dup - a.dup,
            b.delivered - a.delivered,
            a.held,
            b.held,
        ];
        let cells: Vec<String> = row.iter().map(u64::to_string).collect();
        println!("flow {i} {}", cells.join(" "));
        for (t, r) in tot.iter_mut().zip(row) {
            *t += r;
        }
    }
    let cells: Vec<String> = tot.iter().map(u64::to_string).collect();
    println!("total {}", cells.join(" "));
    println!(
        "dup open {} recovery {} loss {} old {}",
        by_state[0],
        by_state[1],
        by_state[2],
        old_e - old_w
    );
    println!("dup after_rto_100ms {after_rto} rcv_nxt_above_snd_una {acked_ahead}");
}
