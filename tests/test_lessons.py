"""Action lessons: the creator may only name steps the robot took; the lesson keeps the world's
words; recalled lessons re-rank the next attempt's choices (what hurt withheld, what helped after
the notes)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from robomemory.executors.base import Action
from robomemory.grounding import offered_candidates
from robomemory.memory.lessons import lesson_actions, lesson_text
from robomemory.prompts.longterm import insights_model


def test_the_creator_can_only_name_steps_of_the_trajectory():
    schema = insights_model(("pick_up(red onion)", "cook(red onion, oven)"))
    ok = schema.model_validate_json('{"helped": ["pick_up(red onion)"], "hurt": [], "task": []}')
    assert ok.helped == ["pick_up(red onion)"]
    with pytest.raises(ValidationError):
        schema.model_validate_json('{"helped": ["dice(red onion)"], "hurt": [], "task": []}')
    enum = schema.model_json_schema()["properties"]["hurt"]["items"]["enum"]
    assert enum == ["pick_up(red onion)", "cook(red onion, oven)"]


def test_a_lesson_reads_back_from_recalled_memory():
    hurt = lesson_text(
        "cook(red onion, oven)", "hurt", "You burned the red onion!\n*** You lost! ***"
    )
    assert hurt == "cook(red onion, oven) hurt: You burned the red onion! *** You lost! ***"
    recalled = "\n".join(
        [
            f"- [semantic/action Q=0.10] {hurt}",
            "- [semantic/action Q=0.30] eat(meal) helped: You eat the meal. Not bad.",
            "- [semantic/task Q=0.20] Read the cookbook first.",
        ]
    )
    assert lesson_actions(recalled) == (["eat(meal)"], ["cook(red onion, oven)"])


def acts(*texts: str) -> list[Action]:
    out = []
    for t in texts:
        verb, rest = t.split("(", 1)
        args = [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]
        out.append(Action(verb=verb, args=args))
    return out


def test_recalled_lessons_withhold_what_hurt_and_put_what_helped_first_among_ties():
    candidates = acts("cook(meal, oven)", "eat(meal)", "go(north)", "task_complete()")
    note = "examine(cookbook): Ingredients: milk Directions: prepare meal"
    plain = offered_candidates(candidates, [], "kitchen", notes=[note])
    assert [str(a) for a in plain][:2] == ["cook(meal, oven)", "eat(meal)"]  # a tie: world order
    taught = offered_candidates(
        candidates,
        [],
        "kitchen",
        notes=[note],
        lessons=(["eat(meal)"], ["go(north)", "task_complete()"]),
    )
    assert [str(a) for a in taught] == [
        "eat(meal)",  # helped before, and the note names its argument as much as cook's
        "cook(meal, oven)",
        "task_complete()",  # finishing is always offered
    ]  # go(north) hurt before: not offered


def test_withholding_what_hurt_never_leaves_only_the_way_to_finish():
    candidates = acts("go(north)", "task_complete()")
    taught = offered_candidates(candidates, [], "hall", lessons=([], ["go(north)"]))
    assert [str(a) for a in taught] == ["task_complete()", "go(north)"]  # kept, ranked last


def test_a_lesson_promotes_its_own_action_not_its_verb():
    candidates = acts("eat(meal)", "examine(chicken leg)", "examine(meal)")
    note = "examine(cookbook): Ingredients: milk Directions: prepare meal"
    taught = offered_candidates(
        candidates, [], "kitchen", notes=[note], lessons=(["examine(cookbook)"], [])
    )
    assert [str(a) for a in taught][0] == "eat(meal)"  # not every examine


def test_an_action_lesson_is_weighed_only_against_lessons_about_the_same_action():
    from robomemory.memory.mem0 import Existing, comparable

    existing = [
        Existing("a", "prepare_meal() helped: Adding the meal to your inventory."),
        Existing("b", "cook(meal, oven) helped: You roasted the meal."),
        Existing("c", "Read the cookbook first."),
    ]
    new = "cook(meal, oven) hurt: You roasted the meal."
    assert [e.id for e in comparable(new, existing)] == ["b"]
    assert comparable("slice(red onion) hurt: You lost!", existing) == []  # added, no call
    assert comparable("Read the recipe before cooking.", existing) == existing  # not a lesson


def test_an_action_the_lessons_disagree_on_keeps_its_place():
    candidates = acts("prepare_meal()", "dice(red onion)", "task_complete()")
    both = offered_candidates(
        candidates, [], "kitchen", lessons=(["prepare_meal()"], ["prepare_meal()"])
    )
    assert [str(a) for a in both][0] == "prepare_meal()"


def test_what_helped_before_is_named_when_it_is_offered_now_and_not_done():
    from robomemory.grounding import helped_now

    offered = acts("eat(meal)", "cook(meal, oven)", "prepare_meal()", "task_complete()")
    helped = ["pick_up(milk)", "prepare_meal()", "eat(meal)", "eat(meal)", "task_complete()"]
    assert helped_now(helped, offered, done=[]) == ["prepare_meal()", "eat(meal)"]
    assert helped_now(helped, offered, done=["prepare_meal()"]) == ["eat(meal)"]
    assert helped_now([], offered, done=[]) == []


def test_a_lost_attempt_says_which_step_lost_it_and_the_next_is_not_offered_it():
    from robomemory.core import Action
    from robomemory.grounding import offered_candidates
    from robomemory.memory.consolidation import action_lessons, losing_steps
    from robomemory.memory.lessons import lesson_actions

    def at(n, action, score, message=""):
        return {"step": n, "action": action, "outcome": "succeeded", "message": message,
                "score": score}  # fmt: skip

    lost = [at(1, "pick_up(red apple)", 1.0), at(2, "chop(red apple)", 1.0, "You lost!")]
    assert losing_steps(lost, lost=True) == ["chop(red apple)"]
    assert losing_steps(lost, lost=False) == []  # timed out: no step lost it
    fell = [at(1, "focus_on(apple)", -100.0, "You focus on the apple.")]
    assert losing_steps(fell, lost=False) == ["focus_on(apple)"]  # a wrong commitment
    said = {s["action"]: s["message"] for s in lost}
    items = action_lessons([], [], losing_steps(lost, lost=True), said)
    helped, hurt = lesson_actions("\n".join(i.text for i in items))
    assert hurt == ["chop(red apple)"]
    again = [Action(verb="chop", args=["red apple"]), Action(verb="slice", args=["red apple"])]
    shown = offered_candidates(again, [], "kitchen", lessons=(helped, hurt))
    assert [str(a) for a in shown] == ["slice(red apple)"]


def test_without_task_lessons_the_task_list_must_be_empty():
    """The same name (prompt slot, scripted answers), fields and grounded action choices: the
    grammar differs only in the task list, which must be empty."""
    steps = ("pick_up(red onion)", "cook(red onion, oven)")
    full, short = insights_model(steps), insights_model(steps, task_lessons=False)
    assert short.__name__ == full.__name__ == "SemanticInsights"
    a, b = full.model_json_schema(), short.model_json_schema()
    assert list(a["properties"]) == list(b["properties"]) == ["helped", "hurt", "task"]
    assert a["properties"]["helped"] == b["properties"]["helped"]
    assert a["properties"]["hurt"] == b["properties"]["hurt"]
    assert (a["properties"]["task"]["maxItems"], b["properties"]["task"]["maxItems"]) == (2, 0)
    with pytest.raises(ValidationError):
        short.model_validate({"task": ["wash the knife"]})
    bare = insights_model((), task_lessons=False).model_json_schema()
    assert bare["properties"]["task"]["maxItems"] == 0
