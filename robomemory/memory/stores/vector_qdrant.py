"""Qdrant backend of long-term memory: one shared client per location, item collections.

Qdrant local mode (``QdrantClient(path=...)``) allows ONE client per path per process, so
clients come from a process-wide, reference-counted registry: opening the same path (or server
URL) twice returns the same client. Each collection has two named dense vectors — ``content``
(the item text, searched through ``langchain_qdrant.QdrantVectorStore``) and ``intent`` (MemRL's
z: the task the item was learned from) — and LangChain's payload layout
(``page_content`` + ``metadata``). Writes to a point are compare-and-swap on
``metadata.version`` (Qdrant's conditional upsert), so concurrent writers, even in other
processes talking to one server, never lose an update. Qdrant's local mode is not thread-safe,
so every call on a local-mode client holds that client's I/O lock (server clients need none).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient
from qdrant_client import models as qm

log = logging.getLogger(__name__)

CONTENT = "content"
INTENT = "intent"
CAS_RETRIES = 50
WRITER_LOG = 16  # recent writer tokens kept per item: tells a writer its CAS went through

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


def point_id(*parts: str) -> str:
    """A deterministic point id (re-running a write upserts the same point)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "robomemory:" + ":".join(parts)))


class QdrantItemStore:
    """One collection of memory items: search, upsert, delete, compare-and-swap updates."""

    def __init__(self, client: QdrantClient, collection: str, embedder: Embeddings):
        self.client = client
        self.collection = collection
        self.embedder = embedder
        self.io = client_io(client)
        dim = len(embedder.embed_query("dimension probe"))
        with self.io:
            self._ensure_collection(dim)
            self.vectorstore = QdrantVectorStore(
                client=client,
                collection_name=collection,
                embedding=embedder,
                vector_name=CONTENT,
                validate_collection_config=False,  # checked above
            )
        self.lock = collection_lock(client, collection)

    def _ensure_collection(self, dim: int) -> None:
        params = qm.VectorParams(size=dim, distance=qm.Distance.COSINE)
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection, vectors_config={CONTENT: params, INTENT: params}
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
    def similar(
        self, text: str, k: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, str, dict, float]]:
        """Top-k items by content similarity (langchain-qdrant): (id, text, metadata, cosine)."""
        vector = self.embedder.embed_query(text)
        with self.io:
            found = self.vectorstore.similarity_search_with_score_by_vector(
                vector, k=k, filter=_filter(where)
            )
        return [
            (str(doc.metadata["_id"]), doc.page_content, _meta(doc.metadata), score)
            for doc, score in found
        ]

    def search(
        self,
        vector: list[float],
        using: str,
        k: int,
        threshold: float | None = None,
        where: dict[str, Any] | None = None,
    ) -> list[tuple[str, str, dict, float]]:
        """Top-k by cosine on the named vector ``using``, optionally gated at ``threshold``."""
        with self.io:
            res = self.client.query_points(
                self.collection,
                query=vector,
                using=using,
                limit=k,
                score_threshold=threshold,
                query_filter=_filter(where),
                with_payload=True,
            )
        return [(str(p.id), *_unpack(p.payload), p.score) for p in res.points]

    def get(self, ids: list[str]) -> dict[str, tuple[str, dict]]:
        """Items by id: id -> (text, metadata); unknown ids are absent."""
        if not ids:
            return {}
        with self.io:
            recs = self.client.retrieve(self.collection, ids, with_payload=True)
        return {str(r.id): _unpack(r.payload) for r in recs}

    def find_hash(self, digest: str) -> str | None:
        """The id of an item whose content hash is ``digest``, if any."""
        with self.io:
            recs, _ = self.client.scroll(
                self.collection, scroll_filter=_filter({"hash": digest}), limit=1
            )
        return str(recs[0].id) if recs else None

    def all(self, limit: int = 10_000) -> list[tuple[str, str, dict]]:
        """Every item (for inspection): (id, text, metadata)."""
        return scan(self.client, self.collection, limit)

    def count(self) -> int:
        with self.io:
            return self.client.count(self.collection, exact=True).count

    # ---- writes ------------------------------------------------------------------------
    def put(self, pid: str, text: str, intent: str, metadata: dict) -> None:
        """Insert or overwrite one item with freshly embedded content and intent vectors."""
        content_vec, intent_vec = self.embedder.embed_documents([text, intent])
        meta = {**metadata, "version": int(metadata.get("version", 0)) + 1}
        point = qm.PointStruct(
            id=pid,
            vector={CONTENT: content_vec, INTENT: intent_vec},
            payload={"page_content": text, "metadata": meta},
        )
        with self.io:
            self.client.upsert(self.collection, [point])

    def delete(self, ids: list[str]) -> None:
        if ids:
            with self.io:
                self.client.delete(self.collection, qm.PointIdsList(points=ids))

    def modify(
        self, pid: str, mutate: Callable[[str, dict], tuple[str, dict] | None]
    ) -> tuple[str, dict, str, dict] | None:
        """Compare-and-swap one item: ``mutate(text, meta)`` returns the new (text, meta) or
        None to leave it. Returns (old_text, old_meta, new_text, new_meta), or None when the
        item does not exist or ``mutate`` declined. Retries when another writer got there first.
        """
        with self.lock:
            for _ in range(CAS_RETRIES):
                with self.io:
                    recs = self.client.retrieve(
                        self.collection, [pid], with_payload=True, with_vectors=True
                    )
                if not recs:
                    return None
                old_text, old_meta = _unpack(recs[0].payload)
                change = mutate(old_text, dict(old_meta))
                if change is None:
                    return None
                new_text, new_meta = change
                version = int(old_meta.get("version", 0))
                token = uuid.uuid4().hex[:16]
                writers = [*old_meta.get("writers", []), token][-WRITER_LOG:]
                new_meta = {**new_meta, "version": version + 1, "writers": writers}
                vectors = dict(recs[0].vector or {})
                if new_text != old_text:
                    vectors[CONTENT] = self.embedder.embed_query(new_text)
                point = qm.PointStruct(
                    id=pid,
                    vector=vectors,
                    payload={"page_content": new_text, "metadata": new_meta},
                )
                with self.io:  # applied only if nobody wrote since our read
                    self.client.upsert(
                        self.collection,
                        [point],
                        update_filter=_filter({"version": version}),
                        update_mode=qm.UpdateMode.UPDATE_ONLY,
                    )
                check = self.get([pid]).get(pid)
                if check and token in check[1].get("writers", []):  # ours applied
                    return old_text, old_meta, new_text, new_meta
                log.info("%s: concurrent write on %s, retrying", self.collection, pid)
        raise RuntimeError(f"{self.collection}: could not update {pid} after {CAS_RETRIES} tries")


def scan(client: QdrantClient, collection: str, limit: int = 10_000) -> list[tuple[str, str, dict]]:
    """Every item of ``collection`` as (id, text, metadata); empty when it does not exist.
    Needs no embedder (inspection reads stores without loading a model)."""
    io = client_io(client)
    with io:
        if not client.collection_exists(collection):
            return []
    out: list[tuple[str, str, dict]] = []
    offset = None
    while len(out) < limit:
        with io:
            recs, offset = client.scroll(
                collection, limit=min(256, limit - len(out)), offset=offset
            )
        out += [(str(r.id), *_unpack(r.payload)) for r in recs]
        if offset is None:
            break
    return out


def _unpack(payload: dict | None) -> tuple[str, dict]:
    payload = payload or {}
    return str(payload.get("page_content", "")), dict(payload.get("metadata") or {})


def _meta(metadata: dict) -> dict:
    return {k: v for k, v in metadata.items() if k not in ("_id", "_collection_name")}


def _filter(where: dict[str, Any] | None) -> qm.Filter | None:
    if not where:
        return None
    return qm.Filter(
        must=[
            qm.FieldCondition(key=f"metadata.{k}", match=qm.MatchValue(value=v))
            for k, v in where.items()
        ]
    )
