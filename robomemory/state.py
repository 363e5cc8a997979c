"""The checkpointed agent state: plain data and memory handles only, never live clients.

Models cross nodes in their JSON form (``model_dump()``), the form checkpoints have always
held; the accessors below give them back typed, each validated in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import ConfigDict
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
    """The graph's state; see docs/ARCHITECTURE.md for which node reads and writes what. Each
    field's docstring is its description in the graph's JSON schema (LangGraph Studio)."""

    __pydantic_config__ = ConfigDict(use_attribute_docstrings=True)  # type: ignore[misc]

    # task and handles
    task: str
    """The task in the world's or the user's words, whole."""
    handles: dict[str, str]
    """Memory handles (MemoryHandles: robot, episode, spatial graph, semantic and episodic
    collections): names of stores, never live clients."""
    step: int
    """Steps executed so far in this task."""
    # perception
    observation: dict[str, Any]
    """The newest observation (Observation.model_dump(): text, images, place, score)."""
    summary: str
    """The step summarizer's one line on what the last step changed."""
    queries: list[str]
    """The query generator's memory queries for this step."""
    relations: list[list[str]] | None
    """G_new: [subject, relation, object] triples read from the world's words this step."""
    # memory
    temporal: list[str]
    """The temporal memory's buffer of recent step summaries, oldest first."""
    compressed: dict[str, str] | None
    """The temporal compression made beside perceive: {"of": buffer key, "summary"}."""
    recalled: Annotated[dict[str, str], merge_dicts]
    """What each memory branch recalled this step, by branch (temporal, spatial, ...)."""
    recalled_items: Annotated[dict[str, list[dict[str, Any]]], merge_dicts]
    """The long-term items each branch recalled this step (id, level, text, Q, origin), so a
    run's page names a lesson by its text, utility and writer, not its id."""
    in_view: Annotated[dict[str, list[str]], merge_dicts]
    """Long-term memory lines recalled so far this task, by branch (shown once each)."""
    condensed: list[dict]
    """The condenser's summaries of older context (the OpenHands-style condenser)."""
    working_memory: str
    """The planner's context: the task, then what memory and the condenser give."""
    # planning
    plan: list[dict[str, Any]]
    """The current plan: Action.model_dump() per step, the first chosen among candidates."""
    plan_index: int
    """The plan's next step to run."""
    plan_reason: str
    """Why the plan is what it is: the table's row, or the fallback's reason."""
    table_next: bool
    """Foreseen after each act: the table will take the next step's action with no model call
    (ground.table_decides_now), so no model reads that step's queries, summary or compression."""
    briefing: dict[str, Any]
    """What the ground node told planner and critic this step (Briefing.model_dump())."""
    readings: dict[str, str]
    """The model's reading of each thing the task describes by a clause: description -> thing."""
    verdict: Verdict | None
    """The critic's verdict on the plan's next step (none: approved)."""
    replans: int
    """Plans rejected by the critic so far in this task."""
    # execution (the full step records are in the episode log, not here)
    last_result: dict[str, Any] | None
    """The last action's result (ActionResult.model_dump(mode='json'))."""
    trajectory: Annotated[list[TrajectoryStep], recent_window]
    """The newest steps, compact (the whole record is in the episode log)."""
    world: dict[str, Any]
    """The world model: what the world showed this task (WorldModel.model_dump())."""
    learned_effects: dict[str, Any]
    """Effects recalled at the start for this world's verbs: {"world": kind, "effects"}."""
    observed_effects: list[dict[str, Any]]
    """This task's acts' effects as seen, merged per (verb, kind), bounded."""
    # outcome and accounting
    done: bool
    """Whether the episode is over."""
    success: bool
    """Whether the task was won."""
    end_reason: str
    """Why the episode ended (won, task_complete, max_steps, ...)."""
    score: float | None
    """The world's score after the last step, where it keeps one."""
    max_score: float | None
    """The world's highest score, where it tells it."""
    routes_recalled: int
    """Ways between places the spatial map gave navigation at the start."""
    usage: Annotated[dict[str, dict], sum_usage]
    """Model calls, tokens and seconds per node, summed over the task."""
    consolidation: dict
    """What consolidation wrote to long-term memory at the task's end."""


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
    """The step's briefing (an empty one before ``ground`` ran); fields a checkpoint written
    by an earlier version holds and this one dropped are left out."""
    kept = {k: v for k, v in (state.get("briefing") or {}).items() if k in Briefing.model_fields}
    return Briefing.model_validate(kept)
