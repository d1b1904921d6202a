"""The identity of the code that computes a run: aqmlab's version and a hash of its modules.

Resumable sweeps and reproductions reuse a finished run when its key matches. A key made of the
scenario, the seed and the version alone would also match after an algorithm or a default was
changed without a new version (a development install, a local fix), and serve the old result.
The key therefore includes :func:`build_id`: a hash of the Rust extension (every algorithm and the
simulator) and of the package's Python modules (scenario resolution, presets such as
``defaults = "ns2"``). Any change to them makes every earlier run a stranger: it is run again.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from aqmlab._version import __version__

_PKG = Path(__file__).resolve().parents[1]  # the package: python/aqmlab/


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """``<version>+<hash>``: the hash covers ``_core*.so`` and every ``*.py`` of the package."""
    h = hashlib.sha256()
    files = sorted([*_PKG.glob("_core*.so"), *_PKG.rglob("*.py")])
    for f in files:
        if "__pycache__" in f.parts:
            continue
        h.update(str(f.relative_to(_PKG)).encode())
        h.update(f.read_bytes())
    return f"{__version__}+{h.hexdigest()[:16]}"


def file_id(path: str | Path) -> str:
    """A file's name and a hash of its content (an ns-2 script: its location does not matter)."""
    p = Path(path)
    return f"{p.name}:{hashlib.sha256(p.read_bytes()).hexdigest()[:16]}"
