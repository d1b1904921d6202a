//! The simulated packet: segment-level (no payload bytes), small and `Copy`.

use aqm::{Ecn, PacketMeta, Precedence, Time};

/// Data segment or acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A data segment; `seq` is its segment number.
    Data,
    /// An acknowledgement; `seq` is the next segment expected (cumulative).
    Ack,
    /// Address resolution (`[tcp] resolve`): `seq` 0 a request from the sender, 1 the
    /// receiver's reply (an ARP frame, RFC 826).
    Resolve,
}

/// ECN-capable transport (ECT, RFC 3168 s. 5).
pub const ECT: u8 = 1;
/// Congestion Experienced, set by a marking queue.
pub const CE: u8 = 2;
/// ECN-Echo, on ACKs (RFC 3168 s. 6.1.3).
pub const ECE: u8 = 4;
/// Congestion Window Reduced, on data (RFC 3168 s. 6.1.2).
pub const CWR: u8 = 8;
/// The segment is a retransmission.
pub const RETX: u8 = 16;
/// A connection request (on a header-only `Data` packet) or its answer (on an `Ack`): the
/// three-way handshake of RFC 9293 s. 3.5, when `[tcp] handshake = true`.
pub const SYN: u8 = 32;

/// The ECN-capable codepoint is ECT(1) rather than ECT(0) (RFC 9331's L4S identifier); only
/// meaningful with [`ECT`] set.
pub const ECT1: u8 = 64;

/// The AE (Accurate ECN) TCP flag, formerly NS (RFC 9768 s. 3.1.1): on a SYN it asks for AccECN
/// feedback; in AccECN mode it is the most significant bit of an ACK's ACE field
/// ([`crate::tcp::accecn`]).
pub const AE: u8 = 128;

/// A SACK block: segments [start, end) held out of order by the receiver (RFC 2018).
pub type SackBlock = (u32, u32);

/// One packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flow index.
    pub flow: u32,
    /// Data: segment number. Ack: next segment expected.
    pub seq: u32,
    /// Size on the wire, bytes.
    pub size: u32,
    /// Index of the link being traversed within the path.
    pub hop: u16,
    /// Data or ACK.
    pub kind: Kind,
    /// ECN and retransmission flags.
    pub flags: u8,
    /// Drop precedence from the edge marker.
    pub precedence: Precedence,
    /// Data: send time. Ack: the echoed send time of the segment that triggered it (RFC 7323).
    pub ts: Time,
    /// Ack: advertised receive window, segments.
    pub rwnd: u32,
    /// Ack: up to three SACK blocks, the most recent first; (0, 0) is unused.
    pub sack: [SackBlock; 3],
    /// When the packet joined the current queue.
    pub enq_time: Time,
}

/// The flags that carry codepoint `e` ([`ECT`], [`ECT1`], [`CE`]): the inverse of
/// [`Packet::ecn`].
#[inline]
pub fn ecn_flags(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0,
        Ecn::Ect0 => ECT,
        Ecn::Ect1 => ECT | ECT1,
        Ecn::Ce => ECT | CE,
    }
}

impl Packet {
    /// The ECN codepoint: CE once marked, else ECT(1) or ECT(0) as the sender set it, else
    /// Not-ECT (RFC 3168 s. 5, RFC 9331).
    #[inline]
    pub fn ecn(&self) -> Ecn {
        if self.flags & ECT == 0 {
            Ecn::NotEct
        } else if self.flags & CE != 0 {
            Ecn::Ce
        } else if self.flags & ECT1 != 0 {
            Ecn::Ect1
        } else {
            Ecn::Ect0
        }
    }

    /// What an AQM may see of this packet.
    #[inline]
    pub fn meta(&self) -> PacketMeta {
        PacketMeta {
            flow: self.flow,
            size_bytes: self.size,
            ecn: self.ecn(),
            precedence: self.precedence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every codepoint survives the round trip through the flags, and CE-marking an ECT(1) or
    /// ECT(0) packet reads back as CE (RFC 3168 s. 5: the two bits `11`).
    #[test]
    fn codepoints_round_trip_through_the_flags() {
        let base = Packet {
            flow: 0,
            seq: 0,
            size: 1500,
            hop: 0,
            kind: Kind::Data,
            flags: 0,
            precedence: Precedence::Out,
            ts: 0,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        };
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let p = Packet {
                flags: ecn_flags(e),
                ..base
            };
            assert_eq!(p.ecn(), e);
            assert_eq!(Ecn::from_bits(p.ecn().bits()), e);
        }
        for e in [Ecn::Ect0, Ecn::Ect1] {
            let p = Packet {
                flags: ecn_flags(e) | CE,
                ..base
            };
            assert_eq!(p.ecn(), Ecn::Ce);
        }
    }
}
