//! End-of-run checks: queue and network conservation, ACKs within what was sent.

use super::{Sim, SimError, TcpEnds, Transport};
use crate::event::Event;
use crate::packet::Kind;
use crate::results::{self, Results};

impl Sim {
    /// Closes every link's books at the end; returns the violations of queue conservation and
    /// of the buffer bound.
    fn close_links(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        for l in &mut self.links {
            l.finish(self.end);
            let s = &l.stats;
            let held = l.waiting_at_end() as u64;
            if s.total_arrived != s.total_dropped + s.total_started + held {
                v.push(format!(
                    "link {}: arrivals {} != departures {} + drops {} + queued {}",
                    l.name, s.total_arrived, s.total_started, s.total_dropped, held
                ));
            }
            v.extend(l.window_violation());
            if s.buffer_violations > 0 {
                v.push(format!(
                    "link {}: queue exceeded its buffer {} times",
                    l.name, s.buffer_violations
                ));
            }
        }
        v
    }

    /// Packets still travelling in events at the end; counts the open-loop flows' packets
    /// still in the network (in events, in queues) as in flight, not lost.
    fn count_in_flight(&mut self) -> u64 {
        let mut in_events = 0u64;
        for e in self.ev.iter() {
            if let Event::LinkArrive(_, p) | Event::HostArrive(p) = e {
                in_events += 1;
                let fl = &mut self.flows[p.flow as usize];
                if fl.source().is_some() && p.kind == Kind::Data && p.ts >= self.warmup {
                    fl.udp.in_flight += 1;
                }
            }
        }
        for l in &self.links {
            for (f, n) in l.queued_per_flow(self.warmup) {
                self.flows[f as usize].udp.in_flight += n;
            }
            if let Some(s) = &l.sched {
                // Open-loop packets a queue discipline holds (whatever their send times).
                let flows = &mut self.flows;
                s.for_each_packet(&mut |p| {
                    let fl = &mut flows[p.pkt.flow as usize];
                    if fl.source().is_some() {
                        fl.udp.in_flight += 1;
                    }
                });
            }
        }
        in_events
    }

    /// Closes the books at the end and checks the invariants (SPEC, Simulator): every queue
    /// conserves packets, no queue exceeded its buffer, the network conserves packets, every
    /// ACK covers only data that was sent.
    pub fn finish(&mut self) -> Result<Results, SimError> {
        let end = self.end;
        let mut v = std::mem::take(&mut self.violations);
        v.extend(self.close_links());
        for l in &mut self.links {
            if let Some(ev) = l.events.as_deref_mut() {
                ev.close()
                    .map_err(|e| SimError::Config(format!("output.events ({}): {e}", l.name)))?;
            }
            if let Some(p) = l.pcap.as_deref_mut() {
                p.close()
                    .map_err(|e| SimError::Config(format!("output.pcap ({}): {e}", l.name)))?;
            }
        }
        let in_events = self.count_in_flight();
        let stored: u64 = self.links.iter().map(|l| l.stored() as u64).sum();
        // Drops happen on arrival, at the head (CoDel) and inside queue disciplines (FQ-CoDel's
        // limit): the links' own counts are the network's.
        self.dropped = self.links.iter().map(|l| l.stats.total_dropped).sum();
        if self.injected != self.delivered + self.dropped + self.beyond + in_events + stored {
            v.push(format!(
                "network: sent {} != delivered {} + dropped {} + in flight {} + queued {}",
                self.injected,
                self.delivered,
                self.dropped,
                self.beyond + in_events,
                stored
            ));
        }
        for fl in &mut self.flows {
            if let Transport::Tcp(TcpEnds {
                sender, receiver, ..
            }) = &fl.transport
            {
                if receiver.rcv_nxt > sender.snd_max {
                    v.push(format!(
                        "flow {}: receiver holds {} segments in order but only {} were sent",
                        fl.name, receiver.rcv_nxt, sender.snd_max
                    ));
                }
                if sender.snd_una > sender.snd_max {
                    v.push(format!(
                        "flow {}: acknowledged beyond what was sent",
                        fl.name
                    ));
                }
                if let Some(cs) = &mut fl.cwnd_series {
                    cs.fill_before(end + 1, &[sender.cwnd]);
                }
                if let Some((b, _)) = &mut fl.delivered {
                    *b = sender.bytes_below(receiver.stats.delivered_total);
                }
            }
            if let Some((b, s)) = &mut fl.delivered {
                s.fill_before(end + 1, &[*b]);
            }
        }
        if !v.is_empty() {
            return Err(SimError::Invariant(v));
        }
        Ok(results::collect(self))
    }
}
