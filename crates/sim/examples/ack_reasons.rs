//! Debug aid: `ack_reasons CONFIG_JSON [T_S ...]` runs the network of a run directory's
//! `config.json` and prints, for each interval between the times given (default: 0, the warmup,
//! the duration), the data segments the TCP receivers got and the ACKs they sent by reason
//! ([`sim::tcp::AckReason`], the classes of `scripts/ns3_dumbbell.cc --ackTrace`), per data
//! segment, with the senders' timeouts and retransmissions and, last, the ACKs the receivers
//! saved by SACK compression per data segment (`[tcp] sack_compress`, as Linux's
//! `TcpExtTCPAckCompressed`) (docs/crosscheck-ns3.md s. 1.8 item 5).
//! With `ACK_TRACE=FILE` in the environment it also writes `--ackTrace`'s lines (`T FLOW KIND
//! SEG`), on a 1 ms grid: T is the end of the millisecond, SEG the receiver's `rcv_nxt` then;
//! and a line `T FLOW rto STATE` per sender timeout, STATE the sender's at the end of the previous
//! millisecond as `ns3_dumbbell.cc --rtoTrace` numbers them: 3 in fast recovery, 4 after a timeout
//! (SND.UNA below the SND.MAX of the flow's last timeout), else 0; and `T FLOW rec 0` per entry into
//! fast recovery.
use sim::tcp::AckReason;
use sim::{Config, Sim};
use std::io::Write;

/// Receiver and sender counters summed over the TCP flows.
fn totals(sim: &Sim) -> [u64; 10] {
    let mut v = [0u64; 10];
    for f in &sim.flows {
        if let Some(e) = f.tcp() {
            v[0] += e.receiver.stats.segments;
            for (k, n) in e.receiver.stats.acks_by_reason.iter().enumerate() {
                v[1 + k] += n;
            }
            v[8] += e.sender.stats.timeouts;
            v[9] += e.sender.stats.retransmits;
        }
    }
    v
}

/// The ACKs the TCP receivers saved by SACK compression.
fn compressed(sim: &Sim) -> u64 {
    sim.flows
        .iter()
        .filter_map(|f| f.tcp())
        .map(|e| e.receiver.stats.acks_compressed)
        .sum()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: ack_reasons CONFIG_JSON [T_S ...]");
    let text = std::fs::read_to_string(&path).expect("readable config");
    let cfg: Config = serde_json::from_str(&text).expect("a simulator configuration");
    let mut times: Vec<u64> = std::env::args()
        .skip(2)
        .map(|s| (s.parse::<f64>().expect("seconds") * 1e9).round() as u64)
        .collect();
    if times.is_empty() {
        times = vec![0, cfg.warmup_ns, cfg.duration_ns];
    }
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    if let Ok(file) = std::env::var("ACK_TRACE") {
        trace(&mut sim, &file, *times.last().expect("a time"));
        sim = Sim::new(&cfg).expect("a valid configuration");
    }
    let names: Vec<&str> = AckReason::ALL.iter().map(|r| r.name()).collect();
    println!(
        "from_s to_s segments acks acks_per_seg {} timeouts retransmits compressed_per_seg",
        names
            .iter()
            .map(|n| format!("{n}_per_seg"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut last = totals(&sim);
    let mut last_c = 0;
    let mut from = times[0];
    sim.run_until(from);
    if from > 0 {
        last = totals(&sim);
        last_c = compressed(&sim);
    }
    for &to in &times[1..] {
        sim.run_until(to);
        let now = totals(&sim);
        let d: Vec<u64> = now.iter().zip(last.iter()).map(|(a, b)| a - b).collect();
        let seg = d[0].max(1) as f64;
        let acks: u64 = d[1..8].iter().sum();
        let c = compressed(&sim);
        println!(
            "{:.3} {:.3} {} {} {:.4} {} {} {} {:.4}",
            from as f64 / 1e9,
            to as f64 / 1e9,
            d[0],
            acks,
            acks as f64 / seg,
            d[1..8]
                .iter()
                .map(|n| format!("{:.4}", *n as f64 / seg))
                .collect::<Vec<_>>()
                .join(" "),
            d[8],
            d[9],
            (c - last_c) as f64 / seg
        );
        last = now;
        last_c = c;
        from = to;
    }
}

/// Writes the per-ACK lines of every TCP flow up to `end`, 1 ms at a time.
fn trace(sim: &mut Sim, file: &str, end: u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).expect("writable trace"));
    let n = sim.flows.len();
    let mut last = vec![[0u64; 10]; n];
    // Per flow: its state at the end of the previous millisecond, and SND.MAX at the end of the
    // millisecond of its last timeout (the grid's approximation of SND.MAX at the timeout).
    let mut state = vec![0u8; n];
    let mut loss_until = vec![0u32; n];
    let mut t = 0;
    while t < end {
        t += 1_000_000;
        sim.run_until(t);
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(e) = f.tcp() else { continue };
            let st = &e.receiver.stats;
            let mut now = [0u64; 10];
            now[0] = st.segments;
            now[1..8].copy_from_slice(&st.acks_by_reason);
            now[8] = e.sender.stats.timeouts;
            now[9] = e.sender.stats.fast_retransmits;
            for k in 0..10 {
                let name = match k {
                    0 => "data",
                    8 => "rto",
                    9 => "rec",
                    _ => AckReason::ALL[k - 1].name(),
                };
                let seg = match k {
                    8 => state[i] as u32,
                    9 => 0,
                    _ => e.receiver.rcv_nxt,
                };
                for _ in last[i][k]..now[k] {
                    writeln!(out, "{:.6} {} {} {}", t as f64 / 1e9, i, name, seg)
                        .expect("trace written");
                }
            }
            let s = &e.sender;
            if now[8] > last[i][8] {
                loss_until[i] = s.snd_max;
            }
            state[i] = if s.in_recovery {
                3
            } else if s.snd_una < loss_until[i] {
                4
            } else {
                0
            };
            last[i] = now;
        }
    }
}
