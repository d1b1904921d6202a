//! A packet held by a queue discipline together with its place in the measurement window.

use crate::window::Ticket;
use aqm::fq_codel::FqPacket;

/// A caller's packet `P` with the [`Ticket`] of its arrival and whether a queue discipline
/// CE-marked it while it was held (so marks are counted by arrival, as drops are).
#[derive(Clone, Copy, Debug)]
pub struct Tagged<P> {
    /// The packet.
    pub pkt: P,
    /// Its arrival in the measurement window.
    pub ticket: Ticket,
    /// Marked CE while held.
    pub marked: bool,
}

impl<P> Tagged<P> {
    /// `pkt`, arrived with `ticket`, not marked.
    #[inline]
    pub fn new(pkt: P, ticket: Ticket) -> Self {
        Tagged {
            pkt,
            ticket,
            marked: false,
        }
    }
}

impl<P: FqPacket> FqPacket for Tagged<P> {
    #[inline]
    fn flow_id(&self) -> u32 {
        self.pkt.flow_id()
    }
    #[inline]
    fn size_bytes(&self) -> u32 {
        self.pkt.size_bytes()
    }
    #[inline]
    fn ecn(&self) -> aqm::Ecn {
        self.pkt.ecn()
    }
    #[inline]
    fn set_ce(&mut self) {
        self.marked = true;
        self.pkt.set_ce();
    }
    #[inline]
    fn hosts(&self) -> Option<(u32, u32)> {
        self.pkt.hosts()
    }
    #[inline]
    fn reverse(&self) -> bool {
        self.pkt.reverse()
    }
}
