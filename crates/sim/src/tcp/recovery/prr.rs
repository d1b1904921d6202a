//! Proportional Rate Reduction (RFC 6937 s. 3.1, PRR-SSRB, the reduction bound Linux uses):
//! during recovery the sender may send `sndcnt` segments per ACK so that the window falls
//! smoothly from RecoverFS to ssthresh instead of halving at once. Units: segments.

/// PRR's state for one recovery episode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prr {
    /// Segments delivered to the receiver since recovery began (prr_delivered).
    pub delivered: u64,
    /// Segments sent since recovery began (prr_out).
    pub out: u64,
    /// FlightSize at the start of recovery (RecoverFS).
    pub recover_fs: u64,
}

impl Prr {
    /// On entering recovery with `flight` segments outstanding (RFC 6937 s. 3.1 "Initialization").
    pub fn start(flight: u32) -> Self {
        Prr {
            delivered: 0,
            out: 0,
            recover_fs: flight.max(1) as u64,
        }
    }

    /// On every ACK in recovery: `delivered` segments newly cumulatively acknowledged or SACKed
    /// (DeliveredData), `pipe` from RFC 6675; returns sndcnt, the segments that may be sent now.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: f64) -> u64 {
        self.delivered += delivered;
        let ssthresh = ssthresh.max(1.0);
        let sndcnt = if pipe as f64 > ssthresh {
            // Proportional part: CEIL(prr_delivered x ssthresh / RecoverFS) - prr_out.
            let target = (self.delivered as f64 * ssthresh / self.recover_fs as f64).ceil();
            target as i64 - self.out as i64
        } else {
            // Slow-start reduction bound: MIN(ssthresh - pipe, MAX(prr_delivered - prr_out,
            // DeliveredData) + 1 segment).
            let limit = (self.delivered as i64 - self.out as i64).max(delivered as i64) + 1;
            (ssthresh.floor() as i64 - pipe as i64).min(limit)
        };
        sndcnt.max(0) as u64
    }

    /// On any transmission during recovery (prr_out += data sent).
    pub fn sent(&mut self, n: u64) {
        self.out += n;
    }
}

/// ns-3.44's `TcpPrrRecovery` (src/internet/model/tcp-prr-recovery.cc, `DoRecovery`), a
/// cross-check model for the controllers that ask for it
/// ([`crate::tcp::cc::CongestionControl::uses_ns3_prr`]). It departs from RFC 6937 in three
/// ways (docs/crosscheck-ns3.md s. 1.3 item 2, s. 3.2), all kept here, in bytes as ns-3 counts:
///
/// 1. a duplicate ACK (one that SACKs new data) adds one more segment to DeliveredData while
///    prr_delivered < RecoverFS (l. 75-78), although ns-3 already passes the newly SACKed bytes;
/// 2. the proportional part multiplies prr_delivered by ssthresh in 32-bit unsigned arithmetic
///    (`m_prrDelivered * tcb->m_ssThresh * 1.0`, l. 88-89), which wraps once the product passes
///    2^32 (ssthresh of 230 segments of 1460 B: after 9 segments delivered), so the sender then
///    sends next to nothing until pipe has fallen to ssthresh;
/// 3. below ssthresh the bound is PRR-CRB, `max(prr_delivered - prr_out, DeliveredData)` (an
///    unsigned difference, negative once cast to `int` when prr_out is ahead), plus one segment
///    (PRR-SSRB) only on an ACK that cumulatively acknowledges a retransmission
///    (`m_isRetransDataAcked`, l. 92-104).
///
/// The window it sets is pipe + sendCount (l. 108), sendCount at least one segment before the
/// first transmission of the recovery (l. 107); ns-3 then sends whole segments while the window
/// allows (`SendPendingData`). ns-3's current development tree has fixed 1 and 2.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ns3Prr {
    /// Bytes delivered since recovery began (`m_prrDelivered`).
    delivered: u32,
    /// Bytes sent since recovery began (`m_prrOut`).
    out: u32,
    /// Bytes in flight when recovery began (`m_recoveryFlightSize`).
    recover_fs: u32,
    /// Segment size, bytes.
    mss: u32,
}

impl Ns3Prr {
    /// `EnterRecovery` (l. 55-66) with `pipe` segments in flight of `mss` bytes each.
    pub fn start(pipe: u32, mss: u32) -> Self {
        Ns3Prr {
            delivered: 0,
            out: 0,
            recover_fs: pipe.saturating_mul(mss).max(1),
            mss,
        }
    }

    /// `DoRecovery` on an ACK that newly delivered `delivered` segments, with `dupack` when the
    /// ACK SACKed new data and `safe` when it cumulatively acknowledged a retransmission; `pipe`
    /// the segments in flight after the ACK, `ssthresh` in segments, `sent` the segments sent
    /// since recovery began (prr_out, which ns-3 counts by `UpdateBytesSent` on every
    /// transmission in recovery). Returns the window in segments (pipe + sendCount, not below
    /// 0), or `None` when nothing was delivered (ns-3 leaves the window as it was, l. 79-82).
    pub fn on_ack(
        &mut self,
        delivered: u32,
        dupack: bool,
        safe: bool,
        pipe: u32,
        ssthresh: f64,
        sent: u64,
    ) -> Option<f64> {
        self.out = (sent as u32).wrapping_mul(self.mss);
        let mss = i64::from(self.mss);
        let mut delivered = delivered.wrapping_mul(self.mss);
        if dupack && self.delivered < self.recover_fs {
            delivered = delivered.wrapping_add(self.mss);
        }
        if delivered == 0 {
            return None;
        }
        self.delivered = self.delivered.wrapping_add(delivered);
        let ssthresh = (ssthresh * f64::from(self.mss)) as u32;
        let in_flight = pipe.wrapping_mul(self.mss);
        let mut send = if in_flight > ssthresh {
            // The product in 32 bits, as ns-3 evaluates it (uint32_t x uint32_t, then x 1.0).
            let product = self.delivered.wrapping_mul(ssthresh);
            (f64::from(product) / f64::from(self.recover_fs)).ceil() as i64 - i64::from(self.out)
        } else {
            let diff = self.delivered.wrapping_sub(self.out);
            let mut limit = diff.max(delivered) as i32 as i64;
            if safe {
                limit += mss;
            }
            limit.min(i64::from(ssthresh.wrapping_sub(in_flight) as i32))
        };
        if self.out == 0 {
            send = send.max(mss);
        }
        Some((i64::from(in_flight) + send).max(0) as f64 / mss as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_loss_in_twenty_sends_every_other_ack() {
        // RFC 6937 s. 5's single-loss case (without limited transmit): 20 outstanding,
        // segment 0 lost, ssthresh = 10 (Reno), RecoverFS = 20. The third duplicate ACK starts
        // recovery and the fast retransmit is sent (prr_out = 1); pipe = 20 - 3 SACKed - 1 lost
        // + 1 retransmitted = 17. Each later ACK SACKs one segment (DeliveredData = 1).
        // By hand, while pipe > ssthresh: sndcnt = ceil(prr_delivered x 10 / 20) - prr_out:
        //   ACK 4 (pipe 16): ceil(0.5) - 1 = 0;  ACK 5 (15): ceil(1) - 1 = 0;
        //   ACK 6 (14): ceil(1.5) - 1 = 1 -> pipe 15;  ACK 7 (14): 2 - 2 = 0;
        //   ACK 8 (13): 3 - 2 = 1;  ACK 9: 0;  ACK 10: 1;  ACK 11: 0;  ACK 12: 1 (prr_out 5);
        //   ACK 13 (pipe 11): 5 - 5 = 0.
        // Then pipe <= ssthresh, PRR-SSRB: MIN(ssthresh - pipe, MAX(prr_delivered - prr_out,
        // DeliveredData) + 1): ACK 14 (pipe 10): 0; ACKs 15-19 (pipe 9 each time): 1.
        // One segment per two ACKs, then pipe held at ssthresh; 10 sent in all = ssthresh.
        let mut p = Prr::start(20);
        p.sent(1);
        let mut pipe: u64 = 17;
        let mut got = Vec::new();
        for _ in 4..=19 {
            pipe -= 1; // one more SACKed
            let n = p.on_ack(1, pipe, 10.0);
            p.sent(n);
            pipe += n;
            got.push(n);
        }
        assert_eq!(got, [0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1]);
        assert_eq!(p.out, 10);
        assert_eq!(pipe, 10);
    }

    #[test]
    fn ns3_44_counts_dup_acks_twice_wraps_in_32_bits_and_bounds_by_crb() {
        // By hand, in bytes as ns-3.44's TcpPrrRecovery::DoRecovery: MSS 1460, RecoverFS = 400
        // segments = 584,000 B, ssthresh 200 segments = 292,000 B, pipe 380 segments (above
        // ssthresh: the proportional part), the fast retransmit sent (prr_out 1,460 B).
        let mut p = Ns3Prr::start(400, 1460);
        // Dup ACK 1 SACKs one segment: prr_delivered = 1,460 + 1,460 (the extra segment) =
        // 2,920; 2,920 x 292,000 = 852,640,000; / 584,000 = 1,460; ceil - prr_out = 0.
        assert_eq!(p.on_ack(1, true, false, 380, 200.0, 1), Some(380.0));
        // Dup ACKs 2-5: prr_delivered 5,840 ... 14,600, the product up to 4,263,200,000
        // (below 2^32 = 4,294,967,296): 2,920 ... 7,300 B allowed, one segment more each
        // (RFC 6937, one segment per delivered one: ceil(2 x 200 / 400) - 1 = 0 at ACK 2).
        for sent in 1..=4 {
            assert_eq!(p.on_ack(1, true, false, 380, 200.0, sent), Some(381.0));
        }
        // Dup ACK 6: prr_delivered 17,520; 17,520 x 292,000 = 5,115,840,000 wraps to
        // 820,872,704; / 584,000 = 1,405.6, ceil 1,406 - 7,300 = -5,894 B: the window is
        // 380 - 4.04 segments, nothing may leave (in 64 bits: 8,760 - 7,300, one segment).
        let w = p.on_ack(1, true, false, 380, 200.0, 5).unwrap();
        assert!((w - (380.0 * 1460.0 - 5894.0) / 1460.0).abs() < 1e-9, "{w}");
        // The wrapped product over RecoverFS is at most 2^32 / 584,000 = 7,354 B, never a whole
        // segment above prr_out (7,300 B): nothing leaves while pipe is above ssthresh (dup
        // ACKs 7-10, prr_delivered 20,440 ... 29,200: 2,866, 4,326, 5,786, 7,246 B allowed).
        for _ in 7..=10 {
            let w = p.on_ack(1, true, false, 380, 200.0, 5).unwrap();
            assert!(w < 381.0, "{w}");
        }
        // Pipe 150 below ssthresh: PRR-CRB. Dup ACK 11, prr_delivered 32,120: limit =
        // max(32,120 - 7,300, 2,920) = 24,820 B, min(24,820, 292,000 - 219,000) = 24,820 B =
        // 17 segments (RFC 6937's SSRB: min(50, (11 - 5) + 1) = 7).
        assert_eq!(p.on_ack(1, true, false, 150, 200.0, 5), Some(167.0));
        // An ACK that cumulatively acknowledges a retransmission adds one segment (PRR-SSRB);
        // one that delivers nothing leaves the window as it was.
        assert_eq!(
            p.on_ack(1, false, true, 150, 200.0, 22),
            Some(150.0 + 1.0 + 1.0)
        );
        assert_eq!(p.on_ack(0, false, false, 150, 200.0, 22), None);
    }

    #[test]
    fn below_ssthresh_the_reduction_bound_applies() {
        // Heavy loss: pipe 4 < ssthresh 10. PRR-SSRB: MIN(10 - 4, MAX(2 - 1, 2) + 1) = 3
        // (slow-start-like growth back toward ssthresh, at most one more than delivered).
        let mut p = Prr::start(20);
        p.sent(1);
        assert_eq!(p.on_ack(2, 4, 10.0), 3);
        // Near ssthresh the first term binds: MIN(10 - 9, ...) = 1.
        let mut p = Prr::start(20);
        assert_eq!(p.on_ack(5, 9, 10.0), 1);
    }
}
