//! aqmlab's discrete-event packet simulator: integer-nanosecond clock, deterministic event order,
//! unidirectional links with AQM-guarded queues, segment-level TCP (Reno, NewReno), static paths,
//! metrics and end-of-run invariant checks. Topologies are built by the caller (the Python layer
//! writes a [`config::Config`]); see `docs/scenarios.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod event;
/// The event log (`[output] events`), written by the queue-discipline layer for both engines.
pub use qdisc::events;
pub mod link;
pub mod network;
pub mod packet;
pub mod pcap;
pub use qdisc::rate;
pub mod results;
pub mod sparse_hist;
pub mod tcp;
pub mod throttle;
pub mod topo;
pub mod traffic;

/// The delay histogram and the time series, kept by the queue-discipline layer.
pub use qdisc::{hist, series};

pub use config::Config;
pub use network::{Sim, SimError};
pub use results::Results;

/// Parses a JSON configuration, runs it to the end and returns its results.
pub fn run_json(json: &str) -> Result<Results, SimError> {
    let cfg: Config =
        serde_json::from_str(json).map_err(|e| SimError::Config(format!("configuration: {e}")))?;
    Sim::new(&cfg)?.run()
}
