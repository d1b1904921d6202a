//! Cost per packet of the `fq` scheduler against a single AQM-guarded queue (issue 21: "`fq`
//! with 10,000 flows costs at most 100 ns per packet more than a single queue").
//!
//! Each element is one arrival and one departure of a 1500-B packet, 120 us apart (100 Mb/s),
//! with about 2 packets per flow standing. `single/codel`: a FIFO (`VecDeque`) guarded by CoDel
//! through the `Aqm` trait (enqueue verdict, dequeue verdict with the sojourn), the work the
//! queue-discipline layer does around a single queue's AQM. `fq/codel/N`: `fq` + `codel` with N
//! queues and N flows sending round robin (every queue active). `fq_pie/N`: the same with
//! `fq_pie` (PIE on every queue, one timer sweeping all N every 15 ms).
//! Run: `cargo bench -p aqmlab-qdisc --bench sched_fq`; figures in docs/benchmarks.md.

use aqm::fq_codel::FqPacket;
use aqm::params::{Buffer, LinkContext, ParamMap, ParamValue};
use aqm::{rng_from_seed, PacketMeta, QueueView};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use qdisc::sched::{build, Scheduler};
use std::collections::VecDeque;
use std::hint::black_box;

const N: usize = 20_000;
const GAP: u64 = 120_000;

#[derive(Clone, Copy, Debug)]
struct P(u32);

impl FqPacket for P {
    fn flow_id(&self) -> u32 {
        self.0
    }
    fn size_bytes(&self) -> u32 {
        1500
    }
}

fn link() -> LinkContext {
    LinkContext {
        rate_bps: 100_000_000,
        buffer: Buffer::Packets(100_000),
        mean_pkt_bytes: 1500,
    }
}

fn sched(name: &str, flows: u32) -> Box<dyn Scheduler<P>> {
    let mut m = ParamMap::new();
    m.insert("flows".into(), ParamValue::Num(flows as f64));
    m.insert("limit".into(), ParamValue::Num(100_000.0));
    build::<P>(name, &m, &link())
        .expect("a scheduler")
        .expect("valid")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sched");
    g.throughput(criterion::Throughput::Elements(N as u64));
    g.bench_function("single/codel", |b| {
        b.iter_batched_ref(
            || {
                let aqm = aqm::build("codel", &ParamMap::new(), &link()).expect("defaults");
                let q: VecDeque<(u64, u32)> = (0..20_000).map(|i| (0, i % 10_000)).collect();
                (aqm, q, rng_from_seed(1))
            },
            |(aqm, q, rng)| {
                let mut now = 0u64;
                let mut bytes = q.len() as u64 * 1500;
                for i in 0..N as u32 {
                    now += GAP;
                    let pkt = PacketMeta {
                        flow: i % 10_000,
                        ..PacketMeta::of_size(1500)
                    };
                    let view = QueueView {
                        len_pkts: q.len() as u32,
                        len_bytes: bytes,
                        idle_since: None,
                    };
                    black_box(aqm.enqueue(&pkt, &view, now, rng));
                    q.push_back((now, pkt.flow));
                    bytes += 1500;
                    let (at, _) = q.pop_front().expect("backlogged");
                    bytes -= 1500;
                    let view = QueueView {
                        len_pkts: q.len() as u32,
                        len_bytes: bytes,
                        idle_since: None,
                    };
                    black_box(aqm.dequeue(&pkt, now - at, &view, now, rng));
                }
            },
            BatchSize::SmallInput,
        )
    });
    for (name, flows) in [
        ("fq", 100u32),
        ("fq", 10_000),
        ("fq_pie", 1024),
        ("fq_pie", 10_000),
    ] {
        g.bench_function(format!("{name}/{flows}"), |b| {
            b.iter_batched_ref(
                || {
                    let mut q = sched(name, flows);
                    let mut rng = rng_from_seed(1);
                    for i in 0..2 * flows {
                        q.enqueue(P(i % flows), 0, &mut rng, &mut |_, _| {});
                    }
                    (q, rng)
                },
                |(q, rng)| {
                    let mut now = 0u64;
                    for i in 0..N as u32 {
                        now += GAP;
                        while let Some(t) = q.next_update() {
                            if t > now {
                                break;
                            }
                            q.update(t, rng);
                        }
                        q.enqueue(P(i % flows), now, rng, &mut |_, _| {});
                        black_box(q.dequeue(now, rng, &mut |_, _| {}));
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
