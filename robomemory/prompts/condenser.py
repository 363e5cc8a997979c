"""Condenser prompt (OpenHands' context condenser): summarize the oldest chunk of activity."""

from __future__ import annotations

from pydantic import BaseModel, Field

SYSTEM = (
    "You condense an embodied agent's past activity so it fits its context. Summarize the "
    "events in at most 3 sentences: actions taken, their results (say which failed and why), "
    "and facts observed. Keep object and place names exactly. Do not invent anything."
)


class ChunkSummary(BaseModel):
    """The summary that replaces a chunk of events."""

    summary: str = Field(max_length=500, description="Short summary of the events.")


def user_prompt(task: str, lines: list[str]) -> str:
    """The task (context only) and the chunk's events, oldest first."""
    body = "\n".join(lines)
    return f"Task: {task}\nEvents to condense:\n{body}" if task else f"Events to condense:\n{body}"
