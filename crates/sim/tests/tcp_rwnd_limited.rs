//! A TCP flow's `rwnd_limited_s` (the time its receiver's window, not cwnd or pacing, held back
//! new data: Linux's `tcpi_rwnd_limited`, TCP_CHRONO_RWND_LIMITED started and stopped after each
//! `tcp_write_xmit`), checked against hand-worked cases on the idle 24 ms path of
//! `common::idle_dumbbell`.
//!
//! - Stop and wait (a window of one segment), unpaced: after each send the window is full
//!   while cwnd is open, and each ACK's send fills it again at once: held back from the first
//!   send to the end: the whole run (the flow starts at 0).
//! - A window of 4 MB on a 300 KB path: the window never binds: 0 exactly.
//! - Paced, the window full: Linux checks pacing before the windows, so the time counts from
//!   the pacer's next departure, not from the last send: a paced stop-and-wait flow is held
//!   back for less than the whole run, by at least one pacing gap per segment.

use sim::topo::default_tcp;
use sim::Sim;

mod common;

const S: u64 = 1_000_000_000;

fn run(tcp: sim::config::TcpConfig, duration: u64) -> sim::results::FlowSummary {
    let r = Sim::new(&common::idle_dumbbell(1, tcp, duration).config())
        .unwrap()
        .run()
        .unwrap();
    r.summary.flows[0].clone()
}

#[test]
fn stop_and_wait_is_window_limited_for_the_whole_run() {
    let mut tcp = default_tcp();
    tcp.rwnd_segments = 1;
    let f = run(tcp, 10 * S);
    let held = f.rwnd_limited_s.expect("a TCP flow reports it");
    assert!((held - 10.0).abs() < 1e-6, "held back {held} s of 10");
}

#[test]
fn a_window_larger_than_the_path_never_holds_the_sender_back() {
    let f = run(default_tcp(), 10 * S); // rwnd 4 MB, path 100 Mb/s x 24 ms = 300 KB
    assert!(f.goodput_bps > 50e6, "{}", f.goodput_bps);
    assert_eq!(f.rwnd_limited_s, Some(0.0));
}

#[test]
fn a_paced_sender_is_held_back_from_its_next_departure() {
    let mut tcp = default_tcp();
    tcp.rwnd_segments = 1;
    tcp.pacing = true;
    let f = run(tcp, 10 * S);
    let held = f.rwnd_limited_s.expect("a TCP flow reports it");
    // one segment a round trip of 24.37 ms: about 410 segments, each followed by a pacing gap
    // (at least the segment's time at the pacing rate, > 0) during which the window is full
    // but pacing, checked first, is what holds the sender back
    let segs = f.delivered_segments as f64;
    assert!((400.0..420.0).contains(&segs), "{segs} segments");
    assert!(
        held < 10.0 - 1e-3 && held > 5.0,
        "held back {held:.6} s of 10, cwnd {}",
        f.cwnd_final
    );
}
