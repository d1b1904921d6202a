//! A queue's time-series columns, the same for the simulator's links and the forwarder's paths:
//! `queue_pkts`, `queue_bytes`, then the AQM's `avg_queue` and `drop_prob` when it keeps them
//! (docs/metrics.md). FQ-CoDel and DropTail have only the first two.

use crate::series::Series;
use aqm::{Aqm, Time};

/// An empty series with the columns of a queue guarded by `aqm` (`None`: DropTail or FQ-CoDel),
/// one sample every `interval` ns, at most `capacity` samples.
pub fn queue_series(aqm: Option<&dyn Aqm>, interval: Time, capacity: usize) -> Series {
    let mut names = vec!["queue_pkts", "queue_bytes"];
    if let Some(a) = aqm {
        if a.avg_queue().is_some() {
            names.push("avg_queue");
        }
        if a.drop_prob().is_some() {
            names.push("drop_prob");
        }
    }
    Series::new(names, interval, capacity)
}

/// Writes one sample of the columns of [`queue_series`] into `out`; returns how many it wrote.
#[inline]
pub fn queue_sample(
    len_pkts: u32,
    len_bytes: u64,
    aqm: Option<&dyn Aqm>,
    out: &mut [f64; 4],
) -> usize {
    out[0] = len_pkts as f64;
    out[1] = len_bytes as f64;
    let mut n = 2;
    if let Some(a) = aqm {
        if let Some(v) = a.avg_queue() {
            out[n] = v;
            n += 1;
        }
        if let Some(p) = a.drop_prob() {
            out[n] = p;
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::params::Buffer;
    use aqm::{LinkContext, ParamMap};

    fn aqm(name: &str) -> Box<dyn Aqm> {
        let ctx = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(100),
            mean_pkt_bytes: 1000,
        };
        aqm::build(name, &ParamMap::new(), &ctx).expect("known AQM")
    }

    #[test]
    fn columns_follow_what_the_aqm_keeps_and_samples_match_them() {
        let red = aqm("red");
        let s = queue_series(Some(red.as_ref()), 1_000_000, 10);
        let mut out = [f64::NAN; 4];
        let n = queue_sample(7, 7000, Some(red.as_ref()), &mut out);
        assert_eq!(n, s.names.len());
        assert_eq!((out[0], out[1]), (7.0, 7000.0));
        assert!(s.names.contains(&"avg_queue"), "RED keeps an average queue");
        let none = queue_series(None, 1_000_000, 10);
        assert_eq!(none.names, ["queue_pkts", "queue_bytes"]);
        assert_eq!(queue_sample(3, 4500, None, &mut out), 2);
    }
}
