//! Property tests for the baseline AQMs ARED, REM, PI, AVQ, AN-AQM and PAQM: under any arrival
//! sequence (sizes, queue lengths, time gaps, idle periods, overflows) on any link, none panics,
//! the drop probability stays in [0, 1], the state and counters stay finite, and every periodic
//! update schedules the next one strictly later.

use aqm::params::{Buffer, LinkContext, ParamMap, ParamValue};
use aqm::{build, rng_from_seed, PacketMeta, QueueView, Time};
use proptest::prelude::*;

const NAMES: [&str; 6] = ["ared", "rem", "pi", "avq", "anaqm", "paqm"];

#[derive(Clone, Debug)]
enum Event {
    /// A packet of `size` bytes arrives `gap` ns after the previous event, seeing `qlen` packets.
    Arrive {
        gap: Time,
        size: u32,
        qlen: u32,
        ecn: bool,
    },
    /// The queue empties and the link stays idle for `gap` ns.
    Idle { gap: Time },
    /// The last admitted packet did not fit the buffer.
    Overflow,
    /// A packet leaves after waiting `sojourn` ns.
    Depart { sojourn: Time },
}

fn gap() -> impl Strategy<Value = Time> {
    prop_oneof![
        8 => 0..200_000u64,
        3 => 0..50_000_000u64,
        1 => 0..2_000_000_000u64,
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        10 => (gap(), 0..=65_535u32, 0..=5_000u32, any::<bool>())
            .prop_map(|(gap, size, qlen, ecn)| Event::Arrive { gap, size, qlen, ecn }),
        1 => gap().prop_map(|gap| Event::Idle { gap }),
        1 => Just(Event::Overflow),
        1 => (0..1_000_000_000u64).prop_map(|sojourn| Event::Depart { sojourn }),
    ]
}

fn link() -> impl Strategy<Value = LinkContext> {
    (
        1_000u64..=100_000_000_000,
        300u32..=5_000,
        64u32..=9_000,
        any::<bool>(),
    )
        .prop_map(|(rate_bps, n, mean, bytes)| LinkContext {
            rate_bps,
            buffer: if bytes {
                Buffer::Bytes(n as u64 * mean as u64)
            } else {
                Buffer::Packets(n)
            },
            mean_pkt_bytes: mean,
        })
}

/// Parameter variants besides the defaults: ECN on, and each algorithm's gains pushed hard.
fn variant(name: &str, k: u8) -> ParamMap {
    let mut m = ParamMap::new();
    if k & 1 == 1 {
        m.insert("ecn".into(), ParamValue::Bool(true));
    }
    if k & 2 == 2 {
        let (p, v) = match name {
            "ared" => ("w_q", 1.0),
            "rem" => ("gamma", 10.0),
            "pi" => ("a", 0.1),
            "avq" => ("alpha", 1e4),
            "anaqm" => ("eta", 1e6),
            _ => ("order", 1.0),
        };
        m.insert(p.into(), ParamValue::Num(v));
    }
    m
}

fn check_finite(name: &str, a: &dyn aqm::Aqm) -> Result<(), TestCaseError> {
    let p = a.drop_prob();
    prop_assert!(
        p.is_some_and(|p| (0.0..=1.0).contains(&p)),
        "{name}: drop_prob {p:?}"
    );
    if let Some(avg) = a.avg_queue() {
        prop_assert!(avg.is_finite() && avg >= 0.0, "{name}: avg {avg}");
    }
    for (k, v) in a.stats() {
        prop_assert!(v.is_finite(), "{name}: stat {k} = {v}");
    }
    Ok(())
}

/// Feeds `events` to algorithm `name` built for link `l` and checks the properties after each.
fn run(
    name: &str,
    l: &LinkContext,
    events: &[Event],
    k: u8,
    lazy: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let mut a = build(name, &variant(name, k), l)
        .map_err(|e| TestCaseError::fail(format!("{name} on {l:?}: {e}")))?;
    let mut rng = rng_from_seed(seed);
    let mut now: Time = 0;
    let mut q = QueueView::default();
    for ev in events {
        let gap = match ev {
            Event::Arrive { gap, .. } | Event::Idle { gap } => *gap,
            _ => 0,
        };
        if let Event::Idle { .. } = ev {
            q = QueueView {
                len_pkts: 0,
                len_bytes: 0,
                idle_since: Some(now),
            };
        }
        now += gap;
        // Periodic updates: at their due times, or (a lazy caller) once at `now`.
        let mut guard = 0;
        while let Some(t) = a.next_update() {
            if t > now {
                break;
            }
            let at = if lazy { now } else { t };
            a.update(&q, at);
            let next = a.next_update().unwrap();
            prop_assert!(next > at, "{name}: next update {next} not after {at}");
            guard += 1;
            prop_assert!(guard <= 1_000_000, "{name}: runaway updates");
        }
        match *ev {
            Event::Arrive {
                size, qlen, ecn, ..
            } => {
                if qlen > 0 || q.idle_since.is_none() {
                    q = QueueView {
                        len_pkts: qlen,
                        len_bytes: qlen as u64 * size as u64,
                        idle_since: None,
                    };
                }
                let pkt = PacketMeta {
                    ecn: if ecn {
                        aqm::Ecn::Ect0
                    } else {
                        aqm::Ecn::NotEct
                    },
                    ..PacketMeta::of_size(size)
                };
                a.enqueue(&pkt, &q, now, &mut rng);
            }
            Event::Overflow => a.on_overflow(&PacketMeta::of_size(1500), &q, now),
            Event::Depart { sojourn } => {
                a.dequeue(&PacketMeta::of_size(1500), sojourn, &q, now, &mut rng);
            }
            Event::Idle { .. } => {}
        }
        check_finite(name, a.as_ref())?;
    }
    Ok(())
}

macro_rules! property {
    ($($test:ident => $name:literal),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $test(
                    l in link(),
                    events in prop::collection::vec(event(), 1..200),
                    k in 0u8..4,
                    lazy in any::<bool>(),
                    seed in any::<u64>(),
                ) {
                    run($name, &l, &events, k, lazy, seed)?;
                }
            )*
        }
    };
}

property! {
    ared_keeps_p_in_0_1_and_state_finite => "ared",
    rem_keeps_p_in_0_1_and_state_finite => "rem",
    pi_keeps_p_in_0_1_and_state_finite => "pi",
    avq_keeps_p_in_0_1_and_state_finite => "avq",
    anaqm_keeps_p_in_0_1_and_state_finite => "anaqm",
    paqm_keeps_p_in_0_1_and_state_finite => "paqm",
}

#[test]
fn every_baseline_is_registered() {
    for name in NAMES {
        assert!(aqm::find(name).is_some(), "{name} is not in the registry");
    }
}
