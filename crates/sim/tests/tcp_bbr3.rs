//! BBR v3 (`crates/sim/src/tcp/cc/bbr3.rs`) in the whole simulator, against what its designers
//! state (draft-ietf-ccwg-bbr-01 s. 1 and the loss-threshold design of s. 4.5.10; Cardwell et
//! al., "BBRv2: A Model-Based Congestion Control", IETF 104 ICCRG, 2019, the v2 design v3
//! keeps): with a buffer well below a BDP, BBR v1 ignores loss and loses a large fraction of
//! its packets, while v3 bounds its inflight after a probe loses more than 2% and loses far
//! less, at full utilisation; with shallow-threshold ECN (an L4S queue) v3 holds the queue near
//! the marking step without loss.

mod common;

use sim::config::{AqmConfig, TcpConfig, TcpVariant};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn tcp(cc: &str, ecn: bool) -> TcpConfig {
    let mut t = default_tcp();
    t.variant = TcpVariant::Sack;
    t.cc = Some(cc.into());
    t.ecn = ecn;
    t.ect1 = ecn;
    t
}

fn aqm(name: &str) -> AqmConfig {
    AqmConfig {
        name: name.into(),
        params: Default::default(),
    }
}

/// 10 flows, 50 Mb/s, base RTT 44 ms (2 + 2 x 10 ms each way): BDP 183 packets; a buffer of
/// 40 packets (0.22 BDP); 15 s after 5 s of warm-up (the flows start 100 ms apart).
fn shallow(cc: &str, aqm_name: &str) -> sim::results::Results {
    let d = Dumbbell {
        flows: 10,
        rate_bps: 50_000_000,
        delay_ns: 2 * MS,
        buffer_pkts: 40,
        aqm: Some(aqm(aqm_name)),
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![10 * MS],
        tcp: tcp(cc, false),
        duration_ns: 20 * S,
        warmup_ns: 5 * S,
        seed: 1,
        stagger_ns: 100 * MS,
    };
    Sim::new(&d.config()).unwrap().run().unwrap()
}

fn jain(r: &sim::results::Results) -> f64 {
    let g: Vec<f64> = r.summary.flows.iter().map(|f| f.goodput_bps).collect();
    let sum: f64 = g.iter().sum();
    sum * sum / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>())
}

#[test]
fn with_a_shallow_buffer_v3_loses_far_less_than_v1_at_full_utilisation() {
    for q in ["droptail", "codel"] {
        let (v1, v3) = (shallow("bbr", q), shallow("bbr3", q));
        let (l1, l3) = (&v1.summary.links[0], &v3.summary.links[0]);
        let t = |r: &sim::results::Results| r.summary.flows.iter().map(|f| f.timeouts).sum::<u64>();
        eprintln!(
            "{q}: bbr loss {:.4} util {:.4} timeouts {} jain {:.3}; bbr3 loss {:.4} util {:.4} \
             timeouts {} jain {:.3}",
            l1.loss_ratio,
            l1.utilisation,
            t(&v1),
            jain(&v1),
            l3.loss_ratio,
            l3.utilisation,
            t(&v3),
            jain(&v3)
        );
        // v1 (no loss response beyond recovery) loses several percent; v3's loss stays near
        // its 2% probing threshold (draft BBRLossThresh), and well under a quarter of v1's.
        assert!(l1.loss_ratio > 0.05, "{q}: v1 loss {}", l1.loss_ratio);
        assert!(l3.loss_ratio < 0.025, "{q}: v3 loss {}", l3.loss_ratio);
        assert!(l3.loss_ratio < 0.25 * l1.loss_ratio);
        // v3 keeps the link full (CRUISE leaves 15% headroom under inflight_hi, which the
        // other flows fill) and shares it fairly (over 15 s of 10 flows probing 2-3 s apart,
        // Jain's index 0.85 or more; 0.92-0.99 over 25 s in docs/transports.md).
        // v1 keeps the link full too, at its high loss (the shallow-buffer behaviour the BBR
        // v2/v3 work set out to fix: full throughput, loss of 10-20 %). Until 2026-11-28 v1 over
        // SACK recovery limited the span from snd_una after a timeout and left the link 11-14 %
        // idle here; with Linux's in-flight window it no longer does.
        assert!(l3.utilisation >= 0.97, "{q}: v3 util {}", l3.utilisation);
        assert!(l1.utilisation >= 0.97, "{q}: v1 util {}", l1.utilisation);
        assert!(jain(&v3) >= 0.85, "{q}: jain {}", jain(&v3));
        assert!(t(&v3) * 4 < t(&v1));
    }
}

/// 4 flows starting together, 1 Gb/s, base RTT 3 ms (1 + 2 x 0.25 ms each way, ECN-eligible
/// for v3: min RTT at most 5 ms), through DualPI2; `ecn`: the flows send ECT(1) (the L4S queue,
/// step-marked at 1 ms), else Not-ECT (the classic queue, PI2 at 15 ms).
fn dualpi2(ecn: bool) -> sim::results::Results {
    let d = Dumbbell {
        flows: 4,
        rate_bps: 1_000_000_000,
        delay_ns: MS,
        buffer_pkts: 10_000,
        aqm: Some(aqm("dualpi2")),
        access_rate_bps: 10_000_000_000,
        access_delays_ns: vec![MS / 4],
        tcp: tcp("bbr3", ecn),
        duration_ns: 5 * S,
        warmup_ns: S,
        seed: 1,
        stagger_ns: 0,
    };
    Sim::new(&d.config()).unwrap().run().unwrap()
}

#[test]
fn with_l4s_ecn_v3_holds_the_queue_near_the_step_without_loss() {
    let (e, c) = (dualpi2(true), dualpi2(false));
    let (le, lc) = (&e.summary.links[0], &c.summary.links[0]);
    eprintln!(
        "ecn: util {:.4} delay {:.2} ms loss {} marks {} jain {:.3}; no ecn: util {:.4} delay \
         {:.2} ms drops {}",
        le.utilisation,
        le.delay_mean_s * 1e3,
        le.loss_ratio,
        le.marked,
        jain(&e),
        lc.utilisation,
        lc.delay_mean_s * 1e3,
        lc.dropped_aqm + lc.dropped_overflow
    );
    // The L4S queue: marks, no drops; the mean delay within 1 ms of DualPI2's 1 ms step
    // (v3 reacts to the CE fraction once per round, and its window never falls below 3 TSO
    // bursts); the link stays busy and the flows share it evenly.
    assert_eq!(le.dropped_aqm + le.dropped_overflow, 0);
    assert!(le.marked > 0);
    assert!(le.delay_mean_s < 2e-3, "delay {}", le.delay_mean_s);
    assert!(le.utilisation >= 0.95, "util {}", le.utilisation);
    assert!(jain(&e) >= 0.95, "jain {}", jain(&e));
    // Without ECN the same flows sit in the classic queue at the delay their own model allows
    // (below PI2's 15 ms target, so PI2 hardly drops): more than twice the L4S queue's.
    assert!(lc.delay_mean_s > 2.0 * le.delay_mean_s);
}
