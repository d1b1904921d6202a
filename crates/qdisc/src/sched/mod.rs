//! Queue disciplines that store the packets themselves (schedulers: flow queueing, dual queues),
//! behind one small trait, as Linux's `struct Qdisc_ops` (enqueue, dequeue, dump) puts every
//! qdisc behind one table. The simulator's `Link` and the forwarder's `Path` drive any of them the
//! same way with their own clocks; a single AQM-guarded FIFO does not go through here (it is
//! [`crate::fifo::Fifo`]).
//!
//! Adding a scheduler: one file in this directory implementing [`Scheduler`] and one line in
//! [`build`] (and its `QdiscInfo` in `aqm::registry::QDISCS` for `aqmlab list`).

pub mod cake;
pub mod dualpi2;
pub mod fq;
pub mod fq_queue;

use aqm::fq_codel::{FqPacket, QdiscInfo};
use aqm::params::{LinkContext, ParamError, ParamMap};
use aqm::{AqmRng, Time};

/// Why a scheduler dropped a packet it held or was offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedDrop {
    /// The shared limit was exceeded (counted as an overflow drop).
    Overlimit,
    /// A queue's AQM dropped it (counted as an AQM drop).
    Aqm,
}

/// A queue discipline that holds packets of the caller's type `P` (which it reads and CE-marks
/// through [`FqPacket`]). Times are ns on the caller's clock.
pub trait Scheduler<P>: Send + std::fmt::Debug {
    /// Registry name (`fq_codel`, ...).
    fn name(&self) -> &'static str;

    /// A packet arrives at `now`. Packets the scheduler drops (the arriving one, or others pushed
    /// out to make room) go to `on_drop`.
    fn enqueue(
        &mut self,
        pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    );

    /// The link is free at `now`: the next packet to send (CE-marked through
    /// [`FqPacket::set_ce`] if an AQM marked it), or `None` when nothing is held. Packets dropped
    /// at the head on the way go to `on_drop`.
    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P>;

    /// Packets held.
    fn len_pkts(&self) -> u32;

    /// Bytes held.
    fn len_bytes(&self) -> u64;

    /// True when nothing is held.
    fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }

    /// Calls `f` on every packet held, in no particular order (end-of-run checks).
    fn for_each_packet(&self, f: &mut dyn FnMut(&P));

    /// The counters by name (reported as the queue discipline's statistics).
    fn stats(&self) -> Vec<(&'static str, f64)>;

    /// The next time the scheduler wants [`Scheduler::update`] (periodic AQM updates), or `None`.
    fn next_update(&self) -> Option<Time> {
        None
    }

    /// The periodic update at `now`.
    fn update(&mut self, _now: Time, _rng: &mut AqmRng) {}

    /// A congestion-signal probability for the time series (e.g. a dual queue's base
    /// probability), or `None` when the scheduler has none.
    fn drop_prob(&self) -> Option<f64> {
        None
    }

    /// The (source, destination) hosts of each flow id, for schedulers with per-host fairness
    /// (CAKE) when the caller's packets carry no addresses (the simulator). Others ignore it.
    fn set_flow_hosts(&mut self, _hosts: &[(u32, u32)]) {}
}

/// The scheduler registered as `name` over packets of type `P`, built from user parameters
/// (`m`, already holding the defaults the caller derives from the link, e.g. `limit` from its
/// buffer); `None` when `name` is not a scheduler (it may be a single-queue AQM).
pub fn build<P: FqPacket + Send + std::fmt::Debug + 'static>(
    name: &str,
    m: &ParamMap,
    l: &LinkContext,
) -> Option<Result<Box<dyn Scheduler<P>>, ParamError>> {
    if let Some(b) = fq::build::<P>(name, m, l) {
        return Some(b);
    }
    match name {
        "dualpi2" => {
            Some(dualpi2::build_dualpi2::<P>(m, l).map(|q| Box::new(q) as Box<dyn Scheduler<P>>))
        }
        "cake" => Some(cake::build_cake::<P>(m, l).map(|q| Box::new(q) as Box<dyn Scheduler<P>>)),
        _ => None,
    }
}

/// The queue disciplines of this module, for `aqmlab list` (with those of
/// `aqm::registry::QDISCS` not repeated here).
pub static QDISCS: &[QdiscInfo] = &[
    aqm::fq_codel::FQ_CODEL_INFO,
    fq::FQ_INFO,
    fq::FQ_PIE_INFO,
    fq::FQ_COBALT_INFO,
];

/// Every registered queue discipline: [`QDISCS`], then those of `aqm::registry::QDISCS` it does
/// not name.
pub fn qdiscs() -> impl Iterator<Item = &'static QdiscInfo> {
    QDISCS.iter().chain(
        aqm::registry::QDISCS
            .iter()
            .filter(|q| !QDISCS.iter().any(|o| o.name == q.name)),
    )
}

/// A scheduler's parameters with the defaults taken from its link: the shared `limit` is the
/// link's buffer in packets unless given (a byte buffer leaves the scheduler's own default). The
/// simulator and the forwarder both build schedulers through this, so a scenario's queue is the
/// same size in both.
pub fn with_link_defaults(mut m: ParamMap, buffer: aqm::params::Buffer) -> ParamMap {
    if let aqm::params::Buffer::Packets(n) = buffer {
        m.entry("limit".into())
            .or_insert(aqm::ParamValue::Num(n as f64));
    }
    m
}

/// True when `name` is a registered scheduler.
pub fn is_scheduler(name: &str) -> bool {
    qdiscs().any(|q| q.name == name)
}
