"""Qdrant Edge backend of long-term memory: one in-process shard per robot and kind.

Qdrant Edge (``qdrant-edge-py``, pinned: it is pre-1.0) is the Rust engine in process: HNSW and
payload indexes, a write-ahead log, no server. A shard directory is owned by one process at a
time (its WAL is locked), so shards come from a process-wide, reference-counted registry:
opening the same path twice in a process returns the same shard, and a second process gets
``StoreInUse`` with one clear line. Separate robots have separate shards, so they run at once.

Searches filter on keyword indexes (``metadata.level``, ``metadata.hash``) inside the engine
and run as one ``query_batch`` per call: no per-point Python filtering, no exact count.
"""

from __future__ import annotations

import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import qdrant_edge as qe

from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.stores.vector_store import (
    CONTENT,
    INDEXED,
    INTENT,
    Change,
    Hit,
    Mutation,
    Search,
    Vectors,
    cas_modify,
    check_where,
    payload,
    unpack,
)

log = logging.getLogger(__name__)

PAGE = 256
Seed = Callable[[], Iterable[tuple[str, str, dict, Vectors]]]

_registry_lock = threading.Lock()
_shards: dict[str, tuple[qe.EdgeShard, int]] = {}
_store_locks: dict[str, threading.Lock] = {}


class StoreInUse(RuntimeError):
    """The shard is held by another process (the same robot is already running)."""


SEARCH_THREADS = 1  # a robot's shard is small: one search thread, no pool per CPU per shard


def _config(dim: int) -> qe.EdgeConfig:
    params = qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)
    return qe.EdgeConfig(
        vectors={CONTENT: params, INTENT: params}, max_search_threads=SEARCH_THREADS
    )


def _open(path: Path, dim: int | None, seed: Seed | None) -> qe.EdgeShard:
    config = _config(dim) if dim is not None else None
    loading = path.is_dir() and any(path.iterdir())
    try:
        if loading:
            return qe.EdgeShard.load(str(path), config)
        if config is None:
            raise FileNotFoundError(f"no long-term store at {path}")
        return _create(path, config, seed)
    except Exception as exc:  # the engine raises bare Exception; name the cause
        text = str(exc)
        if "WouldBlock" in text:
            raise StoreInUse(
                f"long-term store {path} is open in another process (is this robot already "
                "running?)"
            ) from exc
        if "ncompatible" in text or "dimension" in text.lower():
            raise ValueError(f"long-term store {path} does not fit this embedder: {text}") from exc
        if not loading:
            raise
        raise DamagedStoreError(
            f"long-term store {path} cannot be opened ({' '.join(text.split())[:200]}): "
            "restore the folder from "
            "a backup; to start this memory over, move the folder and the history database aside"
        ) from exc


def _create(path: Path, config: qe.EdgeConfig, seed: Seed | None) -> qe.EdgeShard:
    """A new shard with its payload indexes, filled from ``seed`` (a migration) in a side
    directory first, then moved into place: a crash leaves either no shard or a whole one."""
    tmp = path.with_name(path.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    shard = qe.EdgeShard.create(str(tmp), config)
    for field in INDEXED:
        shard.update(
            qe.UpdateOperation.create_field_index(f"metadata.{field}", qe.PayloadSchemaType.Keyword)
        )
    if seed is not None:
        batch: list[qe.Point] = []
        for pid, text, meta, vectors in seed():
            batch.append(qe.Point(pid, vectors, payload(text, meta)))
            if len(batch) >= PAGE:
                shard.update(qe.UpdateOperation.upsert_points(batch))
                batch = []
        if batch:
            shard.update(qe.UpdateOperation.upsert_points(batch))
    shard.flush()
    shard.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.rmdir()  # an empty directory left by hand
    tmp.rename(path)
    return qe.EdgeShard.load(str(path), config)


def acquire_shard(path: Path, dim: int | None, seed: Seed | None = None) -> qe.EdgeShard:
    """The process-wide shard at ``path`` (created, and seeded once, when absent; ``dim``
    None opens an existing shard as it is)."""
    key = str(Path(path).resolve())
    with _registry_lock:
        if key in _shards:
            shard, refs = _shards[key]
            _shards[key] = (shard, refs + 1)
            return shard
        shard = _open(Path(path), dim, seed)
        _shards[key] = (shard, 1)
        _store_locks.setdefault(key, threading.Lock())
        return shard


def release_shard(shard: qe.EdgeShard) -> None:
    """Drop one reference; the last holder flushes and closes the shard."""
    with _registry_lock:
        for key, (held, refs) in list(_shards.items()):
            if held is shard:
                if refs > 1:
                    _shards[key] = (held, refs - 1)
                else:
                    del _shards[key]
                    held.flush()
                    held.close()
                return


def _ids(ids: Sequence[str]) -> list[str]:
    """The ids that can name a point (UUIDs); anything else names no item here."""
    out = []
    for pid in ids:
        try:
            out.append(str(uuid.UUID(str(pid))))
        except ValueError:
            continue
    return out


def _filter(where: dict | None) -> qe.Filter | None:
    if not where:
        return None
    return qe.Filter(
        must=[qe.FieldCondition(f"metadata.{k}", match=qe.MatchValue(v)) for k, v in where.items()]
    )


class EdgeItemStore:
    """One robot's semantic or episodic items in their own Qdrant Edge shard."""

    def __init__(self, path: Path, collection: str, dim: int | None, seed: Seed | None = None):
        self.path = Path(path)
        self.collection = collection
        self.shard = acquire_shard(self.path, dim, seed)
        self.lock = _store_locks[str(self.path.resolve())]
        self._closed = False

    def search(self, requests: Sequence[Search]) -> list[list[Hit]]:
        if not requests:
            return []
        for r in requests:
            check_where(r.where)
        batch = qe.QueryBatchRequest(
            [
                qe.QueryRequest(
                    limit=r.k,
                    query=qe.Query.Nearest(r.vector, using=r.using),
                    filter=_filter(r.where),
                    score_threshold=r.threshold,
                    with_payload=True,
                )
                for r in requests
            ]
        )
        return [
            [Hit(str(p.id), *unpack(p.payload), p.score) for p in found]
            for found in self.shard.query_batch(batch)
        ]

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        ids = _ids(ids)
        if not ids:
            return {}
        return {str(r.id): unpack(r.payload) for r in self.shard.retrieve(ids, True, False)}

    def find_hash(self, digest: str) -> str | None:
        recs, _ = self.shard.scroll(
            qe.ScrollRequest(limit=1, filter=_filter({"hash": digest}), with_payload=False)
        )
        return str(recs[0].id) if recs else None

    def all(self, limit: int = 10_000) -> list[tuple[str, str, dict]]:
        out: list[tuple[str, str, dict]] = []
        offset = None
        while len(out) < limit:
            recs, offset = self.shard.scroll(
                qe.ScrollRequest(
                    offset=offset, limit=min(PAGE, limit - len(out)), with_payload=True
                )
            )
            out += [(str(r.id), *unpack(r.payload)) for r in recs]
            if offset is None:
                break
        return out

    def vectors_of(self, ids: Sequence[str]) -> dict[str, tuple[str, dict, Vectors]]:
        """Items with their vectors (migration and snapshots)."""
        ids = _ids(ids)
        recs = self.shard.retrieve(ids, True, True) if ids else []
        return {str(r.id): (*unpack(r.payload), dict(r.vector or {})) for r in recs}

    def put(self, pid: str, text: str, meta: dict, vectors: Vectors) -> None:
        meta = {**meta, "version": int(meta.get("version", 0)) + 1}
        self.shard.update(
            qe.UpdateOperation.upsert_points([qe.Point(pid, vectors, payload(text, meta))])
        )

    def delete(self, ids: Sequence[str]) -> None:
        ids = _ids(ids)
        if ids:
            self.shard.update(qe.UpdateOperation.delete_points(ids))

    def modify(
        self, pid: str, mutate: Mutation, embed: Callable[[str], list[float]]
    ) -> Change | None:
        return cas_modify(
            self.collection, pid, mutate, embed, self._read, self._write_if, self.lock
        )

    def _read(self, pid: str) -> tuple[str, dict, Vectors] | None:
        return self.vectors_of([pid]).get(pid)

    def _write_if(self, pid: str, vectors: Vectors, data: dict, version: int) -> None:
        self.shard.update(
            qe.UpdateOperation.upsert_points(
                [qe.Point(pid, vectors, data)],
                condition=qe.Filter(
                    must=[qe.FieldCondition("metadata.version", match=qe.MatchValue(version))]
                ),
                update_mode=qe.UpdateMode.UpdateOnly,
            )
        )

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            release_shard(self.shard)
