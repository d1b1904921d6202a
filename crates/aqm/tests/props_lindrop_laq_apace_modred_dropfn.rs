//! Property tests for the seed papers' algorithms (lindrop, laq, apace, modred, dropfn): under any
//! sequence of arrivals (sizes, queue lengths, time gaps, idle periods, precedences, ECN flags),
//! departures and overflows, with any valid parameters, each keeps drop_prob() in [0, 1], its
//! reported state finite, its verdicts within what it may say, and never panics.

use aqm::params::{Buffer, LinkContext, ParamMap, ParamValue};
use aqm::{build, rng_from_seed, Aqm, PacketMeta, Precedence, QueueView, Time, Verdict};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Arrive {
        size: u32,
        len: u32,
        gap_ns: u64,
        idle: bool,
        is_in: bool,
        ecn: bool,
    },
    Depart {
        size: u32,
        is_in: bool,
        sojourn_ns: u64,
    },
    Overflow {
        is_in: bool,
    },
}

fn queue_len() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0u32..2000, 1 => any::<u32>()]
}

fn gap_ns() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..2_000_000, 1 => 0u64..1_000_000_000]
}

fn op() -> impl Strategy<Value = Op> {
    let arrive = (
        1u32..65_536,
        queue_len(),
        gap_ns(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(size, len, gap_ns, idle, is_in, ecn)| Op::Arrive {
            size,
            len,
            gap_ns,
            idle,
            is_in,
            ecn,
        });
    let depart =
        (1u32..65_536, any::<bool>(), 0u64..1_000_000_000).prop_map(|(size, is_in, sojourn_ns)| {
            Op::Depart {
                size,
                is_in,
                sojourn_ns,
            }
        });
    let overflow = any::<bool>().prop_map(|is_in| Op::Overflow { is_in });
    prop_oneof![6 => arrive, 2 => depart, 1 => overflow]
}

fn num(x: f64) -> ParamValue {
    ParamValue::Num(x)
}

/// A valid configuration of one of the five algorithms, and whether it may mark.
fn config() -> impl Strategy<Value = (&'static str, ParamMap, bool)> {
    let lindrop = (
        any::<bool>(),
        0.0001f64..=1.0,
        0.5f64..0.999,
        1.001f64..2.0,
        1.0f64..100.0,
    )
        .prop_map(|(ecn, w_q, n_pu, n_pd, dr_min)| {
            let m = [
                ("ecn", ParamValue::Bool(ecn)),
                ("w_q", num(w_q)),
                ("n_pu", num(n_pu)),
                ("n_pd", num(n_pd)),
                ("dr_min", num(dr_min)),
            ];
            ("lindrop", to_map(&m), ecn)
        });
    let laq = (
        any::<bool>(),
        0.0005f64..0.05,
        1u32..20,
        0.0f64..0.99,
        0.001f64..2.0,
        0.0f64..=100.0,
    )
        .prop_map(|(ecn, interval, m, w_m, gamma, q_ref)| {
            let m = [
                ("ecn", ParamValue::Bool(ecn)),
                ("interval", num(interval)),
                ("m", num(m as f64)),
                ("w_m", num(w_m)),
                ("gamma", num(gamma)),
                ("q_ref", num(q_ref)),
            ];
            ("laq", to_map(&m), ecn)
        });
    let apace = (
        any::<bool>(),
        1u32..20,
        1u32..40,
        0.0001f64..1.99,
        0.0f64..0.99,
        0.01f64..=1.0,
    )
        .prop_map(|(ecn, m, n0, mu0, alpha, max_p)| {
            let m = [
                ("ecn", ParamValue::Bool(ecn)),
                ("m", num(m as f64)),
                ("n0", num(n0 as f64)),
                ("mu0", num(mu0)),
                ("alpha", num(alpha)),
                ("max_p", num(max_p)),
            ];
            ("apace", to_map(&m), ecn)
        });
    let modred = (any::<bool>(), 0.0001f64..=1.0).prop_map(|(red, w_q)| {
        let mode = if red { "red" } else { "always" };
        let m = [
            ("throttle", ParamValue::Str(mode.into())),
            ("w_q", num(w_q)),
        ];
        ("modred", to_map(&m), false)
    });
    let dropfn = (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(0.0f64..=1.0, 1..50),
    )
        .prop_map(|(ecn, system, table)| {
            let count = if system { "system" } else { "waiting" };
            let m = [
                ("ecn", ParamValue::Bool(ecn)),
                ("queue_count", ParamValue::Str(count.into())),
                ("table", ParamValue::List(table)),
            ];
            ("dropfn", to_map(&m), ecn)
        });
    prop_oneof![lindrop, laq, apace, modred, dropfn]
}

fn to_map(pairs: &[(&str, ParamValue)]) -> ParamMap {
    aqm::testing::param_map(pairs)
}

fn meta(size: u32, is_in: bool, ecn: bool) -> PacketMeta {
    PacketMeta {
        flow: 0,
        size_bytes: size,
        ecn: if ecn {
            aqm::Ecn::Ect0
        } else {
            aqm::Ecn::NotEct
        },
        precedence: if is_in {
            Precedence::In
        } else {
            Precedence::Out
        },
    }
}

fn check_outputs(aqm: &dyn Aqm) -> Result<(), TestCaseError> {
    let name = aqm.name();
    let p = aqm.drop_prob();
    prop_assert!(p.is_some(), "{name} reports no drop_prob");
    let p = p.unwrap();
    prop_assert!((0.0..=1.0).contains(&p), "{name}: drop_prob {p}");
    if let Some(a) = aqm.avg_queue() {
        prop_assert!(a.is_finite(), "{name}: avg_queue {a}");
    }
    for (k, v) in aqm.stats() {
        prop_assert!(v.is_finite(), "{name}: stat {k} = {v}");
    }
    Ok(())
}

/// Runs `ops` through a fresh instance; returns the verdicts of the arrivals.
fn run(
    name: &str,
    params: &ParamMap,
    link: &LinkContext,
    ops: &[Op],
    seed: u64,
    may_mark: bool,
) -> Result<Vec<Verdict>, TestCaseError> {
    let mut aqm =
        build(name, params, link).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
    let mut rng = rng_from_seed(seed);
    let mut now: Time = 0;
    let mut q = QueueView::default();
    let mut verdicts = Vec::new();
    for op in ops {
        match *op {
            Op::Arrive {
                size,
                len,
                gap_ns,
                idle,
                is_in,
                ecn,
            } => {
                let idle_from = now;
                now += gap_ns;
                while let Some(t) = aqm.next_update() {
                    if t > now {
                        break;
                    }
                    aqm.update(&q, t);
                }
                q = if idle {
                    QueueView {
                        len_pkts: 0,
                        len_bytes: 0,
                        idle_since: Some(idle_from),
                    }
                } else {
                    QueueView {
                        len_pkts: len,
                        len_bytes: len as u64 * 1000,
                        idle_since: None,
                    }
                };
                let pkt = meta(size, is_in, ecn);
                let v = aqm.enqueue(&pkt, &q, now, &mut rng);
                match v {
                    Verdict::Mark => prop_assert!(
                        may_mark && ecn,
                        "{name} marked (ecn on: {may_mark}, capable: {ecn})"
                    ),
                    Verdict::Throttle => prop_assert_eq!(name, "modred"),
                    Verdict::Admit | Verdict::Drop => {}
                }
                verdicts.push(v);
            }
            Op::Depart {
                size,
                is_in,
                sojourn_ns,
            } => {
                if aqm.wants_dequeue() {
                    q.len_pkts = q.len_pkts.saturating_sub(1);
                    q.len_bytes = q.len_bytes.saturating_sub(size as u64);
                    let v = aqm.dequeue(&meta(size, is_in, false), sojourn_ns, &q, now, &mut rng);
                    prop_assert_eq!(v, Verdict::Admit, "{} at dequeue", name);
                }
            }
            Op::Overflow { is_in } => aqm.on_overflow(&meta(1000, is_in, false), &q, now),
        }
        check_outputs(aqm.as_ref())?;
    }
    Ok(verdicts)
}

fn link() -> impl Strategy<Value = LinkContext> {
    let buffer = prop_oneof![
        (101u32..5000).prop_map(Buffer::Packets),
        (200_000u64..5_000_000).prop_map(Buffer::Bytes)
    ];
    (1_000_000u64..10_000_000_000, buffer, 64u32..1500)
        .prop_map(|(rate_bps, buffer, mean_pkt_bytes)| LinkContext {
            rate_bps,
            buffer,
            mean_pkt_bytes,
        })
        .prop_filter("buffer of at least 101 packets", |l| {
            l.buffer_pkts() > 100.0
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn probabilities_stay_in_range_and_state_finite(
        (name, params, may_mark) in config(),
        link in link(),
        ops in prop::collection::vec(op(), 1..300),
        seed in any::<u64>(),
    ) {
        run(name, &params, &link, &ops, seed, may_mark)?;
    }

    #[test]
    fn defaults_survive_any_sequence(
        ops in prop::collection::vec(op(), 1..300),
        seed in any::<u64>(),
    ) {
        let link = LinkContext::default();
        for name in ["lindrop", "laq", "apace", "modred", "dropfn"] {
            run(name, &ParamMap::new(), &link, &ops, seed, false)?;
        }
    }

    #[test]
    fn lindrop_verdicts_do_not_depend_on_the_seed(
        ops in prop::collection::vec(op(), 1..300),
        seeds in (any::<u64>(), any::<u64>()),
    ) {
        let link = LinkContext::default();
        let params = to_map(&[("dr_init", num(20.0))]);
        let a = run("lindrop", &params, &link, &ops, seeds.0, false)?;
        let b = run("lindrop", &params, &link, &ops, seeds.1, false)?;
        prop_assert_eq!(a, b);
    }
}
