//! An AF_PACKET socket bound to one interface, receiving through a memory-mapped TPACKET_V3 ring
//! (the kernel fills blocks of frames; user space walks them without a system call per frame) and
//! sending batches of frames with one `sendmmsg` per batch.
//!
//! This is the crate's only unsafe code: the socket calls and the reads of the shared ring.
//! Layouts are those of `<linux/if_packet.h>` (Documentation/networking/packet_mmap.rst).

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{fence, AtomicU32, Ordering};

const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_QDISC_BYPASS: libc::c_int = 20;

/// Ring geometry.
#[derive(Clone, Copy, Debug)]
pub struct RingConfig {
    /// Bytes per block (a power of two, a multiple of the page size).
    pub block_size: u32,
    /// Number of blocks.
    pub block_nr: u32,
    /// A block is handed to user space after this many ms even when not full.
    pub retire_ms: u32,
}

impl Default for RingConfig {
    fn default() -> Self {
        RingConfig {
            block_size: 1 << 17,
            block_nr: 128,
            retire_ms: 1,
        }
    }
}

/// Counters of one socket.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct RingStats {
    /// Frames read from the ring.
    pub frames: u64,
    /// Frames the kernel could not store because the ring was full (PACKET_STATISTICS).
    pub kernel_drops: u64,
    /// Frames cut short by the ring (snaplen < len): dropped by the forwarder.
    pub truncated: u64,
    /// Frames handed to `sendmmsg`.
    pub tx_frames: u64,
    /// Frames the kernel refused to send.
    pub tx_errors: u64,
    /// `sendmmsg` calls.
    pub tx_calls: u64,
}

/// One interface's socket and ring.
#[derive(Debug)]
pub struct PacketSocket {
    fd: RawFd,
    ring: *mut u8,
    ring_len: usize,
    cfg: RingConfig,
    block: u32,
    ifindex: i32,
    /// Counters.
    pub stats: RingStats,
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

fn setopt<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    v: &T,
    what: &str,
) -> io::Result<()> {
    // SAFETY: `v` points to a live value of exactly size_of::<T>() bytes.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    check(r, what).map(|_| ())
}

impl PacketSocket {
    /// Opens a socket on interface `ifname` with a receive ring, in promiscuous mode, ignoring
    /// the frames it sends itself.
    pub fn open(ifname: &str, cfg: RingConfig) -> io::Result<Self> {
        let name = CString::new(ifname).map_err(|_| io::Error::other("interface name has NUL"))?;
        // SAFETY: plain libc calls with valid arguments.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::other(format!("no interface {ifname:?}")));
        }
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: plain libc call.
        let fd = check(
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, proto) },
            "socket(AF_PACKET)",
        )?;
        let mut s = PacketSocket {
            fd,
            ring: std::ptr::null_mut(),
            ring_len: 0,
            cfg,
            block: 0,
            ifindex,
            stats: RingStats::default(),
        };
        s.setup(ifindex, proto)?;
        Ok(s)
    }

    fn setup(&mut self, ifindex: i32, proto: libc::c_int) -> io::Result<()> {
        let fd = self.fd;
        setopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            &TPACKET_V3,
            "PACKET_VERSION",
        )?;
        let frame_size = 2048u32;
        let req = libc::tpacket_req3 {
            tp_block_size: self.cfg.block_size,
            tp_block_nr: self.cfg.block_nr,
            tp_frame_size: frame_size,
            tp_frame_nr: self.cfg.block_size / frame_size * self.cfg.block_nr,
            tp_retire_blk_tov: self.cfg.retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_RX_RING,
            &req,
            "PACKET_RX_RING",
        )?;
        self.ring_len = self.cfg.block_size as usize * self.cfg.block_nr as usize;
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                self.ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::other(format!(
                "mmap of the ring: {}",
                io::Error::last_os_error()
            )));
        }
        self.ring = p.cast();
        let one: libc::c_int = 1;
        setopt(
            fd,
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &one,
            "PACKET_IGNORE_OUTGOING",
        )?;
        // Frames we send skip the qdisc of the output interface: the forwarder is the queue.
        setopt(
            fd,
            libc::SOL_PACKET,
            PACKET_QDISC_BYPASS,
            &one,
            "PACKET_QDISC_BYPASS",
        )?;
        let sndbuf: libc::c_int = 4 << 20;
        setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &sndbuf, "SO_SNDBUF")?;
        // SAFETY: sockaddr_ll is plain data; zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto as u16;
        sll.sll_ifindex = ifindex;
        // SAFETY: sll is a valid sockaddr_ll of the given length.
        let r = unsafe {
            libc::bind(
                fd,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        check(r, "bind")?;
        // SAFETY: packet_mreq is plain data; zero is a valid value.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = ifindex;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        setopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mr,
            "PACKET_MR_PROMISC",
        )
    }

    /// The socket's descriptor (for poll).
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    fn block_status(&self, b: u32) -> &AtomicU32 {
        // SAFETY: block b lies inside the mapping; block_status is the u32 at offset 8 of the
        // block descriptor (version, offset_to_priv, then tpacket_hdr_v1), 4-byte aligned, and
        // the kernel and we access it as a shared word.
        unsafe {
            &*self
                .ring
                .add(b as usize * self.cfg.block_size as usize + 8)
                .cast::<AtomicU32>()
        }
    }

    /// Hands every frame of every block the kernel has released to `f` with the kernel's
    /// arrival timestamp (CLOCK_REALTIME, ns), then gives the blocks back. Returns the number of
    /// frames read.
    pub fn recv(&mut self, mut f: impl FnMut(&[u8], u64)) -> usize {
        let mut n = 0;
        loop {
            let b = self.block;
            let st = self.block_status(b).load(Ordering::Acquire);
            if st & TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            let base = b as usize * self.cfg.block_size as usize;
            // SAFETY: the block is owned by user space until its status is reset below; the
            // kernel guarantees every offset and length it wrote stays inside the block. We
            // still check them against the block bounds before reading.
            unsafe {
                let blk = self.ring.add(base);
                let num = std::ptr::read(blk.add(12).cast::<u32>());
                let mut off = std::ptr::read(blk.add(16).cast::<u32>()) as usize;
                let bs = self.cfg.block_size as usize;
                for _ in 0..num {
                    if off + std::mem::size_of::<libc::tpacket3_hdr>() > bs {
                        break;
                    }
                    let h = std::ptr::read_unaligned(blk.add(off).cast::<libc::tpacket3_hdr>());
                    let start = off + h.tp_mac as usize;
                    let len = h.tp_snaplen as usize;
                    if start + len <= bs {
                        if h.tp_snaplen < h.tp_len {
                            self.stats.truncated += 1;
                        } else {
                            let data = std::slice::from_raw_parts(blk.add(start), len);
                            f(data, h.tp_sec as u64 * 1_000_000_000 + h.tp_nsec as u64);
                            n += 1;
                        }
                    }
                    if h.tp_next_offset == 0 {
                        break;
                    }
                    off += h.tp_next_offset as usize;
                }
            }
            self.block_status(b)
                .store(TP_STATUS_KERNEL, Ordering::Release);
            self.block = (b + 1) % self.cfg.block_nr;
        }
        self.stats.frames += n as u64;
        n
    }

    /// Sends `frames` out of the interface, in order, with as few `sendmmsg` calls as the kernel
    /// allows (it may accept part of a batch; the rest is retried, and counted lost when the
    /// kernel refuses it outright).
    pub fn send(&mut self, frames: &[&[u8]]) {
        // SAFETY: plain data; zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = self.ifindex;
        sll.sll_halen = 6;
        let mut done = 0;
        while done < frames.len() {
            let chunk = &frames[done..frames.len().min(done + 256)];
            let mut iov: Vec<libc::iovec> = chunk
                .iter()
                .map(|b| libc::iovec {
                    iov_base: b.as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                })
                .collect();
            let mut msgs: Vec<libc::mmsghdr> = iov
                .iter_mut()
                .map(|v| {
                    // SAFETY: plain data; zero is valid.
                    let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                    m.msg_hdr.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
                    m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
                    m.msg_hdr.msg_iov = v;
                    m.msg_hdr.msg_iovlen = 1;
                    m
                })
                .collect();
            // SAFETY: msgs, iov, sll and the frames outlive the call.
            let r = unsafe { libc::sendmmsg(self.fd, msgs.as_mut_ptr(), msgs.len() as u32, 0) };
            self.stats.tx_calls += 1;
            if r <= 0 {
                let e = io::Error::last_os_error();
                if r < 0 && e.kind() == io::ErrorKind::WouldBlock {
                    let mut p = libc::pollfd {
                        fd: self.fd,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    unsafe { libc::poll(&mut p, 1, 10) };
                    continue;
                }
                // A frame the kernel refuses (e.g. larger than the MTU): count it, skip it.
                self.stats.tx_errors += 1;
                done += 1;
                continue;
            }
            self.stats.tx_frames += r as u64;
            done += r as usize;
        }
    }

    /// Frames the kernel dropped because the ring was full, since the last call (the kernel
    /// resets the counter on read).
    pub fn kernel_drops(&mut self) -> u64 {
        let mut st = [0u32; 3];
        let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
        // SAFETY: st is large enough for tpacket_stats_v3 (packets, drops, freeze_q_cnt).
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                st.as_mut_ptr().cast(),
                &mut len,
            )
        };
        if r == 0 {
            self.stats.kernel_drops += st[1] as u64;
        }
        self.stats.kernel_drops
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        // SAFETY: unmaps our own mapping and closes our own descriptor, once.
        unsafe {
            if !self.ring.is_null() {
                libc::munmap(self.ring.cast(), self.ring_len);
            }
            libc::close(self.fd);
        }
    }
}
