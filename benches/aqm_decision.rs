//! Cost of one enqueue decision for every registered algorithm (criterion).
//!
//! Each algorithm, with its default parameters on a 100 Mb/s link with a 1000-packet buffer, sees
//! a pre-generated sequence of queue lengths that wanders between 0 and 400 packets (a random walk),
//! so thresholds are crossed and every branch runs. Periodic updates are run when due, outside the
//! timed region's per-call cost only in the sense that they are amortised over the arrivals.
//! Run: `cargo bench -p aqmlab-aqm --bench aqm_decision`.

use aqm::params::{Buffer, LinkContext, ParamMap};
use aqm::{rng_from_seed, PacketMeta, QueueView, REGISTRY};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rand::Rng;
use std::hint::black_box;

const N: usize = 4096;

fn queue_walk() -> Vec<QueueView> {
    let mut rng = rng_from_seed(7);
    let mut q: i64 = 0;
    (0..N)
        .map(|_| {
            q = (q + rng.random_range(-3..=4)).clamp(0, 400);
            QueueView {
                len_pkts: q as u32,
                len_bytes: q as u64 * 1500,
                idle_since: None,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let link = LinkContext {
        rate_bps: 100_000_000,
        buffer: Buffer::Packets(1000),
        mean_pkt_bytes: 1500,
    };
    let walk = queue_walk();
    let mut g = c.benchmark_group("enqueue");
    g.throughput(criterion::Throughput::Elements(N as u64));
    for info in REGISTRY {
        g.bench_function(info.name, |b| {
            b.iter_batched_ref(
                || {
                    (
                        (info.build)(&ParamMap::new(), &link).expect("defaults build"),
                        rng_from_seed(1),
                    )
                },
                |(aqm, rng)| {
                    let pkt = PacketMeta::of_size(1500);
                    // 120 us per packet: the transmission time of 1500 B at 100 Mb/s.
                    let mut now = 0u64;
                    for q in &walk {
                        now += 120_000;
                        while let Some(t) = aqm.next_update() {
                            if t > now {
                                break;
                            }
                            aqm.update(q, t);
                        }
                        black_box(aqm.enqueue(&pkt, q, now, rng));
                        if aqm.wants_dequeue() {
                            black_box(aqm.dequeue(&pkt, 1_000_000, q, now, rng));
                        }
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
