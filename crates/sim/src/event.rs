//! The event queue: a binary heap ordered by (time, insertion number), so that events at the same
//! time run in the order they were scheduled and a seed fixes a run.

use crate::packet::Packet;
use aqm::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A packet reaches the input of a link's queue.
    LinkArrive(u32, Packet),
    /// A packet reaches its destination host.
    HostArrive(Packet),
    /// A link finishes transmitting (queues with a dequeue hook).
    TxDone(u32),
    /// A flow's retransmission timer may have expired.
    Rto(u32),
    /// A flow's delayed-ACK timer may have expired.
    DelAck(u32),
    /// A flow starts sending.
    FlowStart(u32),
    /// A link's AQM asked for a periodic update.
    AqmUpdate(u32),
    /// An open-loop source emits its next packet.
    SourceEmit(u32),
    /// A flow stops sending new data.
    FlowStop(u32),
    /// A paced flow's next segment may leave.
    Pace(u32),
    /// A link's queue discipline held its next packet back until now (CAKE's shaper).
    SchedWake(u32),
}

struct Entry {
    time: Time,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: the heap's maximum is the earliest event.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Pending events.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `ev` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        self.heap.push(Entry {
            time,
            seq: self.next_seq,
            ev,
        });
        self.next_seq += 1;
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.ev))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Every pending event, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.heap.iter().map(|e| &e.ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Rto(1));
        q.push(3, Event::Rto(2));
        q.push(5, Event::Rto(3));
        q.push(3, Event::Rto(4));
        let order: Vec<(Time, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Rto(f) => (t, f),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
    }
}
