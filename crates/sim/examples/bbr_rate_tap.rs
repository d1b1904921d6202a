//! Debug aid: `bbr_rate_tap CONFIG_JSON > FILE` runs the simulator on a run's `config.json`
//! (written by `aqmlab run`) and prints, for every ACK that reaches a BBR flow's
//! `cong_control`, the delivery-rate sample it carries and the max-bw estimate after it:
//!   T FLOW DELIVERED INTERVAL APPLTD RETRANS PRIOR_DELIVERED RATE BW TOTAL_DELIVERED
//! T seconds; DELIVERED segments over the sample (-1: invalid); INTERVAL seconds (-1e-9:
//! invalid); APPLTD, RETRANS the sample segment's flags (0/1); PRIOR_DELIVERED segments; RATE
//! the sample's rate and BW the max-bw estimate after the ACK, both bit/s of payload (MSS bytes
//! a segment, as ns-3's `TcpRateLinux` counts); TOTAL_DELIVERED the connection's delivered
//! segments after the ACK. The same columns as `ns3_dumbbell.cc
//! --rateTrace` where both have them (docs/crosscheck-ns3.md s. 1.5). Each flow's controller is
//! wrapped in a tap that logs and forwards every call unchanged, so the run is the same.
use sim::tcp::accecn::EcnMode;
use sim::tcp::cc::{AckSample, Bbr, CongestionControl};
use sim::Sim;
use std::io::Write;

/// A controller that forwards every call to `inner` and logs each `cong_control` sample.
#[derive(Debug)]
struct Tap {
    inner: Box<dyn CongestionControl>,
    flow: usize,
    mss: f64,
}

impl CongestionControl for Tap {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn on_ack_event(&mut self, s: &AckSample) {
        self.inner.on_ack_event(s)
    }
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64 {
        self.inner.on_ack(cwnd, ssthresh, s)
    }
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: aqm::Time) -> f64 {
        self.inner.on_congestion(cwnd, flight, now)
    }
    fn on_ecn(&mut self, cwnd: f64, flight: u32, now: aqm::Time) -> f64 {
        self.inner.on_ecn(cwnd, flight, now)
    }
    fn on_delay_sample(&mut self, owd_ns: f64, now: aqm::Time) {
        self.inner.on_delay_sample(owd_ns, now)
    }
    fn on_timeout(&mut self) {
        self.inner.on_timeout()
    }
    fn per_packet_ce_echo(&self) -> bool {
        self.inner.per_packet_ce_echo()
    }
    fn needs_ecn(&self) -> bool {
        self.inner.needs_ecn()
    }
    fn needs_timestamps(&self) -> bool {
        self.inner.needs_timestamps()
    }
    fn ecn_alpha(&self) -> Option<f64> {
        self.inner.ecn_alpha()
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.inner.pacing_rate()
    }
    fn wants_rate_sample(&self) -> bool {
        self.inner.wants_rate_sample()
    }
    fn needs_pacing(&self) -> bool {
        self.inner.needs_pacing()
    }
    fn controls_cwnd(&self) -> bool {
        self.inner.controls_cwnd()
    }
    fn cong_control(&mut self, cwnd: f64, s: &AckSample) -> f64 {
        let out = self.inner.cong_control(cwnd, s);
        let r = &s.rate;
        let bits = self.mss * 8.0;
        let rate = if r.delivered >= 0 && r.interval_ns > 0 {
            r.delivered as f64 * bits * 1e9 / r.interval_ns as f64
        } else {
            0.0
        };
        let bw = self
            .inner
            .as_any()
            .and_then(|a| a.downcast_ref::<Bbr>())
            .map_or(0.0, |b| b.max_bw() * 1e9 * bits);
        let _ = writeln!(
            std::io::stdout().lock(),
            "{:.9} {} {} {:.9} {} {} {} {:.0} {:.0} {}",
            s.now as f64 / 1e9,
            self.flow,
            r.delivered,
            r.interval_ns as f64 / 1e9,
            u8::from(r.is_app_limited),
            u8::from(r.is_retrans),
            r.prior_delivered,
            rate,
            bw,
            r.total_delivered
        );
        out
    }
    fn asks_app_limited(&mut self) -> bool {
        self.inner.asks_app_limited()
    }
    fn counts_sacked_retransmissions(&self) -> bool {
        self.inner.counts_sacked_retransmissions()
    }
    fn keeps_rate_sample_start(&self) -> bool {
        self.inner.keeps_rate_sample_start()
    }
    fn restarts_rto_on_first_partial_ack_only(&self) -> bool {
        self.inner.restarts_rto_on_first_partial_ack_only()
    }
    fn sends_on_partial_ack(&self) -> bool {
        self.inner.sends_on_partial_ack()
    }
    fn resends_below_highest_sack_after_rto(&self) -> bool {
        self.inner.resends_below_highest_sack_after_rto()
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        self.inner.as_any()
    }
    fn l4s(&self) -> bool {
        self.inner.l4s()
    }
    fn wants_accecn(&self) -> bool {
        self.inner.wants_accecn()
    }
    fn on_ecn_mode(&mut self, mode: EcnMode) -> EcnMode {
        self.inner.on_ecn_mode(mode)
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: bbr_rate_tap CONFIG_JSON");
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    for (i, f) in sim.flows.iter_mut().enumerate() {
        let Some(t) = f.tcp_mut() else {
            continue;
        };
        let mss = f64::from(cfg.flows[i].tcp.mss);
        let s = &mut t.sender;
        let inner = std::mem::replace(&mut s.cc, sim::tcp::cc::build("reno").expect("reno"));
        s.cc = Box::new(Tap {
            inner,
            flow: i,
            mss,
        });
    }
    sim.run_until(cfg.duration_ns);
}
