//! ModRED (seed 004 s. 3): between the thresholds the router admits the packet and clamps the
//! flow's ACK receive window to one segment; flows must slow down through that window alone.

use sim::config::AqmConfig;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn dumbbell(aqm: Option<AqmConfig>) -> Dumbbell {
    // Congestion avoidance from the start, so the averaged queue can follow the real one (an
    // initial slow start would overflow the buffer before any average reacts).
    let mut tcp = default_tcp();
    tcp.init_ssthresh = Some(4.0);
    tcp.init_cwnd = 2.0;
    Dumbbell {
        flows: 10,
        rate_bps: 10_000_000,
        delay_ns: 10 * MS,
        buffer_pkts: 1000,
        aqm,
        access_rate_bps: 100_000_000,
        access_delays_ns: vec![5 * MS],
        tcp,
        duration_ns: 30 * S,
        warmup_ns: 10 * S,
        seed: 2,
        stagger_ns: 50 * MS,
    }
}

#[test]
fn throttled_flows_slow_down_through_their_window_without_drops() {
    // Throttle band [5, 900) for every packet (all OUT); drops only above 900: never reached.
    // throttle = "always": every packet in the band (the default, "red", picks a fraction).
    let params = r#"{"min_th_out": 5, "max_th_out": 900, "min_th_in": 5, "max_th_in": 900, "throttle": "always"}"#;
    let aqm = AqmConfig {
        name: "modred".into(),
        params: serde_json::from_str(params).unwrap(),
    };
    let mut sim = Sim::new(&dumbbell(Some(aqm)).config()).unwrap();
    let mut clamped = 0;
    let mut t = 0;
    while t < 30 * S {
        t += 10 * MS;
        sim.run_until(t);
        clamped += sim
            .flows
            .iter()
            .filter(|f| f.tcp().is_some_and(|e| e.sender.snd_wnd == 1))
            .count();
    }
    let r = sim.finish().unwrap();
    let b = &r.summary.links[0];
    assert!(b.throttled > 1000, "throttle verdicts: {}", b.throttled);
    assert_eq!(
        b.dropped_aqm + b.dropped_overflow,
        0,
        "throttling alone must hold the queue"
    );
    assert!(
        clamped > 100,
        "senders saw a one-segment window {clamped} times"
    );
    // Nothing was lost, so no loss is ever inferred from duplicate ACKs. (Timeouts can still be
    // spurious: a flow released from its one-segment window bursts, the queue jumps and the RTT
    // briefly exceeds an RTO floored at 200 ms; real stacks do the same.)
    assert!(r.summary.flows.iter().all(|f| f.fast_retransmits == 0));

    // Without the AQM the same flows keep growing their windows into the 1000-packet buffer.
    let r0 = Sim::new(&dumbbell(None).config()).unwrap().run().unwrap();
    let b0 = &r0.summary.links[0];
    assert!(
        b.queue_mean_pkts < b0.queue_mean_pkts / 5.0,
        "throttled mean queue {} vs unthrottled {}",
        b.queue_mean_pkts,
        b0.queue_mean_pkts
    );
}
