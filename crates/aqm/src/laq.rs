//! LaQ: random early drop with probability p = L + gamma (q - Q_ref), where L is the EWMA of the
//! loss ratio over the last M sampling periods, updated every sampling period (Bisoy, Pattnaik &
//! Mallick, seed 001, s. 2, Eqs 1-3 and Figure 1).
//!
//! Reading of the paper, where its pseudo-code slips (see also `docs/algorithms/laq.md`):
//! - Figure 1's `Enqueue()` increments `arrPktNum` on entry and again when the packet is admitted,
//!   so an admitted packet counts as two arrivals. Each arrival counts once here.
//! - Eq. 1 sums i = 0..M (M + 1 periods) while Figure 1 keeps M slots; we keep M periods, the
//!   just-finished one and the M - 1 before it, as the code does.
//! - With no arrival in the window, `total_Drop / total_Arr` is 0/0; the sample is then 0.
//! - The buffer-full branch of `Enqueue()` is the queue owner's: overflow drops reach us through
//!   [`Aqm::on_overflow`] and count as drops of an arrival already counted.
//! - With ECN on, marks count with drops in the loss ratio, so that the control law (at
//!   equilibrium the loss ratio equals p and q = Q_ref, s. 2) is the same with or without ECN.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// LaQ's parameters (defaults from s. 4: gamma 0.05, w_m 0.1, M 10, sampling at 170 Hz).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(1.0 / 170.0), help: "sampling period delta, seconds; the paper samples at 170 Hz (s. 4)" },
    ParamSpec { name: "m", kind: K::Int, default: D::Num(10.0), help: "M: number of latest sampling periods over which the loss ratio is measured (Eq. 1)" },
    ParamSpec { name: "w_m", kind: K::Real, default: D::Num(0.1), help: "weight of the previous estimate in the loss-ratio EWMA, in [0, 1) (Eq. 2)" },
    ParamSpec { name: "gamma", kind: K::Real, default: D::Num(0.05), help: "gain on the queue error, drop probability per packet of q - Q_ref (Eq. 3)" },
    ParamSpec { name: "q_ref", kind: K::Real, default: D::Auto, help: "target queue Q_ref, packets; default: one third of the buffer (the paper's 200 of 600)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168); marks count in the loss ratio" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "laq",
    summary: "random drop with p = EWMA loss ratio over M periods + gamma (q - Q_ref), sampled periodically",
    source: "Bisoy, Pattnaik & Mallick, 'LaQ: a stable loss and queue based AQM', s. 2, Eqs 1-3, Figure 1",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Laq::new(LaqParams::from_map(m, l)?)))
    },
};

/// Largest M accepted (the window is allocated once, at build time).
pub const MAX_M: u32 = 100_000;

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LaqParams {
    /// Sampling period, ns.
    pub interval_ns: Time,
    /// Number of periods in the loss-ratio window.
    pub m: u32,
    /// Weight of the previous loss-ratio estimate.
    pub w_m: f64,
    /// Gain on the queue error, per packet.
    pub gamma: f64,
    /// Target queue, packets.
    pub q_ref: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl LaqParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let interval = p.num("interval")?;
        check_range("interval", interval, 0.0, true, 3600.0, false)?;
        let interval_ns = (interval * NS_PER_SEC as f64).round() as Time;
        if interval_ns == 0 {
            return Err(ParamError::new(
                "interval",
                format!("must be at least 1 ns (got {interval} s)"),
            ));
        }
        let m_periods = p.num("m")?;
        check_range("m", m_periods, 1.0, false, MAX_M as f64, false)?;
        let r = LaqParams {
            interval_ns,
            m: m_periods as u32,
            w_m: p.num("w_m")?,
            gamma: p.num("gamma")?,
            q_ref: p.opt_num("q_ref")?.unwrap_or(l.buffer_pkts() / 3.0),
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("w_m", self.w_m, 0.0, false, 1.0, true)?;
        check_range("gamma", self.gamma, 0.0, true, f64::INFINITY, true)?;
        check_range("q_ref", self.q_ref, 0.0, false, l.buffer_pkts(), false)?;
        Ok(())
    }
}

/// State that changes per packet and per period.
#[derive(Clone, Debug, PartialEq)]
pub struct LaqState {
    /// Drops (and marks) in each of the last M periods (Figure 1's `Drop_Num`).
    pub drop_num: Vec<u64>,
    /// Arrivals in each of the last M periods (`Arr_Num`).
    pub arr_num: Vec<u64>,
    /// Slot the period now running will be written to (`index`).
    pub index: usize,
    /// Arrivals in the period now running (`arrPktNum`).
    pub arrivals: u64,
    /// Drops and marks in the period now running (`dropPktNum`).
    pub drops: u64,
    /// Estimated loss ratio, the EWMA of Eq. 2 (`LossRatio`).
    pub loss_ratio: f64,
    /// Drop probability of Eq. 3, clipped to [0, 1].
    pub p: f64,
    /// When the next sampling is due, ns.
    pub next_update: Time,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaqStats {
    /// Arrivals seen by `enqueue`.
    pub arrivals: u64,
    /// Random early drops.
    pub early_drops: u64,
    /// Early marks (ECN).
    pub marks: u64,
    /// Admitted packets refused by a full buffer.
    pub overflows: u64,
}

/// The LaQ algorithm.
#[derive(Debug, Clone)]
pub struct Laq {
    /// Configuration.
    pub params: LaqParams,
    /// Evolving state.
    pub state: LaqState,
    /// Counters.
    pub stats: LaqStats,
}

/// The loss ratio of Eq. 1, D / A, with 0 for a window without arrivals (0/0 in the paper) and
/// capped at 1.
#[inline]
pub fn loss_ratio(total_drop: u64, total_arr: u64) -> f64 {
    if total_arr == 0 {
        0.0
    } else {
        (total_drop as f64 / total_arr as f64).min(1.0)
    }
}

/// The loss-ratio EWMA of Eq. 2 (Figure 1, `Measure_LossRatio` line 10):
/// estimate <- w_m * previous + (1 - w_m) * sample.
#[inline]
pub fn ewma_loss(previous: f64, sample: f64, w_m: f64) -> f64 {
    w_m * previous + (1.0 - w_m) * sample
}

/// The drop probability of Eq. 3, p = loss + gamma (q - Q_ref), clipped to [0, 1] (Figure 1,
/// `Calculate_P` lines 3-5). gamma is per packet of queue error: gamma 0.05 moves p by 0.05 per
/// packet, so p reaches 1 at 20 packets above Q_ref with no loss.
#[inline]
pub fn drop_probability(loss: f64, q: f64, q_ref: f64, gamma: f64) -> f64 {
    (loss + gamma * (q - q_ref)).clamp(0.0, 1.0)
}

impl Laq {
    /// A LaQ instance with validated parameters; p starts at 0, the first sampling is due one
    /// interval after time 0.
    pub fn new(params: LaqParams) -> Self {
        let m = params.m as usize;
        let next_update = params.interval_ns;
        Laq {
            params,
            state: LaqState {
                drop_num: vec![0; m],
                arr_num: vec![0; m],
                index: 0,
                arrivals: 0,
                drops: 0,
                loss_ratio: 0.0,
                p: 0.0,
                next_update,
            },
            stats: LaqStats::default(),
        }
    }

    /// Figure 1's `Measure_LossRatio`: closes the running period into the window and updates the
    /// loss-ratio estimate.
    fn measure_loss_ratio(&mut self) {
        let s = &mut self.state;
        s.drop_num[s.index] = s.drops;
        s.arr_num[s.index] = s.arrivals;
        s.drops = 0;
        s.arrivals = 0;
        s.index += 1;
        if s.index == s.drop_num.len() {
            s.index = 0;
        }
        let total_drop: u64 = s.drop_num.iter().sum();
        let total_arr: u64 = s.arr_num.iter().sum();
        s.loss_ratio = ewma_loss(
            s.loss_ratio,
            loss_ratio(total_drop, total_arr),
            self.params.w_m,
        );
    }
}

impl Aqm for Laq {
    fn name(&self) -> &'static str {
        "laq"
    }

    /// Figure 1's `Enqueue()`, counting the arrival once.
    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        self.state.arrivals += 1;
        self.stats.arrivals += 1;
        let p = self.state.p;
        // Figure 1 admits when u > p for u uniform on (0, 1); `u < p` drops with the same
        // probability and never drops at p = 0 (our u is on [0, 1)).
        if p > 0.0 && rng.random::<f64>() < p {
            self.state.drops += 1;
            signal_counted(
                self.params.ecn,
                pkt,
                &mut self.stats.marks,
                &mut self.stats.early_drops,
            )
        } else {
            Verdict::Admit
        }
    }

    fn on_overflow(&mut self, _pkt: &PacketMeta, _q: &QueueView, _now: Time) {
        self.state.drops += 1;
        self.stats.overflows += 1;
    }

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_update)
    }

    /// Figure 1's `Calculate_P()`, every interval.
    fn update(&mut self, q: &QueueView, now: Time) {
        self.measure_loss_ratio();
        let p = &self.params;
        self.state.p = drop_probability(self.state.loss_ratio, q.len_pkts as f64, p.q_ref, p.gamma);
        self.state.next_update = now.saturating_add(p.interval_ns);
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("arrivals", self.stats.arrivals as f64),
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("overflows", self.stats.overflows as f64),
            ("loss_ratio", self.state.loss_ratio),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    const DELTA: Time = 10_000_000; // 10 ms

    fn laq(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<Laq, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        };
        Ok(Laq::new(LaqParams::from_map(&m, &l)?))
    }

    fn script() -> Script {
        let pairs = [
            ("interval", ParamValue::Num(0.01)),
            ("q_ref", ParamValue::Num(10.0)),
        ];
        Script::new(Box::new(laq(&pairs, 100).unwrap()))
    }

    fn p(s: &Script) -> f64 {
        s.aqm.drop_prob().unwrap()
    }

    #[test]
    fn the_rules_by_hand() {
        assert_eq!(loss_ratio(0, 0), 0.0);
        assert!((loss_ratio(3, 12) - 0.25).abs() < 1e-15);
        assert!((ewma_loss(0.5, 0.1, 0.1) - 0.14).abs() < 1e-15);
        assert!((drop_probability(0.1, 204.0, 200.0, 0.05) - 0.3).abs() < 1e-12);
        assert_eq!(drop_probability(0.1, 150.0, 200.0, 0.05), 0.0);
        assert_eq!(drop_probability(0.0, 220.0, 200.0, 0.05), 1.0);
    }

    #[test]
    fn p_after_a_scripted_series_worked_by_hand() {
        // M 10, w_m 0.1, gamma 0.05, Q_ref 10, delta 10 ms.
        let mut s = script();
        // Period 1: p = 0, 20 arrivals all admitted, 2 of them refused by a full buffer.
        for i in 0..20 {
            assert_eq!(s.arrive(1000), Verdict::Admit);
            if i < 2 {
                let pkt = PacketMeta::of_size(1000);
                s.aqm.on_overflow(&pkt, &s.q, s.now);
            }
        }
        // Sampling at 10 ms with q = 40: l = 2/20 = 0.1 (the paper's double count would give
        // 2/38), L = 0.1 * 0 + 0.9 * 0.1 = 0.09, p = 0.09 + 0.05 (40 - 10) = 1.59 -> 1.
        s.set_queue(40);
        s.advance(DELTA);
        assert_eq!(p(&s), 1.0);
        assert!((s.aqm.stats()[4].1 - 0.09).abs() < 1e-12);
        // Period 2: p = 1, 10 arrivals all dropped.
        for _ in 0..10 {
            assert_eq!(s.arrive(1000), Verdict::Drop);
        }
        // Sampling at 20 ms with q = 5: window D = 2 + 10, A = 20 + 10, l = 0.4,
        // L = 0.1 * 0.09 + 0.9 * 0.4 = 0.369, p = 0.369 + 0.05 (5 - 10) = 0.119.
        s.set_queue(5);
        s.advance(DELTA);
        assert!((p(&s) - 0.119).abs() < 1e-12, "{}", p(&s));
        // Period 3: no arrivals; q = 10: l = 12/30 still, L = 0.0369 + 0.36 = 0.3969 = p.
        s.set_queue(10);
        s.advance(DELTA);
        assert!((p(&s) - 0.3969).abs() < 1e-12, "{}", p(&s));
        // Periods 4-10 keep periods 1-2 in the window of 10: l = 0.4 each time,
        // L_k = 0.4 - 0.1^(k-1) (0.4 - 0.09) at the k-th sampling (L_1 = 0.09, L_2 = 0.369, ...).
        s.advance(7 * DELTA);
        let expect = 0.4 - 0.1f64.powi(9) * 0.31;
        assert!((p(&s) - expect).abs() < 1e-12, "{} vs {expect}", p(&s));
        // Period 11 pushes period 1 out (D 10, A 10: l = 1), period 12 pushes period 2 out
        // (A = 0: l = 0). L = 0.1 (0.1 L_10 + 0.9) + 0 = 0.01 L_10 + 0.09.
        s.advance(2 * DELTA);
        let expect = 0.01 * expect + 0.09;
        assert!((p(&s) - expect).abs() < 1e-12, "{} vs {expect}", p(&s));
        assert_eq!(s.aqm.stats()[0].1, 30.0);
        assert_eq!(s.aqm.stats()[1].1, 10.0);
        assert_eq!(s.aqm.stats()[3].1, 2.0);
    }

    #[test]
    fn sampling_runs_every_interval() {
        let mut s = Script::new(Box::new(laq(&[], 600).unwrap()));
        // Default 170 Hz: 5882353 ns; Q_ref defaults to 600 / 3 = 200 packets.
        assert_eq!(s.aqm.next_update(), Some(5_882_353));
        s.set_queue(204);
        s.advance(5_882_353);
        assert!((p(&s) - 0.2).abs() < 1e-12, "{}", p(&s));
        assert_eq!(s.aqm.next_update(), Some(2 * 5_882_353));
    }

    #[test]
    fn random_drops_follow_p_and_ecn_marks_instead() {
        let pairs = [
            ("interval", ParamValue::Num(0.01)),
            ("q_ref", ParamValue::Num(10.0)),
            ("ecn", ParamValue::Bool(true)),
        ];
        let mut s = Script::new(Box::new(laq(&pairs, 100).unwrap()));
        // q = 14 at the first sampling, no arrivals: p = 0.05 * 4 = 0.2.
        s.set_queue(14);
        s.advance(DELTA);
        assert!((p(&s) - 0.2).abs() < 1e-12);
        s.ecn_capable = true;
        let n = 100_000;
        let marks = (0..n).filter(|_| s.arrive(1000) == Verdict::Mark).count();
        let f = marks as f64 / n as f64;
        assert!((f - 0.2).abs() < 0.005, "{f}");
        s.ecn_capable = false;
        assert!((0..100).any(|_| s.arrive(1000) == Verdict::Drop));
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = laq(&[("w_m", ParamValue::Num(1.0))], 600).unwrap_err();
        assert_eq!(e.param, "w_m");
        let e = laq(&[("gamma", ParamValue::Num(0.0))], 600).unwrap_err();
        assert_eq!(e.param, "gamma");
        let e = laq(&[("q_ref", ParamValue::Num(700.0))], 600).unwrap_err();
        assert_eq!(e.param, "q_ref");
        assert!(e.msg.contains("600"), "{e}");
        let e = laq(&[("m", ParamValue::Num(0.0))], 600).unwrap_err();
        assert_eq!(e.param, "m");
        let e = laq(&[("m", ParamValue::Num(2.5))], 600).unwrap_err();
        assert_eq!(e.param, "m");
        let e = laq(&[("interval", ParamValue::Num(0.0))], 600).unwrap_err();
        assert_eq!(e.param, "interval");
        let e = laq(&[("interval", ParamValue::Num(1e-12))], 600).unwrap_err();
        assert_eq!(e.param, "interval");
    }
}
