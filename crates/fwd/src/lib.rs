//! aqmlab's real-packet forwarder: the same `crates/aqm` algorithms applied to real frames.
//!
//! [`frame`] parses and rewrites headers (pure, safe code, fuzzed); [`path`] is one direction
//! (delay lines, AQM-guarded queue, departure clock, the simulator's statistics); [`engine`]
//! joins both directions and ModRED's [`throttle`]; [`ring`] moves frames between two
//! interfaces with AF_PACKET TPACKET_V3 rings (the only unsafe code: mmap and raw sockets);
//! [`config`] reads the JSON configuration `aqmlab testbed` writes.
#![warn(missing_docs)]

pub mod config;
pub mod engine;
pub mod frame;
pub mod path;
pub mod ring;
pub mod throttle;
