//! PIE: Proportional Integral controller Enhanced (R. Pan, P. Natarajan, F. Baker, G. White,
//! RFC 8033, 2017): a drop probability updated every `t_update` from the queue delay (s. 4.2) and
//! applied to arrivals (s. 4.1), with burst allowance (s. 4.4) and the optional ECN (s. 5.1),
//! departure-rate estimation (s. 5.2), derandomisation (s. 5.4) and cap on increases (s. 5.5).
//!
//! Queue delay is measured from timestamps by default: the sojourn time of the last departure,
//! given by the `dequeue` hook (RFC 8033 s. 4.3; the method of its Appendix A pseudo-code and
//! Linux's default). It needs no rate estimate, so it is right from the first packet and on links
//! whose rate varies. `estimator = "dq_rate"` selects the departure-rate estimate of s. 5.2.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{
    congestion_signal, count_signal, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC,
};
use rand::Rng;

/// PIE's parameters.
#[rustfmt::skip]
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target", kind: K::Duration, default: D::Num(0.015), help: "QDELAY_REF, the target queue delay, s (RFC 8033 s. 4.2, App. A: 15 ms)" },
    ParamSpec { name: "t_update", kind: K::Duration, default: D::Num(0.015), help: "period of the drop probability update, s (RFC 8033 s. 4.2: 15 ms)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Num(0.125), help: "weight of the delay error, 1/s (RFC 8033 s. 4.2: 1/8)" },
    ParamSpec { name: "beta", kind: K::Real, default: D::Num(1.25), help: "weight of the delay change, 1/s (RFC 8033 s. 4.2: 1 + 1/4)" },
    ParamSpec { name: "max_burst", kind: K::Duration, default: D::Num(0.15), help: "burst allowance: no early drop for this long after a calm period, s (RFC 8033 s. 4.4: 150 ms)" },
    ParamSpec { name: "mean_pkt_size", kind: K::Size, default: D::Auto, help: "MEAN_PKTSIZE, bytes: no early drop while the queue holds at most two (RFC 8033 s. 4.1); default: the link's mean packet size" },
    ParamSpec { name: "estimator", kind: K::Choice(&["timestamp", "dq_rate"]), default: D::Str("timestamp"), help: "queue delay from departure timestamps (s. 4.3) or from the departure rate (s. 5.2)" },
    ParamSpec { name: "dq_threshold", kind: K::Size, default: D::Num(16384.0), help: "bytes per departure-rate measurement, dq_rate only (RFC 8033 s. 5.2: 2^14)" },
    ParamSpec { name: "cap_drop_adjustment", kind: K::Bool, default: D::Bool(true), help: "at drop_prob >= 10%, raise it by at most 2% per update (RFC 8033 s. 5.5; Linux, ns-3)" },
    ParamSpec { name: "derandomize", kind: K::Bool, default: D::Bool(false), help: "space drops by the accumulated probability (RFC 8033 s. 5.4, optional)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping while drop_prob <= mark_ecnth (RFC 8033 s. 5.1)" },
    ParamSpec { name: "mark_ecnth", kind: K::Real, default: D::Num(0.1), help: "above this drop probability ECN-capable packets are dropped too (RFC 8033 s. 5.1: 10%)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "pie",
    summary:
        "Proportional Integral controller Enhanced: queue-delay PI control of the drop probability",
    source: "RFC 8033 (Pan, Natarajan, Baker, White 2017), s. 4.1-4.4, options s. 5.1-5.5",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Pie::new(PieParams::from_map(m, l)?)))
    },
};

/// Converts a duration in seconds (as parameters arrive) to nanoseconds.
fn secs_to_ns(s: f64) -> Time {
    (s * NS_PER_SEC as f64).round() as Time
}

fn ns_to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// How the queue delay is estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimator {
    /// Sojourn time of the last departure (RFC 8033 s. 4.3, Appendix A).
    Timestamp,
    /// Queue bytes / departure rate, the rate measured over `dq_threshold` bytes (s. 5.2).
    DqRate,
}

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF, ns.
    pub target_ns: Time,
    /// T_UPDATE, ns.
    pub t_update_ns: Time,
    /// alpha, 1/s.
    pub alpha: f64,
    /// beta, 1/s.
    pub beta: f64,
    /// MAX_BURST, ns.
    pub max_burst_ns: Time,
    /// MEAN_PKTSIZE, bytes.
    pub mean_pkt_size: f64,
    /// Queue delay estimator.
    pub estimator: Estimator,
    /// DQ_THRESHOLD, bytes.
    pub dq_threshold: u64,
    /// Cap drop adjustment (s. 5.5).
    pub cap_drop_adjustment: bool,
    /// Derandomisation (s. 5.4).
    pub derandomize: bool,
    /// ECN marking.
    pub ecn: bool,
    /// mark_ecnth.
    pub mark_ecnth: f64,
}

impl PieParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let target = p.num("target")?;
        let t_update = p.num("t_update")?;
        let max_burst = p.num("max_burst")?;
        let dq_threshold = p.num("dq_threshold")?;
        check_range("target", target, 0.0, true, 3600.0, false)?;
        check_range("t_update", t_update, 0.0, true, 3600.0, false)?;
        check_range("max_burst", max_burst, 0.0, false, 3600.0, false)?;
        check_range("dq_threshold", dq_threshold, 1.0, false, 1e12, false)?;
        let r = PieParams {
            target_ns: secs_to_ns(target),
            t_update_ns: secs_to_ns(t_update),
            alpha: p.num("alpha")?,
            beta: p.num("beta")?,
            max_burst_ns: secs_to_ns(max_burst),
            mean_pkt_size: p
                .opt_num("mean_pkt_size")?
                .unwrap_or(l.mean_pkt_bytes as f64),
            estimator: if p.choice("estimator") == "dq_rate" {
                Estimator::DqRate
            } else {
                Estimator::Timestamp
            },
            dq_threshold: dq_threshold.round() as u64,
            cap_drop_adjustment: p.bool("cap_drop_adjustment"),
            derandomize: p.bool("derandomize"),
            ecn: p.bool("ecn"),
            mark_ecnth: p.num("mark_ecnth")?,
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.target_ns == 0 {
            return Err(ParamError::new("target", "must be at least 1 ns"));
        }
        if self.t_update_ns == 0 {
            return Err(ParamError::new("t_update", "must be at least 1 ns"));
        }
        check_range("alpha", self.alpha, 0.0, false, 1e6, false)?;
        check_range("beta", self.beta, 0.0, false, 1e6, false)?;
        check_range("mean_pkt_size", self.mean_pkt_size, 0.0, true, 1e9, false)?;
        check_range("mark_ecnth", self.mark_ecnth, 0.0, false, 1.0, false)?;
        Ok(())
    }
}

/// State of the departure-rate estimator (RFC 8033 s. 5.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DqRateState {
    /// A measurement cycle is running.
    pub in_measurement: bool,
    /// When it started, ns.
    pub start: Time,
    /// Bytes departed in it.
    pub count_bytes: u64,
    /// Average time to send `dq_threshold` bytes, ns (0: no estimate yet).
    pub avg_dq_time: f64,
}

/// State that changes per packet or per update.
#[derive(Clone, Debug, PartialEq)]
pub struct PieState {
    /// drop_prob_.
    pub drop_prob: f64,
    /// current_qdelay, ns.
    pub qdelay: Time,
    /// qdelay_old_, ns: the delay at the previous update.
    pub qdelay_old: Time,
    /// burst_allowance_, ns.
    pub burst_allowance: Time,
    /// accu_prob_ of derandomisation.
    pub accu_prob: f64,
    /// When the next update is due, ns.
    pub next_update: Time,
    /// Departure-rate estimator.
    pub dq: DqRateState,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PieStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Arrivals refused by a full buffer.
    pub overflows: u64,
    /// Drop probability updates.
    pub updates: u64,
}

/// The raw PI step of s. 4.2: alpha (qdelay - target) + beta (qdelay - qdelay_old), delays in
/// seconds, alpha and beta in 1/s.
#[inline]
pub fn pi_step(alpha: f64, beta: f64, qdelay_s: f64, qdelay_old_s: f64, target_s: f64) -> f64 {
    alpha * (qdelay_s - target_s) + beta * (qdelay_s - qdelay_old_s)
}

/// Auto-tuning factor of s. 4.2 for the current drop probability: the step is divided by 2048
/// below 0.0001%, 512 below 0.001%, 128 below 0.01%, 32 below 0.1%, 8 below 1%, 2 below 10%.
#[inline]
pub fn autotune_factor(drop_prob: f64) -> f64 {
    if drop_prob < 0.000001 {
        1.0 / 2048.0
    } else if drop_prob < 0.00001 {
        1.0 / 512.0
    } else if drop_prob < 0.0001 {
        1.0 / 128.0
    } else if drop_prob < 0.001 {
        1.0 / 32.0
    } else if drop_prob < 0.01 {
        1.0 / 8.0
    } else if drop_prob < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

/// One update of the drop probability (s. 4.2, Appendix A `calculate_drop_prob`): the tuned PI
/// step (capped at +2% from 10% on with `cap`, s. 5.5), decay by 2% when the delay was 0 at this
/// and the previous update, bound to [0, 1].
#[inline]
pub fn update_drop_prob(p: &PieParams, drop_prob: f64, qdelay: Time, qdelay_old: Time) -> f64 {
    let step = pi_step(
        p.alpha,
        p.beta,
        ns_to_secs(qdelay),
        ns_to_secs(qdelay_old),
        ns_to_secs(p.target_ns),
    );
    let mut step = step * autotune_factor(drop_prob);
    if p.cap_drop_adjustment && drop_prob >= 0.1 && step > 0.02 {
        step = 0.02;
    }
    let mut next = drop_prob + step;
    if qdelay == 0 && qdelay_old == 0 {
        // Exponential decay when congestion is gone.
        next *= 0.98;
    }
    next.clamp(0.0, 1.0)
}

/// The work-conserving safeguard of s. 4.1: no early drop while the previous delay sample is
/// below half the target and the probability below 20%, nor while the queue holds at most two
/// mean-size packets.
#[inline]
pub fn early_drop_allowed(
    p: &PieParams,
    qdelay_old: Time,
    drop_prob: f64,
    queue_bytes: u64,
) -> bool {
    let calm = qdelay_old < p.target_ns / 2 && drop_prob < 0.2;
    let tiny = queue_bytes as f64 <= 2.0 * p.mean_pkt_size;
    !(calm || tiny)
}

/// The PIE algorithm.
#[derive(Debug, Clone)]
pub struct Pie {
    /// Configuration.
    pub params: PieParams,
    /// Evolving state.
    pub state: PieState,
    /// Counters.
    pub stats: PieStats,
}

impl Pie {
    /// A PIE instance with validated parameters; the first update is due at `t_update`.
    pub fn new(params: PieParams) -> Self {
        let state = PieState {
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: params.max_burst_ns,
            accu_prob: 0.0,
            next_update: params.t_update_ns,
            dq: DqRateState::default(),
        };
        Pie {
            params,
            state,
            stats: PieStats::default(),
        }
    }

    /// `drop_early()` of Appendix A with derandomisation (s. 5.4) when enabled.
    fn drop_early(&mut self, q: &QueueView, rng: &mut AqmRng) -> bool {
        let s = &mut self.state;
        if !early_drop_allowed(&self.params, s.qdelay_old, s.drop_prob, q.len_bytes) {
            return false;
        }
        if self.params.derandomize {
            if s.drop_prob == 0.0 {
                s.accu_prob = 0.0;
            }
            s.accu_prob += s.drop_prob;
            if s.accu_prob < 0.85 {
                return false;
            }
            if s.accu_prob >= 8.5 {
                return true;
            }
        }
        rng.random::<f64>() < s.drop_prob
    }

    /// Departure-rate measurement of s. 5.2 on a departure of `size` bytes leaving `q_bytes`.
    fn measure_departure(&mut self, size: u32, q_bytes: u64, now: Time) {
        let thr = self.params.dq_threshold;
        let dq = &mut self.state.dq;
        if !dq.in_measurement && q_bytes >= thr {
            dq.in_measurement = true;
            dq.start = now;
            dq.count_bytes = 0;
        }
        if dq.in_measurement {
            dq.count_bytes += size as u64;
            if dq.count_bytes >= thr {
                let dq_int = now.saturating_sub(dq.start) as f64;
                if dq_int > 0.0 {
                    // weight = DQ_THRESHOLD / 2^16 = 1/4 at the default threshold (s. 5.2).
                    dq.avg_dq_time = if dq.avg_dq_time == 0.0 {
                        dq_int
                    } else {
                        0.25 * dq_int + 0.75 * dq.avg_dq_time
                    };
                }
                dq.in_measurement = false;
            }
        }
    }

    /// The current queue delay estimate for an update seeing queue `q`.
    fn current_qdelay(&self, q: &QueueView) -> Time {
        match self.params.estimator {
            // An empty queue has no delay; the last sojourn would otherwise stay forever.
            Estimator::Timestamp if q.len_pkts == 0 => 0,
            Estimator::Timestamp => self.state.qdelay,
            Estimator::DqRate => {
                let avg = self.state.dq.avg_dq_time;
                (q.len_bytes as f64 * avg / self.params.dq_threshold as f64) as Time
            }
        }
    }
}

impl Aqm for Pie {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let v = if self.state.burst_allowance == 0 && self.drop_early(q, rng) {
            self.state.accu_prob = 0.0;
            let v = if self.state.drop_prob <= self.params.mark_ecnth {
                congestion_signal(self.params.ecn, pkt)
            } else {
                Verdict::Drop
            };
            count_signal(v, &mut self.stats.marks, &mut self.stats.early_drops)
        } else {
            Verdict::Admit
        };
        // s. 4.4: a calm queue (no probability, both delays under half the target) earns a new
        // burst allowance.
        let half = self.params.target_ns / 2;
        let s = &mut self.state;
        if s.drop_prob == 0.0 && s.qdelay < half && s.qdelay_old < half {
            s.burst_allowance = self.params.max_burst_ns;
        }
        v
    }

    fn on_overflow(&mut self, _pkt: &PacketMeta, _q: &QueueView, _now: Time) {
        self.stats.overflows += 1;
        self.state.accu_prob = 0.0;
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
        match self.params.estimator {
            Estimator::Timestamp => self.state.qdelay = sojourn,
            Estimator::DqRate => self.measure_departure(pkt.size_bytes, q.len_bytes, now),
        }
        Verdict::Admit
    }

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_update)
    }

    fn update(&mut self, q: &QueueView, _now: Time) {
        let qdelay = self.current_qdelay(q);
        let s = &mut self.state;
        s.qdelay = qdelay;
        s.drop_prob = update_drop_prob(&self.params, s.drop_prob, qdelay, s.qdelay_old);
        s.qdelay_old = qdelay;
        s.burst_allowance = s.burst_allowance.saturating_sub(self.params.t_update_ns);
        s.next_update = s.next_update.saturating_add(self.params.t_update_ns);
        self.stats.updates += 1;
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.drop_prob)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let dq_rate = if self.state.dq.avg_dq_time > 0.0 {
            self.params.dq_threshold as f64 * 8.0 * NS_PER_SEC as f64 / self.state.dq.avg_dq_time
        } else {
            0.0
        };
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("overflows", self.stats.overflows as f64),
            ("qdelay_s", ns_to_secs(self.state.qdelay)),
            ("burst_allowance_s", ns_to_secs(self.state.burst_allowance)),
            ("avg_dq_rate_bps", dq_rate),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::testing::Script;

    const MS: Time = 1_000_000;

    fn pie(pairs: &[(&str, ParamValue)]) -> Result<Pie, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(Pie::new(PieParams::from_map(&m, &LinkContext::default())?))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
    }

    #[test]
    fn autotune_table_matches_section_4_2() {
        let cases = [
            (0.0, 2048.0),
            (0.0000009, 2048.0),
            (0.000001, 512.0),
            (0.00005, 128.0),
            (0.0005, 32.0),
            (0.005, 8.0),
            (0.05, 2.0),
            (0.1, 1.0),
            (0.9, 1.0),
        ];
        for (p, div) in cases {
            assert_eq!(autotune_factor(p), 1.0 / div, "drop_prob {p}");
        }
    }

    #[test]
    fn probability_updates_match_the_rfc_pseudo_code_step_by_step() {
        // alpha 0.125/s, beta 1.25/s, target 15 ms. Each step: one departure that waited
        // `qdelay` (the timestamp estimate), then the update at the next multiple of 15 ms.
        // p = 0.125 (qdelay - 0.015) + 1.25 (qdelay - qdelay_old), scaled by the table on the
        // old drop_prob, capped at 0.02 from drop_prob 0.1 on:
        //  1. 30 ms,  old 0:   p = 0.001875 + 0.0375 = 0.039375; dp 0 -> /2048
        //                      dp = 1.922607421875e-5
        //  2. 40 ms,  old 30:  p = 0.003125 + 0.0125 = 0.015625; dp in [1e-5, 1e-4) -> /128
        //                      = 1.220703125e-4; dp = 1.4129638671875e-4
        //  3. 100 ms, old 40:  p = 0.010625 + 0.075 = 0.085625; [1e-4, 1e-3) -> /32
        //                      = 0.00267578125; dp = 0.00281707763671875
        //  4. 300 ms, old 100: p = 0.035625 + 0.25 = 0.285625; [1e-3, 1e-2) -> /8
        //                      = 0.035703125; dp = 0.038520202636718744
        //  5. 300 ms, old 300: p = 0.035625; [0.01, 0.1) -> /2 = 0.0178125; dp = 0.0563327026...
        //  6. 600 ms, old 300: p = 0.073125 + 0.375 = 0.448125; /2 = 0.2240625 (dp < 0.1: no
        //                      cap); dp = 0.28039520263671874
        //  7. 600 ms, old 600: p = 0.073125; dp >= 0.1: no scaling, capped at 0.02;
        //                      dp = 0.30039520263671876
        //  8. 550 ms, old 600: p = 0.066875 - 0.0625 = 0.004375; dp = 0.3047702026367188
        //  9. empty queue -> qdelay 0, old 550: p = -0.001875 - 0.6875 = -0.689375; dp -> 0
        // 10. 0, old 0: p = -0.001875 / 2048; decay x 0.98; bounded: dp = 0
        let mut s = Script::new(Box::new(pie(&[]).unwrap()));
        let series: [(Option<Time>, f64); 10] = [
            (Some(30 * MS), 0.039375 / 2048.0),
            (Some(40 * MS), 0.039375 / 2048.0 + 0.015625 / 128.0),
            (Some(100 * MS), 0.00281707763671875),
            (Some(300 * MS), 0.00281707763671875 + 0.285625 / 8.0),
            (Some(300 * MS), 0.038520202636718744 + 0.035625 / 2.0),
            (Some(600 * MS), 0.056332702636718746 + 0.448125 / 2.0),
            (Some(600 * MS), 0.28039520263671874 + 0.02),
            (Some(550 * MS), 0.30039520263671876 + 0.004375),
            (None, 0.0),
            (None, 0.0),
        ];
        for (i, (qdelay, expect)) in series.into_iter().enumerate() {
            match qdelay {
                Some(d) => {
                    s.set_queue(20);
                    s.depart(1500, d);
                }
                None => s.q = QueueView::default(),
            }
            s.advance(15 * MS);
            let got = s.aqm.drop_prob().unwrap();
            assert!(close(got, expect), "step {}: {got} vs {expect}", i + 1);
        }
        assert_eq!(s.now, 150 * MS);
    }

    #[test]
    fn decay_when_delay_is_zero_twice() {
        // dp 0.5, delays 0 and 0: p = 0.125 (0 - 0.015) = -0.001875, no scaling at 0.5;
        // (0.5 - 0.001875) 0.98 = 0.4881625.
        let p = pie(&[]).unwrap().params;
        assert!(close(update_drop_prob(&p, 0.5, 0, 0), 0.4881625));
        // Only one zero: no decay.
        assert!(close(
            update_drop_prob(&p, 0.5, 0, MS),
            0.5 - 0.001875 - 1.25 * 0.001
        ));
        // Bounded above.
        assert_eq!(update_drop_prob(&p, 0.999, 10_000 * MS, 0), 1.0);
    }

    #[test]
    fn safeguard_and_burst_allowance_hold_off_early_drops() {
        let mut a = pie(&[]).unwrap();
        let mut rng = crate::rng_from_seed(3);
        let pkt = PacketMeta::of_size(1500);
        let big = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        // drop_prob 1 but within the initial 150 ms burst allowance: admitted.
        a.state.drop_prob = 1.0;
        a.state.qdelay_old = 100 * MS;
        a.state.qdelay = 100 * MS;
        assert_eq!(a.enqueue(&pkt, &big, 0, &mut rng), Verdict::Admit);
        // Ten updates (150 ms) use the allowance up.
        for k in 1..=10 {
            a.state.drop_prob = 1.0;
            a.state.qdelay = 100 * MS;
            a.update(&big, k * 15 * MS);
        }
        assert_eq!(a.state.burst_allowance, 0);
        a.state.drop_prob = 1.0;
        assert_eq!(a.enqueue(&pkt, &big, 150 * MS, &mut rng), Verdict::Drop);
        // Queue of at most two mean packets (3000 B): never an early drop.
        let two = QueueView {
            len_pkts: 2,
            len_bytes: 3000,
            idle_since: None,
        };
        assert_eq!(a.enqueue(&pkt, &two, 150 * MS, &mut rng), Verdict::Admit);
        // qdelay_old below target/2 and drop_prob below 20%: never an early drop.
        a.state.drop_prob = 0.19;
        a.state.qdelay_old = 7 * MS;
        for _ in 0..1000 {
            assert_eq!(a.enqueue(&pkt, &big, 150 * MS, &mut rng), Verdict::Admit);
        }
        // Same with drop_prob 20%: drops happen.
        a.state.drop_prob = 0.2;
        let drops = (0..1000)
            .filter(|_| a.enqueue(&pkt, &big, 150 * MS, &mut rng) == Verdict::Drop)
            .count();
        assert!((150..250).contains(&drops), "{drops}");
    }

    #[test]
    fn a_calm_queue_restores_the_burst_allowance() {
        let mut s = Script::new(Box::new(pie(&[]).unwrap()));
        s.set_queue(20);
        for _ in 0..12 {
            s.depart(1500, 100 * MS);
            s.advance(15 * MS);
        }
        let burst = |s: &Script| {
            s.aqm
                .stats()
                .iter()
                .find(|x| x.0 == "burst_allowance_s")
                .unwrap()
                .1
        };
        assert_eq!(burst(&s), 0.0);
        // The queue drains: the delay is 0 at every update, so the probability falls (negative
        // steps and the 2% decay) to exactly 0; the next arrival then renews the allowance.
        s.q = QueueView::default();
        for _ in 0..2000 {
            s.advance(15 * MS);
        }
        assert_eq!(s.aqm.drop_prob(), Some(0.0));
        s.arrive(1500);
        assert!((burst(&s) - 0.15).abs() < 1e-12);
    }

    #[test]
    fn ecn_marks_below_mark_ecnth_and_drops_above() {
        let mut a = pie(&[("ecn", ParamValue::Bool(true))]).unwrap();
        let mut rng = crate::rng_from_seed(5);
        let mut pkt = PacketMeta::of_size(1500);
        pkt.ecn = crate::Ecn::Ect0;
        let big = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        a.state.burst_allowance = 0;
        a.state.qdelay_old = 100 * MS;
        a.state.qdelay = 100 * MS;
        a.state.drop_prob = 0.1;
        let v: Vec<Verdict> = (0..200)
            .map(|_| a.enqueue(&pkt, &big, 0, &mut rng))
            .collect();
        assert!(v.contains(&Verdict::Mark) && !v.contains(&Verdict::Drop));
        a.state.drop_prob = 0.5;
        let v: Vec<Verdict> = (0..200)
            .map(|_| a.enqueue(&pkt, &big, 0, &mut rng))
            .collect();
        assert!(v.contains(&Verdict::Drop) && !v.contains(&Verdict::Mark));
    }

    #[test]
    fn derandomisation_spaces_drops_by_accumulated_probability() {
        // drop_prob 0.1: accu reaches 0.85 after 9 arrivals, from then a random drop with 0.1,
        // and a certain drop once accu >= 8.5 (85 arrivals, 86 with rounding). The gap is never
        // below 9.
        let mut a = pie(&[("derandomize", ParamValue::Bool(true))]).unwrap();
        let mut rng = crate::rng_from_seed(9);
        let pkt = PacketMeta::of_size(1500);
        let big = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        a.state.burst_allowance = 0;
        a.state.qdelay_old = 100 * MS;
        a.state.drop_prob = 0.1;
        let mut last = None;
        let mut gaps = Vec::new();
        for i in 0..20_000u32 {
            if a.enqueue(&pkt, &big, 0, &mut rng) == Verdict::Drop {
                if let Some(l) = last {
                    gaps.push(i - l);
                }
                last = Some(i);
            }
        }
        assert!(
            gaps.iter().all(|g| (9..=86).contains(g)),
            "{:?}",
            gaps.iter().min()
        );
        let mean = gaps.iter().sum::<u32>() as f64 / gaps.len() as f64;
        // 8 certain admits, then geometric with 0.1: mean 8 + 10 = 18.
        assert!((mean - 18.0).abs() < 1.0, "{mean}");
    }

    #[test]
    fn departure_rate_estimate_gives_little_law_delay() {
        let mut s = Script::new(Box::new(
            pie(&[("estimator", ParamValue::Str("dq_rate".into()))]).unwrap(),
        ));
        // 150 kB queued; 1500-byte departures every 120 us. The cycle starts at the first
        // departure and ends at the 11th (16500 >= 16384 bytes), 10 x 120 us = 1.2 ms later.
        s.q = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        for _ in 0..11 {
            s.depart(1500, 0);
            s.now += 120_000;
        }
        s.q = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        s.now = 14 * MS;
        s.advance(MS);
        // qdelay = 150000 x 1.2 ms / 16384 = 10.986328125 ms.
        let q = s.aqm.stats().iter().find(|x| x.0 == "qdelay_s").unwrap().1;
        assert!((q - 0.010986328125).abs() < 1e-9, "{q}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = pie(&[("target", ParamValue::Num(-0.015))]).unwrap_err();
        assert_eq!(e.param, "target");
        let e = pie(&[("t_update", ParamValue::Num(0.0))]).unwrap_err();
        assert_eq!(e.param, "t_update");
        let e = pie(&[("alpha", ParamValue::Num(-1.0))]).unwrap_err();
        assert_eq!(e.param, "alpha");
        assert!(e.msg.contains("[0, 1000000]"), "{e}");
        let e = pie(&[("beta", ParamValue::Num(-0.5))]).unwrap_err();
        assert_eq!(e.param, "beta");
        let e = pie(&[("max_burst", ParamValue::Num(-1.0))]).unwrap_err();
        assert_eq!(e.param, "max_burst");
        let e = pie(&[("mark_ecnth", ParamValue::Num(1.5))]).unwrap_err();
        assert_eq!(e.param, "mark_ecnth");
        let e = pie(&[("mean_pkt_size", ParamValue::Num(0.0))]).unwrap_err();
        assert_eq!(e.param, "mean_pkt_size");
        let e = pie(&[("estimator", ParamValue::Str("guess".into()))]).unwrap_err();
        assert_eq!(e.param, "estimator");
    }
}
