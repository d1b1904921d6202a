//! The measurement window's counters and integrals of one queue, and its summary
//! (docs/metrics.md): one copy for the simulator's links and the forwarder's directions.

use crate::hist::Hist;
use crate::summary::LinkSummary;
use crate::window::{Ticket, WindowBook};
use aqm::{Time, NS_PER_SEC};

/// Counters and integrals of one queue over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct WindowStats {
    /// Packets that arrived in the window.
    pub arrived: u64,
    /// Their bytes.
    pub arrived_bytes: u64,
    /// Of these, dropped by the AQM (on arrival or at the head).
    pub dropped_aqm: u64,
    /// Of these, dropped because the buffer was full.
    pub dropped_overflow: u64,
    /// Of these, marked ECN CE.
    pub marked: u64,
    /// Admitted with a throttle request (ModRED).
    pub throttled: u64,
    /// The window's arrivals in arrival order and the runs of consecutive drops.
    pub book: WindowBook,
    /// Bytes transmitted within the window (a transmission straddling an edge counts for its
    /// part inside).
    pub tx_bytes: f64,
    /// Sum of queueing delays (arrival to start of transmission), ns, of packets that started
    /// transmission in the window.
    pub delay_sum_ns: f64,
    /// Sum of their squares, ns^2.
    pub delay_sq_sum: f64,
    /// Sum of |d_i - d_(i-1)| over consecutive such packets, ns (jitter).
    pub delay_absdiff_sum: f64,
    /// Number of queueing delays summed.
    pub delay_n: u64,
    /// Their distribution, ns (for percentiles).
    pub delay_hist: Hist,
    /// Sum of the queue lengths (packets) seen by arrivals in the window.
    pub seen_sum: f64,
    /// Sum of their squares.
    pub seen_sq_sum: f64,
    /// Integral of the queue length over the window, packet-ns.
    pub q_int: f64,
    /// Integral of its square.
    pub q2_int: f64,
    /// Integral of the queue in bytes, byte-ns.
    pub qb_int: f64,
    /// Largest queue seen, packets (whole run).
    pub max_pkts: u32,
    /// Largest queue seen, bytes (whole run).
    pub max_bytes: u64,
    last_delay: Option<f64>,
}

impl WindowStats {
    /// A packet of `size` bytes arrives and finds `q_pkts` packets waiting; counted when
    /// `in_window`.
    #[inline]
    pub fn arrival(&mut self, in_window: bool, q_pkts: u32, size: u32) {
        if in_window {
            self.arrived += 1;
            self.arrived_bytes += size as u64;
            let q = q_pkts as f64;
            self.seen_sum += q;
            self.seen_sq_sum += q * q;
        }
    }

    /// A packet is dropped (`by_aqm`, else on overflow); `ticket` places it in the window by its
    /// arrival and settles its fate.
    #[inline]
    pub fn drop(&mut self, ticket: Ticket, by_aqm: bool) {
        if ticket.in_window() {
            if by_aqm {
                self.dropped_aqm += 1;
            } else {
                self.dropped_overflow += 1;
            }
        }
        self.book.settle(ticket, true);
    }

    /// A packet that waited `d` ns starts transmission in the window.
    #[inline]
    pub fn delay(&mut self, d: Time) {
        let x = d as f64;
        self.delay_sum_ns += x;
        self.delay_sq_sum += x * x;
        if let Some(prev) = self.last_delay {
            self.delay_absdiff_sum += (x - prev).abs();
        }
        self.last_delay = Some(x);
        self.delay_n += 1;
        self.delay_hist.add(d);
    }

    /// The queue held `pkts` packets and `bytes` bytes for `dt` ns of the window.
    #[inline]
    pub fn integrate(&mut self, dt: f64, pkts: u32, bytes: u64) {
        let q = pkts as f64;
        self.q_int += q * dt;
        self.q2_int += q * q * dt;
        self.qb_int += bytes as f64 * dt;
    }

    /// The queue is now `pkts` packets and `bytes` bytes (for the maxima).
    #[inline]
    pub fn observe(&mut self, pkts: u32, bytes: u64) {
        self.max_pkts = self.max_pkts.max(pkts);
        self.max_bytes = self.max_bytes.max(bytes);
    }

    /// The summary over a window of `window` ns (docs/metrics.md); NaN where a metric has no
    /// sample.
    pub fn summary(
        &self,
        name: String,
        aqm: String,
        rate_bps: u64,
        window: f64,
        aqm_stats: Vec<(&'static str, f64)>,
    ) -> LinkSummary {
        let secs = |ns: f64| ns / NS_PER_SEC as f64;
        let nan_if_zero = |n: u64, x: f64| if n == 0 { f64::NAN } else { x };
        let window_s = secs(window);
        let drops = self.dropped_aqm + self.dropped_overflow;
        let qm = self.q_int / window;
        let qv = (self.q2_int / window - qm * qm).max(0.0);
        let n_seen = self.arrived.max(1) as f64;
        let sm = self.seen_sum / n_seen;
        let dn = self.delay_n.max(1) as f64;
        let dm = self.delay_sum_ns / dn;
        let thr = self.tx_bytes * 8.0 / window_s;
        LinkSummary {
            name,
            aqm,
            rate_bps,
            capacity: None,
            arrived: self.arrived,
            dropped_aqm: self.dropped_aqm,
            dropped_overflow: self.dropped_overflow,
            marked: self.marked,
            throttled: self.throttled,
            loss_ratio: nan_if_zero(self.arrived, drops as f64 / n_seen),
            loss_runs: self.book.runs,
            throughput_bps: thr,
            utilisation: thr / rate_bps as f64,
            queue_mean_pkts: qm,
            queue_std_pkts: qv.sqrt(),
            queue_mean_bytes: self.qb_int / window,
            queue_seen_mean_pkts: nan_if_zero(self.arrived, sm),
            queue_seen_std_pkts: nan_if_zero(
                self.arrived,
                (self.seen_sq_sum / n_seen - sm * sm).max(0.0).sqrt(),
            ),
            queue_max_pkts: self.max_pkts,
            delay_mean_s: nan_if_zero(self.delay_n, secs(dm)),
            delay_p50_s: self.delay_hist.quantile(0.5).map(secs),
            delay_p90_s: self.delay_hist.quantile(0.9).map(secs),
            delay_p99_s: self.delay_hist.quantile(0.99).map(secs),
            delay_p999_s: self.delay_hist.quantile(0.999).map(secs),
            delay_std_s: nan_if_zero(
                self.delay_n,
                secs((self.delay_sq_sum / dn - dm * dm).max(0.0).sqrt()),
            ),
            jitter_s: nan_if_zero(
                self.delay_n.saturating_sub(1),
                secs(self.delay_absdiff_sum / (dn - 1.0).max(1.0)),
            ),
            aqm_stats: aqm_stats
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }
}
