//! The buffer check of a queue (packets or bytes), one rule for the simulator and the forwarder.

use aqm::params::Buffer;

/// Whether a packet of `size` bytes fits a queue holding `pkts` packets and `bytes` bytes:
/// fewer than `n` packets waiting, or at most `b` bytes with it (the packet on the wire is not
/// in the buffer).
#[inline]
pub fn fits(buffer: Buffer, pkts: u32, bytes: u64, size: u32) -> bool {
    match buffer {
        Buffer::Packets(n) => pkts < n,
        Buffer::Bytes(b) => bytes + size as u64 <= b,
    }
}

/// Whether a queue of `pkts` packets and `bytes` bytes exceeds the buffer (an invariant
/// violation after admission).
#[inline]
pub fn exceeded(buffer: Buffer, pkts: u32, bytes: u64) -> bool {
    match buffer {
        Buffer::Packets(n) => pkts > n,
        Buffer::Bytes(b) => bytes > b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_and_byte_buffers_admit_up_to_their_size() {
        assert!(fits(Buffer::Packets(3), 2, 0, 1500));
        assert!(!fits(Buffer::Packets(3), 3, 0, 1500));
        assert!(fits(Buffer::Bytes(3000), 1, 1500, 1500));
        assert!(!fits(Buffer::Bytes(3000), 1, 1501, 1500));
        assert!(!exceeded(Buffer::Packets(3), 3, 0));
        assert!(exceeded(Buffer::Packets(3), 4, 0));
        assert!(exceeded(Buffer::Bytes(3000), 2, 3001));
    }
}
