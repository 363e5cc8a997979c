"""Damaged stores say so: one line naming the file and what to do, never a silent open with
fewer items. Checks shared by the SQLite stores (integrity, the write-ahead log's header)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

WAL_MAGIC = (0x377F0682, 0x377F0683)
WAL_VERSION = 3007000


class DamagedStoreError(ValueError):
    """A store file that is damaged and could not be restored from a copy the project keeps."""


def checked_sqlite(path: Path, what: str, remedy: str) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` that passed its checks (write-ahead log
    header, ``quick_check``); else :class:`DamagedStoreError` naming ``what``, the file and
    ``remedy``."""
    problem = wal_problem(path)
    conn = None
    try:
        if problem is None:
            conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            (check,) = conn.execute("PRAGMA quick_check").fetchone()
            if check == "ok":
                return conn
            problem = f"integrity check: {check}"
    except sqlite3.DatabaseError as exc:
        problem = str(exc)
    if conn is not None:
        conn.close()
    raise DamagedStoreError(f"{what} {path} is damaged ({problem}): {remedy}")


def wal_problem(path: Path) -> str | None:
    """Why the write-ahead log beside ``path`` is not SQLite's, or None. SQLite ignores a log
    whose header is wrong, and with it every commit it held: the file would open with less."""
    wal = Path(f"{path}-wal")
    try:
        with wal.open("rb") as f:
            head = f.read(32)
    except FileNotFoundError:
        return None
    if len(head) < 32:  # a log being created: it holds no commit yet
        return None
    magic = int.from_bytes(head[:4], "big")
    if magic not in WAL_MAGIC or int.from_bytes(head[4:8], "big") != WAL_VERSION:
        return f"{wal.name} is no SQLite write-ahead log"
    order = "big" if magic & 1 else "little"
    s0 = s1 = 0
    for i in range(0, 24, 8):
        s0 = (s0 + int.from_bytes(head[i : i + 4], order) + s1) & 0xFFFFFFFF
        s1 = (s1 + int.from_bytes(head[i + 4 : i + 8], order) + s0) & 0xFFFFFFFF
    if (s0, s1) != (int.from_bytes(head[24:28], "big"), int.from_bytes(head[28:32], "big")):
        return f"{wal.name} has a damaged header"
    return None
