"""Grounding on TextWorld's cooking games: its verbs' declared meanings drive the general
rules; these fixtures encode the wins on easy kitchens (no model, no store, no game)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from robomemory.core import Action, ActionSpace, VerbSpec
from robomemory.executors.candidates import rank_candidates
from robomemory.executors.envs.textworld_verbs import BASE_VERBS, COOKING_VERBS
from robomemory.grounding import (
    Briefing,
    left_instructions,
)
from robomemory.grounding.instructions import instructions
from robomemory.prompts.planner import make_plan_model, plan_actions, planner_user

TW = [*BASE_VERBS, *COOKING_VERBS]  # TextWorld's cooking API, each verb's meaning declared

SPACE = ActionSpace(
    verbs=[
        VerbSpec(name="examine", arg_kinds=["object"]),
        VerbSpec(name="pick_up", arg_kinds=["object"]),
        VerbSpec(name="look"),
        VerbSpec(name="task_complete"),
    ],
    targets={"object": ["milk", "cookbook", "fridge"]},
)


def left_to_do(*args: object, **kwargs: object) -> list[str]:
    """What is left to do, as written (:func:`left_instructions`' phrases)."""
    return [i.phrase for i in left_instructions(*args, **kwargs)]


CANDIDATES = [
    Action(verb="pick_up", args=["milk"]),
    Action(verb="examine", args=["cookbook"]),
    Action(verb="look"),
    Action(verb="task_complete"),
]


def step(n, action, outcome="succeeded", changed=None, place="kitchen"):
    verb = action.split("(", 1)[0]
    return {
        "step": n,
        "action": action,
        "verb": verb,
        "outcome": outcome,
        "changed": changed,
        "place": place,
    }


def test_ranking_puts_world_changing_actions_first_and_caps_per_verb():
    actions = [Action(verb="examine", args=[f"x{i}"]) for i in range(20)]
    actions += [Action(verb="task_complete"), Action(verb="pick_up", args=["milk"])] * 2
    ranked = rank_candidates(actions, max_per_verb=5, limit=8)
    assert [str(a) for a in ranked[:2]] == ["pick_up(milk)", "examine(x0)"]
    assert len(ranked) == 7 and str(ranked[-1]) == "task_complete()"


def test_plan_first_step_is_one_of_the_candidates_later_steps_over_known_names():
    schema = make_plan_model(SPACE, 3, CANDIDATES)
    plan = schema.model_validate(
        {
            "next": "pick_up(milk)",
            "then": [{"action": "examine", "args": ["fridge"]}],
        }
    )
    assert [str(a) for a in plan_actions(plan, CANDIDATES)] == ["pick_up(milk)", "examine(fridge)"]
    with pytest.raises(ValidationError):  # not possible now
        schema.model_validate({"next": "pick_up(fridge)", "then": []})
    with pytest.raises(ValidationError):  # an unknown name later
        schema.model_validate({"next": "look()", "then": [{"action": "pick_up", "args": ["x"]}]})
    enum = schema.model_json_schema()["properties"]["next"]["enum"]
    assert enum == [str(a) for a in CANDIDATES]


def test_planner_prompt_lists_the_candidates_numbered_after_memory():
    told = Briefing(candidates=CANDIDATES, last_result="step 1: look() -> succeeded: ok")
    text = planner_user("Task: cook", told, SPACE)
    assert text.startswith("Task: cook")
    assert "Actions possible now:\n1. pick_up(milk)\n2. examine(cookbook)" in text
    assert text.index("Actions possible now") < text.index("Last result:")


def test_each_verb_is_described_once_where_the_model_reads_its_choices():
    from robomemory.prompts.baselines import baseline_user

    space = ActionSpace(
        verbs=[
            VerbSpec(name="pick_up", arg_kinds=["object"], description="take an object"),
            VerbSpec(name="eat", arg_kinds=["object"], description="eat food"),
            VerbSpec(name="look"),
        ],
        targets={"object": ["milk", "meal"]},
    )
    actions = [
        Action(verb="pick_up", args=["milk"]),
        Action(verb="eat", args=["meal"]),
        Action(verb="pick_up", args=["meal"]),
        Action(verb="look"),
    ]
    listed = "1. pick_up(milk): take an object\n2. eat(meal): eat food\n3. pick_up(meal)\n4. look()"
    planner = planner_user("Task: eat", Briefing(candidates=actions), space)
    assert f"Actions possible now:\n{listed}\n" in planner
    assert f"Actions possible now:\n{listed}\n" in baseline_user("eat", [], "", space, actions)
    bare = ActionSpace(verbs=[VerbSpec(name=v.name, arg_kinds=v.arg_kinds) for v in space.verbs])
    assert "1. pick_up(milk)\n2. eat(meal)\n" in planner_user(
        "Task: eat", Briefing(candidates=actions), bare
    )


CUTTING = TW  # dice: "... needs a held knife"


COOK_VERBS = [
    VerbSpec(name="open", arg_kinds=["object"]),
    VerbSpec(name="examine", arg_kinds=["object"]),
    VerbSpec(name="dice", arg_kinds=["object"]),
    VerbSpec(name="cook", arg_kinds=["object", "appliance"], aliases=["fry", "roast"]),
    VerbSpec(name="prepare_meal"),
]
RECIPE = (
    'examine(cookbook): You open the copy of "Cooking: A Modern Approach" and start reading: '
    "Gather all following ingredients and follow the directions to prepare this tasty meal. "
    "Ingredients: red potato, yellow potato Directions: roast the red potato dice the yellow "
    "potato fry the yellow potato prepare meal"
)
NAMES = ["red potato", "yellow potato", "potato", "cookbook", "oven"]


def test_instructions_are_verbs_of_the_api_with_the_known_thing_they_name():
    from robomemory.grounding import Instruction, instructions

    found = instructions(RECIPE.split(": ", 1)[1], COOK_VERBS, NAMES)
    assert found == [
        Instruction("cook", "red potato", "roast the red potato"),
        Instruction("dice", "yellow potato", "dice the yellow potato"),  # the longest name
        Instruction("cook", "yellow potato", "fry the yellow potato"),
        Instruction("prepare_meal", None, "prepare meal"),
    ]  # "open the copy of" names nothing known; "prepare this tasty meal" is no verb
    assert instructions("dice it, then open the box", COOK_VERBS, NAMES) == []


def test_what_is_left_to_do_drops_the_instructions_done_actions_did():
    done = ["pick_up(red potato)", "cook(red potato, oven)", "dice(yellow potato)"]
    assert left_to_do([RECIPE], done, COOK_VERBS, NAMES) == [
        "fry the yellow potato",
        "prepare meal",
    ]
    assert (
        left_to_do(
            [RECIPE], [*done, "cook(yellow potato, stove)", "prepare_meal()"], COOK_VERBS, NAMES
        )
        == []
    )
    assert left_to_do([], done, COOK_VERBS, NAMES) == []
    # instructions are done in their order: what comes before a done one on the same thing,
    # or before one on the whole, is over; another thing's instructions stay (things are
    # often dealt with out of the written order)
    assert left_to_do([RECIPE], ["prepare_meal()"], COOK_VERBS, NAMES) == []
    assert left_to_do([RECIPE], ["dice(yellow potato)"], COOK_VERBS, NAMES) == [
        "roast the red potato",
        "fry the yellow potato",
        "prepare meal",
    ]
    assert left_to_do([RECIPE], ["cook(yellow potato, stove)"], COOK_VERBS, NAMES) == [
        "roast the red potato",
        "prepare meal",
    ]


def test_an_instruction_acts_on_a_known_thing_it_does_not_ask_for_a_new_one():
    from robomemory.grounding import Instruction, instructions

    verbs = [*COOK_VERBS, VerbSpec(name="eat", arg_kinds=["object"], aliases=["enjoy"])]
    task = "Let's cook a delicious meal. Check the cookbook. Once done, enjoy your meal!"
    assert instructions(task, verbs, ["meal", "cookbook"]) == [
        Instruction("eat", "meal", "enjoy your meal")
    ]
    assert instructions(task, verbs, ["cookbook"]) == []  # no meal yet: nothing to eat


def test_result_forms_are_the_regular_past_participles():
    from robomemory.grounding import result_forms

    assert "fried" in result_forms("fry")
    assert "diced" in result_forms("dice")
    assert "chopped" in result_forms("chop")
    assert "roasted" in result_forms("roast")
    assert "grilled" in result_forms("grill")
    assert "opened" in result_forms("open")
    assert "fried" not in result_forms("roast")


def test_the_world_s_words_before_a_known_name_are_its_state():
    from robomemory.grounding import update_states

    names = ["chicken wing", "chicken leg", "red onion", "onion", "fridge"]
    text = "The fridge contains a fried chicken wing, a raw chicken leg and a diced red onion."
    states = update_states({}, text, names, COOK_VERBS)
    # "raw" is no result of an API verb; "diced" goes to the longest name, not to "onion"
    assert states == {"chicken wing": "fried", "red onion": "diced"}
    assert update_states(states, "You take the chicken wing.", names, COOK_VERBS) == states
    roasted = update_states(states, "You roasted the onion. A roasted onion.", names, COOK_VERBS)
    assert roasted == {**states, "onion": "roasted"}
    both = update_states({}, "The fridge holds a diced roasted red onion.", names, COOK_VERBS)
    assert both == {"red onion": "diced roasted"}


def test_an_instruction_the_world_shows_done_is_not_left_nor_what_came_before_it():
    states = {"yellow potato": "diced fried"}
    assert left_to_do([RECIPE], [], COOK_VERBS, NAMES, states=states) == [
        "roast the red potato",
        "prepare meal",
    ]
    # fried, the yellow potato may still need dicing: a shown result ends only its instruction
    assert left_to_do([RECIPE], [], COOK_VERBS, NAMES, states={"yellow potato": "fried"}) == [
        "roast the red potato",
        "dice the yellow potato",
        "prepare meal",
    ]
    # a result of another verb does not do it
    assert left_to_do([RECIPE], [], COOK_VERBS, NAMES, states={"red potato": "diced"}) == [
        "roast the red potato",
        "dice the yellow potato",
        "fry the yellow potato",
        "prepare meal",
    ]


def test_the_task_s_instructions_come_after_the_notes():
    verbs = [*COOK_VERBS, VerbSpec(name="eat", arg_kinds=["object"], aliases=["enjoy"])]
    task = "Let's cook a delicious meal. Check the cookbook. Once done, enjoy your meal!"
    done = ["cook(red potato, oven)", "dice(yellow potato)", "cook(yellow potato, stove)"]
    # the meal is a known name (the recipe names it), but nothing can act on it yet
    assert left_to_do([RECIPE], done, verbs, [*NAMES, "meal"], task=task) == ["prepare meal"]
    made = [*done, "prepare_meal()"]
    now = ["meal", "oven"]  # the names the actions possible now act on
    assert left_to_do([RECIPE], made, verbs, NAMES, task=task, offered=now) == ["enjoy your meal"]
    assert left_to_do([RECIPE], [*made, "eat(meal)"], verbs, NAMES, task=task, offered=now) == []


def test_the_planner_and_critic_read_what_is_left_last():
    from robomemory.prompts.planner import critic_user

    left = ["dice the red onion", "prepare meal"]
    told = Briefing(candidates=CANDIDATES, last_result="step 2: x", left=left)
    text = planner_user("Task: cook", told, SPACE)
    assert text.endswith(
        "Last result: step 2: x\n\n"
        "Left to do: dice the red onion, prepare meal\n\nChoose the next action."
    )
    helped = planner_user("Task: cook", told.model_copy(update={"helped": ["eat(meal)"]}), SPACE)
    assert helped.endswith(
        "Last result: step 2: x\n\nHelped before, possible now: eat(meal)\n\n"
        "Left to do: dice the red onion, prepare meal\n\nChoose the next action."
    )
    bare = Briefing(candidates=CANDIDATES, last_result="step 2: x")
    assert "Left to do" not in planner_user("Task: cook", bare, SPACE)
    critic = critic_user("Task: cook", "dice(red onion)", ["dice(red onion)"], told, SPACE)
    assert "Left to do: dice the red onion, prepare meal" in critic


def test_an_ingredient_list_makes_no_instruction_across_its_lines():
    """An unseen medium kitchen's recipe listed "slice of bread" on one line and "red onion"
    on the next: read across the line break, that was "slice ... red onion", and the wrong
    irreversible cut was offered as asked for. A note keeps its lines; an instruction ends
    with its line; a verb's word inside a longer name is the name."""
    from robomemory.grounding import instructions, update_notes

    verbs = [*COOK_VERBS, VerbSpec(name="slice", arg_kinds=["object"], irreversible=True)]
    recipe = (
        "Ingredients:\n  slice of bread\n  red onion\n\n"
        "Directions:\n  dice the red onion\n  prepare meal"
    )
    item = {"action": "examine(cookbook)", "verb": "examine", "outcome": "succeeded"}
    notes = update_notes(
        [],
        {**item, "message": recipe},
        "",
        [VerbSpec(name="examine", arg_kinds=["object"], reads=True)],
    )
    assert notes == [
        "examine(cookbook): Ingredients:\nslice of bread\nred onion\nDirections:\n"
        "dice the red onion\nprepare meal"
    ]
    names = ["slice of bread", "red onion", "cookbook"]
    found = [(i.verb, i.thing) for i in instructions(notes[0].split(": ", 1)[1], verbs, names)]
    assert found == [("dice", "red onion"), ("prepare_meal", None)]
    # the same list on one line: the verb's word inside the name "slice of bread" is the name
    line = "Ingredients: slice of bread, red onion. Directions: dice the red onion, prepare meal"
    found = [(i.verb, i.thing) for i in instructions(line, verbs, names)]
    assert found == [("dice", "red onion"), ("prepare_meal", None)]


def test_a_result_the_task_asks_for_is_the_act_that_makes_it():
    """ "Ensure that the trunk is open" asks to open it, "check that the door is unlocked with
    the key" to unlock it with the key; a description of a state ("the door is open") asks
    nothing, nor does a look, which changes nothing."""
    from robomemory.executors.envs.textworld_verbs import KEY_VERBS

    task = (
        "First off, ensure that the antique trunk is open. Then, check that the wooden door "
        "is unlocked with the old key. The chest drawer is open. Make sure the fridge is "
        "opened. Then, look and see that the screen door is ajar."
    )
    names = ["antique trunk", "wooden door", "old key", "chest drawer", "fridge"]
    left = left_instructions([], [], [*BASE_VERBS, *KEY_VERBS], names, task=task, offered=names)
    assert [(i.verb, i.thing, i.rest) for i in left] == [
        ("open", "antique trunk", ()),
        ("unlock", "wooden door", ("old key",)),
        ("open", "fridge", ()),
    ]


def test_a_done_instruction_of_the_task_is_not_bound_to_another_offered_thing():
    """Away from the door, "unlock the wooden door with the old key" read with the offered
    names only bound the key held: done at the door, it came back in every other room."""
    from robomemory.executors.envs.textworld_verbs import KEY_VERBS

    task = "Recover the old key. Then, unlock the wooden door with the old key. Open the box."
    done = ["pick_up(old key)", "unlock(wooden door, old key)"]
    names = ["old key", "wooden door", "box"]
    verbs = [*BASE_VERBS, *KEY_VERBS]
    left = left_instructions([], done, verbs, names, task=task, offered=["old key", "box"])
    assert [i.phrase for i in left] == ["open the box"]


def test_a_quest_walkthrough_is_a_route_one_move_left_at_a_time():
    """A TextWorld quest in its own words ("venture east", "take a trip west", "look and see
    that the door is ajar"): its moves are a route followed in order (two steps east are two
    moves; after a detour the next move is still the one left), only the next move is left,
    and only once the world offers it; "take a trip" is a move, not a take."""
    task = (
        "First, open the chest. Then, go to the east. And then, look and see that the screen"
        " door in the hall is ajar. After that, make an effort to venture east. And then,"
        " attempt to move south. Then, lift the blue cup from the floor of the yard. After"
        " that, move north. Okay, and then, attempt to take a trip west. Following that, rest"
        " the blue cup on the shelf."
    )
    verbs = [*BASE_VERBS]
    names = ["chest", "screen door", "shelf", "blue cup", "north", "south", "west", "east"]

    def left(moved: list[str], offered: list[str]) -> list[str]:
        done = [m for m in moved if not m.startswith("go(")]
        return [
            i.phrase
            for i in left_instructions(
                [], done, verbs, names, task=task, offered=offered, moved=moved
            )
        ]

    start = ["open(chest)", "go(east)"]
    # the next move (east, behind the closed door) is not offered: no move is left; the rest
    # of the blue cup waits for the cup, not read as an act on the shelf
    assert left(start, ["screen door", "north", "shelf"]) == ["open the screen door"]
    assert "rest the blue cup on the shelf" in left(start, ["shelf", "blue cup"])
    assert "venture east" in left(start, ["screen door", "east", "south"])
    opened = [*start, "open(screen door)"]
    assert left([*opened, "go(east)"], ["north", "south"]) == ["move south"]
    detour = [*opened, "go(north)", "go(south)", "go(east)"]
    assert left(detour, ["north", "south"]) == ["move south"]
    there = [*opened, "go(east)", "go(south)"]
    assert left(there, ["north", "blue cup"])[:2] == ["lift the blue cup", "move north"]
    takes = [i.thing for i in instructions(task, verbs, ["trip", *names]) if i.verb == "pick_up"]
    assert takes == ["blue cup"]
    # a move to a named place is made by any move there (walking to it)
    walk = "Go to the attic. Then, open the chest."
    for moved, left_now in (
        ([], ["go to the attic", "open the chest"]),
        (["navigate_to(attic)"], ["open the chest"]),
    ):
        found = left_instructions(
            [], [], verbs, ["attic", "chest"], task=walk, offered=["attic", "chest"], moved=moved
        )
        assert [i.phrase for i in found] == left_now
