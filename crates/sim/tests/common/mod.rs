//! Helpers shared by the whole-simulator tests.

use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// Drops the data packets (size > 100 B) whose arrival numbers (1-based) are listed.
#[derive(Debug)]
pub struct DropArrivals {
    /// Arrival numbers of the data packets to drop.
    pub drop: Vec<u64>,
    /// Data packets seen so far.
    pub n: u64,
}

impl Aqm for DropArrivals {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn enqueue(&mut self, p: &PacketMeta, _: &QueueView, _: Time, _: &mut AqmRng) -> Verdict {
        if p.size_bytes <= 100 {
            return Verdict::Admit;
        }
        self.n += 1;
        if self.drop.contains(&self.n) {
            Verdict::Drop
        } else {
            Verdict::Admit
        }
    }
}
