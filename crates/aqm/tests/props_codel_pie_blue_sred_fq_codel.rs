//! Property tests for codel, pie, blue, sred (fq_codel's are in crates/qdisc/tests/props_fq.rs): under any sequence of arrivals (sizes,
//! queue lengths, ECN flags), departures (sojourn times), overflows, idle periods and time gaps,
//! with any valid parameters, each keeps drop_prob() in [0, 1], its counters finite, its verdicts
//! within what it may say, and never panics; parameters of any value are accepted or refused with
//! an error naming one of them.

use aqm::params::{Buffer, LinkContext, ParamMap, ParamValue};
use aqm::{build, find, rng_from_seed, Aqm, PacketMeta, Precedence, QueueView, Time, Verdict};
use proptest::prelude::*;

const NAMES: [&str; 4] = ["codel", "pie", "blue", "sred"];

#[derive(Clone, Debug)]
enum Op {
    Arrive {
        size: u32,
        len: u32,
        gap_ns: u64,
        ecn: bool,
        flow: u32,
    },
    Depart {
        size: u32,
        len: u32,
        sojourn_ns: u64,
        ecn: bool,
    },
    Overflow,
    Idle {
        gap_ns: u64,
    },
}

fn gap_ns() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..2_000_000, 1 => 0u64..2_000_000_000]
}

fn sojourn_ns() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 0u64..50_000_000, 1 => any::<u64>()]
}

fn queue_len() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0u32..1200, 1 => any::<u32>()]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u32..65_536, queue_len(), gap_ns(), any::<bool>(), 0u32..40)
            .prop_map(|(size, len, gap_ns, ecn, flow)| Op::Arrive { size, len, gap_ns, ecn, flow }),
        4 => (1u32..65_536, queue_len(), sojourn_ns(), any::<bool>())
            .prop_map(|(size, len, sojourn_ns, ecn)| Op::Depart { size, len, sojourn_ns, ecn }),
        1 => Just(Op::Overflow),
        1 => gap_ns().prop_map(|gap_ns| Op::Idle { gap_ns }),
    ]
}

fn link() -> impl Strategy<Value = LinkContext> {
    (
        1_000_000u64..10_000_000_000,
        prop_oneof![
            (1u32..5000).prop_map(Buffer::Packets),
            (1500u64..10_000_000).prop_map(Buffer::Bytes)
        ],
        40u32..9000,
    )
        .prop_map(|(rate_bps, buffer, mean_pkt_bytes)| LinkContext {
            rate_bps,
            buffer,
            mean_pkt_bytes,
        })
}

/// Valid non-default parameters for each algorithm (values inside the documented ranges).
fn params(name: &'static str) -> BoxedStrategy<ParamMap> {
    let map = |v: Vec<(&str, ParamValue)>| {
        v.into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<ParamMap>()
    };
    match name {
        "codel" => (
            0.0001f64..0.05,
            1.0f64..20.0,
            64.0f64..9000.0,
            any::<bool>(),
        )
            .prop_map(move |(t, k, mtu, ecn)| {
                map(vec![
                    ("target", ParamValue::Num(t)),
                    ("interval", ParamValue::Num(t * k + 1e-6)),
                    ("mtu", ParamValue::Num(mtu.round())),
                    ("ecn", ParamValue::Bool(ecn)),
                ])
            })
            .boxed(),
        "pie" => (
            0.001f64..0.1,
            0.001f64..0.1,
            0.0f64..2.0,
            0.0f64..20.0,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(move |(t, tu, a, b, dq, cap, der, ecn)| {
                map(vec![
                    ("target", ParamValue::Num(t)),
                    ("t_update", ParamValue::Num(tu)),
                    ("alpha", ParamValue::Num(a)),
                    ("beta", ParamValue::Num(b)),
                    (
                        "estimator",
                        ParamValue::Str(if dq { "dq_rate" } else { "timestamp" }.into()),
                    ),
                    ("cap_drop_adjustment", ParamValue::Bool(cap)),
                    ("derandomize", ParamValue::Bool(der)),
                    ("ecn", ParamValue::Bool(ecn)),
                ])
            })
            .boxed(),
        "blue" => (1e-6f64..1.0, 1e-6f64..1.0, 0.0f64..1.0, any::<bool>())
            .prop_map(move |(d1, d2, f, ecn)| {
                map(vec![
                    ("d1", ParamValue::Num(d1)),
                    ("d2", ParamValue::Num(d2)),
                    ("freeze_time", ParamValue::Num(f)),
                    ("ecn", ParamValue::Bool(ecn)),
                ])
            })
            .boxed(),
        _ => (
            1u32..2000,
            0.0f64..1.0,
            0.001f64..1.0,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(move |(m, pw, pmax, full, ecn)| {
                map(vec![
                    ("zombies", ParamValue::Num(m as f64)),
                    ("p_overwrite", ParamValue::Num(pw)),
                    ("p_max", ParamValue::Num(pmax)),
                    ("full", ParamValue::Bool(full)),
                    ("ecn", ParamValue::Bool(ecn)),
                ])
            })
            .boxed(),
    }
}

/// Runs the periodic updates that fell due by `now`, as a simulator does (at most 100000).
fn due(aqm: &mut dyn Aqm, q: &QueueView, now: Time) {
    for _ in 0..100_000 {
        match aqm.next_update() {
            Some(t) if t <= now => aqm.update(q, t),
            _ => break,
        }
    }
}

/// Runs `ops` against `aqm`, checking the invariants after every step.
fn run(aqm: &mut dyn Aqm, ops: &[Op], seed: u64) -> Result<(), TestCaseError> {
    let mut rng = rng_from_seed(seed);
    let mut now: Time = 0;
    let mut q = QueueView::default();
    for op in ops {
        match *op {
            Op::Arrive {
                size,
                len,
                gap_ns,
                ecn,
                flow,
            } => {
                now = now.saturating_add(gap_ns);
                if q.idle_since.is_none() || len > 0 {
                    q = QueueView {
                        len_pkts: len,
                        len_bytes: len as u64 * size as u64,
                        idle_since: None,
                    };
                }
                due(aqm, &q, now);
                let pkt = PacketMeta {
                    flow,
                    size_bytes: size,
                    ecn: if ecn {
                        aqm::Ecn::Ect0
                    } else {
                        aqm::Ecn::NotEct
                    },
                    precedence: Precedence::Out,
                };
                let v = aqm.enqueue(&pkt, &q, now, &mut rng);
                prop_assert!(
                    matches!(v, Verdict::Admit | Verdict::Drop | Verdict::Mark),
                    "{v:?}"
                );
                prop_assert!(v != Verdict::Mark || ecn, "marked a non-ECN packet");
                if v != Verdict::Drop {
                    q.idle_since = None;
                }
            }
            Op::Depart {
                size,
                len,
                sojourn_ns,
                ecn,
            } => {
                q = QueueView {
                    len_pkts: len,
                    len_bytes: len as u64 * size as u64,
                    idle_since: None,
                };
                due(aqm, &q, now);
                let pkt = PacketMeta {
                    flow: 0,
                    size_bytes: size,
                    ecn: if ecn {
                        aqm::Ecn::Ect0
                    } else {
                        aqm::Ecn::NotEct
                    },
                    precedence: Precedence::Out,
                };
                let v = aqm.dequeue(&pkt, sojourn_ns, &q, now, &mut rng);
                prop_assert!(
                    matches!(v, Verdict::Admit | Verdict::Drop | Verdict::Mark),
                    "{v:?}"
                );
                prop_assert!(
                    v != Verdict::Mark || ecn,
                    "marked a non-ECN packet at dequeue"
                );
            }
            Op::Overflow => {
                let pkt = PacketMeta::of_size(1500);
                aqm.on_overflow(&pkt, &q, now);
            }
            Op::Idle { gap_ns } => {
                q = QueueView {
                    len_pkts: 0,
                    len_bytes: 0,
                    idle_since: Some(now),
                };
                now = now.saturating_add(gap_ns);
                due(aqm, &q, now);
            }
        }
        if let Some(p) = aqm.drop_prob() {
            prop_assert!((0.0..=1.0).contains(&p), "{} drop_prob {p}", aqm.name());
        }
        for (k, v) in aqm.stats() {
            prop_assert!(v.is_finite(), "{} stat {k} = {v}", aqm.name());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn defaults_survive_any_sequence(
        ops in prop::collection::vec(op(), 1..400),
        l in link(),
        seed in any::<u64>(),
    ) {
        for name in NAMES {
            let mut a = build(name, &ParamMap::new(), &l)
                .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
            run(a.as_mut(), &ops, seed)?;
        }
    }

    #[test]
    fn any_valid_parameters_survive_any_sequence(
        ops in prop::collection::vec(op(), 1..300),
        l in link(),
        seed in any::<u64>(),
        (which, m) in (0usize..4).prop_flat_map(|i| (Just(i), params(NAMES[i]))),
    ) {
        let name = NAMES[which];
        let mut a = build(name, &m, &l)
            .map_err(|e| TestCaseError::fail(format!("{name} {m:?}: {e}")))?;
        run(a.as_mut(), &ops, seed)?;
    }

    #[test]
    fn any_parameter_values_are_accepted_or_refused_by_name(
        vals in prop::collection::vec((any::<prop::sample::Index>(), prop_oneof![
            Just(f64::NAN), Just(f64::INFINITY), Just(-1.0), Just(0.0), -1e12f64..1e12, 0.0f64..2.0,
        ], any::<bool>()), 0..6),
        l in link(),
    ) {
        for name in NAMES {
            let spec = find(name).unwrap().params;
            let draws: Vec<_> = vals.iter().map(|(i, x, b)| (i.index(spec.len()), *x, *b)).collect();
            let m = aqm::testing::drawn_params(spec, &draws);
            let r = build(name, &m, &l).map(|_| ());
            if let Err(e) = r {
                prop_assert!(
                    e.param == "buffer" || spec.iter().any(|p| p.name == e.param),
                    "{name}: error names {:?}: {e}", e.param
                );
                prop_assert!(!e.msg.is_empty());
            }
        }
    }
}
