//! Whole-simulator tests against independent truths: RFC 5681/6582/6298 behaviour of one flow,
//! link utilisation with a buffer of one bandwidth-delay product, fairness, conservation.

mod common;

use common::DropArrivals;
use sim::config::{AqmConfig, TcpConfig};
use sim::topo::{default_tcp, Dumbbell};
use sim::{Sim, SimError};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn one_flow(rate_bps: u64, buffer: u32, tcp: TcpConfig, duration: u64) -> Dumbbell {
    Dumbbell {
        flows: 1,
        rate_bps,
        delay_ns: 5 * MS,
        buffer_pkts: buffer,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS],
        tcp,
        duration_ns: duration,
        warmup_ns: duration / 3,
        seed: 1,
        stagger_ns: 0,
    }
}

#[test]
fn one_newreno_flow_with_a_bdp_buffer_keeps_the_bottleneck_busy() {
    // 10 Mb/s, base RTT ~15 ms: BDP = 10e6 * 0.015 / 8 / 1500 = 12.5 packets; buffer 20 >= BDP.
    // Classic result (Villamizar & Song 1994): with a buffer of one BDP a single Reno-style flow
    // keeps the link fully used through its sawtooth.
    let d = one_flow(10_000_000, 20, default_tcp(), 60 * S);
    let r = Sim::new(&d.config()).unwrap().run().unwrap();
    let b = &r.summary.links[0];
    assert!(b.utilisation >= 0.95, "utilisation {}", b.utilisation);
    assert!(b.utilisation <= 1.0 + 1e-9, "utilisation {}", b.utilisation);
    assert!(b.dropped_overflow > 0, "the flow must probe the buffer");
}

#[test]
fn a_single_drop_halves_the_window_and_recovers_without_timeout() {
    // Congestion avoidance from the start (ssthresh 20) on a path that never overflows.
    let mut tcp = default_tcp();
    tcp.init_ssthresh = Some(20.0);
    tcp.init_cwnd = 2.0;
    let d = one_flow(10_000_000, 1000, tcp, 20 * S);
    let mut sim = Sim::new(&d.config()).unwrap();
    sim.replace_aqm(
        0,
        Box::new(DropArrivals {
            drop: vec![3000],
            n: 0,
        }),
    );
    let mut t = 0;
    let mut before = None; // (cwnd, flight) just before recovery starts
    let mut after = None; // cwnd when recovery ends
    let mut was = false;
    let mut last = (0.0, 0);
    while t < 20 * S {
        t += 100_000;
        sim.run_until(t);
        let s = &sim.flows[0].tcp().expect("a TCP flow").sender;
        if s.in_recovery && !was && before.is_none() {
            before = Some(last);
        }
        if !s.in_recovery && was && after.is_none() {
            after = Some(s.cwnd);
        }
        was = s.in_recovery;
        last = (s.cwnd, s.flight());
    }
    let r = sim.finish().unwrap();
    let f = &r.summary.flows[0];
    assert_eq!(f.fast_retransmits, 1);
    assert_eq!(f.timeouts, 0);
    assert_eq!(f.retransmits, 1);
    let (w, flight) = before.expect("entered recovery");
    let after = after.expect("left recovery");
    // RFC 5681 eq. 4: ssthresh = FlightSize / 2; cwnd = ssthresh on the full ACK (RFC 6582).
    assert!(
        (after - flight as f64 / 2.0).abs() <= 0.5,
        "after {after}, flight {flight}"
    );
    assert!((after - w / 2.0).abs() <= 1.0, "cwnd {w} -> {after}");
    // Recovered: the window grows again afterwards.
    assert!(sim.flows[0].tcp().expect("a TCP flow").sender.cwnd > after + 5.0);
}

#[test]
fn losing_the_tail_of_a_transfer_times_out_when_rfc6298_says() {
    // Stop-and-wait (rwnd 1) on an idle path: every RTT sample is the same R, computed here from
    // the link parameters: data 1500 B, ACK 40 B; access 1 Gb/s 1 ms; bottleneck 10 Mb/s 5 ms.
    let data = 12_000 + MS + 1_200_000 + 5 * MS + 12_000 + MS;
    let ack = 320 + MS + 32_000 + 5 * MS + 320 + MS;
    let r_ns = (data + ack) as f64; // 15_256_640 ns
    for (min_rto, n_seg) in [(MS, 10u64), (200 * MS, 10)] {
        let mut tcp = default_tcp();
        tcp.rwnd_segments = 1;
        tcp.init_cwnd = 1.0;
        tcp.min_rto_ns = min_rto;
        let mut d = one_flow(10_000_000, 100, tcp, 5 * S);
        let mut cfg = d.config();
        cfg.flows[0].size_bytes = Some(n_seg * 1460);
        d.warmup_ns = 0;
        let mut sim = Sim::new(&cfg).unwrap();
        sim.replace_aqm(
            0,
            Box::new(DropArrivals {
                drop: vec![n_seg],
                n: 0,
            }),
        );
        // RFC 6298 s. 2: after k equal samples R: SRTT = R, RTTVAR = R/2 * 0.75^(k-1),
        // RTO = max(min, SRTT + max(G, 4 RTTVAR)). The timer restarts on the ACK of segment
        // n-1 (s. 5.3), which arrives at (n-1) R.
        let k = (n_seg - 1) as i32;
        let rto = (r_ns + (1e6f64).max(4.0 * r_ns / 2.0 * 0.75f64.powi(k - 1))).round() as u64;
        let rto = rto.max(min_rto);
        let expect = (n_seg - 1) * (data + ack) + rto;
        sim.run_until(expect - 1);
        let timeouts = |sim: &Sim| {
            sim.flows[0]
                .tcp()
                .expect("a TCP flow")
                .sender
                .stats
                .timeouts
        };
        assert_eq!(timeouts(&sim), 0, "min_rto {min_rto}: too early");
        sim.run_until(expect);
        assert_eq!(timeouts(&sim), 1, "min_rto {min_rto}: not at {expect}");
        let r = sim.run().unwrap();
        assert_eq!(
            r.summary.flows[0].delivered_segments, n_seg,
            "the retransmission completes it"
        );
    }
}

#[test]
fn equal_rtt_flows_share_a_droptail_bottleneck_fairly() {
    let d = Dumbbell {
        flows: 20,
        rate_bps: 100_000_000,
        delay_ns: 2 * MS,
        buffer_pkts: 300,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![10 * MS],
        tcp: default_tcp(),
        duration_ns: 60 * S,
        warmup_ns: 10 * S,
        seed: 3,
        stagger_ns: 37 * MS,
    };
    let r = Sim::new(&d.config()).unwrap().run().unwrap();
    let g: Vec<f64> = r.summary.flows.iter().map(|f| f.goodput_bps).collect();
    let sum: f64 = g.iter().sum();
    let jain = sum * sum / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>());
    assert!(jain >= 0.9, "Jain {jain}: {g:?}");
    // Goodput cannot exceed capacity times the payload share of a packet (1460 / 1500).
    assert!(sum <= 100e6 * 1460.0 / 1500.0 * 1.0001, "goodput {sum}");
    assert!(sum >= 0.9 * 100e6 * 1460.0 / 1500.0, "goodput {sum}");
}

#[test]
fn invariant_checks_hold_on_varied_runs_and_fire_on_a_broken_count() {
    for (aqm, delack, ecn) in [
        ("droptail", false, false),
        ("red", true, false),
        ("red", false, true),
    ] {
        let mut tcp = default_tcp();
        tcp.delack = delack;
        tcp.ecn = ecn;
        let d = Dumbbell {
            flows: 30,
            rate_bps: 20_000_000,
            delay_ns: 10 * MS,
            buffer_pkts: 100,
            aqm: (aqm != "droptail").then(|| AqmConfig {
                name: aqm.into(),
                params: serde_json::from_str(r#"{"min_th": 20, "max_th": 60, "ecn": true}"#)
                    .unwrap(),
            }),
            access_rate_bps: 100_000_000,
            access_delays_ns: vec![MS, 7 * MS, 30 * MS],
            tcp,
            duration_ns: 20 * S,
            warmup_ns: 5 * S,
            seed: 9,
            stagger_ns: 11 * MS,
        };
        let mut sim = Sim::new(&d.config()).unwrap();
        let r = sim.run().unwrap_or_else(|e| panic!("{aqm}: {e}"));
        let b = &r.summary.links[0];
        assert!(b.queue_max_pkts <= 100);
        if ecn {
            assert!(b.marked > 0 && r.summary.flows.iter().any(|f| f.ecn_reductions > 0));
        }
    }
    let d = one_flow(10_000_000, 20, default_tcp(), 2 * S);
    let mut sim = Sim::new(&d.config()).unwrap();
    sim.run_until(2 * S);
    sim.links[0].stats.total_arrived += 1;
    match sim.finish() {
        Err(SimError::Invariant(v)) => assert!(v[0].contains("bottleneck"), "{v:?}"),
        other => panic!("a broken count must fail the run: {:?}", other.map(|_| ())),
    }
}

#[test]
fn bad_configurations_are_named() {
    let mut cfg = one_flow(10_000_000, 20, default_tcp(), S).config();
    cfg.links[0].rate_bps = 0;
    assert!(matches!(Sim::new(&cfg), Err(SimError::Config(m)) if m.contains("rate")));
    let mut cfg = one_flow(10_000_000, 20, default_tcp(), S).config();
    cfg.warmup_ns = cfg.duration_ns;
    assert!(matches!(Sim::new(&cfg), Err(SimError::Config(m)) if m.contains("warmup")));
    let mut cfg = one_flow(10_000_000, 20, default_tcp(), S).config();
    cfg.flows.clear();
    assert!(matches!(Sim::new(&cfg), Err(SimError::Config(m)) if m.contains("flows")));
    let mut cfg = one_flow(10_000_000, 20, default_tcp(), S).config();
    cfg.flows[0].path.swap(0, 1);
    assert!(matches!(Sim::new(&cfg), Err(SimError::Config(m)) if m.contains("path")));
}
