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
