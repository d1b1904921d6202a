//! AN-AQM: an adaptive single-neuron AQM (J. Sun, M. Zukerman, "An Adaptive Neuron AQM for a Stable
//! Internet", IFIP Networking 2007, LNCS 4479; its error terms as seed 000 s. 2 states them).
//!
//! Every sample the neuron adds K times the normalised-weight sum of six inputs, built from the
//! queue error e(k) = q(k) - Q_t and the normalised rate error y(k) = r(k)/C - 1 and their past
//! values, to the drop probability (clipped to [0, 1]); its weights learn by a supervised Hebbian
//! rule. The paper's text was not available to us: the input set, learning rule and every constant
//! below are our reconstruction, listed in `docs/algorithms/anaqm.md`.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{
    congestion_signal, count_signal, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC,
};
use rand::Rng;

/// Our initial weights for the inputs [e, de, d2e, y, dy, d2y] (see `docs/algorithms/anaqm.md`).
pub const DEFAULT_WEIGHTS: [f64; 6] = [0.002, 0.5, 0.05, 0.3, 0.1, 0.05];

/// AN-AQM's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "target_ratio", kind: K::Real, default: D::Num(0.3), help: "target queue Q_t as a fraction of the buffer, in (0, 1] (seed 000 Table 2: 0.3)" },
    ParamSpec { name: "q_target", kind: K::Real, default: D::Auto, help: "target queue Q_t, packets, within the buffer; default target_ratio x buffer" },
    ParamSpec { name: "sample_hz", kind: K::Real, default: D::Num(170.0), help: "sampling frequency 1/T, Hz (our choice: the PI/LaQ rate of seed 001)" },
    ParamSpec { name: "gain", kind: K::Real, default: D::Num(0.002), help: "neuron gain K, > 0 (our choice, checked on a TCP fluid model)" },
    ParamSpec { name: "eta", kind: K::Real, default: D::Num(0.1), help: "learning rate of the supervised Hebbian rule, >= 0 (our choice)" },
    ParamSpec { name: "weights", kind: K::List, default: D::Auto, help: "six initial weights for [e, de, d2e, y, dy, d2y]; default [0.002, 0.5, 0.05, 0.3, 0.1, 0.05] (our choice)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "anaqm",
    summary: "Adaptive neuron AQM: a single neuron on queue and rate errors, Hebbian + supervised learning",
    source: "Sun & Zukerman, IFIP Networking 2007 (LNCS 4479); error terms from seed 000 s. 2",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Anaqm::new(AnaqmParams::from_map(m, l)?, l)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct AnaqmParams {
    /// Target queue Q_t, packets.
    pub q_target: f64,
    /// Sampling frequency, Hz.
    pub sample_hz: f64,
    /// Neuron gain K.
    pub gain: f64,
    /// Learning rate.
    pub eta: f64,
    /// Initial weights.
    pub weights: [f64; 6],
    /// ECN marking.
    pub ecn: bool,
}

impl AnaqmParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let ratio = p.num("target_ratio")?;
        check_range("target_ratio", ratio, 0.0, true, 1.0, false)?;
        let weights = match p.list("weights") {
            None => DEFAULT_WEIGHTS,
            Some(v) => <[f64; 6]>::try_from(v.as_slice()).map_err(|_| {
                ParamError::new(
                    "weights",
                    format!("must list exactly 6 numbers (got {})", v.len()),
                )
            })?,
        };
        let r = AnaqmParams {
            q_target: p.opt_num("q_target")?.unwrap_or(ratio * l.buffer_pkts()),
            sample_hz: p.num("sample_hz")?,
            gain: p.num("gain")?,
            eta: p.num("eta")?,
            weights,
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        let buf = l.buffer_pkts();
        check_range("q_target", self.q_target, 0.0, false, buf, false).map_err(|e| {
            ParamError::new(
                "q_target",
                format!("{} (the link buffer is {buf} packets)", e.msg),
            )
        })?;
        check_range("sample_hz", self.sample_hz, 0.0, true, 1e9, false)?;
        check_range("gain", self.gain, 0.0, true, f64::INFINITY, true)?;
        check_range("eta", self.eta, 0.0, false, f64::INFINITY, true)?;
        if self.weights.iter().any(|w| !w.is_finite()) || self.weights.iter().all(|w| *w == 0.0) {
            return Err(ParamError::new(
                "weights",
                format!("must be finite and not all zero (got {:?})", self.weights),
            ));
        }
        Ok(())
    }

    /// The sampling period T, ns (at least 1).
    pub fn period_ns(&self) -> Time {
        ((NS_PER_SEC as f64 / self.sample_hz).round() as Time).max(1)
    }
}

/// State that changes per packet or per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct AnaqmState {
    /// Drop probability p(k).
    pub p: f64,
    /// Weights w(k) (not normalised).
    pub w: [f64; 6],
    /// e(k-1), e(k-2): normalised queue errors of the last two samples.
    pub e_past: [f64; 2],
    /// y(k-1), y(k-2): rate errors of the last two samples.
    pub y_past: [f64; 2],
    /// Bytes admitted into the queue since the last sample (r(k) is the queue's input rate).
    pub admitted_bytes: u64,
    /// Time of the next sample, ns.
    pub next_sample: Time,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnaqmStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Samples taken.
    pub samples: u64,
}

/// The AN-AQM algorithm.
#[derive(Debug, Clone)]
pub struct Anaqm {
    /// Configuration.
    pub params: AnaqmParams,
    /// Evolving state.
    pub state: AnaqmState,
    /// Counters.
    pub stats: AnaqmStats,
    period_ns: Time,
    /// The buffer B, packets (the queue error is e / B).
    buffer_pkts: f64,
    /// Bytes the link can send in one period, C T.
    capacity_per_period: f64,
}

/// The six neuron inputs from the current and two past errors: for the queue error e and the rate
/// error y alike, the error itself, its first difference and its second difference (the I, P and D
/// inputs of an incremental PID neuron).
#[inline]
pub fn neuron_inputs(e: f64, e_past: [f64; 2], y: f64, y_past: [f64; 2]) -> [f64; 6] {
    [
        e,
        e - e_past[0],
        e - 2.0 * e_past[0] + e_past[1],
        y,
        y - y_past[0],
        y - 2.0 * y_past[0] + y_past[1],
    ]
}

/// The neuron output p(k) = p(k-1) + K sum_i w'_i x_i with w'_i = w_i / sum_j |w_j|, clipped to
/// [0, 1] (single-neuron incremental controller).
#[inline]
pub fn neuron_output(p: f64, gain: f64, w: &[f64; 6], x: &[f64; 6]) -> f64 {
    let norm: f64 = w.iter().map(|v| v.abs()).sum();
    if norm == 0.0 || !norm.is_finite() {
        return p;
    }
    let s: f64 = w.iter().zip(x).map(|(wi, xi)| wi * xi).sum();
    (p + gain * s / norm).clamp(0.0, 1.0)
}

/// Supervised Hebbian learning: w_i <- w_i + eta z p x_i, the product of the teacher signal z
/// (the combined error), the neuron output p and the input x_i.
#[inline]
pub fn hebbian_step(w: &[f64; 6], eta: f64, z: f64, p: f64, x: &[f64; 6]) -> [f64; 6] {
    let mut out = *w;
    for (o, xi) in out.iter_mut().zip(x) {
        *o += eta * z * p * xi;
    }
    out
}

impl Anaqm {
    /// An AN-AQM instance with validated parameters for a link. Before the first sample the past
    /// errors are those of the empty idle link: e = -Q_t / B and y = -1.
    pub fn new(params: AnaqmParams, l: &LinkContext) -> Self {
        let period_ns = params.period_ns();
        let buffer_pkts = l.buffer_pkts().max(1.0);
        let e0 = -params.q_target / buffer_pkts;
        let capacity_per_period =
            l.rate_bps.max(1) as f64 / 8.0 * period_ns as f64 / NS_PER_SEC as f64;
        Anaqm {
            state: AnaqmState {
                p: 0.0,
                w: params.weights,
                e_past: [e0, e0],
                y_past: [-1.0, -1.0],
                admitted_bytes: 0,
                next_sample: period_ns,
            },
            params,
            stats: AnaqmStats::default(),
            period_ns,
            buffer_pkts,
            capacity_per_period,
        }
    }
}

impl Aqm for Anaqm {
    fn name(&self) -> &'static str {
        "anaqm"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let p = self.state.p;
        let v = if p > 0.0 && rng.random::<f64>() < p {
            congestion_signal(self.params.ecn, pkt)
        } else {
            Verdict::Admit
        };
        count_signal(v, &mut self.stats.marks, &mut self.stats.early_drops);
        if v != Verdict::Drop {
            self.state.admitted_bytes = self
                .state
                .admitted_bytes
                .saturating_add(pkt.size_bytes as u64);
        }
        v
    }

    fn on_overflow(&mut self, pkt: &PacketMeta, _q: &QueueView, _now: Time) {
        self.state.admitted_bytes = self
            .state
            .admitted_bytes
            .saturating_sub(pkt.size_bytes as u64);
    }

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_sample)
    }

    fn update(&mut self, q: &QueueView, now: Time) {
        let prm = &self.params;
        let s = &mut self.state;
        // Seed 000 eqs. (1)-(2): e(k) = q(k) - Q_t (here over B), y(k) = r(k)/C - 1.
        let e = (q.len_pkts as f64 - prm.q_target) / self.buffer_pkts;
        let y = s.admitted_bytes as f64 / self.capacity_per_period - 1.0;
        let x = neuron_inputs(e, s.e_past, y, s.y_past);
        s.p = neuron_output(s.p, prm.gain, &s.w, &x);
        s.w = hebbian_step(&s.w, prm.eta, e + y, s.p, &x);
        // Rescaling all weights leaves the normalised weights, hence the output, unchanged; it
        // only keeps the stored values finite under extreme inputs.
        let norm: f64 = s.w.iter().map(|v| v.abs()).sum();
        if !(1e-12..=1e12).contains(&norm) {
            s.w = if norm.is_finite() && norm > 0.0 {
                s.w.map(|v| v / norm)
            } else {
                prm.weights
            };
        }
        s.e_past = [e, s.e_past[0]];
        s.y_past = [y, s.y_past[0]];
        s.admitted_bytes = 0;
        self.stats.samples += 1;
        s.next_sample += self.period_ns;
        if s.next_sample <= now {
            s.next_sample = now + self.period_ns;
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let w = &self.state.w;
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("samples", self.stats.samples as f64),
            ("w_e", w[0]),
            ("w_de", w[1]),
            ("w_d2e", w[2]),
            ("w_y", w[3]),
            ("w_dy", w[4]),
            ("w_d2y", w[5]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    // 10 Mb/s (C = 1.25e6 B/s), buffer 100 packets: Q_t = 0.3 * 100 = 30. At 100 Hz, T = 10 ms and
    // C T = 12500 B.
    fn link() -> LinkContext {
        LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(100),
            mean_pkt_bytes: 1000,
        }
    }

    fn anaqm(pairs: &[(&str, ParamValue)]) -> Result<Anaqm, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(Anaqm::new(AnaqmParams::from_map(&m, &link())?, &link()))
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    fn weights(s: &Script) -> Vec<f64> {
        s.aqm.stats()[3..].iter().map(|(_, v)| *v).collect()
    }

    /// One 10 ms sample period: `bytes` arrive in 1000-byte packets (the last one smaller) while
    /// the queue shows `q`, then the sample is taken.
    fn sample(s: &mut Script, q: u32, bytes: u32) {
        s.set_queue(q);
        let mut left = bytes;
        while left > 0 {
            let b = left.min(1000);
            s.arrive(b);
            left -= b;
        }
        s.advance(10_000_000);
    }

    #[test]
    fn neuron_output_and_learning_by_hand() {
        let mut s = Script::new(Box::new(anaqm(&[("sample_hz", n(100.0))]).unwrap()));
        // Past errors of the idle empty link: e = -30/100 = -0.3, y = -1.
        // Sample 1: q 50, 25000 B admitted (p is 0): e = 0.2, y = 25000/12500 - 1 = 1.
        //   x = [0.2, 0.2+0.3, 0.2+0.6-0.3, 1, 1+1, 1+2-1] = [0.2, 0.5, 0.5, 1, 2, 2]
        //   sum w x = 0.0004 + 0.25 + 0.025 + 0.3 + 0.2 + 0.1 = 0.8754; sum |w| = 1.002
        //   p = 0 + 0.002 * 0.8754 / 1.002 = 0.0017473054...
        //   z = e + y = 1.2; w_i += 0.1 * 1.2 * p * x_i
        sample(&mut s, 50, 25_000);
        let p1 = 0.002 * 0.8754 / 1.002;
        assert!((s.aqm.drop_prob().unwrap() - p1).abs() < 1e-15);
        let x1 = [0.2, 0.5, 0.5, 1.0, 2.0, 2.0];
        let w1: Vec<f64> = DEFAULT_WEIGHTS
            .iter()
            .zip(x1)
            .map(|(w, x)| w + 0.12 * p1 * x)
            .collect();
        for (g, w) in weights(&s).iter().zip(&w1) {
            assert!((g - w).abs() < 1e-15, "{g} vs {w}");
        }
        // Sample 2: q 50, 12500 B: e = 0.2, y = 0; x = [0.2, 0, 0.2-0.4-0.3, 0, 0-1, 0-2-1]
        //   = [0.2, 0, -0.5, 0, -1, -3]: p = p1 + 0.002 * (sum w1 x) / (sum |w1|) = 0.0011964...
        sample(&mut s, 50, 12_500);
        let x2 = [0.2, 0.0, -0.5, 0.0, -1.0, -3.0];
        let dot: f64 = w1.iter().zip(x2).map(|(w, x)| w * x).sum();
        let norm: f64 = w1.iter().sum();
        let p2 = p1 + 0.002 * dot / norm;
        assert!((p2 - 0.001_196_480_219_1).abs() < 1e-12);
        assert!((s.aqm.drop_prob().unwrap() - p2).abs() < 1e-15);
        // Sample 3: an empty period with q 20: e = -0.1, y = -1: p falls to 0.0000683488...
        sample(&mut s, 20, 0);
        assert!((s.aqm.drop_prob().unwrap() - 0.000_068_348_793_7).abs() < 1e-12);
    }

    #[test]
    fn pure_rules() {
        let x = neuron_inputs(0.5, [0.25, 0.0], -0.5, [0.0, 1.0]);
        assert_eq!(x, [0.5, 0.25, 0.0, -0.5, -0.5, 0.5]);
        // w = [1, -1, 0, 0, 0, 2], sum |w| = 4; sum w x = 0.5 - 0.25 + 1.0 = 1.25:
        // p = 0.1 + 0.1 * 1.25 / 4 = 0.13125.
        let w = [1.0, -1.0, 0.0, 0.0, 0.0, 2.0];
        assert!((neuron_output(0.1, 0.1, &w, &x) - 0.13125).abs() < 1e-15);
        assert_eq!(neuron_output(0.5, 10.0, &[1.0; 6], &[1.0; 6]), 1.0);
        assert_eq!(neuron_output(0.5, 10.0, &[1.0; 6], &[-1.0; 6]), 0.0);
        assert_eq!(neuron_output(0.3, 1.0, &[0.0; 6], &[1.0; 6]), 0.3);
        assert_eq!(
            hebbian_step(&[1.0; 6], 0.5, 2.0, 0.1, &x)[0],
            1.0 + 0.5 * 2.0 * 0.1 * 0.5
        );
    }

    #[test]
    fn the_input_rate_counts_admitted_bytes_only() {
        // An overflow after admission takes the packet back out of r(k).
        let mut s = Script::new(Box::new(anaqm(&[("sample_hz", n(100.0))]).unwrap()));
        s.set_queue(30);
        for _ in 0..10 {
            s.arrive(1000);
        }
        let pkt = PacketMeta::of_size(1000);
        for _ in 0..5 {
            s.aqm.on_overflow(&pkt, &s.q, s.now);
        }
        s.advance(10_000_000);
        // e = 0; y = 5000/12500 - 1 = -0.6: x = [0, 0.3, 0.3, -0.6, 0.4, 0.4]:
        // sum w x = 0.15 + 0.015 - 0.18 + 0.04 + 0.02 = 0.045 -> p = 0.002 * 0.045 / 1.002.
        assert!((s.aqm.drop_prob().unwrap() - 0.002 * 0.045 / 1.002).abs() < 1e-15);
    }

    #[test]
    fn drops_with_probability_p_and_marks_when_ecn() {
        let a = anaqm(&[("gain", n(10.0)), ("ecn", ParamValue::Bool(true))]).unwrap();
        let period = a.params.period_ns();
        let mut s = Script::new(Box::new(a));
        assert!((0..50).all(|_| s.arrive(1000) == Verdict::Admit));
        s.set_queue(100);
        s.advance(period); // a full queue and 50 kB in 1/170 s: p -> 1
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
        s.ecn_capable = true;
        assert_eq!(s.arrive(1000), Verdict::Mark);
        s.ecn_capable = false;
        assert_eq!(s.arrive(1000), Verdict::Drop);
        assert_eq!(&s.aqm.stats()[..2], &[("early_drops", 1.0), ("marks", 1.0)]);
    }

    #[test]
    fn weights_stay_finite_under_extreme_rates() {
        let mut s = Script::new(Box::new(anaqm(&[("eta", n(1e6))]).unwrap()));
        for k in 0..200 {
            s.set_queue(if k % 2 == 0 { 100 } else { 0 });
            for _ in 0..(k % 7) * 300 {
                s.arrive(65_535);
            }
            s.advance(5_882_353);
            let p = s.aqm.drop_prob().unwrap();
            assert!((0.0..=1.0).contains(&p));
            assert!(
                weights(&s).iter().all(|w| w.is_finite()),
                "{:?}",
                weights(&s)
            );
        }
    }

    #[test]
    fn parameters_and_bad_values() {
        let a = anaqm(&[(
            "weights",
            ParamValue::List(vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        )])
        .unwrap();
        assert_eq!(a.params.weights, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(a.params.q_target, 30.0);
        assert_eq!(
            anaqm(&[("q_target", n(50.0))]).unwrap().params.q_target,
            50.0
        );
        for (name, bad) in [
            ("target_ratio", 0.0),
            ("target_ratio", 1.5),
            ("q_target", 101.0),
            ("gain", 0.0),
            ("gain", -0.1),
            ("eta", -1.0),
            ("sample_hz", 0.0),
        ] {
            let e = anaqm(&[(name, n(bad))]).unwrap_err();
            assert_eq!(e.param, name, "{name} = {bad}: {e}");
        }
        let e = anaqm(&[("q_target", n(101.0))]).unwrap_err();
        assert!(e.msg.contains("buffer"), "{e}");
        let e = anaqm(&[("weights", ParamValue::List(vec![1.0; 5]))]).unwrap_err();
        assert_eq!(e.param, "weights");
        assert!(e.msg.contains("6"), "{e}");
        let e = anaqm(&[("weights", ParamValue::List(vec![0.0; 6]))]).unwrap_err();
        assert_eq!(e.param, "weights");
    }
}
