"""Planner and critic prompts; the action schema is built from the executor's action space."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

from robomemory.executors.base import Action, ActionSpace

PLANNER_SYSTEM = (
    "You are the planner of a robot. Given the task, the memory and the current observation, "
    "output a short plan: the next actions, in order, using only the allowed actions and "
    "names. Call task_complete() only when the task is done."
)

CRITIC_SYSTEM = (
    "You are the critic of a robot. Decide if the proposed next action still makes sense "
    "given the latest observation and memory. Reject only if it is clearly wrong or stale."
)


@lru_cache(maxsize=64)
def _step_model(verbs: tuple[str, ...], targets: tuple[str, ...]) -> type[BaseModel]:
    verb_type = Literal[verbs]  # type: ignore[valid-type]
    arg_type = Literal[targets] if targets else str  # type: ignore[valid-type]
    return create_model(
        "PlanStep",
        action=(verb_type, ...),
        args=(list[arg_type], Field(default_factory=list, max_length=2)),
    )


def make_step_model(space: ActionSpace) -> type[BaseModel]:
    """A pydantic model for one action: verb from the space, arguments from known names."""
    return _step_model(tuple(v.name for v in space.verbs), tuple(space.all_targets()))


@lru_cache(maxsize=64)
def _plan_model(step: type[BaseModel], max_len: int) -> type[BaseModel]:
    return create_model(
        "Plan",
        thought=(str, Field(description="one short sentence", max_length=300)),
        steps=(list[step], Field(min_length=1, max_length=max_len)),
    )


def make_plan_model(space: ActionSpace, max_len: int) -> type[BaseModel]:
    """A pydantic model for a multi-step plan over the space."""
    return _plan_model(make_step_model(space), max_len)


def to_action(step: BaseModel) -> Action:
    """Turn a parsed plan step into an Action."""
    return Action(verb=str(step.action), args=[str(a) for a in step.args])


def planner_user(context: str, space: ActionSpace, critique: str | None) -> str:
    """The planner's user message: condensed working memory, then the action API."""
    names = ", ".join(space.all_targets()) or "none yet"
    parts = [context, f"Allowed actions:\n{space.describe()}", f"Known names: {names}"]
    if critique:
        parts.append(f"The critic rejected the last plan: {critique}")
    parts.append("Plan the next actions.")
    return "\n\n".join(parts)


class CriticVerdict(BaseModel):
    """The critic's decision on the next planned action."""

    approve: bool
    reason: str = Field(description="one short sentence", max_length=300)


def critic_user(context: str, action: str, plan: list[str]) -> str:
    return f"{context}\n\nPlan: {' -> '.join(plan)}\nProposed next action: {action}"
