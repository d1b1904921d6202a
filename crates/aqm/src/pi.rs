//! PI: the proportional-integral AQM controller (C. V. Hollot, V. Misra, D. Towsley, W. Gong,
//! "Analysis and Design of Controllers for AQM Routers Supporting TCP Flows", IEEE TAC 47(6), 2002, s. V).
//!
//! Every sampling period T (170 Hz in seed 001) the drop probability follows the difference
//! equation of the discretised PI controller, p(kT) = p((k-1)T) + a (q(kT) - q_ref) - b (q((k-1)T) - q_ref),
//! clipped to [0, 1]; arriving packets are dropped (or ECN-marked) with that probability.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// PI's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "a",
        kind: K::Real,
        default: D::Num(0.00001822),
        help: "gain on the current queue error, per packet (Hollot et al. 2002 s. V; seed 001)",
    },
    ParamSpec {
        name: "b",
        kind: K::Real,
        default: D::Num(0.00001816),
        help:
            "gain on the previous queue error, per packet; 0 <= b <= a (a - b is the integral gain)",
    },
    ParamSpec {
        name: "q_ref",
        kind: K::Real,
        default: D::Num(100.0),
        help:
            "target queue, packets (seed 000 Table 2: 100; ns-2's default is 50); within the buffer",
    },
    ParamSpec {
        name: "sample_hz",
        kind: K::Real,
        default: D::Num(170.0),
        help: "sampling frequency 1/T, Hz (seed 001: 170)",
    },
    ParamSpec {
        name: "ecn",
        kind: K::Bool,
        default: D::Bool(false),
        help: "mark ECN-capable packets instead of dropping them (RFC 3168)",
    },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "pi",
    summary: "PI controller: drop probability integrates the queue error, sampled at a fixed rate",
    source: "Hollot, Misra, Towsley & Gong, IEEE TAC 47(6) 2002, s. V",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Pi::new(PiParams::from_map(m, l)?)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PiParams {
    /// Gain on q(kT) - q_ref, per packet.
    pub a: f64,
    /// Gain on q((k-1)T) - q_ref, per packet.
    pub b: f64,
    /// Target queue, packets.
    pub q_ref: f64,
    /// Sampling frequency, Hz.
    pub sample_hz: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl PiParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let r = PiParams {
            a: p.num("a")?,
            b: p.num("b")?,
            q_ref: p.num("q_ref")?,
            sample_hz: p.num("sample_hz")?,
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("a", self.a, 0.0, false, f64::INFINITY, true)?;
        check_range("b", self.b, 0.0, false, self.a, false).map_err(|e| {
            ParamError::new(
                "b",
                format!(
                    "{} (b must not exceed a: a - b is the integral gain)",
                    e.msg
                ),
            )
        })?;
        let buf = l.buffer_pkts();
        check_range("q_ref", self.q_ref, 0.0, false, buf, false).map_err(|e| {
            ParamError::new(
                "q_ref",
                format!("{} (the link buffer is {buf} packets)", e.msg),
            )
        })?;
        check_range("sample_hz", self.sample_hz, 0.0, true, 1e9, false)?;
        Ok(())
    }

    /// The sampling period T, ns (at least 1).
    pub fn period_ns(&self) -> Time {
        ((NS_PER_SEC as f64 / self.sample_hz).round() as Time).max(1)
    }
}

/// State that changes per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct PiState {
    /// Drop probability p((k-1)T).
    pub p: f64,
    /// Queue at the previous sample q((k-1)T), packets (0 before the first: the queue starts empty).
    pub q_old: f64,
    /// Time of the next sample, ns.
    pub next_sample: Time,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PiStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Samples taken.
    pub samples: u64,
}

/// The PI algorithm.
#[derive(Debug, Clone)]
pub struct Pi {
    /// Configuration.
    pub params: PiParams,
    /// Evolving state.
    pub state: PiState,
    /// Counters.
    pub stats: PiStats,
    period_ns: Time,
}

/// One step of the PI difference equation (Hollot et al. 2002, s. V, the discretised
/// C(z) = (a z - b) / (z - 1)): p + a (q - q_ref) - b (q_old - q_ref), clipped to [0, 1].
#[inline]
pub fn pi_step(p: f64, q: f64, q_old: f64, q_ref: f64, a: f64, b: f64) -> f64 {
    (p + a * (q - q_ref) - b * (q_old - q_ref)).clamp(0.0, 1.0)
}

impl Pi {
    /// A PI instance with validated parameters; the first sample is one period after time 0.
    pub fn new(params: PiParams) -> Self {
        let period_ns = params.period_ns();
        Pi {
            params,
            state: PiState {
                p: 0.0,
                q_old: 0.0,
                next_sample: period_ns,
            },
            stats: PiStats::default(),
            period_ns,
        }
    }
}

impl Aqm for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        _q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
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
        Some(self.state.next_sample)
    }

    fn update(&mut self, q: &QueueView, now: Time) {
        let s = &mut self.state;
        let prm = &self.params;
        let qk = q.len_pkts as f64;
        s.p = pi_step(s.p, qk, s.q_old, prm.q_ref, prm.a, prm.b);
        s.q_old = qk;
        self.stats.samples += 1;
        // Keep the sampling grid; after a gap (a caller that skipped samples) restart from now.
        s.next_sample += self.period_ns;
        if s.next_sample <= now {
            s.next_sample = now + self.period_ns;
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("samples", self.stats.samples as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    fn link(buffer: u32) -> LinkContext {
        LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        }
    }

    fn pi(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<Pi, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(Pi::new(PiParams::from_map(&m, &link(buffer))?))
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    /// Samples the queue series `qs`, one per period, and returns p after each sample.
    fn p_sequence(s: &mut Script, period: Time, qs: &[u32]) -> Vec<f64> {
        qs.iter()
            .map(|&q| {
                s.set_queue(q);
                s.advance(period);
                s.aqm.drop_prob().unwrap()
            })
            .collect()
    }

    #[test]
    fn p_sequence_follows_the_difference_equation_by_hand() {
        // a = 0.002, b = 0.001, q_ref = 100; q_old = 0 and p = 0 before the first sample.
        // k1 q=150: 0 + 0.002*50 - 0.001*(0-100)     = 0.1 + 0.1         = 0.20
        // k2 q=150: 0.20 + 0.002*50 - 0.001*50       = 0.20 + 0.1 - 0.05 = 0.25
        // k3 q=120: 0.25 + 0.002*20 - 0.001*50       = 0.25 + 0.04 - 0.05 = 0.24
        // k4 q=80:  0.24 + 0.002*(-20) - 0.001*20    = 0.24 - 0.04 - 0.02 = 0.18
        // k5 q=300: 0.18 + 0.002*200 - 0.001*(-20)   = 0.18 + 0.4 + 0.02 = 0.60
        // k6 q=600: 0.60 + 0.002*500 - 0.001*200     = 1.40 -> clipped to 1
        // k7 q=0:   1.00 + 0.002*(-100) - 0.001*500  = 1 - 0.2 - 0.5    = 0.30
        // k8 q=0:   0.30 - 0.2 + 0.1                 = 0.20
        let a = pi(&[("a", n(0.002)), ("b", n(0.001))], 1000).unwrap();
        let period = a.params.period_ns();
        let mut s = Script::new(Box::new(a));
        let got = p_sequence(&mut s, period, &[150, 150, 120, 80, 300, 600, 0, 0]);
        let want = [0.20, 0.25, 0.24, 0.18, 0.60, 1.0, 0.30, 0.20];
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() < 1e-12, "k{}: {g} vs {w}", k + 1);
        }
    }

    #[test]
    fn default_gains_by_hand_and_the_sampling_grid() {
        // Defaults a = 1.822e-5, b = 1.816e-5, q_ref = 100, q held at 200:
        // k1: 1.822e-5*100 + 1.816e-5*100 = 3.638e-3; then + (a - b)*100 = 6e-6 per sample.
        let d = pi(&[], 1000).unwrap();
        assert_eq!(d.params.period_ns(), 5_882_353); // 1 / 170 Hz, rounded to the ns
        let mut s = Script::new(Box::new(d));
        let got = p_sequence(&mut s, 5_882_353, &[200, 200, 200]);
        for (g, w) in got.iter().zip([3.638e-3, 3.644e-3, 3.650e-3]) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        // Exactly one sample per period: after 3 periods, 3 samples, the next at 4 T.
        assert_eq!(s.aqm.stats()[2], ("samples", 3.0));
        assert_eq!(s.aqm.next_update(), Some(4 * 5_882_353));
    }

    #[test]
    fn pure_step_clips_at_both_ends() {
        assert_eq!(pi_step(0.0, 0.0, 100.0, 100.0, 0.01, 0.005), 0.0); // -1.0 -> 0
        assert_eq!(pi_step(0.9, 400.0, 100.0, 100.0, 0.01, 0.005), 1.0); // 3.9 -> 1
        assert!((pi_step(0.5, 110.0, 105.0, 100.0, 0.01, 0.005) - 0.575).abs() < 1e-12);
    }

    #[test]
    fn drops_with_probability_p_and_marks_when_ecn() {
        // p driven to 1 by a long queue: every arrival is signalled; p = 0: none.
        let a = pi(&[("a", n(0.01)), ("b", n(0.0))], 1000).unwrap();
        let period = a.params.period_ns();
        let mut s = Script::new(Box::new(a));
        assert!((0..100).all(|_| s.arrive(1000) == Verdict::Admit));
        s.set_queue(500);
        s.advance(period); // p = 0.01 * 400 = 4 -> 1
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
        assert!((0..100).all(|_| s.arrive(1000) == Verdict::Drop));
        let e = pi(
            &[
                ("a", n(0.01)),
                ("b", n(0.0)),
                ("ecn", ParamValue::Bool(true)),
            ],
            1000,
        )
        .unwrap();
        let mut s = Script::new(Box::new(e));
        s.ecn_capable = true;
        s.set_queue(500);
        s.advance(period);
        assert_eq!(s.arrive(1000), Verdict::Mark);
        s.ecn_capable = false;
        assert_eq!(s.arrive(1000), Verdict::Drop);
        // p = 0.3 held: the signalled fraction is near 0.3.
        let h = pi(&[("a", n(0.001)), ("b", n(0.001))], 1000).unwrap();
        let mut s = Script::new(Box::new(h));
        s.set_queue(400);
        s.advance(period); // p = 0.001*300 + 0.001*100 = 0.4; then q held -> stays 0.4
        assert!((s.aqm.drop_prob().unwrap() - 0.4).abs() < 1e-12);
        let drops = (0..100_000)
            .filter(|_| s.arrive(1000) == Verdict::Drop)
            .count();
        assert!((drops as f64 / 1e5 - 0.4).abs() < 0.01, "{drops}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = pi(&[("a", n(-1e-5))], 1000).unwrap_err();
        assert_eq!(e.param, "a");
        assert!(e.msg.contains("[0, inf)"), "{e}");
        let e = pi(&[("b", n(-1e-5))], 1000).unwrap_err();
        assert_eq!(e.param, "b");
        let e = pi(&[("a", n(1e-5)), ("b", n(2e-5))], 1000).unwrap_err();
        assert_eq!(e.param, "b");
        assert!(e.msg.contains("integral"), "{e}");
        let e = pi(&[("q_ref", n(150.0))], 100).unwrap_err();
        assert_eq!(e.param, "q_ref");
        assert!(
            e.msg.contains("buffer") && e.msg.contains("[0, 100]"),
            "{e}"
        );
        let e = pi(&[("q_ref", n(-1.0))], 100).unwrap_err();
        assert_eq!(e.param, "q_ref");
        let e = pi(&[("sample_hz", n(0.0))], 1000).unwrap_err();
        assert_eq!(e.param, "sample_hz");
        let e = pi(&[("gain", n(1.0))], 1000).unwrap_err();
        assert_eq!(e.param, "gain");
    }
}
