"""Long-term memory against REAL Qdrant Edge shards: Mem0 updates, dedupe, history, idempotent
consolidation, concurrency, persistence across processes. FAKE scripted model answers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import MemoryConfig
from robomemory.memory.consolidation import consolidate
from robomemory.memory.longterm import NewItem
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel, message_text

DIM = 64


def make_cfg(tmp_path) -> MemoryConfig:
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    return cfg


class Script:
    """Scripted answers per schema name; records the prompts it was shown."""

    def __init__(self, **answers):
        self.answers = answers
        self.prompts: dict[str, list[str]] = {}

    def __call__(self, schema, messages):
        self.prompts.setdefault(schema.__name__, []).append(message_text(messages))
        answer = self.answers[schema.__name__]
        return answer(messages) if callable(answer) else answer

    def count(self, name: str) -> int:
        return len(self.prompts.get(name, []))


def llm_for(script: Script, retries: int = 0):
    return StructuredLLM(ScriptedChatModel(responder=script), max_retries=retries).for_node("t")


@pytest.fixture
def system(tmp_path):
    sysm = MemorySystem.open(make_cfg(tmp_path), DeterministicFakeEmbedding(size=DIM), "r1")
    yield sysm
    sysm.close()


def seed(system, text="open fails when the door is locked", level="action", episode="e0"):
    """One existing semantic item (added without a model call: the store is empty)."""
    res = system.semantic.update(
        NewItem(text, level),
        idx=0,
        task="open the door",
        episode_id=episode,
        llm=llm_for(Script()),
    )
    assert res["event"] == "ADD"
    return res["item_id"]


def test_first_item_is_added_without_asking_the_model(system):
    script = Script()
    pid = system.semantic.update(
        NewItem("pull the handle to open the fridge", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(script),
    )["item_id"]
    assert script.prompts == {}
    (item,) = system.semantic.items()
    assert (item.id, item.level, item.q, item.visits) == (pid, "action", 0.0, 0)
    rows = system.history.changes()
    assert [(r["event"], r["item_id"], r["new_text"]) for r in rows] == [
        ("ADD", pid, "pull the handle to open the fridge")
    ]


def test_update_rewrites_in_place_keeps_q_and_uses_integer_ids(system):
    pid = seed(system)
    system.semantic.update_utility([pid], reward=1.0, episode_id="e-q")
    script = Script(
        MemoryDecision={"event": "UPDATE", "id": 0},
        MergedItem={"text": "open fails when the door is locked; unlock first"},
    )
    res = system.semantic.update(
        NewItem("unlock the door before opening it", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(script),
    )
    assert res == {"event": "UPDATE", "item_id": pid}
    prompt = script.prompts["MemoryDecision"][0]
    assert "0. open fails when the door is locked" in prompt and pid not in prompt
    (merge,) = script.prompts["MergedItem"]  # the merged text is asked for after the UPDATE
    assert "EXISTING: open fails when the door is locked" in merge
    assert "NEW: unlock the door before opening it" in merge
    (item,) = system.semantic.items()
    assert item.id == pid and item.text.endswith("unlock first")
    assert item.q == pytest.approx(0.3) and item.visits == 1  # utility survives the update
    last = system.history.changes()[-1]
    assert (last["event"], last["old_text"]) == ("UPDATE", "open fails when the door is locked")


def test_delete_removes_the_contradicted_item_and_adds_the_new_one(system):
    old = seed(system, "the apple is in the fridge")
    script = Script(MemoryDecision={"event": "DELETE", "id": 0})
    res = system.semantic.update(
        NewItem("the apple is not in the fridge, it is in the basket", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(script),
    )
    assert res["event"] == "DELETE" and res["item_id"] == old
    texts = [i.text for i in system.semantic.items()]
    assert texts == ["the apple is not in the fridge, it is in the basket"]
    events = [(r["event"], r["item_id"]) for r in system.history.changes()]
    assert events[1:] == [("DELETE", old), ("ADD", res["added"])]


def test_noop_changes_nothing(system):
    seed(system)
    res = system.semantic.update(
        NewItem("a locked door cannot be opened", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(Script(MemoryDecision={"event": "NOOP"})),
    )
    assert res["event"] == "NOOP"
    assert len(system.semantic.items()) == 1 and len(system.history.changes()) == 1


@pytest.mark.parametrize(
    "answer",
    [
        "DELETE everything",
        '{"event": "DROP", "id": 0}',
        {"event": "DELETE", "id": 7},
        {"event": "UPDATE"},
    ],
    ids=["not-json", "unknown-event", "unknown-id", "update-without-id"],
)
def test_bad_decision_is_a_noop_never_a_delete(system, answer):
    pid = seed(system)
    res = system.semantic.update(
        NewItem("doors open with a key", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(Script(MemoryDecision=answer), retries=1),
    )
    assert res["event"] == "NOOP"
    assert [i.id for i in system.semantic.items()] == [pid]
    assert [r["event"] for r in system.history.changes()] == ["ADD"]


def test_same_content_is_deduplicated_by_hash(system):
    seed(system, "Open fails when the door is locked")
    script = Script()
    res = system.semantic.update(
        NewItem("  open fails   when the DOOR is locked ", "action"),
        idx=0,
        task="t",
        episode_id="e1",
        llm=llm_for(script),
    )
    assert res == {"event": "NOOP", "reason": "duplicate"} and script.prompts == {}
    assert len(system.semantic.items()) == 1


def test_levels_are_kept_apart(system):
    seed(system, "search every room before giving up", level="task")
    seed(system, "pick up fails when the hand is full", level="action", episode="e2")
    found = system.semantic.retrieve(["pick up fails when the hand is full"], "x")
    assert {i.level for i in found} <= {"action", "task"}
    assert [i.text for i in found if i.level == "action"] == ["pick up fails when the hand is full"]


LOCKED = [
    {"step": 1, "action": "open(fridge)", "outcome": "failed", "message": "The fridge is locked."}
]


def _consolidate(system, script, episode="ep1", retrieved=(), barrier=None, **task):
    """Consolidate a task (by default: a failed try at a locked fridge, 1 of 2 points)."""
    trajectory = task.pop("trajectory", LOCKED)
    given = {"task": "put the apple in the fridge", "success": False, "score": 1, "max_score": 2}
    return consolidate(
        system,
        **(given | task),
        temporal_text="- went to the kitchen",
        spatial_text="apple on table",
        trajectory=trajectory,
        retrieved_ids=list(retrieved),
        episode_id=episode,
        llm=llm_for(script),
    )


def creator_script(barrier: threading.Barrier | None = None) -> Script:
    def wait(answer):
        def fn(_messages):
            if barrier is not None:
                barrier.wait()  # both creators must be in flight at once
            return answer

        return fn

    return Script(
        SemanticInsights=wait(
            {
                "helped": [],
                "hurt": ["open(fridge)"],
                "task": ["find the key before opening the fridge"],
            }
        ),
        EpisodeRecord=wait({"summary": "Tried to open the locked fridge; it failed."}),
        MemoryDecision={"event": "ADD"},
    )


def test_consolidate_writes_both_kinds_concurrently_and_is_idempotent(system):
    script = creator_script(threading.Barrier(2, timeout=10))
    report = _consolidate(system, script)
    assert report["semantic"]["ADD"] == 2 and report["episodic"]["ADD"] == 1
    assert report["reward"] == pytest.approx(0.5)  # partial credit 1/2 on failure
    assert "fridge is locked" in script.prompts["SemanticInsights"][0]
    (episode,) = system.episodic.items()
    assert episode.text.startswith("Task: put the apple in the fridge. Outcome: failure")
    rows = len(system.history.changes())
    again = _consolidate(system, script)
    assert again["skipped"] is True
    assert script.count("SemanticInsights") == 1 and len(system.history.changes()) == rows
    assert len(system.semantic.items()) == 2 and len(system.episodic.items()) == 1


def test_every_attempt_is_recorded_as_an_episode_without_the_updater(system):
    """A second attempt at the same task is another episode, however similar its record: the
    updater (which could answer NOOP) is not asked; only a record already held is skipped."""
    first = _consolidate(system, creator_script(), episode="ep1")
    script = Script(
        SemanticInsights={"helped": [], "hurt": [], "task": []},
        EpisodeRecord={"summary": "Tried to open the locked fridge again; it failed again."},
        MemoryDecision={"event": "NOOP"},
    )
    second = _consolidate(system, script, episode="ep2")
    assert first["episodic"]["ADD"] == 1 and second["episodic"]["ADD"] == 1
    assert script.count("MemoryDecision") == 0
    assert len(system.episodic.items()) == 2
    same = Script(
        SemanticInsights={"helped": [], "hurt": [], "task": []},
        EpisodeRecord={"summary": "Tried to open the locked fridge again; it failed again."},
    )
    third = _consolidate(system, same, episode="ep3", success=False, score=1, max_score=2)
    assert third["episodic"]["NOOP"] == 1 and len(system.episodic.items()) == 2


def test_a_lesson_repeating_a_stored_actions_verdict_is_updated_without_the_updater(system):
    seed(system, "open(fridge) hurt: The fridge is stuck.")
    script = creator_script()
    report = _consolidate(system, script)
    assert script.count("MemoryDecision") == 0  # the task lesson and the episode: nothing similar
    assert report["semantic"]["UPDATE"] == 1
    texts = {i.text for i in system.semantic.items()}
    assert "open(fridge) hurt: The fridge is locked." in texts
    assert "open(fridge) hurt: The fridge is stuck." not in texts


def test_interrupted_consolidation_resumes_without_duplicates(system):
    # an item of each level (a lesson about the same action) forces one model decision each
    seed(system, "open(fridge) helped: The fridge is open.")
    seed(system, "tidy the kitchen first", level="task", episode="e00")
    calls = {"n": 0}

    def crash_on_second(_messages):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyError("process killed")  # not retryable: propagates like a crash
        return {"event": "ADD"}

    script = creator_script()
    script.answers["MemoryDecision"] = crash_on_second
    with pytest.raises(KeyError):
        _consolidate(system, script)
    assert system.history.episode_report("ep1") is None
    report = _consolidate(system, script)
    assert script.count("SemanticInsights") == 1  # creator output came from the journal
    texts = sorted(i.text for i in system.semantic.items())
    assert texts == sorted(
        [
            "open(fridge) helped: The fridge is open.",
            "tidy the kitchen first",
            "open(fridge) hurt: The fridge is locked.",
            "find the key before opening the fridge",
        ]
    )
    assert report["semantic"]["ADD"] == 2


def test_consolidate_updates_q_of_retrieved_items(system):
    pid = seed(system)
    report = _consolidate(system, creator_script(), retrieved=[pid, "not-an-item"])
    assert [(u["id"], u["q_new"]) for u in report["q_updates"]] == [(pid, pytest.approx(0.15))]
    (row,) = [r for r in system.history.changes() if r["event"] == "Q"]
    assert (row["item_id"], row["q_old"], row["episode_id"]) == (pid, 0.0, "ep1")


def test_a_crash_before_the_q_row_keeps_it_when_the_item_is_then_deleted(system, monkeypatch):
    """Q updates precede Mem0 writes: a deleted item keeps the Q row a crash interrupted."""
    pid = seed(system, "open(fridge) helped: The fridge opens.")
    record, crashed = system.history.record, []

    def crash_once_on_q(collection, item_id, event, **kw):
        if event == "Q" and not crashed:
            crashed.append(1)
            raise KeyError("process killed")  # after the Q write, before its row
        return record(collection, item_id, event, **kw)

    monkeypatch.setattr(system.history, "record", crash_once_on_q)
    script = creator_script()
    script.answers["MemoryDecision"] = {"event": "DELETE", "id": 0}
    with pytest.raises(KeyError):
        _consolidate(system, script, retrieved=[pid])
    report = _consolidate(system, script, retrieved=[pid])
    assert report["semantic"]["DELETE"] == 1
    assert pid not in {i.id for i in system.semantic.items()}
    q_rows = [r for r in system.history.changes() if r["event"] == "Q"]
    assert [(r["item_id"], r["episode_id"]) for r in q_rows] == [(pid, "ep1")]


def test_opening_twice_in_one_process_shares_the_shard(tmp_path):
    emb = DeterministicFakeEmbedding(size=DIM)
    first = MemorySystem.open(make_cfg(tmp_path), emb, "r1")
    second = MemorySystem.open(make_cfg(tmp_path), emb, "r1")
    assert first.semantic.store.shard is second.semantic.store.shard
    seed(first)
    first.close()
    assert [i.text for i in second.semantic.items()] == ["open fails when the door is locked"]
    second.close()


WRITER = """
import json, sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from robomemory.config import MemoryConfig
from robomemory.memory.system import MemorySystem
cfg = MemoryConfig(data_dir=sys.argv[1]); cfg.spatial.enabled = False
system = MemorySystem.open(cfg, DeterministicFakeEmbedding(size={dim}), "r1")
{body}
system.close()
"""


def run_py(body: str, data_dir) -> str:
    code = WRITER.format(dim=DIM, body=textwrap.dedent(body))
    out = subprocess.run(
        [sys.executable, "-c", code, str(data_dir)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_memory_survives_a_process_restart(tmp_path):
    data = tmp_path / "mem"
    run_py(
        """
        from robomemory.memory.longterm import NewItem
        from robomemory.structured import StructuredLLM
        from robomemory.testing import ScriptedChatModel
        llm = StructuredLLM(ScriptedChatModel(responder=None)).for_node("t")
        r = system.semantic.update(NewItem("keys are kept in the drawer", "task"), idx=0,
                                   task="find keys", episode_id="e1", llm=llm)
        system.semantic.update_utility([r["item_id"]], 1.0, "e2")
    """,
        data,
    )
    out = run_py(
        """
        items = system.semantic.retrieve(["where are the keys kept"], "find keys")
        print(json.dumps([[i.text, i.q, i.visits] for i in items]))
        print(len(system.history.changes()))
    """,
        data,
    )
    lines = out.strip().splitlines()
    assert json.loads(lines[0]) == [["keys are kept in the drawer", 0.3, 1]]
    assert lines[1] == "2"


class CountingEmbedder(DeterministicFakeEmbedding):
    """The hash embedding, remembering every text it embedded."""

    texts: list = []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return super().embed_documents(texts)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def test_a_step_embeds_its_queries_once_and_searches_once_per_branch(tmp_path):
    emb = CountingEmbedder(size=DIM, texts=[])
    system = MemorySystem.open(make_cfg(tmp_path), emb, "r1")
    seed(system)
    batches = []
    for module in system.longterm():
        real = module.store.search
        module.store.search = lambda reqs, real=real: batches.append(len(reqs)) or real(reqs)
    before = len(emb.texts)
    queries = ["where is the key", "how to open the door", "past tasks with doors"]
    system.semantic.retrieve(queries, "unlock the front door")
    system.episodic.retrieve(queries, "unlock the front door")
    assert sorted(emb.texts[before:]) == sorted([*queries, "unlock the front door"])
    # one batch per branch: semantic's three levels (action, verdict, task), episodic's one
    assert batches == [3 * (1 + len(queries)), 1 + len(queries)]
    system.close()


def test_the_creator_sees_which_steps_raised_the_score():
    from robomemory.memory.consolidation import render_trajectory

    def rec(n, action, score, message="ok"):
        return {
            "step": n,
            "action": action,
            "outcome": "succeeded",
            "message": message,
            "score": score,
        }

    steps = [
        rec(1, "examine(cookbook)", 0.0),
        rec(2, "pick_up(milk)", 1.0),
        rec(3, "look()", None),  # a world that says no score this step
        rec(4, "eat(meal)", 3.0, "You eat the meal.\n*** The End ***"),
    ]
    lines = render_trajectory(steps).splitlines()
    assert lines[0] == "1. examine(cookbook) -> succeeded: ok"
    assert lines[1].endswith("[score +1]") and "[score" not in lines[2]
    assert lines[3] == "4. eat(meal) -> succeeded: You eat the meal. *** The End *** [score +2]"
    assert render_trajectory(steps, limit=1).splitlines() == lines[3:]  # gains count from the start


def _step(n, action, score, message="ok"):
    return {"step": n, "action": action, "outcome": "succeeded", "message": message, "score": score}


def test_the_steps_the_world_rewarded_are_helped_lessons_whatever_the_creator_says():
    from robomemory.memory.consolidation import action_lessons, rewarded_steps

    steps = [
        _step(1, "examine(cookbook)", 0.0),
        _step(2, "pick_up(milk)", 1.0, "You take the milk."),
        _step(3, "look()", None),
        _step(4, "pick_up(milk)", 1.0),  # no gain: not rewarded again
        _step(5, "prepare_meal()", 2.0, "Adding the meal."),
        _step(6, "eat(meal)", 3.0, "You eat the meal.\n*** The End ***"),
    ]
    rewarded = rewarded_steps(steps)
    assert [s["action"] for s in rewarded] == ["pick_up(milk)", "prepare_meal()", "eat(meal)"]
    assert [s["action"] for s in rewarded_steps(steps, limit=2)] == ["prepare_meal()", "eat(meal)"]
    said = {s["action"]: s["message"] for s in steps}
    items = action_lessons(
        rewarded, ["examine(cookbook)", "prepare_meal()"], ["eat(meal)", "look()"], said
    )
    assert [i.text for i in items] == [
        "pick_up(milk) helped: You take the milk.",
        "prepare_meal() helped: Adding the meal.",
        "eat(meal) helped: You eat the meal. *** The End ***",
        "examine(cookbook) helped: ok",  # the creator's, not said twice
        "look() hurt: ok",  # a rewarded step is never a hurt lesson
    ]
    assert all(i.level == "action" for i in items)
    assert rewarded_steps([_step(1, "look()", None), _step(2, "go(north)", 0.0)]) == []


def test_consolidation_keeps_the_winning_step_the_creator_left_out(system):
    script = Script(
        SemanticInsights={"helped": ["prepare_meal()"], "hurt": [], "task": []},
        EpisodeRecord={"summary": "Made the meal and ate it."},
        MemoryDecision={"event": "ADD"},
    )
    won = [
        _step(1, "prepare_meal()", 1.0, "Adding the meal."),
        _step(2, "eat(meal)", 2.0, "You eat the meal."),
    ]
    _consolidate(
        system,
        script,
        "won",
        task="cook and eat",
        success=True,
        score=2.0,
        max_score=2.0,
        trajectory=won,
    )
    texts = sorted(i.text for i in system.semantic.items())
    assert texts == [
        "eat(meal) helped: You eat the meal.",
        "prepare_meal() helped: Adding the meal.",
    ]


def test_task_lessons_are_asked_only_of_a_task_that_recalled_none(system):
    """A task that recalled a task lesson gets the creator's same question and schema, its
    task list bound to be empty; one that recalled none is asked for task lessons, which go
    through the Mem0 update."""
    known = seed(system, "read the recipe before you cook", level="task")
    room: list[int] = []

    def answer(schema, messages):
        if schema.__name__ == "MemoryDecision":
            return {"event": "ADD"}
        if schema.__name__ == "EpisodeRecord":
            return {"summary": "Tried the fridge."}
        room.append(schema.model_json_schema()["properties"]["task"]["maxItems"])
        return {
            "helped": [],
            "hurt": [],
            "task": ["unlock the fridge before you open it"][: room[-1]],
        }

    recalled = _consolidate(system, answer, "recalled", retrieved=[known])
    assert room == [0] and not recalled["semantic"]["task_lessons_asked"]
    assert [i.text for i in system.semantic.items() if i.level == "task"] == [
        "read the recipe before you cook"
    ]
    asked = _consolidate(system, answer, "none recalled")
    assert room[1] == 2 and asked["semantic"]["task_lessons_asked"]
    assert "unlock the fridge before you open it" in {i.text for i in system.semantic.items()}
