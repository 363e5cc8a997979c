"""Temporal-memory compressor prompt (paper section 3.2): N step summaries → one entry."""

from __future__ import annotations

from pydantic import BaseModel, Field

SYSTEM = (
    "You compress a robot's action history. Merge the entries, oldest first, into ONE short "
    "summary (at most 2 sentences): what was done, where, what succeeded or failed, and what "
    "objects were found. Keep object and place names exactly."
)


class TemporalSummary(BaseModel):
    """The compressed history entry."""

    summary: str = Field(max_length=320, description="One short summary of all entries, in order.")


def user_prompt(entries: list[str]) -> str:
    """The entries to compress, numbered oldest first."""
    lines = "\n".join(f"{i}. {e}" for i, e in enumerate(entries, 1))
    return f"History (oldest first):\n{lines}"
