//! The three-way handshake (`[tcp] handshake = true`, RFC 9293 s. 3.5): at its start the sender
//! sends a SYN (a header-only packet), the receiver answers with a SYN-ACK, and data starts when
//! the SYN-ACK arrives, one round trip after the start. The third segment of the handshake (the
//! client's ACK of the SYN-ACK) travels on the first data segment, so it costs no packet.
//!
//! A SYN or SYN-ACK that is lost is recovered by the SYN's timer: the initial RTO (1 s, RFC 6298
//! s. 2.1), doubled at each expiry (s. 5.5). After such a loss the first window is one segment
//! (RFC 5681 s. 3.1, RFC 6928 s. 2) and an RTO below 3 s is re-initialised to 3 s when data
//! starts (RFC 6298 s. 5.7). The SYN-ACK gives the first RTT sample unless the SYN was sent more
//! than once without timestamps (Karn's rule, RFC 6298 s. 3).
//!
//! With `[tcp] resolve` the sender first resolves the receiver's link-layer address, as a Linux
//! host on aqmlab's testbed does (its end hosts share one link layer through the forwarder, so
//! the ARP request, RFC 826, crosses the bottleneck queue): the SYN is stamped when TCP hands it
//! down and held until the reply (`tcp_transmit_skb` stamps it, then the neighbour layer queues
//! it: net/core/neighbour.c `__neigh_event_send`), so the SYN's round trip, the first RTT sample,
//! includes the resolution. The request (42 bytes: Ethernet and ARP, unpadded as on a veth)
//! crosses the path's middle links only and the receiver answers at once; a lost request is
//! sent again with each SYN the SYN's timer sends (Linux's neighbour timer also retries every
//! second, `retrans_time`, up to 3 requests: the first retry coincides with the SYN's, later
//! ones are not modelled), and the reply releases every SYN held, in order. Every flow resolves
//! at its own start: there is no address cache across flows between the same hosts.
//!
//! ECN is negotiated on the way (RFC 9768 s. 3.1, Table 2; RFC 3168 s. 6.1.1): the SYN offers
//! AccECN (AE, CWR, ECE) = (1, 1, 1), RFC 3168 ECN (0, 1, 1) or nothing, the receiver's SYN-ACK
//! answers ([`super::accecn::server_answer`]) and the first SYN-ACK sets the sender's mode.
//! Not modelled: RFC 9768 s. 3.1.4.1's fall-back to a non-ECN SYN after the AccECN SYN was
//! sent twice in vain (every retransmitted SYN here carries the same flags).

use super::accecn;
use super::Sender;
use crate::packet::{Kind, Packet, SYN};
use aqm::{Precedence, Time};

/// The RTO once data starts after a SYN or SYN-ACK was lost (RFC 6298 s. 5.7), ns.
pub const RTO_AFTER_SYN_LOSS_NS: Time = 3_000_000_000;

/// An ARP request or reply on the wire: 14 bytes of Ethernet header and 28 of ARP (RFC 826),
/// unpadded (a veth sends no padding).
pub const RESOLVE_SIZE: u32 = 42;

impl Sender {
    /// The flow starts at `now`: a SYN with the handshake on, else the first window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.connecting {
            self.send_syn(now, out);
        } else {
            self.send_allowed(now, out);
            self.after_send_attempt(now);
        }
    }

    fn send_syn(&mut self, now: Time, out: &mut Vec<Packet>) {
        let syn = Packet {
            flow: 0,
            seq: 0,
            size: self.params.syn_size,
            hop: 0,
            kind: Kind::Data,
            // Never ECT (RFC 3168 s. 6.1.1); the TCP-ECN flags offer the sender's feedback.
            flags: SYN | accecn::syn_flags(self.params.ecn_support),
            precedence: Precedence::Out,
            ts: now,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        };
        match &mut self.unresolved {
            None => out.push(syn),
            Some(held) => {
                held.push(syn);
                out.push(Packet {
                    seq: 0,
                    size: RESOLVE_SIZE,
                    kind: Kind::Resolve,
                    flags: 0,
                    ..syn
                });
            }
        }
        self.rto_deadline = Some(now + self.rto);
    }

    /// The receiver's address is resolved: the SYNs held leave now, in order (a later reply is
    /// ignored).
    pub fn on_resolved(&mut self, out: &mut Vec<Packet>) {
        if let Some(held) = self.unresolved.take() {
            out.extend(held);
        }
    }

    /// The SYN's timer expired: send it again with the timeout doubled (RFC 6298 s. 5.5).
    pub(crate) fn syn_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.syn_retries += 1;
        self.stats.syn_retransmits += 1;
        self.rto = (self.rto * 2).min(self.params.max_rto);
        self.send_syn(now, out);
    }

    /// An ACK while connecting, or a SYN-ACK: the first SYN-ACK opens the connection and
    /// releases the first window; anything else (a second SYN-ACK, answering a SYN sent again,
    /// that arrives once data flows) is ignored, never taken for a duplicate ACK.
    pub(crate) fn on_synack(&mut self, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        if !self.connecting || ack.flags & SYN == 0 {
            return;
        }
        self.connecting = false;
        self.rto_deadline = None;
        self.snd_wnd = ack.rwnd;
        let syn = accecn::syn_flags(self.params.ecn_support);
        self.set_ecn_mode(accecn::client_mode(syn, ack.flags));
        if self.syn_retries == 0 || self.params.timestamps {
            self.rtt_sample(now.saturating_sub(ack.ts) as f64);
        }
        if self.syn_retries > 0 {
            self.cwnd = 1.0;
            if self.rto < RTO_AFTER_SYN_LOSS_NS {
                self.rto = RTO_AFTER_SYN_LOSS_NS.min(self.params.max_rto);
            }
        }
        // tcp_init_transfer: the window first, then tcp_init_congestion_control.
        // srtt_ns() is 0 when the SYN-ACK gave no sample.
        let srtt = self.srtt_ns();
        self.cc.on_connected(self.cwnd, srtt, now);
        self.send_allowed(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpVariant;
    use crate::tcp::tests::{ack, cfg};
    use crate::tcp::Receiver;

    const MS: Time = 1_000_000;

    fn connecting() -> Sender {
        let mut c = cfg(TcpVariant::NewReno);
        c.handshake = true;
        Sender::new(&c, None, None)
    }

    fn synack(ts: Time) -> Packet {
        let mut a = ack(0, ts);
        a.flags = SYN;
        a
    }

    #[test]
    fn the_first_window_waits_for_the_syn_ack() {
        let mut s = connecting();
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].flags, out[0].size, out[0].kind),
            (SYN, 40, Kind::Data)
        );
        assert_eq!(
            s.rto_deadline,
            Some(1_000 * MS),
            "RFC 6298 s. 2.1: initial RTO 1 s"
        );
        // A plain ACK while connecting changes nothing.
        out.clear();
        s.on_ack(&ack(0, 0), 10 * MS, &mut out);
        assert!(out.is_empty() && s.connecting);
        // The SYN-ACK at 50 ms: the first RTT sample (SRTT 50, RTTVAR 25, RTO 150 ms, held at
        // the 200 ms minimum) and IW 10 segments.
        s.on_ack(&synack(0), 50 * MS, &mut out);
        assert!(!s.connecting);
        assert_eq!(s.stats.rtt_n, 1);
        assert_eq!(s.rto, 200 * MS);
        assert_eq!(out.len(), 10);
        assert!(out
            .iter()
            .enumerate()
            .all(|(i, p)| p.seq == i as u32 && p.flags & SYN == 0));
        // A second SYN-ACK (the SYN was answered twice) is ignored: with segment 0 outstanding
        // its cumulative ACK of 0 would otherwise count as a duplicate ACK.
        out.clear();
        for _ in 0..3 {
            s.on_ack(&synack(0), 60 * MS, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!((s.stats.rtt_n, s.dupacks, s.in_recovery), (1, 0, false));
    }

    /// BBR after the handshake (`bbr_init`, net/ipv4/tcp_bbr.c): a SYN-ACK 50 ms after the SYN
    /// gives min RTT 50 ms and `bbr_init_pacing_rate_from_rtt` paces the first window at
    /// high_gain x 10 segments / 50 ms less 1 % (`bbr_rate_bytes_per_sec`): v1 739/256 x 200 x
    /// 0.99 = 571.6 segments/s, one every 1.750 ms; v3 (startup gain 2.77) 548.5, 1.823 ms.
    /// One segment leaves at once (no GSO), the next a gap later, not the window in a burst.
    #[test]
    fn bbr_paces_its_first_window_over_the_syns_round_trip() {
        for (name, gain) in [("bbr", 739.0 / 256.0), ("bbr3", 2.77)] {
            let mut c = cfg(TcpVariant::NewReno);
            c.handshake = true;
            c.cc = Some(name.into());
            let mut s = Sender::new(&c, None, None);
            let mut out = Vec::new();
            s.start(0, &mut out);
            out.clear();
            s.on_ack(&synack(0), 50 * MS, &mut out);
            let rate = gain * 10.0 / 0.050 * 0.99;
            let got = s.pacing_rate().expect("paced");
            assert!((got - rate).abs() < 1e-9 * rate, "{name}: {got} vs {rate}");
            assert_eq!(out.len(), 1, "{name}");
            let gap = s.pacer.next_send - 50 * MS;
            assert!(
                gap.abs_diff((1e9 / rate).round() as Time) <= 1,
                "{name}: {gap}"
            );
            let min_rtt = match s.cc.as_any() {
                Some(a) if name == "bbr" => {
                    a.downcast_ref::<crate::tcp::cc::Bbr>().unwrap().min_rtt
                }
                Some(a) => a.downcast_ref::<crate::tcp::cc::Bbr3>().unwrap().min_rtt,
                None => None,
            };
            assert_eq!(min_rtt, Some(50 * MS), "{name}");
        }
        // A SYN sent again without timestamps gives no sample (Karn): the 1 ms default stays,
        // high_gain x 1 segment / 1 ms, and no min RTT.
        let mut c = cfg(TcpVariant::NewReno);
        (c.handshake, c.cc) = (true, Some("bbr".into()));
        let mut s = Sender::new(&c, None, None);
        let mut out = Vec::new();
        s.start(0, &mut out);
        s.on_timeout(1_000 * MS, &mut out);
        s.on_ack(&synack(1_000 * MS), 1_050 * MS, &mut out);
        let b =
            s.cc.as_any()
                .unwrap()
                .downcast_ref::<crate::tcp::cc::Bbr>()
                .unwrap();
        assert_eq!(b.min_rtt, None);
        let rate = 739.0 / 256.0 * 10.0 / 0.001 * 0.99;
        assert!((s.pacing_rate().unwrap() - rate).abs() < 1e-9 * rate);
    }

    #[test]
    fn a_lost_syn_is_sent_again_with_the_timer_doubled() {
        let mut s = connecting();
        let mut out = Vec::new();
        s.start(0, &mut out);
        // RFC 6298 s. 5.5: backoff. Expiries at 1 s and 1 + 2 = 3 s; the next at 3 + 4 = 7 s.
        s.on_timeout(1_000 * MS, &mut out);
        assert_eq!(s.rto_deadline, Some(3_000 * MS));
        s.on_timeout(3_000 * MS, &mut out);
        assert_eq!(s.rto_deadline, Some(7_000 * MS));
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|p| p.flags == SYN));
        assert_eq!((s.stats.syn_retransmits, s.stats.timeouts), (2, 0));
        // The SYN-ACK echoes the third SYN: no sample (Karn); one segment (RFC 5681 s. 3.1);
        // the RTO, 4 s after two backoffs, is not below 3 s so it stays (RFC 6298 s. 5.7).
        out.clear();
        s.on_ack(&synack(3_000 * MS), 3_050 * MS, &mut out);
        assert_eq!(s.stats.rtt_n, 0);
        assert_eq!(s.cwnd, 1.0);
        assert_eq!(out.len(), 1);
        assert_eq!(s.rto, 4_000 * MS);
    }

    #[test]
    fn after_one_syn_loss_the_rto_is_three_seconds_and_the_window_one_segment() {
        let mut s = connecting();
        let mut out = Vec::new();
        s.start(0, &mut out);
        s.on_timeout(1_000 * MS, &mut out);
        out.clear();
        // RTO 2 s < 3 s: re-initialised to 3 s when data starts (RFC 6298 s. 5.7).
        s.on_ack(&synack(1_000 * MS), 1_050 * MS, &mut out);
        assert_eq!(s.rto, 3_000 * MS);
        assert_eq!((s.cwnd, out.len()), (1.0, 1));
        assert_eq!(s.rto_deadline, Some(1_050 * MS + 3_000 * MS));
    }

    #[test]
    fn the_receiver_answers_every_syn_with_a_syn_ack() {
        let mut r = Receiver::new(&cfg(TcpVariant::NewReno));
        let mut syn = ack(0, 7);
        (syn.kind, syn.flags) = (Kind::Data, SYN);
        for _ in 0..2 {
            let a = r.on_data(&syn, 100, true).expect("SYN-ACK");
            assert_eq!(
                (a.kind, a.flags, a.seq, a.ts, a.size),
                (Kind::Ack, SYN, 0, 7, 40)
            );
        }
        assert_eq!(
            (r.rcv_nxt, r.stats.acks_sent, r.stats.delivered_total),
            (0, 0, 0)
        );
    }
}
