"""Information preprocessor prompts: the step summarizer S and the query generator Q."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

Query = Annotated[str, StringConstraints(max_length=120)]

SUMMARIZER_SYSTEM = (
    "You are the step summarizer of a robot. In at most three short sentences: what the last "
    "action did, where the robot is, and where each object it sees is, e.g. 'I opened the "
    "fridge in the kitchen. The milk is in the fridge. The knife is on the counter.' "
    "Say what is held. Only facts from the observation."
)

QUERY_SYSTEM = (
    "You are the query generator of a robot's memory. Write short natural-language queries "
    "that fetch from memory what helps the next decision: where needed objects are, what was "
    "already tried, how similar tasks were solved."
)


class StepSummary(BaseModel):
    """s_t: what just happened, in plain words."""

    summary: str = Field(description="at most 3 short sentences", max_length=600)


class MemoryQueries(BaseModel):
    """q_t: queries for the memory system."""

    queries: list[Query] = Field(min_length=1, max_length=6)


def perceive_user(task: str, last_action: str | None, observation: str) -> str:
    """User message shared by S and Q (same prefix, so the model server can reuse it)."""
    last = last_action or "none (task start)"
    return f"Task: {task}\nLast action: {last}\nObservation:\n{observation.strip()[:1500]}"


def query_user(base: str, n: int) -> str:
    return f"{base}\n\nWrite {n} queries."
