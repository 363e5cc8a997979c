"""Helpers shared by the executors. The types they exchange live in :mod:`robomemory.core`
and are re-exported here for callers that import them from this module."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

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
    "world_digest",
]


def rejected(action: Action, message: str) -> ActionResult:
    """A REJECTED result for an action that was never sent to the world or hardware."""
    return ActionResult(action=action, outcome=Outcome.REJECTED, message=message)


def join_names(names: Sequence[str]) -> str:
    """Names joined with commas, or ``none``."""
    return ", ".join(names) if names else "none"


def world_digest(parts: Iterable[str]) -> str:
    """A short digest of a world's state from its parts in any order (equal sets, equal
    digests): ``Observation.world``, what loop breaking compares."""
    joined = "\n".join(sorted(set(parts)))
    return hashlib.blake2b(joined.encode(), digest_size=8).hexdigest()
