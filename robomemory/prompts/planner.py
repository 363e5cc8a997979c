"""Planner and critic prompts; the action schema is built from the executor's action space."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, Field, create_model

from robomemory.executors.base import Action, ActionSpace

PLANNER_SYSTEM = (
    "You are the planner of a robot. Given the task, the memory and the current observation, "
    "output a short plan: the next actions, in order, using only the allowed actions and "
    "names. Do not repeat an action that already succeeded: use what it revealed. Never "
    "repeat a failed action: try another object, container or room. "
    "Call task_complete() only when the task is done."
)

CRITIC_SYSTEM = (
    "You are the critic of a robot. Decide if the proposed next action still makes sense "
    "given the latest observation and memory. Reject only if it is clearly wrong or stale."
)


@lru_cache(maxsize=256)
def _verb_step(verb: str, kinds: tuple[tuple[str, ...] | None, ...]) -> type[BaseModel]:
    """One plan-step variant: a fixed verb and arguments drawn from their kinds' names."""
    names: list[str] = []
    free = False
    for valid in kinds:
        if valid is None:
            free = True
        else:
            names += [n for n in valid if n not in names]
    arg_type = str if free or not names else Literal[tuple(names)]  # type: ignore[valid-type]
    n = len(kinds)
    return create_model(
        f"Step_{verb}",
        action=(Literal[verb], ...),  # type: ignore[valid-type]
        args=(list[arg_type], Field(default_factory=list, min_length=n, max_length=n)),
    )


def make_step_model(space: ActionSpace) -> Any:
    """The type of one plan step: a union of per-verb variants, each constraining its
    arguments to the names the agent knows for that argument kind. A verb that needs a kind
    with no known name yet (e.g. navigate_to before any room is known) is left out."""
    variants = []
    for verb in space.verbs:
        kinds = tuple(
            None if space.targets.get(kind) is None else tuple(space.targets[kind])
            for kind in verb.arg_kinds
        )
        if any(k == () for k in kinds):
            continue
        variants.append(_verb_step(verb.name, kinds))
    if not variants:
        raise ValueError("the action space offers no usable action")
    return variants[0] if len(variants) == 1 else Union[tuple(variants)]  # noqa: UP007


@lru_cache(maxsize=64)
def _plan_model(step: Any, max_len: int) -> type[BaseModel]:
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


def planner_user(
    context: str, space: ActionSpace, critique: str | None, last_result: str | None = None
) -> str:
    """The planner's user message: condensed working memory, the action API, then the last
    action's result again (a small model weighs the end of its prompt most)."""
    names = ", ".join(space.all_targets()) or "none yet"
    parts = [context, f"Allowed actions:\n{space.describe()}", f"Known names: {names}"]
    if last_result:
        parts.append(f"Last result: {last_result}")
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
