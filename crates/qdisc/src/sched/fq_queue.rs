//! The AQM of one `fq` flow queue, stored in the queue's own record ([`super::fq`]).
//!
//! [`QueueAqm`] is [`aqm::Aqm`]'s call order with the state a scheduler's queues share passed in
//! (`Shared`), so that a queue keeps only what changes per queue, as Linux's fq_codel keeps one
//! `codel_params` for the qdisc and a `codel_vars` in each `fq_codel_flow`
//! (net/sched/sch_fq_codel.c). Two kinds:
//! - `Box<dyn Aqm>`: any AQM, the registry's or one built elsewhere (Python), a private instance
//!   per queue, nothing shared;
//! - [`CodelQueue`]: CoDel's per-queue state and counters (the same functions as
//!   [`aqm::codel::Codel`], `aqm::codel::codel_*`), its parameters held once by the scheduler:
//!   88 bytes inline in the queue's record instead of a boxed 136-byte `Codel`.

use aqm::codel::{
    codel_dequeue_counted, codel_enqueue_counted, codel_on_empty, codel_on_pushout,
    codel_stats_list, CodelParams, CodelStats, CodelVars,
};
use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// The AQM of one flow queue, driven as [`Aqm`] is, with `Shared` (what all queues of the
/// scheduler have in common) passed to every call.
pub trait QueueAqm: Send + std::fmt::Debug {
    /// What the queues share (the parameters); `()` for a private instance.
    type Shared: Send + std::fmt::Debug;

    /// [`Aqm::enqueue`].
    fn enqueue(
        &mut self,
        sh: &Self::Shared,
        pkt: &PacketMeta,
        q: &QueueView,
        now: Time,
        rng: &mut AqmRng,
    ) -> Verdict;

    /// [`Aqm::on_overflow`].
    fn on_overflow(&mut self, sh: &Self::Shared, pkt: &PacketMeta, q: &QueueView, now: Time);

    /// [`Aqm::wants_dequeue`].
    fn wants_dequeue(&self, sh: &Self::Shared) -> bool;

    /// [`Aqm::dequeue`].
    #[allow(clippy::too_many_arguments)]
    fn dequeue(
        &mut self,
        sh: &Self::Shared,
        pkt: &PacketMeta,
        sojourn: Time,
        q: &QueueView,
        now: Time,
        rng: &mut AqmRng,
    ) -> Verdict;

    /// [`Aqm::on_empty`].
    fn on_empty(&mut self, sh: &Self::Shared, now: Time);

    /// [`Aqm::on_pushout`].
    fn on_pushout(&mut self, sh: &Self::Shared, n: u32, now: Time);

    /// [`Aqm::next_update`].
    fn next_update(&self, sh: &Self::Shared) -> Option<Time>;

    /// [`Aqm::update`].
    fn update(&mut self, sh: &Self::Shared, q: &QueueView, now: Time);

    /// [`Aqm::stats`].
    fn stats(&self, sh: &Self::Shared) -> Vec<(&'static str, f64)>;

    /// Where the state lives when it is not in the queue's record (a boxed AQM), for a
    /// prefetch hint; `None` when it is inline.
    fn state_addr(&self) -> Option<*const u8>;
}

impl QueueAqm for Box<dyn Aqm> {
    type Shared = ();

    #[inline]
    fn enqueue(
        &mut self,
        _: &(),
        pkt: &PacketMeta,
        q: &QueueView,
        now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        Aqm::enqueue(self.as_mut(), pkt, q, now, rng)
    }

    #[inline]
    fn on_overflow(&mut self, _: &(), pkt: &PacketMeta, q: &QueueView, now: Time) {
        Aqm::on_overflow(self.as_mut(), pkt, q, now);
    }

    #[inline]
    fn wants_dequeue(&self, _: &()) -> bool {
        Aqm::wants_dequeue(self.as_ref())
    }

    #[inline]
    fn dequeue(
        &mut self,
        _: &(),
        pkt: &PacketMeta,
        sojourn: Time,
        q: &QueueView,
        now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        Aqm::dequeue(self.as_mut(), pkt, sojourn, q, now, rng)
    }

    #[inline]
    fn on_empty(&mut self, _: &(), now: Time) {
        Aqm::on_empty(self.as_mut(), now);
    }

    #[inline]
    fn on_pushout(&mut self, _: &(), n: u32, now: Time) {
        Aqm::on_pushout(self.as_mut(), n, now);
    }

    #[inline]
    fn next_update(&self, _: &()) -> Option<Time> {
        Aqm::next_update(self.as_ref())
    }

    #[inline]
    fn update(&mut self, _: &(), q: &QueueView, now: Time) {
        Aqm::update(self.as_mut(), q, now);
    }

    fn stats(&self, _: &()) -> Vec<(&'static str, f64)> {
        Aqm::stats(self.as_ref())
    }

    #[inline]
    fn state_addr(&self) -> Option<*const u8> {
        Some(&**self as *const dyn Aqm as *const u8)
    }
}

/// CoDel on one flow queue: [`aqm::codel::Codel`] without its private copy of the parameters
/// (the scheduler's [`CodelParams`] are the `Shared`), by the same functions, so its verdicts
/// and counters are `Codel`'s.
/// The counters first (`repr(C)`): their `maxpacket`, written on every arrival, then shares the
/// first cache line of the queue's record with the queue's own fields (`super::fq`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct CodelQueue {
    /// Counters.
    pub stats: CodelStats,
    /// Evolving state (Linux `codel_vars`, one per flow in sch_fq_codel.c).
    pub vars: CodelVars,
}

impl QueueAqm for CodelQueue {
    type Shared = CodelParams;

    #[inline]
    fn enqueue(
        &mut self,
        _: &CodelParams,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        codel_enqueue_counted(&mut self.stats, pkt)
    }

    #[inline]
    fn on_overflow(&mut self, _: &CodelParams, _: &PacketMeta, _: &QueueView, _: Time) {}

    #[inline]
    fn wants_dequeue(&self, _: &CodelParams) -> bool {
        true
    }

    /// Out of line on purpose: inlined into `Fq`'s dequeue, it made that function's packet
    /// moves slower (5-14 ns per packet in benches/link_fq.rs, docs/benchmarks.md).
    #[inline(never)]
    fn dequeue(
        &mut self,
        p: &CodelParams,
        pkt: &PacketMeta,
        sojourn: Time,
        q: &QueueView,
        now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        codel_dequeue_counted(
            p,
            &mut self.vars,
            &mut self.stats,
            pkt,
            sojourn,
            q.len_bytes,
            now,
        )
    }

    #[inline]
    fn on_empty(&mut self, _: &CodelParams, _now: Time) {
        codel_on_empty(&mut self.vars);
    }

    #[inline]
    fn on_pushout(&mut self, _: &CodelParams, n: u32, _now: Time) {
        codel_on_pushout(&mut self.vars, n);
    }

    #[inline]
    fn next_update(&self, _: &CodelParams) -> Option<Time> {
        None
    }

    #[inline]
    fn update(&mut self, _: &CodelParams, _: &QueueView, _: Time) {}

    fn stats(&self, p: &CodelParams) -> Vec<(&'static str, f64)> {
        codel_stats_list(p, &self.vars, &self.stats)
    }

    #[inline]
    fn state_addr(&self) -> Option<*const u8> {
        None
    }
}
