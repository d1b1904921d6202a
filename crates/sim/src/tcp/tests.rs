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

/// Every ACK's reason, hand-worked through RFC 5681 s. 4.2 (as ns-3.44's `ReceivedData` decides
/// it, and `ns3_dumbbell.cc --ackTrace` names it): segments 0 1 4 2 3 1 5 under delayed ACKs.
/// 0 is held; 1 is the second: `Count`, ACK 2; 4 leaves a gap: `OutOfOrder`, ACK 2; 2 is in
/// order below the gap at 3: `Hole`, ACK 3; 3 fills it and takes 4 along: `Fill`, ACK 5; 1 is
/// below RCV.NXT: `Old`, ACK 5; 5 is held (every ACK restarted the count) until the timer:
/// `Timer`, ACK 6.
#[test]
fn every_ack_is_counted_by_its_reason() {
    let mut c = cfg(TcpVariant::NewReno);
    c.delack = true;
    let mut r = Receiver::new(&c);
    let mut acks = Vec::new();
    for s in [0u32, 1, 4, 2, 3, 1, 5] {
        if let Some(a) = r.on_data(&data(s), 100, true) {
            acks.push(a.seq);
        }
    }
    acks.push(r.on_delack_timer(0, 100 + c.delack_ns).unwrap().seq);
    assert_eq!(acks, [2, 2, 3, 5, 5, 6]);
    assert_eq!(r.stats.segments, 7);
    // Count, OutOfOrder, Fill, Hole, Old, Timer, Other (AckReason::ALL).
    assert_eq!(r.stats.acks_by_reason, [1, 1, 1, 1, 1, 1, 0]);
    assert_eq!(r.stats.acks_sent, 6);
    let names: Vec<_> = AckReason::ALL.iter().map(|a| a.name()).collect();
    assert_eq!(
        names,
        ["count", "ooo", "fill", "hole", "old", "timer", "other"]
    );
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

/// A sender and a receiver joined by a scripted network (in the spirit of quiche's TestSender):
/// a test sends what the window allows, says which segments are lost or CE-marked, and each
/// round the surviving segments reach the receiver in order and its ACKs reach the sender,
/// one round trip after the segments left. Whatever the sender sends in answer goes in the
/// next round.
pub(super) struct Harness {
    pub s: Sender,
    pub r: Receiver,
    pub now: Time,
    /// Sent, not yet delivered.
    pub wire: Vec<Packet>,
    /// (in recovery, cwnd, ssthresh) after each ACK.
    pub trace: Vec<(bool, f64, f64)>,
    rtt: Time,
}

impl Harness {
    /// A sender of `c` in congestion avoidance with window `cwnd` (ssthresh = cwnd), nothing
    /// sent yet, and a receiver of `c` (echoing CE as the controller asks).
    pub fn new(c: &TcpConfig, cwnd: f64, rtt: Time) -> Self {
        let mut s = Sender::new(c, None, None);
        s.cwnd = cwnd;
        s.ssthresh = cwnd;
        let r = Receiver::new(c).per_packet_ce_echo(s.cc.per_packet_ce_echo());
        Harness {
            s,
            r,
            now: 1_000,
            wire: Vec::new(),
            trace: Vec::new(),
            rtt,
        }
    }

    /// Sends what the window allows now; returns the segments sent.
    pub fn send(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        self.s.send_allowed(self.now, &mut out);
        let seqs = out.iter().map(|p| p.seq).collect();
        self.wire.extend(out);
        seqs
    }

    /// One round trip: the segments on the wire arrive in order, except the transmissions of
    /// `lose` (each number lost once: its retransmission gets through); those of `mark` arrive
    /// CE-marked. Every ACK reaches the sender at once; what it sends goes on the wire.
    pub fn round(&mut self, lose: &mut Vec<u32>, mark: &[u32]) {
        self.now += self.rtt;
        let wire = std::mem::take(&mut self.wire);
        for mut p in wire {
            if let Some(i) = lose.iter().position(|&l| l == p.seq) {
                lose.remove(i);
                continue;
            }
            if mark.contains(&p.seq) {
                p.flags |= crate::packet::CE;
            }
            let extra = self.r.on_data(&p, self.now, true);
            let acks: Vec<Packet> = self.r.take_extra().into_iter().chain(extra).collect();
            for a in acks {
                let mut out = Vec::new();
                self.s.on_ack(&a, self.now, &mut out);
                self.trace
                    .push((self.s.in_recovery, self.s.cwnd, self.s.ssthresh));
                self.wire.extend(out);
            }
        }
    }
}

/// Send 20, lose 3 (segments 5, 6, 7), ACK the rest: with SACK recovery and PRR, one fast
/// retransmit, the three losses retransmitted within the recovery (NewReno: the fast
/// retransmit, then one partial ACK per remaining hole, RFC 6582 s. 3.2 step 5), ssthresh = FlightSize / 2
/// (RFC 5681 eq. 4: 20 outstanding when the third duplicate ACK came) and, when the recovery
/// ends, cwnd = ssthresh (RFC 6937 s. 3.1; RFC 6582 s. 3.2 step 6 for NewReno).
///
/// RACK-TLP (RFC 8985) the same: the segments went out together, so the SACKs of 8.. mark 5-7
/// lost once three are SACKed (reo_wnd 0 without reordering, s. 6.2 step 4), one recovery.
#[test]
fn harness_send_20_lose_3_sack_and_newreno() {
    let mut rack = cfg(TcpVariant::Sack);
    rack.recovery = Some(crate::config::RecoveryKind::Rack);
    for (variant, c) in [
        ("sack", cfg(TcpVariant::Sack)),
        ("newreno", cfg(TcpVariant::NewReno)),
        ("rack", rack),
    ] {
        let mut h = Harness::new(&c, 20.0, 100_000_000);
        assert_eq!(h.send(), (0..20).collect::<Vec<_>>());
        let mut lose = vec![5, 6, 7];
        for _ in 0..6 {
            h.round(&mut lose, &[]);
        }
        assert!(lose.is_empty(), "{variant}: every loss was retransmitted");
        let s = &h.s;
        assert_eq!(s.stats.fast_retransmits, 1, "{variant}");
        assert_eq!(s.stats.retransmits, 3, "{variant}");
        assert_eq!(s.stats.timeouts, 0, "{variant}");
        // ACKs of 0..4 moved the window (20 + 5 x 1/cwnd) and sent 20..24: FlightSize at
        // the third duplicate ACK is 25 - 5 = 20.
        let exit = h
            .trace
            .windows(2)
            .find(|w| w[0].0 && !w[1].0)
            .map(|w| w[1])
            .expect("recovery ended");
        assert_eq!(exit.2, 10.0, "{variant}: ssthresh = 20 / 2");
        assert_eq!(
            exit.1, 10.0,
            "{variant}: cwnd = ssthresh at the end of recovery"
        );
    }
}

/// DCTCP through the harness (RFC 8257 s. 3.3), by hand: alpha starts at 1; the first ACK
/// ends the first observation window (WindowEnd 0) with F = 0: alpha = 15/16, and the next
/// window ends when 20 is acknowledged. Segments 10..14 (5 of 20) arrive CE-marked; the
/// receiver (no delayed ACKs) echoes ECE on exactly their ACKs. The first echo (ACK of 10,
/// after its own Reno growth) cuts cwnd once: cwnd x (1 - alpha / 2) with alpha 15/16; the other four echoes are in the
/// same window and do nothing. At the window's end: F = 5 marked of the 19 segments acked
/// since the first ACK; alpha = 15/16 x 15/16 + 1/16 x 5/19.
#[test]
fn harness_dctcp_alpha_and_the_once_per_window_cut() {
    let mut c = cfg(TcpVariant::NewReno);
    c.cc = Some("dctcp".into());
    c.ecn = true;
    let mut h = Harness::new(&c, 20.0, 100_000_000);
    h.send();
    h.round(&mut Vec::new(), &[10, 11, 12, 13, 14]);
    assert_eq!(h.s.stats.ecn_reductions, 1);
    // Reno growth on the ACKs of 0..9 (cwnd += 1/cwnd), then the cut on the ACK of 10.
    let mut w = 20.0f64;
    for _ in 0..11 {
        w += 1.0 / w;
    }
    let cut = w * (1.0 - (15.0 / 16.0) / 2.0);
    let (_, cwnd_at_10, ssthresh_at_10) = h.trace[10];
    assert!((cwnd_at_10 - cut).abs() < 1e-9, "{cwnd_at_10} vs {cut}");
    assert!((ssthresh_at_10 - cut).abs() < 1e-9);
    let alpha = 15.0 / 16.0 * 15.0 / 16.0 + 5.0 / 19.0 / 16.0;
    let got = h.s.cc.ecn_alpha().expect("dctcp has alpha");
    assert!((got - alpha).abs() < 1e-12, "alpha {got} vs {alpha}");
    // The next round trip (no marks) ends the next window once: alpha x 15/16.
    h.round(&mut Vec::new(), &[]);
    let got = h.s.cc.ecn_alpha().expect("dctcp has alpha");
    assert!((got - alpha * 15.0 / 16.0).abs() < 1e-12, "alpha {got}");
    assert_eq!(h.s.stats.ecn_reductions, 1);
}

/// RFC 8257 s. 3.2's receiver with delayed ACKs: while the CE state holds, every second
/// segment is acknowledged with ECE = the state; a change of state with a segment held back
/// sends an immediate ACK for it with the old state first.
#[test]
fn dctcp_receiver_echoes_ce_state_changes_at_once() {
    let mut c = cfg(TcpVariant::NewReno);
    c.delack = true;
    let mut r = Receiver::new(&c).per_packet_ce_echo(true);
    let ce = |seq: u32| Packet {
        flags: crate::packet::CE,
        ..data(seq)
    };
    // 0 (not CE): held. 1 (CE): the state changes with 0 held: ACK 1 without ECE now, 1 held.
    assert!(r.on_data(&data(0), 0, true).is_none());
    assert!(r.on_data(&ce(1), 0, true).is_none());
    let a = r.take_extra().expect("immediate ACK on the state change");
    assert_eq!((a.seq, a.flags & ECE), (1, 0));
    // 2 (CE): second segment held: ACK 3 with ECE.
    let a = r.on_data(&ce(2), 0, true).unwrap();
    assert_eq!((a.seq, a.flags & ECE != 0), (3, true));
    assert!(r.take_extra().is_none());
    // 3 (not CE): nothing held: no extra ACK; 3 held. 4 (not CE): ACK 5 without ECE.
    assert!(r.on_data(&data(3), 0, true).is_none());
    assert!(r.take_extra().is_none());
    let a = r.on_data(&data(4), 0, true).unwrap();
    assert_eq!((a.seq, a.flags & ECE), (5, 0));
    // An RFC 3168 receiver latches ECE until CWR instead: the CE segment is ACKed at once and
    // the next plain ACK still carries ECE.
    let mut r = Receiver::new(&c);
    assert_eq!(r.on_data(&ce(0), 0, true).unwrap().flags & ECE, ECE);
    assert!(r.on_data(&data(1), 0, true).is_none());
    assert_eq!(r.on_data(&data(2), 0, true).unwrap().flags & ECE, ECE);
}

/// Pacing (Linux `tcp_update_pacing_rate`): SRTT 100 ms, cwnd 10. In congestion avoidance
/// (cwnd >= ssthresh / 2) the rate is 1.2 x 10 / 0.1 s = 120 segments/s: departures 1/120 s =
/// 8.333 ms apart; in slow start (cwnd < ssthresh / 2) 2 x 10 / 0.1 s = 200/s: 5 ms apart.
#[test]
fn paced_departures_follow_the_linux_rate() {
    for (ssthresh, gap) in [(10.0, 8_333_333), (100.0, 5_000_000)] {
        let mut c = cfg(TcpVariant::NewReno);
        c.pacing = true;
        let mut s = Sender::new(&c, None, None);
        s.rtt_sample(100e6);
        s.cwnd = 10.0;
        s.ssthresh = ssthresh;
        let mut times = Vec::new();
        let mut now: Time = 1_000_000_000;
        for k in 0..10 {
            let mut out = Vec::new();
            s.send_allowed(now, &mut out);
            assert_eq!(out.len(), 1, "one segment per pacing slot");
            times.push(now);
            if k < 9 {
                now = s.pacer.deadline.take().expect("the next slot");
            } else {
                // The window (10) is full: the sender waits for an ACK, not for the pacer.
                assert!(s.pacer.deadline.is_none());
            }
        }
        for w in times.windows(2) {
            assert_eq!(w[1] - w[0], gap, "ssthresh {ssthresh}");
        }
    }
    // Unpaced: the whole window at once.
    let mut s = Sender::new(&cfg(TcpVariant::NewReno), None, None);
    s.rtt_sample(100e6);
    let mut out = Vec::new();
    s.send_allowed(0, &mut out);
    assert_eq!(out.len(), 10);
}

/// A duplicate ACK of `una` (no new data) with one SACK block `[a, b)`.
fn sack_ack(una: u32, a: u32, b: u32) -> Packet {
    let mut p = ack(una, 0);
    p.sack[0] = (a, b);
    p
}

/// Send 20, lose 3 (RFC 6675 + RFC 6937 PRR-SSRB behind the `Recovery` trait), by hand:
/// segments 100..119 outstanding, cwnd 20, 100-102 lost; 103..119 arrive, each SACKed, and so do
/// the new segments sent meanwhile.
/// - Dup ACKs 1, 2 (103, then 103-104 SACKed): RFC 6675 s. 5 step (3), the window counts the
///   segments in flight: 19 unSACKed < cwnd 20, one new segment each (120, 121), left out of
///   the FlightSize for ssthresh (RFC 5681 s. 3.2 step 2).
/// - Dup ACK 3 (103-105 SACKed): IsLost(100) (3 SACKed above): ssthresh = (22 - 2) / 2 = 10,
///   RecoverFS = 22, retransmit 100 (prr_out 1, HighRxt 100); 101 and 102 are lost too (3
///   SACKed above each); pipe = 16 unSACKed not-lost (106..121) + 1 retransmitted = 17 = cwnd.
/// - Each later dup ACK SACKs one more (DeliveredData 1). While pipe > ssthresh,
///   sndcnt = ceil(prr_delivered x 10 / 22) - prr_out: ACK 4 (pipe 16): ceil(0.45) - 1 = 0;
///   ACK 5 (15): ceil(0.91) - 1 = 0; ACK 6 (14): ceil(1.36) - 1 = 1 -> NextSeg rule (1): 101;
///   ACK 7 (14): 2 - 2 = 0; ACK 8 (13): ceil(2.27) - 2 = 1 -> 102; ACK 9 (13): 3 - 3 = 0;
///   ACK 10 (12): ceil(3.18) - 3 = 1 -> no hole above HighRxt: rule (2), new data 122;
///   ACK 11 (12): 4 - 4 = 0; ACK 12 (11): ceil(4.09) - 4 = 1 -> 123; ACK 13 (11): 5 - 5 = 0.
/// - ACK 14: pipe 10 = ssthresh: SSRB, MIN(10 - 10, ...) = 0. ACKs 15-19: pipe 9 each time
///   (one more SACKed, one new segment sent the ACK before): MIN(1, MAX(prr_delivered -
///   prr_out, 1) + 1) = 1 -> 124..128.
/// - prr_out = 10 = ssthresh by the last duplicate ACK; the retransmissions of 100, 101 are
///   partial ACKs (still in recovery), and that of 102 acknowledges RecoveryPoint (122):
///   recovery ends with cwnd = ssthresh = 10.
#[test]
fn sack_recovery_prr_sends_by_hand_after_three_losses() {
    let mut s = sender_at(TcpVariant::Sack, 20);
    assert_eq!(s.recovery_name(), "sack");
    let mut sent: Vec<Vec<u32>> = Vec::new();
    let mut cwnds = Vec::new();
    for top in 104..=122 {
        let mut out = Vec::new();
        s.on_ack(&sack_ack(100, 103, top), 1000, &mut out);
        sent.push(out.iter().map(|p| p.seq).collect());
        cwnds.push(s.cwnd);
    }
    let e: &[u32] = &[];
    let want: Vec<&[u32]> = vec![
        &[120],
        &[121], // dup ACKs 1-2: step (3)
        &[100], // dup ACK 3
        e,
        e,
        &[101],
        e,
        &[102],
        e,
        &[122],
        e,
        &[123],
        e, // pipe > ssthresh: proportional part
        e,
        &[124],
        &[125],
        &[126],
        &[127],
        &[128], // SSRB
    ];
    assert_eq!(sent, want);
    assert_eq!(s.ssthresh, 10.0);
    assert_eq!(cwnds[2], 17.0, "cwnd = pipe at the fast retransmit");
    assert_eq!(cwnds[13], 10.0, "cwnd = pipe + sndcnt = 10 + 0");
    assert!(s.in_recovery);
    let mut out = Vec::new();
    s.on_ack(&sack_ack(101, 103, 122), 2000, &mut out);
    s.on_ack(&sack_ack(102, 103, 122), 2000, &mut out);
    assert!(s.in_recovery, "partial ACKs keep SACK recovery");
    s.on_ack(&ack(122, 0), 2000, &mut out);
    assert!(!s.in_recovery);
    assert_eq!(
        s.cwnd, 10.0,
        "RFC 6937: cwnd = ssthresh at the end of recovery"
    );
    assert_eq!(s.stats.retransmits, 3);
}

/// Reno's window with ns-3.44's partial-ACK segment and RFC 6937's PRR: `newreno-ns3` without
/// its PRR ([`crate::tcp::cc::CongestionControl::uses_ns3_prr`]), so that a test can take the
/// two rules one at a time.
#[derive(Debug)]
struct PartialAckOnly;

impl crate::tcp::cc::CongestionControl for PartialAckOnly {
    fn name(&self) -> &'static str {
        "partial-ack-only"
    }
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &crate::tcp::cc::AckSample) -> f64 {
        crate::tcp::cc::Reno.on_ack(cwnd, ssthresh, s)
    }
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        crate::tcp::cc::Reno.on_congestion(cwnd, flight, now)
    }
    fn sends_on_partial_ack(&self) -> bool {
        true
    }
}

/// A SACK sender with controller `cc` (or `"partial-ack-only"`, [`PartialAckOnly`]) and
/// 100..119 outstanding, cwnd 20 (as [`sender_at`]).
fn sack_sender_at_20(cc: &str) -> Sender {
    let only = cc == "partial-ack-only";
    let c = TcpConfig {
        cc: Some(if only { "reno" } else { cc }.into()),
        ..cfg(TcpVariant::Sack)
    };
    let mut s = Sender::new(&c, None, None);
    if only {
        s.cc = Box::new(PartialAckOnly);
    }
    (s.snd_una, s.snd_nxt, s.snd_max, s.cwnd, s.ssthresh) = (100, 120, 120, 20.0, 1.0);
    s
}

/// ns-3.44's segment on a partial ACK (as `cc = "newreno-ns3"` has it, here alone beside RFC
/// 6937's PRR, [`PartialAckOnly`]; [`crate::tcp::cc::CongestionControl::sends_on_partial_ack`]),
/// on the 20 segments and three
/// losses above, by hand. Dup ACKs 1-4 as above: 120, 121, then 100 retransmitted (HighRxt 100,
/// prr_out 1), then nothing (ACK 4: prr_delivered 1, sndcnt ceil(10 / 22) - 1 = 0). Now the
/// retransmission of 100 is ACKed early (ACK 101, SACK 103-106 unchanged: DeliveredData 1,
/// prr_delivered 2): pipe = 15 (101, 102 lost with 4 SACKed above; 107..121 not lost; HighRxt
/// below snd_una), sndcnt = ceil(2 x 10 / 22) - 1 = 0, cwnd = pipe + sndcnt = 15.
/// - RFC 6675 / 6937 (`reno`): nothing leaves.
/// - ns-3.44 (`ProcessAck` l. 2099-2103): the new head 101 was not retransmitted, so
///   `DoRetransmit` sends NextSeg's rule (1) segment, 101, beyond the window; cwnd stays 15 and
///   prr_out becomes 2.
///
/// The next dup ACK (SACK 103-107: DeliveredData 1, prr_delivered 3): `reno` has pipe 14
/// (108..121; nothing retransmitted at or above snd_una) and sndcnt = ceil(30 / 22) - 1 = 1,
/// which retransmits 101 now; `newreno-ns3` has pipe 15 (101 retransmitted counts) and sndcnt
/// 2 - 2 = 0; cwnd = 15 on both. The partial ACK of 101's retransmission (ACK 102, prr_delivered
/// 4, pipe 14, prr_out 2 on both): sndcnt = ceil(40 / 22) - 2 = 0, so `reno` sends nothing and
/// waits for a later ACK to retransmit 102, while `newreno-ns3` finds the head 102 not
/// retransmitted and sends it (rule (1)). Retransmissions: 100, 101 against 100, 101, 102.
#[test]
fn ns3_partial_ack_sends_one_segment_beyond_the_window() {
    let run = |cc: &str| {
        let mut s = sack_sender_at_20(cc);
        let mut sent: Vec<Vec<u32>> = Vec::new();
        let mut cwnds = Vec::new();
        let mut step = |s: &mut Sender, a: Packet| {
            let mut out = Vec::new();
            s.on_ack(&a, 1000, &mut out);
            sent.push(out.iter().map(|p| p.seq).collect());
            cwnds.push(s.cwnd);
        };
        for top in 104..=107 {
            step(&mut s, sack_ack(100, 103, top));
        }
        step(&mut s, sack_ack(101, 103, 107)); // partial ACK: 100's retransmission
        step(&mut s, sack_ack(101, 103, 108)); // dup ACK: 107 SACKed
        step(&mut s, sack_ack(102, 103, 108)); // partial ACK: 101's retransmission
        assert!(s.in_recovery);
        (sent, cwnds, s.stats.retransmits)
    };
    let e: Vec<u32> = vec![];
    let (reno, reno_cwnd, reno_rtx) = run("reno");
    let (ns3, ns3_cwnd, ns3_rtx) = run("partial-ack-only");
    let head = [vec![120], vec![121], vec![100], e.clone()];
    assert_eq!(reno[..4], head[..]);
    assert_eq!(ns3[..4], head[..], "no partial ACK yet: the same");
    assert_eq!(reno[4], e, "RFC 6937: sndcnt 0, nothing leaves");
    assert_eq!(
        ns3[4],
        vec![101],
        "ns-3.44: DoRetransmit sends the lost head 101"
    );
    assert_eq!(reno_cwnd[4], 15.0);
    assert_eq!(ns3_cwnd[4], 15.0, "the window is PRR's, untouched");
    assert_eq!(
        reno[5],
        vec![101],
        "RFC 6937: sndcnt 2 - 1 = 1, NextSeg rule (1)"
    );
    assert_eq!(ns3[5], e, "prr_out 2 already: sndcnt 2 - 2 = 0");
    assert_eq!(reno_cwnd[5], ns3_cwnd[5], "the same pipe either way");
    assert_eq!(reno_cwnd[5], 15.0);
    assert_eq!(reno[6], e, "RFC 6937: sndcnt 0");
    assert_eq!(
        ns3[6],
        vec![102],
        "ns-3.44: the head 102 was not retransmitted"
    );
    assert_eq!((reno_rtx, ns3_rtx), (2, 3));
}

/// The rule's exception (`IsRetransmittedDataAcked(ackNumber + segmentSize)`): a partial ACK
/// whose new head was retransmitted already sends nothing beyond PRR. The by-hand run above to
/// dup ACK 8 (101 and 102 retransmitted at ACKs 6 and 8, HighRxt 102); the partial ACKs 101 and
/// 102 then find their heads retransmitted: `newreno-ns3` sends what `reno` sends.
#[test]
fn ns3_partial_ack_skips_a_head_retransmitted_already() {
    let run = |cc: &str| {
        let mut s = sack_sender_at_20(cc);
        let mut sent: Vec<Vec<u32>> = Vec::new();
        for a in (104..=111)
            .map(|top| sack_ack(100, 103, top))
            .chain([sack_ack(101, 103, 111), sack_ack(102, 103, 111)])
        {
            let mut out = Vec::new();
            s.on_ack(&a, 1000, &mut out);
            sent.push(out.iter().map(|p| p.seq).collect());
        }
        (sent, s.cwnd)
    };
    let (reno, reno_cwnd) = run("reno");
    let (ns3, ns3_cwnd) = run("partial-ack-only");
    assert_eq!(reno[5], vec![101]);
    assert_eq!(reno[7], vec![102]);
    assert_eq!(ns3, reno);
    assert_eq!(ns3_cwnd, reno_cwnd);
}

/// ns-3.44's PRR (`cc = "newreno-ns3"`, [`crate::tcp::recovery::prr::Ns3Prr`]) on the run of
/// `ns3_partial_ack_sends_one_segment_beyond_the_window`, against the partial-ACK rule alone
/// ([`PartialAckOnly`], RFC 6937's PRR), by hand in bytes (MSS 1,460; ssthresh 10 segments =
/// 14,600 B; RecoverFS = ns-3's bytes in flight at the third dup ACK: 100..121 less 103-105
/// SACKed and 100-102 lost, 16 segments = 23,360 B; prr_out 1,460 B after the fast
/// retransmit):
/// - dup ACK 4 (SACK 103-107): prr_delivered = 1,460 + 1,460 (ns-3's extra segment on a dup
///   ACK) = 2,920; 2,920 x 14,600 / 23,360 = 1,825, less prr_out: 365 B; cwnd = pipe 16 +
///   0.25; nothing leaves, as with RFC 6937;
/// - partial ACK 101 (no new SACK, one segment delivered): 4,380 x 14,600 / 23,360 = 2,737.5,
///   ceil - 1,460 = 1,278 B, cwnd 15 + 1,278 / 1,460; the partial-ACK segment 101 as before;
/// - dup ACK (SACK 103-108), prr_out 2,920: prr_delivered 4,380 + 2 x 1,460 = 7,300;
///   7,300 x 14,600 / 23,360 = 4,562.5, ceil - 2,920 = 1,643 B, cwnd 15 + 1.125: one segment,
///   102, leaves now (RFC 6937 with 3 delivered: ceil(30 / 22) - 2 = 0, nothing);
/// - partial ACK 102 (101's retransmission cumulatively ACKed; 102 retransmitted already):
///   8,760 x 14,600 / 23,360 = 5,475, - 4,380 = 1,095 B, cwnd 15.75, nothing, where the rule
///   alone sends 102 now. So ns-3's count sends 102 one ACK earlier.
#[test]
fn ns3_prr_counts_a_dup_ack_twice_and_sends_earlier() {
    let run = |cc: &str| {
        let mut s = sack_sender_at_20(cc);
        let mut sent: Vec<Vec<u32>> = Vec::new();
        let mut cwnds = Vec::new();
        for a in (104..=107).map(|top| sack_ack(100, 103, top)).chain([
            sack_ack(101, 103, 107),
            sack_ack(101, 103, 108),
            sack_ack(102, 103, 108),
        ]) {
            let mut out = Vec::new();
            s.on_ack(&a, 1000, &mut out);
            sent.push(out.iter().map(|p| p.seq).collect::<Vec<u32>>());
            cwnds.push(s.cwnd);
        }
        (sent, cwnds)
    };
    let e: Vec<u32> = vec![];
    let (rfc, rfc_cwnd) = run("partial-ack-only");
    let (ns3, ns3_cwnd) = run("newreno-ns3");
    assert_eq!(rfc[3..], [e.clone(), vec![101], e.clone(), vec![102]]);
    assert_eq!(ns3[3..], [e.clone(), vec![101], vec![102], e.clone()]);
    assert_eq!(
        rfc_cwnd[3..],
        [16.0, 15.0, 15.0, 14.0],
        "pipe + 0: 102 not yet resent"
    );
    let want = [16.25, 15.0 + 1278.0 / 1460.0, 15.0 + 1643.0 / 1460.0, 15.75];
    for (got, want) in ns3_cwnd[3..].iter().zip(want) {
        assert!((got - want).abs() < 1e-9, "cwnd {got}, by hand {want}");
    }
}

/// Who has ns-3.44's partial-ACK segment: the ns-3 models of the LEDBAT cross-check
/// (`ledbat-ns3` and the NewReno flows beside it, `newreno-ns3`) and `bbr-ns3:partialrtx`; not
/// `bbr-ns3` (its five rows were not re-run with it) nor any RFC or Linux controller.
#[test]
fn the_partial_ack_segment_is_ns3_models_only() {
    let on = |n: &str| crate::tcp::cc::build(n).unwrap().sends_on_partial_ack();
    for n in [
        "ledbat-ns3",
        "newreno-ns3",
        "bbr-ns3:partialrtx",
        "bbr-ns3:rtofirst+partialrtx",
    ] {
        assert!(on(n), "{n}");
    }
    for n in crate::tcp::cc::names() {
        assert_eq!(on(n), n == "ledbat-ns3" || n == "newreno-ns3", "{n}");
    }
}

/// Who has ns-3.44's PRR: the two ns-3 models of the LEDBAT cross-check only (not `bbr-ns3`,
/// which sets its window itself, nor any RFC or Linux controller).
#[test]
fn ns3_prr_is_the_ledbat_cross_check_models_only() {
    for n in crate::tcp::cc::names() {
        let on = crate::tcp::cc::build(n).unwrap().uses_ns3_prr();
        assert_eq!(on, n == "ledbat-ns3" || n == "newreno-ns3", "{n}");
    }
}

/// A loss in a window of 3 (RFC 6675 s. 5, by hand): 100..102 outstanding, cwnd 3, 100 lost.
/// Dup ACK 1 (101 SACKed): 2 segments in flight (100, 102) < cwnd 3: step (3) sends new
/// segment 103; dup ACK 2 (101-102): in flight 100, 103: sends 104; dup ACK 3 (101-103):
/// DupAcks = 3 and IsLost(100) (3 SACKed above): fast retransmit of 100, ssthresh =
/// max((5 - 2) / 2, 2) = 2 (the two step-(3) segments are not in FlightSize). With the window
/// counted as the span from snd_una no segment could leave on the two duplicate ACKs the
/// window of 3 produces, and only the retransmission timer would recover 100.
#[test]
fn sack_small_window_reaches_three_dupacks_by_sending_on_sacks() {
    let mut s = sender_at(TcpVariant::Sack, 3);
    let mut sent = Vec::new();
    for top in 102..=104 {
        let mut out = Vec::new();
        s.on_ack(&sack_ack(100, 101, top), 1000, &mut out);
        sent.push(out.iter().map(|p| p.seq).collect::<Vec<_>>());
    }
    assert_eq!(sent, vec![vec![103], vec![104], vec![100]]);
    assert!(s.in_recovery);
    assert_eq!(s.ssthresh, 2.0);
    assert_eq!(s.stats.timeouts, 0);
}

/// The same window of 3 with `sack_window = "span"` (ns-2's Sack1: outside fast recovery it
/// sends while `t_seqno <= last_ack_ + win`, tcp-sack1.cc `send_much`): the duplicate ACKs
/// free no room, nothing leaves on them, the third never comes, and only the timer recovers
/// 100 (one timeout, ssthresh = max(3 / 2, 2) = 2, cwnd 1, 100 resent).
#[test]
fn sack_small_window_with_ns2_span_window_waits_for_the_timer() {
    let c = TcpConfig {
        sack_window_span: true,
        ..cfg(TcpVariant::Sack)
    };
    let mut s = Sender::new(&c, None, None);
    (s.snd_una, s.snd_nxt, s.snd_max, s.cwnd, s.ssthresh) = (100, 103, 103, 3.0, 1.0);
    for top in [102, 103] {
        let mut out = Vec::new();
        s.on_ack(&sack_ack(100, 101, top), 1000, &mut out);
        assert!(out.is_empty(), "dup ACK up to {top}: {out:?}");
    }
    assert!(!s.in_recovery);
    let mut out = Vec::new();
    s.on_timeout(5000, &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![100]);
    assert_eq!((s.stats.timeouts, s.ssthresh, s.cwnd), (1, 2.0, 1.0));
}

/// After a timeout (RFC 6675 s. 5.1 with the scoreboard kept, as Linux and ns-3 keep it):
/// 100..109 outstanding, 102-105 and 107 SACKed. The timeout sends 100 (cwnd 1). Its ACK (101,
/// the same SACK blocks) opens slow start to cwnd 2 (ssthresh = 10 / 2 = 5) with nothing of
/// the go-back-N in flight: 101 and then 106, the next unSACKed segment, leave (Linux's
/// `tcp_packets_in_flight` after `tcp_enter_loss`, ns-3's `BytesInFlight` after
/// `SetSentListLost`: the SACKed segments between them take no room in the window).
#[test]
fn after_a_timeout_sacked_segments_take_no_room_in_the_window() {
    let mut s = sender_at(TcpVariant::Sack, 10);
    s.sb.as_mut()
        .expect("SACK sender")
        .apply(&[(102, 106), (107, 108)], 110);
    let mut out = Vec::new();
    s.on_timeout(5000, &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![100]);
    assert_eq!(s.ssthresh, 5.0);
    let mut a = ack(101, 0);
    a.sack[0] = (102, 106);
    a.sack[1] = (107, 108);
    out.clear();
    s.on_ack(&a, 6000, &mut out);
    assert_eq!(s.cwnd, 2.0);
    assert_eq!(
        out.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![101, 106]
    );
}

/// `[tcp] recovery` picks the algorithm apart from the preset, and a timeout tells it:
/// NewReno and SACK remember `recover` = HighData (RFC 6582 s. 4, RFC 6675 s. 5.1), so the
/// duplicate ACKs of the go-back-N do not start a second reduction; Reno does not.
#[test]
fn recovery_is_chosen_by_name_and_hears_of_timeouts() {
    use crate::config::RecoveryKind;
    for (kind, name, reenters) in [
        (RecoveryKind::Reno, "reno", true),
        (RecoveryKind::NewReno, "newreno", false),
        (RecoveryKind::Sack, "sack", false),
    ] {
        let c = TcpConfig {
            recovery: Some(kind),
            ..cfg(TcpVariant::Cubic)
        };
        let mut s = Sender::new(&c, None, None);
        assert_eq!((s.recovery_name(), s.cc.name()), (name, "cubic"));
        s.snd_una = 100;
        s.snd_nxt = 120;
        s.snd_max = 120;
        s.cwnd = 20.0;
        let mut out = Vec::new();
        s.on_timeout(5000, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![100]);
        // Three duplicate ACKs of 100 (SACKing 101..104 for the SACK sender) below recover 120.
        for top in 102..105 {
            s.on_ack(&sack_ack(100, 101, top), 6000, &mut out);
        }
        assert_eq!(s.in_recovery, reenters, "{name}");
        assert_eq!(s.stats.fast_retransmits, reenters as u64, "{name}");
    }
}

/// A CUBIC sender (SACK recovery) in slow start with `w` segments outstanding from 100.
fn cubic_slow_start(w: u32) -> Sender {
    let mut s = Sender::new(&cfg(TcpVariant::Cubic), None, None);
    (s.snd_una, s.snd_nxt, s.snd_max) = (100, 100 + w, 100 + w);
    (s.cwnd, s.ssthresh) = (w as f64, f64::INFINITY);
    s
}

/// Window growth counts the segments an ACK newly delivers (Linux's `acked_sacked` given to
/// `tcp_cong_avoid` only when `tcp_may_raise_cwnd` sees the cumulative ACK advance; ns-3.44's
/// `currentDelivered` given to `IncreaseWindow` only in `ProcessAck`'s branch for an ACK that
/// advances SND.UNA), by hand in slow start (cwnd += delivered): 100..109 outstanding, cwnd 10,
/// 100 lost.
/// - Dup ACK 1 (101 SACKed): no cumulative advance, no growth: cwnd 10 (110 leaves: the
///   SACKed segment frees room).
/// - Dup ACK 2 (101-102 SACKed): the same, cwnd 10 (111 leaves).
/// - The ACK of 100 (cumulative to 103, as the receiver holds 101-102): delivers 100 only,
///   cwnd 11. Counting the cumulative span (the count before) would give 13: 101 and 102
///   counted a second time.
/// - ACK 105 SACKing 106: delivers 103, 104 and 106: cwnd 14.
#[test]
fn growth_counts_the_newly_delivered_segments_not_the_span() {
    let mut s = cubic_slow_start(10);
    let mut out = Vec::new();
    s.on_ack(&sack_ack(100, 101, 102), 1000, &mut out);
    assert_eq!(s.cwnd, 10.0);
    s.on_ack(&sack_ack(100, 101, 103), 1000, &mut out);
    assert_eq!(s.cwnd, 10.0);
    assert_eq!(
        out.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![110, 111]
    );
    assert!(!s.in_recovery);
    s.on_ack(&ack(103, 0), 2000, &mut out);
    assert_eq!(s.cwnd, 11.0);
    s.on_ack(&sack_ack(105, 106, 107), 2000, &mut out);
    assert_eq!(s.cwnd, 14.0);
}

/// After a timeout the go-back-N's cumulative ACKs jump over SACKed segments; growth counts the
/// retransmissions they deliver, not the jump. 100..109 outstanding with cwnd 10 (CUBIC:
/// ssthresh 7), 102-105 and 107 SACKed. The timeout sends 100 (cwnd 1).
/// - ACK 101: delivers 100, slow start: cwnd 2; 101 and 106 leave.
/// - ACK 106 (101 arrived; 102-105 were held): delivers 101 only: cwnd 3 (counting the span
///   of 5 would reach ssthresh 7 at once); 108, 109 leave.
/// - ACK 108 (106 arrived; 107 was held): delivers 106: cwnd 4.
#[test]
fn after_a_timeout_growth_counts_the_retransmissions_delivered() {
    let mut s = sender_at(TcpVariant::Cubic, 10);
    (s.cwnd, s.ssthresh) = (10.0, f64::INFINITY);
    s.sb.as_mut()
        .expect("SACK sender")
        .apply(&[(102, 106), (107, 108)], 110);
    let mut out = Vec::new();
    s.on_timeout(5000, &mut out);
    assert_eq!((s.cwnd, s.ssthresh), (1.0, 7.0));
    let seqs = |o: &Vec<Packet>| o.iter().map(|p| p.seq).collect::<Vec<_>>();
    let with_sacks = |una: u32| {
        let mut a = ack(una, 0);
        a.sack[0] = (102, 106);
        a.sack[1] = (107, 108);
        a
    };
    out.clear();
    s.on_ack(&with_sacks(101), 6000, &mut out);
    assert_eq!((s.cwnd, seqs(&out)), (2.0, vec![101, 106]));
    out.clear();
    s.on_ack(&with_sacks(106), 7000, &mut out);
    assert_eq!((s.cwnd, seqs(&out)), (3.0, vec![108, 109]));
    out.clear();
    s.on_ack(&with_sacks(108), 8000, &mut out);
    assert_eq!(s.cwnd, 4.0);
}

/// PRR's DeliveredData counts a segment once (RFC 6937 s. 3: DeliveredData = delta snd.una +
/// delta SACKd, the SACKed segments a cumulative ACK covers leaving delta SACKd negative;
/// Linux's `newly_acked_sacked`, the `tp->delivered` delta): a partial ACK over segments
/// SACKed earlier delivers only the hole it fills. By hand, SACK recovery, 100..109
/// outstanding with cwnd 10, 100 and 104 lost:
/// - Dup ACKs 1-2 (101, then 101-102 SACKed): 9 segments in the pipe < cwnd 10: 110, 111 leave
///   (RFC 6675 s. 5 step (3)).
/// - Dup ACK 3 (101-103): IsLost(100); ssthresh = 10 / 2 = 5 (the two step-(3) segments left
///   out), RecoverFS = 112 - 100 = 12, 100 retransmitted (prr_out 1).
/// - Dup ACK 4 (105 SACKed too): DeliveredData 1, prr_delivered 1; pipe = 104, 106..111 plus
///   the retransmission = 8 > 5: sndcnt = ceil(1 x 5 / 12) - 1 = 0.
/// - The retransmission of 100 arrives: ACK 104, SACK 105. DeliveredData = 4 - 3 = 1 (101-103
///   were SACKed), prr_delivered 2; pipe = 104, 106..111 = 7 > 5: sndcnt =
///   ceil(2 x 5 / 12) - 1 = 0, cwnd = 7. Counting the 4 acknowledged segments again
///   (prr_delivered 5) would give ceil(25 / 12) - 1 = 2 more segments and cwnd 9.
#[test]
fn prr_delivered_data_counts_segments_sacked_earlier_once() {
    let mut s = sender_at(TcpVariant::Sack, 10);
    let two = |una: u32, a: (u32, u32), b: Option<(u32, u32)>| {
        let mut p = ack(una, 0);
        p.sack[0] = a;
        if let Some(b) = b {
            p.sack[1] = b;
        }
        p
    };
    let mut sent = Vec::new();
    for p in [
        two(100, (101, 102), None),
        two(100, (101, 103), None),
        two(100, (101, 104), None),
        two(100, (101, 104), Some((105, 106))),
        two(104, (105, 106), None),
    ] {
        let mut out = Vec::new();
        s.on_ack(&p, 1000, &mut out);
        sent.push(out.iter().map(|p| p.seq).collect::<Vec<_>>());
    }
    let e: Vec<u32> = Vec::new();
    assert_eq!(sent, vec![vec![110], vec![111], vec![100], e.clone(), e]);
    assert!(s.in_recovery);
    assert_eq!(s.ssthresh, 5.0);
    assert_eq!(s.cwnd, 7.0, "cwnd = pipe + sndcnt = 7 + 0");
}

/// Without SACK, a duplicate ACK delivers one segment and the cumulative ACK that follows
/// only those not counted yet (Linux's `tcp_add_reno_sack` / `tcp_remove_reno_sacks`), so
/// DCTCP's and Prague's counts see each segment once. By hand: 100..109 outstanding, 100 lost,
/// three duplicate ACKs (101-103 arrived) deliver 1 each; the ACK of 104 after the
/// retransmission delivers max(4 - 3, 1) = 1; the ACK of 110 delivers 6: 10 in all.
#[test]
fn reno_delivered_counts_each_segment_once() {
    let mut s = sender_at(TcpVariant::NewReno, 10);
    let counts: Vec<u32> = [0, 0, 0, 4, 6]
        .iter()
        .map(|&a| s.reno_delivered(a))
        .collect();
    assert_eq!(counts, vec![1, 1, 1, 1, 6]);
    assert_eq!(counts.iter().sum::<u32>(), 10);
    // All but the hole: a tenth duplicate ACK of 10 outstanding delivers nothing more
    // (`tcp_limit_reno_sacked`).
    let mut s = sender_at(TcpVariant::NewReno, 10);
    let dups: u32 = (0..12).map(|_| s.reno_delivered(0)).sum();
    assert_eq!(dups, 9);
}

/// A controller's smaller segments (TCP Prague 0.7's `tcp_sync_mss`): new segments from
/// snd_max on carry the new payload, segments already sent keep theirs when sent again, and
/// the payload below a segment adds the runs: mss 1460 below segment 110, 1450 from 110, 150
/// from 120: 110 x 1460 + 10 x 1450 + 5 x 150 = 175,850 bytes below 125. A return to the full
/// size at 130 is one more run; resizing twice at the same segment keeps the last.
#[test]
fn segments_of_a_smaller_size_and_their_bytes() {
    let mut s = sender_at(TcpVariant::NewReno, 10); // 100..110 sent at 1460 + 40
    let hdr = s.params.header;
    assert_eq!((hdr, s.bytes_below(125)), (40, 125.0 * 1460.0));
    s.resize_segments(1450);
    s.snd_max = 120;
    s.resize_segments(900);
    s.resize_segments(150); // replaces 900 at 120
    assert_eq!(s.seg_sizes, vec![(110, 1450), (120, 150)]);
    assert_eq!(s.bytes_below(125), 175_850.0);
    assert_eq!(s.bytes_below(115), 110.0 * 1460.0 + 5.0 * 1450.0);
    assert_eq!(s.bytes_below(50), 50.0 * 1460.0);
    let new = s.make_segment(120, 0);
    let resent = s.make_segment(105, 0);
    let resent2 = s.make_segment(112, 0);
    assert_eq!((new.size, resent.size, resent2.size), (190, 1500, 1490));
    s.snd_max = 130;
    s.resize_segments(1460);
    assert_eq!(s.seg_sizes, vec![(110, 1450), (120, 150), (130, 1460)]);
    assert_eq!(
        s.bytes_below(131),
        110.0 * 1460.0 + 14_500.0 + 1500.0 + 1460.0
    );
    assert_eq!(s.params.pkt_size, 1500);
}

/// The receiver notes where the measurement window's in-order data starts (segments 0 and 1
/// delivered before it, 2 and 3 in it: from 2), so goodput can add the payload of segments
/// of several sizes ([`Sender::bytes_below`] from 2 to 4).
#[test]
fn the_receiver_notes_the_first_segment_of_the_window() {
    let mut r = Receiver::new(&cfg(TcpVariant::NewReno));
    r.on_data(&data(0), 0, false);
    r.on_data(&data(1), 0, false);
    assert_eq!(r.stats.window_from, None);
    r.on_data(&data(3), 0, true); // out of order: nothing delivered yet
    assert_eq!(r.stats.window_from, None);
    r.on_data(&data(2), 0, true);
    assert_eq!(r.stats.window_from, Some(2));
    assert_eq!((r.stats.delivered_window, r.stats.delivered_total), (2, 4));
}

/// A GSO burst is sized as Linux's `tcp_tso_autosize` sizes it: the pacing rate in payload
/// bytes (`sk_pacing_rate`, set from `mss_cache`) over 2^-10 s, in segments of the MSS. At
/// 8,000 segments a second of 1448 B (in 1514 B frames): 11,584,000 B/s >> 10 = 11,312 B,
/// 7.8 segments: 7 (in wire bytes it would be 11,828 B, 8.2: 8). No rate yet: one segment.
#[test]
fn gso_bursts_are_sized_by_payload_bytes() {
    let mut c = cfg(TcpVariant::NewReno);
    c.mss = 1448;
    c.header_bytes = 66;
    let s = Sender::new(&c, None, None);
    assert_eq!(s.params.pkt_size, 1514);
    assert_eq!(s.gso_burst(Some(8000.0)), 7);
    assert_eq!(s.gso_burst(None), 1);
}
