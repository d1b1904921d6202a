//! `aqmlab-traffic`: the testbed's traffic tool (python/aqmlab/testbed), in one process per side
//! with one event loop instead of a thread per transfer, so that seed 002's web mix (hundreds of
//! new TCP connections a second at 1 Gb/s) and its UDP CBR sources fit on a small machine.
//!
//! `aqmlab-traffic sink PORT [UDP.json]` drains every TCP connection and counts the UDP datagrams
//! of every source, written to UDP.json on SIGTERM. `aqmlab-traffic source SPEC.json OUT.json`
//! prints `ready`, reads the time origin t0 (CLOCK_MONOTONIC, ns) on stdin, runs the spec's TCP
//! flows (tcp.rs) and UDP flows (udp.rs) and writes their measurements to OUT.json in spec
//! order: `{"flows": [...], "t_end_s": ..., "cpu_s": {"user": ..., "system": ...}, "udp_pacer":
//! {"wakeups": ..., "late_max_s": ..., "late_mean_s": ...}}` (how late the pacer sent, against its
//! schedule).
//! Errors: one line on stderr, exit 2.

mod sink;
mod sys;
mod tcp;
mod udp;

use serde::Deserialize;
use serde_json::{json, Value};
use std::io::BufRead;
use std::net::Ipv4Addr;

/// One packet size of a UDP flow and its share of the packets.
#[derive(Deserialize)]
struct Size {
    bytes: f64,
    share: f64,
}

/// One flow of the spec (python/aqmlab/testbed/plan.py writes it).
#[derive(Deserialize)]
struct FlowSpec {
    name: String,
    src: String,
    dst: String,
    #[serde(default)]
    cc: String,
    #[serde(default)]
    kind: Option<String>,
    start_s: f64,
    #[serde(default)]
    size_bytes: Option<u64>,
    #[serde(default)]
    stop_s: Option<f64>,
    #[serde(default)]
    rate_bps: f64,
    #[serde(default)]
    sizes: Vec<Size>,
}

/// The traffic spec of a run.
#[derive(Deserialize)]
struct Spec {
    duration_s: f64,
    warmup_s: f64,
    #[serde(default = "default_sample")]
    sample_s: f64,
    #[serde(default)]
    seed: u64,
    /// keep each TCP flow's bytes acknowledged at every sample (`output.flow_series`)
    #[serde(default)]
    series: bool,
    /// at most this many points a series (`output.max_samples`)
    #[serde(default = "default_max_samples")]
    max_samples: usize,
    port: u16,
    flows: Vec<FlowSpec>,
}

fn default_sample() -> f64 {
    0.02
}

fn default_max_samples() -> usize {
    200_000
}

fn ip(s: &str, flow: &str) -> Result<Ipv4Addr, String> {
    s.parse()
        .map_err(|_| format!("flow {flow}: {s:?} is not an IPv4 address"))
}

fn cpu_seconds() -> Value {
    // SAFETY: plain data; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    json!({"user": s(u.ru_utime), "system": s(u.ru_stime)})
}

fn source(spec_path: &str, out: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(spec_path).map_err(|e| format!("{spec_path}: {e}"))?;
    let spec: Spec = serde_json::from_str(&text).map_err(|e| format!("{spec_path}: {e}"))?;
    // the flows are checked and the UDP sockets bound before `ready`: an error is reported before
    // the run starts
    let (mut udps, udp_index) = udp::Udp::all(&spec)?;
    let tcp = tcp::Tcp::new(&spec)?;
    println!("ready");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("stdin: {e}"))?;
    let t0: u64 = line
        .trim()
        .parse()
        .map_err(|_| format!("stdin: {:?} is not a time origin in ns", line.trim()))?;
    let clk = tcp::Clock {
        t0,
        warm: t0 + (spec.warmup_s * 1e9) as u64,
        end: t0 + (spec.duration_s * 1e9) as u64,
    };
    for u in udps.iter_mut() {
        u.rebase(&clk);
    }
    let port = spec.port;
    let pacer = std::thread::spawn(move || udp::run(udps, clk, port));
    let tcp_index = tcp.index.clone();
    let sample_ns = ((spec.sample_s * 1e9) as u64).max(1_000_000);
    let (tcp_out, t_end) = tcp.run(clk, port, sample_ns).map_err(|e| e.to_string())?;
    let (udps, pacer_stats) = pacer
        .join()
        .map_err(|_| "the UDP pacer failed".to_string())?;
    let mut flows = vec![Value::Null; spec.flows.len()];
    for (k, v) in tcp_index.into_iter().zip(tcp_out) {
        flows[k] = v;
    }
    for (k, u) in udp_index.into_iter().zip(&udps) {
        flows[k] = u.result(&clk);
    }
    let v = json!({"flows": flows, "t_end_s": (t_end - t0) as f64 * 1e-9, "cpu_s": cpu_seconds(),
        "udp_pacer": pacer_stats});
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, v.to_string()).map_err(|e| format!("{out}: {e}"))?;
    std::fs::rename(&tmp, out).map_err(|e| format!("{out}: {e}"))
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let r = match (a.get(1).map(String::as_str), a.len()) {
        (Some("sink"), 3 | 4) => match a[2].parse::<u16>() {
            Ok(port) => sink::run(port, a.get(3).map(String::as_str)).map_err(|e| e.to_string()),
            Err(_) => Err(format!("sink: PORT {:?} must be 0-65535", a[2])),
        },
        (Some("source"), 4) => source(&a[2], &a[3]),
        _ => Err("usage: aqmlab-traffic sink PORT [UDP.json] | source SPEC.json OUT.json".into()),
    };
    if let Err(e) = r {
        eprintln!("aqmlab-traffic: {e}");
        std::process::exit(2);
    }
}
