//! Pacing as Linux's internal TCP pacing (`tcp_update_pacing_rate` in `net/ipv4/tcp_input.c`,
//! the departure stamps of `tcp_update_skb_after_send` in `net/ipv4/tcp_output.c`): a segment
//! leaves no earlier than the previous one's departure plus its length at the pacing rate,
//! rate = ratio x max(cwnd, packets in flight) x MSS / SRTT, ratio 200% while cwnd < ssthresh / 2
//! (`tcp_pacing_ss_ratio`, slow start may still double the window) and 120% after
//! (`tcp_pacing_ca_ratio`). Before the first RTT sample Linux does not divide by SRTT, which
//! leaves the flow in effect unpaced: here too.
//!
//! Simplification (stated in docs/simulator.md): what the window allows outside loss recovery
//! (new data, and the retransmissions after a timeout) is paced; fast retransmissions and
//! PRR's sends during recovery leave at once. A controller with its own rate (BBR) gives it
//! through [`super::cc::CongestionControl::pacing_rate`].
//!
//! GSO bursts (`[tcp] gso`, off by default): Linux hands the device several segments at once
//! (`tcp_write_xmit` builds an skb of `tcp_tso_segs` segments) and then waits for the whole
//! skb's time at the pacing rate (`tcp_update_skb_after_send`). With `gso` a paced sender does
//! the same: the first segment to leave at or after `next_send` opens a burst of
//! [`gso_segs`] segments that leave at the same instant (as far as the window allows), and each
//! adds its gap to `next_send`. An unpaced sender already sends what its window allows at once.
//!
//! Credit for a late departure (`[tcp] pacing_credit`, off by default): Linux moves the pacing
//! clock on by less when an skb leaves after its time. `__tcp_transmit_skb` first sets
//! `tcp_wstamp_ns = max(tcp_wstamp_ns, now)`; `tcp_update_skb_after_send` then takes the
//! amount that moved it (`credit`, how late the skb left) off the skb's length at the pacing
//! rate, at most half of it ("take into account OS jitter", net/ipv4/tcp_output.c): the next
//! skb may leave up to half an skb's time sooner. Here a segment that opens a burst (every
//! segment without `gso`) takes the credit, and the burst's segments take it off their gaps,
//! each at most half its own, in order: equal gaps, so the burst's total is cut by
//! min(credit, half its length), as Linux cuts the one skb's. The simulator's timers are
//! exact, so only a sender that left after its time for another reason (its window closed, an
//! ACK it waited for) has credit.

use aqm::{Time, NS_PER_SEC};

/// Linux's `tcp_pacing_ss_ratio` (percent).
pub const SS_RATIO: f64 = 2.0;
/// Linux's `tcp_pacing_ca_ratio` (percent).
pub const CA_RATIO: f64 = 1.2;

/// The sender's pacing clock.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Pacing on (`[tcp] pacing`).
    pub on: bool,
    /// The earliest departure of the next segment.
    pub next_send: Time,
    /// A segment waits for `next_send`: the run is to call the sender back then.
    pub deadline: Option<Time>,
    /// Time of the pending pacing event (one per flow at a time).
    pub event: Option<Time>,
    /// When the current GSO burst opened (`[tcp] gso`).
    pub burst_at: Time,
    /// Segments the current GSO burst may still send at `burst_at`.
    pub burst_left: u32,
    /// Take credit for a late departure (`[tcp] pacing_credit`).
    pub credit: bool,
    /// Credit the current burst has not yet taken off its gaps, ns.
    pub credit_left: Time,
}

/// GSO's largest burst, bytes (`sk_gso_max_size`: `GSO_LEGACY_MAX_SIZE`, 64 KB, the default
/// of veth and most devices).
pub const GSO_MAX_SIZE: u64 = 65_536;

/// Segments per GSO burst, Linux's `tcp_tso_autosize` (net/ipv4/tcp_output.c, since 5.18):
/// the pacing rate's bytes in 2^-10 s (`sk_pacing_shift` 10), plus 64 KB halved for every
/// 2^9 us of min RTT (`tcp_tso_rtt_log` 9; nothing before an RTT sample, where Linux's
/// min RTT is ~0U), at most 64 KB, in segments of `mss` payload bytes, at least
/// `min_tso_segs` (the controller's `min_tso_segs`, else the sysctl's 2).
/// `rate_bytes`: pacing rate, bytes per second; `min_rtt_ns`: 0 or less before a sample.
pub fn gso_segs(rate_bytes: f64, min_rtt_ns: f64, mss: u32, min_tso_segs: u32) -> u32 {
    let mut bytes = (rate_bytes.max(0.0) as u64) >> 10;
    if min_rtt_ns > 0.0 {
        let r = ((min_rtt_ns / 1_000.0) as u64) >> 9;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
    }
    ((bytes.min(GSO_MAX_SIZE) / u64::from(mss.max(1))) as u32).max(min_tso_segs)
}

/// The default pacing rate, segments per second (`None` before the first RTT sample).
pub fn linux_rate(cwnd: f64, ssthresh: f64, flight: u32, srtt_ns: f64) -> Option<f64> {
    if srtt_ns <= 0.0 {
        return None;
    }
    let ratio = if cwnd < ssthresh / 2.0 {
        SS_RATIO
    } else {
        CA_RATIO
    };
    Some(ratio * cwnd.max(flight as f64) * NS_PER_SEC as f64 / srtt_ns)
}

/// `x.round() as Time` (half away from zero; negative and NaN give 0, beyond `Time::MAX` it
/// saturates) for every f64, without the call to libm's `round` the baseline x86-64 target makes
/// once per paced segment: the cast truncates, and the fraction `x - trunc(x)` is exact (below
/// 2^53; above, `x` is whole and the fraction 0).
#[inline]
pub fn round_ns(x: f64) -> Time {
    let i = x as Time;
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

impl Pacer {
    /// May a segment leave at `now`? If not, notes the deadline.
    #[inline]
    pub fn allows(&mut self, now: Time) -> bool {
        if !self.on || now >= self.next_send || (self.burst_left > 0 && now == self.burst_at) {
            return true;
        }
        self.deadline = Some(self.next_send);
        false
    }

    /// The first instant from `now` on at which [`Pacer::allows`] would let a segment out
    /// (`now` when it would now), without arming the timer.
    #[inline]
    pub fn next_allowed(&self, now: Time) -> Time {
        if !self.on || now >= self.next_send || (self.burst_left > 0 && now == self.burst_at) {
            now
        } else {
            self.next_send
        }
    }

    /// Would a segment leaving at `now` open a new GSO burst (rather than join the one opened
    /// at `now`)? Only then does [`Pacer::sent`] read its `burst`.
    #[inline]
    pub fn opens_burst(&self, now: Time) -> bool {
        !(self.burst_left > 0 && now == self.burst_at)
    }

    /// A segment left at `now` with the pacing rate `rate` (segments per second); `burst`:
    /// the segments of a GSO burst this segment would open (1: no bursts).
    #[inline]
    pub fn sent(&mut self, now: Time, rate: Option<f64>, burst: u32) {
        if let Some(r) = rate.filter(|r| *r > 0.0) {
            if !self.opens_burst(now) {
                self.burst_left -= 1;
            } else {
                self.burst_at = now;
                self.burst_left = burst.saturating_sub(1);
                // `credit = tcp_wstamp_ns - prior_wstamp` after the clock is moved up to now.
                if self.credit {
                    self.credit_left = now.saturating_sub(self.next_send);
                }
            }
            let gap = round_ns(NS_PER_SEC as f64 / r);
            self.next_send = self.next_send.max(now) + gap;
            if self.credit_left > 0 {
                self.take_credit(gap);
            }
        }
    }

    /// Takes what is left of the burst's credit off this segment's gap, at most half of it:
    /// `len_ns -= min(len_ns / 2, credit)`, segment by segment (`[tcp] pacing_credit`). Out of
    /// line: with the option off it is never called, and [`Pacer::sent`] stays small enough to
    /// be inlined where the sender paces.
    #[cold]
    #[inline(never)]
    fn take_credit(&mut self, gap: Time) {
        let cut = self.credit_left.min(gap / 2);
        self.credit_left -= cut;
        self.next_send -= cut;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tcp_tso_autosize` by hand. 100 Mb/s = 12.5 MB/s: 12,500,000 >> 10 = 12,207 bytes, min
    /// RTT 20 ms: 20,000 us >> 9 = 39, no RTT allowance: 12,207 / 1,448 = 8 segments. 10 Mb/s:
    /// 1,220 bytes, below one segment: the minimum, 2. Min RTT 100 us: 100 >> 9 = 0, the whole
    /// 64 KB allowance: 65,536 / 1,448 = 45. Min RTT 2 ms: 2,000 >> 9 = 3, 65,536 >> 3 = 8,192
    /// bytes more: (1,220 + 8,192) / 1,448 = 6. Before an RTT sample nothing is added.
    #[test]
    fn gso_segs_as_tcp_tso_autosize() {
        let ms = 1e6;
        assert_eq!(gso_segs(12.5e6, 20.0 * ms, 1448, 2), 8);
        assert_eq!(gso_segs(1.25e6, 20.0 * ms, 1448, 2), 2);
        assert_eq!(gso_segs(1.25e6, 20.0 * ms, 1448, 1), 1);
        assert_eq!(gso_segs(1.25e6, 0.1 * ms, 1448, 2), 45);
        assert_eq!(gso_segs(1.25e6, 2.0 * ms, 1448, 2), 6);
        assert_eq!(gso_segs(1.25e6, 0.0, 1448, 2), 2);
        assert_eq!(gso_segs(1e12, 0.0, 1448, 2), 45, "at most 64 KB");
    }

    /// A burst of 3 at 1,000 segments a second: three segments leave at 0, the fourth must
    /// wait for the three gaps (3 ms), then the next burst opens; a burst cut short by the
    /// window (1 of 3 at 3 ms) does not carry over to a later instant.
    #[test]
    fn a_gso_burst_leaves_at_once_then_waits_for_all_its_gaps() {
        let ms = 1_000_000;
        let mut p = Pacer {
            on: true,
            ..Default::default()
        };
        for _ in 0..3 {
            assert!(p.allows(0));
            p.sent(0, Some(1000.0), 3);
        }
        assert!(!p.allows(0));
        assert_eq!(p.next_send, 3 * ms);
        assert!(!p.allows(3 * ms - 1));
        assert!(p.allows(3 * ms));
        p.sent(3 * ms, Some(1000.0), 3);
        assert_eq!(p.next_send, 4 * ms);
        assert!(
            !p.allows(3 * ms + 1),
            "the rest of the burst was at 3 ms only"
        );
        // Without bursts: a segment at a time, as before.
        let mut q = Pacer {
            on: true,
            ..Default::default()
        };
        assert!(q.allows(0));
        q.sent(0, Some(1000.0), 1);
        assert!(!q.allows(0));
        assert_eq!(q.next_send, ms);
    }

    /// `tcp_update_skb_after_send` by hand, 1,000 segments a second (1 ms a segment), bursts
    /// of 2 (a 2 ms skb). At 0 the burst sets the clock to 2 ms. Its window closed, the sender
    /// next sends at 5 ms: 3 ms late, credit 3 ms, half the skb's 2 ms is 1 ms, so the clock
    /// goes to 5 + 2 - 1 = 6 ms (without credit 7 ms). On time at 6 ms: no credit, 8 ms. At
    /// 8.3 ms: 0.3 ms late, 8.3 + 2 - 0.3 = 10 ms. One segment at a time (no bursts), 4 ms late:
    /// 1 ms - min(0.5, 4) = 0.5 ms.
    #[test]
    fn a_late_departure_takes_credit_up_to_half_the_skb() {
        let ms = 1_000_000;
        let mut p = Pacer {
            on: true,
            credit: true,
            ..Default::default()
        };
        let burst = |p: &mut Pacer, at: Time| {
            for _ in 0..2 {
                assert!(p.allows(at));
                p.sent(at, Some(1000.0), 2);
            }
        };
        burst(&mut p, 0);
        // The first departure, at 0 against a clock at 0, is not late.
        assert_eq!(p.next_send, 2 * ms);
        burst(&mut p, 5 * ms);
        assert_eq!(p.next_send, 6 * ms);
        burst(&mut p, 6 * ms);
        assert_eq!(p.next_send, 8 * ms);
        burst(&mut p, 8 * ms + 300_000);
        assert_eq!(p.next_send, 10 * ms);
        // Without credit the same sends give 7 ms after the late one.
        let mut q = Pacer {
            on: true,
            ..Default::default()
        };
        burst(&mut q, 0);
        burst(&mut q, 5 * ms);
        assert_eq!(q.next_send, 7 * ms);
        // One segment at a time.
        let mut r = Pacer {
            on: true,
            credit: true,
            ..Default::default()
        };
        r.sent(0, Some(1000.0), 1);
        r.sent(5 * ms, Some(1000.0), 1);
        assert_eq!(r.next_send, 5 * ms + ms / 2);
    }

    #[test]
    fn round_ns_is_round_then_cast() {
        // Halves, values either side of them, the edges of the exact range, negatives, NaN and
        // the saturating end, against the standard library's `round` then cast.
        let mut xs = vec![
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            -0.4,
            -0.5,
            -2.7,
            833_333.5,
            1e6 / 3.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1.8446744073709552e19,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut x: u64 = 7;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Rates of 1..10^8 segments per second: gaps of 10..10^9 ns with fractions.
            xs.push(1e9 / (1.0 + (x >> 11) as f64 / (1u64 << 53) as f64 * 1e8));
        }
        for x in xs {
            assert_eq!(round_ns(x), x.round() as Time, "{x}");
        }
    }
}
