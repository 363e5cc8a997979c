"""The vector-store protocol of long-term memory, and what every backend shares.

A store holds one collection of memory items. Each item is a point with two named cosine
vectors — ``content`` (the item text) and ``intent`` (MemRL's z: the task it was learned from)
— and LangChain's payload layout (``page_content`` + ``metadata``). Stores take vectors, never
text to embed: the caller embeds once and shares the vectors (see ``embedding_cache``).

Backends: ``vector_edge.EdgeItemStore`` (Qdrant Edge, in process, one shard per robot and
kind: the default), ``vector_qdrant.QdrantItemStore`` (a Qdrant server through
qdrant-client, a collection per robot) and ``vector_pg.PgItemStore`` (PostgreSQL + pgvector:
one memory a fleet shares, a :class:`SharedStore`). Writes to an item are compare-and-swap on
``metadata.version`` (``cas_modify``), so concurrent writers never lose an update.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)

CONTENT = "content"
INTENT = "intent"
INDEXED = ("level", "hash")  # metadata fields with a keyword payload index
CAS_RETRIES = 50
WRITER_LOG = 16  # recent writer tokens kept per item: tells a writer its CAS went through

Vectors = dict[str, list[float]]
Mutation = Callable[[str, dict], tuple[str, dict] | None]


@dataclass(frozen=True)
class Search:
    """One top-k search: cosine on the named vector ``using``, gated at ``threshold``,
    restricted to items whose metadata equals ``where`` (indexed fields only)."""

    vector: list[float]
    using: str
    k: int
    threshold: float | None = None
    where: dict[str, Any] | None = None


@dataclass(frozen=True)
class Hit:
    id: str
    text: str
    meta: dict
    score: float


@dataclass(frozen=True)
class Change:
    """What ``modify`` did: the item before and after."""

    old_text: str
    old_meta: dict
    new_text: str
    new_meta: dict


class VectorStore(Protocol):
    """One collection of long-term memory items."""

    collection: str

    def search(self, requests: Sequence[Search]) -> list[list[Hit]]:
        """Run the searches as one batch; results in request order, best first."""
        ...

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        """Items by id: id -> (text, metadata); unknown ids are absent."""
        ...

    def find_hash(self, digest: str) -> str | None:
        """The id of an item whose ``metadata.hash`` is ``digest``, if any."""
        ...

    def all(self, limit: int = 10_000) -> list[tuple[str, str, dict]]:
        """Every item (inspection): (id, text, metadata)."""
        ...

    def put(self, pid: str, text: str, meta: dict, vectors: Vectors) -> None:
        """Insert or overwrite one item (idempotent: the same call twice leaves one item)."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove items (unknown ids are ignored)."""
        ...

    def modify(
        self, pid: str, mutate: Mutation, embed: Callable[[str], list[float]]
    ) -> Change | None:
        """Compare-and-swap one item: ``mutate(text, meta)`` returns the new (text, meta) or None
        to leave it; a changed text is re-embedded with ``embed``. None when the item does not
        exist or ``mutate`` declined."""
        ...

    def close(self) -> None: ...


class MemoryServerError(RuntimeError):
    """The long-term memory's server cannot be reached or did not answer in time (one line)."""


@runtime_checkable
class SharedStore(Protocol):
    """A store other robots write too: ``writer`` is this robot; items another robot removed
    are still ``accounted`` for, so a robot's own history can tell removed from lost."""

    writer: str

    def accounted(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` held, or removed by a recorded delete (of any robot)."""
        ...


def point_id(*parts: str) -> str:
    """A deterministic point id (re-running a write upserts the same point)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "robomemory:" + ":".join(parts)))


def payload(text: str, meta: dict) -> dict:
    return {"page_content": text, "metadata": meta}


def unpack(data: dict | None) -> tuple[str, dict]:
    data = data or {}
    return str(data.get("page_content", "")), dict(data.get("metadata") or {})


def check_where(where: dict[str, Any] | None) -> None:
    """Filters run on payload indexes only: an unindexed field is a bug, not a slow path."""
    for key in where or {}:
        if key not in INDEXED:
            raise ValueError(f"filter on unindexed field {key!r}; indexed: {', '.join(INDEXED)}")


def cas_modify(
    collection: str,
    pid: str,
    mutate: Mutation,
    embed: Callable[[str], list[float]],
    read: Callable[[str], tuple[str, dict, Vectors] | None],
    write_if: Callable[[str, Vectors, dict, int], None],
    lock: threading.Lock,
) -> Change | None:
    """The compare-and-swap loop both backends share: ``read(pid)`` gives (text, meta,
    vectors); ``write_if(pid, vectors, payload, version)`` writes only when the stored
    ``metadata.version`` still equals ``version``. A writer token in the payload tells whether
    our write went through; otherwise another writer got there first and we retry."""
    with lock:
        for _ in range(CAS_RETRIES):
            current = read(pid)
            if current is None:
                return None
            old_text, old_meta, vectors = current
            change = mutate(old_text, dict(old_meta))
            if change is None:
                return None
            new_text, new_meta = change
            version = int(old_meta.get("version", 0))
            token = uuid.uuid4().hex[:16]
            writers = [*old_meta.get("writers", []), token][-WRITER_LOG:]
            new_meta = {**new_meta, "version": version + 1, "writers": writers}
            if new_text != old_text:
                vectors = {**vectors, CONTENT: embed(new_text)}
            write_if(pid, vectors, payload(new_text, new_meta), version)
            check = read(pid)
            if check is not None and token in check[1].get("writers", []):  # ours applied
                return Change(old_text, old_meta, new_text, new_meta)
            log.info("%s: concurrent write on %s, retrying", collection, pid)
    raise RuntimeError(f"{collection}: could not update {pid} after {CAS_RETRIES} tries")
