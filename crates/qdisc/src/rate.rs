//! Links whose capacity varies: a rate schedule (piecewise-constant rate, optionally repeating)
//! or a mahimahi packet-delivery trace, for the simulator's links and the forwarder's paths. A
//! fixed-rate link has no [`VarClock`] and keeps its own clock (the simulator's exact-carry
//! `Link::tx_ns`, the forwarder's `Path::tx_ns`).
//!
//! Serving rules (docs/simulator.md, "Links whose capacity varies"):
//! - **Schedule**: the transmitter clocks bits out at the rate in force at each instant, so a
//!   packet in transmission when the rate changes sends its remaining bits at the new rate (its
//!   serialisation is split at the boundary): its end is the first instant `e` with
//!   `integral_start^e rate(t) dt >= 8 size`. (ns-3's `PointToPointNetDevice::TransmitStart`
//!   instead fixes a packet's transmission time at its start from the `DataRate` then in force;
//!   the two differ by less than one packet time per rate change.) Each packet's end is rounded
//!   up to a whole ns: never faster than the schedule.
//! - **Trace** (mahimahi, `src/frontend/link_queue.cc`, `LinkQueue::rationalize`):
//!   each line of the trace is a millisecond at which the link may deliver up to 1500 bytes of
//!   IP packets ([`TRACE_MTU`]); several equal lines are several opportunities. An opportunity
//!   takes the head packet (or the rest of the packet in transit) and, while bytes of the 1500
//!   remain, the next ones; a packet larger than what remains sends that part now and the rest at the following
//!   opportunities, and leaves the link at the opportunity that carries its last byte. Bytes of an
//!   opportunity the queue cannot use (it is empty) are lost. At the end of the file the trace
//!   starts again, shifted by its last timestamp (`use_a_delivery_opportunity`,
//!   `base_timestamp_`). An opportunity at `t` serves packets that arrived at or before `t` ns
//!   (mahimahi's clock is in whole ms and burns the opportunities of the current ms before it
//!   enqueues an arrival, so there a packet arriving in the ms of an opportunity misses it).
//!   mahimahi refuses packets larger than 1500 bytes; here they are split like any other.

use aqm::{Time, NS_PER_SEC};

/// Bytes of IP packets one trace opportunity delivers. mahimahi's `PACKET_SIZE`
/// (`src/frontend/link_queue.hh`) is 1504 bytes of TUN payload: its TUN device (`IFF_TUN`
/// without `IFF_NO_PI`, `src/util/netdevice.cc`) puts a 4-byte header before each 1500-byte IP
/// packet. The simulator's packets are IP packets, so an opportunity carries 1500 bytes of them
/// (mahimahi charges each packet 4 bytes more: a burst of small packets fits slightly fewer
/// there).
pub const TRACE_MTU: u32 = 1500;
const NS_PER_MS: u64 = 1_000_000;

/// The clock of a link whose capacity varies.
#[derive(Clone, Debug)]
pub enum VarClock {
    /// A piecewise-constant rate.
    Schedule(Schedule),
    /// A mahimahi delivery-opportunity trace.
    Trace(Trace),
}

impl VarClock {
    /// A packet of `size` bytes may start at `ready` (it has arrived and the transmitter is
    /// free): when its transmission starts and when it ends (its last bit leaves).
    #[inline]
    pub fn serve(&mut self, ready: Time, size: u32) -> (Time, Time) {
        match self {
            VarClock::Schedule(s) => (ready, s.end_of(ready, size)),
            VarClock::Trace(t) => t.serve(ready, size),
        }
    }

    /// The first instant at or after `t` at which a transmission can start (a trace's next
    /// opportunity; `t` itself for a schedule). Opportunities before `t` are passed (lost).
    #[inline]
    pub fn next_start(&mut self, t: Time) -> Time {
        match self {
            VarClock::Schedule(_) => t,
            VarClock::Trace(tr) => tr.skip_to(t),
        }
    }

    /// Bits the link can carry over `[lo, hi]` ns (the capacity actually offered; a trace's
    /// opportunity at `hi` counts, as a packet sent then counts in the window).
    pub fn offered_bits(&self, lo: Time, hi: Time) -> f64 {
        match self {
            VarClock::Schedule(s) => s.offered_bits(lo, hi),
            VarClock::Trace(t) => t.count_in(lo, hi + 1) as f64 * TRACE_MTU as f64 * 8.0,
        }
    }

    /// `"schedule"` or `"trace"`, for the summary.
    pub fn kind(&self) -> &'static str {
        match self {
            VarClock::Schedule(_) => "schedule",
            VarClock::Trace(_) => "trace",
        }
    }
}

/// A piecewise-constant rate: `steps[k] = (at_ns, rate_bps)`, the first at 0, times increasing;
/// with `repeat` the pattern starts again every `repeat` ns (greater than the last step's time).
#[derive(Clone, Debug)]
pub struct Schedule {
    steps: Vec<(Time, u64)>,
    repeat: Option<Time>,
}

impl Schedule {
    /// A schedule, checked; the error names the field and what is allowed.
    pub fn new(steps: Vec<(Time, u64)>, repeat: Option<Time>) -> Result<Self, String> {
        if steps.is_empty() {
            return Err("rate: give at least one { at, rate } step".into());
        }
        if steps[0].0 != 0 {
            return Err("rate[0].at: the first step must be at 0s".into());
        }
        for (k, w) in steps.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(format!(
                    "rate[{}].at: step times must increase (got {} ns after {} ns)",
                    k + 1,
                    w[1].0,
                    w[0].0
                ));
            }
        }
        if let Some(k) = steps.iter().position(|s| s.1 == 0) {
            return Err(format!("rate[{k}].rate: must be > 0 bit/s"));
        }
        if let Some(p) = repeat {
            let last = steps.last().expect("non-empty").0;
            if p <= last {
                return Err(format!(
                    "rate_repeat: must be longer than the last step's time ({last} ns; got {p} ns)"
                ));
            }
        }
        Ok(Schedule { steps, repeat })
    }

    /// The rate in force at `t` and the instant it next changes (`Time::MAX`: never).
    #[inline]
    fn segment(&self, t: Time) -> (u64, Time) {
        let (base, u) = match self.repeat {
            Some(p) => (t - t % p, t % p),
            None => (0, t),
        };
        let k = self.steps.partition_point(|s| s.0 <= u) - 1;
        let next = match (self.steps.get(k + 1), self.repeat) {
            (Some(s), _) => base + s.0,
            (None, Some(p)) => base + p,
            (None, None) => Time::MAX,
        };
        (self.steps[k].1, next)
    }

    /// The end of a transmission of `size` bytes starting at `start` (see the module docs).
    pub fn end_of(&self, start: Time, size: u32) -> Time {
        // Work in bit x ns/s (bits x 1e9), so that a segment of d ns at r bit/s supplies d r.
        let mut need = size as u128 * 8 * NS_PER_SEC as u128;
        let mut t = start;
        loop {
            let (r, next) = self.segment(t);
            let supply = (next - t) as u128 * r as u128;
            if need <= supply {
                return t + need.div_ceil(r as u128) as Time;
            }
            need -= supply;
            t = next;
        }
    }

    /// Bits offered over `[lo, hi)`.
    pub fn offered_bits(&self, lo: Time, hi: Time) -> f64 {
        let mut bits = 0.0;
        let mut t = lo;
        while t < hi {
            let (r, next) = self.segment(t);
            let e = next.min(hi);
            bits += (e - t) as f64 * r as f64 / NS_PER_SEC as f64;
            t = e;
        }
        bits
    }
}

/// A mahimahi trace: delivery opportunities at millisecond timestamps, repeating.
#[derive(Clone, Debug)]
pub struct Trace {
    ms: Vec<u64>,
    period: u64,
    // The current opportunity: index in `ms`, the cycle's offset (ms) and the bytes it has left.
    idx: usize,
    base: u64,
    left: u32,
}

impl Trace {
    /// A trace from its timestamps (ms, non-decreasing, the last > 0), checked.
    pub fn new(ms: Vec<u64>) -> Result<Self, String> {
        if ms.is_empty() {
            return Err("trace: the file has no timestamps".into());
        }
        if let Some(k) = ms.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!(
                "trace: line {}: timestamps must not decrease (got {} after {})",
                k + 2,
                ms[k + 1],
                ms[k]
            ));
        }
        let period = *ms.last().expect("non-empty");
        if period == 0 {
            return Err(
                "trace: the last timestamp must be > 0 ms (it is the trace's period)".into(),
            );
        }
        Ok(Trace {
            ms,
            period,
            idx: 0,
            base: 0,
            left: TRACE_MTU,
        })
    }

    /// The time of the current opportunity, ns.
    #[inline]
    fn now(&self) -> Time {
        (self.base + self.ms[self.idx]) * NS_PER_MS
    }

    #[inline]
    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.ms.len() {
            self.idx = 0;
            self.base += self.period;
        }
        self.left = TRACE_MTU;
    }

    /// Passes the opportunities before `t` (their bytes are lost) and returns the time of the
    /// first one at or after `t`.
    pub fn skip_to(&mut self, t: Time) -> Time {
        if self.now() >= t {
            return self.now();
        }
        self.left = TRACE_MTU;
        let r = t.div_ceil(NS_PER_MS); // the first whole ms at or after t
        if r > self.base + self.period {
            // Whole cycles at once.
            self.base += (r - self.base - 1) / self.period * self.period;
            self.idx = 0;
        }
        loop {
            let from = self.idx;
            let i = from + self.ms[from..].partition_point(|&m| self.base + m < r);
            if i < self.ms.len() {
                self.idx = i;
                return self.now();
            }
            self.idx = 0;
            self.base += self.period;
        }
    }

    /// A packet of `size` bytes ready at `ready`: its first and last opportunities.
    pub fn serve(&mut self, ready: Time, size: u32) -> (Time, Time) {
        let start = self.skip_to(ready);
        let mut rest = size;
        loop {
            let take = rest.min(self.left);
            rest -= take;
            self.left -= take;
            if rest == 0 {
                let end = self.now();
                if self.left == 0 {
                    self.advance();
                }
                return (start, end);
            }
            self.advance();
        }
    }

    /// Opportunities at times in `[lo, hi)` ns.
    pub fn count_in(&self, lo: Time, hi: Time) -> u64 {
        self.count_before(hi) - self.count_before(lo)
    }

    /// Opportunities at times before `t` ns.
    fn count_before(&self, t: Time) -> u64 {
        // Opportunity c P + m (cycle c, timestamp m, ms) is before t  <=>  c P + m < r, with r
        // = ceil(t / 1 ms). Every timestamp of cycle c is at most (c + 1) P: the cycles with
        // (c + 1) P < r count whole, and only the next one can count in part.
        let r = t.div_ceil(NS_PER_MS);
        let full = r.saturating_sub(1) / self.period;
        let base = full * self.period;
        full * self.ms.len() as u64 + self.ms.partition_point(|&m| base + m < r) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn a_schedule_splits_a_packet_at_the_rate_change() {
        // 12 Mb/s until 1 ms, then 1.2 Mb/s. 1500 B = 12,000 bits: 1 ms at 12 Mb/s.
        // A packet starting at 0.5 ms sends 6,000 bits by 1 ms and the other 6,000 at 1.2 Mb/s
        // in 5 ms: it ends at 6 ms. One starting at 0 ends exactly at 1 ms.
        let s = Schedule::new(vec![(0, 12_000_000), (MS, 1_200_000)], None).unwrap();
        assert_eq!(s.end_of(0, 1500), MS);
        assert_eq!(s.end_of(MS / 2, 1500), 6 * MS);
        assert_eq!(s.end_of(2 * MS, 1500), 12 * MS);
        // Over [0, 2 ms): 12,000 + 1,200 bits.
        assert!((s.offered_bits(0, 2 * MS) - 13_200.0).abs() < 1e-9);
    }

    #[test]
    fn a_repeating_schedule_departures_by_hand() {
        // 12 Mb/s for 2 ms, 6 Mb/s for 2 ms, repeating every 4 ms. Back-to-back 1500 B packets
        // from 0: 1 ms each at 12 Mb/s, 2 ms at 6 Mb/s. Ends: 1, 2 (12 Mb/s), 4 (6 Mb/s: 2 ms),
        // 5, 6 (12 Mb/s again from 4 ms), 8, then 9, 10, 12.
        let s = Schedule::new(vec![(0, 12_000_000), (2 * MS, 6_000_000)], Some(4 * MS)).unwrap();
        let mut t = 0;
        let mut ends = Vec::new();
        for _ in 0..9 {
            t = s.end_of(t, 1500);
            ends.push(t / MS);
        }
        assert_eq!(ends, vec![1, 2, 4, 5, 6, 8, 9, 10, 12]);
        // A packet straddling the repeat: from 3 ms, 1 ms at 6 Mb/s sends 6,000 bits, the
        // other 6,000 at 12 Mb/s take 0.5 ms: ends at 4.5 ms.
        assert_eq!(s.end_of(3 * MS, 1500), 4 * MS + MS / 2);
        // Offered over 10 s: the mean rate 9 Mb/s.
        let b = s.offered_bits(0, 10_000 * MS);
        assert!((b - 90e6).abs() < 1e-3, "{b}");
    }

    #[test]
    fn schedules_are_checked() {
        assert!(Schedule::new(vec![], None).is_err());
        assert!(Schedule::new(vec![(5, 1)], None)
            .unwrap_err()
            .starts_with("rate[0].at"));
        assert!(Schedule::new(vec![(0, 1), (0, 2)], None)
            .unwrap_err()
            .starts_with("rate[1].at"));
        assert!(Schedule::new(vec![(0, 1), (3, 0)], None)
            .unwrap_err()
            .starts_with("rate[1].rate"));
        assert!(Schedule::new(vec![(0, 1), (3, 2)], Some(3))
            .unwrap_err()
            .starts_with("rate_repeat"));
    }

    /// The ten-line trace of the tests: opportunities at 1, 1, 2, 4, 4, 4, 7, 8, 9, 10 ms.
    fn ten() -> Trace {
        Trace::new(vec![1, 1, 2, 4, 4, 4, 7, 8, 9, 10]).unwrap()
    }

    #[test]
    fn a_ten_line_trace_delivers_by_hand() {
        // Worked by hand from mahimahi's rule (module docs). Packets, all queued at 0:
        // 1500 (opp 1 ms #1, whole), 1000 + 1000 (opp 1 ms #2: the first whole, 500 B of the
        // second; its other 500 B at 2 ms, which then has 1000 B left: lost when nothing else
        // is queued). Then a 1500 B packet ready at 3 ms starts at 4 ms #1; three 600 B
        // packets ready at 4 ms: 600 + 600 at 4 ms #2 (300 B left), 300 of the third there
        // and 300 at 4 ms #3.
        let mut t = ten();
        assert_eq!(t.serve(0, 1500), (MS, MS));
        assert_eq!(t.serve(MS, 1000), (MS, MS));
        assert_eq!(t.serve(MS, 1000), (MS, 2 * MS));
        assert_eq!(t.serve(3 * MS, 1500), (4 * MS, 4 * MS));
        assert_eq!(t.serve(4 * MS, 600), (4 * MS, 4 * MS));
        assert_eq!(t.serve(4 * MS, 600), (4 * MS, 4 * MS));
        assert_eq!(t.serve(4 * MS, 600), (4 * MS, 4 * MS));
        // The 4 ms #3 opportunity has 1200 B left: a 1500 B packet ready at 4 ms sends 1200
        // there and 300 at 7 ms.
        assert_eq!(t.serve(4 * MS, 1500), (4 * MS, 7 * MS));
        // 7 ms has 1200 B left but the next packet is ready only at 7.5 ms: it is lost; the
        // packet goes at 8 ms. At the end the trace repeats shifted by 10 ms: a packet ready
        // at 10.5 ms goes at 11 ms (the repeat's first line),
        // and a 7500 B one ready at 11 ms takes 11 ms #2, 12, 14, 14, 14 (5 x 1500 B).
        assert_eq!(t.serve(7 * MS + MS / 2, 40), (8 * MS, 8 * MS));
        assert_eq!(t.serve(10 * MS + MS / 2, 1500), (11 * MS, 11 * MS));
        assert_eq!(t.serve(11 * MS, 7500), (11 * MS, 14 * MS));
        // Opportunities in [0, 10 ms): 9; in [0, 100 ms): 10 cycles of 10.
        assert_eq!(t.count_in(0, 10 * MS), 9);
        assert_eq!(t.count_in(0, 10 * MS + 1), 10);
        assert_eq!(t.count_in(0, 100 * MS), 99);
        assert_eq!(t.count_in(0, 100 * MS + 1), 100);
        assert_eq!(t.count_in(4 * MS, 5 * MS), 3);
    }

    #[test]
    fn a_long_idle_gap_skips_whole_cycles() {
        let mut t = ten();
        // 1,000,003.5 ms: cycle base 1,000,000 ms, first opportunity at or after: 1,000,004.
        let at = 1_000_003 * MS + MS / 2;
        assert_eq!(t.serve(at, 100), (1_000_004 * MS, 1_000_004 * MS));
        assert_eq!(t.count_in(0, 1_000_000 * MS + 1), 1_000_000);
    }

    #[test]
    fn traces_are_checked() {
        assert!(Trace::new(vec![]).is_err());
        assert!(Trace::new(vec![0, 0]).is_err());
        assert!(Trace::new(vec![3, 2, 5])
            .unwrap_err()
            .starts_with("trace: line 2"));
    }
}
