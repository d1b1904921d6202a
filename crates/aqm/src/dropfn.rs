//! Dropping-function AQM: an arriving packet is dropped with probability d(n) of the queue length
//! n it finds (Barczyk & Chydzinski, seed 002, s. 2; the queue model of its Theorem 1).
//!
//! The family shapes (d0-d8 of the paper: step, linear, doubly-linear, exponential, quadratic,
//! cubic, linear-cubic, linear-log, constant) are defined once, in Python
//! (`aqmlab.theory.families`), which solves their scale and hands this algorithm the tabulated
//! function d(0), d(1), ..., d(n_max). Beyond the table the last value holds. A decision is one
//! table lookup and at most one random number.
//!
//! n counts the packets in the system (waiting plus the one in transmission) by default, as the
//! families module and Theorem 1's queue model do; `queue_count = "waiting"` counts the waiting
//! packets only (`QueueView::len_pkts`, the convention of the other algorithms).

use crate::info::AqmInfo;
use crate::params::{
    DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec, Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};
use rand::Rng;

/// The dropping-function AQM's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "table", kind: K::List, default: D::Auto, help: "d(0), d(1), ..., d(n_max): drop probability at queue length n, each in [0, 1]; the last holds beyond; default [0] (never drop)" },
    ParamSpec { name: "queue_count", kind: K::Choice(&["waiting", "system"]), default: D::Str("system"), help: "system: n counts the waiting packets and the one in transmission (Theorem 1, aqmlab.theory.families); waiting: only the waiting ones" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168), d(n) = 1 included" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "dropfn",
    summary: "drop on arrival with probability d(n) of the queue length n, d given as a table",
    source: "Barczyk & Chydzinski, 'AQM based on the queue length: a real-network study', PLoS ONE 2022, s. 2",
    params: PARAMS,
    build: |m: &ParamMap, _l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(DropFn::new(DropFnParams::from_map(m)?)))
    },
};

/// What the n of d(n) counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueCount {
    /// Waiting packets plus the one in transmission (the queueing model's n; the default).
    System,
    /// Packets waiting (`QueueView::len_pkts`).
    Waiting,
}

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct DropFnParams {
    /// d(0), d(1), ..., d(n_max).
    pub table: Vec<f64>,
    /// What n counts.
    pub queue_count: QueueCount,
    /// ECN marking.
    pub ecn: bool,
}

impl DropFnParams {
    /// Reads and validates parameters.
    pub fn from_map(m: &ParamMap) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let r = DropFnParams {
            table: p.list("table").unwrap_or_else(|| vec![0.0]),
            queue_count: if p.choice("queue_count") == "waiting" {
                QueueCount::Waiting
            } else {
                QueueCount::System
            },
            ecn: p.bool("ecn"),
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks that the table is non-empty and every entry is a probability; the error names the
    /// first bad entry.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.table.is_empty() {
            return Err(ParamError::new(
                "table",
                "must have at least one entry, d(0)",
            ));
        }
        if let Some((i, x)) = self
            .table
            .iter()
            .enumerate()
            .find(|(_, x)| !(0.0..=1.0).contains(*x))
        {
            return Err(ParamError::new(
                "table",
                format!("entry {i} must be in [0, 1] (got {x})"),
            ));
        }
        Ok(())
    }
}

/// State that changes per packet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DropFnState {
    /// d(n) at the last arrival.
    pub last_d: f64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DropFnStats {
    /// Packets dropped by the dropping function.
    pub drops: u64,
    /// Packets marked instead (ECN).
    pub marks: u64,
}

/// The dropping-function algorithm.
#[derive(Debug, Clone)]
pub struct DropFn {
    /// Configuration.
    pub params: DropFnParams,
    /// Evolving state.
    pub state: DropFnState,
    /// Counters.
    pub stats: DropFnStats,
}

/// d(n) from the table, the last entry holding beyond it (`table` non-empty).
#[inline]
pub fn lookup(table: &[f64], n: u64) -> f64 {
    let last = table.len() - 1;
    table[usize::try_from(n).map_or(last, |i| i.min(last))]
}

impl DropFn {
    /// A dropping-function instance with validated parameters.
    pub fn new(params: DropFnParams) -> Self {
        DropFn {
            params,
            state: DropFnState::default(),
            stats: DropFnStats::default(),
        }
    }
}

impl Aqm for DropFn {
    fn name(&self) -> &'static str {
        "dropfn"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let n = match self.params.queue_count {
            QueueCount::Waiting => q.len_pkts as u64,
            // The link is busy (a packet in transmission) unless it reports itself idle.
            QueueCount::System => q.len_pkts as u64 + u64::from(q.idle_since.is_none()),
        };
        let d = lookup(&self.params.table, n);
        self.state.last_d = d;
        if d > 0.0 && rng.random::<f64>() < d {
            signal_counted(
                self.params.ecn,
                pkt,
                &mut self.stats.marks,
                &mut self.stats.drops,
            )
        } else {
            Verdict::Admit
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.last_d)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("drops", self.stats.drops as f64),
            ("marks", self.stats.marks as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::testing::Script;

    fn dropfn(pairs: &[(&str, ParamValue)]) -> Result<DropFn, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(DropFn::new(DropFnParams::from_map(&m)?))
    }

    fn table(t: &[f64]) -> (&'static str, ParamValue) {
        ("table", ParamValue::List(t.to_vec()))
    }

    #[test]
    fn lookup_holds_the_last_value_beyond_the_table() {
        let t = [0.0, 0.25, 0.5];
        assert_eq!(lookup(&t, 0), 0.0);
        assert_eq!(lookup(&t, 1), 0.25);
        assert_eq!(lookup(&t, 2), 0.5);
        assert_eq!(lookup(&t, 3), 0.5);
        assert_eq!(lookup(&t, u64::MAX), 0.5);
    }

    #[test]
    fn defaults_never_drop() {
        let mut s = Script::new(Box::new(dropfn(&[]).unwrap()));
        for n in [0, 10, 1000, u32::MAX] {
            s.set_queue(n);
            assert_eq!(s.arrive(1000), Verdict::Admit);
        }
        assert_eq!(s.aqm.drop_prob(), Some(0.0));
    }

    #[test]
    fn step_function_is_a_small_fifo() {
        // d0 of the paper with K = 3: 0 below 3 packets in the system, 1 from 3 on. With the link
        // busy, w waiting packets are w + 1 in the system.
        let mut s = Script::new(Box::new(dropfn(&[table(&[0.0, 0.0, 0.0, 1.0])]).unwrap()));
        s.set_idle(1000);
        assert_eq!(s.arrive(1000), Verdict::Admit, "idle: n = 0");
        for w in 0..2 {
            s.set_queue(w);
            assert_eq!(s.arrive(1000), Verdict::Admit, "n = {}", w + 1);
        }
        for w in [2, 3, 500] {
            s.set_queue(w);
            assert_eq!(s.arrive(1000), Verdict::Drop, "n = {}", w + 1);
        }
    }

    #[test]
    fn drop_frequency_matches_the_table() {
        // d = (0, 0.1, 0.4): frequencies at n = 1 and n = 8 (beyond: 0.4) in the system, that is
        // 0 and 7 waiting on a busy link.
        let mut s = Script::new(Box::new(dropfn(&[table(&[0.0, 0.1, 0.4])]).unwrap()));
        for (w, d) in [(0, 0.1), (7, 0.4)] {
            s.set_queue(w);
            let k = 100_000;
            let drops = (0..k).filter(|_| s.arrive(1000) == Verdict::Drop).count();
            assert!(
                (drops as f64 / k as f64 - d).abs() < 0.005,
                "{w} waiting: {drops}"
            );
            assert_eq!(s.aqm.drop_prob(), Some(d));
        }
    }

    #[test]
    fn system_count_includes_the_packet_in_transmission_waiting_does_not() {
        let t = table(&[0.0, 1.0]);
        let mut s = Script::new(Box::new(dropfn(std::slice::from_ref(&t)).unwrap()));
        s.set_queue(0); // empty but busy: n = 1
        assert_eq!(s.arrive(1000), Verdict::Drop);
        s.set_idle(1000); // empty and idle: n = 0
        assert_eq!(s.arrive(1000), Verdict::Admit);
        let waiting = ("queue_count", ParamValue::Str("waiting".into()));
        let mut s = Script::new(Box::new(dropfn(&[t, waiting]).unwrap()));
        s.set_queue(0);
        assert_eq!(s.arrive(1000), Verdict::Admit);
        s.set_queue(1);
        assert_eq!(s.arrive(1000), Verdict::Drop);
    }

    #[test]
    fn ecn_marks_capable_packets() {
        let mut s = Script::new(Box::new(
            dropfn(&[table(&[1.0]), ("ecn", ParamValue::Bool(true))]).unwrap(),
        ));
        assert_eq!(s.arrive(1000), Verdict::Drop);
        s.ecn_capable = true;
        assert_eq!(s.arrive(1000), Verdict::Mark);
        assert_eq!(s.aqm.stats(), vec![("drops", 1.0), ("marks", 1.0)]);
    }

    #[test]
    fn bad_tables_are_named_with_the_entry() {
        let e = dropfn(&[table(&[0.0, 0.5, 0.2, 0.3, 0.4, 0.5, 0.6, 1.2])]).unwrap_err();
        assert_eq!(e.param, "table");
        assert_eq!(e.msg, "entry 7 must be in [0, 1] (got 1.2)");
        let e = dropfn(&[table(&[-0.1])]).unwrap_err();
        assert_eq!(e.msg, "entry 0 must be in [0, 1] (got -0.1)");
        let e = dropfn(&[table(&[0.0, f64::NAN])]).unwrap_err();
        assert_eq!(e.msg, "entry 1 must be in [0, 1] (got NaN)");
        let e = dropfn(&[table(&[])]).unwrap_err();
        assert_eq!(e.param, "table");
        let e = dropfn(&[("table", ParamValue::Num(0.5))]).unwrap_err();
        assert_eq!(e.param, "table");
    }
}
