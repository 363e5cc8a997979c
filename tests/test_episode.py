"""The step record and the end-of-episode rule shared by the graph and the baselines."""

from __future__ import annotations

import json

import pytest

from robomemory.core import TASK_COMPLETE, Action, ActionResult, Observation, Outcome
from robomemory.episode import episode_end, trajectory_step

DONE = TASK_COMPLETE


def result(verb: str, outcome: Outcome = Outcome.SUCCEEDED, **obs) -> tuple[Action, ActionResult]:
    action = Action(verb=verb)
    return action, ActionResult(action=action, outcome=outcome, observation=Observation(**obs))


@pytest.mark.parametrize(
    ("verb", "outcome", "obs", "step", "graph", "baseline"),
    [
        (
            DONE,
            Outcome.SUCCEEDED,
            {"score": 1, "done": True, "won": True},
            3,
            ("task_complete", True),
            ("task_complete", True),
        ),
        # TextWorld refuses task_complete() when the game is not won, and ends the episode
        (
            DONE,
            Outcome.FAILED,
            {"score": 0, "done": True},
            3,
            ("task_complete", False),
            ("env_done", False),
        ),
        # a robot without feedback trusts its own task_complete()
        (DONE, Outcome.SUCCEEDED, {}, 3, ("task_complete", True), ("task_complete", False)),
        (
            "look",
            Outcome.SUCCEEDED,
            {"done": True, "lost": True},
            3,
            ("lost", False),
            ("lost", False),
        ),
        ("look", Outcome.SUCCEEDED, {"done": True, "won": True}, 3, ("won", True), ("won", True)),
        ("look", Outcome.SUCCEEDED, {"done": True}, 3, ("env_done", False), ("env_done", False)),
        ("look", Outcome.SUCCEEDED, {}, 5, ("max_steps", False), ("max_steps", False)),
        ("look", Outcome.SUCCEEDED, {}, 4, None, None),
        (DONE, Outcome.REJECTED, {}, 4, None, None),
    ],
)
def test_episode_end(verb, outcome, obs, step, graph, baseline) -> None:
    action, res = result(verb, outcome, **obs)
    for self_report, want in ((True, graph), (False, baseline)):
        end = episode_end(action, res, step, 5, self_report=self_report)
        assert (None if end is None else (end.reason, end.success)) == want


def test_trajectory_step_is_the_json_the_logs_hold() -> None:
    action = Action(verb="pick_up", args=["milk"])
    res = ActionResult(
        action=action,
        outcome=Outcome.SUCCEEDED,
        message="Taken.",
        observation=Observation(score=1.0),
        details={"changed": True},
    )
    item = trajectory_step(2, action, res, "Taken.", "kitchen")
    assert json.loads(json.dumps(item)) == {
        "step": 2,
        "action": "pick_up(milk)",
        "verb": "pick_up",
        "args": ["milk"],
        "outcome": "succeeded",
        "message": "Taken.",
        "score": 1.0,
        "changed": True,
        "place": "kitchen",
        "world": None,  # the world gave no digest, place or holdings after the step
    }
    keys = "step action verb args outcome message score changed place world"
    assert list(item) == keys.split()
