//! BBR v1's state machine on a one-flow path whose behaviour is known by hand: a sender
//! (SACK recovery, pacing on as BBR asks) and a receiver joined by a bottleneck of fixed
//! rate, a FIFO buffer and fixed propagation delays. A segment entering the bottleneck at `a`
//! leaves at max(a, previous departure) + one transmission time, or is dropped when the
//! buffer is full; its ACK reaches the sender one base RTT after it left. The tests compare the
//! controller's trajectory with tcp_bbr.c's rules (named in each test) and with the path's
//! true rate and RTT.

use super::*;
use crate::config::{RecoveryKind, TcpConfig, TcpVariant};
use crate::packet::Packet;
use crate::tcp::{Receiver, Sender};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const MS: Time = 1_000_000;

/// The path and what the test records.
struct Path {
    s: Sender,
    r: Receiver,
    now: Time,
    /// Transmission time of one segment at the bottleneck, ns.
    tx: Time,
    /// Base RTT (propagation both ways, without the transmission time), ns.
    prop_rtt: Time,
    /// Bottleneck buffer, packets (queued, not counting the one in service).
    buffer: usize,
    /// Departure times of the packets at the bottleneck not yet gone.
    queue: VecDeque<Time>,
    /// ACK arrivals: (time, order, segment).
    acks: BinaryHeap<Reverse<(Time, u64, PacketKey)>>,
    order: u64,
    drops: u64,
    /// After every ACK.
    trace: Vec<Row>,
    /// (rtt_cnt, max bw, full_bw_reached) at each round start.
    rounds: Vec<(u64, f64, bool)>,
    /// On each ACK that started a recovery: (segments it sent, segments it delivered).
    entries: Vec<(usize, u64)>,
}

/// (time, mode, cwnd, in flight, max bw, min RTT, in recovery) after an ACK.
type Row = (Time, Mode, f64, u32, f64, Option<Time>, bool);

/// A data segment kept in the heap (ordered by time and order only).
#[derive(Clone, Debug)]
struct PacketKey(Packet);
impl PartialEq for PacketKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PacketKey {}
impl PartialOrd for PacketKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for PacketKey {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn bbr_cfg(recovery: RecoveryKind) -> TcpConfig {
    TcpConfig {
        variant: TcpVariant::Sack,
        cc: Some("bbr".into()),
        recovery: Some(recovery),
        rwnd_segments: 100_000,
        ..crate::topo::default_tcp()
    }
}

impl Path {
    /// Rate in segments per second, base RTT, buffer in packets.
    fn new(seg_per_s: u64, prop_rtt: Time, buffer: usize) -> Self {
        Self::with(seg_per_s, prop_rtt, buffer, RecoveryKind::Sack)
    }

    /// The same with another loss recovery.
    fn with(seg_per_s: u64, prop_rtt: Time, buffer: usize, recovery: RecoveryKind) -> Self {
        Self::of(bbr_cfg(recovery), seg_per_s, prop_rtt, buffer)
    }

    /// The same with the sender's configuration `c`.
    fn of(c: TcpConfig, seg_per_s: u64, prop_rtt: Time, buffer: usize) -> Self {
        let s = Sender::new(&c, None, None);
        assert!(s.pacer.on, "BBR turns pacing on");
        Path {
            s,
            r: Receiver::new(&c),
            now: 0,
            tx: NS_PER_SEC / seg_per_s,
            prop_rtt,
            buffer,
            queue: VecDeque::new(),
            acks: BinaryHeap::new(),
            order: 0,
            drops: 0,
            trace: Vec::new(),
            rounds: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Segments delivered so far (the rate state's count).
    fn delivered(&self) -> u64 {
        self.s.rate.as_ref().map_or(0, |r| r.delivered)
    }

    fn bbr(&self) -> &Bbr {
        let p = self.s.cc.as_any().expect("BBR offers its state");
        p.downcast_ref::<Bbr>().expect("a BBR sender")
    }

    /// Segments into the bottleneck.
    fn enter(&mut self, out: Vec<Packet>) {
        for p in out {
            while self.queue.front().is_some_and(|&d| d <= self.now) {
                self.queue.pop_front();
            }
            if self.queue.len() > self.buffer {
                self.drops += 1;
                continue;
            }
            let start = self.queue.back().copied().unwrap_or(0).max(self.now);
            let dep = start + self.tx;
            self.queue.push_back(dep);
            self.order += 1;
            self.acks
                .push(Reverse((dep + self.prop_rtt, self.order, PacketKey(p))));
        }
    }

    /// Runs until `end`.
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
                let Reverse((_, _, PacketKey(p))) = self.acks.pop().expect("peeked");
                // The receiver gets it half a base RTT earlier; only the order matters.
                if let Some(a) = self.r.on_data(&p, t, true) {
                    let before = self.bbr().rtt_cnt;
                    let (was_in, delivered) = (self.s.in_recovery, self.delivered());
                    self.s.on_ack(&a, t, &mut out);
                    if self.s.in_recovery && !was_in {
                        let d = self.delivered() - delivered;
                        self.entries.push((out.len(), d));
                    }
                    let b = self.bbr();
                    if b.rtt_cnt != before {
                        let r = (b.rtt_cnt, b.max_bw(), b.full_bw_reached);
                        self.rounds.push(r);
                    }
                    let b = self.bbr();
                    let flight = self.s.rate.as_ref().map_or(0, |r| r.in_flight);
                    let row = (
                        t,
                        b.mode,
                        self.s.cwnd,
                        flight,
                        b.max_bw(),
                        b.min_rtt,
                        self.s.in_recovery,
                    );
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
}

/// 10 ms of transmission per 10 segments: 1000 segments/s (12 Mb/s of 1500-byte packets),
/// base RTT 40 ms: BDP = 40 segments.
const RATE: u64 = 1000;
const RTT: Time = 40 * MS;

#[test]
fn startup_ends_three_rounds_after_growth_stops_and_estimates_the_path() {
    let mut p = Path::new(RATE, RTT, 1000);
    p.run(3 * NS_PER_SEC);
    // tcp_bbr.c bbr_check_full_bw_reached, recomputed from the trace of round starts: the
    // round where full_bw_reached flips is the 3rd in a row whose max bw stayed below 1.25 x
    // the last round's reference (full_bw), and no earlier round satisfied that.
    let mut full_bw = 0.0;
    let mut cnt = 0;
    let mut expect_flip = None;
    for (i, &(_, bw, _)) in p.rounds.iter().enumerate() {
        if bw >= full_bw * FULL_BW_THRESH {
            full_bw = bw;
            cnt = 0;
        } else {
            cnt += 1;
            if cnt == FULL_BW_CNT {
                expect_flip = Some(i);
                break;
            }
        }
    }
    let flip = p.rounds.iter().position(|r| r.2);
    assert!(expect_flip.is_some(), "rounds: {:?}", &p.rounds[..10]);
    assert_eq!(flip, expect_flip, "rounds: {:?}", p.rounds);
    // The estimate is the bottleneck's rate (1 segment per ms) within 2%.
    let bw = p.bbr().max_bw() * NS_PER_SEC as f64;
    assert!(
        (bw - RATE as f64).abs() <= 0.02 * RATE as f64,
        "max bw {bw}"
    );
    // min RTT: the propagation RTT plus one transmission time (41 ms) exactly.
    assert_eq!(p.bbr().min_rtt, Some(RTT + NS_PER_SEC / RATE));
    // The mode sequence: STARTUP, DRAIN, then PROBE_BW; DRAIN ends once inflight <=
    // bbr_inflight(bw, 1) (BDP 41 + quantization budget 3 x 2 = 47, rounded to even).
    let modes: Vec<Mode> = p.trace.iter().map(|r| r.1).collect();
    let first = |m: Mode| modes.iter().position(|&x| x == m);
    let (d, b) = (first(Mode::Drain).unwrap(), first(Mode::ProbeBw).unwrap());
    assert!(first(Mode::Startup) == Some(0) && d < b);
    // At DRAIN's end the max bw is the link's within 2%: BDP = ceil(bw x 41 ms) is 41 or 42,
    // + 3 x TSO goal 2 (pacing below 1024 segments/s), rounded up to even: 48.
    let drain_target = 48;
    // The rule counts what will still be in the network when the next paced segment leaves
    // (bbr_packets_in_net_at_edt): in flight less bw x the wait, at most one DRAIN pacing slot
    // (1 / (0.34 x 1000 /s) < 3 ms: 3 segments).
    let (at, before) = (p.trace[b].3, p.trace[b - 1].3);
    assert!(at <= drain_target + 3, "in flight at DRAIN's end {at}");
    assert!(
        before + 3 > drain_target,
        "DRAIN lasted until inflight fell to 48: {before}"
    );
    assert_eq!(p.drops, 0);
}

#[test]
fn probe_bw_cycles_the_gains_one_min_rtt_each() {
    let mut p = Path::new(RATE, RTT, 1000);
    p.run(2 * NS_PER_SEC);
    // Record the phase changes from now on.
    let mut phases: Vec<(Time, usize)> = Vec::new();
    let mut last = p.bbr().cycle_idx;
    let step = 5 * MS;
    let mut t = p.now;
    while t < 5 * NS_PER_SEC {
        t += step;
        p.run(t);
        let i = p.bbr().cycle_idx;
        if i != last {
            phases.push((p.now, i));
            last = i;
        }
    }
    assert_eq!(p.bbr().mode, Mode::ProbeBw);
    // The phases follow the cycle order (each index the previous + 1 mod 8).
    for w in phases.windows(2) {
        assert_eq!(w[1].1, (w[0].1 + 1) % 8, "{phases:?}");
    }
    // A phase of gain 1 lasts one min RTT (41 ms) plus at most the 5 ms sampling step and
    // one ACK gap; the 3/4 phase may end early (inflight at BDP).
    for w in phases.windows(2) {
        let len = w[1].0 - w[0].0;
        let gain = PACING_GAIN[w[0].1];
        if gain == 1.0 {
            assert!(
                len >= 41 * MS - step && len <= 41 * MS + step + MS,
                "{len} {w:?}"
            );
        }
    }
    // Link fully used and the queue bounded: the steady window is 2 BDP + budget at most.
    let w = p.s.cwnd;
    assert!(w <= (2 * 41 + 6 + 2 + 2) as f64 + 41.0, "cwnd {w}");
}

#[test]
fn probe_rtt_every_10_s_for_200_ms_at_4_packets() {
    let mut p = Path::new(RATE, RTT, 1000);
    p.run(12 * NS_PER_SEC);
    let tr = &p.trace;
    let enter = tr
        .iter()
        .position(|r| r.1 == Mode::ProbeRtt)
        .expect("PROBE_RTT happens");
    let stamp = p
        .trace
        .iter()
        .find(|r| r.5 == p.bbr().min_rtt)
        .map(|r| r.0)
        .unwrap();
    let leave = enter
        + tr[enter..]
            .iter()
            .position(|r| r.1 != Mode::ProbeRtt)
            .unwrap();
    // Entry: the first ACK after the min RTT is 10 s old (min RTT stamped at `stamp`; it is
    // never beaten, the path's RTT never falls below 41 ms).
    let t_enter = tr[enter].0;
    assert!(t_enter > stamp + MIN_RTT_WIN && t_enter <= stamp + MIN_RTT_WIN + 2 * MS);
    // cwnd 4 throughout.
    assert!(tr[enter..leave].iter().all(|r| r.2 <= 4.0));
    // Leaves 200 ms after inflight first reached 4, and after a round at 4 (a round is 41
    // ms, shorter than 200 ms: the 200 ms bind), at the first ACK after that.
    let at4 = enter + tr[enter..].iter().position(|r| r.3 <= 4).unwrap();
    let dur = tr[leave].0 - tr[at4].0;
    assert!(
        dur > PROBE_RTT_TIME && dur <= PROBE_RTT_TIME + 42 * MS,
        "{dur}"
    );
    // Back to PROBE_BW with the saved window restored.
    assert_eq!(tr[leave].1, Mode::ProbeBw);
    assert!(
        tr[leave].2 >= tr[enter - 1].2,
        "{} < {}",
        tr[leave].2,
        tr[enter - 1].2
    );
    // The min RTT filter restarted at the exit: the next PROBE_RTT is 10 s later (beyond
    // this run).
    assert_eq!(p.bbr().min_rtt_stamp, tr[leave].0);
}

#[test]
fn loss_recovery_conserves_packets_then_restores() {
    // A buffer of 20 packets (half a BDP): STARTUP overflows it.
    let mut p = Path::new(RATE, RTT, 20);
    p.run(3 * NS_PER_SEC);
    assert!(p.drops > 0);
    let tr = &p.trace;
    let enter = tr.iter().position(|r| r.6).expect("a recovery");
    // bbr_set_cwnd_to_recover_or_restore: first ACK in recovery: cwnd = inflight + acked,
    // where inflight excludes segments marked lost.
    let (w, flight) = (tr[enter].2, tr[enter].3);
    assert!(
        w >= flight as f64 && w <= flight as f64 + 2.0,
        "{w} {flight}"
    );
    // It completes, and the flow keeps the link busy afterwards: all segments retransmitted.
    // PROBE_BW's window (2 BDP + budget = 90) exceeds BDP + buffer (61): retransmissions are
    // lost too, which RFC 6675 recovery detects only by a timeout (Linux's RACK would find them
    // sooner). After the timeout (the Loss state, cwnd from 1), its end restores the saved
    // window: cwnd jumps back to prior_cwnd, capped by the target 2 BDP + budget (88-90).
    let st = &p.s.stats;
    assert!(st.timeouts <= 2, "timeouts {}", st.timeouts);
    if st.timeouts > 0 {
        let prior = (p.bbr().prior_cwnd as f64).min(88.0);
        let restored = tr
            .windows(2)
            .any(|w| w[1].2 >= prior && w[1].2 - w[0].2 > 10.0);
        assert!(restored, "no restore to {prior}");
    }
    let delivered = p.s.rate.as_ref().unwrap().delivered;
    let secs = 3.0;
    assert!(delivered as f64 >= 0.8 * RATE as f64 * secs, "{delivered}");
}

/// The same overflow under RACK-TLP (`recovery = "rack"`, Linux's default): BBR sets the window
/// on every ACK (before it did not run at all under RACK: cwnd stayed at its initial 10), RACK's
/// time-based marks are the sample's losses (Linux's `tp->lost`), and a lost retransmission is
/// found by RACK within a round trip instead of by a timeout.
#[test]
fn rack_recovery_runs_bbr_and_finds_lost_retransmissions() {
    let mut p = Path::with(RATE, RTT, 20, RecoveryKind::Rack);
    p.run(3 * NS_PER_SEC);
    assert!(p.drops > 0);
    let tr = &p.trace;
    // BBR's own window: STARTUP grows it well past the initial 10 (2.89 BDP = 116 at most).
    let top = tr.iter().map(|r| r.2).fold(0.0, f64::max);
    assert!(top > 40.0, "cwnd never above {top}");
    assert!(p.bbr().full_bw_reached, "STARTUP found the pipe full");
    // Recovery entered, with packet conservation on its first ACK: cwnd = inflight + acked.
    let enter = tr.iter().position(|r| r.6).expect("a recovery");
    let (w, flight) = (tr[enter].2, tr[enter].3);
    assert!(
        w >= flight as f64 && w <= flight as f64 + 2.0,
        "{w} {flight}"
    );
    // Every mark reached the rate state: the lost count covers the drops that were
    // retransmitted, and no timeout was needed to find the lost retransmissions.
    let rate = p.s.rate.as_ref().unwrap();
    assert!(
        rate.lost >= p.s.stats.retransmits.min(p.drops) / 2,
        "lost {}",
        rate.lost
    );
    assert_eq!(p.s.stats.timeouts, 0);
    let delivered = rate.delivered;
    assert!(delivered as f64 >= 0.9 * RATE as f64 * 3.0, "{delivered}");
}

/// Linux's tcp_ack on the ACK that starts recovery: tcp_fastretrans_alert marks the losses,
/// tcp_cong_control sets BBR's window (packet conservation: in flight + delivered), and only
/// then tcp_xmit_recovery sends. So that ACK sends no more than it delivered, never on the
/// window from before the loss; with GSO (bursts of 2 at this rate) the old order sent a
/// burst of 2 on a single delivered segment. The same overflow as above, seconds 0-3, with
/// RACK-TLP.
#[test]
fn the_ack_that_starts_recovery_sends_no_more_than_it_delivered() {
    let mut c = bbr_cfg(RecoveryKind::Rack);
    c.gso = true;
    let mut p = Path::of(c, RATE, RTT, 20);
    p.run(3 * NS_PER_SEC);
    assert!(!p.entries.is_empty());
    for &(sent, delivered) in &p.entries {
        assert!(sent as u64 <= delivered, "{:?}", p.entries);
    }
}

#[test]
fn max_filter_keeps_the_best_within_the_window() {
    // Hand-worked: window 10 rounds.
    let mut f = MaxFilter::default();
    f.update(10, 0, 5.0);
    assert_eq!(f.get(), 5.0);
    f.update(10, 3, 3.0); // lower: kept as 2nd/3rd best
    assert_eq!(f.get(), 5.0);
    f.update(10, 10, 4.0);
    assert_eq!(
        f.get(),
        5.0,
        "5 from round 0 is still in the 10-round window"
    );
    f.update(10, 11, 2.0);
    // Round 11: 5 (round 0) has expired; the best of rounds 1-11 is 4 (round 10).
    assert_eq!(f.get(), 4.0);
    f.update(10, 12, 6.0);
    assert_eq!(f.get(), 6.0, "a new max replaces all");
}

#[test]
fn pacing_rate_is_gain_times_bw_less_1_percent() {
    let mut p = Path::new(RATE, RTT, 1000);
    p.run(3 * NS_PER_SEC);
    let b = p.bbr();
    let want = b.max_bw() * NS_PER_SEC as f64 * b.pacing_gain * 0.99;
    assert!((b.pacing_rate - want).abs() < 1e-6 * want);
    // Before any ACK: high_gain x 10 segments / 1 ms (bbr_init_pacing_rate_from_rtt).
    let fresh = Bbr::default();
    assert!((fresh.pacing_rate - 739.0 / 256.0 * 10_000.0 * 0.99).abs() < 1e-6);
}

// ns-3.44's departures (`cc = "bbr-ns3"`, Ns3Model): each rule on one hand-built ACK, under
// Linux's rule and ns-3's, the numbers worked by hand from tcp_bbr.c and ns-3.44's
// tcp-bbr.cc / tcp-socket-base.cc (line numbers in bbr.rs).

/// 1 segment per ms.
const BW: f64 = 1e-6;

/// A flow in PROBE_BW at phase `idx` (gain 1 from 2 on) with max bw [`BW`], min RTT 40 ms
/// stamped at 1 s, a current round that began at delivered = 800, pacing at 1000 segments/s
/// (TSO goal 2), without ACK aggregation so far.
fn probe_bw(m: Ns3Model, idx: usize) -> Bbr {
    let mut b = Bbr::ns3_44(m);
    b.mode = Mode::ProbeBw;
    b.full_bw_reached = true;
    b.cycle_idx = idx;
    b.pacing_gain = PACING_GAIN[idx];
    b.cwnd_gain = CWND_GAIN;
    b.bw.reset(0, BW);
    b.min_rtt = Some(40 * MS);
    b.min_rtt_stamp = NS_PER_SEC;
    b.cycle_stamp = NS_PER_SEC;
    b.next_rtt_delivered = 800;
    b.pacing_rate = 1000.0;
    b.has_seen_rtt = true;
    b
}

/// An ACK at `now` of `acked` segments with `losses` marked, leaving `in_flight`; the
/// delivered totals before the sample's segment was sent and after the ACK.
fn ack(now: Time, acked: u32, losses: u32, in_flight: u32, prior: u64, total: u64) -> AckSample {
    let mut s = AckSample {
        now,
        ..Default::default()
    };
    s.rate.acked_sacked = acked;
    s.rate.losses = losses;
    s.rate.in_flight = in_flight;
    s.rate.prior_in_flight = in_flight + acked;
    s.rate.prior_delivered = prior;
    s.rate.total_delivered = total;
    s.rate.delivered = (total - prior) as i64;
    // A rate below the max bw (the filter keeps BW): (total - prior) segments over 1 s.
    s.rate.interval_ns = NS_PER_SEC as i64;
    s.rate.delivered_time = now;
    s.rate.rtt_ns = -1;
    s.snd_una = 1;
    s
}

#[test]
fn ns3_recovery_entry_keeps_the_current_round() {
    let t = NS_PER_SEC + MS;
    for (m, next_round, second_cwnd) in [
        // Linux: a round starts at entry (next_rtt_delivered = 900); the second ACK's segment
        // was sent at delivered 850, before it: still in packet conservation, cwnd =
        // max(62, 55 + 2) = 62.
        (Ns3Model::default(), 900, 62.0),
        // ns-3: the round that began at 800 goes on; the second ACK's segment (850) ends it,
        // conservation with it: cwnd grows, min(62 + 2, 2 x 40 + 3) = 64.
        (Ns3Model::parse("entry+quanta").unwrap(), 800, 64.0),
    ] {
        let mut b = probe_bw(m, 3);
        // Entering recovery: 60 in flight, 2 ACKed, 1 marked lost. Linux: 60 + 2 = 62; ns-3:
        // 60 + max(2, 1) = 62, less the loss, 61, then conservation max(61, 60 + 2) = 62.
        let mut s = ack(t, 2, 1, 60, 790, 900);
        s.rate.in_recovery = true;
        assert_eq!(b.cong_control(70.0, &s), 62.0, "{m:?}");
        assert!(b.packet_conservation);
        assert_eq!(b.next_rtt_delivered, next_round, "{m:?}");
        let mut s = ack(t + MS, 2, 0, 55, 850, 902);
        s.rate.in_recovery = true;
        assert_eq!(b.cong_control(62.0, &s), second_cwnd, "{m:?}");
    }
}

#[test]
fn ns3_losses_and_conservation_only_in_recovery() {
    let t = NS_PER_SEC + MS;
    // After a timeout (cwnd 10, the Loss state), an ACK of 1 segment that marks 3 lost.
    for (m, want) in [
        // Linux: 10 - 3 = 7, then min(7 + 1, target) = 8.
        (Ns3Model::default(), 8.0),
        // ns-3: CongControl in CA_LOSS takes no losses off: min(10 + 1, 83) = 11.
        (Ns3Model::parse("losses+quanta").unwrap(), 11.0),
    ] {
        let mut b = probe_bw(m, 3);
        b.on_timeout();
        let mut s = ack(t, 1, 3, 5, 850, 900);
        s.rate.high_data = 100;
        assert_eq!(b.cong_control(10.0, &s), want, "{m:?}");
    }
}

#[test]
fn ns3_losses_are_the_change_of_the_lost_count_either_way() {
    let t = NS_PER_SEC + MS;
    // In recovery after packet conservation (cwnd 50): an ACK delivers 2 segments, one of
    // them a retransmission of a segment marked lost, and marks `marked` new ones lost.
    for (marked, m, want) in [
        // Linux: rs->losses = 0 (tp->lost only grows): min(50 + 2, 2 x 40 + 3 x 2 = 86) = 52.
        (0, Ns3Model::parse("losses+quanta").unwrap(), 52.0),
        // ns-3: the lost count falls by 1, |0 - 1| = 1 comes off: min(49 + 2, 83) = 51.
        (0, Ns3Model::parse("lostout+losses+quanta").unwrap(), 51.0),
        // 3 marked, 1 repaired. Linux: 50 - 3 = 47, min(47 + 2, 86) = 49.
        (3, Ns3Model::parse("losses+quanta").unwrap(), 49.0),
        // ns-3: |3 - 1| = 2: min(48 + 2, 83) = 50.
        (3, Ns3Model::parse("lostout+losses+quanta").unwrap(), 50.0),
    ] {
        let mut b = probe_bw(m, 3);
        b.prev_ca_state = CaState::Recovery;
        let mut s = ack(t, 2, marked, 45, 850, 902);
        s.rate.repaired = 1;
        s.rate.in_recovery = true;
        s.rate.high_data = 1000;
        assert!(!b.packet_conservation);
        assert_eq!(b.cong_control(50.0, &s), want, "marked {marked}, {m:?}");
    }
}

#[test]
fn ns3_restores_only_after_recovery_then_takes_ssthresh() {
    let t = NS_PER_SEC + MS;
    // Leaving the Loss state (snd_una reaches the timeout's high data): saved window 70.
    for (m, want) in [
        // Linux: max(10, 70) = 70, then min(70 + 1, 2 x 40 + 3 x 2 rounded even = 86) = 71.
        (Ns3Model::default(), 71.0),
        // ns-3: no CA_EVENT_COMPLETE_CWR after CA_LOSS: min(10 + 1, 83) = 11.
        (Ns3Model::parse("restore+quanta").unwrap(), 11.0),
    ] {
        let mut b = probe_bw(m, 3);
        b.prior_cwnd = 70;
        b.on_timeout();
        let mut s = ack(t, 1, 0, 5, 850, 900);
        s.rate.high_data = 100;
        b.cong_control(10.0, &s);
        let mut s = ack(t + MS, 1, 0, 5, 850, 901);
        s.snd_una = 100;
        assert_eq!(b.cong_control(10.0, &s), want, "{m:?}");
        assert_eq!(b.prev_ca_state, CaState::Open);
    }
    // Leaving recovery (cwnd 62, saved 70; ns-3's ssthresh 43 = BDP 40 + 3 from DRAIN).
    for (m, want) in [
        // Linux: max(62, 70) = 70, then min(70 + 2, 86) = 72.
        (Ns3Model::default(), 72.0),
        // ns-3 restores the same (COMPLETE_CWR)...
        (Ns3Model::parse("restore+quanta").unwrap(), 72.0),
        // ... then the socket sets cwnd = ssthresh = 43: min(43 + 2, 83) = 45.
        (Ns3Model::parse("restore+exit+quanta").unwrap(), 45.0),
    ] {
        let mut b = probe_bw(m, 3);
        b.prior_cwnd = 70;
        b.ns3_ssthresh = 43;
        b.prev_ca_state = CaState::Recovery;
        let s = ack(t, 2, 0, 50, 850, 900);
        assert_eq!(b.cong_control(62.0, &s), want, "{m:?}");
    }
}

#[test]
fn ns3_ssthresh_is_set_when_startup_ends_and_else_wraps() {
    let t = NS_PER_SEC + MS;
    let m = Ns3Model::parse("exit+quanta").unwrap();
    // Leaving recovery in STARTUP before any DRAIN: ssthresh is ns-3's initial UINT32_MAX
    // bytes, and BBR's STARTUP keeps that window (cwnd >= target: no growth).
    let mut b = probe_bw(m, 3);
    b.mode = Mode::Startup;
    b.full_bw_reached = false;
    b.full_bw = 10.0; // no growth check can end STARTUP here
    b.prev_ca_state = CaState::Recovery;
    let s = ack(t, 2, 0, 50, 850, 900);
    assert_eq!(b.cong_control(62.0, &s), NS3_NO_SSTHRESH as f64);
    // Once the pipe is full, UINT32_MAX + 2 x 1460 bytes wraps to 2919 bytes: below 4 segments,
    // so cwnd = 4 (tcp-bbr.cc l. 589, 595).
    b.full_bw_reached = true;
    let s = ack(t + MS, 2, 0, 50, 850, 902);
    assert_eq!(b.cong_control(NS3_NO_SSTHRESH as f64, &s), 4.0);
    // STARTUP's end sets ssthresh = InFlight(1) = 40 + 3 (tcp-bbr.cc l. 348).
    assert_eq!(b.mode, Mode::Drain);
    assert_eq!(b.ns3_ssthresh, 43);
}

#[test]
fn ns3_quantization_budget_is_three_segments_below_the_byte_bdp() {
    // BDP 40.25 segments: Linux rounds up (41) and adds 3 x TSO goal 2, even: 48 (50 in the
    // 5/4 phase); ns-3 whole segments below (40) + 3 = 43 (45 in the 5/4 phase).
    for (m, one, probe) in [
        (Ns3Model::default(), 48, 50),
        (Ns3Model::parse("quanta").unwrap(), 43, 45),
    ] {
        let mut b = probe_bw(m, 3);
        b.min_rtt = Some(40_250_000);
        assert_eq!(b.inflight(BW, 1.0), one, "{m:?}");
        b.cycle_idx = 0;
        assert_eq!(b.inflight(BW, 1.0), probe, "{m:?}");
    }
}

#[test]
fn ns3_ack_aggregation_epoch_resets_at_4096_bytes() {
    // ACKs of 2, 2, 10 segments 1 ms apart at 1 segment per ms.
    let acks = [
        (NS_PER_SEC, 2),
        (NS_PER_SEC + MS, 2),
        (NS_PER_SEC + 2 * MS, 10),
    ];
    // Linux: the first ACK starts an epoch (0 <= expected); then expected 1, 2 segments at 1
    // and 2 ms: extra 4 - 1 = 3, then 14 - 2 = 12.
    let mut b = probe_bw(Ns3Model::default(), 3);
    let mut got = Vec::new();
    for (t, a) in acks {
        let s = ack(t, a, 0, 50, 850, 900);
        b.ack_agg
            .update(&s.rate, false, EXTRA_ACKED_WIN_RTTS, BW, 100);
        got.push(b.ack_agg.extra_acked[0]);
    }
    assert_eq!(got, [2, 3, 12]);
    // ns-3: the epoch ends once it would reach 3 segments (4,096 bytes), and within its first
    // second nothing is expected: 2, then 2 + 2 >= 3: a new epoch, 2; then 10.
    let mut b = probe_bw(Ns3Model::parse("ackagg").unwrap(), 3);
    let mut got = Vec::new();
    for (t, a) in acks {
        b.ns3_update_ack_aggregation(&ack(t, a, 0, 50, 850, 900), 100);
        got.push(b.ack_agg.extra_acked[0]);
    }
    assert_eq!(got, [2, 2, 10]);
}

#[test]
fn ack_aggregation_skips_a_sample_below_min_rtt_in_linux_not_in_ns3() {
    // One ACK of 5 segments whose interval fell below the min RTT: tcp_rate_gen (and ns-3's
    // GenerateSample) keep delivered = 5 and mark the interval invalid (-1 here, ns-3's 0).
    // Linux's bbr_update_ack_aggregation returns on `rs->interval_us <= 0`; ns-3's
    // UpdateAckAggregation (tcp-bbr.cc l. 502) tests only `m_delivered < 0` and counts it:
    // the epoch's first ACK, nothing expected yet, extra = 5.
    let mut s = ack(NS_PER_SEC, 5, 0, 50, 895, 900);
    s.rate.interval_ns = -1;
    let mut b = probe_bw(Ns3Model::default(), 3);
    b.ack_agg
        .update(&s.rate, false, EXTRA_ACKED_WIN_RTTS, BW, 100);
    assert_eq!(b.ack_agg.extra_acked[0], 0);
    let mut b = probe_bw(Ns3Model::parse("ackagg").unwrap(), 3);
    b.ns3_update_ack_aggregation(&s, 100);
    assert_eq!(b.ack_agg.extra_acked[0], 5);
    // No sample segment at all (delivered -1): neither counts.
    s.rate.delivered = -1;
    let mut b = probe_bw(Ns3Model::parse("ackagg").unwrap(), 3);
    b.ns3_update_ack_aggregation(&s, 100);
    assert_eq!(b.ack_agg.extra_acked[0], 0);
}

#[test]
fn ns3_gain_cycle_runs_on_simulation_time() {
    // Phase of gain 1 begun at 1 s; min RTT 40 ms. An ACK at 1.042 s whose latest delivery
    // is stamped 1.037 s: 37 ms of delivered time (Linux stays), 42 ms of simulation time
    // (ns-3 moves to the next phase).
    for (m, idx) in [
        (Ns3Model::default(), 3),
        (Ns3Model::parse("clock").unwrap(), 4),
    ] {
        let mut b = probe_bw(m, 3);
        let mut s = ack(NS_PER_SEC + 42 * MS, 2, 0, 50, 850, 900);
        s.rate.delivered_time = NS_PER_SEC + 37 * MS;
        b.cong_control(86.0, &s);
        assert_eq!(b.cycle_idx, idx, "{m:?}");
    }
}

#[test]
fn ns3_min_rtt_is_refreshed_by_an_equal_or_stale_sample() {
    // Min RTT 40 ms stamped at 1 s; at 2 s an ACK with a 40 ms sample, at 3 s one without.
    for (m, stamps) in [
        (Ns3Model::default(), [NS_PER_SEC, NS_PER_SEC]),
        (
            Ns3Model::parse("minrtt").unwrap(),
            [2 * NS_PER_SEC, 3 * NS_PER_SEC],
        ),
    ] {
        let mut b = probe_bw(m, 3);
        let mut s = ack(2 * NS_PER_SEC, 2, 0, 50, 850, 900);
        s.rate.rtt_ns = (40 * MS) as i64;
        b.cong_control(86.0, &s);
        assert_eq!(b.min_rtt_stamp, stamps[0], "{m:?}");
        b.cong_control(86.0, &ack(3 * NS_PER_SEC, 2, 0, 50, 850, 902));
        assert_eq!(b.min_rtt_stamp, stamps[1], "{m:?}");
        assert_eq!(b.min_rtt, Some(40 * MS));
    }
}

#[test]
fn ns3_gains_are_2_89() {
    let mut b = Bbr::ns3_44(Ns3Model::parse("gain").unwrap());
    assert_eq!((b.pacing_gain, b.cwnd_gain), (2.89, 2.89));
    b.mode = Mode::Drain;
    b.update_gains();
    assert_eq!((b.pacing_gain, b.cwnd_gain), (1.0 / 2.89, 2.89));
    assert_eq!(Bbr::default().high_gain(), 739.0 / 256.0);
}

#[test]
fn ns3_names_parse_and_build() {
    assert_eq!(Ns3Model::parse("entry+exit").unwrap(), {
        let mut m = Ns3Model::default();
        (m.entry, m.exit) = (true, true);
        m
    });
    assert!(Ns3Model::parse("entry+nope").is_err());
    let all = crate::tcp::cc::build("bbr-ns3").unwrap();
    assert_eq!(all.name(), "bbr-ns3");
    let one = crate::tcp::cc::build("bbr-ns3:gain").unwrap();
    assert_eq!(one.name(), "bbr-ns3");
    assert!(crate::tcp::cc::build("bbr-ns3:").is_err());
}

/// The whole ns-3 model over the overflowing 20-packet buffer: it recovers, and carries the
/// link as Linux's model does (at least 80% of 3 s at 1000 segments/s).
#[test]
fn ns3_model_recovers_from_overflow() {
    let mut p = Path::new(RATE, RTT, 20);
    p.s.cc = Box::new(Bbr::ns3_44(Ns3Model::ALL));
    p.run(3 * NS_PER_SEC);
    assert!(p.drops > 0 && p.trace.iter().any(|r| r.6));
    let delivered = p.s.rate.as_ref().unwrap().delivered;
    assert!(delivered as f64 >= 0.8 * RATE as f64 * 3.0, "{delivered}");
}

#[test]
fn ns3_rtt_sample_is_the_timestamp_echo_in_whole_ms() {
    // An ACK at 1.0415 s echoing a segment sent at 0.9995 s (42 ms earlier: the first of a
    // delayed-ACK pair). ns-3's millisecond clock: 1041 - 999 = 42 ms; one sent at 1.0405 s
    // (1 ms earlier): 1041 - 1040 = 1 ms; at 1.0412 s, the same tick: under 1 ms, 1 us.
    let now = NS_PER_SEC + 41 * MS + MS / 2;
    for (rtt, want) in [(42 * MS, 42 * MS), (MS, MS), (MS / 4, 1_000)] {
        let mut b = probe_bw(Ns3Model::parse("tsrtt+minrtt").unwrap(), 3);
        b.min_rtt = Some(50 * MS);
        b.on_delay_sample(rtt as f64, now);
        let mut s = ack(now, 2, 0, 50, 850, 900);
        s.rate.rtt_ns = (30 * MS) as i64; // the rate sample's, not used
        b.cong_control(86.0, &s);
        assert_eq!(b.min_rtt, Some(want));
    }
    // Without a new echo (a duplicate ACK) the last sample is kept (minrtt's stale sample).
    let mut b = probe_bw(Ns3Model::parse("tsrtt+minrtt").unwrap(), 3);
    b.on_delay_sample((40 * MS) as f64, now);
    b.cong_control(86.0, &ack(now, 2, 0, 50, 850, 900));
    b.cong_control(86.0, &ack(now + 2 * NS_PER_SEC, 2, 0, 50, 850, 902));
    assert_eq!(b.min_rtt_stamp, now + 2 * NS_PER_SEC);
}

/// After a timeout BBR's window limits the segments in flight, not the span from snd_una: Linux
/// sends while `tcp_packets_in_flight` (packets_out - sacked_out - lost_out + retrans_out) is
/// below cwnd in every state (`tcp_cwnd_test`, `tcp_xmit_retransmit_queue`), ns-3.44 while
/// `BytesInFlight` (sent - SACKed - lost + retransmitted, tcp-tx-buffer.cc l. 1055-1073) is
/// (`AvailableWindow`, tcp-socket-base.cc l. 3570-3575). By hand: segments 100..160 outstanding,
/// 102..150 and 151..160 SACKed (holes 100, 101, 150); the timeout marks the holes lost and
/// resends 100 (cwnd 1). The ACK of 100 (snd_una 101, the same SACK blocks) delivers one
/// segment: BBR's Loss-state window grows by it to 2, raised to its floor of 4
/// (`bbr_cwnd_min_target`), with nothing in flight, so four segments leave: the lost 101 and 150
/// (the SACKed ones between take no room), then the new 160 and 161. The span rule that
/// `Sender::send_allowed` applies to a controller that sets cwnd itself over SACK recovery stops
/// snd_nxt at snd_una + cwnd = 105 and sends only 101, so each hole further than cwnd above
/// snd_una waits a round trip: in `bbr-fq_codel-n10` a Loss state lasts 4-14 RTTs against ns-3's
/// 1-2 (docs/crosscheck-ns3.md s. 1.5). sender.rs takes the in-flight window for BBR over SACK
/// since 2026-11-28; this test fails under the span rule.
#[test]
fn after_a_timeout_bbr_sends_every_hole_the_window_allows() {
    let mut s = Sender::new(&bbr_cfg(RecoveryKind::Sack), None, None);
    s.snd_una = 100;
    s.snd_nxt = 160;
    s.snd_max = 160;
    s.sb.as_mut()
        .expect("SACK sender")
        .apply(&[(102, 150), (151, 160)], 160);
    let mut out = Vec::new();
    s.on_timeout(NS_PER_SEC, &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![100]);
    let mut a = crate::tcp::tests::ack(101, 0);
    a.sack[0] = (102, 150);
    a.sack[1] = (151, 160);
    out.clear();
    s.on_ack(&a, NS_PER_SEC + 50 * MS, &mut out);
    assert_eq!(s.cwnd, 4.0);
    // The pacer may hold the later segments until its clock: let it run.
    let mut t = NS_PER_SEC + 50 * MS;
    while out.len() < 4 {
        let Some(d) = s.pacer.deadline.filter(|&d| d < t + NS_PER_SEC) else {
            break;
        };
        t = d.max(t);
        s.send_paced(t, &mut out);
    }
    assert_eq!(
        out.iter().map(|p| p.seq).collect::<Vec<_>>(),
        vec![101, 150, 160, 161]
    );
}

/// Runs the sender's pacing clock from `t` until it sends nothing more within a second.
fn drain_paced(s: &mut Sender, mut t: Time, out: &mut Vec<Packet>) {
    s.send_paced(t, out);
    while let Some(d) = s.pacer.deadline.filter(|&d| d < t + NS_PER_SEC) {
        let n = out.len();
        t = d.max(t);
        s.send_paced(t, out);
        if out.len() == n && s.pacer.deadline == Some(d) {
            break;
        }
    }
}

/// A BBR sender over SACK recovery named `cc` that has sent its first window at time 0 (the
/// pacer run until it stops), and what it sent.
fn first_window(cc: &str) -> (Sender, Vec<Packet>) {
    let cfg = TcpConfig {
        cc: Some(cc.into()),
        ..bbr_cfg(RecoveryKind::Sack)
    };
    let mut s = Sender::new(&cfg, None, None);
    let mut out = Vec::new();
    drain_paced(&mut s, 0, &mut out);
    (s, out)
}

/// `bbr-ns3:rtxsack` by hand (ns-3.44's TcpTxBuffer: a SACKed retransmission keeps its retrans
/// flag and stays in `BytesInFlight` until the cumulative ACK). Ten segments 0-9 sent, 0 and 2
/// lost: the ACK of 0 with SACK 1, 3-9 marks both lost (8 and 7 SACKed above, DupThresh 3); 0, 2
/// and new segments 10-16 go out. 2's retransmission arrives first (ACK of 0, SACK 1-9), the
/// window is 10 on both: Linux and RFC 6675 count in flight 0's retransmission and 10-16 (8),
/// so 17 and 18 go out (10 in flight); ns-3 counts 2's SACKed retransmission as well (9), so
/// only 17 (10 counted, 9 in the network). The cumulative ACK past them ends the hold.
#[test]
fn ns3_sacked_retransmission_stays_in_flight_until_the_cumulative_ack() {
    let run = |cc: &str| {
        let (mut s, mut out) = first_window(cc);
        assert_eq!(
            out.iter().map(|p| p.seq).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        let mut a = crate::tcp::tests::ack(0, 0);
        a.sack[0] = (3, 10);
        a.sack[1] = (1, 2);
        out.clear();
        s.on_ack(&a, 50 * MS, &mut out);
        drain_paced(&mut s, 50 * MS, &mut out);
        assert_eq!(
            out.iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![0, 2, 10, 11, 12, 13, 14, 15, 16]
        );
        let mut b = crate::tcp::tests::ack(0, 0);
        b.sack[0] = (1, 10);
        out.clear();
        s.on_ack(&b, 100 * MS, &mut out);
        assert_eq!(s.cwnd, 10.0);
        drain_paced(&mut s, 100 * MS, &mut out);
        let after_b: Vec<u32> = out.iter().map(|p| p.seq).collect();
        let in_network = s.rate.as_ref().unwrap().in_flight;
        let held = s.ns3_held();
        let c = crate::tcp::tests::ack(s.snd_max, 0);
        s.on_ack(&c, 150 * MS, &mut out);
        (after_b, in_network, held, s.ns3_held())
    };
    assert_eq!(run("bbr"), (vec![17, 18], 10, 0, 0));
    assert_eq!(run("bbr-ns3:rtxsack"), (vec![17], 9, 1, 0));
}

/// Round `k` of 40 ms on [`probe_bw`]'s flow from 1000 ms: an ACK that starts a round,
/// delivering `per` segments per round from 1000 at 1000 ms, with the connection's `lost`
/// total and `losses` marked by it.
fn lt_round(k: u64, per: u64, lost: u64, losses: u32) -> AckSample {
    let total = 1000 + per * k;
    let prior = if k == 0 { 800 } else { total - per };
    let mut s = ack(
        NS_PER_SEC + 40 * k * MS,
        per as u32,
        losses,
        40,
        prior,
        total,
    );
    s.rate.total_lost = lost;
    s
}

/// Linux's `bbr_lt_bw_sampling` on the flow: interval 1 (rounds 0-3, 40 segments a round,
/// 1000 segments/s, 24 of 120 lost) and interval 2 (rounds 4-7, 44 a round, 1100/s, 35 of 176
/// lost) agree within 1/8: from round 7 the flow uses their mean, 1050/s, at pacing gain 1.
fn lt_policed(m: Ns3Model) -> Bbr {
    let mut b = probe_bw(m, 3);
    let mut cwnd = 80.0;
    for k in 0..4 {
        let lost = if k == 3 { 124 } else { 100 };
        cwnd = b.cong_control(cwnd, &lt_round(k, 40, lost, (k == 0 || k == 3) as u32));
    }
    for k in 1..=4 {
        let mut s = lt_round(3 + k, 44, if k == 4 { 159 } else { 124 }, (k == 4) as u32);
        s.rate.total_delivered = 1120 + 44 * k;
        s.rate.prior_delivered = s.rate.total_delivered - 44;
        s.rate.delivered = 44;
        cwnd = b.cong_control(cwnd, &s);
    }
    b
}

#[test]
fn long_term_rate_after_two_lossy_intervals_of_consistent_rate() {
    let b = lt_policed(Ns3Model::default());
    assert!(b.lt.use_bw);
    assert!(
        (b.bw_estimate() - 1.05e-6).abs() < 1e-15,
        "{}",
        b.bw_estimate()
    );
    assert_eq!(b.max_bw(), BW, "the max filter is unchanged");
    // Pacing at 1050 x 0.99 segments/s (the max bw would give 990).
    assert!((b.pacing_rate - 1039.5).abs() < 1e-6, "{}", b.pacing_rate);
    assert_eq!(b.pacing_gain, 1.0);
    // ns-3.44's TcpBbr has no long-term estimate.
    let b = lt_policed(Ns3Model::parse("nolt").unwrap());
    assert!(!b.lt.use_bw);
    assert!((b.pacing_rate - 990.0).abs() < 1e-6, "{}", b.pacing_rate);
}

#[test]
fn long_term_rate_keeps_gain_1_in_probe_bw_then_expires_after_48_rounds() {
    let mut b = lt_policed(Ns3Model::default());
    // The cycle moved one phase every 80 ms (a phase ends after more than 40 ms): 3 to 6.
    assert_eq!(b.cycle_idx, 6);
    let mut cwnd = 80.0;
    let round = |k: u64| {
        let mut s = lt_round(k, 44, 159, 0);
        s.rate.total_delivered = 1120 + 44 * (k - 3);
        s.rate.prior_delivered = s.rate.total_delivered - 44;
        s
    };
    // Rounds 8 and 10 move the cycle to phase 0 (gain 5/4), but the long-term rate paces
    // at 1.
    for k in 8..=10 {
        cwnd = b.cong_control(cwnd, &round(k));
    }
    assert_eq!((b.cycle_idx, b.pacing_gain), (0, 1.0));
    assert!((b.pacing_rate - 1039.5).abs() < 1e-6, "{}", b.pacing_rate);
    // 48 rounds after the one that found it (rounds 8-55), gain cycling restarts.
    for k in 11..55 {
        cwnd = b.cong_control(cwnd, &round(k));
        assert!(b.lt.use_bw, "round {k}");
    }
    b.cong_control(cwnd, &round(55));
    assert!(!b.lt.use_bw);
    assert_eq!(b.lt.bw, 0.0);
    assert_eq!(b.bw_estimate(), b.max_bw());
    assert_ne!(
        b.cycle_idx, 1,
        "bbr_reset_probe_bw_mode never starts at 3/4"
    );
}

#[test]
fn an_app_limited_sample_restarts_long_term_sampling() {
    let mut b = probe_bw(Ns3Model::default(), 3);
    let mut cwnd = 80.0;
    for k in 0..8 {
        let lost = [100, 100, 100, 124, 124, 124, 124, 164][k as usize];
        let mut s = lt_round(k, 40, lost, (k == 0 || k == 3 || k == 7) as u32);
        // Round 2's sample is app-limited: sampling stops; round 3's loss starts it again,
        // so round 7 ends the first interval only (4 rounds, 160 delivered, 40 lost).
        s.rate.is_app_limited = k == 2;
        cwnd = b.cong_control(cwnd, &s);
    }
    assert!(!b.lt.use_bw);
    assert!((b.lt.bw - 1e-6).abs() < 1e-15, "{}", b.lt.bw);
}

#[test]
fn a_timeout_is_a_lossy_round_for_long_term_sampling() {
    // bbr_set_state(TCP_CA_Loss) samples with one loss and a round start: it starts an
    // interval at the last ACK's delivered count (1000) and lost count (100) plus the 40 in
    // flight the timeout marks lost, and counts the round.
    let mut b = probe_bw(Ns3Model::default(), 3);
    b.cong_control(80.0, &lt_round(0, 40, 100, 0));
    assert!(!b.lt.is_sampling);
    b.on_congestion(80.0, 40, NS_PER_SEC + 300 * MS);
    b.on_timeout();
    assert!(b.lt.is_sampling);
    assert_eq!(
        (b.lt.rtt_cnt, b.lt.last_delivered, b.lt.last_lost),
        (1, 1000, 140)
    );
    assert_eq!(b.lt.last_stamp_ms, 1000);
    let mut b = probe_bw(Ns3Model::parse("nolt").unwrap(), 3);
    b.cong_control(80.0, &lt_round(0, 40, 100, 0));
    b.on_timeout();
    assert!(!b.lt.is_sampling);
}

/// `ratestart` reaches the sender's rate state (`rate.rs`'s
/// `ns3_keeps_the_sample_start_across_acks` works the rule by hand): on under `bbr-ns3` and
/// `bbr-ns3:ratestart`, off under `bbr` and another rule alone.
#[test]
fn ns3_ratestart_sets_the_rate_state() {
    let keeps = |cc: &str| {
        let cfg = TcpConfig {
            cc: Some(cc.into()),
            ..bbr_cfg(RecoveryKind::Sack)
        };
        Sender::new(&cfg, None, None)
            .rate
            .as_ref()
            .unwrap()
            .ns3_keep_start
    };
    assert!(keeps("bbr-ns3"));
    assert!(keeps("bbr-ns3:ratestart"));
    assert!(!keeps("bbr"));
    assert!(!keeps("bbr-ns3:rtxsack"));
}

/// `bbr-ns3:rtofirst` by hand (ns-3.44's `ProcessAck`: in CA_RECOVERY a partial ACK calls
/// `NewAck(ackNumber, m_isFirstPartialAck)`, and the flag is cleared by the first one). Ten
/// segments 0-9 sent at 0; 0, 3 and 6 lost. The ACK of 0 at 50 ms with SACK 1-2, 4-5, 7-9 marks
/// all three lost (DupThresh SACKed above each) and enters recovery; RecoveryPoint = 10. The
/// partial ACK of 3 at 100 ms is the recovery's first: both restart the timer, deadline 100 ms +
/// RTO. The partial ACK of 6 at 150 ms: Linux (RFC 6298 s. 5.3) restarts it again, deadline
/// 150 ms + RTO; ns-3 leaves it at 100 ms + the RTO of then.
#[test]
fn ns3_only_the_first_partial_ack_restarts_the_timer() {
    let run = |cc: &str| {
        let (mut s, mut out) = first_window(cc);
        assert_eq!(s.snd_max, 10);
        let mut a = crate::tcp::tests::ack(0, 0);
        a.sack = [(1, 3), (4, 6), (7, 10)];
        s.on_ack(&a, 50 * MS, &mut out);
        assert!(s.in_recovery);
        let mut b = crate::tcp::tests::ack(3, 0);
        b.sack[0] = (4, 6);
        b.sack[1] = (7, 10);
        s.on_ack(&b, 100 * MS, &mut out);
        let after_b = (s.rto_deadline, 100 * MS + s.rto);
        let mut c = crate::tcp::tests::ack(6, 0);
        c.sack[0] = (7, 10);
        s.on_ack(&c, 150 * MS, &mut out);
        assert!(s.in_recovery);
        (after_b, s.rto_deadline, 150 * MS + s.rto)
    };
    let ((linux_b, linux_b_want), linux_c, linux_c_want) = run("bbr");
    assert_eq!(linux_b, Some(linux_b_want));
    assert_eq!(linux_c, Some(linux_c_want));
    let ((ns3_b, ns3_b_want), ns3_c, _) = run("bbr-ns3:rtofirst");
    assert_eq!(ns3_b, Some(ns3_b_want));
    assert_eq!(ns3_c, Some(ns3_b_want));
}

/// `bbr-ns3:rtotail` by hand through the sender (ns-3.44's NextSeg after a timeout,
/// [`crate::tcp::recovery::sack::Ns3RtoTail`]). Ten segments 0-9 sent at 0; the ACK of 0 at
/// 50 ms SACKs 3-4 (two SACKed above 0: no recovery) and the window lets new data 10.. out. The
/// timeout (HighData M) resends 0 (cwnd 1). The ACK of 1 (SACK 3-4) opens the window to n
/// segments: Linux without RACK walks the unSACKed tail, 1, 2, 5, 6, 7, ...; ns-3 takes only
/// 1 and 2 (below the highest SACK, 4) and then new data M, M + 1, .... The ACK of 3 with SACK
/// 7 (the original 7 arrived): ns-3 now takes 5 and 6 (below 7, marked lost by the timeout),
/// then new data; Linux goes on with its walk, 8, 9, ....
#[test]
fn ns3_after_a_timeout_resends_below_the_highest_sack_only() {
    let seqs = |out: &[Packet]| out.iter().map(|p| p.seq).collect::<Vec<_>>();
    let run = |cc: &str| {
        let (mut s, mut out) = first_window(cc);
        assert_eq!(s.snd_max, 10);
        let mut a = crate::tcp::tests::ack(0, 0);
        a.sack[0] = (3, 5);
        s.on_ack(&a, 50 * MS, &mut out);
        drain_paced(&mut s, 50 * MS, &mut out);
        assert!(!s.in_recovery);
        let m = s.snd_max;
        let t = s.rto_deadline.expect("timer armed");
        out.clear();
        s.on_timeout(t, &mut out);
        drain_paced(&mut s, t, &mut out);
        assert_eq!(seqs(&out), vec![0]);
        let mut b = crate::tcp::tests::ack(1, 0);
        b.sack[0] = (3, 5);
        out.clear();
        s.on_ack(&b, t + 50 * MS, &mut out);
        drain_paced(&mut s, t + 50 * MS, &mut out);
        let after_b = seqs(&out);
        let mut c = crate::tcp::tests::ack(3, 0);
        c.sack = [(3, 5), (7, 8), (0, 0)];
        out.clear();
        s.on_ack(&c, t + 60 * MS, &mut out);
        drain_paced(&mut s, t + 60 * MS, &mut out);
        (m, after_b, seqs(&out))
    };
    let (m, linux_b, linux_c) = run("bbr");
    assert!(
        m > 10 && linux_b.len() >= 3,
        "new data before the timeout, room for 3 after"
    );
    // The walk from snd_una over the unSACKed segments, then new data.
    let walk: Vec<u32> = [1, 2, 5, 6, 7, 8, 9]
        .into_iter()
        .chain(10..)
        .take(40)
        .collect();
    assert_eq!(linux_b, walk[..linux_b.len()]);
    let rest: Vec<u32> = walk[linux_b.len()..]
        .iter()
        .copied()
        .filter(|&x| x != 7)
        .collect();
    assert_eq!(linux_c, rest[..linux_c.len()]);
    for cc in ["bbr-ns3:rtotail", "bbr-ns3"] {
        let (m2, ns3_b, ns3_c) = run(cc);
        assert_eq!(m2, m, "{cc}: the same window before the timeout");
        assert!(ns3_b.len() >= 3 && ns3_c.len() >= 3, "{cc}");
        let want_b: Vec<u32> = [1, 2].into_iter().chain(m..).take(ns3_b.len()).collect();
        assert_eq!(ns3_b, want_b, "{cc}");
        let next = *want_b.last().unwrap() + 1;
        let want_c: Vec<u32> = [5, 6].into_iter().chain(next..).take(ns3_c.len()).collect();
        assert_eq!(ns3_c, want_c, "{cc}");
    }
}

/// ns-3.44's round start survives an ACK with an invalid rate sample (`roundkeep`,
/// tcp-bbr.cc l. 603-625): in STARTUP with the max bw not growing 25 %, a round start on a
/// valid ACK, then an ACK whose sample has a zero interval. Linux's `bbr_update_bw` clears
/// `round_start` on the second ACK, so `bbr_check_full_bw_reached` counts once; ns-3's
/// `CheckFullPipe` (l. 300) sees the kept round start again and counts twice, and a third such
/// ACK fills the pipe (count 3) within one round.
#[test]
fn ns3_round_start_is_kept_over_an_invalid_sample() {
    let t = NS_PER_SEC + MS;
    for (m, counts) in [
        (Ns3Model::default(), [1, 1, 1]),
        (Ns3Model::parse("roundkeep").unwrap(), [1, 2, 3]),
    ] {
        let mut b = Bbr::ns3_44(m);
        // STARTUP, max bw BW (1000 segments/s) with the reference full_bw = BW: a sample at
        // or below BW is no 25 % growth.
        b.bw.reset(0, BW);
        b.full_bw = BW;
        b.min_rtt = Some(40 * MS);
        b.min_rtt_stamp = NS_PER_SEC;
        b.next_rtt_delivered = 800;
        b.has_seen_rtt = true;
        // ACK 1: sent at delivered 800 >= 800, a round starts; 100 segments over 1 s is
        // 1e-7 per ns, below BW.
        let s = ack(t, 2, 0, 60, 800, 900);
        b.cong_control(70.0, &s);
        assert!(b.round_start, "{m:?}");
        assert_eq!(b.full_bw_cnt, counts[0], "{m:?}");
        // ACKs 2 and 3: valid delivered counts, zero intervals (invalid samples).
        for (i, &want) in counts[1..].iter().enumerate() {
            let mut s = ack(t + (i as Time + 1) * MS, 2, 0, 60, 850, 902 + 2 * i as u64);
            s.rate.interval_ns = 0;
            b.cong_control(70.0, &s);
            assert_eq!(b.round_start, m.round_keep, "{m:?}");
            assert_eq!(b.full_bw_cnt, want, "{m:?}");
        }
        assert_eq!(b.full_bw_reached, m.round_keep, "{m:?}");
        assert_eq!(b.next_rtt_delivered, 900, "{m:?}");
    }
}

/// `tcp_rtt_tsopt_us` by hand (millisecond TS clock, `min_delta` 1): an ACK at 1.0415 s echoing
/// a TSval taken at 0.9995 s reads 1041 - 999 = 42 ms (the true RTT); at 8.3 ms echoing
/// 0.1 ms, 8 - 0 = 8 ms, below the true 8.2 ms; within one tick (1.0412 s echoing 1.0410 s)
/// 0, raised to 1 ms.
#[test]
fn linux_timestamp_rtt_is_whole_milliseconds_at_least_one() {
    use crate::tcp::sender::linux_ts_rtt;
    let us = MS / 1000;
    assert_eq!(linux_ts_rtt(1_041_500 * us, 999_500 * us), 42 * MS);
    assert_eq!(linux_ts_rtt(8_300 * us, 100 * us), 8 * MS);
    assert_eq!(linux_ts_rtt(1_041_200 * us, 1_041_000 * us), MS);
}

/// Linux's rate sample on an ACK that delivers only a retransmission (`tcp_ack_update_rtt`:
/// Karn leaves no ACK-timing sample, so with timestamps `rs->rtt_us` is the echo's): BBR's
/// min-RTT filter hears it. By hand: segments 0-9 leave at time 0 (paced), 1 is lost; the ACK
/// of 0 at 100 ms (SACK 2-9) gives min RTT 100 ms less 9's send time (the newest segment it
/// delivered: Linux's `ca_rtt_us`) and marks 1 lost (8 SACKed above), which is resent at time
/// r. Its ACK (cumulative to 10, nothing newly SACKed) comes back when the path has emptied, at
/// T = floor_ms(r) + 60.4 ms echoing r: a true RTT of 59.4-60.4 ms, on the TS clock
/// floor(T) - floor(r) = 60 ms, the new min RTT. Without timestamps that ACK has no RTT sample
/// and the min RTT stays the first one. This is what a flow in PROBE_RTT during loss recovery
/// sees on the testbed (docs/testbed.md, "Timestamps: the RTT of a retransmission's ACK").
#[test]
fn a_retransmissions_ack_is_an_rtt_sample_through_its_timestamp() {
    let run = |timestamps: bool| {
        let cfg = TcpConfig {
            timestamps,
            ..bbr_cfg(RecoveryKind::Sack)
        };
        let mut s = Sender::new(&cfg, None, None);
        let mut out = Vec::new();
        drain_paced(&mut s, 0, &mut out);
        let (sent0, sent9) = (out[0].ts, out[9].ts);
        assert_eq!(
            out.iter().map(|p| p.seq).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        let mut a = crate::tcp::tests::ack(1, sent0);
        a.sack[0] = (2, 10);
        out.clear();
        s.on_ack(&a, 100 * MS, &mut out);
        let first = 100 * MS - sent9;
        let b = |s: &Sender| {
            let p = s.cc.as_any().expect("BBR offers its state");
            p.downcast_ref::<Bbr>().expect("a BBR sender").min_rtt
        };
        assert_eq!(b(&s), Some(first));
        drain_paced(&mut s, 100 * MS, &mut out);
        let r = out.iter().find(|p| p.seq == 1).expect("1 resent").ts;
        let t = r / MS * MS + 60 * MS + 400_000;
        out.clear();
        s.on_ack(&crate::tcp::tests::ack(10, r), t, &mut out);
        b(&s)
    };
    assert_eq!(run(true), Some(60 * MS));
    let first = run(false).expect("a min RTT");
    assert!(first > 90 * MS, "{first}");
}
