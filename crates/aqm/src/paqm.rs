//! PAQM: Predictive AQM (Y. Gao, G. He, J. C. Hou, "On Exploiting Traffic Predictability in Active
//! Queue Management", IEEE INFOCOM 2002, s. III-IV).
//!
//! Every measurement interval the traffic of the next interval is predicted by a linear minimum
//! mean-square error (LMMSE, autoregressive) predictor whose coefficients are solved from the
//! autocorrelation measured on-line, and the drop probability is the LMMSE control that holds the
//! queue at Q_opt: with q(n+1) = q(n) + (1 - p) lambda(n+1) - C, p = 1 - (Q_opt - q(n) + C) lambda^ /
//! (lambda^2 + sigma^2), clipped to [0, 1]. The per-interval prediction is the costly part.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// PAQM's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "q_opt", kind: K::Real, default: D::Num(100.0), help: "queue length the controller holds, packets, within the buffer (our default, as PI/REM in seed 000; seed 003 uses 20 and 40)" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.01), help: "measurement (control) interval, s (our choice: 10 ms)" },
    ParamSpec { name: "order", kind: K::Int, default: D::Num(10.0), help: "order M of the AR / LMMSE predictor, in [1, 64] (our choice: 10)" },
    ParamSpec { name: "window", kind: K::Int, default: D::Num(500.0), help: "intervals over which the autocorrelation is measured, > order (our choice: 500 = 5 s)" },
    ParamSpec { name: "mean_pkt_size", kind: K::Size, default: D::Auto, help: "packet size that traffic and capacity are counted in, bytes; default: the link's mean packet size" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "paqm",
    summary: "Predictive AQM: LMMSE prediction of next-interval traffic, drop probability holding q at Q_opt",
    source: "Gao, He & Hou, IEEE INFOCOM 2002, s. III-IV",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Paqm::new(PaqmParams::from_map(m, l)?, l)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PaqmParams {
    /// Target queue, packets.
    pub q_opt: f64,
    /// Measurement interval, s.
    pub interval: f64,
    /// Predictor order M.
    pub order: usize,
    /// Autocorrelation window W, intervals.
    pub window: usize,
    /// Unit packet size, bytes.
    pub mean_pkt_size: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl PaqmParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let order = p.num("order")?;
        check_range("order", order, 1.0, false, 64.0, false)?;
        let window = p.num("window")?;
        check_range("window", window, order + 1.0, false, 1e6, false)?;
        let r = PaqmParams {
            q_opt: p.num("q_opt")?,
            interval: p.num("interval")?,
            order: order as usize,
            window: window as usize,
            mean_pkt_size: p
                .opt_num("mean_pkt_size")?
                .unwrap_or(l.mean_pkt_bytes as f64),
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        let buf = l.buffer_pkts();
        check_range("q_opt", self.q_opt, 0.0, false, buf, false).map_err(|e| {
            ParamError::new(
                "q_opt",
                format!("{} (the link buffer is {buf} packets)", e.msg),
            )
        })?;
        check_range("interval", self.interval, 1e-6, false, 3600.0, false)?;
        check_range("order", self.order as f64, 1.0, false, 64.0, false)?;
        check_range(
            "window",
            self.window as f64,
            self.order as f64 + 1.0,
            false,
            1e6,
            false,
        )?;
        check_range(
            "mean_pkt_size",
            self.mean_pkt_size,
            0.0,
            true,
            f64::INFINITY,
            true,
        )?;
        Ok(())
    }
}

/// State that changes per packet or per interval.
#[derive(Clone, Debug, PartialEq)]
pub struct PaqmState {
    /// Drop probability for the current interval.
    pub p: f64,
    /// Bytes that arrived in the current interval (all arrivals: lambda is the offered traffic).
    pub arrived_bytes: u64,
    /// The last prediction of next-interval traffic, packets.
    pub predicted: f64,
    /// Its error variance sigma^2, packets^2.
    pub pred_var: f64,
    /// Time of the next control step, ns.
    pub next_update: Time,
    /// Past traffic lambda(n), packets per interval, written twice (at i and i + W) so that the
    /// last W samples are always one contiguous slice.
    history: Vec<f64>,
    /// Next write position in [0, W).
    pos: usize,
    /// Samples held, at most W.
    len: usize,
    /// AR coefficients phi_1..phi_M.
    coef: Vec<f64>,
    /// Scratch: autocovariances r(0..=M), deviations from the mean, a Levinson temporary.
    r: Vec<f64>,
    dev: Vec<f64>,
    tmp: Vec<f64>,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PaqmStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Control steps (predictions).
    pub updates: u64,
}

/// The PAQM algorithm.
#[derive(Debug, Clone)]
pub struct Paqm {
    /// Configuration.
    pub params: PaqmParams,
    /// Evolving state.
    pub state: PaqmState,
    /// Counters.
    pub stats: PaqmStats,
    period_ns: Time,
    /// Link capacity per interval C, packets of `mean_pkt_size`.
    capacity_per_interval: f64,
}

/// Levinson-Durbin recursion: solves the Yule-Walker (Wiener-Hopf) equations of the order
/// `a.len()` LMMSE predictor from autocovariances `r[0..=a.len()]` into `a` (phi_1..phi_M) and
/// returns the prediction error variance. A non-positive r(0) gives phi = 0 and variance 0.
/// `tmp` is scratch of the same length as `a`.
pub fn levinson_durbin(r: &[f64], a: &mut [f64], tmp: &mut [f64]) -> f64 {
    a.fill(0.0);
    let mut err = r[0];
    if err <= 0.0 || !err.is_finite() {
        return 0.0;
    }
    for m in 1..=a.len() {
        let acc = r[m] - (1..m).map(|j| a[j - 1] * r[m - j]).sum::<f64>();
        let k = acc / err;
        tmp[..m - 1].copy_from_slice(&a[..m - 1]);
        for j in 1..m {
            a[j - 1] = tmp[j - 1] - k * tmp[m - j - 1];
        }
        a[m - 1] = k;
        err *= 1.0 - k * k;
        if err <= 0.0 {
            // A perfectly predictable sequence (|k| = 1): no error left.
            return 0.0;
        }
    }
    err
}

/// The LMMSE control (Gao et al. 2002, s. IV): the p minimising E[(q(n+1) - Q_opt)^2] for
/// q(n+1) = q(n) + (1 - p) lambda - c with lambda of mean `pred` and variance `var` is
/// 1 - (Q_opt - q + c) pred / (pred^2 + var), clipped to [0, 1]; 0 when no traffic is predicted.
#[inline]
pub fn lmmse_drop_prob(q: f64, q_opt: f64, c: f64, pred: f64, var: f64) -> f64 {
    if pred <= 0.0 {
        return 0.0;
    }
    (1.0 - (q_opt - q + c) * pred / (pred * pred + var)).clamp(0.0, 1.0)
}

impl Paqm {
    /// A PAQM instance with validated parameters for a link; buffers are allocated here, once.
    pub fn new(params: PaqmParams, l: &LinkContext) -> Self {
        let period_ns = ((params.interval * NS_PER_SEC as f64).round() as Time).max(1);
        let capacity_per_interval =
            l.rate_bps as f64 / 8.0 * params.interval / params.mean_pkt_size;
        let (m, w) = (params.order, params.window);
        Paqm {
            state: PaqmState {
                p: 0.0,
                arrived_bytes: 0,
                predicted: 0.0,
                pred_var: 0.0,
                next_update: period_ns,
                history: vec![0.0; 2 * w],
                pos: 0,
                len: 0,
                coef: vec![0.0; m],
                r: vec![0.0; m + 1],
                dev: vec![0.0; w],
                tmp: vec![0.0; m],
            },
            params,
            stats: PaqmStats::default(),
            period_ns,
            capacity_per_interval,
        }
    }

    /// Adds lambda(n) and predicts lambda(n+1): mean + sum_j phi_j (lambda(n+1-j) - mean), with the
    /// AR coefficients solved from the biased autocovariance of the last W intervals.
    fn predict(&mut self, lambda: f64) -> (f64, f64) {
        let w = self.params.window;
        let s = &mut self.state;
        s.history[s.pos] = lambda;
        s.history[s.pos + w] = lambda;
        s.pos = (s.pos + 1) % w;
        s.len = (s.len + 1).min(w);
        let n = s.len;
        let xs = &s.history[s.pos + w - n..s.pos + w];
        let mean = xs.iter().sum::<f64>() / n as f64;
        for (d, x) in s.dev[..n].iter_mut().zip(xs) {
            *d = x - mean;
        }
        let dev = &s.dev[..n];
        let m = self.params.order.min(n - 1);
        for j in 0..=m {
            s.r[j] = dev[j..].iter().zip(dev).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        }
        let var = levinson_durbin(&s.r[..=m], &mut s.coef[..m], &mut s.tmp[..m]);
        let pred = mean + (1..=m).map(|j| s.coef[j - 1] * dev[n - j]).sum::<f64>();
        (pred.max(0.0), var)
    }
}

impl Aqm for Paqm {
    fn name(&self) -> &'static str {
        "paqm"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        self.state.arrived_bytes = self
            .state
            .arrived_bytes
            .saturating_add(pkt.size_bytes as u64);
        let p = self.state.p;
        if p > 0.0 && rng.random::<f64>() < p {
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

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_update)
    }

    fn update(&mut self, q: &QueueView, now: Time) {
        let lambda = self.state.arrived_bytes as f64 / self.params.mean_pkt_size;
        self.state.arrived_bytes = 0;
        let (pred, var) = self.predict(lambda);
        let s = &mut self.state;
        s.predicted = pred;
        s.pred_var = var;
        s.p = lmmse_drop_prob(
            q.len_pkts as f64,
            self.params.q_opt,
            self.capacity_per_interval,
            pred,
            var,
        );
        self.stats.updates += 1;
        s.next_update += self.period_ns;
        if s.next_update <= now {
            s.next_update = now + self.period_ns;
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("updates", self.stats.updates as f64),
            ("predicted_pkts", self.state.predicted),
            ("prediction_var", self.state.pred_var),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    // 10 Mb/s, 1000-byte packets, 10 ms intervals: C = 12.5 packets per interval.
    fn paqm(pairs: &[(&str, ParamValue)]) -> Result<Paqm, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(300),
            mean_pkt_bytes: 1000,
        };
        Ok(Paqm::new(PaqmParams::from_map(&m, &l)?, &l))
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    fn stat(s: &Script, name: &str) -> f64 {
        s.aqm.stats().iter().find(|(k, _)| *k == name).unwrap().1
    }

    /// One interval: `pkts` packets of 1000 B arrive, the queue shows `q` at its end.
    fn interval(s: &mut Script, pkts: u32, q: u32) {
        s.set_queue(q);
        for _ in 0..pkts {
            s.arrive(1000);
        }
        s.advance(10_000_000);
    }

    #[test]
    fn lmmse_control_by_hand() {
        // Q_opt 100, c 12.5, predicted 20 packets, no uncertainty:
        // q 100: (1 - p) = 12.5 * 20 / 400 = 0.625 -> p = 0.375.
        assert!((lmmse_drop_prob(100.0, 100.0, 12.5, 20.0, 0.0) - 0.375).abs() < 1e-15);
        // Variance 100 shrinks the admitted share: 12.5 * 20 / 500 = 0.5 -> p = 0.5.
        assert!((lmmse_drop_prob(100.0, 100.0, 12.5, 20.0, 100.0) - 0.5).abs() < 1e-15);
        // q 120 > Q_opt + c: admitting anything overshoots: p = 1. q 50: 62.5*20/400 > 1: p = 0.
        assert_eq!(lmmse_drop_prob(120.0, 100.0, 12.5, 20.0, 0.0), 1.0);
        assert_eq!(lmmse_drop_prob(50.0, 100.0, 12.5, 20.0, 0.0), 0.0);
        // Between, p is linear in q (the "generalised RED" of the paper's s. IV):
        // q 105: 7.5 * 20 / 400 = 0.375 -> 0.625.
        assert!((lmmse_drop_prob(105.0, 100.0, 12.5, 20.0, 0.0) - 0.625).abs() < 1e-15);
        assert_eq!(lmmse_drop_prob(500.0, 100.0, 12.5, 0.0, 0.0), 0.0);
    }

    #[test]
    fn levinson_durbin_by_hand() {
        let (mut a, mut t) = ([0.0; 2], [0.0; 2]);
        // AR(1) autocovariance r = [1, 0.5, 0.25]: phi = [0.5, 0], error 1 - 0.25 = 0.75.
        let e = levinson_durbin(&[1.0, 0.5, 0.25], &mut a, &mut t);
        assert!((a[0] - 0.5).abs() < 1e-15 && a[1].abs() < 1e-15 && (e - 0.75).abs() < 1e-15);
        // r = [2, 1, 0]: k1 = 0.5, E1 = 1.5; k2 = (0 - 0.5 * 1) / 1.5 = -1/3;
        // phi = [0.5 + 0.5/3, -1/3] = [2/3, -1/3]; E2 = 1.5 (1 - 1/9) = 4/3.
        let e = levinson_durbin(&[2.0, 1.0, 0.0], &mut a, &mut t);
        assert!((a[0] - 2.0 / 3.0).abs() < 1e-15 && (a[1] + 1.0 / 3.0).abs() < 1e-15);
        assert!((e - 4.0 / 3.0).abs() < 1e-15);
        // Constant traffic: r(0) = 0: no predictor, no error.
        assert_eq!(levinson_durbin(&[0.0, 0.0, 0.0], &mut a, &mut t), 0.0);
        assert_eq!(a, [0.0, 0.0]);
    }

    #[test]
    fn prediction_and_drop_probability_by_hand() {
        // Order 1, window 4; traffic alternates 10, 30, 10, 30 packets per interval.
        // After 4 intervals: mean 20, deviations [-10, 10, -10, 10];
        // r0 = 4 * 100 / 4 = 100, r1 = 3 * (-100) / 4 = -75: phi = -0.75, sigma^2 = 100 (1 - 0.5625)
        // = 43.75; prediction 20 - 0.75 (30 - 20) = 12.5 (the next is a low one).
        // With q = Q_opt = 100: (1 - p) = 12.5 * 12.5 / (156.25 + 43.75) = 0.78125 -> p = 0.21875.
        let mut s = Script::new(Box::new(
            paqm(&[("order", n(1.0)), ("window", n(4.0))]).unwrap(),
        ));
        // Interval 1 alone: one sample, the prediction is its value and p follows from it:
        // q 100: (1 - p) = 12.5 * 10 / 100 = 1.25 -> p = 0.
        interval(&mut s, 10, 100);
        assert_eq!(
            (stat(&s, "predicted_pkts"), stat(&s, "prediction_var")),
            (10.0, 0.0)
        );
        assert_eq!(s.aqm.drop_prob(), Some(0.0));
        interval(&mut s, 30, 100);
        interval(&mut s, 10, 100);
        interval(&mut s, 30, 100);
        assert!((stat(&s, "predicted_pkts") - 12.5).abs() < 1e-12);
        assert!((stat(&s, "prediction_var") - 43.75).abs() < 1e-12);
        assert!((s.aqm.drop_prob().unwrap() - 0.21875).abs() < 1e-12);
        // The window slides: a 5th interval of 10 drops the first 10 -> [30, 10, 30, 10]:
        // r0 = 100, r1 = -75 again; prediction 20 - 0.75 (10 - 20) = 27.5. q 90:
        // (1 - p) = 22.5 * 27.5 / (756.25 + 43.75) = 0.7734375 -> p = 0.2265625.
        interval(&mut s, 10, 90);
        assert!((stat(&s, "predicted_pkts") - 27.5).abs() < 1e-12);
        assert!((s.aqm.drop_prob().unwrap() - 0.2265625).abs() < 1e-12);
        assert_eq!(stat(&s, "updates"), 5.0);
    }

    #[test]
    fn drops_with_probability_p_and_marks_when_ecn() {
        let mut s = Script::new(Box::new(paqm(&[("ecn", ParamValue::Bool(true))]).unwrap()));
        interval(&mut s, 40, 200); // q 200 > Q_opt + c: p = 1
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
        s.ecn_capable = true;
        assert_eq!(s.arrive(1000), Verdict::Mark);
        s.ecn_capable = false;
        assert_eq!(s.arrive(1000), Verdict::Drop);
        assert_eq!(&s.aqm.stats()[..2], &[("early_drops", 1.0), ("marks", 1.0)]);
    }

    #[test]
    fn bad_parameters_are_named() {
        for (name, bad) in [
            ("q_opt", 301.0),
            ("q_opt", -1.0),
            ("interval", 0.0),
            ("order", 0.0),
            ("order", 65.0),
            ("window", 10.0),
            ("mean_pkt_size", 0.0),
        ] {
            let e = paqm(&[(name, n(bad))]).unwrap_err();
            assert_eq!(e.param, name, "{name} = {bad}: {e}");
        }
        let e = paqm(&[("q_opt", n(301.0))]).unwrap_err();
        assert!(e.msg.contains("buffer"), "{e}");
        let e = paqm(&[("order", n(2.5))]).unwrap_err();
        assert_eq!(e.param, "order");
    }
}
