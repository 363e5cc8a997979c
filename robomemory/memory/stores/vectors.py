"""Where a robot's long-term items live: a Qdrant Edge shard per robot and kind under
``data_dir/longterm/`` (default), a collection on a Qdrant server (``qdrant_url``), or the
fleet's shared PostgreSQL + pgvector memory (``memory_url`` / ``$ROBOMEMORY_MEMORY_URL``).

Data written by earlier versions in qdrant-client's local mode (``data_dir/qdrant/``) is copied
into the new shard, vectors and payloads unchanged, the first time the shard is created; the
old folder is left in place (delete it once the robot runs well).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from robomemory.config import LongTermConfig
from robomemory.memory.stores.vector_edge import EdgeItemStore
from robomemory.memory.stores.vector_qdrant import (
    QdrantItemStore,
    acquire_client,
    release_client,
    scan,
)
from robomemory.memory.stores.vector_store import Vectors, VectorStore

LEGACY_DIR = "qdrant"
EDGE_DIR = "longterm"
MEMORY_URL_ENV = "ROBOMEMORY_MEMORY_URL"


class ServerItemStore(QdrantItemStore):
    """A server collection that releases its registry client on close."""

    def close(self) -> None:
        release_client(self.client)


def open_vector_store(
    data_dir: Path, collection: str, dim: int, url: str | None = None
) -> VectorStore:
    """The store of ``collection``: on the server at ``url``, else its Edge shard."""
    if url:
        client = acquire_client(url=url)
        try:
            return ServerItemStore(client, collection, dim)
        except BaseException:
            release_client(client)
            raise
    data_dir = Path(data_dir)
    return EdgeItemStore(
        data_dir / EDGE_DIR / collection,
        collection,
        dim,
        seed=lambda: legacy_items(data_dir, collection),
    )


def shared_url(lt: LongTermConfig) -> str | None:
    """The fleet's long-term memory URL: ``lt.memory_url``, else ``$ROBOMEMORY_MEMORY_URL``;
    None when the robot keeps its own."""
    url = lt.memory_url or os.environ.get(MEMORY_URL_ENV, "").strip() or None
    if url and lt.qdrant_url:
        raise ValueError(
            "long-term memory: set either longterm.qdrant_url or a shared postgresql:// "
            f"memory URL (longterm.memory_url / ${MEMORY_URL_ENV}), not both"
        )
    return url


def open_shared_store(url: str, kind: str, robot_id: str, collection: str, dim: int) -> VectorStore:
    """``kind``'s memory in the fleet's PostgreSQL, written as ``robot_id``."""
    try:
        from robomemory.memory.stores.vector_pg import PgItemStore
    except ImportError as exc:  # an optional extra
        raise ValueError(
            "a postgresql:// long-term memory needs the postgres extra: "
            "pip install -e '.[postgres]'"
        ) from exc
    return PgItemStore(url, kind, robot_id, collection, dim)


def legacy_items(data_dir: Path, collection: str) -> Iterable[tuple[str, str, dict, Vectors]]:
    """The items of ``collection`` in the old local-mode folder, with their vectors."""
    legacy = Path(data_dir) / LEGACY_DIR
    if not (legacy / "collection" / collection).is_dir():
        return []
    client = acquire_client(path=legacy)
    try:
        return scan(client, collection, limit=10**9, with_vectors=True)
    finally:
        release_client(client)


def scan_items(
    data_dir: Path, collection: str, url: str | None = None
) -> list[tuple[str, str, dict]]:
    """Every item of ``collection`` (inspection; no embedder): (id, text, metadata). A
    ``postgresql://`` ``url``: every item of the fleet's memory of that kind."""
    if url and url.startswith(("postgresql://", "postgres://")):
        from robomemory.memory.stores.vector_pg import scan_pool

        return scan_pool(url, collection.partition("_")[0])
    if url:
        client = acquire_client(url=url)
        try:
            return [(p, t, m) for p, t, m, _ in scan(client, collection)]
        finally:
            release_client(client)
    path = Path(data_dir) / EDGE_DIR / collection
    if not path.is_dir():
        return [(p, t, m) for p, t, m, _ in legacy_items(data_dir, collection)]
    store = EdgeItemStore(path, collection, dim=None)
    try:
        return store.all(limit=10**9)
    finally:
        store.close()
