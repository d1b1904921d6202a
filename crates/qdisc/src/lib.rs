//! The queue-discipline layer: what an AQM-guarded queue does around the AQM, written once for
//! the simulator (`crates/sim`) and the forwarder (`crates/fwd`).
//!
//! The AQM-guarded FIFO itself is [`fifo::Fifo`] (storage, AQM calls, head-drop loop, length and
//! its window integrals); queue disciplines that store the packets themselves are in [`sched`].
//!
//! Clock-agnostic (times are ns on whatever clock the caller keeps) and free of simulator and
//! socket types: the caller's packet type is reached through small traits.

pub mod admit;
pub mod buffer;
pub mod config;
pub mod events;
pub mod fifo;
pub mod hist;
pub mod rate;
pub mod sample;
pub mod sched;
pub mod series;
pub mod stats;
pub mod summary;
pub mod tagged;
pub mod verdict;
pub mod window;

pub use stats::WindowStats;
pub use tagged::Tagged;
pub use window::{Ticket, WindowBook};
