//! CAKE: Common Applications Kept Enhanced (T. Hoeiland-Joergensen, D. Taht, J. Morton, "Piece
//! of CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN 2018;
//! Linux `net/sched/sch_cake.c`): a deficit-mode shaper with overhead compensation (paper
//! s. III-A), flows hashed into 1024 queues by an 8-way set-associative hash (s. III-B1), DRR++
//! with sparse/bulk/decaying flow lists and per-host fairness through host-scaled quanta
//! (s. III-B2, `cake_get_flow_quantum`), COBALT on every queue (s. III-C, [`aqm::cobalt`]), and
//! on overflow a head drop from the longest queue (`cake_drop`).
//!
//! Simplified, and said in docs/algorithms/cake.md: besteffort only (one tin; DiffServ tins
//! later), no ACK filter, no ingress mode, no NAT lookup, no GSO splitting, no autorate; the
//! memory limit counts packet bytes (Linux counts `skb->truesize`); the shaper's time per byte
//! is exact integer arithmetic (Linux: a 34-bit fixed-point reciprocal), with no failsafe
//! timer (it only matters in ingress mode).

use super::{SchedDrop, Scheduler};
use aqm::cobalt::{
    cobalt_queue_empty, cobalt_queue_full, cobalt_should_drop, CobaltParams, CobaltSignal,
    CobaltVars,
};
use aqm::fq_codel::FqPacket;
use aqm::params::{check_range, LinkContext, ParamError, ParamMap, Params};
use aqm::{AqmRng, Time, NS_PER_SEC};
use rand::Rng;
use std::collections::VecDeque;

/// Queues per tin (Linux `CAKE_QUEUES`).
pub const CAKE_QUEUES: usize = 1024;
/// Ways of the set-associative hash (Linux `CAKE_SET_WAYS`).
pub const CAKE_SET_WAYS: usize = 8;
/// The MTU the shaper's target floor and the memory limit use: Ethernet's 1500 + 14 bytes
/// (Linux `psched_mtu` of an Ethernet device).
const MTU: u64 = 1514;

use aqm::cobalt::{CAKE_PARAMS, FLOW_MODES};

/// Link-layer framing the shaper accounts for (Linux `cake_calc_overhead`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Bytes as they are.
    None,
    /// ATM: whole 48-byte cells, each sent in 53 bytes.
    Atm,
    /// PTM (VDSL2): one byte per 64 or part thereof.
    Ptm,
}

/// Flow isolation (Linux `CAKE_FLOW_*`: bit 0 source host, bit 1 destination host, bit 2 flows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowMode(u8);

impl FlowMode {
    /// Triple isolation: flows, fair between source hosts and between destination hosts.
    pub const TRIPLE: FlowMode = FlowMode(7);

    fn from_name(s: &str) -> Option<Self> {
        FLOW_MODES
            .iter()
            .position(|m| *m == s)
            .map(|i| FlowMode(i as u8))
    }
    /// The tc-cake keyword.
    pub fn name(self) -> &'static str {
        FLOW_MODES[self.0 as usize]
    }
    fn flows(self) -> bool {
        self.0 & 4 != 0
    }
    fn src_ip(self) -> bool {
        self.0 & 1 != 0
    }
    fn dst_ip(self) -> bool {
        self.0 & 2 != 0
    }
    /// Per-source-host fairness (dual-srchost, triple-isolate; Linux `cake_dsrc`).
    fn dual_src(self) -> bool {
        self.0 & 5 == 5
    }
    /// Per-destination-host fairness (dual-dsthost, triple-isolate; Linux `cake_ddst`).
    fn dual_dst(self) -> bool {
        self.0 & 6 == 6
    }
}

/// Configuration, as the user gave it and as derived from the rate (Linux `cake_set_rate`).
#[derive(Clone, Debug, PartialEq)]
pub struct CakeParams {
    /// Shaper rate, bit/s; 0 = unlimited.
    pub rate_bps: u64,
    /// Per-packet overhead, bytes.
    pub overhead: i32,
    /// Minimum charged size, bytes.
    pub mpu: u32,
    /// Link-layer framing.
    pub framing: Framing,
    /// Flow isolation mode.
    pub flow_mode: FlowMode,
    /// COBALT's parameters after `cake_set_rate` (target floor, interval, MTU time, 1/256,
    /// 1/4096, no blue threshold, ECN on).
    pub cobalt: CobaltParams,
    /// Packet limit.
    pub limit: u32,
    /// Byte limit.
    pub memlimit: u64,
    /// Flow quantum, bytes: 1514, or rate/4096 B/s within [300, 1514] when shaped.
    pub flow_quantum: u32,
    /// Hash perturbation.
    pub hash_seed: u64,
}

impl CakeParams {
    /// Reads and validates parameters.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(CAKE_PARAMS, m)?;
        let rate = p.num("bandwidth")?;
        check_range("bandwidth", rate, 0.0, false, 1e13, false)?;
        let overhead = p.num("overhead")?;
        check_range("overhead", overhead, -64.0, false, 256.0, false)?;
        let mpu = p.num("mpu")?;
        check_range("mpu", mpu, 0.0, false, 256.0, false)?;
        let target = p.num("target")?;
        check_range("target", target, 0.0, true, 1.0, false)?;
        let rtt = p.num("rtt")?;
        check_range("rtt", rtt, 0.0, true, 1.0, false)?;
        let limit = p.num("limit")?;
        check_range("limit", limit, 1.0, false, 2_147_483_647.0, false)?;
        let seed = p.num("hash_seed")?;
        check_range(
            "hash_seed",
            seed,
            0.0,
            false,
            9_007_199_254_740_992.0,
            false,
        )?;
        let memlimit = match p.opt_num("memlimit")? {
            Some(b) => {
                check_range("memlimit", b, MTU as f64, false, 1e12, false)?;
                Some(b as u64)
            }
            // A link buffer in bytes bounds the bytes held (one in packets arrives as `limit`).
            None => match l.buffer {
                aqm::params::Buffer::Bytes(b) => Some(b),
                aqm::params::Buffer::Packets(_) => None,
            },
        };
        let framing = match p.choice("framing").as_str() {
            "atm" => Framing::Atm,
            "ptm" => Framing::Ptm,
            _ => Framing::None,
        };
        let flow_mode = FlowMode::from_name(&p.choice("flow_mode")).expect("checked choice");
        Ok(Self::derive(
            rate as u64,
            overhead as i32,
            mpu as u32,
            framing,
            flow_mode,
            (target * NS_PER_SEC as f64).round() as Time,
            (rtt * NS_PER_SEC as f64).round() as Time,
            limit as u32,
            memlimit,
            seed as u64,
        ))
    }

    /// The derived parameters (Linux `cake_set_rate`, `cake_reconfigure`): at rate R B/s,
    /// mtu_time = 1514 / R, target = max(1.5 mtu_time, target), interval = max(rtt + target -
    /// target given, 2 target), quantum = clamp(R >> 12, 300, 1514); memlimit = 4 R rtt, at
    /// least 4 MiB, at most limit x 1514.
    #[allow(clippy::too_many_arguments)]
    pub fn derive(
        rate_bps: u64,
        overhead: i32,
        mpu: u32,
        framing: Framing,
        flow_mode: FlowMode,
        target_ns: Time,
        rtt_ns: Time,
        limit: u32,
        memlimit: Option<u64>,
        hash_seed: u64,
    ) -> Self {
        let rate_bytes = rate_bps / 8;
        let mtu_time = if rate_bps > 0 {
            byte_time_ns(MTU, rate_bps)
        } else {
            0
        };
        let target = (mtu_time * 3 / 2).max(target_ns);
        let interval = (rtt_ns + target - target_ns).max(2 * target);
        let flow_quantum = if rate_bps > 0 {
            (rate_bytes >> 12).clamp(300, 1514) as u32
        } else {
            1514
        };
        let memlimit = memlimit.unwrap_or_else(|| {
            let auto = if rate_bps > 0 {
                ((rate_bytes as u128 * rtt_ns as u128 * 4 / NS_PER_SEC as u128) as u64).max(4 << 20)
            } else {
                u64::MAX
            };
            auto.min(limit as u64 * MTU)
        });
        CakeParams {
            rate_bps,
            overhead,
            mpu,
            framing,
            flow_mode,
            cobalt: CobaltParams {
                target_ns: target,
                interval_ns: interval,
                mtu_time_ns: mtu_time,
                p_inc: 1.0 / 256.0,
                p_dec: 1.0 / 4096.0,
                blue_threshold_ns: Time::MAX,
                ecn: true,
            },
            limit,
            memlimit,
            flow_quantum,
            hash_seed,
        }
    }
}

/// Transmission time of `bytes` at `rate_bps`, ns.
#[inline]
fn byte_time_ns(bytes: u64, rate_bps: u64) -> Time {
    (bytes as u128 * 8 * NS_PER_SEC as u128 / rate_bps as u128) as Time
}

/// The size the shaper charges for a packet of `len` bytes (Linux `cake_calc_overhead`):
/// len + overhead, at least mpu, then ATM cells (48 bytes of payload in 53) or PTM (one byte
/// per 64 or part thereof).
#[inline]
pub fn adjusted_len(len: u32, overhead: i32, mpu: u32, framing: Framing) -> u32 {
    let mut l = (len as i64 + overhead as i64).max(mpu as i64).max(0) as u32;
    match framing {
        Framing::None => {}
        Framing::Atm => l = l.div_ceil(48) * 53,
        Framing::Ptm => l += l.div_ceil(64),
    }
    l
}

/// A 32-bit mix of `x` and a seed (the splitmix64 finaliser), the stand-in for Linux's
/// `flow_hash_from_keys` (jhash of the dissected keys).
#[inline]
fn mix32(x: u64, seed: u64) -> u32 {
    let mut z = x ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

const NIL: u16 = u16::MAX;

/// Which rotation a queue is in (Linux `CAKE_SET_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    None,
    Sparse,
    /// Counted as sparse, in the bulk rotation (emptied after its first quantum).
    SparseWait,
    Bulk,
    /// Empty, kept on the decaying list until COBALT's state has decayed to rest.
    Decaying,
}

/// The three rotations (Linux `new_flows`, `old_flows`, `decaying_flows`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chain {
    New = 0,
    Old = 1,
    Decaying = 2,
}

/// One flow queue (Linux `struct cake_flow`).
#[derive(Debug)]
struct Flow<P> {
    pkts: VecDeque<(P, Time, u32)>,
    backlog: u64,
    deficit: i64,
    cvars: CobaltVars,
    srchost: u16,
    dsthost: u16,
    set: Set,
    chain: Option<Chain>,
    prev: u16,
    next: u16,
}

/// One host slot (Linux `struct cake_host`).
#[derive(Clone, Copy, Debug, Default)]
struct Host {
    srchost_tag: u32,
    dsthost_tag: u32,
    srchost_bulk_flow_count: u16,
    dsthost_bulk_flow_count: u16,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CakeStats {
    /// Packets accepted by `enqueue`.
    pub enqueued: u64,
    /// Packets handed out.
    pub dequeued: u64,
    /// COBALT's CoDel drops.
    pub codel_drops: u64,
    /// COBALT's BLUE drops.
    pub blue_drops: u64,
    /// CE marks.
    pub ecn_marks: u64,
    /// Head drops from the longest queue above the limit.
    pub overlimit_drops: u64,
    /// Lookups that found the flow's queue directly.
    pub way_directs: u64,
    /// Lookups that found it elsewhere in the set.
    pub way_hits: u64,
    /// New flows given a free queue of the set.
    pub way_misses: u64,
    /// New flows that had to share a busy queue (the whole set was in use).
    pub way_collisions: u64,
    /// Dequeues held back by the shaper.
    pub shaper_waits: u64,
}

/// The CAKE queue discipline over packets of type `P`.
#[derive(Debug)]
pub struct Cake<P> {
    params: CakeParams,
    flows: Vec<Flow<P>>,
    tags: Vec<u32>,
    hosts: Vec<Host>,
    chains: [(u16, u16); 3],
    sparse_flow_count: u32,
    bulk_flow_count: u32,
    decaying_flow_count: u32,
    len_pkts: u32,
    len_bytes: u64,
    time_next_packet: Time,
    /// Set when the shaper held a dequeue back: the time it will allow the next one.
    waiting_for: Option<Time>,
    flow_hosts: Vec<(u32, u32)>,
    stats: CakeStats,
}

impl<P: FqPacket> Cake<P> {
    /// An empty CAKE.
    pub fn new(params: CakeParams) -> Self {
        let flows = (0..CAKE_QUEUES)
            .map(|_| Flow {
                pkts: VecDeque::new(),
                backlog: 0,
                deficit: 0,
                cvars: CobaltVars::default(),
                srchost: 0,
                dsthost: 0,
                set: Set::None,
                chain: None,
                prev: NIL,
                next: NIL,
            })
            .collect();
        Cake {
            params,
            flows,
            tags: vec![0; CAKE_QUEUES],
            hosts: vec![Host::default(); CAKE_QUEUES],
            chains: [(NIL, NIL); 3],
            sparse_flow_count: 0,
            bulk_flow_count: 0,
            decaying_flow_count: 0,
            len_pkts: 0,
            len_bytes: 0,
            time_next_packet: 0,
            waiting_for: None,
            flow_hosts: Vec::new(),
            stats: CakeStats::default(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CakeParams {
        &self.params
    }

    /// The counters.
    pub fn counters(&self) -> &CakeStats {
        &self.stats
    }

    /// Sparse, bulk and decaying flow counts.
    pub fn flow_counts(&self) -> (u32, u32, u32) {
        (
            self.sparse_flow_count,
            self.bulk_flow_count,
            self.decaying_flow_count,
        )
    }

    /// Tells CAKE the (source, destination) hosts of each flow id, for callers whose packets
    /// do not carry addresses (the simulator); a reverse-direction packet
    /// ([`FqPacket::reverse`]) swaps them.
    pub fn set_flow_hosts(&mut self, hosts: &[(u32, u32)]) {
        self.flow_hosts = hosts.to_vec();
    }

    fn hosts_of(&self, pkt: &P) -> (u32, u32) {
        if let Some(h) = pkt.hosts() {
            return h;
        }
        let f = pkt.flow_id();
        // Without a table, each flow is its own pair of hosts.
        let (s, d) = self
            .flow_hosts
            .get(f as usize)
            .copied()
            .unwrap_or((f, f | 0x8000_0000));
        if pkt.reverse() {
            (d, s)
        } else {
            (s, d)
        }
    }

    // --- the three rotations: intrusive doubly linked lists over queue indices ---

    fn chain_del(&mut self, i: usize) {
        let Some(c) = self.flows[i].chain.take() else {
            return;
        };
        let (prev, next) = (self.flows[i].prev, self.flows[i].next);
        if prev == NIL {
            self.chains[c as usize].0 = next;
        } else {
            self.flows[prev as usize].next = next;
        }
        if next == NIL {
            self.chains[c as usize].1 = prev;
        } else {
            self.flows[next as usize].prev = prev;
        }
        self.flows[i].prev = NIL;
        self.flows[i].next = NIL;
    }

    fn chain_move_tail(&mut self, i: usize, c: Chain) {
        self.chain_del(i);
        let tail = self.chains[c as usize].1;
        self.flows[i].prev = tail;
        self.flows[i].next = NIL;
        self.flows[i].chain = Some(c);
        if tail == NIL {
            self.chains[c as usize].0 = i as u16;
        } else {
            self.flows[tail as usize].next = i as u16;
        }
        self.chains[c as usize].1 = i as u16;
    }

    fn chain_front(&self, c: Chain) -> Option<usize> {
        let h = self.chains[c as usize].0;
        (h != NIL).then_some(h as usize)
    }

    // --- host bulk-flow counts (Linux cake_{inc,dec}_{src,dst}host_bulk_flow_count) ---

    fn inc_host_counts(&mut self, i: usize) {
        let m = self.params.flow_mode;
        let (s, d) = (
            self.flows[i].srchost as usize,
            self.flows[i].dsthost as usize,
        );
        if m.dual_src() && (self.hosts[s].srchost_bulk_flow_count as usize) < CAKE_QUEUES {
            self.hosts[s].srchost_bulk_flow_count += 1;
        }
        if m.dual_dst() && (self.hosts[d].dsthost_bulk_flow_count as usize) < CAKE_QUEUES {
            self.hosts[d].dsthost_bulk_flow_count += 1;
        }
    }

    fn dec_host_counts(&mut self, i: usize) {
        let m = self.params.flow_mode;
        let (s, d) = (
            self.flows[i].srchost as usize,
            self.flows[i].dsthost as usize,
        );
        if m.dual_src() && self.hosts[s].srchost_bulk_flow_count > 0 {
            self.hosts[s].srchost_bulk_flow_count -= 1;
        }
        if m.dual_dst() && self.hosts[d].dsthost_bulk_flow_count > 0 {
            self.hosts[d].dsthost_bulk_flow_count -= 1;
        }
    }

    /// A queue's DRR quantum: the flow quantum divided by the larger bulk-flow count of its
    /// source and destination hosts, dithered so rounding does not accumulate (Linux
    /// `cake_get_flow_quantum`; paper s. III-B2).
    fn flow_quantum(&self, i: usize, rng: &mut AqmRng) -> i64 {
        let m = self.params.flow_mode;
        let f = &self.flows[i];
        let mut load: u32 = 1;
        if m.dual_src() {
            load = load.max(self.hosts[f.srchost as usize].srchost_bulk_flow_count as u32);
        }
        if m.dual_dst() {
            load = load.max(self.hosts[f.dsthost as usize].dsthost_bulk_flow_count as u32);
        }
        let div = 65535 / load;
        ((self.params.flow_quantum * div + rng.random::<u16>() as u32) >> 16) as i64
    }

    /// Finds a host slot for `hash` in `hash`'s set, in the source or destination tag space
    /// (Linux `cake_hash`, the host half): its own slot, else one with no bulk flows, else the
    /// last one looked at, re-tagged.
    fn host_slot(&mut self, hash: u32, src: bool) -> u16 {
        let idx = hash as usize % CAKE_QUEUES;
        let inner = idx % CAKE_SET_WAYS;
        let outer = idx - inner;
        let tag = |h: &Host| if src { h.srchost_tag } else { h.dsthost_tag };
        let busy = |h: &Host| {
            if src {
                h.srchost_bulk_flow_count
            } else {
                h.dsthost_bulk_flow_count
            }
        };
        let mut k = inner;
        for _ in 0..CAKE_SET_WAYS {
            if tag(&self.hosts[outer + k]) == hash {
                return (outer + k) as u16;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        for _ in 0..CAKE_SET_WAYS {
            if busy(&self.hosts[outer + k]) == 0 {
                break;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        let h = &mut self.hosts[outer + k];
        if src {
            h.srchost_tag = hash;
        } else {
            h.dsthost_tag = hash;
        }
        (outer + k) as u16
    }

    /// The queue a packet goes to (Linux `cake_hash`): the flow (or host) hash, then the
    /// 8-way set-associative lookup: the queue tagged with this hash, else a free queue of the
    /// set, else the hash's own queue, shared (a collision); the flow's hosts are looked up
    /// when its queue is (re)assigned.
    pub fn classify(&mut self, pkt: &P) -> usize {
        let mode = self.params.flow_mode;
        if mode.0 == 0 {
            return 0;
        }
        let seed = self.params.hash_seed;
        let (sh, dh) = self.hosts_of(pkt);
        let src_hash = mix32(sh as u64 | 1 << 40, seed);
        let dst_hash = mix32(dh as u64 | 2 << 40, seed);
        let flow_hash = if mode.flows() {
            mix32(pkt.flow_id() as u64, seed)
        } else {
            let mut h = 0;
            if mode.src_ip() {
                h ^= src_hash;
            }
            if mode.dst_ip() {
                h ^= dst_hash;
            }
            h
        };
        let reduced = flow_hash as usize % CAKE_QUEUES;
        if self.tags[reduced] == flow_hash && self.flows[reduced].set != Set::None {
            self.stats.way_directs += 1;
            return reduced;
        }
        let inner = reduced % CAKE_SET_WAYS;
        let outer = reduced - inner;
        let (mut alloc_src, mut alloc_dst) = (false, false);
        let mut k = inner;
        let mut found = None;
        for i in 0..CAKE_SET_WAYS {
            if self.tags[outer + k] == flow_hash {
                if i > 0 {
                    self.stats.way_hits += 1;
                }
                if self.flows[outer + k].set == Set::None {
                    alloc_src = mode.dual_src();
                    alloc_dst = mode.dual_dst();
                }
                found = Some(outer + k);
                break;
            }
            k = (k + 1) % CAKE_SET_WAYS;
        }
        let q = match found {
            Some(q) => q,
            None => {
                alloc_src = mode.dual_src();
                alloc_dst = mode.dual_dst();
                let mut free = None;
                for _ in 0..CAKE_SET_WAYS {
                    if self.flows[outer + k].set == Set::None {
                        free = Some(outer + k);
                        break;
                    }
                    k = (k + 1) % CAKE_SET_WAYS;
                }
                match free {
                    Some(q) => {
                        self.stats.way_misses += 1;
                        q
                    }
                    None => {
                        // Every way busy: share the queue the search ended on (the hash's own).
                        self.stats.way_collisions += 1;
                        let q = outer + k;
                        if self.flows[q].set == Set::Bulk {
                            self.dec_host_counts(q);
                        }
                        q
                    }
                }
            }
        };
        self.tags[q] = flow_hash;
        if alloc_src {
            self.flows[q].srchost = self.host_slot(src_hash, true);
        }
        if alloc_dst {
            self.flows[q].dsthost = self.host_slot(dst_hash, false);
        }
        if (alloc_src || alloc_dst) && self.flows[q].set == Set::Bulk {
            // The queue changed hosts while in the bulk rotation: count it for its new ones.
            self.inc_host_counts(q);
        }
        q
    }

    fn over_limit(&self) -> bool {
        self.len_pkts > self.params.limit || self.len_bytes > self.params.memlimit
    }

    /// Head drop from the longest queue (Linux `cake_drop`, which keeps a max-heap of
    /// backlogs; a scan of the 1024 queues here, run only on overflow), telling its COBALT.
    fn drop_from_longest(&mut self, now: Time, on_drop: &mut dyn FnMut(P, SchedDrop)) {
        let (q, _) = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.backlog, f.pkts.len(), std::cmp::Reverse(*i)))
            .expect("1024 queues");
        let f = &mut self.flows[q];
        let Some((pkt, _, _)) = f.pkts.pop_front() else {
            return;
        };
        cobalt_queue_full(&mut f.cvars, &self.params.cobalt, now as i64);
        let size = pkt.size_bytes() as u64;
        f.backlog -= size;
        self.len_pkts -= 1;
        self.len_bytes -= size;
        self.stats.overlimit_drops += 1;
        on_drop(pkt, SchedDrop::Overlimit);
    }

    /// A packet arrives at `now` (Linux `cake_enqueue`).
    pub fn enqueue_pkt(
        &mut self,
        pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) {
        let q = self.classify(&pkt);
        if self.len_pkts == 0 && self.time_next_packet < now {
            // The shaper's schedule is stale after an idle period.
            self.time_next_packet = now;
        }
        let size = pkt.size_bytes();
        let adj = adjusted_len(
            size,
            self.params.overhead,
            self.params.mpu,
            self.params.framing,
        );
        let f = &mut self.flows[q];
        f.pkts.push_back((pkt, now, adj));
        f.backlog += size as u64;
        self.len_pkts += 1;
        self.len_bytes += size as u64;
        self.stats.enqueued += 1;
        match self.flows[q].set {
            Set::None | Set::Decaying => {
                if self.flows[q].set == Set::Decaying {
                    self.decaying_flow_count -= 1;
                }
                self.chain_move_tail(q, Chain::New);
                self.flows[q].set = Set::Sparse;
                self.sparse_flow_count += 1;
                self.flows[q].deficit = self.flow_quantum(q, rng);
            }
            Set::SparseWait => {
                self.flows[q].set = Set::Bulk;
                self.sparse_flow_count -= 1;
                self.bulk_flow_count += 1;
                self.inc_host_counts(q);
            }
            Set::Sparse | Set::Bulk => {}
        }
        while self.over_limit() {
            self.drop_from_longest(now, on_drop);
        }
    }

    /// The next packet to send at `now` (Linux `cake_dequeue`, one tin), or `None` when nothing
    /// is held or the shaper holds the next one back (then [`Scheduler::next_update`] says
    /// until when).
    pub fn dequeue_pkt(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
        let mut first_flow = true;
        'begin: loop {
            if self.len_pkts == 0 {
                return None;
            }
            if self.params.rate_bps > 0 && self.time_next_packet > now {
                self.stats.shaper_waits += 1;
                self.waiting_for = Some(self.time_next_packet);
                return None;
            }
            'retry: loop {
                let head = if first_flow && self.chain_front(Chain::Decaying).is_some() {
                    self.chain_front(Chain::Decaying)
                } else {
                    self.chain_front(Chain::New)
                        .or_else(|| self.chain_front(Chain::Old))
                        .or_else(|| self.chain_front(Chain::Decaying))
                };
                let Some(q) = head else {
                    continue 'begin;
                };
                first_flow = false;
                if self.flows[q].deficit <= 0 {
                    if self.flows[q].set == Set::Sparse {
                        if self.flows[q].pkts.is_empty() {
                            self.flows[q].set = Set::SparseWait;
                        } else {
                            self.sparse_flow_count -= 1;
                            self.bulk_flow_count += 1;
                            self.inc_host_counts(q);
                            self.flows[q].set = Set::Bulk;
                        }
                    }
                    let quantum = self.flow_quantum(q, rng);
                    self.flows[q].deficit += quantum;
                    self.chain_move_tail(q, Chain::Old);
                    continue 'retry;
                }
                loop {
                    let f = &mut self.flows[q];
                    let Some((mut pkt, enq, adj)) = f.pkts.pop_front() else {
                        self.queue_found_empty(q, now);
                        continue 'begin;
                    };
                    let size = pkt.size_bytes() as u64;
                    f.backlog -= size;
                    self.len_pkts -= 1;
                    self.len_bytes -= size;
                    let signal = cobalt_should_drop(
                        &mut f.cvars,
                        &self.params.cobalt,
                        now.saturating_sub(enq),
                        pkt.ecn_capable(),
                        now as i64,
                        0,
                        &mut || rng.random::<f64>(),
                    );
                    let drop = matches!(signal, CobaltSignal::CodelDrop | CobaltSignal::BlueDrop);
                    // The last packet of a queue is never dropped (sch_cake.c).
                    if drop && !f.pkts.is_empty() {
                        if signal == CobaltSignal::BlueDrop {
                            self.stats.blue_drops += 1;
                        } else {
                            self.stats.codel_drops += 1;
                        }
                        on_drop(pkt, SchedDrop::Aqm);
                        continue;
                    }
                    if signal == CobaltSignal::Mark {
                        pkt.set_ce();
                        self.stats.ecn_marks += 1;
                    }
                    if self.params.rate_bps > 0 {
                        self.time_next_packet += byte_time_ns(adj as u64, self.params.rate_bps);
                    }
                    self.flows[q].deficit -= adj as i64;
                    self.stats.dequeued += 1;
                    return Some(pkt);
                }
            }
        }
    }

    /// Queue `q` was chosen but is empty (Linux `cake_dequeue`): COBALT's empty-queue step, then
    /// the queue waits on the decaying list until its COBALT state is at rest, or leaves.
    fn queue_found_empty(&mut self, q: usize, now: Time) {
        cobalt_queue_empty(&mut self.flows[q].cvars, &self.params.cobalt, now as i64);
        let v = &self.flows[q].cvars;
        let busy = v.p_drop > 0.0 || v.count > 0 || (now as i64) < v.drop_next;
        let set = self.flows[q].set;
        if busy {
            self.chain_move_tail(q, Chain::Decaying);
            match set {
                Set::Bulk => {
                    self.bulk_flow_count -= 1;
                    self.dec_host_counts(q);
                    self.decaying_flow_count += 1;
                }
                Set::Sparse | Set::SparseWait => {
                    self.sparse_flow_count -= 1;
                    self.decaying_flow_count += 1;
                }
                Set::Decaying | Set::None => {}
            }
            self.flows[q].set = Set::Decaying;
        } else {
            self.chain_del(q);
            match set {
                Set::Sparse | Set::SparseWait => self.sparse_flow_count -= 1,
                Set::Bulk => {
                    self.bulk_flow_count -= 1;
                    self.dec_host_counts(q);
                }
                Set::Decaying => self.decaying_flow_count -= 1,
                Set::None => {}
            }
            self.flows[q].set = Set::None;
        }
    }
}

/// Builds CAKE for packets of type `P` from user parameters.
pub fn build_cake<P: FqPacket>(m: &ParamMap, l: &LinkContext) -> Result<Cake<P>, ParamError> {
    Ok(Cake::new(CakeParams::from_map(m, l)?))
}

impl<P: FqPacket + Send + std::fmt::Debug> Scheduler<P> for Cake<P> {
    fn name(&self) -> &'static str {
        "cake"
    }

    fn enqueue(
        &mut self,
        pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) {
        self.enqueue_pkt(pkt, now, rng, on_drop);
    }

    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
        self.dequeue_pkt(now, rng, on_drop)
    }

    fn len_pkts(&self) -> u32 {
        self.len_pkts
    }

    fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    fn for_each_packet(&self, f: &mut dyn FnMut(&P)) {
        for fl in &self.flows {
            for (p, _, _) in &fl.pkts {
                f(p);
            }
        }
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("enqueued", s.enqueued as f64),
            ("dequeued", s.dequeued as f64),
            ("codel_drops", s.codel_drops as f64),
            ("blue_drops", s.blue_drops as f64),
            ("ecn_marks", s.ecn_marks as f64),
            ("overlimit_drops", s.overlimit_drops as f64),
            ("way_directs", s.way_directs as f64),
            ("way_hits", s.way_hits as f64),
            ("way_misses", s.way_misses as f64),
            ("way_collisions", s.way_collisions as f64),
            ("shaper_waits", s.shaper_waits as f64),
            ("sparse_flows", self.sparse_flow_count as f64),
            ("bulk_flows", self.bulk_flow_count as f64),
            ("decaying_flows", self.decaying_flow_count as f64),
        ]
    }

    /// While the shaper holds a packet back: the time it lets the next one go.
    fn next_update(&self) -> Option<Time> {
        self.waiting_for
    }

    /// The shaper's wait is over; the caller dequeues again.
    fn update(&mut self, _now: Time, _rng: &mut AqmRng) {
        self.waiting_for = None;
    }

    fn set_flow_hosts(&mut self, hosts: &[(u32, u32)]) {
        Cake::set_flow_hosts(self, hosts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::params::ParamValue;
    use aqm::Ecn;

    const MS: Time = 1_000_000;

    #[derive(Debug, Clone, PartialEq)]
    struct Pkt {
        flow: u32,
        size: u32,
        src: u32,
        dst: u32,
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
        fn ecn(&self) -> Ecn {
            if self.ect {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            }
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
        fn hosts(&self) -> Option<(u32, u32)> {
            Some((self.src, self.dst))
        }
    }

    fn pkt(flow: u32, src: u32, dst: u32) -> Pkt {
        Pkt {
            flow,
            size: 1500,
            src,
            dst,
            ect: false,
            ce: false,
        }
    }

    fn cake(pairs: &[(&str, ParamValue)]) -> Result<Cake<Pkt>, ParamError> {
        let m: ParamMap = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        build_cake(&m, &LinkContext::default())
    }

    fn mode(m: &str) -> (&'static str, ParamValue) {
        ("flow_mode", ParamValue::Str(m.into()))
    }

    fn no_drop(_: Pkt, _: SchedDrop) {
        panic!("unexpected drop");
    }

    #[test]
    fn overhead_compensation_is_linuxs() {
        // 1500 B + 18 B (PPPoE over Ethernet-like framing) in ATM: ceil(1518 / 48) = 32 cells
        // of 53 B = 1696 B.
        assert_eq!(adjusted_len(1500, 18, 0, Framing::Atm), 1696);
        // PTM: one byte per 64 or part: 1500 + ceil(1500 / 64) = 1500 + 24.
        assert_eq!(adjusted_len(1500, 0, 0, Framing::Ptm), 1524);
        // mpu floors small packets; a negative overhead is subtracted.
        assert_eq!(adjusted_len(40, 0, 64, Framing::None), 64);
        assert_eq!(adjusted_len(100, -64, 0, Framing::None), 36);
        assert_eq!(adjusted_len(1500, 0, 0, Framing::None), 1500);
    }

    #[test]
    fn the_rate_sets_target_interval_quantum_and_memory_as_cake_set_rate_does() {
        let c = cake(&[]).unwrap();
        let p = c.params();
        assert_eq!((p.rate_bps, p.flow_quantum, p.limit), (0, 1514, 10240));
        assert_eq!(
            (p.cobalt.target_ns, p.cobalt.interval_ns),
            (5 * MS, 100 * MS)
        );
        assert_eq!(p.flow_mode, FlowMode::TRIPLE);
        assert_eq!(p.memlimit, 10240 * 1514);
        // 10 Mb/s = 1.25 MB/s: one 1514-B MTU takes 1.2112 ms (< 5 ms / 1.5, target stays);
        // quantum 1,250,000 >> 12 = 305 B; memory 4 x 1.25 MB/s x 100 ms = 500 kB -> 4 MiB.
        let p = cake(&[("bandwidth", ParamValue::Num(10e6))])
            .unwrap()
            .params()
            .clone();
        assert_eq!(p.cobalt.mtu_time_ns, 1_211_200);
        assert_eq!(
            (p.cobalt.target_ns, p.cobalt.interval_ns),
            (5 * MS, 100 * MS)
        );
        assert_eq!((p.flow_quantum, p.memlimit), (305, 4 << 20));
        // 1 Mb/s: MTU time 12.112 ms -> target 18.168 ms, interval 100 + 18.168 - 5 =
        // 113.168 ms; quantum 125,000 >> 12 = 30 -> 300.
        let p = cake(&[("bandwidth", ParamValue::Num(1e6))])
            .unwrap()
            .params()
            .clone();
        assert_eq!(p.cobalt.target_ns, 18_168_000);
        assert_eq!(p.cobalt.interval_ns, 113_168_000);
        assert_eq!(p.flow_quantum, 300);
    }

    /// Every flow of `flows` (flow id, source host, destination host) kept backlogged with
    /// 1500-B packets at one instant (no sojourn, so COBALT never signals); bytes sent by each
    /// source host over `n` dequeues.
    fn shares(flow_mode: &str, flows: &[(u32, u32, u32)], n: usize) -> Vec<(u32, f64)> {
        let mut q = cake(&[mode(flow_mode)]).unwrap();
        let mut rng = aqm::rng_from_seed(7);
        for &(f, s, d) in flows {
            for _ in 0..4 {
                q.enqueue_pkt(pkt(f, s, d), 0, &mut rng, &mut no_drop);
            }
        }
        let mut by_host = std::collections::BTreeMap::new();
        for _ in 0..n {
            let p = q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap();
            *by_host.entry(p.src).or_insert(0u64) += p.size as u64;
            q.enqueue_pkt(pkt(p.flow, p.src, p.dst), 0, &mut rng, &mut no_drop);
        }
        let total: u64 = by_host.values().sum();
        by_host
            .into_iter()
            .map(|(h, b)| (h, b as f64 / total as f64))
            .collect()
    }

    #[test]
    fn triple_isolate_shares_equally_between_source_hosts_whatever_their_flow_counts() {
        // Host 1 runs one flow, host 2 nine, each to its own destination (hosts 100..109).
        // Quantum = flow quantum / max(source's bulk flows, destination's bulk flows): host 1's
        // flow gets 1514 / 1, host 2's flows 1514 / 9 each: half the bytes each.
        let flows: Vec<_> = std::iter::once((0, 1, 100))
            .chain((1..10).map(|f| (f, 2, 100 + f)))
            .collect();
        let s = shares("triple-isolate", &flows, 200_000);
        assert!((s[0].1 - 0.5).abs() < 0.005, "{s:?}");
        // The same with dual-srchost.
        let s = shares("dual-srchost", &flows, 200_000);
        assert!((s[0].1 - 0.5).abs() < 0.005, "{s:?}");
        // Plain flow fairness: 1/10 for host 1.
        let s = shares("flows", &flows, 200_000);
        assert!((s[0].1 - 0.1).abs() < 0.005, "{s:?}");
    }

    #[test]
    fn to_one_destination_dual_srchost_shares_by_source_but_triple_isolate_by_flow() {
        // All ten flows to host 100. dual-srchost: loads 1 and 9 -> half each. triple-isolate
        // takes the larger of the source and destination loads: 10 for every flow (the
        // destination has ten bulk flows), so every flow gets 1/10 (as sch_cake.c computes
        // it: triple-isolate protects a host only against the larger of its two loads).
        let flows: Vec<_> = std::iter::once((0, 1, 100))
            .chain((1..10).map(|f| (f, 2, 100)))
            .collect();
        let s = shares("dual-srchost", &flows, 200_000);
        assert!((s[0].1 - 0.5).abs() < 0.005, "{s:?}");
        let s = shares("triple-isolate", &flows, 200_000);
        assert!((s[0].1 - 0.1).abs() < 0.005, "{s:?}");
        // dual-dsthost: one destination, so per-flow as well.
        let s = shares("dual-dsthost", &flows, 200_000);
        assert!((s[0].1 - 0.1).abs() < 0.005, "{s:?}");
    }

    /// Flow ids whose "flows"-mode hash falls in set `set` (queues 8 set .. 8 set + 7), and the
    /// queue each hashes to.
    fn flows_in_one_set(n: usize) -> Vec<(u32, usize)> {
        let mut by_set = std::collections::HashMap::<usize, Vec<(u32, usize)>>::new();
        for f in 0..100_000u32 {
            let r = mix32(f as u64, 0) as usize % CAKE_QUEUES;
            let v = by_set.entry(r / CAKE_SET_WAYS).or_default();
            v.push((f, r));
            if v.len() == n {
                return v.clone();
            }
        }
        unreachable!("100,000 flows fill some set")
    }

    #[test]
    fn set_associativity_gives_flows_of_one_set_their_own_queues_until_all_eight_are_busy() {
        let mut q = cake(&[mode("flows")]).unwrap();
        let mut rng = aqm::rng_from_seed(1);
        let flows = flows_in_one_set(9);
        // Two flows hashing to the same queue index still get two queues.
        let mut queues = Vec::new();
        for &(f, r) in &flows[..8] {
            let got = q.classify(&pkt(f, 1, 2));
            assert_eq!(got / CAKE_SET_WAYS, r / CAKE_SET_WAYS, "stays in its set");
            q.enqueue_pkt(pkt(f, 1, 2), 0, &mut rng, &mut no_drop);
            queues.push(q.classify(&pkt(f, 1, 2)));
        }
        let distinct: std::collections::HashSet<_> = queues.iter().collect();
        assert_eq!(distinct.len(), 8, "{queues:?}");
        let s = q.counters().clone();
        assert_eq!(s.way_collisions, 0);
        // The ninth flow of the set finds every way busy: it shares its own hash's queue.
        let ninth = q.classify(&pkt(flows[8].0, 1, 2));
        assert_eq!(ninth, flows[8].1);
        assert_eq!(q.counters().way_collisions, 1);
        // Emptied queues stay reserved (decaying) while COBALT's activity timeout runs, an
        // interval; visited after it, they leave and a new flow of the set takes a free way.
        let mut q = cake(&[mode("flows")]).unwrap();
        for &(f, _) in &flows[..8] {
            q.enqueue_pkt(pkt(f, 1, 2), 0, &mut rng, &mut no_drop);
        }
        while q.dequeue_pkt(0, &mut rng, &mut no_drop).is_some() {}
        let set = flows[0].1 / CAKE_SET_WAYS;
        let outside = (0..)
            .find(|&f| mix32(f as u64, 0) as usize % CAKE_QUEUES / CAKE_SET_WAYS != set)
            .unwrap();
        for _ in 0..10 {
            q.enqueue_pkt(pkt(outside, 1, 2), 200 * MS, &mut rng, &mut no_drop);
            q.dequeue_pkt(200 * MS, &mut rng, &mut no_drop).unwrap();
        }
        assert_eq!(q.flow_counts().2, 0, "no queue left decaying");
        let (c, m) = (q.counters().way_collisions, q.counters().way_misses);
        q.classify(&pkt(flows[8].0, 1, 2));
        assert_eq!(q.counters().way_collisions, c);
        assert_eq!(q.counters().way_misses, m + 1);
    }

    #[test]
    fn a_new_sparse_flow_is_served_before_the_bulk_ones() {
        let mut q = cake(&[mode("flows")]).unwrap();
        let mut rng = aqm::rng_from_seed(1);
        for _ in 0..20 {
            q.enqueue_pkt(pkt(1, 1, 2), 0, &mut rng, &mut no_drop);
            q.enqueue_pkt(pkt(2, 1, 2), 0, &mut rng, &mut no_drop);
        }
        for _ in 0..6 {
            q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap();
        }
        assert_eq!(q.flow_counts(), (0, 2, 0));
        q.enqueue_pkt(pkt(3, 1, 2), 0, &mut rng, &mut no_drop);
        assert_eq!(q.flow_counts(), (1, 2, 0));
        assert_eq!(q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap().flow, 3);
    }

    #[test]
    fn the_shaper_spaces_packets_by_their_adjusted_size_at_the_configured_rate() {
        let mut q = cake(&[
            ("bandwidth", ParamValue::Num(10e6)),
            ("framing", ParamValue::Str("atm".into())),
        ])
        .unwrap();
        let mut rng = aqm::rng_from_seed(1);
        for f in 0..3 {
            for _ in 0..10 {
                q.enqueue_pkt(pkt(f, 1, 2), 0, &mut rng, &mut no_drop);
            }
        }
        // 1500 B in ATM cells: 32 x 53 = 1696 B, 1.3568 ms at 10 Mb/s.
        assert!(q.dequeue_pkt(0, &mut rng, &mut no_drop).is_some());
        assert!(q.dequeue_pkt(1_356_799, &mut rng, &mut no_drop).is_none());
        assert_eq!(Scheduler::next_update(&q), Some(1_356_800));
        Scheduler::update(&mut q, 1_356_800, &mut rng);
        assert_eq!(Scheduler::next_update(&q), None);
        assert!(q.dequeue_pkt(1_356_800, &mut rng, &mut no_drop).is_some());
        // Thirty packets, dequeued whenever allowed: the last leaves at 29 x 1.3568 ms.
        let mut t = 1_356_800;
        let mut sent = 2;
        while sent < 30 {
            t = Scheduler::next_update(&q).unwrap_or(t);
            Scheduler::update(&mut q, t, &mut rng);
            if q.dequeue_pkt(t, &mut rng, &mut no_drop).is_some() {
                sent += 1;
            }
        }
        assert_eq!(t, 29 * 1_356_800);
    }

    #[test]
    fn above_the_limit_the_longest_queue_loses_its_head_and_its_blue_rises() {
        let mut q = cake(&[mode("flows"), ("limit", ParamValue::Num(10.0))]).unwrap();
        let mut rng = aqm::rng_from_seed(1);
        for _ in 0..7 {
            q.enqueue_pkt(pkt(1, 1, 2), 0, &mut rng, &mut no_drop);
        }
        for _ in 0..3 {
            q.enqueue_pkt(pkt(2, 1, 2), 0, &mut rng, &mut no_drop);
        }
        let mut dropped = Vec::new();
        q.enqueue_pkt(pkt(2, 1, 2), 10 * MS, &mut rng, &mut |p, why| {
            dropped.push((p.flow, why))
        });
        assert_eq!(dropped, vec![(1, SchedDrop::Overlimit)]);
        assert_eq!(
            (Scheduler::len_pkts(&q), q.counters().overlimit_drops),
            (10, 1)
        );
        // cobalt_queue_full on flow 1's queue at 10 ms: p_drop = 1/256.
        let q1 = q.classify(&pkt(1, 1, 2));
        assert_eq!(q.flows[q1].cvars.p_drop, 1.0 / 256.0);
        let q2 = q.classify(&pkt(2, 1, 2));
        assert_eq!(q.flows[q2].cvars.p_drop, 0.0);
    }

    #[test]
    fn cobalt_signals_the_standing_flow_only_and_never_drops_a_queues_last_packet() {
        let mut q = cake(&[mode("flows")]).unwrap();
        let mut rng = aqm::rng_from_seed(1);
        let ect = |f| Pkt {
            ect: true,
            ..pkt(f, 1, 2)
        };
        // Flow 1: 400 packets at t = 0, one sent per ms: its sojourn grows past 5 ms at 6 ms;
        // first signal an interval (99.999999 ms) later: marks, as it is ECN-capable.
        for _ in 0..400 {
            q.enqueue_pkt(ect(1), 0, &mut rng, &mut no_drop);
        }
        let mut marks = Vec::new();
        for k in 1..=300u64 {
            // Flow 2: one packet every 10 ms, served at once.
            if k % 10 == 0 {
                q.enqueue_pkt(ect(2), k * MS, &mut rng, &mut no_drop);
            }
            let p = q.dequeue_pkt(k * MS, &mut rng, &mut no_drop).unwrap();
            if p.ce {
                marks.push((p.flow, k));
            }
        }
        // Dropping state entered at 6 ms (sojourn 6 ms > 5): signals at 106, then the control
        // law: + 70.67 -> 176.67 (177), + 57.74 -> 234.41 (235), + 50 -> 284.41 (285) ms.
        assert_eq!(marks, vec![(1, 106), (1, 177), (1, 235), (1, 285)]);
        assert_eq!(q.counters().ecn_marks, 4);
        // A lone Not-ECT packet far above target, due a signal, is still sent.
        let mut q = cake(&[mode("flows")]).unwrap();
        q.enqueue_pkt(pkt(5, 1, 2), 0, &mut rng, &mut no_drop);
        let i = q.classify(&pkt(5, 1, 2));
        q.flows[i].cvars.count = 3;
        q.flows[i].cvars.dropping = true;
        q.flows[i].cvars.drop_next = 0;
        assert!(q.dequeue_pkt(500 * MS, &mut rng, &mut no_drop).is_some());
    }

    #[test]
    fn the_limit_holds_with_zero_size_packets() {
        let mut q = cake(&[mode("flows"), ("limit", ParamValue::Num(3.0))]).unwrap();
        let mut rng = aqm::rng_from_seed(1);
        let mut dropped = 0;
        for i in 0..10 {
            let mut p = pkt(i % 2, 1, 2);
            p.size = 0;
            q.enqueue_pkt(p, 0, &mut rng, &mut |_, _| dropped += 1);
            assert!(Scheduler::len_pkts(&q) <= 3);
        }
        assert_eq!(dropped, 7);
    }

    #[test]
    fn a_byte_buffer_bounds_the_bytes_held() {
        let m: ParamMap = [("flow_mode".to_string(), ParamValue::Str("flows".into()))].into();
        let l = LinkContext {
            buffer: aqm::params::Buffer::Bytes(15_000),
            ..LinkContext::default()
        };
        let mut q: Cake<Pkt> = build_cake(&m, &l).unwrap();
        assert_eq!(q.params().memlimit, 15_000);
        let mut rng = aqm::rng_from_seed(1);
        let mut dropped = 0;
        for i in 0..30 {
            q.enqueue_pkt(pkt(i % 3, 1, 2), 0, &mut rng, &mut |_, _| dropped += 1);
            assert!(Scheduler::len_bytes(&q) <= 15_000);
        }
        assert_eq!((Scheduler::len_pkts(&q), dropped), (10, 20));
    }

    #[test]
    fn packets_are_conserved() {
        let mut q = cake(&[
            ("limit", ParamValue::Num(50.0)),
            ("bandwidth", ParamValue::Num(50e6)),
        ])
        .unwrap();
        let mut rng = aqm::rng_from_seed(3);
        let (mut out, mut dropped) = (0u64, 0u64);
        for i in 0..20_000u32 {
            let t = i as u64 * 150_000;
            let mut p = pkt(i % 13, i % 3, 10 + i % 5);
            p.size = 100 + (i * 37) % 1400;
            q.enqueue_pkt(p, t, &mut rng, &mut |_, _| dropped += 1);
            if i % 2 == 0 {
                Scheduler::update(&mut q, t, &mut rng);
                out += q
                    .dequeue_pkt(t, &mut rng, &mut |_, _| dropped += 1)
                    .is_some() as u64;
            }
        }
        assert_eq!(
            q.counters().enqueued,
            out + dropped + Scheduler::len_pkts(&q) as u64
        );
        let mut t = 20_000 * 150_000;
        while Scheduler::len_pkts(&q) > 0 {
            t += MS;
            out += q
                .dequeue_pkt(t, &mut rng, &mut |_, _| dropped += 1)
                .is_some() as u64;
        }
        assert_eq!(Scheduler::len_bytes(&q), 0);
        assert_eq!(out + dropped, 20_000);
    }

    #[test]
    fn bad_parameters_are_named() {
        for (name, v, allowed) in [
            ("bandwidth", ParamValue::Num(-1.0), "[0, "),
            ("overhead", ParamValue::Num(300.0), "[-64, 256]"),
            ("mpu", ParamValue::Num(-1.0), "[0, 256]"),
            ("limit", ParamValue::Num(0.0), "[1, "),
            ("rtt", ParamValue::Num(0.0), "(0, 1]"),
            ("memlimit", ParamValue::Num(100.0), "[1514, "),
            (
                "flow_mode",
                ParamValue::Str("bogus".into()),
                "triple-isolate",
            ),
            ("framing", ParamValue::Str("adsl".into()), "atm"),
        ] {
            let e = cake(&[(name, v)]).unwrap_err();
            assert_eq!(e.param, name, "{e}");
            assert!(e.msg.contains(allowed), "{e}");
        }
    }
}
