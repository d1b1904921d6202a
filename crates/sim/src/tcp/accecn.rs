//! Accurate ECN feedback (RFC 9768): negotiation in the three-way handshake, the receiver's CE
//! packet counter fed back in the 3-bit ACE field of every ACK, and the sender's inference of
//! the number of newly CE-marked packets, safely when ACKs were lost and the field may have
//! wrapped.
//!
//! - Negotiation (RFC 9768 s. 3.1.1-3.1.2, Table 2): an AccECN client sends its SYN with
//!   (AE, CWR, ECE) = (1, 1, 1), an RFC 3168 client (0, 1, 1), a non-ECN one (0, 0, 0). An AccECN
//!   server answers an AccECN SYN with one of the four combinations of Table 2's top block, which
//!   feed back the IP-ECN field the SYN arrived with (Not-ECT: (0, 1, 0); ECT(1): (0, 1, 1);
//!   ECT(0): (1, 0, 0); CE: (1, 1, 0)); an RFC 3168 SYN with (0, 0, 1) (classic ECN); anything
//!   else with (0, 0, 0). An RFC 3168 server answers an ECN-setup SYN (AccECN's included: it
//!   reads CWR and ECE only) with (0, 0, 1). The client's mode follows from the SYN-ACK
//!   ([`client_mode`]): AccECN for the top block and for the reserved (1, 0, 1) (s. 3.1.3),
//!   classic ECN for (0, 0, 1), no ECN for (0, 0, 0) and for a broken server's reflection
//!   (1, 1, 1). The simulated SYN is never ECN-capable (RFC 3168 s. 6.1.1), so an AccECN
//!   SYN-ACK here is (0, 1, 0).
//! - Receiver (s. 3.2, s. 3.2.1): `r.cep` starts at 5 (so that an ACE of 0 on the first ACK
//!   reveals a middlebox that zeroes the field) and counts every CE packet; ACE = r.cep mod 8 on
//!   every ACK. The byte counters r.e0b, r.e1b (from 1) and r.ceb (from 0) count payload bytes
//!   per codepoint; they would travel in the AccECN option, which aqmlab does not model
//!   (**ACE field only** on the wire: they are kept for the statistics and the tests). ACKs
//!   (s. 3.2.2.5.1): at once on a CE data packet after a non-CE packet ("change-triggered"), and
//!   once n = 2 CE marks have arrived since the last ACK ("increment-triggered"), on top of the
//!   delayed-ACK rule (RFC 5681 s. 4.2).
//! - Sender (s. 3.2.2.5.2; the example algorithm of Appendix A.2; Linux `__tcp_accecn_process`
//!   in net/ipv4/tcp_input.c): the delta d = (ACE - s.cep) mod 8. When fewer than 8 packets
//!   were newly delivered it cannot have wrapped and d is exact. Otherwise, without the AccECN
//!   option's CE byte counter, the sender assumes the largest number consistent with the residue
//!   d: `safe = delivered - ((delivered - d) mod 8)`. With the CE byte delta of the option (the
//!   arithmetic is kept and tested for when the option is modelled), a zero byte delta means no
//!   wrap (d), a byte delta above d segments means it wrapped (safe); Linux's further estimate
//!   between the two (from the byte ratio) is not modelled: d is kept there.
//!
//! In AccECN mode the data sender never sets CWR on data (s. 3.1.5: "MUST NOT set CWR to
//! indicate that it has received and responded to indications of congestion"), and ECE on an ACK
//! is a bit of the ACE field, not an RFC 3168 echo.

use crate::config::EcnSupport;
use crate::packet::{AE, CWR, ECE};

/// The initial value of the CE packet counters (RFC 9768 s. 3.2.1: 5, `TCP_ACCECN_CEP_INIT`).
pub const CEP_INIT: u32 = 5;

/// The ACE field's modulus (3 bits).
pub const ACE_MOD: u32 = 8;

/// CE marks since the last ACK that make the receiver ACK at once ("increment-triggered ACKs",
/// RFC 9768 s. 3.2.2.5.1: n SHOULD be 2 with unacknowledged data).
pub const INCREMENT_TRIGGER: u32 = 2;

/// The feedback mode a half connection ends up in (RFC 9768 Table 2's last column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// Not ECN: Not-ECT packets, no feedback.
    Off,
    /// RFC 3168 ECN: ECE latched until CWR (or DCTCP's per-packet echo, RFC 8257 s. 3.2).
    Classic,
    /// RFC 9768 AccECN: the ACE field on every ACK.
    AccEcn,
}

/// The TCP-ECN flags (AE, CWR, ECE) of a SYN from an end that supports `s` (RFC 9768 s. 3.1.1;
/// RFC 3168 s. 6.1.1).
pub fn syn_flags(s: EcnSupport) -> u8 {
    match s {
        EcnSupport::AccEcn => AE | CWR | ECE,
        EcnSupport::Ecn => CWR | ECE,
        EcnSupport::Off => 0,
    }
}

/// A server that supports `s` receives a SYN with TCP flags `syn` whose IP-ECN field arrived
/// as `syn_ecn` (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE): its feedback mode and the (AE, CWR, ECE)
/// flags of its SYN-ACK (RFC 9768 Table 2; s. 3.1.3 for the reserved SYN combinations; RFC 3168
/// s. 6.1.1 for an RFC 3168 server).
pub fn server_answer(s: EcnSupport, syn: u8, syn_ecn: u8) -> (EcnMode, u8) {
    let bits = syn & (AE | CWR | ECE);
    match s {
        EcnSupport::Off => (EcnMode::Off, 0),
        // An RFC 3168 server reads CWR and ECE only: AccECN's SYN is an ECN-setup SYN to it.
        EcnSupport::Ecn if bits & (CWR | ECE) == CWR | ECE => (EcnMode::Classic, ECE),
        EcnSupport::Ecn => (EcnMode::Off, 0),
        EcnSupport::AccEcn => match bits {
            0 => (EcnMode::Off, 0),
            b if b == CWR | ECE => (EcnMode::Classic, ECE),
            // (1, 1, 1) and, for forward compatibility (s. 3.1.3), any other combination.
            _ => {
                let fb = match syn_ecn & 3 {
                    0 => CWR,       // Not-ECT: (0, 1, 0)
                    1 => CWR | ECE, // ECT(1):  (0, 1, 1)
                    2 => AE,        // ECT(0):  (1, 0, 0)
                    _ => AE | CWR,  // CE:      (1, 1, 0)
                };
                (EcnMode::AccEcn, fb)
            }
        },
    }
}

/// The client's feedback mode after sending a SYN with flags `syn` and receiving a SYN-ACK with
/// flags `synack` (RFC 9768 Table 2; RFC 3168 s. 6.1.1).
pub fn client_mode(syn: u8, synack: u8) -> EcnMode {
    let (sent, got) = (syn & (AE | CWR | ECE), synack & (AE | CWR | ECE));
    if sent == AE | CWR | ECE {
        match got {
            0 => EcnMode::Off,
            g if g == ECE => EcnMode::Classic,
            g if g == AE | CWR | ECE => EcnMode::Off, // a broken server reflecting the SYN
            _ => EcnMode::AccEcn, // the top block, and the reserved (1, 0, 1) (s. 3.1.3)
        }
    } else if sent == CWR | ECE && got & (ECE | CWR) == ECE {
        EcnMode::Classic // RFC 3168 s. 6.1.1: ECE set, CWR clear
    } else {
        EcnMode::Off
    }
}

/// Both ends' modes when the handshake is not simulated (`[tcp] handshake = false`): what the
/// exchange of a Not-ECT SYN and its SYN-ACK would have given (client, server).
pub fn negotiate(client: EcnSupport, server: EcnSupport) -> (EcnMode, EcnMode) {
    let syn = syn_flags(client);
    let (server_mode, synack) = server_answer(server, syn, 0);
    (client_mode(syn, synack), server_mode)
}

/// The TCP flags that carry ACE value `ace` (AE the most significant bit, then CWR, then ECE:
/// RFC 9768 s. 3.2.2, Figure 3).
#[inline]
pub fn ace_flags(ace: u8) -> u8 {
    (if ace & 4 != 0 { AE } else { 0 })
        | (if ace & 2 != 0 { CWR } else { 0 })
        | (if ace & 1 != 0 { ECE } else { 0 })
}

/// The ACE value carried by TCP flags `flags` (the inverse of [`ace_flags`]).
#[inline]
pub fn ace_of(flags: u8) -> u8 {
    ((flags & AE != 0) as u8) << 2 | ((flags & CWR != 0) as u8) << 1 | (flags & ECE != 0) as u8
}

/// The data receiver's counters (RFC 9768 s. 3.2, s. 3.2.1) and its ACK triggers
/// (s. 3.2.2.5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcnReceiver {
    /// r.cep: CE packets received, from [`CEP_INIT`] (wrapping).
    pub cep: u32,
    /// r.e0b: payload bytes received ECT(0), from 1.
    pub e0b: u64,
    /// r.e1b: payload bytes received ECT(1), from 1.
    pub e1b: u64,
    /// r.ceb: payload bytes received CE, from 0.
    pub ceb: u64,
    /// The last packet received was CE.
    last_ce: bool,
    /// CE packets since the last ACK.
    ce_since_ack: u32,
}

impl Default for AccEcnReceiver {
    fn default() -> Self {
        AccEcnReceiver {
            cep: CEP_INIT,
            e0b: 1,
            e1b: 1,
            ceb: 0,
            last_ce: false,
            ce_since_ack: 0,
        }
    }
}

impl AccEcnReceiver {
    /// A data packet arrived with IP-ECN codepoint `ecn` (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE)
    /// and `payload` bytes: counts it, and says whether it must be acknowledged at once (a CE
    /// packet after a non-CE one, or the [`INCREMENT_TRIGGER`]-th CE mark since the last ACK).
    pub fn on_data(&mut self, ecn: u8, payload: u32) -> bool {
        let ce = ecn & 3 == 3;
        match ecn & 3 {
            1 => self.e1b += payload as u64,
            2 => self.e0b += payload as u64,
            3 => self.ceb += payload as u64,
            _ => {}
        }
        let change = ce && !self.last_ce;
        self.last_ce = ce;
        if ce {
            self.cep = self.cep.wrapping_add(1);
            self.ce_since_ack += 1;
        }
        change || self.ce_since_ack >= INCREMENT_TRIGGER
    }

    /// The ACE field of an ACK sent now (r.cep mod 8); the count since the last ACK restarts.
    pub fn on_ack_sent(&mut self) -> u8 {
        self.ce_since_ack = 0;
        self.ace()
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

    /// CE, else ECT(1).
    fn ecn(ce: bool) -> u8 {
        if ce {
            3
        } else {
            1
        }
    }

    /// RFC 9768 Table 2, row by row: (client, server, SYN flags, SYN-ACK flags, client's mode),
    /// with the server's mode; a Not-ECT SYN.
    #[test]
    fn negotiation_table() {
        use EcnSupport::{AccEcn, Ecn, Off};
        let rows = [
            (
                AccEcn,
                AccEcn,
                AE | CWR | ECE,
                CWR,
                EcnMode::AccEcn,
                EcnMode::AccEcn,
            ),
            (
                AccEcn,
                Ecn,
                AE | CWR | ECE,
                ECE,
                EcnMode::Classic,
                EcnMode::Classic,
            ),
            (AccEcn, Off, AE | CWR | ECE, 0, EcnMode::Off, EcnMode::Off),
            (
                Ecn,
                AccEcn,
                CWR | ECE,
                ECE,
                EcnMode::Classic,
                EcnMode::Classic,
            ),
            (Off, AccEcn, 0, 0, EcnMode::Off, EcnMode::Off),
            (Ecn, Ecn, CWR | ECE, ECE, EcnMode::Classic, EcnMode::Classic),
            (Ecn, Off, CWR | ECE, 0, EcnMode::Off, EcnMode::Off),
        ];
        for (c, sv, syn, synack, cm, sm) in rows {
            assert_eq!(syn_flags(c), syn, "{c:?} SYN");
            let (m, f) = server_answer(sv, syn, 0);
            assert_eq!((m, f), (sm, synack), "{c:?} -> {sv:?} SYN-ACK");
            assert_eq!(client_mode(syn, f), cm, "{c:?} -> {sv:?} client mode");
            assert_eq!(negotiate(c, sv), (cm, sm));
        }
        // The top block: the SYN-ACK feeds back the IP-ECN field of the SYN.
        let syn = syn_flags(AccEcn);
        for (ip, fb) in [(0, CWR), (1, CWR | ECE), (2, AE), (3, AE | CWR)] {
            assert_eq!(server_answer(AccEcn, syn, ip), (EcnMode::AccEcn, fb));
            assert_eq!(client_mode(syn, fb), EcnMode::AccEcn);
        }
        // A broken server reflecting (1, 1, 1): not ECN; the reserved (1, 0, 1): AccECN
        // (s. 3.1.3); a reserved SYN combination, e.g. (1, 0, 0): negotiated as AccECN.
        assert_eq!(client_mode(syn, AE | CWR | ECE), EcnMode::Off);
        assert_eq!(client_mode(syn, AE | ECE), EcnMode::AccEcn);
        assert_eq!(server_answer(AccEcn, AE, 0), (EcnMode::AccEcn, CWR));
        // An RFC 3168 client reading a SYN-ACK with ECE and CWR both set: not ECN (RFC 3168
        // s. 6.1.1 asks for ECE without CWR).
        assert_eq!(client_mode(CWR | ECE, CWR | ECE), EcnMode::Off);
    }

    #[test]
    fn ace_field_bits() {
        for v in 0..8u8 {
            assert_eq!(ace_of(ace_flags(v)), v);
        }
        assert_eq!(ace_flags(5), AE | ECE, "5 = 0b101: AE and ECE");
        assert_eq!(ace_flags(2), CWR);
    }

    /// Delayed ACKs with several CE marks (s. 3.2.2.5.1): a CE after a non-CE packet is ACKed
    /// at once (change-triggered); the second CE since the last ACK too (increment-triggered);
    /// a CE right after an ACKed CE is not (no change, one mark since the ACK).
    #[test]
    fn receiver_ack_triggers_and_byte_counters() {
        let mut r = AccEcnReceiver::default();
        assert!(!r.on_data(1, 1000), "ECT(1), no CE");
        assert!(r.on_data(3, 1000), "change-triggered");
        assert_eq!(r.on_ack_sent(), 6);
        assert!(!r.on_data(3, 1000), "CE after CE, one mark since the ACK");
        assert!(
            r.on_data(3, 1000),
            "second CE since the ACK: increment-triggered"
        );
        assert_eq!(r.on_ack_sent(), 0, "5 + 3 = 8: the field wraps to 0");
        assert!(!r.on_data(2, 500));
        assert_eq!((r.cep, r.e0b, r.e1b, r.ceb), (8, 501, 1001, 3000));
    }

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
            r.on_data(ecn(ce), 1448);
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
            r.on_data(ecn(k != 0), 1448);
        }
        assert_eq!(s.on_ack(r.ace(), 6, None, 1448), 5);
        assert_eq!(s.cep, r.cep);
        let before = s;
        let mut r2 = r;
        for k in 0..20 {
            r2.on_data(ecn(k % 2 == 0), 1448);
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
            r3.on_data(ecn(true), 1448);
        }
        let mut s5 = before;
        assert_eq!(s5.on_ack(r3.ace(), 8, None, 1448), 8);
    }
}
