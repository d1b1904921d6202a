//! On/off sources as ns-2 defines them (ns-2 manual, "Traffic Generators":
//! `Application/Traffic/Exponential` and `Application/Traffic/Pareto`): during an on period
//! packets leave at the peak `rate`; on and off durations are exponential, or Pareto with `shape`,
//! with the given means. As in ns-2, a burst is a whole number of packets (at least one): the on
//! time drawn divided by the packet interval, rounded; the off time follows the last packet's
//! interval. Long-run rate = rate x on / (on + off) (ignoring the rounding of bursts).

use super::sizes::SizeMix;
use super::{gap_ns, positive, Source};
use crate::config::OnOffConfig;
use aqm::{AqmRng, Time};
use rand::Rng;

/// An on/off source.
pub struct OnOff {
    rate_bps: f64,
    sizes: SizeMix,
    on_ns: f64,
    off_ns: f64,
    shape: Option<f64>,
    left_in_burst: u64,
}

/// A draw with mean `mean`: exponential, or Pareto with `shape` > 1 (scale = mean (a-1)/a,
/// x = scale / U^(1/a); Johnson and Kotz, Continuous Univariate Distributions, ch. 20).
pub fn draw(mean: f64, shape: Option<f64>, rng: &mut AqmRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]
    match shape {
        None => -mean * u.ln(),
        Some(a) => mean * (a - 1.0) / a / u.powf(1.0 / a),
    }
}

/// Checks a Pareto shape given for a distribution with a finite mean.
pub fn check_shape(field: &str, shape: f64) -> Result<f64, String> {
    if shape.is_finite() && shape > 1.0 {
        Ok(shape)
    } else {
        Err(format!(
            "{field}: must be > 1 for the Pareto distribution to have the finite mean given (got {shape})"
        ))
    }
}

impl OnOff {
    /// Checks and builds.
    pub fn new(c: &OnOffConfig, field: &str) -> Result<Self, String> {
        let shape = match c.shape {
            None => None,
            Some(a) => Some(check_shape(&format!("{field}.shape"), a)?),
        };
        Ok(OnOff {
            rate_bps: positive(&format!("{field}.rate"), c.rate_bps)?,
            sizes: SizeMix::new(&c.sizes, field)?,
            on_ns: positive(&format!("{field}.on_time"), c.on_mean_ns)?,
            off_ns: positive(&format!("{field}.off_time"), c.off_mean_ns)?,
            shape,
            left_in_burst: 0,
        })
    }

    fn new_burst(&mut self, rng: &mut AqmRng) {
        let interval = self.sizes.mean() * 8.0 / self.rate_bps * 1e9;
        let on = draw(self.on_ns, self.shape, rng);
        self.left_in_burst = ((on / interval).round() as u64).max(1);
    }
}

impl Source for OnOff {
    fn first_gap(&mut self, rng: &mut AqmRng) -> Time {
        self.new_burst(rng);
        0
    }

    fn emit(&mut self, rng: &mut AqmRng) -> (u32, Time) {
        let s = self.sizes.draw(rng);
        let mut gap = gap_ns(s as f64, self.rate_bps);
        self.left_in_burst -= 1;
        if self.left_in_burst == 0 {
            gap += draw(self.off_ns, self.shape, rng).round() as Time;
            self.new_burst(rng);
        }
        (s, gap)
    }

    fn mean_rate_bps(&self) -> f64 {
        self.rate_bps * self.on_ns / (self.on_ns + self.off_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SizeShare;

    fn cfg(shape: Option<f64>) -> OnOffConfig {
        OnOffConfig {
            rate_bps: 1e6,
            sizes: vec![SizeShare {
                bytes: 125,
                share: 1.0,
            }],
            on_mean_ns: 100e6,
            off_mean_ns: 300e6,
            shape,
        }
    }

    fn rate_over(src: &mut OnOff, secs: f64) -> f64 {
        let mut rng = aqm::rng_from_seed(3);
        let end = (secs * 1e9) as Time;
        let (mut t, mut bytes) = (src.first_gap(&mut rng), 0u64);
        while t < end {
            let (s, g) = src.emit(&mut rng);
            bytes += s as u64;
            t += g;
        }
        bytes as f64 * 8.0 / secs
    }

    #[test]
    fn exponential_on_off_offers_rate_times_duty_cycle() {
        // 1 Mb/s peak, on 100 ms, off 300 ms: 250 kb/s. 10,000 s hold ~25,000 cycles.
        let r = rate_over(&mut OnOff::new(&cfg(None), "f").unwrap(), 10_000.0);
        assert!((r / 250e3 - 1.0).abs() < 0.02, "{r}");
    }

    #[test]
    fn pareto_on_off_offers_rate_times_duty_cycle() {
        let r = rate_over(&mut OnOff::new(&cfg(Some(2.5)), "f").unwrap(), 10_000.0);
        assert!((r / 250e3 - 1.0).abs() < 0.05, "{r}");
    }

    #[test]
    fn a_pareto_shape_without_a_finite_mean_is_refused() {
        let e = OnOff::new(&cfg(Some(1.0)), "flows[2]").err().unwrap();
        assert!(e.starts_with("flows[2].shape: must be > 1"), "{e}");
    }
}
