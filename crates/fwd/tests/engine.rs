//! The engine fed with malformed, odd and valid frames: malformed ones are dropped and counted,
//! non-IPv4 ones forwarded unchanged, nothing panics, and frames are conserved
//! (received = sent + dropped + in the system), whatever the bytes.

use fwd::config::Config;
use fwd::engine::{Engine, Side};
use fwd::frame;
use proptest::prelude::*;

fn engine(aqm: &str) -> Engine {
    let cfg = format!(
        r#"{{"left":"a","right":"b","sample_interval_ns":1000000,"warmup_ns":2000000,
        "forward":{{"name":"bottleneck","rate_bps":10000000,"buffer_pkts":40,"mean_pkt_bytes":1000,
                    "aqm":{{"name":"{aqm}"}},"default_delay_ns":1000000}},
        "reverse":{{"name":"reverse","rate_bps":10000000,"buffer_pkts":20,"mean_pkt_bytes":100,
                    "aqm":{{"name":"droptail"}}}}}}"#
    );
    Config::from_json(&cfg).unwrap().engine(0).unwrap()
}

fn udp_frame(len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[12] = 0x08;
    b[14] = 0x45;
    b[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    b[23] = 17;
    let c = frame::ipv4_checksum(&b[14..34]);
    b[24..26].copy_from_slice(&c.to_be_bytes());
    b
}

fn conserved(e: &Engine) -> bool {
    let (rx, tx, dropped, inside) = e.conservation();
    rx == tx + dropped + inside
}

#[test]
fn malformed_frames_are_dropped_and_counted_odd_ones_forwarded_unchanged() {
    let mut e = engine("red");
    let good = udp_frame(100);
    let mut arp = good.clone();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let mut ihl_bad = good.clone();
    ihl_bad[14] = 0x43;
    let mut too_long = good.clone();
    too_long[16..18].copy_from_slice(&1000u16.to_be_bytes());
    for (i, f) in [
        &good[..],
        &good[..5],
        &arp[..],
        &ihl_bad[..],
        &too_long[..],
        &[][..],
    ]
    .iter()
    .enumerate()
    {
        e.ingress(Side::Left, f, i as u64);
    }
    let (mut r, mut l) = (Vec::new(), Vec::new());
    e.advance(1_000_000_000, &mut r, &mut l);
    assert_eq!(r.len(), 2, "the UDP frame and the ARP frame pass");
    assert_eq!(r[1].buf, arp, "non-IPv4 forwarded byte for byte");
    let m = &e.odd.dropped_malformed;
    assert_eq!(m.get("truncated_ethernet"), Some(&2));
    assert_eq!(m.get("bad_ipv4_header"), Some(&1));
    assert_eq!(m.get("bad_ipv4_length"), Some(&1));
    assert_eq!(e.odd.forwarded_non_ipv4, 1);
    assert!(conserved(&e));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn any_bytes_any_times_conserve_frames(
        frames in proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 0..120), any::<bool>(), 0u64..5_000_000), 0..60),
        aqm in prop_oneof![Just("red"), Just("codel"), Just("pie"), Just("modred"), Just("fq_codel")],
    ) {
        let mut e = engine(aqm);
        let (mut r, mut l) = (Vec::new(), Vec::new());
        let mut t = 0;
        for (mut bytes, left, dt) in frames {
            if bytes.len() > 40 && dt % 2 == 0 {
                // Half of the long ones become valid-looking IPv4 so they reach the AQM.
                let v = udp_frame(bytes.len());
                bytes[..34].copy_from_slice(&v[..34]);
            }
            t += dt;
            e.ingress(if left { Side::Left } else { Side::Right }, &bytes, t);
            e.advance(t, &mut r, &mut l);
            prop_assert!(conserved(&e));
        }
        e.advance(t + 10_000_000_000, &mut r, &mut l);
        prop_assert!(conserved(&e));
        prop_assert_eq!(e.fwd.in_system() + e.rev.in_system(), 0);
        // The window's counters (issue 19): 0 <= loss_runs <= dropped <= arrived, and
        // loss_runs >= 1 exactly when something was dropped.
        for s in [e.fwd.summary(t + 10_000_000_000), e.rev.summary(t + 10_000_000_000)] {
            let d = s.dropped_aqm + s.dropped_overflow;
            prop_assert!(s.loss_runs <= d && d <= s.arrived, "{} {} {}", s.loss_runs, d, s.arrived);
            prop_assert_eq!(s.loss_runs >= 1, d > 0);
        }
    }
}
