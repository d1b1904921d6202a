//! The long-term estimator's arithmetic against hand-worked numbers from `tcp_bbr.c`'s rules.

use super::*;

/// An input at `ms` with the connection's totals, `losses` marked by this ACK, a round start.
fn at(ms: u64, delivered: u64, lost: u64, losses: u32) -> LtInput {
    LtInput {
        losses,
        app_limited: false,
        round_start: true,
        probe_bw: true,
        delivered,
        lost,
        delivered_time: ms * MS,
    }
}

/// Starts sampling at 1000 ms (delivered 1000, lost 100), then 3 more round starts without
/// loss (4 rounds counted: the first ACK's own round start included).
fn started() -> LtBw {
    let mut lt = LtBw::default();
    assert_eq!(lt.sample(&at(1000, 1000, 100, 1)), LtEvent::None);
    assert!(lt.is_sampling);
    assert_eq!(lt.rtt_cnt, 1);
    for k in 1..3 {
        lt.sample(&at(1000 + 40 * k, 1000 + 40 * k, 100, 0));
    }
    assert_eq!(lt.rtt_cnt, 3);
    lt
}

#[test]
fn no_sampling_before_a_loss() {
    let mut lt = LtBw::default();
    for k in 0..20 {
        assert_eq!(
            lt.sample(&at(1000 + 40 * k, 1000 + 40 * k, 0, 0)),
            LtEvent::None
        );
    }
    assert!(!lt.is_sampling);
    assert_eq!(lt.rtt_cnt, 0);
}

#[test]
fn an_interval_ends_at_4_rounds_with_20_percent_lost() {
    // Round 4 at 1120 ms: 120 delivered. 23 lost: 23 x 256 = 5888 < 50 x 120 = 6000, not
    // lossy enough; 24: 6144 >= 6000, the interval ends at 120 / 120 ms = 1000 segments/s.
    let mut lt = started();
    assert_eq!(lt.sample(&at(1120, 1120, 123, 1)), LtEvent::None);
    assert_eq!(
        (lt.bw, lt.rtt_cnt),
        (0.0, 4),
        "23 of 120 lost: the interval goes on"
    );
    let mut lt = started();
    assert_eq!(lt.sample(&at(1120, 1120, 124, 1)), LtEvent::None);
    assert!((lt.bw - 1e-6).abs() < 1e-15, "{}", lt.bw);
    // A new interval from here.
    assert_eq!(
        (lt.rtt_cnt, lt.last_delivered, lt.last_lost),
        (0, 1120, 124)
    );
    assert_eq!(lt.last_stamp_ms, 1120);
    assert!(!lt.use_bw);
    // Enough loss but no loss on this ACK: the interval waits for one.
    let mut lt = started();
    lt.sample(&at(1120, 1120, 150, 0));
    assert_eq!(lt.bw, 0.0);
}

#[test]
fn fewer_than_4_rounds_is_too_short() {
    let mut lt = LtBw::default();
    lt.sample(&at(1000, 1000, 100, 1));
    // Rounds 2 and 3 with 50 % lost: still too short.
    lt.sample(&at(1040, 1040, 120, 1));
    lt.sample(&at(1080, 1080, 140, 1));
    assert_eq!((lt.rtt_cnt, lt.bw), (3, 0.0));
}

/// Two intervals: the first of 1000 segments/s from 1000 ms, the second of `d2` segments over
/// 4 rounds of 40 ms from 1120 ms, each 50 % lost.
fn two_intervals(d2: u64) -> (LtBw, LtEvent) {
    let mut lt = started();
    lt.sample(&at(1120, 1120, 160, 1));
    for k in 1..4 {
        lt.sample(&at(1120 + 40 * k, 1120 + d2 * k / 4, 160, 0));
    }
    let e = lt.sample(&at(1280, 1120 + d2, 160 + d2, 1));
    (lt, e)
}

#[test]
fn two_consistent_intervals_set_the_long_term_rate_to_their_mean() {
    // 176 over 160 ms = 1100 segments/s: differs from 1000 by 1/10 <= 1/8: policed, lt_bw the
    // mean, 1050/s.
    let (lt, e) = two_intervals(176);
    assert_eq!(e, LtEvent::Policed);
    assert!(lt.use_bw);
    assert!((lt.bw - 1.05e-6).abs() < 1e-15, "{}", lt.bw);
    assert_eq!(lt.rtt_cnt, 0);
    // 184 over 160 ms = 1150/s: 3/20 > 1/8 and 150 segments/s is far above 4 kbit/s: not
    // consistent; the second interval's rate is kept for the next comparison.
    let (lt, e) = two_intervals(184);
    assert_eq!(e, LtEvent::None);
    assert!(!lt.use_bw);
    assert!((lt.bw - 1.15e-6).abs() < 1e-15, "{}", lt.bw);
    assert_eq!((lt.rtt_cnt, lt.last_delivered), (0, 1304));
}

#[test]
fn rates_within_4_kbit_per_s_are_consistent() {
    // Intervals of 10 s at 1 segment/s, then 1.3 or 1.4 segments/s: 30 % and 40 % apart (over
    // 1/8), but 0.3 x 1460 x 0.99 = 434 bytes/s <= 500 (4 kbit/s); 0.4: 578 > 500.
    for (d2, policed) in [(13, true), (14, false)] {
        let mut lt = LtBw::default();
        lt.sample(&at(0, 100, 100, 1));
        for k in 1..4 {
            lt.sample(&at(2000 * k, 100 + 2 * k, 100, 0));
        }
        lt.sample(&at(10_000, 110, 105, 1));
        assert!((lt.bw - 1e-9).abs() < 1e-18, "{}", lt.bw);
        for k in 1..4 {
            lt.sample(&at(10_000 + 2000 * k, 110 + 3 * k, 105, 0));
        }
        let e = lt.sample(&at(20_000, 110 + d2, 115, 1));
        assert_eq!(e == LtEvent::Policed, policed, "{d2}");
    }
}

#[test]
fn an_app_limited_sample_or_a_17th_round_resets_sampling() {
    let mut lt = started();
    lt.bw = 1e-6;
    lt.sample(&LtInput {
        app_limited: true,
        ..at(1100, 1100, 100, 0)
    });
    assert_eq!((lt.is_sampling, lt.bw, lt.rtt_cnt), (false, 0.0, 0));
    assert_eq!(lt.last_delivered, 1100);
    // 17 rounds without a lossy end: reset at the 17th.
    let mut lt = started();
    for k in 3..16 {
        lt.sample(&at(1000 + 40 * k, 1000 + 40 * k, 100, 0));
    }
    assert_eq!((lt.is_sampling, lt.rtt_cnt), (true, 16));
    lt.sample(&at(1640, 1640, 100, 0));
    assert_eq!((lt.is_sampling, lt.rtt_cnt), (false, 0));
}

#[test]
fn the_long_term_rate_lasts_48_rounds_of_probe_bw() {
    let (mut lt, _) = two_intervals(176);
    // Rounds outside PROBE_BW, or ACKs without a round start, do not count.
    lt.sample(&LtInput {
        probe_bw: false,
        ..at(1300, 1300, 400, 1)
    });
    lt.sample(&LtInput {
        round_start: false,
        ..at(1300, 1300, 400, 1)
    });
    assert_eq!(lt.rtt_cnt, 0);
    for k in 1..48 {
        assert_eq!(lt.sample(&at(1300 + 40 * k, 1300, 400, 0)), LtEvent::None);
    }
    assert!(lt.use_bw);
    assert_eq!(lt.sample(&at(3300, 3300, 400, 0)), LtEvent::Expired);
    assert_eq!((lt.use_bw, lt.bw, lt.is_sampling), (false, 0.0, false));
}
