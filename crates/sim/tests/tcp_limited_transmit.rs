//! Limited transmit (RFC 3042) on a scripted loss with a small window, worked by hand.
//!
//! One finite flow of 20 segments, initial window 3, idle path. The bottleneck drops the first
//! data segment (0). Segments 1 and 2 arrive and give two duplicate ACKs. RFC 3042 s. 1: with a
//! window of 3 a single loss cannot produce the three duplicate ACKs of fast retransmit.
//! - Without limited transmit a NewReno sender sends nothing more: the retransmission timer (1 s
//!   before the first RTT sample, RFC 6298 s. 2.1) fires and segment 0 is sent again after a
//!   timeout. A SACK sender (`sack`, `cubic`) counts the segments in flight against its window
//!   (RFC 6675 s. 5 step (3); Linux's `tcp_packets_in_flight`, ns-3's `BytesInFlight`): each
//!   SACKed segment lets a new one out, so it behaves as with limited transmit, whatever the
//!   setting.
//! - With it, each duplicate ACK releases one new segment (3, then 4: FlightSize 4 and 5 <= cwnd
//!   3 + 2); segment 3 gives the third duplicate ACK and fast retransmit repairs the loss with no
//!   timeout. ssthresh = max(FlightSize / 2, 2) with FlightSize 3, without the two limited-
//!   transmit segments (RFC 5681 s. 3.2 step 2).

mod common;

use common::{idle_dumbbell, DropArrivals};
use sim::config::TcpVariant;
use sim::topo::default_tcp;
use sim::Sim;

const MS: u64 = 1_000_000;

struct Outcome {
    timeouts: u64,
    fast_retransmits: u64,
    limited: u64,
    ssthresh: f64,
    fct_s: f64,
}

fn run(variant: TcpVariant, limited_transmit: bool) -> Outcome {
    let mut tcp = default_tcp();
    tcp.variant = variant;
    tcp.init_cwnd = 3.0;
    tcp.limited_transmit = limited_transmit;
    let mut cfg = idle_dumbbell(1, tcp, 5_000 * MS).config();
    cfg.flows[0].size_bytes = Some(20 * 1460);
    let mut sim = Sim::new(&cfg).unwrap();
    sim.replace_aqm(
        0,
        Box::new(DropArrivals {
            drop: vec![1],
            n: 0,
        }),
    );
    let res = sim.run().unwrap();
    let f = &res.summary.flows[0];
    let s = &sim.flows[0].tcp().expect("a TCP flow").sender;
    Outcome {
        timeouts: f.timeouts,
        fast_retransmits: f.fast_retransmits,
        limited: s.stats.limited_transmits,
        ssthresh: s.ssthresh,
        fct_s: f.completion_s.expect("finished"),
    }
}

#[test]
fn without_limited_transmit_a_window_of_three_times_out() {
    let o = run(TcpVariant::NewReno, false);
    assert_eq!((o.timeouts, o.fast_retransmits, o.limited), (1, 0, 0));
    assert!(
        o.fct_s > 1.0,
        "the 1 s initial RTO is in the completion time"
    );
    // SACK senders: the two SACKed segments release 3 and 4 (counted as limited-transmit
    // segments); ssthresh as with limited transmit on (below).
    for (v, ssthresh) in [(TcpVariant::Sack, 2.0), (TcpVariant::Cubic, 2.1)] {
        let o = run(v, false);
        assert_eq!(
            (o.timeouts, o.fast_retransmits, o.limited),
            (0, 1, 2),
            "{v:?}"
        );
        assert!(
            (o.ssthresh - ssthresh).abs() < 1e-9,
            "{v:?}: {}",
            o.ssthresh
        );
        assert!(o.fct_s < 0.5, "{v:?}: no timeout in {} s", o.fct_s);
    }
}

#[test]
fn with_limited_transmit_the_loss_is_repaired_by_fast_retransmit() {
    // Reno congestion control: ssthresh = max(3 / 2, 2) = 2 (with the two limited-transmit
    // segments counted it would be 5 / 2 = 2.5). CUBIC: cwnd x beta = 3 x 0.7 = 2.1.
    for (v, ssthresh) in [
        (TcpVariant::NewReno, 2.0),
        (TcpVariant::Sack, 2.0),
        (TcpVariant::Cubic, 2.1),
    ] {
        let o = run(v, true);
        assert_eq!(
            (o.timeouts, o.fast_retransmits, o.limited),
            (0, 1, 2),
            "{v:?}"
        );
        assert!(
            (o.ssthresh - ssthresh).abs() < 1e-9,
            "{v:?}: {}",
            o.ssthresh
        );
        assert!(o.fct_s < 0.5, "{v:?}: no timeout in {} s", o.fct_s);
    }
}
