//! Unit tests of the sender (Reno, NewReno) and receiver, hand-worked from the RFCs.

use super::*;
use crate::config::{TcpConfig, TcpVariant};
use crate::packet::{Kind, Packet, CWR, ECE, RETX};
use aqm::{Precedence, Time};

/// The topology presets' TCP (NewReno defaults: MSS 1460, IW 10, min RTO 200 ms) with `variant`
/// and a 1000-segment receiver window.
pub(super) fn cfg(variant: TcpVariant) -> TcpConfig {
    TcpConfig {
        variant,
        rwnd_segments: 1000,
        ..crate::topo::default_tcp()
    }
}

pub(super) fn ack(seq: u32, ts: Time) -> Packet {
    Packet {
        flow: 0,
        seq,
        size: 40,
        hop: 0,
        kind: Kind::Ack,
        flags: 0,
        precedence: Precedence::Out,
        ts,
        rwnd: 1000,
        sack: [(0, 0); 3],
        enq_time: 0,
    }
}

/// A data segment `seq` of flow 0 (the receiver tests' input).
fn data(seq: u32) -> Packet {
    Packet {
        kind: Kind::Data,
        ..ack(seq, 0)
    }
}

/// A sender in congestion avoidance with `w` segments outstanding from 100.
pub(super) fn sender_at(variant: TcpVariant, w: u32) -> Sender {
    let mut s = Sender::new(&cfg(variant), None, None);
    s.snd_una = 100;
    s.snd_nxt = 100 + w;
    s.snd_max = 100 + w;
    s.cwnd = w as f64;
    s.ssthresh = 1.0;
    s
}

#[test]
fn three_dupacks_halve_the_window_and_retransmit_the_head() {
    let mut s = sender_at(TcpVariant::NewReno, 20);
    let mut out = Vec::new();
    for _ in 0..2 {
        s.on_ack(&ack(100, 0), 1000, &mut out);
    }
    assert!(out.is_empty() && !s.in_recovery);
    s.on_ack(&ack(100, 0), 1000, &mut out);
    // RFC 5681 s. 3.2: ssthresh = FlightSize / 2 = 10, cwnd = ssthresh + 3 = 13.
    assert_eq!(s.ssthresh, 10.0);
    assert_eq!(s.cwnd, 13.0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 100);
    assert!(out[0].flags & RETX != 0);
    // The full ACK ends recovery with cwnd = ssthresh.
    out.clear();
    s.on_ack(&ack(120, 500), 2000, &mut out);
    assert!(!s.in_recovery);
    assert_eq!(s.cwnd, 10.0);
}

#[test]
fn newreno_partial_ack_retransmits_and_stays_in_recovery_reno_leaves() {
    let mut s = sender_at(TcpVariant::NewReno, 20);
    let mut out = Vec::new();
    for _ in 0..3 {
        s.on_ack(&ack(100, 0), 1000, &mut out);
    }
    out.clear();
    // Partial ACK up to 105 (recover = 120): retransmit 105, cwnd 13 - 5 + 1 = 9.
    s.on_ack(&ack(105, 0), 2000, &mut out);
    assert!(s.in_recovery);
    assert_eq!(out[0].seq, 105);
    assert_eq!(s.cwnd, 9.0);

    // Only the first partial ACK restarts the timer (RFC 6582 s. 3.2 step 5).
    let d1 = s.rto_deadline;
    assert_eq!(d1, Some(2000 + s.rto));
    s.on_ack(&ack(107, 0), 3000, &mut out);
    assert!(s.in_recovery);
    assert_eq!(
        s.rto_deadline, d1,
        "a second partial ACK must not restart the timer"
    );

    let mut r = sender_at(TcpVariant::Reno, 20);
    for _ in 0..3 {
        r.on_ack(&ack(100, 0), 1000, &mut out);
    }
    r.on_ack(&ack(105, 0), 2000, &mut out);
    assert!(!r.in_recovery);
    assert_eq!(r.cwnd, 10.0);
}

#[test]
fn rto_follows_rfc6298_and_backs_off() {
    let mut s = Sender::new(&cfg(TcpVariant::NewReno), None, None);
    // First sample R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50 = 300 ms.
    s.rtt_sample(100e6);
    assert_eq!(s.rto, 300_000_000);
    // Second sample 100 ms: RTTVAR = 0.75 * 50 = 37.5, SRTT = 100, RTO = 250 ms.
    s.rtt_sample(100e6);
    assert_eq!(s.rto, 250_000_000);
    // Small RTTs are held at the 200 ms minimum.
    for _ in 0..50 {
        s.rtt_sample(1e6);
    }
    assert_eq!(s.rto, 200_000_000);
    let mut out = Vec::new();
    s.snd_max = 10;
    s.snd_nxt = 10;
    s.cwnd = 10.0;
    s.on_timeout(5, &mut out);
    assert_eq!(s.rto, 400_000_000);
    assert_eq!(s.cwnd, 1.0);
    assert_eq!(s.ssthresh, 5.0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 0);
}

#[test]
fn a_timeout_in_fast_recovery_never_raises_ssthresh() {
    let mut s = sender_at(TcpVariant::NewReno, 20);
    let mut out = Vec::new();
    for _ in 0..3 {
        s.on_ack(&ack(100, 0), 1000, &mut out);
    }
    assert_eq!(s.ssthresh, 10.0);
    // 40 more duplicate ACKs inflate cwnd to 53 and release 33 new segments: flight 53.
    for _ in 0..40 {
        s.on_ack(&ack(100, 0), 2000, &mut out);
    }
    assert_eq!(s.flight(), 53);
    s.on_timeout(3000, &mut out);
    assert_eq!(s.ssthresh, 10.0, "not FlightSize / 2 = 26.5");
    assert_eq!(s.cwnd, 1.0);
}

#[test]
fn ecn_echo_reduces_once_per_window() {
    let mut c = cfg(TcpVariant::NewReno);
    c.ecn = true;
    let mut s = Sender::new(&c, None, None);
    s.snd_una = 100;
    s.snd_nxt = 120;
    s.snd_max = 120;
    s.cwnd = 20.0;
    s.ssthresh = 1.0;
    let mut out = Vec::new();
    let mut e = ack(101, 0);
    e.flags = ECE;
    s.on_ack(&e, 10, &mut out);
    assert_eq!(s.stats.ecn_reductions, 1);
    let w = s.cwnd;
    e.seq = 102;
    s.on_ack(&e, 20, &mut out);
    assert_eq!(
        s.stats.ecn_reductions, 1,
        "second echo within the window is ignored"
    );
    assert!(s.cwnd >= w);
    // cwnd 9.5 < flight 18: nothing may be sent yet; CWR rides the next new segment.
    assert!(out.is_empty());
    let mut plain = ack(115, 0);
    plain.flags = 0;
    s.on_ack(&plain, 30, &mut out);
    assert!(!out.is_empty());
    assert!(out[0].flags & CWR != 0);
    assert_eq!(out.iter().filter(|p| p.flags & CWR != 0).count(), 1);
}

#[test]
fn receiver_acks_cumulatively_and_reports_sack_blocks() {
    let mut r = Receiver::new(&cfg(TcpVariant::NewReno));
    for s in [0u32, 1, 3, 4, 6] {
        let a = r.on_data(&data(s), 0, true).unwrap();
        if s == 6 {
            assert_eq!(a.seq, 2);
            assert_eq!(a.sack[0], (6, 7));
            assert_eq!(a.sack[1], (3, 5));
        }
    }
    assert_eq!(r.blocks(), &[(3, 5), (6, 7)]);
    let a = r.on_data(&data(2), 0, true).unwrap();
    assert_eq!(a.seq, 5);
    assert_eq!(r.stats.delivered_total, 5);
}

#[test]
fn delayed_acks_ack_every_second_segment() {
    let mut c = cfg(TcpVariant::NewReno);
    c.delack = true;
    let mut r = Receiver::new(&c);
    assert!(r.on_data(&data(0), 0, true).is_none());
    assert_eq!(r.on_data(&data(1), 0, true).unwrap().seq, 2);
    assert!(r.on_data(&data(2), 100, true).is_none());
    assert_eq!(r.on_delack_timer(0, 100 + 40_000_000).unwrap().seq, 3);
}

/// A finite transfer's last segment (a real sender's FIN) is acknowledged at once (RFC 9293
/// s. 3.10.7.4): a 3-segment object under delayed ACKs gets its ACK of segment 3 without waiting
/// for the timer, while a bulk receiver holds the odd segment for the timer.
#[test]
fn the_last_segment_of_a_finite_transfer_is_acked_at_once() {
    let mut c = cfg(TcpVariant::NewReno);
    c.delack = true;
    for (total, last_acked_now) in [(Some(3), true), (None, false)] {
        let mut r = Receiver::new(&c).finite(total);
        assert!(r.on_data(&data(0), 0, true).is_none());
        assert_eq!(r.on_data(&data(1), 0, true).unwrap().seq, 2);
        let a = r.on_data(&data(2), 0, true);
        assert_eq!(a.is_some(), last_acked_now);
        if let Some(a) = a {
            assert_eq!(a.seq, 3);
        }
    }
}

/// RFC 6298 s. 3 (and Karn): without timestamps one segment per round trip is timed, so ten ACKs
/// of one flight give one RTT sample; with timestamps (RFC 7323 s. 4) each ACK of new data does.
#[test]
fn rtt_is_sampled_once_per_round_trip_unless_timestamps_are_on() {
    for (timestamps, expected) in [(false, 1), (true, 10)] {
        let mut c = cfg(TcpVariant::NewReno);
        c.timestamps = timestamps;
        let mut s = Sender::new(&c, None, None);
        (s.snd_una, s.snd_nxt, s.snd_max, s.cwnd) = (0, 10, 10, 10.0);
        let mut out = Vec::new();
        for k in 1..=10u32 {
            s.on_ack(&ack(k, 0), 50_000_000 + k as Time * 1_000, &mut out);
            // the window slides: new segments go out, but none of this flight is timed again
            (s.snd_nxt, s.snd_max) = (s.snd_nxt.max(10), s.snd_max.max(10));
        }
        assert_eq!(s.stats.rtt_n, expected, "timestamps = {timestamps}");
    }
}
