//! A log-linear histogram of non-negative integers (delays in ns) for percentiles: 32 sub-buckets
//! per power of two, so a reported percentile is within 1/32 (3.1%) of the exact sample quantile
//! (the HdrHistogram layout, Tene; values below 32 are exact).

const SUB: u32 = 32;
const SUB_BITS: u32 = 5;

/// The histogram.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    counts: Vec<u64>,
    n: u64,
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let mant = (v >> shift) as u32 - SUB; // 0..SUB
    ((shift + 1) * SUB + mant) as usize
}

/// Lowest value of bucket `b`.
fn lower(b: usize) -> u64 {
    let b = b as u32;
    if b < SUB {
        return b as u64;
    }
    let shift = b / SUB - 1;
    ((SUB + b % SUB) as u64) << shift
}

impl Hist {
    /// Adds one value (inlined: once per packet sent on every link, docs/benchmarks.md).
    #[inline]
    pub fn add(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
    }

    /// Values added.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no value was added.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The `q` quantile (0..=1): the midpoint of the bucket holding the ceil(q n)-th smallest
    /// value; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                let lo = lower(b) as f64;
                let hi = lower(b + 1) as f64;
                return Some(if b < SUB as usize {
                    lo
                } else {
                    (lo + hi - 1.0) / 2.0
                });
            }
        }
        None
    }
}

impl Hist {
    /// The empirical distribution function at bucket edges: for every non-empty bucket, its
    /// upper edge `x` (exclusive, same unit as the values) and the exact fraction of values
    /// below `x`. Between edges the values are known only to lie in the bucket (within 1/32).
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut acc = 0u64;
        let mut out = Vec::new();
        for (b, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            acc += c;
            out.push((lower(b + 1), acc as f64 / self.n as f64));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_integers() {
        for v in 0..100_000u64 {
            let b = bucket(v);
            assert!(lower(b) <= v && v < lower(b + 1), "{v} in {b}");
        }
    }

    #[test]
    fn quantiles_of_one_to_a_million_are_within_the_stated_error() {
        let mut h = Hist::default();
        for v in 1..=1_000_000u64 {
            h.add(v);
        }
        for (q, exact) in [
            (0.5, 500_000.0),
            (0.9, 900_000.0),
            (0.99, 990_000.0),
            (0.999, 999_000.0),
        ] {
            let got = h.quantile(q).unwrap();
            assert!((got / exact - 1.0).abs() <= 1.0 / 32.0, "q {q}: {got}");
        }
        assert_eq!(h.quantile(0.0), Some(1.0));
        assert!(Hist::default().quantile(0.5).is_none());
    }

    #[test]
    fn cdf_at_bucket_edges_counts_the_values_below_exactly() {
        let mut h = Hist::default();
        for v in 0..1000u64 {
            h.add(v);
        }
        let c = h.cdf();
        for &(x, f) in &c {
            // Values 0..999 below x: min(x, 1000) of them.
            assert_eq!(f, x.min(1000) as f64 / 1000.0, "edge {x}");
        }
        assert_eq!(c.last().unwrap().1, 1.0);
        assert!(Hist::default().cdf().is_empty());
    }
}
