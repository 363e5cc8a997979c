"""Context condenser: every planner/critic prompt under a token budget, after OpenHands'
context condenser ("Agent Memory Component: Short Term History and Condenser").

Pipeline of ``Condenser.condense``:
1. filter noise: empty events, exact duplicates and events of kind ``"noise"``;
2. reuse the summaries kept in state: activity events of the steps a summary covers are
   replaced by that summary, with no model call;
3. while the view is over budget, the OLDEST agent-activity chunks (one chunk = the
   action/result/observation events of one step; earlier summaries count as chunks) are
   summarized by ONE model call, keeping the ``keep_recent`` newest chunks untouched; the summary
   replaces the chunk in the view and is returned so the caller keeps it in state;
4. the task instruction is never condensed. If the prompt is still over budget, retrieved
   memory text is clipped as a last-resort guard (logged).

Activity events without a step (e.g. the current observation) are never condensed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from robomemory.config import CondenserConfig
from robomemory.prompts import condenser as prompts
from robomemory.structured import NodeLLM

log = logging.getLogger(__name__)

# "note": what the agent read that the task depends on (a recipe, a sign); like the task, a
# note is never condensed or clipped.
EventKind = Literal["task", "note", "observation", "action", "result", "memory", "summary", "noise"]
ACTIVITY = frozenset({"observation", "action", "result"})
SUMMARY_TOKENS = 80  # expected size of a chunk summary, used to pick how much to condense


@dataclass
class Event:
    """One item of the agent's event stream."""

    kind: EventKind
    text: str
    step: int | None = None


@dataclass
class CondensedView:
    """What a prompt sees: the condensed events, the summaries to keep in state, the text."""

    events: list[Event]
    summaries: list[dict] = field(default_factory=list)
    text: str = ""


def approx_tokens(text: str) -> int:
    """A cheap approximate token count (about 4 characters a token)."""
    return math.ceil(len(text) / 4)


def render_event(event: Event) -> str:
    """One line of prompt text for an event."""
    match event.kind:
        case "task":
            return event.text if event.text.startswith("Task:") else f"Task: {event.text}"
        case "memory" | "note" | "result":  # a result line names its step itself
            return event.text
        case "summary":
            return f"[Summary] {event.text}"
        case _:
            prefix = f"[step {event.step}] " if event.step is not None else ""
            return f"{prefix}{event.kind}: {event.text}"


def render(events: list[Event]) -> str:
    return "\n".join(render_event(e) for e in events)


@dataclass
class _Summary:
    from_step: int
    to_step: int
    summary: str

    def covers(self, step: int | None) -> bool:
        return step is not None and self.from_step <= step <= self.to_step

    def as_event(self) -> Event:
        return Event(
            "summary", f"steps {self.from_step}-{self.to_step}: {self.summary}", self.to_step
        )

    def as_dict(self) -> dict:
        return {"from_step": self.from_step, "to_step": self.to_step, "summary": self.summary}


@dataclass
class _Chunk:
    """Positions (in the view) of one step's activity, or of one summary."""

    positions: list[int]
    from_step: int
    to_step: int
    summary: _Summary | None = None


class Condenser:
    """Assembles prompts under ``cfg.token_budget`` (see the module docstring)."""

    def __init__(self, cfg: CondenserConfig, token_counter: Callable[[str], int] | None = None):
        self.cfg = cfg
        self.count = token_counter or approx_tokens

    def condense(
        self, events: list[Event], kept_summaries: list[dict], llm: NodeLLM
    ) -> CondensedView:
        """Return the condensed view; ``summaries`` is the new list to keep in state."""
        view = filter_noise(events)
        kept = [
            _Summary(int(d["from_step"]), int(d["to_step"]), str(d["summary"]))
            for d in kept_summaries
        ]
        if not self.cfg.enabled:
            return CondensedView(view, [s.as_dict() for s in kept], render(view))
        view = apply_summaries(view, kept)
        excess = self.count(render(view)) - self.cfg.token_budget
        if excess > 0:
            view, kept = self._summarize_oldest(view, kept, excess, llm)
            excess = self.count(render(view)) - self.cfg.token_budget
        if excess > 0:
            view = self._clip_memory(view, excess)
        return CondensedView(view, [s.as_dict() for s in kept], render(view))

    def _summarize_oldest(
        self, view: list[Event], kept: list[_Summary], excess: int, llm: NodeLLM
    ) -> tuple[list[Event], list[_Summary]]:
        chunks = chunk_view(view, kept)
        condensable = chunks[: max(0, len(chunks) - self.cfg.keep_recent)]
        chosen: list[_Chunk] = []
        saved = 0
        for chunk in condensable:
            chosen.append(chunk)
            saved += self.count(render([view[i] for i in chunk.positions]))
            if saved - SUMMARY_TOKENS >= excess:
                break
        if not chosen or (len(chosen) == 1 and chosen[0].summary is not None):
            log.info("condenser: over budget by %d tokens but nothing condensable", excess)
            return view, kept
        lines = [render_event(view[i]) for c in chosen for i in c.positions]
        task = " ".join(e.text for e in view if e.kind == "task")
        result = llm.call(
            prompts.ChunkSummary,
            prompts.SYSTEM,
            prompts.user_prompt(task, lines),
            fallback=prompts.ChunkSummary(summary=""),
        )
        first, last = chosen[0].from_step, chosen[-1].to_step
        text = result.value.summary.strip()
        merged = {id(c.summary) for c in chosen if c.summary is not None}
        if result.ok and text:
            new = _Summary(first, last, text)
            replacement = new.as_event()
            kept = [s for s in kept if id(s) not in merged] + [new]
            kept.sort(key=lambda s: s.from_step)
        else:
            # Fallback: the chunk's detail is dropped to a one-line marker (not kept in state,
            # so a later call tries the model again).
            log.warning("condenser: summary failed; dropping steps %d-%d to a marker", first, last)
            replacement = Event(
                "summary",
                f"steps {first}-{last}: {len(lines)} events condensed (detail dropped)",
                last,
            )
        drop = {i for c in chosen for i in c.positions}
        at = min(drop)
        out = [
            replacement if i == at else e for i, e in enumerate(view) if i not in drop or i == at
        ]
        return out, kept

    def _clip_memory(self, view: list[Event], excess: int) -> list[Event]:
        """Last-resort guard: shorten the longest retrieved-memory events (logged)."""
        out = list(view)
        order = sorted(
            (i for i, e in enumerate(out) if e.kind == "memory"), key=lambda i: -len(out[i].text)
        )
        for i in order:
            if excess <= 0:
                break
            text = out[i].text
            keep = max(0, len(text) - 4 * excess - 16)
            clipped = text[:keep] + " …[clipped]"
            excess -= self.count(text) - self.count(clipped)
            out[i] = Event("memory", clipped, out[i].step)
            log.warning("condenser: clipped a memory block from %d to %d chars", len(text), keep)
        return out


def filter_noise(events: list[Event]) -> list[Event]:
    """Drop empty events, exact duplicates (kind, text, step) and events of kind noise."""
    seen: set[tuple[str, str, int | None]] = set()
    out: list[Event] = []
    for e in events:
        text = e.text.strip()
        key = (e.kind, text, e.step)
        if e.kind == "noise" or not text or key in seen:
            continue
        seen.add(key)
        out.append(e)
    return out


def apply_summaries(view: list[Event], kept: list[_Summary]) -> list[Event]:
    """Replace the activity events of the steps a kept summary covers by that summary."""
    out: list[Event] = []
    placed: set[int] = set()
    for e in view:
        owner = next((s for s in kept if e.kind in ACTIVITY and s.covers(e.step)), None)
        if owner is None:
            out.append(e)
        elif id(owner) not in placed:
            placed.add(id(owner))
            out.append(owner.as_event())
    # Summaries whose steps are absent from the input go before the first activity event.
    missing = [s.as_event() for s in kept if id(s) not in placed]
    if missing:
        at = next(
            (i for i, e in enumerate(out) if e.kind in ACTIVITY or e.kind == "summary"), len(out)
        )
        out[at:at] = missing
    return out


def chunk_view(view: list[Event], kept: list[_Summary]) -> list[_Chunk]:
    """Chunks in step order: each kept summary, and the activity of each step."""
    by_text = {s.as_event().text: s for s in kept}
    chunks: dict[tuple[int, int], _Chunk] = {}
    for i, e in enumerate(view):
        if e.kind == "summary" and e.text in by_text:
            s = by_text[e.text]
            chunks[(s.from_step, -1)] = _Chunk([i], s.from_step, s.to_step, s)
        elif e.kind in ACTIVITY and e.step is not None:
            chunk = chunks.setdefault((e.step, 0), _Chunk([], e.step, e.step))
            chunk.positions.append(i)
    return [chunks[k] for k in sorted(chunks)]
