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
            let gap = (NS_PER_SEC as f64 / r).round() as Time;
            self.next_send = self.next_send.max(now) + gap;
        }
    }
}
