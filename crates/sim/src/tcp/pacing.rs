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
        if !self.on || now >= self.next_send {
            return true;
        }
        self.deadline = Some(self.next_send);
        false
    }

    /// A segment left at `now` with the pacing rate `rate` (segments per second).
    #[inline]
    pub fn sent(&mut self, now: Time, rate: Option<f64>) {
        if let Some(r) = rate.filter(|r| *r > 0.0) {
            let gap = round_ns(NS_PER_SEC as f64 / r);
            self.next_send = self.next_send.max(now) + gap;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
