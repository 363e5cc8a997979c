"""Free space on the disk a command writes to, checked before anything is written there.

SQLite's write-ahead log and the vector shards map their files into memory; on a disk that
fills while they grow, the process is killed by SIGBUS with no message. A command that writes
a data folder (``run``, a bench's ``--out``) first checks that its disk has at least
``ROBOMEMORY_MIN_FREE_MB`` megabytes free (default 200; 0 turns the check off) and otherwise
stops with one line.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

MIN_FREE_ENV = "ROBOMEMORY_MIN_FREE_MB"
DEFAULT_MIN_FREE_MB = 200.0
MB = 1024 * 1024


class LowDiskSpaceError(ValueError):
    """Too little free space where a command would write: nothing was written."""


def min_free_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The free bytes a command needs: ``$ROBOMEMORY_MIN_FREE_MB`` megabytes, else 200."""
    raw = environ.get(MIN_FREE_ENV, "").strip()
    if not raw:
        return int(DEFAULT_MIN_FREE_MB * MB)
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not math.isfinite(mb) or mb < 0:
        raise ValueError(f"{MIN_FREE_ENV} must be a number of megabytes (0: no check), not {raw!r}")
    return int(mb * MB)


def existing_ancestor(path: Path) -> Path:
    """``path``, or its nearest parent that exists (a folder not made yet lies on its disk)."""
    path = Path(path).expanduser().absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_free_space(path: Path, what: str = "the data folder") -> None:
    """Raise :class:`LowDiskSpaceError` when the disk of ``path`` has too little free space."""
    need = min_free_bytes()
    if need == 0:
        return
    try:
        free = shutil.disk_usage(existing_ancestor(path)).free
    except OSError:  # unreadable: the stores' own errors say what is wrong
        return
    if free < need:
        raise LowDiskSpaceError(
            f"only {free / MB:.0f} MB free on the disk of {what} {path}; at least "
            f"{need / MB:.0f} MB are needed (a full disk kills the process: the stores map "
            f"their files); free some space, or set {MIN_FREE_ENV}"
        )
