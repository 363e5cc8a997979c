"""Working memory's order keeps the model server's prompt cache useful: from one step to the
next, what only grows (what was done) stays in the shared head, and what is rewritten (where
things are, the score) comes after it."""

from __future__ import annotations

import os
from itertools import pairwise

from robomemory.memory.condenser import render
from robomemory.nodes.memory_branches import keep_in_view
from robomemory.nodes.recall import OLD_STEPS_CHUNK, memory_events, shown_old_steps
from robomemory.state import RECENT_STEPS


def step(n: int, action: str, message: str) -> dict:
    return {"step": n, "action": action, "outcome": "succeeded", "message": message}


def state(steps: list[dict], temporal: list[str], spatial: str, score: int) -> dict:
    return {
        "task": "Cook the meal and eat it.",
        "recalled": {"temporal": "\n".join(temporal), "spatial": spatial},
        "notes": ["examine(cookbook): Ingredients: milk. Directions: prepare meal"],
        "trajectory": steps,
        "score": score,
        "max_score": 3,
        "done_actions": [s["action"] for s in steps if s["action"] != "examine(cookbook)"],
        "observation": {"text": steps[-1]["message"]},
    }


def test_a_new_step_keeps_the_steps_before_it_in_the_shared_head():
    one = [step(1, "examine(cookbook)", "Ingredients: milk."), step(2, "pick_up(milk)", "Taken.")]
    two = [*one, step(3, "prepare_meal()", "Adding the meal to your inventory.")]
    before = render(memory_events(state(one, ["- read", "- took milk"], "milk in fridge", 1)))
    after = render(
        memory_events(state(two, ["- read", "- took milk", "- made meal"], "I hold meal", 2))
    )
    shared = os.path.commonprefix([before, after])
    assert "Notes (read):" in shared and "step 1: examine(cookbook)" in shared
    # the newest step is not in working memory: the planner's prompt ends with it
    assert "step 2: pick_up(milk)" not in before and "step 2: pick_up(milk)" in after
    assert "step 3" not in after
    # rewritten at any step, so after what only grows
    assert "Where things are" not in shared and "Score" not in shared
    assert after.index("step 2:") < after.index("What I have done") < after.index("Score")
    assert after.index("Where things are") < after.index("Score")


def test_the_newest_result_is_given_whole_the_older_ones_short():
    from robomemory.nodes.common import last_result_line

    room = "-= Kitchen =- You see a fridge. " + "It is a fine room. " * 20 + "A cookbook is here."
    steps = [step(1, "go(east)", room), step(2, "go(west)", room)]
    text = render(memory_events(state(steps, [], "", 0)))
    assert "step 1: go(east)" in text and "A cookbook is here." not in text
    assert last_result_line(state(steps, [], "", 0)).endswith("A cookbook is here.")


def test_older_steps_leave_working_memory_a_chunk_at_a_time():
    """Once the episode is long, the list of older steps only grows for several steps, then
    drops a chunk: the first line of "Steps:" (and the cached prompt after it) rarely changes."""
    shown = {}
    for newest in range(1, 20):
        window = [step(i, f"look({i})", "Nothing.") for i in range(1, newest + 1)]
        window = window[-RECENT_STEPS:]  # what the state keeps
        old = [s["step"] for s in shown_old_steps(window)]
        assert old == list(range(old[0], newest)) if old else newest == 1
        shown[newest] = old
    firsts = [shown[n][0] for n in range(2, 20)]
    assert sum(a != b for a, b in pairwise(firsts)) == 3  # at steps 9, 13 and 17
    assert all(OLD_STEPS_CHUNK <= len(shown[n]) < 2 * OLD_STEPS_CHUNK for n in range(9, 20))
    long = [step(i, f"look({i})", "Nothing.") for i in range(1, 11)][-RECENT_STEPS:]
    nine = render(memory_events(state(long[:-1], [], "", 0)))
    ten = render(memory_events(state(long, [], "", 0)))
    assert "step 9: look(9)" in ten and "step 5: look(5)" in os.path.commonprefix([nine, ten])


def test_long_term_lines_recalled_in_a_task_stay_in_view_in_the_order_first_recalled():
    eat, cook, read = (f"- [semantic/action Q=0.30] {a} helped" for a in ("eat", "cook", "read"))
    shown = keep_in_view([], [eat, cook])
    assert keep_in_view(shown, [cook, eat]) == [eat, cook]  # another order: the head stays
    assert keep_in_view(shown, [read, eat]) == [eat, cook, read]  # new lines are appended
    assert keep_in_view([], [eat, eat]) == [eat]
    lines = [f"- line {i}" for i in range(9)]
    assert keep_in_view(lines[:4], lines[4:], limit=6) == lines[3:]  # bounded: oldest go
