//! aqmlab's real-packet forwarder: the same `crates/aqm` algorithms applied to real frames.
//!
//! [`frame`] parses and rewrites headers (pure, safe code, fuzzed). The other modules move frames
//! between two interfaces with AF_PACKET TPACKET_V3 rings (the only unsafe code: mmap and raw
//! sockets), hold them in delay lines and a rate-limited bottleneck queue, and report the
//! simulator's statistics.
#![warn(missing_docs)]

pub mod frame;
