"""Long-term memory as a LangGraph ``BaseStore``, so Studio and the LangGraph API can read it.

Namespaces are ``("robomemory", robot_id, "semantic" | "episodic")``; a key is an item's id and
its value the item's text with its metadata (level, Q, visits, task, episode). Reads go to the
robots' own vector stores (the shards the agent writes, never a copy); a query embeds with the
robot's shared embedder and searches the item texts. Writes are refused: long-term memory
changes only through consolidation (Mem0 updates, MemRL Q), which keeps history and journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from robomemory.memory.longterm import LongTermMemory
from robomemory.memory.stores.vector_store import CONTENT, INDEXED, Search
from robomemory.memory.system import MemorySystem

ROOT = "robomemory"
HIDDEN = frozenset({"writers"})  # compare-and-swap bookkeeping, not the item's content

Memories = Callable[[], Sequence[MemorySystem]]


class ReadOnlyStoreError(ValueError):
    """A write through the Store API: long-term memory is written by consolidation only."""


class LongTermStore(BaseStore):
    """Read-only ``BaseStore`` over robots' semantic and episodic memories (same stores)."""

    def __init__(self, memories: Memories | Sequence[MemorySystem] | MemorySystem):
        if isinstance(memories, MemorySystem):
            memories = [memories]
        if not callable(memories):
            fixed = list(memories)

            def memories() -> list[MemorySystem]:
                return fixed

        self._memories: Memories = memories

    # ---- namespaces --------------------------------------------------------------------
    def _modules(self) -> dict[tuple[str, ...], LongTermMemory]:
        """Each switched-on long-term module by its namespace."""
        out: dict[tuple[str, ...], LongTermMemory] = {}
        for system in self._memories():
            for module in system.longterm():
                out[(ROOT, system.robot_id, module.kind)] = module
        return out

    # ---- BaseStore ---------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer GetOp, SearchOp and ListNamespacesOp in order; a PutOp is refused."""
        modules = self._modules()
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(_get(modules, op))
            elif isinstance(op, SearchOp):
                results.append(_search(modules, op))
            elif isinstance(op, ListNamespacesOp):
                results.append(_list_namespaces(list(modules), op))
            elif isinstance(op, PutOp):
                raise ReadOnlyStoreError(
                    f"cannot write {op.namespace}/{op.key}: robomemory's long-term memory "
                    "changes only through consolidation (Mem0 updates keep its history)"
                )
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on a worker thread: the vector stores block (a server's loop must not)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))


def _stamp(meta: dict, key: str, fallback: float = 0.0) -> datetime:
    return datetime.fromtimestamp(float(meta.get(key) or fallback), tz=UTC)


def _value(text: str, meta: dict) -> dict[str, Any]:
    return {"text": text, **{k: v for k, v in meta.items() if k not in HIDDEN}}


def _item(namespace: tuple[str, ...], key: str, text: str, meta: dict) -> Item:
    created = _stamp(meta, "created")
    return Item(
        value=_value(text, meta),
        key=key,
        namespace=namespace,
        created_at=created,
        updated_at=_stamp(meta, "updated", created.timestamp()),
    )


def _get(modules: dict[tuple[str, ...], LongTermMemory], op: GetOp) -> Item | None:
    module = modules.get(tuple(op.namespace))
    if module is None:
        return None
    found = module.store.get([op.key]).get(op.key)
    return None if found is None else _item(tuple(op.namespace), op.key, *found)


def _matches(value: dict[str, Any], flt: dict[str, Any]) -> bool:
    for key, wanted in flt.items():
        if isinstance(wanted, dict):
            raise ValueError(f"filter on {key!r}: only equality is supported, not {wanted}")
        if value.get(key) != wanted:
            return False
    return True


def _search(modules: dict[tuple[str, ...], LongTermMemory], op: SearchOp) -> list[SearchItem]:
    prefix = tuple(op.namespace_prefix)
    flt = dict(op.filter or {})
    found: list[SearchItem] = []
    for namespace, module in modules.items():
        if namespace[: len(prefix)] != prefix:
            continue
        if op.query:
            where = {k: v for k, v in flt.items() if k in INDEXED and not isinstance(v, dict)}
            vector = module.embedder.embed_query(op.query)
            request = Search(vector, CONTENT, op.offset + op.limit, where=where or None)
            rows = [(h.id, h.text, h.meta, h.score) for h in module.store.search([request])[0]]
        else:
            rows = [(pid, text, meta, None) for pid, text, meta in module.store.all()]
        for pid, text, meta, score in rows:
            item = _item(namespace, pid, text, meta)
            if _matches(item.value, flt):
                found.append(
                    SearchItem(namespace, pid, item.value, item.created_at, item.updated_at, score)
                )
    if op.query:
        found.sort(key=lambda i: i.score or 0.0, reverse=True)
    else:
        found.sort(key=lambda i: (i.updated_at, i.key), reverse=True)
    return found[op.offset : op.offset + op.limit]


def _fits(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True)) if path else True


def _list_namespaces(
    namespaces: list[tuple[str, ...]], op: ListNamespacesOp
) -> list[tuple[str, ...]]:
    chosen = [ns for ns in namespaces if all(_fits(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        chosen = [ns[: op.max_depth] for ns in chosen]
    unique = sorted(set(chosen))
    return unique[op.offset : op.offset + op.limit]
