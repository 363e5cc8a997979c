"""Learned effects in semantic memory: one item per (world kind, verb, kind of thing), its text
the effect in one line and its metadata the atoms, the evidence and the task it came from.

The items have level ``effect``: MemRL retrieval (levels action, verdict, task) and the Mem0
updater never see them. Their ids are fixed by what they are about, so a task's start reads
its world's by id (no search), and a task's end merges its observations into them; an item
remembers the episodes merged into it, so a consolidation run again adds nothing twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from robomemory.action_model import ANY_KIND, ObservedEffect, merge
from robomemory.core import ActionSpace
from robomemory.memory.longterm import LongTermMemory
from robomemory.memory.mem0 import content_hash
from robomemory.memory.stores.vector_store import CONTENT, INTENT, point_id

LEVEL = "effect"
MAX_EPISODES = 16  # episodes an item remembers having merged


def item_id(collection: str, world: str, verb: str, kind: str) -> str:
    """The id of the item of ``verb`` on ``kind`` in worlds of kind ``world``."""
    return point_id(collection, LEVEL, world, verb, kind)


def effect_text(world: str, effect: ObservedEffect) -> str:
    """The item's text: the effect in one line, with the world kind it holds in."""
    return f"In worlds {world}, {effect.describe()}"


def space_kinds(space: ActionSpace) -> list[str]:
    """The kinds a thing of ``space`` may be of: its target kinds, its verbs' argument kinds
    and the kind of a thing it names no kind for."""
    kinds = [*space.targets, *(k for v in space.verbs for k in v.arg_kinds), ANY_KIND]
    return list(dict.fromkeys(kinds))


def recall_effects(memory: LongTermMemory, world: str, space: ActionSpace) -> list[ObservedEffect]:
    """The effects learned in worlds of kind ``world`` of the verbs of ``space``."""
    ids = {
        item_id(memory.collection, world, v.name, kind): v.name
        for v in space.verbs
        for kind in space_kinds(space)
    }
    found = memory.store.get(list(ids))
    return [
        ObservedEffect.from_json(meta)
        for _text, meta in found.values()
        if meta.get("level") == LEVEL and meta.get("world") == world
    ]


def _meta(
    world: str, effect: ObservedEffect, text: str, task: str, episodes: Sequence[str]
) -> dict:
    return {
        **effect.to_json(),
        "level": LEVEL,
        "world": world,
        "task": task,
        "episode_id": episodes[-1],
        "episodes": list(episodes)[-MAX_EPISODES:],
        "hash": content_hash(text),
    }


def store_effects(
    memory: LongTermMemory,
    world: str,
    observed: Iterable[ObservedEffect],
    *,
    task: str,
    episode_id: str,
) -> int:
    """Merge one task's observed effects into the items of ``world``; return how many items
    were written (an episode already merged into an item is not merged again)."""
    written = 0
    for effect in merge(observed):
        pid = item_id(memory.collection, world, effect.verb, effect.kind)
        op_key = f"{memory.collection}:{episode_id}:{LEVEL}:{pid}"
        held = memory.store.get([pid]).get(pid)
        if held is None:
            text = effect_text(world, effect)
            meta = _meta(world, effect, text, task, [episode_id])
            meta |= {"q": memory.cfg.utility.q_init, "visits": 0, "created": time.time()}
            content_vec, intent_vec = memory.embedder.embed_documents([text, task])
            memory.store.put(pid, text, meta, {CONTENT: content_vec, INTENT: intent_vec})
            memory.history.record(
                memory.collection, pid, "ADD", new_text=text, episode_id=episode_id, op_key=op_key
            )
            written += 1
            continue
        old_text, old_meta = held
        if episode_id in (old_meta.get("episodes") or ()):
            continue

        def mutate(text: str, meta: dict, effect: ObservedEffect = effect):
            episodes = list(meta.get("episodes") or ())
            if episode_id in episodes:  # another writer merged it meanwhile
                return None
            (both,) = merge([ObservedEffect.from_json(meta), effect])
            new_text = effect_text(world, both)
            new_meta = _meta(world, both, new_text, task, [*episodes, episode_id])
            return new_text, {**meta, **new_meta, "updated": time.time()}

        change = memory.store.modify(pid, mutate, memory.embedder.embed_query)
        if change is None:
            continue
        memory.history.record(
            memory.collection,
            pid,
            "UPDATE",
            old_text=old_text,
            new_text=change.new_text,
            episode_id=episode_id,
            op_key=op_key,
        )
        written += 1
    return written
