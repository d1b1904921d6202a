//! Active Queue Management algorithms for aqmlab: pure per-packet logic with no I/O and no simulator
//! types, so that the simulator, the real-packet forwarder and any outside Rust program can use them.
//!
//! Every algorithm implements [`Aqm`]. Its configuration is a plain struct with documented defaults
//! and a `validate()`; its evolving state and its counters are kept in separate structs (the habit of
//! Linux's `codel_params` / `codel_vars` / `codel_stats`). Algorithms are found by name in
//! [`registry`]; adding one is one new file and one registry line.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod anaqm;
pub mod apace;
pub mod ared;
pub mod avq;
pub mod blue;
pub mod cobalt;
pub mod codel;
pub mod dropfn;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod info;
pub mod laq;
pub mod lindrop;
pub mod modred;
pub mod paqm;
pub mod params;
pub mod pi;
pub mod pie;
pub mod red;
pub mod registry;
pub mod rem;
pub mod sred;
pub mod testing;

pub use params::{LinkContext, ParamError, ParamMap, ParamValue};
pub use registry::{build, find, AqmInfo, REGISTRY};

/// Simulated or wall-clock time in integer nanoseconds.
pub type Time = u64;

/// Nanoseconds in one second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// The random number generator every algorithm draws from. It is passed in by the caller, so a run
/// is reproducible from its seed. PCG (64-bit state, multiplicative) is small, fast and portable.
pub type AqmRng = rand_pcg::Pcg64Mcg;

/// Builds an [`AqmRng`] from a 64-bit seed.
pub fn rng_from_seed(seed: u64) -> AqmRng {
    use rand::SeedableRng;
    AqmRng::seed_from_u64(seed)
}

/// Drop precedence of a packet, set by an edge marker (RIO / ModRED): `In` is inside its profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precedence {
    /// Inside the flow's profile (low drop precedence).
    In,
    /// Outside the profile, or unmarked (high drop precedence).
    #[default]
    Out,
}

/// The ECN field of the IP header (RFC 3168 s. 5; ECT(1) as the L4S identifier, RFC 9331 s. 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Ecn {
    /// Not ECN-capable transport (`00`).
    #[default]
    NotEct,
    /// ECN-capable transport, classic (`10`, ECT(0)).
    Ect0,
    /// ECN-capable transport, L4S (`01`, ECT(1), RFC 9331).
    Ect1,
    /// Congestion Experienced (`11`), set by a marking queue.
    Ce,
}

impl Ecn {
    /// The codepoint of the two ECN bits of an IPv4 TOS / IPv6 traffic-class byte.
    #[inline]
    pub fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b10 => Ecn::Ect0,
            0b01 => Ecn::Ect1,
            _ => Ecn::Ce,
        }
    }

    /// The two ECN bits of this codepoint (RFC 3168 s. 5).
    #[inline]
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect0 => 0b10,
            Ecn::Ect1 => 0b01,
            Ecn::Ce => 0b11,
        }
    }

    /// The packet may be CE-marked instead of dropped: ECT(0), ECT(1) or already CE (a CE packet
    /// stays CE; Linux `INET_ECN_set_ce` refuses only Not-ECT).
    #[inline]
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }

    /// The L4S identifier: ECT(1) or CE (RFC 9331 s. 5.1: a dual queue classifies both into the
    /// L4S queue).
    #[inline]
    pub fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

/// What an algorithm may know about a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// Flow identifier (index of the flow in the run).
    pub flow: u32,
    /// Size on the wire, bytes.
    pub size_bytes: u32,
    /// The ECN codepoint on arrival.
    pub ecn: Ecn,
    /// Drop precedence set by an edge marker.
    pub precedence: Precedence,
}

impl PacketMeta {
    /// A plain packet of `size_bytes`, flow 0, not ECN-capable, precedence Out.
    pub fn of_size(size_bytes: u32) -> Self {
        PacketMeta {
            flow: 0,
            size_bytes,
            ecn: Ecn::NotEct,
            precedence: Precedence::Out,
        }
    }

    /// ECN-capable transport: ECT(0), ECT(1) or CE ([`Ecn::is_capable`]).
    #[inline]
    pub fn ecn_capable(&self) -> bool {
        self.ecn.is_capable()
    }
}

/// The state of the queue an algorithm guards, as seen at the moment of a decision.
///
/// Lengths count packets waiting for transmission, not the one being transmitted (as ns-2's and
/// Linux's qdisc backlogs do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QueueView {
    /// Packets waiting.
    pub len_pkts: u32,
    /// Bytes waiting.
    pub len_bytes: u64,
    /// `Some(t)` when the queue is empty and the link has been idle since `t`; `None` while busy.
    pub idle_since: Option<Time>,
}

/// An algorithm's decision on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let the packet in (or, at dequeue, send it).
    Admit,
    /// Drop the packet.
    Drop,
    /// Admit (or send) it with the ECN Congestion Experienced codepoint set (RFC 3168).
    Mark,
    /// Admit it and ask the router to clamp the flow's advertised window (ModRED).
    Throttle,
}

/// How long a router keeps rewriting a flow's ACK window after a [`Verdict::Throttle`] (ModRED,
/// seed 004 s. 3, which does not say; both readings are offered and compared in
/// docs/reproductions.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrottleHold {
    /// Every ACK of the flow crossing the router is clamped until a later data packet of the flow
    /// is admitted there without a throttle.
    UntilAdmit,
    /// One ACK of the flow is clamped per throttled data packet; the ACKs after it carry the
    /// receiver's own window again, which a sender adopts on the next ACK (RFC 9293 s. 3.10.7.4).
    OneAck,
}

/// The congestion signal for a packet chosen for early notification: an ECN mark when the packet is
/// ECN-capable and the algorithm's marking is on, otherwise a drop (RFC 3168 section 5).
#[inline]
pub fn congestion_signal(ecn_enabled: bool, pkt: &PacketMeta) -> Verdict {
    if ecn_enabled && pkt.ecn_capable() {
        Verdict::Mark
    } else {
        Verdict::Drop
    }
}

/// Counts a verdict's congestion signal in an algorithm's own statistics: a mark in `marks`, a
/// drop in `drops`, anything else (admit, throttle) in neither; returns the verdict unchanged.
/// The one place every AQM in this crate keeps its mark/drop tally (issue 21 item 1).
#[inline]
pub fn count_signal(v: Verdict, marks: &mut u64, drops: &mut u64) -> Verdict {
    match v {
        Verdict::Mark => *marks += 1,
        Verdict::Drop => *drops += 1,
        Verdict::Admit | Verdict::Throttle => {}
    }
    v
}

/// [`congestion_signal`] for a packet chosen for early notification, counted by
/// [`count_signal`]: the mark or drop the algorithm returns.
#[inline]
pub fn signal_counted(
    ecn_enabled: bool,
    pkt: &PacketMeta,
    marks: &mut u64,
    drops: &mut u64,
) -> Verdict {
    count_signal(congestion_signal(ecn_enabled, pkt), marks, drops)
}

/// One AQM algorithm instance guarding one queue.
///
/// The caller (simulator or forwarder) owns the queue; the algorithm sees it through [`QueueView`].
/// Call order per packet: `enqueue` on arrival (with the queue before the packet joins); if the
/// verdict admits it but the buffer is full, `on_overflow`; `dequeue` when the packet reaches the
/// head and is about to be sent (only when [`Aqm::wants_dequeue`] is true); `update` at the times
/// [`Aqm::next_update`] asks for.
pub trait Aqm: Send + std::fmt::Debug {
    /// The registry name of the algorithm.
    fn name(&self) -> &'static str;

    /// Decides on an arriving packet. `q` is the queue before the packet joins.
    fn enqueue(&mut self, pkt: &PacketMeta, q: &QueueView, now: Time, rng: &mut AqmRng) -> Verdict;

    /// The buffer refused a packet that `enqueue` admitted (tail drop on overflow).
    fn on_overflow(&mut self, _pkt: &PacketMeta, _q: &QueueView, _now: Time) {}

    /// True when [`Aqm::dequeue`] must be called for every packet leaving the queue. The caller may
    /// skip all per-dequeue work otherwise.
    fn wants_dequeue(&self) -> bool {
        false
    }

    /// The packet at the head is about to be sent after waiting `sojourn`; `q` is the queue after
    /// its removal. `Drop` drops it at the head (CoDel); `Mark` marks it.
    fn dequeue(
        &mut self,
        _pkt: &PacketMeta,
        _sojourn: Time,
        _q: &QueueView,
        _now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        Verdict::Admit
    }

    /// A flow-queueing scheduler found this AQM's queue empty when it looked for a packet to send
    /// (RFC 8289 s. 5.5: `dodequeue` returns no packet). Single queues never call it.
    fn on_empty(&mut self, _now: Time) {}

    /// A flow-queueing scheduler runs this AQM on one of its queues and reports, by
    /// [`Aqm::on_empty`], every time it finds that queue empty; called once, when the scheduler
    /// is built. An AQM that otherwise infers emptiness from the queue views (COBALT) leaves
    /// that to the scheduler. Single queues never call it.
    fn set_scheduled(&mut self) {}

    /// A flow-queueing scheduler pushed `n` packets of this AQM's queue out because the shared
    /// limit was exceeded (RFC 8290 s. 4.1, Linux `fq_codel_drop`). Single queues never call it.
    fn on_pushout(&mut self, _n: u32, _now: Time) {}

    /// The next time the algorithm wants [`Aqm::update`] called, or `None` for never.
    fn next_update(&self) -> Option<Time> {
        None
    }

    /// Periodic update (PI, REM, PIE, LaQ sample every interval).
    fn update(&mut self, _q: &QueueView, _now: Time) {}

    /// The current drop (or mark) probability, for time series; `None` when the algorithm has none.
    fn drop_prob(&self) -> Option<f64> {
        None
    }

    /// The current averaged queue estimate in packets (RED's `avg`), for time series.
    fn avg_queue(&self) -> Option<f64> {
        None
    }

    /// How long a throttle request lasts ([`Verdict::Throttle`] users only).
    fn throttle_hold(&self) -> ThrottleHold {
        ThrottleHold::UntilAdmit
    }

    /// The algorithm's own counters, by name.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

#[cfg(test)]
mod signal_tests {
    use super::*;

    /// RFC 3168 s. 5: a mark only for an ECN-capable packet with marking on; each signal counted
    /// once, in its own counter; admits and throttles in neither.
    #[test]
    fn signals_are_marks_only_for_ecn_capable_packets_and_each_is_counted_once() {
        let (mut marks, mut drops) = (0u64, 0u64);
        let plain = PacketMeta::of_size(1000);
        let ect = PacketMeta {
            ecn: Ecn::Ect0,
            ..plain
        };
        assert_eq!(
            signal_counted(true, &ect, &mut marks, &mut drops),
            Verdict::Mark
        );
        assert_eq!(
            signal_counted(true, &plain, &mut marks, &mut drops),
            Verdict::Drop
        );
        assert_eq!(
            signal_counted(false, &ect, &mut marks, &mut drops),
            Verdict::Drop
        );
        assert_eq!((marks, drops), (1, 2));
        for v in [Verdict::Admit, Verdict::Throttle] {
            assert_eq!(count_signal(v, &mut marks, &mut drops), v);
        }
        assert_eq!(
            count_signal(Verdict::Mark, &mut marks, &mut drops),
            Verdict::Mark
        );
        assert_eq!((marks, drops), (2, 2));
    }
}
