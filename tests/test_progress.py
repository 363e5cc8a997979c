"""What `robomemory run` prints while it plays: tidy lines and a label that tracks the phase."""

from __future__ import annotations

import io
import time

from rich.console import Console

from robomemory.commands.progress import RunProgress, SinceColumn

REASON = (
    "The cookbook was already read, so reading it again will not give anything new; take an "
    "ingredient named in the recipe instead, for example the milk on the counter."
)


def _progress(width: int = 70) -> tuple[RunProgress, io.StringIO]:
    out = io.StringIO()
    return RunProgress(Console(file=out, width=width, color_system=None), 5), out


def test_a_game_message_is_one_line_and_a_critic_reason_wraps_whole():
    progress, out = _progress()
    message = 'You open the copy of "Cooking"\nand start reading:\n\nRecipe #1\n---------\n1'
    item = {"step": 1, "action": "examine(cookbook)", "outcome": "succeeded", "message": message}
    progress.on_event("executor", {"trajectory": [item], "score": 0})
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("step  1 examine(cookbook) succeeded")
    assert "start reading: Recipe" in lines[0] or lines[0].endswith("…")

    progress, out = _progress()
    progress.on_event("critic", {"verdict": {"approve": False, "reason": REASON}})
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 70 for line in lines)
    text = " ".join(line[9:].strip() for line in lines)  # the text column, label cut off
    assert text == "reject " + REASON


def test_the_label_names_what_runs_now_and_its_timer_moves():
    before = time.monotonic()
    progress, _ = _progress()
    after = time.monotonic()
    progress.on_event("critic", {"verdict": {"approve": False, "reason": "no"}})
    progress.on_start("planner")
    assert progress.label.startswith("planner")  # not "execute" after a reject
    progress.on_event("planner", {"plan": [{"verb": "look", "args": []}]})
    progress.on_start("executor")
    assert progress.label.startswith("executor")
    progress.on_event("executor", {})
    for branch in ("temporal", "spatial", "semantic", "episodic"):
        progress.on_start(branch)
    progress.on_event("temporal", {})
    assert progress.label == "memory: spatial, semantic, episodic"
    progress.on_start("consolidate")
    task = progress.progress.tasks[0]
    progress.progress.update(progress.task, completed=5)  # the step bar is full
    column = SinceColumn("phase_since")
    first = column.render(task).plain
    task.fields["phase_since"] -= 2  # as if two seconds went by
    assert column.render(task).plain != first and task.finished
    # the run timer started with the progress and no phase change restarted it
    assert before <= task.fields["run_since"] <= after
    task.fields["run_since"] -= 75  # as if the run began 75 s ago
    assert SinceColumn("run_since", "run ").render(task).plain == "run 1:15"
