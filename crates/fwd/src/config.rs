//! The forwarder's configuration (JSON, written by `aqmlab testbed`), in base units, and the
//! engine built from it with the `crates/aqm` registry.

use crate::engine::Engine;
use crate::path::{Path, PathConfig};
use crate::throttle::Throttle;
use aqm::params::Buffer;
use aqm::{LinkContext, Time};
use qdisc::config::AqmConfig;
use qdisc::rate::{Schedule, Trace, VarClock};
use serde::Deserialize;
use std::net::Ipv4Addr;

/// A one-way delay for frames from `src` to `dst`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairDelay {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Delay, ns.
    pub delay_ns: Time,
}

/// One direction.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirConfig {
    /// Name in the summary.
    pub name: String,
    /// Departure rate, bit/s.
    pub rate_bps: u64,
    /// Buffer in packets (exactly one of the two).
    #[serde(default)]
    pub buffer_pkts: Option<u32>,
    /// Buffer in bytes.
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// Typical frame size, bytes (for the AQM's conversions).
    pub mean_pkt_bytes: u32,
    /// The AQM and its parameters (base units), as the simulator's configuration has them.
    pub aqm: AqmConfig,
    /// Delay of frames of pairs not listed, ns.
    #[serde(default)]
    pub default_delay_ns: Time,
    /// Delays by address pair.
    #[serde(default)]
    pub delays: Vec<PairDelay>,
    /// A rate that varies: `[at_ns, rate_bps]` steps from the forwarder's start, as the
    /// simulator's `rate_schedule` (`qdisc::rate::Schedule`).
    #[serde(default)]
    pub rate_schedule: Option<Vec<(u64, u64)>>,
    /// The schedule starts again every this many ns.
    #[serde(default)]
    pub rate_repeat_ns: Option<u64>,
    /// A mahimahi trace: delivery opportunities at these milliseconds from the forwarder's
    /// start, repeating (`qdisc::rate::Trace`).
    #[serde(default)]
    pub trace_ms: Option<Vec<u64>>,
    /// Write the frames this direction sends to this pcap file.
    #[serde(default)]
    pub pcap_path: Option<String>,
    /// Write this direction's event log (`qdisc::events` records) to this file.
    #[serde(default)]
    pub events_path: Option<String>,
}

/// The whole forwarder.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Senders' interface.
    pub left: String,
    /// Receivers' interface.
    pub right: String,
    /// Stop after this long, ns (0: run until SIGINT/SIGTERM).
    #[serde(default)]
    pub duration_ns: Time,
    /// Measurement window start, ns after start-up.
    #[serde(default)]
    pub warmup_ns: Time,
    /// Time-series interval, ns.
    pub sample_interval_ns: Time,
    /// Bound on points per series.
    #[serde(default = "default_max_samples")]
    pub max_samples: usize,
    /// Seed of the AQMs' random numbers.
    #[serde(default)]
    pub seed: u64,
    /// The bottleneck.
    pub forward: DirConfig,
    /// The reverse direction.
    pub reverse: DirConfig,
    /// ModRED's clamped window, bytes (one MSS).
    #[serde(default = "default_throttle")]
    pub throttle_window_bytes: u32,
    /// Spin instead of sleeping in ppoll between events.
    #[serde(default)]
    pub busy_poll: bool,
    /// The engine's lag behind the wall clock, ns (covers the ring's block-retire timeout and
    /// wake-up latency; also the smallest one-way delay).
    #[serde(default = "default_lag")]
    pub lag_ns: Time,
    /// Write the summary this often while running, ns (0: only at the end).
    #[serde(default)]
    pub report_interval_ns: Time,
    /// Run under SCHED_FIFO at this priority (1-99; 0: the normal scheduler), as a forwarding
    /// box's packet path would: a forwarder that waits for a core behind other processes lets
    /// its rings overflow and its departure clock slip.
    #[serde(default)]
    pub rt_priority: u8,
}

fn default_max_samples() -> usize {
    200_000
}

fn default_lag() -> Time {
    2_000_000
}

fn default_throttle() -> u32 {
    1460
}

impl DirConfig {
    fn build(&self, c: &Config, seed: u64, start: Time) -> Result<Path, String> {
        let f = &self.name;
        if self.rate_bps == 0 {
            return Err(format!("{f}.rate_bps: must be > 0"));
        }
        let buffer = match (self.buffer_pkts, self.buffer_bytes) {
            (Some(p), None) if p > 0 => Buffer::Packets(p),
            (None, Some(b)) if b > 0 => Buffer::Bytes(b),
            _ => return Err(format!("{f}.buffer: give exactly one positive buffer")),
        };
        let ctx = LinkContext {
            rate_bps: self.rate_bps,
            buffer,
            mean_pkt_bytes: self.mean_pkt_bytes.max(1),
        };
        let params = self.aqm.param_map().map_err(|e| format!("{f}.aqm.{e}"))?;
        let err = |e: aqm::ParamError| format!("{f}.aqm: {e}");
        // A scheduler's limit defaults to the buffer in packets, as in the simulator.
        let sched_params = qdisc::sched::with_link_defaults(params.clone(), buffer);
        let fq = match qdisc::sched::build(&self.aqm.name, &sched_params, &ctx) {
            Some(built) => Some(built.map_err(err)?),
            None => None,
        };
        let aqm = match fq {
            // A queue discipline holds the frames itself; the single-queue AQM slot stays a
            // DropTail.
            Some(_) => aqm::build("droptail", &aqm::ParamMap::new(), &ctx).map_err(err)?,
            None => aqm::build(&self.aqm.name, &params, &ctx).map_err(err)?,
        };
        let cfg = PathConfig {
            name: self.name.clone(),
            rate_bps: self.rate_bps,
            buffer,
            default_delay: self.default_delay_ns,
            delays: self
                .delays
                .iter()
                .map(|d| ((u32::from(d.src), u32::from(d.dst)), d.delay_ns))
                .collect(),
            warmup: c.warmup_ns,
            lag: c.lag_ns,
            sample_interval: c.sample_interval_ns.max(1),
            max_samples: c.max_samples,
        };
        let path = Path::new(cfg, aqm, aqm::rng_from_seed(seed), start);
        let path = match fq {
            Some(fq) => path.with_scheduler(fq),
            None => path,
        };
        let path = match self.var_clock()? {
            Some(c) => path.with_clock(c),
            None => path,
        };
        let path = match &self.pcap_path {
            Some(p) => path
                .with_pcap(p)
                .map_err(|e| format!("{f}.pcap_path: {e}"))?,
            None => path,
        };
        match &self.events_path {
            Some(p) => path
                .with_events(p)
                .map_err(|e| format!("{f}.events_path: {e}")),
            None => Ok(path),
        }
    }

    /// The clock of a direction whose capacity varies, checked (`None`: a fixed rate).
    fn var_clock(&self) -> Result<Option<VarClock>, String> {
        let f = &self.name;
        if self.rate_repeat_ns.is_some() && self.rate_schedule.is_none() {
            return Err(format!("{f}.rate_repeat_ns: only with a rate_schedule"));
        }
        Ok(match (&self.rate_schedule, &self.trace_ms) {
            (Some(_), Some(_)) => {
                return Err(format!("{f}: a rate_schedule or a trace_ms, not both"))
            }
            (Some(st), None) => Some(VarClock::Schedule(
                Schedule::new(st.clone(), self.rate_repeat_ns).map_err(|e| format!("{f}.{e}"))?,
            )),
            (None, Some(ms)) => Some(VarClock::Trace(
                Trace::new(ms.clone()).map_err(|e| format!("{f}.{e}"))?,
            )),
            (None, None) => None,
        })
    }
}

impl Config {
    /// Reads a configuration; the error names the field.
    pub fn from_json(s: &str) -> Result<Config, String> {
        serde_json::from_str(s).map_err(|e| format!("forwarder config: {e}"))
    }

    /// Builds the engine, its clock starting at `start`.
    pub fn engine(&self, start: Time) -> Result<Engine, String> {
        let fwd = self.forward.build(self, self.seed, start)?;
        let rev = self
            .reverse
            .build(self, self.seed ^ 0x9e37_79b9_7f4a_7c15, start)?;
        Ok(Engine::new(
            fwd,
            rev,
            Throttle::new(self.throttle_window_bytes),
        ))
    }
}
