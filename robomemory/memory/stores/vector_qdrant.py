"""Qdrant server backend of long-term memory (qdrant-client): the fleet's scale-out.

Robots of a fleet share one Qdrant server, one collection per kind and robot. Clients come from
a process-wide, reference-counted registry keyed by URL (or by path for qdrant-client's local
mode, which only reads the old on-disk layout for migration and stands in for a server in
tests: it allows one client per path per process and is not thread-safe, so every call on a
local-mode client holds that client's I/O lock). Writes to a point are compare-and-swap on
``metadata.version`` (Qdrant's conditional upsert), so writers in other processes talking to
one server never lose an update.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from qdrant_client import QdrantClient
from qdrant_client import models as qm

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

PAGE = 256

_registry_lock = threading.Lock()
_clients: dict[str, tuple[QdrantClient, int]] = {}
_io_locks: dict[int, threading.RLock] = {}
_collection_locks: dict[tuple[str, str], threading.Lock] = {}


def _key(path: Path | None, url: str | None) -> str:
    if url:
        return f"url:{url}"
    if path is None:
        raise ValueError("a Qdrant location needs a path or a url")
    return f"path:{Path(path).resolve()}"


def acquire_client(path: Path | None = None, url: str | None = None) -> QdrantClient:
    """The process-wide client for ``url`` (a server) or ``path`` (local mode on disk)."""
    key = _key(path, url)
    with _registry_lock:
        if key in _clients:
            client, refs = _clients[key]
            _clients[key] = (client, refs + 1)
            return client
        if url:
            client = QdrantClient(url=url)
        else:
            Path(path).mkdir(parents=True, exist_ok=True)  # type: ignore[arg-type]
            client = QdrantClient(path=str(path))
            _io_locks[id(client)] = threading.RLock()
        _clients[key] = (client, 1)
        return client


def release_client(client: QdrantClient) -> None:
    """Drop one reference; the client is closed when the last holder releases it."""
    with _registry_lock:
        for key, (held, refs) in list(_clients.items()):
            if held is client:
                if refs > 1:
                    _clients[key] = (held, refs - 1)
                else:
                    del _clients[key]
                    with _io_locks.pop(id(client), nullcontext()):
                        client.close()
                return


def collection_lock(client: QdrantClient, collection: str) -> threading.Lock:
    """The in-process lock serializing read-modify-writes of one collection."""
    with _registry_lock:
        return _collection_locks.setdefault((str(id(client)), collection), threading.Lock())


def client_io(client: QdrantClient) -> AbstractContextManager:
    """The lock every call on a local-mode client must hold (a no-op for a server client)."""
    with _registry_lock:
        return _io_locks.get(id(client)) or nullcontext()


def _filter(where: dict | None) -> qm.Filter | None:
    if not where:
        return None
    return qm.Filter(
        must=[
            qm.FieldCondition(key=f"metadata.{k}", match=qm.MatchValue(value=v))
            for k, v in where.items()
        ]
    )


class QdrantItemStore:
    """One collection of memory items on a Qdrant server (or a local-mode client)."""

    def __init__(self, client: QdrantClient, collection: str, dim: int):
        self.client = client
        self.collection = collection
        self.io = client_io(client)
        with self.io:
            self._ensure_collection(dim)
        self.lock = collection_lock(client, collection)

    def _ensure_collection(self, dim: int) -> None:
        params = qm.VectorParams(size=dim, distance=qm.Distance.COSINE)
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection, vectors_config={CONTENT: params, INTENT: params}
            )
            with warnings.catch_warnings():  # local mode (tests) warns that it has no indexes
                warnings.simplefilter("ignore", UserWarning)
                for field in INDEXED:
                    self.client.create_payload_index(
                        self.collection, f"metadata.{field}", qm.PayloadSchemaType.KEYWORD
                    )
            return
        vectors = self.client.get_collection(self.collection).config.params.vectors
        for name in (CONTENT, INTENT):
            have = vectors.get(name) if isinstance(vectors, dict) else None
            if have is None or have.size != dim or have.distance != qm.Distance.COSINE:
                raise ValueError(
                    f"collection {self.collection!r} does not fit this embedder: needs cosine "
                    f"vectors {CONTENT!r} and {INTENT!r} of size {dim}, has {vectors}"
                )

    # ---- reads -------------------------------------------------------------------------
    def search(self, requests: Sequence[Search]) -> list[list[Hit]]:
        if not requests:
            return []
        for r in requests:
            check_where(r.where)
        batch = [
            qm.QueryRequest(
                query=r.vector,
                using=r.using,
                limit=r.k,
                score_threshold=r.threshold,
                filter=_filter(r.where),
                with_payload=True,
            )
            for r in requests
        ]
        with self.io:
            res = self.client.query_batch_points(self.collection, batch)
        return [[Hit(str(p.id), *unpack(p.payload), p.score) for p in r.points] for r in res]

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        if not ids:
            return {}
        with self.io:
            recs = self.client.retrieve(self.collection, list(ids), with_payload=True)
        return {str(r.id): unpack(r.payload) for r in recs}

    def find_hash(self, digest: str) -> str | None:
        with self.io:
            recs, _ = self.client.scroll(
                self.collection, scroll_filter=_filter({"hash": digest}), limit=1
            )
        return str(recs[0].id) if recs else None

    def all(self, limit: int = 10_000) -> list[tuple[str, str, dict]]:
        return [
            (pid, text, meta) for pid, text, meta, _ in scan(self.client, self.collection, limit)
        ]

    # ---- writes ------------------------------------------------------------------------
    def put(self, pid: str, text: str, meta: dict, vectors: Vectors) -> None:
        meta = {**meta, "version": int(meta.get("version", 0)) + 1}
        point = qm.PointStruct(id=pid, vector=vectors, payload=payload(text, meta))
        with self.io:
            self.client.upsert(self.collection, [point])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self.io:
                self.client.delete(self.collection, qm.PointIdsList(points=list(ids)))

    def modify(
        self, pid: str, mutate: Mutation, embed: Callable[[str], list[float]]
    ) -> Change | None:
        return cas_modify(
            self.collection, pid, mutate, embed, self._read, self._write_if, self.lock
        )

    def _read(self, pid: str) -> tuple[str, dict, Vectors] | None:
        with self.io:
            recs = self.client.retrieve(
                self.collection, [pid], with_payload=True, with_vectors=True
            )
        if not recs:
            return None
        return (*unpack(recs[0].payload), dict(recs[0].vector or {}))  # type: ignore[arg-type]

    def _write_if(self, pid: str, vectors: Vectors, data: dict, version: int) -> None:
        with self.io:  # applied only if nobody wrote since our read
            self.client.upsert(
                self.collection,
                [qm.PointStruct(id=pid, vector=vectors, payload=data)],
                update_filter=_filter({"version": version}),
                update_mode=qm.UpdateMode.UPDATE_ONLY,
            )

    def close(self) -> None:
        """The client belongs to the registry (``release_client``)."""


def scan(
    client: QdrantClient, collection: str, limit: int = 10_000, with_vectors: bool = False
) -> list[tuple[str, str, dict, Vectors]]:
    """Every item of ``collection`` as (id, text, metadata, vectors — empty unless asked);
    empty when it does not exist. Needs no embedder."""
    io = client_io(client)
    with io:
        if not client.collection_exists(collection):
            return []
    out: list[tuple[str, str, dict, Vectors]] = []
    offset = None
    while len(out) < limit:
        with io:
            recs, offset = client.scroll(
                collection,
                limit=min(PAGE, limit - len(out)),
                offset=offset,
                with_vectors=with_vectors,
            )
        out += [(str(r.id), *unpack(r.payload), dict(r.vector or {})) for r in recs]  # type: ignore[arg-type]
        if offset is None:
            break
    return out
