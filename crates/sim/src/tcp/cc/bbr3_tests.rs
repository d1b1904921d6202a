//! BBR v3's behaviours, each on a path whose truth is known by hand (a sender with SACK
//! recovery and pacing, a receiver echoing CE packet by packet, a bottleneck of fixed rate
//! with a FIFO of fixed size, optional CE marking above a queue length, fixed propagation
//! delays), or on a controller fed one crafted ACK sample ("send 50, lose 3"). The numbers
//! are draft-ietf-ccwg-bbr-01's and google/bbr v3's `tcp_bbr.c` constants (named in each
//! test), checked against the path's rate, RTT and buffer.

use super::*;
use crate::config::{RecoveryKind, TcpConfig, TcpVariant};
use crate::packet::{Packet, CE};
use crate::tcp::rate::RateSample;
use crate::tcp::{Receiver, Sender};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

const MS: Time = 1_000_000;

/// One row per ACK.
#[derive(Clone, Copy, Debug)]
struct Row {
    t: Time,
    mode: Mode,
    phase: Phase,
    cwnd: f64,
    flight: u32,
    inflight_hi: u32,
    inflight_lo: u32,
    bw_lo: f64,
    round_start: bool,
    rtt_cnt: u64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    delivered: u64,
    lost: u64,
}

/// A data segment in the heap (ordered by time and order only).
#[derive(Clone, Debug)]
struct Key(Packet);
impl PartialEq for Key {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// The path: a bottleneck of `tx` ns per segment, a FIFO of `buffer` packets, CE marking of
/// ECN-capable packets arriving to a queue of at least `ce_k` packets, scripted drops.
struct Path {
    s: Sender,
    r: Receiver,
    now: Time,
    tx: Time,
    prop_rtt: Time,
    buffer: usize,
    ce_k: Option<usize>,
    /// Segments dropped at their first transmission.
    drop_first_tx: HashSet<u32>,
    /// Drop every n-th packet arriving in these phases (scripted loss outside probing).
    drop_every: Option<(u64, Phase)>,
    arrivals: u64,
    queue: std::collections::VecDeque<Time>,
    acks: BinaryHeap<Reverse<(Time, u64, Key)>>,
    order: u64,
    drops: u64,
    ce_marks: u64,
    trace: Vec<Row>,
}

fn cfg(ecn: bool) -> TcpConfig {
    TcpConfig {
        variant: TcpVariant::Sack,
        cc: Some("bbr3".into()),
        recovery: Some(RecoveryKind::Sack),
        rwnd_segments: 100_000,
        ecn,
        ..crate::topo::default_tcp()
    }
}

impl Path {
    fn new(seg_per_s: u64, prop_rtt: Time, buffer: usize) -> Self {
        Self::with_ecn(seg_per_s, prop_rtt, buffer, None)
    }

    fn with_ecn(seg_per_s: u64, prop_rtt: Time, buffer: usize, ce_k: Option<usize>) -> Self {
        let c = cfg(ce_k.is_some());
        let s = Sender::new(&c, None, None);
        assert!(s.pacer.on, "BBR v3 turns pacing on");
        let r = Receiver::new(&c).per_packet_ce_echo(s.cc.per_packet_ce_echo());
        Path {
            s,
            r,
            now: 0,
            tx: NS_PER_SEC / seg_per_s,
            prop_rtt,
            buffer,
            ce_k,
            drop_first_tx: HashSet::new(),
            drop_every: None,
            arrivals: 0,
            queue: Default::default(),
            acks: BinaryHeap::new(),
            order: 0,
            drops: 0,
            ce_marks: 0,
            trace: Vec::new(),
        }
    }

    fn bbr(&self) -> &Bbr3 {
        let a = self.s.cc.as_any().expect("BBR v3 offers its state");
        a.downcast_ref::<Bbr3>().expect("a BBR v3 sender")
    }

    fn enter(&mut self, out: Vec<Packet>) {
        for mut p in out {
            while self.queue.front().is_some_and(|&d| d <= self.now) {
                self.queue.pop_front();
            }
            self.arrivals += 1;
            let first_tx = p.flags & crate::packet::RETX == 0;
            let scripted = first_tx && self.drop_first_tx.remove(&p.seq);
            let periodic = self.drop_every.is_some_and(|(n, ph)| {
                let b = self.bbr();
                b.mode == Mode::ProbeBw && b.phase == ph && self.arrivals.is_multiple_of(n)
            });
            if scripted || periodic || self.queue.len() > self.buffer {
                self.drops += 1;
                continue;
            }
            if self.ce_k.is_some_and(|k| self.queue.len() >= k) && p.flags & ECT != 0 {
                p.flags |= CE;
                self.ce_marks += 1;
            }
            let start = self.queue.back().copied().unwrap_or(0).max(self.now);
            let dep = start + self.tx;
            self.queue.push_back(dep);
            self.order += 1;
            self.acks
                .push(Reverse((dep + self.prop_rtt, self.order, Key(p))));
        }
    }

    fn run(&mut self, end: Time) {
        let mut out = Vec::new();
        if self.now == 0 {
            self.s.send_allowed(0, &mut out);
            self.enter(std::mem::take(&mut out));
        }
        loop {
            let t_ack = self.acks.peek().map(|Reverse((t, _, _))| *t);
            let t_pace = self.s.pacer.deadline;
            let t_rto = self.s.rto_deadline;
            let Some(t) = [t_ack, t_pace, t_rto].into_iter().flatten().min() else {
                break;
            };
            if t > end {
                break;
            }
            self.now = t;
            if t_ack == Some(t) {
                let Reverse((_, _, Key(p))) = self.acks.pop().expect("peeked");
                if let Some(a) = self.r.on_data(&p, t, true) {
                    self.s.on_ack(&a, t, &mut out);
                    let b = self.bbr();
                    let (delivered, lost) = self
                        .s
                        .rate
                        .as_ref()
                        .map_or((0, 0), |r| (r.delivered, r.lost));
                    let row = Row {
                        t,
                        mode: b.mode,
                        phase: b.phase,
                        cwnd: self.s.cwnd,
                        flight: self.s.rate.as_ref().map_or(0, |r| r.in_flight),
                        inflight_hi: b.inflight_hi,
                        inflight_lo: b.inflight_lo,
                        bw_lo: b.bw_lo,
                        round_start: b.round_start,
                        rtt_cnt: b.rtt_cnt,
                        full_bw_reached: b.full_bw_reached,
                        full_bw_cnt: b.full_bw_cnt,
                        delivered,
                        lost,
                    };
                    self.trace.push(row);
                }
            } else if t_pace == Some(t) {
                self.s.pacer.deadline = None;
                self.s.send_paced(t, &mut out);
            } else {
                self.s.on_timeout(t, &mut out);
            }
            self.enter(std::mem::take(&mut out));
        }
    }

    /// (time, mode, phase) at each change of either.
    fn changes(&self) -> Vec<(Time, Mode, Phase)> {
        let mut v: Vec<(Time, Mode, Phase)> = Vec::new();
        for r in &self.trace {
            let cur = (
                r.mode,
                if r.mode == Mode::ProbeBw {
                    r.phase
                } else {
                    Phase::Up
                },
            );
            if v.last().is_none_or(|l| (l.1, l.2) != cur) {
                v.push((r.t, cur.0, cur.1));
            }
        }
        v
    }
}

use crate::packet::ECT;

/// 1000 segments/s (12 Mb/s of 1500-byte packets), 40 ms propagation RTT: the min RTT is
/// 41 ms (one transmission time), the BDP 41 segments.
const RATE: u64 = 1000;
const RTT: Time = 40 * MS;
const BDP: u32 = 41;

#[test]
fn startup_ends_three_rounds_after_the_bw_sample_stops_growing_25_percent() {
    // A deep buffer: no loss, no ECN; only the bw plateau ends STARTUP.
    let mut p = Path::new(RATE, RTT, 10_000);
    p.run(3 * NS_PER_SEC);
    assert_eq!(p.drops, 0);
    let flip = p
        .trace
        .iter()
        .position(|r| r.full_bw_reached)
        .expect("STARTUP ends");
    // tcp_bbr.c v3 bbr_check_full_bw_reached / draft s. 4.3.1.2: the flip happens on a round
    // start and is the third round start in a row without a sample reaching 1.25 x the
    // reference: full_bw_cnt counts 1, 2, 3 on the last three round starts before it.
    assert!(p.trace[flip].round_start);
    let starts: Vec<&Row> = p.trace[..=flip].iter().filter(|r| r.round_start).collect();
    let n = starts.len();
    assert!(n >= 4);
    let counts: Vec<u32> = starts[n - 3..].iter().map(|r| r.full_bw_cnt).collect();
    assert_eq!(counts, vec![1, 2, 3]);
    // Independent truth: the delivery rate cannot exceed the link's, so once the pipe is
    // full (cwnd >= BDP) growth stops; STARTUP ends within 3-4 rounds of that. The first
    // round start with cwnd >= 2 x BDP (STARTUP's cwnd gain) comes at most one round before
    // the plateau is confirmed.
    let full = p.trace.iter().position(|r| r.cwnd >= BDP as f64).unwrap();
    let rounds_after = p.trace[flip].rtt_cnt - p.trace[full].rtt_cnt;
    assert!((2..=5).contains(&rounds_after), "{rounds_after}");
    // The estimate is the link's rate within 2%, the min RTT exactly 41 ms.
    let bw = p.bbr().max_bw() * NS_PER_SEC as f64;
    assert!((bw - RATE as f64).abs() <= 0.02 * RATE as f64, "{bw}");
    assert_eq!(p.bbr().min_rtt, Some(RTT + MS));
    // The plateau exit leaves inflight_hi unset (no loss or ECN seen).
    assert_eq!(p.trace[flip].inflight_hi, u32::MAX);
    // Then DRAIN and PROBE_BW DOWN (and CRUISE at once when inflight is already down:
    // bbr_check_drain starts DOWN and bbr_update_cycle_phase on the same ACK may cruise).
    let ch = p.changes();
    assert_eq!(ch[0].1, Mode::Startup);
    assert_eq!(ch[1].1, Mode::Drain);
    assert_eq!(ch[2].1, Mode::ProbeBw);
    assert!(matches!(ch[2].2, Phase::Down | Phase::Cruise), "{ch:?}");
}

#[test]
fn startup_ends_on_excessive_loss_before_the_bw_plateau() {
    // A shallow buffer (5 packets, an eighth of the BDP): STARTUP's 2.77 x pacing overflows
    // it while the bw still grows.
    let mut p = Path::new(RATE, RTT, 5);
    p.run(3 * NS_PER_SEC);
    let flip = p
        .trace
        .iter()
        .position(|r| r.full_bw_reached)
        .expect("STARTUP ends");
    let r = p.trace[flip];
    // Not the plateau rule: fewer than 3 rounds without growth.
    assert!(r.full_bw_cnt < FULL_BW_CNT, "{r:?}");
    // bbr_handle_queue_too_high_in_startup: inflight_hi = max(BDP with the quantization
    // budget, the latest round's delivered); the BDP is 41-42 at the link's rate, and the
    // bw estimate may still be short of it (the pipe was not yet full).
    assert!(
        r.inflight_hi != u32::MAX && r.inflight_hi <= 2 * BDP + 6,
        "{r:?}"
    );
    assert!(r.inflight_hi >= BDP / 2, "{r:?}");
    // bbr_check_loss_too_high_in_startup / bbr_full_loss_cnt: in recovery, and the loss
    // round that just ended lost more than 2% of what was in flight, over at least 6 ACKs
    // marking losses. Truth from the path: the drops so far are many more than 6.
    assert!(p.s.stats.retransmits >= FULL_LOSS_CNT as u64);
    let round_begin = p.trace[..flip]
        .iter()
        .rposition(|x| x.round_start)
        .unwrap_or(0);
    let lost = r.lost - p.trace[round_begin].lost;
    let delivered = r.delivered - p.trace[round_begin].delivered;
    assert!(
        lost as f64 > LOSS_THRESH * (lost + delivered) as f64,
        "lost {lost} delivered {delivered}"
    );
    assert!(p.drops >= FULL_LOSS_CNT as u64);
}

/// A controller in PROBE_BW UP with a known model: bw 1 segment/ms, min RTT 100 ms (BDP
/// 100), cwnd 200, probing samples on.
fn bbr_in_up() -> Bbr3 {
    Bbr3 {
        mode: Mode::ProbeBw,
        phase: Phase::Up,
        full_bw_reached: true,
        bw_hi: [1e-6, 1e-6],
        min_rtt: Some(100 * MS),
        min_rtt_stamp: 0,
        probe_rtt_min: Some(100 * MS),
        bw_probe_samples: true,
        ack_phase: AckPhase::ProbeFeedback,
        ..Bbr3::default()
    }
}

/// An ACK at 1 s delivering one segment, whose sampled segment was sent with `tx_in_flight`
/// in flight and `lost` segments marked lost since.
fn loss_sample(tx_in_flight: u32, lost: u64) -> AckSample {
    AckSample {
        now: NS_PER_SEC,
        acked: 1,
        delivered: 1,
        snd_una: 1000,
        snd_nxt: 1200,
        srtt_ns: 100e6,
        min_rtt_ns: 100e6,
        rate: RateSample {
            prior_delivered: 800,
            delivered: 100,
            interval_ns: 100 * MS as i64,
            acked_sacked: 1,
            losses: 1,
            rtt_ns: 100 * MS as i64,
            prior_in_flight: 200,
            in_flight: 199,
            total_delivered: 900,
            total_lost: 10,
            delivered_time: NS_PER_SEC,
            high_data: 1200,
            edt: NS_PER_SEC,
            tx_in_flight,
            lost,
            ..RateSample::default()
        },
        ..AckSample::default()
    }
}

#[test]
fn a_loss_rate_over_2_percent_sets_inflight_hi_to_0_7_of_the_target_or_the_flight() {
    // draft s. 4.5.10.2 / bbr_handle_inflight_too_high: inflight_hi = max(tx_in_flight,
    // BBRBeta (0.7) x target inflight); target inflight = min(BDP 100 + budget, cwnd).
    // The quantization budget: 3 x TSO goal; the goal at this pacing rate (~1237 segments/s
    // in UP: 1.25 x 1000 x 0.99) is 1237 / 1024 = 1 segment of 1500 bytes (+ 0: 100 ms of
    // min RTT removes the RTT allowance) -> 2 (the floor): budget 6 < 100: target = 100.
    //
    // In UP the budget adds 2 segments (bbr_quantization_budget: "ensure gain cycling gets
    // inflight above BDP"): target 102.
    //
    // Send 50, lose 3 (6% > 2%): inflight_hi = max(50, floor(0.7 x 102) = 71) = 71, and UP
    // ends (DOWN, where the target is 100).
    let mut b = bbr_in_up();
    b.pacing_rate = 1.25 * 1000.0 * 0.99;
    assert_eq!(b.target_inflight(200), 102);
    b.cong_control(200.0, &loss_sample(50, 3));
    assert_eq!(b.target_inflight(200), 100);
    assert_eq!(b.inflight_hi, 71);
    assert_eq!(b.phase, Phase::Down);
    assert!(b.prev_probe_too_high && !b.bw_probe_samples);
    // Send 150, lose 4 (2.7%): inflight_hi = max(150, 70) = 150.
    let mut b = bbr_in_up();
    b.cong_control(200.0, &loss_sample(150, 4));
    assert_eq!(b.inflight_hi, 150);
    // Send 150, lose 3 (exactly 2%, not over): no cut; UP goes on.
    let mut b = bbr_in_up();
    b.cong_control(200.0, &loss_sample(150, 3));
    assert_eq!(b.inflight_hi, u32::MAX);
    assert_eq!(b.phase, Phase::Up);
    // Outside probing feedback (bw_probe_samples off): no cut, once per probe.
    let mut b = bbr_in_up();
    b.bw_probe_samples = false;
    b.cong_control(200.0, &loss_sample(50, 3));
    assert_eq!(b.inflight_hi, u32::MAX);
}

#[test]
fn probing_into_a_small_buffer_puts_inflight_hi_at_the_overflow_point() {
    // 1000 segments/s, 40 ms, a 20-packet buffer: the path holds BDP + buffer = 41 + 21
    // (the one in service) = 62 segments before it drops. After UP overflows it, inflight_hi
    // is the flight of a segment sent when the loss rate went over 2%: near 62.
    let mut p = Path::new(RATE, RTT, 20);
    p.run(20 * NS_PER_SEC);
    let b = p.bbr();
    assert!(b.too_high_count > 0, "a probe went too high");
    let hi = p.trace.last().unwrap().inflight_hi;
    assert!((50..=75).contains(&hi), "inflight_hi {hi}");
    // CRUISE keeps 15% headroom under it: the queue stays well below the buffer most of the
    // time, and the loss rate over the run is low (v3's aim).
    let lost = p.trace.last().unwrap().lost as f64;
    let delivered = p.trace.last().unwrap().delivered as f64;
    assert!(lost / delivered < 0.01, "loss rate {}", lost / delivered);
}

#[test]
fn probe_rtt_every_5_s_at_half_the_bdp_for_200_ms() {
    let mut p = Path::new(RATE, RTT, 10_000);
    p.run(17 * NS_PER_SEC);
    let tr = &p.trace;
    let mut enters = Vec::new();
    for i in 1..tr.len() {
        if tr[i].mode == Mode::ProbeRtt && tr[i - 1].mode != Mode::ProbeRtt {
            enters.push(i);
        }
    }
    assert!(enters.len() >= 3, "{enters:?}");
    for w in enters.windows(2) {
        // draft ProbeRTTInterval / bbr_probe_rtt_win_ms: the next PROBE_RTT comes 5 s after
        // the previous one's end (the probe-RTT min is stamped there; the path's RTT never
        // beats 41 ms, so it is not refreshed by a lower sample).
        let leave = w[0]
            + tr[w[0]..]
                .iter()
                .position(|r| r.mode != Mode::ProbeRtt)
                .unwrap();
        let gap = tr[w[1]].t - tr[leave].t;
        assert!(
            gap > PROBE_RTT_WIN && gap <= PROBE_RTT_WIN + 2 * MS,
            "gap {gap}"
        );
    }
    for &e in &enters {
        let leave = e + tr[e..]
            .iter()
            .position(|r| r.mode != Mode::ProbeRtt)
            .unwrap();
        // bbr_probe_rtt_cwnd: cwnd at most max(4, 0.5 x BDP) = ceil(0.5 x 41) = 21 (the bw
        // estimate within 2% of the link's: 20 or 21).
        assert!(tr[e..leave].iter().all(|r| r.cwnd <= 21.0), "{:?}", tr[e]);
        // Once inflight is down to it, 200 ms and a round (41 ms, shorter) later: the first
        // ACK after. The threshold is 20 or 21 (the bw estimate within 2%); inflight falls
        // by about one segment per ms: up to 10 ms of slack.
        let at = e + tr[e..].iter().position(|r| r.flight <= 21).unwrap();
        let dur = tr[leave].t - tr[at].t;
        assert!(
            dur > PROBE_RTT_TIME && dur <= PROBE_RTT_TIME + 10 * MS,
            "{dur}"
        );
        // bbr_exit_probe_rtt with the pipe full: PROBE_BW CRUISE (through DOWN).
        assert_eq!(
            (tr[leave].mode, tr[leave].phase),
            (Mode::ProbeBw, Phase::Cruise)
        );
    }
}

/// The PROBE_BW cycles after the first `skip` changes: (start time, phase, start round).
/// A CRUISE entered from another mode (DRAIN, PROBE_RTT) started its cycle's DOWN on the same
/// ACK (bbr_check_drain, bbr_exit_probe_rtt): it is recorded as DOWN then CRUISE at one time.
fn cycles(p: &Path) -> Vec<(Time, Phase, u64)> {
    let mut v: Vec<(Time, Phase, u64)> = Vec::new();
    let mut prev_mode = Mode::Startup;
    for r in &p.trace {
        let entered = prev_mode != Mode::ProbeBw;
        prev_mode = r.mode;
        if r.mode != Mode::ProbeBw {
            continue;
        }
        if entered && r.phase == Phase::Cruise {
            v.push((r.t, Phase::Down, r.rtt_cnt));
        }
        if v.last().is_none_or(|l| l.1 != r.phase) {
            v.push((r.t, r.phase, r.rtt_cnt));
        }
    }
    v
}

#[test]
fn probe_bw_goes_down_cruise_refill_up_with_the_wall_clock_probe_time() {
    // 2000 segments/s, 100 ms: BDP 200, so the Reno-coexistence bound (min(63, BDP) = 63
    // rounds of 100.5 ms = 6.3 s) is longer than the wall-clock wait: probes come 2-3 s
    // after DOWN begins (bbr_pick_probe_wait: 2 s + rand(1 s)).
    let mut p = Path::new(2000, 100 * MS, 10_000);
    p.run(16 * NS_PER_SEC);
    let c = cycles(&p);
    let order = [Phase::Down, Phase::Cruise, Phase::Refill, Phase::Up];
    assert!(c.len() >= 8, "{c:?}");
    // The order, cyclically from DOWN; a PROBE_RTT (every 5 s) restarts the cycle at DOWN.
    let probe_rtt_in = |a: Time, b: Time| {
        p.trace
            .iter()
            .any(|r| r.mode == Mode::ProbeRtt && r.t > a && r.t < b)
    };
    for w in c.windows(2) {
        let i = order.iter().position(|&x| x == w[0].1).unwrap();
        if w[1].1 == Phase::Down && probe_rtt_in(w[0].0, w[1].0) {
            continue;
        }
        assert_eq!(w[1].1, order[(i + 1) % 4], "{c:?}");
    }
    let mut waits = 0;
    for (k, w) in c.windows(2).enumerate() {
        if w[1].1 != Phase::Refill {
            continue;
        }
        // The DOWN that started this cycle.
        let Some(down) = c[..=k].iter().rposition(|x| x.1 == Phase::Down) else {
            continue;
        };
        let wait = w[1].0 - c[down].0;
        // A PROBE_RTT in between restarts the cycle clock (bbr_exit_probe_rtt); skip those.
        if probe_rtt_in(c[down].0, w[1].0) {
            continue;
        }
        assert!(
            wait > BW_PROBE_BASE && wait <= BW_PROBE_BASE + BW_PROBE_RAND + 2 * MS,
            "wait {wait}"
        );
        waits += 1;
    }
    assert!(waits >= 2, "{c:?}");
    // REFILL lasts one round, UP (deep buffer: no loss) ends on the bw plateau: 3 round
    // starts without 25% growth (bbr_update_cycle_phase case UP, full_bw_now).
    for w in c.windows(2) {
        let rounds = w[1].2 - w[0].2;
        match w[0].1 {
            Phase::Refill => assert_eq!(rounds, 1, "{w:?}"),
            Phase::Up => assert!((3..=4).contains(&rounds), "{w:?}"),
            _ => {}
        }
    }
}

#[test]
fn probe_bw_probes_after_the_reno_coexistence_rounds_on_a_small_bdp() {
    // 1000 segments/s, 20 ms: BDP 21; the round bound min(63, target inflight 21-22)
    // (bbr_is_reno_coexistence_probe_time) less the random start 0-1 comes long before
    // 2 s: 20-22 rounds from DOWN's start to REFILL.
    let mut p = Path::new(RATE, 20 * MS, 10_000);
    p.run(6 * NS_PER_SEC);
    let c = cycles(&p);
    let mut n = 0;
    for (k, w) in c.windows(2).enumerate() {
        if w[1].1 != Phase::Refill {
            continue;
        }
        let Some(down) = c[..=k].iter().rposition(|x| x.1 == Phase::Down) else {
            continue;
        };
        let rounds = w[1].2 - c[down].2;
        let t = w[1].0 - c[down].0;
        if p.trace
            .iter()
            .any(|r| r.mode == Mode::ProbeRtt && r.t > c[down].0 && r.t < w[1].0)
        {
            continue;
        }
        assert!((20..=23).contains(&rounds), "rounds {rounds} {c:?}");
        assert!(t < BW_PROBE_BASE, "{t}");
        n += 1;
    }
    assert!(n >= 3, "{c:?}");
}

#[test]
fn up_ends_when_the_ce_fraction_exceeds_half_and_inflight_hi_is_cut() {
    // 1000 segments/s, 4 ms (min RTT 5 ms: ECN eligible, bbr_ecn_max_rtt_us), CE marking
    // from a queue of 3 packets (a step marker), deep buffer: no loss. A probe pushes the
    // queue past 3; the CE fraction of its samples goes over 50% (bbr_ecn_thresh): UP ends
    // at once (draft: "ECN mark rate too high") and inflight_hi is set; no packet is lost.
    let mut p = Path::with_ecn(RATE, 4 * MS, 10_000, Some(3));
    p.run(10 * NS_PER_SEC);
    assert_eq!(p.drops, 0);
    let b = p.bbr();
    assert!(b.ecn_eligible);
    assert!(b.too_high_count > 0);
    let hi = p.trace.last().unwrap().inflight_hi;
    // The step is at 3 queued + 5 in the pipe (BDP 5): marks start at a flight of 8.
    assert!((4..=30).contains(&hi), "inflight_hi {hi}");
    // UP never lasts the 3 plateau rounds here after the first too-high probe: each UP ends
    // in at most 3 rounds.
    let c = cycles(&p);
    for w in c.windows(2) {
        if w[0].1 == Phase::Up {
            assert!(w[1].2 - w[0].2 <= 3, "{w:?}");
        }
    }
    // The queue stays short: mean flight within BDP + 2 x step.
    let mean = p.trace.iter().map(|r| r.flight as f64).sum::<f64>() / p.trace.len() as f64;
    assert!(mean < 5.0 + 6.0, "mean flight {mean}");
}

#[test]
fn ecn_alpha_is_an_ewma_with_gain_1_16_per_round() {
    // bbr_update_ecn_alpha: alpha starts at 1 (bbr_ecn_alpha_init) and at each round start
    // becomes (1 - 1/16) alpha + 1/16 x (CE-delivered / delivered over the round).
    let mut b = Bbr3 {
        min_rtt: Some(MS),
        probe_rtt_min: Some(MS),
        ..Bbr3::default()
    };
    let mut expect = 1.0;
    let mut delivered = 0u64;
    let mut t = 0;
    let mut eces: Vec<bool> = Vec::new();
    let mut last = 0;
    // Rounds of 10 segments, 10 ACKs each; in round k, the first f_k ACKs carry ECE.
    let fractions = [0, 3, 10, 5, 0, 0, 7];
    for (k, &f) in fractions.iter().enumerate() {
        for j in 0..10u32 {
            t += 100_000;
            delivered += 1;
            let s = AckSample {
                now: t,
                acked: 1,
                delivered: 1,
                ece: j < f,
                ce: u32::from(j < f),
                snd_una: delivered as u32,
                snd_nxt: delivered as u32 + 10,
                snd_max: delivered as u32 + 10,
                srtt_ns: 1e6,
                min_rtt_ns: 1e6,
                rate: RateSample {
                    prior_delivered: delivered - 1 - (delivered - 1) % 10,
                    delivered: 1 + ((delivered - 1) % 10) as i64,
                    interval_ns: MS as i64,
                    acked_sacked: 1,
                    rtt_ns: MS as i64,
                    prior_in_flight: 10,
                    in_flight: 9,
                    total_delivered: delivered,
                    delivered_time: t,
                    ..RateSample::default()
                },
            };
            b.cong_control(10.0, &s);
            // Packet-timed rounds (bbr_update_round_start): the first ACK starts one (its
            // sample's prior_delivered 0 reaches next_rtt_delivered 0); then each ACK whose
            // sample's segment was sent after the round began, here ACK 10 m + 1, ends the
            // previous round. Alpha then takes the CE fraction of the ACKs since the last
            // update, this one included (its ECE is counted before cong_control).
            eces.push(j < f);
            if delivered % 10 == 1 {
                let n = eces.len() - last;
                let ce = eces[last..].iter().filter(|&&e| e).count();
                expect = (1.0 - 1.0 / 16.0) * expect + ce as f64 / n as f64 / 16.0;
                last = eces.len();
            }
        }
        assert!(
            (b.ecn_alpha - expect).abs() < 1e-12,
            "round {k}: {} vs {expect}",
            b.ecn_alpha
        );
    }
}

#[test]
fn loss_outside_probing_cuts_bw_lo_and_inflight_lo_and_refill_resets_them() {
    // Drop one packet in 10 arriving while CRUISE (10% loss, outside probing), deep buffer.
    let mut p = Path::new(RATE, RTT, 10_000);
    p.drop_every = Some((10, Phase::Cruise));
    p.run(12 * NS_PER_SEC);
    let tr = &p.trace;
    // bbr_adapt_lower_bounds: in CRUISE, after a loss round, inflight_lo and bw_lo are set
    // (from infinity) and cut, never below the latest round's delivery; the window is
    // bounded by inflight_lo.
    let cut = tr
        .iter()
        .position(|r| {
            r.mode == Mode::ProbeBw && r.phase == Phase::Cruise && r.inflight_lo != u32::MAX
        })
        .expect("a lower bound set in CRUISE");
    assert!(tr[cut].bw_lo.is_finite());
    // 0.7 x cwnd at most, plus the latest round's delivered (a floor) which is at most a
    // BDP and a half.
    assert!(tr[cut].inflight_lo <= (0.7 * tr[cut - 1].cwnd).ceil() as u32 + 62);
    assert!(tr[cut].cwnd <= tr[cut].inflight_lo.max(CWND_MIN) as f64);
    // Each later loss round in CRUISE cuts it again by 0.7 or to the latest delivery.
    let mut lo = tr[cut].inflight_lo;
    for r in &tr[cut..] {
        if r.mode != Mode::ProbeBw || r.phase != Phase::Cruise {
            break;
        }
        assert!(r.inflight_lo <= lo, "inflight_lo only falls in CRUISE");
        lo = r.inflight_lo;
    }
    // bbr_start_bw_probe_refill: REFILL resets both (bbr_reset_lower_bounds).
    let refill = cut
        + tr[cut..]
            .iter()
            .position(|r| r.mode == Mode::ProbeBw && r.phase == Phase::Refill)
            .expect("a REFILL");
    assert_eq!(tr[refill].inflight_lo, u32::MAX);
    assert!(tr[refill].bw_lo.is_infinite());
    // The bounds stay reset while probing (REFILL, UP: bbr_is_probing_bandwidth).
    for r in &tr[refill..] {
        if r.mode != Mode::ProbeBw || !matches!(r.phase, Phase::Refill | Phase::Up) {
            break;
        }
        assert_eq!(r.inflight_lo, u32::MAX);
    }
}

#[test]
fn bad_rate_samples_leave_the_model_alone() {
    // An ACK with no valid sample (interval -1) moves no round, no filter.
    let mut b = Bbr3::default();
    let s = AckSample {
        now: MS,
        ..AckSample::default()
    };
    let w = b.cong_control(10.0, &s);
    assert_eq!(b.rtt_cnt, 0);
    assert_eq!(b.max_bw(), 0.0);
    assert_eq!(b.mode, Mode::Startup);
    assert_eq!(w, 10.0);
}
