"""Spatial memory on the Neo4j backend (a real server over Bolt); runs only when NEO4J_URI is set.

Credentials come from NEO4J_USER / NEO4J_PASSWORD. The model is FAKE (scripted answers).
"""

from __future__ import annotations

import os
import uuid

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import SpatialConfig
from robomemory.memory.spatial import SpatialMemory, open_graph_store
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

pytestmark = [
    pytest.mark.neo4j,
    pytest.mark.skipif(not os.environ.get("NEO4J_URI"), reason="NEO4J_URI is not set"),
]


@pytest.fixture
def graph(tmp_path):
    pytest.importorskip("neo4j")
    cfg = SpatialConfig(backend="neo4j", top_n=1, k_hops=2)
    gid = f"test_{uuid.uuid4().hex[:8]}"
    store = open_graph_store(cfg, tmp_path, gid)
    yield cfg, gid, store
    store.drop()
    store.close()


def run(mem, n, rels, queries=(), delete=()):
    def responder(schema, _messages):
        if schema.__name__ == "ExtractedTriples":
            return {"relations": [{"subject": s, "relation": r, "object": o} for s, r, o in rels]}
        return {"delete": list(delete)}

    llm = StructuredLLM(ScriptedChatModel(responder=responder), max_retries=0).for_node("s")
    return mem.update("obs", list(queries), step=n, episode_id="ep", llm=llm)


def test_algorithm2_on_neo4j(graph, tmp_path):
    cfg, gid, store = graph
    emb = DeterministicFakeEmbedding(size=64)
    mem = SpatialMemory(cfg, store, emb)
    run(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen"), ("kitchen", "near", "hall")])
    stats = run(mem, 2, [("cup", "in", "drawer")], delete=[1])
    assert {t.text() for t in mem.triples()} == {
        "cup in drawer",
        "table at kitchen",
        "kitchen near hall",
    }
    history = [t for t in mem.triples(include_invalid=True) if not t.valid]
    assert [(t.text(), t.invalidated_at_step) for t in history] == [("cup on table", 2)]
    assert stats.ops_applied == 1
    assert run(mem, 2, [("x", "on", "y")]).skipped
    assert store.k_hop(["cup"], 1) == {"cup", "drawer"}
    assert store.similar_vertices(emb.embed_query("kitchen"), 1)[0][0] == "kitchen"
    reopened = SpatialMemory(cfg, open_graph_store(cfg, tmp_path, gid), emb)
    assert {t.text() for t in reopened.retrieve(["table"])} == {
        "table at kitchen",
        "kitchen near hall",
    }
    run(reopened, 3, [("cup", "in", "sink")], delete=[1])
    assert "drawer" not in store.vertex_names()  # pruned after its only edge was invalidated
