"""Temporal-memory compressor prompt (paper section 3.2): N step summaries → one entry."""

from __future__ import annotations

from pydantic import BaseModel, Field

SYSTEM = (
    "You compress a robot's action history. Merge the entries, oldest first, into ONE short "
    "sentence of at most 30 words: what was done, where, what succeeded or failed, and what "
    "objects were found. Keep object and place names exactly."
)

# The entry is read again by the planner at every later step, and a small model fills the
# length it is allowed: one short sentence keeps both the writing and the rereading cheap.
SUMMARY_CHARS = 200


class TemporalSummary(BaseModel):
    """The compressed history entry."""

    summary: str = Field(
        max_length=SUMMARY_CHARS, description="One short sentence for all entries, in order."
    )


def user_prompt(entries: list[str]) -> str:
    """The entries to compress, numbered oldest first."""
    lines = "\n".join(f"{i}. {e}" for i, e in enumerate(entries, 1))
    return f"History (oldest first):\n{lines}"
