"""Damaged stores say so: one line naming the file and what to do, never a silent open with
fewer items. Checks shared by the SQLite stores (integrity, the write-ahead log's header)."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

WAL_MAGIC = (0x377F0682, 0x377F0683)
WAL_VERSION = 3007000


class DamagedStoreError(ValueError):
    """A store file that is damaged and could not be restored from a copy the project keeps."""


class DiskFullError(DamagedStoreError):
    """A store that could not be opened or written because its disk is full: no damage, and
    nothing is moved aside; free space and start again."""


FULL_BYTES = 1 << 20  # less free space than this beside a store: its errors are the disk's


def disk_full(exc: BaseException, where: Path | None = None) -> bool:
    """Whether ``exc`` says the disk is full: ``ENOSPC``, SQLite's ``SQLITE_FULL``, or any
    SQLite error where the disk holding ``where`` has under :data:`FULL_BYTES` free (SQLite
    reports a failed write of its shared-memory file as an I/O error)."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    if not isinstance(exc, sqlite3.Error):
        return False
    if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return True
    if "database or disk is full" in str(exc):
        return True
    return where is not None and free_bytes(where) < FULL_BYTES


def free_bytes(path: Path) -> int:
    """Free bytes on the disk holding ``path`` (its folder when it does not exist)."""
    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:  # a folder that cannot be read: no sign of a full disk
        return FULL_BYTES


def disk_full_error(what: str, path: Path) -> DiskFullError:
    """The one line for a store that the full disk stopped (its files are left as they are)."""
    return DiskFullError(
        f"disk full: {what} {path} could not be opened or written (it is not damaged and was "
        "left as it is); free space on its disk and start again"
    )


@dataclass(frozen=True)
class Witness:
    """A table whose rows are never deleted, which a :class:`Seal` vouches for by its last row
    (``keys``: columns that name a row). ``by_rowid``: the last row is the one of the highest
    rowid (else the writer says which row it wrote last)."""

    table: str
    keys: tuple[str, ...]
    by_rowid: bool = True


class Seal:
    """The record beside an SQLite file (``FILE.seal``, JSON) of the last row each witnessed
    table held at the last commit: a file truncated to nothing, deleted, or whose write-ahead
    log lost commits (deleted, cut, damaged past its header: SQLite then stops reading it,
    silently) no longer has that row, and :meth:`problem` says so. A file with no seal yet (from
    before seals) gets one at open. The database only grows in these tables, so any seal a
    process wrote stays true of it (processes sharing the file may write theirs in any order)."""

    def __init__(self, db: Path, witnesses: Sequence[Witness]):
        self.path = Path(f"{db}.seal")
        self.witnesses = tuple(witnesses)
        self._told: dict[str, list] = {}  # rows writers named (tables not by rowid)
        self._lock = threading.Lock()

    def read(self) -> dict | None:
        """The recorded marks per table, or None when there is no readable seal."""
        try:
            record = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # a seal cut by a power loss: no record to hold
            log.warning("seal %s is unreadable (%s): written anew", self.path, exc)
            return None
        tables = record.get("tables") if isinstance(record, dict) else None
        return tables if isinstance(tables, dict) else None

    def problem(self, conn: sqlite3.Connection) -> str | None:
        """What the database lacks of what its seal records, or None."""
        marks = self.read() or {}
        for w in self.witnesses:
            mark = marks.get(w.table)
            if not isinstance(mark, dict):
                continue
            rowid, last = mark.get("rowid"), mark.get("last")
            if not isinstance(last, list) or len(last) != len(w.keys):
                continue  # a mark this version does not read: nothing to hold the file to
            try:
                if rowid is not None:
                    (top,) = conn.execute(f"SELECT max(rowid) FROM {w.table}").fetchone()
                    if top is None or top < rowid:
                        return (
                            f"its {w.table} end at row {top or 0}, {self.path.name} records "
                            f"row {rowid}: rows were lost"
                        )
                where = " AND ".join(f"{k} IS ?" for k in w.keys)
                found = conn.execute(f"SELECT 1 FROM {w.table} WHERE {where}", last).fetchone()
            except sqlite3.OperationalError as exc:  # no such table: an emptied file
                return f"{w.table}: {exc}, {self.path.name} records rows"
            if found is None:
                return f"the last {w.table} row {self.path.name} records is gone: rows were lost"
        if self._told == {} and marks:
            self._told = {
                w.table: marks[w.table]["last"]
                for w in self.witnesses
                if not w.by_rowid and isinstance(marks.get(w.table), dict)
            }
        return None

    def reset(self) -> None:
        """Forget the rows writers named: the file was replaced by an older copy."""
        with self._lock:
            self._told = {}

    def write(self, conn: sqlite3.Connection, told: Mapping[str, Sequence] | None = None) -> None:
        """Record each witnessed table's last row as ``conn`` sees it now (after a commit);
        ``told``: the rows just written of tables not witnessed by rowid."""
        with self._lock:
            self._told.update({t: list(row) for t, row in (told or {}).items()})
            marks: dict[str, dict] = {}
            for w in self.witnesses:
                if not w.by_rowid:
                    if w.table in self._told:
                        marks[w.table] = {"rowid": None, "last": self._told[w.table]}
                    continue
                row = conn.execute(
                    f"SELECT rowid, {', '.join(w.keys)} FROM {w.table} ORDER BY rowid DESC LIMIT 1"
                ).fetchone()
                if row is not None:
                    marks[w.table] = {"rowid": row[0], "last": list(row[1:])}
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
            tmp.write_text(json.dumps({"tables": marks}))
            os.replace(tmp, self.path)


def checked_sqlite(
    path: Path, what: str, remedy: str, seal: Seal | None = None
) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` that passed its checks (write-ahead log
    header, ``quick_check``, and what ``seal`` records); else :class:`DamagedStoreError`
    naming ``what``, the file and ``remedy`` (:class:`DiskFullError` when the disk is full:
    that is no damage)."""
    problem = wal_problem(path)
    existed = path.exists()
    conn = None
    try:
        if problem is None:
            conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            (check,) = conn.execute("PRAGMA quick_check").fetchone()
            problem = None if check == "ok" else f"integrity check: {check}"
            if problem is None and seal is not None:
                problem = seal.problem(conn)
                if problem is not None:
                    problem = problem if existed else f"the file is missing; {problem}"
                    remedy = f"{remedy} (or move it and {seal.path.name} aside to start anew)"
            if problem is None:
                return conn
    except sqlite3.DatabaseError as exc:
        if disk_full(exc, path):
            if conn is not None:
                conn.close()
            raise disk_full_error(what, path) from None
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


@contextmanager
def sealed_write(
    db: sqlite3.Connection, lock: threading.Lock, seal: Seal
) -> Iterator[sqlite3.Connection]:
    """One write transaction on ``db`` under ``lock``; once it commits, ``seal`` records it."""
    with lock:
        with db:
            yield db
        seal.write(db)
