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
}
