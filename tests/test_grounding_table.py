"""The effects table (robomemory.grounding.table): every row places a candidate in some test,
labels come from declared effects, and the order follows the table."""

from __future__ import annotations

import pytest

from robomemory.core import TASK_COMPLETE, Action, VerbSpec
from robomemory.effects import Atom
from robomemory.grounding.instructions import Instruction
from robomemory.grounding.table import (
    RANK,
    ROWS,
    Placed,
    believed,
    choice,
    decided,
    goal_parts,
    labels,
    ordered,
    row_of,
    situation,
)
from robomemory.grounding.world import WorldModel

HERE = "at(robot, here)"
VERBS = [
    VerbSpec(name="navigate_to", arg_kinds=["place"], adds=["at(robot, $0)"], removes=[HERE]),
    VerbSpec(name="pick_up", arg_kinds=["object"], needs=[HERE], adds=["held($0)"],
             removes=["at($0, here)", "in($0, ?c)"]),
    VerbSpec(name="put_down_to", arg_kinds=["object", "receptacle"], needs=["held($0)"],
             adds=["in($0, $1)"], removes=["held($0)"]),
    VerbSpec(name="place_in", arg_kinds=["object", "receptacle"], needs=["held($0)"],
             adds=["in($0, $1)"], removes=["held($0)"], aliases=["place"]),
    VerbSpec(name="drop", arg_kinds=["object"], needs=["held($0)"], adds=["at($0, here)"],
             removes=["held($0)"]),
    VerbSpec(name="open", arg_kinds=["object"], needs=["closed($0)"], adds=["open($0)"],
             removes=["closed($0)"]),
    VerbSpec(name="close", arg_kinds=["object"], needs=["open($0)"], adds=["closed($0)"],
             removes=["open($0)"]),
    VerbSpec(name="slice", arg_kinds=["object"], needs=["held($0)", "held(?knife)"],
             adds=["state($0, sliced)"]),
    VerbSpec(name="eat", arg_kinds=["object"], needs=["held($0)"], adds=["state($0, eaten)"],
             removes=["held($0)"]),
    VerbSpec(name="cook", arg_kinds=["object", "appliance"], needs=["held($0)"],
             adds=["state($0, grilled)", "state($0, roasted)"], aliases=["grill", "roast"],
             alias_args={"grill": ["grill"], "roast": ["oven"]}),
    VerbSpec(name="read", arg_kinds=["object"], reads=True),
    VerbSpec(name="look", reads=True),
    VerbSpec(name="wiggle"),
    VerbSpec(name=TASK_COMPLETE),
]  # fmt: skip
BY_NAME = {v.name: v for v in VERBS}


def act(text: str) -> Action:
    verb, _, rest = text.partition("(")
    args = [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]
    return Action(verb=verb, args=args)


SLICE = Instruction("slice", "apple", "slice the apple")


def row(
    candidate: str,
    *,
    left=(SLICE,),
    held=(),
    place="kitchen",
    missing=(),
    seen=None,
    states=None,
    path=(),
    lessons=((), ()),
    offered=(),
    done=(),
    task="",
    fell=(),
    rose=(),
    score=None,
) -> str:
    candidates = [act(c) for c in [candidate, *offered]]
    world = WorldModel(
        score=score,
        seen=seen or {},
        states=states or {},
        path=[list(s) for s in path],
        done=list(done),
        fell=list(fell),
        rose=list(rose),
    )
    now = situation(
        candidates,
        VERBS,
        world,
        place=place,
        held=held,
        left=list(left),
        missing=list(missing),
        lessons=lessons,
        task=task,
    )
    return row_of(labels(candidates[0], BY_NAME, now, place))


# Each row, and one candidate it places.
CASES = {
    "instructed": dict(candidate="slice(apple)", held=("apple", "knife")),
    "achieves": dict(
        candidate="place_in(apple, box)",
        left=(Instruction("put_down_to", "apple", "put the apple in the box", ("box",)),),
        held=("apple",),
    ),
    "helped": dict(candidate="look()", lessons=(["look()"], [])),
    "enables": dict(candidate="pick_up(apple)", held=("knife",)),
    "fetches": dict(candidate="navigate_to(pantry)", seen={"apple": "pantry"}, offered=("look()",)),
    "searches": dict(
        candidate="navigate_to(cellar)",
        left=(),
        missing=("cookbook",),
        path=[["look()", "s0", "kitchen"]],
    ),
    "enables_some": dict(candidate="pick_up(knife)", held=("apple",)),
    "reads_new": dict(candidate="read(note)", left=()),
    "unknown": dict(candidate="wiggle()"),
    "irrelevant": dict(candidate="close(drawer)", left=(), states={"drawer": "opened"}),
    "informs": dict(candidate="look()"),
    "completes": dict(candidate=f"{TASK_COMPLETE}()"),
    "loops": dict(
        candidate="navigate_to(hall)",
        left=(),
        path=[
            ["look()", "s0", "kitchen"],
            ["navigate_to(hall)", "s1", "hall"],
            ["navigate_to(kitchen)", "s0", "kitchen"],
            ["navigate_to(hall)", "s1", "hall"],
            ["navigate_to(kitchen)", "s0", "kitchen"],
        ],
    ),
    "undoes": dict(candidate="drop(apple)", held=("apple",)),
    "irreversible": dict(candidate="eat(pear)", held=("pear",)),
    "hurt": dict(candidate="slice(apple)", held=("apple", "knife"), lessons=([], ["slice(apple)"])),
    "refused": dict(
        candidate="open(door)",
        left=(),
        path=[["look()", "s0", "kitchen"], ["open(door)", "s0", "kitchen", "It is locked."]],
    ),
}


def test_every_row_has_a_case() -> None:
    assert {r.label for r in ROWS} == set(CASES)
    assert len(ROWS) <= 25


@pytest.mark.parametrize("label", [r.label for r in ROWS])
def test_row_places_its_candidate(label: str) -> None:
    assert row(**CASES[label]) == label


def test_believed_reads_states_as_relations() -> None:
    facts = believed("hall", ["key"], {"box": "hall", "key": "hall"}, {"box": "opened sliced"})
    assert Atom("at", ("robot", "hall")) in facts
    assert Atom("held", ("key",)) in facts
    assert Atom("at", ("key", "hall")) not in facts  # held, not lying there
    assert Atom("open", ("box",)) in facts
    assert Atom("state", ("box", "sliced")) in facts


def test_goal_is_typed_by_the_instructions_verbs() -> None:
    put = Instruction("put_down_to", "apple", "put the apple in the box", ("box",))
    parts = goal_parts([put, Instruction("slice", None, "slice it", refers=True)], VERBS)
    assert len(parts) == 1  # a thing only described is left to the model
    assert parts[0].atoms == (Atom("in", ("apple", "box")),)
    assert parts[0].words == "put the apple in the box"


def test_order_follows_the_table_then_the_goal_then_the_world() -> None:
    left = [SLICE, Instruction("eat", "apple", "eat the apple")]
    candidates = [act(c) for c in ["drop(apple)", "look()", "eat(apple)", "slice(apple)"]]
    world = WorldModel()
    now = situation(
        candidates, VERBS, world, place="kitchen", held=("apple", "knife"), left=left, missing=()
    )
    placed = ordered(candidates, VERBS, now, "kitchen")
    assert [str(p.action) for p in placed] == [
        "slice(apple)",  # instructed, first in the goal
        "eat(apple)",  # instructed, second
        "look()",
        "drop(apple)",  # undoes held(apple), which slicing needs
    ]
    assert [p.row for p in placed] == ["instructed", "instructed", "informs", "undoes"]


def test_a_veto_outranks_an_instruction() -> None:
    assert row_of({"instructed", "refused"}) == "refused"
    assert row_of({"instructed", "loops"}) == "instructed"  # the goal's act may revisit a state
    assert row_of({"searches", "loops"}) == "loops"


def test_the_first_part_left_is_served_first() -> None:
    """What enables an earlier instruction outranks a later instruction's own act."""
    left = [SLICE, Instruction("eat", "pear", "eat the pear")]
    candidates = [act(c) for c in ["eat(pear)", "pick_up(apple)"]]
    now = situation(
        candidates, VERBS, WorldModel(), place="kitchen", held=("pear", "knife"), left=left,
        missing=(),
    )  # fmt: skip
    placed = ordered(candidates, VERBS, now, "kitchen")
    assert [(str(p.action), p.row) for p in placed] == [
        ("pick_up(apple)", "enables"),
        ("eat(pear)", "instructed"),
    ]


def test_an_act_that_changed_nothing_here_is_not_offered_first_again() -> None:
    path = [["look()", "s0", "kitchen"], ["prepare_meal()", "s0", "kitchen"]]
    verbs = [*VERBS, VerbSpec(name="prepare_meal", needs=["held(?f)"], adds=["held(meal)"])]
    left = [Instruction("prepare_meal", None, "prepare meal")]
    candidates = [act("prepare_meal()"), act("look()")]
    now = situation(
        candidates, verbs, WorldModel(path=path), place="kitchen", held=("apple",), left=left,
        missing=(),
    )  # fmt: skip
    assert [p.row for p in ordered(candidates, verbs, now, "kitchen")] == ["informs", "refused"]


def test_a_guess_at_an_earlier_parts_tool_precedes_a_later_parts_act() -> None:
    left = [SLICE, Instruction("eat", "pear", "eat the pear")]
    candidates = [act(c) for c in ["eat(pear)", "pick_up(spoon)"]]
    now = situation(
        candidates, VERBS, WorldModel(), place="kitchen", held=("apple",), left=left,
        missing=(),
    )  # fmt: skip
    placed = ordered(candidates, VERBS, now, "kitchen")
    assert [(str(p.action), p.row) for p in placed] == [
        ("pick_up(spoon)", "enables_some"),  # slicing needs some held tool: which, the model says
        ("eat(pear)", "instructed"),
    ]


def at(action: Action, row: str, part: int = 0, near: float = 0.0) -> Placed:
    """``action`` placed by ``row`` as :func:`ordered` ranks it: its row, goal part, nearness."""
    return Placed(action, row, (0, part, RANK[row], -near))


def test_the_table_decides_where_it_ranks_one_candidate_above_the_rest():
    take, go, read = act("pick_up(apple)"), act("navigate_to(kitchen)"), act("read(note)")
    assert decided([at(take, "instructed"), at(go, "searches")]) == take
    assert decided([at(take, "enables"), at(go, "irrelevant")]) == take
    # two rows serve the goal: the better row leads, the table's order holds
    assert decided([at(take, "instructed"), at(go, "achieves")]) == take
    # the earlier part of the goal first; nearer relation first (a cushion to the sofa)
    assert decided([at(take, "instructed", 0), at(go, "instructed", 1)]) == take
    assert decided([at(take, "instructed", near=0.8), at(go, "instructed", near=0.3)]) == take
    # two searches the table ranks equal: which way is the model's
    assert decided([at(go, "searches"), at(act("navigate_to(hall)"), "searches")]) is None
    # an effect unknown or a recalled lesson beside it: the model weighs them
    assert decided([at(take, "instructed"), at(read, "unknown")]) is None
    assert decided([at(take, "enables"), at(read, "helped")]) is None
    # but a lesson from another task does not outweigh an instruction of this one as written
    assert decided([at(take, "instructed"), at(read, "helped")]) == take
    # declaring the task done is never the table's to decide
    assert decided([at(act(f"{TASK_COMPLETE}()"), "instructed")]) is None
    assert decided([]) is None


def test_the_model_chooses_among_the_tie_and_what_the_table_cannot_judge():
    take, go, read = act("pick_up(apple)"), act("navigate_to(kitchen)"), act("read(note)")
    east, west = act("navigate_to(east)"), act("navigate_to(west)")
    # which way to search is open; what only may be needed comes after
    tie = [at(east, "searches"), at(west, "searches"), at(take, "enables_some")]
    assert choice(tie) == [east, west]
    # an effect unknown or a lesson stays open below the first row
    assert choice([at(take, "instructed"), at(go, "irrelevant"), at(read, "unknown")]) == [
        take,
        read,
    ]
    # the first's effect unknown (a world that declares none): all but the vetoed are open
    unknown = [at(read, "unknown"), at(go, "irrelevant"), at(take, "refused")]
    assert choice(unknown) == [read, go]
    # the first vetoed: the table knows nothing good, all are the model's
    assert choice([at(go, "loops"), at(take, "refused")]) == [go, take]
    # the task declared done first: the model judges whether it is
    done = act(f"{TASK_COMPLETE}()")
    assert choice([at(done, "instructed"), at(go, "searches")]) == [done, go]


def test_the_order_ranks_equal_only_what_it_cannot_tell_apart():
    # the apple to slice is unseen: two places not visited are searches ranked equal, the
    # knife's take (a guess at what the slice needs) below them
    ways = [act("pick_up(knife)"), act("navigate_to(cellar)"), act("navigate_to(garden)")]
    world = WorldModel(path=[["look()", "s0", "kitchen"]])
    now = situation(ways, VERBS, world, place="kitchen", held=(), left=[SLICE], missing=["apple"])
    placed = ordered(ways, VERBS, now, "kitchen")
    assert [p.row for p in placed][:2] == ["searches", "searches"]
    assert placed[0].rank == placed[1].rank != placed[2].rank
    assert choice(placed) == [ways[1], ways[2]]


def test_every_row_has_words_for_the_prompt():
    from robomemory.prompts.planner import ROW_WORDS, numbered

    assert set(ROW_WORDS) == {r.label for r in ROWS}
    listed = numbered([act("pick_up(apple)"), act("look()")], rows=["instructed", "informs"])
    assert listed.splitlines() == [
        "1. pick_up(apple) [does what is left]",
        "2. look() [changes nothing]",
    ]


def test_declaring_done_with_no_typed_goal_is_the_models_judgement():
    # nothing read yet, or a goal only described: an end nothing asks for, placed last
    assert row(f"{TASK_COMPLETE}()", left=()) == "irreversible"
    assert row(f"{TASK_COMPLETE}()") == "completes"  # a part left: not done
    # offered below an act the goal needs, it leaves that act decided
    take = act("pick_up(apple)")
    assert decided([at(take, "enables"), at(act(f"{TASK_COMPLETE}()"), "irreversible")]) == take


def test_a_task_all_done_in_a_world_of_no_score_is_the_robots_to_end():
    # a robot's world says nothing of the goal: every instruction done, only it can end the task
    done = ["slice the apple"]
    assert row(f"{TASK_COMPLETE}()", left=(), done=done) == "achieves"
    # a world that keeps a score ends the task itself once met: declaring it is no step of ours
    assert row(f"{TASK_COMPLETE}()", left=(), done=done, score=1.0) == "irreversible"
    # ranked first, it is still the model's to confirm, never decided by the table
    end = at(act(f"{TASK_COMPLETE}()"), "achieves")
    assert decided([end, at(act("look()"), "informs")]) is None


def test_a_thing_the_task_names_but_no_list_does_yet_is_the_goal_and_searched_for():
    # "find the keycard and pick it up": the keycard is no known name yet
    keycard = Instruction("pick_up", None, "pick the keycard", refers=True, described="keycard",
                          named=True)  # fmt: skip
    assert [str(p.act) for p in goal_parts([keycard], VERBS)] == ["pick_up(keycard)"]
    # never seen this task: the way to a place not visited searches for it
    path = [["look()", "s0", "kitchen"]]
    assert row("navigate_to(cellar)", left=(keycard,), path=path) == "searches"
    # seen here: no search, its take is the instruction
    assert row("pick_up(keycard)", left=(keycard,), seen={"keycard": "kitchen"}) == "instructed"


def test_with_no_goal_typed_the_world_is_searched():
    path = [["look()", "s0", "kitchen"]]
    assert row("navigate_to(cellar)", left=(), path=path) == "searches"


def test_undoing_what_the_robot_itself_made_is_a_veto_unless_asked():
    made = ("open(drawer)",)
    assert row("close(drawer)", left=(), done=made, states={"drawer": "open"}) == "undoes"
    # asked to close it: the instruction
    close = Instruction("close", "drawer", "close the drawer")
    assert row("close(drawer)", left=(close,), done=made, states={"drawer": "open"}) == (
        "instructed"
    )
    # opened, closed, opened again: only the newest made holds
    again = ("open(drawer)", "close(drawer)", "open(drawer)")
    assert row("close(drawer)", left=(), done=again, states={"drawer": "open"}) == "undoes"


def test_the_act_at_other_arguments_than_the_words_fix_achieves_nothing():
    grill = Instruction("cook", "apple", "grill the apple", ("grill",))
    assert row("cook(apple, grill)", left=(grill,), held=("apple",)) == "instructed"
    # roasting what is to be grilled cannot be undone, and nothing asks for it
    assert row("cook(apple, oven)", left=(grill,), held=("apple",)) == "irreversible"


def test_declaring_done_ranks_below_every_other_veto_but_refusal_and_hurt():
    order = [r.label for r in ROWS]
    assert order.index("completes") > order.index("irreversible") > order.index("loops")


CLASS_TASK = "Pick up objects, then place them in their usual locations."


def test_an_act_asked_of_a_class_is_a_goal_on_some_things():
    parts = goal_parts([], VERBS, CLASS_TASK)
    assert [str(p.act) for p in parts] == ["pick_up(?x)", "place_in(?x, ?y)"]
    assert row("pick_up(cushion)", left=(), task=CLASS_TASK) == "instructed"
    assert row("place_in(cushion, sofa)", left=(), task=CLASS_TASK, held=("cushion",)) == (
        "instructed"
    )
    # taking back what the robot itself put is no instance of the class's first act
    put = ("pick_up(cushion)", "place_in(cushion, chair)")
    assert row("pick_up(cushion)", left=(), task=CLASS_TASK, done=put) != "instructed"


def test_the_worlds_score_speaks_within_the_task():
    # the score fell after it: it hurt, as a recalled lesson would say
    fell = ["place_in(cushion, chair)"]
    assert row(fell[0], left=(), held=("cushion",), fell=fell) == "hurt"
    # the score rose after the robot put it: taking it back undoes that
    put = ("pick_up(cushion)", "place_in(cushion, sofa)")
    assert row("pick_up(cushion)", left=(), done=put, rose=["place_in(cushion, sofa)"]) == "undoes"


def test_a_thing_the_task_states_with_no_act_is_put_somewhere():
    task = "The dinner is almost ready! It's only missing a grilled apple."
    parts = goal_parts([], VERBS, task, ["apple", "knife"])
    assert {str(p.act) for p in parts} == {
        "put_down_to(apple, ?y)",
        "place_in(apple, ?y)",
        "cook(apple, ?y)",
    }
    # its take is what every such act needs first; where it goes is left open
    assert row("pick_up(apple)", left=(), task=task) == "enables"
    assert row("cook(apple, grill)", left=(), task=task, held=("apple",)) == "instructed"


def test_where_a_stated_thing_was_put_in_vain_it_is_not_put_again_and_the_rest_are_fetched():
    task = "The dinner is almost ready! It's only missing a grilled apple."
    put = "put_down_to(apple, chest)"
    done = ("pick_up(apple)", put, "pick_up(apple)")  # put in the chest, no score, taken back
    assert row(put, left=(), task=task, held=("apple",), done=done) != "instructed"
    assert row(put, left=(), task=task, held=("apple",), done=done[:1]) == "instructed"
    # the places where a put onto another thing was offered are the ways on
    world = WorldModel(
        done=list(done),
        put_onto={"chest": "bedroom", "grill": "yard"},
        path=[["look()", "s0", "bedroom"]],
    )
    ways = [act(put), act("navigate_to(yard)"), act("navigate_to(hall)")]
    now = situation(ways, VERBS, world, place="bedroom", held=("apple",), left=[],
                    missing=[], task=task)  # fmt: skip
    placed = {str(p.action): p.row for p in ordered(ways, VERBS, now, "bedroom")}
    assert placed["navigate_to(yard)"] == "fetches"
    assert placed["navigate_to(hall)"] != "fetches"


def test_a_thing_opened_in_one_place_is_not_the_same_named_thing_in_another():
    # every room has its "door to north": the kitchen's opened, the hall's is still a search
    path = [
        ["look()", "s0", "kitchen"],
        ["open(door to north)", "s1", "kitchen"],
        ["navigate_to(hall)", "s2", "hall"],
    ]
    opened = {"door to north": "open"}
    search = dict(left=(), missing=["coin"], path=path, states=opened, task="find the coin")
    assert row("open(door to north)", place="hall", **search) == "searches"
    assert row("open(door to north)", place="kitchen", **search) != "searches"


def test_an_act_on_nothing_left_to_do_elsewhere_is_fetched_where_it_was_offered():
    # "wiggle" was offered in the kitchen only; from the yard the way there serves it
    wiggle = Instruction("wiggle", None, "wiggle")
    world = WorldModel(acts_at={"wiggle": "kitchen"}, path=[["look()", "s0", "yard"]])
    ways = [act("navigate_to(hall)"), act("navigate_to(kitchen)")]
    now = situation(ways, VERBS, world, place="yard", held=(), left=[wiggle], missing=[])
    placed = {str(p.action): p.row for p in ordered(ways, VERBS, now, "yard")}
    assert placed == {"navigate_to(kitchen)": "fetches", "navigate_to(hall)": "irrelevant"}


SORT_TASK = (
    "Your task is to sort objects by quantity. First, place the object with the smallest "
    "quantity in the box. Then, place the objects with the next smallest quantity in the box."
)


def test_an_act_asked_in_order_of_quantity_is_done_to_the_next_thing_in_that_order():
    things = ["25g of brick", "34kg of wood", "37mg of wood", "box", "patio chair"]
    parts = goal_parts([], VERBS, SORT_TASK, things)
    assert [str(p.act) for p in parts] == ["place_in(37mg of wood, box)"]  # 37 mg < 25 g < 34 kg
    made = {Atom("in", ("37mg of wood", "box"))}
    assert [str(p.act) for p in goal_parts([], VERBS, SORT_TASK, things, made)] == [
        "place_in(25g of brick, box)"
    ]
    largest = SORT_TASK.replace("smallest", "largest")
    assert [str(p.act) for p in goal_parts([], VERBS, largest, things)] == [
        "place_in(34kg of wood, box)"
    ]
    counted = ["40 oranges", "6 bananas", "10 peaches", "box"]  # a count is a quantity too
    assert [str(p.act) for p in goal_parts([], VERBS, SORT_TASK, counted)] == [
        "place_in(6 bananas, box)"
    ]
    # its take enables it; a put of a later thing in the order is not what is asked
    offered = ("pick_up(37mg of wood)", "pick_up(34kg of wood)", "look()")
    seen = dict.fromkeys(things, "yard")
    assert row("pick_up(25g of brick)", left=(), task=SORT_TASK, offered=offered, seen=seen) == (
        "irrelevant"
    )
    assert row("pick_up(37mg of wood)", left=(), task=SORT_TASK, offered=offered[1:]) == "enables"
    # the box is not known yet (nothing held, no put offered): the task's words name it
    assert [str(p.act) for p in goal_parts([], VERBS, SORT_TASK, things[:3])] == [
        "place_in(37mg of wood, box)"
    ]
    held = ("37mg of wood", "25g of brick")
    put = ("place_in(25g of brick, box)", "place_in(37mg of wood, box)")
    assert row(put[1], left=(), task=SORT_TASK, held=held, offered=put[:1]) == "instructed"
    assert row(put[0], left=(), task=SORT_TASK, held=held, offered=put[1:]) != "instructed"


def test_a_thing_recalled_from_another_task_is_not_in_this_tasks_order():
    # "5mg of sand" was seen in this world before, but nothing of this task offers or holds it
    world = WorldModel(seen={"5mg of sand": "yard", "box": "yard"})
    offered = [act("pick_up(25g of brick)"), act("pick_up(37mg of wood)")]
    now = situation(offered, VERBS, world, place="yard", held=(), left=[], missing=[],
                    task=SORT_TASK)  # fmt: skip
    assert [str(p.act) for p in now.goal] == ["place_in(37mg of wood, box)"]


def test_a_note_whose_instructions_are_all_done_is_read_again_where_the_task_says_so():
    from robomemory.grounding.instructions import left_instructions

    task = "Your task is to read and follow the instructions book. Repeat until the game ends."
    note = "read(instructions book): The current task is to pick up the papaya."
    names = ["instructions book", "papaya", "peach"]
    left = left_instructions([note], ["read(instructions book)"], VERBS, names, task=task,
                             offered=names)  # fmt: skip
    assert [(i.verb, i.thing) for i in left] == [("pick_up", "papaya")]
    done = ["read(instructions book)", "pick_up(papaya)"]
    left = left_instructions([note], done, VERBS, names, task=task, offered=names)
    assert [(i.verb, i.thing) for i in left] == [("read", "instructions book")]
    # a note that gave no instruction is not read again for that
    plain = "read(instructions book): It is a book."
    assert left_instructions([plain], done, VERBS, names, task=task, offered=names) == []


def test_a_thing_named_with_an_act_the_api_lacks_is_no_stated_goal():
    task = "Your first task is to solve the math problem. Then, pick up the item."
    assert goal_parts([], VERBS, task, ["math problem", "box"]) == []


def test_a_spent_note_is_not_read_again_while_the_task_asks_something_else():
    from robomemory.grounding.instructions import left_instructions

    task = "Read the cookbook. Once done, eat the meal."
    note = "read(cookbook): Directions: pick up the milk."
    names = ["cookbook", "milk", "meal"]
    done = ["read(cookbook)", "pick_up(milk)"]
    left = left_instructions([note], done, VERBS, names, task=task, offered=names)
    assert [(i.verb, i.thing) for i in left] == [("eat", "meal")]
