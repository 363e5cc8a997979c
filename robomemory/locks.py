"""One process per robot: an exclusive lock file per robot id under its memory folder.

The lock is an ``fcntl.flock`` on ``<data_dir>/locks/<robot_id>.lock`` holding the owner's pid.
The kernel releases it when the process ends, kill -9 included, so a crashed run never leaves a
stale lock. Inside one process the lock is shared (two agents of one robot on threads of one
process share its stores); a second *process* on the same robot gets :class:`RobotBusyError`.
Different robots lock different files and run at once.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from pathlib import Path

from robomemory.config import check_robot_id

_held: dict[Path, tuple[int, int]] = {}  # lock path -> (fd, holders in this process)
_guard = threading.Lock()


class RobotBusyError(RuntimeError):
    """Another process is running this robot on this memory folder."""


class LockFileError(ValueError):
    """The lock file is no plain file (a symbolic link, a folder, a FIFO): it is refused, never
    written through (truncating the lock would truncate whatever a link points to)."""


def lock_path(data_dir: str | Path, robot_id: str) -> Path:
    return Path(data_dir) / "locks" / f"{check_robot_id(robot_id)}.lock"


def _held_key(path: Path) -> Path:
    """The lock's path with its folder resolved and its own name kept (never followed)."""
    return path.parent.resolve() / path.name


def _open_lock(path: Path) -> int:
    """Open (or create) the lock file itself, refusing a symbolic link or any non-plain file
    with :class:`LockFileError`."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise LockFileError(
            f"lock file {path} is a symbolic link: refused (locking would truncate what it "
            "points to); remove the link"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LockFileError(f"lock file {path} is no plain file: refused; remove it")
    return fd


def acquire_robot(data_dir: str | Path, robot_id: str) -> Path:
    """Hold ``robot_id``'s lock for this process; raise RobotBusyError if another holds it."""
    path = lock_path(data_dir, robot_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path = _held_key(path)
    with _guard:
        if path in _held:
            fd, holders = _held[path]
            _held[path] = (fd, holders + 1)
            return path
        fd = _open_lock(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise RobotBusyError(
                f"robot {robot_id} is already running (pid {owner}) on {Path(data_dir)}"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[path] = (fd, 1)
        return path


def release_robot(path: Path) -> None:
    """Give back one hold of the lock taken by :func:`acquire_robot` (the last one unlocks)."""
    path = _held_key(path)
    with _guard:
        if path not in _held:
            return
        fd, holders = _held[path]
        if holders > 1:
            _held[path] = (fd, holders - 1)
            return
        del _held[path]
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
