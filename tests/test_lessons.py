"""Action lessons: the creator may only name steps the robot took; the lesson keeps the world's
words; recalled lessons re-rank the next attempt's choices (what hurt withheld, what helped after
the notes)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from robomemory.executors.base import Action
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


def test_what_helped_before_is_named_when_it_is_offered_now_and_not_done():
    from robomemory.grounding import helped_now

    offered = acts("eat(meal)", "cook(meal, oven)", "prepare_meal()", "task_complete()")
    helped = ["pick_up(milk)", "prepare_meal()", "eat(meal)", "eat(meal)", "task_complete()"]
    assert helped_now(helped, offered, done=[]) == ["prepare_meal()", "eat(meal)"]
    assert helped_now(helped, offered, done=["prepare_meal()"]) == ["eat(meal)"]
    assert helped_now([], offered, done=[]) == []


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
