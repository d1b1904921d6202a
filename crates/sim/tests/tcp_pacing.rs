//! Pacing (Linux's internal TCP pacing, `crates/sim/src/tcp/pacing.rs`) in the whole
//! simulator: after the handshake's RTT sample, a paced flow's first window leaves as a stream
//! at 2 cwnd / SRTT instead of a burst at the access rate, so it builds no queue at a
//! bottleneck faster than that; over a longer run the link is filled as without pacing and
//! every end-of-run invariant holds.

use sim::config::TcpVariant;
use sim::topo::{default_tcp, Dumbbell};
use sim::Sim;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// (utilisation, largest bottleneck queue in packets, timeouts) of one CUBIC flow with the
/// handshake, 20 Mb/s, base RTT 14 ms (1 + 5 + 1 ms each way), buffer 400 packets, for
/// `duration`.
fn run(pacing: bool, duration: u64) -> (f64, u32, u64) {
    run_gso(pacing, false, duration)
}

/// [`run`] with `[tcp] gso` as given.
fn run_gso(pacing: bool, gso: bool, duration: u64) -> (f64, u32, u64) {
    let mut tcp = default_tcp();
    tcp.variant = TcpVariant::Cubic;
    tcp.pacing = pacing;
    tcp.gso = gso;
    tcp.handshake = true;
    let d = Dumbbell {
        flows: 1,
        rate_bps: 20_000_000,
        delay_ns: 5 * MS,
        buffer_pkts: 400,
        aqm: None,
        access_rate_bps: 1_000_000_000,
        access_delays_ns: vec![MS],
        tcp,
        duration_ns: duration,
        warmup_ns: 0,
        seed: 1,
        stagger_ns: 0,
    };
    let r = Sim::new(&d.config()).unwrap().run().unwrap();
    let b = &r.summary.links[0];
    (b.utilisation, b.queue_max_pkts, r.summary.flows[0].timeouts)
}

/// The first window (10 segments of 1500 B) after the SYN-ACK (SRTT = 14 ms): unpaced it
/// reaches the 20 Mb/s bottleneck (1667 segments/s) at 1 Gb/s and queues up to 10 packets;
/// paced at 2 x 10 / 14 ms = 1429 segments/s, below the link rate, each segment finds the
/// queue empty (at most itself in the queue). The run ends at 27 ms, before the first ACKs
/// return (from 28 ms) and the second, faster round starts.
#[test]
fn the_first_paced_window_builds_no_queue() {
    let (_, q0, _) = run(false, 27 * MS);
    let (_, q1, _) = run(true, 27 * MS);
    eprintln!("first window: max queue unpaced {q0}, paced {q1}");
    assert!(q0 >= 8, "unpaced burst queue {q0}");
    assert!(q1 <= 1, "paced queue {q1}");
}

/// The same first window with GSO bursts (`tcp_tso_autosize`): 1429 segments/s x 1500 B =
/// 2,143,000 B/s, >> 10 = 2,092 bytes, one segment of 1460, raised to `tcp_min_tso_segs` 2;
/// min RTT 14 ms adds 64 KB >> (14,000 >> 9 = 27) = 0 bytes. So the window leaves in pairs
/// every 2 x 0.7 ms: the second of each pair reaches the bottleneck 12 us after the first,
/// which is still being sent (600 us a packet), and waits: one packet in the queue (which
/// counts the waiting ones: 0 paced one at a time, 9 of 10 unpaced, above), never more.
#[test]
fn gso_sends_the_first_paced_window_in_pairs() {
    let (_, q, _) = run_gso(true, true, 27 * MS);
    assert_eq!(q, 1, "paced in GSO pairs: max queue {q}");
    let (u, _, t) = run_gso(true, true, 5 * S);
    assert!(u >= 0.95 && t == 0, "utilisation {u}, timeouts {t}");
}

#[test]
fn a_paced_flow_fills_the_link() {
    let (u, _, t) = run(true, 5 * S);
    eprintln!("paced: utilisation {u:.4}");
    assert!(u >= 0.95, "utilisation {u}");
    assert_eq!(t, 0, "no timeout");
}
