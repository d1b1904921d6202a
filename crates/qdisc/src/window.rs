//! The measurement window's per-arrival book: which arrivals fall in the window, what became of
//! each (dropped or sent), and the maximal runs of consecutive drops **in arrival order**
//! (docs/metrics.md, "Burst ratio B").
//!
//! The rule (one copy, for the simulator and the forwarder):
//! - a packet belongs to the window when it **arrives** in `[warmup, end]`; its drop counts in the
//!   window's `dropped` whenever the drop happens (on arrival, on overflow, or at the head of the
//!   queue later), and not at all when it arrived before the warm-up. So `dropped <= arrived`.
//! - the loss indicator of the window is the sequence of its arrivals in arrival order, 1 for a
//!   dropped one; `runs` is the number of maximal blocks of 1s in that sequence. A run that spans
//!   the window start counts once, from its first drop in the window; a departure between two
//!   dropped arrivals does not end a run (only an admitted arrival does).
//! - a head drop (CoDel) is placed at its packet's arrival position, whatever was decided about
//!   the packets that arrived after it in the meantime: the count is exact for every AQM.
//!
//! Each window arrival gets a [`Ticket`] (its index in arrival order); its fate is settled once.
//! `runs = dropped - (adjacent pairs of dropped arrivals)`, each pair counted when the second of
//! its two fates is settled, in any order. Only the fates from the oldest unsettled arrival on
//! are kept, so memory is the number of arrivals while a packet waits.

use std::collections::VecDeque;

/// An arrival's place in the window's arrival order, or [`Ticket::OUTSIDE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

impl Ticket {
    /// A packet that arrived outside the measurement window: nothing about it is counted.
    pub const OUTSIDE: Ticket = Ticket(u64::MAX);

    /// Whether the packet arrived in the window.
    #[inline]
    pub fn in_window(self) -> bool {
        self.0 != u64::MAX
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Pending,
    Kept,
    Dropped,
}

/// The window's arrival book (see the module documentation for the rule).
#[derive(Clone, Debug, Default)]
pub struct WindowBook {
    /// Packets that arrived in the window.
    pub arrived: u64,
    /// Of these, dropped (at arrival, on overflow or at the head).
    pub dropped: u64,
    /// Of these, kept (sent, or certain to be sent).
    pub kept: u64,
    /// Maximal runs of consecutive dropped arrivals, in arrival order.
    pub runs: u64,
    next: u64,
    base: u64,
    fates: VecDeque<Fate>,
    /// Fate of arrival `base - 1` was a drop.
    before_base_dropped: bool,
}

impl WindowBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// A packet arrives; `in_window` says whether its arrival time is in the window. Its fate is
    /// settled later with [`WindowBook::settle`].
    #[inline]
    pub fn arrive(&mut self, in_window: bool) -> Ticket {
        if !in_window {
            return Ticket::OUTSIDE;
        }
        let t = self.next;
        self.next += 1;
        self.arrived += 1;
        self.fates.push_back(Fate::Pending);
        Ticket(t)
    }

    /// A packet arrives and its fate is known at once (an arrival-time drop, or a packet that
    /// will certainly be sent).
    #[inline]
    pub fn arrive_settled(&mut self, in_window: bool, dropped: bool) {
        if !in_window {
            return;
        }
        if self.fates.is_empty() {
            // Fast path: every earlier arrival is settled.
            self.arrived += 1;
            self.next += 1;
            self.base = self.next;
            if dropped {
                self.dropped += 1;
                if !self.before_base_dropped {
                    self.runs += 1;
                }
            } else {
                self.kept += 1;
            }
            self.before_base_dropped = dropped;
            return;
        }
        let t = self.arrive(true);
        self.settle(t, dropped);
    }

    /// Settles the fate of the arrival with ticket `t` (once).
    #[inline]
    pub fn settle(&mut self, t: Ticket, dropped: bool) {
        if !t.in_window() {
            return;
        }
        debug_assert!(t.0 >= self.base && t.0 < self.next, "ticket settled twice");
        let i = (t.0 - self.base) as usize;
        debug_assert_eq!(self.fates[i], Fate::Pending);
        if dropped {
            self.fates[i] = Fate::Dropped;
            self.dropped += 1;
            let prev = if i == 0 {
                self.before_base_dropped
            } else {
                self.fates[i - 1] == Fate::Dropped
            };
            let next = self.fates.get(i + 1) == Some(&Fate::Dropped);
            // A new run, merged with a run before and/or after it.
            self.runs = self.runs + 1 - u64::from(prev) - u64::from(next);
        } else {
            self.fates[i] = Fate::Kept;
            self.kept += 1;
        }
        while let Some(&f) = self.fates.front() {
            if f == Fate::Pending {
                break;
            }
            self.fates.pop_front();
            self.base += 1;
            self.before_base_dropped = f == Fate::Dropped;
        }
    }

    /// Window arrivals whose fate is not settled yet (still queued).
    pub fn pending(&self) -> u64 {
        self.arrived - self.dropped - self.kept
    }

    /// The book's invariants: `0 <= runs <= dropped <= arrived`, `runs >= 1` when something was
    /// dropped, and `arrived = kept + dropped + pending`, with `pending` the number given by
    /// the caller (window arrivals it still holds). `None` when they hold, else what failed.
    pub fn check(&self, held_window_arrivals: u64) -> Option<String> {
        let (a, d, r) = (self.arrived, self.dropped, self.runs);
        if r > d || d > a || (d > 0 && r == 0) {
            return Some(format!(
                "window counts out of order: loss_runs {r}, dropped {d}, arrived {a} (need 1 <= loss_runs <= dropped <= arrived when dropped > 0)"
            ));
        }
        let unsettled = self.fates.iter().filter(|f| **f == Fate::Pending).count() as u64;
        if a != self.kept + d + held_window_arrivals || unsettled != held_window_arrivals {
            return Some(format!(
                "window arrivals {a} != sent {} + dropped {d} + queued {held_window_arrivals} (book holds {unsettled})",
                self.kept
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs of 1s in a 0/1 sequence, counted directly.
    fn runs_of(seq: &[bool]) -> u64 {
        let mut r = 0;
        let mut prev = false;
        for &x in seq {
            if x && !prev {
                r += 1;
            }
            prev = x;
        }
        r
    }

    #[test]
    fn a_departure_between_two_dropped_arrivals_does_not_split_their_run() {
        // Arrivals: admitted A, dropped B, dropped C (A leaves between B and C), admitted D.
        let mut b = WindowBook::new();
        let a = b.arrive(true);
        b.arrive_settled(true, true);
        b.settle(a, false); // A departs
        b.arrive_settled(true, true);
        b.arrive_settled(true, false);
        assert_eq!((b.arrived, b.dropped, b.runs), (4, 2, 1));
        assert!(b.check(0).is_none());
    }

    #[test]
    fn a_run_spanning_the_window_start_counts_once_from_its_first_drop_in_the_window() {
        let mut b = WindowBook::new();
        b.arrive_settled(false, true); // before the warm-up: not counted, does not hide the run
        b.arrive_settled(true, true);
        b.arrive_settled(true, true);
        assert_eq!((b.arrived, b.dropped, b.runs), (2, 2, 1));
        // Every packet dropped (dropfn table = [1]): one run, B undefined but counts consistent.
        assert!(b.check(0).is_none());
    }

    #[test]
    fn a_head_drop_joins_the_runs_of_its_arrival_neighbours() {
        // Arrivals 0..5: 1 and 3 dropped on arrival; 2 admitted, later head-dropped: 1-2-3 is one run.
        let mut b = WindowBook::new();
        let t0 = b.arrive(true);
        b.arrive_settled(true, true);
        let t2 = b.arrive(true);
        b.arrive_settled(true, true);
        let t4 = b.arrive(true);
        assert_eq!(b.runs, 2);
        b.settle(t0, false);
        b.settle(t2, true);
        assert_eq!(b.runs, 1);
        assert!(b.check(1).is_none());
        b.settle(t4, false);
        assert_eq!((b.arrived, b.dropped, b.kept, b.runs), (5, 3, 2, 1));
        assert!(b.check(0).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Any arrival sequence (in or out of the window) and any order of settling gives the
        /// runs of the window's loss indicator counted directly, and the invariants hold.
        #[test]
        fn runs_equal_the_direct_count_in_any_settling_order(
            items in proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..200),
            order in proptest::collection::vec(any::<prop::sample::Index>(), 0..200),
        ) {
            let mut b = WindowBook::new();
            let mut open: Vec<(Ticket, bool)> = Vec::new();
            let mut seq = Vec::new();
            for &(inw, drop, immediate) in &items {
                if inw {
                    seq.push(drop);
                }
                if immediate {
                    b.arrive_settled(inw, drop);
                } else {
                    open.push((b.arrive(inw), drop));
                }
            }
            for ix in &order {
                if open.is_empty() {
                    break;
                }
                let (t, d) = open.swap_remove(ix.index(open.len()));
                b.settle(t, d);
            }
            let held = open.iter().filter(|(t, _)| t.in_window()).count() as u64;
            prop_assert!(b.check(held).is_none(), "{:?}", b.check(held));
            for (t, d) in open.drain(..) {
                b.settle(t, d);
            }
            prop_assert!(b.check(0).is_none(), "{:?}", b.check(0));
            prop_assert_eq!(b.runs, runs_of(&seq));
            prop_assert_eq!(b.dropped, seq.iter().filter(|&&x| x).count() as u64);
            prop_assert_eq!(b.arrived, seq.len() as u64);
        }
    }
}
