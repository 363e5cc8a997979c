"""Information preprocessor prompts: the step summarizer S and the query generator Q."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

# Bounded outputs: generated tokens are the slowest part of a call on a CPU; a query of a few
# words embeds and retrieves as well as a sentence.
QUERY_CHARS = 40
# The model's summary is cut at SUMMARY_CHARS: past it a small model lists what the map holds,
# or restates the task.
SUMMARY_CHARS = 120
OBSERVATION_CHARS = 1500
Query = Annotated[str, StringConstraints(max_length=QUERY_CHARS)]

# The summarizer sees the world's answer, not the action: shown the action, a small model
# reports what it expects the action did (a read manual's steps as done); the planner sees the
# action itself verbatim (its steps and done actions).
SUMMARIZER_SYSTEM = (
    "You are the step summarizer of a robot. In one short sentence, using only facts the "
    "observation states: what it says happened, the room the robot is in, where the things it "
    "names are (say what is in or on what). Use the names given."
)

# Queries are noun phrases naming things of the task or observation ("blue box location"):
# asked only for "2 to 4 words", a small model writes questions, longer to write and vaguer to
# search. The example names no thing, because a concrete example answer is copied whole.
QUERY_SYSTEM = (
    "You are the query generator of a robot's memory. Write queries that fetch from memory "
    "what helps the next decision: where needed objects are, what was already tried, how "
    "similar tasks were solved. Each query is a noun phrase of 2 to 4 words naming an "
    'object, place or step from the task or the observation, such as "<object> location" '
    'or "<step> result". No questions.'
)


class StepSummary(BaseModel):
    """s_t: what just happened, in plain words."""

    summary: str = Field(description="one short sentence", max_length=SUMMARY_CHARS)


class MemoryQueries(BaseModel):
    """q_t: queries for the memory system."""

    queries: list[Query] = Field(min_length=1, max_length=6)


def perceive_user(
    last_action: str | None,
    observation: str,
    place: str | None = None,
    names: list[str] | None = None,
) -> str:
    """The query generator's view of the step: the last action and what the world answered,
    with the robot's place and the names the observation shows when perception knows them."""
    last = last_action or "none (task start)"
    head = f"Last action: {last}\n"
    if place:
        head += f"Robot is in: {place}\n"
    if names:
        head += f"Names here: {', '.join(names)}\n"
    return f"{head}Observation:\n{observation.strip()[:OBSERVATION_CHARS]}"


def summarizer_user(
    observation: str, place: str | None = None, names: list[str] | None = None
) -> str:
    """The summarizer's user message: what the world answered, with the robot's place and the
    names the observation shows when perception knows them (no action, no task: see
    SUMMARIZER_SYSTEM)."""
    head = f"Robot is in: {place}\n" if place else ""
    if names:
        head += f"Names here: {', '.join(names)}\n"
    return f"{head}Observation:\n{observation.strip()[:OBSERVATION_CHARS]}"


def query_user(task: str, base: str, n: int) -> str:
    """The query generator's user message: the task, then the summarizer's message."""
    return f"Task: {task}\n{base}\n\nWrite {n} queries of 2 to 4 words."
