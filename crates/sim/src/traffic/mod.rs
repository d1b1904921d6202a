//! Open-loop traffic sources, one per file behind the [`Source`] trait: Poisson packets, constant
//! bit rate, and exponential or Pareto on/off (ns-2's `Traffic/Exponential` and `Traffic/Pareto`).
//! A source only says when its next packet leaves and how big it is; the network carries it (no
//! feedback, like UDP). Packet sizes come from [`sizes::SizeMix`] (one size, a table of shares,
//! or exponential).
//!
//! Finite TCP transfers (web-like objects) are TCP flows with a size and a start time; the Python
//! layer draws their arrivals and sizes (docs/scenarios.md, "Web-like traffic").

pub mod cbr;
pub mod onoff;
pub mod poisson;
pub mod probe;
pub mod sizes;

use crate::config::{PoissonConfig, SourceConfig};
use aqm::{AqmRng, Time};

/// An open-loop packet source.
pub trait Source: Send {
    /// Time from the source's start to its first packet, ns.
    fn first_gap(&mut self, rng: &mut AqmRng) -> Time;
    /// The size of the packet leaving now (bytes on the wire) and the time to the next one, ns.
    fn emit(&mut self, rng: &mut AqmRng) -> (u32, Time);
    /// Long-run mean offered rate, bit/s (for reports and checks).
    fn mean_rate_bps(&self) -> f64;
    /// Whether the destination echoes each packet back to the source (a latency probe).
    fn echo(&self) -> bool {
        false
    }
}

/// A source with its random stream and counters.
pub struct OpenLoop {
    /// The generator.
    pub source: Box<dyn Source>,
    /// Its random stream.
    pub rng: AqmRng,
    /// Packets emitted.
    pub sent: u64,
    /// Packets emitted at or after the warm-up.
    pub sent_window: u64,
    /// Round-trip times of the echoes (latency probes only).
    pub echo: Option<probe::EchoStats>,
    /// The ECN flags its packets carry (`crate::packet::ecn_flags`: Not-ECT, ECT(0) or ECT(1)).
    pub ecn_flags: u8,
}

/// Gap of `bytes` at `rate_bps`, ns (at least 1 ns, so that time always advances).
pub fn gap_ns(bytes: f64, rate_bps: f64) -> Time {
    ((bytes * 8.0 / rate_bps) * 1e9).round().max(1.0) as Time
}

/// Checks that `x` is a finite number > 0, naming `field` otherwise.
pub fn positive(field: &str, x: f64) -> Result<f64, String> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(format!("{field}: must be a finite number > 0 (got {x})"))
    }
}

/// The source a flow's configuration describes; `field` names it in errors.
pub fn build(
    poisson: Option<&PoissonConfig>,
    source: Option<&SourceConfig>,
    field: &str,
) -> Result<Option<Box<dyn Source>>, String> {
    match (poisson, source) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(format!("{field}: give poisson or source, not both")),
        (Some(p), None) => Ok(Some(Box::new(poisson::Poisson::new(p, field)?))),
        (None, Some(SourceConfig::Cbr { rate_bps, sizes })) => {
            Ok(Some(Box::new(cbr::Cbr::new(*rate_bps, sizes, field)?)))
        }
        (None, Some(SourceConfig::OnOff(c))) => Ok(Some(Box::new(onoff::OnOff::new(c, field)?))),
        (None, Some(SourceConfig::Probe { interval_ns, bytes })) => Ok(Some(Box::new(
            probe::Probe::new(*interval_ns, *bytes, field)?,
        ))),
    }
}
