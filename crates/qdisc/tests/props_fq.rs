//! Property tests for the flow-queueing schedulers (`fq_codel` = `fq` + `codel`, `fq_pie`,
//! `fq_cobalt`):
//! under any sequence of arrivals (flows, sizes, ECN flags), departures and time gaps, with any
//! valid parameters, FQ-CoDel conserves packets and bytes and respects its limit; parameters of
//! any value are accepted or refused with an error naming one of them. (Moved from
//! crates/aqm/tests/props_codel_pie_blue_sred_fq_codel.rs when FQ-CoDel became a preset of `fq`.)

use aqm::fq_codel::{FqPacket, FQ_CODEL_PARAMS};
use aqm::params::{LinkContext, ParamMap, ParamValue};
use aqm::rng_from_seed;
use proptest::prelude::*;
use qdisc::sched::build;
use qdisc::sched::fq::{FQ_COBALT_PARAMS, FQ_PIE_PARAMS};
use qdisc::sched::SchedDrop;

fn gap_ns() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..2_000_000, 1 => 0u64..2_000_000_000]
}

proptest! {
    #[test]
    fn any_parameter_values_are_accepted_or_refused_by_name(
        vals in prop::collection::vec((any::<prop::sample::Index>(), prop_oneof![
            Just(f64::NAN), Just(f64::INFINITY), Just(-1.0), Just(0.0), -1e12f64..1e12, 0.0f64..2.0,
        ], any::<bool>()), 0..6),
    ) {
        for (name, spec) in [
            ("fq_codel", FQ_CODEL_PARAMS),
            ("fq_pie", FQ_PIE_PARAMS),
            ("fq_cobalt", FQ_COBALT_PARAMS),
        ] {
            let draws: Vec<_> = vals.iter().map(|(i, x, b)| (i.index(spec.len()), *x, *b)).collect();
            let m = aqm::testing::drawn_params(spec, &draws);
            let r = build::<FqPkt>(name, &m, &LinkContext::default()).unwrap().map(|_| ());
            if let Err(e) = r {
                prop_assert!(
                    spec.iter().any(|p| p.name == e.param),
                    "{name}: error names {:?}: {e}", e.param
                );
                prop_assert!(!e.msg.is_empty());
            }
        }
    }
}

#[derive(Clone, Debug)]
struct FqPkt {
    flow: u32,
    size: u32,
    ect: bool,
    ce: bool,
}

impl FqPacket for FqPkt {
    fn flow_id(&self) -> u32 {
        self.flow
    }
    fn size_bytes(&self) -> u32 {
        self.size
    }
    fn ecn(&self) -> aqm::Ecn {
        if self.ect {
            aqm::Ecn::Ect0
        } else {
            aqm::Ecn::NotEct
        }
    }
    fn set_ce(&mut self) {
        self.ce = true;
    }
}

#[derive(Clone, Debug)]
enum FqOp {
    Enqueue { flow: u32, size: u32, ect: bool },
    Dequeue,
    Wait { gap_ns: u64 },
}

fn fq_op() -> impl Strategy<Value = FqOp> {
    prop_oneof![
        5 => (prop_oneof![3 => 0u32..8, 1 => any::<u32>()], 0u32..9000, any::<bool>())
            .prop_map(|(flow, size, ect)| FqOp::Enqueue { flow, size, ect }),
        4 => Just(FqOp::Dequeue),
        2 => gap_ns().prop_map(|gap_ns| FqOp::Wait { gap_ns }),
    ]
}

fn fq_params() -> impl Strategy<Value = ParamMap> {
    (
        1u32..200,
        1u32..64,
        1u32..4000,
        1u32..100,
        any::<bool>(),
        0u32..1000,
    )
        .prop_map(|(limit, flows, quantum, batch, ecn, seed)| {
            [
                ("limit", ParamValue::Num(limit as f64)),
                ("flows", ParamValue::Num(flows as f64)),
                ("quantum", ParamValue::Num(quantum as f64)),
                ("drop_batch", ParamValue::Num(batch as f64)),
                ("ecn", ParamValue::Bool(ecn)),
                ("hash_seed", ParamValue::Num(seed as f64)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fq_codel_conserves_packets_and_respects_its_limit(
        ops in prop::collection::vec(fq_op(), 1..600),
        m in fq_params(),
    ) {
        let limit = match m.get("limit") { Some(&ParamValue::Num(x)) => x as u32, _ => 10240 };
        let batch = match m.get("drop_batch") { Some(&ParamValue::Num(x)) => x as u64, _ => 64 };
        let ecn_on = !matches!(m.get("ecn"), Some(ParamValue::Bool(false)));
        let mut q = build::<FqPkt>("fq_codel", &m, &LinkContext::default()).unwrap().unwrap();
        let mut rng = rng_from_seed(1);
        let (mut now, mut enq, mut enq_bytes) = (0u64, 0u64, 0u64);
        let (mut out, mut out_bytes, mut dropped, mut dropped_bytes) = (0u64, 0u64, 0u64, 0u64);
        let (mut overlimit, mut codel) = (0u64, 0u64);
        for op in &ops {
            match *op {
                FqOp::Enqueue { flow, size, ect } => {
                    enq += 1;
                    enq_bytes += size as u64;
                    let mut only_overlimit = true;
                    let mut n = 0u64;
                    q.enqueue(FqPkt { flow, size, ect, ce: false }, now, &mut rng, &mut |p, why| {
                        dropped += 1;
                        dropped_bytes += p.size as u64;
                        overlimit += 1;
                        n += 1;
                        only_overlimit &= why == SchedDrop::Overlimit;
                    });
                    prop_assert!(only_overlimit);
                    prop_assert!(n <= batch);
                    prop_assert!(q.len_pkts() <= limit, "{} > {limit}", q.len_pkts());
                }
                FqOp::Dequeue => {
                    let got = q.dequeue(now, &mut rng, &mut |p, why| {
                        dropped += 1;
                        dropped_bytes += p.size as u64;
                        if why == SchedDrop::Aqm { codel += 1 }
                    });
                    match got {
                        Some(p) => {
                            out += 1;
                            out_bytes += p.size as u64;
                            prop_assert!(!p.ce || (p.ect && ecn_on));
                        }
                        None => prop_assert_eq!(q.len_pkts(), 0),
                    }
                }
                FqOp::Wait { gap_ns } => now += gap_ns,
            }
            prop_assert_eq!(enq, out + dropped + q.len_pkts() as u64);
            prop_assert_eq!(enq_bytes, out_bytes + dropped_bytes + q.len_bytes());
            let s = q.stats();
            let stat = |k: &str| s.iter().find(|x| x.0 == k).map(|x| x.1 as u64);
            prop_assert_eq!(
                (stat("overlimit_drops"), stat("codel_drops"), stat("dequeued")),
                (Some(overlimit), Some(codel), Some(out))
            );
        }
        // Draining gives back everything still held.
        let mut on_drop = |p: FqPkt, _| {
            dropped += 1;
            dropped_bytes += p.size as u64;
        };
        while let Some(p) = q.dequeue(now, &mut rng, &mut on_drop) {
            out += 1;
            out_bytes += p.size as u64;
        }
        prop_assert_eq!((q.len_pkts(), q.len_bytes()), (0, 0));
        let s = q.stats();
        let lists = ["new_flows_len", "old_flows_len"].map(|k| s.iter().find(|x| x.0 == k).unwrap().1);
        prop_assert_eq!(lists, [0.0, 0.0]);
        prop_assert_eq!((enq, enq_bytes), (out + dropped, out_bytes + dropped_bytes));
    }
}
