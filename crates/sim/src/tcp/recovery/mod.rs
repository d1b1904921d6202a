//! Loss recovery, apart from congestion control: what to retransmit and how fast during
//! recovery. NewReno (RFC 6582) lives in [`newreno`]; SACK-based recovery (RFC 6675) in [`sack`]
//! with Proportional Rate Reduction (RFC 6937) in [`prr`]; limited transmit (RFC 3042) in
//! [`limited`].

pub mod limited;
pub mod newreno;
pub mod prr;
pub mod sack;

pub use prr::Prr;
pub use sack::Scoreboard;

/// RFC 5681 / RFC 6675's DupThresh.
pub const DUP_THRESH: u32 = 3;
