//! Debug aid: `bbr_probe CONFIG_JSON [STEP_MS]` runs the simulator on a run's `config.json`
//! (written by `aqmlab run`) and prints every BBR flow's state each step (default 250 ms): cwnd,
//! max-bw estimate and pacing rate (Mb/s of whole packets), min RTT (ms), mode, pacing gain,
//! the ACK-aggregation estimates, recovery, packets in flight, `bbr_set_cwnd`'s target, packet
//! conservation, the saved window, the congestion state BBR last saw, snd_una, snd_max, the RTO
//! (ms), the timeout and retransmission counts, whether the long-term (policer) rate is in
//! use (`lt 1`: `bw` is then `lt_bw`, as the kernel's `ss` shows `bbr_bw`), the receiver's
//! window as the sender last saw it (segments) and the time so far it limited the sender (ms,
//! as `tcpi_rwnd_limited`). Used to compare with the
//! kernel's `ss -tin` BBR fields (docs/testbed.md, BBR v1 section).
use sim::tcp::cc::Bbr;
use sim::Sim;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: bbr_probe CONFIG_JSON [STEP_MS]");
    let step_ms: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(250);
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let mut t = 0;
    while t < cfg.duration_ns {
        t += step_ms * 1_000_000;
        sim.run_until(t);
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            let Some(b) = s.cc.as_any().and_then(|a| a.downcast_ref::<Bbr>()) else {
                continue;
            };
            let mbps = |segs_per_s: f64| segs_per_s * s.params.pkt_size as f64 * 8.0 / 1e6;
            // bbr_set_cwnd's target: bbr_bdp x cwnd_gain + the ACK-aggregation allowance (after
            // the pipe is full), through the quantization budget.
            let agg = if b.full_bw_reached {
                b.ack_agg.cwnd(b.bw_estimate())
            } else {
                0
            };
            let target = b.quantization_budget(b.bdp(b.bw_estimate(), b.cwnd_gain) + agg);
            println!(
                "{:.2} {} cwnd {} bw {:.2} mrtt {:.1} mode {:?} pg {} extra {:?} pacing {:.2} rec {} inflight {} target {} pcons {} prior {} ca {:?} una {} max {} rto {:.0} timeouts {} retx {} lt {} wnd {} rwl {:.1}",
                t as f64 / 1e9,
                i,
                s.cwnd,
                mbps(b.bw_estimate() * 1e9),
                b.min_rtt.unwrap_or(0) as f64 / 1e6,
                b.mode,
                b.pacing_gain,
                b.ack_agg.extra_acked,
                mbps(b.pacing_rate),
                s.in_recovery,
                s.rate.as_ref().map_or(0, |r| r.in_flight),
                target,
                b.packet_conservation,
                b.prior_cwnd,
                b.prev_ca_state,
                s.snd_una,
                s.snd_max,
                s.rto as f64 / 1e6,
                s.stats.timeouts,
                s.stats.retransmits,
                u8::from(b.lt.use_bw),
                s.snd_wnd,
                s.rwnd_limited_ns(t) as f64 / 1e6
            );
        }
    }
}
