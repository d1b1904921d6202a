//! A latency probe like the ping of Flent's RRUL test (Høiland-Jørgensen et al., "Flent: The
//! FLExible Network Tester", 2017, s. 3): one small packet every `interval` from the source host,
//! echoed by the destination host back along the reverse path, so each echo measures the
//! round-trip time both queues add. It offers `bytes x 8 / interval` bit/s each way (64 B every
//! 10 ms: 51.2 kb/s), so it barely loads the path it measures.
//!
//! The echo is the packet itself turned around (same size, same send time stamp); the source
//! records `now - sent` when it comes back. Probes are not ECN-capable: an AQM drops them.

use super::{positive, Source};
use crate::hist::Hist;
use crate::series::Samples;
use aqm::{AqmRng, Time};

/// The probe source.
pub struct Probe {
    interval_ns: Time,
    bytes: u32,
}

impl Probe {
    /// Checks and builds; `field` names the flow in errors.
    pub fn new(interval_ns: Time, bytes: u32, field: &str) -> Result<Self, String> {
        if interval_ns == 0 {
            return Err(format!("{field}.interval: must be > 0"));
        }
        positive(&format!("{field}.packet_size"), bytes as f64)?;
        Ok(Probe { interval_ns, bytes })
    }
}

impl Source for Probe {
    fn first_gap(&mut self, _rng: &mut AqmRng) -> Time {
        0
    }

    fn emit(&mut self, _rng: &mut AqmRng) -> (u32, Time) {
        (self.bytes, self.interval_ns)
    }

    fn mean_rate_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 * 1e9 / self.interval_ns as f64
    }

    fn echo(&self) -> bool {
        true
    }
}

/// Round-trip times of a probe's echoes: the distribution over the probes sent in the
/// measurement window, and every echo's (send time, RTT) for plots (thinned past `capacity`).
#[derive(Clone, Debug)]
pub struct EchoStats {
    /// Echoes received of probes sent in the window.
    pub n: u64,
    /// Sum of their RTTs, ns.
    pub sum_ns: f64,
    /// Smallest RTT, ns.
    pub min_ns: u64,
    /// Largest RTT, ns.
    pub max_ns: u64,
    /// Their distribution, ns (log-linear: percentiles within 1/32).
    pub hist: Hist,
    /// (send time, RTT in s) of every echo of the run, warm-up included.
    pub samples: Samples,
}

impl EchoStats {
    /// Empty, keeping at most `capacity` samples for the time series.
    pub fn new(capacity: usize) -> Self {
        EchoStats {
            n: 0,
            sum_ns: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
            hist: Hist::default(),
            samples: Samples::new(capacity),
        }
    }

    /// The echo of a probe sent at `sent` is back at `now`.
    pub fn record(&mut self, sent: Time, now: Time, warmup: Time) {
        let rtt = now - sent;
        self.samples.push(sent, rtt as f64 / 1e9);
        if sent < warmup {
            return;
        }
        self.n += 1;
        self.sum_ns += rtt as f64;
        self.min_ns = self.min_ns.min(rtt);
        self.max_ns = self.max_ns.max(rtt);
        self.hist.add(rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_sends_its_size_at_its_interval() {
        let mut p = Probe::new(10_000_000, 64, "f").unwrap();
        let mut rng = aqm::rng_from_seed(1);
        assert_eq!(p.first_gap(&mut rng), 0);
        assert_eq!(p.emit(&mut rng), (64, 10_000_000));
        // 64 B every 10 ms = 51.2 kb/s.
        assert!((p.mean_rate_bps() - 51_200.0).abs() < 1e-9);
        assert!(Probe::new(0, 64, "f").is_err());
        assert!(Probe::new(1, 0, "f").is_err());
    }

    #[test]
    fn echo_stats_count_only_probes_sent_after_the_warmup() {
        let mut e = EchoStats::new(100);
        e.record(5, 25, 10); // warm-up: plotted only
        e.record(10, 40, 10);
        e.record(20, 30, 10);
        assert_eq!((e.n, e.min_ns, e.max_ns), (2, 10, 30));
        assert_eq!(e.sum_ns, 40.0);
        assert_eq!(e.samples.t, vec![5, 10, 20]);
    }
}
