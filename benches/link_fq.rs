//! `fq` with 10,000 flows against the simulator's single queue, on equal work (issue 21: "`fq`
//! with 10,000 flows costs at most 100 ns per packet more than a single queue").
//!
//! Both sides are the simulator's own bottleneck path, `sim::link::Link` as the engine drives it
//! (`arrive`, `tx_done`, `start_next`), monitored (delay histogram, time series, measurement
//! window): `single` is a real queue guarded by `codel` (the FIFO and its layer: admission,
//! head verdict, window tickets); `fq/N` is `fq` + `codel` with N flow queues. Built as
//! `crates/sim/src/network/links.rs` builds them (`qdisc::sched::with_link_defaults`, then
//! `qdisc::sched::build`).
//!
//! Equal work: the same packet sequence, 1500-B data packets of flows `i mod F` round robin,
//! one arrival and one departure every 40 ns (a 300 Gb/s link: a synthetic clock, chosen so that
//! the queue stays below CoDel's target), after 2 x F packets were queued at time 0, so about two
//! packets per flow stand in the queue. A packet then waits about 2 x F x 40 ns (0.8 ms for
//! F = 10,000; with 120 ns, fq's new-flow priority let some old queues wait past the 5 ms target
//! for an interval and CoDel dropped) in both disciplines, so neither drops or marks and both do
//! exactly one enqueue and one dequeue per step (the bench checks this). `single/F` feeds the
//! single queue the same sequence as `fq/F`.
//!
//! Timing: the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) and the wall time of each
//! repetition of `STEPS` steps, the cases interleaved (one repetition of each, then the next
//! round) so that a change of the machine's load hits them alike; the median of the repetitions.
//! Run: `cargo bench -p aqmlab-sim --bench link_fq [-- REPS [CASE]]` (default 9 repetitions;
//! CASE, e.g. `fq/10000`, runs that case alone, for a profiler); figures in docs/benchmarks.md.

use aqm::params::{Buffer, LinkContext, ParamMap, ParamValue};
use aqm::{Precedence, Time};
use sim::link::{Link, Outcome};
use sim::packet::{Kind, Packet};
use std::hint::black_box;
use std::time::Instant;

const STEPS: u64 = 2_000_000;
const GAP: Time = 40;
const RATE: u64 = 300_000_000_000;
const BUFFER: u32 = 100_000;

fn ctx() -> LinkContext {
    LinkContext {
        rate_bps: RATE,
        buffer: Buffer::Packets(BUFFER),
        mean_pkt_bytes: 1500,
    }
}

fn link(aqm: Option<Box<dyn aqm::Aqm>>) -> Link {
    Link::new(
        "bottleneck".into(),
        0,
        1,
        RATE,
        0,
        Buffer::Packets(BUFFER),
        aqm,
        aqm::rng_from_seed(1),
        true,
        0,
        u64::MAX / 2,
        10_000_000,
        200_000,
    )
}

/// The simulator's single queue guarded by CoDel (a real queue: CoDel has a dequeue hook).
fn single() -> Link {
    let codel = aqm::build("codel", &ParamMap::new(), &ctx()).expect("codel's defaults");
    let l = link(Some(codel));
    assert!(l.real, "CoDel's link holds its packets");
    l
}

/// `fq` + `codel` with `flows` queues, as links.rs builds a scheduler link.
fn fq(flows: u32) -> Link {
    let mut m = ParamMap::new();
    m.insert("flows".into(), ParamValue::Num(flows as f64));
    m.insert("queue_aqm".into(), ParamValue::Str("codel".into()));
    let m = qdisc::sched::with_link_defaults(m, Buffer::Packets(BUFFER));
    let s = qdisc::sched::build("fq", &m, &ctx())
        .expect("fq is registered")
        .expect("valid fq parameters");
    let mut l = link(None);
    l.sched = Some(s);
    l.real = true;
    l
}

fn pkt(flow: u32, seq: u32) -> Packet {
    Packet {
        flow,
        seq,
        size: 1500,
        hop: 0,
        kind: Kind::Data,
        flags: 0,
        precedence: Precedence::Out,
        ts: 0,
        rwnd: 0,
        sack: [(0, 0); 3],
        enq_time: 0,
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One repetition: a fresh link, `2 x flows` packets queued at 0, then `STEPS` steps of one
/// arrival and one departure. Returns (CPU ns, wall ns) per step of the timed part.
fn run(mut l: Link, flows: u32) -> (f64, f64) {
    let mut v = aqm::Verdict::Admit;
    let mut seq = 0u32;
    for i in 0..2 * flows {
        let r = l.arrive(&mut pkt(i % flows, seq), 0, &mut v);
        assert!(matches!(r, Outcome::Queued));
        seq += 1;
    }
    let first = l.start_next(0).expect("backlogged");
    black_box(first);
    let (c0, w0) = (thread_cpu_ns(), Instant::now());
    let mut now: Time = 0;
    for i in 0..STEPS {
        now += GAP;
        let flow = (i % flows as u64) as u32;
        let r = l.arrive(&mut pkt(flow, seq), now, &mut v);
        debug_assert!(matches!(r, Outcome::Queued));
        seq = seq.wrapping_add(1);
        l.tx_done(now);
        black_box(l.start_next(now));
    }
    let (cpu, wall) = (thread_cpu_ns() - c0, w0.elapsed().as_nanos() as u64);
    // Equal work: nothing dropped or marked, one packet in and one out per step.
    let what = format!(
        "{} with {flows} flows",
        l.sched.as_ref().map_or("single", |s| s.name())
    );
    assert_eq!(
        l.stats.total_dropped, 0,
        "{what}: dropped (the sojourn should stay below target)"
    );
    assert_eq!(l.stats.win.marked, 0, "{what}: marked");
    assert_eq!(
        l.stored(),
        2 * flows as usize - 1,
        "{what}: the standing queue changed"
    );
    (cpu as f64 / STEPS as f64, wall as f64 / STEPS as f64)
}

fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    let n = x.len();
    if n % 2 == 1 {
        x[n / 2]
    } else {
        (x[n / 2 - 1] + x[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    // What fq touches per packet that the single queue keeps hot: a flow record, the flow's
    // boxed AQM and a packet slot (the packet, its arrival time and a link), at each end.
    println!(
        "sizes (bytes): packet held by fq {}, slot at least {}, CoDel state {}",
        std::mem::size_of::<qdisc::Tagged<Packet>>(),
        std::mem::size_of::<Option<qdisc::Tagged<Packet>>>() + 12,
        std::mem::size_of::<aqm::codel::Codel>(),
    );
    let reps: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(9);
    if let Some(only) = args.get(1) {
        let (name, flows) = only
            .split_once('/')
            .expect("CASE is NAME/FLOWS, e.g. fq/10000");
        let flows: u32 = flows.parse().expect("CASE's FLOWS is a whole number");
        let make = if name == "fq" { fq } else { |_| single() };
        for _ in 0..reps {
            let (c, w) = run(make(flows), flows);
            println!("{only}: {c:.1} ns/pkt CPU, {w:.1} wall");
        }
        return;
    }
    type Case = (&'static str, u32, fn(u32) -> Link);
    let cases: [Case; 8] = [
        ("single", 1, |_| single()),
        ("fq", 1, fq),
        ("single", 100, |_| single()),
        ("fq", 100, fq),
        ("single", 1000, |_| single()),
        ("fq", 1000, fq),
        ("single", 10_000, |_| single()),
        ("fq", 10_000, fq),
    ];
    let mut got: Vec<(Vec<f64>, Vec<f64>)> = vec![(vec![], vec![]); cases.len()];
    for _ in 0..reps {
        for (k, (_, flows, make)) in cases.iter().enumerate() {
            let (c, w) = run(make(*flows), *flows);
            got[k].0.push(c);
            got[k].1.push(w);
        }
    }
    println!(
        "link_fq: {STEPS} steps per repetition, {reps} repetitions, medians (min-max) of ns per \
         packet (one enqueue + one dequeue)"
    );
    println!("| case | flows | CPU ns/pkt median (min-max) | wall ns/pkt median |");
    println!("|---|---|---|---|");
    let mut med = Vec::new();
    for (k, (name, flows, _)) in cases.iter().enumerate() {
        let (c, w) = &got[k];
        let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.iter().copied().fold(0.0, f64::max);
        let m = median(c.clone());
        med.push(m);
        println!(
            "| {name} | {flows} | {m:.1} ({lo:.1}-{hi:.1}) | {:.1} |",
            median(w.clone())
        );
    }
    for k in (0..cases.len()).step_by(2) {
        let flows = cases[k].1;
        // Paired per repetition: fq minus single of the same round.
        let diffs: Vec<f64> = (0..reps).map(|r| got[k + 1].0[r] - got[k].0[r]).collect();
        println!(
            "fq/{flows} - single/{flows}: {:.1} ns/pkt CPU (median of the paired differences \
             {:.1}; target <= 100 ns)",
            med[k + 1] - med[k],
            median(diffs)
        );
    }
}
