"""The reading prompt: which seen thing a task means by a description ("the item with the same
quantity as the answer"), from the task and the notes read. Asked once per description, where
the effects table cannot say (robomemory.grounding.choice.to_read)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

READING_SYSTEM = (
    "You read for a robot. The task describes a thing without naming it. Using the task and "
    "what the robot has read, work out which of the listed things it is: first write your "
    "working in one short line (compute what needs computing), then name the thing exactly as "
    "listed. Where 'none of these' is listed, choose it if no listed thing is what the task "
    "describes."
)
WORKING_CHARS = 160  # a line of working: enough for a sum, bounded so the answer ends


@lru_cache(maxsize=128)
def make_reading_model(things: tuple[str, ...]) -> type[BaseModel]:
    """The answer's schema: a line of working, then one of ``things`` by its name."""
    if not things:
        raise ValueError("a reading needs at least one thing to choose from")
    return create_model(
        "Reading",
        __config__=ConfigDict(extra="forbid"),
        working=(str, Field(max_length=WORKING_CHARS, description="the working, one line")),
        thing=(Literal[things], Field(description="the thing described")),  # type: ignore[valid-type]
    )


def reading_user(
    task: str, described: str, notes: Sequence[str], things: Sequence[str], by_class: bool = False
) -> str:
    """The question: the task, each note read (``read(x): text``), the description (``by_class``:
    a class, "a(n) animal") and the things to choose among."""
    read = "\n".join(f"- {n}" for n in notes) or "- nothing"
    which = described if by_class else f"the {described}"
    return f"Task: {task}\nRead:\n{read}\nWhich of these is {which}? {', '.join(things)}"
