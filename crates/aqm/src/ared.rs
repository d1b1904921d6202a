//! ARED: Adaptive RED (S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//! Increasing the Robustness of RED's Active Queue Management", ICIR tech. report, 2001, s. 4-5, Fig. 5).
//!
//! Gentle RED whose max_p is adapted by AIMD every `interval` (0.5 s) to keep the average queue
//! inside the target band [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)];
//! the per-packet rules are RED's own ([`crate::red`]).

use crate::info::AqmInfo;
use crate::params::{
    check_range, check_thresholds, DefaultValue as D, LinkContext, ParamError, ParamKind as K,
    ParamMap, ParamSpec, Params,
};
use crate::red::{base_prob, ewma, idle_decay, uniformize};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// Lowest max_p (Floyd et al. 2001, s. 4: max_p stays within [0.01, 0.5]).
pub const MAX_P_BOTTOM: f64 = 0.01;
/// Highest max_p.
pub const MAX_P_TOP: f64 = 0.5;

/// ARED's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "min_th", kind: K::Real, default: D::Auto, help: "lower threshold of avg, packets; default max(5, target_delay C / 2), C in packets/s (2001 s. 5)" },
    ParamSpec { name: "max_th", kind: K::Real, default: D::Auto, help: "upper threshold of avg, packets; default 3 min_th (2001 s. 5); must not exceed the buffer" },
    ParamSpec { name: "target_delay", kind: K::Duration, default: D::Num(0.005), help: "queueing delay the automatic thresholds aim at, s (2001 s. 5: 5 ms)" },
    ParamSpec { name: "w_q", kind: K::Real, default: D::Auto, help: "EWMA weight, in (0, 1]; default 1 - exp(-1/C), C in packets/s (2001 s. 5: a 1 s time constant)" },
    ParamSpec { name: "max_p", kind: K::Real, default: D::Num(0.1), help: "initial max_p, in [0.01, 0.5]; adapted every interval (2001 Fig. 5)" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.5), help: "adaptation period, s (2001 Fig. 5: 0.5 s)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Num(0.01), help: "additive increase of max_p, used as min(alpha, max_p / 4) (2001 Fig. 5: 0.01)" },
    ParamSpec { name: "beta", kind: K::Real, default: D::Num(0.9), help: "multiplicative decrease of max_p, in (0, 1) (2001 Fig. 5: 0.9)" },
    ParamSpec { name: "gentle", kind: K::Bool, default: D::Bool(true), help: "gentle RED above max_th (Floyd 2000); on in Adaptive RED" },
    ParamSpec { name: "mean_pkt_size", kind: K::Size, default: D::Auto, help: "typical packet size for C and the idle decay, bytes; default: the link's mean packet size" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of early drops (RFC 3168); forced drops stay drops" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "ared",
    summary: "Adaptive RED: gentle RED whose max_p is tuned by AIMD to hold avg in a target band",
    source: "Floyd, Gummadi & Shenker, Adaptive RED, ICIR 2001, s. 4-5 and Fig. 5",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Ared::new(AredParams::from_map(m, l)?, l)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct AredParams {
    /// Lower threshold, packets.
    pub min_th: f64,
    /// Upper threshold, packets.
    pub max_th: f64,
    /// EWMA weight.
    pub w_q: f64,
    /// Initial max_p.
    pub max_p_init: f64,
    /// Adaptation period, s.
    pub interval: f64,
    /// Cap of the additive increase.
    pub alpha: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// Gentle variant.
    pub gentle: bool,
    /// Typical packet size, bytes.
    pub mean_pkt_size: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl AredParams {
    /// Reads and validates parameters for a link, deriving the automatic ones from it.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let mean_pkt_size = p
            .opt_num("mean_pkt_size")?
            .unwrap_or(l.mean_pkt_bytes as f64);
        check_range(
            "mean_pkt_size",
            mean_pkt_size,
            0.0,
            true,
            f64::INFINITY,
            true,
        )?;
        // C, the link capacity in packets per second (2001 s. 5).
        let c_pkts = l.rate_bps as f64 / (8.0 * mean_pkt_size);
        let target_delay = p.num("target_delay")?;
        check_range("target_delay", target_delay, 0.0, true, f64::INFINITY, true)?;
        let buf = l.buffer_pkts();
        // Automatic thresholds: target queue = target_delay C = (min_th + max_th) / 2 with
        // max_th = 3 min_th; capped so that max_th fits the buffer.
        let min_th = match p.opt_num("min_th")? {
            Some(x) => x,
            None => (target_delay * c_pkts / 2.0).max(5.0).min(buf / 3.0),
        };
        let max_th = match p.opt_num("max_th")? {
            Some(x) => x,
            None => (3.0 * min_th).min(buf),
        };
        let w_q = match p.opt_num("w_q")? {
            Some(x) => x,
            None => auto_w_q(c_pkts),
        };
        let r = AredParams {
            min_th,
            max_th,
            w_q,
            max_p_init: p.num("max_p")?,
            interval: p.num("interval")?,
            alpha: p.num("alpha")?,
            beta: p.num("beta")?,
            gentle: p.bool("gentle"),
            mean_pkt_size,
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("w_q", self.w_q, 0.0, true, 1.0, false)?;
        check_range(
            "max_p",
            self.max_p_init,
            MAX_P_BOTTOM,
            false,
            MAX_P_TOP,
            false,
        )?;
        check_range("interval", self.interval, 1e-9, false, f64::INFINITY, true)?;
        check_range("alpha", self.alpha, 0.0, false, MAX_P_TOP, false)?;
        check_range("beta", self.beta, 0.0, true, 1.0, true)?;
        check_thresholds(self.min_th, self.max_th, l)?;
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

/// The automatic EWMA weight 1 - exp(-1/C) for C packets per second (Floyd et al. 2001, s. 5:
/// the average then has a time constant of one second); 1 for links under one packet per second.
pub fn auto_w_q(c_pkts: f64) -> f64 {
    if c_pkts > 1.0 {
        1.0 - (-1.0 / c_pkts).exp()
    } else {
        1.0
    }
}

/// State that changes per packet or per adaptation.
#[derive(Clone, Debug, PartialEq)]
pub struct AredState {
    /// Average queue, packets.
    pub avg: f64,
    /// Packets since the last early drop/mark while avg was in the early region (-1 outside).
    pub count: i64,
    /// The base probability pb at the last arrival.
    pub last_pb: f64,
    /// The current, adapted max_p.
    pub max_p: f64,
    /// Time of the next adaptation, ns.
    pub next_adapt: Time,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AredStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// Early marks (ECN).
    pub marks: u64,
    /// Forced drops (avg at or above 2 max_th in gentle mode, max_th otherwise).
    pub forced_drops: u64,
    /// Adaptations that raised max_p.
    pub increases: u64,
    /// Adaptations that lowered max_p.
    pub decreases: u64,
}

/// The Adaptive RED algorithm.
#[derive(Debug, Clone)]
pub struct Ared {
    /// Configuration.
    pub params: AredParams,
    /// Evolving state.
    pub state: AredState,
    /// Counters.
    pub stats: AredStats,
    pkt_time_ns: f64,
    interval_ns: Time,
}

/// One adaptation of max_p (Floyd et al. 2001, Fig. 5): above the target band it rises by
/// min(alpha, max_p / 4), below it it is multiplied by beta, inside it is left alone. The result
/// stays within [0.01, 0.5]: the paper tests the bound before the step, which could overshoot it
/// by one step (to 0.51 or 0.009); we clamp to the range the paper states.
#[inline]
pub fn adapt_max_p(avg: f64, max_p: f64, min_th: f64, max_th: f64, alpha: f64, beta: f64) -> f64 {
    let (lo, hi) = target_band(min_th, max_th);
    if avg > hi && max_p < MAX_P_TOP {
        (max_p + alpha.min(max_p / 4.0)).min(MAX_P_TOP)
    } else if avg < lo && max_p > MAX_P_BOTTOM {
        (max_p * beta).max(MAX_P_BOTTOM)
    } else {
        max_p
    }
}

/// The target band of avg: [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)].
#[inline]
pub fn target_band(min_th: f64, max_th: f64) -> (f64, f64) {
    let d = max_th - min_th;
    (min_th + 0.4 * d, min_th + 0.6 * d)
}

impl Ared {
    /// An ARED instance with validated parameters for a link; the first adaptation is one interval
    /// after time 0.
    pub fn new(params: AredParams, l: &LinkContext) -> Self {
        let pkt_time_ns = params.mean_pkt_size * 8.0 * NS_PER_SEC as f64 / l.rate_bps.max(1) as f64;
        let interval_ns = ((params.interval * NS_PER_SEC as f64).round() as Time).max(1);
        Ared {
            state: AredState {
                avg: 0.0,
                count: -1,
                last_pb: 0.0,
                max_p: params.max_p_init,
                next_adapt: interval_ns,
            },
            params,
            stats: AredStats::default(),
            pkt_time_ns,
            interval_ns,
        }
    }

    /// Updates the average for an arrival seeing queue `q` at `now` (RED, 1993 Fig. 2).
    fn update_avg(&mut self, q: &QueueView, now: Time) {
        let w = self.params.w_q;
        self.state.avg = match q.idle_since {
            Some(t0) if q.len_pkts == 0 => {
                let m = now.saturating_sub(t0) as f64 / self.pkt_time_ns;
                idle_decay(self.state.avg, w, m)
            }
            _ => ewma(self.state.avg, q.len_pkts as f64, w),
        };
    }
}

impl Aqm for Ared {
    fn name(&self) -> &'static str {
        "ared"
    }

    fn enqueue(&mut self, pkt: &PacketMeta, q: &QueueView, now: Time, rng: &mut AqmRng) -> Verdict {
        self.update_avg(q, now);
        let p = &self.params;
        match base_prob(
            self.state.avg,
            p.min_th,
            p.max_th,
            self.state.max_p,
            p.gentle,
        ) {
            Some(0.0) => {
                self.state.count = -1;
                self.state.last_pb = 0.0;
                Verdict::Admit
            }
            Some(pb) => {
                self.state.last_pb = pb;
                self.state.count += 1;
                if rng.random::<f64>() < uniformize(pb, self.state.count) {
                    self.state.count = 0;
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
            None => {
                self.state.last_pb = 1.0;
                self.state.count = 0;
                self.stats.forced_drops += 1;
                Verdict::Drop
            }
        }
    }

    fn next_update(&self) -> Option<Time> {
        Some(self.state.next_adapt)
    }

    fn update(&mut self, _q: &QueueView, now: Time) {
        let p = &self.params;
        let s = &mut self.state;
        let new = adapt_max_p(s.avg, s.max_p, p.min_th, p.max_th, p.alpha, p.beta);
        if new > s.max_p {
            self.stats.increases += 1;
        } else if new < s.max_p {
            self.stats.decreases += 1;
        }
        s.max_p = new;
        s.next_adapt += self.interval_ns;
        if s.next_adapt <= now {
            s.next_adapt = now + self.interval_ns;
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.last_pb)
    }

    fn avg_queue(&self) -> Option<f64> {
        Some(self.state.avg)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("forced_drops", self.stats.forced_drops as f64),
            ("max_p", self.state.max_p),
            ("max_p_increases", self.stats.increases as f64),
            ("max_p_decreases", self.stats.decreases as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    fn link(rate_bps: u64, buffer: u32) -> LinkContext {
        LinkContext {
            rate_bps,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        }
    }

    fn params(pairs: &[(&str, ParamValue)], l: &LinkContext) -> Result<AredParams, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        AredParams::from_map(&m, l)
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    /// Seed 000's ARED (min_th 50, max_th 150, buffer 300) with w_q = 1, so avg = the queue seen.
    fn seed000(extra: &[(&str, ParamValue)]) -> Script {
        let l = link(10_000_000, 300);
        let mut pairs = vec![("min_th", n(50.0)), ("max_th", n(150.0)), ("w_q", n(1.0))];
        pairs.extend_from_slice(extra);
        Script::new(Box::new(Ared::new(params(&pairs, &l).unwrap(), &l)))
    }

    fn max_p(s: &Script) -> f64 {
        s.aqm.stats().iter().find(|(k, _)| *k == "max_p").unwrap().1
    }

    /// The queue is `q` for one adaptation interval (one arrival sets avg), then max_p adapts.
    fn interval(s: &mut Script, q: u32) -> f64 {
        s.set_queue(q);
        s.arrive(1000);
        s.advance(500_000_000);
        max_p(s)
    }

    #[test]
    fn max_p_adaptation_steps_by_hand() {
        // Band [50 + 0.4*100, 50 + 0.6*100] = [90, 110].
        assert_eq!(target_band(50.0, 150.0), (90.0, 110.0));
        let mut s = seed000(&[]);
        // avg 120 > 110: +min(0.01, 0.1/4) = +0.01 -> 0.11, then 0.12.
        assert!((interval(&mut s, 120) - 0.11).abs() < 1e-12);
        assert!((interval(&mut s, 120) - 0.12).abs() < 1e-12);
        // avg 100 in the band: unchanged.
        assert!((interval(&mut s, 100) - 0.12).abs() < 1e-12);
        // avg 80 < 90: * 0.9 -> 0.108, then 0.0972.
        assert!((interval(&mut s, 80) - 0.108).abs() < 1e-12);
        assert!((interval(&mut s, 80) - 0.0972).abs() < 1e-12);
        assert_eq!(s.aqm.next_update(), Some(3_000_000_000));
        let st = s.aqm.stats();
        assert_eq!(
            (st[4], st[5]),
            (("max_p_increases", 2.0), ("max_p_decreases", 2.0))
        );
    }

    #[test]
    fn small_max_p_rises_by_a_quarter_and_the_range_is_kept() {
        // max_p 0.02: alpha = min(0.01, 0.005) -> 0.025, then + 0.00625 -> 0.03125.
        assert!((adapt_max_p(120.0, 0.02, 50.0, 150.0, 0.01, 0.9) - 0.025).abs() < 1e-15);
        assert!((adapt_max_p(120.0, 0.025, 50.0, 150.0, 0.01, 0.9) - 0.03125).abs() < 1e-15);
        // 0.495 + 0.01 = 0.505 -> 0.5; at 0.5 no further increase.
        assert_eq!(adapt_max_p(120.0, 0.495, 50.0, 150.0, 0.01, 0.9), 0.5);
        assert_eq!(adapt_max_p(120.0, 0.5, 50.0, 150.0, 0.01, 0.9), 0.5);
        // 0.011 * 0.9 = 0.0099 -> 0.01; at 0.01 no further decrease.
        assert_eq!(adapt_max_p(10.0, 0.011, 50.0, 150.0, 0.01, 0.9), 0.01);
        assert_eq!(adapt_max_p(10.0, 0.01, 50.0, 150.0, 0.01, 0.9), 0.01);
        // Seed 001's alpha = 0: max_p never rises.
        assert_eq!(adapt_max_p(120.0, 0.1, 50.0, 150.0, 0.0, 0.9), 0.1);
        // Under sustained overload max_p climbs to 0.5 and stays.
        let mut s = seed000(&[]);
        for _ in 0..100 {
            interval(&mut s, 140);
        }
        assert_eq!(max_p(&s), 0.5);
    }

    #[test]
    fn drop_law_uses_the_adapted_max_p_and_is_gentle() {
        let mut s = seed000(&[]);
        for _ in 0..4 {
            interval(&mut s, 120); // max_p 0.1 -> 0.14
        }
        // avg 100: pb = 0.14 * 50 / 100 = 0.07.
        s.set_queue(100);
        s.arrive(1000);
        assert!((s.aqm.drop_prob().unwrap() - 0.07).abs() < 1e-12);
        // Gentle: avg 225 = 1.5 max_th: pb = 0.14 + 0.86 * 75 / 150 = 0.57; from 300 on, forced.
        s.set_queue(225);
        s.arrive(1000);
        assert!((s.aqm.drop_prob().unwrap() - 0.57).abs() < 1e-12);
        s.set_queue(300);
        assert_eq!(s.arrive(1000), Verdict::Drop);
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
    }

    #[test]
    fn automatic_parameters_follow_the_link() {
        // 10 Mb/s, 1000 B: C = 1250 packets/s. w_q = 1 - exp(-1/1250) = 7.9968009e-4.
        // min_th = max(5, 0.005 * 1250 / 2 = 3.125) = 5, max_th = 15.
        let p = params(&[], &link(10_000_000, 300)).unwrap();
        assert!((p.w_q - 7.996_800_853e-4).abs() < 1e-13, "{}", p.w_q);
        assert_eq!((p.min_th, p.max_th), (5.0, 15.0));
        // 100 Mb/s: C = 12500: min_th = 0.005 * 12500 / 2 = 31.25, max_th = 93.75.
        let p = params(&[], &link(100_000_000, 300)).unwrap();
        assert!((p.min_th - 31.25).abs() < 1e-12 && (p.max_th - 93.75).abs() < 1e-12);
        // A 10 Gb/s link with a 300-packet buffer: the thresholds are capped to fit: 100, 300.
        let p = params(&[], &link(10_000_000_000, 300)).unwrap();
        assert_eq!((p.min_th, p.max_th), (100.0, 300.0));
        // A given min_th sets max_th to 3 min_th.
        let p = params(&[("min_th", n(20.0))], &link(10_000_000, 300)).unwrap();
        assert_eq!(p.max_th, 60.0);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // w_q 0.5 at 10 Mb/s, 1000 B (0.8 ms per packet): avg 4 -> 3 idle packet times -> 0.5.
        let mut s = seed000(&[("w_q", n(0.5))]);
        s.set_queue(8);
        s.arrive(1000);
        assert_eq!(s.aqm.avg_queue(), Some(4.0));
        s.set_idle(2_400_000);
        s.arrive(1000);
        assert!((s.aqm.avg_queue().unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn ecn_marks_early_but_forced_drops_stay_drops() {
        let mut s = seed000(&[("ecn", ParamValue::Bool(true)), ("max_p", n(0.5))]);
        s.ecn_capable = true;
        let v: Vec<Verdict> = (0..50)
            .map(|_| {
                s.set_queue(140);
                s.arrive(1000)
            })
            .collect();
        assert!(v.contains(&Verdict::Mark) && !v.contains(&Verdict::Drop));
        s.set_queue(300);
        assert_eq!(s.arrive(1000), Verdict::Drop);
    }

    #[test]
    fn bad_parameters_are_named() {
        let l = link(10_000_000, 300);
        for (name, bad) in [
            ("max_p", 0.6),
            ("max_p", 0.001),
            ("beta", 1.0),
            ("beta", 0.0),
            ("alpha", -0.01),
            ("w_q", 0.0),
            ("interval", 0.0),
            ("target_delay", 0.0),
        ] {
            let e = params(&[(name, n(bad))], &l).unwrap_err();
            assert_eq!(e.param, name, "{name} = {bad}: {e}");
        }
        let e = params(&[("max_p", n(0.6))], &l).unwrap_err();
        assert!(e.msg.contains("[0.01, 0.5]"), "{e}");
        let e = params(&[("min_th", n(50.0)), ("max_th", n(40.0))], &l).unwrap_err();
        assert_eq!(e.param, "min_th");
        let e = params(&[("min_th", n(50.0)), ("max_th", n(400.0))], &l).unwrap_err();
        assert_eq!(e.param, "max_th");
        assert!(e.msg.contains("buffer"), "{e}");
    }
}
