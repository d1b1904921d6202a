//! `aqmlab-fwd-gen`: the forwarder benchmarks' frame generator and counter (benches/fwd_bench.py).
//!
//! `aqmlab-fwd-gen send IF SIZE PPS SECONDS [FLOWS]` sends UDP/IPv4 frames of SIZE bytes (Ethernet
//! header included) at PPS frames/s (0: as fast as the socket takes them), in batches of the
//! frames due every 100 us, and prints `{"sent": n, "seconds": s}`. With FLOWS (default 1) the
//! frames cycle through that many UDP source ports (4000, 4001, ...), so a flow-queueing qdisc
//! sees FLOWS flows.
//! `aqmlab-fwd-gen count IF SECONDS` counts the generator's frames arriving on IF through a
//! TPACKET_V3 ring and prints the count, bytes and the kernel's first and last arrival stamps.

use fwd::frame;
use fwd::ring::{PacketSocket, RingConfig};
use std::time::{Duration, Instant};

/// UDP destination port that marks the generator's frames.
const PORT: u16 = 9;

fn udp_frame(size: usize, sport: u16) -> Vec<u8> {
    let size = size.max(60);
    let mut f = vec![0u8; size];
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f[12] = 0x08;
    let ip_len = (size - 14) as u16;
    f[14] = 0x45;
    f[15] = 0x02; // ECT(0): RED may mark instead of dropping
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[22] = 64;
    f[23] = frame::PROTO_UDP;
    f[26..30].copy_from_slice(&[10, 77, 0, 1]);
    f[30..34].copy_from_slice(&[10, 77, 128, 1]);
    let c = frame::ipv4_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f[34..36].copy_from_slice(&sport.to_be_bytes()); // UDP checksum 0: none (RFC 768)
    f[36..38].copy_from_slice(&PORT.to_be_bytes());
    f[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f
}

fn send(ifname: &str, size: usize, pps: f64, secs: f64, flows: usize) -> Result<String, String> {
    let mut s = PacketSocket::open(ifname, RingConfig::default()).map_err(|e| e.to_string())?;
    let frames: Vec<Vec<u8>> = (0..flows)
        .map(|i| udp_frame(size, 4000u16.wrapping_add(i as u16)))
        .collect();
    // One batch of 64 frames whose flows cycle: FLOWS a divisor of 64 or not, every flow sends.
    let mut batches: Vec<Vec<&[u8]>> = Vec::new();
    let mut k = 0;
    loop {
        batches.push(
            (0..64)
                .map(|j| frames[(k + j) % flows].as_slice())
                .collect(),
        );
        k = (k + 64) % flows;
        if k == 0 || batches.len() == 1024 {
            break;
        }
    }
    let mut b = 0;
    let t0 = Instant::now();
    let end = Duration::from_secs_f64(secs);
    let mut sent = 0u64;
    while t0.elapsed() < end {
        let due = if pps > 0.0 {
            (t0.elapsed().as_secs_f64() * pps) as u64 - sent
        } else {
            64
        };
        if due == 0 {
            std::thread::sleep(Duration::from_micros(100));
            continue;
        }
        let n = due.min(64) as usize;
        s.send(&batches[b][..n]);
        b = (b + 1) % batches.len();
        sent += n as u64;
    }
    Ok(format!(
        "{{\"sent\": {}, \"accepted\": {}, \"errors\": {}, \"seconds\": {}, \"cpu_s\": {}}}",
        sent,
        s.stats.tx_frames,
        s.stats.tx_errors,
        t0.elapsed().as_secs_f64(),
        cpu_s()
    ))
}

/// This process's user + system CPU seconds so far (getrusage(2)).
fn cpu_s() -> f64 {
    // SAFETY: getrusage writes one rusage struct into the zeroed one we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn count(ifname: &str, secs: f64) -> Result<String, String> {
    let mut s = PacketSocket::open(ifname, RingConfig::default()).map_err(|e| e.to_string())?;
    println!("ready");
    let t0 = Instant::now();
    let (mut n, mut bytes, mut first, mut last) = (0u64, 0u64, 0u64, 0u64);
    let mut pts: Vec<(u64, u64)> = Vec::new();
    while t0.elapsed().as_secs_f64() < secs {
        let got = s.recv(|b, ts| {
            if let Ok(ip) = frame::parse(b) {
                if matches!(ip.l4, frame::Transport::Udp { dport: PORT, .. }) {
                    if n == 0 {
                        first = ts;
                    }
                    n += 1;
                    pts.push((ts, bytes));
                    bytes += b.len() as u64;
                    last = ts;
                }
            }
        });
        if got == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let drops = s.kernel_drops();
    let slope = slope_bps(&pts);
    Ok(format!(
        "{{\"frames\": {n}, \"bytes\": {bytes}, \"first_ns\": {first}, \"last_ns\": {last}, \"kernel_drops\": {drops}, \"slope_bps\": {slope}}}"
    ))
}

/// The least-squares slope of bytes received before each frame against its arrival stamp, bit/s:
/// the departure rate, insensitive to a late first or last frame.
fn slope_bps(pts: &[(u64, u64)]) -> f64 {
    if pts.len() < 3 {
        return f64::NAN;
    }
    let t0 = pts[0].0;
    let n = pts.len() as f64;
    let (mut st, mut sb) = (0.0, 0.0);
    for &(t, b) in pts {
        st += (t - t0) as f64 * 1e-9;
        sb += b as f64;
    }
    let (mt, mb) = (st / n, sb / n);
    let (mut cov, mut var) = (0.0, 0.0);
    for &(t, b) in pts {
        let dt = (t - t0) as f64 * 1e-9 - mt;
        cov += dt * (b as f64 - mb);
        var += dt * dt;
    }
    cov / var * 8.0
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let num = |i: usize| a.get(i).and_then(|x| x.parse::<f64>().ok());
    let r = match (a.get(1).map(String::as_str), a.len()) {
        (Some("send"), 6 | 7) => match (num(3), num(4), num(5), a.get(6).map(|x| x.parse())) {
            (Some(size), Some(pps), Some(secs), None) => send(&a[2], size as usize, pps, secs, 1),
            (Some(size), Some(pps), Some(secs), Some(Ok(n @ 1..=65535))) => {
                send(&a[2], size as usize, pps, secs, n)
            }
            (_, _, _, Some(_)) => Err("send: FLOWS must be a whole number in [1, 65535]".into()),
            _ => Err("send: SIZE PPS SECONDS must be numbers".into()),
        },
        (Some("count"), 4) => match num(3) {
            Some(secs) => count(&a[2], secs),
            None => Err("count: SECONDS must be a number".into()),
        },
        _ => {
            Err("usage: aqmlab-fwd-gen send IF SIZE PPS SECONDS [FLOWS] | count IF SECONDS".into())
        }
    };
    match r {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("aqmlab-fwd-gen: {e}");
            std::process::exit(2);
        }
    }
}
