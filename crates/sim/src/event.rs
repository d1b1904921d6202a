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

/// A pending event's place in the heap: its time, its scheduling number and the slot that holds
/// the event. The heap moves these 24 bytes as it sifts, not the event itself (about 90 bytes
/// with its packet): most events carry a packet, and moving them was the event loop's largest
/// cost (docs/benchmarks.md, 2026-11-28).
struct Key {
    time: Time,
    seq: u64,
    slot: u32,
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    // Reversed: the heap's maximum is the earliest event.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // One 128-bit comparison of (time, scheduling number) instead of two.
        let k = |x: &Key| (x.time as u128) << 64 | x.seq as u128;
        k(o).cmp(&k(self))
    }
}

/// Pending events: a binary heap of `Key`s (time, scheduling number) and the events in slots, reused once popped.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Key>,
    slots: Vec<Event>,
    free: Vec<u32>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `ev` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = ev;
                i
            }
            None => {
                self.slots.push(ev);
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Key {
            time,
            seq: self.next_seq,
            slot,
        });
        self.next_seq += 1;
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let k = self.heap.pop()?;
        self.free.push(k.slot);
        Some((k.time, self.slots[k.slot as usize]))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|k| k.time)
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
        self.heap.iter().map(|k| &self.slots[k.slot as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pops every event (all `Rto` here): (time, flow) in the order popped.
    fn drain(q: &mut EventQueue) -> Vec<(Time, u32)> {
        std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Rto(f) => (t, f),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Rto(1));
        q.push(3, Event::Rto(2));
        q.push(5, Event::Rto(3));
        q.push(3, Event::Rto(4));
        let order = drain(&mut q);
        assert_eq!(order, vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn many_interleaved_pushes_and_pops_come_out_by_time_then_scheduling_order() {
        // 20,000 operations from a fixed linear congruential generator (times 0..50, so many
        // ties), against a reference that sorts (time, scheduling number) pairs.
        let mut q = EventQueue::default();
        let mut pending: Vec<(Time, u32)> = Vec::new();
        let mut x: u64 = 12345;
        let mut rnd = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut now = 0;
        for n in 0..20_000u32 {
            if rnd(3) < 2 || pending.is_empty() {
                let t = now + rnd(50);
                q.push(t, Event::Rto(n));
                pending.push((t, n));
            } else {
                // The reference's earliest: smallest time, then smallest scheduling number
                // (n grows with each push).
                let i = (0..pending.len()).min_by_key(|&i| pending[i]).unwrap();
                let want = pending.swap_remove(i);
                let (t, e) = q.pop().unwrap();
                let Event::Rto(f) = e else { unreachable!() };
                assert_eq!((t, f), want);
                now = t;
            }
            assert_eq!(q.len(), pending.len());
        }
        pending.sort_unstable();
        assert_eq!(drain(&mut q), pending);
    }

    #[test]
    fn reused_slots_keep_time_then_scheduling_order() {
        // Pushes and pops interleaved (slots freed and taken again) against the order worked by
        // hand: by time, ties in the order scheduled.
        let mut q = EventQueue::default();
        q.push(10, Event::Rto(0));
        q.push(4, Event::Rto(1));
        assert_eq!(q.pop().map(|(t, _)| t), Some(4)); // frees Rto(1)'s slot
        q.push(10, Event::Rto(2)); // takes it again, after Rto(0) at the same time
        q.push(7, Event::Rto(3));
        q.push(2, Event::Rto(4));
        assert_eq!(q.len(), 4);
        let mut pending: Vec<u32> = q
            .iter()
            .map(|e| match e {
                Event::Rto(f) => *f,
                _ => unreachable!(),
            })
            .collect();
        pending.sort_unstable();
        assert_eq!(pending, vec![0, 2, 3, 4]);
        let order = drain(&mut q);
        assert_eq!(order, vec![(2, 4), (7, 3), (10, 0), (10, 2)]);
        assert!(q.is_empty());
    }
}
