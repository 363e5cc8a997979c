"""PostgreSQL + pgvector backend of long-term memory: one memory a fleet of robots shares.

Chosen by one setting, ``longterm.memory_url`` (else ``$ROBOMEMORY_MEMORY_URL``): a
``postgresql://`` URL. The semantic items of every robot are rows of one table, the episodic
ones of another (``robomemory_semantic``, ``robomemory_episodic``); spatial maps, checkpoints'
SQLite files and each robot's history stay with the robot. A robot keeps its own collection
name, so the ids it makes (``point_id(collection, episode, idx)``) never meet another robot's.
Every row records the robot that created it, the last robot that changed it and every robot
that wrote it (``created_by``, ``updated_by``, ``robots``; shown in the items' metadata).

Concurrent robots lose nothing and duplicate nothing:

- ``put`` is an upsert by id, under an advisory lock on the item's content hash: a text some
  robot already holds is not stored twice (the new id is kept as a removed row pointing at the
  holder, ``duplicate_of``);
- ``modify`` is compare-and-swap on the row's version (``UPDATE ... WHERE version = v``);
- ``delete`` leaves a tombstone naming the robot: an ADD replayed after a crash never brings
  back what another robot removed, and ``accounted`` tells a robot's history removed from lost.

Connections, statements and lock waits time out (``pg_connect``), so a dead or stuck server
is one :class:`MemoryServerError` line, never a hang. A broken connection is opened again on
the next call. A frozen server process on a live host still answers TCP and never enforces
its statement timeout: a session that waits past ``ANSWER_TIMEOUT_S`` has its socket cut.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from robomemory.memory.stores.pg_connect import (
    Watchdog,
    check_url,
    connect,
    one_line,
    server_name,
)
from robomemory.memory.stores.pg_text import from_pg, to_pg
from robomemory.memory.stores.vector_store import (
    CAS_RETRIES,
    CONTENT,
    INTENT,
    Change,
    Hit,
    MemoryServerError,
    Mutation,
    Search,
    Vectors,
    check_where,
)

log = logging.getLogger(__name__)

TABLE_PREFIX = "robomemory_"
# a session's longest wait for the server's answers (its statements time out at 30 s, its lock
# waits at 10 s, server-side; past this the server is not answering at all)
ANSWER_TIMEOUT_S = 60.0
SETUP_LOCK = 0x72626D76  # the advisory lock serializing table setup across a fleet ("rbmv")
PROVENANCE = ("created_by", "updated_by", "robots")
COLUMNS = "id, text, meta, version, created_by, updated_by, robots"
# the robots array with this writer added once
_ADD_ROBOT = (
    "CASE WHEN %(w)s::text = ANY(x.robots) THEN x.robots"
    " ELSE array_append(x.robots, %(w)s::text) END"
)
DECLINED = object()  # a write refused for good (not a lost race)


def _vec(values: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


def _item(row: tuple) -> tuple[str, str, dict]:
    """(id, text, metadata with version and provenance) of a row that starts with COLUMNS."""
    pid, text, meta, version, created, updated, robots = row[:7]
    return pid, from_pg(text), _meta(from_pg(meta), version, created, updated, robots)


def _stored(meta: dict) -> dict:
    """The metadata kept in the row's JSON: provenance and version live in columns."""
    return {k: v for k, v in meta.items() if k not in (*PROVENANCE, "version")}


def _meta(meta: dict, version: int, created: str, updated: str, robots: list[str]) -> dict:
    provenance = dict(zip(PROVENANCE, (created, updated, list(robots)), strict=True))
    return {**meta, "version": version, **provenance}


class PgItemStore:
    """One kind of long-term memory (semantic or episodic) shared by a fleet: ``writer`` is
    this robot (recorded on every row it writes), ``collection`` the robot's own name for it."""

    def __init__(self, url: str, kind: str, writer: str, collection: str, dim: int):
        if kind not in ("semantic", "episodic"):
            raise ValueError(f"kind must be semantic or episodic, not {kind!r}")
        self.url = check_url(url)
        self.kind = kind
        self.writer = writer
        self.collection = collection
        self.table = TABLE_PREFIX + kind
        self.path = f"{server_name(url)} table {self.table}"  # named in damage reports
        self._t = sql.Identifier(self.table)
        self._lock = threading.RLock()
        self._conn: psycopg.Connection | None = None
        try:
            with self._session() as conn:
                self._setup(conn, dim)
                self._configure(conn)
        except BaseException:  # refused (another embedder's table, no pgvector): leak nothing
            self.close()
            raise

    # ---- connection ----------------------------------------------------------------------
    @contextmanager
    def _session(self) -> Iterator[psycopg.Connection]:
        """This store's connection (opened again if broken), held by this thread; a server
        that is gone or stuck is one MemoryServerError line."""
        with self._lock:
            watchdog = None
            try:
                if self._conn is None or self._conn.closed or self._conn.broken:
                    again = self._conn is not None
                    self._conn = connect(self.url)
                    if again:
                        self._configure(self._conn)
                watchdog = Watchdog(self._conn, ANSWER_TIMEOUT_S)
                yield self._conn
            except psycopg.OperationalError as exc:
                why = one_line(exc)
                if watchdog is not None and watchdog.fired:
                    why = f"no answer in {ANSWER_TIMEOUT_S:g} s (a frozen server?)"
                raise MemoryServerError(
                    f"long-term memory server {server_name(self.url)}: {why}"
                ) from None
            finally:
                if watchdog is not None:
                    watchdog.cancel()

    def _setup(self, conn: psycopg.Connection, dim: int) -> None:
        """pgvector, the table and its indexes, once per database (robots starting together
        take turns); a table made for another embedder is refused."""
        t = self._t
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
            if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                try:
                    conn.execute("CREATE EXTENSION vector")
                except (psycopg.errors.FeatureNotSupported, psycopg.errors.UndefinedFile) as exc:
                    raise MemoryServerError(
                        f"PostgreSQL at {server_name(self.url)} has no pgvector extension "
                        f"({one_line(exc)}): install pgvector on the server"
                    ) from None
                except psycopg.errors.InsufficientPrivilege:
                    raise MemoryServerError(
                        f"PostgreSQL at {server_name(self.url)}: pgvector is not enabled; run "
                        "CREATE EXTENSION vector once as a superuser"
                    ) from None
            conn.execute(
                sql.SQL(
                    """CREATE TABLE IF NOT EXISTS {t} (
                    id text PRIMARY KEY,
                    text text NOT NULL,
                    meta jsonb NOT NULL,
                    level text GENERATED ALWAYS AS (meta->>'level') STORED,
                    hash text GENERATED ALWAYS AS (meta->>'hash') STORED,
                    content vector({dim}) NOT NULL,
                    intent vector({dim}) NOT NULL,
                    version bigint NOT NULL DEFAULT 1,
                    created_by text NOT NULL,
                    updated_by text NOT NULL,
                    robots text[] NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    updated_at timestamptz NOT NULL DEFAULT now(),
                    deleted_by text,
                    deleted_at timestamptz,
                    duplicate_of text)"""
                ).format(t=t, dim=sql.Literal(dim))
            )
            for name, spec in (
                ("level", "(level) WHERE deleted_at IS NULL"),
                ("hash", "(hash) WHERE deleted_at IS NULL"),
                (CONTENT, f"USING hnsw ({CONTENT} vector_cosine_ops)"),
                (INTENT, f"USING hnsw ({INTENT} vector_cosine_ops)"),
            ):
                conn.execute(
                    sql.SQL("CREATE INDEX IF NOT EXISTS {i} ON {t} " + spec).format(
                        i=sql.Identifier(f"{self.table}_{name}"), t=t
                    )
                )
            (have,) = conn.execute(
                "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass"
                " AND attname = 'content'",
                (self.table,),
            ).fetchone()
        if have != dim:
            raise ValueError(
                f"table {self.table!r} at {server_name(self.url)} does not fit this embedder: "
                f"it holds vectors of size {have}, the embedder makes {dim}"
            )

    @staticmethod
    def _configure(conn: psycopg.Connection) -> None:
        """Filtered HNSW searches scan on until they have k rows (pgvector 0.8+)."""
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        if row and tuple(int(p) for p in row[0].split(".")[:2]) >= (0, 8):
            conn.execute("SET hnsw.iterative_scan = strict_order")

    # ---- reads ---------------------------------------------------------------------------
    def search(self, requests: Sequence[Search]) -> list[list[Hit]]:
        for r in requests:
            check_where(r.where)
        if not requests:
            return []
        with self._session() as conn:
            with conn.pipeline():  # one round trip for the batch
                cursors = [conn.execute(*self._search_sql(r)) for r in requests]
            rows = [cur.fetchall() for cur in cursors]
        return [[Hit(*_item(r), score=float(r[7])) for r in found] for found in rows]

    def _search_sql(self, r: Search) -> tuple[sql.Composed, dict]:
        if r.using not in (CONTENT, INTENT):
            raise ValueError(f"unknown vector {r.using!r}")
        dist = sql.SQL("({col} <=> %(v)s::vector)").format(col=sql.Identifier(r.using))
        where = [sql.SQL("deleted_at IS NULL")]
        params: dict[str, Any] = {"v": _vec(r.vector), "k": r.k}
        for n, (key, value) in enumerate(sorted((r.where or {}).items())):
            where.append(sql.SQL("{c} = %(w{n})s").format(c=sql.Identifier(key), n=sql.SQL(str(n))))
            params[f"w{n}"] = to_pg(str(value))
        if r.threshold is not None:
            where.append(sql.SQL("1 - {d} >= %(th)s").format(d=dist))
            params["th"] = r.threshold
        query = sql.SQL(
            "SELECT " + COLUMNS + ", 1 - {d} FROM {t} WHERE {w} ORDER BY {d} LIMIT %(k)s"
        ).format(d=dist, t=self._t, w=sql.SQL(" AND ").join(where))
        return query, params

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        if not ids:
            return {}
        query = sql.SQL(
            "SELECT " + COLUMNS + " FROM {t} WHERE id = ANY(%s) AND deleted_at IS NULL"
        ).format(t=self._t)
        with self._session() as conn:
            rows = conn.execute(query, (list(ids),)).fetchall()
        return {pid: (text, meta) for pid, text, meta in map(_item, rows)}

    def find_hash(self, digest: str) -> str | None:
        query = sql.SQL(
            "SELECT id FROM {t} WHERE hash = %s AND deleted_at IS NULL ORDER BY created_at LIMIT 1"
        ).format(t=self._t)
        with self._session() as conn:
            row = conn.execute(query, (digest,)).fetchone()
        return row[0] if row else None

    def all(self, limit: int = 10_000) -> list[tuple[str, str, dict]]:
        with self._session() as conn:
            return [_item(r) for r in conn.execute(_all_sql(self.table), (limit,)).fetchall()]

    def accounted(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` this store holds or has a record of removing (by any robot)."""
        if not ids:
            return set()
        query = sql.SQL("SELECT id FROM {t} WHERE id = ANY(%s)").format(t=self._t)
        with self._session() as conn:
            return {r[0] for r in conn.execute(query, (list(ids),)).fetchall()}

    # ---- writes --------------------------------------------------------------------------
    def _holder(self, conn: psycopg.Connection, digest: str | None, pid: str) -> str | None:
        """Under this transaction's lock on ``digest``: another live item holding it."""
        if not digest:
            return None
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s::text, 0))",
            (f"{self.table}:{digest}",),
        )
        row = conn.execute(
            sql.SQL(
                "SELECT id FROM {t} WHERE hash = %s AND deleted_at IS NULL AND id <> %s LIMIT 1"
            ).format(t=self._t),
            (digest, pid),
        ).fetchone()
        return row[0] if row else None

    def put(self, pid: str, text: str, meta: dict, vectors: Vectors) -> None:
        """Insert or overwrite ``pid``; a removed item stays removed, and a text another item
        holds is recorded as a duplicate of it, not stored again."""
        meta = _stored(meta)
        values = {
            "id": pid,
            "text": to_pg(text),  # no NUL: PostgreSQL refuses it (pg_text)
            "meta": Jsonb(to_pg(meta)),
            "c": _vec(vectors[CONTENT]),
            "i": _vec(vectors[INTENT]),
            "w": self.writer,
        }
        with self._session() as conn, conn.transaction():
            holder = self._holder(conn, meta.get("hash"), pid)
            if holder is not None:
                log.info("%s: %s duplicates %s; not stored again", self.table, pid, holder)
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {t} (id, text, meta, content, intent, created_by,"
                        " updated_by, robots, deleted_by, deleted_at, duplicate_of)"
                        " VALUES (%(id)s, %(text)s, %(meta)s, %(c)s::vector, %(i)s::vector,"
                        " %(w)s, %(w)s, ARRAY[%(w)s::text], %(w)s, now(), %(holder)s)"
                        " ON CONFLICT (id) DO NOTHING"
                    ).format(t=self._t),
                    values | {"holder": holder},
                )
                return
            conn.execute(
                sql.SQL(
                    "INSERT INTO {t} AS x (id, text, meta, content, intent, created_by,"
                    " updated_by, robots) VALUES (%(id)s, %(text)s, %(meta)s, %(c)s::vector,"
                    " %(i)s::vector, %(w)s, %(w)s, ARRAY[%(w)s::text])"
                    " ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, meta = EXCLUDED.meta,"
                    " content = EXCLUDED.content, intent = EXCLUDED.intent,"
                    " version = x.version + 1, updated_by = EXCLUDED.updated_by,"
                    " updated_at = now(), robots = " + _ADD_ROBOT + " WHERE x.deleted_at IS NULL"
                ).format(t=self._t),
                values,
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Remove items, keeping a tombstone that names this robot (unknown ids: ignored)."""
        if not ids:
            return
        query = sql.SQL(
            "UPDATE {t} AS x SET deleted_at = now(), deleted_by = %(w)s, updated_by = %(w)s,"
            " version = x.version + 1, robots = " + _ADD_ROBOT + " WHERE id = ANY(%(ids)s)"
            " AND deleted_at IS NULL"
        ).format(t=self._t)
        with self._session() as conn:
            conn.execute(query, {"w": self.writer, "ids": list(ids)})

    def modify(
        self, pid: str, mutate: Mutation, embed: Callable[[str], list[float]]
    ) -> Change | None:
        """Compare-and-swap on the row's version: a write that lost the race reads again."""
        with self._lock:
            for _ in range(CAS_RETRIES):
                current = self.get([pid]).get(pid)
                if current is None:
                    return None
                old_text, old_meta = current
                change = mutate(old_text, dict(old_meta))
                if change is None:
                    return None
                new_text, new_meta = change
                vector = _vec(embed(new_text)) if new_text != old_text else None
                written = self._write_if(pid, new_text, _stored(new_meta), vector, old_meta)
                if written is DECLINED:
                    return None
                if written is not None:
                    return Change(old_text, old_meta, new_text, {**new_meta, **written})
                log.info("%s: concurrent write on %s, retrying", self.table, pid)
        raise RuntimeError(f"{self.table}: could not update {pid} after {CAS_RETRIES} tries")

    def _write_if(
        self, pid: str, text: str, meta: dict, vector: str | None, old: dict
    ) -> dict | object | None:
        """Write when the row's version is still ``old``'s: its new version and provenance;
        None when another writer got there first; DECLINED when the new text is another
        item's (a concurrent robot wrote it: the Mem0 rule "an update never duplicates")."""
        content = sql.SQL(", content = %(c)s::vector") if vector is not None else sql.SQL("")
        query = sql.SQL(
            "UPDATE {t} AS x SET text = %(text)s, meta = %(meta)s, version = x.version + 1,"
            " updated_by = %(w)s, updated_at = now(), robots = " + _ADD_ROBOT + "{content}"
            " WHERE id = %(id)s AND version = %(v)s AND deleted_at IS NULL"
            " RETURNING version, created_by, updated_by, robots"
        ).format(t=self._t, content=content)
        values = {
            "text": to_pg(text),
            "meta": Jsonb(to_pg(meta)),
            "w": self.writer,
            "c": vector,
            "id": pid,
        }
        with self._session() as conn, conn.transaction():
            if meta.get("hash") != old.get("hash") and self._holder(conn, meta.get("hash"), pid):
                log.warning("%s: update of %s would duplicate an item; kept", self.table, pid)
                return DECLINED
            row = conn.execute(query, values | {"v": old["version"]}).fetchone()
        if row is None:
            return None
        return dict(zip(("version", *PROVENANCE), row, strict=True))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _all_sql(table: str) -> sql.Composed:
    return sql.SQL(
        "SELECT " + COLUMNS + " FROM {t} WHERE deleted_at IS NULL ORDER BY created_at, id LIMIT %s"
    ).format(t=sql.Identifier(table))


def scan_pool(url: str, kind: str, limit: int = 10**9) -> list[tuple[str, str, dict]]:
    """Every item of ``kind`` in the fleet's memory (inspection: no embedder, nothing created)."""
    table = TABLE_PREFIX + kind
    with connect(url) as conn:
        try:
            if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
                return []
            return [_item(r) for r in conn.execute(_all_sql(table), (limit,)).fetchall()]
        except psycopg.OperationalError as exc:
            raise MemoryServerError(
                f"long-term memory server {server_name(url)}: {one_line(exc)}"
            ) from None
