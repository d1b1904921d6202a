//! Debug aid: `trace_flow FLOW N_FLOWS [AQM] [STEP_NS]` prints one flow's sender state every
//! step of a dumbbell (100 Mb/s, 2 ms, buffer 300, 1 ms access delays).
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

fn main() {
    let f: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let aqm = arg(3).map(|name| sim::config::AqmConfig {
        name,
        params: Default::default(),
    });
    let step: u64 = arg(4).and_then(|s| s.parse().ok()).unwrap_or(100_000_000);
    let d = Dumbbell {
        flows: n,
        rate_bps: 100_000_000,
        delay_ns: 2_000_000,
        buffer_pkts: 300,
        aqm,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![1_000_000],
        tcp: default_tcp(),
        duration_ns: 20_000_000_000,
        warmup_ns: 1_000_000_000,
        seed: 3,
        stagger_ns: 37_000_000,
    };
    let mut sim = Sim::new(&d.config()).unwrap();
    let mut t = 0;
    while t < 3_000_000_000u64 {
        t += step;
        sim.run_until(t);
        let s = &sim.flows[f].tcp().expect("a TCP flow").sender;
        println!(
            "t {:6.3} q {:4} una {:7} nxt {:7} max {:7} cwnd {:8.1} ssth {:6.1} rec {} retx {} fr {} to {} rcv_nxt {} blocks {:?}",
            t as f64 / 1e9, sim.links[0].len_pkts(), s.snd_una, s.snd_nxt, s.snd_max, s.cwnd, s.ssthresh, s.in_recovery,
            s.stats.retransmits, s.stats.fast_retransmits, s.stats.timeouts,
            sim.flows[f].tcp().expect("a TCP flow").receiver.rcv_nxt, &sim.flows[f].tcp().expect("a TCP flow").receiver.blocks()[..sim.flows[f].tcp().expect("a TCP flow").receiver.blocks().len().min(4)]
        );
    }
}
