"""Information preprocessor prompts: the step summarizer S and the query generator Q."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

Query = Annotated[str, StringConstraints(max_length=120)]

SUMMARIZER_SYSTEM = (
    "You are the step summarizer of a robot. In one or two sentences, state what the last "
    "action did and what is now observed (objects, where they are, what is held, open/closed). "
    "Be factual and brief."
)

QUERY_SYSTEM = (
    "You are the query generator of a robot's memory. Write short natural-language queries "
    "that fetch from memory what helps the next decision: where needed objects are, what was "
    "already tried, how similar tasks were solved."
)


class StepSummary(BaseModel):
    """s_t: what just happened, in plain words."""

    summary: str = Field(description="1-2 sentences", max_length=400)


class MemoryQueries(BaseModel):
    """q_t: queries for the memory system."""

    queries: list[Query] = Field(min_length=1, max_length=6)


def perceive_user(task: str, last_action: str | None, observation: str) -> str:
    """User message shared by S and Q (same prefix, so the model server can reuse it)."""
    last = last_action or "none (task start)"
    return f"Task: {task}\nLast action: {last}\nObservation:\n{observation.strip()[:1500]}"


def query_user(base: str, n: int) -> str:
    return f"{base}\n\nWrite {n} queries."
