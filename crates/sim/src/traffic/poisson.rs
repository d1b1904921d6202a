//! Poisson packet arrivals with exponential (or fixed) sizes: an M/M/1 (or M/D/1) input, to check
//! the simulator against queueing theory (Kleinrock, Queueing Systems vol. 1, s. 3.2).

use super::{positive, Source};
use crate::config::PoissonConfig;
use aqm::{AqmRng, Time};
use rand::Rng;
use rand_distr::Exp;

/// A Poisson source.
pub struct Poisson {
    gap: Exp<f64>,
    size: Option<Exp<f64>>,
    mean_size: f64,
    rate_pps: f64,
}

impl Poisson {
    /// Checks and builds.
    pub fn new(c: &PoissonConfig, field: &str) -> Result<Self, String> {
        let ok = c.rate_pps > 0.0
            && c.rate_pps.is_finite()
            && c.mean_size_bytes >= 1.0
            && c.mean_size_bytes.is_finite();
        if !ok {
            return Err(format!(
                "{field}.poisson: rate > 0 packets/s and mean size >= 1 byte required"
            ));
        }
        let rate = positive(&format!("{field}.poisson.rate"), c.rate_pps)?;
        Ok(Poisson {
            gap: Exp::new(rate).map_err(|e| format!("{field}.poisson.rate: {e}"))?,
            size: c
                .exponential
                .then(|| Exp::new(1.0 / c.mean_size_bytes).expect("size checked")),
            mean_size: c.mean_size_bytes,
            rate_pps: rate,
        })
    }

    fn gap_ns(&self, rng: &mut AqmRng) -> Time {
        let g: f64 = rng.sample(self.gap);
        (g * 1e9).round().max(1.0) as Time
    }
}

impl Source for Poisson {
    fn first_gap(&mut self, rng: &mut AqmRng) -> Time {
        self.gap_ns(rng)
    }

    fn emit(&mut self, rng: &mut AqmRng) -> (u32, Time) {
        let size = match self.size {
            Some(d) => (rng.sample(d).round() as u32).max(1),
            None => self.mean_size.round().max(1.0) as u32,
        };
        (size, self.gap_ns(rng))
    }

    fn mean_rate_bps(&self) -> f64 {
        self.rate_pps * self.mean_size * 8.0
    }
}
