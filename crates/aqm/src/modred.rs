//! ModRED: two drop precedences (IN / OUT) on one queue, RIO-style averages, and instead of early
//! drops a throttle (the router rewrites the flow's ACK receive window to one MSS) while the
//! average is between the thresholds; drop above max_th (Ramachandra, Banu & Ahammed, seed 004,
//! s. 3).
//!
//! The paper gives the rule in words only (Fig. 2 is lost). What it says and what we do
//! (see also `docs/algorithms/modred.md`):
//! - IN packets are judged on the average of queued IN packets, OUT packets on the average of the
//!   whole queue, each with its own thresholds (RIO: Clark & Fang, IEEE/ACM ToN 6(4), 1998, s. 3).
//!   avg_total is updated on every arrival, avg_in on IN arrivals (RIO; ns-2's rio.cc skips the
//!   avg_total update on OUT arrivals, a known bug we do not copy).
//! - Which packets in the band are throttled. The paper's ModRED throttles "instead of dropping
//!   or marking the packets" on a base "extending the RED implementation": by default
//!   (`throttle = "red"`) RED's count-spaced probability with max_p picks the packets to throttle,
//!   where RED would drop or mark them. `throttle = "always"` is the literal reading of "the field
//!   is set to 1 only if the average queue length is between Thmin and Thmax" (every packet in
//!   the band throttled); it takes a 10-flow dumbbell to 0.31 utilisation against 0.85
//!   (`docs/algorithms/modred.md`). The window rewrite itself (one MSS, never a zero window) is
//!   the router's job.
//! - Above max_th the packet is dropped. ModRED needs no ECN (its point is to work without it):
//!   its only drops are these forced ones, which stay drops as in RED, so it has no `ecn` switch.

use crate::info::AqmInfo;
use crate::params::{
    check_range, DefaultValue as D, LinkContext, ParamError, ParamKind as K, ParamMap, ParamSpec,
    Params,
};
use crate::red::{base_prob, ewma, idle_decay, uniformize};
use crate::{
    Aqm, AqmRng, PacketMeta, Precedence, QueueView, ThrottleHold, Time, Verdict, NS_PER_SEC,
};
use rand::Rng;

/// ModRED's parameters. The paper gives no thresholds; the defaults are ns-2's RIO defaults
/// (`Queue/RED/RIO`: in 15/30/linterm 50, out 5/15/linterm 5), the RED code the paper extended.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "min_th_in", kind: K::Real, default: D::Num(15.0), help: "IN packets: throttling starts at this average of queued IN packets, packets (ns-2 RIO default)" },
    ParamSpec { name: "max_th_in", kind: K::Real, default: D::Num(30.0), help: "IN packets: dropped from this average of queued IN packets on, packets; within the buffer" },
    ParamSpec { name: "max_p_in", kind: K::Real, default: D::Num(0.02), help: "IN packets: throttle probability at max_th_in when throttle = red, in (0, 1]" },
    ParamSpec { name: "min_th_out", kind: K::Real, default: D::Num(5.0), help: "OUT packets: throttling starts at this average of the whole queue, packets (ns-2 RIO default)" },
    ParamSpec { name: "max_th_out", kind: K::Real, default: D::Num(15.0), help: "OUT packets: dropped from this average of the whole queue on, packets; within the buffer" },
    ParamSpec { name: "max_p_out", kind: K::Real, default: D::Num(0.2), help: "OUT packets: throttle probability at max_th_out when throttle = red, in (0, 1]" },
    ParamSpec { name: "w_q", kind: K::Real, default: D::Num(0.002), help: "EWMA weight of both averages, in (0, 1] (RED)" },
    ParamSpec { name: "throttle", kind: K::Choice(&["always", "red"]), default: D::Str("red"), help: "red: RED's count-spaced probability up to max_p picks the packets in [min_th, max_th) to throttle, where RED would drop them (s. 3); always: every packet there is throttled" },
    ParamSpec { name: "mean_pkt_size", kind: K::Size, default: D::Auto, help: "typical packet size for the idle-time decay of the averages, bytes; default: the link's" },
    ParamSpec { name: "gentle", kind: K::Bool, default: D::Bool(false), help: "between max_th and 2 max_th drop with RED's gentle probability (max_p up to 1) and throttle the rest, instead of dropping every packet (Floyd 2000; ns-2 RED's default)" },
    ParamSpec { name: "hold", kind: K::Choice(&["ack", "flow"]), default: D::Str("ack"), help: "ack: one ACK of the flow rewritten per throttled packet; flow: every ACK of the flow until one of its packets is admitted unthrottled (s. 3 does not say; docs/reproductions.md)" },
];

/// Registry entry.
pub const INFO: AqmInfo = AqmInfo {
    name: "modred",
    summary: "two-precedence (IN/OUT) RIO-style RED that throttles the ACK window to one MSS between thresholds and drops above",
    source: "Ramachandra, Banu & Ahammed, 'Analyzing Marking Mod RED AQM scheme on TCP applications', s. 3",
    params: PARAMS,
    build: |m: &ParamMap, l: &LinkContext| -> Result<Box<dyn Aqm>, ParamError> {
        Ok(Box::new(ModRed::new(ModRedParams::from_map(m, l)?, l)))
    },
};

/// How packets in the band between the thresholds are picked for throttling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrottleMode {
    /// Every packet in the band (the paper's wording).
    Always,
    /// RED's count-spaced probability, up to max_p at max_th.
    Red,
}

/// Thresholds of one precedence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Throttling starts at this average, packets.
    pub min_th: f64,
    /// Dropping starts at this average, packets.
    pub max_th: f64,
    /// Throttle probability at max_th in [`ThrottleMode::Red`].
    pub max_p: f64,
}

/// Configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ModRedParams {
    /// IN packets, judged on the average of queued IN packets.
    pub in_th: Thresholds,
    /// OUT packets, judged on the average of the whole queue.
    pub out_th: Thresholds,
    /// EWMA weight.
    pub w_q: f64,
    /// How packets in the band are picked.
    pub throttle: ThrottleMode,
    /// Typical packet size, bytes.
    pub mean_pkt_size: f64,
    /// How long a throttle lasts at the router.
    pub hold: ThrottleHold,
    /// RED's gentle region above max_th (Floyd 2000) instead of dropping every packet there.
    pub gentle: bool,
}

impl ModRedParams {
    /// Reads and validates parameters for a link.
    pub fn from_map(m: &ParamMap, l: &LinkContext) -> Result<Self, ParamError> {
        let p = Params::new(PARAMS, m)?;
        let r = ModRedParams {
            in_th: Thresholds {
                min_th: p.num("min_th_in")?,
                max_th: p.num("max_th_in")?,
                max_p: p.num("max_p_in")?,
            },
            out_th: Thresholds {
                min_th: p.num("min_th_out")?,
                max_th: p.num("max_th_out")?,
                max_p: p.num("max_p_out")?,
            },
            w_q: p.num("w_q")?,
            throttle: if p.choice("throttle") == "red" {
                ThrottleMode::Red
            } else {
                ThrottleMode::Always
            },
            mean_pkt_size: p
                .opt_num("mean_pkt_size")?
                .unwrap_or(l.mean_pkt_bytes as f64),
            gentle: p.bool("gentle"),
            hold: if p.choice("hold") == "flow" {
                ThrottleHold::UntilAdmit
            } else {
                ThrottleHold::OneAck
            },
        };
        r.validate(l)?;
        Ok(r)
    }

    /// Checks every parameter against its allowed range and the link's buffer.
    pub fn validate(&self, l: &LinkContext) -> Result<(), ParamError> {
        check_range("w_q", self.w_q, 0.0, true, 1.0, false)?;
        let buf = l.buffer_pkts();
        for (t, sfx) in [(&self.in_th, "in"), (&self.out_th, "out")] {
            let (min, max, mp) = (
                format!("min_th_{sfx}"),
                format!("max_th_{sfx}"),
                format!("max_p_{sfx}"),
            );
            check_range(&mp, t.max_p, 0.0, true, 1.0, false)?;
            check_range(&min, t.min_th, 0.0, false, f64::INFINITY, true)?;
            if t.min_th >= t.max_th {
                return Err(ParamError::new(
                    &min,
                    format!(
                        "must be < {max} (got {min} {} >= {max} {})",
                        t.min_th, t.max_th
                    ),
                ));
            }
            if t.max_th > buf {
                return Err(ParamError::new(
                    &max,
                    format!(
                        "must not exceed the link buffer of {buf} packets (got {})",
                        t.max_th
                    ),
                ));
            }
        }
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

/// State that changes per packet.
#[derive(Clone, Debug, PartialEq)]
pub struct ModRedState {
    /// Average of the whole queue (OUT packets are judged on it), packets.
    pub avg_total: f64,
    /// Average of the queued IN packets (IN packets are judged on it), packets.
    pub avg_in: f64,
    /// IN packets now in the queue (admitted, not yet departed or overflowed).
    pub in_queue: u32,
    /// RED's count since the last throttle, IN band ([`ThrottleMode::Red`]; -1 outside the band).
    pub count_in: i64,
    /// The same for OUT.
    pub count_out: i64,
    /// Probability of a congestion action (throttle or drop) on the last arrival.
    pub last_p: f64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModRedStats {
    /// IN packets admitted with a throttle.
    pub throttles_in: u64,
    /// OUT packets admitted with a throttle.
    pub throttles_out: u64,
    /// IN packets dropped (avg_in at or above max_th_in).
    pub drops_in: u64,
    /// OUT packets dropped (avg_total at or above max_th_out).
    pub drops_out: u64,
}

/// The ModRED algorithm.
#[derive(Debug, Clone)]
pub struct ModRed {
    /// Configuration.
    pub params: ModRedParams,
    /// Evolving state.
    pub state: ModRedState,
    /// Counters.
    pub stats: ModRedStats,
    /// Transmission time of a typical packet, ns (for the idle-time decay).
    pkt_time_ns: f64,
}

/// Where an average lies against one precedence's thresholds (s. 3): below min_th the packet is
/// admitted, in the band it is throttled, from max_th on it is dropped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Band {
    /// avg < min_th.
    Below,
    /// min_th <= avg < max_th, with RED's base probability there.
    Within(f64),
    /// max_th <= avg < 2 max_th with `gentle`: dropped with this probability, else throttled.
    Gentle(f64),
    /// avg >= max_th (2 max_th with `gentle`).
    Above,
}

/// Where `avg` lies against one precedence's thresholds (RED's pb in the band, Floyd-Jacobson 1993
/// Fig. 2).
#[inline]
pub fn band_action(avg: f64, t: &Thresholds, gentle: bool) -> Band {
    match base_prob(avg, t.min_th, t.max_th, t.max_p, gentle) {
        None => Band::Above,
        Some(_) if avg < t.min_th => Band::Below,
        Some(p) if avg >= t.max_th => Band::Gentle(p),
        Some(pb) => Band::Within(pb),
    }
}

impl ModRed {
    /// A ModRED instance with validated parameters for a link.
    pub fn new(params: ModRedParams, l: &LinkContext) -> Self {
        let pkt_time_ns = params.mean_pkt_size * 8.0 * NS_PER_SEC as f64 / l.rate_bps.max(1) as f64;
        ModRed {
            params,
            state: ModRedState {
                avg_total: 0.0,
                avg_in: 0.0,
                in_queue: 0,
                count_in: -1,
                count_out: -1,
                last_p: 0.0,
            },
            stats: ModRedStats::default(),
            pkt_time_ns,
        }
    }

    /// Updates avg_total (every arrival) and avg_in (IN arrivals), RED's way: EWMA on a busy link,
    /// decay over an idle one (Floyd-Jacobson 1993, Fig. 2).
    fn update_averages(&mut self, is_in: bool, q: &QueueView, now: Time) {
        let w = self.params.w_q;
        let s = &mut self.state;
        let idle_m = match q.idle_since {
            Some(t0) if q.len_pkts == 0 => Some(now.saturating_sub(t0) as f64 / self.pkt_time_ns),
            _ => None,
        };
        let in_len = s.in_queue.min(q.len_pkts) as f64;
        match idle_m {
            Some(m) => {
                s.avg_total = idle_decay(s.avg_total, w, m);
                if is_in {
                    s.avg_in = idle_decay(s.avg_in, w, m);
                }
            }
            None => {
                s.avg_total = ewma(s.avg_total, q.len_pkts as f64, w);
                if is_in {
                    s.avg_in = ewma(s.avg_in, in_len, w);
                }
            }
        }
    }
}

impl Aqm for ModRed {
    fn name(&self) -> &'static str {
        "modred"
    }

    fn enqueue(&mut self, pkt: &PacketMeta, q: &QueueView, now: Time, rng: &mut AqmRng) -> Verdict {
        let is_in = pkt.precedence == Precedence::In;
        self.update_averages(is_in, q, now);
        let (avg, th, count) = if is_in {
            (
                self.state.avg_in,
                self.params.in_th,
                &mut self.state.count_in,
            )
        } else {
            (
                self.state.avg_total,
                self.params.out_th,
                &mut self.state.count_out,
            )
        };
        let (verdict, p) = match band_action(avg, &th, self.params.gentle) {
            Band::Below => {
                *count = -1;
                (Verdict::Admit, 0.0)
            }
            Band::Within(pb) => match self.params.throttle {
                ThrottleMode::Always => (Verdict::Throttle, 1.0),
                ThrottleMode::Red => {
                    *count += 1;
                    if rng.random::<f64>() < uniformize(pb, *count) {
                        *count = 0;
                        (Verdict::Throttle, pb)
                    } else {
                        (Verdict::Admit, pb)
                    }
                }
            },
            Band::Gentle(p) => {
                *count = 0;
                let v = if rng.random::<f64>() < p {
                    Verdict::Drop
                } else {
                    Verdict::Throttle
                };
                (v, p)
            }
            Band::Above => {
                *count = 0;
                (Verdict::Drop, 1.0)
            }
        };
        self.state.last_p = p;
        match (verdict, is_in) {
            (Verdict::Drop, true) => self.stats.drops_in += 1,
            (Verdict::Drop, false) => self.stats.drops_out += 1,
            (Verdict::Throttle, true) => self.stats.throttles_in += 1,
            (Verdict::Throttle, false) => self.stats.throttles_out += 1,
            _ => {}
        }
        if is_in && verdict != Verdict::Drop {
            self.state.in_queue = self.state.in_queue.saturating_add(1);
        }
        verdict
    }

    /// An admitted IN packet did not fit: it is not in the queue after all.
    fn on_overflow(&mut self, pkt: &PacketMeta, _q: &QueueView, _now: Time) {
        if pkt.precedence == Precedence::In {
            self.state.in_queue = self.state.in_queue.saturating_sub(1);
        }
    }

    /// Needed to count the IN packets in the queue.
    fn wants_dequeue(&self) -> bool {
        true
    }

    fn dequeue(
        &mut self,
        pkt: &PacketMeta,
        _sojourn: Time,
        _q: &QueueView,
        _now: Time,
        _rng: &mut AqmRng,
    ) -> Verdict {
        if pkt.precedence == Precedence::In {
            self.state.in_queue = self.state.in_queue.saturating_sub(1);
        }
        Verdict::Admit
    }

    /// The probability of a congestion action (throttle or drop) on the last arrival: 0 below
    /// min_th, 1 (always) or RED's pb (red) in the band, 1 above max_th.
    fn throttle_hold(&self) -> ThrottleHold {
        self.params.hold
    }

    fn drop_prob(&self) -> Option<f64> {
        Some(self.state.last_p)
    }

    fn avg_queue(&self) -> Option<f64> {
        Some(self.state.avg_total)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("throttles_in", self.stats.throttles_in as f64),
            ("throttles_out", self.stats.throttles_out as f64),
            ("drops_in", self.stats.drops_in as f64),
            ("drops_out", self.stats.drops_out as f64),
            ("avg_in", self.state.avg_in),
            ("in_queue", self.state.in_queue as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Buffer, ParamValue};
    use crate::testing::Script;

    fn modred(pairs: &[(&str, ParamValue)], buffer: u32) -> Result<ModRed, ParamError> {
        let m: ParamMap = crate::testing::param_map(pairs);
        let l = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(buffer),
            mean_pkt_bytes: 1000,
        };
        Ok(ModRed::new(ModRedParams::from_map(&m, &l)?, &l))
    }

    /// w_q = 1: the averages are the instantaneous lengths, so thresholds can be hit exactly.
    /// `throttle = "always"` unless `extra` sets it, so that every packet in the band is throttled.
    fn instant(extra: &[(&str, ParamValue)]) -> Script {
        let mut pairs = vec![
            ("w_q", ParamValue::Num(1.0)),
            ("throttle", ParamValue::Str("always".into())),
        ];
        pairs.extend_from_slice(extra);
        Script::new(Box::new(modred(&pairs, 100).unwrap()))
    }

    #[test]
    fn out_packets_around_the_out_thresholds() {
        // OUT: min_th 5, max_th 15 on the whole queue.
        let mut s = instant(&[]);
        for (q, v) in [
            (0, Verdict::Admit),
            (4, Verdict::Admit),
            (5, Verdict::Throttle),
            (14, Verdict::Throttle),
            (15, Verdict::Drop),
            (40, Verdict::Drop),
        ] {
            s.set_queue(q);
            assert_eq!(s.arrive(1000), v, "OUT at q = {q}");
        }
    }

    #[test]
    fn gentle_drops_with_reds_gentle_probability_and_throttles_the_rest() {
        // OUT 5/15, max_p_out 0.2, w_q 1 (avg = queue): at q = 21, p = 0.2 + 0.8 (21 - 15) / 15
        // = 0.52 (Floyd 2000); from 2 max_th = 30 on, every packet is dropped.
        let mut s = instant(&[("gentle", ParamValue::Bool(true))]);
        s.set_queue(14);
        assert_eq!(
            s.arrive(1000),
            Verdict::Throttle,
            "below max_th: the band as without gentle"
        );
        let (n, mut drops, mut throttles) = (20_000, 0, 0);
        for _ in 0..n {
            s.set_queue(21);
            match s.arrive(1000) {
                Verdict::Drop => drops += 1,
                Verdict::Throttle => throttles += 1,
                v => panic!("unexpected {v:?} in the gentle region"),
            }
        }
        let f = drops as f64 / n as f64;
        // binomial: sd = sqrt(0.52 * 0.48 / 20000) = 0.0035; 5 sd
        assert!((f - 0.52).abs() < 0.018, "drop fraction {f}");
        assert_eq!(drops + throttles, n);
        s.set_queue(30);
        assert_eq!(s.arrive(1000), Verdict::Drop);
    }

    #[test]
    fn in_packets_judged_on_queued_in_packets_only() {
        // IN: min_th 15, max_th 30 on the IN packets in the queue; OUT packets do not count.
        let mut s = instant(&[]);
        s.track_queue = true;
        s.precedence = Precedence::In;
        // IN arrivals 1..=15 see 0..=14 IN packets queued: admitted.
        for i in 0..15 {
            assert_eq!(
                s.arrive(1000),
                Verdict::Admit,
                "IN arrival with {i} IN queued"
            );
        }
        // 16th..30th see 15..=29: throttled (and admitted).
        for i in 15..30 {
            assert_eq!(
                s.arrive(1000),
                Verdict::Throttle,
                "IN arrival with {i} IN queued"
            );
        }
        // 31st sees 30 = max_th_in: dropped; the queue stays at 30.
        assert_eq!(s.arrive(1000), Verdict::Drop);
        assert_eq!(s.q.len_pkts, 30);
        // An OUT packet now sees avg_total 30 >= max_th_out 15: dropped, while IN still drops.
        s.precedence = Precedence::Out;
        assert_eq!(s.arrive(1000), Verdict::Drop);
        // 12 IN packets leave: 18 IN queued, IN arrivals are throttled again.
        s.precedence = Precedence::In;
        for _ in 0..12 {
            s.depart(1000, 0);
        }
        assert_eq!(s.arrive(1000), Verdict::Throttle);
        let st = s.aqm.stats();
        assert_eq!(st[5], ("in_queue", 19.0));
    }

    #[test]
    fn in_precedence_survives_out_congestion() {
        // 40 OUT packets queued (w_q 1): OUT arrivals are dropped, IN ones (none queued) admitted.
        let mut s = instant(&[]);
        s.set_queue(40);
        assert_eq!(s.arrive(1000), Verdict::Drop);
        s.precedence = Precedence::In;
        assert_eq!(s.arrive(1000), Verdict::Admit);
        assert_eq!(s.aqm.stats()[5], ("in_queue", 1.0));
    }

    #[test]
    fn overflow_of_an_admitted_in_packet_is_undone() {
        let mut s = instant(&[]);
        s.precedence = Precedence::In;
        s.set_queue(10);
        assert_eq!(s.arrive(1000), Verdict::Admit);
        let pkt = PacketMeta {
            precedence: Precedence::In,
            ..PacketMeta::of_size(1000)
        };
        s.aqm.on_overflow(&pkt, &s.q, s.now);
        assert_eq!(s.aqm.stats()[5], ("in_queue", 0.0));
        // An OUT overflow does not touch the IN count; a departure never takes it below 0.
        s.aqm.on_overflow(&PacketMeta::of_size(1000), &s.q, s.now);
        s.depart(1000, 0);
        assert_eq!(s.aqm.stats()[5], ("in_queue", 0.0));
    }

    #[test]
    fn red_mode_throttles_a_count_spaced_fraction_in_the_band() {
        // OUT avg 10: pb = 0.2 (10 - 5) / 10 = 0.1; count spacing makes the gap uniform on 1..=9,
        // mean 5: about a fifth of the packets are throttled (the rest admitted); none dropped.
        let mut s = instant(&[("throttle", ParamValue::Str("red".into()))]);
        let n = 100_000;
        let mut throttled = 0;
        for _ in 0..n {
            s.set_queue(10);
            match s.arrive(1000) {
                Verdict::Throttle => throttled += 1,
                Verdict::Admit => {}
                v => panic!("{v:?}"),
            }
        }
        let f = throttled as f64 / n as f64;
        assert!((f - 0.2).abs() < 0.005, "{f}");
        assert!((s.aqm.drop_prob().unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn averages_follow_red_ewma() {
        // Default w_q 0.002: one arrival seeing 10 queued gives avg_total 0.02.
        let mut s = Script::new(Box::new(modred(&[], 100).unwrap()));
        s.set_queue(10);
        s.arrive(1000);
        assert!((s.aqm.avg_queue().unwrap() - 0.02).abs() < 1e-15);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = modred(&[("min_th_in", ParamValue::Num(40.0))], 100).unwrap_err();
        assert_eq!(e.param, "min_th_in");
        let e = modred(&[("max_th_out", ParamValue::Num(150.0))], 100).unwrap_err();
        assert_eq!(e.param, "max_th_out");
        assert!(e.msg.contains("buffer"), "{e}");
        let e = modred(&[], 25).unwrap_err();
        assert_eq!(e.param, "max_th_in");
        let e = modred(&[("max_p_out", ParamValue::Num(0.0))], 100).unwrap_err();
        assert_eq!(e.param, "max_p_out");
        let e = modred(&[("w_q", ParamValue::Num(2.0))], 100).unwrap_err();
        assert_eq!(e.param, "w_q");
        let e = modred(&[("throttle", ParamValue::Str("never".into()))], 100).unwrap_err();
        assert_eq!(e.param, "throttle");
    }
}
