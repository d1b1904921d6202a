//! Limited transmit (`[tcp] limited_transmit = true`): on each of the first two duplicate ACKs
//! the sender sends one segment of new data, so that a small window (or a loss near the end of a
//! window) still produces the three duplicate ACKs of fast retransmit instead of a timeout.
//!
//! - Reno / NewReno: RFC 3042 s. 2: one previously unsent segment per duplicate ACK when the
//!   receiver's window allows it and the outstanding data after it stays within cwnd + 2
//!   segments; cwnd is not changed.
//! - SACK variants: RFC 6675 s. 5 step (3): while cwnd - pipe >= 1 segment, send new data (pipe
//!   drops by one for each segment a duplicate ACK SACKs, so this is one segment per duplicate ACK
//!   when each SACKs one segment). HighRxt is below HighACK outside recovery, as step (3.1) sets it.
//!
//! Both: only new data, and only when the sender is not going back over old data after a timeout
//! (snd_nxt = snd_max). The segments sent are left out of the FlightSize that sets ssthresh at the
//! third duplicate ACK (RFC 5681 s. 3.2 step 2).

use super::DUP_THRESH;
use crate::packet::Packet;
use crate::tcp::Sender;
use aqm::Time;

impl Sender {
    /// Whether segment `snd_max` may be sent as new data now (application, receiver window, and
    /// no go-back-N in progress).
    fn new_segment_allowed(&self) -> bool {
        self.snd_nxt == self.snd_max
            && self.more_data(self.snd_max)
            && self.snd_max < self.snd_una + self.snd_wnd
    }

    /// Sends segment `snd_max` as a limited-transmit segment.
    fn send_limited(&mut self, now: Time, out: &mut Vec<Packet>) {
        let p = self.make_segment(self.snd_max, now);
        out.push(p);
        self.snd_max += 1;
        self.snd_nxt = self.snd_max;
        self.lt_sent += 1;
        self.stats.limited_transmits += 1;
        self.arm_if_stopped(now);
    }

    /// RFC 3042 s. 2, on a duplicate ACK outside recovery (Reno / NewReno).
    pub(crate) fn limited_transmit_newreno(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.params.limited_transmit
            && self.dupacks < DUP_THRESH
            && self.new_segment_allowed()
            && (self.flight() + 1) as f64 <= self.cwnd + 2.0
        {
            self.send_limited(now, out);
        }
    }

    /// RFC 6675 s. 5 step (3), on a duplicate ACK outside recovery that did not start it.
    pub(crate) fn limited_transmit_sack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.params.limited_transmit || self.dupacks == 0 || self.dupacks >= DUP_THRESH {
            return;
        }
        while self.new_segment_allowed() {
            let pipe = self.sb.as_ref().map_or(0, |b| b.pipe(self.snd_max));
            if self.cwnd - (pipe as f64) < 1.0 {
                break;
            }
            self.send_limited(now, out);
        }
    }

    /// FlightSize for ssthresh at the third duplicate ACK: without limited-transmit segments
    /// (RFC 5681 s. 3.2 step 2).
    pub(crate) fn flight_for_ssthresh(&self) -> u32 {
        self.flight() - self.lt_sent.min(self.flight())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TcpVariant;
    use crate::packet::RETX;
    use crate::tcp::tests::{ack, sender_at};
    use crate::tcp::Sender;

    fn lt(variant: TcpVariant, w: u32) -> Sender {
        let mut s = sender_at(variant, w);
        s.params.limited_transmit = true;
        s
    }

    /// RFC 3042 s. 2 on a window of 3 (segments 100-102) whose first segment is lost.
    #[test]
    fn two_duplicate_acks_release_two_new_segments_and_cwnd_stays() {
        let mut s = lt(TcpVariant::NewReno, 3);
        let mut out = Vec::new();
        // Dup ACK 1: flight 3 + 1 <= cwnd 3 + 2: segment 103. Dup ACK 2: 4 + 1 <= 5: 104.
        s.on_ack(&ack(100, 0), 10, &mut out);
        s.on_ack(&ack(100, 0), 20, &mut out);
        let seqs: Vec<u32> = out.iter().map(|p| p.seq).collect();
        assert_eq!(seqs, vec![103, 104]);
        assert!(out.iter().all(|p| p.flags & RETX == 0));
        assert_eq!((s.cwnd, s.flight(), s.stats.limited_transmits), (3.0, 5, 2));
        // Dup ACK 3 (from segment 103): fast retransmit of 100.
        out.clear();
        s.on_ack(&ack(100, 0), 30, &mut out);
        assert!(s.in_recovery);
        assert_eq!(out[0].seq, 100);
        // Without limited transmit the two duplicate ACKs send nothing: the third never comes.
        let mut n = sender_at(TcpVariant::NewReno, 3);
        let mut none = Vec::new();
        n.on_ack(&ack(100, 0), 10, &mut none);
        n.on_ack(&ack(100, 0), 20, &mut none);
        assert!(none.is_empty());
    }

    /// RFC 5681 s. 3.2 step 2: the segments sent by limited transmit are not part of the
    /// FlightSize that sets ssthresh: 8 outstanding before them, ssthresh 4, not 10 / 2 = 5.
    #[test]
    fn limited_transmit_segments_do_not_count_for_ssthresh() {
        let mut s = lt(TcpVariant::NewReno, 8);
        let mut out = Vec::new();
        for _ in 0..3 {
            s.on_ack(&ack(100, 0), 10, &mut out);
        }
        assert_eq!(s.stats.limited_transmits, 2);
        assert_eq!(s.ssthresh, 4.0);
        assert_eq!(s.cwnd, 7.0, "ssthresh + 3 (RFC 5681 s. 3.2 step 2)");
    }

    #[test]
    fn the_window_limits_hold() {
        // cwnd 3 with 5 outstanding: 5 + 1 > 3 + 2, nothing.
        let mut s = lt(TcpVariant::NewReno, 5);
        s.cwnd = 3.0;
        let mut out = Vec::new();
        s.on_ack(&ack(100, 0), 10, &mut out);
        assert!(out.is_empty());
        // The receiver's window (3 segments from snd_una) allows no new segment.
        let mut r = lt(TcpVariant::NewReno, 3);
        let mut a = ack(100, 0);
        a.rwnd = 3;
        r.on_ack(&a, 10, &mut out);
        assert!(out.is_empty());
        // A finite flow with nothing left to send.
        let mut f = lt(TcpVariant::NewReno, 3);
        f.stop_new_data();
        f.on_ack(&ack(100, 0), 10, &mut out);
        assert!(out.is_empty());
    }

    /// RFC 6675 s. 5 step (3): cwnd 4, segments 100-103, 100 lost. Each duplicate ACK SACKs
    /// one more segment, so pipe falls to 3 and one new segment goes out; the third duplicate
    /// ACK starts recovery with ssthresh = 4 / 2 = 2 (the two new segments left out).
    #[test]
    fn sack_limited_transmit_follows_pipe() {
        let mut s = lt(TcpVariant::Sack, 4);
        let mut out = Vec::new();
        for (k, top) in [(1, 102), (2, 103)] {
            let mut a = ack(100, 0);
            a.sack[0] = (101, top);
            s.on_ack(&a, 10 * k, &mut out);
            assert_eq!(out.len(), k as usize, "one new segment per duplicate ACK");
            assert_eq!(out[k as usize - 1].seq, 103 + k as u32);
        }
        assert_eq!((s.cwnd, s.snd_max), (4.0, 106));
        let mut a = ack(100, 0);
        a.sack[0] = (101, 104);
        s.on_ack(&a, 30, &mut out);
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh, 2.0);
        assert_eq!(out[2].seq, 100);
    }
}
