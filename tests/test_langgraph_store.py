"""Long-term memory read through LangGraph's BaseStore API: the same REAL Qdrant Edge shards
the agent writes (not a copy), namespaces per robot and kind; writes refused."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import BaseStore

from robomemory.config import MemoryConfig
from robomemory.memory.langgraph_store import LongTermStore, ReadOnlyStoreError
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel


def _cfg(tmp_path) -> MemoryConfig:
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    return cfg


def _add(system: MemorySystem, kind: str, text: str, level: str | None, episode: str) -> str:
    """An item added the agent's way (Mem0 update; the first of a kind needs no model)."""
    llm = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {})).for_node("t")
    module = getattr(system, kind)
    result = module.update(
        NewItem(text, level), idx=0, task="cook a meal", episode_id=episode, llm=llm
    )
    assert result["event"] == "ADD", result
    return result["item_id"]


@pytest.fixture
def robots(tmp_path):
    emb = DeterministicFakeEmbedding(size=32)
    a = MemorySystem.open(_cfg(tmp_path / "a"), emb, "robot-a")
    b = MemorySystem.open(_cfg(tmp_path / "b"), emb, "robot-b")
    yield a, b
    a.close()
    b.close()


def test_namespaces_are_per_robot_and_kind(robots):
    store: BaseStore = LongTermStore(list(robots))
    assert store.list_namespaces() == [
        ("robomemory", "robot-a", "episodic"),
        ("robomemory", "robot-a", "semantic"),
        ("robomemory", "robot-b", "episodic"),
        ("robomemory", "robot-b", "semantic"),
    ]
    assert store.list_namespaces(prefix=("robomemory", "robot-b")) == [
        ("robomemory", "robot-b", "episodic"),
        ("robomemory", "robot-b", "semantic"),
    ]
    assert store.list_namespaces(suffix=("*", "semantic"), max_depth=2) == [
        ("robomemory", "robot-a"),
        ("robomemory", "robot-b"),
    ]
    assert store.list_namespaces(limit=1, offset=1) == [("robomemory", "robot-a", "semantic")]


def test_items_read_through_the_store_are_the_agents_own(robots):
    a, b = robots
    store = LongTermStore(list(robots))
    pid = _add(a, "semantic", "eat(meal) helped: You eat the meal. You won!", "action", "e1")
    ns = ("robomemory", "robot-a", "semantic")
    item = store.get(ns, pid)
    assert item is not None and item.value["text"].startswith("eat(meal) helped")
    assert item.value["level"] == "action" and item.value["q"] == 0.0
    assert "writers" not in item.value and item.created_at.year >= 2024
    assert store.get(("robomemory", "robot-b", "semantic"), pid) is None
    assert store.get(("robomemory", "robot-c", "semantic"), pid) is None
    # a change the agent makes is what the store shows next: the same shard, not a copy
    a.semantic.update_utility([pid], reward=1.0, episode_id="e2")
    assert store.get(ns, pid).value["visits"] == 1
    assert store.get(ns, pid).value["q"] == pytest.approx(a.semantic.items()[0].q)


def test_search_lists_filters_and_ranks_by_query(robots):
    a, b = robots
    store = LongTermStore(list(robots))
    first = _add(a, "semantic", "dice(red onion) helped: You dice the red onion.", "action", "e1")
    _add(a, "episodic", "Cooked and ate the meal: won in 4 steps.", None, "e1")
    _add(b, "semantic", "go(north) hurt: You can't go that way.", "action", "e1")
    everything = store.search(("robomemory",))
    assert {i.namespace[1:] for i in everything} == {
        ("robot-a", "semantic"),
        ("robot-a", "episodic"),
        ("robot-b", "semantic"),
    }
    assert all(i.score is None for i in everything)
    mine = store.search(("robomemory", "robot-a"), filter={"level": "action"})
    assert [i.key for i in mine] == [first]
    ranked = store.search(("robomemory",), query="dice(red onion) helped: You dice the red onion.")
    assert ranked[0].key == first and ranked[0].score == pytest.approx(1.0, abs=1e-3)
    assert [i.score for i in ranked] == sorted((i.score for i in ranked), reverse=True)
    assert len(store.search(("robomemory",), limit=1, offset=1)) == 1
    with pytest.raises(ValueError, match="only equality"):
        store.search(("robomemory",), filter={"q": {"$gt": 0}})


def test_writes_are_refused_and_async_reads_work(robots):
    store = LongTermStore(robots[0])
    with pytest.raises(ReadOnlyStoreError, match="consolidation"):
        store.put(("robomemory", "robot-a", "semantic"), "k", {"text": "x"})
    with pytest.raises(ReadOnlyStoreError):
        store.delete(("robomemory", "robot-a", "semantic"), "k")
    namespaces = asyncio.run(store.alist_namespaces())
    assert namespaces == [
        ("robomemory", "robot-a", "episodic"),
        ("robomemory", "robot-a", "semantic"),
    ]
    assert asyncio.run(store.asearch(("robomemory",))) == []
