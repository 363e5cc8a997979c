"""Crash safety of the Mem0 update and the MemRL Q update, and strict updater decisions.

Crashes are placed at the exact points that lost or corrupted memories: right after the vector
store's delete (a real kill -9 of a child process), between a vector write and its history row
(an injected exception). The resume must finish the journaled plan, never ask the model again,
and write every history row once. Stores are REAL (Qdrant Edge, SQLite); the model's answers
are scripted (a fake)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel

DIM = 64
OLD = ["the apple is in the fridge", "the apple is on the table", "the apple is in the bowl"]
NEW = "the apple is not in the fridge, it is in the basket"


class Crash(Exception):
    """Stands for the process dying at the marked point."""


def make_cfg(data_dir) -> MemoryConfig:
    cfg = MemoryConfig(data_dir=data_dir)
    cfg.spatial.enabled = False
    return cfg


def llm_answering(answer, calls: list | None = None, retries: int = 0, merged=None):
    """The same ``answer`` to every call; ``merged``, when given, to the merger's."""

    def responder(schema, messages):
        if calls is not None:
            calls.append(schema.__name__)
        return merged if merged is not None and schema.__name__ == "MergedItem" else answer

    return StructuredLLM(ScriptedChatModel(responder=responder), max_retries=retries).for_node("t")


def open_system(data_dir) -> MemorySystem:
    return MemorySystem.open(make_cfg(data_dir), DeterministicFakeEmbedding(size=DIM), "r1")


def seed_items(system, texts=OLD) -> list[str]:
    add = llm_answering({"event": "ADD"})
    return [
        system.semantic.update(NewItem(t, "action"), idx=i, task="t", episode_id="seed", llm=add)[
            "item_id"
        ]
        for i, t in enumerate(texts)
    ]


def fail_once_on(system, event: str) -> None:
    """The next history row of ``event`` raises: the store write before it went through."""
    real = system.history.record
    armed = [True]

    def record(collection, item_id, ev, **kw):
        if ev == event and armed[0]:
            armed[0] = False
            raise Crash(f"killed before the {ev} row")
        return real(collection, item_id, ev, **kw)

    system.history.record = record


def events(system) -> list[tuple[str, str]]:
    return [(r["event"], r["item_id"]) for r in system.history.changes()]


# ---- defect: a crash right after a DELETE made the resume delete a second item --------------
CHILD = """
import json, os, signal, sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from robomemory.config import MemoryConfig
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel
cfg = MemoryConfig(data_dir=sys.argv[1]); cfg.spatial.enabled = False
system = MemorySystem.open(cfg, DeterministicFakeEmbedding(size={dim}), "r1")
asked = []
def responder(schema, messages):
    asked.append(schema.__name__)
    return {{"event": "DELETE", "id": 0}}
llm = StructuredLLM(ScriptedChatModel(responder=responder), max_retries=0).for_node("t")
{body}
system.semantic.add_items([NewItem({new!r}, "action")], task="t", episode_id="ep", llm=llm)
print(json.dumps({{"asked": len(asked)}}))
system.close()
"""

KILL_AFTER_DELETE = """
real = system.semantic.store.delete
def delete_then_die(ids):
    real(ids)
    os.kill(os.getpid(), signal.SIGKILL)
system.semantic.store.delete = delete_then_die
"""


def run_child(data_dir, body: str) -> subprocess.CompletedProcess:
    code = CHILD.format(dim=DIM, new=NEW, body=textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, "-c", code, str(data_dir)], capture_output=True, text=True, timeout=120
    )


def test_kill_after_the_store_delete_resumes_the_recorded_decision(tmp_path):
    data = tmp_path / "mem"
    system = open_system(data)
    seed_items(system)
    system.close()
    killed = run_child(data, KILL_AFTER_DELETE)
    assert killed.returncode == -9, killed.stderr
    resumed = run_child(data, "")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {"asked": 0}  # the recorded decision, not a new one
    system = open_system(data)
    texts = sorted(i.text for i in system.semantic.items())
    deleted = [r for r in system.history.changes() if r["event"] == "DELETE"]
    assert len(deleted) == 1 and len(texts) == 3  # exactly one old item gone, NEW added
    assert NEW in texts and deleted[0]["old_text"] in OLD and deleted[0]["old_text"] not in texts
    assert [e for e, _ in events(system)].count("ADD") == 4
    system.close()


# ---- defect: a crash between the vector write and the history row lost the row --------------
def test_crash_between_add_and_its_history_row_resumes_the_row(tmp_path):
    system = open_system(tmp_path / "mem")
    calls: list[str] = []
    fail_once_on(system, "ADD")
    with pytest.raises(Crash):
        system.semantic.add_items(
            [NewItem(NEW, "action")], task="t", episode_id="ep", llm=llm_answering({}, calls)
        )
    assert len(system.semantic.items()) == 1  # the item was written, its row was not
    result = system.semantic.add_items(
        [NewItem(NEW, "action")], task="t", episode_id="ep", llm=llm_answering({}, calls)
    )
    (item,) = system.semantic.items()
    assert result == [{"event": "ADD", "item_id": item.id, "reason": "no similar items"}]
    assert events(system) == [("ADD", item.id)] and calls == []
    again = system.semantic.add_items(
        [NewItem(NEW, "action")], task="t", episode_id="ep", llm=llm_answering({}, calls)
    )
    assert again == result and len(system.history.changes()) == 1
    system.close()


def test_crash_between_update_and_its_history_row_resumes_the_row(tmp_path):
    system = open_system(tmp_path / "mem")
    (pid,) = seed_items(system, OLD[:1])
    calls: list[str] = []
    answer = {"event": "UPDATE", "id": 0}
    merged = {"text": "the apple was moved to the basket"}
    fail_once_on(system, "UPDATE")
    with pytest.raises(Crash):
        system.semantic.update(
            NewItem(NEW, "action"),
            idx=0,
            task="t",
            episode_id="ep",
            llm=llm_answering(answer, calls, merged=merged),
        )
    res = system.semantic.update(
        NewItem(NEW, "action"),
        idx=0,
        task="t",
        episode_id="ep",
        llm=llm_answering(answer, calls, merged=merged),
    )
    # the resume carries out the journaled plan: neither the updater nor the merger again
    assert res == {"event": "UPDATE", "item_id": pid}
    assert calls == ["MemoryDecision", "MergedItem"]
    assert events(system) == [("ADD", pid), ("UPDATE", pid)]
    (row,) = [r for r in system.history.changes() if r["event"] == "UPDATE"]
    assert (row["old_text"], row["new_text"]) == (OLD[0], merged["text"])
    system.close()


def test_crash_between_q_write_and_its_history_row_resumes_the_row(tmp_path):
    system = open_system(tmp_path / "mem")
    (pid,) = seed_items(system, OLD[:1])
    fail_once_on(system, "Q")
    with pytest.raises(Crash):
        system.semantic.update_utility([pid], 1.0, "ep")
    (update,) = system.semantic.update_utility([pid], 1.0, "ep")
    assert (update["q_old"], update["q_new"]) == (0.0, pytest.approx(0.3))
    assert system.semantic.update_utility([pid], 1.0, "ep") == []  # once per episode
    q_rows = [r for r in system.history.changes() if r["event"] == "Q"]
    assert [(r["item_id"], r["q_new"]) for r in q_rows] == [(pid, pytest.approx(0.3))]
    (item,) = system.semantic.items()
    assert (item.q, item.visits) == (pytest.approx(0.3), 1)
    system.close()


# ---- defect: loosely typed updater answers were carried out as DELETE -----------------------
LOOSE_IDS = ['"0"', "true", "false", "0.0", '" 1 "', '"1"', "1.0", "1e0", "[0]", '{"n": 0}']
FUZZED = (
    [f'{{"event": "DELETE", "id": {v}}}' for v in LOOSE_IDS]
    + [f'{{"event": "UPDATE", "id": {v}, "text": "merged text"}}' for v in LOOSE_IDS]
    + [
        '{"event": "DELETE", "id": 0, "id": 0}',
        '{"event": "NOOP", "event": "DELETE", "id": 0}',
        '{"event": "DELETE", "id": 1, "id": 0}',
        '{"event": "DELETE", "id": 0, "why": "outdated"}',
        '{"event": "UPDATE", "id": 0, "text": "merged", "confidence": 1}',
        '{"event": "delete", "id": 0}',
        '{"event": " DELETE", "id": 0}',
        '{"event": "REMOVE", "id": 0}',
        '{"event": ["DELETE"], "id": 0}',
        '{"event": "DELETE", "id": 0',
        '{"event": "DELETE"}',
        '{"event": "DELETE", "id": null}',
        '{"event": "DELETE", "id": -1}',
        '{"event": "DELETE", "id": 3}',
        '{"event": "UPDATE", "id": 0}',
        '{"event": "UPDATE", "id": 0, "text": null}',
        '{"event": "UPDATE", "id": 0, "text": ""}',
        '{"event": "UPDATE", "id": 0, "text": "   "}',
        '{"event": "UPDATE", "id": 0, "text": 5}',
        '{"event": "UPDATE", "id": 7, "text": "merged"}',
        '[{"event": "DELETE", "id": 0}]',
        '"DELETE 0"',
        "DELETE 0",
        "",
    ]
)


def test_fuzzed_updater_answers_never_delete_or_rewrite(tmp_path):
    system = open_system(tmp_path / "mem")
    (pid,) = seed_items(system, OLD[:1])
    for n, answer in enumerate(FUZZED):
        res = system.semantic.update(
            NewItem(f"{NEW} ({n})", "action"),
            idx=n,
            task="t",
            episode_id="fuzz",
            llm=llm_answering(answer, retries=0),
        )
        assert res["event"] == "NOOP", (answer, res)
    items = system.semantic.items()
    assert [(i.id, i.text) for i in items] == [(pid, OLD[0])]
    assert events(system) == [("ADD", pid)]
    system.close()


def test_strict_answers_still_work(tmp_path):
    system = open_system(tmp_path / "mem")
    (pid,) = seed_items(system, OLD[:1])
    res = system.semantic.update(
        NewItem(NEW, "action"),
        idx=0,
        task="t",
        episode_id="ok",
        llm=llm_answering('{"event": "DELETE", "id": 0}'),
    )
    assert res["event"] == "DELETE" and res["item_id"] == pid
    system.close()
