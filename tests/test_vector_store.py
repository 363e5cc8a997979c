"""The vector-store protocol on REAL Qdrant Edge shards (qdrant-edge-py, pinned: pre-1.0) and on
qdrant-client (local mode standing in for a server: same client API): batched filtered search,
idempotent writes, one process per shard, migration of the old local-mode folder."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import version

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig
from robomemory.memory.stores.vector_edge import EdgeItemStore
from robomemory.memory.stores.vector_qdrant import QdrantItemStore, acquire_client, release_client
from robomemory.memory.stores.vector_store import CONTENT, INTENT, Search, point_id
from robomemory.memory.stores.vectors import open_vector_store, scan_items
from robomemory.memory.system import MemorySystem

DIM = 8


def unit(i: int) -> list[float]:
    v = np.zeros(DIM)
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.2
    return (v / np.linalg.norm(v)).tolist()


def fill(store, n: int = 6) -> list[str]:
    ids = []
    for i in range(n):
        pid = point_id("t", str(i))
        level = "action" if i % 2 else "task"
        meta = {"level": level, "hash": f"h{i}", "q": 0.0}
        store.put(pid, f"item {i}", meta, {CONTENT: unit(i), INTENT: unit(i + 3)})
        ids.append(pid)
    return ids


@pytest.fixture(params=["edge", "server"])
def store(request, tmp_path):
    if request.param == "edge":
        s = EdgeItemStore(tmp_path / "shard", "c", DIM)
        yield s
        s.close()
    else:
        client = acquire_client(path=tmp_path / "server")
        yield QdrantItemStore(client, "c", DIM)
        release_client(client)


def test_edge_is_the_pinned_version():
    assert version("qdrant-edge-py") == "0.9.0"  # pre-1.0: upgrade deliberately, with these tests


def test_batched_search_filters_on_indexed_fields_in_request_order(store):
    ids = fill(store)
    found = store.search(
        [
            Search(unit(1), CONTENT, 2, where={"level": "action"}),
            Search(unit(1), CONTENT, 2, where={"level": "task"}),
            Search(unit(4), INTENT, 1),
            Search(unit(1), CONTENT, 10, threshold=0.99),
        ]
    )
    assert [h.id for h in found[0]][0] == ids[1] and {h.meta["level"] for h in found[0]} == {
        "action"
    }
    assert {h.meta["level"] for h in found[1]} == {"task"}
    assert [h.id for h in found[2]] == [ids[1]]  # intent of item 1 is unit(4)
    assert [h.id for h in found[3]] == [ids[1]]  # only the item itself passes 0.99
    assert found[0][0].text == "item 1" and found[0][0].score == pytest.approx(1.0)


def test_filters_on_unindexed_fields_are_refused(store):
    with pytest.raises(ValueError, match="unindexed field 'q'"):
        store.search([Search(unit(0), CONTENT, 1, where={"q": 0.0})])


def test_writes_are_idempotent_and_reads_ignore_unknown_ids(store):
    ids = fill(store)
    fill(store)  # the same puts again
    assert len(store.all()) == 6
    assert store.find_hash("h3") == ids[3] and store.find_hash("nope") is None
    assert set(store.get([ids[0], "not-an-id", point_id("x")])) == {ids[0]}
    store.delete([ids[0], "not-an-id"])
    store.delete([ids[0]])
    assert len(store.all()) == 5 and store.get([ids[0]]) == {}


def test_modify_rewrites_text_and_re_embeds(store):
    ids = fill(store, 4)  # unit(5) names none of them
    change = store.modify(ids[0], lambda t, m: (t + "!", {**m, "q": 1.0}), lambda _t: unit(5))
    assert (change.old_text, change.new_text, change.new_meta["q"]) == ("item 0", "item 0!", 1.0)
    (hits,) = store.search([Search(unit(5), CONTENT, 1)])
    assert hits[0].id == ids[0]
    assert store.modify(point_id("gone"), lambda t, m: (t, m), lambda _t: unit(0)) is None


SECOND = """
import sys
from robomemory.memory.stores.vector_edge import EdgeItemStore, StoreInUse
try:
    EdgeItemStore(sys.argv[1], "c", 8)
except StoreInUse as exc:
    print("IN USE:", exc)
"""


def test_a_second_process_gets_one_clear_line(tmp_path):
    store = EdgeItemStore(tmp_path / "shard", "c", DIM)
    again = EdgeItemStore(tmp_path / "shard", "c", DIM)  # same process: shared
    assert again.shard is store.shard
    out = subprocess.run(
        [sys.executable, "-c", SECOND, str(tmp_path / "shard")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.startswith("IN USE:") and "already running" in out.stdout, out.stderr
    again.close()
    store.close()


def test_two_robots_run_at_once_in_two_processes(tmp_path):
    mine = MemorySystem.open(cfg(tmp_path), DeterministicFakeEmbedding(size=DIM), "r1")
    code = textwrap.dedent(
        f"""
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from robomemory.config import MemoryConfig
        from robomemory.memory.system import MemorySystem
        cfg = MemoryConfig(data_dir={str(tmp_path / "mem")!r}); cfg.spatial.enabled = False
        MemorySystem.open(cfg, DeterministicFakeEmbedding(size={DIM}), "r2").close()
        MemorySystem.open(cfg, DeterministicFakeEmbedding(size={DIM}), "r1")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "StoreInUse" in out.stderr  # r2 opened, r1 refused
    mine.close()


def cfg(tmp_path) -> MemoryConfig:
    c = MemoryConfig(data_dir=tmp_path / "mem")
    c.spatial.enabled = False
    return c


def test_wrong_dimension_is_a_clear_error(tmp_path):
    EdgeItemStore(tmp_path / "shard", "c", DIM).close()
    with pytest.raises(ValueError, match="does not fit this embedder"):
        EdgeItemStore(tmp_path / "shard", "c", DIM * 2)


def test_old_local_mode_data_is_migrated_once(tmp_path):
    data = tmp_path / "mem"
    client = acquire_client(path=data / "qdrant")  # the layout earlier versions wrote
    old = QdrantItemStore(client, "semantic_r1", DIM)
    ids = fill(old, 3)
    release_client(client)
    store = open_vector_store(data, "semantic_r1", DIM)
    assert sorted(p for p, _, _ in store.all()) == sorted(ids)
    (hits,) = store.search([Search(unit(2), CONTENT, 1)])
    assert (hits[0].id, hits[0].text, hits[0].meta["hash"]) == (ids[2], "item 2", "h2")
    store.delete([ids[0]])
    store.close()
    again = open_vector_store(data, "semantic_r1", DIM)  # not migrated a second time
    assert len(again.all()) == 2
    again.close()
    assert len(scan_items(data, "semantic_r1")) == 2 and scan_items(data, "episodic_r1") == []
