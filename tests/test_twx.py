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


def test_each_step_says_the_room_the_world_state_and_what_is_held(world):
    """Maps, searches and loops need the place and the world's state: the world returns its
    room and inventory texts with every step (before, place and world were None)."""
    _task, obs = world.reset()
    assert obs.place == "kitchen" and obs.world and obs.holding == [] and obs.holding_known
    start = obs.world
    taken = world.execute(Action(verb="pick_up", args=["cookbook"])).observation
    assert taken.place == "kitchen" and taken.holding == ["cookbook"]
    assert taken.world != start  # the inventory changed: another state
    opened = world.execute(Action(verb="open", args=["fridge"])).observation
    assert opened.world not in (start, taken.world)
    refused = world.execute(Action(verb="go", args=["east"])).observation  # a closed door
    assert refused.world == opened.world and refused.place == "kitchen"


def test_the_worlds_command_words_name_its_verbs_in_tasks():
    """A coin task says "take it": the world's own command word is the take verb's alias."""
    from robomemory.executors.envs.twx import VERBS
    from robomemory.grounding import left_instructions

    task = (
        "Your task is to search the environment and find the coin. Once you find the coin, take it."
    )
    left = left_instructions([], [], [v.spec() for v in VERBS], [], task=task)
    assert [(i.verb, i.phrase) for i in left] == [("pick_up", "take the coin")]


def test_a_tidy_up_task_asks_its_verbs_of_a_class_of_things():
    """The tidy-up task ("pick up objects, then place them in their usual locations") names
    the take and, by the world's word "place", the put: both asked of any thing."""
    ex = TextWorldExpressExecutor("twc", seed=0)
    try:
        task, _ = ex.reset()
        verbs = ex.action_space().verbs
    finally:
        ex.close()
    from robomemory.grounding.goal_words import class_verbs

    assert class_verbs(task, verbs) == ["pick_up", "put_down_to"]


def test_a_mapreader_world_tells_where_its_ways_lead_and_its_map_joins_places():
    """The world's own layout of its texts: "To the West you see the basement." is a way out
    and where it leads; a map read joins places (robomemory's world model routes by them)."""
    from robomemory.core import Observation, TextLimits
    from robomemory.eval.suites import TWX_MAPREADER_PARAMS
    from robomemory.executors.envs.twx import map_links

    ex = TextWorldExpressExecutor("mapreader", seed=11, params=TWX_MAPREADER_PARAMS)
    try:
        _task, obs = ex.reset()
        assert obs.place == "studio" and obs.exits == {"east": "garage", "west": "basement"}
        read = ex.execute(Action(verb="read", args=["map"])).observation
        assert ("studio", "basement") in read.links and ("garage", "outside") in read.links
        walked = ex.execute(Action(verb="go", args=["east"])).observation
        assert walked.exits == {"south": "outside", "west": "studio"} and walked.links == []
    finally:
        ex.close()
    assert map_links("The hall connects to the attic, spare room and den.") == (
        ("hall", "attic"),
        ("hall", "spare room"),
        ("hall", "den"),
    )
    many = Observation(exits={f"d{i}": "x" * 300 for i in range(200)})
    bounded = many.bounded(TextLimits(name_chars=20, names=5))
    assert len(bounded.exits) == 5 and all(len(v) <= 20 for v in bounded.exits.values())


def test_a_thing_taken_is_held_though_no_command_names_it_there():
    """A map reader's coin, taken where nothing can hold it, is named by no valid command; the
    inventory's text still names it, so the robot knows it holds the coin on its way back."""
    from robomemory.eval.suites import TWX_MAPREADER_PARAMS

    ex = TextWorldExpressExecutor("mapreader", seed=10, params=TWX_MAPREADER_PARAMS, fold="dev")
    try:
        ex.reset()
        gold = ex.gold_actions()
        for command in gold[: gold.index("take coin") + 1]:
            observation = ex.execute(ex.command_to_action(command)).observation
        offered = {n for a in ex.action_space().candidates for n in a.args}
        assert "coin" not in offered  # the premise: nothing here to put it in
        assert "coin" in observation.holding
    finally:
        ex.close()
