//! LINDROP: deterministic drop of every dr-th packet, dr adapted multiplicatively on the sign of
//! the change of a linear f of the average queue (Brachman & Chrost, seed 000, s. 3, Algorithm 1).
//!
//! No random numbers are drawn: the same arrivals give the same verdicts whatever the seed.
//!
//! Reading of the paper, where it is silent or slips (see also `docs/algorithms/lindrop.md`):
//! - `CalculateEWMA(queue)`: the paper gives no weight; we use RED's EWMA and RED's w_q = 0.002
//!   (Floyd & Jacobson 1993, s. 4), updated on every arrival with the instantaneous queue.
//! - `f(avg, avg_min, avg_max)` (Fig. 1, lost from the text): the linear ramp 0 below avg_min,
//!   1 above avg_max, clipped, as RED's shape between its thresholds.
//! - The drop test `n_drops > dr` with `n_drops` reset to 1 drops the (floor(dr) + 1)-th packet,
//!   not the dr-th as the prose says: with dr_min = 5, every 6th packet. We keep the pseudo-code.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::red::ewma;
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// LINDROP's parameters (Algorithm 1; defaults from s. 3 and Table 2).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "dr_init", kind: K::Real, default: D::Num(500_000.0), help: "initial drop rate dr: every dr-th packet is dropped (s. 3)" },
    ParamSpec { name: "dr_max", kind: K::Real, default: D::Num(1_000_000.0), help: "largest dr, packets (s. 3)" },
    ParamSpec { name: "dr_min", kind: K::Real, default: D::Num(5.0), help: "smallest dr, packets, >= 1 (s. 3)" },
    ParamSpec { name: "avg_min", kind: K::Real, default: D::Num(0.0), help: "avg at which the linear f starts rising from 0, packets (s. 3)" },
    ParamSpec { name: "avg_max", kind: K::Real, default: D::Num(50.0), help: "avg at which f reaches 1, packets; below the buffer (Table 2)" },
    ParamSpec { name: "n_pu", kind: K::Real, default: D::Num(0.98), help: "decay factor of dr when f rose, in (0, 1) (s. 3)" },
    ParamSpec { name: "n_pd", kind: K::Real, default: D::Num(1.05), help: "growth factor of dr when f did not rise, > 1 (s. 3)" },
    ParamSpec { name: "w_q", kind: K::Real, default: D::Num(0.002), help: "EWMA weight of avg, in (0, 1]; not in the paper: RED's convention (Floyd-Jacobson 1993)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "lindrop",
    summary: "deterministic drop of every dr-th packet; dr adapts on the sign of the change of a linear f(avg)",
    source: "Brachman & Chrost, 'On the search of efficient AQM for large delay networks', s. 3, Algorithm 1",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Lindrop::new(LindropParams::from_map(m, l)?)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LindropParams {
    /// Initial drop rate, packets.
    pub dr_init: f64,
    /// Largest drop rate, packets.
    pub dr_max: f64,
    /// Smallest drop rate, packets.
    pub dr_min: f64,
    /// Start of the linear ramp of f, packets.
    pub avg_min: f64,
    /// End of the linear ramp of f, packets.
    pub avg_max: f64,
    /// Decay factor of dr (f rose).
    pub n_pu: f64,
    /// Growth factor of dr (f did not rise).
    pub n_pd: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// ECN marking.
    pub ecn: bool,
}

impl LindropParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let r = LindropParams {
            dr_init: p.num("dr_init")?,
            dr_max: p.num("dr_max")?,
            dr_min: p.num("dr_min")?,
            avg_min: p.num("avg_min")?,
            avg_max: p.num("avg_max")?,
            n_pu: p.num("n_pu")?,
            n_pd: p.num("n_pd")?,
            w_q: p.num("w_q")?,
            ecn: p.bool("ecn"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks the ranges of Algorithm 1's `Require` line and the order of the dr bounds.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("n_pu", self.n_pu, 0.0, true, 1.0, true)?;
        check_range("n_pd", self.n_pd, 1.0, true, f64::INFINITY, true)?;
        check_range("w_q", self.w_q, 0.0, true, 1.0, false)?;
        check_range("avg_min", self.avg_min, 0.0, false, f64::INFINITY, true)?;
        if self.avg_max <= self.avg_min {
            return Err(ParamError::new(
                "avg_max",
                format!(
                    "must be > avg_min (got avg_max {} <= avg_min {})",
                    self.avg_max, self.avg_min
                ),
            ));
        }
        let buf = l.buffer_pkts();
        if self.avg_max >= buf {
            return Err(ParamError::new(
                "avg_max",
                format!(
                    "must be below the link buffer of {buf} packets (got {})",
                    self.avg_max
                ),
            ));
        }
        check_range("dr_min", self.dr_min, 1.0, false, f64::INFINITY, true)?;
        if self.dr_init < self.dr_min || self.dr_init > self.dr_max {
            return Err(ParamError::new(
                "dr_init",
                format!(
                    "must be in [dr_min, dr_max] = [{}, {}] (got {})",
                    self.dr_min, self.dr_max, self.dr_init
                ),
            ));
        }
        Ok(())
    }
}

/// State that changes per packet.
#[derive(Clone, Debug, PartialEq)]
pub struct LindropState {
    /// EWMA of the queue, packets.
    pub avg: f64,
    /// f(avg) at the previous arrival (f_{i-1}).
    pub f_prev: f64,
    /// Current drop rate dr_i, packets.
    pub dr: f64,
    /// Packets counted since the last drop, starting at 1 (Algorithm 1's `n_drops`).
    pub n_drops: u64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LindropStats {
    /// Packets dropped by the every-dr-th rule.
    pub drops: u64,
    /// Packets marked instead (ECN).
    pub marks: u64,
}

/// The LINDROP algorithm.
#[derive(Debug, Clone)]
pub struct Lindrop {
    /// Configuration.
    pub params: LindropParams,
    /// Evolving state.
    pub state: LindropState,
    /// Counters.
    pub stats: LindropStats,
}

/// The linear dropping function of Fig. 1: 0 up to avg_min, rising linearly to 1 at avg_max,
/// 1 beyond (the figure is lost from the text; this is the shape its caption and s. 3 describe).
#[inline]
pub fn linear_f(avg: f64, avg_min: f64, avg_max: f64) -> f64 {
    ((avg - avg_min) / (avg_max - avg_min)).clamp(0.0, 1.0)
}

/// One step of Algorithm 1's drop-rate adaptation: dr * n_pu when f rose (df > 0), else dr * n_pd,
/// then clamped to [dr_min, dr_max].
#[inline]
pub fn adapt_dr(dr: f64, df: f64, n_pu: f64, n_pd: f64, dr_min: f64, dr_max: f64) -> f64 {
    let next = if df > 0.0 { dr * n_pu } else { dr * n_pd };
    next.clamp(dr_min, dr_max)
}

/// Algorithm 1's drop test: the packet is dropped when `n_drops > dr`. With `n_drops` counting
/// from 1 and reset to 1 after a drop, one packet in floor(dr) + 1 is dropped.
#[inline]
pub fn drop_due(n_drops: u64, dr: f64) -> bool {
    n_drops as f64 > dr
}

impl Lindrop {
    /// A LINDROP instance with validated parameters: dr = dr_init, avg = 0, f = 0, n_drops = 1.
    pub fn new(params: LindropParams) -> Self {
        let dr = params.dr_init;
        Lindrop {
            params,
            state: LindropState {
                avg: 0.0,
                f_prev: 0.0,
                dr,
                n_drops: 1,
            },
            stats: LindropStats::default(),
        }
    }
}

impl Aqm for Lindrop {
    fn name(&self) -> &'static str {
        "lindrop"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        let p = &self.params;
        let s = &mut self.state;
        s.avg = ewma(s.avg, q.len_pkts as f64, p.w_q);
        let f = linear_f(s.avg, p.avg_min, p.avg_max);
        s.dr = adapt_dr(s.dr, f - s.f_prev, p.n_pu, p.n_pd, p.dr_min, p.dr_max);
        s.f_prev = f;
        if drop_due(s.n_drops, s.dr) {
            s.n_drops = 1;
            signal_counted(p.ecn, pkt, &mut self.stats.marks, &mut self.stats.drops)
        } else {
            s.n_drops += 1;
            Verdict::Admit
        }
    }

    /// The long-run fraction of packets the current dr drops: 1 / (floor(dr) + 1).
    fn drop_prob(&self) -> Option<f64> {
        Some(1.0 / (self.state.dr.floor() + 1.0))
    }

    fn avg_queue(&self) -> Option<f64> {
        Some(self.state.avg)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("drops", self.stats.drops as f64),
            ("marks", self.stats.marks as f64),
            ("dr", self.state.dr),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    fn lindrop(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<Lindrop, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        };
        Ok(Lindrop::new(LindropParams::from_map(&m, &l)?))
    }

    #[test]
    fn linear_f_is_a_clipped_ramp() {
        assert_eq!(linear_f(-1.0, 0.0, 50.0), 0.0);
        assert_eq!(linear_f(0.0, 0.0, 50.0), 0.0);
        assert!((linear_f(12.5, 0.0, 50.0) - 0.25).abs() < 1e-15);
        assert!((linear_f(30.0, 10.0, 50.0) - 0.5).abs() < 1e-15);
        assert_eq!(linear_f(50.0, 0.0, 50.0), 1.0);
        assert_eq!(linear_f(80.0, 0.0, 50.0), 1.0);
    }

    #[test]
    fn dr_adapts_on_the_sign_of_df_and_stays_in_bounds() {
        assert!((adapt_dr(1000.0, 0.1, 0.98, 1.05, 5.0, 1e6) - 980.0).abs() < 1e-9);
        assert!((adapt_dr(1000.0, 0.0, 0.98, 1.05, 5.0, 1e6) - 1050.0).abs() < 1e-9);
        assert!((adapt_dr(1000.0, -0.1, 0.98, 1.05, 5.0, 1e6) - 1050.0).abs() < 1e-9);
        assert_eq!(adapt_dr(5.05, 1.0, 0.98, 1.05, 5.0, 1e6), 5.0);
        assert_eq!(adapt_dr(990_000.0, 0.0, 0.98, 1.05, 5.0, 1e6), 1e6);
    }

    #[test]
    fn drop_test_takes_the_floor_dr_plus_one_th_packet() {
        // dr = 5: n_drops 1..=5 pass, 6 > 5 drops. dr = 5.4: the same. dr = 1: every 2nd.
        assert!(!drop_due(5, 5.0) && drop_due(6, 5.0));
        assert!(!drop_due(5, 5.4) && drop_due(6, 5.4));
        assert!(!drop_due(1, 1.0) && drop_due(2, 1.0));
    }

    #[test]
    fn with_f_rising_dr_falls_to_dr_min_and_then_every_6th_packet_drops() {
        // Defaults (w_q 0.002, avg_max 50). The queue stays at 49: avg_i = 49 (1 - 0.998^i) rises
        // on every arrival and stays below avg_max, so f rises on every arrival and
        // dr_i = 500000 * 0.98^i. n_drops equals the packet number until the first drop, at the
        // first i with i > dr_i: 500000 * 0.98^358 = 361.3 > 358, 500000 * 0.98^359 = 354.1 < 359.
        // Later drops follow from the same rule with n_drops restarted at 1; dr reaches dr_min at
        // i = 570 (500000 * 0.98^570 = 4.987 < 5, clamped to 5), and from the drop at 572 on
        // every 6th packet is dropped (n_drops 1..5 pass, 6 > 5 drops).
        let mut s = Script::new(Box::new(lindrop(&[], 300).unwrap()));
        let mut drops = Vec::new();
        let mut dr = Vec::new();
        for i in 1..=1000u64 {
            s.set_queue(49);
            if s.arrive(1000) == Verdict::Drop {
                drops.push(i);
            }
            dr.push(s.aqm.stats()[2].1);
        }
        // dr after packet i is dr_init * 0.98^i (a product of the same f64 steps).
        let mut expect = 500_000.0f64;
        for (i, d) in dr.iter().enumerate().take(569) {
            expect *= 0.98;
            assert_eq!(*d, expect, "dr after packet {}", i + 1);
        }
        assert!((dr[568] - 5.0886).abs() < 1e-3, "{}", dr[568]);
        assert!(dr[569..].iter().all(|&d| d == 5.0));
        let head = [359, 436, 473, 496, 513, 526, 536, 545, 553, 560, 566, 572];
        assert_eq!(&drops[..head.len()], &head);
        let tail: Vec<u64> = (572..=1000).step_by(6).collect();
        assert_eq!(&drops[head.len() - 1..], &tail[..]);
        assert!((s.aqm.drop_prob().unwrap() - 1.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn a_steady_or_falling_f_raises_dr_to_dr_max() {
        // Empty queue: avg stays 0, f stays 0, df = 0, so dr grows by 1.05 per packet:
        // 500000 * 1.05^15 = 1.039e6 > 1e6, clamped at packet 15; no packet is dropped.
        let mut s = Script::new(Box::new(lindrop(&[], 300).unwrap()));
        for _ in 0..14 {
            assert_eq!(s.arrive(1000), Verdict::Admit);
        }
        assert!(s.aqm.stats()[2].1 < 1e6);
        s.arrive(1000);
        assert_eq!(s.aqm.stats()[2].1, 1e6);
    }

    #[test]
    fn no_random_numbers_two_seeds_give_identical_verdicts() {
        let run = |seed: u64| {
            let mut s = Script::new(Box::new(
                lindrop(&[("dr_init", ParamValue::Num(50.0))], 300).unwrap(),
            ));
            s.rng = crate::rng_from_seed(seed);
            let mut x: u64 = 12345;
            (0..5000)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    s.set_queue(((x >> 33) % 120) as u32);
                    s.arrive(1000)
                })
                .collect::<Vec<_>>()
        };
        let a = run(1);
        assert_eq!(a, run(2));
        assert!(a.contains(&Verdict::Drop));
    }

    #[test]
    fn ecn_marks_capable_packets_only() {
        // dr pinned at 5 (dr_min = dr_init = dr_max): the 6th packet is the congestion signal.
        let fixed = || {
            let pairs = [
                ("dr_init", ParamValue::Num(5.0)),
                ("dr_max", ParamValue::Num(5.0)),
                ("ecn", ParamValue::Bool(true)),
            ];
            Script::new(Box::new(lindrop(&pairs, 300).unwrap()))
        };
        let mut s = fixed();
        s.ecn_capable = true;
        let v: Vec<Verdict> = (0..6).map(|_| s.arrive(1000)).collect();
        assert_eq!(v[5], Verdict::Mark);
        assert!(v[..5].iter().all(|&x| x == Verdict::Admit));
        let mut s = fixed();
        let v: Vec<Verdict> = (0..6).map(|_| s.arrive(1000)).collect();
        assert_eq!(v[5], Verdict::Drop);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = lindrop(&[("n_pu", ParamValue::Num(1.0))], 300).unwrap_err();
        assert_eq!(e.param, "n_pu");
        assert!(e.msg.contains("(0, 1)"), "{e}");
        let e = lindrop(&[("n_pd", ParamValue::Num(1.0))], 300).unwrap_err();
        assert_eq!(e.param, "n_pd");
        let e = lindrop(&[("avg_min", ParamValue::Num(60.0))], 300).unwrap_err();
        assert_eq!(e.param, "avg_max");
        let e = lindrop(&[("avg_min", ParamValue::Num(-1.0))], 300).unwrap_err();
        assert_eq!(e.param, "avg_min");
        let e = lindrop(&[], 50).unwrap_err();
        assert_eq!(e.param, "avg_max");
        assert!(e.msg.contains("buffer"), "{e}");
        let e = lindrop(&[("dr_min", ParamValue::Num(0.5))], 300).unwrap_err();
        assert_eq!(e.param, "dr_min");
        let e = lindrop(&[("dr_init", ParamValue::Num(2e6))], 300).unwrap_err();
        assert_eq!(e.param, "dr_init");
        let e = lindrop(&[("dr_init", ParamValue::Num(3.0))], 300).unwrap_err();
        assert_eq!(e.param, "dr_init");
        let e = lindrop(&[("dr_max", ParamValue::Num(4.0))], 300).unwrap_err();
        assert_eq!(e.param, "dr_init");
        let e = lindrop(&[("w_q", ParamValue::Num(0.0))], 300).unwrap_err();
        assert_eq!(e.param, "w_q");
    }
}
