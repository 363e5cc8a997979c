"""The TextWorld executor on the real bundled games (real textworld, no fakes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from robomemory.core import Action, Executor, Outcome, Route, RouteLearner
from robomemory.executors.envs.textworld import (
    TextWorldExecutor,
    bundled_game,
    list_bundled_games,
    walkthrough_actions,
    world_locations,
)
from robomemory.executors.envs.textworld_games import command_to_action


@pytest.fixture
def six_rooms() -> Iterator[TextWorldExecutor]:
    ex = TextWorldExecutor(bundled_game("cooking_6rooms"))
    ex.reset()
    yield ex
    ex.close()


def act(verb: str, *args: str) -> Action:
    return Action(verb=verb, args=list(args))


def test_bundled_games_are_listed() -> None:
    games = list_bundled_games()
    assert len(games) >= 5
    assert "cooking_1room" in games and "custom_3rooms" in games
    assert bundled_game("cooking_1room").with_suffix(".json").exists()
    with pytest.raises(FileNotFoundError, match="cooking_1room"):
        bundled_game("no_such_game")


@pytest.mark.parametrize("name", list_bundled_games())
def test_walkthrough_wins_each_game(name: str) -> None:
    ex = TextWorldExecutor(bundled_game(name))
    assert isinstance(ex, Executor)
    task, first = ex.reset()
    assert task and first.text and first.score == 0 and first.max_score > 0
    results = [ex.execute(a) for a in walkthrough_actions(bundled_game(name))]
    ex.close()
    assert [r.outcome for r in results] == [Outcome.SUCCEEDED] * len(results), [
        (str(r.action), r.message) for r in results if not r.ok
    ]
    last = results[-1].observation
    assert last.won and last.done and last.score == last.max_score


def test_command_translation() -> None:
    assert command_to_action("take red onion from fridge") == act("pick_up", "red onion")
    assert command_to_action("insert apple into box") == act("put_down_to", "apple", "box")
    assert command_to_action("dice banana with knife") == act("dice", "banana")
    assert command_to_action("cook banana with stove") == act("cook", "banana", "stove")
    assert command_to_action("prepare meal") == act("prepare_meal")
    with pytest.raises(ValueError):
        command_to_action("xyzzy")


def test_game_rejected_action_is_failed_with_game_message(six_rooms: TextWorldExecutor) -> None:
    result = six_rooms.execute(act("pick_up", "toilet"))
    assert result.outcome == Outcome.FAILED
    assert result.message and result.message == result.observation.text
    assert result.details["commands"] == ["take toilet"]
    wall = six_rooms.execute(act("go", "west"))
    assert wall.outcome == Outcome.FAILED and "can't go" in wall.message.lower()
    assert six_rooms.current_room == "bathroom"


def test_unknown_verb_or_target_is_rejected_with_choices(six_rooms: TextWorldExecutor) -> None:
    facts = set(six_rooms.current_facts())
    verb = six_rooms.execute(act("fly", "north"))
    assert verb.outcome == Outcome.REJECTED and "navigate_to" in verb.message
    # The chicken breast exists in the game but the agent has not seen it yet.
    unseen = six_rooms.execute(act("pick_up", "chicken breast"))
    assert unseen.outcome == Outcome.REJECTED and "toilet" in unseen.message
    arity = six_rooms.execute(act("open"))
    assert arity.outcome == Outcome.REJECTED
    assert set(six_rooms.current_facts()) == facts and six_rooms.history == []


def test_navigate_only_over_visited_rooms(six_rooms: TextWorldExecutor) -> None:
    early = six_rooms.execute(act("navigate_to", "kitchen"))
    assert early.outcome == Outcome.REJECTED and "bathroom" in early.message
    for _ in range(3):
        assert six_rooms.execute(act("go", "east")).ok
    assert six_rooms.current_room == "kitchen"
    assert six_rooms.known_rooms() == ["bathroom", "corridor", "livingroom", "kitchen"]
    back = six_rooms.execute(act("navigate_to", "bathroom"))
    assert back.ok and six_rooms.current_room == "bathroom"
    assert back.details["commands"] == ["go west"] * 3
    again = six_rooms.execute(act("navigate_to", "livingroom"))
    assert again.ok and six_rooms.current_room == "livingroom"


def test_a_walked_exit_is_offered_as_navigate_to_its_room(six_rooms: TextWorldExecutor) -> None:
    assert six_rooms.execute(act("go", "east")).ok  # bathroom -> corridor
    texts = [str(a) for a in six_rooms.action_space().candidates]
    assert "go(west)" not in texts and "navigate_to(bathroom)" in texts  # the way back
    assert "go(east)" in texts and "go(north)" in texts  # unexplored exits stay moves
    assert six_rooms.execute(act("navigate_to", "bathroom")).ok


def test_remembered_routes_let_a_new_episode_navigate_to_a_room_it_has_not_walked_to(
    six_rooms: TextWorldExecutor,
) -> None:
    assert isinstance(six_rooms, RouteLearner)
    routes = [
        Route("bathroom", "east", "corridor"),
        Route("corridor", "east", "livingroom"),
        Route("livingroom", "east", "kitchen"),
        Route("kitchen", "north", "frosted-glass door"),  # not a room: left out
        Route("kitchen", "up", "attic"),  # not a compass way, nor a room here
    ]
    assert six_rooms.learn_routes(routes) == 3
    texts = [str(a) for a in six_rooms.action_space().candidates]
    assert "navigate_to(kitchen)" in texts and "go(east)" not in texts  # east is known now
    went = six_rooms.execute(act("navigate_to", "kitchen"))
    assert went.ok and six_rooms.current_room == "kitchen"
    assert went.details["commands"] == ["go east"] * 3
    # a resumed run keeps what it was given at its start; a new episode starts bare
    other = TextWorldExecutor(bundled_game("cooking_6rooms"))
    other.reset()
    other.learn_routes(routes)
    other.replay(six_rooms.history)
    assert other.current_room == "kitchen" and "navigate_to(bathroom)" in map(
        str, other.action_space().candidates
    )
    other.reset()
    assert other.known_rooms() == ["bathroom"]
    other.close()


def test_what_only_the_objective_names_is_not_seen_in_the_first_room() -> None:
    ex = TextWorldExecutor(bundled_game("cooking_6rooms"))
    objective, obs = ex.reset()
    assert "cookbook" in objective and "cookbook" in obs.text  # the objective is shown...
    assert obs.names == ["toilet"]  # ...but the cookbook and the meal are not in the bathroom
    assert "cookbook" not in ex.known_objects()
    ex.close()


def test_navigate_opens_a_closed_door_on_its_way() -> None:
    """A closed door stops a step but not a walk on a known way: walking there opens it
    (tw-cooking-hard s13 asked fourteen times for a walk its screen door stopped)."""
    ex = TextWorldExecutor(bundled_game("cooking_6rooms_open"))
    ex.reset()
    assert ex.execute(act("go", "north")).outcome == Outcome.FAILED  # the door is closed
    assert ex.execute(act("open", "plain door")).ok
    assert ex.execute(act("go", "north")).ok and ex.current_room == "kitchen"
    assert ex.execute(act("close", "plain door")).ok
    walked = ex.execute(act("navigate_to", "pantry"))
    ex.close()
    assert walked.ok and ex.current_room == "pantry"
    assert walked.details["commands"] == ["go south", "open plain door", "go south"]


def test_action_space_lists_only_seen_objects(six_rooms: TextWorldExecutor) -> None:
    space = six_rooms.action_space()
    assert "toilet" in space.targets["object"]
    assert "fridge" not in space.targets["object"] and "sofa" not in space.targets["object"]
    assert space.targets["place"] == ["bathroom"]
    assert space.fallback == act("look")
    assert space.verb("cook") is not None and space.verb("navigate_to") is not None
    six_rooms.execute(act("go", "east"))
    six_rooms.execute(act("go", "east"))
    space = six_rooms.action_space()
    assert "sofa" in space.targets["object"] and "fridge" not in space.targets["object"]
    six_rooms.execute(act("go", "east"))
    space = six_rooms.action_space()
    assert {"fridge", "chicken breast", "stove"} <= set(space.targets["object"])
    assert "stove" in space.targets["appliance"] and "fridge" in space.targets["receptacle"]


def test_cutting_needs_a_held_knife() -> None:
    ex = TextWorldExecutor(bundled_game("cooking_1room_cut"))
    ex.reset()
    ex.execute(act("pick_up", "red onion"))
    no_knife = ex.execute(act("dice", "red onion"))
    assert no_knife.outcome == Outcome.FAILED and "knife" in no_knife.message
    assert no_knife.details["commands"] == []
    assert ex.execute(act("pick_up", "knife")).ok
    diced = ex.execute(act("dice", "red onion"))
    ex.close()
    assert diced.ok and diced.details["commands"] == ["dice red onion with knife"]
    assert diced.observation.score == 2


def test_task_complete_ends_the_episode(six_rooms: TextWorldExecutor) -> None:
    done = six_rooms.execute(act("task_complete"))
    assert done.observation.done and not done.observation.won
    assert done.outcome == Outcome.FAILED
    after = six_rooms.execute(act("look"))
    assert after.outcome == Outcome.REJECTED


def test_replay_restores_the_same_state(six_rooms: TextWorldExecutor) -> None:
    for action in walkthrough_actions(bundled_game("cooking_6rooms"))[:6]:
        six_rooms.execute(action)
    six_rooms.execute(act("fly"))  # rejected, not part of the history
    other = TextWorldExecutor(bundled_game("cooking_6rooms"))
    results = other.replay(six_rooms.history)
    assert len(results) == 6
    assert results[-1].observation.score == 1
    assert other.current_room == six_rooms.current_room == "kitchen"
    assert set(other.current_facts()) == set(six_rooms.current_facts())
    assert other.known_rooms() == six_rooms.known_rooms()
    assert other.known_objects() == six_rooms.known_objects()
    other.close()


def test_world_locations_follow_the_game() -> None:
    ex = TextWorldExecutor(bundled_game("custom_3rooms"))
    ex.reset()
    start = ex.world_locations()
    assert start["teapot"] == ("in", "refrigerator")
    assert start["broom"] == ("at", "washroom")
    assert "refrigerator" not in start and "pan" not in start  # fixed furniture
    ex.execute(act("open", "refrigerator"))
    ex.execute(act("pick_up", "teapot"))
    assert ex.world_locations()["teapot"] == ("in", "inventory")
    ex.execute(act("put_down_to", "teapot", "pan"))
    assert world_locations(ex.current_facts())["teapot"] == ("on", "pan")
    ex.close()


def test_candidates_are_the_admissible_commands_in_the_action_api() -> None:
    ex = TextWorldExecutor(bundled_game("cooking_1room"))
    ex.reset()
    space = ex.action_space()
    texts = [str(a) for a in space.candidates]
    assert "pick_up(milk)" in texts and "examine(cookbook)" in texts
    # the game ends itself when won: finishing is no candidate, yet still accepted
    assert "task_complete()" not in texts
    assert space.validate_action(act("task_complete")) is None
    # every candidate is valid in the published space and the game accepts it
    assert all(space.validate_action(a) is None for a in space.candidates)
    admissible = set(ex._require_state().admissible_commands)
    assert len(space.candidates) <= len(admissible)
    result = ex.execute(Action(verb="pick_up", args=["milk"]))
    assert result.ok and result.details["changed"] is True
    assert ex.action_space().candidates[0].verb != "examine"  # acting first, reading later
    assert "prepare_meal()" in [str(a) for a in ex.action_space().candidates]


def test_observation_grounds_place_names_and_holdings() -> None:
    ex = TextWorldExecutor(bundled_game("cooking_1room"))
    _, obs = ex.reset()
    assert obs.place == "kitchen" and obs.holding == [] and obs.holding_known
    assert {"fridge", "milk", "cookbook"} <= set(obs.names)
    result = ex.execute(Action(verb="examine", args=["cookbook"]))
    assert result.details["changed"] is False  # a read changes nothing
    # the recipe names the meal, which does not exist yet: perception does not report it
    assert "meal" in result.observation.text and "meal" not in result.observation.names
    assert "milk" in result.observation.names  # the recipe's milk is in the fridge
    result = ex.execute(Action(verb="pick_up", args=["milk"]))
    assert result.observation.holding == ["milk"] and "milk" in result.observation.names
    result = ex.execute(Action(verb="prepare_meal", args=[]))
    assert result.ok and "meal" in result.observation.names  # made, held: it exists now


def test_the_game_rules_tell_which_names_are_fixtures() -> None:
    """Containers, supporters and doors cannot be carried in TextWorld: they are fixtures;
    food, objects and the meal are not."""
    ex = TextWorldExecutor(bundled_game("cooking_1room"))
    _, obs = ex.reset()
    assert set(obs.fixtures) == {"fridge", "oven", "table", "counter", "stove"}
    assert set(obs.names) - set(obs.fixtures) >= {"milk", "cookbook", "yellow apple"}
    ex.execute(Action(verb="pick_up", args=["milk"]))
    result = ex.execute(Action(verb="prepare_meal", args=[]))
    assert "meal" in result.observation.names and "meal" not in result.observation.fixtures


def test_perception_names_only_what_the_robot_can_perceive() -> None:
    """The recipe names the white onion in the closed fridge: perception does not report it
    (the map would place it where the recipe was read) until the fridge is opened."""
    ex = TextWorldExecutor(bundled_game("cooking_6rooms_open"))
    ex.reset()
    for action in walkthrough_actions(bundled_game("cooking_6rooms_open"))[:4]:
        result = ex.execute(action)
    assert str(action) == "examine(cookbook)" and "white onion" in result.observation.text
    assert "white onion" not in result.observation.names
    result = ex.execute(Action(verb="open", args=["fridge"]))
    assert "white onion" in result.observation.names
    ex.close()


def test_command_to_action_maps_each_form() -> None:
    cases = {
        "take red apple from fridge": "pick_up(red apple)",
        "put knife on counter": "put_down_to(knife, counter)",
        "insert milk into fridge": "put_down_to(milk, fridge)",
        "dice carrot with knife": "dice(carrot)",
        "cook carrot with stove": "cook(carrot, stove)",
        "go north": "go(north)",
        "prepare meal": "prepare_meal()",
        "unlock door with key": "unlock(door, key)",
    }
    for command, action in cases.items():
        assert str(command_to_action(command)) == action


def test_walking_back_and_forth_brings_the_same_world_and_is_set_aside(
    six_rooms: TextWorldExecutor,
) -> None:
    from robomemory.episode import trajectory_step, world_of
    from robomemory.executors.envs.textworld_map import OPPOSITE
    from robomemory.grounding import loop_actions, path_of

    start = six_rooms.reset()[1]
    way = next(a for a in six_rooms.action_space().candidates if a.verb == "go")
    back = act("go", OPPOSITE[way.args[0]])
    steps, places = [], []
    for i, action in enumerate([way, back, way], 1):
        places.append(six_rooms.current_room)
        result = six_rooms.execute(action)
        assert result.ok
        steps.append(trajectory_step(i, action, result, result.message, places[-1]))
    assert steps[1]["world"] == world_of(start)  # the facts digest: back where it started
    path = path_of(world_of(start), start.place, steps, six_rooms.current_room)
    assert loop_actions(path) == [str(back)]


def test_textworld_verbs_declare_what_they_mean() -> None:
    from robomemory.executors.envs.textworld_verbs import BASE_VERBS, COOKING_VERBS
    from robomemory.grounding import meanings

    m = meanings([*BASE_VERBS, *COOKING_VERBS])
    assert m.reads == {"examine"} and {"look", "inventory"} <= m.informs
    assert m.moves == {"navigate_to", "go"} and m.reveals == {"open"}
    assert {"slice", "dice", "chop", "cook", "prepare_meal", "eat"} == m.irreversible
    assert m.reverses == {
        "put_down_to": "pick_up",
        "drop": "pick_up",
        "close": "open",
        "turn_off": "turn_on",
    }


def test_every_thing_the_game_lets_the_robot_take_is_a_candidate(tmp_path) -> None:
    """A kitchen of a medium game holds more than the old cap of forty actions: the game's
    list is kept whole (the grounding cuts it once it is ranked against the recipe)."""
    from robomemory.eval.suites import tw_cooking_game

    ex = TextWorldExecutor(tw_cooking_game("medium", 14, tmp_path))
    try:
        ex.reset()
        for step in [
            "go(south)",
            "go(west)",
            "open(fridge)",
            "pick_up(knife)",
            "pick_up(cilantro)",
        ]:
            verb, _, rest = step.partition("(")
            assert ex.execute(act(verb, *[a for a in [rest.rstrip(")")] if a])).ok, step
        takes = [c for c in ex._require_state().admissible_commands if c.startswith("take ")]
        candidates = ex.action_space().candidates
        offered = {str(a) for a in candidates if a.verb == "pick_up"}
        assert len(candidates) > 40
        assert len(offered) == len(takes) and "pick_up(yellow potato)" in offered
    finally:
        ex.close()


def test_a_limited_inventory_is_told_as_hands(tmp_path) -> None:
    """tw-make's --drop limits what the player carries (one slot per thing): the observation
    says how many things the robot can hold; a game without the limit says nothing."""
    from robomemory.eval.suites import tw_make_game

    path = tw_make_game("tw-cooking", "--recipe 1 --take 1 --go 1 --drop", 3, cache=tmp_path)
    ex = TextWorldExecutor(path)
    try:
        _, obs = ex.reset()
        assert obs.hands == 1 and obs.holding == []
        take = next(a for a in ex.action_space().candidates if a.verb == "pick_up")
        held = ex.execute(take).observation
        assert held.hands == 1 and held.holding == [take.args[0]]
        # with the hand full the game admits no take
        assert not any(a.verb == "pick_up" for a in ex.action_space().candidates)
    finally:
        ex.close()
    unlimited = TextWorldExecutor(bundled_game("cooking_1room"))
    try:
        assert unlimited.reset()[1].hands is None
    finally:
        unlimited.close()
