"""The checkpointed agent state: plain data and memory handles only, never live clients."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict


def merge_dicts(left: dict | None, right: dict | None) -> dict:
    """Reducer: later keys win (each memory branch writes its own key)."""
    return {**(left or {}), **(right or {})}


def sum_usage(left: dict | None, right: dict | None) -> dict:
    """Reducer: per-node usage counters are summed."""
    out = {k: dict(v) for k, v in (left or {}).items()}
    for node, counters in (right or {}).items():
        slot = out.setdefault(node, {})
        for key, value in counters.items():
            slot[key] = slot.get(key, 0) + value
    return out


RECENT_STEPS = 8


def recent_window(left: list | None, right: list | None) -> list:
    """Reducer: append, keep the newest ``RECENT_STEPS`` (the whole record is in the episode
    log, so a checkpoint's size stays flat as an episode grows)."""
    return [*(left or []), *(right or [])][-RECENT_STEPS:]


class AgentState(TypedDict, total=False):
    # task and handles
    task: str
    handles: dict[str, str]
    step: int
    # perception
    observation: dict[str, Any]
    summary: str
    queries: list[str]
    # memory
    temporal: list[str]
    recalled: Annotated[dict[str, str], merge_dicts]
    condensed: list[dict]
    working_memory: str
    # planning
    plan: list[dict]
    plan_index: int
    plan_reason: str
    candidates: list[str]
    verdict: dict | None
    replans: int
    # execution (the full step records are in the episode log, not here)
    last_result: dict | None
    trajectory: Annotated[list[dict], recent_window]  # the newest steps, compact
    notes: list[str]  # what the agent read that the task depends on (bounded)
    done_actions: list[str]  # actions that changed the world (bounded)
    # outcome and accounting
    done: bool
    success: bool
    end_reason: str
    score: float | None
    max_score: float | None
    usage: Annotated[dict[str, dict], sum_usage]
    consolidation: dict
