//! `aqmlab-fwd CONFIG.json OUT.json`: forwards frames between two interfaces through the
//! configured delay lines and AQM-guarded queues until the configured duration or SIGINT/SIGTERM,
//! then writes its statistics (also every `report_interval_ns` while running). Prints `ready <t>` on
//! stdout once both sockets are open, `<t>` being its time origin (CLOCK_MONOTONIC, ns). Errors: one line on stderr, exit 2.

use fwd::config::Config;
use fwd::engine::{Engine, Side};
use fwd::path::Frame;
use fwd::ring::{PacketSocket, RingConfig};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn mono() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// Converts the kernel's CLOCK_REALTIME arrival stamps to the monotonic clock.
struct Stamps {
    real_minus_mono: i128,
    used: u64,
    replaced: u64,
}

impl Stamps {
    fn new() -> Self {
        let m = mono();
        let r = clock(libc::CLOCK_REALTIME);
        Stamps {
            real_minus_mono: r as i128 - m as i128,
            used: 0,
            replaced: 0,
        }
    }

    /// The arrival time: the kernel's stamp when it is plausible (not in the future, at most
    /// 1 s old: a descheduled forwarder may read a full ring late), else `now`.
    fn arrival(&mut self, kernel_real: u64, now: u64) -> u64 {
        let t = kernel_real as i128 - self.real_minus_mono;
        if t <= now as i128 && (now as i128 - t) < 1_000_000_000 {
            self.used += 1;
            t as u64
        } else {
            self.replaced += 1;
            now
        }
    }
}

struct Io {
    left: PacketSocket,
    right: PacketSocket,
    stamps: Stamps,
    to_left: Vec<Frame>,
    to_right: Vec<Frame>,
}

impl Io {
    fn pump(&mut self, eng: &mut Engine, lag: u64) {
        let now = mono();
        let (st, e) = (&mut self.stamps, &mut *eng);
        self.left
            .recv(|b, ts| e.ingress(Side::Left, b, st.arrival(ts, now)));
        self.right
            .recv(|b, ts| e.ingress(Side::Right, b, st.arrival(ts, now)));
        eng.advance(
            mono().saturating_sub(lag),
            &mut self.to_right,
            &mut self.to_left,
        );
        for (sock, frames) in [
            (&mut self.right, &mut self.to_right),
            (&mut self.left, &mut self.to_left),
        ] {
            if !frames.is_empty() {
                let refs: Vec<&[u8]> = frames.iter().map(|f| f.buf.as_slice()).collect();
                sock.send(&refs);
                eng.recycle(frames);
            }
        }
    }

    /// Sleeps until the next event (plus the lag), a frame, or 1 ms (so partly filled ring
    /// blocks, retired after 1 ms, are seen).
    fn wait(&self, eng: &Engine, busy: bool, lag: u64) {
        if busy {
            std::hint::spin_loop();
            return;
        }
        let now = mono();
        let until = eng
            .next_event()
            .map_or(u64::MAX, |t| t + lag)
            .min(now + 1_000_000);
        if until <= now {
            return;
        }
        let d = until - now;
        let ts = libc::timespec {
            tv_sec: (d / 1_000_000_000) as libc::time_t,
            tv_nsec: (d % 1_000_000_000) as libc::c_long,
        };
        let mut fds = [
            libc::pollfd {
                fd: self.left.fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.right.fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds and a valid timeout.
        unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    }
}

/// Puts the forwarder under SCHED_FIFO at `prio` (0: leaves it alone); says what it got. The
/// kernel's RT throttling (sched_rt_runtime_us) still leaves other processes 5% of each core.
fn realtime(prio: u8) -> String {
    if prio == 0 {
        return "SCHED_OTHER".into();
    }
    let p = libc::sched_param {
        sched_priority: i32::from(prio.min(99)),
    };
    // SAFETY: p is a valid sched_param; pid 0 is this process.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        format!("SCHED_FIFO {}", p.sched_priority)
    } else {
        format!("SCHED_OTHER ({})", std::io::Error::last_os_error())
    }
}

fn cpu_seconds() -> (f64, f64) {
    // SAFETY: plain data; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (s(u.ru_utime), s(u.ru_stime))
}

fn report(eng: &mut Engine, io: &mut Io, run: &RunInfo, out: &str) -> std::io::Result<()> {
    let start = run.start;
    let now = mono();
    let (rx, tx, dropped, in_system) = eng.conservation();
    let series = |p: &fwd::path::Path| {
        let s = p.series();
        let cols: serde_json::Map<String, serde_json::Value> = s
            .names
            .iter()
            .zip(&s.cols)
            .map(|(n, c)| (n.to_string(), serde_json::json!(c)))
            .collect();
        serde_json::json!({"t_ns": s.t, "cols": cols})
    };
    let (user, sys) = cpu_seconds();
    let mut v = serde_json::json!({
        "elapsed_s": (now - start) as f64 / 1e9,
        "links": [eng.fwd.summary(now), eng.rev.summary(now)],
        "series": {
            format!("link:{}", "bottleneck"): series(&eng.fwd),
            format!("link:{}", "reverse"): series(&eng.rev),
        },
        "conservation": {
            "received": rx, "sent": tx, "dropped": dropped, "in_system": in_system,
            "forward": eng.fwd.totals, "reverse": eng.rev.totals,
        },
        "buffer_violations": eng.fwd.buffer_violations() + eng.rev.buffer_violations(),
        "oddities": eng.odd,
        "throttle_rewrites": eng.throttle.rewritten,
        "rings": {"left": io.left.stats, "right": io.right.stats,
                  "left_kernel_drops": io.left.kernel_drops(),
                  "right_kernel_drops": io.right.kernel_drops()},
        "timestamps": {"kernel": io.stamps.used, "replaced_by_now": io.stamps.replaced},
        "cpu_s": {"user": user, "system": sys},
        "scheduling": run.scheduling,
    });
    // The event logs (`[output] events`): per direction, its records so far, the flow of each
    // record's index, and the write error that stopped it, if any.
    let mut logs = serde_json::Map::new();
    for p in [&eng.fwd, &eng.rev] {
        if let Some(flows) = p.event_flows() {
            logs.insert(
                p.name().to_string(),
                serde_json::json!({"rows": p.event_rows(), "flows": flows, "error": p.events_error}),
            );
        }
    }
    if !logs.is_empty() {
        v["event_log"] = serde_json::Value::Object(logs);
    }
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&v)?)?;
    std::fs::rename(tmp, out)
}

/// What the report says about the run itself.
struct RunInfo {
    start: u64,
    scheduling: String,
}

fn run(cfg: &Config, out: &str) -> Result<(), String> {
    let ring = RingConfig::default();
    let left = PacketSocket::open(&cfg.left, ring).map_err(|e| format!("left: {e}"))?;
    let right = PacketSocket::open(&cfg.right, ring).map_err(|e| format!("right: {e}"))?;
    // SAFETY: installs an async-signal-safe handler (one atomic store); PR_SET_TIMERSLACK
    // takes a plain integer.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    let start = mono();
    let info = RunInfo {
        start,
        scheduling: realtime(cfg.rt_priority),
    };
    let mut eng = cfg.engine(start)?;
    let mut io = Io {
        left,
        right,
        stamps: Stamps::new(),
        to_left: Vec::new(),
        to_right: Vec::new(),
    };
    println!("ready {start}");
    let _ = std::io::stdout().flush();
    let mut next_report = start + cfg.report_interval_ns;
    while !STOP.load(Ordering::Relaxed) {
        io.pump(&mut eng, cfg.lag_ns);
        let now = mono();
        if cfg.duration_ns > 0 && now - start >= cfg.duration_ns {
            break;
        }
        if cfg.report_interval_ns > 0 && now >= next_report {
            report(&mut eng, &mut io, &info, out).map_err(|e| format!("{out}: {e}"))?;
            next_report = now + cfg.report_interval_ns;
        }
        io.wait(&eng, cfg.busy_poll, cfg.lag_ns);
    }
    report(&mut eng, &mut io, &info, out).map_err(|e| format!("{out}: {e}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: aqmlab-fwd CONFIG.json OUT.json");
        std::process::exit(2);
    }
    let cfg = std::fs::read_to_string(&args[1])
        .map_err(|e| format!("{}: {e}", args[1]))
        .and_then(|s| Config::from_json(&s));
    let r = cfg.and_then(|c| run(&c, &args[2]));
    if let Err(e) = r {
        eprintln!("aqmlab-fwd: {e}");
        std::process::exit(2);
    }
}
