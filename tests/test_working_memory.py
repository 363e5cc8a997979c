"""Working memory's order keeps the model server's prompt cache useful: from one step to the
next, what only grows (what was done, one line a step) stays in the shared head, and what is
rewritten (where things are, the score) comes after it."""

from __future__ import annotations

import os

from robomemory.memory.condenser import render
from robomemory.memory.temporal import entry_step
from robomemory.nodes.memory_branches import (
    buffer_key,
    compressed_for,
    keep_in_view,
    temporal_entry,
)
from robomemory.nodes.recall import memory_events


def step(n: int, action: str, message: str, outcome: str = "succeeded") -> dict:
    return {"step": n, "action": action, "outcome": outcome, "message": message}


def state(steps: list[dict], summaries: list[str], spatial: str, score: int) -> dict:
    """A state after ``steps``, whose temporal buffer holds one entry per step (the task-start
    summary first, then each step's summary after its action)."""
    temporal = [
        summaries[0],
        *(temporal_entry(s, t) for s, t in zip(summaries[1:], steps, strict=True)),
    ]
    return {
        "task": "Cook the meal and eat it.",
        "recalled": {"temporal": "\n".join(f"- {e}" for e in temporal), "spatial": spatial},
        "temporal": temporal,
        "world": {
            "notes": ["examine(cookbook): Ingredients: milk. Directions: prepare meal"],
            "done": [s["action"] for s in steps if s["action"] != "examine(cookbook)"],
        },
        "trajectory": steps,
        "score": score,
        "max_score": 3,
        "observation": {"text": steps[-1]["message"]},
    }


def test_a_new_step_only_appends_to_what_was_done():
    one = [step(1, "examine(cookbook)", "Ingredients: milk."), step(2, "pick_up(milk)", "Taken.")]
    two = [*one, step(3, "prepare_meal()", "Adding the meal to your inventory.")]
    said = ["In kitchen.", "Read the recipe.", "Took the milk."]
    before = render(memory_events(state(one, said, "milk in fridge", 1)))
    after = render(memory_events(state(two, [*said, "Made the meal."], "I hold meal", 2)))
    shared = os.path.commonprefix([before, after])
    assert "Notes (read):" in shared
    assert "- step 2: pick_up(milk) -> succeeded: Took the milk." in shared
    assert after.count("pick_up(milk)") == 2  # listed once, and once in "Done"
    assert "- step 3: prepare_meal() -> succeeded: Made the meal." in after
    # rewritten at any step, so after what only grows
    assert "Where things are" not in shared and "Score" not in shared
    assert after.index("What I have done") < after.index("step 3:") < after.index("Score")
    assert after.index("Where things are") < after.index("Score")


def test_a_step_is_described_by_its_summary_its_whole_answer_ends_the_prompt():
    from robomemory.nodes.ground import LAST_RESULT_CHARS, result_line

    room = "-= Kitchen =- You see a fridge. " + "It is a fine room. " * 20 + "A cookbook is here."
    steps = [step(1, "go(east)", room), step(2, "go(west)", "You can't go that way.", "failed")]
    now = state(steps, ["Start.", "In kitchen: a fridge and a cookbook.", "No way west."], "", 0)
    text = render(memory_events(now))
    assert "- step 1: go(east) -> succeeded: In kitchen: a fridge and a cookbook." in text
    assert "A cookbook is here." not in text and "- step 2: go(west) -> failed:" in text
    assert result_line(now["trajectory"][-1], LAST_RESULT_CHARS).endswith("You can't go that way.")


def test_the_condenser_may_summarize_the_oldest_steps_of_what_was_done():
    steps = [step(i, f"look({i})", "Nothing.") for i in range(1, 4)]
    events = memory_events(state(steps, ["Start.", "a", "b", "c"], "", 0))
    done = [e for e in events if e.kind == "result"]
    assert [e.step for e in done] == [1, 2, 3]  # activity the condenser can condense
    assert any(e.kind == "memory" and e.text == "- Start." for e in events)  # not a step
    assert entry_step("step 12: look() -> succeeded: x") == 12
    assert entry_step("The robot looked around.") is None
    assert temporal_entry("", steps[0]) == ""  # an empty summary adds nothing


def test_long_term_lines_recalled_in_a_task_stay_in_view_in_the_order_first_recalled():
    eat, cook, read = (f"- [semantic/action Q=0.30] {a} helped" for a in ("eat", "cook", "read"))
    shown = keep_in_view([], [eat, cook])
    assert keep_in_view(shown, [cook, eat]) == [eat, cook]  # another order: the head stays
    assert keep_in_view(shown, [read, eat]) == [eat, cook, read]  # new lines are appended
    assert keep_in_view([], [eat, eat]) == [eat]
    lines = [f"- line {i}" for i in range(9)]
    assert keep_in_view(lines[:4], lines[4:], limit=6) == lines[3:]  # bounded: oldest go


def test_a_compression_is_used_only_for_the_buffer_it_was_made_of():
    made = {"of": buffer_key(["a", "b"]), "summary": "a then b"}
    assert compressed_for(made, ["a", "b"]) == "a then b"
    assert compressed_for(made, ["a", "b", "c"]) is None  # another step's buffer
    assert compressed_for(made, ["a b"]) is None  # entries, not their joined text
    assert compressed_for(None, ["a", "b"]) is None
