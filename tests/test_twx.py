"""TextWorldExpress executor: a cookingworld oracle path through the action API."""

from __future__ import annotations

import pytest

pytest.importorskip("textworld_express")

from robomemory.core import Action, Executor, Outcome
from robomemory.executors.envs.twx import TextWorldExpressExecutor  # noqa: E402


@pytest.fixture(scope="module")
def world():
    ex = TextWorldExpressExecutor("cookingworld", seed=0)
    yield ex
    ex.close()


def test_cookingworld_gold_path_wins(world):
    assert isinstance(world, Executor)
    task, obs = world.reset()
    assert "meal" in task and "kitchen" in obs.text
    scores = []
    for command in world.gold_actions():
        action = world.command_to_action(command)
        assert action is not None, command
        result = world.execute(action)
        assert result.ok, (command, result.message)
        scores.append(result.observation.score)
    assert scores == sorted(scores) and scores[-1] == 1.0
    assert result.observation.won and result.observation.done
    assert world.gc == 1.0


def test_targets_are_only_what_was_seen(world):
    world.reset()
    space = world.action_space()
    assert "cookbook" in space.targets["object"]
    assert "oven" in space.targets["appliance"]
    assert set(space.targets["direction"]) <= {"north", "south", "east", "west"}
    # The ingredient in the closed fridge is not seen until the fridge is opened.
    assert "block of cheese" not in space.targets["object"]
    world.execute(Action(verb="open", args=["fridge"]))
    assert "block of cheese" in world.action_space().targets["object"]


def test_rejected_and_failed(world):
    world.reset()
    n = len(world.commands)
    r = world.execute(Action(verb="pick_up", args=["unicorn"]))
    assert r.outcome == Outcome.REJECTED and len(world.commands) == n
    r = world.execute(Action(verb="slice", args=["cookbook"]))
    assert r.outcome == Outcome.FAILED and r.message.startswith("Unknown action")
    closed = world.execute(Action(verb="go", args=["east"]))
    assert closed.outcome == Outcome.FAILED and "door is closed" in closed.message


def test_twc_game_runs():
    ex = TextWorldExpressExecutor("twc", seed=3)
    try:
        ex.reset()
        for command in ex.gold_actions():
            result = ex.execute(ex.command_to_action(command))
        assert result.observation.won
    finally:
        ex.close()


def test_candidates_are_the_worlds_valid_actions_and_the_gold_path_stays_in_them(world):
    world.reset()
    for command in world.gold_actions():
        space = world.action_space()
        texts = [str(a) for a in space.candidates]
        action = world.command_to_action(command)
        assert str(action) in texts, (command, texts)
        assert texts[-1] == "task_complete()"
        world.execute(action)
