//! The receiving side: accepts every TCP connection and drains it; counts the UDP datagrams of
//! every source (address, port) and writes the counts on SIGTERM or SIGINT.

use crate::sys;
use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};

/// IPv4 (20 B) + UDP (8 B) headers: counted bytes are IPv4 packet sizes, as the sources'.
pub const UDP_IP_HEADER: usize = 28;

const LISTEN: u64 = u64::MAX;
const UDP: u64 = u64::MAX - 1;
const SIGNAL: u64 = u64::MAX - 2;
/// At most this many reads per ready connection per wake-up (level-triggered: the rest next time).
const READS_PER_WAKE: usize = 8;

/// SO_RCVBUFFORCE (asm-generic/socket.h): as root, past net.core.rmem_max.
const SO_RCVBUFFORCE: libc::c_int = 33;

/// Runs the sink on `port` until SIGTERM/SIGINT, then writes `{"ip:port": [packets, bytes]}` to
/// `udp_out`.
pub fn run(port: u16, udp_out: Option<&str>) -> io::Result<()> {
    let sig = sys::term_signalfd()?;
    let srv = sys::socket(libc::SOCK_STREAM)?;
    sys::set_int(&srv, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    sys::bind(&srv, Ipv4Addr::UNSPECIFIED, port)?;
    sys::listen(&srv)?;
    let udp = sys::socket(libc::SOCK_DGRAM)?;
    // the sink must not be where datagrams are lost
    sys::set_int(&udp, libc::SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)?;
    sys::bind(&udp, Ipv4Addr::UNSPECIFIED, port)?;
    let mut ep = sys::Epoll::new()?;
    ep.add(srv.as_raw_fd(), libc::EPOLLIN, LISTEN)?;
    ep.add(udp.as_raw_fd(), libc::EPOLLIN, UDP)?;
    ep.add(sig.as_raw_fd(), libc::EPOLLIN, SIGNAL)?;
    println!("ready");
    let mut conns: HashMap<u64, OwnedFd> = HashMap::new();
    let mut counts: HashMap<(Ipv4Addr, u16), [u64; 2]> = HashMap::new();
    let mut buf = vec![0u8; 1 << 18];
    loop {
        for (_, key) in ep.wait(-1) {
            match key {
                SIGNAL => return write_counts(&counts, udp_out),
                LISTEN => {
                    while let Some(c) = sys::accept(&srv)? {
                        let k = c.as_raw_fd() as u64;
                        ep.add(c.as_raw_fd(), libc::EPOLLIN, k)?;
                        conns.insert(k, c);
                    }
                }
                UDP => drain_udp(&udp, &mut buf, &mut counts),
                k => {
                    if let Some(c) = conns.get(&k) {
                        if !drain_tcp(c.as_raw_fd(), &mut buf) {
                            conns.remove(&k); // closing it also removes it from epoll
                        }
                    }
                }
            }
        }
    }
}

/// Reads what is there; false once the peer closed (or reset) the connection.
fn drain_tcp(fd: i32, buf: &mut [u8]) -> bool {
    for _ in 0..READS_PER_WAKE {
        match sys::recv(fd, buf) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

fn drain_udp(udp: &OwnedFd, buf: &mut [u8], counts: &mut HashMap<(Ipv4Addr, u16), [u64; 2]>) {
    while let Ok((n, ip, port)) = sys::recv_from(udp, buf) {
        let c = counts.entry((ip, port)).or_insert([0, 0]);
        c[0] += 1;
        c[1] += (n + UDP_IP_HEADER) as u64;
    }
}

fn write_counts(counts: &HashMap<(Ipv4Addr, u16), [u64; 2]>, out: Option<&str>) -> io::Result<()> {
    let Some(out) = out else { return Ok(()) };
    let m: serde_json::Map<String, serde_json::Value> = counts
        .iter()
        .map(|((ip, port), c)| (format!("{ip}:{port}"), serde_json::json!(c)))
        .collect();
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&m)?)?;
    std::fs::rename(tmp, out)
}
