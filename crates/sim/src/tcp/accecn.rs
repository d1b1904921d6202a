//! AccECN's packet counter (RFC 9768): the receiver counts CE-marked packets and feeds back the
//! count modulo 8 in the 3-bit ACE field of every ACK; the sender turns the change of ACE into a
//! number of newly CE-marked packets, safely when ACKs were lost and the field may have wrapped.
//!
//! - Receiver (RFC 9768 s. 3.2.1, s. 3.2.2): `r.cep` starts at 5 (so that an ACE of 0 on the first
//!   ACK reveals a middlebox that zeroes the field) and counts every CE packet; ACE = r.cep mod 8.
//! - Sender (RFC 9768 s. 3.2.2.5; Linux `__tcp_accecn_process` in net/ipv4/tcp_input.c): the
//!   delta d = (ACE - s.cep) mod 8. When at most 7 packets were newly delivered it cannot have
//!   wrapped and d is exact. Otherwise, without the AccECN option's CE byte counter, the sender
//!   assumes the largest number consistent with the residue d:
//!   `safe = delivered - ((delivered - d) mod 8)`. With the CE byte delta of the option, a zero
//!   byte delta means no wrap (d), a byte delta above d segments means it wrapped (safe); Linux's
//!   further estimate between the two (from the byte ratio) is not modelled: d is kept there.
//!
//! Status: the counter arithmetic with its tests. It is **not yet wired** into the simulated
//! handshake (negotiation, RFC 3168 fallback), receiver and sender: TCP Prague gets its CE
//! feedback from the DCTCP receiver's per-packet echo meanwhile (docs/l4s.md).

/// The initial value of the CE packet counters (RFC 9768 s. 3.2.1: 5, `TCP_ACCECN_CEP_INIT`).
pub const CEP_INIT: u32 = 5;

/// The ACE field's modulus (3 bits).
pub const ACE_MOD: u32 = 8;

/// The data receiver's CE packet counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcnReceiver {
    /// r.cep: CE packets received, from [`CEP_INIT`] (wrapping).
    pub cep: u32,
}

impl Default for AccEcnReceiver {
    fn default() -> Self {
        AccEcnReceiver { cep: CEP_INIT }
    }
}

impl AccEcnReceiver {
    /// A data packet arrived, CE-marked or not.
    pub fn on_data(&mut self, ce: bool) {
        self.cep = self.cep.wrapping_add(ce as u32);
    }

    /// The ACE field of the next ACK (r.cep mod 8).
    pub fn ace(&self) -> u8 {
        (self.cep % ACE_MOD) as u8
    }
}

/// The data sender's view of the CE counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcnSender {
    /// s.cep: CE packets the sender has accounted for, from [`CEP_INIT`] (wrapping).
    pub cep: u32,
}

impl Default for AccEcnSender {
    fn default() -> Self {
        AccEcnSender { cep: CEP_INIT }
    }
}

impl AccEcnSender {
    /// An ACK with field `ace` newly delivered `delivered` packets (and, with the AccECN option,
    /// `d_ceb` more CE bytes, of segments of `mss` bytes): the number of packets newly CE-marked,
    /// added to s.cep.
    pub fn on_ack(&mut self, ace: u8, delivered: u32, d_ceb: Option<u64>, mss: u32) -> u32 {
        let d = (ace as u32).wrapping_sub(self.cep) % ACE_MOD;
        let n = if delivered < ACE_MOD {
            d
        } else {
            let safe = delivered - (delivered - d) % ACE_MOD;
            match d_ceb {
                None => safe,
                Some(0) => d,
                Some(b) if b > d as u64 * mss as u64 => safe,
                Some(_) => d,
            }
        };
        self.cep = self.cep.wrapping_add(n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One ACK per packet, none lost: the sender's count follows the receiver's exactly,
    /// through several wraps of the 3-bit field.
    #[test]
    fn counters_agree_when_no_ack_is_lost() {
        let (mut r, mut s) = (AccEcnReceiver::default(), AccEcnSender::default());
        assert_eq!(
            r.ace(),
            5,
            "the first ACK shows ACE = 5 (RFC 9768 s. 3.2.1)"
        );
        let mut total = 0;
        for k in 0..100u32 {
            let ce = k % 3 == 0;
            r.on_data(ce);
            total += s.on_ack(r.ace(), 1, None, 1448);
        }
        assert_eq!(total, 34);
        assert_eq!(s.cep, r.cep);
    }

    /// ACKs lost: 6 packets, 5 of them CE, acknowledged by one surviving ACK: fewer than 8
    /// delivered, the delta is exact (5). Then 20 packets with 10 CE behind one ACK: the ACE
    /// residue is 10 mod 8 = 2, and without byte counters the sender must assume the largest
    /// count consistent with it within 20 packets: 20 - ((20 - 2) mod 8) = 18 (RFC 9768
    /// s. 3.2.2.5: over-estimate rather than miss congestion). With the option's CE byte delta
    /// (10 segments of 1448 B > 2 segments) it also takes 18; with a CE byte delta of 2 segments
    /// it keeps 2; with none, 0 CE bytes, it keeps the residue.
    #[test]
    fn deltas_across_lost_acks_and_ace_wrap() {
        let (mut r, mut s) = (AccEcnReceiver::default(), AccEcnSender::default());
        for k in 0..6 {
            r.on_data(k != 0);
        }
        assert_eq!(s.on_ack(r.ace(), 6, None, 1448), 5);
        assert_eq!(s.cep, r.cep);
        let before = s;
        let mut r2 = r;
        for k in 0..20 {
            r2.on_data(k % 2 == 0);
        }
        assert_eq!(r2.cep - r.cep, 10);
        let mut s1 = before;
        assert_eq!(s1.on_ack(r2.ace(), 20, None, 1448), 18);
        let mut s2 = before;
        assert_eq!(s2.on_ack(r2.ace(), 20, Some(10 * 1448), 1448), 18);
        let mut s3 = before;
        assert_eq!(s3.on_ack(r2.ace(), 20, Some(2 * 1448), 1448), 2);
        let mut s4 = before;
        assert_eq!(s4.on_ack(r2.ace(), 20, Some(0), 1448), 2);
        // Exactly 8 CE behind one ACK of 8 packets: residue 0, the safe count is 8.
        let mut r3 = r;
        for _ in 0..8 {
            r3.on_data(true);
        }
        let mut s5 = before;
        assert_eq!(s5.on_ack(r3.ace(), 8, None, 1448), 8);
    }
}
