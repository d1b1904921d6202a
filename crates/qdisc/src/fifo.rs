//! The AQM-guarded FIFO: one queue type for the simulator's `Link` and the forwarder's `Path`.
//!
//! [`Fifo`] owns what is the queue's: the stored packets with their window tickets, the AQM and
//! its random stream, the buffer check, the queue length and its integrals over the measurement
//! window, the order of the AQM calls (enqueue verdict, overflow, dequeue verdict with the
//! head-drop loop, periodic update) and the detection of marks for the event log. What belongs
//! to an engine stays there: its transmitter (when the queue went idle, passed in as `tx_idle`:
//! the simulator's `busy_until`, the forwarder's `idle_since`), its whole-run counters
//! (`LinkStats`, `Conservation`), its delay recording, and the simulator's lazy FIFO, which
//! predicts departures ahead and uses only [`Fifo::admit_passing`] and [`Fifo::change`].
//!
//! Clock-agnostic: every time is ns on the caller's clock (the forwarder passes times since its
//! start). The measurement window is `[warmup, end]` (`end = Time::MAX`: open-ended, the
//! forwarder's). The engine's window counters, time series and event log are lent to each call
//! in a [`Books`].

use crate::admit::{admit, Admission};
use crate::events::{Cause, EventKind, EventLog};
use crate::sample::queue_sample;
use crate::series::Series;
use crate::window::Ticket;
use crate::WindowStats;
use aqm::fq_codel::FqPacket;
use aqm::params::Buffer;
use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};
use std::collections::VecDeque;

/// A packet type the FIFO can hold: what the AQM sees of it, besides [`FqPacket`].
pub trait FifoPacket: FqPacket {
    /// What the AQM sees of the packet (flow, size, ECN codepoint, precedence).
    fn meta(&self) -> PacketMeta;
}

/// A stored packet with its place in the measurement window and its arrival time.
#[derive(Clone, Copy, Debug)]
pub struct Held<P> {
    /// The packet.
    pub pkt: P,
    /// Its arrival in the measurement window.
    pub ticket: Ticket,
    /// When it joined the queue (the caller's clock), ns.
    pub arrival: Time,
}

/// The engine's books a FIFO call writes to: the window's counters, the time series (when the
/// queue is monitored) and the event log (when asked for).
pub struct Books<'a> {
    /// The measurement window's counters and integrals.
    pub win: &'a mut WindowStats,
    /// The queue's time series (`qdisc::sample` columns).
    pub series: Option<&'a mut Series>,
    /// The event log.
    pub events: Option<&'a mut EventLog>,
}

/// The AQM-guarded FIFO (see the module documentation).
#[derive(Debug)]
pub struct Fifo<P> {
    aqm: Option<Box<dyn Aqm>>,
    head_aqm: bool,
    /// The random stream of the AQM (and of a scheduler that replaces the FIFO).
    pub rng: AqmRng,
    buffer: Buffer,
    queue: VecDeque<Held<P>>,
    len_pkts: u32,
    len_bytes: u64,
    last_change: Time,
    warmup: Time,
    end: Time,
    /// Admissions after which the queue exceeded the buffer (must stay 0).
    pub buffer_violations: u64,
}

impl<P: FifoPacket> Fifo<P> {
    /// An empty FIFO guarded by `aqm` (`None`: DropTail) with `buffer`, its window `[warmup, end]`.
    pub fn new(
        aqm: Option<Box<dyn Aqm>>,
        rng: AqmRng,
        buffer: Buffer,
        warmup: Time,
        end: Time,
    ) -> Self {
        let head_aqm = aqm.as_ref().is_some_and(|a| a.wants_dequeue());
        Fifo {
            aqm,
            head_aqm,
            rng,
            buffer,
            queue: VecDeque::new(),
            len_pkts: 0,
            len_bytes: 0,
            last_change: 0,
            warmup,
            end,
            buffer_violations: 0,
        }
    }

    /// The AQM (`None`: DropTail).
    pub fn aqm(&self) -> Option<&dyn Aqm> {
        self.aqm.as_deref()
    }

    /// Replaces the AQM (before any packet arrived).
    pub fn set_aqm(&mut self, aqm: Option<Box<dyn Aqm>>) {
        self.head_aqm = aqm.as_ref().is_some_and(|a| a.wants_dequeue());
        self.aqm = aqm;
    }

    /// The buffer.
    pub fn buffer(&self) -> Buffer {
        self.buffer
    }

    /// Packets in the queue now (as counted by [`Fifo::change`]).
    #[inline]
    pub fn len_pkts(&self) -> u32 {
        self.len_pkts
    }

    /// Bytes in the queue now.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// Packets stored.
    pub fn stored(&self) -> usize {
        self.queue.len()
    }

    /// The stored packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &Held<P>> {
        self.queue.iter()
    }

    /// Whether `t` is inside the measurement window.
    #[inline(always)]
    pub fn in_window(&self, t: Time) -> bool {
        t >= self.warmup && t <= self.end
    }

    /// The queue as the AQM sees it; `tx_idle`: since when the engine's transmitter has been
    /// idle (`None`: busy). The queue is idle when it is empty and its transmitter is.
    #[inline(always)]
    pub fn view(&self, tx_idle: Option<Time>) -> QueueView {
        QueueView {
            len_pkts: self.len_pkts,
            len_bytes: self.len_bytes,
            idle_since: if self.len_pkts == 0 { tx_idle } else { None },
        }
    }

    /// Records every sample instant of `series` strictly before `t` with the state held until
    /// now (the columns of `qdisc::sample::queue_series` for the FIFO's AQM).
    #[inline(always)]
    pub fn touch(&self, t: Time, series: Option<&mut Series>) {
        if let Some(s) = series {
            if s.due_before(t) {
                let mut buf = [0.0; 4];
                let n = queue_sample(self.len_pkts, self.len_bytes, self.aqm.as_deref(), &mut buf);
                s.fill_before(t, &buf[..n]);
            }
        }
    }

    /// The queue becomes `pkts` packets and `bytes` bytes at `at`: the series is sampled up to
    /// `at`, the window integrates the old length up to `at` (capped at the window's end), and
    /// the maxima see the new one.
    #[inline(always)]
    pub fn set_len(&mut self, at: Time, pkts: u32, bytes: u64, b: &mut Books) {
        self.touch(at, b.series.as_deref_mut());
        let lo = self.last_change.max(self.warmup);
        let hi = at.min(self.end);
        if hi > lo {
            b.win
                .integrate((hi - lo) as f64, self.len_pkts, self.len_bytes);
        }
        self.last_change = at;
        self.len_pkts = pkts;
        self.len_bytes = bytes;
        b.win.observe(pkts, bytes);
    }

    /// The queue length changes at `at` by `dpkts` packets and `dbytes` bytes ([`Fifo::set_len`]).
    #[inline(always)]
    pub fn change(&mut self, at: Time, dpkts: i32, dbytes: i64, b: &mut Books) {
        let p = (self.len_pkts as i64 + dpkts as i64) as u32;
        let q = (self.len_bytes as i64 + dbytes) as u64;
        self.set_len(at, p, q, b);
    }

    /// Logs an event of a packet of `flow` that arrived at `arrival`, with the queue now.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn log(
        &self,
        ev: Option<&mut EventLog>,
        t: Time,
        kind: EventKind,
        cause: Cause,
        flow: u32,
        arrival: Time,
        size: u32,
    ) {
        if let Some(e) = ev {
            e.push(
                t,
                kind,
                cause,
                flow,
                arrival,
                size,
                self.len_pkts,
                self.len_bytes,
            );
        }
    }

    /// Counts the arrival of `pkt` at `now` in the window, asks the AQM, checks the buffer
    /// (`crate::admit`). A dropped packet is counted and logged here: `None`. An admitted one has
    /// its verdict applied (`crate::verdict::apply_enqueue`): its verdict and whether it arrived
    /// in the window.
    #[inline(always)]
    fn admit(
        &mut self,
        pkt: &mut P,
        now: Time,
        tx_idle: Option<Time>,
        b: &mut Books,
    ) -> Option<(Verdict, bool)> {
        self.touch(now, b.series.as_deref_mut());
        let view = self.view(tx_idle);
        let size = pkt.size_bytes();
        let inw = self.in_window(now);
        b.win.arrival(inw, view.len_pkts, size);
        let meta = pkt.meta();
        let aqm = self.aqm.as_deref_mut();
        let v = match admit(aqm, &meta, &view, now, &mut self.rng, self.buffer, size) {
            Admission::Admitted(v) => v,
            dropped => {
                let (cause, by_aqm) = match dropped {
                    Admission::AqmDrop => (Cause::Aqm, true),
                    _ => (Cause::Overflow, false),
                };
                let ev = b.events.as_deref_mut();
                self.log(ev, now, EventKind::Drop, cause, meta.flow, now, size);
                if inw {
                    if by_aqm {
                        b.win.dropped_aqm += 1;
                    } else {
                        b.win.dropped_overflow += 1;
                    }
                }
                b.win.book.arrive_settled(inw, true);
                return None;
            }
        };
        crate::verdict::apply_enqueue(v, pkt, inw, b.win);
        if v == Verdict::Mark {
            let ev = b.events.as_deref_mut();
            self.log(ev, now, EventKind::Mark, Cause::None, meta.flow, now, size);
        }
        Some((v, inw))
    }

    /// A packet arrives at `now` and is stored (a queue with a dequeue decision): its admitting
    /// verdict, or `None` when it was dropped (counted and logged).
    #[inline]
    pub fn enqueue(
        &mut self,
        mut pkt: P,
        now: Time,
        tx_idle: Option<Time>,
        b: &mut Books,
    ) -> Option<Verdict> {
        let (v, inw) = self.admit(&mut pkt, now, tx_idle, b)?;
        let ticket = b.win.book.arrive(inw);
        let (flow, size) = (pkt.flow_id(), pkt.size_bytes());
        self.queue.push_back(Held {
            pkt,
            ticket,
            arrival: now,
        });
        self.change(now, 1, size as i64, b);
        let ev = b.events.as_deref_mut();
        self.log(ev, now, EventKind::Enqueue, Cause::None, flow, now, size);
        self.check_buffer();
        Some(v)
    }

    /// A packet arrives at `now` to a queue whose departures the caller predicts (the
    /// simulator's lazy FIFO): admitted and certain to be sent (its window fate settled now), not
    /// stored; the caller moves the length with [`Fifo::change`]. Its verdict, or `None` when it
    /// was dropped.
    #[inline(always)]
    pub fn admit_passing(
        &mut self,
        pkt: &mut P,
        now: Time,
        tx_idle: Option<Time>,
        b: &mut Books,
    ) -> Option<Verdict> {
        let (v, inw) = self.admit(pkt, now, tx_idle, b)?;
        b.win.book.arrive_settled(inw, false);
        Some(v)
    }

    /// Counts a buffer violation if the queue now exceeds the buffer.
    #[inline(always)]
    pub fn check_buffer(&mut self) {
        if crate::buffer::exceeded(self.buffer, self.len_pkts, self.len_bytes) {
            self.buffer_violations += 1;
        }
    }

    /// The transmitter is free at `now`: takes head packets, letting the AQM drop at the head
    /// (RFC 8289 s. 5.4's loop), until one is to be sent. Returns it (CE set and the mark counted
    /// if the AQM marked it; its window fate settled as sent) and the number of head drops
    /// (each counted in the window by its arrival and logged). `tx_idle` as in [`Fifo::view`].
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Time,
        tx_idle: Option<Time>,
        b: &mut Books,
    ) -> (Option<Held<P>>, u64) {
        let mut drops = 0;
        while let Some(mut h) = self.queue.pop_front() {
            let size = h.pkt.size_bytes();
            self.change(now, -1, -(size as i64), b);
            let flow = h.pkt.flow_id();
            if self.head_aqm {
                let view = self.view(tx_idle);
                let sojourn = now - h.arrival;
                let meta = h.pkt.meta();
                let (ce0, m0) = (h.pkt.ecn() == aqm::Ecn::Ce, b.win.marked);
                let (aqm, rng) = (self.aqm.as_deref_mut(), &mut self.rng);
                let (pkt, t) = (&mut h.pkt, h.ticket);
                if !crate::verdict::head(aqm, pkt, &meta, sojourn, &view, now, rng, t, b.win) {
                    // A head drop, placed at the packet's arrival position (exact).
                    drops += 1;
                    b.win.drop(h.ticket, true);
                    let ev = b.events.as_deref_mut();
                    self.log(
                        ev,
                        now,
                        EventKind::Drop,
                        Cause::AqmHead,
                        flow,
                        h.arrival,
                        size,
                    );
                    continue;
                }
                // Marked here: CE newly set, or a window mark counted (CE already set upstream).
                if b.events.is_some()
                    && ((!ce0 && h.pkt.ecn() == aqm::Ecn::Ce) || b.win.marked > m0)
                {
                    let ev = b.events.as_deref_mut();
                    self.log(ev, now, EventKind::Mark, Cause::None, flow, h.arrival, size);
                }
            }
            let ev = b.events.as_deref_mut();
            self.log(
                ev,
                now,
                EventKind::Dequeue,
                Cause::None,
                flow,
                h.arrival,
                size,
            );
            b.win.book.settle(h.ticket, false);
            return (Some(h), drops);
        }
        (None, drops)
    }

    /// The AQM's periodic update at `now` (the series sampled first); returns when it wants the
    /// next one. `tx_idle` as in [`Fifo::view`].
    pub fn update(
        &mut self,
        now: Time,
        tx_idle: Option<Time>,
        series: Option<&mut Series>,
    ) -> Option<Time> {
        self.touch(now, series);
        let view = self.view(tx_idle);
        let a = self.aqm.as_mut()?;
        a.update(&view, now);
        a.next_update()
    }

    /// When the AQM wants its next periodic update, if ever.
    pub fn next_update(&self) -> Option<Time> {
        self.aqm.as_ref().and_then(|a| a.next_update())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::params::ParamValue;
    use aqm::{LinkContext, ParamMap};

    #[derive(Clone, Copy, Debug)]
    struct P {
        size: u32,
        ecn: aqm::Ecn,
    }
    impl FqPacket for P {
        fn flow_id(&self) -> u32 {
            0
        }
        fn size_bytes(&self) -> u32 {
            self.size
        }
        fn ecn(&self) -> aqm::Ecn {
            self.ecn
        }
        fn set_ce(&mut self) {
            self.ecn = aqm::Ecn::Ce;
        }
    }
    impl FifoPacket for P {
        fn meta(&self) -> PacketMeta {
            PacketMeta {
                ecn: self.ecn,
                ..PacketMeta::of_size(self.size)
            }
        }
    }

    fn books<'a>(win: &'a mut WindowStats, series: Option<&'a mut Series>) -> Books<'a> {
        Books {
            win,
            series,
            events: None,
        }
    }

    #[test]
    fn droptail_keeps_arrival_order_counts_overflow_and_integrates_the_length() {
        // Buffer of 2 packets, window [10, 100]. Three arrivals at 0: two stored, one overflow
        // (outside the window: not counted). Served at 20 and 40, then empty. Length: 2 over
        // [10, 20), 1 over [20, 40), 0 after: integral 2*10 + 1*20 = 40 packet-ns.
        let mut q = Fifo::new(None, aqm::rng_from_seed(1), Buffer::Packets(2), 10, 100);
        let mut win = WindowStats::default();
        let p = |size| P {
            size,
            ecn: aqm::Ecn::NotEct,
        };
        for s in [100, 200, 300] {
            let got = q.enqueue(p(s), 0, Some(0), &mut books(&mut win, None));
            assert_eq!(got.is_some(), s != 300);
        }
        assert_eq!((q.len_pkts(), q.len_bytes()), (2, 300));
        assert_eq!((win.arrived, win.dropped_overflow), (0, 0));
        let (h, d) = q.dequeue(20, None, &mut books(&mut win, None));
        assert_eq!((h.unwrap().pkt.size, d), (100, 0));
        let (h, _) = q.dequeue(40, None, &mut books(&mut win, None));
        assert_eq!(h.unwrap().pkt.size, 200);
        assert!(q
            .dequeue(50, Some(50), &mut books(&mut win, None))
            .0
            .is_none());
        // In the window: an arrival to an empty queue is admitted and counted.
        assert!(q
            .enqueue(p(100), 60, Some(50), &mut books(&mut win, None))
            .is_some());
        q.set_len(100, q.len_pkts(), q.len_bytes(), &mut books(&mut win, None));
        // 40 packet-ns before 60, then 1 packet over [60, 100].
        assert_eq!(win.q_int, 40.0 + 40.0);
        assert_eq!((win.arrived, win.max_pkts), (1, 2));
        assert_eq!(q.buffer_violations, 0);
    }

    #[test]
    fn codel_drops_at_the_head_until_a_packet_may_go_and_marks_with_ecn() {
        // CoDel (RFC 8289, target 5 ms, interval 100 ms): 200 packets wait from time 0; served
        // one per ms from 0. Once the sojourn has stayed at or above target for an interval, the
        // head-drop loop drops (RFC 8289 s. 5.4); with ECN the same packets leave marked instead.
        let ctx = LinkContext {
            rate_bps: 12_000_000,
            buffer: Buffer::Packets(1000),
            mean_pkt_bytes: 1500,
        };
        for ecn in [false, true] {
            let mut m = ParamMap::new();
            m.insert("ecn".into(), ParamValue::Bool(ecn));
            let codel = aqm::build("codel", &m, &ctx).unwrap();
            let mut q = Fifo::new(
                Some(codel),
                aqm::rng_from_seed(1),
                Buffer::Packets(1000),
                0,
                Time::MAX,
            );
            let mut win = WindowStats::default();
            let pk = P {
                size: 1500,
                ecn: aqm::Ecn::Ect0,
            };
            for _ in 0..200 {
                q.enqueue(pk, 0, Some(0), &mut books(&mut win, None));
            }
            let (mut sent, mut dropped, mut ce) = (0u64, 0u64, 0u64);
            let (mut t, mut first) = (0, None);
            loop {
                let (h, d) = q.dequeue(t, None, &mut books(&mut win, None));
                dropped += d;
                let Some(h) = h else { break };
                sent += 1;
                ce += u64::from(h.pkt.ecn == aqm::Ecn::Ce);
                if first.is_none() && (d > 0 || h.pkt.ecn == aqm::Ecn::Ce) {
                    first = Some(t);
                }
                t += 1_000_000;
            }
            // Every packet sent or dropped once; the window counts match what happened.
            assert_eq!(sent + dropped, 200);
            assert_eq!((win.dropped_aqm, win.marked), (dropped, ce));
            assert_eq!(win.book.arrived, 200);
            assert_eq!(win.book.dropped + win.book.kept, 200);
            if ecn {
                assert!(dropped == 0 && ce > 0, "marks {ce}, drops {dropped}");
            } else {
                assert!(dropped > 0 && ce == 0, "marks {ce}, drops {dropped}");
            }
            // The sojourn reaches the 5 ms target at 5 ms (not below it: above, RFC 8289 s. 5.3); the
            // first signal one interval (100 ms) later, at 105 ms.
            assert_eq!(first, Some(105_000_000), "ecn {ecn}");
            assert_eq!(q.len_pkts(), 0);
        }
    }
}
