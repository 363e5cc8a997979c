"""The SQLite spatial store: reopening, failed writes, one object per file, one writing process,
recovery from a corrupt file, migration of the JSON format. Real SQLite files and real
processes; the model's answers are scripted (a FAKE) and embeddings are hash embeddings."""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig, SpatialConfig
from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.spatial import SpatialMemory, open_graph_store
from robomemory.memory.stores.graph_store import StoreInUseError
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

EMB = DeterministicFakeEmbedding(size=16)


def scripted(rels, delete=()):
    def responder(schema, _messages):
        if schema.__name__ == "ExtractedTriples":
            return {"relations": [{"subject": s, "relation": r, "object": o} for s, r, o in rels]}
        return {"delete": list(delete)}

    return StructuredLLM(ScriptedChatModel(responder=responder), max_retries=0).for_node("s")


def update(mem, n, rels, delete=(), episode="ep"):
    return mem.update("obs", [], step=n, episode_id=episode, llm=scripted(rels, delete))


def open_memory(data_dir, robot="r1"):
    store = open_graph_store(SpatialConfig(), data_dir, f"spatial_{robot}")
    return SpatialMemory(SpatialConfig(), store, EMB)


def dump(mem):
    return [t.model_dump() for t in mem.triples(include_invalid=True)]


def spatial_only(tmp_path) -> MemoryConfig:
    cfg = MemoryConfig(data_dir=tmp_path)
    cfg.longterm.semantic_enabled = cfg.longterm.episodic_enabled = False
    return cfg


HOLDER = """
import sys
from pathlib import Path
from robomemory.memory.stores.graph_sqlite import open_sqlite_store
store = open_sqlite_store(Path(sys.argv[1], "spatial", sys.argv[2] + ".sqlite3"), sys.argv[2])
print("open", flush=True)
sys.stdin.readline()
store.close()
"""


@pytest.fixture
def holder(tmp_path):
    """Start a process that holds a robot's store until the test ends."""
    procs = []

    def start(robot):
        p = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(tmp_path), f"spatial_{robot}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(p)
        assert p.stdout.readline().strip() == "open"
        return p

    yield start
    for p in procs:
        p.communicate("\n", timeout=60)


def test_reopen_restores_graph_history_keys_and_counters(tmp_path):
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen")])
    update(mem, 2, [("cup", "in", "drawer")], delete=[1])
    before = dump(mem)
    mem.store.close()
    again = open_memory(tmp_path)
    assert dump(again) == before and again.store.last_step() == 2
    assert update(again, 2, [("x", "on", "y")]).skipped
    update(again, 3, [("plate", "on", "table")])
    assert max(t.id for t in again.triples()) == 4  # ids keep counting after reopening
    assert again.retrieve(["table"])[0].text() == "table at kitchen"
    again.store.close()


def test_failed_write_changes_neither_file_nor_graph(tmp_path):
    import sqlite3

    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table")])
    conn = mem.store._conn

    def deny_edges(action, table, *_):
        return sqlite3.SQLITE_DENY if table == "edges" else sqlite3.SQLITE_OK

    conn.set_authorizer(deny_edges)  # the transaction fails after its vertex insert
    with pytest.raises(sqlite3.DatabaseError):
        update(mem, 2, [("cup", "in", "drawer")], delete=[1])
    conn.set_authorizer(None)
    assert {t.text() for t in mem.triples()} == {"cup on table"}
    assert not mem.store.has_update("ep:2") and "drawer" not in mem.store.vertex_names()
    mem.store.close()
    again = open_memory(tmp_path)
    assert {t.text() for t in again.triples()} == {"cup on table"}
    assert not update(again, 2, [("cup", "in", "drawer")], delete=[1]).skipped
    assert {t.text() for t in again.triples()} == {"cup in drawer"}
    again.store.close()


def test_two_agents_on_threads_share_one_store_and_lose_nothing(tmp_path):
    """Defect: each MemorySystem opened its own graph object and rewrote the whole file, so
    one agent's updates replaced the other's."""
    cfg = spatial_only(tmp_path)
    systems = [MemorySystem.open(cfg, EMB, "r1") for _ in range(2)]
    assert systems[0].spatial.store is systems[1].spatial.store
    start = threading.Barrier(2)

    def agent(n: int) -> None:
        start.wait()
        for i in range(5):
            update(systems[n].spatial, i, [(f"a{n}obj{i}", "at", "room")], episode=f"agent{n}")

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in systems:
        s.close()
    with MemorySystem.open(cfg, EMB, "r1") as reopened:
        objects = {t.subject for t in reopened.spatial.triples()}
    assert objects == {f"a{n}obj{i}" for n in range(2) for i in range(5)}


def test_a_second_process_on_the_same_robot_gets_one_clear_line(tmp_path, holder):
    proc = holder("r1")
    with pytest.raises(StoreInUseError) as err:
        open_memory(tmp_path, "r1")
    msg = str(err.value)
    assert msg.startswith("robot r1's spatial map") and "\n" not in msg
    assert msg.endswith(f"is in use by process {proc.pid}")


def test_two_robots_run_at_once(tmp_path, holder):
    holder("r1")
    mem = open_memory(tmp_path, "r2")
    update(mem, 1, [("cup", "on", "table")])
    assert {t.text() for t in mem.triples()} == {"cup on table"}
    mem.store.close()


def test_read_only_snapshot_while_the_robot_runs(tmp_path, holder):
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table")])
    mem.store.close()
    holder("r1")
    snap = open_graph_store(SpatialConfig(), tmp_path, "spatial_r1", read_only=True)
    assert [t.text() for t in snap.triples()] == ["cup on table"]


def _corrupt(path, how: str) -> None:
    if how == "truncated":
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            fh.truncate(size // 3)
    elif how == "garbage":
        path.write_bytes(b"not a database" * 100)
    else:
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty"])
def test_corrupt_store_is_recovered_from_the_last_good_copy(tmp_path, caplog, how):
    """Defect: a truncated graph file stopped the robot from starting, naming no file."""
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen")])
    update(mem, 2, [("cup", "in", "drawer")], delete=[1])
    before = dump(mem)
    mem.store.close()  # the last handle writes the good copy
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    _corrupt(path, how)
    with caplog.at_level(logging.WARNING):
        again = open_memory(tmp_path)
    assert dump(again) == before
    assert any(str(path) in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    assert path.with_name(path.name + ".corrupt").exists()
    update(again, 3, [("plate", "on", "table")])
    again.store.close()


def test_corrupt_store_without_a_copy_names_the_file(tmp_path):
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table")])
    mem.store.close()
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    path.with_name(path.name + ".bak").unlink()
    _corrupt(path, "garbage")
    with pytest.raises(ValueError, match=f"spatial store {path} is corrupt"):
        open_memory(tmp_path)


def test_json_graph_of_the_earlier_format_is_migrated(tmp_path, caplog):
    legacy = tmp_path / "spatial" / "spatial_r1.json"
    legacy.parent.mkdir()

    def enc(name):
        return base64.b64encode(np.asarray(EMB.embed_query(name), "<f4").tobytes()).decode()

    edge = {"subject": "cup", "relation": "on", "object": "table", "episode_id": "e"}
    doc = {
        "version": 1,
        "graph_id": "spatial_r1",
        "next_id": 3,
        "last_step": 4,
        "vertices": {n: enc(n) for n in ("cup", "table")},
        "edges": [{"id": 2, "valid_from_step": 4, "invalidated_at_step": None, **edge}],
        "history": [
            {**edge, "id": 1, "object": "floor", "valid_from_step": 1, "invalidated_at_step": 4}
        ],  # fmt: skip
        "done": ["e:1", "e:4"],
    }
    legacy.write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING):
        mem = open_memory(tmp_path)
    assert "migrated" in caplog.text and not legacy.exists()
    assert [(t.id, t.text(), t.valid) for t in mem.triples(include_invalid=True)] == [
        (1, "cup on floor", False),
        (2, "cup on table", True),
    ]
    assert mem.store.has_update("e:4") and mem.store.last_step() == 4
    assert mem.store.similar_vertices(EMB.embed_query("table"), 1)[0][0] == "table"
    update(mem, 5, [("plate", "on", "table")])
    assert max(t.id for t in mem.triples()) == 3
    mem.store.close()


def test_a_store_released_by_a_killed_process_opens(tmp_path):
    """The lock dies with its process: a robot restarted after kill -9 starts."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), "spatial_r1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "open"
    proc.kill()
    proc.wait(timeout=60)
    deadline = time.monotonic() + 10
    while True:
        try:
            mem = open_memory(tmp_path)
            break
        except StoreInUseError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert mem.triples() == [] and os.getpid() > 0
    mem.store.close()


def test_a_second_start_after_a_corrupt_store_without_a_copy_is_refused_again(tmp_path):
    """Defect: the first start said the store was corrupt, the second started an empty map."""
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table")])
    mem.store.close()
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    path.with_name(path.name + ".bak").unlink()
    _corrupt(path, "garbage")
    for _ in range(2):
        with pytest.raises(DamagedStoreError, match=f"spatial store {path} .*corrupt") as info:
            open_memory(tmp_path)
        assert "\n" not in str(info.value) and "remove" in str(info.value)
    assert not path.exists()  # no empty map was made in its place


def test_a_garbage_write_ahead_log_is_not_ignored(tmp_path, caplog):
    """Defect: SQLite ignores a log with a bad header, and the map opened with fewer edges."""
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen")])
    mem.store.close()  # the good copy holds both edges
    before = dump(open_memory(tmp_path))  # open again: the file now has a log of its own
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    wal = path.with_name(path.name + "-wal")
    wal.write_bytes(os.urandom(8192))  # a process that held it open, its log then damaged
    from robomemory.memory.stores import graph_sqlite

    graph_sqlite._registry.clear()  # as a new process would open it
    with caplog.at_level(logging.WARNING):
        again = open_memory(tmp_path)
    assert dump(again) == before
    assert any(str(path) in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    assert path.with_name(path.name + ".corrupt-wal").exists()
    again.store.close()


def test_a_damaged_copy_is_named(tmp_path):
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table")])
    mem.store.close()
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    backup = path.with_name(path.name + ".bak")
    _corrupt(path, "garbage")
    _corrupt(backup, "garbage")
    with pytest.raises(DamagedStoreError, match=f"so is its copy {backup}") as info:
        open_memory(tmp_path)
    assert "\n" not in str(info.value)


def test_a_lost_store_file_is_restored_from_its_copy(tmp_path, caplog):
    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen")])
    before = dump(mem)
    mem.store.close()
    (tmp_path / "spatial" / "spatial_r1.sqlite3").unlink()
    with caplog.at_level(logging.WARNING):
        again = open_memory(tmp_path)
    assert dump(again) == before and any("restored" in r.getMessage() for r in caplog.records)
    again.store.close()


def test_robot_x_in_world_w_and_robot_x__w_keep_two_maps(tmp_path):
    """Defect: robot ``x`` in world ``w`` and robot ``x__w`` shared one map file."""
    from robomemory.memory.base import MemoryHandles
    from robomemory.memory.spatial import graph_file

    pairs = [("x", "w"), ("x__w", None), ("x_", "_w"), ("x", "__w"), ("x__a", "b"), ("x", "a__b")]
    ids = [MemoryHandles.for_robot(r, "e", w).spatial_graph_id for r, w in pairs]
    files = {graph_file(tmp_path / "spatial", g) for g in ids}
    assert len(set(ids)) == len(files) == len(pairs)
    assert MemoryHandles.for_robot("x", "e", "w").spatial_graph_id == "spatial_x__w"  # kept
    cfg = spatial_only(tmp_path)
    with MemorySystem.open(cfg, EMB, "x", "w") as system:
        update(system.spatial, 1, [("cup", "on", "table")])
    with MemorySystem.open(cfg, EMB, "x__w") as other:
        assert other.spatial.triples() == []


def test_a_map_under_its_earlier_file_name_is_still_read(tmp_path):
    """A world named by a digest kept its map as ``..._DIGEST`` before ``~`` was kept."""
    from robomemory.memory.base import MemoryHandles
    from robomemory.memory.spatial import graph_file

    graph_id = MemoryHandles.for_robot("r1", "e", "kitchen.a").spatial_graph_id
    folder = tmp_path / "spatial"
    new, old = graph_file(folder, graph_id), folder / f"{graph_id.replace('~', '_')}.sqlite3"
    assert new != old
    mem = SpatialMemory(SpatialConfig(), open_graph_store(SpatialConfig(), tmp_path, graph_id), EMB)
    update(mem, 1, [("cup", "on", "table")])
    before = dump(mem)
    mem.store.close()
    for suffix in ("", ".bak"):  # as the earlier version named them
        os.replace(f"{new}{suffix}", f"{old}{suffix}")
    again = open_graph_store(SpatialConfig(), tmp_path, graph_id)
    assert [t.model_dump() for t in again.triples(include_invalid=True)] == before
    again.close()
    assert not new.exists()


@pytest.mark.parametrize("loss", ["wal_damaged_past_header", "wal_deleted", "wal_cut"])
def test_a_map_whose_log_lost_commits_is_restored_by_name(tmp_path, caplog, loss):
    """Defect: a log damaged past its header, cut or deleted opened with fewer edges, silently."""
    from robomemory.memory.stores import graph_sqlite

    mem = open_memory(tmp_path)
    update(mem, 1, [("cup", "on", "table"), ("table", "at", "kitchen")])
    mem.store.close()
    mem = open_memory(tmp_path)  # its good copy: step 1
    copy = dump(mem)
    update(mem, 2, [("plate", "on", "table")])
    update(mem, 3, [("knife", "in", "drawer")])  # steps 2 and 3: in the log
    path = tmp_path / "spatial" / "spatial_r1.sqlite3"
    files = [path.with_name(path.name + s) for s in ("", "-wal", ".bak", ".seal")]
    crash = tmp_path / "crash"  # the files as a kill -9 leaves them
    crash.mkdir()
    for f in files:
        shutil.copy(f, crash / f.name)
    mem.store.close()
    for f in files:
        shutil.copy(crash / f.name, f)
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    graph_sqlite._registry.clear()  # as a new process would open it
    wal = files[1]
    if loss == "wal_damaged_past_header":
        data = bytearray(wal.read_bytes())
        data[32 + 24 + 40 : 32 + 24 + 56] = os.urandom(16)  # in the first frame's page
        wal.write_bytes(bytes(data))
    elif loss == "wal_deleted":
        wal.unlink()
    else:
        wal.write_bytes(wal.read_bytes()[: wal.stat().st_size // 2])
    with caplog.at_level(logging.WARNING):
        again = open_memory(tmp_path)
    said = [r.getMessage() for r in caplog.records if str(path) in r.getMessage()]
    assert said and "rows were lost" in said[0] and "last good copy" in said[0], caplog.text
    assert dump(again) == copy and path.with_name(path.name + ".corrupt").exists()
    again.store.close()
