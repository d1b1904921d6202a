//! APACE: random early drop driven by an NLMS prediction of the instantaneous queue N0 arrivals
//! ahead (Jain, Karandikar & Verma, seed 003, s. 4, Eqs 1-5 and Fig. 1).
//!
//! Reading of the paper, where it slips (see also `docs/algorithms/apace.md`):
//! - Eqs 2-3 pair the error of the prediction for arrival n + N0 with the regressor of arrival n,
//!   and that error is not known until N0 arrivals later. The evident intent is NLMS trained on
//!   the pair it can observe: at arrival n, the regressor of arrival n - N0 and the target q(n).
//!   We run Eqs 3-4 on that pair, with the error computed with the current weights:
//!   e(n) = q(n) - w(n)^T qbar(n - N0),
//!   w(n + 1) = w(n) + mu0 / (1 + |qbar(n - N0)|^2) qbar(n - N0) e(n).
//! - "linearly from 0 at alpha B to max_p at p" (s. 4.2) means "at B", as Eq. 5 says.
//! - Before M + N0 arrivals have been seen, the missing queue lengths are taken as 0 (an empty
//!   queue before the first arrival).
//!
//! Cost per decision: three dot products of length M over a ring buffer stored twice, so that
//! every window is one contiguous slice; nothing is allocated per packet.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};
use rand::Rng;

/// APACE's parameters (defaults: s. 6, max_p 0.2, alpha 0.3, N0 15, M 10; s. 4.1, mu0 0.01).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "max_p",
        kind: K::Real,
        default: D::Num(0.2),
        help: "drop probability at a predicted queue of B (the buffer), in (0, 1] (Eq. 5)",
    },
    ParamSpec {
        name: "alpha",
        kind: K::Real,
        default: D::Num(0.3),
        help: "no early drop below a predicted queue of alpha B, in [0, 1) (s. 4.2)",
    },
    ParamSpec {
        name: "n0",
        kind: K::Int,
        default: D::Num(15.0),
        help: "N0: the prediction looks this many arrivals ahead (s. 4.1)",
    },
    ParamSpec {
        name: "m",
        kind: K::Int,
        default: D::Num(10.0),
        help: "M: order of the NLMS filter, queue lengths at the last M arrivals (s. 4.1)",
    },
    ParamSpec {
        name: "mu0",
        kind: K::Real,
        default: D::Num(0.01),
        help: "NLMS step size, in (0, 2) (Eq. 4; NLMS converges for 0 < mu0 < 2)",
    },
    ParamSpec {
        name: "ecn",
        kind: K::Bool,
        default: D::Bool(false),
        help:
            "mark ECN-capable packets instead of early drops (RFC 3168); drops above B stay drops",
    },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "apace",
    summary: "NLMS prediction of the queue N0 arrivals ahead; drop probability linear from alpha B to max_p at B",
    source: "Jain, Karandikar & Verma, 'APACE', s. 4, Eqs 1-5, Fig. 1",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Apace::new(ApaceParams::from_map(m, l)?)))
    },
};

/// Largest M and N0 accepted (the history is allocated once, at build time).
pub const MAX_ORDER: u32 = 100_000;

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ApaceParams {
    /// Drop probability at a predicted queue of B.
    pub max_p: f64,
    /// Start of the linear region, as a fraction of B.
    pub alpha: f64,
    /// Prediction horizon, arrivals.
    pub n0: u32,
    /// Filter order.
    pub m: u32,
    /// NLMS step size.
    pub mu0: f64,
    /// The buffer B, packets (from the link).
    pub buffer_pkts: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl ApaceParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let n0 = p.num("n0")?;
        check_range("n0", n0, 1.0, false, MAX_ORDER as f64, false)?;
        let order = p.num("m")?;
        check_range("m", order, 1.0, false, MAX_ORDER as f64, false)?;
        let r = ApaceParams {
            max_p: p.num("max_p")?,
            alpha: p.num("alpha")?,
            n0: n0 as u32,
            m: order as u32,
            mu0: p.num("mu0")?,
            buffer_pkts: l.buffer_pkts(),
            ecn: p.bool("ecn"),
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("max_p", self.max_p, 0.0, true, 1.0, false)?;
        check_range("alpha", self.alpha, 0.0, false, 1.0, true)?;
        check_range("mu0", self.mu0, 0.0, true, 2.0, true)?;
        check_range("n0", self.n0 as f64, 1.0, false, MAX_ORDER as f64, false)?;
        check_range("m", self.m as f64, 1.0, false, MAX_ORDER as f64, false)?;
        Ok(())
    }
}

/// State that changes per packet.
#[derive(Clone, Debug, PartialEq)]
pub struct ApaceState {
    /// NLMS weights w_q, oldest queue length first (Eq. 1).
    pub weights: Vec<f64>,
    /// Queue lengths at the last M + N0 arrivals, stored twice (`hist[i]` = `hist[i + M + N0]`)
    /// so that every window of them is one slice.
    pub hist: Vec<f64>,
    /// Where the next queue length is written, in [0, M + N0).
    pub head: usize,
    /// The last prediction qhat(n + N0), packets.
    pub predicted: f64,
    /// The drop probability derived from it.
    pub p: f64,
    /// EWMA (weight 1/64) of |e(n)|, the NLMS error, packets.
    pub abs_err: f64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApaceStats {
    /// Random early drops.
    pub early_drops: u64,
    /// Early marks (ECN).
    pub marks: u64,
    /// Drops with the predicted queue above B (p = 1).
    pub forced_drops: u64,
}

/// The APACE algorithm.
#[derive(Debug, Clone)]
pub struct Apace {
    /// Configuration.
    pub params: ApaceParams,
    /// Evolving state.
    pub state: ApaceState,
    /// Counters.
    pub stats: ApaceStats,
}

/// Fig. 1's drop probability for a predicted queue `qhat` and a buffer `b`: 0 below alpha B,
/// max_p (qhat - alpha B) / ((1 - alpha) B) from alpha B to B (Eq. 5), 1 above B.
#[inline]
pub fn drop_probability(qhat: f64, alpha: f64, b: f64, max_p: f64) -> f64 {
    let lo = alpha * b;
    if qhat > b {
        1.0
    } else if qhat < lo {
        0.0
    } else if b > lo {
        max_p * (qhat - lo) / (b - lo)
    } else {
        max_p
    }
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    // Four independent partial sums: the additions overlap instead of waiting on each other.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// One NLMS step (Eqs 3-4) on the training pair (regressor `x`, target `target`); returns the
/// error e = target - w^T x before the step.
#[inline]
pub fn nlms_step(w: &mut [f64], x: &[f64], target: f64, mu0: f64) -> f64 {
    let e = target - dot(w, x);
    let g = mu0 * e / (1.0 + dot(x, x));
    for (wi, xi) in w.iter_mut().zip(x) {
        *wi += g * xi;
    }
    e
}

impl Apace {
    /// An APACE instance with validated parameters: weights 0 (s. 4.1), empty history.
    pub fn new(params: ApaceParams) -> Self {
        let m = params.m as usize;
        let len = m + params.n0 as usize;
        Apace {
            params,
            state: ApaceState {
                weights: vec![0.0; m],
                hist: vec![0.0; 2 * len],
                head: 0,
                predicted: 0.0,
                p: 0.0,
                abs_err: 0.0,
            },
            stats: ApaceStats::default(),
        }
    }

    /// Records the queue length `q` seen by an arrival, predicts the queue N0 arrivals ahead
    /// (Eq. 1), then trains the filter on the pair that `q` completes (Eqs 2-4). Returns the
    /// prediction.
    pub fn observe(&mut self, q: f64) -> f64 {
        let m = self.params.m as usize;
        let s = &mut self.state;
        let len = s.hist.len() / 2;
        s.hist[s.head] = q;
        s.hist[s.head + len] = q;
        // Chronological window of the last M + N0 lengths: hist[head + 1 ..= head + len].
        let newest = s.head + len + 1;
        let mut qhat = dot(&s.weights, &s.hist[newest - m..newest]);
        let delayed = &s.hist[s.head + 1..s.head + 1 + m];
        let e = nlms_step(&mut s.weights, delayed, q, self.params.mu0);
        if !qhat.is_finite() || !e.is_finite() || !s.weights.iter().all(|w| w.is_finite()) {
            // Only reachable with absurd inputs; restart the filter rather than carry NaN.
            s.weights.iter_mut().for_each(|w| *w = 0.0);
            qhat = 0.0;
        } else {
            s.abs_err += (e.abs() - s.abs_err) / 64.0;
        }
        s.head = if s.head + 1 == len { 0 } else { s.head + 1 };
        s.predicted = qhat;
        qhat
    }
}

impl Aqm for Apace {
    fn name(&self) -> &'static str {
        "apace"
    }

    /// Fig. 1: predict, compute p, decide; the weights are updated in [`Apace::observe`] right
    /// after the prediction (the decision uses the prediction made before the update).
    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let qhat = self.observe(q.len_pkts as f64);
        let p = &self.params;
        let prob = drop_probability(qhat, p.alpha, p.buffer_pkts, p.max_p);
        self.state.p = prob;
        if prob >= 1.0 {
            self.stats.forced_drops += 1;
            Verdict::Drop
        } else if prob > 0.0 && rng.random::<f64>() < prob {
            signal_counted(
                p.ecn,
                pkt,
                &mut self.stats.marks,
                &mut self.stats.early_drops,
            )
        } else {
            Verdict::Admit
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }

    /// The predicted queue qhat(n + N0), APACE's congestion estimate (in the place of RED's avg).
    fn avg_queue(&self) -> Option<f64> {
        Some(self.state.predicted)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("forced_drops", self.stats.forced_drops as f64),
            ("predicted_queue", self.state.predicted),
            ("abs_err", self.state.abs_err),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    fn apace(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<Apace, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        };
        Ok(Apace::new(ApaceParams::from_map(&m, &l)?))
    }

    #[test]
    fn predicted_value_after_a_short_input_by_hand() {
        // M 2, N0 1, mu0 0.5; queue lengths 1, 2, 3, 4; history before them 0.
        // n=1: x = (0, 1), w = 0 -> qhat 0. Train on ((0, 0), 1): no change.
        // n=2: x = (1, 2) -> qhat 0. Train on ((0, 1), 2): e = 2, mu = 0.5 / 2, w = (0, 0.5).
        // n=3: x = (2, 3) -> qhat 1.5. Train on ((1, 2), 3): e = 3 - 1 = 2, mu = 0.5 / 6,
        //      w = (0, 0.5) + (2/12) (1, 2) = (1/6, 5/6).
        // n=4: x = (3, 4) -> qhat = 3/6 + 20/6 = 23/6.
        let pairs = [
            ("m", ParamValue::Num(2.0)),
            ("n0", ParamValue::Num(1.0)),
            ("mu0", ParamValue::Num(0.5)),
        ];
        let mut a = apace(&pairs, 100).unwrap();
        let got: Vec<f64> = [1.0, 2.0, 3.0, 4.0].iter().map(|&q| a.observe(q)).collect();
        let want = [0.0, 0.0, 1.5, 23.0 / 6.0];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
        // n=4 then trains on ((2, 3), 4): e = 4 - 17/6 = 7/6, mu = 0.5 / 14,
        // w = (1/6, 5/6) + (7/6) (1/28) (2, 3) = (1/4, 23/24).
        assert!(
            (a.state.weights[0] - 0.25).abs() < 1e-12,
            "{:?}",
            a.state.weights
        );
        assert!(
            (a.state.weights[1] - 23.0 / 24.0).abs() < 1e-12,
            "{:?}",
            a.state.weights
        );
    }

    /// |q(n + N0) - qhat(n + N0)| for every prediction made at arrival n, with default parameters.
    fn prediction_errors(signal: &[f64], n0: usize) -> Vec<f64> {
        let mut a = apace(&[], 100_000).unwrap();
        let preds: Vec<f64> = signal.iter().map(|&q| a.observe(q)).collect();
        (0..signal.len() - n0)
            .map(|n| (signal[n + n0] - preds[n]).abs())
            .collect()
    }

    fn mean(x: &[f64]) -> f64 {
        x.iter().sum::<f64>() / x.len() as f64
    }

    #[test]
    fn predictor_converges_on_a_ramp() {
        // Queue growing by one packet every 10 arrivals; defaults (M 10, N0 15, mu0 0.01).
        let signal: Vec<f64> = (0..20_000).map(|n| (n / 10) as f64).collect();
        let e = prediction_errors(&signal, 15);
        let (early, late) = (mean(&e[..500]), mean(&e[e.len() - 1000..]));
        assert!(late < 0.25 * early, "early {early}, late {late}");
        assert!(late < 0.5, "late {late}");
    }

    #[test]
    fn predictor_converges_on_a_sinusoid() {
        // q = 100 + 50 sin(2 pi n / 200), rounded to whole packets.
        let signal: Vec<f64> = (0..20_000)
            .map(|n| (100.0 + 50.0 * (2.0 * std::f64::consts::PI * n as f64 / 200.0).sin()).round())
            .collect();
        let e = prediction_errors(&signal, 15);
        let (early, mid, late) = (
            mean(&e[..500]),
            mean(&e[5000..6000]),
            mean(&e[e.len() - 1000..]),
        );
        assert!(
            mid < early && late < mid,
            "early {early}, mid {mid}, late {late}"
        );
        assert!(late < 0.6 * early, "early {early}, late {late}");
    }

    #[test]
    fn drop_rule_at_hand_picked_predictions() {
        // B 100, alpha 0.3, max_p 0.2: 0 below 30, 0.2 (qhat - 30) / 70 up to 100, 1 above.
        let p = |q| drop_probability(q, 0.3, 100.0, 0.2);
        assert_eq!(p(-5.0), 0.0);
        assert_eq!(p(29.9), 0.0);
        assert_eq!(p(30.0), 0.0);
        assert!((p(65.0) - 0.1).abs() < 1e-12);
        assert!((p(100.0) - 0.2).abs() < 1e-12);
        assert_eq!(p(100.5), 1.0);
        // alpha 0: linear from 0.
        assert!((drop_probability(25.0, 0.0, 100.0, 0.2) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn verdicts_follow_the_prediction() {
        // mu0 1.9 and a constant queue: the filter learns the constant quickly.
        let pairs = [
            ("mu0", ParamValue::Num(1.9)),
            ("ecn", ParamValue::Bool(true)),
        ];
        let mut s = Script::new(Box::new(apace(&pairs, 100).unwrap()));
        s.ecn_capable = true;
        s.set_queue(10);
        for _ in 0..200 {
            assert_eq!(s.arrive(1000), Verdict::Admit);
        }
        assert!(
            (s.aqm.avg_queue().unwrap() - 10.0).abs() < 0.5,
            "{:?}",
            s.aqm.avg_queue()
        );
        // A queue held at 65: qhat -> 65, p -> 0.1, marks on about a tenth of the arrivals.
        s.set_queue(65);
        for _ in 0..500 {
            s.arrive(1000);
        }
        let n = 20_000;
        let marks = (0..n).filter(|_| s.arrive(1000) == Verdict::Mark).count();
        assert!((marks as f64 / n as f64 - 0.1).abs() < 0.01, "{marks}");
        // A queue held above the buffer: every packet dropped, ECN or not.
        s.set_queue(150);
        for _ in 0..500 {
            s.arrive(1000);
        }
        assert!((0..100).all(|_| s.arrive(1000) == Verdict::Drop));
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
    }

    #[test]
    fn bad_parameters_are_named() {
        for (name, v) in [
            ("m", 0.0),
            ("n0", 0.0),
            ("alpha", 1.0),
            ("alpha", -0.1),
            ("max_p", 0.0),
            ("max_p", 1.5),
            ("mu0", 0.0),
            ("mu0", 2.0),
            ("m", 1.5),
        ] {
            let e = apace(&[(name, ParamValue::Num(v))], 100).unwrap_err();
            assert_eq!(e.param, name, "{name} = {v}: {e}");
        }
    }
}
