"""Long-term memory prompts: the creator (semantic insights, episode record) and the Mem0
updater (ADD / UPDATE / DELETE / NOOP against existing items named by integer ids)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, create_model

from robomemory.core import task_view
from robomemory.prompts.strict import StrictAnswer

# Bounded sizes: the json_schema grammar then bounds the answer, so it never runs past max_tokens.
Sentence = Annotated[str, StringConstraints(max_length=200)]

# Both creators read the same finished task and differ only in their last paragraph, so the
# second call reuses the first's prompt from the model server's cache.
CREATOR_SYSTEM = "You review a robot's finished task."

SEMANTIC_ASK = (
    "Judge the task above to teach the robot's next attempts. helped: the steps (copied "
    "exactly) that moved the task forward, first those that raised the score. hurt: the steps "
    "that failed, were wasted or lost the task. task: how to succeed at this kind of task, "
    "each ONE full sentence. At most 3 helped, 2 hurt and 2 task lessons."
)

EPISODIC_ASK = (
    "Summarize the robot's attempt above in at most 2 short sentences: the task, the key "
    "actions with what the world answered, and the outcome. Keep object and place names "
    "exactly."
)

UPDATER_SYSTEM = (
    "You maintain a robot's memory. Compare NEW with the EXISTING items (by number). "
    "ADD: NEW is not known. UPDATE id: NEW refines item id. "
    "DELETE id: NEW contradicts item id, which is outdated (NEW replaces it). "
    "NOOP: NEW is already known."
)

# Asked only after an UPDATE: a decision that carried the merged text made the small model
# write text for every event ("NEW is already known.", NEW copied for an ADD).
MERGER_SYSTEM = (
    "Merge two items of a robot's memory into one: keep the facts of both; where they "
    "disagree, NEW is right. Keep object and place names exactly."
)


class SemanticInsights(BaseModel):
    """Semantic memory items created at task end: task lessons in words; the action lessons
    are steps of the trajectory (see :func:`insights_model`, which grounds them)."""

    helped: list[str] = Field(default_factory=list, max_length=3)
    hurt: list[str] = Field(default_factory=list, max_length=2)
    task: list[Sentence] = Field(
        default_factory=list, max_length=2, description="Task lessons (sentences)."
    )


@lru_cache(maxsize=64)
def insights_model(steps: tuple[str, ...], task_lessons: bool = True) -> type[SemanticInsights]:
    """The creator's answer for a trajectory: ``helped`` and ``hurt`` may only name its steps
    (``verb(args)`` texts), so an action lesson is about an action that really happened.
    Without ``task_lessons`` the task list must be empty: the same fields in the same order, so
    the grammar, and the greedy answer, are the same up to it (a schema ending after ``hurt``
    changed the tokens where ``hurt`` ends, and with them the hurt lessons)."""
    fields: dict[str, Any] = {}
    if steps:
        Step = Literal[steps]  # type: ignore[valid-type]
        fields["helped"] = (list[Step], Field(default_factory=list, max_length=3))
        fields["hurt"] = (list[Step], Field(default_factory=list, max_length=2))
    if not task_lessons:
        fields["task"] = (
            list[Sentence],
            Field(default_factory=list, max_length=0, description="Task lessons (sentences)."),
        )
    if not fields:
        return SemanticInsights
    return create_model("SemanticInsights", __base__=SemanticInsights, **fields)


EPISODE_CHARS = 240  # recalled into every planner prompt of later tasks: kept short


class EpisodeRecord(BaseModel):
    """The episodic memory item of one task attempt."""

    summary: str = Field(
        max_length=EPISODE_CHARS, description="Task, key actions and feedback, outcome."
    )


class MemoryDecision(StrictAnswer):
    """The updater's decision for one new item (Mem0); an UPDATE's merged text is asked for
    apart (:class:`MergedItem`)."""

    # Strict (no coercion, unknown fields or duplicate keys): a loosely typed answer fails to
    # parse and becomes a NOOP, never a DELETE.
    event: Literal["ADD", "UPDATE", "DELETE", "NOOP"]
    id: int | None = Field(default=None, description="EXISTING item number for UPDATE/DELETE.")


class MergedItem(StrictAnswer):
    """The merger's answer: one item that says what an existing item and NEW say."""

    text: str = Field(max_length=300)


def outcome_line(success: bool, score: float | None, max_score: float | None) -> str:
    """'success' / 'failure', with the score when the world gives one."""
    word = "success" if success else "failure"
    if score is not None and max_score:
        return f"{word} (score {score:g}/{max_score:g})"
    return word


def creator_prompt(
    task: str, outcome: str, steps: str, temporal_text: str, spatial_text: str
) -> str:
    """What the creators read: task, outcome, steps taken, short-term memories (each creator
    appends its question, :func:`creator_ask`)."""
    parts = [f"Task: {task_view(task)}", f"Outcome: {outcome}", f"Steps:\n{steps or '(none)'}"]
    if temporal_text.strip():
        parts.append(f"History:\n{temporal_text}")
    if spatial_text.strip():
        parts.append(f"Known places:\n{spatial_text}")
    return "\n".join(parts)


def creator_ask(finished: str, ask: str) -> str:
    """A creator's user message: the finished task (:func:`creator_prompt`), then its question."""
    return f"{finished}\n\n{ask}"


def updater_prompt(new: str, existing: list[str]) -> str:
    """NEW item and the EXISTING ones numbered from 0 (integer temp ids, never UUIDs)."""
    lines = "\n".join(f"{i}. {text}" for i, text in enumerate(existing))
    return f"NEW: {new}\nEXISTING:\n{lines}"


def merger_prompt(new: str, old: str) -> str:
    """The item an UPDATE refines, then NEW."""
    return f"EXISTING: {old}\nNEW: {new}"
