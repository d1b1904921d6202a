//! The forwarder without its sockets: frames in from either side, verdicts and rewrites applied,
//! frames out when their departure time comes. Kept apart from the I/O so tests can drive it with
//! any bytes and any clock.

use crate::frame::{self, Unparsed};
use crate::path::{Conservation, Frame, Path};
use crate::throttle::Throttle;
use aqm::Time;
use std::collections::BTreeMap;

/// Which interface a frame came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The senders' side: frames go through the bottleneck (forward direction).
    Left,
    /// The receivers' side: frames go through the reverse direction.
    Right,
}

/// What the forwarder did with frames it could not act on.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Oddities {
    /// Dropped malformed frames by reason (truncated Ethernet, bad IPv4 header or length).
    pub dropped_malformed: BTreeMap<&'static str, u64>,
    /// Non-IPv4 frames (ARP, IPv6, VLAN...) forwarded unchanged through the queue.
    pub forwarded_non_ipv4: u64,
    /// IPv4 packets with options (forwarded, marked like any other).
    pub ipv4_options: u64,
    /// IPv4 fragments (forwarded; no transport header read from non-first fragments).
    pub ipv4_fragments: u64,
}

/// Both directions, the throttle table and the counters.
#[derive(Debug)]
pub struct Engine {
    /// Forward direction (left to right): the bottleneck.
    pub fwd: Path,
    /// Reverse direction (right to left).
    pub rev: Path,
    /// ModRED's window clamp.
    pub throttle: Throttle,
    /// Frames it could not act on.
    pub odd: Oddities,
    /// Frames received from either side (including the malformed ones).
    pub received: u64,
    pool: Vec<Vec<u8>>,
    verdicts: Vec<(crate::throttle::FlowKey, aqm::Verdict)>,
}

impl Engine {
    /// An engine over two directions.
    pub fn new(fwd: Path, rev: Path, throttle: Throttle) -> Self {
        Engine {
            fwd,
            rev,
            throttle,
            odd: Oddities::default(),
            received: 0,
            pool: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    /// A frame arrived on `side` at `at`: it is copied into the forwarder, or dropped and
    /// counted when it is malformed.
    pub fn ingress(&mut self, side: Side, bytes: &[u8], at: Time) {
        self.received += 1;
        let ip = match frame::parse(bytes) {
            Ok(p) => Some(p),
            Err(Unparsed::NotIpv4) => {
                self.odd.forwarded_non_ipv4 += 1;
                None
            }
            Err(e) => {
                *self.odd.dropped_malformed.entry(e.label()).or_default() += 1;
                return;
            }
        };
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(bytes);
        if let Some(p) = &ip {
            self.odd.ipv4_options += u64::from(p.has_options());
            self.odd.ipv4_fragments += u64::from(p.fragment);
            self.throttle.observe(&buf, p);
            if side == Side::Right {
                self.throttle.rewrite(&mut buf, p);
            }
        }
        match side {
            Side::Left => self.fwd.receive(buf, ip, at),
            Side::Right => self.rev.receive(buf, ip, at),
        }
    }

    /// Runs both directions up to `now`; frames to send right and left are appended.
    pub fn advance(&mut self, now: Time, to_right: &mut Vec<Frame>, to_left: &mut Vec<Frame>) {
        self.verdicts.clear();
        self.fwd.advance(now, to_right, &mut self.verdicts);
        for &(k, v) in &self.verdicts {
            self.throttle.verdict(k, v);
        }
        self.verdicts.clear();
        self.rev.advance(now, to_left, &mut self.verdicts);
    }

    /// Gives sent frames' buffers back for reuse.
    pub fn recycle(&mut self, frames: &mut Vec<Frame>) {
        for f in frames.drain(..) {
            if self.pool.len() < 65_536 {
                self.pool.push(f.buf);
            }
        }
    }

    /// The next instant either direction has something to do.
    pub fn next_event(&self) -> Option<Time> {
        [self.fwd.next_event(), self.rev.next_event()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whole-forwarder conservation: received = sent + dropped (AQM, overflow, malformed) +
    /// in the system. Returns (received, sent, dropped, in_system).
    pub fn conservation(&self) -> (u64, u64, u64, u64) {
        let (f, r): (Conservation, Conservation) = (self.fwd.totals, self.rev.totals);
        let malformed: u64 = self.odd.dropped_malformed.values().sum();
        (
            self.received,
            f.sent + r.sent,
            f.dropped + r.dropped + malformed,
            self.fwd.in_system() + self.rev.in_system(),
        )
    }
}
