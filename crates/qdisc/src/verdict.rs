//! What an AQM's verdict does to a packet the queue keeps: the ECN mark (RFC 3168 s. 5: the
//! router sets CE instead of dropping an ECN-capable packet) and the measurement window's mark
//! and throttle counts, written once for the simulator's `Link` and the forwarder's `Path`.
//!
//! The AQM decides mark or drop itself (`aqm::congestion_signal`: a mark only for an ECN-capable
//! packet when its marking is on); these functions carry the decision out on the caller's packet
//! through [`aqm::fq_codel::FqPacket::set_ce`] and count it. Drops are counted by
//! [`WindowStats::drop`] and the book; they never reach these functions.

use crate::window::Ticket;
use crate::WindowStats;
use aqm::fq_codel::FqPacket;
use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// An enqueue verdict on a packet the AQM let in: `Mark` sets CE and counts a window mark,
/// `Throttle` counts a window throttle (ModRED, seed 004), `Admit` does nothing. `in_window`: the
/// arrival is inside the measurement window. A `Drop` must not reach here (debug-checked).
#[inline]
pub fn apply_enqueue<P: FqPacket>(v: Verdict, pkt: &mut P, in_window: bool, win: &mut WindowStats) {
    debug_assert!(
        v != Verdict::Drop,
        "a dropped packet has no enqueue verdict to apply"
    );
    match v {
        Verdict::Mark => {
            pkt.set_ce();
            win.marked += u64::from(in_window);
        }
        Verdict::Throttle => win.throttled += u64::from(in_window),
        Verdict::Admit | Verdict::Drop => {}
    }
}

/// A dequeue verdict on a packet that leaves the queue to be sent: `Mark` sets CE and counts a
/// window mark placed by the packet's arrival (`ticket`); anything else leaves it as it is. A
/// head `Drop` is the caller's to count (it removes the packet).
#[inline]
pub fn apply_dequeue<P: FqPacket>(v: Verdict, pkt: &mut P, ticket: Ticket, win: &mut WindowStats) {
    if v == Verdict::Mark {
        pkt.set_ce();
        win.marked += u64::from(ticket.in_window());
    }
}

/// The AQM's dequeue verdict on the head packet `pkt` (`meta` is what the AQM sees of it) after
/// `sojourn` ns in the queue `view` at `now`: `true` when it is to be sent (CE set and the mark
/// counted if the AQM marked it, [`apply_dequeue`]), `false` when the AQM drops it at the head
/// (the caller counts the drop by `ticket` and takes the next packet). `None`: no AQM, sent.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn head<P: FqPacket>(
    aqm: Option<&mut (dyn Aqm + 'static)>,
    pkt: &mut P,
    meta: &PacketMeta,
    sojourn: Time,
    view: &QueueView,
    now: Time,
    rng: &mut AqmRng,
    ticket: Ticket,
    win: &mut WindowStats,
) -> bool {
    let v = match aqm {
        Some(a) => a.dequeue(meta, sojourn, view, now, rng),
        None => Verdict::Admit,
    };
    if v == Verdict::Drop {
        return false;
    }
    apply_dequeue(v, pkt, ticket, win);
    true
}

/// FQ-CoDel marked the packet it hands out (CE already set by FQ-CoDel itself): counts the window
/// mark by the packet's arrival.
#[inline]
pub fn count_fq_mark(marked: bool, ticket: Ticket, win: &mut WindowStats) {
    win.marked += u64::from(marked && ticket.in_window());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::WindowBook;

    /// A packet with the two things these functions touch.
    #[derive(Default)]
    struct P {
        ecn: bool,
        ce: bool,
    }
    impl FqPacket for P {
        fn flow_id(&self) -> u32 {
            0
        }
        fn size_bytes(&self) -> u32 {
            1500
        }
        fn ecn(&self) -> aqm::Ecn {
            if self.ecn {
                aqm::Ecn::Ect0
            } else {
                aqm::Ecn::NotEct
            }
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
    }

    #[test]
    fn enqueue_mark_sets_ce_and_counts_only_inside_the_window() {
        let mut w = WindowStats::default();
        let mut p = P {
            ecn: true,
            ce: false,
        };
        apply_enqueue(Verdict::Mark, &mut p, false, &mut w);
        assert!(p.ce, "CE is set whether or not the window counts it");
        assert_eq!(w.marked, 0);
        let mut q = P {
            ecn: true,
            ce: false,
        };
        apply_enqueue(Verdict::Mark, &mut q, true, &mut w);
        assert!(q.ce);
        assert_eq!(w.marked, 1);
    }

    #[test]
    fn admit_and_throttle_leave_the_packet_unmarked() {
        let mut w = WindowStats::default();
        let mut p = P::default();
        apply_enqueue(Verdict::Admit, &mut p, true, &mut w);
        apply_enqueue(Verdict::Throttle, &mut p, true, &mut w);
        apply_enqueue(Verdict::Throttle, &mut p, false, &mut w);
        assert!(!p.ce);
        assert_eq!((w.marked, w.throttled), (0, 1));
    }

    #[test]
    fn dequeue_marks_are_placed_by_arrival() {
        let mut w = WindowStats::default();
        let mut book = WindowBook::default();
        let before = book.arrive(false);
        let inside = book.arrive(true);
        let mut p = P {
            ecn: true,
            ce: false,
        };
        apply_dequeue(Verdict::Mark, &mut p, before, &mut w);
        assert!(p.ce);
        assert_eq!(w.marked, 0, "an arrival before the window is not counted");
        let mut q = P {
            ecn: true,
            ce: false,
        };
        apply_dequeue(Verdict::Admit, &mut q, inside, &mut w);
        assert!(!q.ce);
        apply_dequeue(Verdict::Mark, &mut q, inside, &mut w);
        assert_eq!(w.marked, 1);
        count_fq_mark(true, inside, &mut w);
        count_fq_mark(false, inside, &mut w);
        count_fq_mark(true, before, &mut w);
        assert_eq!(w.marked, 2);
    }

    /// One head decision on `p` after a 50 ms sojourn at `now_ms`, 100 packets queued, the
    /// packet's arrival inside the window.
    fn at(
        a: Option<&mut (dyn Aqm + 'static)>,
        p: &mut P,
        meta: &PacketMeta,
        now_ms: u64,
        rng: &mut AqmRng,
        w: &mut WindowStats,
    ) -> bool {
        let view = QueueView {
            len_pkts: 100,
            len_bytes: 150_000,
            idle_since: None,
        };
        let ticket = WindowBook::default().arrive(true);
        head(
            a,
            p,
            meta,
            50_000_000,
            &view,
            now_ms * 1_000_000,
            rng,
            ticket,
            w,
        )
    }

    /// CoDel (RFC 8289 s. 5.5): a sojourn above target for a whole interval starts dropping at
    /// the head; with ECN on, an ECN-capable head packet is marked and sent instead.
    #[test]
    fn head_drops_or_marks_as_codel_says_and_sends_without_an_aqm() {
        use aqm::params::{Buffer, ParamValue};
        use aqm::{LinkContext, ParamMap};
        let ctx = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(1000),
            mean_pkt_bytes: 1500,
        };
        for ecn in [false, true] {
            let mut params = ParamMap::new();
            params.insert("ecn".into(), ParamValue::Bool(ecn));
            let mut codel = aqm::build("codel", &params, &ctx).expect("codel");
            let mut rng = aqm::rng_from_seed(1);
            let mut w = WindowStats::default();
            let meta = PacketMeta {
                ecn: aqm::Ecn::Ect0,
                ..PacketMeta::of_size(1500)
            };
            let mut p = P {
                ecn: true,
                ce: false,
            };
            let a = Some(codel.as_mut());
            assert!(at(a, &mut p, &meta, 0, &mut rng, &mut w));
            assert!(!p.ce, "above target, but not yet for an interval");
            let a = Some(codel.as_mut());
            let sent = at(a, &mut p, &meta, 200, &mut rng, &mut w);
            assert_eq!(sent, ecn, "dropped without ECN, sent marked with it");
            assert_eq!((p.ce, w.marked), (ecn, u64::from(ecn)));
        }
        let mut rng = aqm::rng_from_seed(1);
        let mut w = WindowStats::default();
        let mut p = P::default();
        let meta = PacketMeta::of_size(1500);
        assert!(at(None, &mut p, &meta, 0, &mut rng, &mut w));
        assert!(!p.ce);
    }
}
