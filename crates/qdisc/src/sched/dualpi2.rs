//! DualPI2: the DualQ Coupled AQM with a PI2 base AQM (K. De Schepper, B. Briscoe, G. White,
//! RFC 9332, 2023), as Linux `net/sched/sch_dualpi2.c` implements it.
//!
//! - Classification (RFC 9331 s. 5.1; sch_dualpi2.c `dualpi2_skb_classify`): ECT(1) and CE go to
//!   the L (low-latency, L4S) queue, Not-ECT and ECT(0) to the C (classic) queue (`any_ect`: ECT(0)
//!   to L as well).
//! - Base probability (RFC 9332 Appendix A.1, `dualpi2_update`; sch_dualpi2.c
//!   `calculate_probability`): every `tupdate`, with `q` the larger of the two queues' head sojourn
//!   times (Linux; the RFC's pseudo-code reads the C queue only),
//!   `p' += alpha (q - target) + beta (q - q_prev)`, bounded to [0, 1].
//! - Coupling (RFC 9332 s. 2.1): classic packets are dropped (Not-ECT) or marked (ECT(0))
//!   with `p_C = p'^2` (two independent draws against p', as `dualpi2_classic_marking`); L
//!   packets are marked with `p_CL = k p'` (`dualpi2_scalable_marking`), and besides, after the
//!   scheduler picked them, CE-marked whenever their sojourn exceeds `step_thresh` (the native L4S
//!   AQM, `do_step_aqm`): `p_L = max(p_CL, step)`.
//! - Overload (RFC 9332's overload handling; sch_dualpi2.c `must_drop`): when `k p' > 1`, classic packets are
//!   dropped (never marked) with `p'^2` and L packets are dropped with `p'^2` and marked
//!   otherwise (`drop_overload`, Linux's default); with `drop_overload = false`, p' is capped at
//!   1/k instead and the queues fill up to `limit`.
//! - No AQM mark or drop while the backlog left after the head is below 2 MTU (`must_drop`).
//! - Scheduler (`dequeue_packet`): weighted round robin on bytes with classic protection: a credit
//!   whose sign picks the queue (L while <= 0); sending an L packet while C waits adds `wc` times
//!   its size, sending a C packet while L waits subtracts `wl = 100 - wc` times its size, and the
//!   credit resets to `mtu (wc - wl)` when both queues are empty.
//! - The AQM acts at dequeue (Linux's default; `drop_early = true` applies the PI2 draw at
//!   enqueue instead); the packet limit counts both queues (Linux's `limit`).
//!
//! Simplified against Linux: no memory limit (`memlimit`, truesize accounting), no step threshold
//! in packets, no tc filters (classification by the ECN field alone), no GSO splitting (the
//! caller's packets are single segments), and p' is a real number rather than a 32-bit fraction
//! (Linux rounds alpha and beta to 1/256 Hz: 41/256 = 0.1602 and 819/256 = 3.1992 Hz).
//! The periodic update runs lazily: before each enqueue or dequeue, every update due since the
//! last one is run at its own time (the queues did not change in between, so each update sees
//! what a timer would have seen).

use super::{SchedDrop, Scheduler};
use crate::hist::Hist;
use aqm::dualpi2::DUALPI2_PARAMS;
use aqm::fq_codel::FqPacket;
use aqm::params::{check_range, LinkContext, ParamError, ParamMap, Params};
use aqm::{AqmRng, Ecn, Time};
use rand::Rng;
use std::collections::VecDeque;

/// The WRR weights are in %, `wc + wl = 100` (sch_dualpi2.c `MAX_WC`).
const MAX_WC: u32 = 100;

/// Configuration (see [`DUALPI2_PARAMS`] for the defaults and their sources).
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Params {
    /// PI2 target queuing delay, ns.
    pub target_ns: Time,
    /// Interval between base-probability updates, ns.
    pub tupdate_ns: Time,
    /// Integral gain, Hz (probability per second of delay error).
    pub alpha: f64,
    /// Proportional gain, Hz.
    pub beta: f64,
    /// L-queue step threshold, ns of sojourn.
    pub step_thresh_ns: Time,
    /// Step marking only for packets that found at least this many packets in the L queue.
    pub min_qlen_step: u32,
    /// Coupling factor k.
    pub coupling: f64,
    /// Classic protection: the C queue's WRR weight, % (0..=100).
    pub c_protection: u32,
    /// Packets held in both queues together.
    pub limit: u32,
    /// Device MTU, bytes.
    pub mtu: u32,
    /// Drop (true) or let the queues overflow (false) on overload.
    pub drop_overload: bool,
    /// The PI2 draw at enqueue instead of dequeue.
    pub drop_early: bool,
    /// ECT(0) is classified into the L queue too.
    pub any_ect: bool,
}

impl Default for DualPi2Params {
    /// Linux's defaults (`dualpi2_reset_default`).
    fn default() -> Self {
        DualPi2Params {
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha: 0.16,
            beta: 3.2,
            step_thresh_ns: 1_000_000,
            min_qlen_step: 0,
            coupling: 2.0,
            c_protection: 10,
            limit: 10_000,
            mtu: 1500,
            drop_overload: true,
            drop_early: false,
            any_ect: false,
        }
    }
}

fn ns(s: f64) -> Time {
    (s * 1e9).round() as Time
}

impl DualPi2Params {
    /// Reads and validates user parameters; the error names the parameter and what is allowed.
    pub fn from_map(m: &ParamMap, _l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(DUALPI2_PARAMS, m)?;
        let target = p.num("target")?;
        let tupdate = p.num("tupdate")?;
        let alpha = p.num("alpha")?;
        let beta = p.num("beta")?;
        let step = p.num("step_thresh")?;
        let min_qlen_step = p.num("min_qlen_step")?;
        let k = p.num("coupling_factor")?;
        let wc = p.num("c_protection")?;
        let limit = p.num("limit")?;
        let mtu = p.num("mtu")?;
        check_range("target", target, 0.0, false, 60.0, false)?;
        check_range("tupdate", tupdate, 0.0, true, 60.0, false)?;
        // Linux: alpha and beta in 1/256 Hz, 1 ..= 2^31 - 1.
        check_range("alpha", alpha, 0.0, true, 8_388_608.0, true)?;
        check_range("beta", beta, 0.0, true, 8_388_608.0, true)?;
        check_range("step_thresh", step, 0.0, false, 60.0, false)?;
        check_range(
            "min_qlen_step",
            min_qlen_step,
            0.0,
            false,
            4_294_967_295.0,
            false,
        )?;
        // Linux: a u8 of at least 1.
        check_range("coupling_factor", k, 1.0, false, 255.0, false)?;
        check_range("c_protection", wc, 0.0, false, MAX_WC as f64, false)?;
        check_range("limit", limit, 1.0, false, 2_147_483_647.0, false)?;
        check_range("mtu", mtu, 68.0, false, 65535.0, false)?;
        let tupdate_ns = ns(tupdate);
        if tupdate_ns == 0 {
            return Err(ParamError::new("tupdate", "must be at least 1 ns"));
        }
        Ok(DualPi2Params {
            target_ns: ns(target),
            tupdate_ns,
            alpha,
            beta,
            step_thresh_ns: ns(step),
            min_qlen_step: min_qlen_step as u32,
            coupling: k,
            c_protection: wc as u32,
            limit: limit as u32,
            mtu: mtu.round() as u32,
            drop_overload: p.bool("drop_overload"),
            drop_early: p.bool("drop_early"),
            any_ect: p.bool("any_ect"),
        })
    }

    /// The WRR credit after a reset: `mtu (wc - wl)` (sch_dualpi2.c
    /// `dualpi2_calculate_c_protection`), negative (L first) when wl > wc.
    pub fn credit_init(&self) -> i64 {
        let wc = self.c_protection as i64;
        self.mtu as i64 * (wc - (MAX_WC as i64 - wc))
    }
}

/// The controller's state.
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2State {
    /// Base probability p' (0..=1).
    pub p: f64,
    /// The queue delay the last update read, ns.
    pub last_qdelay_ns: Time,
    /// When the next update is due, ns.
    pub next_update: Time,
    /// WRR credit (sign picks the queue: L while <= 0).
    pub credit: i64,
}

/// Counters (over the whole run; reported as the qdisc's statistics).
#[derive(Clone, Debug, Default)]
pub struct DualPi2Stats {
    /// Packets classified into the C queue (Linux `packets_in_c`), overlimit drops included.
    pub arrived_c: u64,
    /// Packets classified into the L queue (Linux `packets_in_l`).
    pub arrived_l: u64,
    /// C packets dropped for the packet limit.
    pub overlimit_c: u64,
    /// L packets dropped for the packet limit.
    pub overlimit_l: u64,
    /// C packets dropped by the PI2 draw (p_C, or overload).
    pub drops_c: u64,
    /// L packets dropped by the PI2 draw (overload, or Not-ECT in L).
    pub drops_l: u64,
    /// L packets dropped by the step (Not-ECT in L above the threshold).
    pub step_drops: u64,
    /// C packets CE-marked by the PI2 draw (p_C).
    pub marks_c: u64,
    /// L packets CE-marked by the coupled draw (p_CL, or overload).
    pub marks_l_coupled: u64,
    /// L packets CE-marked by the step threshold (a packet may be counted here and above).
    pub marks_l_step: u64,
    /// C packets sent.
    pub sent_c: u64,
    /// L packets sent.
    pub sent_l: u64,
    /// Largest number of packets held at an arrival (Linux `maxq`).
    pub maxq: u32,
    /// Sojourn times of the C packets sent, ns.
    pub delay_c: Hist,
    /// Sojourn times of the L packets sent, ns.
    pub delay_l: Hist,
    /// Sum of the C sojourn times, ns.
    pub delay_sum_c: f64,
    /// Sum of the L sojourn times, ns.
    pub delay_sum_l: f64,
    /// Base-probability updates run.
    pub updates: u64,
}

/// One packet held: the caller's packet, its arrival time and whether the step applies to it.
#[derive(Debug)]
struct Held<P> {
    pkt: P,
    enq: Time,
    apply_step: bool,
}

/// Which of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The classic queue.
    C,
    /// The L4S queue.
    L,
}

/// The DualPI2 queue discipline over packets of type `P`.
#[derive(Debug)]
pub struct DualPi2<P> {
    params: DualPi2Params,
    state: DualPi2State,
    stats: DualPi2Stats,
    lq: VecDeque<Held<P>>,
    cq: VecDeque<Held<P>>,
    bytes_l: u64,
    bytes_c: u64,
}

/// Builds DualPI2 for packets of type `P` from user parameters.
pub fn build_dualpi2<P: FqPacket>(m: &ParamMap, l: &LinkContext) -> Result<DualPi2<P>, ParamError> {
    Ok(DualPi2::new(DualPi2Params::from_map(m, l)?))
}

/// A draw that succeeds with probability `p` (Linux `dualpi2_roll`).
#[inline]
fn roll(rng: &mut AqmRng, p: f64) -> bool {
    p > 0.0 && rng.random::<f64>() < p
}

/// What the PI2 draw decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pi2 {
    Pass,
    Mark,
    Drop,
}

impl<P: FqPacket> DualPi2<P> {
    /// An empty DualPI2 with validated parameters; its first update is due at `tupdate`.
    pub fn new(params: DualPi2Params) -> Self {
        DualPi2 {
            state: DualPi2State {
                p: 0.0,
                last_qdelay_ns: 0,
                next_update: params.tupdate_ns,
                credit: params.credit_init(),
            },
            stats: DualPi2Stats::default(),
            lq: VecDeque::new(),
            cq: VecDeque::new(),
            bytes_l: 0,
            bytes_c: 0,
            params,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &DualPi2Params {
        &self.params
    }

    /// The state.
    pub fn state(&self) -> &DualPi2State {
        &self.state
    }

    /// The counters.
    pub fn counters(&self) -> &DualPi2Stats {
        &self.stats
    }

    /// Base probability p'.
    pub fn base_prob(&self) -> f64 {
        self.state.p
    }

    /// The classic probability p_C = p'^2 (RFC 9332 s. 2.1).
    pub fn prob_c(&self) -> f64 {
        self.state.p * self.state.p
    }

    /// The coupled L4S probability p_CL = k p', at most 1 (RFC 9332 s. 2.1).
    pub fn prob_cl(&self) -> f64 {
        (self.params.coupling * self.state.p).min(1.0)
    }

    /// Packets in queue `q`.
    pub fn len_of(&self, q: Queue) -> usize {
        match q {
            Queue::C => self.cq.len(),
            Queue::L => self.lq.len(),
        }
    }

    /// The queue a packet joins (RFC 9331 s. 5.1: ECT(1) and CE are L4S).
    pub fn classify(&self, ecn: Ecn) -> Queue {
        if ecn.is_l4s() || (self.params.any_ect && ecn == Ecn::Ect0) {
            Queue::L
        } else {
            Queue::C
        }
    }

    /// Head sojourn times of the C and L queues at `now`, ns (0 when empty; Linux
    /// `get_queue_delays`).
    pub fn queue_delays(&self, now: Time) -> (Time, Time) {
        let d = |q: &VecDeque<Held<P>>| q.front().map_or(0, |h| now.saturating_sub(h.enq));
        (d(&self.cq), d(&self.lq))
    }

    /// One base-probability update at `now` (RFC 9332 Appendix A.1 `dualpi2_update`; Linux
    /// `calculate_probability` reads the larger of the two head sojourn times).
    pub fn update_prob(&mut self, now: Time) {
        let (qc, ql) = self.queue_delays(now);
        let q = qc.max(ql);
        let s = &mut self.state;
        let delta = self.params.alpha * (q as f64 - self.params.target_ns as f64) * 1e-9
            + self.params.beta * (q as f64 - s.last_qdelay_ns as f64) * 1e-9;
        s.last_qdelay_ns = q;
        let mut p = (s.p + delta).clamp(0.0, 1.0);
        if !self.params.drop_overload {
            // Cap p_CL at 100% to keep window fairness while the queues overflow.
            p = p.min(1.0 / self.params.coupling);
        }
        s.p = p;
        self.stats.updates += 1;
    }

    /// Runs every update due at or before `now`, each at its own time.
    fn catch_up(&mut self, now: Time) {
        while self.state.next_update <= now {
            let u = self.state.next_update;
            let idle = self.lq.is_empty()
                && self.cq.is_empty()
                && self.state.p == 0.0
                && self.state.last_qdelay_ns == 0;
            if idle {
                // Empty queues and p' = 0: every update until the next packet leaves p' at 0
                // (the delay error is -target); skip them in one step.
                let n = (now - u) / self.params.tupdate_ns + 1;
                self.stats.updates += n;
                self.state.next_update = u + n * self.params.tupdate_ns;
                break;
            }
            self.update_prob(u);
            self.state.next_update = u + self.params.tupdate_ns;
        }
    }

    /// The PI2 draw for a packet of queue `q` with codepoint `ecn` (sch_dualpi2.c `must_drop`),
    /// with `backlog` bytes held besides it.
    fn pi2(&self, q: Queue, ecn: Ecn, backlog: u64, rng: &mut AqmRng) -> Pi2 {
        if backlog < 2 * self.params.mtu as u64 {
            return Pi2::Pass;
        }
        let p = self.state.p;
        let lp = self.params.coupling * p;
        let overload = lp > 1.0;
        match q {
            Queue::C => {
                if roll(rng, p) && roll(rng, p) {
                    if overload || !ecn.is_capable() {
                        return Pi2::Drop;
                    }
                    return Pi2::Mark;
                }
                Pi2::Pass
            }
            Queue::L => {
                if overload {
                    if self.params.drop_overload && roll(rng, p) && roll(rng, p) {
                        return Pi2::Drop;
                    }
                    return if ecn.is_capable() {
                        Pi2::Mark
                    } else {
                        Pi2::Pass
                    };
                }
                if roll(rng, lp) {
                    if !ecn.is_capable() {
                        return Pi2::Drop;
                    }
                    return Pi2::Mark;
                }
                Pi2::Pass
            }
        }
    }

    fn count_pi2(&mut self, q: Queue, v: Pi2) {
        match (q, v) {
            (Queue::C, Pi2::Drop) => self.stats.drops_c += 1,
            (Queue::L, Pi2::Drop) => self.stats.drops_l += 1,
            (Queue::C, Pi2::Mark) => self.stats.marks_c += 1,
            (Queue::L, Pi2::Mark) => self.stats.marks_l_coupled += 1,
            (_, Pi2::Pass) => {}
        }
    }

    /// Enqueue at `now`; dropped packets go to `on_drop`.
    pub fn enqueue_at(
        &mut self,
        mut pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) {
        self.catch_up(now);
        let ecn = pkt.ecn();
        let q = self.classify(ecn);
        match q {
            Queue::C => self.stats.arrived_c += 1,
            Queue::L => self.stats.arrived_l += 1,
        }
        let held = (self.lq.len() + self.cq.len()) as u32;
        if held >= self.params.limit {
            match q {
                Queue::C => self.stats.overlimit_c += 1,
                Queue::L => self.stats.overlimit_l += 1,
            }
            on_drop(pkt, SchedDrop::Overlimit);
            return;
        }
        if self.params.drop_early {
            let v = self.pi2(q, ecn, self.bytes_l + self.bytes_c, rng);
            self.count_pi2(q, v);
            match v {
                Pi2::Drop => {
                    on_drop(pkt, SchedDrop::Aqm);
                    return;
                }
                Pi2::Mark => pkt.set_ce(),
                Pi2::Pass => {}
            }
        }
        self.stats.maxq = self.stats.maxq.max(held);
        let size = pkt.size_bytes() as u64;
        match q {
            Queue::L => {
                let apply_step = self.lq.len() as u32 >= self.params.min_qlen_step;
                self.bytes_l += size;
                self.lq.push_back(Held {
                    pkt,
                    enq: now,
                    apply_step,
                });
            }
            Queue::C => {
                self.bytes_c += size;
                self.cq.push_back(Held {
                    pkt,
                    enq: now,
                    apply_step: false,
                });
            }
        }
    }

    /// The WRR pick (sch_dualpi2.c `dequeue_packet`): the packet, its queue and the credit change
    /// to apply if it is sent.
    fn pick(&mut self) -> Option<(Held<P>, Queue, i64)> {
        let (nl, nc) = (self.lq.len(), self.cq.len());
        let wc = self.params.c_protection as i64;
        let wl = MAX_WC as i64 - wc;
        if nl > 0 && (nc == 0 || self.state.credit <= 0) {
            let h = self.lq.pop_front().expect("non-empty");
            let size = h.pkt.size_bytes() as u64;
            self.bytes_l -= size;
            let change = if nc > 0 { wc * size as i64 } else { 0 };
            Some((h, Queue::L, change))
        } else if nc > 0 {
            let h = self.cq.pop_front().expect("non-empty");
            let size = h.pkt.size_bytes() as u64;
            self.bytes_c -= size;
            let change = if nl > 0 { -wl * size as i64 } else { 0 };
            Some((h, Queue::C, change))
        } else {
            self.state.credit = self.params.credit_init();
            None
        }
    }

    /// Dequeue at `now` (sch_dualpi2.c `dualpi2_qdisc_dequeue`); packets dropped on the way go
    /// to `on_drop`.
    pub fn dequeue_at(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
        self.catch_up(now);
        while let Some((mut h, q, change)) = self.pick() {
            let ecn = h.pkt.ecn();
            if !self.params.drop_early {
                let v = self.pi2(q, ecn, self.bytes_l + self.bytes_c, rng);
                self.count_pi2(q, v);
                match v {
                    Pi2::Drop => {
                        on_drop(h.pkt, SchedDrop::Aqm);
                        continue;
                    }
                    Pi2::Mark => h.pkt.set_ce(),
                    Pi2::Pass => {}
                }
            }
            let sojourn = now.saturating_sub(h.enq);
            if q == Queue::L && h.apply_step && sojourn > self.params.step_thresh_ns {
                if !ecn.is_capable() {
                    self.stats.step_drops += 1;
                    on_drop(h.pkt, SchedDrop::Aqm);
                    continue;
                }
                h.pkt.set_ce();
                self.stats.marks_l_step += 1;
            }
            self.state.credit += change;
            match q {
                Queue::C => {
                    self.stats.sent_c += 1;
                    self.stats.delay_c.add(sojourn);
                    self.stats.delay_sum_c += sojourn as f64;
                }
                Queue::L => {
                    self.stats.sent_l += 1;
                    self.stats.delay_l.add(sojourn);
                    self.stats.delay_sum_l += sojourn as f64;
                }
            }
            return Some(h.pkt);
        }
        None
    }

    /// The counters by name: per queue (arrivals, drops, marks, mean and 99th-percentile sojourn
    /// in ms) and the current probabilities.
    pub fn stats_vec(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let ms = |x: f64| x / 1e6;
        let mean = |sum: f64, n: u64| if n > 0 { ms(sum / n as f64) } else { 0.0 };
        let p99 = |h: &Hist| h.quantile(0.99).map_or(0.0, ms);
        vec![
            ("arrived_c", s.arrived_c as f64),
            ("arrived_l", s.arrived_l as f64),
            ("sent_c", s.sent_c as f64),
            ("sent_l", s.sent_l as f64),
            ("overlimit_c", s.overlimit_c as f64),
            ("overlimit_l", s.overlimit_l as f64),
            ("drops_c", s.drops_c as f64),
            ("drops_l", s.drops_l as f64),
            ("step_drops", s.step_drops as f64),
            ("marks_c", s.marks_c as f64),
            ("marks_l_coupled", s.marks_l_coupled as f64),
            ("marks_l_step", s.marks_l_step as f64),
            ("delay_c_mean_ms", mean(s.delay_sum_c, s.sent_c)),
            ("delay_l_mean_ms", mean(s.delay_sum_l, s.sent_l)),
            ("delay_c_p99_ms", p99(&s.delay_c)),
            ("delay_l_p99_ms", p99(&s.delay_l)),
            ("maxq", s.maxq as f64),
            ("prob_base", self.state.p),
            ("prob_c", self.prob_c()),
            ("prob_cl", self.prob_cl()),
            ("updates", s.updates as f64),
        ]
    }
}

impl<P: FqPacket + Send + std::fmt::Debug> Scheduler<P> for DualPi2<P> {
    fn name(&self) -> &'static str {
        "dualpi2"
    }

    fn enqueue(
        &mut self,
        pkt: P,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) {
        self.enqueue_at(pkt, now, rng, on_drop);
    }

    fn dequeue(
        &mut self,
        now: Time,
        rng: &mut AqmRng,
        on_drop: &mut dyn FnMut(P, SchedDrop),
    ) -> Option<P> {
        self.dequeue_at(now, rng, on_drop)
    }

    fn len_pkts(&self) -> u32 {
        (self.lq.len() + self.cq.len()) as u32
    }

    fn len_bytes(&self) -> u64 {
        self.bytes_l + self.bytes_c
    }

    fn for_each_packet(&self, f: &mut dyn FnMut(&P)) {
        self.lq.iter().chain(self.cq.iter()).for_each(|h| f(&h.pkt));
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        self.stats_vec()
    }

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_update)
    }

    fn update(&mut self, now: Time, _rng: &mut AqmRng) {
        self.catch_up(now);
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::ParamValue;

    /// A test packet: flow, size, codepoint.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Pk {
        id: u32,
        size: u32,
        ecn: Ecn,
    }

    impl FqPacket for Pk {
        fn flow_id(&self) -> u32 {
            self.id
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

    fn pk(id: u32, ecn: Ecn) -> Pk {
        Pk {
            id,
            size: 1500,
            ecn,
        }
    }

    const MS: Time = 1_000_000;

    fn rng() -> AqmRng {
        aqm::rng_from_seed(7)
    }

    fn no_drop(_: Pk, _: SchedDrop) {
        panic!("unexpected drop");
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// RFC 9332 Appendix A.1's update with Linux's defaults (alpha 0.16 Hz, beta 3.2 Hz,
    /// target 15 ms, Tupdate 16 ms), worked by hand: one C packet arrives at 0 and stays.
    /// At 16 ms: q = 16 ms, p' = 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) = 0.00016 + 0.0512
    /// = 0.05136. At 32 ms: p' += 0.16 (0.032 - 0.015) + 3.2 (0.032 - 0.016) = 0.00272 + 0.0512,
    /// p' = 0.10528; p_C = p'^2 = 0.0110838784, p_CL = 2 p' = 0.21056. The queue then empties
    /// (q = 0): at 48 ms p' += 0.16 (0 - 0.015) + 3.2 (0 - 0.032) = -0.0024 - 0.1024 = -0.1048,
    /// p' = 0.00048; at 64 ms p' += -0.0024: bounded at 0.
    #[test]
    fn pi_update_and_coupling_by_hand() {
        let mut q: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let mut r = rng();
        q.enqueue_at(pk(0, Ecn::NotEct), 0, &mut r, &mut no_drop);
        q.update(16 * MS, &mut r);
        assert!(close(q.base_prob(), 0.05136), "{}", q.base_prob());
        q.update(32 * MS, &mut r);
        assert!(close(q.base_prob(), 0.10528), "{}", q.base_prob());
        assert!(close(q.prob_c(), 0.011_083_878_4), "{}", q.prob_c());
        assert!(close(q.prob_cl(), 0.21056), "{}", q.prob_cl());
        // Take the packet (backlog < 2 MTU: no AQM) just before the next update.
        let got = q.dequeue_at(47 * MS, &mut r, &mut no_drop).unwrap();
        assert_eq!(got.ecn, Ecn::NotEct);
        q.update(48 * MS, &mut r);
        assert!(close(q.base_prob(), 0.00048), "{}", q.base_prob());
        q.update(64 * MS, &mut r);
        assert_eq!(q.base_prob(), 0.0);
        assert_eq!(q.counters().updates, 4);
    }

    /// Linux reads the larger of the two head sojourn times: an L packet waiting 16 ms drives
    /// p' exactly as a C packet would.
    #[test]
    fn update_reads_the_larger_head_sojourn() {
        let mut q: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let mut r = rng();
        q.enqueue_at(pk(0, Ecn::Ect1), 0, &mut r, &mut no_drop);
        q.enqueue_at(pk(1, Ecn::NotEct), 10 * MS, &mut r, &mut no_drop);
        q.update(16 * MS, &mut r);
        // max(16, 6) ms = 16 ms: as in the test above.
        assert!(close(q.base_prob(), 0.05136), "{}", q.base_prob());
    }

    /// Updates due while no packet event happens run lazily at their own times: the same p' as
    /// when each is called on time.
    #[test]
    fn lazy_updates_equal_timely_ones() {
        let mut a: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let mut b: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let (mut ra, mut rb) = (rng(), rng());
        for i in 0..5 {
            a.enqueue_at(pk(i, Ecn::NotEct), 0, &mut ra, &mut no_drop);
            b.enqueue_at(pk(i, Ecn::NotEct), 0, &mut rb, &mut no_drop);
        }
        for k in 1..=6 {
            a.update(k * 16 * MS, &mut ra);
        }
        // One event at 100 ms runs the six updates due (16 .. 96 ms).
        b.enqueue_at(pk(9, Ecn::NotEct), 100 * MS, &mut rb, &mut no_drop);
        assert_eq!(a.base_prob(), b.base_prob());
        assert_eq!(b.state().next_update, 112 * MS);
    }

    /// RFC 9331 s. 5.1: ECT(1) and CE are L4S, Not-ECT and ECT(0) classic (`any_ect` moves
    /// ECT(0) to L as Linux's any_ect does).
    #[test]
    fn classification_by_codepoint() {
        let q: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        assert_eq!(q.classify(Ecn::NotEct), Queue::C);
        assert_eq!(q.classify(Ecn::Ect0), Queue::C);
        assert_eq!(q.classify(Ecn::Ect1), Queue::L);
        assert_eq!(q.classify(Ecn::Ce), Queue::L);
        let any: DualPi2<Pk> = DualPi2::new(DualPi2Params {
            any_ect: true,
            ..DualPi2Params::default()
        });
        assert_eq!(any.classify(Ecn::Ect0), Queue::L);
        assert_eq!(any.classify(Ecn::NotEct), Queue::C);
    }

    /// The native L4S step (RFC 9332's native L4S AQM, Linux do_step_aqm): an L packet whose sojourn
    /// exceeds 1 ms is CE-marked; at exactly 1 ms (not above) it is not; p' = 0 so no coupled
    /// mark interferes.
    #[test]
    fn step_marking_above_one_ms() {
        let mut q: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let mut r = rng();
        q.enqueue_at(pk(0, Ecn::Ect1), 0, &mut r, &mut no_drop);
        q.enqueue_at(pk(1, Ecn::Ect1), 0, &mut r, &mut no_drop);
        q.enqueue_at(pk(2, Ecn::Ect0), 0, &mut r, &mut no_drop);
        let a = q.dequeue_at(MS, &mut r, &mut no_drop).unwrap();
        assert_eq!(
            (a.id, a.ecn),
            (0, Ecn::Ect1),
            "1 ms is not above the threshold"
        );
        let b = q.dequeue_at(MS + 1, &mut r, &mut no_drop).unwrap();
        assert_eq!((b.id, b.ecn), (1, Ecn::Ce), "1 ms + 1 ns is");
        // The classic packet waited longer but the step is the L queue's only.
        let c = q.dequeue_at(5 * MS, &mut r, &mut no_drop).unwrap();
        assert_eq!((c.id, c.ecn), (2, Ecn::Ect0));
        assert_eq!(q.counters().marks_l_step, 1);
        assert_eq!(q.counters().delay_l.len(), 2);
    }

    /// Step marking applies only to packets that found at least `min_qlen_step` packets in the
    /// L queue (Linux skb_apply_step).
    #[test]
    fn min_qlen_step_exempts_packets_arriving_to_a_short_queue() {
        let mut q: DualPi2<Pk> = DualPi2::new(DualPi2Params {
            min_qlen_step: 1,
            ..DualPi2Params::default()
        });
        let mut r = rng();
        q.enqueue_at(pk(0, Ecn::Ect1), 0, &mut r, &mut no_drop); // found 0: exempt
        q.enqueue_at(pk(1, Ecn::Ect1), 0, &mut r, &mut no_drop); // found 1: stepped
        assert_eq!(
            q.dequeue_at(2 * MS, &mut r, &mut no_drop).unwrap().ecn,
            Ecn::Ect1
        );
        assert_eq!(
            q.dequeue_at(2 * MS, &mut r, &mut no_drop).unwrap().ecn,
            Ecn::Ce
        );
    }

    /// The coupled probabilities measured over many draws match p_C = p'^2 and p_CL = k p' for a
    /// p' set by hand (p' = 0.3: p_C = 0.09, p_CL = 0.6), and overload (k p' > 1, p' = 0.6):
    /// classic ECT(0) is dropped with p'^2 = 0.36 and never marked, L is dropped with 0.36 and
    /// every other L packet marked.
    #[test]
    fn coupled_probabilities_and_overload_by_draws() {
        let n = 200_000u32;
        let mut r = rng();
        for (p, ecn, q, want_mark, want_drop) in [
            (0.3, Ecn::Ect0, Queue::C, 0.09, 0.0),
            (0.3, Ecn::NotEct, Queue::C, 0.0, 0.09),
            (0.3, Ecn::Ect1, Queue::L, 0.6, 0.0),
            (0.6, Ecn::Ect0, Queue::C, 0.0, 0.36),
            (0.6, Ecn::Ect1, Queue::L, 0.64, 0.36),
        ] {
            let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
            d.state.p = p;
            let (mut marks, mut drops) = (0u32, 0u32);
            for _ in 0..n {
                match d.pi2(q, ecn, 10_000, &mut r) {
                    Pi2::Mark => marks += 1,
                    Pi2::Drop => drops += 1,
                    Pi2::Pass => {}
                }
            }
            let (fm, fd) = (marks as f64 / n as f64, drops as f64 / n as f64);
            // 4.5 standard deviations of a binomial proportion at n = 200,000: < 0.005.
            assert!((fm - want_mark).abs() < 0.005, "p {p} {ecn:?}: marks {fm}");
            assert!((fd - want_drop).abs() < 0.005, "p {p} {ecn:?}: drops {fd}");
        }
    }

    /// No AQM action while less than 2 MTU would remain queued (Linux must_drop).
    #[test]
    fn no_aqm_below_two_mtu_of_backlog() {
        let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        d.state.p = 1.0;
        let mut r = rng();
        assert_eq!(d.pi2(Queue::C, Ecn::NotEct, 2999, &mut r), Pi2::Pass);
        assert_eq!(d.pi2(Queue::C, Ecn::NotEct, 3000, &mut r), Pi2::Drop);
    }

    /// WRR with classic protection 10%: with both queues backlogged with equal packets, the
    /// credit starts at mtu (10 - 90) = -120,000, L is served while it is <= 0 (+10 x 1500 each
    /// time), C once it is positive (-90 x 1500): L, L, ... (9 packets from -120,000 to
    /// +15,000), then C, then 9 L and 1 C again: C gets 1 packet in 10.
    #[test]
    fn wrr_gives_classic_its_protected_share() {
        let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        assert_eq!(d.state().credit, -120_000);
        let mut r = rng();
        for i in 0..100 {
            d.enqueue_at(pk(i, Ecn::Ect1), 0, &mut r, &mut no_drop);
            d.enqueue_at(pk(1000 + i, Ecn::NotEct), 0, &mut r, &mut no_drop);
        }
        // Dequeue at time 0: no sojourn, no step; p' = 0: no PI2 action.
        let order: Vec<Queue> = (0..40)
            .map(|_| {
                let p = d.dequeue_at(0, &mut r, &mut no_drop).unwrap();
                if p.id >= 1000 {
                    Queue::C
                } else {
                    Queue::L
                }
            })
            .collect();
        let cs: Vec<usize> = (0..40).filter(|&i| order[i] == Queue::C).collect();
        assert_eq!(cs, vec![9, 19, 29, 39], "{order:?}");
        // Classic protection 120% is refused with one line naming the parameter.
        let mut m = ParamMap::new();
        m.insert("c_protection".into(), ParamValue::Num(120.0));
        let e = DualPi2Params::from_map(&m, &LinkContext::default()).unwrap_err();
        assert_eq!(e.param, "c_protection");
        assert!(e.msg.contains("[0, 100]"), "{e}");
    }

    /// With only one queue backlogged the credit does not move; when both empty it resets.
    #[test]
    fn credit_moves_only_when_both_queues_wait_and_resets_when_empty() {
        let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params::default());
        let mut r = rng();
        for i in 0..3 {
            d.enqueue_at(pk(i, Ecn::Ect1), 0, &mut r, &mut no_drop);
        }
        while d.dequeue_at(0, &mut r, &mut no_drop).is_some() {}
        assert_eq!(d.state().credit, -120_000);
        d.enqueue_at(pk(7, Ecn::NotEct), 0, &mut r, &mut no_drop);
        d.enqueue_at(pk(8, Ecn::Ect1), 0, &mut r, &mut no_drop);
        d.dequeue_at(0, &mut r, &mut no_drop).unwrap(); // L, while C waits: +15,000
        assert_eq!(d.state().credit, -105_000);
        d.dequeue_at(0, &mut r, &mut no_drop).unwrap(); // C alone: unchanged
        assert_eq!(d.state().credit, -105_000);
        assert!(d.dequeue_at(0, &mut r, &mut no_drop).is_none());
        assert_eq!(d.state().credit, -120_000);
    }

    /// The packet limit counts both queues; drops beyond it are overlimit drops.
    #[test]
    fn limit_counts_both_queues() {
        let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params {
            limit: 3,
            ..DualPi2Params::default()
        });
        let mut r = rng();
        let mut dropped = Vec::new();
        for (i, e) in [Ecn::Ect1, Ecn::NotEct, Ecn::Ect1, Ecn::NotEct, Ecn::Ect1]
            .into_iter()
            .enumerate()
        {
            d.enqueue_at(pk(i as u32, e), 0, &mut r, &mut |p, why| {
                dropped.push((p.id, why))
            });
        }
        assert_eq!(
            dropped,
            vec![(3, SchedDrop::Overlimit), (4, SchedDrop::Overlimit)]
        );
        assert_eq!((d.counters().overlimit_c, d.counters().overlimit_l), (1, 1));
        assert_eq!(Scheduler::<Pk>::len_pkts(&d), 3);
    }

    /// drop_overload = false caps p' at 1/k (Linux calculate_probability).
    #[test]
    fn overflow_mode_caps_the_base_probability() {
        let mut d: DualPi2<Pk> = DualPi2::new(DualPi2Params {
            drop_overload: false,
            ..DualPi2Params::default()
        });
        let mut r = rng();
        d.enqueue_at(pk(0, Ecn::NotEct), 0, &mut r, &mut no_drop);
        d.update(10_000 * MS, &mut r);
        assert_eq!(d.base_prob(), 0.5);
        assert_eq!(d.prob_cl(), 1.0);
    }

    /// Every parameter out of range is refused naming it; the defaults build.
    #[test]
    fn parameters_are_checked() {
        let l = LinkContext::default();
        let d = DualPi2Params::from_map(&ParamMap::new(), &l).unwrap();
        assert_eq!(d, DualPi2Params::default());
        for (name, v) in [
            ("tupdate", 0.0),
            ("alpha", 0.0),
            ("beta", -1.0),
            ("coupling_factor", 0.5),
            ("c_protection", -1.0),
            ("limit", 0.0),
            ("target", -0.001),
            ("step_thresh", -1.0),
        ] {
            let mut m = ParamMap::new();
            m.insert(name.into(), ParamValue::Num(v));
            let e = DualPi2Params::from_map(&m, &l).unwrap_err();
            assert_eq!(e.param, name, "{e}");
        }
    }
}
