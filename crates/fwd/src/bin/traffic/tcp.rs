//! TCP transfers on the kernel's stack, all from one epoll loop: each flow connects at its start
//! instant (non-blocking, bound to its source address, its congestion control set by
//! TCP_CONGESTION), writes its `size_bytes` (or until the end of the run), and is sampled with
//! TCP_INFO (Linux `struct tcp_info`) every `sample_s` until its last byte is acknowledged; with
//! `series` on, each sample's bytes acknowledged (tcpi_bytes_acked) are kept as a time series.

use crate::sys;
use crate::Spec;
use serde_json::{json, Value};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};

/// A deep send buffer: the kernel keeps sending between the loop's wake-ups (capped by the
/// kernel at net.core.wmem_max). It bounds nothing else: cwnd stays the limit.
const SNDBUF: libc::c_int = 4 << 20;
/// Bytes per write call.
const CHUNK: usize = 1 << 17;
/// At most this many writes per ready socket per wake-up (level-triggered: the rest next time).
const WRITES_PER_WAKE: usize = 4;
/// tcpi_options bit: ECN negotiated (include/uapi/linux/tcp.h).
const TCPI_OPT_ECN: u8 = 8;
/// The length of `struct tcp_info` read (up to tcpi_snd_wnd).
const TCPI_LEN: usize = 232;

/// The fields of TCP_INFO used here (offsets in `struct tcp_info`).
#[derive(Clone, Copy, Default)]
struct Info {
    ca_state: u8,
    options: u8,
    rtt_us: u32,
    snd_cwnd: u32,
    total_retrans: u32,
    pacing_rate: u64,
    bytes_acked: u64,
    min_rtt_us: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_us: u64,
    rwnd_limited_us: u64,
    sndbuf_limited_us: u64,
    delivered: u32,
    delivered_ce: u32,
    /// the peer's advertised window, bytes (tcpi_snd_wnd, Linux 5.4 on)
    snd_wnd: u32,
}

fn tcp_info(fd: i32) -> io::Result<Info> {
    let mut b = [0u8; TCPI_LEN];
    sys::get_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut b)?;
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    Ok(Info {
        ca_state: b[1],
        options: b[5],
        rtt_us: u32_at(68),
        snd_cwnd: u32_at(80),
        total_retrans: u32_at(100),
        pacing_rate: u64_at(104),
        bytes_acked: u64_at(120),
        min_rtt_us: u32_at(148),
        data_segs_out: u32_at(156),
        delivery_rate: u64_at(160),
        busy_us: u64_at(168),
        rwnd_limited_us: u64_at(176),
        sndbuf_limited_us: u64_at(184),
        delivered: u32_at(192),
        delivered_ce: u32_at(196),
        snd_wnd: u32_at(228),
    })
}

/// BBR's state (`struct tcp_bbr_info` of TCP_CC_INFO, include/uapi/linux/inet_diag.h): its
/// bandwidth estimate (bytes/s), min RTT (us), pacing and cwnd gains (x 256); `None` for
/// another congestion control.
fn bbr_info(fd: i32) -> Option<[u64; 4]> {
    let mut b = [0u8; 20];
    let n = sys::get_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, &mut b).ok()?;
    if n < 20 {
        return None;
    }
    let u = |o: usize| u64::from(u32::from_le_bytes(b[o..o + 4].try_into().unwrap()));
    Some([u(0) | (u(4) << 32), u(8), u(12), u(16)])
}

/// What one sample keeps of a flow (`series`): bytes acknowledged and the sender's state.
#[derive(Clone, Copy, Default)]
struct Point {
    acked: u64,
    info: Info,
    bbr: Option<[u64; 4]>,
}

#[derive(PartialEq)]
enum State {
    Pending,
    Connecting,
    Sending,
    /// everything written (or a write failed): sampled until acknowledged
    Written,
}

struct Flow {
    name: String,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    cc: String,
    start_ns: u64,
    size: Option<u64>,
    left: Option<u64>,
    fd: Option<OwnedFd>,
    state: State,
    started: Option<u64>,
    done: Option<u64>,
    error: Option<String>,
    rtts: Vec<f64>,
    /// (instant, bytes acknowledged then): the start of the goodput window
    acked_warm: Option<(u64, u64)>,
    last: Option<Info>,
    /// BBR's state at the last sample
    last_bbr: Option<[u64; 4]>,
    /// what every sample found, when the spec asks for series
    series: Option<Series>,
}

/// A flow's samples over time (ns since the origin), at most `max` points: when full, every
/// second point is dropped and the interval doubled (as the simulator's series,
/// `output.max_samples`).
struct Series {
    points: Vec<(u64, Point)>,
    max: usize,
    /// one sample in `every` is kept
    every: u64,
    seen: u64,
}

impl Series {
    fn new(max: usize) -> Self {
        Series {
            points: Vec::new(),
            max: max.max(2),
            every: 1,
            seen: 0,
        }
    }

    /// The columns: time (s), bytes acknowledged, the TCP_INFO state (cwnd in segments,
    /// tcpi_ca_state, pacing and delivery rates in bit/s, the peer's window in bytes, the time so
    /// far the receive window limited the sender, s) and, for BBR, its estimate (bit/s), min RTT
    /// (s) and gains.
    fn to_json(&self) -> Value {
        let col =
            |f: &dyn Fn(&Point) -> Value| self.points.iter().map(|(_, p)| f(p)).collect::<Vec<_>>();
        let mut v = json!({
            "t_s": self.points.iter().map(|&(t, _)| t as f64 * 1e-9).collect::<Vec<_>>(),
            "bytes_acked": col(&|p| json!(p.acked)),
            "cwnd": col(&|p| json!(p.info.snd_cwnd)),
            "ca_state": col(&|p| json!(p.info.ca_state)),
            "pacing_rate_bps": col(&|p| json!(p.info.pacing_rate.saturating_mul(8))),
            "delivery_rate_bps": col(&|p| json!(p.info.delivery_rate.saturating_mul(8))),
            "snd_wnd_bytes": col(&|p| json!(p.info.snd_wnd)),
            "rwnd_limited_s": col(&|p| json!(p.info.rwnd_limited_us as f64 * 1e-6)),
        });
        if self.points.iter().any(|(_, p)| p.bbr.is_some()) {
            let bbr = |i: usize, scale: f64| {
                col(&|p: &Point| json!(p.bbr.map_or(f64::NAN, |b| b[i] as f64 * scale)))
            };
            v["bbr_bw_bps"] = json!(bbr(0, 8.0));
            v["bbr_min_rtt_s"] = json!(bbr(1, 1e-6));
            v["bbr_pacing_gain"] = json!(bbr(2, 1.0 / 256.0));
            v["bbr_cwnd_gain"] = json!(bbr(3, 1.0 / 256.0));
        }
        v
    }

    fn push(&mut self, t: u64, v: Point) {
        self.seen += 1;
        if !(self.seen - 1).is_multiple_of(self.every) {
            return;
        }
        if self.points.len() == self.max {
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.every *= 2;
            if !(self.seen - 1).is_multiple_of(self.every) {
                return;
            }
        }
        self.points.push((t, v));
    }
}

/// The run's clock: its origin, warm-up end and end (CLOCK_MONOTONIC, ns).
#[derive(Clone, Copy)]
pub struct Clock {
    /// time origin
    pub t0: u64,
    /// end of the warm-up
    pub warm: u64,
    /// end of the run
    pub end: u64,
}

impl Flow {
    fn open(&mut self, port: u16) -> io::Result<OwnedFd> {
        let fd = sys::socket(libc::SOCK_STREAM)?;
        sys::set_bytes(
            &fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            self.cc.as_bytes(),
        )?;
        sys::set_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, SNDBUF)?;
        sys::bind(&fd, self.src, 0)?;
        sys::connect(&fd, self.dst, port)?;
        Ok(fd)
    }

    fn fail(&mut self, e: io::Error) {
        self.error = Some(format!("{}: {e}", self.name));
        self.fd = None;
        self.state = State::Written;
    }

    /// Writes until the socket is full, the flow's bytes are written, or a write fails.
    fn write(&mut self, ep: &sys::Epoll, zeros: &[u8]) {
        let Some(fd) = self.fd.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        for _ in 0..WRITES_PER_WAKE {
            let n = self.left.map_or(CHUNK, |l| l.min(CHUNK as u64) as usize);
            if n == 0 {
                break;
            }
            match sys::send(fd, &zeros[..n]) {
                Ok(k) => self.left = self.left.map(|l| l - k as u64),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // as before: the error is reported, the socket still sampled
                    self.error = Some(format!("{}: {e}", self.name));
                    self.left = Some(0);
                }
            }
        }
        if self.left == Some(0) {
            let _ = ep.remove(fd);
            self.state = State::Written;
        }
    }

    fn base(&self, clk: &Clock, info: &Info) -> (u64, u64) {
        let late = self.started.unwrap_or(0) >= clk.warm;
        (clk.warm, if late { 0 } else { info.bytes_acked })
    }

    /// One TCP_INFO sample; a finite flow whose last byte is acknowledged is closed.
    fn sample(&mut self, now: u64, clk: &Clock) {
        self.sample_info(now, clk);
        if let Some(s) = self.series.as_mut() {
            // before the connection 0; after the last byte (or a failed sample) the last count
            let info = self.last.unwrap_or_default();
            let p = Point {
                acked: info.bytes_acked,
                info,
                bbr: self.last_bbr,
            };
            s.push(now.saturating_sub(clk.t0), p);
        }
    }

    fn sample_info(&mut self, now: u64, clk: &Clock) {
        if self.started.is_none() {
            return;
        }
        let Some(fd) = self.fd.as_ref() else { return };
        let Ok(info) = tcp_info(fd.as_raw_fd()) else {
            return;
        };
        self.last = Some(info);
        if self.series.is_some() {
            self.last_bbr = bbr_info(fd.as_raw_fd());
        }
        if let Some(size) = self.size {
            if self.done.is_none() && info.bytes_acked >= size {
                self.done = Some(now);
                if now >= clk.warm && self.acked_warm.is_none() {
                    self.acked_warm = Some(self.base(clk, &info));
                }
                self.fd = None; // all acknowledged: nothing more to measure
                return;
            }
        }
        if now >= clk.warm {
            if self.acked_warm.is_none() {
                self.acked_warm = Some(self.base(clk, &info));
            }
            if info.rtt_us > 0 && now <= clk.end {
                self.rtts.push(info.rtt_us as f64 * 1e-6);
            }
        }
    }

    fn result(&self, clk: &Clock, t_end: u64) -> Value {
        let info = self.last.unwrap_or_default();
        let secs = |a: u64, b: u64| (a as f64 - b as f64) * 1e-9;
        let good = match self.acked_warm {
            Some((t, b)) if t_end > t => (info.bytes_acked - b) as f64 * 8.0 / secs(t_end, t),
            _ => 0.0,
        };
        let mut sorted = self.rtts.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let series = self.series.as_ref().map(|s| s.to_json());
        json!({
            "name": self.name,
            "error": self.error,
            "started": self.started.is_some(),
            "start_s": self.started.map(|s| secs(s, clk.t0)),
            "goodput_bps": good,
            "bytes_acked": info.bytes_acked,
            "segments_sent": info.data_segs_out,
            "delivered_segments": info.delivered,
            "retransmits": info.total_retrans,
            "delivered_ce": info.delivered_ce,
            "ecn_negotiated": info.options & TCPI_OPT_ECN != 0,
            "rtt_samples": n,
            "rtt_mean_s": (n > 0).then(|| sorted.iter().sum::<f64>() / n as f64),
            "rtt_min_s": (info.min_rtt_us > 0).then_some(info.min_rtt_us as f64 * 1e-6),
            "rtt_max_s": sorted.last(),
            "rtt_p50_s": percentile(&sorted, 0.5),
            "rtt_p90_s": percentile(&sorted, 0.9),
            "rtt_p99_s": percentile(&sorted, 0.99),
            "cwnd_final": info.snd_cwnd,
            // time with data in flight, and the parts of it the receiver's window or the send
            // buffer (not cwnd) limited the sender (tcpi_busy_time, tcpi_rwnd_limited,
            // tcpi_sndbuf_limited): a starved receiver shows as rwnd-limited time
            "busy_s": info.busy_us as f64 * 1e-6,
            "rwnd_limited_s": info.rwnd_limited_us as f64 * 1e-6,
            "sndbuf_limited_s": info.sndbuf_limited_us as f64 * 1e-6,
            "completion_s": match (self.done, self.started) {
                (Some(d), Some(s)) => Some(secs(d, s)),
                _ => None,
            },
            "series": series,
        })
    }
}

/// The q-quantile of sorted samples (nearest rank: the smallest sample with at least q of them at
/// or below it).
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The TCP flows of a spec, in spec order, with their indices in the spec.
pub struct Tcp {
    flows: Vec<Flow>,
    /// spec index of each flow
    pub index: Vec<usize>,
}

impl Tcp {
    /// The TCP flows of `spec` (every flow whose kind is not "udp"); their start times are
    /// placed on the run's clock by [`Tcp::run`].
    pub fn new(spec: &Spec) -> Result<Self, String> {
        let (mut flows, mut index) = (Vec::new(), Vec::new());
        for (k, f) in spec.flows.iter().enumerate() {
            if f.kind.as_deref() == Some("udp") {
                continue;
            }
            flows.push(Flow {
                name: f.name.clone(),
                src: crate::ip(&f.src, &f.name)?,
                dst: crate::ip(&f.dst, &f.name)?,
                cc: f.cc.clone(),
                start_ns: (f.start_s * 1e9) as u64,
                size: f.size_bytes,
                left: f.size_bytes,
                fd: None,
                state: State::Pending,
                started: None,
                done: None,
                error: None,
                rtts: Vec::new(),
                acked_warm: None,
                last: None,
                last_bbr: None,
                series: spec.series.then(|| Series::new(spec.max_samples)),
            });
            index.push(k);
        }
        Ok(Tcp { flows, index })
    }

    /// Runs every flow until the end of the run; returns their results (in spec order) and the
    /// instant of the last sample.
    pub fn run(mut self, clk: Clock, port: u16, sample_ns: u64) -> io::Result<(Vec<Value>, u64)> {
        for f in self.flows.iter_mut() {
            f.start_ns += clk.t0;
        }
        let mut ep = sys::Epoll::new()?;
        let zeros = vec![0u8; CHUNK];
        let mut order: Vec<usize> = (0..self.flows.len()).collect();
        order.sort_by_key(|&k| self.flows[k].start_ns);
        let mut next = 0; // next flow of `order` to start
        let mut next_sample = clk.t0;
        loop {
            let now = sys::mono_ns();
            if now >= clk.end {
                break;
            }
            while next < order.len() && self.flows[order[next]].start_ns <= now {
                self.start(order[next], &ep, port);
                next += 1;
            }
            if now >= next_sample {
                for f in self.flows.iter_mut() {
                    f.sample(now, &clk);
                }
                next_sample += sample_ns * (1 + (now - next_sample) / sample_ns);
            }
            let mut wake = next_sample.min(clk.end);
            if next < order.len() {
                wake = wake.min(self.flows[order[next]].start_ns);
            }
            let ms = wake.saturating_sub(sys::mono_ns()).div_ceil(1_000_000);
            for (ev, key) in ep.wait(ms as i32) {
                self.ready(key as usize, ev, &ep, &zeros);
            }
        }
        let t_end = sys::mono_ns();
        for f in self.flows.iter_mut() {
            f.sample(t_end, &clk);
        }
        let out = self.flows.iter().map(|f| f.result(&clk, t_end)).collect();
        Ok((out, t_end))
    }

    fn start(&mut self, k: usize, ep: &sys::Epoll, port: u16) {
        let f = &mut self.flows[k];
        match f.open(port) {
            Ok(fd) => {
                let r = ep.add(fd.as_raw_fd(), libc::EPOLLOUT, k as u64);
                f.fd = Some(fd);
                f.state = State::Connecting;
                if let Err(e) = r {
                    f.fail(e);
                }
            }
            Err(e) => f.fail(e),
        }
    }

    fn ready(&mut self, k: usize, ev: u32, ep: &sys::Epoll, zeros: &[u8]) {
        let f = &mut self.flows[k];
        let Some(fd) = f.fd.as_ref().map(|x| x.as_raw_fd()) else {
            return;
        };
        if f.state == State::Connecting {
            if let Err(e) = sys::so_error(fd) {
                return f.fail(e);
            }
            if ev & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                return f.fail(io::Error::from_raw_os_error(libc::ECONNRESET));
            }
            f.started = Some(sys::mono_ns());
            f.state = State::Sending;
        }
        if f.state == State::Sending {
            f.write(ep, zeros);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{percentile, Series};

    #[test]
    fn a_full_series_keeps_every_second_point_and_doubles_its_interval() {
        // 4 points at most, one sample per unit of time: 0 1 2 3 | 4 -> 0 2 4 | 6 -> 0 2 4 6 | 8
        // -> 0 4 8; then every 4th.
        let mut s = Series::new(4);
        for t in 0..=12 {
            let p = super::Point {
                acked: 10 * t,
                ..Default::default()
            };
            s.push(t, p);
        }
        let ts: Vec<u64> = s.points.iter().map(|p| p.0).collect();
        assert_eq!(ts, vec![0, 4, 8, 12]);
        assert!(s.points.iter().all(|&(t, p)| p.acked == 10 * t));
        assert_eq!(s.every, 4);
    }

    #[test]
    fn percentile_is_the_nearest_rank() {
        // nearest rank: the ceil(q n)-th smallest of n samples
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&xs, 0.5), Some(5.0));
        assert_eq!(percentile(&xs, 0.9), Some(9.0));
        assert_eq!(percentile(&xs, 0.99), Some(10.0));
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
