"""ScienceWorld executor: the world's oracle path through the action API, rejections, refusals."""

from __future__ import annotations

import pytest

pytest.importorskip("scienceworld")

from robomemory.core import Action, Executor, Outcome
from robomemory.executors.envs.scienceworld import ScienceWorldExecutor  # noqa: E402
from robomemory.grounding import left_instructions


def left_to_do(*args: object, **kwargs: object) -> list[str]:
    """What is left to do, as written (:func:`left_instructions`' phrases)."""
    return [i.phrase for i in left_instructions(*args, **kwargs)]


@pytest.fixture(scope="module")
def world():
    ex = ScienceWorldExecutor("find-living-thing", variation=0, simplifications="")
    yield ex
    ex.close()


def test_gold_path_through_action_api_reaches_full_score(world):
    assert isinstance(world, Executor)
    task, obs = world.reset()
    assert "living thing" in task and obs.text
    gold = world.gold_actions()
    assert 3 <= len(gold) <= 20
    for command in gold:
        action = world.command_to_action(command)
        assert action is not None, command
        result = world.execute(action)
        assert result.outcome != Outcome.REJECTED, (command, result.message)
        assert result.details["command"] == command
    assert result.observation.won and result.observation.score == 100.0
    assert world.gc == 1.0
    done = world.execute(Action(verb="task_complete"))
    assert done.ok and "confirms" in done.message


def test_unknown_object_is_rejected_without_sending(world):
    world.reset()
    sent = len(world.commands)
    result = world.execute(Action(verb="pick_up", args=["unicorn"]))
    assert result.outcome == Outcome.REJECTED and "unicorn" in result.message
    assert len(world.commands) == sent
    bad_verb = world.execute(Action(verb="fly", args=[]))
    assert bad_verb.outcome == Outcome.REJECTED


def test_world_refusal_is_failed_with_world_message(world):
    _, obs = world.reset()
    space = world.action_space()
    assert "place" in space.targets and space.targets["object"]
    door = next(n for n in space.targets["object"] if "door" in n)
    first = world.execute(Action(verb="open", args=[door]))
    assert first.ok, first.message
    again = world.execute(Action(verb="open", args=[door]))
    assert again.outcome == Outcome.FAILED and "already open" in again.message
    # a tool that does nothing to a thing is refused too
    assert world._refused("It's not clear how to use those items together.")
    assert world._refused("I'm not sure how to use those two things together.")


def test_easy_mode_navigates_by_teleport():
    ex = ScienceWorldExecutor("find-plant", variation=1, simplifications="easy")
    try:
        ex.reset()
        places = ex.action_space().targets["place"]
        target = next(p for p in places if p != "art studio")
        result = ex.execute(Action(verb="navigate_to", args=[target]))
        assert result.details["command"] == f"teleport to {target}"
        assert result.ok and target in result.message
        # every room seen so far is a teleport away, from anywhere; the room here is not
        moves = {a.args[0] for a in ex.action_space().candidates if a.verb == "navigate_to"}
        assert moves == set(ex.action_space().targets["place"]) - {target}
        # the rooms the robot's memory knows are a teleport away too (no other name is)
        assert "foundry" not in moves
        assert ex.learn_places(["foundry", "moon base", target]) == 2
        ex.reset()
        moves = {a.args[0] for a in ex.action_space().candidates if a.verb == "navigate_to"}
        assert "foundry" in moves and "moon base" not in moves
        done = ex.execute(Action(verb="navigate_to", args=["foundry"]))
        assert done.ok and done.observation.place == "foundry"
    finally:
        ex.close()


def test_candidates_cover_every_verb_the_world_affords_here(world):
    world.reset()
    space = world.action_space()
    verbs = {a.verb for a in space.candidates}
    assert {"open", "pick_up", "look"} <= verbs  # the doors are shut: no navigate_to yet
    assert len(space.candidates) <= 40
    assert all(world._validate(a) is None for a in space.candidates)
    assert not any("agent" in a.args or "air" in a.args for a in space.candidates)


def test_scienceworld_verbs_declare_what_they_mean_and_a_look_changes_nothing(world):
    from robomemory.episode import world_of
    from robomemory.grounding import meanings

    world.reset()
    space = world.action_space()
    m = meanings(space.verbs)
    assert "focus_on" in m.irreversible and m.moves == {"navigate_to"}
    assert {"look_at", "look_in", "read"} <= m.reads and {"open", "look_in"} <= m.reveals
    assert m.reverses["close"] == "open" and m.reverses["put_down_to"] == "pick_up"
    task, start = world.reset()
    assert start.place and start.world  # the room it names and a digest of what it shows
    thing = next(a for a in world.action_space().candidates if a.verb == "look_at")
    result = world.execute(thing)
    assert result.details["changed"] is False and world_of(result.observation) == start.world


def test_opening_and_closing_a_door_twice_is_set_aside_and_the_search_leads_through_it(world):
    from robomemory.episode import trajectory_step, world_of
    from robomemory.grounding import exploration, loop_actions, path_of

    _, start = world.reset()
    space = world.action_space()
    door = next(a for a in space.candidates if a.verb == "open" and "door" in a.args[0])
    found = exploration(space.candidates, space.verbs, here=start.place, visited=[start.place])
    # what reveals comes first: looking into a room (the world lets it, doors shut) or opening
    assert door in found and {a.verb for a in found} <= {"look_in", "open"}
    shut = Action(verb="close", args=door.args)
    steps = []
    for i, action in enumerate([door, shut, door], 1):
        result = world.execute(action)
        assert result.ok, result.message
        steps.append(trajectory_step(i, action, result, result.message, start.place))
    assert steps[1]["world"] == start.world  # the door shut again: the world as it began
    path = path_of(world_of(start), start.place, steps, start.place)
    assert loop_actions(path) == [str(shut)]  # closing it again would close the cycle
    space = world.action_space()
    moves = exploration(space.candidates, space.verbs, here=start.place, visited=[start.place])
    assert any(a.verb == "navigate_to" for a in moves)  # through the open door, not visited
    assert all(start.place not in a.args for a in moves if a.verb == "navigate_to")


def test_a_focus_counts_as_done_and_what_is_held_is_named_and_offered_first():
    """A focus changes nothing the world's words show, but its score: it is done (listed no
    more). The inventory's items are named as the robot saw them, and the actions on what is
    held and what the task names lead their verb's list, so the cap keeps the move the task
    asks for."""
    ex = ScienceWorldExecutor("find-non-living-thing", variation=0, simplifications="easy")
    try:
        task, _ = ex.reset()
        focus = ex.execute(Action(verb="focus_on", args=["picture"]))
        assert focus.ok and focus.details["changed"] is True
        verbs = ex.action_space().verbs
        assert left_to_do([], ["focus_on(picture)"], verbs, [], task=task) == []
        taken = ex.execute(Action(verb="pick_up", args=["picture"]))
        assert "picture" in taken.observation.holding
        assert ex.execute(Action(verb="navigate_to", args=["kitchen"])).ok
        moves = [a for a in ex.action_space().candidates if a.verb == "put_down_to"]
        assert moves[0] == Action(verb="put_down_to", args=["picture", "red box"])
    finally:
        ex.close()


def test_held_names_are_the_known_names_in_each_inventory_item():
    from robomemory.executors.envs.scienceworld import held_names

    inventory = (
        "In your inventory, you see:\n\ta red apple\n\tan orange\n"
        "\ta picture of a farm.  The artist is listed as Alexandra. \n"
    )
    names = ["apple", "red apple", "picture", "alexandra", "chair"]
    assert held_names(inventory, names) == ("apple", "red apple", "picture")
    assert held_names("In your inventory, you see:\n", names) == ()
    tree = "In your inventory, you see:\n\tan apple tree\n"
    assert held_names(tree, ["apple", "apple tree"]) == ("apple tree",)  # no apple held


def test_every_room_names_its_place_outside_too():
    from robomemory.executors.envs.scienceworld import room_of

    assert room_of("This room is called the kitchen. In it, you see:") == "kitchen"
    assert room_of("This outside location is called the outside. Here you see:") == "outside"


def test_a_thing_in_a_closed_container_is_offered_once_it_is_opened():
    """The world lists commands on the cups in its closed cupboard, and its parser answers
    "No known action matches that input"; a boil task's art studio wasted seven steps so."""
    from robomemory.executors.envs.scienceworld import inside_closed

    look = "a large cupboard. The large cupboard door is closed. \n\ta table."
    assert inside_closed("cup containing blue paint in cupboard", look)
    assert not inside_closed("cup containing blue paint in art studio", look)
    assert not inside_closed("cupboard", look)
    ex = ScienceWorldExecutor("boil", variation=1, simplifications="easy")
    try:
        ex.reset()
        names = [n for a in ex.action_space().candidates for n in a.args]
        assert "cupboard" in names and not any(n.endswith(" in cupboard") for n in names)
        assert ex.execute(Action(verb="open", args=["cupboard"])).outcome == Outcome.SUCCEEDED
        names = [n for a in ex.action_space().candidates for n in a.args]
        assert any(n.endswith(" in cupboard") for n in names)
    finally:
        ex.close()


def test_the_pour_the_world_lists_maps_to_the_pour_verb():
    """The world lists "pour X into Y" (its oracle path too): the verb's template says
    "into", so the pours it lists are offered (with "in" none was)."""
    ex = ScienceWorldExecutor("grow-plant", variation=0, simplifications="easy")
    try:
        ex.reset()
        pours = [c for c in ex.gold_actions() if c.startswith("pour ")]
        assert pours
        assert all(ex.command_to_action(c).verb == "pour" for c in pours)
    finally:
        ex.close()
