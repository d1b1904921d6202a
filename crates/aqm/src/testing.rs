//! A scripted harness for algorithm tests, in the spirit of quiche's `TestSender`: a test says
//! "the queue holds 14 packets, 3 ms pass, a 1500-byte packet arrives" and checks the verdict and
//! the state, without building a network.

use crate::params::{ParamMap, ParamValue};
use crate::{Aqm, AqmRng, PacketMeta, Precedence, QueueView, Time, Verdict};

/// A parameter map from `(name, value)` pairs, as tests write them.
pub fn param_map(pairs: &[(&str, ParamValue)]) -> ParamMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A parameter map drawn by a property test: for each `(index, number, switch)`, parameter
/// `index % spec.len()` of `spec` gets `switch` if it is a bool, its first choice (switch on) or
/// a bogus name (off) if it is a choice, `number` otherwise.
pub fn drawn_params(spec: &[crate::params::ParamSpec], draws: &[(usize, f64, bool)]) -> ParamMap {
    use crate::params::ParamKind;
    let mut m = ParamMap::new();
    for &(i, x, b) in draws {
        let p = spec[i % spec.len()];
        let v = match p.kind {
            ParamKind::Bool => ParamValue::Bool(b),
            ParamKind::Choice(opts) => ParamValue::Str(if b {
                opts[0].to_string()
            } else {
                "bogus".into()
            }),
            _ => ParamValue::Num(x),
        };
        m.insert(p.name.to_string(), v);
    }
    m
}

/// Feeds one algorithm a scripted sequence of queue states, arrivals, departures and time.
#[derive(Debug)]
pub struct Script {
    /// The algorithm under test.
    pub aqm: Box<dyn Aqm>,
    /// The queue the next call will show it.
    pub q: QueueView,
    /// The current time, ns.
    pub now: Time,
    /// The generator passed to the algorithm (seed 1 unless replaced).
    pub rng: AqmRng,
    /// Whether arriving packets are ECN-capable.
    pub ecn_capable: bool,
    /// Flow of arriving packets.
    pub flow: u32,
    /// Precedence of arriving packets.
    pub precedence: Precedence,
    /// When true, admitted packets join the queue and departures leave it; when false, the queue
    /// stays as the script sets it.
    pub track_queue: bool,
}

impl Script {
    /// A script around `aqm`, at time 0, with an empty busy queue.
    pub fn new(aqm: Box<dyn Aqm>) -> Self {
        Script {
            aqm,
            q: QueueView::default(),
            now: 0,
            rng: crate::rng_from_seed(1),
            ecn_capable: false,
            flow: 0,
            precedence: Precedence::Out,
            track_queue: false,
        }
    }

    /// Sets the queue to `n` packets of 1000 bytes, link busy.
    pub fn set_queue(&mut self, n: u32) {
        self.q = QueueView {
            len_pkts: n,
            len_bytes: n as u64 * 1000,
            idle_since: None,
        };
    }

    /// Empties the queue, marks the link idle from now, then lets `idle_ns` pass.
    pub fn set_idle(&mut self, idle_ns: Time) {
        self.q = QueueView {
            len_pkts: 0,
            len_bytes: 0,
            idle_since: Some(self.now),
        };
        self.now += idle_ns;
    }

    /// Lets `dt` ns pass, running every periodic update that falls due, in order.
    pub fn advance(&mut self, dt: Time) {
        let end = self.now + dt;
        while let Some(t) = self.aqm.next_update() {
            if t > end {
                break;
            }
            self.now = self.now.max(t);
            self.aqm.update(&self.q, self.now);
        }
        self.now = end;
    }

    fn meta(&self, size: u32) -> PacketMeta {
        PacketMeta {
            flow: self.flow,
            size_bytes: size,
            ecn: if self.ecn_capable {
                crate::Ecn::Ect0
            } else {
                crate::Ecn::NotEct
            },
            precedence: self.precedence,
        }
    }

    /// A packet of `size` bytes arrives now; returns the verdict.
    pub fn arrive(&mut self, size: u32) -> Verdict {
        let m = self.meta(size);
        let v = self.aqm.enqueue(&m, &self.q, self.now, &mut self.rng);
        if self.track_queue && matches!(v, Verdict::Admit | Verdict::Mark | Verdict::Throttle) {
            self.q.len_pkts += 1;
            self.q.len_bytes += size as u64;
            self.q.idle_since = None;
        }
        v
    }

    /// The head packet of `size` bytes, which waited `sojourn` ns, is about to be sent.
    pub fn depart(&mut self, size: u32, sojourn: Time) -> Verdict {
        let m = self.meta(size);
        if self.track_queue {
            self.q.len_pkts = self.q.len_pkts.saturating_sub(1);
            self.q.len_bytes = self.q.len_bytes.saturating_sub(size as u64);
        }
        self.aqm
            .dequeue(&m, sojourn, &self.q, self.now, &mut self.rng)
    }
}
