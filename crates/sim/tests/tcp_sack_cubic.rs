//! SACK recovery with PRR (RFC 6675, RFC 6937) and CUBIC (RFC 9438) in the whole simulator:
//! behaviour that follows from the RFCs, checked on scripted losses and on dumbbells.

mod common;

use common::DropArrivals;
use sim::config::{TcpConfig, TcpVariant};
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn one_flow(tcp: TcpConfig, flows: usize, buffer: u32, duration: u64) -> Dumbbell {
    Dumbbell {
        flows,
        rate_bps: 10_000_000,
        delay_ns: 5 * MS,
        buffer_pkts: buffer,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS, 3 * MS, 7 * MS],
        tcp,
        duration_ns: duration,
        warmup_ns: duration / 3,
        seed: 1,
        stagger_ns: 0,
    }
}

fn tcp(variant: TcpVariant) -> TcpConfig {
    let mut t = default_tcp();
    t.variant = variant;
    t.init_ssthresh = Some(40.0);
    t.init_cwnd = 2.0;
    t
}

/// What [`scripted`] saw: (fast retransmits, timeouts, retransmits), cwnd just before recovery
/// and when it ended, and the recovery's length in smoothed RTTs.
type Seen = ((u64, u64, u64), f64, f64, f64);

/// Runs one flow whose data arrivals `drops` are lost.
fn scripted(variant: TcpVariant, drops: Vec<u64>) -> Seen {
    let d = one_flow(tcp(variant), 1, 1000, 10 * S);
    let mut sim = Sim::new(&d.config()).unwrap();
    sim.replace_aqm(0, Box::new(DropArrivals { drop: drops, n: 0 }));
    let (mut t, mut was, mut last) = (0, false, 0.0);
    let (mut before, mut after) = (None, None);
    let (mut t_in, mut rtts) = (0, 0.0);
    while t < 10 * S {
        t += 100_000;
        sim.run_until(t);
        let s = &sim.flows[0].tcp().expect("a TCP flow").sender;
        if s.in_recovery && !was && before.is_none() {
            before = Some(last);
            t_in = t;
        }
        if !s.in_recovery && was && after.is_none() {
            after = Some(s.cwnd);
            rtts = (t - t_in) as f64 / s.srtt_ns();
        }
        was = s.in_recovery;
        last = s.cwnd;
    }
    let r = sim.finish().unwrap();
    let f = &r.summary.flows[0];
    (
        (f.fast_retransmits, f.timeouts, f.retransmits),
        before.expect("entered recovery"),
        after.expect("left recovery"),
        rtts,
    )
}

#[test]
fn sack_repairs_four_losses_in_one_window_in_one_recovery() {
    // Four segments of one window lost (arrivals 2000, 2003, 2006, 2009, cwnd ~ 40 in
    // congestion avoidance). RFC 6675: one recovery episode retransmits exactly the four holes
    // (IsLost marks each once three SACKed segments lie above it), no timeout; PRR ends it at
    // ssthresh = FlightSize / 2 (Reno) and 0.7 cwnd (CUBIC).
    let drops = vec![2000, 2003, 2006, 2009];
    let (counts, w, after, rtts) = scripted(TcpVariant::Sack, drops.clone());
    assert_eq!(counts, (1, 0, 4), "sack");
    assert!((after - w / 2.0).abs() <= 1.0, "sack: cwnd {w} -> {after}");
    assert!(rtts < 1.6, "sack: recovery lasted {rtts} RTTs");
    let (counts, w, after, rtts) = scripted(TcpVariant::Cubic, drops);
    assert_eq!(counts, (1, 0, 4), "cubic");
    assert!((after - 0.7 * w).abs() <= 1.0, "cubic: cwnd {w} -> {after}");
    assert!(rtts < 1.6, "cubic: recovery lasted {rtts} RTTs");
}

#[test]
fn newreno_needs_one_round_trip_per_hole_where_sack_needs_one() {
    // The same four losses with NewReno: one partial ACK per hole (RFC 6582), so the holes are
    // repaired one per round trip (four sequential round trips; the queue drains meanwhile, so
    // later ones are shorter than the srtt they are counted in); it still retransmits each hole
    // once. SACK repairs them all in the first round trip.
    let holes = vec![2000, 2003, 2006, 2009];
    let (counts, _, _, newreno) = scripted(TcpVariant::NewReno, holes.clone());
    assert_eq!(counts, (1, 0, 4));
    let (_, _, _, sack) = scripted(TcpVariant::Sack, holes);
    assert!(newreno > 2.5, "newreno: recovery lasted {newreno} RTTs");
    assert!(newreno > 2.0 * sack, "newreno {newreno} RTTs, sack {sack}");
}

#[test]
fn sack_and_cubic_fill_a_bdp_buffered_link() {
    // 10 Mb/s, 3 flows, RTTs 14-26 ms, buffer 40 packets (> BDP ~ 20): every variant keeps the
    // link busy (Villamizar & Song 1994) and the run passes the conservation invariants
    // (checked by `run`). Drop-tail with three flows is not fair to any variant (phase effects),
    // so no fairness is claimed.
    for v in [TcpVariant::Sack, TcpVariant::Cubic] {
        let mut t = default_tcp();
        t.variant = v;
        let d = one_flow(t, 3, 40, 40 * S);
        let r = Sim::new(&d.config()).unwrap().run().unwrap();
        let b = &r.summary.links[0];
        assert!(
            b.utilisation >= 0.95,
            "{v:?}: utilisation {}",
            b.utilisation
        );
        let good: f64 = r.summary.flows.iter().map(|f| f.goodput_bps).sum();
        assert!(good > 0.9 * 10e6 * 1460.0 / 1500.0, "{v:?}: goodput {good}");
    }
}
