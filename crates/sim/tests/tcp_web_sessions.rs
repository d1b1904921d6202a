//! Web sessions: a flow that starts a think time after an earlier finite flow completes
//! (`FlowConfig::after`), on an idle path, against times worked by hand.

use sim::config::{AfterConfig, Config};
mod common;

use common::idle_dumbbell;
use sim::topo::default_tcp;
use sim::{Sim, SimError};

const MS: u64 = 1_000_000;
// 100 Mb/s on every link: a 1500 B segment takes TX = 120 us per link, a 40 B ACK TA = 3.2 us;
// base RTT = 2 (1 + 10 + 1) ms = 24 ms. One window (10 segments, IW 10) completes in
// 12 TX + 3 TA + RTT (crates/sim/tests/traffic_fct.rs works it out).
const FCT_10: u64 = 12 * 120_000 + 3 * 3_200 + 24 * MS;

/// `n` objects of 10 segments between host pair 0, each after the previous with `think_ns`.
fn session(n: usize, think_ns: u64, duration_ns: u64) -> Config {
    let mut cfg = idle_dumbbell(n, default_tcp(), duration_ns).config();
    let first = cfg.flows[0].clone();
    for (k, f) in cfg.flows.iter_mut().enumerate() {
        (f.src, f.dst) = (first.src, first.dst);
        (f.path, f.rev_path) = (first.path.clone(), first.rev_path.clone());
        f.size_bytes = Some(10 * 1460);
        if k > 0 {
            f.after = Some(AfterConfig {
                flow: k - 1,
                think_ns,
            });
        }
    }
    cfg
}

#[test]
fn the_next_object_starts_one_fct_plus_the_think_time_later() {
    let think = 500 * MS;
    let res = Sim::new(&session(3, think, 5_000 * MS))
        .unwrap()
        .run()
        .unwrap();
    for (k, f) in res.summary.flows.iter().enumerate() {
        // Each object is a new connection on an idle path: the same completion time.
        let fct = f.completion_s.unwrap() * 1e9;
        assert!((fct - FCT_10 as f64).abs() <= 2.0, "object {k}: {fct}");
        let start = (k as u64) * (FCT_10 + think);
        assert!(
            (f.start_s * 1e9 - start as f64).abs() <= 2.0,
            "object {k} starts at {} s, not {start} ns",
            f.start_s
        );
    }
}

#[test]
fn an_object_not_requested_within_the_run_has_not_started() {
    // The second object would start at FCT + 1 s, after the 800 ms run.
    let res = Sim::new(&session(2, 1_000 * MS, 800 * MS))
        .unwrap()
        .run()
        .unwrap();
    let f = &res.summary.flows[1];
    assert_eq!((f.start_s, f.completion_s, f.segments_sent), (0.8, None, 0));
}

fn refused(cfg: &Config) -> String {
    match Sim::new(cfg) {
        Err(SimError::Config(m)) => m,
        _ => panic!("accepted"),
    }
}

#[test]
fn a_session_must_be_a_chain_of_earlier_finite_flows() {
    let mut c = session(3, 0, 1_000 * MS);
    c.flows[1].after.as_mut().unwrap().flow = 2;
    assert!(refused(&c).contains("flows[1] (f1).after.flow: must name an earlier flow"));
    let mut c = session(3, 0, 1_000 * MS);
    c.flows[2].after.as_mut().unwrap().flow = 0;
    assert!(refused(&c).contains("already has a successor"));
    let mut c = session(2, 0, 1_000 * MS);
    c.flows[0].size_bytes = None;
    assert!(refused(&c).contains("the earlier one finite"));
}
