//! Packet sizes of a source: one size, or a table of sizes with shares (seed 000 s. 4: 90% of
//! packets 1500 B, 10% 536 B).

use crate::config::SizeShare;
use aqm::AqmRng;
use rand::Rng;

/// Sizes with cumulative shares.
#[derive(Clone, Debug)]
pub struct SizeMix {
    sizes: Vec<u32>,
    cum: Vec<f64>,
    mean: f64,
}

impl SizeMix {
    /// A mix from a table; the shares must be > 0 and sum to 1 (within 1e-6).
    pub fn new(table: &[SizeShare], field: &str) -> Result<Self, String> {
        if table.is_empty() {
            return Err(format!("{field}.sizes: give at least one size"));
        }
        let mut cum = Vec::with_capacity(table.len());
        let (mut acc, mut mean) = (0.0, 0.0);
        for (i, s) in table.iter().enumerate() {
            if s.bytes == 0 {
                return Err(format!("{field}.sizes[{i}].bytes: must be >= 1"));
            }
            if !(s.share.is_finite() && s.share > 0.0) {
                return Err(format!(
                    "{field}.sizes[{i}].share: must be > 0 (got {})",
                    s.share
                ));
            }
            acc += s.share;
            mean += s.share * s.bytes as f64;
            cum.push(acc);
        }
        if (acc - 1.0).abs() > 1e-6 {
            return Err(format!("{field}.sizes: shares must sum to 1 (got {acc})"));
        }
        Ok(SizeMix {
            sizes: table.iter().map(|s| s.bytes).collect(),
            cum,
            mean,
        })
    }

    /// Mean size, bytes.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Draws a size (no random draw when there is one size, so a fixed-size source's stream is
    /// its gaps alone).
    pub fn draw(&self, rng: &mut AqmRng) -> u32 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let u: f64 = rng.random::<f64>() * self.cum[self.cum.len() - 1];
        let i = self
            .cum
            .partition_point(|&c| c <= u)
            .min(self.sizes.len() - 1);
        self.sizes[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_a_mix_are_drawn_in_proportion() {
        let t = [
            SizeShare {
                bytes: 1500,
                share: 0.9,
            },
            SizeShare {
                bytes: 536,
                share: 0.1,
            },
        ];
        let m = SizeMix::new(&t, "f").unwrap();
        assert!((m.mean() - (0.9 * 1500.0 + 0.1 * 536.0)).abs() < 1e-9);
        let mut rng = aqm::rng_from_seed(7);
        let n = 100_000;
        let small = (0..n).filter(|_| m.draw(&mut rng) == 536).count();
        // Binomial(n, 0.1): sd = 95; 5 sd.
        assert!((small as f64 - 10_000.0).abs() < 475.0, "{small}");
    }

    #[test]
    fn shares_that_do_not_sum_to_one_are_refused() {
        let t = [SizeShare {
            bytes: 1500,
            share: 0.5,
        }];
        let e = SizeMix::new(&t, "flows[0]").unwrap_err();
        assert!(e.starts_with("flows[0].sizes: shares must sum to 1"), "{e}");
    }
}
