//! DualPI2's parameter table and registry entry (RFC 9332; Linux `net/sched/sch_dualpi2.c`).
//!
//! The queue discipline itself is `qdisc::sched::dualpi2` (it stores the packets, so it lives in
//! the queue-discipline layer); its parameters are declared here because the registry that
//! `aqmlab list` reads ([`crate::registry::QDISCS`]) is in this crate, which the layer depends on.

use crate::info::QdiscInfo;
use crate::params::{DefaultValue as D, ParamKind as K, ParamSpec};

/// DualPI2's parameters with Linux's defaults (`dualpi2_reset_default` in sch_dualpi2.c).
#[rustfmt::skip]
pub const DUALPI2_PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.015), help: "PI2 target queuing delay, s (Linux: 15 ms; RFC 9332 s. A.1)" },
    ParamSpec { name: "tupdate", kind: K::Duration, default: D::Num(0.016), help: "interval between base-probability updates, s (Linux: 16 ms; RFC 9332 s. A.1 Tupdate)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Num(0.16), help: "PI integral gain, Hz (Linux: 0.16; RFC 9332 s. A.1)" },
    ParamSpec { name: "beta", kind: K::Real, default: D::Num(3.2), help: "PI proportional gain, Hz (Linux: 3.2; RFC 9332 s. A.1)" },
    ParamSpec { name: "step_thresh", kind: K::Duration, default: D::Num(0.001), help: "L-queue native step marking: mark when an L packet's sojourn exceeds this, s (Linux: 1 ms)" },
    ParamSpec { name: "min_qlen_step", kind: K::Int, default: D::Num(0.0), help: "step marking applies only to packets that found at least this many packets in the L queue (Linux: 0, always)" },
    ParamSpec { name: "coupling_factor", kind: K::Real, default: D::Num(2.0), help: "coupling factor k: p_CL = k p' (Linux: 2; RFC 9332 s. 2.1)" },
    ParamSpec { name: "c_protection", kind: K::Int, default: D::Num(10.0), help: "classic protection: the C queue's WRR weight, % (Linux: 10; 0..100)" },
    ParamSpec { name: "limit", kind: K::Int, default: D::Num(10000.0), help: "packets held in both queues together (Linux: 10000; the simulator defaults it to the link's buffer)" },
    ParamSpec { name: "mtu", kind: K::Size, default: D::Num(1500.0), help: "the device MTU, bytes: no AQM mark/drop below 2 MTU of backlog, and the WRR credit's reset value (Linux: psched_mtu)" },
    ParamSpec { name: "drop_overload", kind: K::Bool, default: D::Bool(true), help: "on overload (k p' > 1) drop L4S packets with p'^2 and never mark classic ones (true, Linux's default) instead of capping p' at 1/k (false)" },
    ParamSpec { name: "drop_early", kind: K::Bool, default: D::Bool(false), help: "apply the PI2 mark/drop at enqueue (true) instead of dequeue (false, Linux's default)" },
    ParamSpec { name: "any_ect", kind: K::Bool, default: D::Bool(false), help: "classify ECT(0) into the L queue as well (Linux any_ect); false: ECT(1) and CE only (RFC 9331 s. 5.1)" },
];

/// Registry entry for DualPI2 (built by `qdisc::sched::build("dualpi2", ...)`).
pub const DUALPI2_INFO: QdiscInfo = QdiscInfo {
    name: "dualpi2",
    summary: "DualQ Coupled AQM with PI2: an L4S queue (ECT(1), CE) step-marked at 1 ms and coupled to a classic PI2 queue (p_C = p'^2, p_CL = k p'), WRR with classic protection",
    source: "RFC 9332 (De Schepper, Briscoe, White 2023), s. 2, Appendix A; Linux net/sched/sch_dualpi2.c; RFC 9331 s. 5.1 (classification)",
    params: DUALPI2_PARAMS,
};
