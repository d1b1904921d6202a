//! The sending host's timing noise (`[tcp] send_jitter`, off by default): what the sender hands
//! down at one instant (one send opportunity: what an ACK or the pacing timer releases, a GSO
//! burst, the first window) leaves it together, a uniform random time in [0, J) later, and
//! never before what was handed down before it (order kept). The network draws once per send
//! opportunity (`network::run`'s `inject_out`).
//!
//! Why: a simulator's senders are exact. Through a full drop-tail queue whose departures keep a
//! fixed grid (one packet per service time), flows with exactly periodic timing keep their
//! phase against that grid, and which of them the queue drops is then set by sub-service-time
//! details of their delays: the *phase effects* of Floyd and Jacobson ("On Traffic Phase
//! Effects in Packet-Switched Gateways", Internetworking: Research and Experience 3(3), 1992),
//! who remove them in simulations by adding a random processing time at the source, uniform
//! over up to one bottleneck service time. ns-2 has it as `Agent/TCP set overhead_`
//! (`TcpAgent::send_much` in tcp.cc: a send opportunity waits `Random::uniform(overhead_)` on
//! `delsnd_timer_`, then sends what the window allows), as here; a Linux host takes a GSO
//! burst down the stack and through the driver as one, so its noise moves the burst whole.
//! Real hosts have it anyway: interrupts, softirq scheduling and the driver put tens of
//! microseconds of noise on every departure (docs/testbed.md, "Exact delays").
//!
//! Simplification (stated in docs/transports.md): the sender's own clock still stamps the
//! segment when it hands it down (its RTT samples include the noise, as a real stack's do,
//! whose stamps are taken before the qdisc and the driver), and only data segments carry it:
//! the receiver's ACKs leave at once.

use aqm::{AqmRng, Time};
use rand::Rng;

/// One sender's transmit-path noise.
#[derive(Clone, Debug)]
pub struct SendJitter {
    /// J, ns: each segment waits a uniform time in [0, J).
    pub max_ns: Time,
    rng: AqmRng,
    /// When the last segment left (a later one never leaves before it).
    last: Time,
}

impl SendJitter {
    /// Noise of up to `max_ns` (0: none, `None`), from a generator seeded with `seed`.
    pub fn new(max_ns: Time, seed: u64) -> Option<Self> {
        (max_ns > 0).then(|| Self {
            max_ns,
            rng: aqm::rng_from_seed(seed),
            last: 0,
        })
    }

    /// When what is handed down at `now` (one send opportunity) leaves: `now` plus a uniform
    /// draw in [0, J), but no earlier than what was handed down before it.
    #[inline]
    pub fn depart(&mut self, now: Time) -> Time {
        let at = (now + self.rng.random_range(0..self.max_ns)).max(self.last);
        self.last = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_at_zero() {
        assert!(SendJitter::new(0, 1).is_none());
    }

    /// Each delay lies in [0, J), order is kept, and a lone segment's delay is uniform: its
    /// mean is J/2 and its variance J^2/12 (the uniform distribution's moments), within five
    /// standard errors over 100,000 draws.
    #[test]
    fn uniform_bounded_and_in_order() {
        let j: Time = 120_000;
        let mut s = SendJitter::new(j, 7).unwrap();
        let n = 100_000u64;
        let (mut sum, mut sum2) = (0.0f64, 0.0f64);
        let mut prev = 0;
        for i in 0..n {
            // Segments 1 ms apart: the order constraint never binds.
            let now = 1_000_000 * (i + 1);
            let at = s.depart(now);
            assert!(
                at >= now && at < now + j,
                "delay {} outside [0, J)",
                at - now
            );
            assert!(at >= prev);
            prev = at;
            let d = (at - now) as f64;
            sum += d;
            sum2 += d * d;
        }
        let mean = sum / n as f64;
        let var = sum2 / n as f64 - mean * mean;
        let jf = j as f64;
        let se_mean = (jf * jf / 12.0 / n as f64).sqrt();
        assert!((mean - jf / 2.0).abs() < 5.0 * se_mean, "mean {mean}");
        // Var of the sample variance of U(0, J): (mu4 - sigma^4) / n, mu4 = J^4 / 80.
        let se_var = ((jf.powi(4) / 80.0 - (jf * jf / 12.0).powi(2)) / n as f64).sqrt();
        assert!(
            (var - jf * jf / 12.0).abs() < 5.0 * se_var,
            "variance {var}"
        );
    }

    /// A burst handed down at one instant leaves in order, spread over less than J.
    #[test]
    fn burst_keeps_order() {
        let mut s = SendJitter::new(50_000, 3).unwrap();
        let at: Vec<Time> = (0..20).map(|_| s.depart(10_000)).collect();
        assert!(at.windows(2).all(|w| w[0] <= w[1]));
        assert!(at[0] >= 10_000 && at[19] < 60_000);
    }
}
