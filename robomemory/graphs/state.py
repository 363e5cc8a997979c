"""The checkpointed agent state: plain data and memory handles only, never live clients."""

from __future__ import annotations

import operator
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


def union_list(left: list | None, right: list | None) -> list:
    """Reducer: ordered set union."""
    out = list(left or [])
    out += [x for x in (right or []) if x not in out]
    return out


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
    retrieved_ids: Annotated[list[str], union_list]
    spatial_stats: Annotated[list[dict], operator.add]
    condensed: list[dict]
    working_memory: str
    # planning
    plan: list[dict]
    plan_index: int
    plan_reason: str
    verdict: dict | None
    replans: int
    # execution
    last_result: dict | None
    trajectory: Annotated[list[dict], operator.add]
    # outcome and accounting
    done: bool
    success: bool
    end_reason: str
    score: float | None
    max_score: float | None
    usage: Annotated[dict[str, dict], sum_usage]
    consolidation: dict
