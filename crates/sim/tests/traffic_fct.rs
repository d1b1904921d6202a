//! Flow completion time of one object on an idle path against the slow-start time worked by hand,
//! and open-loop sources' offered load against what the receiver measures.

use sim::config::{SizeShare, SourceConfig};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;

fn dumbbell(flows: usize) -> Dumbbell {
    Dumbbell {
        flows,
        rate_bps: 100_000_000,
        delay_ns: 10 * MS,
        buffer_pkts: 1000,
        aqm: None,
        access_rate_bps: 100_000_000,
        access_delays_ns: vec![MS],
        tcp: default_tcp(),
        duration_ns: 2_000 * MS,
        warmup_ns: 0,
        seed: 1,
        stagger_ns: 0,
    }
}

/// Completion time, ns, of one object of `segments` full segments starting at t = 0.
fn fct_ns(segments: u64) -> f64 {
    let mut cfg = dumbbell(1).config();
    cfg.flows[0].size_bytes = Some(segments * 1460);
    let res = Sim::new(&cfg).unwrap().run().unwrap();
    res.summary.flows[0].completion_s.expect("finished") * 1e9
}

// Every link runs at 100 Mb/s: a 1500 B segment takes tx = 120 us per link, a 40 B ACK
// ta = 3.2 us; base RTT = 2 (10 + 1 + 1) ms = 24 ms. No delayed ACKs, IW 10, no handshake.
const TX: f64 = 120_000.0;
const TA: f64 = 3_200.0;
const RTT: f64 = 24.0e6;

#[test]
fn one_window_object_completes_in_one_rtt_plus_serialisation() {
    // Segment i leaves the third link at (i + 3) tx; its ACK reaches the sender 3 ta + RTT later.
    // The last (i = 9) is acknowledged at 12 tx + 3 ta + RTT.
    let want = 12.0 * TX + 3.0 * TA + RTT;
    assert!(
        (fct_ns(10) - want).abs() <= 10.0,
        "{} vs {want}",
        fct_ns(10)
    );
}

#[test]
fn two_round_object_completes_at_the_hand_computed_slow_start_time() {
    // Round 1 as above: ACK i arrives at T1 + i tx, T1 = 3 tx + 3 ta + RTT. Each ACK releases two
    // segments (slow start, RFC 5681 s. 3.1), so the first link stays busy: segment m of round 2
    // (m = 0..19) leaves it at T1 + (m + 1) tx and the last is acknowledged at
    // T1 + 22 tx + 3 ta + RTT = 2 RTT + 25 tx + 6 ta.
    let want = 2.0 * RTT + 25.0 * TX + 6.0 * TA;
    let got = fct_ns(30);
    assert!((got - want).abs() <= 10.0, "{got} vs {want}");
}

#[test]
fn cbr_and_on_off_sources_deliver_their_offered_load_on_an_idle_path() {
    let mut cfg = dumbbell(2).config();
    cfg.duration_ns = 200_000 * MS;
    cfg.warmup_ns = 1_000 * MS;
    let sizes = vec![
        SizeShare {
            bytes: 1500,
            share: 0.9,
        },
        SizeShare {
            bytes: 536,
            share: 0.1,
        },
    ];
    cfg.flows[0].source = Some(SourceConfig::Cbr {
        rate_bps: 10e6,
        sizes: sizes.clone(),
    });
    cfg.flows[1].source = Some(SourceConfig::OnOff(sim::config::OnOffConfig {
        rate_bps: 20e6,
        sizes,
        on_mean_ns: 50e6,
        off_mean_ns: 150e6,
        shape: None,
    }));
    for f in &mut cfg.flows {
        f.rev_path.clear();
    }
    let res = Sim::new(&cfg).unwrap().run().unwrap();
    let f = &res.summary.flows;
    // CBR: 10 Mb/s whatever the size mix; on/off: 20 x 50 / (50 + 150) = 5 Mb/s (about 1000
    // on/off cycles: 3% covers their spread).
    assert!(
        (f[0].goodput_bps / 10e6 - 1.0).abs() < 0.001,
        "{}",
        f[0].goodput_bps
    );
    assert!(
        (f[1].goodput_bps / 5e6 - 1.0).abs() < 0.03,
        "{}",
        f[1].goodput_bps
    );
    // An idle 100 Mb/s path loses nothing; the one-way delay is at least 3 transmissions + 12 ms.
    for fl in f {
        assert_eq!(fl.udp_loss, Some(0.0));
        assert!(fl.owd_p50_s.unwrap() >= 0.012);
    }
    // A CBR packet crosses three 100 Mb/s links (3 tx of 120 us for 1500 B) and 12 ms of
    // propagation; the on/off packets reach the bottleneck at least 600 us apart (20 Mb/s), so a
    // CBR packet waits behind at most one of them: at most one more tx.
    let tx = 1500.0 * 8.0 / 100e6;
    let cbr_max = f[0].owd_max_s.unwrap();
    assert!(cbr_max <= 0.012 + 4.0 * tx + 1e-9, "{cbr_max}");
    let p50 = f[0].owd_p50_s.unwrap();
    assert!((p50 / (0.012 + 3.0 * tx) - 1.0).abs() < 1.0 / 32.0, "{p50}");
}
