//! Constant bit rate (ns-2 `Application/Traffic/CBR` without random jitter): the gap after a
//! packet is its own transmission time at the rate, so the rate holds with mixed sizes too.
//! Seed 000 s. 4 uses it as reverse-path traffic (10% of the reverse capacity, 1000 B packets).

use super::sizes::SizeMix;
use super::{gap_ns, positive, Source};
use crate::config::SizeShare;
use aqm::{AqmRng, Time};

/// A CBR source.
pub struct Cbr {
    rate_bps: f64,
    sizes: SizeMix,
}

impl Cbr {
    /// Checks and builds.
    pub fn new(rate_bps: f64, sizes: &[SizeShare], field: &str) -> Result<Self, String> {
        Ok(Cbr {
            rate_bps: positive(&format!("{field}.rate"), rate_bps)?,
            sizes: SizeMix::new(sizes, field)?,
        })
    }
}

impl Source for Cbr {
    fn first_gap(&mut self, _rng: &mut AqmRng) -> Time {
        0
    }

    fn emit(&mut self, rng: &mut AqmRng) -> (u32, Time) {
        let s = self.sizes.draw(rng);
        (s, gap_ns(s as f64, self.rate_bps))
    }

    fn mean_rate_bps(&self) -> f64 {
        self.rate_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_second_of_cbr_carries_its_rate() {
        let t = [SizeShare {
            bytes: 1000,
            share: 1.0,
        }];
        let mut c = Cbr::new(1e6, &t, "f").unwrap();
        let mut rng = aqm::rng_from_seed(1);
        let (mut t_ns, mut bytes) = (c.first_gap(&mut rng), 0u64);
        while t_ns < 1_000_000_000 {
            let (s, g) = c.emit(&mut rng);
            bytes += s as u64;
            t_ns += g;
        }
        // 1 Mb/s of 1000 B packets: one every 8 ms, 125 packets in [0, 1 s).
        assert_eq!(bytes, 125 * 1000);
    }
}
