"""Errors that the CLI turns into one line and exit code 2."""

from __future__ import annotations

#: Longest echo of a user's value inside an error message (characters of its ``repr``).
MAX_ECHO = 60
#: Longest error message: a longer one keeps its start and end around an elision.
MAX_MESSAGE = 400


def show(value: object, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to ``limit`` characters, saying how long the whole value was.

    Error messages echo the value a user wrote; a 5,000-character string must not come back
    whole, so a long value keeps its start and says ``... (5000 characters)``.
    """
    r = repr(value)
    if len(r) <= limit:
        return r
    n = len(value) if isinstance(value, str | bytes | list | tuple | dict) else len(r)
    what = "characters" if isinstance(value, str | bytes) else "items" if n != len(r) else "chars"
    return f"{r[: max(limit - 3, 8)]}... ({n} {what})"


def one_line(msg: str) -> str:
    """``msg`` on one line of at most :data:`MAX_MESSAGE` characters (the middle cut out)."""
    return _one_line(msg)


def _one_line(msg: str) -> str:
    msg = " ".join(msg.split())  # one line: newlines and runs of spaces become one space
    if len(msg) <= MAX_MESSAGE:
        return msg
    keep = (MAX_MESSAGE - 40) // 2  # room for the marker: the result is at most MAX_MESSAGE
    return f"{msg[:keep]} [... {len(msg) - 2 * keep} characters cut ...] {msg[-keep:]}"


class InputError(ValueError):
    """Bad user input. The message names the field and what is allowed.

    The CLI prints ``error: <message>`` on one line and exits with code 2. The message is made
    one line and at most :data:`MAX_MESSAGE` characters here, whatever value it echoes.
    """

    def __init__(self, message: object = "") -> None:
        super().__init__(_one_line(str(message)))


class OutputError(OSError):
    """Results could not be written (a full disk, a file system turned read-only): an environment
    fault, not bad input. The CLI prints ``error: <message>`` on one line and exits with code 1.
    Raised by :mod:`aqmlab.outdir`."""
