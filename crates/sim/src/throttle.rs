//! The router side of ModRED's throttle (seed 004 s. 3): which ACKs of a flow get their
//! advertised window clamped to one segment after the AQM answered [`Verdict::Throttle`].
//!
//! The paper says only that the window field of the ACKs "going towards the sender" is set to one
//! MSS while the average queue is between the thresholds; how long one throttle decision lasts is
//! left open, so both readings are offered ([`ThrottleHold`]) and compared in
//! docs/reproductions.md.

use aqm::{ThrottleHold, Verdict};

/// One flow's pending throttle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttle {
    /// The router whose AQM throttled the flow.
    node: Option<usize>,
    /// ACKs still to clamp ([`ThrottleHold::OneAck`]); `None`: every ACK until the flow is admitted
    /// there unthrottled ([`ThrottleHold::UntilAdmit`]).
    acks: Option<u32>,
}

impl Throttle {
    /// True while some router throttles this flow.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.node.is_some()
    }

    /// A data packet of the flow got `verdict` at router `from`, whose AQM holds throttles `hold`.
    pub fn on_data(&mut self, from: usize, verdict: Verdict, hold: ThrottleHold) {
        let here = self.node == Some(from);
        match (verdict == Verdict::Throttle, hold) {
            (true, ThrottleHold::UntilAdmit) => {
                self.node = Some(from);
                self.acks = None;
            }
            (true, ThrottleHold::OneAck) => {
                let before = if here { self.acks.unwrap_or(0) } else { 0 };
                self.node = Some(from);
                self.acks = Some(before.saturating_add(1));
            }
            (false, ThrottleHold::UntilAdmit) if here && self.acks.is_none() => self.node = None,
            _ => {}
        }
    }

    /// An ACK of the flow enters a link leaving router `at`: returns the window it leaves with
    /// (one segment when clamped, never raising a window and never lowering a zero window).
    pub fn on_ack(&mut self, at: usize, rwnd: u32) -> u32 {
        if self.node != Some(at) {
            return rwnd;
        }
        if let Some(n) = self.acks {
            if n <= 1 {
                *self = Throttle::default();
            } else {
                self.acks = Some(n - 1);
            }
        }
        rwnd.min(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::ThrottleHold::{OneAck, UntilAdmit};
    use aqm::Verdict::{Admit, Throttle as T};

    #[test]
    fn one_ack_clamps_exactly_one_ack_per_throttled_packet() {
        let mut t = Throttle::default();
        t.on_data(3, T, OneAck);
        t.on_data(3, T, OneAck);
        t.on_data(3, Admit, OneAck); // an unthrottled packet does not cancel pending clamps
        assert_eq!(t.on_ack(5, 40), 40, "another router's link is untouched");
        assert_eq!(t.on_ack(3, 40), 1);
        assert_eq!(t.on_ack(3, 40), 1);
        assert_eq!(
            t.on_ack(3, 40),
            40,
            "two throttles, two clamped ACKs, then the receiver's"
        );
    }

    #[test]
    fn until_admit_clamps_every_ack_until_an_unthrottled_admission() {
        let mut t = Throttle::default();
        t.on_data(3, T, UntilAdmit);
        for _ in 0..5 {
            assert_eq!(t.on_ack(3, 40), 1);
        }
        t.on_data(3, Admit, UntilAdmit);
        assert_eq!(t.on_ack(3, 40), 40);
    }

    #[test]
    fn a_zero_window_is_never_changed_and_a_small_one_never_raised() {
        let mut t = Throttle::default();
        t.on_data(0, T, UntilAdmit);
        assert_eq!(t.on_ack(0, 0), 0, "s. 3: a zero window is left alone");
        assert_eq!(t.on_ack(0, 1), 1);
    }
}
