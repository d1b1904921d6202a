//! FQ-CoDel: Flow Queue CoDel (T. Hoeiland-Joergensen, P. McKenney, D. Taht, J. Gettys,
//! E. Dumazet, RFC 8290, 2018): flows hashed into queues served by deficit round robin with
//! new-flow priority (s. 4.2), CoDel (RFC 8289, [`crate::codel`]) on each queue, and a shared
//! packet limit enforced by head drops from the fattest queue (s. 4.1).
//!
//! Unlike the other algorithms it is a queue discipline: it stores the packets, so it does not
//! implement [`crate::Aqm`]. [`FqCodel`] is generic over the caller's packet type ([`FqPacket`]);
//! its per-packet path allocates nothing once its slot store has grown to the packet limit.

use crate::codel::{codel_dequeue, codel_on_empty, CodelParams, CodelVars};
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{Time, Verdict};
use std::collections::VecDeque;

/// FQ-CoDel's parameters.
#[rustfmt::skip]
pub const FQ_CODEL_PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.005), help: "CoDel target of every queue, s (RFC 8290 s. 5.2.2: 5 ms)" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.1), help: "CoDel interval of every queue, s (RFC 8290 s. 5.2.1: 100 ms)" },
    ParamSpec { name: "mtu", kind: K::Size, default: D::Num(1500.0), help: "CoDel maxpacket, bytes: no CoDel drop while a queue holds at most this much (RFC 8289 s. 5.5)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(true), help: "CoDel marks ECN-capable packets instead of dropping them (RFC 8290 s. 5.2.6: on by default)" },
    ParamSpec { name: "limit", kind: K::Int, default: D::Num(10240.0), help: "packets held in all queues together (RFC 8290 s. 5.2.3: 10240)" },
    ParamSpec { name: "flows", kind: K::Int, default: D::Num(1024.0), help: "number of queues flows are hashed into (RFC 8290 s. 5.2.5: 1024)" },
    ParamSpec { name: "quantum", kind: K::Size, default: D::Num(1514.0), help: "bytes a queue may send per round, bytes (RFC 8290 s. 5.2.4: 1514)" },
    ParamSpec { name: "drop_batch", kind: K::Int, default: D::Num(64.0), help: "most packets dropped from the fattest queue at once on overflow (RFC 8290 s. 4.1, Linux: 64)" },
    ParamSpec { name: "mtu_per_flow", kind: K::Bool, default: D::Bool(false), help: "CoDel's no-drop-below-one-mtu test reads the flow's own queue (true, as ns-3's FqCoDelQueueDisc) instead of the whole qdisc's backlog (false: Linux sch_fq_codel.c)" },
    ParamSpec { name: "hash_seed", kind: K::Int, default: D::Num(0.0), help: "perturbation of the flow hash (Linux's perturbation): which flows share a queue" },
    ParamSpec { name: "ce_threshold", kind: K::Duration, default: D::Auto, help: "CE-mark ECN-capable packets sent after waiting longer than this, s (Linux sch_fq_codel.c ce_threshold, L4S shallow marking); default: off" },
    ParamSpec { name: "ce_threshold_selector", kind: K::Int, default: D::Num(0.0), help: "ce_threshold only for packets whose TOS byte AND ce_threshold_mask equals this (1 with mask 1: ECT(1) and CE); the TOS byte carries the ECN bits only" },
    ParamSpec { name: "ce_threshold_mask", kind: K::Int, default: D::Num(0.0), help: "mask of the TOS byte for ce_threshold_selector; 0: every ECN-capable packet" },
];

/// What the registry knows of a queue discipline (the counterpart of [`crate::AqmInfo`] for
/// algorithms that store packets).
#[derive(Clone, Copy, Debug)]
pub struct QdiscInfo {
    /// Name used in scenario files and on the command line.
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Its parameters with their defaults.
    pub params: &'static [ParamSpec],
}

/// Registry entry for FQ-CoDel; build an instance with [`build_fq_codel`].
pub const FQ_CODEL_INFO: QdiscInfo = QdiscInfo {
    name: "fq_codel",
    summary:
        "Flow Queue CoDel: hashed per-flow queues, DRR with new-flow priority, CoDel per queue",
    source: "RFC 8290 (Hoeiland-Joergensen et al. 2018), s. 4.1, 4.2; CoDel: RFC 8289",
    params: FQ_CODEL_PARAMS,
};

/// What FQ-CoDel needs to know of a packet.
pub trait FqPacket {
    /// Flow identifier (hashed to a queue).
    fn flow_id(&self) -> u32;
    /// Size on the wire, bytes.
    fn size_bytes(&self) -> u32;
    /// The packet's ECN codepoint (Not-ECT unless the caller's packet carries one).
    fn ecn(&self) -> crate::Ecn {
        crate::Ecn::NotEct
    }
    /// ECN-capable transport: ECT(0), ECT(1) or CE ([`crate::Ecn::is_capable`]).
    fn ecn_capable(&self) -> bool {
        self.ecn().is_capable()
    }
    /// Sets the CE codepoint (called when CoDel marks instead of dropping).
    fn set_ce(&mut self) {}
}

/// Why FQ-CoDel dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqDrop {
    /// The shared limit was exceeded: head drop from the fattest queue (RFC 8290 s. 4.1).
    Overlimit,
    /// CoDel dropped it at the head of its queue (RFC 8289 s. 5.5).
    Codel,
}

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    /// CoDel's parameters, shared by every queue.
    pub codel: CodelParams,
    /// Packet limit over all queues.
    pub limit: u32,
    /// Number of queues.
    pub flows: u32,
    /// DRR quantum, bytes.
    pub quantum: u32,
    /// Most packets dropped at once on overflow.
    pub drop_batch: u32,
    /// Hash perturbation.
    pub hash_seed: u64,
    /// CoDel's "at most one MTU queued: no drop" test (RFC 8289 s. 5.5, `maxpacket`) on the
    /// flow's own bytes instead of the whole qdisc's backlog. `false` (the default) is the deployed
    /// behaviour: Linux `net/sched/sch_fq_codel.c` passes `&sch->qstats.backlog` (every queue's
    /// bytes, after the head's removal) to `codel_dequeue`. `true` is ns-3.44's
    /// `FqCoDelQueueDisc`, whose per-flow `CoDelQueueDisc::OkToDrop` tests its own queue's bytes.
    /// RFC 8290 s. 5 runs CoDel per queue without saying which backlog the test reads.
    pub mtu_per_flow: bool,
}

impl Default for FqCodelParams {
    /// RFC 8290 s. 5.2 defaults.
    fn default() -> Self {
        FqCodelParams {
            codel: CodelParams {
                ecn: true,
                ..CodelParams::default()
            },
            limit: 10240,
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
            hash_seed: 0,
            mtu_per_flow: false,
        }
    }
}

impl FqCodelParams {
    /// Reads and validates parameters.
    pub fn from_map(m: &ParamMap, _l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(FQ_CODEL_PARAMS, m)?;
        let codel = CodelParams::from_values(
            p.num("target")?,
            p.num("interval")?,
            p.num("mtu")?,
            p.bool("ecn"),
        )?;
        let limit = p.num("limit")?;
        let flows = p.num("flows")?;
        let quantum = p.num("quantum")?;
        let drop_batch = p.num("drop_batch")?;
        let hash_seed = p.num("hash_seed")?;
        check_range("limit", limit, 1.0, false, 2_147_483_647.0, false)?;
        check_range("flows", flows, 1.0, false, 65536.0, false)?;
        check_range("quantum", quantum, 1.0, false, 2_147_483_647.0, false)?;
        check_range("drop_batch", drop_batch, 1.0, false, 65536.0, false)?;
        check_range(
            "hash_seed",
            hash_seed,
            0.0,
            false,
            9_007_199_254_740_992.0,
            false,
        )?;
        let r = FqCodelParams {
            codel,
            limit: limit as u32,
            flows: flows as u32,
            quantum: quantum.round() as u32,
            drop_batch: drop_batch as u32,
            hash_seed: hash_seed as u64,
            mtu_per_flow: p.bool("mtu_per_flow"),
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.codel.validate()?;
        check_range(
            "limit",
            self.limit as f64,
            1.0,
            false,
            2_147_483_647.0,
            false,
        )?;
        check_range("flows", self.flows as f64, 1.0, false, 65536.0, false)?;
        check_range(
            "quantum",
            self.quantum as f64,
            1.0,
            false,
            2_147_483_647.0,
            false,
        )?;
        check_range(
            "drop_batch",
            self.drop_batch as f64,
            1.0,
            false,
            65536.0,
            false,
        )?;
        Ok(())
    }
}

/// Builds an FQ-CoDel instance for packets of type `P` from user parameters.
pub fn build_fq_codel<P: FqPacket>(
    m: &ParamMap,
    l: &LinkContext,
) -> Result<FqCodel<P>, ParamError> {
    Ok(FqCodel::new(FqCodelParams::from_map(m, l)?))
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FqCodelStats {
    /// Packets accepted by `enqueue` (before any overlimit drop).
    pub enqueued: u64,
    /// Packets handed out by `dequeue`.
    pub dequeued: u64,
    /// Packets dropped by CoDel.
    pub codel_drops: u64,
    /// Packets dropped because the limit was exceeded.
    pub overlimit_drops: u64,
    /// Packets CE-marked by CoDel.
    pub ecn_marks: u64,
    /// Times a queue joined the new-flow list.
    pub new_flow_count: u64,
}

/// The queue an arriving packet of `flow` joins: a 64-bit mix of the flow id and the seed (the
/// splitmix64 finaliser), mapped onto `0..flows` by a multiply-shift (RFC 8290 s. 4.1.1 leaves
/// the hash to the implementation; flows may share a queue, s. 5.3).
#[inline]
pub fn flow_hash(flow: u32, seed: u64, flows: u32) -> usize {
    let mut x = (flow as u64) ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (((x >> 32) * flows as u64) >> 32) as usize
}

const NIL: u32 = u32::MAX;

/// Which scheduling list a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One stored packet; `next` links the queue's packets in arrival order (or free slots).
#[derive(Debug)]
struct Slot<P> {
    pkt: Option<P>,
    enqueued_at: Time,
    next: u32,
}

/// One flow queue: a FIFO of slots, its DRR deficit and its CoDel state.
#[derive(Clone, Debug)]
struct FlowQueue {
    head: u32,
    tail: u32,
    pkts: u32,
    bytes: u64,
    deficit: i64,
    list: List,
    vars: CodelVars,
}

impl FlowQueue {
    fn new() -> Self {
        FlowQueue {
            head: NIL,
            tail: NIL,
            pkts: 0,
            bytes: 0,
            deficit: 0,
            list: List::None,
            vars: CodelVars::default(),
        }
    }
}

/// The FQ-CoDel queue discipline over packets of type `P`.
#[derive(Debug)]
pub struct FqCodel<P> {
    params: FqCodelParams,
    flows: Vec<FlowQueue>,
    slots: Vec<Slot<P>>,
    free: u32,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    len_pkts: u32,
    len_bytes: u64,
    stats: FqCodelStats,
}

impl<P: FqPacket> FqCodel<P> {
    /// An empty FQ-CoDel with validated parameters.
    pub fn new(params: FqCodelParams) -> Self {
        let n = params.flows as usize;
        FqCodel {
            flows: vec![FlowQueue::new(); n],
            slots: Vec::with_capacity((params.limit as usize + 1).min(1 << 16)),
            free: NIL,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            len_pkts: 0,
            len_bytes: 0,
            stats: FqCodelStats::default(),
            params,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &FqCodelParams {
        &self.params
    }

    /// Every packet held, in no particular order.
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        self.slots.iter().filter_map(|s| s.pkt.as_ref())
    }

    /// Packets held.
    pub fn len_pkts(&self) -> u32 {
        self.len_pkts
    }

    /// Bytes held.
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// True when no packet is held.
    pub fn is_empty(&self) -> bool {
        self.len_pkts == 0
    }

    /// The counters.
    pub fn stats(&self) -> &FqCodelStats {
        &self.stats
    }

    /// The counters by name, as [`crate::Aqm::stats`] gives them.
    pub fn stats_vec(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("enqueued", s.enqueued as f64),
            ("dequeued", s.dequeued as f64),
            ("codel_drops", s.codel_drops as f64),
            ("overlimit_drops", s.overlimit_drops as f64),
            ("ecn_marks", s.ecn_marks as f64),
            ("new_flow_count", s.new_flow_count as f64),
            ("new_flows_len", self.new_flows.len() as f64),
            ("old_flows_len", self.old_flows.len() as f64),
        ]
    }

    /// The queue index packets of `flow` go to.
    pub fn queue_of(&self, flow: u32) -> usize {
        flow_hash(flow, self.params.hash_seed, self.params.flows)
    }

    /// Packets and bytes held by queue `idx`.
    pub fn queue_len(&self, idx: usize) -> (u32, u64) {
        let f = &self.flows[idx];
        (f.pkts, f.bytes)
    }

    /// Queues on the new-flow list and on the old-flow list.
    pub fn list_lens(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }

    fn push(&mut self, idx: usize, pkt: P, now: Time) {
        let slot = Slot {
            pkt: Some(pkt),
            enqueued_at: now,
            next: NIL,
        };
        let s = if self.free != NIL {
            let s = self.free;
            self.free = self.slots[s as usize].next;
            self.slots[s as usize] = slot;
            s
        } else {
            self.slots.push(slot);
            (self.slots.len() - 1) as u32
        };
        let f = &mut self.flows[idx];
        if f.tail == NIL {
            f.head = s;
        } else {
            self.slots[f.tail as usize].next = s;
        }
        f.tail = s;
    }

    /// Removes the head packet of queue `idx`, keeping the counts right; returns it with its
    /// arrival time.
    fn pop(&mut self, idx: usize) -> Option<(P, Time)> {
        let f = &mut self.flows[idx];
        if f.head == NIL {
            return None;
        }
        let s = f.head;
        let slot = &mut self.slots[s as usize];
        let pkt = slot.pkt.take().expect("a linked slot holds a packet");
        let at = slot.enqueued_at;
        f.head = slot.next;
        if f.head == NIL {
            f.tail = NIL;
        }
        slot.next = self.free;
        self.free = s;
        let size = pkt.size_bytes() as u64;
        f.pkts -= 1;
        f.bytes -= size;
        self.len_pkts -= 1;
        self.len_bytes -= size;
        Some((pkt, at))
    }

    /// A packet arrives at `now` (RFC 8290 s. 4.1): it joins its flow's queue, which joins the
    /// new-flow list with a full quantum if it was on no list; then, above the limit, up to
    /// `drop_batch` packets (or half its bytes) are dropped from the head of the fattest queue.
    /// Each dropped packet goes to `on_drop`; returns how many were dropped.
    pub fn enqueue(&mut self, pkt: P, now: Time, mut on_drop: impl FnMut(P, FqDrop)) -> usize {
        let idx = self.queue_of(pkt.flow_id());
        let size = pkt.size_bytes() as u64;
        self.push(idx, pkt, now);
        let f = &mut self.flows[idx];
        f.pkts += 1;
        f.bytes += size;
        self.len_pkts += 1;
        self.len_bytes += size;
        self.stats.enqueued += 1;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.params.quantum as i64;
            self.new_flows.push_back(idx as u32);
            self.stats.new_flow_count += 1;
        }
        if self.len_pkts > self.params.limit {
            self.drop_from_fattest(&mut on_drop)
        } else {
            0
        }
    }

    /// Overflow (RFC 8290 s. 4.1; batch as Linux `fq_codel_drop`): head drops from the queue with
    /// the most bytes until `drop_batch` packets or half its bytes are gone. Its CoDel count grows
    /// by the packets dropped, so CoDel signals harder too (Linux).
    fn drop_from_fattest(&mut self, on_drop: &mut impl FnMut(P, FqDrop)) -> usize {
        // Most bytes; ties (zero-size packets) by most packets, so a non-empty queue is found.
        let mut idx = 0;
        let mut max = (0, 0);
        for (i, f) in self.flows.iter().enumerate() {
            if (f.bytes, f.pkts) > max {
                max = (f.bytes, f.pkts);
                idx = i;
            }
        }
        let threshold = max.0 / 2;
        let mut dropped_bytes = 0;
        let mut n = 0usize;
        while n < self.params.drop_batch as usize && (n == 0 || dropped_bytes < threshold) {
            let Some((pkt, _)) = self.pop(idx) else { break };
            dropped_bytes += pkt.size_bytes() as u64;
            n += 1;
            on_drop(pkt, FqDrop::Overlimit);
        }
        let f = &mut self.flows[idx];
        f.vars.count = f.vars.count.saturating_add(n as u32);
        self.stats.overlimit_drops += n as u64;
        n
    }

    /// The link asks for a packet at `now` (RFC 8290 s. 4.2): the first queue of the new-flow
    /// list, else of the old-flow list; a queue whose deficit is spent gets a quantum more and
    /// goes to the end of the old list; CoDel runs on the chosen queue's head (its drops go to
    /// `on_drop`); an emptied new queue moves to the old list (unless that is empty), an emptied
    /// old queue leaves the lists. `None` when nothing is held.
    pub fn dequeue(&mut self, now: Time, mut on_drop: impl FnMut(P, FqDrop)) -> Option<P> {
        loop {
            let (idx, from_new) = if let Some(&i) = self.new_flows.front() {
                (i as usize, true)
            } else if let Some(&i) = self.old_flows.front() {
                (i as usize, false)
            } else {
                return None;
            };
            if self.flows[idx].deficit <= 0 {
                self.flows[idx].deficit += self.params.quantum as i64;
                self.pop_list_front(from_new);
                self.old_flows.push_back(idx as u32);
                self.flows[idx].list = List::Old;
                continue;
            }
            match self.codel_head(idx, now, &mut on_drop) {
                Some(pkt) => {
                    self.flows[idx].deficit -= pkt.size_bytes() as i64;
                    self.stats.dequeued += 1;
                    return Some(pkt);
                }
                None => {
                    self.pop_list_front(from_new);
                    if from_new && !self.old_flows.is_empty() {
                        // Keeps a flow that empties now and then from starving the old ones.
                        self.old_flows.push_back(idx as u32);
                        self.flows[idx].list = List::Old;
                    } else {
                        self.flows[idx].list = List::None;
                    }
                }
            }
        }
    }

    fn pop_list_front(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// CoDel on queue `idx` (RFC 8289 s. 5.5): drops heads until one may be sent (CE-marked if
    /// CoDel marks it), or the queue is empty.
    fn codel_head(
        &mut self,
        idx: usize,
        now: Time,
        on_drop: &mut impl FnMut(P, FqDrop),
    ) -> Option<P> {
        loop {
            let Some((mut pkt, at)) = self.pop(idx) else {
                codel_on_empty(&mut self.flows[idx].vars);
                return None;
            };
            let f = &mut self.flows[idx];
            let sojourn = now.saturating_sub(at);
            let backlog = if self.params.mtu_per_flow {
                f.bytes
            } else {
                self.len_bytes
            };
            match codel_dequeue(
                &mut f.vars,
                &self.params.codel,
                sojourn,
                backlog,
                pkt.ecn_capable(),
                now,
            ) {
                Verdict::Drop => {
                    self.stats.codel_drops += 1;
                    on_drop(pkt, FqDrop::Codel);
                }
                Verdict::Mark => {
                    pkt.set_ce();
                    self.stats.ecn_marks += 1;
                    return Some(pkt);
                }
                _ => return Some(pkt),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;

    const MS: Time = 1_000_000;

    #[derive(Debug, Clone, PartialEq)]
    struct Pkt {
        flow: u32,
        size: u32,
        id: u32,
        ect: bool,
        ce: bool,
    }

    impl FqPacket for Pkt {
        fn flow_id(&self) -> u32 {
            self.flow
        }
        fn size_bytes(&self) -> u32 {
            self.size
        }
        fn ecn(&self) -> crate::Ecn {
            if self.ect {
                crate::Ecn::Ect0
            } else {
                crate::Ecn::NotEct
            }
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
    }

    fn pkt(flow: u32, size: u32, id: u32) -> Pkt {
        Pkt {
            flow,
            size,
            id,
            ect: false,
            ce: false,
        }
    }

    fn fq(pairs: &[(&str, ParamValue)]) -> Result<FqCodel<Pkt>, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        build_fq_codel(&m, &LinkContext::default())
    }

    fn no_drop(_: Pkt, _: FqDrop) {
        panic!("unexpected drop");
    }

    #[test]
    fn defaults_are_rfc_8290s() {
        let q = fq(&[]).unwrap();
        assert_eq!(q.params(), &FqCodelParams::default());
        let p = q.params();
        assert_eq!(
            (p.limit, p.flows, p.quantum, p.drop_batch),
            (10240, 1024, 1514, 64)
        );
        assert_eq!(
            (p.codel.target_ns, p.codel.interval_ns, p.codel.ecn),
            (5 * MS, 100 * MS, true)
        );
    }

    #[test]
    fn flow_hash_is_in_range_and_spreads() {
        let mut used = vec![0u32; 1024];
        for f in 0..100_000u32 {
            used[flow_hash(f, 0, 1024)] += 1;
        }
        // About 97.7 per queue; every queue used, none grossly overloaded.
        assert!(
            used.iter().all(|&n| (50..150).contains(&n)),
            "{:?}",
            used.iter().max()
        );
        assert_ne!(flow_hash(1, 0, 1024), flow_hash(1, 7, 1024));
        assert_eq!(flow_hash(u32::MAX, u64::MAX, 1), 0);
    }

    #[test]
    fn drr_gives_backlogged_flows_equal_bytes_whatever_their_packet_sizes() {
        // Flow 1 sends 1500-byte packets, flow 2 300-byte ones; both stay backlogged (each packet
        // served is replaced). At one instant, so sojourns are 0 and CoDel never drops.
        let mut q = fq(&[]).unwrap();
        assert_ne!(q.queue_of(1), q.queue_of(2));
        let size = |f: u32| if f == 1 { 1500 } else { 300 };
        for i in 0..20 {
            for f in [1, 2] {
                q.enqueue(pkt(f, size(f), i), 0, no_drop);
            }
        }
        let mut bytes = [0u64; 3];
        let mut max_gap = 0i64;
        for i in 0..100_000 {
            let p = q.dequeue(0, no_drop).unwrap();
            bytes[p.flow as usize] += p.size as u64;
            max_gap = max_gap.max((bytes[1] as i64 - bytes[2] as i64).abs());
            q.enqueue(pkt(p.flow, p.size, 100 + i), 0, no_drop);
        }
        // Never more than a quantum plus a packet apart; equal over the long run.
        assert!(max_gap <= 1514 + 1500, "{max_gap}");
        let ratio = bytes[1] as f64 / bytes[2] as f64;
        assert!((ratio - 1.0).abs() < 0.001, "{bytes:?}");
    }

    #[test]
    fn a_new_sparse_flow_is_served_before_the_backlogged_ones() {
        let mut q = fq(&[]).unwrap();
        for i in 0..50 {
            q.enqueue(pkt(1, 1500, i), 0, no_drop);
            q.enqueue(pkt(2, 1500, i), 0, no_drop);
        }
        assert_eq!(q.list_lens(), (2, 0));
        for _ in 0..10 {
            q.dequeue(0, no_drop).unwrap();
        }
        // Both used their first quantum and moved to the old list.
        assert_eq!(q.list_lens(), (0, 2));
        assert_ne!(q.queue_of(3), q.queue_of(1));
        assert_ne!(q.queue_of(3), q.queue_of(2));
        q.enqueue(pkt(3, 100, 0), 0, no_drop);
        assert_eq!(q.list_lens(), (1, 2));
        assert_eq!(q.dequeue(0, no_drop).unwrap().flow, 3);
        // Emptied while the old list is not empty: it moves there rather than leaving.
        let next = q.dequeue(0, no_drop).unwrap();
        assert_ne!(next.flow, 3);
        assert_eq!(q.list_lens(), (0, 3));
    }

    #[test]
    fn an_emptied_old_queue_leaves_the_lists() {
        let mut q = fq(&[]).unwrap();
        q.enqueue(pkt(1, 1000, 0), 0, no_drop);
        assert_eq!(q.dequeue(0, no_drop).unwrap().id, 0);
        // Empty new queue, old list empty: removed.
        assert!(q.dequeue(0, no_drop).is_none());
        assert_eq!(q.list_lens(), (0, 0));
        assert!(q.is_empty());
    }

    #[test]
    fn over_the_limit_the_fattest_queue_loses_half_its_bytes_from_the_head() {
        let mut q = fq(&[("limit", ParamValue::Num(10.0))]).unwrap();
        assert_ne!(q.queue_of(1), q.queue_of(2));
        for i in 0..8 {
            assert_eq!(q.enqueue(pkt(1, 1000, i), 0, no_drop), 0);
        }
        for i in 0..2 {
            assert_eq!(q.enqueue(pkt(2, 1000, i), 0, no_drop), 0);
        }
        // The 11th packet (flow 2) exceeds the limit of 10. Fattest: flow 1 (8000 B vs 3000 B);
        // threshold 4000 B -> its 4 oldest packets go.
        let mut dropped = Vec::new();
        let n = q.enqueue(pkt(2, 1000, 2), 0, |p, why| {
            dropped.push((p.flow, p.id, why))
        });
        assert_eq!(n, 4);
        assert_eq!(
            dropped,
            (0..4)
                .map(|i| (1, i, FqDrop::Overlimit))
                .collect::<Vec<_>>()
        );
        assert_eq!((q.len_pkts(), q.len_bytes()), (7, 7000));
        assert_eq!(q.queue_len(q.queue_of(1)), (4, 4000));
        assert_eq!(q.stats().overlimit_drops, 4);
        // Batch of at most drop_batch packets.
        let mut q = fq(&[
            ("limit", ParamValue::Num(10.0)),
            ("drop_batch", ParamValue::Num(2.0)),
        ])
        .unwrap();
        for i in 0..10 {
            q.enqueue(pkt(1, 1000, i), 0, no_drop);
        }
        let mut ids = Vec::new();
        assert_eq!(q.enqueue(pkt(1, 1000, 10), 0, |p, _| ids.push(p.id)), 2);
        assert_eq!(ids, vec![0, 1]);
    }

    #[test]
    fn the_limit_holds_with_zero_size_packets() {
        let mut q = fq(&[("limit", ParamValue::Num(3.0))]).unwrap();
        let mut n = 0;
        for i in 0..10 {
            n += q.enqueue(pkt(i % 2, 0, i), 0, |_, _| {});
            assert!(q.len_pkts() <= 3);
        }
        assert_eq!(n, 7);
    }

    #[test]
    fn codel_drops_from_a_standing_queue_but_not_from_a_sparse_flow() {
        let mut q = fq(&[("ecn", ParamValue::Bool(false))]).unwrap();
        // Flow 1: 2000 packets queued at t = 0; one departure per ms, so its sojourn grows.
        for i in 0..2000 {
            q.enqueue(pkt(1, 1000, i), 0, no_drop);
        }
        let mut drops = Vec::new();
        for k in 1..=400u64 {
            let now = k * MS;
            // Flow 2: one packet every 10 ms, served at once (new-flow priority).
            if k % 10 == 0 {
                q.enqueue(pkt(2, 100, k as u32), now, no_drop);
            }
            q.dequeue(now, |p, why| drops.push((p.flow, k, why)));
        }
        assert!(drops.iter().all(|d| d.0 == 1 && d.2 == FqDrop::Codel));
        assert_eq!(q.stats().codel_drops as usize, drops.len());
        // Flow 1's head waits 5 ms at 5 ms (first_above_time 105 ms); drops follow the control
        // law: 105, 205, 276 (205 + 70.7), 334 (+ 57.7), 384 (+ 50) ms.
        let at: Vec<u64> = drops.iter().map(|d| d.1).collect();
        assert_eq!(at, vec![105, 205, 276, 334, 384]);
    }

    /// 100 flows, one 1500-B packet each, a standing queue: every 1 ms one packet leaves and its
    /// flow sends the next, so each head has waited 100 ms (> target) while the qdisc holds
    /// 99 x 1500 B (> mtu) but its own queue nothing after the head's removal.
    fn standing_queue_of_lone_packets(per_flow: bool) -> (u64, Vec<(u32, u64)>) {
        let mut q = fq(&[
            ("quantum", ParamValue::Num(1500.0)),
            ("flows", ParamValue::Num(65536.0)),
            ("mtu_per_flow", ParamValue::Bool(per_flow)),
        ])
        .unwrap();
        let queues: std::collections::HashSet<usize> = (0..100).map(|f| q.queue_of(f)).collect();
        assert_eq!(queues.len(), 100, "no two flows share a queue");
        for f in 0..100 {
            q.enqueue(pkt(f, 1500, 0), 0, no_drop);
        }
        let mut drops = Vec::new();
        for k in 1..=400u64 {
            let now = k * MS;
            if let Some(p) = q.dequeue(now, |p, _| drops.push((p.flow, k))) {
                q.enqueue(pkt(p.flow, 1500, k as u32), now, no_drop);
            }
        }
        (q.stats().codel_drops, drops)
    }

    #[test]
    fn codels_mtu_test_reads_the_whole_backlog_by_default_as_linux_does() {
        // Linux sch_fq_codel.c passes &sch->qstats.backlog to codel_dequeue. Served round robin
        // (quantum = packet size), flow f's head waits f + 1 ms in the first round: flows 0-3
        // stay below the 5 ms target, flow 4 (5 ms) sets first_above_time = 105 ms and is the
        // first dropped, at its next visit at 105 ms.
        let (n, drops) = standing_queue_of_lone_packets(false);
        assert!(n > 0);
        assert_eq!(drops[0], (4, 105));
        // The flow's own bytes (0 after its head leaves) never exceed one MTU: no drop at all.
        let (n, drops) = standing_queue_of_lone_packets(true);
        assert_eq!((n, drops.len()), (0, 0));
    }

    #[test]
    fn with_ecn_codel_marks_capable_packets_instead() {
        let mut q = fq(&[]).unwrap();
        for i in 0..2000 {
            q.enqueue(
                Pkt {
                    ect: true,
                    ..pkt(1, 1000, i)
                },
                0,
                no_drop,
            );
        }
        let mut marked = 0;
        for k in 1..=400u64 {
            let p = q.dequeue(k * MS, no_drop).unwrap();
            marked += p.ce as u32;
        }
        // Same schedule as the drops without ECN: 105, 205, 276, 334, 384 ms.
        assert_eq!(marked, 5);
        assert_eq!(q.stats().ecn_marks, marked as u64);
        assert_eq!(q.stats().codel_drops, 0);
    }

    #[test]
    fn packets_are_conserved() {
        let mut q = fq(&[
            ("limit", ParamValue::Num(50.0)),
            ("flows", ParamValue::Num(4.0)),
        ])
        .unwrap();
        let mut dropped = 0u64;
        let mut out = 0u64;
        for i in 0..10_000u32 {
            q.enqueue(
                pkt(i % 7, 100 + (i * 37) % 1400, i),
                i as u64 * 100_000,
                |_, _| dropped += 1,
            );
            if i % 3 != 0 {
                out += q.dequeue(i as u64 * 100_000, |_, _| dropped += 1).is_some() as u64;
            }
        }
        assert_eq!(q.stats().enqueued, out + dropped + q.len_pkts() as u64);
        while q.dequeue(2_000_000 * MS, |_, _| dropped += 1).is_some() {
            out += 1;
        }
        assert_eq!((q.len_pkts(), q.len_bytes()), (0, 0));
        assert_eq!(10_000, out + dropped);
    }

    #[test]
    fn bad_parameters_are_named() {
        for (name, v, allowed) in [
            ("limit", 0.0, "[1, "),
            ("flows", 0.0, "[1, 65536]"),
            ("flows", 70000.0, "[1, 65536]"),
            ("quantum", 0.0, "[1, "),
            ("drop_batch", 0.0, "[1, 65536]"),
            ("hash_seed", -1.0, "[0, "),
            ("target", -0.005, "(0, 3600]"),
        ] {
            let e = fq(&[(name, ParamValue::Num(v))]).unwrap_err();
            assert_eq!(e.param, name);
            assert!(e.msg.contains(allowed), "{e}");
        }
        let e = fq(&[("target", ParamValue::Num(0.5))]).unwrap_err();
        assert_eq!(e.param, "target");
        assert!(e.msg.contains("interval"), "{e}");
        let e = fq(&[("limit", ParamValue::Num(1.5))]).unwrap_err();
        assert_eq!(e.param, "limit");
    }
}
