"""TALES' protocol as an executor wrapper: a game that ends without a win restarts at once.

TALES (microsoft/tale-suite, ``benchmark.py``'s ``evaluate``) plays a fixed number of steps: when
the world says done without a win at the max score, it resets the game, keeps the history, and
shows the last text, ``-= Restarting =-``, the task and the new first text as that step's
observation. Its agents cannot end a game themselves, so ``task_complete`` is neither offered
nor accepted. The run's score is the best reached over all restarts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from robomemory.core import TASK_COMPLETE, Action, ActionResult, ActionSpace, Executor, Observation
from robomemory.executors.base import rejected

RESTARTING = "-= Restarting =-"  # TALES' mark between the ended game and the new one


class RestartingExecutor:
    """Wraps a world's executor with TALES' restarts; everything else is the world's own
    (``game_path``, ``gold_actions``, ``learn_places`` ... are read through)."""

    def __init__(self, inner: Executor):
        self.inner = inner
        self.best_score = 0.0  # TALES' highscore starts at 0: a negative score never counts
        self.max_score: float | None = None
        self.restarts = 0

    def __getattr__(self, name: str) -> Any:
        # only for what this class lacks: the world's own attributes and protocols
        return getattr(self.inner, name)

    @property
    def reached_max(self) -> bool:
        """Whether the best score reached the world's max score."""
        return self.max_score is not None and self.best_score >= self.max_score

    def reset(self) -> tuple[str, Observation]:
        """Start a new run: the best score and the restarts count from here."""
        self.best_score, self.restarts = 0.0, 0
        task, obs = self.inner.reset()
        self._keep(obs)
        return task, obs

    def replay(self, actions: Sequence[Action]) -> list[ActionResult]:
        """Reset, then run ``actions`` again, restarts included (a resumed run)."""
        self.reset()
        return [self.execute(a) for a in actions]

    def action_space(self) -> ActionSpace:
        """The world's space without ``task_complete``: the world alone ends a game."""
        space = self.inner.action_space()
        return space.model_copy(
            update={
                "verbs": [v for v in space.verbs if v.name != TASK_COMPLETE],
                "candidates": [a for a in space.candidates if a.verb != TASK_COMPLETE],
            }
        )

    def execute(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        """Run ``action``; a game the world ends without a win at the max score restarts."""
        if action.verb == TASK_COMPLETE:
            return rejected(
                action, f"{TASK_COMPLETE} is not offered here: the game ends when the world says"
            )
        result = self.inner.execute(action, timeout_s, cancel)
        obs = result.observation
        self._keep(obs)
        if not obs.done or (obs.won and self.reached_max):
            return result
        return self._restart(result)

    def emergency_stop(self) -> None:
        self.inner.emergency_stop()

    def close(self) -> None:
        self.inner.close()

    def _keep(self, obs: Observation) -> None:
        if obs.max_score is not None:
            self.max_score = obs.max_score
        if obs.score is not None:
            self.best_score = max(self.best_score, obs.score)

    def _restart(self, ended: ActionResult) -> ActionResult:
        """The ended game's last text, the mark, the task and the new game's first text, as
        the observation of the step that ended it (not done: the steps go on counting)."""
        task, first = self.inner.reset()
        self.restarts += 1
        text = f"{ended.observation.text}\n\n{RESTARTING}\n{task}\n\n{first.text}"
        details = {**ended.details, "restarted": True, "ended_score": ended.observation.score}
        return ended.model_copy(
            update={
                "message": text,
                "observation": first.model_copy(update={"text": text}),
                "details": details,
            }
        )
