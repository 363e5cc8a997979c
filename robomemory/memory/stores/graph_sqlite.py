"""The default spatial store: the networkx graph in process, persisted row by row in SQLite.

Algorithm 2 reads the in-process :class:`NetworkxGraphStore`; every :meth:`apply` writes only
what changed — new vertices (embeddings as float32 blobs), new edges, invalidated edges (kept
as history rows), pruned vertices, the update key and two counters — in one SQLite transaction
(WAL, ``synchronous=FULL``), and only after it commits is the in-process graph changed. A step
therefore costs the same on a graph of 20 or 2,000 edges, and a crash leaves the previous or
the new state, never a torn one.

One robot, one file (``spatial/<graph id>.sqlite3``), one writer:
- in a process, :func:`open_sqlite_store` returns one shared object per file (agents on threads
  share it, nothing is lost);
- across processes, an exclusive ``flock`` on ``<file>.lock`` is held while the store is open;
  a second process gets :class:`StoreInUseError` naming the process that holds it.
A good copy (``<file>.bak``) is written on open and on close; a corrupt or truncated file is
moved aside (``<file>.corrupt``) and the copy restored, with a warning; so is a file that lacks
the last edge or update its seal (``<file>.seal``) records (a log that lost commits). A graph
of the earlier JSON format (``<graph id>.json``) is migrated on first open.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import numpy as np

from robomemory.memory.base import Triple
from robomemory.memory.damage import (
    DamagedStoreError,
    Seal,
    Witness,
    disk_full,
    disk_full_error,
    wal_problem,
)
from robomemory.memory.spatial_algorithm import GraphChange, plan_merge
from robomemory.memory.stores.graph_nx import NetworkxGraphStore, load_json_graph
from robomemory.memory.stores.graph_store import ApplyResult, StoreInUseError

log = logging.getLogger(__name__)

FORMAT = "robomemory-spatial-1"
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE vertices (name TEXT PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE edges (
    id INTEGER PRIMARY KEY, subject TEXT NOT NULL, relation TEXT NOT NULL,
    object TEXT NOT NULL, valid_from_step INTEGER NOT NULL, invalidated_at_step INTEGER,
    episode_id TEXT
);
CREATE TABLE updates (key TEXT PRIMARY KEY) WITHOUT ROWID;
"""
# The seal (``<file>.seal``) vouches for the last edge and the last update applied: a log that
# lost commits (deleted, cut, damaged past its header) is found at open, not a map with less.
WITNESSES = (
    Witness("edges", ("id", "subject", "relation", "object")),
    Witness("updates", ("key",), by_rowid=False),
)
# Few B-trees (small tables WITHOUT ROWID, no secondary index): a step touches few pages. The
# store is read whole on open, so no query needs an index.

_registry: dict[Path, tuple[SqliteGraphStore, int]] = {}
_registry_lock = threading.Lock()


def open_sqlite_store(path: Path, graph_id: str) -> SqliteGraphStore:
    """The process's one store for ``path`` (opened, locked and loaded on first use); every
    call needs a matching :meth:`SqliteGraphStore.close`."""
    key = Path(path).resolve()
    with _registry_lock:
        store, refs = _registry.get(key, (None, 0))
        if store is None:
            store = SqliteGraphStore(key, graph_id)
        _registry[key] = (store, refs + 1)
        return store


def read_sqlite_graph(path: Path, graph_id: str) -> NetworkxGraphStore:
    """A read-only snapshot of the graph in ``path`` (no lock: a running robot may hold it)."""
    key = Path(path).resolve()
    with _registry_lock:
        if key in _registry:
            return _registry[key][0].snapshot()
    if not key.exists():
        return NetworkxGraphStore(graph_id)
    conn = sqlite3.connect(f"{key.as_uri()}?mode=ro", uri=True)
    try:
        return _load(conn, graph_id, key)
    finally:
        conn.close()


class SqliteGraphStore:
    """A :class:`GraphStore` on an in-process networkx graph persisted to SQLite; use
    :func:`open_sqlite_store` (one object per file per process)."""

    def __init__(self, path: Path, graph_id: str):
        self.graph_id = graph_id
        self.path = path
        self.backup_path = path.with_name(path.name + ".bak")
        self._seal = Seal(path, WITNESSES)
        self._lock = threading.RLock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fh = _acquire_process_lock(path, graph_id)
        try:
            self._conn, self._mem = self._open()
            self._seal.write(self._conn)
            self._backup()
        except BaseException as exc:
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
            self._lock_fh.close()
            if isinstance(exc, (OSError, sqlite3.OperationalError)) and disk_full(exc, path):
                raise disk_full_error("spatial store", path) from None  # the seal or the copy
            raise

    # ---- GraphView and reads: the in-process graph ---------------------------------------------
    def known_vertices(self, names: Iterable[str]) -> set[str]:
        return self._mem.known_vertices(names)

    def similar_vertices(self, embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        return self._mem.similar_vertices(embedding, n)

    def neighbors(self, names: Collection[str], undirected: bool = False) -> set[str]:
        return self._mem.neighbors(names, undirected)

    def degrees(self, names: Collection[str]) -> dict[str, int]:
        return self._mem.degrees(names)

    def edges_among(self, names: Iterable[str]) -> list[Triple]:
        return self._mem.edges_among(names)

    def edges_by_id(self, ids: Collection[int]) -> list[Triple]:
        return self._mem.edges_by_id(ids)

    def has_update(self, key: str) -> bool:
        return self._mem.has_update(key)

    def last_step(self) -> int | None:
        return self._mem.last_step()

    def vertex_names(self) -> set[str]:
        return self._mem.vertex_names()

    def k_hop(self, seeds: Iterable[str], k: int, undirected: bool = False) -> set[str]:
        return self._mem.k_hop(seeds, k, undirected)

    def triples(self, include_invalid: bool = False) -> list[Triple]:
        return self._mem.triples(include_invalid)

    def size(self) -> tuple[int, int]:
        return self._mem.size()

    def snapshot(self) -> NetworkxGraphStore:
        """A copy of the current graph (for readers that must not hold the store)."""
        with self._lock:
            return _load(self._conn, self.graph_id, self.path)

    # ---- writes --------------------------------------------------------------------------------
    def apply(self, change: GraphChange) -> ApplyResult:
        """Write the change's rows in one transaction, then change the in-process graph."""
        with self._lock:
            plan = plan_merge(self._mem, change)
            first = self._mem.next_id
            last = self._mem.last_step()
            pruned = set(plan.prune)
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                cur.executemany(
                    "INSERT INTO vertices (name, embedding) VALUES (?, ?)",
                    [(n, _blob(v)) for n, v in plan.vertices.items() if n not in pruned],
                )
                cur.executemany(
                    "UPDATE edges SET invalidated_at_step = ? WHERE id = ?",
                    [(change.step, t.id) for t in plan.invalidate],
                )
                cur.executemany(
                    "INSERT INTO edges (id, subject, relation, object, valid_from_step, "
                    "episode_id) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (first + i, t.subject, t.relation, t.object, change.step, t.episode_id)
                        for i, t in enumerate(plan.add)
                    ],
                )
                cur.executemany("DELETE FROM vertices WHERE name = ?", [(n,) for n in pruned])
                cur.execute("INSERT OR IGNORE INTO updates (key) VALUES (?)", (change.key,))
                step = change.step if last is None else max(last, change.step)
                cur.executemany(
                    "UPDATE meta SET value = ? WHERE key = ?",
                    [(str(first + len(plan.add)), "next_id"), (str(step), "last_step")],
                )
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            self._seal.write(self._conn, {"updates": (change.key,)})
            return self._mem.commit(change, plan)

    def close(self) -> None:
        """Release this handle; the last one writes the good copy, closes the file and lets
        other processes open it."""
        with _registry_lock:
            store, refs = _registry.get(self.path, (None, 0))
            if store is self and refs > 1:
                _registry[self.path] = (self, refs - 1)
                return
            if store is self:
                del _registry[self.path]
            elif store is not None or self._lock_fh.closed:
                return
        with self._lock:
            self._backup()
            self._conn.close()
            self._lock_fh.close()

    # ---- opening, checking, recovering -----------------------------------------------------
    def _open(self) -> tuple[sqlite3.Connection, NetworkxGraphStore]:
        bad = self.path.with_name(self.path.name + ".corrupt")
        if not self.path.exists() and bad.exists():  # found corrupt before, with no good copy
            raise DamagedStoreError(
                f"spatial store {self.path} was found corrupt and moved to {bad}, with no good "
                f"copy: repair or remove {bad} and {self._seal.path.name} (removing them starts "
                "an empty map)"
            )
        if not self.path.exists() and self.backup_path.exists():  # the file itself was lost
            log.warning(
                "spatial store %s is missing: restored from %s", self.path, self.backup_path
            )
            self._restore_backup(FileNotFoundError(f"{self.path} is missing"))
        if not self.path.exists():
            legacy = self.path.with_suffix(".json")
            self._initialize(load_json_graph(legacy, self.graph_id) if legacy.exists() else None)
            if legacy.exists():
                os.replace(legacy, legacy.with_name(legacy.name + ".migrated"))
                log.warning("spatial graph %s migrated from JSON to %s", legacy, self.path)
        try:
            return self._connect(self.path)
        except sqlite3.DatabaseError as exc:
            if disk_full(exc, self.path):  # no damage: nothing is moved aside
                raise disk_full_error("spatial store", self.path) from None
            return self._recover(exc)

    def _connect(
        self, path: Path, sealed: bool = True
    ) -> tuple[sqlite3.Connection, NetworkxGraphStore]:
        """The store's connection and graph once its checks pass: the log's header, integrity,
        and (``sealed``: not the last good copy, which is older) what its seal records."""
        problem = wal_problem(path)  # SQLite would ignore a damaged log and its commits
        if problem is not None:
            raise sqlite3.DatabaseError(problem)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            (check,) = conn.execute("PRAGMA quick_check").fetchone()
            if check != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {check}")
            graph = _load(conn, self.graph_id, path)
            problem = self._seal.problem(conn) if sealed else None
            if problem is not None:
                raise sqlite3.DatabaseError(problem)
            return conn, graph
        except BaseException:
            conn.close()
            raise

    def _recover(self, exc: sqlite3.DatabaseError) -> tuple[sqlite3.Connection, NetworkxGraphStore]:
        bad = self.path.with_name(self.path.name + ".corrupt")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                os.replace(src, f"{bad}{suffix}")
        if not self.backup_path.exists():
            raise DamagedStoreError(
                f"spatial store {self.path} is corrupt ({exc}) and there is no good copy "
                f"({self.backup_path}); the file was moved to {bad}: repair or remove it and "
                f"{self._seal.path.name} (removing them starts an empty map)"
            ) from exc
        log.warning(
            "spatial store %s is corrupt (%s): moved to %s, recovered from the last good copy %s",
            self.path,
            exc,
            bad,
            self.backup_path,
        )
        return self._restore_backup(exc)

    def _restore_backup(self, exc: BaseException) -> tuple[sqlite3.Connection, NetworkxGraphStore]:
        """The store restored from its last good copy; a damaged copy is said, by name."""
        try:
            _copy_database(self.backup_path, self.path)
            self._seal.reset()  # the copy is older than the seal: it is sealed anew
            return self._connect(self.path, sealed=False)
        except sqlite3.DatabaseError as exc2:
            self.path.unlink(missing_ok=True)
            raise DamagedStoreError(
                f"spatial store {self.path} is damaged ({exc}) and so is its copy "
                f"{self.backup_path} ({exc2}): restore one of them from a backup"
            ) from exc2

    def _initialize(self, graph: NetworkxGraphStore | None) -> None:
        """Create the store file whole (schema, and ``graph``'s rows when migrating) under a
        temporary name, then rename it: a crash never leaves a half-made file."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            _create(conn, self.graph_id, graph)
        finally:
            conn.close()
        os.replace(tmp, self.path)

    def _backup(self) -> None:
        """Write the last good copy: SQLite's online backup into a temp file, then rename."""
        tmp = self.backup_path.with_name(f".{self.backup_path.name}.{os.getpid()}.tmp")
        dest = sqlite3.connect(tmp)
        try:
            self._conn.backup(dest)
        finally:
            dest.close()
        os.replace(tmp, self.backup_path)


def _acquire_process_lock(path: Path, graph_id: str):
    fh = open(path.with_name(path.name + ".lock"), "a+")  # held while the store is open
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        pid = fh.read().strip() or "?"
        fh.close()
        robot = graph_id.removeprefix("spatial_")
        raise StoreInUseError(
            f"robot {robot}'s spatial map ({path}) is in use by process {pid}"
        ) from None
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def _create(conn: sqlite3.Connection, graph_id: str, graph: NetworkxGraphStore | None) -> None:
    """Schema and counters, and every vertex, edge and key of ``graph`` (a migration)."""
    graph = graph or NetworkxGraphStore(graph_id)
    last = graph.last_step()
    conn.execute("BEGIN IMMEDIATE")
    for stmt in SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        [
            ("format", FORMAT),
            ("graph_id", graph_id),
            ("next_id", str(graph.next_id)),
            ("last_step", "" if last is None else str(last)),
        ],
    )
    conn.executemany(
        "INSERT INTO vertices (name, embedding) VALUES (?, ?)",
        [(n, _blob(graph.embedding(n))) for n in sorted(graph.vertex_names())],
    )
    conn.executemany(
        "INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                t.id,
                t.subject,
                t.relation,
                t.object,
                t.valid_from_step,
                t.invalidated_at_step,
                t.episode_id,
            )  # fmt: skip
            for t in graph.triples(include_invalid=True)
        ],
    )
    conn.executemany("INSERT INTO updates (key) VALUES (?)", [(k,) for k in graph.applied_keys()])
    conn.execute("COMMIT")


def _load(conn: sqlite3.Connection, graph_id: str, path: Path) -> NetworkxGraphStore:
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError as exc:  # no meta table: not a complete store file
        raise sqlite3.DatabaseError(f"not a spatial store ({exc})") from exc
    if meta.get("format") != FORMAT:
        raise sqlite3.DatabaseError(f"unknown format {meta.get('format')!r}")
    store = NetworkxGraphStore(graph_id)
    store.load(
        ((n, np.frombuffer(b, dtype="<f4")) for n, b in conn.execute("SELECT * FROM vertices")),
        (
            Triple(
                id=r[0],
                subject=r[1],
                relation=r[2],
                object=r[3],
                valid_from_step=r[4],
                invalidated_at_step=r[5],
                episode_id=r[6],
            )
            for r in conn.execute(
                "SELECT id, subject, relation, object, valid_from_step, invalidated_at_step, "
                "episode_id FROM edges"
            )
        ),
        (k for (k,) in conn.execute("SELECT key FROM updates")),
        int(meta["next_id"]),
        int(meta["last_step"]) if meta["last_step"] else None,
    )
    return store


def _copy_database(src: Path, dest: Path) -> None:
    source = sqlite3.connect(f"{src.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(dest)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def _blob(vec: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vec, dtype="<f4").tobytes()
