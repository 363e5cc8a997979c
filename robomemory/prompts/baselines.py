"""Prompts and schemas of the single-model baselines (paper section 4.2: a VLM as one agent).

``react``: one call per step; the recent chat history (action -> feedback turns) as context.
``fullctx``: the same call with the whole episode history in context.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, create_model

from robomemory.core import TASK_COMPLETE, Action, ActionSpace, task_view
from robomemory.prompts.planner import STRICT, make_step_model, numbered, to_action

BASELINE_RULES = (
    "You control a robot in a text world. Read the task, the history and the observation, "
    "then choose the next action from the list of actions possible now. Follow the "
    "instructions or recipe you have read, step by step. Do not "
    f"redo what is done. Call {TASK_COMPLETE}() only when the task is done."
)


def baseline_system(space: ActionSpace) -> str:
    """Rules and the action API: stable for a world, so the server caches them."""
    return f"{BASELINE_RULES}\nActions:\n{space.describe()}"


@lru_cache(maxsize=256)
def _turn_model(first: tuple[str, ...], step: type[BaseModel]) -> type[BaseModel]:
    # No free-text thought, as in the planner's schema (same model, same answer form).
    action_type = Literal[first] if first else step  # type: ignore[valid-type]
    return create_model("BaselineTurn", __config__=STRICT, next=(action_type, ...))


def make_turn_model(space: ActionSpace, candidates: list[Action]) -> type[BaseModel]:
    """The answer of one baseline step: one action — one of the candidates
    (the same grounded list the planner sees) or, without candidates, any verb x known names."""
    return _turn_model(tuple(str(a) for a in candidates), make_step_model(space))


def turn_action(turn: BaseModel, candidates: list[Action]) -> Action:
    """The action a parsed turn chose."""
    if isinstance(turn.next, str):
        return {str(a): a for a in candidates}[turn.next]
    return to_action(turn.next)


def render_turns(turns: list[str]) -> str:
    return "\n".join(turns) if turns else "none yet"


def baseline_user(
    task: str,
    turns: list[str],
    observation: str,
    space: ActionSpace,
    candidates: list[Action],
    rows: Sequence[str] = (),
) -> str:
    """Task first (a fixed prefix per episode), then history, observation and the choices
    (with ``rows``, what the effects table says of each, as the planner is told)."""
    if candidates:
        choices = f"Actions possible now:\n{numbered(candidates, space, rows)}"
    else:
        choices = f"Known names: {', '.join(space.all_targets()) or 'none yet'}"
    return (
        f"Task: {task_view(task)}\n\nHistory:\n{render_turns(turns)}\n\n"
        f"Observation:\n{observation.strip()[:1200]}\n\n{choices}\n\nNext action?"
    )


def turn_text(step: int, action: str, outcome: str, message: str, limit: int = 300) -> str:
    """One history line: what was done and what the world answered."""
    return f"{step}. {action} -> {outcome}: {' '.join(message.split())[:limit]}"
