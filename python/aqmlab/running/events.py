"""Event logs (``[output] events = ["bottleneck"]``): the simulator (and the testbed's forwarder,
for its two directions) streams each chosen link's enqueues, dequeues, drops and marks as
fixed-size binary records (``crates/qdisc/src/events.rs``) into the run's partial directory;
:func:`to_parquet` turns a record file into ``events/<link>.parquet`` a chunk at a time (bounded
memory whatever the run's length) and removes it.

Columns (one row per event, in time order):

- ``t_ns``: when it happened (ns of simulated time; on the testbed, ns since the forwarder's
  start, docs/testbed.md);
- ``event``: ``enqueue``, ``dequeue`` (the packet's transmission starts), ``drop`` or ``mark``;
- ``cause``: of a drop, ``aqm`` (on arrival), ``aqm_head`` (at the head of the queue: CoDel,
  FQ-CoDel) or ``overflow`` (the buffer or a limit); empty otherwise;
- ``flow``: the flow's name (as in summary.json);
- ``arrival_ns``: when the packet arrived at the link (a drop or mark counts in the measurement
  window by it, docs/metrics.md);
- ``size``: the packet's size on the wire, bytes;
- ``queue_pkts``, ``queue_bytes``: the queue after the event (for a drop inside FQ-CoDel's
  enqueue or dequeue: before that call). A DropTail/RED queue's packet that starts at once has
  an enqueue and a dequeue at the same instant.
"""

from __future__ import annotations

from pathlib import Path

#: Bytes of one record (``crates/qdisc/src/events.rs``, ``RECORD_BYTES``).
RECORD_BYTES = 40
#: Rows converted at a time (40 MB of records).
CHUNK_ROWS = 1 << 20
KINDS = ["enqueue", "dequeue", "drop", "mark"]
CAUSES = ["", "aqm", "overflow", "aqm_head"]


def record_path(partial: Path, link: str) -> Path:
    """Where the simulator writes a link's records (inside the run's partial directory)."""
    return partial / "events" / f"{link}.bin"


def to_parquet(records: Path, out: Path, flow_names: list[str]) -> int:
    """Converts a record file into Parquet at ``out`` in chunks and removes it; the rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    dtype = np.dtype(
        [
            ("t_ns", "<u8"),
            ("arrival_ns", "<u8"),
            ("queue_bytes", "<u8"),
            ("flow", "<u4"),
            ("queue_pkts", "<u4"),
            ("size", "<u4"),
            ("kind", "u1"),
            ("cause", "u1"),
            ("pad", "<u2"),
        ]
    )
    assert dtype.itemsize == RECORD_BYTES
    names = pa.array(flow_names, pa.string())
    kinds, causes = pa.array(KINDS, pa.string()), pa.array(CAUSES, pa.string())
    schema = pa.schema(
        [
            ("t_ns", pa.int64()),
            ("event", pa.dictionary(pa.int8(), pa.string())),
            ("cause", pa.dictionary(pa.int8(), pa.string())),
            ("flow", pa.dictionary(pa.int32(), pa.string())),
            ("arrival_ns", pa.int64()),
            ("size", pa.uint32()),
            ("queue_pkts", pa.uint32()),
            ("queue_bytes", pa.uint64()),
        ]
    )
    rows = 0
    with records.open("rb") as f, pq.ParquetWriter(out, schema) as w:
        while buf := f.read(CHUNK_ROWS * RECORD_BYTES):
            a = np.frombuffer(buf, dtype)
            cols = [
                pa.array(a["t_ns"].astype(np.int64)),
                pa.DictionaryArray.from_arrays(pa.array(a["kind"].astype(np.int8)), kinds),
                pa.DictionaryArray.from_arrays(pa.array(a["cause"].astype(np.int8)), causes),
                pa.DictionaryArray.from_arrays(pa.array(a["flow"].astype(np.int32)), names),
                pa.array(a["arrival_ns"].astype(np.int64)),
                pa.array(a["size"]),
                pa.array(a["queue_pkts"]),
                pa.array(a["queue_bytes"]),
            ]
            w.write_table(pa.Table.from_arrays(cols, schema=schema))
            rows += len(a)
    records.unlink()
    return rows
