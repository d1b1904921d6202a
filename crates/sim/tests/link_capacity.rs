//! Links whose capacity varies (issue 24 item 2): a rate schedule's departures on a hand-worked
//! example, and a mahimahi trace that delivers its opportunities (within 1% over a minute) with
//! the summary stating the capacity actually offered.

use aqm::params::Buffer;
use aqm::{Verdict, NS_PER_SEC};
use sim::config::{AqmConfig, PoissonConfig};
use sim::link::{Link, Outcome};
use sim::packet::{Kind, Packet};
use sim::rate::{Schedule, VarClock};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;

fn pkt(size: u32) -> Packet {
    Packet {
        flow: 0,
        seq: 0,
        size,
        hop: 0,
        kind: Kind::Data,
        flags: 0,
        precedence: aqm::Precedence::Out,
        ts: 0,
        rwnd: 0,
        sack: [(0, 0); 3],
        enq_time: 0,
    }
}

#[test]
fn a_rate_schedule_departures_by_hand() {
    // A DropTail link of 12 Mb/s until 2.5 ms, then 6 Mb/s, with 1 ms of propagation delay.
    // 1500 B = 12,000 bits: 1 ms at 12 Mb/s, 2 ms at 6 Mb/s. Four packets arrive at 0, 0,
    // 1.5 ms and 10 ms. By hand: the first is sent over [0, 1] ms, the second over [1, 2]; the
    // third, waiting since 1.5 ms, starts at 2 ms, sends 6,000 bits by 2.5 ms and the other
    // 6,000 at 6 Mb/s in 1 ms: it ends at 3.5 ms (split at the boundary). The fourth, at 10 ms,
    // takes 2 ms: it ends at 12 ms. Each reaches the next node 1 ms after its end.
    let mut l = Link::new(
        "l".into(),
        0,
        1,
        9_000_000,
        MS,
        Buffer::Packets(100),
        None,
        aqm::rng_from_seed(1),
        true,
        0,
        20 * MS,
        MS,
        1000,
    );
    let s = Schedule::new(vec![(0, 12_000_000), (5 * MS / 2, 6_000_000)], None).unwrap();
    l.clock = Some(Box::new(VarClock::Schedule(s)));
    let mut at = Vec::new();
    for t in [0, 0, 3 * MS / 2, 10 * MS] {
        let mut v = Verdict::Admit;
        match l.arrive(&mut pkt(1500), t, &mut v) {
            Outcome::Forward(a) => at.push(a),
            _ => panic!("a DropTail link with room forwards"),
        }
    }
    assert_eq!(at, vec![2 * MS, 3 * MS, 9 * MS / 2, 13 * MS]);
    l.finish(20 * MS);
    // Queueing delays (arrival to start): 0, 1 ms, 0.5 ms, 0.
    let w = &l.stats.win;
    assert_eq!(w.delay_n, 4);
    assert!((w.delay_sum_ns - 1.5 * MS as f64).abs() < 1e-6);
    // Bytes sent in [0, 20 ms]: all four packets.
    assert!((w.tx_bytes - 6000.0).abs() < 1e-9);
}

#[test]
fn a_split_packet_at_a_rate_change_by_hand() {
    // 12 Mb/s until 1.5 ms, then 6 Mb/s. Back-to-back 1500 B packets from 0: the first ends at
    // 1 ms; the second sends 6,000 bits by 1.5 ms and the other 6,000 at 6 Mb/s in 1 ms: 2.5 ms;
    // the third takes 2 ms: 4.5 ms.
    let s = Schedule::new(vec![(0, 12_000_000), (3 * MS / 2, 6_000_000)], None).unwrap();
    let mut l = Link::new(
        "l".into(),
        0,
        1,
        9_000_000,
        0,
        Buffer::Packets(100),
        None,
        aqm::rng_from_seed(1),
        false,
        0,
        20 * MS,
        MS,
        1000,
    );
    l.clock = Some(Box::new(VarClock::Schedule(s)));
    let ends: Vec<u64> = (0..3)
        .map(|_| {
            let mut v = Verdict::Admit;
            match l.arrive(&mut pkt(1500), 0, &mut v) {
                Outcome::Forward(a) => a,
                _ => panic!("forwarded"),
            }
        })
        .collect();
    assert_eq!(ends, vec![MS, 5 * MS / 2, 9 * MS / 2]);
}

/// A cellular-like trace of 60 s: each millisecond carries 0 to 3 opportunities, drawn from a
/// fixed linear congruential sequence (about 1.5 per ms: 18 Mb/s on average).
fn synthetic_trace() -> Vec<u64> {
    let mut x: u64 = 12345;
    let mut out = Vec::new();
    for ms in 1..=60_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        for _ in 0..(x >> 62) {
            out.push(ms);
        }
    }
    out.push(60_000);
    out
}

/// Runs one open-loop overloaded flow through a trace-driven bottleneck for 61 s (1 s warm-up):
/// the bottleneck's summary, and the opportunities of the trace in the window.
fn run_trace(aqm: Option<AqmConfig>, exponential: bool) -> (sim::results::Summary, u64) {
    let trace = synthetic_trace();
    let (warmup, end) = (NS_PER_SEC, 61 * NS_PER_SEC);
    // Opportunities at t in [1 s, 61 s]: the trace's 1001..=60000 ms, then the repeat's
    // 60001..=61000 ms (its timestamps 1..=1000 shifted by 60,000 ms).
    let opps = trace.iter().filter(|&&m| m >= 1000).count() as u64
        + trace.iter().filter(|&&m| m <= 1000).count() as u64;
    let mut cfg = Dumbbell {
        flows: 1,
        rate_bps: 18_000_000,
        delay_ns: 10 * MS,
        buffer_pkts: 100_000,
        aqm,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS],
        tcp: default_tcp(),
        duration_ns: end,
        warmup_ns: warmup,
        seed: 3,
        stagger_ns: 0,
    }
    .config();
    cfg.links[0].trace_ms = Some(trace);
    // 1.5 x the mean capacity (open loop) keeps the queue backlogged.
    cfg.flows[0].poisson = Some(PoissonConfig {
        rate_pps: 1.5 * 18e6 / (1000.0 * 8.0),
        mean_size_bytes: 1000.0,
        exponential,
    });
    cfg.flows[0].rev_path.clear();
    let res = Sim::new(&cfg).unwrap().run().unwrap();
    (res.summary, opps)
}

#[test]
fn a_trace_delivers_its_opportunities_within_one_percent_over_a_minute() {
    // A backlogged queue uses every opportunity whole (mahimahi's rule: an opportunity carries
    // 1500 bytes of whatever is queued, splitting packets): over the 60 s window the link
    // carries 1500 B per opportunity, within 1% (the edges hold one packet in part each).
    for (aqm, exponential) in [
        (None, true),
        (None, false),
        (
            // A queue with a dequeue hook (stored packets, served at opportunities); a target
            // of 10 s (interval 100 s) never drops here.
            Some(AqmConfig {
                name: "codel".into(),
                params: [
                    ("target".to_string(), serde_json::json!(10.0)),
                    ("interval".to_string(), serde_json::json!(100.0)),
                ]
                .into_iter()
                .collect(),
            }),
            true,
        ),
    ] {
        let name = aqm
            .as_ref()
            .map_or("droptail", |a| a.name.as_str())
            .to_string();
        let (s, opps) = run_trace(aqm, exponential);
        let l = &s.links[0];
        assert_eq!(l.capacity, Some("trace"));
        let offered = opps as f64 * 1500.0 * 8.0 / 60.0;
        assert!(
            (l.rate_bps as f64 - offered).abs() <= 1.0,
            "{name}: summary capacity {} vs {offered} counted by hand",
            l.rate_bps
        );
        let carried = l.throughput_bps * 60.0 / 8.0;
        let want = opps as f64 * 1500.0;
        assert!(
            (carried - want).abs() <= 0.01 * want,
            "{name}: carried {carried} B, opportunities {want} B"
        );
        assert!(
            (l.utilisation - 1.0).abs() <= 0.01,
            "{name}: {}",
            l.utilisation
        );
    }
}

#[test]
fn a_saturated_schedule_link_reports_its_offered_capacity() {
    // RFC 7928 s. 8.2.6's pattern: 100 Mb/s and 10 Mb/s alternating every 20 s. Over [10 s,
    // 70 s]: 10-20 at 100, 20-40 at 10, 40-60 at 100, 60-70 at 10: (10 + 20) s x 100 Mb/s +
    // (20 + 10) s x 10 Mb/s over 60 s = 55 Mb/s.
    let mut cfg = Dumbbell {
        flows: 1,
        rate_bps: 55_000_000,
        delay_ns: 10 * MS,
        buffer_pkts: 100_000,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS],
        tcp: default_tcp(),
        duration_ns: 70 * NS_PER_SEC,
        warmup_ns: 10 * NS_PER_SEC,
        seed: 3,
        stagger_ns: 0,
    }
    .config();
    cfg.links[0].rate_schedule = Some(vec![(0, 100_000_000), (20 * NS_PER_SEC, 10_000_000)]);
    cfg.links[0].rate_repeat_ns = Some(40 * NS_PER_SEC);
    cfg.flows[0].poisson = Some(PoissonConfig {
        rate_pps: 120e6 / (1500.0 * 8.0),
        mean_size_bytes: 1500.0,
        exponential: false,
    });
    cfg.flows[0].rev_path.clear();
    let res = Sim::new(&cfg).unwrap().run().unwrap();
    let l = &res.summary.links[0];
    assert_eq!(l.capacity, Some("schedule"));
    assert_eq!(l.rate_bps, 55_000_000);
    // Saturated throughout: it carries what is offered, never more.
    assert!(l.utilisation <= 1.0 + 1e-9, "{}", l.utilisation);
    assert!(l.utilisation > 0.999, "{}", l.utilisation);
}

#[test]
fn bad_schedules_and_traces_are_refused_naming_the_field() {
    let base = || {
        Dumbbell {
            flows: 1,
            rate_bps: 10_000_000,
            delay_ns: MS,
            buffer_pkts: 100,
            aqm: None,
            access_rate_bps: 1_000_000_000,
            access_delays_ns: vec![MS],
            tcp: default_tcp(),
            duration_ns: NS_PER_SEC,
            warmup_ns: 0,
            seed: 3,
            stagger_ns: 0,
        }
        .config()
    };
    let err = |cfg: sim::Config| match Sim::new(&cfg) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted"),
    };
    let mut c = base();
    c.links[0].rate_schedule = Some(vec![(0, 1), (0, 2)]);
    assert!(err(c).contains("(bottleneck).rate[1].at: step times must increase"));
    let mut c = base();
    c.links[0].rate_repeat_ns = Some(5);
    assert!(err(c).contains("(bottleneck).rate_repeat: only with a rate schedule"));
    let mut c = base();
    c.links[0].trace_ms = Some(vec![5, 3]);
    assert!(err(c).contains("(bottleneck).trace: line 2: timestamps must not decrease"));
    let mut c = base();
    c.links[0].trace_ms = Some(vec![1]);
    c.links[0].rate_schedule = Some(vec![(0, 1)]);
    assert!(err(c).contains("not both"));
}
