//! A histogram that keeps only the range of buckets it has seen.
//!
//! A flow's RTT samples fall in a few neighbouring buckets of the 450 of the logarithmic RTT
//! histogram (50 per decade: a factor of 2 spans 15 buckets), so each flow keeps the counts from
//! its lowest to its highest bucket instead of all 450 (1.8 kB per flow, most of a flow's memory
//! in a million-flow run; issue 13 item 15). Counts and percentiles are the same as the dense
//! histogram's.

/// Counts of buckets `lo .. lo + counts.len()`; empty until the first sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseHist {
    lo: u32,
    counts: Vec<u32>,
}

impl SparseHist {
    /// Counts one sample in bucket `b`.
    pub fn add(&mut self, b: usize) {
        let b = b as u32;
        if self.counts.is_empty() {
            self.lo = b;
            self.counts.push(1);
            return;
        }
        if b < self.lo {
            let grow = (self.lo - b) as usize;
            self.counts.reserve_exact(grow);
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.lo = b;
        }
        let i = (b - self.lo) as usize;
        if i >= self.counts.len() {
            self.counts.reserve_exact(i + 1 - self.counts.len());
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    /// True before the first sample.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// `(bucket, count)` in bucket order over the range seen.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let lo = self.lo as usize;
        self.counts
            .iter()
            .enumerate()
            .map(move |(i, &c)| (lo + i, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_counts_as_a_dense_histogram_whatever_the_order() {
        let samples = [40usize, 38, 55, 40, 41, 12, 449, 40, 0];
        let mut dense = vec![0u32; 450];
        let mut sparse = SparseHist::default();
        for &b in &samples {
            dense[b] += 1;
            sparse.add(b);
        }
        let mut back = vec![0u32; 450];
        for (b, c) in sparse.iter() {
            back[b] += c;
        }
        assert_eq!(back, dense);
        let total: u32 = sparse.iter().map(|(_, c)| c).sum();
        assert_eq!(total as usize, samples.len());
    }

    #[test]
    fn keeps_only_the_range_seen() {
        let mut h = SparseHist::default();
        assert!(h.is_empty());
        for b in [200, 205, 198] {
            h.add(b);
        }
        let buckets: Vec<usize> = h.iter().map(|(b, _)| b).collect();
        assert_eq!(buckets, (198..=205).collect::<Vec<_>>());
        assert!(h.counts.capacity() <= 8);
    }
}
