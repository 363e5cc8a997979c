"""Helpers shared by the executors. The types they exchange live in :mod:`robomemory.core`
and are re-exported here for callers that import them from this module."""

from __future__ import annotations

from collections.abc import Sequence

from robomemory.core import (
    TASK_COMPLETE,
    Action,
    ActionResult,
    ActionSpace,
    Executor,
    Observation,
    Outcome,
    VerbSpec,
)

__all__ = [
    "TASK_COMPLETE",
    "Action",
    "ActionResult",
    "ActionSpace",
    "Executor",
    "Observation",
    "Outcome",
    "VerbSpec",
    "join_names",
    "rejected",
]


def rejected(action: Action, message: str) -> ActionResult:
    """A REJECTED result for an action that was never sent to the world or hardware."""
    return ActionResult(action=action, outcome=Outcome.REJECTED, message=message)


def join_names(names: Sequence[str]) -> str:
    """Names joined with commas, or ``none``."""
    return ", ".join(names) if names else "none"
