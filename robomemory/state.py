"""The checkpointed agent state: plain data and memory handles only, never live clients.

Models cross nodes in their JSON form (``model_dump()``), the form checkpoints have always
held; the accessors below give them back typed, each validated in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from typing_extensions import TypedDict

from robomemory.action_model import ObservedEffect
from robomemory.core import Action, ActionResult, Observation
from robomemory.episode import TrajectoryStep
from robomemory.grounding.briefing import Briefing
from robomemory.grounding.world import WorldModel


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


class Verdict(TypedDict):
    """The critic's answer as the state holds it (``CriticVerdict.model_dump()``)."""

    approve: bool
    reason: str


class AgentState(TypedDict, total=False):
    """The graph's state; see docs/ARCHITECTURE.md for which node reads and writes what."""

    # task and handles
    task: str
    handles: dict[str, str]
    step: int
    # perception
    observation: dict[str, Any]  # Observation.model_dump(): observation_of()
    summary: str
    queries: list[str]
    relations: list[list[str]] | None  # G_new [subject, relation, object] from the world's words
    # memory
    temporal: list[str]
    compressed: dict[str, str] | None  # {"of": buffer_key, "summary"}: made beside perceive
    recalled: Annotated[dict[str, str], merge_dicts]
    in_view: Annotated[dict[str, list[str]], merge_dicts]  # long-term lines recalled this task
    condensed: list[dict]
    working_memory: str
    # planning
    plan: list[dict[str, Any]]  # Action.model_dump() each: current_plan()
    plan_index: int
    plan_reason: str
    briefing: dict[str, Any]  # Briefing.model_dump(): what ground told planner and critic
    verdict: Verdict | None  # approves()
    replans: int
    # execution (the full step records are in the episode log, not here)
    last_result: dict[str, Any] | None  # ActionResult.model_dump(mode='json'): last_result_of()
    trajectory: Annotated[list[TrajectoryStep], recent_window]  # the newest steps, compact
    world: dict[str, Any]  # WorldModel.model_dump(): what the world showed this task
    # the action model (action_model.py): {"world": world kind, "effects": [...]} recalled at
    # the start, and this task's acts' effects as seen, merged per (verb, kind), bounded
    learned_effects: dict[str, Any]
    observed_effects: list[dict[str, Any]]  # ObservedEffect.to_json() each
    # outcome and accounting
    done: bool
    success: bool
    end_reason: str
    score: float | None
    max_score: float | None
    routes_recalled: int  # ways between places the spatial map gave navigation at the start
    usage: Annotated[dict[str, dict], sum_usage]
    consolidation: dict


def observation_of(state: Mapping[str, Any]) -> Observation:
    """The current observation (an empty one before the first)."""
    return Observation.model_validate(state.get("observation") or {})


def current_plan(state: Mapping[str, Any]) -> list[Action]:
    """The current plan's actions."""
    return [Action.model_validate(a) for a in state.get("plan") or []]


def approves(verdict: Mapping[str, Any] | None) -> bool:
    """Whether the critic's verdict lets the step run (no verdict: it does)."""
    return bool((verdict or {}).get("approve", True))


def last_result_of(state: Mapping[str, Any]) -> ActionResult | None:
    """The last executed action's result, None before the first."""
    result = state.get("last_result")
    return ActionResult.model_validate(result) if result else None


def world_model(state: Mapping[str, Any]) -> WorldModel:
    """The task's world model (an empty one before the task starts)."""
    return WorldModel.model_validate(state.get("world") or {})


def learned_of(state: Mapping[str, Any]) -> list[ObservedEffect]:
    """The effects recalled at the task's start for its world's verbs that declare none."""
    learned = state.get("learned_effects") or {}
    return [ObservedEffect.from_json(e) for e in learned.get("effects") or ()]


def observed_of(state: Mapping[str, Any]) -> list[ObservedEffect]:
    """The effects this task's acts were seen to have so far."""
    return [ObservedEffect.from_json(e) for e in state.get("observed_effects") or ()]


def briefing_of(state: Mapping[str, Any]) -> Briefing:
    """The step's briefing (an empty one before ``ground`` ran)."""
    return Briefing.model_validate(state.get("briefing") or {})
