//! `fq`: flow queueing with any AQM of the registry on each flow queue. Flows are hashed into
//! `flows` queues served by deficit round robin with RFC 8290's new/old lists and quantum
//! (s. 4.2); each queue has its own instance of the AQM named by `queue_aqm`, built once per
//! queue from the `queue.*` parameters by a factory ([`QueueAqmFactory`]: the registry's
//! [`aqm::build`] by default; [`build_with`] takes another, e.g. one building Python AQMs).
//! The registry's `codel` is the exception: its per-queue state lives in the queue's record and
//! its parameters are held once ([`super::fq_queue::CodelQueue`], the same functions as
//! [`aqm::codel::Codel`]; docs/algorithms/fq.md, "Per-flow memory").
//!
//! The per-queue AQM is driven as a single queue's would be (the call order of [`aqm::Aqm`]):
//! the arrival verdict against the flow queue's view before the packet joins, the dequeue
//! verdict at the head with its sojourn time (head drops loop, RFC 8289 s. 5.5), and the
//! periodic updates of all queues from one timer, as Linux's `fq_pie_timer` sweeps every flow
//! (net/sched/sch_fq_pie.c). On overflow the scheduler either drops from the head of the fattest
//! queue in a batch (RFC 8290 s. 4.1, Linux `fq_codel_drop`: `overflow = "fattest"`) or refuses
//! the arriving packet before its AQM sees it (Linux `fq_pie_qdisc_enqueue`: `"tail"`).
//!
//! Two presets keep Linux's names and flat parameters: `fq_codel` (= `fq` + `codel`, the
//! parameters of `aqm::fq_codel::FQ_CODEL_PARAMS`) and `fq_pie` (= `fq` + `pie`,
//! [`FQ_PIE_PARAMS`], Linux sch_fq_pie.c defaults); a third keeps ns-3's: `fq_cobalt`
//! (= `fq` + `cobalt`, [`FQ_COBALT_PARAMS`], ns-3.44 FqCobaltQueueDisc defaults).

use aqm::fq_codel::{flow_hash, FqPacket, QdiscInfo};
use aqm::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    ParamValue, Params,
};
use aqm::{Aqm, AqmRng, PacketMeta, Precedence, QueueView, Time, Verdict};
use std::collections::VecDeque;

use super::fq_queue::{CodelQueue, QueueAqm};
use super::{SchedDrop, Scheduler};

/// The AQMs a flow queue may run: every name of `aqm::REGISTRY` (checked by a test), one per line
/// so that `aqmlab new-aqm` adds its line as it adds the registry's.
#[rustfmt::skip]
pub const QUEUE_AQMS: &[&str] = &[
    "droptail",
    "red",
    "codel",
    "pie",
    "blue",
    "sred",
    "pi",
    "rem",
    "ared",
    "avq",
    "anaqm",
    "paqm",
    "lindrop",
    "laq",
    "apace",
    "modred",
    "dropfn",
    "cobalt",
];

/// `fq`'s own parameters; the per-queue AQM's are given as `queue.<name>` (in a scenario file,
/// the sub-table `[aqm.queue]`).
#[rustfmt::skip]
pub const FQ_PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "queue_aqm", kind: K::Choice(QUEUE_AQMS), default: D::Str("codel"), help: "the AQM run on every flow queue, by registry name; its parameters go in [aqm.queue] (queue.<name>)" },
    ParamSpec { name: "limit", kind: K::Int, default: D::Num(10240.0), help: "packets held in all queues together (RFC 8290 s. 5.2.3: 10240); default: the link's buffer in packets" },
    ParamSpec { name: "flows", kind: K::Int, default: D::Num(1024.0), help: "number of queues flows are hashed into (RFC 8290 s. 5.2.5: 1024)" },
    ParamSpec { name: "quantum", kind: K::Size, default: D::Num(1514.0), help: "bytes a queue may send per round, bytes (RFC 8290 s. 5.2.4: 1514)" },
    ParamSpec { name: "drop_batch", kind: K::Int, default: D::Num(64.0), help: "overflow = fattest: most packets dropped from the fattest queue at once (Linux sch_fq_codel.c: 64)" },
    ParamSpec { name: "overflow", kind: K::Choice(&["fattest", "tail"]), default: D::Str("fattest"), help: "above the limit: head drops from the fattest queue (RFC 8290 s. 4.1, Linux fq_codel) or drop the arriving packet (Linux fq_pie)" },
    ParamSpec { name: "aqm_backlog", kind: K::Choice(&["qdisc", "flow"]), default: D::Str("qdisc"), help: "the backlog the per-queue AQM's dequeue verdict sees: the whole qdisc's (Linux sch_fq_codel.c passes sch->qstats.backlog to CoDel) or its own queue's (Linux sch_fq_pie.c, ns-3 FqCoDelQueueDisc)" },
    ParamSpec { name: "memory_limit", kind: K::Size, default: D::Num(33554432.0), help: "arrivals while more than this many bytes are held are counted in overmemory, not dropped (Linux sch_fq_pie.c: 32 MB of skb truesize; wire bytes here)" },
    ParamSpec { name: "hash_seed", kind: K::Int, default: D::Num(0.0), help: "perturbation of the flow hash (Linux's perturbation): which flows share a queue" },
];

/// Registry entry of `fq`.
pub const FQ_INFO: QdiscInfo = QdiscInfo {
    name: "fq",
    summary: "Flow queueing: hashed per-flow queues, DRR with new-flow priority, any AQM per queue",
    source: "RFC 8290 (Hoeiland-Joergensen et al. 2018), s. 4.1, 4.2; Linux sch_fq_codel.c, sch_fq_pie.c",
    params: FQ_PARAMS,
};

/// FQ-PIE's parameters (Linux net/sched/sch_fq_pie.c `fq_pie_init`, `pie_params_init` in
/// include/net/pie.h).
#[rustfmt::skip]
pub const FQ_PIE_PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "limit", kind: K::Int, default: D::Num(10240.0), help: "packets held in all queues together; an arrival beyond is dropped (Linux: 10240); default: the link's buffer in packets" },
    ParamSpec { name: "flows", kind: K::Int, default: D::Num(1024.0), help: "number of queues flows are hashed into (Linux: 1024)" },
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.015), help: "PIE target queue delay of every queue, s (Linux: 15 ms)" },
    ParamSpec { name: "tupdate", kind: K::Duration, default: D::Num(0.015), help: "PIE probability update period, s (Linux: 15 ms)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Num(0.125), help: "PIE alpha, 1/s (Linux: 2 in units of 1/16)" },
    ParamSpec { name: "beta", kind: K::Real, default: D::Num(1.25), help: "PIE beta, 1/s (Linux: 20 in units of 1/16)" },
    ParamSpec { name: "quantum", kind: K::Size, default: D::Num(1514.0), help: "bytes a queue may send per round, bytes (Linux: psched_mtu, 1514 on Ethernet)" },
    ParamSpec { name: "mtu", kind: K::Size, default: D::Num(1514.0), help: "no early drop while a queue holds at most two of these, bytes (Linux pie_drop_early: 2 psched_mtu)" },
    ParamSpec { name: "memory_limit", kind: K::Size, default: D::Num(33554432.0), help: "arrivals while more than this is held are counted in overmemory, bytes (Linux: 32 MB of truesize, counted, not dropped)" },
    ParamSpec { name: "ecn_prob", kind: K::Real, default: D::Num(0.1), help: "with ecn, ECN-capable packets are marked while the queue's probability is at most this, dropped above (Linux: 10 %)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (Linux: off)" },
    ParamSpec { name: "dq_rate_estimator", kind: K::Bool, default: D::Bool(false), help: "queue delay from the departure rate (RFC 8033 s. 5.2) instead of timestamps (Linux: off)" },
    ParamSpec { name: "hash_seed", kind: K::Int, default: D::Num(0.0), help: "perturbation of the flow hash: which flows share a queue" },
];

/// Registry entry of `fq_pie`.
pub const FQ_PIE_INFO: QdiscInfo = QdiscInfo {
    name: "fq_pie",
    summary: "Flow Queue PIE: fq with PIE (RFC 8033) on every flow queue, Linux's defaults",
    source: "Linux net/sched/sch_fq_pie.c (Tahiliani et al.), include/net/pie.h; PIE: RFC 8033; DRR: RFC 8290 s. 4.2",
    params: FQ_PIE_PARAMS,
};

/// Builds the AQM of one flow queue from its name and parameters, once per queue when the
/// scheduler is built (never per packet), so that AQMs written outside the registry (Python)
/// can be plugged in the same way; `&mut aqm::build` is the registry's.
pub type QueueAqmFactory<'a> =
    dyn FnMut(&str, &ParamMap, &LinkContext) -> Result<Box<dyn Aqm>, ParamError> + 'a;
/// FQ-COBALT's flat parameters (ns-3.44 `FqCobaltQueueDisc` attributes and defaults,
/// src/traffic-control/model/fq-cobalt-queue-disc.cc `GetTypeId`, `CheckConfig`).
#[rustfmt::skip]
pub const FQ_COBALT_PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.005), help: "COBALT (CoDel) target sojourn time of every queue, s (ns-3 Target: 5 ms)" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.1), help: "COBALT (CoDel) interval, s (ns-3 Interval: 100 ms)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(true), help: "COBALT marks ECN-capable packets instead of dropping them; BLUE always drops (ns-3 UseEcn: true)" },
    ParamSpec { name: "increment", kind: K::Real, default: D::Num(1.0 / 256.0), help: "BLUE p_drop increment (ns-3 Increment: 1/256)" },
    ParamSpec { name: "decrement", kind: K::Real, default: D::Num(1.0 / 4096.0), help: "BLUE p_drop decrement when a queue is found empty (ns-3 Decrement: 1/4096)" },
    ParamSpec { name: "blue_threshold", kind: K::Duration, default: D::Num(0.4), help: "a sojourn above this raises the queue's p_drop, s (ns-3 BlueThreshold: 400 ms)" },
    ParamSpec { name: "limit", kind: K::Int, default: D::Num(10240.0), help: "packets held in all queues together; above it, head drops from the fattest queue (ns-3 MaxSize: 10240p); default: the link's buffer in packets" },
    ParamSpec { name: "flows", kind: K::Int, default: D::Num(1024.0), help: "number of queues flows are hashed into (ns-3 Flows: 1024)" },
    ParamSpec { name: "quantum", kind: K::Size, default: D::Num(1500.0), help: "bytes a queue may send per round, bytes (ns-3: the device's MTU, 1500 on a point-to-point link)" },
    ParamSpec { name: "drop_batch", kind: K::Int, default: D::Num(64.0), help: "most packets dropped from the fattest queue at once, or until half its bytes (ns-3 DropBatchSize: 64)" },
    ParamSpec { name: "hash_seed", kind: K::Int, default: D::Num(0.0), help: "perturbation of the flow hash: which flows share a queue (ns-3 Perturbation: 0)" },
];

/// Registry entry of `fq_cobalt`.
pub const FQ_COBALT_INFO: QdiscInfo = QdiscInfo {
    name: "fq_cobalt",
    summary: "Flow Queue COBALT: fq with COBALT (CoDel + BLUE) on every flow queue, ns-3's defaults",
    source: "ns-3.44 FqCobaltQueueDisc (src/traffic-control/model/fq-cobalt-queue-disc.cc); COBALT: Linux net/sched/sch_cake.c; DRR: RFC 8290 s. 4.2",
    params: FQ_COBALT_PARAMS,
};

/// What happens above the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Head drops from the queue with the most bytes (RFC 8290 s. 4.1).
    Fattest,
    /// The arriving packet is dropped (Linux sch_fq_pie.c).
    Tail,
}

/// `fq`'s configuration (the per-queue AQM's is its own).
#[derive(Clone, Debug, PartialEq)]
pub struct FqParams {
    /// Registry name of the per-queue AQM.
    pub queue_aqm: String,
    /// Its parameters.
    pub queue_params: ParamMap,
    /// Packet limit over all queues.
    pub limit: u32,
    /// Number of queues.
    pub flows: u32,
    /// DRR quantum, bytes.
    pub quantum: u32,
    /// Most packets dropped at once from the fattest queue.
    pub drop_batch: u32,
    /// Overflow policy.
    pub overflow: Overflow,
    /// The per-queue AQM's dequeue verdict sees the whole qdisc's backlog (`false`) or its own
    /// queue's (`true`).
    pub flow_backlog: bool,
    /// Bytes above which arrivals are counted in `overmemory`.
    pub memory_limit: u64,
    /// Hash perturbation.
    pub hash_seed: u64,
}

impl FqParams {
    /// Reads and validates `fq`'s parameters from a map holding its own keys and the per-queue
    /// AQM's as `queue.<name>`.
    pub fn from_map(m: &ParamMap) -> Result<Self, ParamError> {
        Self::parse(m, false)
    }

    /// As [`FqParams::from_map`], `external`: `queue_aqm` names an AQM built outside the
    /// registry (its factory checks the name), so it is not checked against [`QUEUE_AQMS`].
    fn parse(m: &ParamMap, external: bool) -> Result<Self, ParamError> {
        let mut own = ParamMap::new();
        let mut queue = ParamMap::new();
        for (k, v) in m {
            match k.strip_prefix("queue.") {
                Some(q) => {
                    queue.insert(q.to_string(), v.clone());
                }
                None => {
                    own.insert(k.clone(), v.clone());
                }
            }
        }
        let external_name = match own.remove("queue_aqm") {
            Some(ParamValue::Str(n)) if external => Some(n),
            Some(v) => {
                own.insert("queue_aqm".into(), v);
                None
            }
            None => None,
        };
        let p = Params::new(FQ_PARAMS, &own)?;
        let limit = p.num("limit")?;
        let flows = p.num("flows")?;
        let quantum = p.num("quantum")?;
        let drop_batch = p.num("drop_batch")?;
        let memory_limit = p.num("memory_limit")?;
        let hash_seed = p.num("hash_seed")?;
        check_range("limit", limit, 1.0, false, 2_147_483_647.0, false)?;
        check_range("flows", flows, 1.0, false, 65536.0, false)?;
        check_range("quantum", quantum, 1.0, false, 2_147_483_647.0, false)?;
        check_range("drop_batch", drop_batch, 1.0, false, 65536.0, false)?;
        check_range("memory_limit", memory_limit, 1.0, false, 1e15, false)?;
        check_range(
            "hash_seed",
            hash_seed,
            0.0,
            false,
            9_007_199_254_740_992.0,
            false,
        )?;
        Ok(FqParams {
            queue_aqm: external_name.unwrap_or_else(|| p.choice("queue_aqm")),
            queue_params: queue,
            limit: limit as u32,
            flows: flows as u32,
            quantum: quantum.round() as u32,
            drop_batch: drop_batch as u32,
            overflow: if p.choice("overflow") == "tail" {
                Overflow::Tail
            } else {
                Overflow::Fattest
            },
            flow_backlog: p.choice("aqm_backlog") == "flow",
            memory_limit: memory_limit.round() as u64,
            hash_seed: hash_seed as u64,
        })
    }
}

/// A preset's parameter renamed for `fq` (`None`: dropped, handled by the preset itself).
type Rename = (&'static str, &'static str);

/// `fq_codel`'s flat parameters as `fq`'s: CoDel's go to the queue.
const FQ_CODEL_RENAMES: &[Rename] = &[
    ("target", "queue.target"),
    ("interval", "queue.interval"),
    ("mtu", "queue.mtu"),
    ("ecn", "queue.ecn"),
    ("ce_threshold", "queue.ce_threshold"),
    ("ce_threshold_selector", "queue.ce_threshold_selector"),
    ("ce_threshold_mask", "queue.ce_threshold_mask"),
];

/// `fq_pie`'s flat parameters as `fq`'s.
const FQ_PIE_RENAMES: &[Rename] = &[
    ("target", "queue.target"),
    ("tupdate", "queue.t_update"),
    ("alpha", "queue.alpha"),
    ("beta", "queue.beta"),
    ("mtu", "queue.mean_pkt_size"),
    ("ecn", "queue.ecn"),
    ("ecn_prob", "queue.mark_ecnth"),
];

/// `fq_cobalt`'s flat parameters as `fq`'s: COBALT's go to the queue.
const FQ_COBALT_RENAMES: &[Rename] = &[
    ("target", "queue.target"),
    ("interval", "queue.interval"),
    ("ecn", "queue.ecn"),
    ("increment", "queue.increment"),
    ("decrement", "queue.decrement"),
    ("blue_threshold", "queue.blue_threshold"),
];

/// Translates a preset's flat parameters (checked against `spec`) to `fq`'s, adding `fixed`.
fn preset_map(
    spec: &'static [ParamSpec],
    renames: &[Rename],
    m: &ParamMap,
    fixed: &[(&str, ParamValue)],
) -> Result<ParamMap, ParamError> {
    Params::new(spec, m)?;
    let mut out: ParamMap = fixed
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    for (k, v) in m {
        let to = renames
            .iter()
            .find(|r| r.0 == k)
            .map_or(k.as_str(), |r| r.1);
        out.insert(to.to_string(), v.clone());
    }
    Ok(out)
}

/// An error of the per-queue AQM or of `fq`, named as the preset's user wrote it.
fn preset_err(renames: &[Rename], mut e: ParamError) -> ParamError {
    if let Some(r) = renames.iter().find(|r| r.1 == e.param) {
        e.param = r.0.to_string();
    }
    e
}

/// `fq_codel` (RFC 8290; Linux sch_fq_codel.c) as `fq` + `codel`: its CoDel marks ECN-capable
/// packets by default (RFC 8290 s. 5.2.6), `mtu_per_flow` selects the per-flow backlog.
pub fn fq_codel_map(m: &ParamMap) -> Result<ParamMap, ParamError> {
    let mut given = m.clone();
    let per_flow = matches!(given.remove("mtu_per_flow"), Some(ParamValue::Bool(true)));
    if let Some(v) = m.get("mtu_per_flow") {
        if !matches!(v, ParamValue::Bool(_)) {
            return Err(ParamError::new(
                "mtu_per_flow",
                format!("must be of kind bool (got {v:?})"),
            ));
        }
    }
    Params::new(aqm::fq_codel::FQ_CODEL_PARAMS, m)?;
    let backlog = if per_flow { "flow" } else { "qdisc" };
    preset_map(
        aqm::fq_codel::FQ_CODEL_PARAMS,
        FQ_CODEL_RENAMES,
        &given,
        &[
            ("queue_aqm", ParamValue::Str("codel".into())),
            ("queue.ecn", ParamValue::Bool(true)),
            ("aqm_backlog", ParamValue::Str(backlog.into())),
        ],
    )
}

/// `fq_pie` (Linux sch_fq_pie.c) as `fq` + `pie`: tail drop above the limit, each queue's PIE
/// sees its own backlog, derandomised early drops (Linux `pie_drop_early` always accumulates
/// `accu_prob`), a 150 ms burst allowance per queue (`pie_vars_init`), PIE's cap on increases
/// (`pie_calculate_probability`).
pub fn fq_pie_map(m: &ParamMap) -> Result<ParamMap, ParamError> {
    let mut given = m.clone();
    let dq = matches!(
        given.remove("dq_rate_estimator"),
        Some(ParamValue::Bool(true))
    );
    Params::new(FQ_PIE_PARAMS, m)?;
    let est = if dq { "dq_rate" } else { "timestamp" };
    preset_map(
        FQ_PIE_PARAMS,
        FQ_PIE_RENAMES,
        &given,
        &[
            ("queue_aqm", ParamValue::Str("pie".into())),
            ("overflow", ParamValue::Str("tail".into())),
            ("aqm_backlog", ParamValue::Str("flow".into())),
            ("queue.derandomize", ParamValue::Bool(true)),
            ("queue.estimator", ParamValue::Str(est.into())),
            ("queue.mean_pkt_size", ParamValue::Num(1514.0)),
        ],
    )
}

/// `fq_cobalt` (ns-3.44 FqCobaltQueueDisc) as `fq` + `cobalt`: head drops from the fattest
/// queue above the limit (`FqCobaltDrop`, which does not tell that queue's COBALT), each queue's
/// COBALT sees its own queue (ns-3 runs one CobaltQueueDisc per flow), ECN marking on
/// (`UseEcn` true, unlike the single-queue Cobalt), a quantum of the device's MTU (1500 B).
pub fn fq_cobalt_map(m: &ParamMap) -> Result<ParamMap, ParamError> {
    preset_map(
        FQ_COBALT_PARAMS,
        FQ_COBALT_RENAMES,
        m,
        &[
            ("queue_aqm", ParamValue::Str("cobalt".into())),
            ("queue.ecn", ParamValue::Bool(true)),
            ("aqm_backlog", ParamValue::Str("flow".into())),
            ("overflow", ParamValue::Str("fattest".into())),
            ("quantum", ParamValue::Num(1500.0)),
        ],
    )
}

/// Builds `fq`, `fq_codel`, `fq_pie` or `fq_cobalt` over packets of type `P` (`None`: not one
/// of them).
pub fn build<P: FqPacket + Send + std::fmt::Debug + 'static>(
    name: &str,
    m: &ParamMap,
    l: &LinkContext,
) -> Option<Result<Box<dyn Scheduler<P>>, ParamError>> {
    let (label, renames, map): (&'static str, &[Rename], Result<ParamMap, ParamError>) = match name
    {
        "fq" => ("fq", &[], Ok(m.clone())),
        "fq_codel" => ("fq_codel", FQ_CODEL_RENAMES, fq_codel_map(m)),
        "fq_pie" => ("fq_pie", FQ_PIE_RENAMES, fq_pie_map(m)),
        "fq_cobalt" => ("fq_cobalt", FQ_COBALT_RENAMES, fq_cobalt_map(m)),
        _ => return None,
    };
    let built = map
        .and_then(|m| FqParams::from_map(&m))
        .and_then(|p| {
            if p.queue_aqm == "codel" {
                Fq::new_codel(label, p, l).map(|q| Box::new(q) as Box<dyn Scheduler<P>>)
            } else {
                Fq::new(label, p, l, &mut aqm::build).map(|q| Box::new(q) as Box<dyn Scheduler<P>>)
            }
        })
        .map_err(|e| preset_err(renames, e));
    Some(built)
}

/// Builds `fq` whose flow queues each get an AQM from `factory` (called once per queue with
/// `queue_aqm` and the `queue.*` parameters), for AQMs outside the registry: `queue_aqm` is
/// the factory's to check. `None`: `name` is not `fq` (the presets fix their queue AQM).
pub fn build_with<P: FqPacket + Send + std::fmt::Debug + 'static>(
    name: &str,
    m: &ParamMap,
    l: &LinkContext,
    factory: &mut QueueAqmFactory<'_>,
) -> Option<Result<Box<dyn Scheduler<P>>, ParamError>> {
    if name != "fq" {
        return None;
    }
    let built = FqParams::parse(m, true)
        .and_then(|p| Fq::new("fq", p, l, factory))
        .map(|q| Box::new(q) as Box<dyn Scheduler<P>>);
    Some(built)
}

const NIL: u32 = u32::MAX;

/// Which scheduling list a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// Asks the CPU to bring the cache line at `p` in (x86-64 `prefetcht0`; elsewhere nothing). A
/// hint only: it reads nothing and cannot fault.
#[inline(always)]
fn prefetch<T: ?Sized>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] of every cache line `x` spans (a record or a packet may straddle two).
#[inline(always)]
fn prefetch_lines<T>(x: &T) {
    let p = x as *const T as *const u8;
    prefetch(p);
    prefetch(p.wrapping_add(std::mem::size_of::<T>() - 1));
}

/// The bookkeeping of one packet slot, apart from the packet (16 bytes: the links of 20,000
/// slots fit in L2, so linking an arrival behind its queue's tail does not fetch the tail
/// packet's cache lines): `next` links the queue's packets in arrival order (or free slots).
#[derive(Clone, Copy, Debug)]
struct SlotLink {
    enqueued_at: Time,
    next: u32,
}

/// One flow queue: a FIFO of slots, its DRR deficit, its list and its AQM, in one record aligned
/// to a cache line: 64 bytes with a boxed AQM, 128 with CoDel's state inline
/// ([`CodelQueue`]; tested in `flow_records_fit_their_cache_lines`).
#[derive(Debug)]
#[repr(C, align(64))]
struct FlowQueue<A> {
    head: u32,
    tail: u32,
    pkts: u32,
    list: List,
    bytes: u64,
    deficit: i64,
    /// When it last became empty (the AQM's `idle_since`).
    emptied_at: Time,
    aqm: A,
}

impl<A> FlowQueue<A> {
    /// The queue as its AQM sees it.
    fn view(&self) -> QueueView {
        QueueView {
            len_pkts: self.pkts,
            len_bytes: self.bytes,
            idle_since: (self.pkts == 0).then_some(self.emptied_at),
        }
    }
}

/// Counters (Linux `tc_fq_codel_xstats` / `tc_fq_pie_xstats`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FqStats {
    /// Packets offered to `enqueue`.
    pub enqueued: u64,
    /// Packets handed out by `dequeue`.
    pub dequeued: u64,
    /// Packets dropped by the per-queue AQMs (arrival and head drops).
    pub aqm_drops: u64,
    /// Packets dropped because the limit was exceeded.
    pub overlimit_drops: u64,
    /// Packets CE-marked by the per-queue AQMs.
    pub ecn_marks: u64,
    /// Times a queue joined the new-flow list.
    pub new_flow_count: u64,
    /// Arrivals while more than `memory_limit` bytes were held.
    pub overmemory: u64,
}

/// The `fq` queue discipline over packets of type `P`, each flow queue's AQM stored as `A` in
/// the queue's record ([`QueueAqm`]: a boxed [`Aqm`] of any kind, or CoDel's per-queue state
/// with the parameters held here once).
#[derive(Debug)]
pub struct Fq<P, A: QueueAqm = Box<dyn Aqm>> {
    name: &'static str,
    params: FqParams,
    /// What the queues' AQMs share (CoDel's parameters; nothing for boxed AQMs).
    shared: A::Shared,
    flows: Vec<FlowQueue<A>>,
    /// The packets, by slot.
    slots: Vec<Option<P>>,
    /// Their arrival times and links, by slot.
    links: Vec<SlotLink>,
    free: u32,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    len_pkts: u32,
    len_bytes: u64,
    /// The per-queue AQM is consulted at dequeue.
    wants_dequeue: bool,
    /// The next periodic update of the queues' AQMs (one timer for all).
    next_sweep: Option<Time>,
    stats: FqStats,
}

/// A per-queue AQM's parameter error named as `queue.<name>`.
fn queue_err(mut e: ParamError) -> ParamError {
    if !e.param.is_empty() {
        e.param = format!("queue.{}", e.param);
    }
    e
}

impl<P: FqPacket> Fq<P> {
    /// An empty `fq` reporting itself as `name`, one AQM per queue built by `factory`.
    pub fn new(
        name: &'static str,
        params: FqParams,
        l: &LinkContext,
        factory: &mut QueueAqmFactory<'_>,
    ) -> Result<Self, ParamError> {
        let n = params.flows as usize;
        let mut aqms = Vec::with_capacity(n);
        for _ in 0..n {
            let mut aqm = factory(&params.queue_aqm, &params.queue_params, l).map_err(queue_err)?;
            // `head` tells the AQM when it finds the queue empty (`on_empty`).
            aqm.set_scheduled();
            aqms.push(aqm);
        }
        Ok(Self::with_queues(name, params, (), aqms))
    }
}

impl<P: FqPacket> Fq<P, CodelQueue> {
    /// An empty `fq` + `codel` reporting itself as `name`: the registry's CoDel on every queue
    /// (the parameters read as `aqm::build("codel", ..)` reads them), its parameters held once,
    /// each queue's state inline in the queue's record.
    pub fn new_codel(
        name: &'static str,
        params: FqParams,
        l: &LinkContext,
    ) -> Result<Self, ParamError> {
        let p = aqm::codel::CodelParams::from_map(&params.queue_params, l).map_err(queue_err)?;
        let n = params.flows as usize;
        Ok(Self::with_queues(
            name,
            params,
            p,
            vec![CodelQueue::default(); n],
        ))
    }
}

impl<P: FqPacket, A: QueueAqm> Fq<P, A> {
    /// An empty `fq` with the queues' AQMs `aqms` (one per queue) sharing `shared`.
    fn with_queues(name: &'static str, params: FqParams, shared: A::Shared, aqms: Vec<A>) -> Self {
        let flows: Vec<FlowQueue<A>> = aqms
            .into_iter()
            .map(|aqm| FlowQueue {
                head: NIL,
                tail: NIL,
                pkts: 0,
                bytes: 0,
                deficit: 0,
                list: List::None,
                emptied_at: 0,
                aqm,
            })
            .collect();
        let n = flows.len();
        let wants_dequeue = flows[0].aqm.wants_dequeue(&shared);
        let next_sweep = flows
            .iter()
            .filter_map(|f| f.aqm.next_update(&shared))
            .min();
        Fq {
            name,
            shared,
            flows,
            slots: Vec::with_capacity((params.limit as usize + 1).min(1 << 16)),
            links: Vec::with_capacity((params.limit as usize + 1).min(1 << 16)),
            free: NIL,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            len_pkts: 0,
            len_bytes: 0,
            wants_dequeue,
            next_sweep,
            stats: FqStats::default(),
            params,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &FqParams {
        &self.params
    }

    /// The counters.
    pub fn fq_stats(&self) -> &FqStats {
        &self.stats
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

    /// The counters of queue `idx`'s AQM ([`Aqm::stats`]).
    pub fn queue_aqm_stats(&self, idx: usize) -> Vec<(&'static str, f64)> {
        self.flows[idx].aqm.stats(&self.shared)
    }

    /// Queues on the new-flow list and on the old-flow list.
    pub fn list_lens(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }

    fn meta(pkt: &P) -> PacketMeta {
        PacketMeta {
            flow: pkt.flow_id(),
            size_bytes: pkt.size_bytes(),
            ecn: pkt.ecn(),
            precedence: Precedence::Out,
        }
    }

    fn push(&mut self, idx: usize, pkt: P, now: Time) {
        let size = pkt.size_bytes() as u64;
        let link = SlotLink {
            enqueued_at: now,
            next: NIL,
        };
        let s = if self.free != NIL {
            let s = self.free;
            self.free = self.links[s as usize].next;
            self.slots[s as usize] = Some(pkt);
            self.links[s as usize] = link;
            s
        } else {
            self.slots.push(Some(pkt));
            self.links.push(link);
            (self.slots.len() - 1) as u32
        };
        let f = &mut self.flows[idx];
        if f.tail == NIL {
            f.head = s;
        } else {
            self.links[f.tail as usize].next = s;
        }
        f.tail = s;
        f.pkts += 1;
        f.bytes += size;
        self.len_pkts += 1;
        self.len_bytes += size;
    }

    /// Removes the head packet of queue `idx` at `now`; returns it with its arrival time.
    fn pop(&mut self, idx: usize, now: Time) -> Option<(P, Time)> {
        let (s, at) = self.unlink(idx, now)?;
        Some((self.take(s), at))
    }

    /// The packet of slot `s`, unlinked by [`Fq::unlink`].
    #[inline]
    fn take(&mut self, s: u32) -> P {
        self.slots[s as usize]
            .take()
            .expect("an unlinked slot holds its packet until taken")
    }

    /// Unlinks the head packet of queue `idx` at `now` and counts it out, leaving it in its slot
    /// (now the first free one) for [`Fq::take`] before the next `push`: the AQM reads it there
    /// instead of a copy. Returns the slot and the packet's arrival time.
    fn unlink(&mut self, idx: usize, now: Time) -> Option<(u32, Time)> {
        let f = &mut self.flows[idx];
        if f.head == NIL {
            return None;
        }
        let s = f.head;
        let size = self.slots[s as usize]
            .as_ref()
            .expect("a linked slot holds a packet")
            .size_bytes() as u64;
        let link = &mut self.links[s as usize];
        let at = link.enqueued_at;
        f.head = link.next;
        if f.head == NIL {
            f.tail = NIL;
        }
        link.next = self.free;
        self.free = s;
        f.pkts -= 1;
        f.bytes -= size;
        if f.pkts == 0 {
            f.emptied_at = now;
        }
        self.len_pkts -= 1;
        self.len_bytes -= size;
        Some((s, at))
    }

    /// A packet arrives at `now`: the flow queue's AQM decides on it against the queue before it
    /// joins (a drop goes to `on_drop`, a mark sets CE); admitted, it joins its queue, which
    /// joins the new-flow list with a full quantum if it was on no list (RFC 8290 s. 4.1). Above
    /// the limit: a batch of head drops from the fattest queue, or (`tail`, checked first, as
    /// Linux fq_pie does before PIE sees the packet) the arriving packet is dropped.
    pub fn enqueue_pkt(
        &mut self,
        mut pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) {
        let idx = self.queue_of(pkt.flow_id());
        self.stats.enqueued += 1;
        if self.len_bytes > self.params.memory_limit {
            self.stats.overmemory += 1;
        }
        let meta = Self::meta(&pkt);
        if self.params.overflow == Overflow::Tail && self.len_pkts >= self.params.limit {
            let f = &mut self.flows[idx];
            f.aqm.on_overflow(&self.shared, &meta, &f.view(), now);
            self.stats.overlimit_drops += 1;
            on_drop(pkt, SchedDrop::Overlimit);
            return;
        }
        let f = &mut self.flows[idx];
        match f.aqm.enqueue(&self.shared, &meta, &f.view(), now, rng) {
            Verdict::Drop => {
                self.stats.aqm_drops += 1;
                on_drop(pkt, SchedDrop::Aqm);
                return;
            }
            Verdict::Mark => {
                pkt.set_ce();
                self.stats.ecn_marks += 1;
            }
            Verdict::Admit | Verdict::Throttle => {}
        }
        self.push(idx, pkt, now);
        let f = &mut self.flows[idx];
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.params.quantum as i64;
            self.new_flows.push_back(idx as u32);
            self.stats.new_flow_count += 1;
        }
        if self.len_pkts > self.params.limit {
            self.drop_from_fattest(now, on_drop);
        }
    }

    /// Overflow (RFC 8290 s. 4.1; batch as Linux `fq_codel_drop`): head drops from the queue with
    /// the most bytes until `drop_batch` packets or half its bytes are gone; its AQM hears of
    /// them ([`Aqm::on_pushout`]: CoDel's count grows by them, as in Linux).
    fn drop_from_fattest(&mut self, now: Time, on_drop: &mut dyn FnMut(P, SchedDrop)) {
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
        let mut n = 0u32;
        while n < self.params.drop_batch && (n == 0 || dropped_bytes < threshold) {
            let Some((pkt, _)) = self.pop(idx, now) else {
                break;
            };
            dropped_bytes += pkt.size_bytes() as u64;
            n += 1;
            on_drop(pkt, SchedDrop::Overlimit);
        }
        self.flows[idx].aqm.on_pushout(&self.shared, n, now);
        self.stats.overlimit_drops += n as u64;
    }

    /// The link asks for a packet at `now` (RFC 8290 s. 4.2): the first queue of the new-flow
    /// list, else of the old-flow list; a queue whose deficit is spent gets a quantum more and
    /// goes to the end of the old list; its AQM decides on the head (head drops to `on_drop`);
    /// an emptied new queue moves to the old list (unless that is empty), an emptied old queue
    /// leaves the lists.
    pub fn dequeue_pkt(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
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
            match self.head(idx, now, rng, on_drop) {
                Some(pkt) => {
                    self.flows[idx].deficit -= pkt.size_bytes() as i64;
                    self.stats.dequeued += 1;
                    self.prefetch_next();
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

    /// A hint to the CPU, no effect on results: what the next dequeues will read. With
    /// thousands of active queues each queue's record, AQM state and head slot have left the
    /// cache since its last turn (docs/benchmarks.md, "`fq` with 10,000 flows"): the record of
    /// the queue after the next one, and the next queue's head slot and AQM state (its record,
    /// prefetched by the previous call, tells where they are).
    #[inline]
    fn prefetch_next(&self) {
        let mut next = self.new_flows.iter().chain(self.old_flows.iter()).skip(1);
        let (Some(&n1), n2) = (next.next(), next.next()) else {
            return;
        };
        if let Some(&n2) = n2 {
            prefetch_lines(&self.flows[n2 as usize]);
        }
        let f = &self.flows[n1 as usize];
        if let Some(a) = f.aqm.state_addr() {
            prefetch(a);
        }
        if let Some(slot) = self.slots.get(f.head as usize) {
            prefetch_lines(slot);
        }
    }

    fn pop_list_front(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// The AQM of queue `idx` on its head (RFC 8289 s. 5.5 for CoDel): drops heads until one may
    /// be sent (CE-marked if the AQM marks it), or the queue is empty.
    fn head(
        &mut self,
        idx: usize,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
        loop {
            let Some((s, at)) = self.unlink(idx, now) else {
                self.flows[idx].aqm.on_empty(&self.shared, now);
                return None;
            };
            if !self.wants_dequeue {
                return Some(self.take(s));
            }
            let meta = Self::meta(
                self.slots[s as usize]
                    .as_ref()
                    .expect("an unlinked slot holds its packet until taken"),
            );
            let f = &mut self.flows[idx];
            let view = if self.params.flow_backlog {
                f.view()
            } else {
                QueueView {
                    len_pkts: self.len_pkts,
                    len_bytes: self.len_bytes,
                    idle_since: None,
                }
            };
            let sojourn = now.saturating_sub(at);
            match f.aqm.dequeue(&self.shared, &meta, sojourn, &view, now, rng) {
                Verdict::Drop => {
                    self.stats.aqm_drops += 1;
                    let pkt = self.take(s);
                    on_drop(pkt, SchedDrop::Aqm);
                }
                Verdict::Mark => {
                    let mut pkt = self.take(s);
                    pkt.set_ce();
                    self.stats.ecn_marks += 1;
                    return Some(pkt);
                }
                Verdict::Admit | Verdict::Throttle => return Some(self.take(s)),
            }
        }
    }

    /// The periodic update at `now` (Linux `fq_pie_timer`): every queue whose AQM is due is
    /// updated with its own queue's view.
    pub fn sweep(&mut self, now: Time) {
        let mut next: Option<Time> = None;
        for f in &mut self.flows {
            if let Some(u) = f.aqm.next_update(&self.shared) {
                if u <= now {
                    let v = f.view();
                    f.aqm.update(&self.shared, &v, now);
                }
                if let Some(u) = f.aqm.next_update(&self.shared) {
                    next = Some(next.map_or(u, |n: Time| n.min(u)));
                }
            }
        }
        self.next_sweep = next;
    }
}

impl<P: FqPacket + Send + std::fmt::Debug, A: QueueAqm> Scheduler<P> for Fq<P, A> {
    fn name(&self) -> &'static str {
        self.name
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
        self.slots.iter().filter_map(Option::as_ref).for_each(f);
    }

    /// The counters; the per-queue AQM's drops are named `codel_drops` under CoDel, as FQ-CoDel
    /// has always reported them, `aqm_drops` otherwise; `overmemory` with tail overflow only.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let drops = if self.params.queue_aqm == "codel" {
            "codel_drops"
        } else {
            "aqm_drops"
        };
        let mut v = vec![
            ("enqueued", s.enqueued as f64),
            ("dequeued", s.dequeued as f64),
            (drops, s.aqm_drops as f64),
            ("overlimit_drops", s.overlimit_drops as f64),
            ("ecn_marks", s.ecn_marks as f64),
            ("new_flow_count", s.new_flow_count as f64),
            ("new_flows_len", self.new_flows.len() as f64),
            ("old_flows_len", self.old_flows.len() as f64),
        ];
        if self.params.overflow == Overflow::Tail {
            v.push(("overmemory", s.overmemory as f64));
        }
        v
    }

    fn next_update(&self) -> Option<Time> {
        self.next_sweep
    }

    fn update(&mut self, now: Time, _rng: &mut AqmRng) {
        self.sweep(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::{rng_from_seed, Ecn};

    const MS: Time = 1_000_000;

    #[derive(Debug, Clone, PartialEq)]
    struct Pkt {
        flow: u32,
        size: u32,
        id: u32,
        ecn: Ecn,
    }

    impl FqPacket for Pkt {
        fn flow_id(&self) -> u32 {
            self.flow
        }
        fn size_bytes(&self) -> u32 {
            self.size
        }
        fn ecn(&self) -> Ecn {
            self.ecn
        }
        fn set_ce(&mut self) {
            self.ecn = Ecn::Ce;
        }
    }

    fn pkt(flow: u32, size: u32, id: u32) -> Pkt {
        Pkt {
            flow,
            size,
            id,
            ecn: Ecn::NotEct,
        }
    }

    fn map(pairs: &[(&str, ParamValue)]) -> ParamMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn sched(
        name: &str,
        pairs: &[(&str, ParamValue)],
    ) -> Result<Box<dyn Scheduler<Pkt>>, ParamError> {
        build::<Pkt>(name, &map(pairs), &LinkContext::default()).expect("a scheduler")
    }

    fn fq(pairs: &[(&str, ParamValue)]) -> Fq<Pkt> {
        let p = FqParams::from_map(&map(pairs)).unwrap();
        Fq::new("fq", p, &LinkContext::default(), &mut aqm::build).unwrap()
    }

    fn no_drop(_: Pkt, _: SchedDrop) {
        panic!("unexpected drop");
    }

    fn s(x: &str) -> ParamValue {
        ParamValue::Str(x.into())
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    #[test]
    fn queue_aqms_are_the_registry() {
        let names: Vec<&str> = aqm::REGISTRY.iter().map(|a| a.name).collect();
        assert_eq!(names, QUEUE_AQMS);
    }

    /// `build_with`: the factory is called once per flow queue with the external name and the
    /// `queue.*` parameters (not checked against the registry); the presets are not its.
    #[test]
    fn build_with_calls_the_factory_once_per_queue() {
        let mut calls = Vec::new();
        let mut f = |name: &str, m: &ParamMap, l: &LinkContext| {
            calls.push((name.to_string(), m.get("x").cloned()));
            aqm::build("droptail", &ParamMap::new(), l)
        };
        let m = map(&[
            ("queue_aqm", s("ext:0")),
            ("flows", n(7.0)),
            ("queue.x", n(3.0)),
        ]);
        let q = build_with::<Pkt>("fq", &m, &LinkContext::default(), &mut f).unwrap();
        assert!(q.is_ok());
        assert_eq!(calls.len(), 7);
        assert!(calls.iter().all(|c| c == &("ext:0".into(), Some(n(3.0)))));
        let mut g =
            |_: &str, _: &ParamMap, l: &LinkContext| aqm::build("codel", &ParamMap::new(), l);
        assert!(build_with::<Pkt>("fq_codel", &m, &LinkContext::default(), &mut g).is_none());
        // Without the factory, the external name is refused by the registry's choice.
        assert!(sched("fq", &[("queue_aqm", s("ext:0"))]).is_err());
    }

    /// Hand-worked DRR (RFC 8290 s. 4.2) with quantum 1000 and two backlogged flows of 600-B
    /// (flow A) and 1000-B (flow B) packets, all arrived at t = 0 (sojourn 0: no AQM signal).
    /// Both start on the new list with deficit 1000:
    ///  A: 1000 -> sends 600 (400) -> sends 600 (-200) -> spent: +1000 = 800, to old list.
    ///  B: 1000 -> sends 1000 (0) -> spent: +1000 = 1000, to old list.
    ///  A: 800 -> 600 (200) -> 600 (-400) -> +1000 = 600, back of the list.
    ///  B: 1000 -> 1000 (0) -> +1000.  A: 600 -> 600 (0) -> +1000 = 1000.  B: 1000 (0).
    ///  A: 1000 -> 600 (400) -> 600 (-200) ...
    /// Order: A A B A A B A B A A B; bytes after it: A 4200, B 4000 (within one packet).
    #[test]
    fn drr_serves_unequal_packet_sizes_by_bytes_as_worked_by_hand() {
        let mut q = fq(&[("quantum", n(1000.0)), ("queue_aqm", s("droptail"))]);
        let (a, b) = (1, 2);
        assert_ne!(q.queue_of(a), q.queue_of(b));
        let mut rng = rng_from_seed(1);
        for i in 0..20 {
            q.enqueue_pkt(pkt(a, 600, i), 0, &mut rng, &mut no_drop);
        }
        for i in 0..20 {
            q.enqueue_pkt(pkt(b, 1000, i), 0, &mut rng, &mut no_drop);
        }
        let order: String = (0..11)
            .map(|_| {
                let p = q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap();
                if p.flow == a {
                    'A'
                } else {
                    'B'
                }
            })
            .collect();
        assert_eq!(order, "AABAABABAAB");
    }

    #[test]
    fn drr_gives_backlogged_flows_equal_bytes_whatever_their_packet_sizes() {
        let mut q = fq(&[]);
        let mut rng = rng_from_seed(1);
        let size = |f: u32| if f == 1 { 1500 } else { 300 };
        for i in 0..20 {
            for f in [1, 2] {
                q.enqueue_pkt(pkt(f, size(f), i), 0, &mut rng, &mut no_drop);
            }
        }
        let mut bytes = [0u64; 3];
        let mut max_gap = 0i64;
        for i in 0..100_000 {
            let p = q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap();
            bytes[p.flow as usize] += p.size as u64;
            max_gap = max_gap.max((bytes[1] as i64 - bytes[2] as i64).abs());
            q.enqueue_pkt(pkt(p.flow, p.size, 100 + i), 0, &mut rng, &mut no_drop);
        }
        // Never more than a quantum plus a packet apart; equal over the long run.
        assert!(max_gap <= 1514 + 1500, "{max_gap}");
        assert!(
            (bytes[1] as f64 / bytes[2] as f64 - 1.0).abs() < 0.001,
            "{bytes:?}"
        );
    }

    #[test]
    fn a_new_sparse_flow_is_served_before_the_backlogged_ones() {
        let mut q = fq(&[]);
        let mut rng = rng_from_seed(1);
        for i in 0..50 {
            q.enqueue_pkt(pkt(1, 1500, i), 0, &mut rng, &mut no_drop);
            q.enqueue_pkt(pkt(2, 1500, i), 0, &mut rng, &mut no_drop);
        }
        for _ in 0..10 {
            q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap();
        }
        assert_eq!(q.list_lens(), (0, 2));
        q.enqueue_pkt(pkt(3, 100, 0), 0, &mut rng, &mut no_drop);
        assert_eq!(q.list_lens(), (1, 2));
        assert_eq!(q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap().flow, 3);
        // Emptied while the old list is not empty: it moves there rather than leaving.
        assert_ne!(q.dequeue_pkt(0, &mut rng, &mut no_drop).unwrap().flow, 3);
        assert_eq!(q.list_lens(), (0, 3));
    }

    /// Hand-worked CoDel drop times on one queue of `fq` + `codel` (same numbers as
    /// aqm::fq_codel's test): flow 1's head waits 5 ms at 5 ms (first_above_time 105 ms); drops
    /// at 105, 205, 276 (205 + 70.7), 334 (+ 57.7), 384 (+ 50) ms, none from the sparse flow 2.
    #[test]
    fn codel_drops_from_a_standing_queue_but_not_from_a_sparse_flow() {
        let mut q = fq(&[("queue.ecn", ParamValue::Bool(false))]);
        let mut rng = rng_from_seed(1);
        for i in 0..2000 {
            q.enqueue_pkt(pkt(1, 1000, i), 0, &mut rng, &mut no_drop);
        }
        let mut drops = Vec::new();
        for k in 1..=400u64 {
            let now = k * MS;
            if k % 10 == 0 {
                q.enqueue_pkt(pkt(2, 100, k as u32), now, &mut rng, &mut no_drop);
            }
            q.dequeue_pkt(now, &mut rng, &mut |p, why| drops.push((p.flow, k, why)));
        }
        assert!(drops.iter().all(|d| d.0 == 1 && d.2 == SchedDrop::Aqm));
        let at: Vec<u64> = drops.iter().map(|d| d.1).collect();
        assert_eq!(at, vec![105, 205, 276, 334, 384]);
    }

    /// Linux fq_codel's ce_threshold: with a 1 ms threshold and selector/mask 1/1 (L4S), an
    /// ECT(1) packet that waited 2 ms is CE-marked though CoDel is far from dropping (its
    /// target is 5 ms); an ECT(0) packet that waited as long is not; with no selector both are;
    /// a packet that waited 1 ms exactly is not (strictly after, `codel_time_after`).
    #[test]
    fn ce_threshold_marks_selected_packets_above_the_threshold() {
        let run = |pairs: &[(&str, ParamValue)], ecn: Ecn, wait: Time| -> (Ecn, f64) {
            let mut q = sched("fq_codel", pairs).unwrap();
            let mut rng = rng_from_seed(1);
            q.enqueue(
                Pkt {
                    ecn,
                    ..pkt(1, 1000, 0)
                },
                0,
                &mut rng,
                &mut no_drop,
            );
            let p = q.dequeue(wait, &mut rng, &mut no_drop).unwrap();
            let marks = q.stats().iter().find(|s| s.0 == "ecn_marks").unwrap().1;
            (p.ecn, marks)
        };
        let l4s = [
            ("ce_threshold", n(0.001)),
            ("ce_threshold_selector", n(1.0)),
            ("ce_threshold_mask", n(1.0)),
        ];
        assert_eq!(run(&l4s, Ecn::Ect1, 2 * MS), (Ecn::Ce, 1.0));
        assert_eq!(run(&l4s, Ecn::Ect0, 2 * MS), (Ecn::Ect0, 0.0));
        assert_eq!(run(&l4s, Ecn::Ect1, MS), (Ecn::Ect1, 0.0));
        assert_eq!(run(&l4s[..1], Ecn::Ect0, 2 * MS), (Ecn::Ce, 1.0));
        assert_eq!(run(&l4s[..1], Ecn::NotEct, 2 * MS), (Ecn::NotEct, 0.0));
        // Without a threshold nothing is marked below CoDel's target.
        assert_eq!(run(&[], Ecn::Ect1, 2 * MS), (Ecn::Ect1, 0.0));
    }

    /// fq_pie (Linux sch_fq_pie.c): the arriving packet is dropped at the limit (tail), the
    /// others stay; every queue's PIE is updated by one timer every 15 ms.
    #[test]
    fn fq_pie_tail_drops_at_the_limit_and_updates_every_queue() {
        let mut q = sched("fq_pie", &[("limit", n(3.0)), ("flows", n(4.0))]).unwrap();
        let mut rng = rng_from_seed(1);
        let mut dropped = Vec::new();
        for i in 0..5 {
            q.enqueue(pkt(i % 2, 1000, i), 0, &mut rng, &mut |p, why| {
                dropped.push((p.id, why))
            });
        }
        assert_eq!(
            dropped,
            vec![(3, SchedDrop::Overlimit), (4, SchedDrop::Overlimit)]
        );
        assert_eq!(q.len_pkts(), 3);
        assert_eq!(q.next_update(), Some(15 * MS));
        q.update(15 * MS, &mut rng);
        assert_eq!(q.next_update(), Some(30 * MS));
    }

    #[test]
    fn fq_pie_defaults_are_linuxs() {
        let m = fq_pie_map(&ParamMap::new()).unwrap();
        let p = FqParams::from_map(&m).unwrap();
        assert_eq!((p.limit, p.flows, p.quantum), (10240, 1024, 1514));
        assert_eq!(p.memory_limit, 32 << 20);
        assert_eq!((p.overflow, p.flow_backlog), (Overflow::Tail, true));
        let pie = aqm::pie::PieParams::from_map(&p.queue_params, &LinkContext::default()).unwrap();
        assert_eq!((pie.target_ns, pie.t_update_ns), (15 * MS, 15 * MS));
        assert_eq!((pie.alpha, pie.beta), (2.0 / 16.0, 20.0 / 16.0));
        assert_eq!(
            (pie.ecn, pie.mark_ecnth, pie.derandomize),
            (false, 0.1, true)
        );
        assert_eq!(pie.mean_pkt_size, 1514.0);
        assert_eq!(pie.estimator, aqm::pie::Estimator::Timestamp);
    }

    /// ns-3.44 FqCobaltQueueDisc's attribute defaults (fq-cobalt-queue-disc.cc `GetTypeId`):
    /// MaxSize 10240p, Flows 1024, DropBatchSize 64, Perturbation 0, UseEcn true, Target 5 ms,
    /// Interval 100 ms, Increment 1/256, Decrement 1/4096, BlueThreshold 400 ms; the quantum is
    /// the device's MTU (`CheckConfig`), 1500 B on a point-to-point link; head drops from the
    /// fattest queue (`FqCobaltDrop`); each queue is its own CobaltQueueDisc.
    #[test]
    fn fq_cobalt_defaults_are_ns3s() {
        let m = fq_cobalt_map(&ParamMap::new()).unwrap();
        let p = FqParams::from_map(&m).unwrap();
        assert_eq!(p.queue_aqm, "cobalt");
        assert_eq!((p.limit, p.flows, p.quantum), (10240, 1024, 1500));
        assert_eq!((p.drop_batch, p.hash_seed), (64, 0));
        assert_eq!((p.overflow, p.flow_backlog), (Overflow::Fattest, true));
        let c =
            aqm::cobalt::CobaltParams::from_map(&p.queue_params, &LinkContext::default()).unwrap();
        assert_eq!((c.target_ns, c.interval_ns), (5 * MS, 100 * MS));
        assert_eq!((c.p_inc, c.p_dec), (1.0 / 256.0, 1.0 / 4096.0));
        assert_eq!(
            (c.blue_threshold_ns, c.ecn, c.mtu_time_ns),
            (400 * MS, true, 0)
        );
        // Given values override the preset's fixed ones.
        let m = fq_cobalt_map(&map(&[
            ("ecn", ParamValue::Bool(false)),
            ("quantum", n(300.0)),
        ]))
        .unwrap();
        let p = FqParams::from_map(&m).unwrap();
        assert_eq!(p.quantum, 300);
        assert_eq!(p.queue_params.get("ecn"), Some(&ParamValue::Bool(false)));
    }

    /// The preset is `fq` + `cobalt` spelled out: the same packets in, the same packets out, the
    /// same drops and marks, the same counters. A standing queue of ECN-capable packets from one
    /// flow (sojourn 20 ms > target) is marked by COBALT's CoDel, not dropped, as ns-3's
    /// FqCobalt does with UseEcn on; a second, Not-ECT flow's standing queue is dropped from.
    #[test]
    fn fq_cobalt_is_fq_with_cobalt_spelled_out_and_marks_by_default() {
        let preset = sched("fq_cobalt", &[("limit", n(200.0))]).unwrap();
        let spelled = sched(
            "fq",
            &[
                ("queue_aqm", s("cobalt")),
                ("aqm_backlog", s("flow")),
                ("quantum", n(1500.0)),
                ("limit", n(200.0)),
                ("queue.ecn", ParamValue::Bool(true)),
            ],
        )
        .unwrap();
        let run = |mut q: Box<dyn Scheduler<Pkt>>| {
            let mut rng = rng_from_seed(7);
            let mut log = Vec::new();
            let mut id = 0;
            // Two flows send a 1000-B packet every 0.5 ms each into a link that takes one
            // packet every 1 ms: a standing queue fills the limit; 2 s in all.
            let mut t = 0;
            while t < 2_000 * MS {
                for flow in [1, 2] {
                    let ecn = if flow == 1 { Ecn::Ect0 } else { Ecn::NotEct };
                    let p = Pkt {
                        flow,
                        size: 1000,
                        id,
                        ecn,
                    };
                    id += 1;
                    q.enqueue(p, t, &mut rng, &mut |p, why| {
                        log.push((t, p.id, Some(why), p.ecn))
                    });
                }
                if t % MS == 0 {
                    if let Some(p) = q.dequeue(t, &mut rng, &mut |p, why| {
                        log.push((t, p.id, Some(why), p.ecn))
                    }) {
                        log.push((t, p.id, None, p.ecn));
                    }
                }
                t += MS / 2;
            }
            (log, q.stats())
        };
        let (a, sa) = run(preset);
        let (b, sb) = run(spelled);
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        let marked_ect = a.iter().filter(|e| e.2.is_none() && e.3 == Ecn::Ce).count();
        let aqm_drops_ect = a
            .iter()
            .filter(|e| e.2 == Some(SchedDrop::Aqm) && e.3 != Ecn::NotEct)
            .count();
        let aqm_drops_not_ect = a
            .iter()
            .filter(|e| e.2 == Some(SchedDrop::Aqm) && e.3 == Ecn::NotEct)
            .count();
        assert!(marked_ect > 0, "{sa:?}");
        assert!(aqm_drops_not_ect > 0, "{sa:?}");
        // BLUE never raises p_drop here (no overflow into COBALT, no sojourn above 400 ms), so the
        // ECN-capable flow loses nothing to the AQM.
        assert_eq!(aqm_drops_ect, 0, "{sa:?}");
    }

    /// COBALT under `fq` hears "empty" only from the scheduler (ns-3 FqCobaltQueueDisc, Linux
    /// CAKE), worked by hand with quantum 1500 and 1500-B packets (sojourns under target):
    ///  t=0: A1, B1 arrive (both new, deficit 1500). Dequeue: A1 (A's deficit 0, its queue
    ///  empty, A still first on the new list). t=1 ms: A2 arrives, before A's next turn.
    ///  Dequeue: A spent -> +1500, to the old list; B1 (B's deficit 0). Dequeue: B spent ->
    ///  old list; old = [A, B]: A2 (A's deficit 0). Dequeue: A spent -> back; B found empty
    ///  (B's COBALT: one empty), leaves; A found empty (A's COBALT: one empty), leaves: none.
    /// A's queue emptied twice on departures but was found empty once.
    #[test]
    fn cobalt_under_fq_counts_the_empties_the_scheduler_finds() {
        let mut q = fq(&[
            ("queue_aqm", s("cobalt")),
            ("aqm_backlog", s("flow")),
            ("quantum", n(1500.0)),
        ]);
        let (a, b) = (1, 2);
        let (qa, qb) = (q.queue_of(a), q.queue_of(b));
        assert_ne!(qa, qb);
        let empties = |q: &Fq<Pkt>, i: usize| {
            let st = q.queue_aqm_stats(i);
            st.iter().find(|(k, _)| *k == "empties").unwrap().1
        };
        let mut rng = rng_from_seed(1);
        q.enqueue_pkt(pkt(a, 1500, 1), 0, &mut rng, &mut no_drop);
        q.enqueue_pkt(pkt(b, 1500, 2), 0, &mut rng, &mut no_drop);
        let order = |p: Option<Pkt>| p.map(|p| p.id);
        assert_eq!(order(q.dequeue_pkt(0, &mut rng, &mut no_drop)), Some(1));
        assert_eq!(empties(&q, qa), 0.0);
        q.enqueue_pkt(pkt(a, 1500, 3), MS, &mut rng, &mut no_drop);
        assert_eq!(empties(&q, qa), 0.0);
        assert_eq!(order(q.dequeue_pkt(MS, &mut rng, &mut no_drop)), Some(2));
        assert_eq!(order(q.dequeue_pkt(MS, &mut rng, &mut no_drop)), Some(3));
        assert_eq!((empties(&q, qa), empties(&q, qb)), (0.0, 0.0));
        assert_eq!(order(q.dequeue_pkt(2 * MS, &mut rng, &mut no_drop)), None);
        assert_eq!((empties(&q, qa), empties(&q, qb)), (1.0, 1.0));
        assert_eq!(q.list_lens(), (0, 0));
    }

    /// ns-3's `FqCobaltDrop`, worked by hand: limit 10; queue A holds 8 packets of 1000 B,
    /// queue B 2; an 11th arrival (to B) exceeds the limit, so head drops from the fattest (A,
    /// 8000 B) until half its bytes (4000 B) are gone: A's packets 0-3, 4 drops, counted as
    /// overlimit.
    #[test]
    fn fq_cobalt_overflow_drops_half_the_fattest_queue_from_its_head() {
        let mut q = sched("fq_cobalt", &[("limit", n(10.0))]).unwrap();
        let mut rng = rng_from_seed(1);
        let mut dropped = Vec::new();
        let mut on_drop = |p: Pkt, why| dropped.push((p.flow, p.id, why));
        for i in 0..8 {
            q.enqueue(pkt(1, 1000, i), 0, &mut rng, &mut on_drop);
        }
        for i in 100..103 {
            q.enqueue(pkt(2, 1000, i), 0, &mut rng, &mut on_drop);
        }
        let o = SchedDrop::Overlimit;
        assert_eq!(dropped, vec![(1, 0, o), (1, 1, o), (1, 2, o), (1, 3, o)]);
        assert_eq!(q.len_pkts(), 7);
        let stats: std::collections::HashMap<_, _> = q.stats().into_iter().collect();
        assert_eq!(stats["overlimit_drops"], 4.0);
    }

    #[test]
    fn bad_parameters_are_named_as_the_user_wrote_them() {
        for (name, pairs, param, allowed) in [
            (
                "fq_codel",
                vec![("target", n(-0.005))],
                "target",
                "(0, 3600]",
            ),
            ("fq_codel", vec![("flows", n(0.0))], "flows", "[1, 65536]"),
            (
                "fq_codel",
                vec![("ce_threshold", n(-1.0))],
                "ce_threshold",
                "[0, 3600]",
            ),
            (
                "fq_codel",
                vec![
                    ("ce_threshold_selector", n(2.0)),
                    ("ce_threshold_mask", n(1.0)),
                ],
                "ce_threshold_selector",
                "within",
            ),
            ("fq_pie", vec![("tupdate", n(0.0))], "tupdate", "(0, 3600]"),
            ("fq_pie", vec![("ecn_prob", n(1.5))], "ecn_prob", "[0, 1]"),
            ("fq_pie", vec![("bogus", n(1.0))], "bogus", "allowed"),
            (
                "fq_cobalt",
                vec![("increment", n(1.5))],
                "increment",
                "(0, 1]",
            ),
            ("fq_cobalt", vec![("target", n(0.2))], "target", "interval"),
            ("fq_cobalt", vec![("flows", n(0.0))], "flows", "[1, 65536]"),
            (
                "fq_cobalt",
                vec![("overflow", s("tail"))],
                "overflow",
                "allowed",
            ),
            ("fq", vec![("queue.target", n(-1.0))], "queue.target", ""),
            ("fq", vec![("queue_aqm", s("nope"))], "queue_aqm", "codel"),
            (
                "fq",
                vec![("overflow", s("head"))],
                "overflow",
                "fattest, tail",
            ),
        ] {
            let e = sched(name, &pairs).unwrap_err();
            assert_eq!(e.param, param, "{name} {e}");
            assert!(e.msg.contains(allowed), "{name}: {e}");
        }
    }

    /// The per-flow record (STYLE.md: kept small, and says so): one 64-byte line with a boxed
    /// AQM, two lines with CoDel's state inline (docs/algorithms/fq.md).
    #[test]
    fn flow_records_fit_their_cache_lines() {
        assert_eq!(std::mem::size_of::<FlowQueue<Box<dyn Aqm>>>(), 64);
        assert_eq!(std::mem::size_of::<FlowQueue<CodelQueue>>(), 128);
        assert_eq!(std::mem::align_of::<FlowQueue<CodelQueue>>(), 64);
        // An arrival writes the queue's fields and CoDel's maxpacket: all in the first line.
        let maxpacket = std::mem::offset_of!(FlowQueue<CodelQueue>, aqm)
            + std::mem::offset_of!(CodelQueue, stats)
            + std::mem::offset_of!(aqm::codel::CodelStats, maxpacket);
        assert!(maxpacket + 4 <= 64, "maxpacket at {maxpacket}");
    }

    /// `fq` + `codel` as `build` makes it (CoDel's state inline, its parameters shared:
    /// `Fq::new_codel`) against a boxed registry `Codel` per queue (`Fq::new` + `aqm::build`,
    /// the general path): the same packets out in the same order with the same ECN bits, the
    /// same drops, the same counters queue by queue, through drop states, ECN marks,
    /// `ce_threshold` marks, overflow push-outs and emptied queues (each checked to occur).
    #[test]
    fn inline_codel_is_the_boxed_registry_codel() {
        // The last case's 0.2 ms target is below most sojourns: a queue found empty must forget
        // its time above target (on_empty) or its next head is dropped at once.
        for (ecn, target, interval) in [
            (false, 0.002, 0.02),
            (true, 0.002, 0.02),
            (false, 2e-4, 0.005),
        ] {
            let pairs = [
                ("flows", n(8.0)),
                ("limit", n(60.0)),
                ("quantum", n(300.0)),
                ("queue.ecn", ParamValue::Bool(ecn)),
                ("queue.target", n(target)),
                ("queue.interval", n(interval)),
                ("queue.ce_threshold", n(0.004)),
                ("queue.mtu", n(500.0)),
            ];
            let mut boxed = fq(&pairs);
            let p = FqParams::from_map(&map(&pairs)).unwrap();
            let mut inline =
                Fq::<Pkt, CodelQueue>::new_codel("fq", p, &LinkContext::default()).unwrap();
            let (mut r1, mut r2) = (rng_from_seed(3), rng_from_seed(3));
            let (mut log1, mut log2) = (Vec::new(), Vec::new());
            let (mut out1, mut out2) = (Vec::new(), Vec::new());
            let mut x: u64 = 12345;
            let mut now: Time = 0;
            for step in 0..40_000u32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let e = if (x >> 20) & 1 == 1 {
                    Ecn::Ect0
                } else {
                    Ecn::NotEct
                };
                let p = Pkt {
                    flow: ((x >> 33) % 11) as u32,
                    size: 64 + ((x >> 40) % 1400) as u32,
                    id: step,
                    ecn: e,
                };
                now += (x >> 44) % 400_000;
                boxed.enqueue_pkt(p.clone(), now, &mut r1, &mut |p, d| log1.push((p.id, d)));
                inline.enqueue_pkt(p, now, &mut r2, &mut |p, d| log2.push((p.id, d)));
                // Phases: arrivals outpace departures (a standing queue, overflow), then drain.
                let deq = if step % 4000 < 2500 {
                    usize::from(step % 3 != 0)
                } else {
                    3
                };
                for _ in 0..deq {
                    out1.push(boxed.dequeue_pkt(now, &mut r1, &mut |p, d| log1.push((p.id, d))));
                    out2.push(inline.dequeue_pkt(now, &mut r2, &mut |p, d| log2.push((p.id, d))));
                }
            }
            let first = out1.iter().zip(&out2).position(|(a, b)| a != b);
            assert!(out1 == out2, "packets out differ from dequeue {first:?} on");
            assert!(log1 == log2, "drops differ");
            assert_eq!(Scheduler::stats(&boxed), Scheduler::stats(&inline));
            let mut sum = std::collections::BTreeMap::new();
            for i in 0..8 {
                let st = boxed.queue_aqm_stats(i);
                assert_eq!(st, inline.queue_aqm_stats(i), "queue {i}");
                for (k, v) in st {
                    *sum.entry(k).or_insert(0.0) += v;
                }
            }
            assert!(sum["drop_states"] > 0.0 && sum["ce_marks"] > 0.0, "{sum:?}");
            assert!(sum[if ecn { "marks" } else { "drops" }] > 0.0, "{sum:?}");
            // At the 0.2 ms target CoDel keeps the queue below the limit.
            assert!(target < 0.001 || boxed.fq_stats().overlimit_drops > 0);
            assert!(out1.iter().any(|p| p.is_none()), "never found empty");
        }
    }
}
