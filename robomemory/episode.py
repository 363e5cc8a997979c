"""One episode's records and its end, shared by the RoboMemory graph and the baselines.

A step record is a plain ``dict`` typed as a ``TypedDict``: it serializes to the same JSON the
episode log, checkpoints, traces and benchmark records already hold, so saved data loads as
before. :func:`trajectory_step` builds it; :func:`episode_end` is the one rule that says when an
episode is over (``task_complete()``, the world says done, or the step limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NotRequired

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from robomemory.core import TASK_COMPLETE, Action, ActionResult, Observation

EndReason = Literal["task_complete", "won", "lost", "env_done", "max_steps"]
# on_event(node, update): called with each node's state update while an episode runs
EventHandler = Callable[[str, dict[str, Any]], None]


class EpisodeIdError(ValueError):
    """A caller's episode id that an earlier run used: stores key episodes by id alone."""


class TrajectoryStep(TypedDict):
    """The compact record of one executed action (the state's window, the baselines)."""

    step: int
    action: str  # "verb(arg, ...)"
    verb: str
    args: list[str]
    outcome: str  # an Outcome value
    message: str
    score: float | None
    changed: bool | None  # did the world's state change (None: the world does not say)
    place: str | None  # where the robot was when it acted
    world: NotRequired[str | None]  # what the world showed after it (world_of); loop breaking


class StepRecord(TrajectoryStep, total=False):
    """A step as the episode log keeps it: the compact step and what led to it."""

    plan: list[str]  # the plan's remaining steps, this one first
    plan_reason: str
    verdict: dict[str, Any] | None  # the critic's CriticVerdict, None when unchecked
    summary: str
    recalled: dict[str, int]  # characters of each memory branch's recalled text
    recall_text: dict[str, str]  # each branch's recalled text, its first 2,000 characters
    # the long-term items each branch recalled: id, level, text, q, origin (recalled_record)
    recalled_items: dict[str, list[dict[str, Any]]]
    candidates: list[str]
    placed: list[str]  # with the table's order: the row that placed each candidate
    calls: list[dict[str, Any]]  # the model calls that led to it (structured.call_record)


def trajectory_step(
    step: int, action: Action, result: ActionResult, message: str, place: str | None
) -> TrajectoryStep:
    """The record of ``action`` run as step ``step``; ``message`` is the world's answer as the
    agent keeps it, ``place`` where the robot was when it acted."""
    return {
        "step": step,
        "action": str(action),
        "verb": action.verb,
        "args": action.args,
        "outcome": result.outcome.value,
        "message": message,
        "score": result.observation.score,
        "changed": result.details.get("changed"),
        "place": place,
        "world": world_of(result.observation) if _shows(result) else None,
    }


def _shows(result: ActionResult) -> bool:
    """Whether a result carries an observation of the world (a rejected action has none)."""
    obs = result.observation
    return bool(obs.world or obs.place or obs.holding or obs.text)


def world_of(obs: Observation) -> str | None:
    """What the world shows, as a key two equal states share: the executor's digest of its
    state when it gives one, else where the robot is and what it holds; None when the world
    tells neither."""
    if obs.world:
        return obs.world
    if obs.place is None and not obs.holding:
        return None
    return f"{obs.place}|{','.join(sorted(obs.holding))}"


@dataclass(frozen=True)
class EpisodeEnd:
    """Why an episode is over and whether it succeeded."""

    reason: EndReason
    success: bool


def episode_end(
    action: Action,
    result: ActionResult,
    step: int,
    max_steps: int,
    *,
    self_report: bool = True,
) -> EpisodeEnd | None:
    """Whether the episode is over after ``action`` ran as step ``step``; None while it runs.

    It ends on ``task_complete()``, when the world says done, or at ``max_steps``. Worlds report
    success. With ``self_report`` (the RoboMemory agent) ``task_complete()`` ends the episode
    also when the world refused it but ended the episode, and a robot without feedback (no
    score, not done) trusts its own ``task_complete()`` as success. Without it (the baselines)
    only a succeeded ``task_complete()`` ends the episode, and only the world's word counts.
    """
    obs = result.observation
    if action.verb == TASK_COMPLETE and (result.ok or (self_report and obs.done)):
        self_judged = self_report and obs.score is None and not obs.done
        return EpisodeEnd("task_complete", bool(obs.won or self_judged))
    if obs.done:
        return EpisodeEnd("won" if obs.won else ("lost" if obs.lost else "env_done"), obs.won)
    if step >= max_steps:
        return EpisodeEnd("max_steps", self_report and obs.won)
    return None


class EpisodeResult(BaseModel):
    """What one episode did and cost."""

    thread_id: str
    episode_id: str
    task: str = ""
    success: bool = False
    score: float | None = None
    max_score: float | None = None
    steps: int = 0
    end_reason: str = ""
    wall_s: float = 0.0
    usage: dict[str, dict[str, float]] = Field(default_factory=dict)
    trajectory: list[dict] = Field(default_factory=list)
    spatial_stats: list[dict] = Field(default_factory=list)
    consolidation: dict = Field(default_factory=dict)

    @property
    def gc(self) -> float | None:
        """Goal-condition rate: score / max_score."""
        if self.score is None or not self.max_score:
            return None
        return self.score / self.max_score

    @property
    def model_calls(self) -> int:
        """Model calls of all nodes."""
        return int(sum(u.get("calls", 0) for u in self.usage.values()))

    @property
    def tokens(self) -> tuple[int, int]:
        """Prompt and completion tokens of all nodes."""
        p = sum(u.get("prompt_tokens", 0) for u in self.usage.values())
        c = sum(u.get("completion_tokens", 0) for u in self.usage.values())
        return int(p), int(c)
