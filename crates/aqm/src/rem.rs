//! REM: Random Exponential Marking (S. Athuraliya, S. H. Low, V. H. Li, Q. Yin, "REM: Active Queue
//! Management", IEEE Network 15(3), 2001, "Match rate clear buffer" and "Sum prices").
//!
//! Every update period the link price integrates the queue mismatch and the rate mismatch,
//! price <- max(0, price + gamma (alpha (q - q_ref) + x - c)), and arriving packets are marked
//! (or dropped) with probability 1 - phi^(-price).
//!
//! The paper's x (aggregate input rate) and c (capacity) are in one unit, so the price settles
//! where x = c and q = q_ref. aqmlab counts both in bytes / `mean_pkt_size`. `count_packets` is
//! ns-2.35's default instead (queue/rem.cc with `qib_` false): x counts arriving packets whatever
//! their size, c stays `pupdtime_` x link rate / (8 `mean_pktsize_`), so with packets larger
//! than `mean_pkt_size` c exceeds the real capacity and the queue settles above q_ref, where
//! alpha (q - q_ref) makes up c - x (seed 000: 164-168 packets for q_ref 100 with 1380-byte
//! packets against 1000; docs/reproductions.md).

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::{signal_counted, Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict, NS_PER_SEC};
use rand::Rng;

/// REM's parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "gamma", kind: K::Real, default: D::Num(0.001), help: "step size of the price update, > 0 (Athuraliya et al. 2001 simulations; ns-2 gamma_)" },
    ParamSpec { name: "alpha", kind: K::Real, default: D::Num(0.1), help: "weight of the queue mismatch against the rate mismatch, >= 0 (2001 simulations; ns-2)" },
    ParamSpec { name: "phi", kind: K::Real, default: D::Num(1.001), help: "base of the exponential marking law 1 - phi^-price, > 1 (2001 simulations; ns-2 phi_)" },
    ParamSpec { name: "q_ref", kind: K::Real, default: D::Num(100.0), help: "target backlog b*, packets (seed 000 Table 2: 100; ns-2 pbo_ is 20); within the buffer" },
    ParamSpec { name: "interval", kind: K::Duration, default: D::Num(0.002), help: "price update period, s (ns-2 pupdtime_ 2 ms, the 'default setting' of seed 001)" },
    ParamSpec { name: "mean_pkt_size", kind: K::Size, default: D::Auto, help: "packet size that rates and capacity are counted in, bytes; default: the link's mean packet size" },
    ParamSpec { name: "ecn", kind: K::Bool, default: D::Bool(false), help: "mark ECN-capable packets instead of dropping them (RFC 3168); REM was designed for marking" },
    ParamSpec { name: "count_packets", kind: K::Bool, default: D::Bool(false), help: "ns-2 qib_ false (rem.cc): the input rate counts packets whatever their size, the capacity is in packets of mean_pkt_size; false: both in bytes / mean_pkt_size (the paper's one unit)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "rem",
    summary: "Random Exponential Marking: a link price integrates queue and rate mismatch; p = 1 - phi^-price",
    source: "Athuraliya, Low, Li & Yin, IEEE Network 15(3) 2001",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(Rem::new(RemParams::from_map(m, l)?, l)))
    },
};

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct RemParams {
    /// Price step size.
    pub gamma: f64,
    /// Weight of the queue mismatch.
    pub alpha: f64,
    /// Base of the marking law.
    pub phi: f64,
    /// Target backlog, packets.
    pub q_ref: f64,
    /// Update period, s.
    pub interval: f64,
    /// Unit packet size of rates, bytes.
    pub mean_pkt_size: f64,
    /// ECN marking.
    pub ecn: bool,
    /// ns-2's packet count of the input rate (see the module doc).
    pub count_packets: bool,
}

impl RemParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let r = RemParams {
            gamma: p.num("gamma")?,
            alpha: p.num("alpha")?,
            phi: p.num("phi")?,
            q_ref: p.num("q_ref")?,
            interval: p.num("interval")?,
            mean_pkt_size: p
                .opt_num("mean_pkt_size")?
                .unwrap_or(l.mean_pkt_bytes as f64),
            ecn: p.bool("ecn"),
            count_packets: p.bool("count_packets"),
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("gamma", self.gamma, 0.0, true, f64::INFINITY, true)?;
        check_range("alpha", self.alpha, 0.0, false, f64::INFINITY, true)?;
        check_range("phi", self.phi, 1.0, true, f64::INFINITY, true)?;
        let buf = l.buffer_pkts();
        check_range("q_ref", self.q_ref, 0.0, false, buf, false).map_err(|e| {
            ParamError::new(
                "q_ref",
                format!("{} (the link buffer is {buf} packets)", e.msg),
            )
        })?;
        check_range("interval", self.interval, 1e-9, false, 3600.0, false)?;
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

/// State that changes per packet or per update.
#[derive(Clone, Debug, PartialEq)]
pub struct RemState {
    /// Link price.
    pub price: f64,
    /// Marking probability 1 - phi^-price.
    pub prob: f64,
    /// Bytes that arrived since the last update (dropped ones included: x is the offered rate).
    pub arrived_bytes: u64,
    /// Packets that arrived since the last update (`count_packets`).
    pub arrived_pkts: u64,
    /// Time of the next update, ns.
    pub next_update: Time,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemStats {
    /// Early (probabilistic) drops.
    pub early_drops: u64,
    /// ECN marks.
    pub marks: u64,
    /// Price updates.
    pub updates: u64,
}

/// The REM algorithm.
#[derive(Debug, Clone)]
pub struct Rem {
    /// Configuration.
    pub params: RemParams,
    /// Evolving state.
    pub state: RemState,
    /// Counters.
    pub stats: RemStats,
    period_ns: Time,
    /// Link capacity c per period, in packets of `mean_pkt_size`.
    capacity_per_period: f64,
}

/// The price update (Athuraliya et al. 2001, eq. (1) with the queue term of "match rate clear
/// buffer"): max(0, price + gamma (alpha (q - q_ref) + x - c)); q, q_ref, x and c in packets,
/// x and c counted over one update period.
#[inline]
pub fn price_step(price: f64, gamma: f64, alpha: f64, q: f64, q_ref: f64, x: f64, c: f64) -> f64 {
    (price + gamma * (alpha * (q - q_ref) + x - c)).max(0.0)
}

/// The marking probability for a price (Athuraliya et al. 2001, eq. (2)): 1 - phi^(-price).
#[inline]
pub fn mark_prob(price: f64, phi: f64) -> f64 {
    (1.0 - phi.powf(-price)).clamp(0.0, 1.0)
}

impl Rem {
    /// A REM instance with validated parameters for a link; the first update is one period after 0.
    pub fn new(params: RemParams, l: &LinkContext) -> Self {
        let period_ns = ((params.interval * NS_PER_SEC as f64).round() as Time).max(1);
        let capacity_per_period = l.rate_bps as f64 / 8.0 * params.interval / params.mean_pkt_size;
        Rem {
            params,
            state: RemState {
                price: 0.0,
                prob: 0.0,
                arrived_bytes: 0,
                arrived_pkts: 0,
                next_update: period_ns,
            },
            stats: RemStats::default(),
            period_ns,
            capacity_per_period,
        }
    }
}

impl Aqm for Rem {
    fn name(&self) -> &'static str {
        "rem"
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
        self.state.arrived_pkts += 1;
        let p = self.state.prob;
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
        let prm = &self.params;
        let s = &mut self.state;
        let x = if prm.count_packets {
            s.arrived_pkts as f64
        } else {
            s.arrived_bytes as f64 / prm.mean_pkt_size
        };
        s.price = price_step(
            s.price,
            prm.gamma,
            prm.alpha,
            q.len_pkts as f64,
            prm.q_ref,
            x,
            self.capacity_per_period,
        );
        s.prob = mark_prob(s.price, prm.phi);
        s.arrived_bytes = 0;
        s.arrived_pkts = 0;
        self.stats.updates += 1;
        s.next_update += self.period_ns;
        if s.next_update <= now {
            s.next_update = now + self.period_ns;
        }
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.prob)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("early_drops", self.stats.early_drops as f64),
            ("marks", self.stats.marks as f64),
            ("updates", self.stats.updates as f64),
            ("price", self.state.price),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    // 10 Mb/s, 1000-byte packets, 2 ms periods: c = 1.25e6 B/s * 0.002 s / 1000 B = 2.5 packets.
    fn rem(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<Rem, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        };
        Ok(Rem::new(RemParams::from_map(&m, &l)?, &l))
    }

    fn n(x: f64) -> ParamValue {
        ParamValue::Num(x)
    }

    fn price(s: &Script) -> f64 {
        s.aqm.stats().iter().find(|(k, _)| *k == "price").unwrap().1
    }

    /// One period: `arrivals` packets of 1000 B arrive (queue shown: `q`), then the update runs.
    fn period(s: &mut Script, q: u32, arrivals: usize) {
        s.set_queue(q);
        for _ in 0..arrivals {
            s.arrive(1000);
        }
        s.advance(2_000_000);
    }

    #[test]
    fn price_and_probability_by_hand() {
        // gamma 0.1, phi 2 (large, to make the numbers visible), alpha 0.1, q_ref 100, c = 2.5.
        // P1: q 150, x 5: price 0 + 0.1 (0.1*50 + 5 - 2.5)   = 0.75; p = 1 - 2^-0.75 = 0.4053964
        // P2: q 50,  x 0: 0.75 + 0.1 (0.1*(-50) + 0 - 2.5)  = 0;    p = 0
        // P3: q 120, x 4: 0 + 0.1 (0.1*20 + 4 - 2.5)         = 0.35; p = 1 - 2^-0.35 = 0.2154159
        // P4: q 10,  x 0: 0.35 + 0.1 (0.1*(-90) - 2.5) = -0.8 -> 0: the price never goes negative
        let r = rem(&[("gamma", n(0.1)), ("phi", n(2.0))], 1000).unwrap();
        let mut s = Script::new(Box::new(r));
        let want = [
            (150, 5, 0.75, 0.4053964),
            (50, 0, 0.0, 0.0),
            (120, 4, 0.35, 0.2154159),
            (10, 0, 0.0, 0.0),
        ];
        for (k, (q, x, pr, p)) in want.into_iter().enumerate() {
            period(&mut s, q, x);
            assert!(
                (price(&s) - pr).abs() < 1e-12,
                "P{}: price {} vs {pr}",
                k + 1,
                price(&s)
            );
            let got = s.aqm.drop_prob().unwrap();
            assert!((got - p).abs() < 1e-7, "P{}: p {got} vs {p}", k + 1);
        }
    }

    #[test]
    fn default_settings_by_hand() {
        // gamma 0.001, alpha 0.1, phi 1.001: q 150 and x 5 give price 0.001 * 7.5 = 0.0075 and
        // p = 1 - 1.001^-0.0075 = 0.0075 ln(1.001) (1 - ...) = 7.4962e-6.
        let mut s = Script::new(Box::new(rem(&[], 1000).unwrap()));
        period(&mut s, 150, 5);
        assert!((price(&s) - 0.0075).abs() < 1e-15);
        assert!((s.aqm.drop_prob().unwrap() - 7.4962244e-6).abs() < 1e-12);
        assert_eq!(s.aqm.next_update(), Some(4_000_000));
    }

    #[test]
    fn rate_mismatch_counts_bytes_of_every_arrival_even_dropped_ones() {
        // Price held high (p = 1): every arrival is dropped, yet all count in x. 3 arrivals of
        // 500 B = 1.5 packets of 1000 B; q = q_ref: step = gamma (1.5 - 2.5) = -0.1 gamma.
        let r = rem(
            &[("gamma", n(1.0)), ("phi", n(1e9)), ("alpha", n(0.0))],
            1000,
        )
        .unwrap();
        let mut s = Script::new(Box::new(r));
        period(&mut s, 100, 30); // x = 30: price = 27.5, p = 1 - 1e9^-27.5 = 1
        assert_eq!(s.aqm.drop_prob(), Some(1.0));
        s.set_queue(100);
        for _ in 0..3 {
            assert_eq!(s.arrive(500), Verdict::Drop);
        }
        s.advance(2_000_000);
        assert!((price(&s) - 26.5).abs() < 1e-12, "{}", price(&s));
    }

    #[test]
    fn count_packets_counts_arrivals_as_ns2_rem_cc_does_with_qib_off() {
        // ns-2.35 queue/rem.cc, qib_ false: enque does ++v_count per packet, run_updaterule
        // takes in = v_count and c = p_updtime p_ptc (packets of mean_pktsize_ per period).
        // 5 arrivals of 1500 B in a period, q = q_ref, gamma 1, c = 2.5 (1000-byte packets):
        // ns-2 step 5 - 2.5 = 2.5; in bytes / 1000 B (the paper's one unit) 7.5 - 2.5 = 5.
        for (count_packets, want) in [(true, 2.5), (false, 5.0)] {
            let pairs = [
                ("gamma", n(1.0)),
                ("count_packets", ParamValue::Bool(count_packets)),
            ];
            let mut s = Script::new(Box::new(rem(&pairs, 1000).unwrap()));
            s.set_queue(100);
            for _ in 0..5 {
                s.arrive(1500);
            }
            s.advance(2_000_000);
            assert!(
                (price(&s) - want).abs() < 1e-12,
                "{count_packets}: {}",
                price(&s)
            );
        }
    }

    #[test]
    fn pure_rules() {
        assert!((price_step(0.2, 0.01, 0.1, 90.0, 100.0, 2.0, 2.5) - 0.185).abs() < 1e-15);
        assert_eq!(price_step(0.0, 0.01, 0.1, 0.0, 100.0, 0.0, 2.5), 0.0);
        assert_eq!(mark_prob(0.0, 1.001), 0.0);
        assert!((mark_prob(1.0, 2.0) - 0.5).abs() < 1e-15);
        assert!((mark_prob(2.0, 2.0) - 0.75).abs() < 1e-15);
    }

    #[test]
    fn marks_ecn_capable_packets_when_ecn_is_on() {
        let r = rem(
            &[
                ("gamma", n(1.0)),
                ("phi", n(1e9)),
                ("ecn", ParamValue::Bool(true)),
            ],
            1000,
        );
        let mut s = Script::new(Box::new(r.unwrap()));
        period(&mut s, 100, 30);
        s.ecn_capable = true;
        assert_eq!(s.arrive(1000), Verdict::Mark);
        s.ecn_capable = false;
        assert_eq!(s.arrive(1000), Verdict::Drop);
        assert_eq!(&s.aqm.stats()[..2], &[("early_drops", 1.0), ("marks", 1.0)]);
    }

    #[test]
    fn bad_parameters_are_named() {
        for (name, bad) in [
            ("gamma", 0.0),
            ("gamma", -0.1),
            ("alpha", -0.1),
            ("phi", 1.0),
            ("phi", 0.5),
            ("interval", 0.0),
        ] {
            let e = rem(&[(name, n(bad))], 1000).unwrap_err();
            assert_eq!(e.param, name, "{name} = {bad}: {e}");
        }
        let e = rem(&[("phi", n(1.0))], 1000).unwrap_err();
        assert!(e.msg.contains("(1, inf)"), "{e}");
        let e = rem(&[("q_ref", n(150.0))], 100).unwrap_err();
        assert_eq!(e.param, "q_ref");
        assert!(
            e.msg.contains("buffer") && e.msg.contains("[0, 100]"),
            "{e}"
        );
    }
}
