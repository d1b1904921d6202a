//! ModRED's Throttle applied to real TCP (seed 004; SPEC "AQM catalog"): while the bottleneck's
//! latest verdict on a flow is Throttle, the receive window advertised in that flow's ACKs (the
//! reverse direction) is lowered to one MSS, never to zero. The simulator does the same
//! (crates/sim network.rs: `throttle_node`). The window field is scaled by the shift the ACK's
//! sender announced in its SYN (RFC 7323 section 2.2), which this table learns from the SYNs it
//! sees in either direction.

use crate::frame::{self, Ipv4, Transport, TCP_SYN};
use aqm::Verdict;
use std::collections::{HashMap, HashSet};

/// A TCP connection end pair: (source, destination, source port, destination port).
pub type FlowKey = (u32, u32, u16, u16);

/// Window scales and throttled flows.
#[derive(Debug, Default)]
pub struct Throttle {
    wscale: HashMap<FlowKey, u8>,
    active: HashSet<FlowKey>,
    /// The clamped window, bytes (one MSS).
    pub window_bytes: u32,
    /// ACK windows rewritten.
    pub rewritten: u64,
}

impl Throttle {
    /// A table that clamps to `window_bytes`.
    pub fn new(window_bytes: u32) -> Self {
        Throttle {
            window_bytes,
            ..Default::default()
        }
    }

    /// Learns the window scale from a SYN (either direction).
    pub fn observe(&mut self, buf: &[u8], ip: &Ipv4) {
        if let Transport::Tcp {
            off,
            hlen,
            sport,
            dport,
            flags,
            ..
        } = ip.l4
        {
            if flags & TCP_SYN != 0 {
                let ws = frame::syn_window_scale(buf, off, hlen).unwrap_or(0);
                self.wscale.insert((ip.src, ip.dst, sport, dport), ws);
            }
        }
    }

    /// The bottleneck's verdict on a data packet of flow `k`.
    pub fn verdict(&mut self, k: FlowKey, v: Verdict) {
        if v == Verdict::Throttle {
            self.active.insert(k);
        } else if !self.active.is_empty() {
            self.active.remove(&k);
        }
    }

    /// Clamps the window of a reverse-direction segment whose flow is throttled. Returns true
    /// when the segment was rewritten.
    pub fn rewrite(&mut self, buf: &mut [u8], ip: &Ipv4) -> bool {
        if self.active.is_empty() {
            return false;
        }
        let Transport::Tcp { sport, dport, .. } = ip.l4 else {
            return false;
        };
        // The ACK travels receiver -> sender: its data flow is (dst, src, dport, sport).
        if !self.active.contains(&(ip.dst, ip.src, dport, sport)) {
            return false;
        }
        let ws = self
            .wscale
            .get(&(ip.src, ip.dst, sport, dport))
            .copied()
            .unwrap_or(0);
        let changed = frame::clamp_window(buf, ip, self.window_bytes, ws);
        self.rewritten += u64::from(changed);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{parse, tcp_checksum, ETH_HLEN};

    /// A TCP segment from `src:sport` to `dst:dport` with `flags`, `window` and options.
    fn seg(
        src: u32,
        dst: u32,
        sport: u16,
        dport: u16,
        flags: u8,
        window: u16,
        opts: &[u8],
    ) -> Vec<u8> {
        let thl = 20 + opts.len();
        let mut f = vec![0u8; ETH_HLEN];
        f[12] = 0x08;
        let mut ip = vec![0x45, 0];
        ip.extend_from_slice(&((20 + thl) as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        ip.extend_from_slice(&src.to_be_bytes());
        ip.extend_from_slice(&dst.to_be_bytes());
        let c = frame::ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let mut t = Vec::new();
        t.extend_from_slice(&sport.to_be_bytes());
        t.extend_from_slice(&dport.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, ((thl / 4) as u8) << 4, flags]);
        t.extend_from_slice(&window.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0]);
        t.extend_from_slice(opts);
        let c = tcp_checksum(src, dst, &t);
        t[16..18].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&t);
        f
    }

    fn window_and_checksum_ok(f: &[u8]) -> (u16, bool) {
        let p = parse(f).unwrap();
        let Transport::Tcp { off, window, .. } = p.l4 else {
            panic!()
        };
        let s = &f[off..];
        (
            window,
            u16::from_be_bytes([s[16], s[17]]) == tcp_checksum(p.src, p.dst, s),
        )
    }

    #[test]
    fn throttled_flows_acks_get_one_mss_scaled_by_the_receivers_syn() {
        let (snd, rcv) = (0x0a00_0001, 0x0a00_0002);
        let mut t = Throttle::new(1460);
        // The receiver's SYN-ACK announces window scale 7.
        let synack = seg(rcv, snd, 5201, 40000, TCP_SYN | 0x10, 65160, &[1, 3, 3, 7]);
        t.observe(&synack, &parse(&synack).unwrap());
        let mut ack = seg(rcv, snd, 5201, 40000, 0x10, 3000, &[]);
        let p = parse(&ack).unwrap();
        assert!(!t.rewrite(&mut ack, &p), "not throttled yet");
        t.verdict((snd, rcv, 40000, 5201), Verdict::Throttle);
        assert!(t.rewrite(&mut ack, &p));
        // 1460 bytes need 12 units of 128 bytes (11 would hold only 1408).
        assert_eq!(window_and_checksum_ok(&ack), (12, true));
        // Another flow's ACK is untouched; an admit ends the throttle.
        let mut other = seg(rcv, snd, 5201, 40001, 0x10, 3000, &[]);
        let po = parse(&other).unwrap();
        assert!(!t.rewrite(&mut other, &po));
        t.verdict((snd, rcv, 40000, 5201), Verdict::Admit);
        let mut ack2 = seg(rcv, snd, 5201, 40000, 0x10, 3000, &[]);
        let p2 = parse(&ack2).unwrap();
        assert!(!t.rewrite(&mut ack2, &p2));
    }
}
