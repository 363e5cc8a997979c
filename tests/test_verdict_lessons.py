"""Lessons from what the world said: a lost attempt keeps the act the world ended it on and
the cycles that wasted its steps, in the world's words; the next attempt at that task recalls
them, an unrelated task does not. Cycles are found by a pure function (no store, no model);
recall runs on REAL Qdrant Edge shards with the real MiniLM embedder; the creator's and the
updater's answers are scripted (ScriptedChatModel, a fake)."""

from __future__ import annotations

import pytest

from robomemory.config import MemoryConfig, ModelConfig
from robomemory.grounding import WorldModel
from robomemory.memory.consolidation import best_step, consolidate
from robomemory.memory.cycles import cycle_lessons, wasted_cycles
from robomemory.memory.lessons import verdict_actions, verdict_places
from robomemory.memory.system import MemorySystem
from robomemory.nodes.ground import with_verdict_places
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel


def step(n: int, action: str, world: str | None, message: str = "", score: float = 0.0) -> dict:
    return {
        "step": n,
        "action": action,
        "outcome": "succeeded",
        "world": world,
        "message": message,
        "score": score,
    }


def toggling(start: int = 3, times: int = 4) -> list[dict]:
    """drop/pick_up of one potato ``times`` times, the world back where it was each time."""
    out = []
    for k in range(times):
        n = start + 2 * k
        out.append(step(n, "drop(potato)", "floor", "You drop the potato."))
        out.append(step(n + 1, "pick_up(potato)", "held", "You take the potato."))
    return out


def test_a_cycle_that_brings_the_world_back_is_found_with_the_worlds_words():
    trajectory = [step(1, "go(north)", "hall"), step(2, "look()", "held"), *toggling()]
    trajectory.append(step(11, "go(east)", "yard"))
    (cycle,) = wasted_cycles(trajectory)
    assert (cycle.first, cycle.last, cycle.actions, cycle.repeats) == (
        3,
        10,
        ("drop(potato)", "pick_up(potato)"),
        4,
    )
    (lesson,) = cycle_lessons(trajectory)
    assert lesson.startswith("Steps 3-10: drop(potato) -> You drop the potato.")
    assert "done 4 times" in lesson


def test_repeats_that_reach_new_states_or_points_are_no_cycle():
    """East, east, east through a corridor of new rooms is search, not a cycle; a period over
    which the score rose made progress; twice is not yet a cycle."""
    walk = [step(i, "go(east)", f"room {i}") for i in range(1, 6)]
    assert wasted_cycles(walk) == []
    scored = toggling()
    scored[5]["score"] = 1.0
    assert wasted_cycles(scored) == []
    assert wasted_cycles(toggling(times=2)) == []
    unknown = [{**s, "world": None} for s in toggling()]  # a world that gives no state
    assert len(wasted_cycles(unknown)) == 1


@pytest.fixture(scope="module")
def minilm():
    from robomemory.models import make_embedder

    return make_embedder(ModelConfig(embedder="minilm"))


TASK = "Your task is to find a(n) animal. First, focus on the thing. Then, move it to the red box."
SAID = "You focus on the orange."  # ScienceWorld's whole answer to a wrong focus


HELPED = ["go(outside)", "drop(potato)", "pick_up(potato)"]


def answer(schema, _messages):
    """The creator says three steps helped (more than the two action lessons a step recalls:
    a small model names the walks of a lost attempt); the updater adds."""
    name = schema.__name__
    if name == "MemoryDecision":
        return {"event": "ADD"}
    if name == "EpisodeRecord":
        return {"summary": "Searched the house and focused on the orange."}
    return {"helped": HELPED, "hurt": [], "task": []}


def attempt_ends(system: MemorySystem, trajectory: list[dict], score: float, lost: bool) -> dict:
    """Consolidate attempt 1 of TASK, unsuccessful, with the scripted creator's answers."""
    return consolidate(
        system,
        task=TASK,
        success=False,
        score=score,
        max_score=100.0,
        temporal_text="",
        trajectory=trajectory,
        spatial_text="",
        retrieved_ids=[],
        episode_id="attempt-1",
        llm=StructuredLLM(ScriptedChatModel(responder=answer)).for_node("t"),
        lost=lost,
    )


def test_a_lost_attempts_lessons_name_the_verdict_and_come_back_for_that_task_only(
    tmp_path, minilm
):
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    system = MemorySystem.open(cfg, minilm, "r1")
    try:
        trajectory = [step(1, "go(outside)", "yard"), *toggling(2)]
        trajectory.append(step(10, "focus_on(orange)", "yard", SAID, score=-100.0))
        report = attempt_ends(system, trajectory, score=-100.0, lost=True)
        assert report["semantic"]["ADD"] == 2 + len(HELPED)
        texts = {i.text for i in system.semantic.items()}
        # the act the world ended the task on, its verdict (the score fell, the task lost: the
        # world's words alone read as a step that went well), and its words
        verdict = f"focus_on(orange) hurt: score 0 -> -100, the task lost: {SAID}"
        assert verdict in texts
        assert any(t.startswith("Steps 2-9: drop(potato)") for t in texts)

        again = system.semantic.retrieve(["find an animal to focus on"], TASK)
        by_level = {i.level: [] for i in again}
        for item in again:
            by_level[item.level].append(item.text)
        # the same task recalls both: the verdict in slots of its own, however many of the
        # task's action lessons tie with it on the task's intent
        assert by_level["verdict"] == [verdict]
        assert by_level["task"][0].startswith("Steps 2-9: drop(potato)")
        assert len(by_level["action"]) == 2
        # a task whose text differs by one word: its answer may be the very thing the verdict
        # names (the blue jay is no non-living thing, and it is an animal)
        kin = TASK.replace("a(n) animal", "a(n) non-living thing")
        near = system.semantic.retrieve(["find a thing to focus on"], kin)
        assert [i.level for i in near if i.level == "verdict"] == []
        assert len([i for i in near if i.level == "action"]) == 2  # lessons of its kind stay
        other = system.semantic.retrieve(
            ["how to cook the meal"], "Check the cookbook in the kitchen and cook the meal."
        )
        assert other == []  # an unrelated task recalls none
    finally:
        system.close()


def test_the_step_the_world_rewarded_most_is_its_tasks_verdict(tmp_path, minilm):
    """A walk earned 8 points, the focus 50: the focus is kept as the world's verdict (it
    helped, with the score) and recalled by this task only; rises that tie (a recipe's
    points) make no verdict."""
    assert best_step([step(1, "a()", "x", score=1.0), step(2, "b()", "y", score=2.0)]) is None
    walked = [{**step(1, "go(yard)", "x", score=25.0), "place": "hall"}]
    walked.append({**step(2, "look()", "y", score=25.0), "place": "yard"})
    assert best_step(walked) is None  # a walk's reward names no pick
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    system = MemorySystem.open(cfg, minilm, "r1")
    try:
        said = "You focus on the blue jay."
        trajectory = [step(1, "go(outside)", "yard", "You go outside.", score=8.0)]
        trajectory.append({**step(2, "focus_on(blue jay)", "yard", said, 58.0), "place": "yard"})
        dropped = step(3, "drop(potato)", "floor", "You drop the potato.", score=58.0)
        trajectory.append({**dropped, "place": "yard"})
        attempt_ends(system, trajectory, score=58.0, lost=False)
        verdict = f"focus_on(blue jay) helped: score 8 -> 58 at yard: {said}"
        again = system.semantic.retrieve(["find an animal to focus on"], TASK)
        assert [i.text for i in again if i.level == "verdict"] == [verdict]
        assert not any(
            i.text.startswith("focus_on(blue jay)") for i in again if i.level != "verdict"
        )
        shown = "\n".join(f"- [semantic/{i.level} Q=0.00] {i.text}" for i in again)
        assert verdict_actions(shown) == (["focus_on(blue jay)"], [])
        assert verdict_places(shown) == {"focus_on(blue jay)": "yard"}
        # the next attempt's world model knows where the approved pick's thing was
        world = with_verdict_places(WorldModel(seen={"mug": "hall"}), shown)
        assert world.seen == {"mug": "hall", "blue jay": "yard"}
        # been in the yard this task and not seen it there: the recalled place is not believed
        been = WorldModel(seen={"mug": "hall"}, path=[["look()", "s0", "yard"]])
        assert with_verdict_places(been, shown).seen == {"mug": "hall"}
        kin = TASK.replace("a(n) animal", "a(n) plant")
        near = system.semantic.retrieve(["find a thing to focus on"], kin)
        assert [i for i in near if i.level == "verdict"] == []
    finally:
        system.close()
