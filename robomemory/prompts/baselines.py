"""Prompts and schemas of the single-model baselines (paper section 4.2: a VLM as one agent).

``react``: one call per step; the recent chat history (action -> feedback turns) as context.
``fullctx``: the same call with the whole episode history in context.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field, create_model

from robomemory.executors.base import ActionSpace
from robomemory.prompts.planner import make_step_model

BASELINE_SYSTEM = (
    "You control a robot in a text world. Read the task, the history and the observation, "
    "think in one short sentence, then give the single next action using only the allowed "
    "actions and names. Do not repeat an action that already succeeded: use what it "
    "revealed. Never repeat a failed action: try another object, container or room. "
    "Call task_complete() only when the task is done."
)


@lru_cache(maxsize=64)
def _turn_model(step: type[BaseModel]) -> type[BaseModel]:
    return create_model(
        "BaselineTurn",
        thought=(str, Field(description="one short sentence", max_length=300)),
        next=(step, ...),
    )


def make_turn_model(space: ActionSpace) -> type[BaseModel]:
    """The answer of one baseline step: a thought and one action over the space."""
    return _turn_model(make_step_model(space))


def render_turns(turns: list[str]) -> str:
    return "\n".join(turns) if turns else "none yet"


def baseline_user(task: str, turns: list[str], observation: str, space: ActionSpace) -> str:
    """Task first (a fixed prefix per episode), then history, observation and the action API."""
    names = ", ".join(space.all_targets()) or "none yet"
    return (
        f"Task: {task}\n\nHistory:\n{render_turns(turns)}\n\n"
        f"Observation:\n{observation.strip()[:1200]}\n\n"
        f"Allowed actions:\n{space.describe()}\nKnown names: {names}\n\nNext action?"
    )


def turn_text(step: int, action: str, outcome: str, message: str, limit: int = 300) -> str:
    """One history line: what was done and what the world answered."""
    return f"{step}. {action} -> {outcome}: {' '.join(message.split())[:limit]}"
