//! AccECN wired end to end (RFC 9768): negotiation in the handshake (Table 2), the receiver's
//! ACE field on its ACKs with delayed ACKs, the sender's CE counts across lost ACKs and the
//! field's wrap, and TCP Prague's fallback when the receiver lacks AccECN.

use super::accecn::{EcnMode, CEP_INIT};
use super::tests::{ack, cfg};
use super::{Receiver, Sender};
use crate::config::{EcnSupport, TcpConfig, TcpVariant};
use crate::packet::{Kind, Packet, AE, CE, CWR, ECE, ECT, ECT1, SYN};
use aqm::Time;

const MS: Time = 1_000_000;

/// A Prague flow (NewReno recovery, delayed ACKs) towards a receiver that supports `r`.
fn prague(r: EcnSupport) -> TcpConfig {
    let mut c = cfg(TcpVariant::NewReno);
    c.cc = Some("prague".into());
    c.ecn = true;
    c.delack = true;
    c.receiver_ecn = r;
    c
}

/// The sender's CE count so far (s.cep from its initial 5).
fn counted(s: &Sender) -> u32 {
    s.accecn.expect("AccECN mode").cep - CEP_INIT
}

/// Runs the handshake of `c`: the SYN, the receiver's SYN-ACK, the first data segment.
fn handshake(c: &TcpConfig) -> (Sender, Receiver, Packet, Packet, Packet) {
    let mut c = c.clone();
    c.handshake = true;
    let mut s = Sender::new(&c, None, None);
    let mut r = Receiver::new(&c);
    let mut out = Vec::new();
    s.start(0, &mut out);
    let syn = out[0];
    let synack = r.on_data(&syn, 10 * MS, true).expect("SYN-ACK");
    out.clear();
    s.on_ack(&synack, 20 * MS, &mut out);
    let first = out[0];
    (s, r, syn, synack, first)
}

/// RFC 9768 Table 2 through the simulated handshake: what each pair of ends negotiates, and
/// what the first data segment carries as a result.
#[test]
fn the_handshake_negotiates_the_feedback_mode() {
    // Prague (AccECN) and an AccECN receiver: SYN (1, 1, 1), SYN-ACK (0, 1, 0) for a Not-ECT
    // SYN, AccECN at both ends, ECT(1) data.
    let (s, r, syn, synack, d) = handshake(&prague(EcnSupport::AccEcn));
    assert_eq!(syn.flags, SYN | AE | CWR | ECE);
    assert_eq!(synack.flags, SYN | CWR);
    assert_eq!((s.ecn_mode, r.mode()), (EcnMode::AccEcn, EcnMode::AccEcn));
    assert_eq!(d.flags, ECT | ECT1, "ECT(1) on the wire");
    assert!(s.pacer.on && s.cc.l4s());
    // An RFC 3168 receiver answers (0, 0, 1): classic ECN, which Prague refuses
    // (TCP_CONG_NO_FALLBACK_RFC3168): no ECN, Not-ECT, unpaced, Reno.
    let (s, r, _, synack, d) = handshake(&prague(EcnSupport::Ecn));
    assert_eq!(synack.flags, SYN | ECE);
    assert_eq!((s.ecn_mode, r.mode()), (EcnMode::Off, EcnMode::Classic));
    assert_eq!(d.flags, 0, "Not-ECT");
    assert!(!s.pacer.on && !s.cc.l4s() && s.cc.ecn_alpha().is_none());
    // A receiver without ECN: (0, 0, 0).
    let (s, r, _, synack, d) = handshake(&prague(EcnSupport::Off));
    assert_eq!(synack.flags, SYN);
    assert_eq!(
        (s.ecn_mode, r.mode(), d.flags),
        (EcnMode::Off, EcnMode::Off, 0)
    );
    // An RFC 3168 sender (the default for every controller but Prague) and an AccECN receiver:
    // SYN (0, 1, 1), SYN-ACK (0, 0, 1), classic ECN, ECT(0) as before AccECN.
    let mut c = cfg(TcpVariant::NewReno);
    c.ecn = true;
    let (s, r, syn, synack, d) = handshake(&c);
    assert_eq!((syn.flags, synack.flags), (SYN | CWR | ECE, SYN | ECE));
    assert_eq!(
        (s.ecn_mode, r.mode(), d.flags),
        (EcnMode::Classic, EcnMode::Classic, ECT)
    );
    // A Reno sender asking for AccECN (`accecn = true`) falls back to RFC 3168 with an RFC 3168
    // receiver: a controller other than Prague takes classic feedback.
    c.accecn = Some(true);
    c.receiver_ecn = EcnSupport::Ecn;
    let (s, _, syn, synack, d) = handshake(&c);
    assert_eq!((syn.flags, synack.flags), (SYN | AE | CWR | ECE, SYN | ECE));
    assert_eq!((s.ecn_mode, d.flags), (EcnMode::Classic, ECT));
    // Without ECN: SYN (0, 0, 0), as before.
    let (s, r, syn, synack, _) = handshake(&cfg(TcpVariant::NewReno));
    assert_eq!((syn.flags, synack.flags), (SYN, SYN));
    assert_eq!((s.ecn_mode, r.mode()), (EcnMode::Off, EcnMode::Off));
    // Without the simulated handshake the sender starts in the mode it would have given.
    let s = Sender::new(&prague(EcnSupport::Ecn), None, None);
    assert_eq!(s.ecn_mode, EcnMode::Off);
    let s = Sender::new(&prague(EcnSupport::AccEcn), None, None);
    assert_eq!(s.ecn_mode, EcnMode::AccEcn);
}

/// Delayed ACKs with several CE marks (RFC 9768 s. 3.2.2.5.1), hand-worked: segments 0-9, CE
/// on 1, 2, 3 and 6, every ACK delivered.
/// - 0: held (delayed ACK). 1 (CE after non-CE): change-triggered ACK of 2, r.cep 6, ACE 6.
/// - 2 (CE): held (no change, one mark since the ACK). 3 (CE): the second mark since the ACK,
///   increment-triggered ACK of 4, r.cep 8, ACE 0 (the field wrapped).
/// - 4: held; 5: ACK of 6 (every second segment), ACE 0. 6 (CE): change-triggered ACK of 7,
///   r.cep 9, ACE 1. 7: held; 8: ACK of 9. 9: held until the timer: ACK of 10.
///
/// The sender's counts per ACK: 1, 2, 0, 1, 0, 0: 4 in all, the receiver's count; one window
/// reduction, and no CWR on the data (s. 3.1.5).
#[test]
fn delayed_acks_with_several_ce_marks() {
    let c = prague(EcnSupport::AccEcn);
    let mut s = Sender::new(&c, None, None);
    let mut r = Receiver::new(&c).ecn_mode(EcnMode::AccEcn);
    let ce = |seq: u32| [1, 2, 3, 6].contains(&seq);
    let mut acks = Vec::new();
    for seq in 0..10u32 {
        let mut d = ack(seq, seq as Time * MS);
        d.kind = Kind::Data;
        d.flags = ECT | ECT1 | if ce(seq) { CE } else { 0 };
        if let Some(a) = r.on_data(&d, seq as Time * MS, true) {
            acks.push(a);
        }
    }
    acks.extend(r.on_delack_timer(0, 100 * MS));
    let seen: Vec<(u32, u8)> = acks
        .iter()
        .map(|a| (a.seq, super::accecn::ace_of(a.flags)))
        .collect();
    assert_eq!(seen, [(2, 6), (4, 0), (6, 0), (7, 1), (9, 1), (10, 1)]);
    assert_eq!(acks[0].flags, AE | CWR, "ACE 6 = 0b110");
    assert_eq!(r.accecn().map(|a| a.cep), Some(CEP_INIT + 4));
    // The sender has sent segments 0-9 (IW 10; the pacer lets the first go, so open it).
    let mut out = Vec::new();
    s.snd_nxt = 10;
    s.snd_max = 10;
    let mut per_ack = Vec::new();
    for (k, a) in acks.iter().enumerate() {
        let before = counted(&s);
        s.on_ack(a, (30 + k as Time) * MS, &mut out);
        per_ack.push(counted(&s) - before);
    }
    assert_eq!(per_ack, [1, 2, 0, 1, 0, 0]);
    assert_eq!(s.stats.ecn_reductions, 1, "one reduction per window");
    assert!(
        out.iter().all(|p| p.flags & CWR == 0),
        "no CWR in AccECN mode"
    );
}

/// ACKs lost, and the field's wrap at 8 (RFC 9768 s. 3.2.2.5.2): the receiver ACKs every
/// segment, and only some ACKs reach the sender.
/// - 7 segments, all CE, one ACK arrives: fewer than 8 delivered, the delta 7 is exact.
/// - 8 segments, all CE, one ACK: the field shows no change (8 mod 8 = 0); 8 delivered could
///   hide a wrap, and the safe rule takes 8 - ((8 - 0) mod 8) = 8.
/// - 20 segments, every second CE (10), one ACK: residue 10 mod 8 = 2; the safe count within
///   20 is 20 - ((20 - 2) mod 8) = 18, an over-estimate by 8, as the RFC prefers to missing
///   congestion.
/// - 8 segments, none CE, one ACK: residue 0, and the safe rule takes 8 again: without the
///   AccECN option the sender cannot tell 0 from 8.
#[test]
fn lost_acks_and_the_wrap_at_eight() {
    let mut c = cfg(TcpVariant::NewReno);
    c.ecn = true;
    c.accecn = Some(true); // Reno's window with AccECN feedback: unpaced
    c.init_cwnd = 100.0;
    let mut s = Sender::new(&c, None, None);
    let mut r = Receiver::new(&c).ecn_mode(EcnMode::AccEcn);
    let mut out = Vec::new();
    s.start(0, &mut out);
    assert_eq!(out.len(), 100);
    let mut next = 0u32;
    let mut t = 10 * MS;
    let mut burst = |s: &mut Sender, n: u32, ce: &dyn Fn(u32) -> bool| {
        let mut last = None;
        for k in 0..n {
            let mut d = out[next as usize];
            if ce(k) {
                d.flags |= CE;
            }
            last = r.on_data(&d, t, true);
            next += 1;
        }
        let before = counted(s);
        t += MS;
        s.on_ack(&last.expect("every segment ACKed"), t, &mut Vec::new());
        counted(s) - before
    };
    assert_eq!(burst(&mut s, 7, &|_| true), 7);
    assert_eq!(burst(&mut s, 8, &|_| true), 8);
    assert_eq!(burst(&mut s, 20, &|k| k % 2 == 0), 18);
    assert_eq!(burst(&mut s, 8, &|_| false), 8);
    assert_eq!(burst(&mut s, 3, &|_| false), 0);
    assert_eq!(r.accecn().map(|a| a.cep), Some(CEP_INIT + 25));
}

/// With SACK, a cumulative ACK that covers segments SACKed before delivers only the rest: the
/// wrap rule sees the true number (as Linux's `tp->delivered`) and takes the residue as exact.
/// Segment 0 is lost; two ACKs SACK 1-5 and 6-9 (5 and 4 delivered, no CE); the
/// retransmission of 0 arrives CE-marked and its cumulative ACK of 10 delivers 1 (ACE 6: one
/// CE). Counting the 10 segments it covers instead would make the safe rule take
/// 10 - ((10 - 1) mod 8) = 9.
#[test]
fn sacked_segments_are_delivered_once() {
    let mut c = cfg(TcpVariant::Sack);
    c.ecn = true;
    c.accecn = Some(true);
    c.init_cwnd = 20.0;
    let mut s = Sender::new(&c, None, None);
    let mut out = Vec::new();
    s.start(0, &mut out);
    for (k, top) in [6u32, 10].into_iter().enumerate() {
        let mut a = ack(0, 0);
        a.flags = super::accecn::ace_flags(5);
        a.sack[0] = (1, top);
        s.on_ack(&a, (10 + k as Time) * MS, &mut out);
    }
    assert_eq!(counted(&s), 0);
    let mut b = ack(10, 0);
    b.flags = super::accecn::ace_flags(6);
    s.on_ack(&b, 20 * MS, &mut out);
    assert_eq!(counted(&s), 1);
}
