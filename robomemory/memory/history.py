"""SQLite change history of long-term memory (Mem0's history table) and consolidation journal.

Three tables:
- ``changes``: every ADD / UPDATE / DELETE of an item and every MemRL Q update, with old and new
  text and Q, the episode that caused it, and a timestamp; a row written with an ``op_key`` is
  written once, however often a resumed consolidation records it;
- ``episodes``: episodes whose consolidation finished, with their report (idempotency);
- ``journal``: per-episode progress of a consolidation (creator output, decisions applied), so a
  consolidation interrupted by a crash resumes without duplicating or re-asking the model.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from robomemory.memory.damage import (
    Seal,
    Witness,
    checked_sqlite,
    disk_full,
    disk_full_error,
    sealed_write,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts REAL NOT NULL,
  collection TEXT NOT NULL,
  item_id TEXT NOT NULL,
  event TEXT NOT NULL,
  old_text TEXT,
  new_text TEXT,
  q_old REAL,
  q_new REAL,
  episode_id TEXT,
  op_key TEXT
);
CREATE INDEX IF NOT EXISTS changes_collection ON changes(collection);
CREATE TABLE IF NOT EXISTS episodes (
  episode_id TEXT PRIMARY KEY,
  ts REAL NOT NULL,
  report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (
  episode_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (episode_id, key)
);
"""

EVENTS = ("ADD", "UPDATE", "DELETE", "Q")
# Tables whose rows are never deleted: the seal (``history.sqlite3.seal``) vouches for them
WITNESSES = (
    Witness("changes", ("id", "collection", "item_id", "event")),
    Witness("episodes", ("episode_id",)),
)
WHAT = "history database"
REMEDY = (
    "restore it from a backup; moved aside, long-term memory starts a new history and "
    "unfinished consolidations start over"
)


class MemoryHistory:
    """Thread-safe access to the history database at ``path``."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._seal = Seal(self.path, WITNESSES)
        self._db = checked_sqlite(self.path, WHAT, REMEDY, self._seal)
        self._db.row_factory = sqlite3.Row
        try:
            self._set_up()
        except (sqlite3.OperationalError, OSError) as exc:
            self._db.close()
            if disk_full(exc, self.path):  # an intact database on a full disk: no damage
                raise disk_full_error(WHAT, self.path) from None
            raise

    def _set_up(self) -> None:
        """The write-ahead log, the schema and its later columns."""
        with self._writing():
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives a killed process (no fsync per commit); a power
            # cut may drop the newest commits but never corrupts the database
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            columns = {r["name"] for r in self._db.execute("PRAGMA table_info(changes)")}
            if "op_key" not in columns:  # a database from before op keys
                self._db.execute("ALTER TABLE changes ADD COLUMN op_key TEXT")
            self._db.execute("CREATE UNIQUE INDEX IF NOT EXISTS changes_op_key ON changes(op_key)")

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction under the lock; once it commits, the seal records it."""
        return sealed_write(self._db, self._lock, self._seal)

    def record(
        self,
        collection: str,
        item_id: str,
        event: str,
        *,
        old_text: str | None = None,
        new_text: str | None = None,
        q_old: float | None = None,
        q_new: float | None = None,
        episode_id: str | None = None,
        op_key: str | None = None,
    ) -> bool:
        """Append one change row; with ``op_key``, only if no row has that key yet. Returns
        whether a row was written."""
        if event not in EVENTS:
            raise ValueError(f"unknown history event {event!r}")
        with self._writing():
            cur = self._db.execute(
                "INSERT OR IGNORE INTO changes (ts, collection, item_id, event, old_text,"
                " new_text, q_old, q_new, episode_id, op_key)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    collection,
                    item_id,
                    event,
                    old_text,
                    new_text,
                    q_old,
                    q_new,
                    episode_id,
                    op_key,
                ),
            )
            return cur.rowcount == 1

    def changes(
        self,
        collection: str | None = None,
        item_id: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Change rows, oldest first, optionally for one collection and/or item."""
        where, args = "1=1", []
        if collection is not None:
            where += " AND collection = ?"
            args.append(collection)
        if item_id is not None:
            where += " AND item_id = ?"
            args.append(item_id)
        if limit is None:
            sql = f"SELECT * FROM changes WHERE {where} ORDER BY id"
        else:  # the newest ``limit`` rows, still oldest first
            sql = (
                f"SELECT * FROM (SELECT * FROM changes WHERE {where} ORDER BY id DESC LIMIT ?)"
                " ORDER BY id"
            )
            args.append(limit)
        with self._lock:
            return [dict(r) for r in self._db.execute(sql, args).fetchall()]

    def live_items(self, collection: str) -> set[str]:
        """Ids of ``collection``'s items the history says are held: added, not deleted, and no
        delete of them journaled by an unfinished consolidation (its store delete may be done)."""
        live: set[str] = set()
        rows = self._adds_and_deletes(collection)
        with self._lock:
            pending = self._db.execute(
                "SELECT value FROM journal WHERE key LIKE ?", (f"{collection}:item:%",)
            ).fetchall()
        for row in rows:
            (live.add if row["event"] == "ADD" else live.discard)(row["item_id"])
        for row in pending:
            entry = json.loads(row["value"])
            if isinstance(entry, dict) and not entry.get("done"):
                ops = (entry.get("plan") or {}).get("ops") or []
                live -= {op["item_id"] for op in ops if op.get("op") == "delete"}
        return live

    def _adds_and_deletes(self, collection: str) -> list[sqlite3.Row]:
        """``collection``'s ADD and DELETE rows (item_id, event), oldest first."""
        with self._lock:
            return self._db.execute(
                "SELECT item_id, event FROM changes WHERE collection = ?"
                " AND event IN ('ADD', 'DELETE') ORDER BY id",
                (collection,),
            ).fetchall()

    def deleted_items(self, collection: str) -> set[str]:
        """Ids of ``collection``'s items whose last ADD or DELETE is a DELETE: the store
        deleted them before the row was written, so a store holding one lost that delete."""
        last = {row["item_id"]: row["event"] for row in self._adds_and_deletes(collection)}
        return {item for item, event in last.items() if event == "DELETE"}

    # ---- consolidation idempotency ------------------------------------------------------
    def episode_report(self, episode_id: str) -> dict | None:
        """The stored report when ``episode_id`` was already consolidated, else None."""
        with self._lock:
            row = self._db.execute(
                "SELECT report FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
        return json.loads(row["report"]) if row else None

    def finish_episode(self, episode_id: str, report: dict) -> None:
        """Mark ``episode_id`` consolidated (its journal is no longer needed)."""
        with self._writing():
            self._db.execute(
                "INSERT OR IGNORE INTO episodes (episode_id, ts, report) VALUES (?, ?, ?)",
                (episode_id, time.time(), json.dumps(report)),
            )
            self._db.execute("DELETE FROM journal WHERE episode_id = ?", (episode_id,))

    def journal_get(self, episode_id: str, key: str) -> Any | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM journal WHERE episode_id = ? AND key = ?", (episode_id, key)
            ).fetchone()
        return json.loads(row["value"]) if row else None

    def journal_put(self, episode_id: str, key: str, value: Any) -> None:
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO journal (episode_id, key, value) VALUES (?, ?, ?)",
                (episode_id, key, json.dumps(value)),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
