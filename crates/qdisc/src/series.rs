//! Time series sampled at a fixed interval with bounded memory: when a series reaches its
//! capacity, every other point is dropped and the interval doubles, so a run of any length keeps
//! at most `capacity` points spread over the whole run.

use aqm::Time;

/// Several values sampled at the same instants.
#[derive(Clone, Debug)]
pub struct Series {
    /// Column names.
    pub names: Vec<&'static str>,
    /// Sample times, ns.
    pub t: Vec<Time>,
    /// One vector per column.
    pub cols: Vec<Vec<f64>>,
    interval: Time,
    next_t: Time,
    capacity: usize,
}

impl Series {
    /// An empty series with the given columns.
    pub fn new(names: Vec<&'static str>, interval: Time, capacity: usize) -> Self {
        let n = names.len();
        Series {
            names,
            t: Vec::new(),
            cols: vec![Vec::new(); n],
            interval: interval.max(1),
            next_t: 0,
            capacity: capacity.max(4),
        }
    }

    /// The current interval, ns.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// True when a sample falls due strictly before `t`.
    #[inline]
    pub fn due_before(&self, t: Time) -> bool {
        self.next_t < t
    }

    /// Records `values` for every sample instant strictly before `t` (the values held since the
    /// last change).
    #[inline]
    pub fn fill_before(&mut self, t: Time, values: &[f64]) {
        while self.next_t < t {
            self.t.push(self.next_t);
            for (c, v) in self.cols.iter_mut().zip(values) {
                c.push(*v);
            }
            self.next_t += self.interval;
            if self.t.len() >= self.capacity {
                self.decimate();
            }
        }
    }

    fn decimate(&mut self) {
        fn keep_even<T: Copy>(v: &mut Vec<T>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        keep_even(&mut self.t);
        for c in &mut self.cols {
            keep_even(c);
        }
        self.interval *= 2;
        self.next_t = self.t.last().map_or(0, |&l| l + self.interval);
    }
}

/// Values binned by time: for each interval `[k I, (k+1) I)` the count, sum and largest of the
/// values recorded in it (a queueing-delay series: the mean and the largest sojourn of the
/// packets that started transmission in each interval). Memory is bounded like [`Series`]: at
/// `capacity` bins, neighbouring bins are merged pairwise and the interval doubles, which keeps
/// every bin's count, sum and maximum exact.
#[derive(Clone, Debug)]
pub struct BinSeries {
    /// Values per bin.
    pub count: Vec<u64>,
    /// Sum of the values per bin.
    pub sum: Vec<f64>,
    /// Largest value per bin (0 for an empty bin).
    pub max: Vec<f64>,
    interval: Time,
    capacity: usize,
}

impl BinSeries {
    /// No bins yet; the first interval is `interval` ns.
    pub fn new(interval: Time, capacity: usize) -> Self {
        BinSeries {
            count: Vec::new(),
            sum: Vec::new(),
            max: Vec::new(),
            interval: interval.max(1),
            capacity: capacity.max(4),
        }
    }

    /// The current interval, ns.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// Makes the bins cover `[0, t]`.
    pub fn cover(&mut self, t: Time) {
        let mut k = (t / self.interval) as usize;
        while k >= self.capacity {
            self.merge();
            k = (t / self.interval) as usize;
        }
        if k >= self.count.len() {
            self.count.resize(k + 1, 0);
            self.sum.resize(k + 1, 0.0);
            self.max.resize(k + 1, 0.0);
        }
    }

    /// Records value `v` at time `t`.
    #[inline]
    pub fn add(&mut self, t: Time, v: f64) {
        let mut k = (t / self.interval) as usize;
        // A bin that exists lies below the capacity: `cover` would change nothing.
        if k >= self.count.len() {
            self.cover(t);
            k = (t / self.interval) as usize;
        }
        self.count[k] += 1;
        self.sum[k] += v;
        self.max[k] = self.max[k].max(v);
    }

    fn merge(&mut self) {
        let n = self.count.len().div_ceil(2);
        for k in 0..n {
            let (a, b) = (2 * k, (2 * k + 1).min(self.count.len() - 1));
            let two = a != b;
            self.count[k] = self.count[a] + if two { self.count[b] } else { 0 };
            self.sum[k] = self.sum[a] + if two { self.sum[b] } else { 0.0 };
            self.max[k] = if two {
                self.max[a].max(self.max[b])
            } else {
                self.max[a]
            };
        }
        self.count.truncate(n);
        self.sum.truncate(n);
        self.max.truncate(n);
        self.interval *= 2;
    }

    /// Start times of the bins, ns.
    pub fn starts(&self) -> Vec<Time> {
        (0..self.count.len() as Time)
            .map(|k| k * self.interval)
            .collect()
    }

    /// Mean per bin (NaN for an empty bin).
    pub fn means(&self) -> Vec<f64> {
        self.sum
            .iter()
            .zip(&self.count)
            .map(|(s, &n)| if n == 0 { f64::NAN } else { s / n as f64 })
            .collect()
    }
}

/// Raw `(time, value)` samples with bounded memory: at `capacity` samples every other one is
/// dropped and from then on only every second (fourth, ...) new sample is kept, so the samples
/// kept stay evenly thinned over the run.
#[derive(Clone, Debug)]
pub struct Samples {
    /// Times, ns.
    pub t: Vec<Time>,
    /// Values.
    pub v: Vec<f64>,
    stride: u64,
    seen: u64,
    capacity: usize,
}

impl Samples {
    /// Empty, keeping at most `capacity` samples.
    pub fn new(capacity: usize) -> Self {
        Samples {
            t: Vec::new(),
            v: Vec::new(),
            stride: 1,
            seen: 0,
            capacity: capacity.max(4),
        }
    }

    /// Offers one sample.
    pub fn push(&mut self, t: Time, v: f64) {
        self.seen += 1;
        if !(self.seen - 1).is_multiple_of(self.stride) {
            return;
        }
        self.t.push(t);
        self.v.push(v);
        if self.t.len() >= self.capacity {
            let mut i = 0;
            self.t.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            let mut i = 0;
            self.v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_hold_the_value_before_each_change_and_memory_is_bounded() {
        let mut s = Series::new(vec!["q"], 10, 8);
        s.fill_before(25, &[1.0]); // samples at 0, 10, 20
        s.fill_before(31, &[2.0]); // sample at 30
        assert_eq!(s.t, vec![0, 10, 20, 30]);
        assert_eq!(s.cols[0], vec![1.0, 1.0, 1.0, 2.0]);
        s.fill_before(1000, &[3.0]);
        assert!(s.t.len() < 8);
        // Points stay evenly spaced at the (doubled) interval and cover the run.
        let d = s.interval();
        assert!(s.t.windows(2).all(|w| w[1] - w[0] == d), "{:?}", s.t);
        assert!(*s.t.last().unwrap() + d >= 1000 - d);
    }

    #[test]
    fn bins_keep_exact_counts_sums_and_maxima_when_merged() {
        let mut b = BinSeries::new(10, 4);
        for t in 0..80u64 {
            b.add(t, t as f64);
        }
        // 80 ns in bins of 10 needs 8 bins > 4: merged once, to bins of 20.
        assert_eq!(b.interval(), 20);
        let sum = |a: u64, b: u64| (a..b).sum::<u64>() as f64;
        assert_eq!(b.count, vec![20; 4]);
        assert_eq!(
            b.sum,
            vec![sum(0, 20), sum(20, 40), sum(40, 60), sum(60, 80)]
        );
        assert_eq!(b.max, vec![19.0, 39.0, 59.0, 79.0]);
        assert_eq!(b.starts(), vec![0, 20, 40, 60]);
        // Covering 100 ns merges again: bins of 40, sums and maxima still exact.
        b.cover(100);
        assert_eq!(b.interval(), 40);
        assert_eq!(b.count, vec![40, 40, 0]);
        assert_eq!(b.max, vec![39.0, 79.0, 0.0]);
        assert_eq!(b.means()[0], sum(0, 40) / 40.0);
        assert!(b.means()[2].is_nan());
    }

    #[test]
    fn samples_are_thinned_evenly() {
        let mut s = Samples::new(8);
        for k in 0..100u64 {
            s.push(k, k as f64);
        }
        assert!(s.t.len() < 8);
        let d = s.t[1] - s.t[0];
        assert!(s.t.windows(2).all(|w| w[1] - w[0] == d), "{:?}", s.t);
        assert_eq!(s.t, s.v.iter().map(|&v| v as u64).collect::<Vec<_>>());
    }
}
