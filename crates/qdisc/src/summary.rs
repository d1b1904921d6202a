//! The summary of one AQM-guarded queue over the measurement window, as summary.json reports it
//! (docs/metrics.md), for the simulator's links and the forwarder's directions alike.

use serde::Serialize;
use std::collections::BTreeMap;

/// Summary of one link.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    /// Name.
    pub name: String,
    /// AQM name.
    pub aqm: String,
    /// Rate, bit/s; for a link whose capacity varies, the capacity it offered over the window
    /// (its bits / window length), against which `utilisation` is computed.
    pub rate_bps: u64,
    /// How the capacity varies (`"schedule"` or `"trace"`); absent for a fixed rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<&'static str>,
    /// Packets arrived in the window.
    pub arrived: u64,
    /// Dropped by the AQM.
    pub dropped_aqm: u64,
    /// Dropped on overflow.
    pub dropped_overflow: u64,
    /// Marked CE.
    pub marked: u64,
    /// Throttle verdicts (ModRED).
    pub throttled: u64,
    /// (AQM + overflow drops) / arrivals.
    pub loss_ratio: f64,
    /// Maximal runs of consecutive drops in arrival order.
    pub loss_runs: u64,
    /// Bytes transmitted in the window / window length, bit/s.
    pub throughput_bps: f64,
    /// throughput / rate.
    pub utilisation: f64,
    /// Time-weighted mean queue, packets.
    pub queue_mean_pkts: f64,
    /// Time-weighted standard deviation, packets.
    pub queue_std_pkts: f64,
    /// Time-weighted mean queue, bytes.
    pub queue_mean_bytes: f64,
    /// Mean queue seen by arrivals, packets.
    pub queue_seen_mean_pkts: f64,
    /// Standard deviation of the queue seen by arrivals.
    pub queue_seen_std_pkts: f64,
    /// Largest queue, packets.
    pub queue_max_pkts: u32,
    /// Mean queueing delay (arrival to start of transmission), s.
    pub delay_mean_s: f64,
    /// Median queueing delay, s (log-linear histogram: within 3.1% of the sample median).
    pub delay_p50_s: Option<f64>,
    /// 90th percentile of the queueing delay, s.
    pub delay_p90_s: Option<f64>,
    /// 99th percentile of the queueing delay, s.
    pub delay_p99_s: Option<f64>,
    /// 99.9th percentile of the queueing delay, s.
    pub delay_p999_s: Option<f64>,
    /// Its standard deviation, s.
    pub delay_std_s: f64,
    /// Mean |difference| of consecutive queueing delays, s.
    pub jitter_s: f64,
    /// The AQM's own counters.
    pub aqm_stats: BTreeMap<String, f64>,
}
