//! Packet traces (`[output] pcap = ["bottleneck"]`): the packets leaving a link as a pcap file
//! that tshark and Wireshark decode. Headers are built with `etherparse` and the file is written
//! with `pcap-file` (nanosecond timestamps, link type RAW: each record is an IPv4 packet).
//!
//! The simulator's packets are segment-level; the tap gives them real headers (docs/scenarios.md,
//! "Packet traces"):
//! - addresses: host node `n` is `10.(n >> 16).(n >> 8).(n & 255) + 1` (the last byte is
//!   `n & 255 + 1` carried into the one before); a flow's data goes from its source host to its
//!   destination, its ACKs back;
//! - ports: the flow with index `f` uses source port `10000 + f % 50000` and destination port
//!   `5001 + f / 50000`, so every flow's (addresses, ports) is distinct;
//! - TCP: sequence numbers in bytes (segment `k` starts at byte `k x mss`; initial sequence number
//!   0, so a data segment's is `k x mss`, a SYN's 0), the ACK number `next x mss`, SACK blocks in
//!   bytes, the ECN bits (ECT(0), ECT(1) or CE in the IP header; ECE, CWR and AccECN's AE in TCP),
//!   the SYN flag of the handshake, a receive window of `rwnd x mss` bytes capped at 65,535 (no
//!   window scaling option: the simulator exchanges none), a timestamps option (RFC 7323; TSval the
//!   packet's send time on a 1 ms clock on data, the departure from this link on ACKs; TSecr the
//!   echoed send time on ACKs);
//! - payload: `mss` zero bytes on a data segment (a header-only SYN carries none); the options
//!   come on top, so a record can be longer than the simulator's packet size. A flow whose
//!   controller changes the segment size (TCP Prague 0.7) is numbered and filled as if every
//!   segment carried `mss` (a simplification: the tap does not see the sender's size history);
//! - UDP (open-loop sources): `size - 28` zero bytes of payload;
//! - checksums: IPv4 header and TCP/UDP over the pseudo-header, correct;
//! - address resolution (`[tcp] resolve`): not written (the link type carries IPv4 only).
//!
//! A link without a tap pays one `Option` test per departure.

use crate::packet::{Kind, Packet, AE, CE, CWR, ECE, ECT, ECT1, SYN};
use aqm::Time;
use etherparse::{IpEcn, IpNumber, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;
use std::time::Duration;

/// What the tap needs to know of each flow.
#[derive(Clone, Debug)]
pub struct FlowAddr {
    /// Source host node index.
    pub src: usize,
    /// Destination host node index.
    pub dst: usize,
    /// Segment payload, bytes (0 for an open-loop flow).
    pub mss: u32,
    /// A TCP flow (else UDP).
    pub tcp: bool,
}

/// The IPv4 address of host node `n`.
pub fn host_ip(n: usize) -> [u8; 4] {
    let v = n as u32 + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Source and destination ports of flow `f`.
pub fn flow_ports(f: u32) -> (u16, u16) {
    ((10_000 + f % 50_000) as u16, (5_001 + f / 50_000) as u16)
}

/// One link's pcap writer.
pub struct PcapTap {
    w: Option<PcapWriter<BufWriter<File>>>,
    flows: Arc<Vec<FlowAddr>>,
    path: String,
    error: Option<String>,
    buf: Vec<u8>,
    zeros: Vec<u8>,
    /// Packets written.
    pub packets: u64,
}

impl PcapTap {
    /// A tap writing to `path` (created or truncated).
    pub fn create(path: &str, flows: Arc<Vec<FlowAddr>>) -> Result<Self, String> {
        let f = File::create(path).map_err(|e| format!("cannot create {path}: {e}"))?;
        let header = PcapHeader {
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let w = PcapWriter::with_header(BufWriter::with_capacity(1 << 20, f), header)
            .map_err(|e| format!("writing {path}: {e}"))?;
        Ok(PcapTap {
            w: Some(w),
            flows,
            path: path.to_string(),
            error: None,
            buf: Vec::with_capacity(2048),
            zeros: vec![0; 65_536],
            packets: 0,
        })
    }

    /// Writes `pkt`, leaving the link at `t`.
    pub fn write(&mut self, pkt: &Packet, t: Time) {
        if self.error.is_some() || self.w.is_none() || pkt.kind == Kind::Resolve {
            return;
        }
        if let Err(e) = self.build(pkt, t) {
            self.error = Some(format!("writing {}: {e}", self.path));
            return;
        }
        let rec = PcapPacket::new(Duration::from_nanos(t), self.buf.len() as u32, &self.buf);
        match self.w.as_mut().expect("open").write_packet(&rec) {
            Ok(_) => self.packets += 1,
            Err(e) => self.error = Some(format!("writing {}: {e}", self.path)),
        }
    }

    /// The packet's bytes into `self.buf`.
    fn build(&mut self, pkt: &Packet, t: Time) -> Result<(), String> {
        let fa = &self.flows[pkt.flow as usize];
        let data = pkt.kind == Kind::Data;
        let (a, b) = if data {
            (fa.src, fa.dst)
        } else {
            (fa.dst, fa.src)
        };
        let (p_src, p_dst) = flow_ports(pkt.flow);
        let ports = if data { (p_src, p_dst) } else { (p_dst, p_src) };
        let addrs = (host_ip(a), host_ip(b));
        self.buf.clear();
        if !fa.tcp {
            let payload = &self.zeros[..(pkt.size.saturating_sub(28) as usize).min(65_000)];
            return write_udp(&mut self.buf, pkt, addrs, ports, payload);
        }
        let mss = fa.mss;
        let syn = pkt.flags & SYN != 0;
        let plen = if data && !syn { mss as usize } else { 0 };
        let mut tcp = tcp_header(pkt, t, mss, ports)?;
        let payload = &self.zeros[..plen];
        let ip = ipv4(tcp.header_len() + plen, IpNumber::TCP, addrs, pkt.flags)?;
        tcp.checksum = tcp
            .calc_checksum_ipv4(&ip, payload)
            .map_err(|e| e.to_string())?;
        ip.write(&mut self.buf).map_err(|e| e.to_string())?;
        tcp.write(&mut self.buf).map_err(|e| e.to_string())?;
        self.buf.extend_from_slice(payload);
        Ok(())
    }

    /// Flushes the file; the first error, if any.
    pub fn close(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        use std::io::Write;
        match self.w.take() {
            Some(w) => w
                .into_writer()
                .flush()
                .map_err(|e| format!("writing {}: {e}", self.path)),
            None => Ok(()),
        }
    }
}

/// The IP header's ECN field from the packet's flags (RFC 3168 s. 5; ECT(1) per RFC 9331).
fn ip_ecn(flags: u8) -> IpEcn {
    if flags & CE != 0 {
        IpEcn::CongestionExperienced
    } else if flags & ECT != 0 && flags & ECT1 != 0 {
        IpEcn::Ect1
    } else if flags & ECT != 0 {
        IpEcn::Ect0
    } else {
        IpEcn::NotEct
    }
}

/// An IPv4 header (TTL 64, checksum set) for `len` bytes of `proto` between `addrs`, its ECN
/// field from the packet's `flags`.
fn ipv4(
    len: usize,
    proto: IpNumber,
    addrs: ([u8; 4], [u8; 4]),
    flags: u8,
) -> Result<Ipv4Header, String> {
    let mut ip =
        Ipv4Header::new(len as u16, 64, proto, addrs.0, addrs.1).map_err(|e| e.to_string())?;
    ip.ecn = ip_ecn(flags);
    ip.header_checksum = ip.calc_header_checksum();
    Ok(ip)
}

/// An open-loop packet as IPv4 + UDP + `payload` into `buf`.
fn write_udp(
    buf: &mut Vec<u8>,
    pkt: &Packet,
    addrs: ([u8; 4], [u8; 4]),
    ports: (u16, u16),
    payload: &[u8],
) -> Result<(), String> {
    let ip = ipv4(8 + payload.len(), IpNumber::UDP, addrs, pkt.flags)?;
    let udp =
        UdpHeader::with_ipv4_checksum(ports.0, ports.1, &ip, payload).map_err(|e| e.to_string())?;
    ip.write(buf).map_err(|e| e.to_string())?;
    udp.write(buf).map_err(|e| e.to_string())?;
    buf.extend_from_slice(payload);
    Ok(())
}

/// A TCP segment's header, checksum not yet set: sequence and ACK numbers in bytes, the flags,
/// and the timestamps and SACK options (module docs).
fn tcp_header(pkt: &Packet, t: Time, mss: u32, ports: (u16, u16)) -> Result<TcpHeader, String> {
    let data = pkt.kind == Kind::Data;
    let syn = pkt.flags & SYN != 0;
    let ms = |ns: Time| (ns / 1_000_000) as u32;
    let seq = if data && !syn {
        pkt.seq.wrapping_mul(mss)
    } else {
        0
    };
    let window = (pkt.rwnd as u64 * mss as u64).min(65_535) as u16;
    let mut tcp = TcpHeader::new(ports.0, ports.1, seq, if data { 65_535 } else { window });
    tcp.syn = syn;
    tcp.ece = pkt.flags & ECE != 0;
    tcp.cwr = pkt.flags & CWR != 0;
    tcp.ns = pkt.flags & AE != 0; // AccECN's AE, the former NS bit (RFC 9768 s. 3.1.1)
    let mut opts = vec![TcpOptionElement::Noop, TcpOptionElement::Noop];
    if data {
        opts.push(TcpOptionElement::Timestamp(ms(pkt.ts), 0));
    } else {
        tcp.ack = true;
        tcp.acknowledgment_number = pkt.seq.wrapping_mul(mss);
        opts.push(TcpOptionElement::Timestamp(ms(t), ms(pkt.ts)));
        let blocks: Vec<(u32, u32)> = pkt
            .sack
            .iter()
            .filter(|s| s.1 > s.0)
            .map(|&(s, e)| (s.wrapping_mul(mss), e.wrapping_mul(mss)))
            .collect();
        if let Some((&first, rest)) = blocks.split_first() {
            // With the timestamps option, room for three blocks (RFC 2018 s. 3).
            let mut more = [None; 3];
            for (k, bl) in rest.iter().take(2).enumerate() {
                more[k] = Some(*bl);
            }
            opts.push(TcpOptionElement::Noop);
            opts.push(TcpOptionElement::Noop);
            opts.push(TcpOptionElement::SelectiveAcknowledgement(first, more));
        }
    }
    tcp.set_options(&opts).map_err(|e| e.to_string())?;
    Ok(tcp)
}
