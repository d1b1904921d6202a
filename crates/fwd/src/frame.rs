//! Ethernet / IPv4 / TCP / UDP frame parsing and the two header rewrites the forwarder applies:
//! ECN CE marking (RFC 3168 section 5) and the TCP receive-window clamp of ModRED's Throttle.
//!
//! The parser never panics and never reads past the slice: anything it cannot read as a complete
//! IPv4 header is classified (non-IPv4, fragment, malformed with a reason) so the caller can
//! forward it unchanged or drop it and count it. Checksums are fixed incrementally (RFC 1624,
//! equation 3), so a rewrite costs a few additions whatever the packet size.

/// Ethernet header length (no VLAN tag), bytes.
pub const ETH_HLEN: usize = 14;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// The ECN field's Congestion Experienced codepoint (RFC 3168 section 5).
pub const ECN_CE: u8 = 0b11;

/// Why a frame is not a well-formed IPv4 packet the forwarder can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unparsed {
    /// Shorter than an Ethernet header.
    TruncatedEthernet,
    /// Not IPv4 (ARP, IPv6, VLAN-tagged, ...): forwarded unchanged.
    NotIpv4,
    /// IPv4 header cut short, or IHL < 5, or version != 4.
    BadIpv4Header,
    /// IPv4 total length smaller than its header or larger than the frame.
    BadIpv4Length,
}

impl Unparsed {
    /// A short name, for counters.
    pub fn label(&self) -> &'static str {
        match self {
            Unparsed::TruncatedEthernet => "truncated_ethernet",
            Unparsed::NotIpv4 => "not_ipv4",
            Unparsed::BadIpv4Header => "bad_ipv4_header",
            Unparsed::BadIpv4Length => "bad_ipv4_length",
        }
    }
}

/// The transport header, when the packet carries a complete one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP with its header's offset in the frame and length.
    Tcp {
        /// Offset of the TCP header in the frame.
        off: usize,
        /// TCP header length (data offset * 4), bytes.
        hlen: usize,
        /// Source port.
        sport: u16,
        /// Destination port.
        dport: u16,
        /// Flags byte (CWR ECE URG ACK PSH RST SYN FIN).
        flags: u8,
        /// Advertised window field (unscaled).
        window: u16,
    },
    /// UDP.
    Udp {
        /// Source port.
        sport: u16,
        /// Destination port.
        dport: u16,
    },
    /// Another protocol, a non-first fragment, or a transport header cut short or malformed.
    None,
}

/// A parsed IPv4 packet inside an Ethernet frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// IPv4 header length, bytes (20 without options).
    pub ihl: usize,
    /// Total length from the header, bytes.
    pub total_len: usize,
    /// Protocol number.
    pub proto: u8,
    /// Source address (host order).
    pub src: u32,
    /// Destination address (host order).
    pub dst: u32,
    /// The ECN field (two low bits of the TOS byte).
    pub ecn: u8,
    /// More-fragments set or a non-zero fragment offset.
    pub fragment: bool,
    /// The transport header.
    pub l4: Transport,
}

impl Ipv4 {
    /// ECN-capable transport: ECT(0) or ECT(1) (RFC 3168 section 5).
    pub fn ecn_capable(&self) -> bool {
        self.ecn == 0b01 || self.ecn == 0b10
    }

    /// Header has options (IHL > 5).
    pub fn has_options(&self) -> bool {
        self.ihl > 20
    }
}

fn be16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(off)?, *b.get(off + 1)?]))
}

fn be32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *b.get(off)?,
        *b.get(off + 1)?,
        *b.get(off + 2)?,
        *b.get(off + 3)?,
    ]))
}

/// Parses an Ethernet frame carrying IPv4. Bytes after the IPv4 total length (Ethernet padding)
/// are ignored.
pub fn parse(frame: &[u8]) -> Result<Ipv4, Unparsed> {
    let ethertype = be16(frame, 12).ok_or(Unparsed::TruncatedEthernet)?;
    if ethertype != ETHERTYPE_IPV4 {
        return Err(Unparsed::NotIpv4);
    }
    let ip = &frame[ETH_HLEN..];
    let vihl = *ip.first().ok_or(Unparsed::BadIpv4Header)?;
    let ihl = (vihl & 0x0f) as usize * 4;
    if vihl >> 4 != 4 || ihl < 20 || ip.len() < ihl {
        return Err(Unparsed::BadIpv4Header);
    }
    let total_len = be16(ip, 2).ok_or(Unparsed::BadIpv4Header)? as usize;
    if total_len < ihl || total_len > ip.len() {
        return Err(Unparsed::BadIpv4Length);
    }
    let frag = be16(ip, 6).ok_or(Unparsed::BadIpv4Header)?;
    let more_fragments = frag & 0x2000 != 0;
    let frag_off = frag & 0x1fff;
    let proto = ip[9];
    let src = be32(ip, 12).ok_or(Unparsed::BadIpv4Header)?;
    let dst = be32(ip, 16).ok_or(Unparsed::BadIpv4Header)?;
    let payload = &ip[ihl..total_len];
    let l4 = if frag_off != 0 {
        Transport::None
    } else {
        transport(proto, payload, ETH_HLEN + ihl)
    };
    Ok(Ipv4 {
        ihl,
        total_len,
        proto,
        src,
        dst,
        ecn: ip[1] & 0b11,
        fragment: more_fragments || frag_off != 0,
        l4,
    })
}

fn transport(proto: u8, p: &[u8], off: usize) -> Transport {
    match proto {
        PROTO_TCP => {
            let Some(&doff) = p.get(12) else {
                return Transport::None;
            };
            let hlen = (doff >> 4) as usize * 4;
            if hlen < 20 || p.len() < hlen {
                return Transport::None;
            }
            Transport::Tcp {
                off,
                hlen,
                sport: u16::from_be_bytes([p[0], p[1]]),
                dport: u16::from_be_bytes([p[2], p[3]]),
                flags: p[13],
                window: u16::from_be_bytes([p[14], p[15]]),
            }
        }
        PROTO_UDP if p.len() >= 8 => Transport::Udp {
            sport: u16::from_be_bytes([p[0], p[1]]),
            dport: u16::from_be_bytes([p[2], p[3]]),
        },
        _ => Transport::None,
    }
}

/// TCP flag SYN.
pub const TCP_SYN: u8 = 0x02;
/// TCP flag ACK.
pub const TCP_ACK: u8 = 0x10;
/// TCP flag ECE (RFC 3168 section 6.1).
pub const TCP_ECE: u8 = 0x40;

/// The window-scale shift a SYN announces (RFC 7323 section 2.2), clamped to 14; `None` when the
/// segment has no (well-formed) Window Scale option.
pub fn syn_window_scale(frame: &[u8], off: usize, hlen: usize) -> Option<u8> {
    let opts = frame.get(off + 20..off + hlen)?;
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return None,
            1 => i += 1,
            kind => {
                let len = *opts.get(i + 1)? as usize;
                if len < 2 {
                    return None;
                }
                if kind == 3 && len == 3 {
                    return Some((*opts.get(i + 2)?).min(14));
                }
                i += len;
            }
        }
    }
    None
}

/// One's-complement sum of 16-bit big-endian words (odd trailing byte padded with zero).
pub fn ones_sum(data: &[u8], mut acc: u32) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    acc
}

/// Folds a 32-bit one's-complement accumulator to 16 bits.
pub fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The IPv4 header checksum computed from scratch (RFC 791), with the checksum field taken as 0.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut acc = ones_sum(&hdr[..10], 0);
    acc = ones_sum(&hdr[12..], acc);
    !fold(acc)
}

/// The TCP checksum computed from scratch over the pseudo-header and `segment` (RFC 793 section
/// 3.1), with the checksum field taken as 0.
pub fn tcp_checksum(src: u32, dst: u32, segment: &[u8]) -> u16 {
    let mut acc = ones_sum(&src.to_be_bytes(), 0);
    acc = ones_sum(&dst.to_be_bytes(), acc);
    acc += PROTO_TCP as u32 + segment.len() as u32;
    acc = ones_sum(&segment[..16], acc);
    acc = ones_sum(&segment[18..], acc);
    !fold(acc)
}

/// The checksum after one 16-bit word changes from `old` to `new` (RFC 1624 equation 3:
/// HC' = ~(~HC + ~m + m')).
pub fn checksum_update(hc: u16, old: u16, new: u16) -> u16 {
    !fold(!hc as u32 + !old as u32 + new as u32)
}

fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

fn get16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// Sets CE on an ECN-capable packet and fixes the IPv4 header checksum incrementally. Returns
/// false (frame untouched) when the packet is not ECN-capable; a CE packet stays CE.
pub fn mark_ce(frame: &mut [u8], p: &Ipv4) -> bool {
    if p.ecn == ECN_CE {
        return true;
    }
    if !p.ecn_capable() {
        return false;
    }
    // The ECN field lives in the first 16-bit word of the header (version/IHL, TOS).
    let old = get16(frame, ETH_HLEN);
    let new = old | ECN_CE as u16;
    put16(frame, ETH_HLEN, new);
    let hc = get16(frame, ETH_HLEN + 10);
    put16(frame, ETH_HLEN + 10, checksum_update(hc, old, new));
    true
}

/// Lowers the advertised window of a TCP segment to `max_bytes`, rounded up to a whole unit of the
/// window scale so the window still holds `max_bytes` (never raises it, never a zero window),
/// given the window-scale shift of the segment's sender; fixes the TCP checksum incrementally.
/// Returns true when the field changed.
pub fn clamp_window(frame: &mut [u8], p: &Ipv4, max_bytes: u32, wscale: u8) -> bool {
    let Transport::Tcp { off, window, .. } = p.l4 else {
        return false;
    };
    let unit = 1u64 << wscale.min(14);
    let field = (max_bytes as u64).div_ceil(unit).clamp(1, 0xffff) as u16;
    if field >= window {
        return false;
    }
    put16(frame, off + 14, field);
    let hc = get16(frame, off + 16);
    put16(frame, off + 16, checksum_update(hc, window, field));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame: Ethernet + IPv4 (with `opts` option bytes) + TCP with `tcp_opts` + `payload`,
    /// checksums computed from scratch.
    fn tcp_frame(tos: u8, opts: &[u8], tcp_opts: &[u8], payload: &[u8], window: u16) -> Vec<u8> {
        let ihl = 20 + opts.len();
        let thl = 20 + tcp_opts.len();
        let total = ihl + thl + payload.len();
        let mut f = vec![0u8; ETH_HLEN];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let mut ip = vec![0x40 | (ihl / 4) as u8, tos];
        ip.extend_from_slice(&(total as u16).to_be_bytes());
        ip.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, PROTO_TCP, 0, 0]);
        ip.extend_from_slice(&[10, 0, 0, 1, 10, 0, 1, 2]);
        ip.extend_from_slice(opts);
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let mut t = vec![0x9c, 0x40, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 2];
        t.push(((thl / 4) as u8) << 4);
        t.push(TCP_ACK);
        t.extend_from_slice(&window.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0]);
        t.extend_from_slice(tcp_opts);
        t.extend_from_slice(payload);
        let c = tcp_checksum(0x0a00_0001, 0x0a00_0102, &t);
        t[16..18].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&t);
        f
    }

    fn ip_ok(f: &[u8], ihl: usize) -> bool {
        let hdr = &f[ETH_HLEN..ETH_HLEN + ihl];
        get16(hdr, 10) == ipv4_checksum(hdr)
    }

    fn tcp_ok(f: &[u8], p: &Ipv4) -> bool {
        let Transport::Tcp { off, .. } = p.l4 else {
            return false;
        };
        let seg = &f[off..ETH_HLEN + p.total_len];
        get16(seg, 16) == tcp_checksum(p.src, p.dst, seg)
    }

    #[test]
    fn rfc1071_example_sum() {
        // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum (one's complement) to ddf2.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(ones_sum(&d, 0)), 0xddf2);
    }

    #[test]
    fn parses_tcp_over_ipv4_with_options_and_padding() {
        let mut f = tcp_frame(0x02, &[1, 1, 1, 0], &[1, 3, 3, 7], b"hello", 1000);
        f.extend_from_slice(&[0xee; 6]); // Ethernet padding after the IP packet
        let p = parse(&f).unwrap();
        assert_eq!((p.ihl, p.proto, p.ecn), (24, PROTO_TCP, 0b10));
        assert!(p.has_options() && p.ecn_capable() && !p.fragment);
        let Transport::Tcp {
            sport,
            dport,
            hlen,
            window,
            ..
        } = p.l4
        else {
            panic!("{p:?}")
        };
        assert_eq!((sport, dport, hlen, window), (40000, 5201, 24, 1000));
        assert!(ip_ok(&f, 24) && tcp_ok(&f, &p));
    }

    #[test]
    fn ce_mark_matches_checksum_from_scratch_for_every_tos() {
        for tos in 0..=255u8 {
            for opts in [&[][..], &[1, 1, 1, 0][..]] {
                let mut f = tcp_frame(tos, opts, &[], b"x", 100);
                let p = parse(&f).unwrap();
                let marked = mark_ce(&mut f, &p);
                assert_eq!(marked, tos & 3 != 0, "tos {tos:#x}");
                let q = parse(&f).unwrap();
                assert_eq!(q.ecn, if tos & 3 != 0 { ECN_CE } else { 0 });
                // DSCP untouched.
                assert_eq!(f[ETH_HLEN + 1] >> 2, tos >> 2);
                assert!(ip_ok(&f, p.ihl), "tos {tos:#x}");
            }
        }
    }

    /// An L4S packet (ECT(1), `01`) marked CE (`11`, RFC 3168 s. 5) keeps its DSCP, and its
    /// checksum updated by RFC 1624 equals the one computed from scratch.
    #[test]
    fn ect1_becomes_ce_with_the_checksum_fixed() {
        let dscp_af41 = 34u8 << 2;
        let mut f = tcp_frame(dscp_af41 | 0b01, &[], &[], b"l4s", 100);
        let p = parse(&f).unwrap();
        assert_eq!(aqm::Ecn::from_bits(p.ecn), aqm::Ecn::Ect1);
        let before = get16(&f, ETH_HLEN + 10);
        assert!(mark_ce(&mut f, &p));
        let q = parse(&f).unwrap();
        assert_eq!(aqm::Ecn::from_bits(q.ecn), aqm::Ecn::Ce);
        assert_eq!(f[ETH_HLEN + 1], dscp_af41 | 0b11);
        let hdr = &f[ETH_HLEN..ETH_HLEN + p.ihl];
        assert_eq!(get16(&f, ETH_HLEN + 10), ipv4_checksum(hdr));
        assert_ne!(get16(&f, ETH_HLEN + 10), before);
    }

    #[test]
    fn window_clamp_matches_checksum_from_scratch() {
        for (window, max, ws, want) in [
            (65535u16, 1460u32, 0u8, Some(1460u16)),
            (5000, 1460, 7, Some(12)), // 1460 / 128 = 11.4: 12 units hold one MSS
            (3, 1460, 7, None),        // already below: never raised
            (400, 10, 7, Some(1)),     // never a zero window
            (0x8000, 0x10000, 14, Some(4)),
        ] {
            for payload in [&b""[..], b"odd", b"even"] {
                let mut f = tcp_frame(0, &[], &[1, 1, 1, 1], payload, window);
                let p = parse(&f).unwrap();
                let changed = clamp_window(&mut f, &p, max, ws);
                let q = parse(&f).unwrap();
                let Transport::Tcp { window: w, .. } = q.l4 else {
                    panic!()
                };
                assert_eq!(changed, want.is_some());
                assert_eq!(w, want.unwrap_or(window));
                assert!(tcp_ok(&f, &q), "window {window} max {max} ws {ws}");
            }
        }
    }

    #[test]
    fn window_scale_read_from_syn_options() {
        // MSS, SACK-permitted, timestamps, NOP, window scale 7 (Linux's SYN layout).
        let opts = [
            2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        let f = tcp_frame(0, &[], &opts, b"", 64240);
        let p = parse(&f).unwrap();
        let Transport::Tcp { off, hlen, .. } = p.l4 else {
            panic!()
        };
        assert_eq!(syn_window_scale(&f, off, hlen), Some(7));
        let f = tcp_frame(0, &[], &[2, 4, 5, 0xb4], b"", 100);
        assert_eq!(syn_window_scale(&f, ETH_HLEN + 20, 24), None);
        // A zero-length option must not loop forever.
        let f = tcp_frame(0, &[], &[9, 0, 1, 1], b"", 100);
        assert_eq!(syn_window_scale(&f, ETH_HLEN + 20, 24), None);
    }

    #[test]
    fn malformed_frames_are_classified() {
        let good = tcp_frame(0, &[], &[], b"abc", 10);
        assert_eq!(parse(&good[..10]), Err(Unparsed::TruncatedEthernet));
        let mut arp = good.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(parse(&arp), Err(Unparsed::NotIpv4));
        let mut v6 = good.clone();
        v6[ETH_HLEN] = 0x60;
        assert_eq!(parse(&v6), Err(Unparsed::BadIpv4Header));
        let mut ihl4 = good.clone();
        ihl4[ETH_HLEN] = 0x44;
        assert_eq!(parse(&ihl4), Err(Unparsed::BadIpv4Header));
        assert_eq!(parse(&good[..ETH_HLEN + 30]), Err(Unparsed::BadIpv4Length));
        // A non-first fragment has no transport header.
        let mut frag = good.clone();
        frag[ETH_HLEN + 6] = 0x00;
        frag[ETH_HLEN + 7] = 0x10;
        let p = parse(&frag).unwrap();
        assert!(p.fragment && p.l4 == Transport::None);
        // A TCP header cut short.
        let mut short = good[..ETH_HLEN + 30].to_vec();
        short[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&30u16.to_be_bytes());
        assert_eq!(parse(&short).unwrap().l4, Transport::None);
    }
}
