//! UDP constant-bit-rate sources (the simulator's `cbr`, ns-2's CBR): packet sizes (IPv4 packet
//! bytes, headers included) drawn per packet from the flow's shares, the gap after a packet its
//! transmission time at the flow's rate, from `start_s` until `stop_s` or the end. One thread
//! paces them all on CLOCK_MONOTONIC: it wakes at the next departure, at most every
//! [`QUANTUM_NS`], and sends every packet whose time has come (the long-run rate is exact; the
//! short-run spacing is the quantum, or the scheduler's lateness on a loaded machine).

use crate::sink::UDP_IP_HEADER;
use crate::tcp::Clock;
use crate::{sys, Spec};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde_json::{json, Value};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;

/// The pacer's shortest sleep: at 1 Gb/s x 37.5 % (about 36,500 packets/s over 20 sources) it
/// sends about 4 packets per wake-up instead of waking 36,500 times a second.
pub const QUANTUM_NS: u64 = 100_000;
/// A deep socket send buffer (capped by the kernel at net.core.wmem_max).
const SNDBUF: libc::c_int = 4 << 20;

/// A flow's packet sizes, drawn per packet with their shares.
pub struct SizeDraw {
    sizes: Vec<usize>,
    /// cumulative share of each size, the last 1
    cum: Vec<f64>,
    rng: Pcg64,
}

impl SizeDraw {
    /// Sizes (bytes, at least the headers plus one) with their shares (any positive scale).
    pub fn new(sizes: &[(usize, f64)], seed: u64) -> Result<Self, String> {
        let total: f64 = sizes.iter().map(|s| s.1).sum();
        let valid = total > 0.0 && sizes.iter().all(|s| s.1 >= 0.0);
        if sizes.is_empty() || !valid {
            return Err("sizes: at least one size, shares >= 0 and not all 0".into());
        }
        let mut acc = 0.0;
        Ok(SizeDraw {
            sizes: sizes.iter().map(|s| s.0.max(UDP_IP_HEADER + 1)).collect(),
            cum: sizes
                .iter()
                .map(|s| {
                    acc += s.1 / total;
                    acc
                })
                .collect(),
            rng: Pcg64::seed_from_u64(seed),
        })
    }

    /// The next packet's size.
    pub fn next_size(&mut self) -> usize {
        let u: f64 = self.rng.random();
        let i = self.cum.iter().position(|&c| u < c);
        self.sizes[i.unwrap_or(self.sizes.len() - 1)]
    }
}

/// One UDP CBR flow: its socket, size draws and counters.
pub struct Udp {
    name: String,
    sock: OwnedFd,
    dst: Ipv4Addr,
    rate_bps: f64,
    draw: SizeDraw,
    start_s: f64,
    stop_s: Option<f64>,
    start_ns: u64,
    stop_ns: u64,
    sent: [u64; 2],
    sent_warm: [u64; 2],
    errors: u64,
}

/// FNV-1a: a fixed hash of the flow's seed and name, so its size draws are the same every run.
fn seed_of(seed: u64, name: &str) -> u64 {
    format!("{seed}/{name}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
}

impl Udp {
    /// The UDP flows of `spec` (kind "udp"), each with its bound socket, and their spec indices.
    pub fn all(spec: &Spec) -> Result<(Vec<Udp>, Vec<usize>), String> {
        let (mut out, mut index) = (Vec::new(), Vec::new());
        for (k, f) in spec.flows.iter().enumerate() {
            if f.kind.as_deref() != Some("udp") {
                continue;
            }
            let err = |e: io::Error| format!("flows[{k}] ({}): {e}", f.name);
            let sock = sys::socket(libc::SOCK_DGRAM).map_err(err)?;
            sys::set_int(&sock, libc::SOL_SOCKET, libc::SO_SNDBUF, SNDBUF).map_err(err)?;
            sys::bind(&sock, crate::ip(&f.src, &f.name)?, 0).map_err(err)?;
            if f.rate_bps.is_nan() || f.rate_bps <= 0.0 {
                return Err(format!("flows[{k}].rate_bps: must be > 0"));
            }
            let sizes: Vec<(usize, f64)> = f
                .sizes
                .iter()
                .map(|s| (s.bytes as usize, s.share))
                .collect();
            let draw = SizeDraw::new(&sizes, seed_of(spec.seed, &f.name))
                .map_err(|e| format!("flows[{k}].{e}"))?;
            out.push(Udp {
                name: f.name.clone(),
                sock,
                dst: crate::ip(&f.dst, &f.name)?,
                rate_bps: f.rate_bps,
                draw,
                start_s: f.start_s,
                stop_s: f.stop_s,
                start_ns: 0,
                stop_ns: 0,
                sent: [0, 0],
                sent_warm: [0, 0],
                errors: 0,
            });
            index.push(k);
        }
        Ok((out, index))
    }

    /// Places the flow's start and stop on the run's clock.
    pub fn rebase(&mut self, clk: &Clock) {
        self.start_ns = clk.t0 + (self.start_s * 1e9) as u64;
        let stop = self.stop_s.map_or(clk.end, |s| clk.t0 + (s * 1e9) as u64);
        self.stop_ns = stop.min(clk.end);
    }

    /// Sends one packet; returns its transmission time at the flow's rate (ns).
    fn send(&mut self, port: u16, payload: &[u8], warm: bool) -> f64 {
        let size = self.draw.next_size();
        match sys::send_to(&self.sock, &payload[..size - UDP_IP_HEADER], self.dst, port) {
            // ENOBUFS, EAGAIN: a full socket queue, counted, not retried
            Err(_) => self.errors += 1,
            Ok(_) => {
                self.sent[0] += 1;
                self.sent[1] += size as u64;
                if warm {
                    self.sent_warm[0] += 1;
                    self.sent_warm[1] += size as u64;
                }
            }
        }
        size as f64 * 8e9 / self.rate_bps
    }

    /// The flow's measurements.
    pub fn result(&self, clk: &Clock) -> Value {
        let (ip, port) = sys::local_addr(&self.sock).unwrap_or((Ipv4Addr::UNSPECIFIED, 0));
        let from = clk.warm.max(self.start_ns);
        let secs = (clk.end.saturating_sub(from) as f64 * 1e-9).max(1e-9);
        json!({
            "name": self.name,
            "kind": "udp",
            "error": (self.errors > 0).then(|| format!("{} sends refused by the kernel", self.errors)),
            "started": self.sent[0] > 0,
            "start_s": (self.start_ns - clk.t0) as f64 * 1e-9,
            "udp_sent": self.sent[0],
            "udp_sent_bytes": self.sent[1],
            "offered_bps": self.sent_warm[1] as f64 * 8.0 / secs,
            "source": format!("{ip}:{port}"),
        })
    }
}

/// Paces every flow until each reaches its stop (on its schedule and on the clock) (a heap of next departure times, in ns as f64
/// so that fractional gaps do not accumulate rounding).
pub fn run(mut flows: Vec<Udp>, clk: Clock, port: u16) -> (Vec<Udp>, Value) {
    sys::tight_timer_slack();
    let (mut wakeups, mut late_max, mut late_sum, mut sends) = (0u64, 0u64, 0u64, 0u64);
    let payload = vec![0u8; 1 << 16];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut due: Vec<f64> = flows.iter().map(|f| f.start_ns as f64).collect();
    for (k, f) in flows.iter().enumerate() {
        heap.push(Reverse((f.start_ns, k)));
    }
    while let Some(&Reverse((t, k))) = heap.peek() {
        let now = sys::mono_ns();
        // a packet not sent by the flow's stop is not sent after it (a starved pacer that fell
        // behind shows as offered load below the configured rate, not as a burst after the end)
        if t >= flows[k].stop_ns || now >= flows[k].stop_ns {
            heap.pop();
            continue;
        }
        if t > now {
            sys::sleep_until(t.max(now + QUANTUM_NS));
            wakeups += 1;
            continue;
        }
        late_max = late_max.max(now - t);
        late_sum += now - t;
        sends += 1;
        due[k] += flows[k].send(port, &payload, now >= clk.warm);
        heap.pop();
        heap.push(Reverse((due[k] as u64, k)));
    }
    let stats = json!({
        "wakeups": wakeups,
        "late_max_s": late_max as f64 * 1e-9,
        "late_mean_s": late_sum as f64 * 1e-9 / sends.max(1) as f64,
    });
    (flows, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_drawn_with_their_shares() {
        // seed 002's mix: 45 % 1500 B, 25 % 1200 B, 30 % 200 B; 200,000 draws put each share
        // within 0.5 % (4.7 standard deviations of a binomial proportion at n = 200,000)
        let mut d = SizeDraw::new(&[(1500, 0.45), (1200, 0.25), (200, 0.30)], 7).unwrap();
        let n = 200_000;
        let mut c = [0usize; 3];
        for _ in 0..n {
            match d.next_size() {
                1500 => c[0] += 1,
                1200 => c[1] += 1,
                200 => c[2] += 1,
                x => panic!("size {x} was not offered"),
            }
        }
        for (got, want) in c.iter().zip([0.45, 0.25, 0.30]) {
            assert!((*got as f64 / n as f64 - want).abs() < 0.005, "{c:?}");
        }
    }

    #[test]
    fn shares_need_not_sum_to_one_and_tiny_sizes_hold_the_headers() {
        let mut d = SizeDraw::new(&[(10, 2.0), (10, 2.0)], 1).unwrap();
        assert_eq!(d.next_size(), UDP_IP_HEADER + 1);
        assert!(SizeDraw::new(&[], 1).is_err());
        assert!(SizeDraw::new(&[(100, 0.0)], 1).is_err());
        assert!(SizeDraw::new(&[(100, f64::NAN)], 1).is_err());
    }

    #[test]
    fn the_draw_seed_is_fixed_per_run_seed_and_flow_name() {
        assert_eq!(seed_of(1, "udp.0"), seed_of(1, "udp.0"));
        assert_ne!(seed_of(1, "udp.0"), seed_of(1, "udp.1"));
        assert_ne!(seed_of(1, "udp.0"), seed_of(2, "udp.0"));
    }
}
