//! DCTCP (RFC 8257) in the whole simulator, through RED used as a step marker as in ns-3's
//! DCTCP example (`examples/tcp/dctcp-example.cc`: RED with the average queue replaced by the
//! instantaneous one, thresholds at K, ECN marking): every packet arriving to a queue of K
//! or more is marked.
//!
//! RED here drops rather than marks above max_th (ns-3's `UseHardDrop = false` marks), so the
//! step is built from the gentle region: w_q = 1 (instantaneous queue), min_th = K, max_th =
//! K + 0.001, max_p = 1, gentle: p = 1 from K + 0.001 to 2 max_th, marks (ECN) not drops; the
//! buffer is far above 2 K so no forced drop happens.

use sim::config::{AqmConfig, TcpConfig, TcpVariant};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// The step marker at `k` packets.
fn step_marker(k: f64) -> AqmConfig {
    let mut params = std::collections::BTreeMap::new();
    for (n, v) in [
        ("min_th", k),
        ("max_th", k + 0.001),
        ("max_p", 1.0),
        ("w_q", 1.0),
    ] {
        params.insert(n.to_string(), serde_json::json!(v));
    }
    params.insert("gentle".into(), serde_json::json!(true));
    params.insert("ecn".into(), serde_json::json!(true));
    AqmConfig {
        name: "red".into(),
        params,
    }
}

fn tcp(cc: &str) -> TcpConfig {
    let mut t = default_tcp();
    t.variant = TcpVariant::NewReno;
    t.cc = Some(cc.into());
    t.ecn = true;
    t.delack = true;
    t
}

/// (utilisation, mean queue in packets, marks, drops) of `flows` flows of `cc` through a
/// 100 Mb/s bottleneck with a step marker at `k`; base RTTs 8-16 ms (BDP 67-133 packets).
fn run(cc: &str, flows: usize, k: f64) -> (f64, f64, u64, u64) {
    let d = Dumbbell {
        flows,
        rate_bps: 100_000_000,
        delay_ns: MS,
        buffer_pkts: 1000,
        aqm: Some(step_marker(k)),
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS, 3 * MS],
        tcp: tcp(cc),
        duration_ns: 10 * S,
        warmup_ns: 3 * S,
        seed: 1,
        stagger_ns: 10 * MS,
    };
    let r = Sim::new(&d.config()).unwrap().run().unwrap();
    let b = &r.summary.links[0];
    let drops = b.dropped_aqm + b.dropped_overflow;
    (b.utilisation, b.queue_mean_pkts, b.marked, drops)
}

/// DCTCP keeps the link busy with the queue held near K (Alizadeh et al., SIGCOMM 2010, s. 3.3:
/// full throughput once K > C x RTT / 7, here 19 packets at the longest RTT; the queue
/// oscillates about K with an amplitude of a few packets per flow), marks and never drops.
/// Reno with classic ECN through the same marker halves on every mark window and, with K well
/// below the BDP, leaves the link idle part of the time (RFC 8257 s. 1's motivation).
#[test]
fn dctcp_through_a_step_marker_fills_the_link_with_the_queue_near_k() {
    let k = 30.0;
    let (util, q, marks, drops) = run("dctcp", 2, k);
    eprintln!("dctcp: utilisation {util:.4}, mean queue {q:.1}, marks {marks}, drops {drops}");
    assert!(util >= 0.98, "dctcp utilisation {util}");
    assert!((0.5 * k..=1.5 * k).contains(&q), "mean queue {q}, K {k}");
    assert!(marks > 0 && drops == 0, "marks {marks}, drops {drops}");
    let (r_util, r_q, _, _) = run("reno", 2, k);
    eprintln!("reno: utilisation {r_util:.4}, mean queue {r_q:.1}");
    assert!(
        r_util < util,
        "Reno+ECN {r_util} should use the link less than DCTCP {util}"
    );
}

/// The configuration is checked: DCTCP without ECN is refused with one line naming the field,
/// and an unknown controller lists the registered ones.
#[test]
fn dctcp_without_ecn_and_unknown_names_are_refused() {
    let mut d = Dumbbell {
        flows: 1,
        rate_bps: 10_000_000,
        delay_ns: MS,
        buffer_pkts: 100,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS],
        tcp: tcp("dctcp"),
        duration_ns: S,
        warmup_ns: 0,
        seed: 1,
        stagger_ns: 0,
    };
    d.tcp.ecn = false;
    let e = Sim::new(&d.config()).err().unwrap().to_string();
    assert!(e.contains("tcp.ecn") && e.contains("dctcp"), "{e}");
    d.tcp = tcp("vegas");
    let e = Sim::new(&d.config()).err().unwrap().to_string();
    assert!(
        e.contains("tcp.cc") && e.contains("reno, cubic, dctcp"),
        "{e}"
    );
}
