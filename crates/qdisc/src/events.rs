//! A link's event log (`[output] events`): every enqueue, dequeue (start of transmission), drop
//! and mark with its time, flow, the packet's arrival time at the queue and size, and the queue
//! length after it. Both engines write the same fixed-size binary records to a file through a
//! small buffer (bounded memory whatever the run's length): the simulator's links
//! (`crates/sim/src/link.rs`, simulated time) and the forwarder's directions
//! (`crates/fwd/src/path.rs`, ns since the forwarder's start). The Python layer turns the file
//! into Parquet in chunks (`python/aqmlab/running/events.py`), which documents the columns.
//!
//! A queue without a log pays one `Option` test per event (the tap is `None`).

use aqm::Time;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};

/// Bytes of one record: `t_ns u64, arrival_ns u64, queue_bytes u64, flow u32, queue_pkts u32,
/// size u32, kind u8, cause u8, 2 bytes of padding`, little-endian.
pub const RECORD_BYTES: usize = 40;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// The packet joined the queue (a lazy FIFO's packet that starts at once is enqueued and
    /// dequeued at the same instant).
    Enqueue = 0,
    /// The packet left the queue: its transmission starts.
    Dequeue = 1,
    /// The packet was dropped.
    Drop = 2,
    /// The packet was marked CE (it stays in the queue, or is sent).
    Mark = 3,
}

/// Why a packet was dropped (or where it was marked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// Not a drop.
    None = 0,
    /// The AQM, on arrival.
    Aqm = 1,
    /// The buffer (or a queue discipline's limit) was full.
    Overflow = 2,
    /// The AQM, at the head of the queue (CoDel, FQ-CoDel).
    AqmHead = 3,
}

impl Cause {
    /// The cause of a drop a queue discipline made (`Scheduler::enqueue`/`dequeue`): its AQM's
    /// drop on arrival or, `at_head`, at the head of a queue; its limit's, an overflow.
    pub fn of_sched(why: crate::sched::SchedDrop, at_head: bool) -> Cause {
        match (why, at_head) {
            (crate::sched::SchedDrop::Aqm, false) => Cause::Aqm,
            (crate::sched::SchedDrop::Aqm, true) => Cause::AqmHead,
            (crate::sched::SchedDrop::Overlimit, _) => Cause::Overflow,
        }
    }
}

/// One link's log.
pub struct EventLog {
    out: BufWriter<File>,
    path: String,
    error: Option<String>,
    /// An engine that knows departures ahead (the simulator's lazy FIFO): flow and arrival time
    /// of each waiting packet (its dequeue is logged when its start time is reached).
    pub pending: VecDeque<(u32, Time)>,
    /// Records written.
    pub rows: u64,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EventLog({}, {} rows)", self.path, self.rows)
    }
}

impl EventLog {
    /// A log writing to `path` (created or truncated).
    pub fn create(path: &str) -> Result<Self, String> {
        let f = File::create(path).map_err(|e| format!("cannot create {path}: {e}"))?;
        Ok(EventLog {
            out: BufWriter::with_capacity(1 << 20, f),
            path: path.to_string(),
            error: None,
            pending: VecDeque::new(),
            rows: 0,
        })
    }

    /// Appends one record. A write error is kept and reported by [`EventLog::close`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push(
        &mut self,
        t: Time,
        kind: EventKind,
        cause: Cause,
        flow: u32,
        arrival: Time,
        size: u32,
        queue_pkts: u32,
        queue_bytes: u64,
    ) {
        if self.error.is_some() {
            return;
        }
        let mut r = [0u8; RECORD_BYTES];
        r[0..8].copy_from_slice(&t.to_le_bytes());
        r[8..16].copy_from_slice(&arrival.to_le_bytes());
        r[16..24].copy_from_slice(&queue_bytes.to_le_bytes());
        r[24..28].copy_from_slice(&flow.to_le_bytes());
        r[28..32].copy_from_slice(&queue_pkts.to_le_bytes());
        r[32..36].copy_from_slice(&size.to_le_bytes());
        r[36] = kind as u8;
        r[37] = cause as u8;
        if let Err(e) = self.out.write_all(&r) {
            self.error = Some(format!("writing {}: {e}", self.path));
        }
        self.rows += 1;
    }

    /// Flushes the file; the first write error, if any.
    pub fn close(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out
            .flush()
            .map_err(|e| format!("writing {}: {e}", self.path))
    }
}

/// One record read back (tests and tools; the Python layer reads the file with numpy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// When it happened, ns.
    pub t: Time,
    /// When the packet arrived at the queue, ns.
    pub arrival: Time,
    /// Queue bytes after the event.
    pub queue_bytes: u64,
    /// The flow's index.
    pub flow: u32,
    /// Queue packets after the event.
    pub queue_pkts: u32,
    /// The packet's size, bytes.
    pub size: u32,
    /// What happened: an [`EventKind`] as `u8`.
    pub kind: u8,
    /// Why: a [`Cause`] as `u8`.
    pub cause: u8,
}

/// Reads a record file written by [`EventLog`] (a trailing partial record is an error).
pub fn read_records(path: &str) -> Result<Vec<Record>, String> {
    let b = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    if b.len() % RECORD_BYTES != 0 {
        return Err(format!(
            "{path}: {} bytes is not a whole number of {RECORD_BYTES}-byte records",
            b.len()
        ));
    }
    let u64_at = |r: &[u8], i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8"));
    let u32_at = |r: &[u8], i: usize| u32::from_le_bytes(r[i..i + 4].try_into().expect("4"));
    Ok(b.chunks_exact(RECORD_BYTES)
        .map(|r| Record {
            t: u64_at(r, 0),
            arrival: u64_at(r, 8),
            queue_bytes: u64_at(r, 16),
            flow: u32_at(r, 24),
            queue_pkts: u32_at(r, 28),
            size: u32_at(r, 32),
            kind: r[36],
            cause: r[37],
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout documented on [`RECORD_BYTES`] (and read by `python/aqmlab/running/events.py`),
    /// byte by byte for one hand-made record, and read back.
    #[test]
    fn a_record_has_the_documented_layout_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("qdisc-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.bin");
        let path = path.to_str().unwrap();
        let mut log = EventLog::create(path).unwrap();
        log.push(
            0x0102,
            EventKind::Drop,
            Cause::AqmHead,
            7,
            0x0304,
            1500,
            9,
            13_500,
        );
        log.close().unwrap();
        let b = std::fs::read(path).unwrap();
        let mut want = vec![0u8; RECORD_BYTES];
        want[0] = 0x02;
        want[1] = 0x01; // t_ns, little-endian
        want[8] = 0x04;
        want[9] = 0x03; // arrival_ns
        want[16..20].copy_from_slice(&13_500u32.to_le_bytes()); // queue_bytes
        want[24] = 7; // flow
        want[28] = 9; // queue_pkts
        want[32..34].copy_from_slice(&1500u16.to_le_bytes()); // size
        want[36] = 2; // drop
        want[37] = 3; // aqm_head
        assert_eq!(b, want);
        let r = read_records(path).unwrap();
        assert_eq!(
            r,
            vec![Record {
                t: 0x0102,
                arrival: 0x0304,
                queue_bytes: 13_500,
                flow: 7,
                queue_pkts: 9,
                size: 1500,
                kind: 2,
                cause: 3,
            }]
        );
        std::fs::write(path, [0u8; 41]).unwrap();
        assert!(read_records(path).unwrap_err().contains("whole number"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
