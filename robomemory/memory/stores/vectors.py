"""Where a robot's long-term items live: a Qdrant Edge shard per robot and kind under
``data_dir/longterm/`` (default), or a collection on a Qdrant server (``qdrant_url``).

Data written by earlier versions in qdrant-client's local mode (``data_dir/qdrant/``) is copied
into the new shard, vectors and payloads unchanged, the first time the shard is created; the
old folder is left in place (delete it once the robot runs well).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

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
    """Every item of ``collection`` (inspection; no embedder): (id, text, metadata)."""
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
