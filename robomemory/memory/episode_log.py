"""The episode log: what an episode did, step by step, kept outside the checkpointed state.

Checkpoints hold the state as it is now; a record that only grows (every step's action, plan,
critic verdict and candidates; the memories retrieved; the spatial update statistics) would make
every checkpoint write grow with the episode. It lives here instead, one SQLite row per step,
written idempotently: a node re-run after a crash rewrites the same row. The ``episodes``
table claims each episode id for one robot's thread (every store keys episodes by id alone).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from robomemory.episode import StepRecord
from robomemory.memory.damage import (
    Seal,
    Witness,
    checked_sqlite,
    disk_full,
    disk_full_error,
    sealed_write,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS steps (
  episode_id TEXT NOT NULL,
  step INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (episode_id, step)
);
CREATE TABLE IF NOT EXISTS spatial (
  episode_id TEXT NOT NULL,
  step INTEGER NOT NULL,
  stats TEXT NOT NULL,
  PRIMARY KEY (episode_id, step)
);
CREATE TABLE IF NOT EXISTS episodes (
  episode_id TEXT PRIMARY KEY,
  robot_id TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  checkpointed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS retrieved (
  episode_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  first_step INTEGER NOT NULL,
  PRIMARY KEY (episode_id, item_id)
);
"""
# Tables whose rows are never deleted: the seal (``episodes.sqlite3.seal``) vouches for them
WITNESSES = (
    Witness("episodes", ("episode_id", "robot_id", "thread_id")),
    Witness("steps", ("episode_id", "step")),
    Witness("spatial", ("episode_id", "step")),
    Witness("retrieved", ("episode_id", "item_id")),
)
WHAT = "episode log"


class EpisodeLog:
    """Thread-safe episode log in one SQLite file (WAL)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        remedy = "restore it from a backup; moved aside, earlier episodes' step records are gone"
        self._seal = Seal(self.path, WITNESSES)
        self._db = checked_sqlite(self.path, WHAT, remedy, self._seal)
        try:
            with self._writing():
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(SCHEMA)
        except (sqlite3.OperationalError, OSError) as exc:
            self._db.close()
            if disk_full(exc, self.path):
                raise disk_full_error(WHAT, self.path) from None
            raise

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction under the lock; once it commits, the seal records it."""
        return sealed_write(self._db, self._lock, self._seal)

    def claim(self, episode_id: str, robot_id: str, thread_id: str) -> tuple[bool, str, str]:
        """Claim ``episode_id`` for one robot's thread, atomically: (claimed now, owner robot,
        owner thread). Every store keys an episode by its id alone, so an id names one run."""
        with self._writing():
            inserted = self._db.execute(
                "INSERT OR IGNORE INTO episodes (episode_id, robot_id, thread_id) VALUES (?, ?, ?)",
                (episode_id, robot_id, thread_id),
            ).rowcount
            owner = self._db.execute(
                "SELECT robot_id, thread_id FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
        return bool(inserted), owner[0], owner[1]

    def ran(self, episode_id: str) -> bool:
        """Whether a run of ``episode_id`` got past its start (it has checkpoints or steps)."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM episodes WHERE episode_id = ? AND checkpointed = 1"
                " UNION ALL SELECT 1 FROM steps WHERE episode_id = ? LIMIT 1",
                (episode_id, episode_id),
            ).fetchone()
        return row is not None

    def mark_checkpointed(self, episode_id: str) -> None:
        """Note that the episode's run has checkpoints: losing them later is damage."""
        with self._writing():
            self._db.execute(
                "UPDATE episodes SET checkpointed = 1 WHERE episode_id = ?", (episode_id,)
            )

    def checkpointed(self, robot_id: str, thread_id: str) -> list[str]:
        """Episodes of a robot's thread whose runs have checkpoints, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT episode_id FROM episodes WHERE robot_id = ? AND thread_id = ?"
                " AND checkpointed = 1 ORDER BY rowid",
                (robot_id, thread_id),
            ).fetchall()
        return [r[0] for r in rows]

    def record_step(self, episode_id: str, record: StepRecord) -> None:
        """Store one step's record (replacing a record of the same step)."""
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO steps VALUES (?, ?, ?)",
                (episode_id, int(record["step"]), json.dumps(record)),
            )

    def steps(self, episode_id: str) -> list[StepRecord]:
        """Every step record of an episode, in step order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT record FROM steps WHERE episode_id = ? ORDER BY step", (episode_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def record_spatial(self, episode_id: str, step: int, stats: dict) -> None:
        """Store one spatial update's statistics."""
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO spatial VALUES (?, ?, ?)",
                (episode_id, int(step), json.dumps(stats)),
            )

    def spatial_stats(self, episode_id: str) -> list[dict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT stats FROM spatial WHERE episode_id = ? ORDER BY step", (episode_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def add_retrieved(self, episode_id: str, item_ids: Iterable[str], step: int) -> None:
        """Remember that these long-term items were retrieved (for the MemRL update)."""
        with self._writing():
            self._db.executemany(
                "INSERT OR IGNORE INTO retrieved VALUES (?, ?, ?)",
                [(episode_id, str(i), int(step)) for i in item_ids],
            )

    def retrieved(self, episode_id: str) -> list[str]:
        """Distinct items retrieved during an episode, in the order first retrieved."""
        with self._lock:
            rows = self._db.execute(
                "SELECT item_id FROM retrieved WHERE episode_id = ? ORDER BY first_step, rowid",
                (episode_id,),
            ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
