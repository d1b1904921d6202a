//! A link's event log (`[output] events`): every enqueue, dequeue (start of transmission), drop
//! and mark with its time, flow, the packet's arrival time and size, and the queue length after
//! it. The simulator streams fixed-size binary records to a file through a small buffer (bounded
//! memory whatever the run's length); the Python layer turns the file into Parquet in chunks
//! (`python/aqmlab/running/events.py`), which documents the columns.
//!
//! A link without a log pays one `Option` test per event (the tap is `None`).

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

/// One link's log.
pub struct EventLog {
    out: BufWriter<File>,
    path: String,
    error: Option<String>,
    /// Lazy FIFO: flow and arrival time of each waiting packet (its dequeue is logged when its
    /// start time is reached).
    pub pending: VecDeque<(u32, Time)>,
    /// Records written.
    pub rows: u64,
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
