//! What a run reports: a summary of every monitored link and every flow, and time series.
//! Definitions are those of docs/metrics.md; everything is measured over [warmup, end].

use crate::network::{Flow, Sim};
use crate::tcp::{SenderStats, RTT_BUCKETS_PER_DECADE};
use aqm::{Time, NS_PER_SEC};
use serde::Serialize;

fn secs(ns: f64) -> f64 {
    ns / NS_PER_SEC as f64
}

/// Summary of one link (kept by the queue-discipline layer).
pub use qdisc::summary::LinkSummary;

/// Summary of one flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    /// Name.
    pub name: String,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// Start time, s.
    pub start_s: f64,
    /// In-order payload delivered in the window / window length, bit/s.
    pub goodput_bps: f64,
    /// In-order segments delivered in the whole run.
    pub delivered_segments: u64,
    /// Data segments sent.
    pub segments_sent: u64,
    /// Retransmissions.
    pub retransmits: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// ECN window reductions.
    pub ecn_reductions: u64,
    /// RTT samples.
    pub rtt_samples: u64,
    /// Mean RTT, s.
    pub rtt_mean_s: f64,
    /// Smallest RTT, s.
    pub rtt_min_s: f64,
    /// Largest RTT, s.
    pub rtt_max_s: f64,
    /// RTT median, 90th and 99th percentiles, s (log histogram, 50 buckets per decade).
    pub rtt_p50_s: f64,
    /// 90th percentile.
    pub rtt_p90_s: f64,
    /// 99th percentile.
    pub rtt_p99_s: f64,
    /// Congestion window at the end, segments (`NaN`, null in JSON, for an open-loop flow: it
    /// has no window).
    pub cwnd_final: f64,
    /// Completion time of a finite flow, s since its start.
    pub completion_s: Option<f64>,
    /// TCP: the time the receive window, not cwnd or pacing, held back new data over the whole
    /// run, s (Linux's `tcpi_rwnd_limited`); absent for an open-loop flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rwnd_limited_s: Option<f64>,
    /// Bytes of a finite flow (`None`: bulk or open-loop).
    pub size_bytes: Option<u64>,
    /// Propagation delay of the data path and the ACK path together, s.
    pub base_rtt_s: f64,
    /// Lowest link rate on the data path, bit/s.
    pub path_rate_bps: u64,
    /// When the flow stopped sending new data, s (`None`: it did not stop).
    pub stop_s: Option<f64>,
    /// Open-loop flows: packets sent in the measurement window.
    pub udp_sent: Option<u64>,
    /// Open-loop flows: of those, packets received by the end.
    pub udp_received: Option<u64>,
    /// ECN-capable open-loop flows: of the packets received, those CE-marked (absent for
    /// Not-ECT sources).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp_ce_received: Option<u64>,
    /// Open-loop flows: 1 - received / (sent - still in flight at the end).
    pub udp_loss: Option<f64>,
    /// Open-loop flows: mean one-way delay, s.
    pub owd_mean_s: Option<f64>,
    /// Open-loop flows: median one-way delay, s.
    pub owd_p50_s: Option<f64>,
    /// Open-loop flows: 99th percentile of the one-way delay, s.
    pub owd_p99_s: Option<f64>,
    /// Open-loop flows: largest one-way delay, s.
    pub owd_max_s: Option<f64>,
    /// Open-loop flows: mean |D(i-1, i)| of consecutive packets (RFC 3550 s. 6.4.1), s.
    pub owd_jitter_s: Option<f64>,
    /// A latency probe (its `rtt_*` fields are the echoes' round-trip times).
    pub probe: bool,
}

/// Totals of the run.
#[derive(Clone, Debug, Serialize)]
pub struct RunTotals {
    /// Simulated time, s.
    pub duration_s: f64,
    /// Warm-up, s.
    pub warmup_s: f64,
    /// Seed.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Packets sent by hosts.
    pub packets_sent: u64,
    /// Packets delivered to hosts.
    pub packets_delivered: u64,
    /// Packets dropped.
    pub packets_dropped: u64,
}

/// The summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Totals.
    pub run: RunTotals,
    /// Monitored links.
    pub links: Vec<LinkSummary>,
    /// Flows.
    pub flows: Vec<FlowSummary>,
}

/// A named time series.
#[derive(Clone, Debug)]
pub struct NamedSeries {
    /// `link:<name>` or `flow:<name>`.
    pub name: String,
    /// Sample times, ns.
    pub t: Vec<Time>,
    /// Columns.
    pub cols: Vec<(String, Vec<f64>)>,
}

/// Everything a run reports.
#[derive(Clone, Debug)]
pub struct Results {
    /// Summary.
    pub summary: Summary,
    /// Time series.
    pub series: Vec<NamedSeries>,
}

fn percentile(hist: &crate::sparse_hist::SparseHist, n: u64, q: f64) -> f64 {
    if n == 0 || hist.is_empty() {
        return f64::NAN;
    }
    let rank = (q * n as f64).ceil().max(1.0) as u64;
    let mut acc = 0u64;
    for (b, c) in hist.iter() {
        acc += c as u64;
        if acc >= rank {
            // Geometric middle of the bucket, in seconds.
            return 1e-6 * 10f64.powf((b as f64 + 0.5) / RTT_BUCKETS_PER_DECADE);
        }
    }
    f64::NAN
}

fn nan_if_zero(n: u64, x: f64) -> f64 {
    if n == 0 {
        f64::NAN
    } else {
        x
    }
}

/// The open-loop fields of a flow's summary (the rest filled by the caller).
fn udp_summary(f: &Flow) -> FlowSummary {
    let mut out = FlowSummary::default();
    let (Some(src), u) = (f.source(), &f.udp) else {
        return out;
    };
    let q = |p: f64| u.hist.quantile(p).map(secs);
    out.udp_sent = Some(src.sent_window);
    out.udp_received = Some(u.received);
    out.udp_ce_received = (src.ecn_flags != 0).then_some(u.ce);
    let fate_known = src.sent_window.saturating_sub(u.in_flight);
    out.udp_loss =
        (fate_known > 0).then(|| 1.0 - u.received.min(fate_known) as f64 / fate_known as f64);
    out.owd_mean_s = (u.received > 0).then(|| secs(u.delay_sum_ns / u.received as f64));
    out.owd_p50_s = q(0.5);
    out.owd_p99_s = q(0.99);
    out.owd_max_s = (u.received > 0).then(|| secs(u.delay_max_ns as f64));
    out.owd_jitter_s = (u.received > 1).then(|| secs(u.jitter_sum_ns / (u.received - 1) as f64));
    out
}

/// The RTT fields of a latency probe's summary, from its echoes (percentiles from a log-linear
/// histogram, within 1/32, and within [min, max]; the other fields are left at defaults).
fn probe_summary(f: &Flow) -> Option<FlowSummary> {
    let e = f.source()?.echo.as_ref()?;
    // A bucket's midpoint may fall outside the values seen: clamp to [min, max].
    let (lo, hi) = (e.min_ns as f64, e.max_ns as f64);
    let q = |p: f64| {
        e.hist
            .quantile(p)
            .map_or(f64::NAN, |v| secs(v.clamp(lo, hi)))
    };
    Some(FlowSummary {
        rtt_samples: e.n,
        rtt_mean_s: nan_if_zero(e.n, secs(e.sum_ns / e.n.max(1) as f64)),
        rtt_min_s: nan_if_zero(e.n, secs(e.min_ns as f64)),
        rtt_max_s: nan_if_zero(e.n, secs(e.max_ns as f64)),
        rtt_p50_s: q(0.5),
        rtt_p90_s: q(0.9),
        rtt_p99_s: q(0.99),
        ..FlowSummary::default()
    })
}

fn rtt(s: &SenderStats) -> (f64, f64, f64) {
    (
        nan_if_zero(s.rtt_n, secs(s.rtt_sum / s.rtt_n.max(1) as f64)),
        nan_if_zero(s.rtt_n, secs(s.rtt_min)),
        nan_if_zero(s.rtt_n, secs(s.rtt_max)),
    )
}

/// The summary of one monitored link over a window of `window` ns.
/// A link whose capacity varies reports the capacity it offered over the window, and its
/// utilisation against that.
fn link_summary(l: &crate::link::Link, window: f64, warmup: Time, end: Time) -> LinkSummary {
    let rate = match &l.clock {
        None => l.rate_bps,
        Some(c) => (c.offered_bits(warmup, end) / (window / NS_PER_SEC as f64)).round() as u64,
    };
    let mut s = l.stats.win.summary(
        l.name.clone(),
        l.aqm_name().to_string(),
        rate,
        window,
        l.aqm_stats(),
    );
    s.capacity = l.clock.as_ref().map(|c| c.kind());
    s
}

/// The time series of one monitored link, if it recorded them: `link:<name>` (queue, AQM state,
/// sampled), `delay:<name>` (queueing delay per interval) and `delaycdf:<name>` (its
/// distribution over the window; `t` holds the delay at each histogram edge, ns).
fn link_series(l: &crate::link::Link) -> Vec<NamedSeries> {
    let mut out = Vec::new();
    if let Some(ser) = &l.series {
        out.push(NamedSeries {
            name: format!("link:{}", l.name),
            t: ser.t.clone(),
            cols: ser
                .names
                .iter()
                .map(|n| n.to_string())
                .zip(ser.cols.iter().cloned())
                .collect(),
        });
    }
    if let Some(ds) = &l.delay_series {
        let s = |v: &[f64]| v.iter().map(|&x| secs(x)).collect::<Vec<_>>();
        out.push(NamedSeries {
            name: format!("delay:{}", l.name),
            t: ds.starts(),
            cols: vec![
                ("delay_mean_s".into(), s(&ds.means())),
                (
                    "delay_max_s".into(),
                    (ds.max.iter().zip(&ds.count))
                        .map(|(&m, &n)| if n == 0 { f64::NAN } else { secs(m) })
                        .collect(),
                ),
                (
                    "packets".into(),
                    ds.count.iter().map(|&n| n as f64).collect(),
                ),
            ],
        });
        let cdf = l.stats.win.delay_hist.cdf();
        out.push(NamedSeries {
            name: format!("delaycdf:{}", l.name),
            t: cdf.iter().map(|c| c.0).collect(),
            cols: vec![("cdf".into(), cdf.iter().map(|c| c.1).collect())],
        });
    }
    out
}

/// The summary of one flow over a window of `window_s` seconds.
fn flow_summary(sim: &Sim, f: &Flow, window_s: f64) -> FlowSummary {
    // An open-loop flow has no TCP sender: no retransmissions, timeouts or RTT samples.
    let none = SenderStats::default();
    let tcp = f.tcp();
    let s = tcp.map_or(&none, |e| &e.sender.stats);
    let (m, lo, hi) = rtt(s);
    let out = FlowSummary {
        name: f.name.clone(),
        src: sim.node_names[f.src].clone(),
        dst: sim.node_names[f.dst].clone(),
        start_s: secs(f.start as f64),
        // Open-loop sources: wire bytes delivered; TCP: in-order payload delivered (in bytes:
        // segments of several sizes when the controller changed it, TCP Prague 0.7).
        goodput_bps: match tcp {
            Some(e) if e.sender.seg_sizes.is_empty() => {
                e.receiver.stats.delivered_window as f64 * f.mss as f64 * 8.0 / window_s
            }
            Some(e) => {
                let r = &e.receiver.stats;
                let from = r.window_from.unwrap_or(r.delivered_total);
                (e.sender.bytes_below(r.delivered_total) - e.sender.bytes_below(from)) * 8.0
                    / window_s
            }
            None => f.bytes_window as f64 * 8.0 / window_s,
        },
        delivered_segments: tcp.map_or(0, |e| e.receiver.stats.delivered_total),
        segments_sent: f.source().map_or(s.segs_sent, |p| p.sent),
        retransmits: s.retransmits,
        timeouts: s.timeouts,
        fast_retransmits: s.fast_retransmits,
        ecn_reductions: s.ecn_reductions,
        rtt_samples: s.rtt_n,
        rtt_mean_s: m,
        rtt_min_s: lo,
        rtt_max_s: hi,
        rtt_p50_s: percentile(&s.rtt_hist, s.rtt_n, 0.5),
        rtt_p90_s: percentile(&s.rtt_hist, s.rtt_n, 0.9),
        rtt_p99_s: percentile(&s.rtt_hist, s.rtt_n, 0.99),
        // An open-loop flow has no congestion window.
        cwnd_final: tcp.map_or(f64::NAN, |e| e.sender.cwnd),
        completion_s: tcp
            .and_then(|e| e.sender.done_at)
            .map(|t| secs((t - f.start) as f64)),
        rwnd_limited_s: tcp.map(|e| secs(e.sender.rwnd_limited_ns(sim.end) as f64)),
        size_bytes: f.size_bytes,
        base_rtt_s: secs(
            f.path
                .iter()
                .chain(&f.rev)
                .map(|&l| sim.links[l as usize].delay_ns as f64)
                .sum(),
        ),
        path_rate_bps: f
            .path
            .iter()
            .map(|&l| sim.links[l as usize].rate_bps)
            .min()
            .unwrap_or(0),
        stop_s: (f.stop != Time::MAX).then(|| secs(f.stop as f64)),
        ..udp_summary(f)
    };
    match probe_summary(f) {
        // A probe's RTT fields describe its echoes, not a TCP sender.
        Some(p) => FlowSummary {
            probe: true,
            rtt_samples: p.rtt_samples,
            rtt_mean_s: p.rtt_mean_s,
            rtt_min_s: p.rtt_min_s,
            rtt_max_s: p.rtt_max_s,
            rtt_p50_s: p.rtt_p50_s,
            rtt_p90_s: p.rtt_p90_s,
            rtt_p99_s: p.rtt_p99_s,
            ..out
        },
        None => out,
    }
}

/// The time series of one flow: delivered bytes and congestion window, where recorded.
fn flow_series(f: &Flow) -> impl Iterator<Item = NamedSeries> + '_ {
    let delivered = f.delivered.as_ref().map(|(_, ds)| NamedSeries {
        name: format!("delivered:{}", f.name),
        t: ds.t.clone(),
        cols: vec![("delivered_bytes".into(), ds.cols[0].clone())],
    });
    let cwnd = f.cwnd_series.as_ref().map(|cs| NamedSeries {
        name: format!("flow:{}", f.name),
        t: cs.t.clone(),
        cols: vec![("cwnd".into(), cs.cols[0].clone())],
    });
    let probe = f
        .source()
        .and_then(|s| s.echo.as_ref())
        .map(|e| NamedSeries {
            name: format!("probe:{}", f.name),
            t: e.samples.t.clone(),
            cols: vec![("rtt_s".into(), e.samples.v.clone())],
        });
    delivered.into_iter().chain(cwnd).chain(probe)
}

/// Builds the results of a finished run.
pub fn collect(sim: &Sim) -> Results {
    let window = (sim.end - sim.warmup) as f64;
    let monitored = || sim.links.iter().filter(|l| l.monitor);
    let links = monitored()
        .map(|l| link_summary(l, window, sim.warmup, sim.end))
        .collect();
    let mut series: Vec<NamedSeries> = monitored().flat_map(link_series).collect();
    let flows = sim
        .flows
        .iter()
        .map(|f| flow_summary(sim, f, secs(window)))
        .collect();
    series.extend(sim.flows.iter().flat_map(flow_series));
    Results {
        summary: Summary {
            run: RunTotals {
                duration_s: secs(sim.end as f64),
                warmup_s: secs(sim.warmup as f64),
                seed: sim.seed,
                events: sim.events,
                packets_sent: sim.injected,
                packets_delivered: sim.delivered,
                packets_dropped: sim.dropped,
            },
            links,
            flows,
        },
        series,
    }
}
