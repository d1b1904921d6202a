//! CoDel: Controlled Delay (K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, RFC 8289, 2018):
//! head drop at dequeue once the sojourn time has stayed above `target` for an `interval`
//! (s. 5.5), drops then spaced by interval / sqrt(count) (s. 5.6); ECN marks instead (RFC 3168).
//!
//! The dequeue state machine works on one packet at a time ([`codel_dequeue`]) over [`CodelVars`],
//! so that FQ-CoDel (RFC 8290) runs one instance per flow queue with the same code.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{count_signal, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};

/// CoDel's parameters.
#[rustfmt::skip]
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.005), help: "acceptable standing queue delay, s (RFC 8289 s. 4.2, 5.3: 5 ms)" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.1), help: "window the sojourn time must stay above target before dropping, s (RFC 8289 s. 4.3, 5.3: 100 ms)" },
    ParamSpec { name: "mtu", kind: K::Size, default: D::Num(1500.0), help: "maxpacket, bytes: no drop while the queue holds at most this many bytes (RFC 8289 s. 5.3, 5.5: SHOULD be the MTU)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 8289, RFC 3168)" },
    ParamSpec { name: "ce_threshold", kind: K::Duration, default: D::Auto, help: "CE-mark every ECN-capable packet sent after waiting longer than this, s (Linux codel_impl.h ce_threshold: L4S shallow marking); default: off" },
    ParamSpec { name: "ce_threshold_selector", kind: K::Int, default: D::Num(0.0), help: "ce_threshold applies only to packets whose TOS byte AND ce_threshold_mask equals this (Linux sch_fq_codel.c; 1 with mask 1: ECT(1) and CE, the L4S identifier); the simulator's TOS byte carries the ECN bits only" },
    ParamSpec { name: "ce_threshold_mask", kind: K::Int, default: D::Num(0.0), help: "mask of the TOS byte for ce_threshold_selector; 0: every ECN-capable packet" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "codel",
    summary: "Controlled Delay: head drop when the sojourn time stays above target for an interval",
    source:
        "RFC 8289 (Nichols, Jacobson, McGregor, Iyengar 2018), s. 5.5 dequeue, s. 5.6 control law",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Codel::new(CodelParams::from_map(m, l)?)))
    },
};

/// Converts a duration in seconds (as parameters arrive) to nanoseconds.
fn secs_to_ns(s: f64) -> Time {
    (s * NS_PER_SEC as f64).round() as Time
}

/// Configuration (Linux `codel_params`).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    /// Target sojourn time, ns.
    pub target_ns: Time,
    /// Interval, ns.
    pub interval_ns: Time,
    /// maxpacket, bytes.
    pub mtu_bytes: u64,
    /// ECN marking.
    pub ecn: bool,
    /// Shallow CE marking (Linux `codel_params.ce_threshold`): a packet leaving after a sojourn
    /// above this is CE-marked if ECN-capable, whatever the state machine said; `None`: off.
    pub ce_threshold_ns: Option<Time>,
    /// Linux `ce_threshold_selector`: only packets with `tos & mask == selector` are marked by
    /// `ce_threshold` (mask 0: all).
    pub ce_threshold_selector: u8,
    /// Linux `ce_threshold_mask`.
    pub ce_threshold_mask: u8,
}

impl Default for CodelParams {
    /// RFC 8289 s. 5.3: 5 ms, 100 ms, an MTU of 1500 bytes; no ECN.
    fn default() -> Self {
        CodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            mtu_bytes: 1500,
            ecn: false,
            ce_threshold_ns: None,
            ce_threshold_selector: 0,
            ce_threshold_mask: 0,
        }
    }
}

impl CodelParams {
    /// Reads and validates parameters.
    pub fn from_map(m: &ParamMap, _l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let mut r = Self::from_values(
            p.num("target")?,
            p.num("interval")?,
            p.num("mtu")?,
            p.bool("ecn"),
        )?;
        r.set_ce_threshold(
            p.opt_num("ce_threshold")?,
            p.num("ce_threshold_selector")?,
            p.num("ce_threshold_mask")?,
        )?;
        Ok(r)
    }

    /// Sets and checks the shallow-marking parameters (Linux sch_fq_codel.c `ce_threshold`,
    /// `ce_threshold_selector`, `ce_threshold_mask`): a threshold in seconds (`None`: off), a
    /// selector that must lie within its mask, both bytes.
    pub fn set_ce_threshold(
        &mut self,
        threshold_s: Option<f64>,
        selector: f64,
        mask: f64,
    ) -> Result<(), ParamError> {
        if let Some(t) = threshold_s {
            check_range("ce_threshold", t, 0.0, false, 3600.0, false)?;
        }
        check_range("ce_threshold_selector", selector, 0.0, false, 255.0, false)?;
        check_range("ce_threshold_mask", mask, 0.0, false, 255.0, false)?;
        let (sel, mask) = (selector as u8, mask as u8);
        if sel & !mask != 0 {
            return Err(ParamError::new(
                "ce_threshold_selector",
                format!("must select bits within ce_threshold_mask {mask:#04x} (got {sel:#04x})"),
            ));
        }
        self.ce_threshold_ns = threshold_s.map(secs_to_ns);
        self.ce_threshold_selector = sel;
        self.ce_threshold_mask = mask;
        Ok(())
    }

    /// Builds validated parameters from values in base units (seconds, bytes); FQ-CoDel reads
    /// its CoDel parameters through this too.
    pub fn from_values(
        target_s: f64,
        interval_s: f64,
        mtu: f64,
        ecn: bool,
    ) -> Result<Self, ParamError> {
        check_range("target", target_s, 0.0, true, 3600.0, false)?;
        check_range("interval", interval_s, 0.0, true, 3600.0, false)?;
        check_range("mtu", mtu, 1.0, false, 1e9, false)?;
        let p = CodelParams {
            target_ns: secs_to_ns(target_s),
            interval_ns: secs_to_ns(interval_s),
            mtu_bytes: mtu.round() as u64,
            ecn,
            ..CodelParams::default()
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the parameters: both durations at least 1 ns and target < interval (a target at or
    /// above the interval could never be exceeded "for an interval" in a meaningful way).
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.target_ns == 0 {
            return Err(ParamError::new("target", "must be at least 1 ns"));
        }
        if self.target_ns >= self.interval_ns {
            return Err(ParamError::new(
                "target",
                format!(
                    "must be < interval (got target {} s >= interval {} s)",
                    self.target_ns as f64 / NS_PER_SEC as f64,
                    self.interval_ns as f64 / NS_PER_SEC as f64
                ),
            ));
        }
        if self.mtu_bytes == 0 {
            return Err(ParamError::new("mtu", "must be at least 1 byte"));
        }
        Ok(())
    }
}

/// State that changes per packet (Linux `codel_vars`; RFC 8289 s. 5.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodelVars {
    /// Drops (or marks) in the current dropping state.
    pub count: u32,
    /// `count` when the last dropping state was entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
    /// A dropping state has been entered before: without one there is no "last dropping
    /// state" for s. 5.5's resumption to be recent.
    pub was_dropping: bool,
    /// When the sojourn time will have been above target for an interval; `None` while below
    /// (the RFC's `first_above_time == 0`).
    pub first_above_time: Option<Time>,
    /// Time of the next drop while dropping.
    pub drop_next: Time,
    /// The RFC's dequeue loop drops a packet, then advances `drop_next` by the control law only if
    /// the next packet is still OK to drop. Per packet, that advance waits for the next packet.
    pub reschedule_pending: bool,
    /// Sojourn time of the last packet looked at, ns.
    pub ldelay: Time,
}

/// Counters (Linux `codel_stats`). `maxpacket`, the one written on every arrival, comes first
/// (`repr(C)`): a flow queue holding these after its own fields touches one cache line on
/// arrival (qdisc's `fq`).
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct CodelStats {
    /// Largest packet seen, bytes.
    pub maxpacket: u32,
    /// Packets dropped at the head.
    pub drops: u64,
    /// Packets marked instead.
    pub marks: u64,
    /// Times the dropping state was entered.
    pub drop_states: u64,
    /// Packets CE-marked by `ce_threshold` (Linux `codel_stats.ce_mark`; a packet the state
    /// machine marked too is counted in both, as Linux counts it).
    pub ce_marks: u64,
}

/// The control law: the next drop `interval / sqrt(count)` after `t` (RFC 8289 s. 5.6). At least
/// 1 ns later, so a packet dequeued at the same instant is never dropped by rounding.
#[inline]
pub fn control_law(t: Time, interval_ns: Time, count: u32) -> Time {
    let step = interval_ns as f64 / (count.max(1) as f64).sqrt();
    t.saturating_add((step as Time).max(1))
}

/// The `ok_to_drop` test of `dodequeue` (RFC 8289 s. 5.5): true once the sojourn time has been at
/// or above target for at least an interval, never while the queue left behind holds at most one
/// maxpacket (`backlog_after` is its size in bytes after this packet's removal).
#[inline]
pub fn codel_should_drop(
    vars: &mut CodelVars,
    p: &CodelParams,
    sojourn: Time,
    backlog_after: u64,
    now: Time,
) -> bool {
    vars.ldelay = sojourn;
    if sojourn < p.target_ns || backlog_after <= p.mtu_bytes {
        // Went below (or too little queue): stay below for at least an interval.
        vars.first_above_time = None;
        return false;
    }
    match vars.first_above_time {
        None => {
            // Just went above: if still above at first_above_time, it will be OK to drop.
            vars.first_above_time = Some(now.saturating_add(p.interval_ns));
            false
        }
        Some(t) => now >= t,
    }
}

/// Count to start a dropping state with (RFC 8289 s. 5.5, the Linux variant it adopts): if the
/// last dropping state ended recently (`now - drop_next < 16 interval`) and dropped more than once
/// since it began, resume with the drops it needed (`count - lastcount`), else start at 1.
#[inline]
pub fn restart_count(
    count: u32,
    lastcount: u32,
    drop_next: Time,
    now: Time,
    interval_ns: Time,
) -> u32 {
    let delta = count.wrapping_sub(lastcount);
    let since = now as i128 - drop_next as i128;
    if delta > 1 && since < 16 * interval_ns as i128 {
        delta
    } else {
        1
    }
}

/// CoDel's decision on the packet at the head (RFC 8289 s. 5.5, one packet at a time).
///
/// `sojourn` is the time it waited, `backlog_after` the bytes left in its queue after its removal.
/// `Drop`: drop it, then call again for the next head (the RFC's while loop). `Mark`: send it with
/// CE set (only with `p.ecn` and an ECN-capable packet). `Admit`: send it.
pub fn codel_dequeue(
    vars: &mut CodelVars,
    p: &CodelParams,
    sojourn: Time,
    backlog_after: u64,
    ecn_capable: bool,
    now: Time,
) -> Verdict {
    let ok_to_drop = codel_should_drop(vars, p, sojourn, backlog_after, now);
    let mark = p.ecn && ecn_capable;
    if vars.dropping {
        if !ok_to_drop {
            // Sojourn time below target: leave the dropping state.
            vars.dropping = false;
            vars.reschedule_pending = false;
            return Verdict::Admit;
        }
        if vars.reschedule_pending {
            // The previous packet was dropped and this one is still OK to drop: schedule.
            vars.drop_next = control_law(vars.drop_next, p.interval_ns, vars.count);
            vars.reschedule_pending = false;
        }
        if now < vars.drop_next {
            return Verdict::Admit;
        }
        vars.count = vars.count.saturating_add(1);
        if mark {
            // Linux codel_impl.h: a mark ends this dequeue, so schedule the next signal now.
            vars.drop_next = control_law(vars.drop_next, p.interval_ns, vars.count);
            return Verdict::Mark;
        }
        vars.reschedule_pending = true;
        if backlog_after == 0 {
            // The RFC's next dodequeue finds no packet: first_above_time = 0, dropping ends.
            vars.first_above_time = None;
            vars.dropping = false;
            vars.reschedule_pending = false;
        }
        Verdict::Drop
    } else if ok_to_drop {
        // Above target for an interval: enter the dropping state.
        // RFC 8289 s. 5.5 resumes the last dropping state's rate when it ended recently. A queue
        // that never dropped has no such state: its `drop_next` is the initial 0, and on the
        // simulator's clock, which starts at 0 too, `now - drop_next < 16 interval` would call it
        // recent for the first 1.6 s, so FQ-CoDel's overflow push-outs (`codel_on_pushout`)
        // would start its first dropping state at that count. Linux compares 32-bit times from
        // boot there, so its answer for a never-dropped queue depends on the clock's phase
        // (recent for about half of the 4.4 s wrap); ns-3.44 does not raise the count at all.
        // Here it starts at 1 (docs/algorithms/fq_codel.md).
        vars.count = if vars.was_dropping {
            restart_count(
                vars.count,
                vars.lastcount,
                vars.drop_next,
                now,
                p.interval_ns,
            )
        } else {
            1
        };
        vars.was_dropping = true;
        vars.lastcount = vars.count;
        vars.drop_next = control_law(now, p.interval_ns, vars.count);
        vars.dropping = true;
        vars.reschedule_pending = false;
        if mark {
            return Verdict::Mark;
        }
        if backlog_after == 0 {
            vars.first_above_time = None;
        }
        Verdict::Drop
    } else {
        Verdict::Admit
    }
}

/// Linux codel_impl.h, end of `codel_dequeue`: the packet about to be sent waited more than
/// `ce_threshold` (strictly, `codel_time_after`) and is selected (`tos & mask == selector`, the
/// TOS byte holding only the ECN bits here) and ECN-capable (`INET_ECN_set_ce` succeeds for
/// ECT(0), ECT(1) and CE): it is CE-marked, independently of the drop state machine.
#[inline]
pub fn ce_threshold_marks(p: &CodelParams, sojourn: Time, ecn: crate::Ecn) -> bool {
    match p.ce_threshold_ns {
        Some(th) if sojourn > th && ecn.is_capable() => {
            p.ce_threshold_mask == 0 || ecn.bits() & p.ce_threshold_mask == p.ce_threshold_selector
        }
        _ => false,
    }
}

/// The queue was found empty (RFC 8289 s. 5.5: `dodequeue` returns no packet): forget the time
/// above target and leave the dropping state.
#[inline]
pub fn codel_on_empty(vars: &mut CodelVars) {
    vars.first_above_time = None;
    vars.dropping = false;
    vars.reschedule_pending = false;
}

/// CoDel's arrival (RFC 8289 s. 5.4: every arrival is admitted; the buffer limit is the queue
/// owner's), counting the largest packet seen. Shared by [`Codel`] and the flow queues of a
/// scheduler that keeps one [`CodelParams`] for all its queues.
#[inline]
pub fn codel_enqueue_counted(stats: &mut CodelStats, pkt: &PacketMeta) -> Verdict {
    stats.maxpacket = stats.maxpacket.max(pkt.size_bytes);
    Verdict::Admit
}

/// CoDel's decision on the head packet ([`codel_dequeue`] on the bytes `backlog_after` left
/// behind), counted in `stats`, then the shallow CE mark of `ce_threshold` (Linux codel_impl.h).
/// Shared by [`Codel`] and the flow queues of a scheduler that keeps one [`CodelParams`] for
/// all its queues.
#[inline]
pub fn codel_dequeue_counted(
    p: &CodelParams,
    vars: &mut CodelVars,
    stats: &mut CodelStats,
    pkt: &PacketMeta,
    sojourn: Time,
    backlog_after: u64,
    now: Time,
) -> Verdict {
    let was_dropping = vars.dropping;
    let v = codel_dequeue(vars, p, sojourn, backlog_after, pkt.ecn_capable(), now);
    count_signal(v, &mut stats.marks, &mut stats.drops);
    if !was_dropping && vars.dropping {
        stats.drop_states += 1;
    }
    if v != Verdict::Drop && ce_threshold_marks(p, sojourn, pkt.ecn) {
        stats.ce_marks += 1;
        return Verdict::Mark;
    }
    v
}

/// The scheduler pushed `n` packets of this queue out on overflow: Linux `fq_codel_drop` raises
/// the queue's CoDel count by them (`flow->cvars.count += i`), so it signals harder.
#[inline]
pub fn codel_on_pushout(vars: &mut CodelVars, n: u32) {
    vars.count = vars.count.saturating_add(n);
}

/// CoDel's counters by name; `ce_marks` only when `ce_threshold` is set.
pub fn codel_stats_list(
    p: &CodelParams,
    vars: &CodelVars,
    stats: &CodelStats,
) -> Vec<(&'static str, f64)> {
    let mut v = vec![
        ("drops", stats.drops as f64),
        ("marks", stats.marks as f64),
        ("drop_states", stats.drop_states as f64),
        ("count", vars.count as f64),
        ("dropping", if vars.dropping { 1.0 } else { 0.0 }),
        ("ldelay_s", vars.ldelay as f64 / NS_PER_SEC as f64),
        ("maxpacket", stats.maxpacket as f64),
    ];
    if p.ce_threshold_ns.is_some() {
        v.push(("ce_marks", stats.ce_marks as f64));
    }
    v
}

/// The CoDel algorithm guarding one FIFO.
#[derive(Debug, Clone)]
pub struct Codel {
    /// Configuration.
    pub params: CodelParams,
    /// Evolving state.
    pub vars: CodelVars,
    /// Counters.
    pub stats: CodelStats,
}

impl Codel {
    /// A CoDel instance with validated parameters.
    pub fn new(params: CodelParams) -> Self {
        Codel {
            params,
            vars: CodelVars::default(),
            stats: CodelStats::default(),
        }
    }
}

impl Aqm for Codel {
    fn name(&self) -> &'static str {
        "codel"
    }

    /// CoDel admits every arrival (RFC 8289 s. 5.4); the buffer limit is the queue owner's.
    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        codel_enqueue_counted(&mut self.stats, pkt)
    }

    fn wants_dequeue(&self) -> bool {
        true
    }

    fn dequeue(
        &mut self,
        pkt: &PacketMeta,
        sojourn: Time,
        q: &QueueView,
        now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        codel_dequeue_counted(
            &self.params,
            &mut self.vars,
            &mut self.stats,
            pkt,
            sojourn,
            q.len_bytes,
            now,
        )
    }

    /// The scheduler found this flow queue empty (RFC 8289 s. 5.5: `dodequeue` returns no packet).
    fn on_empty(&mut self, _now: Time) {
        codel_on_empty(&mut self.vars);
    }

    /// The scheduler pushed `n` packets of this queue out on overflow ([`codel_on_pushout`]).
    fn on_pushout(&mut self, n: u32, _now: Time) {
        codel_on_pushout(&mut self.vars, n);
    }

    /// The counters; `ce_marks` only when `ce_threshold` is set.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        codel_stats_list(&self.params, &self.vars, &self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::testing::Script;

    const MS: Time = 1_000_000;

    fn codel(pairs: &[(&str, ParamValue)]) -> Result<Codel, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(Codel::new(CodelParams::from_map(
            &m,
            &LinkContext::default(),
        )?))
    }

    #[test]
    fn control_law_spaces_drops_by_interval_over_sqrt_count() {
        // 100 ms / sqrt(1, 2, 4, 100) = 100, 70.710678, 50, 10 ms.
        assert_eq!(control_law(0, 100 * MS, 1), 100 * MS);
        assert_eq!(control_law(0, 100 * MS, 2), 70_710_678);
        assert_eq!(control_law(5, 100 * MS, 4), 5 + 50 * MS);
        assert_eq!(control_law(0, 100 * MS, 100), 10 * MS);
        // count 0 is treated as 1; the step is never 0.
        assert_eq!(control_law(0, 100 * MS, 0), 100 * MS);
        assert_eq!(control_law(7, 1, u32::MAX), 8);
    }

    /// The first dropping state starts at count 1 whatever FQ-CoDel's push-outs added: by hand,
    /// 128 packets pushed out of a fresh queue, then sojourn 10 ms (> 5 ms target) from t = 400
    /// ms: first_above_time = 500 ms; at 500 ms the state is entered with count 1 and the next
    /// drop is 100 ms / sqrt(1) later (with count 128 it would be 8.84 ms later, as before this
    /// rule). Then the state ends at 700 ms (sojourn 1 ms), 20 more push-outs, and a new state
    /// at 850 ms, recent (< 16 intervals after drop_next): count - lastcount = (2 + 20) - 1 = 21.
    #[test]
    fn a_queue_that_never_dropped_starts_at_one_after_push_outs() {
        let p = CodelParams::default();
        let mut v = CodelVars::default();
        codel_on_pushout(&mut v, 128);
        // Heads dequeued at (sojourn, time) and CoDel's verdicts, with 10 kB left behind.
        let run = |v: &mut CodelVars, heads: &[(Time, Time)]| -> Vec<Verdict> {
            heads
                .iter()
                .map(|&(sojourn, t)| codel_dequeue(v, &p, sojourn, 10_000, false, t))
                .collect()
        };
        use Verdict::{Admit, Drop};
        assert_eq!(
            run(&mut v, &[(10 * MS, 400 * MS), (10 * MS, 500 * MS)]),
            [Admit, Drop]
        );
        assert_eq!((v.count, v.lastcount, v.drop_next), (1, 1, 600 * MS));
        // The next heads still above target: the drop at 600 ms (count 2); below at 700 ms.
        let heads = [(10 * MS, 550 * MS), (10 * MS, 600 * MS), (MS, 700 * MS)];
        assert_eq!(run(&mut v, &heads), [Admit, Drop, Admit]);
        assert_eq!((v.count, v.dropping), (2, false));
        codel_on_pushout(&mut v, 20);
        assert_eq!(
            run(&mut v, &[(10 * MS, 750 * MS), (10 * MS, 850 * MS)]),
            [Admit, Drop]
        );
        assert_eq!(v.count, 21);
    }

    #[test]
    fn restart_count_reuses_the_last_rate_only_when_recent() {
        // 10 drops since the state began (count 12, lastcount 2), ended 50 ms ago: resume at 10.
        assert_eq!(restart_count(12, 2, 1000 * MS, 1050 * MS, 100 * MS), 10);
        // Ended 1.6 s ago = 16 intervals: start over.
        assert_eq!(restart_count(12, 2, 1000 * MS, 2600 * MS, 100 * MS), 1);
        // A single drop last time (delta 1): start at 1.
        assert_eq!(restart_count(3, 2, 1000 * MS, 1010 * MS, 100 * MS), 1);
        // drop_next still in the future counts as recent.
        assert_eq!(restart_count(5, 1, 2000 * MS, 1000 * MS, 100 * MS), 4);
    }

    #[test]
    fn drop_times_follow_the_control_law_once_above_target_for_an_interval() {
        // One departure per ms, each having waited 10 ms (> 5 ms target), 10 kB left behind.
        // t = 0: first_above_time = 100 ms. t = 100 ms: enter dropping, count 1, drop; drop_next
        // = 100 + 100/sqrt(1) = 200 ms. Then each drop at the first departure at or after
        // drop_next, with drop_next(k+1) = drop_next(k) + 100 / sqrt(k) ms:
        // 200, 270.71, 328.45, 378.45, 423.17, 463.99, ... ms.
        let mut s = Script::new(Box::new(codel(&[]).unwrap()));
        s.set_queue(10);
        let mut drops = Vec::new();
        for i in 0..=1000u64 {
            s.now = i * MS;
            if s.depart(1000, 10 * MS) == Verdict::Drop {
                drops.push(s.now);
            }
        }
        let mut expect = vec![100 * MS];
        let mut next = 200.0 * MS as f64;
        let mut count = 1.0f64;
        while next <= 1000.0 * MS as f64 {
            expect.push((next / MS as f64).ceil() as u64 * MS);
            count += 1.0;
            next += 100.0 * MS as f64 / count.sqrt();
        }
        assert_eq!(
            &expect[..7],
            &[
                100 * MS,
                200 * MS,
                271 * MS,
                329 * MS,
                379 * MS,
                424 * MS,
                464 * MS
            ]
        );
        assert_eq!(drops, expect);
        assert_eq!(s.aqm.stats()[0], ("drops", expect.len() as f64));
    }

    #[test]
    fn no_drop_while_sojourn_stays_under_target() {
        let mut s = Script::new(Box::new(codel(&[]).unwrap()));
        s.set_queue(500);
        for i in 0..10_000u64 {
            s.now = i * MS;
            // Sojourn wanders up to 4.99 ms: always below the 5 ms target.
            assert_eq!(s.depart(1500, (i * 7919) % (5 * MS)), Verdict::Admit);
        }
    }

    #[test]
    fn a_queue_of_at_most_one_mtu_is_never_dropped_from() {
        let mut s = Script::new(Box::new(codel(&[]).unwrap()));
        s.q = QueueView {
            len_pkts: 1,
            len_bytes: 1500,
            idle_since: None,
        };
        for i in 0..1000u64 {
            s.now = i * MS;
            assert_eq!(s.depart(1500, 50 * MS), Verdict::Admit);
        }
    }

    #[test]
    fn dropping_ends_below_target_and_a_quick_return_resumes_the_count() {
        let mut s = Script::new(Box::new(codel(&[]).unwrap()));
        s.set_queue(10);
        let mut t = 0;
        let mut step = |s: &mut Script, sojourn: Time| {
            s.now = t;
            t += MS;
            s.depart(1000, sojourn)
        };
        // Above target 0..500 ms: drops at 100, 200, 271, 329, 379, 424, 464 ms (drop_next
        // 463.99 ms) -> count 7 (the drop at 100 ms set count 1; each later drop adds one).
        for _ in 0..500 {
            step(&mut s, 10 * MS);
        }
        let count = |s: &Script| s.aqm.stats().iter().find(|x| x.0 == "count").unwrap().1;
        assert_eq!(count(&s), 7.0);
        // One packet below target leaves the dropping state.
        assert_eq!(step(&mut s, MS), Verdict::Admit);
        assert_eq!(s.aqm.stats()[4], ("dropping", 0.0));
        // Back above at 501 ms: first_above_time = 601 ms, re-enter at 601 ms with
        // count = count - lastcount = 7 - 1 = 6 (the last state ended < 16 intervals ago).
        let mut v = Vec::new();
        for _ in 0..101 {
            v.push(step(&mut s, 10 * MS));
        }
        assert!(v[..100].iter().all(|x| *x == Verdict::Admit));
        assert_eq!(v[100], Verdict::Drop);
        assert_eq!(count(&s), 6.0);
    }

    #[test]
    fn a_drop_that_empties_the_queue_ends_the_dropping_state() {
        let mut c = Codel::new(CodelParams::default());
        let mut rng = crate::rng_from_seed(1);
        let pkt = PacketMeta::of_size(1000);
        let busy = QueueView {
            len_pkts: 10,
            len_bytes: 10_000,
            idle_since: None,
        };
        for i in 0..=100u64 {
            c.dequeue(&pkt, 10 * MS, &busy, i * MS, &mut rng);
        }
        assert!(c.vars.dropping);
        let empty = QueueView {
            len_pkts: 0,
            len_bytes: 0,
            idle_since: None,
        };
        // Never OK to drop with nothing left behind; the state ends.
        assert_eq!(
            c.dequeue(&pkt, 10 * MS, &empty, 200 * MS, &mut rng),
            Verdict::Admit
        );
        assert!(!c.vars.dropping && c.vars.first_above_time.is_none());
    }

    #[test]
    fn ecn_capable_packets_are_marked_instead_of_dropped() {
        let mut s = Script::new(Box::new(codel(&[("ecn", ParamValue::Bool(true))]).unwrap()));
        s.set_queue(10);
        s.ecn_capable = true;
        let mut marks = Vec::new();
        for i in 0..=300u64 {
            s.now = i * MS;
            let v = s.depart(1000, 10 * MS);
            assert_ne!(v, Verdict::Drop);
            if v == Verdict::Mark {
                marks.push(i);
            }
        }
        // Same schedule as drops: 100, 200, 271 ms.
        assert_eq!(marks, vec![100, 200, 271]);
        // Not ECN-capable: dropped even with ecn on.
        s.ecn_capable = false;
        let mut saw_drop = false;
        for i in 301..=400u64 {
            s.now = i * MS;
            saw_drop |= s.depart(1000, 10 * MS) == Verdict::Drop;
        }
        assert!(saw_drop);
    }

    /// Linux codel_impl.h `ce_threshold`: a packet sent after more than the threshold is
    /// CE-marked if ECN-capable, even far below CoDel's target and with `ecn` off; a selector
    /// (TOS & mask == selector; 1/1 picks ECT(1) and CE, RFC 9331's L4S identifier) narrows it.
    #[test]
    fn ce_threshold_marks_by_hand() {
        let ms = |x: f64| ParamValue::Num(x / 1000.0);
        let q = QueueView {
            len_pkts: 10,
            len_bytes: 10_000,
            idle_since: None,
        };
        let verdict = |a: &mut Codel, ecn: crate::Ecn, sojourn: Time| {
            let pkt = PacketMeta {
                ecn,
                ..PacketMeta::of_size(1000)
            };
            a.dequeue(&pkt, sojourn, &q, 0, &mut crate::rng_from_seed(1))
        };
        let mut all = codel(&[("ce_threshold", ms(1.0))]).unwrap();
        assert_eq!(verdict(&mut all, crate::Ecn::Ect0, 2 * MS), Verdict::Mark);
        assert_eq!(verdict(&mut all, crate::Ecn::Ect1, 2 * MS), Verdict::Mark);
        assert_eq!(verdict(&mut all, crate::Ecn::Ce, 2 * MS), Verdict::Mark);
        // Not ECN-capable: INET_ECN_set_ce fails, the packet goes unmarked (and undropped).
        assert_eq!(
            verdict(&mut all, crate::Ecn::NotEct, 2 * MS),
            Verdict::Admit
        );
        // Exactly at the threshold: not after it.
        assert_eq!(verdict(&mut all, crate::Ecn::Ect0, MS), Verdict::Admit);
        assert_eq!(all.stats.ce_marks, 3);
        assert_eq!(all.stats.drops + all.stats.marks, 0);
        let mut l4s = codel(&[
            ("ce_threshold", ms(1.0)),
            ("ce_threshold_selector", ParamValue::Num(1.0)),
            ("ce_threshold_mask", ParamValue::Num(1.0)),
        ])
        .unwrap();
        assert_eq!(verdict(&mut l4s, crate::Ecn::Ect1, 2 * MS), Verdict::Mark);
        assert_eq!(verdict(&mut l4s, crate::Ecn::Ce, 2 * MS), Verdict::Mark);
        assert_eq!(verdict(&mut l4s, crate::Ecn::Ect0, 2 * MS), Verdict::Admit);
        // Off by default.
        let mut off = codel(&[]).unwrap();
        assert_eq!(verdict(&mut off, crate::Ecn::Ect1, 4 * MS), Verdict::Admit);
        let e = codel(&[
            ("ce_threshold_selector", ParamValue::Num(3.0)),
            ("ce_threshold_mask", ParamValue::Num(1.0)),
        ])
        .unwrap_err();
        assert_eq!(e.param, "ce_threshold_selector");
        let e = codel(&[("ce_threshold_mask", ParamValue::Num(256.0))]).unwrap_err();
        assert_eq!(e.param, "ce_threshold_mask");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = codel(&[("target", ParamValue::Num(0.2))]).unwrap_err();
        assert_eq!(e.param, "target");
        assert!(e.msg.contains("interval"), "{e}");
        let e = codel(&[("target", ParamValue::Num(0.1))]).unwrap_err();
        assert_eq!(e.param, "target");
        let e = codel(&[("target", ParamValue::Num(-0.005))]).unwrap_err();
        assert_eq!(e.param, "target");
        assert!(e.msg.contains("(0, 3600]"), "{e}");
        let e = codel(&[("interval", ParamValue::Num(0.0))]).unwrap_err();
        assert_eq!(e.param, "interval");
        let e = codel(&[("mtu", ParamValue::Num(0.0))]).unwrap_err();
        assert_eq!(e.param, "mtu");
        let e = codel(&[("ecn", ParamValue::Num(1.0))]).unwrap_err();
        assert_eq!(e.param, "ecn");
        assert!(codel(&[
            ("target", ParamValue::Num(0.001)),
            ("interval", ParamValue::Num(0.02))
        ])
        .is_ok());
    }
}
