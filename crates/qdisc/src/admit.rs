//! The order of the AQM calls on an arriving packet, written once for the simulator's `Link` and
//! the forwarder's `Path`: the AQM's enqueue verdict first (an early drop ends there), then the
//! buffer (a packet that does not fit is an overflow drop, and the AQM hears of it through
//! `on_overflow`, as RED's `count` reset needs: Floyd & Jacobson 1993 s. 11). DropTail is no AQM.
//!
//! One fate per packet: a packet the AQM would have marked (or throttled) that the full buffer
//! then drops is an overflow drop and nothing else. Its verdict is not returned, so no engine can
//! count a window mark for it or set CE on it: a window mark is a packet that leaves carrying CE
//! (docs/metrics.md). The AQM's own counters (`aqm::count_signal`, like Linux's `prob_mark`)
//! still record what it decided. Until this rule the simulator counted such a mark and the
//! forwarder did not (docs/simulator.md).

use crate::buffer;
use aqm::params::Buffer;
use aqm::{Aqm, AqmRng, PacketMeta, QueueView, Time, Verdict};

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The AQM dropped it (an early drop).
    AqmDrop,
    /// The AQM let it in (whatever its verdict: see the module doc) but the buffer is full.
    Overflow,
    /// It joins the queue with this verdict (`Admit`, `Mark` or `Throttle`).
    Admitted(Verdict),
}

/// Asks `aqm` (`None`: DropTail) about `pkt` arriving at `now` (the caller's clock) to the queue
/// `view`, then checks `buffer` for its `size` bytes against the queue in `view`.
#[inline]
pub fn admit(
    mut aqm: Option<&mut (dyn Aqm + 'static)>,
    pkt: &PacketMeta,
    view: &QueueView,
    now: Time,
    rng: &mut AqmRng,
    buffer: Buffer,
    size: u32,
) -> Admission {
    let v = match aqm.as_deref_mut() {
        Some(a) => a.enqueue(pkt, view, now, rng),
        None => Verdict::Admit,
    };
    if v == Verdict::Drop {
        return Admission::AqmDrop;
    }
    if !buffer::fits(buffer, view.len_pkts, view.len_bytes, size) {
        if let Some(a) = aqm {
            a.on_overflow(pkt, view, now);
        }
        return Admission::Overflow;
    }
    Admission::Admitted(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::params::ParamValue;
    use aqm::{LinkContext, ParamMap};

    fn view(len_pkts: u32) -> QueueView {
        QueueView {
            len_pkts,
            len_bytes: len_pkts as u64 * 1000,
            idle_since: None,
        }
    }

    #[test]
    fn droptail_admits_until_the_buffer_is_full() {
        let mut rng = aqm::rng_from_seed(1);
        let p = PacketMeta::of_size(1000);
        let b = Buffer::Packets(3);
        assert_eq!(
            admit(None, &p, &view(2), 0, &mut rng, b, 1000),
            Admission::Admitted(Verdict::Admit)
        );
        assert_eq!(
            admit(None, &p, &view(3), 0, &mut rng, b, 1000),
            Admission::Overflow
        );
    }

    #[test]
    fn a_mark_the_full_buffer_overrides_is_an_overflow_drop_only() {
        // RED with ECN, min_th 1, max_th 10, max_p 1, w_q 1: a queue of 9 gives
        // p_b = max_p (9 - 1) / (10 - 1) = 0.89 (Floyd & Jacobson 1993 s. 11, gentle off), so
        // ECT(0) arrivals are mostly marked (RFC 3168 s. 5). With room they are admitted with
        // Mark; at a full buffer of 9 the same decision ends as a plain overflow.
        let ctx = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(100),
            mean_pkt_bytes: 1000,
        };
        let mut params = ParamMap::new();
        for (k, v) in [
            ("min_th", 1.0),
            ("max_th", 10.0),
            ("max_p", 1.0),
            ("w_q", 1.0),
        ] {
            params.insert(k.into(), ParamValue::Num(v));
        }
        params.insert("ecn".into(), ParamValue::Bool(true));
        let p = PacketMeta {
            ecn: aqm::Ecn::Ect0,
            ..PacketMeta::of_size(1000)
        };
        let (mut marked, mut overflow) = (0, 0);
        for (room, buf) in [(true, Buffer::Packets(100)), (false, Buffer::Packets(9))] {
            let mut red = aqm::build("red", &params, &ctx).expect("red");
            let mut rng = aqm::rng_from_seed(7);
            for i in 0..200 {
                match admit(Some(red.as_mut()), &p, &view(9), i, &mut rng, buf, 1000) {
                    Admission::Admitted(Verdict::Mark) => marked += u32::from(room),
                    Admission::Admitted(v) => panic!("{v:?} at 0.89"),
                    Admission::Overflow => overflow += u32::from(!room),
                    Admission::AqmDrop => panic!("ECT packets are marked, not dropped"),
                }
            }
        }
        // With room: the marks RED decided (0.89 of 200 and the count's spacing). Full: every
        // arrival is an overflow, none carries a verdict to count.
        assert!(marked > 150, "{marked}");
        assert_eq!(overflow, 200);
    }

    #[test]
    fn an_early_drop_comes_before_the_buffer_and_a_full_buffer_is_an_overflow() {
        // RED with min_th 1, max_th 2 and w_q 1: the average is the instantaneous queue, so a
        // queue of 5 is above max_th and RED drops every arrival (RFC 2309's forced drop).
        let ctx = LinkContext {
            rate_bps: 10_000_000,
            buffer: Buffer::Packets(5),
            mean_pkt_bytes: 1000,
        };
        let mut params = ParamMap::new();
        for (k, v) in [("min_th", 1.0), ("max_th", 2.0), ("w_q", 1.0)] {
            params.insert(k.into(), ParamValue::Num(v));
        }
        let mut red = aqm::build("red", &params, &ctx).expect("red");
        let mut rng = aqm::rng_from_seed(1);
        let p = PacketMeta::of_size(1000);
        let b = Buffer::Packets(5);
        let got = admit(Some(red.as_mut()), &p, &view(5), 0, &mut rng, b, 1000);
        assert_eq!(
            got,
            Admission::AqmDrop,
            "RED decides before the buffer is looked at"
        );
        // An empty queue: RED admits and the buffer has room.
        let got = admit(Some(red.as_mut()), &p, &view(0), 1, &mut rng, b, 1000);
        assert_eq!(got, Admission::Admitted(Verdict::Admit));
    }
}
