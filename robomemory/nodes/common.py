"""Helpers shared by the nodes: the run's live context and per-node metering."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from robomemory.executors.base import Action, ActionSpace, Observation
from robomemory.graphs.context import AgentContext, live_context
from robomemory.grounding import READ_VERBS, by_relevance, fresh_candidates, named_by


class NodeRun:
    """Meters one node invocation: model usage and wall time go to ``state['usage']``."""

    def __init__(self, name: str, runtime: Runtime[AgentContext] | None):
        self.name = name
        self.ctx = live_context(runtime.context if runtime is not None else None)
        self.llm = self.ctx.llm.for_node(name)
        self._t0 = time.perf_counter()

    def finish(self, update: dict[str, Any]) -> dict[str, Any]:
        usage = self.llm.usage.as_dict()
        usage["wall_s"] = round(time.perf_counter() - self._t0, 4)
        usage["runs"] = 1
        update["usage"] = {self.name: usage}
        return update


def observation_of(state: dict) -> Observation:
    return Observation.model_validate(state.get("observation") or {})


def last_action_text(state: dict) -> str | None:
    result = state.get("last_result")
    if not result:
        return None
    action = result["action"]
    call = f"{action['verb']}({', '.join(action.get('args', []))})"
    return f"{call} -> {result['outcome']}: {result.get('message', '')}".strip()


def result_line(item: dict, limit: int = 300) -> str:
    """One executed action and the world's answer, whitespace collapsed (recipes stay whole)."""
    message = " ".join(str(item["message"]).split())[:limit]
    return f"step {item['step']}: {item['action']} -> {item['outcome']}: {message}"


def current_candidates(state: dict, space: ActionSpace) -> list[Action]:
    """The actions the world affords now, less those this episode has shown useless here."""
    place = observation_of(state).place
    trajectory = state.get("trajectory") or []
    fresh = fresh_candidates(space.candidates, trajectory, place)
    notes = [n.split(": ", 1)[-1] for n in reversed(state.get("notes") or [])]
    ranked = by_relevance(fresh, notes, state.get("done_actions") or [])
    # The task may point at what to read first ("check the cookbook"); what to do with things
    # comes from what was read, so the task promotes only reads.
    task = state.get("task") or ""
    reads = [a for a in ranked if a.verb in READ_VERBS and named_by(a, task)]
    promoted = reads[:1] if not notes else []
    return promoted + [a for a in ranked if a not in promoted]
