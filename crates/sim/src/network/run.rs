//! The event loop: packets through links and hosts, timers, open-loop sources.

use super::{Sim, SimError, TcpEnds, Transport};
use crate::event::Event;
use crate::link::Outcome;
use crate::packet::{Kind, Packet};
use crate::results::Results;
use aqm::{Time, Verdict};

impl Sim {
    fn path_of(&self, p: &Packet) -> &[u32] {
        let f = &self.flows[p.flow as usize];
        match p.kind {
            Kind::Data => &f.path,
            Kind::Ack => &f.rev,
            Kind::Resolve if p.seq == 0 => &f.resolve.0,
            Kind::Resolve => &f.resolve.1,
        }
    }

    /// A packet leaves its current link and reaches the next node at `at`: schedules what comes
    /// next, or returns the next link when that one is chained.
    #[inline]
    fn after_link(&mut self, mut pkt: Packet, at: Time) -> Option<(Packet, u32, Time)> {
        if at > self.end {
            self.beyond += 1;
            if pkt.kind == Kind::Data && pkt.ts >= self.warmup {
                self.flows[pkt.flow as usize].udp.in_flight += 1;
            }
            return None;
        }
        let path = self.path_of(&pkt);
        let next = pkt.hop as usize + 1;
        if next < path.len() {
            let l = path[next];
            pkt.hop = next as u16;
            if self.links[l as usize].chained {
                return Some((pkt, l, at));
            }
            self.ev.push(at, Event::LinkArrive(l, pkt));
        } else {
            self.ev.push(at, Event::HostArrive(pkt));
        }
        None
    }

    /// A packet enters link `l` at `t` (and, through chained links, as far as it goes now).
    fn enter_link(&mut self, mut pkt: Packet, mut l: u32, mut t: Time) {
        loop {
            let f = pkt.flow as usize;
            let link = &mut self.links[l as usize];
            if pkt.kind == Kind::Ack {
                pkt.rwnd = self.flows[f].throttle.on_ack(link.from, pkt.rwnd);
            }
            let mut verdict = Verdict::Admit;
            let outcome = link.arrive(&mut pkt, t, &mut verdict);
            // ModRED's ACK-window rewrite: only a throttle, or a flow with one pending, needs it.
            let fl = &mut self.flows[f];
            if pkt.kind == Kind::Data
                && !matches!(outcome, Outcome::Dropped)
                && (verdict == Verdict::Throttle || fl.throttle.is_active())
            {
                if let Some(a) = link.aqm() {
                    fl.throttle.on_data(link.from, verdict, a.throttle_hold());
                }
            }
            match outcome {
                Outcome::Dropped => return,
                Outcome::Queued => {
                    self.try_start(l, t);
                    return;
                }
                Outcome::Forward(at) => match self.after_link(pkt, at) {
                    Some((p, nl, nt)) => {
                        pkt = p;
                        l = nl;
                        t = nt;
                    }
                    None => return,
                },
            }
        }
    }

    fn try_start(&mut self, l: u32, t: Time) {
        if !self.links[l as usize].can_start() {
            return;
        }
        if let Some(at) = self.links[l as usize].defer_start(t) {
            // A trace-driven link: the head waits for the next delivery opportunity.
            self.ev.push(at, Event::TxDone(l));
            return;
        }
        if let Some((pkt, at, end_tx)) = self.links[l as usize].start_next(t) {
            self.ev.push(end_tx, Event::TxDone(l));
            if let Some((p, nl, nt)) = self.after_link(pkt, at) {
                self.enter_link(p, nl, nt);
            }
        } else if let Some(w) = self.links[l as usize].sched_wait() {
            self.ev.push(w, Event::SchedWake(l));
        }
    }

    fn inject_out(&mut self, f: usize, t: Time) {
        let mut out = std::mem::take(&mut self.out);
        // `[tcp] send_jitter`: what the sender hands down at `t` (one send opportunity: a GSO
        // burst, or what an ACK released) leaves together, up to J later (tcp::send_jitter).
        let mut burst_at = None;
        for mut p in out.drain(..) {
            p.flow = f as u32;
            p.hop = 0;
            self.injected += 1;
            let l = self.path_of(&p)[0];
            // Through an event even with no delay drawn, behind one still pending at `t`.
            match self.flows[f].tcp_mut().and_then(|e| e.jitter.as_mut()) {
                Some(j) if p.kind == Kind::Data => {
                    let at = *burst_at.get_or_insert_with(|| j.depart(t));
                    self.ev.push(at, Event::LinkArrive(l, p));
                }
                _ => self.enter_link(p, l, t),
            }
        }
        self.out = out;
        // One pending timer event per flow; a deadline that moved earlier gets its own event.
        let Some(TcpEnds { sender: s, .. }) = self.flows[f].tcp_mut() else {
            return; // an open-loop flow has no timers
        };
        if let Some(d) = s.rto_deadline {
            if s.rto_event.is_none_or(|e| e > d) {
                s.rto_event = Some(d);
                self.ev.push(d, Event::Rto(f as u32));
            }
        }
        if let Some(d) = s.pacer.deadline.take() {
            if s.pacer.event.is_none_or(|e| e > d) {
                s.pacer.event = Some(d);
                self.ev.push(d, Event::Pace(f as u32));
            }
        }
        let cwnd = s.cwnd;
        if let Some(cs) = &mut self.flows[f].cwnd_series {
            cs.fill_before(t + 1, &[cwnd]);
        }
    }

    /// A packet reached its destination host: open-loop data is counted (and a probe echoed),
    /// a probe's echo is timed, TCP data goes to the receiver and TCP ACKs to the sender.
    fn on_host(&mut self, pkt: Packet, t: Time) {
        self.delivered += 1;
        let f = pkt.flow as usize;
        match pkt.kind {
            Kind::Data if self.flows[f].source().is_some() => self.on_source_data(pkt, f, t),
            Kind::Ack if self.flows[f].source().is_some() => {
                let w = self.warmup;
                if let Some(e) = self.flows[f].source_mut().and_then(|s| s.echo.as_mut()) {
                    e.record(pkt.ts, t, w);
                }
            }
            Kind::Data => self.on_tcp_data(pkt, f, t),
            Kind::Ack => self.on_tcp_ack(pkt, f, t),
            Kind::Resolve => self.on_resolve(pkt, f, t),
        }
    }

    /// Address resolution (`[tcp] resolve`): the receiver answers a request at once; the reply
    /// releases the sender's SYN(s).
    fn on_resolve(&mut self, pkt: Packet, f: usize, t: Time) {
        if pkt.seq == 0 {
            self.out.push(Packet {
                seq: 1,
                ts: t,
                ..pkt
            });
        } else {
            let mut out = std::mem::take(&mut self.out);
            let s = &mut self.flows[f].tcp_mut().expect("a TCP flow").sender;
            s.on_resolved(&mut out);
            self.out = out;
        }
        self.inject_out(f, t);
    }

    /// Open-loop data at its sink: delivered bytes, one-way delay and CE marks; a latency
    /// probe's packet is turned around.
    fn on_source_data(&mut self, pkt: Packet, f: usize, t: Time) {
        let fl = &mut self.flows[f];
        if let Some((b, s)) = &mut fl.delivered {
            s.fill_before(t + 1, &[*b]);
            *b += pkt.size as f64;
        }
        if t >= self.warmup {
            fl.bytes_window += pkt.size as u64;
        }
        if pkt.ts >= self.warmup {
            fl.udp.record(t - pkt.ts);
            fl.udp.ce += (pkt.ecn() == aqm::Ecn::Ce) as u64;
        }
        if fl.source().is_some_and(|s| s.echo.is_some()) {
            // A latency probe: the destination turns the packet around.
            self.out.push(Packet {
                kind: Kind::Ack,
                ..pkt
            });
            self.inject_out(f, t);
        }
    }

    /// TCP data at its receiver: the ACK (and any extra one) goes back, the delayed-ACK timer
    /// is armed.
    fn on_tcp_data(&mut self, pkt: Packet, f: usize, t: Time) {
        let in_window = t >= self.warmup;
        let fl = &mut self.flows[f];
        if let Some((b, s)) = &mut fl.delivered {
            s.fill_before(t + 1, &[*b]);
        }
        let Transport::Tcp(TcpEnds {
            receiver, sender, ..
        }) = &mut fl.transport
        else {
            unreachable!("open-loop data is matched above")
        };
        let ack = receiver.on_data(&pkt, t, in_window);
        if let Some(mut a) = receiver.take_extra() {
            a.flow = f as u32;
            self.out.push(a);
        }
        if let Some((b, _)) = &mut fl.delivered {
            *b = sender.bytes_below(receiver.stats.delivered_total);
        }
        if let Some(mut a) = ack {
            a.flow = f as u32;
            self.out.push(a);
        }
        if !self.out.is_empty() {
            self.inject_out(f, t);
        }
        let r = &mut self.flows[f].tcp_mut().expect("a TCP flow").receiver;
        if let Some(d) = r.delack_deadline {
            if r.delack_event.is_none_or(|e| e > d) {
                r.delack_event = Some(d);
                self.ev.push(d, Event::DelAck(f as u32));
            }
        }
    }

    /// A TCP ACK at its sender: what it releases is sent; a finished flow starts its session's
    /// next one.
    fn on_tcp_ack(&mut self, pkt: Packet, f: usize, t: Time) {
        let fl = &mut self.flows[f];
        let Transport::Tcp(TcpEnds { sender, .. }) = &mut fl.transport else {
            unreachable!("open-loop ACKs are matched above")
        };
        if pkt.seq > sender.snd_max {
            self.violations.push(format!(
                "flow {}: ACK for segment {} beyond the highest sent {}",
                fl.name, pkt.seq, sender.snd_max
            ));
        }
        let mut out = std::mem::take(&mut self.out);
        sender.on_ack(&pkt, t, &mut out);
        let done = sender.done_at.is_some();
        self.out = out;
        self.inject_out(f, t);
        if self.flows[f].next.is_some() && done {
            self.start_next(f);
        }
    }

    /// Flow `f` has completed: its session's next flow starts a think time later (if that is
    /// within the run).
    fn start_next(&mut self, f: usize) {
        let Some((n, think)) = self.flows[f].next.take() else {
            return;
        };
        let done = self.flows[f].tcp().and_then(|e| e.sender.done_at);
        let at = done.expect("completed") + think;
        if at <= self.end {
            self.flows[n as usize].start = at;
            self.ev.push(at, Event::FlowStart(n));
        }
    }

    /// An open-loop source emits a packet at `t` and schedules the next one.
    fn emit(&mut self, f: u32, t: Time) {
        let fl = &mut self.flows[f as usize];
        if t >= fl.stop {
            return;
        }
        let src = fl.source_mut().expect("source");
        let flags = src.ecn_flags;
        let (size, gap) = src.source.emit(&mut src.rng);
        let seq = src.sent as u32;
        src.sent += 1;
        if t >= self.warmup {
            src.sent_window += 1;
        }
        self.ev.push(t + gap, Event::SourceEmit(f));
        self.out.push(Packet {
            flow: f,
            seq,
            size,
            hop: 0,
            kind: Kind::Data,
            flags,
            precedence: aqm::Precedence::Out,
            ts: t,
            rwnd: 0,
            sack: [(0, 0); 3],
            enq_time: 0,
        });
        self.inject_out(f as usize, t);
    }

    /// Flow `f`'s retransmission timer event at `t` (ignored when superseded).
    fn on_rto(&mut self, f: u32, t: Time) {
        let s = &mut self.flows[f as usize].tcp_mut().expect("a TCP flow").sender;
        if s.rto_event != Some(t) {
            return; // superseded by an earlier event
        }
        s.rto_event = None;
        match s.rto_deadline {
            Some(d) if d <= t => {
                let mut out = std::mem::take(&mut self.out);
                s.on_timeout(t, &mut out);
                self.out = out;
            }
            _ => {}
        }
        self.inject_out(f as usize, t);
    }

    /// Flow `f`'s delayed-ACK timer event at `t` (ignored when superseded).
    fn on_delack(&mut self, f: u32, t: Time) {
        let r = &mut self.flows[f as usize]
            .tcp_mut()
            .expect("a TCP flow")
            .receiver;
        if r.delack_event != Some(t) {
            return;
        }
        r.delack_event = None;
        if let Some(mut a) = r.on_delack_timer(f, t) {
            a.flow = f;
            self.out.push(a);
            self.inject_out(f as usize, t);
        } else if let Some(d) = r.delack_deadline {
            r.delack_event = Some(d);
            self.ev.push(d, Event::DelAck(f));
        }
    }

    /// Flow `f`'s pacing event at `t` (ignored when superseded).
    fn on_pace(&mut self, f: u32, t: Time) {
        let s = &mut self.flows[f as usize].tcp_mut().expect("a TCP flow").sender;
        if s.pacer.event != Some(t) {
            return; // superseded by an earlier event
        }
        s.pacer.event = None;
        let mut out = std::mem::take(&mut self.out);
        s.send_paced(t, &mut out);
        self.out = out;
        self.inject_out(f as usize, t);
    }

    /// Runs until the clock passes `until` (or the end). Returns true when the run is over.
    pub fn run_until(&mut self, until: Time) -> bool {
        let stop = until.min(self.end);
        while let Some(t) = self.ev.peek_time() {
            if t > stop {
                break;
            }
            let (t, ev) = self.ev.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            match ev {
                Event::LinkArrive(l, p) => self.enter_link(p, l, t),
                Event::HostArrive(p) => self.on_host(p, t),
                Event::TxDone(l) => {
                    self.links[l as usize].tx_done(t);
                    self.try_start(l, t);
                }
                Event::SchedWake(l) => {
                    self.links[l as usize].sched_wake(t);
                    self.try_start(l, t);
                }
                Event::Rto(f) => self.on_rto(f, t),
                Event::DelAck(f) => self.on_delack(f, t),
                Event::FlowStart(f) if self.flows[f as usize].source().is_some() => {
                    let src = self.flows[f as usize].source_mut().expect("source");
                    let gap = src.source.first_gap(&mut src.rng);
                    self.ev.push(t + gap, Event::SourceEmit(f));
                }
                Event::SourceEmit(f) => self.emit(f, t),
                Event::FlowStart(f) => {
                    let mut out = std::mem::take(&mut self.out);
                    let tcp = self.flows[f as usize].tcp_mut().expect("a TCP flow");
                    tcp.sender.start(t, &mut out);
                    self.out = out;
                    self.inject_out(f as usize, t);
                }
                Event::Pace(f) => self.on_pace(f, t),
                Event::FlowStop(f) => {
                    // An open-loop source stops by its own `stop` time (`emit`).
                    if let Some(tcp) = self.flows[f as usize].tcp_mut() {
                        tcp.sender.stop_new_data();
                    }
                }
                Event::AqmUpdate(l) => {
                    if let Some(n) = self.links[l as usize].aqm_update(t) {
                        self.ev.push(n.max(t + 1), Event::AqmUpdate(l));
                    }
                }
            }
        }
        if self.ev.peek_time().is_none_or(|t| t > self.end) {
            self.now = self.end;
            return true;
        }
        self.now = stop;
        false
    }

    /// Runs to the end and checks the invariants.
    pub fn run(&mut self) -> Result<Results, SimError> {
        self.run_until(self.end);
        self.finish()
    }
}
