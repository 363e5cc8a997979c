"""What the episode read that the task depends on (notes) and what it did (done actions)."""

from __future__ import annotations

from collections.abc import Sequence

from robomemory.core import VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.grounding.goal_words import stated_things
from robomemory.grounding.meanings import meanings
from robomemory.grounding.text import WORD, parsed

NOTE_MIN_LINES = 4  # a read answered by a document (instructions, a manual), not a sentence
# A page: a longer document's later steps were cut (seven steps of a manual end past 400).
NOTE_MAX_CHARS = 1000
MAX_NOTES = 2
MAX_DONE = 20


def is_note(item: TrajectoryStep, task: str, verbs: Sequence[VerbSpec]) -> bool:
    """Whether a step read something the task may depend on: a thing the task names, or a
    document of several lines; told no task, an answer that states another thing than the
    one read ("It's only missing a polished vase", not "That's a blue vase")."""
    verb = item.get("verb") or str(item["action"]).split("(", 1)[0]
    if verb not in meanings(verbs).reads or item["outcome"] != "succeeded":
        return False
    message = str(item.get("message") or "")
    lines = [line for line in message.splitlines() if line.strip()]
    task_words = set(WORD.findall(task.lower()))
    args = item.get("args") or parsed(str(item["action"]))[1]
    named = any(set(WORD.findall(a.lower())) & task_words for a in args)
    if not task.strip() and args:
        read = set(WORD.findall(args[0].lower()))
        named = any(not read <= set(t.split()) for t in stated_things(message, verbs))
    return named or len(lines) >= NOTE_MIN_LINES


def goal_note(task: str, notes: Sequence[str]) -> str:
    """The ``task``, or where it is empty, the first note's text: the goal the world states."""
    if task.strip() or not notes:
        return task
    return notes[0].split(": ", 1)[-1]


def update_notes(
    notes: Sequence[str], item: TrajectoryStep, task: str = "", verbs: Sequence[VerbSpec] = ()
) -> list[str]:
    """The newest ``MAX_NOTES`` distinct reads after one more step, each line kept (an
    instruction is read within its line). Told no task, the first note (the goal) stays
    first: a later read had pushed it out, and the robot put the box on place after place."""
    if not is_note(item, task, verbs):
        return list(notes)
    head = f"{item['action']}: "
    lines = (" ".join(line.split()) for line in str(item.get("message") or "").splitlines())
    text = head + "\n".join(line for line in lines if line)[:NOTE_MAX_CHARS]
    kept = [n for n in notes if not n.startswith(head)]
    if not task.strip() and kept:
        return [kept[0], *[*kept[1:], text][-(MAX_NOTES - 1) :]]
    return [*kept, text][-MAX_NOTES:]


def notes_of(
    trajectory: Sequence[TrajectoryStep], task: str = "", verbs: Sequence[VerbSpec] = ()
) -> list[str]:
    """The notes an episode's steps leave (:func:`update_notes`)."""
    notes: list[str] = []
    for item in trajectory:
        notes = update_notes(notes, item, task, verbs)
    return notes


def update_done(done: Sequence[str], item: TrajectoryStep) -> list[str]:
    """Actions that changed the world so far, the newest ``MAX_DONE`` kept."""
    if str(item["outcome"]) != "succeeded" or not item.get("changed"):
        return list(done)
    return [*[d for d in done if d != item["action"]], str(item["action"])][-MAX_DONE:]
