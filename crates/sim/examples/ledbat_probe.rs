//! Debug aid (issue 22, docs/crosscheck-ns3.md s. 3.2): `ledbat_probe CONFIG_JSON END_S DROPS_OUT
//! [FLOW]` runs the simulator on a run's `config.json` up to END_S seconds, stepping 1 ms, and
//! prints a line whenever a TCP sender's fast retransmits, timeouts or recovery state change, plus
//! its window every 100 ms (every 1 ms for FLOW, when given):
//!   T FLOW EVENT UNA NXT MAX CWND SSTHRESH REC FR TO QUEUE
//! (segments; QUEUE the bottleneck's packets; EVENT `fr` a new fast retransmit, `rto` a new timeout, `exit` recovery left, `w`
//! the 100 ms sample). The bottleneck's drops go to DROPS_OUT as `T FLOW` lines (from its event
//! log), the same shape as `ns3_dumbbell.cc --dropTrace`'s first two columns. Last, a `#` line:
//! the LEDBAT flows' share of the segments acknowledged from the run's warm-up to END_S, the
//! timeouts of all flows, and the bottleneck's least queue (packets) over 1-20 s, sampled every
//! 1 ms, then each flow's goodput over that span in Mb/s.
use sim::Sim;

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let path = arg(1).expect("usage: ledbat_probe CONFIG_JSON END_S DROPS_OUT");
    let end_s: f64 = arg(2).and_then(|s| s.parse().ok()).unwrap_or(6.0);
    let drops_out = arg(3).unwrap_or_else(|| "drops.txt".into());
    let every_ms: Option<usize> = arg(4).and_then(|s| s.parse().ok());
    let text = std::fs::read_to_string(&path).expect("a readable config.json");
    let mut cfg: sim::config::Config = serde_json::from_str(&text).expect("an aqmlab config.json");
    let end = (end_s * 1e9) as u64;
    cfg.duration_ns = cfg.duration_ns.max(end);
    let events = format!("{drops_out}.events");
    cfg.links[0].events_path = Some(events.clone());
    let mut sim = Sim::new(&cfg).expect("a valid configuration");
    let n = sim.flows.len();
    let mut last = vec![(0u64, 0u64, false); n];
    let step = 1_000_000;
    let mut t = 0;
    let warm = cfg.warmup_ns;
    let mut una_warm = vec![0u32; n];
    let mut least_queue = usize::MAX;
    while t < end {
        t += step;
        sim.run_until(t);
        let queue = sim.links[0].len_pkts();
        if (1_000_000_000..=20_000_000_000).contains(&t) {
            least_queue = least_queue.min(queue as usize);
        }
        if t == warm {
            for (i, f) in sim.flows.iter().enumerate() {
                una_warm[i] = f.tcp().map_or(0, |c| c.sender.snd_una);
            }
        }
        for (i, f) in sim.flows.iter().enumerate() {
            let Some(s) = f.tcp().map(|c| &c.sender) else {
                continue;
            };
            let now = (s.stats.fast_retransmits, s.stats.timeouts, s.in_recovery);
            let ev = if now.1 > last[i].1 {
                Some("rto")
            } else if now.0 > last[i].0 {
                Some("fr")
            } else if last[i].2 && !now.2 {
                Some("exit")
            } else if t % 100_000_000 == 0 || every_ms == Some(i) {
                Some("w")
            } else {
                None
            };
            if let Some(ev) = ev {
                println!(
                    "{:.3} {} {} {} {} {} {:.1} {:.1} {} {} {} {}",
                    t as f64 / 1e9,
                    i,
                    ev,
                    s.snd_una,
                    s.snd_nxt,
                    s.snd_max,
                    s.cwnd,
                    s.ssthresh.min(1e9),
                    u8::from(s.in_recovery),
                    s.stats.fast_retransmits,
                    s.stats.timeouts,
                    queue
                );
            }
            last[i] = now;
        }
    }
    let (mut led, mut all, mut timeouts) = (0u64, 0u64, 0u64);
    let mut mbps = Vec::new();
    for (i, f) in sim.flows.iter().enumerate() {
        let Some(s) = f.tcp().map(|c| &c.sender) else {
            continue;
        };
        let acked = u64::from(s.snd_una - una_warm[i]);
        all += acked;
        if s.cc.name().starts_with("ledbat") {
            led += acked;
        }
        timeouts += s.stats.timeouts;
        mbps.push(format!(
            "{:.1}",
            acked as f64 * 1460.0 * 8.0 / ((end - warm) as f64 / 1e3)
        ));
    }
    println!(
        "# share {:.1} timeouts {} least_queue {} goodput {}",
        100.0 * led as f64 / all.max(1) as f64,
        timeouts,
        least_queue,
        mbps.join(" ")
    );
    drop(sim);
    let bytes = std::fs::read(&events).expect("the event log");
    let mut out = String::new();
    for r in bytes.chunks_exact(40) {
        if r[36] == 2 {
            let t_ns = u64::from_le_bytes(r[0..8].try_into().unwrap());
            let flow = u32::from_le_bytes(r[24..28].try_into().unwrap());
            out.push_str(&format!("{:.6} {}\n", t_ns as f64 / 1e9, flow));
        }
    }
    std::fs::write(&drops_out, out).expect("DROPS_OUT written");
}
