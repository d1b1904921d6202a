//! BLUE (W. Feng, K. G. Shin, D. D. Kandlur, D. Saha, "The BLUE Active Queue Management
//! Algorithms", IEEE/ACM ToN 10(4), 2002, s. III and Fig. 3): one drop/mark probability p_m,
//! raised by d1 on buffer overflow and lowered by d2 when the link goes idle, at most once per
//! freeze_time.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// BLUE's parameters.
#[rustfmt::skip]
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "d1", kind: K::Real, default: D::Num(0.02), help: "increment of p_m on a buffer overflow (Feng et al. 2002, s. III)" },
    ParamSpec { name: "d2", kind: K::Real, default: D::Num(0.002), help: "decrement of p_m when the link goes idle (s. III); an order of magnitude below d1" },
    ParamSpec { name: "freeze_time", kind: K::Duration, default: D::Num(0.1), help: "minimum time between two changes of p_m, s (s. III)" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168); overflow stays a drop" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "blue",
    summary: "BLUE: drop/mark probability driven by buffer overflow and link idle events",
    source: "Feng, Shin, Kandlur, Saha, IEEE/ACM ToN 10(4) 2002, s. III, Fig. 3",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Blue::new(BlueParams::from_map(m, l)?)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct BlueParams {
    /// Increment of p_m on overflow.
    pub d1: f64,
    /// Decrement of p_m on link idle.
    pub d2: f64,
    /// freeze_time, ns.
    pub freeze_time_ns: Time,
    /// ECN marking.
    pub ecn: bool,
}

impl BlueParams {
    /// Reads and validates parameters.
    pub fn from_map(m: &ParamMap, _l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let freeze = p.num("freeze_time")?;
        check_range("freeze_time", freeze, 0.0, false, 3600.0, false)?;
        let r = BlueParams {
            d1: p.num("d1")?,
            d2: p.num("d2")?,
            freeze_time_ns: (freeze * NS_PER_SEC as f64).round() as Time,
            ecn: p.bool("ecn"),
        };
        r.validate()?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("d1", self.d1, 0.0, true, 1.0, false)?;
        check_range("d2", self.d2, 0.0, true, 1.0, false)?;
        Ok(())
    }
}

/// State.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlueState {
    /// p_m, the drop/mark probability.
    pub p_m: f64,
    /// Time of the last change of p_m; `None` before the first.
    pub last_update: Option<Time>,
    /// Start of the last idle period already accounted for (each idle period is one event).
    pub last_idle_seen: Option<Time>,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlueStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Overflow events.
    pub overflows: u64,
    /// Increments of p_m.
    pub increments: u64,
    /// Decrements of p_m.
    pub decrements: u64,
}

/// Whether p_m may change at `t`: more than freeze_time since the last change (Fig. 3:
/// `(now - last_update) > freeze_time`); always before the first change.
#[inline]
pub fn freeze_elapsed(last_update: Option<Time>, t: Time, freeze_time_ns: Time) -> bool {
    match last_update {
        None => true,
        Some(l) => t.saturating_sub(l) > freeze_time_ns,
    }
}

/// p_m moved by `delta` and kept in [0, 1] (Fig. 3: p_m += d1 on loss, p_m -= d2 on idle).
#[inline]
pub fn step_prob(p_m: f64, delta: f64) -> f64 {
    (p_m + delta).clamp(0.0, 1.0)
}

/// The BLUE algorithm.
#[derive(Debug, Clone)]
pub struct Blue {
    /// Configuration.
    pub params: BlueParams,
    /// Evolving state.
    pub state: BlueState,
    /// Counters.
    pub stats: BlueStats,
}

impl Blue {
    /// A BLUE instance with validated parameters.
    pub fn new(params: BlueParams) -> Self {
        Blue {
            params,
            state: BlueState::default(),
            stats: BlueStats::default(),
        }
    }

    /// The link went idle at `t`: lower p_m by d2 unless frozen.
    pub fn on_link_idle(&mut self, t: Time) {
        if freeze_elapsed(self.state.last_update, t, self.params.freeze_time_ns) {
            self.state.p_m = step_prob(self.state.p_m, -self.params.d2);
            self.state.last_update = Some(t);
            self.stats.decrements += 1;
        }
    }

    /// The buffer overflowed at `t`: raise p_m by d1 unless frozen.
    pub fn on_packet_loss(&mut self, t: Time) {
        self.stats.overflows += 1;
        if freeze_elapsed(self.state.last_update, t, self.params.freeze_time_ns) {
            self.state.p_m = step_prob(self.state.p_m, self.params.d1);
            self.state.last_update = Some(t);
            self.stats.increments += 1;
        }
    }
}

impl Aqm for Blue {
    fn name(&self) -> &'static str {
        "blue"
    }

    fn enqueue(
        &mut self,
        pkt: &PacketMeta,
        q: &QueueView,
        _now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        // The link-idle event is seen at the first arrival after it, dated when the link went
        // idle; an idle period counts once however many arrivals it sees.
        if let Some(t0) = q.idle_since {
            if q.len_pkts == 0 && self.state.last_idle_seen != Some(t0) {
                self.state.last_idle_seen = Some(t0);
                self.on_link_idle(t0);
            }
        }
        if self.state.p_m > 0.0 && rng.random::<f64>() < self.state.p_m {
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

    fn on_overflow(&mut self, _pkt: &PacketMeta, _q: &QueueView, now: Time) {
        self.on_packet_loss(now);
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.p_m)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("overflows", self.stats.overflows as f64),
            ("increments", self.stats.increments as f64),
            ("decrements", self.stats.decrements as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::testing::Script;

    const MS: Time = 1_000_000;

    fn blue(pairs: &[(&str, ParamValue)]) -> Result<Blue, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        Ok(Blue::new(BlueParams::from_map(
            &m,
            &LinkContext::default(),
        )?))
    }

    fn overflow(s: &mut Script) {
        let pkt = PacketMeta::of_size(1000);
        let q = s.q;
        s.aqm.on_overflow(&pkt, &q, s.now);
    }

    fn p(s: &Script) -> f64 {
        s.aqm.drop_prob().unwrap()
    }

    #[test]
    fn freeze_time_limits_changes_to_one_per_freeze_time() {
        // d1 0.02, d2 0.002, freeze_time 100 ms.
        let mut s = Script::new(Box::new(blue(&[]).unwrap()));
        s.set_queue(100);
        overflow(&mut s); // t = 0: first change, p = 0.02
        assert!((p(&s) - 0.02).abs() < 1e-12);
        s.now = 50 * MS;
        overflow(&mut s); // frozen
        s.now = 100 * MS;
        overflow(&mut s); // exactly freeze_time later: still frozen (strict >)
        assert!((p(&s) - 0.02).abs() < 1e-12);
        s.now = 100 * MS + 1;
        overflow(&mut s); // p = 0.04, last_update = 100 ms + 1 ns
        assert!((p(&s) - 0.04).abs() < 1e-12);
        // Link idle from 150 ms, seen at an arrival at 180 ms: idle event dated 150 ms, only
        // 50 ms after the last change: frozen.
        s.now = 150 * MS;
        s.set_idle(30 * MS);
        s.arrive(1000);
        assert!((p(&s) - 0.04).abs() < 1e-12);
        // Idle again from 250 ms: 150 ms after the last change: p = 0.04 - 0.002 = 0.038.
        s.now = 250 * MS;
        s.set_idle(10 * MS);
        s.arrive(1000);
        assert!((p(&s) - 0.038).abs() < 1e-12);
        // Further arrivals in the same idle period do not count again, even much later.
        s.now += 500 * MS;
        s.arrive(1000);
        assert!((p(&s) - 0.038).abs() < 1e-12);
        let st = s.aqm.stats();
        assert_eq!(st[2], ("overflows", 4.0));
        assert_eq!(st[3], ("increments", 2.0));
        assert_eq!(st[4], ("decrements", 1.0));
    }

    #[test]
    fn probability_stays_in_bounds() {
        let mut s = Script::new(Box::new(
            blue(&[("d1", ParamValue::Num(0.3)), ("d2", ParamValue::Num(0.5))]).unwrap(),
        ));
        for k in 0..10u64 {
            s.now = k * 200 * MS;
            overflow(&mut s);
        }
        assert_eq!(p(&s), 1.0);
        for k in 10..20u64 {
            s.now = k * 200 * MS;
            s.set_idle(MS);
            s.arrive(1000);
        }
        assert_eq!(p(&s), 0.0);
    }

    #[test]
    fn arrivals_are_dropped_with_probability_p_m() {
        let mut s = Script::new(Box::new(blue(&[("d1", ParamValue::Num(0.25))]).unwrap()));
        s.set_queue(10);
        overflow(&mut s);
        let n = 100_000;
        let drops = (0..n).filter(|_| s.arrive(1000) == Verdict::Drop).count();
        let frac = drops as f64 / n as f64;
        assert!((frac - 0.25).abs() < 0.01, "{frac}");
        // With p_m = 0 nothing is dropped.
        let mut s = Script::new(Box::new(blue(&[]).unwrap()));
        s.set_queue(10);
        assert!((0..10_000).all(|_| s.arrive(1000) == Verdict::Admit));
    }

    #[test]
    fn ecn_capable_packets_are_marked() {
        let mut s = Script::new(Box::new(
            blue(&[
                ("d1", ParamValue::Num(0.5)),
                ("ecn", ParamValue::Bool(true)),
            ])
            .unwrap(),
        ));
        s.set_queue(10);
        s.ecn_capable = true;
        overflow(&mut s);
        let v: Vec<Verdict> = (0..100).map(|_| s.arrive(1000)).collect();
        assert!(v.contains(&Verdict::Mark) && !v.contains(&Verdict::Drop));
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = blue(&[("d1", ParamValue::Num(0.0))]).unwrap_err();
        assert_eq!(e.param, "d1");
        assert!(e.msg.contains("(0, 1]"), "{e}");
        let e = blue(&[("d2", ParamValue::Num(-0.1))]).unwrap_err();
        assert_eq!(e.param, "d2");
        let e = blue(&[("d2", ParamValue::Num(2.0))]).unwrap_err();
        assert_eq!(e.param, "d2");
        let e = blue(&[("freeze_time", ParamValue::Num(-1.0))]).unwrap_err();
        assert_eq!(e.param, "freeze_time");
    }
}
