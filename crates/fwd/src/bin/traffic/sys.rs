//! Thin wrappers over the socket calls the traffic tool makes (the only unsafe code of the tool):
//! each returns `io::Result` and owns its descriptors with `OwnedFd`.

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// CLOCK_MONOTONIC in nanoseconds (shared by every namespace: the orchestrator's t0 is on it).
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `t` on CLOCK_MONOTONIC (absolute, so late wake-ups do not accumulate).
pub fn sleep_until(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// 1 us timer slack (default 50 us): the UDP pacer's wake-ups are where it asks.
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn sockaddr(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// A non-blocking IPv4 socket of `kind` (SOCK_STREAM or SOCK_DGRAM).
pub fn socket(kind: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain arguments; the descriptor is owned from here on.
    let fd = check(unsafe {
        libc::socket(
            libc::AF_INET,
            kind | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: fd was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// setsockopt with an integer value.
pub fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: v lives across the call; its size is passed.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// setsockopt with a byte string (TCP_CONGESTION).
pub fn set_bytes(fd: &OwnedFd, level: libc::c_int, opt: libc::c_int, v: &[u8]) -> io::Result<()> {
    // SAFETY: v is valid for its length.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            v.as_ptr().cast(),
            v.len() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// getsockopt into `buf`; returns the length the kernel filled.
pub fn get_bytes(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is valid for len bytes; len is updated by the kernel.
    check(unsafe { libc::getsockopt(fd, level, opt, buf.as_mut_ptr().cast(), &mut len) })?;
    Ok(len as usize)
}

/// The pending error of a socket (SO_ERROR): the outcome of a non-blocking connect.
pub fn so_error(fd: RawFd) -> io::Result<()> {
    let mut b = [0u8; 4];
    get_bytes(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut b)?;
    match i32::from_ne_bytes(b) {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// bind() to an IPv4 address and port.
pub fn bind(fd: &OwnedFd, ip: Ipv4Addr, port: u16) -> io::Result<()> {
    let a = sockaddr(ip, port);
    // SAFETY: a is a valid sockaddr_in of the given size.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&a as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// A non-blocking connect(): Ok(()) when it completed or is in progress (EINPROGRESS).
pub fn connect(fd: &OwnedFd, ip: Ipv4Addr, port: u16) -> io::Result<()> {
    let a = sockaddr(ip, port);
    // SAFETY: a is a valid sockaddr_in of the given size.
    let r = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&a as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    match check(r) {
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(()),
        r => r.map(|_| ()),
    }
}

/// The local address of a socket.
pub fn local_addr(fd: &OwnedFd) -> io::Result<(Ipv4Addr, u16)> {
    let mut a = sockaddr(Ipv4Addr::UNSPECIFIED, 0);
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a is a writable sockaddr_in of len bytes.
    check(unsafe {
        libc::getsockname(
            fd.as_raw_fd(),
            (&mut a as *mut libc::sockaddr_in).cast(),
            &mut len,
        )
    })?;
    Ok((
        Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
        u16::from_be(a.sin_port),
    ))
}

/// listen() with a deep backlog (hundreds of connections a second arrive).
pub fn listen(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain arguments.
    check(unsafe { libc::listen(fd.as_raw_fd(), 4096) }).map(|_| ())
}

/// accept4() a non-blocking connection; Ok(None) when none is waiting.
pub fn accept(fd: &OwnedFd) -> io::Result<Option<OwnedFd>> {
    // SAFETY: null address arguments are allowed.
    let r = unsafe {
        libc::accept4(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    match check(r) {
        // SAFETY: a new descriptor owned by nobody else.
        Ok(c) => Ok(Some(unsafe { OwnedFd::from_raw_fd(c) })),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// send() on a connected socket (MSG_NOSIGNAL: a reset peer is an error, not SIGPIPE).
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for its length.
    let r = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// sendto() an IPv4 address.
pub fn send_to(fd: &OwnedFd, buf: &[u8], ip: Ipv4Addr, port: u16) -> io::Result<usize> {
    let a = sockaddr(ip, port);
    // SAFETY: buf and a are valid for their lengths.
    let r = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            0,
            (&a as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// recv() into `buf`: Ok(0) at the peer's end of stream.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is writable for its length.
    let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// recvfrom(): the length and the sender's address.
pub fn recv_from(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<(usize, Ipv4Addr, u16)> {
    let mut a = sockaddr(Ipv4Addr::UNSPECIFIED, 0);
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: buf and a are writable for their lengths.
    let r = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            0,
            (&mut a as *mut libc::sockaddr_in).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((
        r as usize,
        Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
        u16::from_be(a.sin_port),
    ))
}

/// An epoll instance (level-triggered).
pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// A new epoll instance returning up to 256 events per wait.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain argument.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll {
            // SAFETY: a new descriptor owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, key: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: key };
        // SAFETY: ev is valid for the call.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
    }

    /// Watches `fd` for `events` (EPOLLIN, EPOLLOUT), reported with `key`.
    pub fn add(&self, fd: RawFd, events: i32, key: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events as u32, key)
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeout_ms` (-1: forever); returns the (events, key) pairs.
    pub fn wait(&mut self, timeout_ms: i32) -> Vec<(u32, u64)> {
        // SAFETY: events is writable for its length.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                timeout_ms,
            )
        };
        self.events[..n.max(0) as usize]
            .iter()
            .map(|e| (e.events, e.u64))
            .collect()
    }
}

/// SIGTERM and SIGINT blocked and delivered through a signalfd (to be watched by epoll).
pub fn term_signalfd() -> io::Result<OwnedFd> {
    // SAFETY: set is initialised by sigemptyset before use; plain calls.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        check(libc::pthread_sigmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        let fd = check(libc::signalfd(-1, &set, libc::SFD_CLOEXEC))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}
