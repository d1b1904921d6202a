//! The receiver's SACK compression (`[tcp] sack_compress`), hand-worked from Linux's
//! `__tcp_ack_snd_check`, `tcp_compressed_ack_kick`, `tcp_event_ack_sent` and
//! `tcp_sack_new_ofo_skb` (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c) with the default
//! sysctls: `tcp_comp_sack_nr` 44, `tcp_comp_sack_delay_ns` 1 ms, `TCP_FASTRETRANS_THRESH` 3,
//! `TCP_NUM_SACKS` 4.

use super::receiver::SackCompress;
use super::*;
use crate::config::TcpVariant;
use crate::packet::{Kind, Packet};
use aqm::Time;

const MS: Time = 1_000_000;

fn receiver() -> Receiver {
    let mut c = super::tests::cfg(TcpVariant::NewReno);
    c.sack_compress = true;
    Receiver::new(&c)
}

fn data(seq: u32) -> Packet {
    Packet {
        kind: Kind::Data,
        ..super::tests::ack(seq, 0)
    }
}

/// The first three out-of-order segments at one `rcv_nxt` are ACKed at once (the sender's
/// duplicate ACKs); the next are held until the timer, 1 ms with no receiver RTT measured, and
/// leave as one ACK (3 held: 2 saved, `tcp_compressed_ack_kick` takes the one sent off).
#[test]
fn three_duplicate_acks_at_once_then_one_on_the_timer() {
    let mut r = receiver();
    // Segment 0 is lost.
    for s in [1, 2, 3] {
        let a = r.on_data(&data(s), 10 * MS, true).expect("immediate");
        assert_eq!((a.seq, a.sack[0]), (0, (1, s + 1)));
    }
    for s in [4, 5, 6] {
        assert!(r.on_data(&data(s), 10 * MS + u64::from(s), true).is_none());
    }
    assert_eq!(r.delack_deadline, Some(10 * MS + 4 + MS));
    assert!(r.on_delack_timer(0, 10 * MS + MS).is_none(), "not yet");
    let a = r
        .on_delack_timer(0, 10 * MS + 4 + MS)
        .expect("the held ACKs");
    assert_eq!((a.seq, a.sack[0], a.sack[1]), (0, (1, 7), (0, 0)));
    assert_eq!((r.stats.acks_sent, r.stats.acks_compressed), (4, 2));
    // The retransmission of 0 fills the hole: ACKed at once, nothing held.
    let a = r.on_data(&data(0), 20 * MS, true).expect("fill");
    assert_eq!(a.seq, 7);
    assert_eq!(r.stats.acks_compressed, 2);
}

/// Once 44 are held the next is ACKed at once, taking them along: 44 saved
/// (`tcp_event_ack_sent` counts them all when another ACK carries them).
#[test]
fn at_most_44_are_held() {
    let mut r = receiver();
    for s in 1..=3 {
        assert!(r.on_data(&data(s), 0, true).is_some());
    }
    for s in 4..48 {
        assert!(r.on_data(&data(s), 0, true).is_none(), "segment {s} held");
    }
    let a = r.on_data(&data(48), 0, true).expect("the 45th is sent");
    assert_eq!((a.seq, a.sack[0]), (0, (1, 49)));
    assert_eq!(r.stats.acks_compressed, 44);
    assert!(r.on_delack_timer(0, MS).is_none(), "nothing left to send");
}

/// A new `rcv_nxt` restarts the count of immediate ACKs (`compressed_ack_rcv_nxt`).
#[test]
fn a_new_rcv_nxt_gets_three_immediate_acks_again() {
    let mut r = receiver();
    for s in [2, 3, 4] {
        assert!(r.on_data(&data(s), 0, true).is_some());
    }
    assert!(r.on_data(&data(5), 0, true).is_none());
    // 0 arrives: rcv_nxt 1, below the gap at 1 (a `Hole` ACK, at once, with the held one).
    assert_eq!(r.on_data(&data(0), 0, true).expect("hole").seq, 1);
    assert_eq!(r.stats.acks_compressed, 1);
    for s in [7, 8, 9] {
        assert!(
            r.on_data(&data(s), 0, true).is_some(),
            "segment {s} at once"
        );
    }
    assert!(r.on_data(&data(10), 0, true).is_none());
}

/// The blocks an ACK carries are the most recently changed first (RFC 2018 s. 4, Linux's
/// `selective_acks` array), not the highest first: after 10, 20, 30, 40 then 11 and 21, the ACK
/// reports (20, 22), (10, 12), (40, 41), where the highest-first rule gave (20, 22), (40, 41),
/// (30, 31).
#[test]
fn blocks_are_reported_most_recent_first() {
    let mut r = receiver();
    for s in [10, 20, 30, 40, 11, 21] {
        r.on_data(&data(s), 0, true);
    }
    let a = r.on_delack_timer(0, MS).expect("held ACKs");
    assert_eq!(a.sack, [(20, 22), (10, 12), (40, 41)]);
    // Without compression the receiver keeps its highest-first rule.
    let mut plain = Receiver::new(&super::tests::cfg(TcpVariant::NewReno));
    let mut last = None;
    for s in [10, 20, 30, 40, 11, 21] {
        last = plain.on_data(&data(s), 0, true);
    }
    assert_eq!(last.unwrap().sack, [(20, 22), (40, 41), (30, 31)]);
}

/// A fifth block pushes the oldest out of the four-block array; with more than three ACKs held
/// Linux first sends them, with the array as it was (`tcp_sack_new_ofo_skb`): 10, 20, 30
/// at once, 40-70 held (four new blocks, the oldest forgotten each time), 80 sends the four
/// held as one ACK reporting (70, 71), (60, 61), (50, 51), then is held itself.
#[test]
fn a_full_array_sends_the_held_acks_before_forgetting_a_block() {
    let mut r = receiver();
    for s in [10, 20, 30] {
        assert!(r.on_data(&data(s), 0, true).is_some());
    }
    for s in [40, 50, 60, 70] {
        assert!(r.on_data(&data(s), 0, true).is_none());
        assert!(r.take_extra().is_none());
    }
    assert!(r.on_data(&data(80), 0, true).is_none());
    let a = r.take_extra().expect("the held ACKs go first");
    assert_eq!(a.sack, [(70, 71), (60, 61), (50, 51)]);
    assert_eq!(r.stats.acks_compressed, 4);
    let a = r.on_delack_timer(0, MS).expect("80's ACK on the timer");
    assert_eq!(a.sack, [(80, 81), (70, 71), (60, 61)]);
}

/// The timer: min(1 ms, RTT / 20) (`tcp_comp_sack_delay_ns`, 5 % of the RTT).
#[test]
fn the_timer_is_a_twentieth_of_the_rtt_at_most_1_ms() {
    assert_eq!(SackCompress::delay(None), MS);
    assert_eq!(SackCompress::delay(Some(10 * MS)), MS / 2);
    assert_eq!(SackCompress::delay(Some(20 * MS)), MS);
    assert_eq!(SackCompress::delay(Some(80 * MS)), MS);
}
