//! The run: builds links and flows from a [`Config`](crate::config::Config), moves packets
//! through them in event order, and checks the invariants at the end.
//!
//! Events are needed only where order matters. A link whose packets all come from one upstream
//! (one host, or one link) and whose AQM needs no timer is *chained*: it is processed the moment
//! the upstream delivers, even ahead of the clock, because its arrivals are in time order anyway.
//! In a dumbbell this leaves four events per data packet (bottleneck arrival, receiver, reverse
//! bottleneck, sender) however many access links there are.
//!
//! The module is split by job: [`error`] (the error type), [`flow`] (flows and their builder),
//! [`validate`] (run-wide and path checks), [`links`] (link and AQM builders), [`build`] (the run
//! assembled from the configuration), [`run`] (the event loop) and [`finish`] (end-of-run checks).

pub mod build;
pub mod error;
pub mod finish;
pub mod flow;
pub mod links;
pub mod run;
pub mod validate;

pub use error::SimError;
pub use flow::{Flow, TcpEnds, Transport, UdpStats};
pub use links::{fq_params, AqmFactory};

use crate::event::EventQueue;
use crate::link::Link;
use crate::packet::Packet;
use aqm::Time;

/// A simulation run.
pub struct Sim {
    /// Node names.
    pub node_names: Vec<String>,
    /// Links.
    pub links: Vec<Link>,
    /// Flows.
    pub flows: Vec<Flow>,
    ev: EventQueue,
    /// Current time.
    pub now: Time,
    /// End of the run.
    pub end: Time,
    /// Start of the measurement window.
    pub warmup: Time,
    /// Seed.
    pub seed: u64,
    out: Vec<Packet>,
    /// Packets handed to the first link by hosts.
    pub injected: u64,
    /// Packets handed to their destination host.
    pub delivered: u64,
    /// Packets dropped on any link.
    pub dropped: u64,
    /// Packets whose next arrival would fall after the end.
    pub beyond: u64,
    /// Events processed.
    pub events: u64,
    /// Invariant violations found while running.
    pub violations: Vec<String>,
}
