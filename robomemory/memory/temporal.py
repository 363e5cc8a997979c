"""Temporal memory (paper section 3.2): a FIFO of step summaries with model compression.

The buffer itself lives in checkpointed state (``AgentState["temporal"]``); this class is pure:
``update`` takes the old buffer and returns the new one, so re-running a step after a crash
starts again from the checkpointed buffer and never duplicates an entry.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from robomemory.config import TemporalConfig
from robomemory.prompts import temporal as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

FALLBACK_CHARS = prompts.SUMMARY_CHARS  # the fallback is an answer of the same schema
_STEP = re.compile(r"step (\d+): ")


def step_line(item: Mapping[str, Any]) -> str:
    """``step N: action -> outcome``, the head of an entry that describes one step."""
    return f"step {item['step']}: {item['action']} -> {item['outcome']}"


def entry_step(entry: str) -> int | None:
    """The step an entry describes (``step N: ...``), None for a compressed or first entry."""
    found = _STEP.match(entry)
    return int(found.group(1)) if found else None


def fallback_compress(entries: list[str], max_chars: int = FALLBACK_CHARS) -> str:
    """The FALLBACK when the model cannot compress: the entries joined, truncated.

    This is not the method (the method is the model call); it only keeps the agent going
    without losing the most recent part of the compressed history.
    """
    text = " | ".join(e.strip() for e in entries if e.strip())
    if len(text) <= max_chars:
        return text
    return "…" + text[-(max_chars - 1) :]


class TemporalMemory:
    """FIFO of at most ``cfg.capacity`` (N) step summaries."""

    def __init__(self, cfg: TemporalConfig):
        self.cfg = cfg

    def due(self, buffer: list[str]) -> bool:
        """Whether the next entry overflows N: then ``buffer``, all of it, is compressed."""
        return len(buffer) >= self.cfg.capacity

    def update(
        self,
        buffer: list[str],
        summary: str,
        llm: NodeLLM,
        compressed: str | None = None,
        wait: bool = False,
    ) -> list[str]:
        """Append ``summary``; if that exceeds N, one model call compresses all entries but the
        newest into a single summary placed at the front (before the newest entry).
        ``compressed``: :meth:`compress` of ``buffer`` already done (beside perception), used
        instead of a call. ``wait``: append only, the compression left to a later update (no
        model reads the buffer this step).

        Returns the new buffer; ``buffer`` is not modified. An empty summary changes nothing.
        """
        entries = list(buffer)
        summary = summary.strip()
        if not summary:
            return entries
        entries.append(summary)
        if len(entries) <= self.cfg.capacity or (wait and compressed is None):
            return entries
        oldest, newest = entries[:-1], entries[-1:]
        if compressed is None:
            compressed = self.compress(oldest, llm)
        return [compressed, *newest]

    def compress(self, entries: list[str], llm: NodeLLM) -> str:
        """One model call: ``entries`` as one summary (the fallback join if the model fails)."""
        result = llm.call(
            prompts.TemporalSummary,
            prompts.SYSTEM,
            prompts.user_prompt(entries),
            fallback=lambda: prompts.TemporalSummary(summary=fallback_compress(entries)),
        )
        text = result.value.summary.strip()
        if not text:
            log.warning("temporal: model returned an empty summary; using the fallback join")
            text = fallback_compress(entries)
        return text

    @staticmethod
    def render(buffer: list[str]) -> str:
        """All entries as text, oldest first (the paper's retrieval: everything)."""
        return "\n".join(f"- {e}" for e in buffer)
