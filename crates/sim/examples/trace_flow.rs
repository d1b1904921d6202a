//! Debug aid: prints one flow's sender state every 100 ms of a 20-flow DropTail dumbbell.
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

fn main() {
    let f: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let d = Dumbbell {
        flows: 20,
        rate_bps: 100_000_000,
        delay_ns: 2_000_000,
        buffer_pkts: 300,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![10_000_000],
        tcp: default_tcp(),
        duration_ns: 20_000_000_000,
        warmup_ns: 1_000_000_000,
        seed: 3,
        stagger_ns: 37_000_000,
    };
    let mut sim = Sim::new(&d.config()).unwrap();
    let mut t = 0;
    while t < 20_000_000_000u64 {
        t += 100_000_000;
        sim.run_until(t);
        let s = &sim.flows[f].sender;
        println!(
            "t {:5.1} una {:7} nxt {:7} max {:7} cwnd {:8.1} ssth {:6.1} rec {} retx {} fr {} to {} rcv_nxt {} blocks {:?}",
            t as f64 / 1e9, s.snd_una, s.snd_nxt, s.snd_max, s.cwnd, s.ssthresh, s.in_recovery,
            s.stats.retransmits, s.stats.fast_retransmits, s.stats.timeouts,
            sim.flows[f].receiver.rcv_nxt, &sim.flows[f].receiver.blocks()[..sim.flows[f].receiver.blocks().len().min(4)]
        );
    }
}
