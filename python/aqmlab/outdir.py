"""Output directories: created, replaced and named safely (issue 19).

Every command that writes a results directory goes through this module, so that:

- an existing directory that aqmlab did not write (a ``thesis.tex`` in it) is refused with one line
  and never emptied (:func:`check`);
- an aqmlab output directory is replaced only once the new one is complete: the new one is
  written in a sibling temporary directory ``<out>.partial`` and swapped in at the end
  (:func:`replacing`), so an interrupted or failed command leaves the old results whole;
- a name or label that becomes a file or directory name (a compare label, a scenario's name in a
  default path, a probe flow's name) is checked up front (:func:`safe_name`): one path component,
  so nothing is ever written outside the directory the user named;
- a path that cannot be created (``/proc/nope/x``, a read-only or missing parent) is refused
  before any work, and a write that fails for want of space is one line (:class:`OutputError`,
  exit code 1) with the partial output removed.

API for other commands (reproduce, evaluate, testbed)::

    out = outdir.check(out, "--out")            # before any work; InputError (exit 2) if refused
    with outdir.replacing(out, "--out") as tmp:  # write everything into tmp
        ...                                      # on success tmp becomes out (old one removed)
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from aqmlab.errors import InputError, OutputError, show

#: A file written into every output directory aqmlab creates: what marks it as aqmlab's.
MARKER = ".aqmlab"
#: Sets of names that together mark a directory written by an aqmlab version from before the
#: marker (a single common name such as ``config.json`` or ``summary.json`` would not do: a user's
#: project may have one): a run, a comparison, a sweep.
LEGACY_MARKERS = (
    ("summary.json", "scenario.json", "run.json"),
    ("compare.csv", "compare.json"),
    ("sweep.json", "runs"),
    ("report.md", "summary.json", "runs"),  # a reproduction
)
#: Suffix of the temporary sibling a directory is written under before it is swapped in.
PARTIAL = ".partial"
#: Longest name of one path component, bytes (the common file-system limit, with room for the
#: ``.partial`` suffix).
NAME_MAX = 255 - len(PARTIAL)


def _exists(p: Path) -> bool:
    try:
        p.lstat()
    except OSError:
        return False
    return True


def is_output_dir(path: str | Path, markers: tuple[str, ...] = ()) -> bool:
    """Whether ``path`` is a directory aqmlab may replace: empty, or holding the :data:`MARKER`
    file, one of the sets of :data:`LEGACY_MARKERS` or one of the caller's own ``markers``."""
    p = Path(path)
    if p.is_symlink() or not p.is_dir():
        return False
    try:
        names = set(os.listdir(p))
    except OSError:
        return False
    if not names or MARKER in names or names & set(markers):
        return True
    return any(set(group) <= names for group in LEGACY_MARKERS)


def safe_name(value: object, field: str) -> str:
    """``value`` checked as one file or directory name: a non-empty string of at most
    :data:`NAME_MAX` bytes, not ``.`` or ``..``, without ``/``, ``\\`` or control characters and not
    starting with ``.`` or ``-``. Raises :class:`InputError` naming ``field`` otherwise."""
    allowed = (
        "one file name: no '/' or '\\', no control characters, not '.' or '..', not starting "
        f"with '.' or '-', at most {NAME_MAX} bytes"
    )
    if not isinstance(value, str) or not value:
        raise InputError(f"{field}: must be {allowed} (got {show(value)})")
    bad = (
        value in (".", "..")
        or value[0] in ".-"
        or any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in value)
        or len(os.fsencode(value)) > NAME_MAX
    )
    if bad:
        raise InputError(f"{field}: {show(value)} cannot be a file name; it must be {allowed}")
    return value


def listing(directory: str | Path) -> str:
    """The files of an output directory as a ``wrote`` line lists them: every file by name
    (sorted), time series as a count of ``.parquet`` files, subdirectories with a ``/``."""
    d = Path(directory)
    names = sorted(x for x in os.listdir(d) if x != MARKER and not x.startswith("."))
    parquet = [x for x in names if x.endswith(".parquet")]
    rest = [x + ("/" if (d / x).is_dir() else "") for x in names if x not in parquet]
    if parquet:
        rest.append(f"{len(parquet)} time series .parquet")
    return ", ".join(rest)


def _nearest_existing(p: Path) -> Path:
    q = p.absolute()
    while not _exists(q):
        q = q.parent
    return q


def _probe_writable(parent: Path, out: Path, field: str) -> None:
    """Creates and removes a temporary directory in ``parent``: the only sure test that ``out``
    can be created there (``access()`` says yes to root in ``/proc``)."""
    try:
        probe = tempfile.mkdtemp(prefix=".aqmlab-probe-", dir=parent)
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise InputError(
            f"{field}: cannot create {show(str(out))}: {show(str(parent))}: {why}"
        ) from None
    os.rmdir(probe)


def check(out: str | Path, field: str = "--out", markers: tuple[str, ...] = ()) -> Path:
    """Refuses, before any work, an output directory that cannot be created or must not be
    replaced; returns it as a Path.

    Refused (:class:`InputError`, one line naming ``field``): a name longer than the file system
    allows; an existing file; an existing non-empty directory aqmlab did not write (see
    :func:`is_output_dir`; ``markers`` adds the caller's own marker files); a path whose nearest
    existing ancestor is not a directory or in which nothing can be created.
    """
    p = Path(out)
    if not str(out):
        raise InputError(f"{field}: must be a directory path (got '')")
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise InputError(
                f"{field}: {show(str(p))} has a name longer than the file system allows "
                f"({NAME_MAX} bytes at most per name; a long default comes from the scenario's "
                "name)"
            )
    if _exists(p):
        if p.is_symlink() or not p.is_dir():
            raise InputError(f"{field}: {show(str(p))} exists and is not a directory")
        if not is_output_dir(p, markers):
            raise InputError(
                f"{field}: {show(str(p))} exists and is not an aqmlab output directory (it holds "
                "other files, which would be lost); name a new or empty directory"
            )
    parent = _nearest_existing(p.parent)
    if not parent.is_dir():
        raise InputError(
            f"{field}: cannot create {show(str(p))}: {show(str(parent))} is not a directory"
        )
    _probe_writable(parent, p, field)
    partial = p.with_name(p.name + PARTIAL)
    if _exists(partial) and not is_output_dir(partial, markers):
        raise InputError(
            f"{field}: {show(str(partial))} exists and is not aqmlab's (it is where the new "
            "results are written first); move it away"
        )
    return p


def mark(directory: Path) -> None:
    """Writes the :data:`MARKER` file into ``directory``."""
    (Path(directory) / MARKER).write_text(
        "This directory was written by aqmlab; aqmlab may replace it.\n"
    )


def fault(e: OSError, what: str | Path) -> OutputError:
    """An :class:`OutputError` for ``e`` on one line (``cannot write <what>: No space left on
    device``)."""
    why = e.strerror or (os.strerror(e.errno) if e.errno else str(e) or type(e).__name__)
    hint = "; free some space and run again" if e.errno in (errno.ENOSPC, errno.EDQUOT) else ""
    return OutputError(e.errno or 0, f"cannot write {show(str(what))}: {why}{hint}")


def start(out: Path, markers: tuple[str, ...] = ()) -> Path:
    """A fresh, marked, empty ``<out>.partial`` (what an earlier interrupted attempt left there
    is removed, if it is aqmlab's)."""
    partial = out.with_name(out.name + PARTIAL)
    if _exists(partial):
        if not is_output_dir(partial, markers):
            raise InputError(f"out: {show(str(partial))} exists and is not aqmlab's; move it away")
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    mark(partial)
    return partial


def commit(partial: Path, out: Path, markers: tuple[str, ...] = ()) -> Path:
    """Swaps the complete ``partial`` in as ``out``: an existing ``out`` (checked again to be an
    aqmlab output directory) is renamed aside and removed only after the swap."""
    if _exists(out):
        if not is_output_dir(out, markers):
            raise InputError(
                f"out: {show(str(out))} appeared during the run and is not an aqmlab output "
                f"directory; the results are in {show(str(partial))}"
            )
        old = out.with_name(out.name + ".old")
        if _exists(old):
            shutil.rmtree(old)
        out.rename(old)
        partial.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        partial.rename(out)
    return out


def discard(partial: Path) -> None:
    """Removes a temporary directory (after a failure); never raises."""
    shutil.rmtree(partial, ignore_errors=True)


@contextlib.contextmanager
def replacing(
    out: str | Path, field: str = "--out", markers: tuple[str, ...] = ()
) -> Iterator[Path]:
    """Yields a fresh ``<out>.partial`` to write into; when the block ends normally it becomes
    ``out`` (see :func:`commit`). On any exception the partial directory is removed, and an
    ``OSError`` while writing (a full disk) becomes one-line :class:`OutputError`."""
    p = check(out, field, markers)
    partial = start(p, markers)
    try:
        yield partial
    except OutputError:
        discard(partial)
        raise
    except OSError as e:
        discard(partial)
        raise fault(e, p) from None
    except BaseException:
        discard(partial)
        raise
    try:
        commit(partial, p, markers)  # an InputError here keeps the partial: its message names it
    except OutputError:
        raise
    except OSError as e:
        raise fault(e, p) from None
