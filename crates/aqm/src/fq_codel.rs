//! FQ-CoDel: Flow Queue CoDel (T. Hoeiland-Joergensen, P. McKenney, D. Taht, J. Gettys,
//! E. Dumazet, RFC 8290, 2018): flows hashed into queues served by deficit round robin with
//! new-flow priority (s. 4.2), CoDel (RFC 8289, [`crate::codel`]) on each queue, and a shared
//! packet limit enforced by head drops from the fattest queue (s. 4.1).
//!
//! It is a queue discipline, built as `fq` + `codel` by the qdisc crate (`qdisc::sched::fq`);
//! this file keeps what every flow-queueing scheduler shares with it: FQ-CoDel's parameter table
//! (the preset's flat names), the registry entry type [`QdiscInfo`] (re-exported from [`crate::info`]), the packet trait
//! [`FqPacket`] and the flow hash [`flow_hash`].

pub use crate::info::QdiscInfo;
use crate::params::{DefaultValue as D, ParamKind as K, ParamSpec};

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

/// Registry entry for FQ-CoDel; `qdisc::sched::build("fq_codel", ..)` builds one.
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
    /// The packet's (source, destination) host ids when it carries addresses (the forwarder's
    /// IPv4 addresses); `None` otherwise (per-host fairness, CAKE).
    fn hosts(&self) -> Option<(u32, u32)> {
        None
    }
    /// The packet travels its flow's reverse direction (an ACK in the simulator), so its
    /// flow's hosts are swapped.
    fn reverse(&self) -> bool {
        false
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
