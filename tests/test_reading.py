"""A thing the task describes by a clause ("the item with the same quantity as the answer") is
read by the model once the notes it depends on are read, and the table then acts on it: pure
parts, then a real TextWorldExpress game with a FAKE model's readings."""

from __future__ import annotations

import pytest

from robomemory.core import Action
from robomemory.executors.envs.twx import VERBS as TWX_VERBS
from robomemory.executors.envs.twx import TextWorldExpressExecutor
from robomemory.grounding import WorldModel, instructions, left_instructions
from robomemory.grounding.choice import to_read
from robomemory.grounding.instructions import with_reading
from robomemory.prompts.reading import make_reading_model
from robomemory.testing import message_text
from robomemory.testing.chat import scripted_llm

VERBS = [v.spec() for v in TWX_VERBS]
TASK = (
    "Your first task is to solve the math problem. Then, pick up the item with the same "
    "quantity as the math problem answer, and place it in the box."
)
DESCRIBED = "item with the same quantity as the math problem answer"
NOTE = (
    "read(math problem): Your task is to solve the following math problem: divide 22 by 11 .\n"
    "Then, pick up the item with the same quantity as the answer, and place it in the box."
)
THINGS = ["math problem", "2 bananas", "6 oranges", "box"]
PICKS = [Action(verb="pick_up", args=[t]) for t in ("2 bananas", "6 oranges")]


def test_a_thing_described_by_a_clause_is_an_instruction_that_refers():
    (pick, put) = instructions(TASK, VERBS, THINGS, referring=True)
    assert (pick.verb, pick.thing, pick.refers, pick.qualified) == ("pick_up", None, True, True)
    assert pick.described == DESCRIBED
    assert put.verb == "put_down_to"
    # "focus on the thing" stays one that any act does
    (focus,) = instructions("Pick up the thing.", VERBS, THINGS, referring=True)
    assert focus.refers and not focus.qualified


def test_an_act_on_another_thing_does_not_do_a_described_one():
    left = left_instructions([], ["pick_up(math problem)"], VERBS, [], task=TASK)
    assert [i.described for i in left if i.qualified] == [DESCRIBED]


def test_a_reading_names_the_thing_and_what_points_at_it():
    read = with_reading(TASK, {DESCRIBED: "2 bananas"})
    assert read.endswith("pick up the 2 bananas, and place the 2 bananas in the box.")
    acts = [(i.verb, i.thing, i.rest) for i in instructions(read, VERBS, THINGS, referring=True)]
    assert acts == [("pick_up", "2 bananas", ()), ("put_down_to", "2 bananas", ("box",))]
    assert with_reading(TASK, {"thing never written": "x"}) == TASK


def test_the_model_is_asked_only_once_the_named_thing_is_read():
    before = WorldModel(done=["pick_up(math problem)"])
    assert to_read(before, VERBS, TASK, PICKS, THINGS) is None  # the problem is not read
    after = before.model_copy(update={"notes": [NOTE]})
    asked = to_read(after, VERBS, TASK, PICKS, THINGS)
    assert asked is not None and asked.described == DESCRIBED
    assert asked.things == ("2 bananas", "6 oranges")
    assert to_read(after, VERBS, TASK, PICKS[:1], THINGS) is None  # one thing: nothing to read
    # things picked before the reading are among those it may be
    held = to_read(after, VERBS, TASK, PICKS[:1], THINGS, held=["math problem", "6 oranges"])
    assert held is not None and held.things == ("2 bananas", "6 oranges")
    read = with_reading(TASK, {DESCRIBED: "2 bananas"})
    assert to_read(after, VERBS, read, PICKS, THINGS) is None  # read once


def test_a_reading_answer_is_one_of_the_things():
    schema = make_reading_model(("2 bananas", "6 oranges"))
    assert schema.model_validate({"working": "22/11=2", "thing": "2 bananas"}).thing == "2 bananas"
    with pytest.raises(ValueError):
        schema.model_validate({"working": "", "thing": "2 apples"})
    with pytest.raises(ValueError):
        make_reading_model(())


@pytest.mark.parametrize("answer, won", [("2 bananas", True), ("6 oranges", False)])
def test_the_reading_decides_the_game(agent_config, make_agent, answer, won):
    """TextWorldExpress arithmetic, seed 0 ("divide 22 by 11"): the FAKE model's reading is
    what the robot puts in the box, and no planner call follows it."""
    asked: list[str] = []

    def reading(messages):
        asked.append(message_text(messages))
        return {"working": "22 / 11 = 2", "thing": answer}

    llm = scripted_llm({"Reading": reading})
    agent_config.max_steps = 12
    executor = TextWorldExpressExecutor(game="arithmetic", seed=0)
    result = make_agent(agent_config, executor, llm).run(thread_id=f"reading-{won}")
    assert len(asked) == 1 and "divide 22 by 11" in asked[0] and "2 bananas" in asked[0]
    assert result.success is won
    calls = llm.chat_model.calls
    assert "Plan" not in calls[calls.index("Reading") :]  # the table acts on the reading


def test_react_reads_the_task_as_robomemory_does(agent_config):
    """react gets robomemory's list and briefing, the reading included (minus memory)."""
    from robomemory.eval.baselines import BaselineAgent

    llm = scripted_llm({"Reading": lambda _m: {"working": "22 / 11 = 2", "thing": "2 bananas"}})
    agent_config.max_steps = 12
    executor = TextWorldExpressExecutor(game="arithmetic", seed=0)
    result = BaselineAgent("react", agent_config, executor, llm).run()
    assert result.success
    assert llm.chat_model.calls.count("Reading") == 1
    reads = [s for s in result.trajectory if any(c["schema"] == "Reading" for c in s["calls"])]
    assert len(reads) == 1  # the call is in the trace of the step it led to


def test_a_thing_a_task_mentions_beside_its_instructions_is_no_goal():
    """ "A map is provided" beside "take the coin ... put it into the box": the map is not a
    thing to put somewhere (the dev map-reader games put it into the box at step 1)."""
    from robomemory.grounding.goal_words import state_named

    told = "Take the coin in the supermarket, and put it into the box. A map is provided."
    assert state_named(told, VERBS, ["map", "coin", "box"]) == set()
    assert state_named("It's only missing a polished map.", VERBS, ["map"]) == {"map"}


SW_TASK = (
    "Your task is to find a(n) living thing. First, focus on the thing. Then, move it to the "
    "red box in the kitchen."
)


def test_a_class_for_an_act_no_try_undoes_is_read_against_the_things_here():
    """ "Focus on the thing" (irreversible) on "a(n) living thing": the things offered to the
    focus and held, but the task's own names, per place; a reversible act is tried instead."""
    from robomemory.executors.envs.scienceworld import VERBS as SW

    sw = [v.spec() for v in SW]
    here = [Action(verb="focus_on", args=[t]) for t in ("axe", "red box", "blue jay")]
    asked = to_read(WorldModel(), sw, SW_TASK, here, [], held=["orange"])
    assert asked is not None and asked.by_class
    assert (asked.described, asked.things) == ("a(n) living thing", ("axe", "blue jay", "orange"))
    assert asked.key == "a(n) living thing: axe, blue jay, orange"  # another place: asked again
    assert to_read(WorldModel(done=["focus_on(axe)"]), sw, SW_TASK, here, []) is None
    picks = [Action(verb="pick_up", args=[t]) for t in ("axe", "blue jay")]
    assert to_read(WorldModel(), VERBS, "Pick up the thing.", picks, []) is None  # reversible


def test_a_class_read_names_the_thing_and_none_here_names_nothing():
    from robomemory.executors.envs.scienceworld import VERBS as SW
    from robomemory.grounding.instructions import NOT_HERE

    sw = [v.spec() for v in SW]
    read = with_reading(SW_TASK, {"a(n) living thing": "blue jay"})
    assert "focus on the blue jay. Then, move the blue jay to the red box" in read
    acts = [
        (i.verb, i.thing) for i in instructions(read, sw, ["blue jay", "red box"], referring=True)
    ]
    assert acts[0] == ("focus_on", "blue jay")
    assert with_reading(SW_TASK, {"a(n) living thing: axe": NOT_HERE}) == SW_TASK


def test_the_model_reads_a_class_once_per_set_of_things():
    """The ground node's reading: none here is kept for these things (no second call), and a
    thing named makes the focus an instruction."""
    from robomemory.core import ActionSpace
    from robomemory.executors.envs.scienceworld import VERBS as SW
    from robomemory.grounding.instructions import NOT_HERE
    from robomemory.nodes.ground import reading

    answers = iter([NOT_HERE, "blue jay"])
    llm = scripted_llm({"Reading": lambda _m: {"working": "", "thing": next(answers)}})
    sw = [v.spec() for v in SW]
    axe = ActionSpace(verbs=sw, candidates=[Action(verb="focus_on", args=["axe"])])
    node = llm.for_node("ground")
    first = reading(node, SW_TASK, {}, WorldModel(), axe, [])
    assert first == {"a(n) living thing: axe": NOT_HERE}
    assert reading(node, SW_TASK, first, WorldModel(), axe, []) == first
    assert llm.chat_model.calls.count("Reading") == 1
    jay = ActionSpace(verbs=sw, candidates=[Action(verb="focus_on", args=["blue jay"])])
    second = reading(node, SW_TASK, first, WorldModel(), jay, [])
    assert second["a(n) living thing"] == "blue jay"
