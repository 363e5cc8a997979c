"""MemRL utility (seed 001_…): two-phase ranking, Q convergence, serialized Q writes.

Ranking is checked on hand-built candidate pools and end to end on REAL Qdrant Edge shards with
the real MiniLM embedder; the model's answers are scripted (ScriptedChatModel, a fake)."""

from __future__ import annotations

import threading

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig, ModelConfig, UtilityConfig
from robomemory.memory.longterm import NewItem
from robomemory.memory.stores.vector_edge import EdgeItemStore
from robomemory.memory.stores.vector_qdrant import QdrantItemStore, acquire_client, release_client
from robomemory.memory.stores.vector_store import CONTENT, INTENT, point_id
from robomemory.memory.system import MemorySystem
from robomemory.memory.utility import Candidate, phase_a, phase_b, task_reward, two_phase
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

ADD = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("t")


def cand(name: str, sim: float, q: float) -> Candidate:
    return Candidate(id=name, text=name, meta={"q": q}, sim=sim)


# ---- ranking on hand-built pools ------------------------------------------------------------
def test_high_q_beats_a_slightly_more_similar_low_q_item():
    pool = [
        cand("similar-but-useless", 0.82, 0.0),
        cand("useful", 0.80, 0.9),
        cand("other", 0.70, 0.1),
    ]
    assert [c.id for c in phase_b(pool, lam=0.5, k2=3)][0] == "useful"


def test_lambda_zero_is_pure_similarity():
    pool = [cand("a", 0.60, 1.0), cand("b", 0.90, -1.0), cand("c", 0.75, 0.5)]
    assert [c.id for c in phase_b(pool, lam=0.0, k2=3)] == ["b", "c", "a"]


def test_phase_a_gates_on_delta_and_keeps_k1():
    pool = [cand(str(i), s, 0.0) for i, s in enumerate([0.95, 0.4, 0.7, 0.55, 0.51, 0.49])]
    assert [c.id for c in phase_a(pool, delta=0.5, k1=3)] == ["0", "2", "3"]
    cfg = UtilityConfig(delta=0.5, k1=5, k2=2, lam=1.0)
    pool[1].meta["q"] = 5.0  # a high Q cannot pull a dissimilar item past the gate
    assert "1" not in [c.id for c in two_phase(pool, cfg)]


def test_reward_from_outcome():
    cfg = UtilityConfig()
    assert task_reward(True, None, None, cfg) == 1.0
    assert task_reward(False, None, None, cfg) == 0.0
    assert task_reward(False, 3, 4, cfg) == pytest.approx(0.75)


# ---- end to end through Qdrant ---------------------------------------------------------------
QUERY = "how do I open the fridge"
HI = "pull the fridge door handle to open it"  # the most similar to QUERY
LO = "open the fridge by pulling its handle"  # slightly less similar
MID = "the fridge opens when you pull the handle"
FAR = "the apple is on the table"  # below δ


@pytest.fixture(scope="module")
def minilm():
    from robomemory.models import make_embedder

    return make_embedder(ModelConfig(embedder="minilm"))


def open_system(data_dir, embedder, **utility) -> MemorySystem:
    cfg = MemoryConfig(data_dir=data_dir)
    cfg.spatial.enabled = False
    cfg.longterm.semantic_action_n, cfg.longterm.semantic_task_n = 1, 0
    cfg.utility = cfg.utility.model_copy(update=utility)
    return MemorySystem.open(cfg, embedder, "r1")


def test_two_phase_retrieval_through_qdrant(tmp_path, minilm):
    import numpy as np

    q, hi, lo = np.array(minilm.embed_documents([QUERY, HI, LO]))
    assert q @ hi > q @ lo > 0.5  # the premise: HI slightly more similar, both past δ
    system = open_system(tmp_path, minilm)
    ids = {}
    for i, text in enumerate([HI, LO, MID, FAR]):
        ids[text] = system.semantic.update(
            NewItem(text, "action"), idx=i, task="kitchen chores", episode_id="e0", llm=ADD
        )["item_id"]
    for n in range(5):  # LO and FAR proved useful, HI did not
        system.semantic.update_utility([ids[LO], ids[FAR]], 1.0, f"win{n}")
        system.semantic.update_utility([ids[HI]], 0.0, f"loss{n}")

    def top(sysm, n=1):
        sysm.cfg.longterm.semantic_action_n = n
        return [i.text for i in sysm.semantic.retrieve([QUERY], "tidy the garage")]

    assert top(system) == [LO]  # λ = 0.5: utility wins over a small similarity edge
    assert FAR not in top(system, 4)  # phase A gate
    system.cfg.utility.lam = 0.0
    assert top(system) == [HI]
    system.cfg.utility.enabled = False
    assert top(system, 4) == [HI, LO, MID, FAR]  # utility off: plain top-N, no gate
    system.close()


@pytest.fixture
def store_system(tmp_path):
    system = open_system(tmp_path, DeterministicFakeEmbedding(size=32), alpha=0.05)
    pid = system.semantic.update(
        NewItem("drawers must be opened before looking inside", "action"),
        idx=0,
        task="t",
        episode_id="e0",
        llm=ADD,
    )["item_id"]
    yield system, pid
    system.close()


def test_q_converges_to_the_mean_reward(store_system):
    system, pid = store_system
    rewards = [1.0, 0.0, 1.0, 1.0, 0.0] * 50  # mean 0.6
    history = []
    for n, r in enumerate(rewards):
        (update,) = system.semantic.update_utility([pid], r, f"e{n}")
        history.append(update["q_new"])
    tail = history[-150:]
    assert sum(tail) / len(tail) == pytest.approx(0.6, abs=0.03)
    assert system.semantic.items()[0].visits == len(rewards)


def test_q_update_applies_once_per_episode(store_system):
    system, pid = store_system
    system.semantic.update_utility([pid], 1.0, "same")
    assert system.semantic.update_utility([pid, pid], 1.0, "same") == []
    item = system.semantic.items()[0]
    assert (item.visits, item.q) == (1, pytest.approx(0.05))


def test_concurrent_q_updates_lose_nothing(store_system):
    system, pid = store_system
    threads, per_thread, alpha = 8, 25, 0.05

    def work(t):
        for n in range(per_thread):
            system.semantic.update_utility([pid], 1.0, f"t{t}-{n}")

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    item = system.semantic.items()[0]
    total = threads * per_thread
    assert item.visits == total
    assert item.q == pytest.approx(1 - (1 - alpha) ** total)  # every update counted once


def _edge_writers(system, tmp_path):
    store = system.semantic.store
    return [EdgeItemStore(store.path, store.collection, dim=None) for _ in range(2)], None


def _server_writers(system, tmp_path):
    """qdrant-client's local mode stands in for a server: the same client API and conditional
    upsert; the item is copied over from the Edge shard."""
    client = acquire_client(path=tmp_path / "server")
    pid, text, meta = system.semantic.store.all()[0]
    vectors = dict(zip((CONTENT, INTENT), [[1.0] * 32, [1.0] * 32], strict=True))
    writers = [QdrantItemStore(client, "semantic_r1", dim=32) for _ in range(2)]
    writers[0].put(pid, text, meta, vectors)
    return writers, client


@pytest.mark.parametrize("backend", [_edge_writers, _server_writers], ids=["edge", "server"])
def test_compare_and_swap_without_a_shared_lock_loses_nothing(store_system, tmp_path, backend):
    """Two writers with separate locks (as two processes on one Qdrant server would be)."""
    system, pid = store_system
    writers, client = backend(system, tmp_path)
    for w in writers:
        w.lock = threading.Lock()

    barrier = threading.Barrier(2, timeout=10)
    calls = []

    def bump(w):
        for n in range(40):
            race = [n % 10 == 0]  # on these rounds both read the same version, then write

            def mutate(text, meta, race=race):
                calls.append(1)
                if race[0]:
                    race[0] = False
                    barrier.wait()
                return text, {**meta, "visits": meta["visits"] + 1}

            w.modify(pid, mutate, system.semantic.embedder.embed_query)

    pool = [threading.Thread(target=bump, args=(w,)) for w in writers]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert writers[0].get([pid])[pid][1]["visits"] == 80
    assert len(calls) > 80  # the forced races happened and the losers retried
    for w in writers:
        w.close()
    if client is not None:
        release_client(client)


def test_point_ids_are_deterministic():
    assert point_id("c", "ep", "0") == point_id("c", "ep", "0") != point_id("c", "ep", "1")
