"""A damaged store never opens silently with fewer items: restored from a copy the project
keeps, or refused with one line naming the file and what to do. REAL Qdrant Edge shards and
SQLite files, damaged on disk; FAKE scripted model."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from reliability.scripted import lifelong_llm

from robomemory import build_agent
from robomemory.config import AgentConfig, MemoryConfig
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.memory.damage import DamagedStoreError
from robomemory.memory.episode_log import EpisodeLog
from robomemory.memory.history import MemoryHistory
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.testing import scripted_llm

ITEMS = 8


def _open(data) -> MemorySystem:
    cfg = MemoryConfig(data_dir=data)
    cfg.spatial.enabled = False
    return MemorySystem.open(cfg, DeterministicFakeEmbedding(size=16), "r1")


@pytest.fixture(scope="module")
def eight_items(tmp_path_factory):
    """A memory folder whose semantic shard holds eight items."""
    data = tmp_path_factory.mktemp("base")
    memory = _open(data)
    llm = scripted_llm({"MemoryDecision": lambda m: {"event": "ADD"}})
    for i in range(ITEMS):
        item = NewItem(f"item {i} about thing{i} zz{i}", "action")
        memory.semantic.update(item, idx=i, task="t", episode_id=f"e{i}", llm=llm.for_node("t"))
    assert len(memory.semantic.items()) == ITEMS
    memory.close()
    return data


def _segment(shard):
    return next((shard / "segments").iterdir())


def _truncate(path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


DAMAGES = {
    "id-tracker-truncated": lambda s: _truncate(_segment(s) / "mutable_id_tracker.mappings", 0),
    "id-tracker-half": lambda s: _truncate(_segment(s) / "mutable_id_tracker.mappings", 0.5),
    "versions-truncated": lambda s: _truncate(_segment(s) / "mutable_id_tracker.versions", 0),
    "segments-deleted": lambda s: shutil.rmtree(s / "segments"),
    "shard-emptied": lambda s: [
        shutil.rmtree(p) if p.is_dir() else p.unlink() for p in list(s.iterdir())
    ],
    "wal-garbage": lambda s: (s / "wal" / "open-1").write_bytes(os.urandom(4096)),
    "vectors-truncated": lambda s: _truncate(
        _segment(s) / "vector_storage-content" / "vectors" / "chunk_0.mmap", 0
    ),
    "payloads-truncated": lambda s: _truncate(_segment(s) / "payload_storage" / "page_0.dat", 0),
    "config-garbage": lambda s: (s / "edge_config.json").write_text("{"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_shard_is_refused_by_name(eight_items, tmp_path, damage):
    data = tmp_path / "memory"
    shutil.copytree(eight_items, data)
    shard = data / "longterm" / "semantic_r1"
    DAMAGES[damage](shard)
    with pytest.raises(DamagedStoreError) as info:
        _open(data)
    message = str(info.value)
    assert "\n" not in message and str(shard) in message and "backup" in message


def test_an_intact_shard_opens_with_all_its_items(eight_items, tmp_path):
    shutil.copytree(eight_items, tmp_path / "memory")
    with _open(tmp_path / "memory") as memory:
        assert len(memory.semantic.items()) == ITEMS


@pytest.mark.parametrize("kind", ["history", "episodes"])
def test_a_damaged_history_or_episode_log_is_named(tmp_path, kind):
    path = tmp_path / f"{kind}.sqlite3"
    opener = MemoryHistory if kind == "history" else EpisodeLog
    opener(path).close()
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    with pytest.raises(DamagedStoreError, match=f"{path} is damaged") as info:
        opener(path)
    assert "\n" not in str(info.value)


def test_a_lost_checkpoint_is_refused_not_replayed(tmp_path):
    """Defect: a truncated checkpoint database was reset, and a finished episode replayed."""
    cfg = AgentConfig(robot_id="ck-bot", max_steps=12)
    cfg.memory.data_dir = tmp_path / "memory"

    def agent():
        world = TextWorldExecutor(bundled_game("cooking_1room"))
        llm = lifelong_llm("cooking_1room")
        return build_agent(cfg, world, llm=llm, embedder=DeterministicFakeEmbedding(size=32))

    with agent() as a:
        assert a.run(thread_id="t1").success
        a.graph.checkpointer.conn.close()
    db = tmp_path / "memory" / "checkpoints.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    db.write_bytes(b"")  # truncated: SQLite opens an empty database
    with agent() as a:
        with pytest.raises(DamagedStoreError, match="no checkpoint of thread 't1'") as info:
            a.run(thread_id="t1")
        assert "\n" not in str(info.value)
        assert a.run(thread_id="t2").success  # other threads run


def test_a_damaged_checkpoint_database_is_named(tmp_path):
    from robomemory.factory import sqlite_checkpointer

    path = tmp_path / "checkpoints.sqlite"
    saver = sqlite_checkpointer(path)
    saver.setup()
    saver.conn.close()
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    with pytest.raises(DamagedStoreError, match=f"checkpoint database {path} is damaged"):
        sqlite_checkpointer(path)


def _filled(kind: str, path):
    """A history or episode log with rows in several commits, left open."""
    if kind == "history":
        store = MemoryHistory(path)
        for i in range(6):
            store.record("semantic_r1", f"item{i}", "ADD", new_text=f"text {i}", episode_id="e1")
        store.finish_episode("e1", {"semantic": {"created": 6}})
        return store
    store = EpisodeLog(path)
    store.claim("e1", "r1", "t1")
    for i in range(6):
        store.record_step("e1", {"step": i, "action": f"go {i}"})
    store.claim("e2", "r1", "t2")
    return store


def _rows(kind: str, path) -> int:
    with sqlite3.connect(path) as conn:
        table = "changes" if kind == "history" else "steps"
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


LOSSES = ["none", "emptied", "deleted", "wal_damaged_past_header", "wal_deleted", "wal_cut"]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", ["history", "episodes"])
def test_a_history_or_episode_log_that_lost_rows_is_named(tmp_path, kind, loss):
    """Defect: emptied or deleted, or its log lost commits, it opened empty or with fewer rows."""
    path = tmp_path / f"{kind}.sqlite3"
    wal = path.with_name(path.name + "-wal")
    store = _filled(kind, path)
    crash = tmp_path / "crash"  # the files as a kill -9 leaves them: the commits in the log
    crash.mkdir()
    for name in (path, wal):
        shutil.copy(name, crash / name.name)
    store.close()
    for name in (path, wal):
        shutil.copy(crash / name.name, name)
    path.with_name(path.name + "-shm").unlink(missing_ok=True)
    if loss == "emptied":
        path.write_bytes(b"")
        wal.unlink()
    elif loss == "deleted":
        path.unlink()
        wal.unlink()
    elif loss == "wal_damaged_past_header":
        data = bytearray(wal.read_bytes())
        data[32 + 24 + 40 : 32 + 24 + 56] = os.urandom(16)  # in the first frame's page
        wal.write_bytes(bytes(data))
    elif loss == "wal_deleted":
        wal.unlink()
    elif loss == "wal_cut":
        wal.write_bytes(wal.read_bytes()[: wal.stat().st_size // 2])
    opener = MemoryHistory if kind == "history" else EpisodeLog
    if loss == "none":
        opener(path).close()
        assert _rows(kind, path) == 6
        return
    with pytest.raises(DamagedStoreError, match=f"{path} is damaged .*rows") as info:
        opener(path)
    assert "\n" not in str(info.value) and f"{path.name}.seal" in str(info.value)
    with pytest.raises(DamagedStoreError):  # refused again, not opened empty the second time
        opener(path)


def _open_kind(kind: str, data):
    if kind == "spatial":
        from robomemory.config import SpatialConfig
        from robomemory.memory.spatial import open_graph_store

        return open_graph_store(SpatialConfig(), data, "spatial_r1")
    return (MemoryHistory if kind == "history" else EpisodeLog)(data / f"{kind}.sqlite3")


@pytest.mark.parametrize("full", ["sqlite_full", "enospc", "few_bytes_left"])
@pytest.mark.parametrize("kind", ["history", "episodes", "spatial"])
def test_a_full_disk_is_said_not_called_damage(tmp_path, monkeypatch, kind, full):
    """Defect: with a few KB left, an intact history was reported damaged (move it aside)."""
    import errno
    import pathlib

    from robomemory.memory import damage

    _open_kind(kind, tmp_path).close()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    if full == "enospc":  # a write the open makes (its seal) finds no space

        def no_space(*args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(pathlib.Path, "write_text", no_space)
    else:
        message = "database or disk is full" if full == "sqlite_full" else "disk I/O error"

        def refused(*args, **kwargs):
            raise sqlite3.OperationalError(message)

        monkeypatch.setattr(sqlite3, "connect", refused)
        monkeypatch.setattr(damage, "free_bytes", lambda path: 4096)
    with pytest.raises(DamagedStoreError, match="^disk full: ") as info:
        _open_kind(kind, tmp_path)
    assert "\n" not in str(info.value) and "not damaged" in str(info.value)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing moved aside
    _open_kind(kind, tmp_path).close()  # space again: it opens


def test_a_shard_whose_log_lost_a_delete_is_refused(eight_items, tmp_path):
    """Defect: a cut write-ahead log brought back an item the updater had deleted."""
    data = tmp_path / "memory"
    shutil.copytree(eight_items, data)
    memory = _open(data)
    victim = memory.semantic.items()[0].id
    memory.semantic.store.delete([victim])  # as the updater's DELETE: the store, then its row
    memory.history.record(memory.semantic.collection, victim, "DELETE", episode_id="e9")
    crash = tmp_path / "crash"  # the files as a kill -9 leaves them: the delete in the log
    shutil.copytree(data, crash)
    memory.close()
    for log in (crash / "longterm" / "semantic_r1" / "wal").glob("open-*"):
        used = len(log.read_bytes().rstrip(b"\0"))
        if used:
            _truncate(log, (used - 10) / log.stat().st_size)  # its last record cut
    with pytest.raises(DamagedStoreError, match="records as deleted") as info:
        _open(crash)
    assert "\n" not in str(info.value) and "semantic_r1" in str(info.value)
