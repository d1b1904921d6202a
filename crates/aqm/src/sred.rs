//! SRED: Stabilized RED (T. J. Ott, T. V. Lakshman, L. H. Wong, "SRED: Stabilized RED", IEEE
//! INFOCOM 1999, s. 2-3): a zombie list of recently seen flows estimates the number of active
//! flows from the hit frequency P(t); the drop probability is a step function of the buffer
//! occupancy scaled by min(1, 1/(256 P(t))^2), and in full SRED by (1 + Hit(t)/P(t)).

use crate::info::AqmInfo;
use crate::params::{
    check_range, Buffer, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap,
    ParamSpec, Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};
use rand::Rng;

/// SRED's parameters.
#[rustfmt::skip]
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "zombies", kind: K::Int, default: D::Num(1000.0), help: "M, entries of the zombie list (Ott et al. 1999, s. 2: 1000)" },
    ParamSpec { name: "p_overwrite", kind: K::Real, default: D::Num(0.25), help: "probability that a miss overwrites the compared zombie (s. 2: 0.25)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Auto, help: "EWMA weight of the hit frequency P(t); default: 1/M (as seed 003 configures SRED)" },
    ParamSpec { name: "p_max", kind: K::Real, default: D::Num(0.15), help: "p_sred from a third of the buffer up (s. 3: 0.15); a quarter of it from a sixth" },
    ParamSpec { name: "full", kind: K::Bool, default: D::Bool(true), help: "full SRED: scale by (1 + Hit/P) so flows that hit often are hit harder (s. 3); false: simple SRED" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "sred",
    summary: "Stabilized RED: a zombie-list flow count scales a buffer-occupancy step function",
    source: "Ott, Lakshman, Wong, IEEE INFOCOM 1999: s. 2 zombie list and P(t), s. 3 p_zap",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Sred::new(SredParams::from_map(m, l)?)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct SredParams {
    /// M, zombie list size.
    pub zombies: usize,
    /// Overwrite probability on a miss.
    pub p_overwrite: f64,
    /// EWMA weight of P(t).
    pub alpha: f64,
    /// p_max.
    pub p_max: f64,
    /// Full SRED.
    pub full: bool,
    /// ECN marking.
    pub ecn: bool,
    /// The buffer B the occupancy is measured against (the link's, in its unit).
    pub buffer: Buffer,
}

impl SredParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let zombies = p.num("zombies")?;
        check_range("zombies", zombies, 1.0, false, 10_000_000.0, false)?;
        let zombies = zombies as usize;
        let r = SredParams {
            zombies,
            p_overwrite: p.num("p_overwrite")?,
            alpha: p.opt_num("alpha")?.unwrap_or(1.0 / zombies as f64),
            p_max: p.num("p_max")?,
            full: p.bool("full"),
            ecn: p.bool("ecn"),
            buffer: l.buffer,
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range(
            "zombies",
            self.zombies as f64,
            1.0,
            false,
            10_000_000.0,
            false,
        )?;
        check_range("p_overwrite", self.p_overwrite, 0.0, false, 1.0, false)?;
        check_range("alpha", self.alpha, 0.0, true, 1.0, false)?;
        check_range("p_max", self.p_max, 0.0, true, 1.0, false)?;
        let b = match self.buffer {
            Buffer::Packets(n) => n as u64,
            Buffer::Bytes(b) => b,
        };
        if b == 0 {
            return Err(ParamError::new(
                "buffer",
                "SRED needs a buffer of at least 1 packet or byte",
            ));
        }
        Ok(())
    }
}

/// The zombie list: the flows of M recent arrivals, allocated once (s. 2).
#[derive(Clone, Debug, PartialEq)]
pub struct ZombieList {
    flows: Box<[u32]>,
    filled: usize,
}

impl ZombieList {
    /// An empty list of `m` entries.
    pub fn new(m: usize) -> Self {
        ZombieList {
            flows: vec![0; m.max(1)].into_boxed_slice(),
            filled: 0,
        }
    }

    /// Entries in use.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// True before the first arrival.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Capacity M.
    pub fn capacity(&self) -> usize {
        self.flows.len()
    }

    /// An arrival of `flow` (s. 2): while the list is filling, the flow is added and there is no
    /// comparison (`None`). Once full, it is compared with a zombie drawn at random: `Some(true)`
    /// on a hit; on a miss the zombie is overwritten by `flow` with probability `p_overwrite`.
    pub fn observe(&mut self, flow: u32, p_overwrite: f64, rng: &mut AqmRng) -> Option<bool> {
        if self.filled < self.flows.len() {
            self.flows[self.filled] = flow;
            self.filled += 1;
            return None;
        }
        let i = rng.random_range(0..self.flows.len());
        if self.flows[i] == flow {
            return Some(true);
        }
        if rng.random::<f64>() < p_overwrite {
            self.flows[i] = flow;
        }
        Some(false)
    }
}

/// State.
#[derive(Clone, Debug, PartialEq)]
pub struct SredState {
    /// The zombie list.
    pub zombies: ZombieList,
    /// P(t), the estimated hit frequency (about 1 / number of active flows).
    pub p_hit: f64,
    /// p_zap of the last arrival.
    pub last_p_zap: f64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SredStats {
    /// Hits (arrival matched the compared zombie).
    pub hits: u64,
    /// Comparisons made.
    pub comparisons: u64,
    /// Early drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
}

/// P(t) = (1 - alpha) P(t-1) + alpha Hit(t) (s. 2).
#[inline]
pub fn hit_estimate(p_hit: f64, hit: bool, alpha: f64) -> f64 {
    (1.0 - alpha) * p_hit + if hit { alpha } else { 0.0 }
}

/// p_sred(q) for occupancy `q` of a buffer `b` (s. 3): p_max from B/3 on, p_max / 4 from B/6 to
/// B/3, 0 below B/6.
#[inline]
pub fn p_sred(q: f64, b: f64, p_max: f64) -> f64 {
    if 3.0 * q >= b {
        p_max
    } else if 6.0 * q >= b {
        p_max / 4.0
    } else {
        0.0
    }
}

/// p_zap (s. 3): p_sred min(1, 1 / (256 P)^2), times (1 + Hit / P) in full SRED; at most 1.
/// With no estimate yet (P = 0) the scale is 1 and a miss adds nothing.
#[inline]
pub fn p_zap(p_sred: f64, p_hit: f64, hit: bool, full: bool) -> f64 {
    let x = 256.0 * p_hit;
    let scale = if x <= 1.0 { 1.0 } else { 1.0 / (x * x) };
    let mut p = p_sred * scale;
    if full && hit && p_hit > 0.0 {
        p *= 1.0 + 1.0 / p_hit;
    }
    p.min(1.0)
}

/// The SRED algorithm.
#[derive(Debug, Clone)]
pub struct Sred {
    /// Configuration.
    pub params: SredParams,
    /// Evolving state.
    pub state: SredState,
    /// Counters.
    pub stats: SredStats,
}

impl Sred {
    /// A SRED instance with validated parameters; the zombie list is allocated here, once.
    pub fn new(params: SredParams) -> Self {
        let state = SredState {
            zombies: ZombieList::new(params.zombies),
            p_hit: 0.0,
            last_p_zap: 0.0,
        };
        Sred {
            params,
            state,
            stats: SredStats::default(),
        }
    }

    /// Occupancy and buffer size in the buffer's unit.
    fn occupancy(&self, q: &QueueView) -> (f64, f64) {
        match self.params.buffer {
            Buffer::Packets(n) => (q.len_pkts as f64, n as f64),
            Buffer::Bytes(b) => (q.len_bytes as f64, b as f64),
        }
    }
}

impl Aqm for Sred {
    fn name(&self) -> &'static str {
        "sred"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let p = &self.params;
        let s = &mut self.state;
        let hit = match s.zombies.observe(pkt.flow, p.p_overwrite, rng) {
            Some(h) => {
                s.p_hit = hit_estimate(s.p_hit, h, p.alpha);
                self.stats.comparisons += 1;
                self.stats.hits += h as u64;
                h
            }
            None => false,
        };
        let (occ, b) = self.occupancy(q);
        let p = &self.params;
        let s = &mut self.state;
        let ps = p_sred(occ, b, p.p_max);
        s.last_p_zap = if ps > 0.0 {
            p_zap(ps, s.p_hit, hit, p.full)
        } else {
            0.0
        };
        if s.last_p_zap > 0.0 && rng.random::<f64>() < s.last_p_zap {
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
        Some(self.state.last_p_zap)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let p = self.state.p_hit;
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("hits", self.stats.hits as f64),
            ("comparisons", self.stats.comparisons as f64),
            ("p_hit", p),
            ("est_flows", if p > 0.0 { 1.0 / p } else { 0.0 }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::testing::Script;

    fn sred(pairs: &[(&str, ParamValue)], buffer: Buffer) -> Result<Sred, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer,
            mean_pkt_bytes: 1000,
        };
        Ok(Sred::new(SredParams::from_map(&m, &l)?))
    }

    #[test]
    fn p_sred_is_the_papers_step_function() {
        // B = 300: 0 below 50, p_max / 4 = 0.0375 in [50, 100), p_max = 0.15 from 100.
        for q in 0..=400 {
            let expect = if q < 50 {
                0.0
            } else if q < 100 {
                0.0375
            } else {
                0.15
            };
            assert_eq!(p_sred(q as f64, 300.0, 0.15), expect, "q {q}");
        }
    }

    #[test]
    fn p_zap_by_hand() {
        // P = 0.01 (about 100 flows): 1 / 2.56^2 = 0.152587890625; p_sred 0.15 ->
        // simple 0.02288818359375; full with a hit x (1 + 100) -> above 1 -> 1.
        assert!((p_zap(0.15, 0.01, false, true) - 0.02288818359375).abs() < 1e-15);
        assert!((p_zap(0.15, 0.01, false, false) - 0.02288818359375).abs() < 1e-15);
        assert_eq!(p_zap(0.15, 0.01, true, true), 1.0);
        // P = 0.001 (1000 flows): 256 P < 1, no scaling: 0.15; with a hit in simple SRED, same.
        assert_eq!(p_zap(0.15, 0.001, false, true), 0.15);
        assert_eq!(p_zap(0.15, 0.001, true, false), 0.15);
        // P = 0.1, hit, full: 0.15 / 25.6^2 x 11 = 0.0025177001953125.
        assert!((p_zap(0.15, 0.1, true, true) - 0.15 / 655.36 * 11.0).abs() < 1e-15);
        // No estimate yet: scale 1, no hit term.
        assert_eq!(p_zap(0.0375, 0.0, false, true), 0.0375);
    }

    #[test]
    fn hit_estimate_is_an_ewma() {
        // alpha 0.5: 0 -> hit 0.5 -> hit 0.75 -> miss 0.375.
        let p = hit_estimate(0.0, true, 0.5);
        let p = hit_estimate(p, true, 0.5);
        assert_eq!(p, 0.75);
        assert_eq!(hit_estimate(p, false, 0.5), 0.375);
    }

    #[test]
    fn zombie_list_fills_then_compares_without_growing() {
        let mut z = ZombieList::new(4);
        let mut rng = crate::rng_from_seed(1);
        for f in 0..4 {
            assert_eq!(z.observe(f, 0.25, &mut rng), None);
        }
        assert_eq!(z.len(), 4);
        // One flow only from now on: it takes the list over and every comparison hits.
        let mut hits = 0;
        for _ in 0..10_000 {
            hits += z.observe(9, 0.25, &mut rng).unwrap() as u32;
        }
        assert!(hits > 9_900, "{hits}");
        assert_eq!((z.len(), z.capacity()), (4, 4));
    }

    #[test]
    fn hit_frequency_estimates_one_over_the_number_of_flows() {
        // 20 flows arriving in random order: P(t) near 1/20, est_flows near 20.
        let mut s = Script::new(Box::new(sred(&[], Buffer::Packets(300)).unwrap()));
        let mut rng = crate::rng_from_seed(11);
        s.set_queue(10);
        for _ in 0..200_000 {
            s.flow = rng.random_range(0..20);
            s.arrive(1000);
        }
        let st = s.aqm.stats();
        let p = st.iter().find(|x| x.0 == "p_hit").unwrap().1;
        assert!((p - 0.05).abs() < 0.01, "{p}");
    }

    #[test]
    fn drops_follow_occupancy_and_the_flow_estimate() {
        // One flow: P -> 1, scale 1/256^2, full SRED x 2 on hits: p_zap = 0.15 x 2 / 65536.
        let mut s = Script::new(Box::new(sred(&[], Buffer::Packets(300)).unwrap()));
        s.set_queue(200);
        for _ in 0..20_000 {
            s.arrive(1000);
        }
        let pz = s.aqm.drop_prob().unwrap();
        let p = s.aqm.stats().iter().find(|x| x.0 == "p_hit").unwrap().1;
        let scale = 1.0 / (256.0 * p * 256.0 * p);
        assert!(
            (pz - 0.15 * scale * (1.0 + 1.0 / p)).abs() < 1e-12,
            "{pz} {p}"
        );
        // Below B/6 = 50 packets: never a drop.
        s.set_queue(49);
        assert!((0..10_000).all(|_| s.arrive(1000) == Verdict::Admit));
        assert_eq!(s.aqm.drop_prob(), Some(0.0));
    }

    #[test]
    fn byte_buffers_measure_occupancy_in_bytes() {
        let mut s = Script::new(Box::new(
            sred(&[("full", ParamValue::Bool(false))], Buffer::Bytes(60_000)).unwrap(),
        ));
        // 10 packets of 1000 B = 10 kB >= B/6 = 10 kB: p_sred = p_max / 4, no estimate yet.
        s.set_queue(10);
        s.arrive(1000);
        assert_eq!(s.aqm.drop_prob(), Some(0.0375));
    }

    #[test]
    fn ecn_capable_packets_are_marked() {
        let mut s = Script::new(Box::new(
            sred(
                &[
                    ("ecn", ParamValue::Bool(true)),
                    ("p_max", ParamValue::Num(1.0)),
                ],
                Buffer::Packets(30),
            )
            .unwrap(),
        ));
        s.ecn_capable = true;
        s.set_queue(20);
        let v: Vec<Verdict> = (0..100).map(|_| s.arrive(1000)).collect();
        assert!(v.contains(&Verdict::Mark) && !v.contains(&Verdict::Drop));
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = sred(&[("zombies", ParamValue::Num(0.0))], Buffer::Packets(100)).unwrap_err();
        assert_eq!(e.param, "zombies");
        let e = sred(
            &[("p_overwrite", ParamValue::Num(1.5))],
            Buffer::Packets(100),
        )
        .unwrap_err();
        assert_eq!(e.param, "p_overwrite");
        let e = sred(&[("alpha", ParamValue::Num(0.0))], Buffer::Packets(100)).unwrap_err();
        assert_eq!(e.param, "alpha");
        assert!(e.msg.contains("(0, 1]"), "{e}");
        let e = sred(&[("p_max", ParamValue::Num(-0.1))], Buffer::Packets(100)).unwrap_err();
        assert_eq!(e.param, "p_max");
        let e = sred(&[], Buffer::Packets(0)).unwrap_err();
        assert_eq!(e.param, "buffer");
        let e = sred(&[("zombies", ParamValue::Num(2.5))], Buffer::Packets(100)).unwrap_err();
        assert_eq!(e.param, "zombies");
    }
}
