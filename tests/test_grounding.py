"""Grounding in any world: loop breaking from the world's state, repeated or unasked
irreversible acts, the search for a thing not seen yet, verbs by their declared meanings
(pure functions: no model, no store, no world)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from robomemory.core import Action, ActionSpace, Route, VerbSpec
from robomemory.grounding import (
    Briefing,
    Scene,
    WorldModel,
    brief,
    exploration,
    extend_path,
    hops,
    left_instructions,
    loop_actions,
    meanings,
    path_of,
    unseen_things,
    untaken_exits,
    update_acts_at,
    update_notes,
    update_seen,
    with_pick,
)
from robomemory.grounding.goal_words import class_verbs, stated_things
from robomemory.grounding.needs import missing_things
from robomemory.grounding.states import update_states
from robomemory.nodes.ground import relation_affinity
from robomemory.prompts.planner import planner_user
from robomemory.testing.embeddings import BagOfWordsEmbeddings

# A neutral API: each verb says what it means; no verb is known to the grounding by name.
VERBS = [
    VerbSpec(name="navigate_to", arg_kinds=["place"], moves=True),
    VerbSpec(name="pick_up", arg_kinds=["object"], takes=True),
    VerbSpec(name="put_down_to", arg_kinds=["object", "place"], reverses="pick_up"),
    VerbSpec(name="open", arg_kinds=["object"], reveals=True),
    VerbSpec(name="close", arg_kinds=["object"], reverses="open"),
    VerbSpec(name="inspect", arg_kinds=["object"], reads=True),
    VerbSpec(name="paint", arg_kinds=["object"], irreversible=True),
    VerbSpec(name="glue", arg_kinds=["object"], irreversible=True),
    VerbSpec(name="task_complete"),
]
ASSEMBLE = VerbSpec(name="assemble")  # an act on nothing, offered in some places only
# "glaze the X" is fire(X, kiln): an alias that fixes where the act is done
FIRE = VerbSpec(
    name="fire", arg_kinds=["object", "place"], aliases=["glaze"], alias_args={"glaze": ["kiln"]}
)


def briefed(
    space: ActionSpace,
    place: str | None = "hall",
    held: tuple[str, ...] = (),
    task: str = "",
    **world: object,
) -> Briefing:
    """The briefing of a step at ``place`` over a world model of ``world``'s parts."""
    model = WorldModel.model_validate({"path": [["", "S0", place]], **world})
    return brief(space, model, Scene(place, held, task))


def act(text: str) -> Action:
    verb, _, rest = text.partition("(")
    return Action(verb=verb, args=[a.strip() for a in rest.rstrip(")").split(",") if a.strip()])


def left_to_do(*args: object, **kwargs: object) -> list[str]:
    """What is left to do, as written (:func:`left_instructions`' phrases)."""
    return [i.phrase for i in left_instructions(*args, **kwargs)]


def test_meanings_come_from_the_declared_verbs():
    m = meanings(VERBS)
    assert m.reads == {"inspect"} and m.moves == {"navigate_to"}
    assert m.irreversible == {"paint", "glue"} and m.reveals == {"open"}
    assert m.reverses == {"put_down_to": "pick_up", "close": "open"}


def test_an_action_that_brought_the_world_back_is_set_aside_until_it_changes():
    path = [
        ("", "S0", "hall"),
        ("pick_up(cup)", "S1", "hall"),
        ("put_down_to(cup, hall)", "S0", "hall"),
    ]
    assert loop_actions(path) == []  # picking up again leads on, as far as anyone knows
    path.append(("pick_up(cup)", "S1", "hall"))
    assert loop_actions(path) == ["put_down_to(cup, hall)"]  # it would close the cycle again
    path.append(("paint(cup)", "S2", "hall"))  # the world changed: nothing loops from here
    assert loop_actions(path) == []


def test_walking_back_and_forth_is_set_aside_at_the_second_turn():
    path = [("", "hall", "hall"), ("navigate_to(bath)", "bath", "bath")]
    path += [("navigate_to(hall)", "hall", "hall"), ("navigate_to(bath)", "bath", "bath")]
    assert loop_actions(path) == ["navigate_to(hall)"]


def test_without_the_world_s_state_an_a_b_a_b_cycle_is_broken():
    path = [("", None, None), ("inspect(cup)", None, None), ("inspect(box)", None, None)]
    assert loop_actions(path) == []
    path.append(("inspect(cup)", None, None))
    assert loop_actions(path) == ["inspect(box)"]


def test_a_step_that_shows_no_world_keeps_the_state_it_was_in():
    steps = [
        {"step": 1, "action": "pick_up(cup)", "outcome": "succeeded", "world": "S1", "place": "a"},
        {"step": 2, "action": "pick_up(x)", "outcome": "rejected", "world": None, "place": "a"},
    ]
    assert path_of("S0", "a", steps, "a") == [
        ("", "S0", "a"),
        ("pick_up(cup)", "S1", "a"),
        ("pick_up(x)", "S1", "a"),
    ]


def test_a_name_after_a_link_is_not_the_thing_of_an_instruction():
    """ "Inspect the manual in the hall": with the manual not known here, the hall is where it
    lies, not the thing to read (the robot was told to inspect the hall it was not in, and
    a left read kept its hand from freeing); a thing told by a pointer keeps its link."""
    from robomemory.grounding import Instruction, instructions

    text = "Inspect the manual in the hall. Then glue it to the red box."
    assert [i.thing for i in instructions(text, VERBS, ["hall"])] == []
    assert instructions(text, VERBS, ["manual", "hall"]) == [
        Instruction("inspect", "manual", "inspect the manual")
    ]
    put = "Put it on the shelf."
    assert [(i.verb, i.thing) for i in instructions(put, VERBS, ["shelf"])] == [
        ("put_down_to", "shelf")
    ]


def test_a_pointer_before_the_place_of_a_put_is_the_thing_named_before():
    """ "Pick up the coin that is in the shed, and put it into the box": the put of the coin,
    into the box (typed as a put *of the box*, the put of the coin read as undoing its take
    and the map reader's game was lost with the coin in hand); the coin not seen yet, the put
    refers to whatever the world calls a coin. With nothing named before, the link stays."""
    from robomemory.grounding import instructions

    task = "Pick up the coin that is in the shed, and put it into the box found in the hall."
    known = instructions(task, VERBS, ["coin", "box"], referring=True)
    assert [(i.verb, i.thing, i.rest) for i in known] == [
        ("pick_up", "coin", ()),
        ("put_down_to", "coin", ("box",)),
    ]
    (put,) = instructions(task, VERBS, ["box"], referring=True)
    assert (put.thing, put.rest, put.described, put.named) == (None, ("box",), "coin", True)
    assert [(i.verb, i.thing) for i in instructions("Put it on the shelf.", VERBS, ["shelf"])] == [
        ("put_down_to", "shelf")
    ]


def test_a_document_read_is_kept_whole_to_its_last_step():
    steps = " ".join(
        f"paint the cup number {i}, then inspect the paint of box {i}." for i in range(9)
    )
    message = f"The manual reads:\nSteps:\n{steps}\nDone."
    item = {"action": "inspect(manual)", "verb": "inspect", "args": ["manual"],
            "outcome": "succeeded", "message": message}  # fmt: skip
    (note,) = update_notes([], item, "Read the manual.", VERBS)
    assert len(note) > 500 and note.endswith("box 8.\nDone.")  # its lines kept


def test_things_the_instructions_name_that_no_known_name_is():
    text = "You open the copy of the manual. Steps: pick up the blue cup paint the cup. Done!"
    assert unseen_things(text, VERBS, ["cup"]) == ["blue cup"]
    assert unseen_things(text, VERBS, ["blue cup"]) == []  # found: the search stops
    assert unseen_things("First, paint it.", VERBS, []) == []  # a pointer names nothing


def test_hops_follow_the_known_routes_both_ways():
    routes = [Route("hall", "east", "kitchen"), Route("kitchen", "north", "pantry")]
    assert hops(routes, "pantry") == {"pantry": 0, "kitchen": 1, "hall": 2}


def test_the_search_leads_with_what_is_here_then_the_nearest_place_not_visited():
    routes = [Route("hall", "east", "kitchen"), Route("kitchen", "north", "pantry")]
    candidates = [
        act("navigate_to(pantry)"),
        act("navigate_to(kitchen)"),
        act("navigate_to(attic)"),
        act("pick_up(cup)"),
        act("open(closet)"),
        act("open(drawer)"),
    ]
    found = exploration(
        candidates, VERBS, here="hall", visited=["hall"], revealed=["drawer"], routes=routes
    )
    # the closet here, then one hop away the kitchen and the attic (no route known: one
    # hop, like an exit; the world's order breaks the tie), then the pantry
    assert [str(a) for a in found] == [
        "open(closet)",
        "navigate_to(kitchen)",
        "navigate_to(attic)",
        "navigate_to(pantry)",
    ]


def test_a_place_left_with_an_exit_not_taken_is_where_the_search_goes_back_to():
    verbs = [*VERBS, VerbSpec(name="go", arg_kinds=["direction"], moves=True)]
    path = [["", "S0", "hall"]]
    exits = untaken_exits({}, "hall", [act("go(north)"), act("go(east)")], verbs, path)
    assert exits == {"hall": ["go(north)", "go(east)"]}
    path.append(["go(east)", "S1", "bath"])  # a dead end: its only way leads back
    exits = untaken_exits(exits, "bath", [act("go(west)"), act("open(cabinet)")], verbs, path)
    assert exits == {"hall": ["go(north)"], "bath": ["go(west)"]}
    routes = [Route("hall", "east", "bath")]
    here = [act("navigate_to(hall)"), act("go(west)"), act("pick_up(towel)")]
    found = exploration(here, verbs, here="bath", visited=["hall", "bath"], routes=routes)
    assert [str(a) for a in found] == ["go(west)"]  # an exit, where it leads unknown
    found = exploration(
        here, verbs, here="bath", visited=["hall", "bath"], routes=routes, exits=exits
    )
    assert [str(a) for a in found] == ["go(west)", "navigate_to(hall)"]  # then back to go on
    path.append(["navigate_to(hall)", "S0", "hall"])
    path.append(["go(north)", "S2", "attic"])
    exits = untaken_exits(exits, "attic", [act("go(south)")], verbs, path)
    assert "hall" not in exits  # both its exits taken: nothing to go back for


def test_where_a_thing_was_last_offered_is_kept_until_it_is_gone_from_there():
    seen = update_seen({}, "hall", [act("pick_up(cup)"), act("navigate_to(attic)")], VERBS)
    assert seen == {"cup": "hall"}  # a place one can go to is not a thing seen here
    seen = update_seen(
        seen, "attic", [act("pick_up(brush)"), act("put_down_to(cup, attic)")], VERBS, held=["cup"]
    )
    assert seen == {"cup": "hall", "brush": "attic"}  # what is held goes where the robot goes
    seen = update_seen(seen, "hall", [act("inspect(manual)")], VERBS)
    assert seen == {"brush": "attic", "manual": "hall"}  # the cup is gone from the hall


def test_where_an_act_on_nothing_was_last_offered_is_kept_until_it_is_gone_from_there():
    here = [act("assemble()"), act("task_complete()"), act("navigate_to(attic)")]
    acts = update_acts_at({}, "shop", [*here, act("pick_up(cup)")], [*VERBS, ASSEMBLE])
    assert acts == {"assemble": "shop"}  # finishing is offered everywhere; a move is no act
    acts = update_acts_at(acts, "attic", [act("navigate_to(shop)")], [*VERBS, ASSEMBLE])
    # not offered now (what it needs is not held): still done there
    assert update_acts_at(acts, "shop", [act("navigate_to(attic)")], [*VERBS, ASSEMBLE]) == acts


def test_the_planner_is_told_what_is_not_seen_and_where_to_look():
    note = "inspect(manual): Steps: paint the blue cup"
    candidates = [act("pick_up(box)"), act("navigate_to(attic)"), act("open(closet)")]
    space = ActionSpace(verbs=VERBS, candidates=candidates)
    told = briefed(space, notes=[note])
    assert told.missing == ["blue cup"] and told.search == ["open(closet)", "navigate_to(attic)"]
    text = planner_user("Task: x", told, space)
    assert text.splitlines()[-3] == (
        "Not seen yet: blue cup. Look for it first: open(closet), navigate_to(attic)"
    )
    # once the closet is opened it is no more a place to look; once the cup is seen, no line
    opened = [["", "S0", "hall"], ["open(closet)", "S1", "hall"]]
    assert briefed(space, notes=[note], path=opened).search == ["navigate_to(attic)"]
    seen = ActionSpace(verbs=VERBS, candidates=[act("paint(blue cup)"), *candidates])
    assert briefed(seen, notes=[note]).missing == []
    elsewhere = briefed(space, notes=[note], seen={"blue cup": "attic"})
    assert (elsewhere.missing, elsewhere.search) == ([], [])
    assert "Not seen yet" not in planner_user("Task: x", Briefing(candidates=candidates), space)


def test_the_planner_is_told_what_is_needed_from_elsewhere_and_the_way_there():
    note = "inspect(manual): Steps: paint the blue cup, glue the box"
    candidates = [act("put_down_to(box, hall)"), act("navigate_to(attic)"), act("look()")]
    seen = {"blue cup": "attic", "box": "hall", "manual": "hall"}
    space = ActionSpace(verbs=VERBS, candidates=candidates)
    told = briefed(space, held=("box",), notes=[note], seen=seen)
    assert told.away == ["blue cup (attic)"] and told.fetch == ["navigate_to(attic)"]  # box held
    assert planner_user("Task: x", told, space).splitlines()[-3] == (
        "Needed, seen elsewhere: blue cup (attic). Go there first: navigate_to(attic)"
    )
    # a thing asked for is here to take: no line; nothing read yet: no line
    here = ActionSpace(verbs=VERBS, candidates=[act("pick_up(blue cup)"), *candidates])
    told = briefed(here, held=("box",), notes=[note], seen=seen)
    assert (told.away, told.fetch) == ([], [])
    told = briefed(space, held=("box",), seen=seen)
    assert (told.away, told.fetch) == ([], [])
    # all done but an act on nothing, offered in the shop: that is what is needed
    ways = ActionSpace(verbs=[*VERBS, ASSEMBLE], candidates=[*candidates, act("navigate_to(shop)")])
    told = briefed(
        ways,
        held=("box",),
        notes=["inspect(manual): Steps: paint the box, then assemble"],
        seen=seen,
        done=["paint(box)"],
        acts_at={"assemble": "shop"},
    )
    assert told.away == ["assemble() (shop)"] and told.fetch == ["navigate_to(shop)"]
    empty = Briefing(candidates=candidates)
    assert "Needed, seen elsewhere" not in planner_user("Task: x", empty, space)


def test_the_grounding_imports_only_core_and_episode():
    package = Path(__file__).parent.parent / "robomemory" / "grounding"
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("robomemory"):
                pure = (
                    "robomemory.core",
                    "robomemory.effects",
                    "robomemory.episode",
                    "robomemory.quantities",
                )
                inside = node.module.startswith("robomemory.grounding")
                assert node.module in pure or inside, (module.name, node.module)


def test_a_thing_an_instruction_only_refers_to_is_nothing_to_look_for():
    task = "Find a(n) living thing. First, paint the thing. Then, glue it to the red box."
    assert unseen_things(task, VERBS, ["chair"]) == ["red box"]  # not "thing"


def test_back_and_forth_is_broken_in_a_world_whose_state_changes_with_time():
    path = [("", "t0 hall", "hall"), ("navigate_to(bath)", "t1 bath", "bath")]
    path += [("navigate_to(hall)", "t2 hall", "hall"), ("navigate_to(bath)", "t3 bath", "bath")]
    assert loop_actions(path) == ["navigate_to(hall)"]  # no state came back: the cycle did
    path.append(("inspect(tub)", "t4 bath", "bath"))
    assert loop_actions(path) == []


def test_a_move_into_a_room_not_visited_is_no_loop():
    """East, north, east through a maze: north from the new room leads somewhere new (a coin
    maze's zig-zag was withheld at several steps); back where north was taken, it would loop."""
    path = [("", "S0", "r0"), ("go(east)", "S1", "r1"), ("go(north)", "S2", "r2")]
    path.append(("go(east)", "S3", "r3"))
    assert loop_actions(path) == []
    back = [("", "S0", "r0"), ("go(east)", "t1", "r1"), ("go(north)", "t2", "r2")]
    back.append(("go(east)", "t3", "r1"))  # a world whose state changes: the place came back
    assert loop_actions(back) == ["go(north)"]


def test_the_tasks_words_for_a_thing_described_elsewhere_make_an_instruction_until_done():
    """ "Find a red thing. First, paint the thing." names no thing the world has: the task's
    instruction is listed until a paint is done on whatever thing; in a note such words are
    none (a text read is no task)."""
    task = "Find a red thing. First, paint the thing. Then, glue the box."
    assert left_to_do([], [], VERBS, [], task=task, offered=["box"]) == [
        "find a red thing, then paint it",
        "glue the box",
    ]
    bare = "Paint the thing. Then, glue the box."
    assert left_to_do([], [], VERBS, [], task=bare)[0] == "paint the thing"
    assert left_to_do([], ["paint(cup)"], VERBS, [], task=task, offered=["box"]) == ["glue the box"]
    note = "inspect(manual): First, paint the thing."
    assert left_to_do([note], [], VERBS, ["box"]) == []


def test_the_planner_is_told_what_the_task_describes_and_the_places_not_visited():
    """ "Find a red thing. First, paint the thing.": until a paint is done, the planner is
    told what to find and the ways to places not visited (a small model otherwise looked
    into every cup of the first room)."""
    task = "Find a red thing. First, paint the thing."
    candidates = [act("navigate_to(attic)"), act("navigate_to(hall)"), act("open(closet)")]
    space = ActionSpace(verbs=VERBS, candidates=candidates)
    path = [["", "S0", "shop"], ["navigate_to(hall)", "S1", "hall"]]
    told = briefed(space, None, task=task, path=path)
    assert (told.described, told.unvisited, told.here) == (
        ["a red thing"],
        ["navigate_to(attic)"],
        [],
    )
    text = planner_user("Task: x", told, space)
    assert text.splitlines()[-3] == "To find: a red thing. Places not visited: navigate_to(attic)"
    # every place visited: the things here
    path = [*path, ["navigate_to(attic)", "S2", "attic"]]
    told = briefed(space, None, task=task, path=path)
    assert (told.described, told.unvisited, told.here) == (["a red thing"], [], ["closet"])
    text = planner_user("Task: x", told, space)
    assert text.splitlines()[-3] == "To find: a red thing. Every place visited; here: closet"
    done = briefed(space, None, task=task, path=path, done=["paint(cup)"])
    assert (done.described, done.unvisited, done.here) == ([], [], [])
    assert briefed(space, None, task="Paint the box.", path=path).described == []


def test_after_the_pick_the_task_s_pronoun_is_the_thing_picked():
    """ "Find a plant. First, paint the thing. Then, move it to the green box.": once a paint
    is done on X, "it" reads "the X"; a pronoun that stands for a thing the text names
    stays; a pick the world now spells longer is read as the shortest name holding it."""
    move = VerbSpec(name="put_down_to", arg_kinds=["object", "place"], aliases=["move"])
    verbs = [*VERBS, move]
    task = "Find a plant. First, paint the thing. Then, move it to the green box."
    assert with_pick(task, verbs, ["navigate_to(hall)"]) == task
    picked = "Find a plant. First, paint the thing. Then, move the fern to the green box."
    assert with_pick(task, verbs, ["paint(fern)"], ["fern"]) == picked
    longer = with_pick(task, verbs, ["paint(fern)"], ["big green fern", "green fern"])
    assert longer.endswith("move the green fern to the green box.")
    other = "Find a plant. First, paint the thing. Then, open the box and move it to the hall."
    assert with_pick(other, verbs, ["paint(fern)"], ["fern"]) == other


def test_a_put_whose_thing_is_not_named_yet_binds_no_need_to_its_place():
    """ "Find a plant. First, paint the thing. Then, move it to the green box.", the move
    needing its thing held: before the paint, "it" is no thing known, so the box is where it
    goes, never the thing moved (read as the move of the box, the take of the box was
    `enables` and the robot carried the box through every room); once painted, the fern's."""
    from robomemory.grounding import instructions

    take = VerbSpec(name="pick_up", arg_kinds=["object"], adds=["held($0)"])
    move = VerbSpec(
        name="put_down_to",
        arg_kinds=["object", "place"],
        aliases=["move"],
        needs=["held($0)"],
        adds=["in($0, $1)"],
        removes=["held($0)"],
    )
    verbs = [v for v in VERBS if v.name not in {"pick_up", "put_down_to"}] + [take, move]
    task = "Find a plant. First, paint the thing. Then, move it to the green box in the hall."
    (_, put) = instructions(task, verbs, ["green box", "hall"], referring=True)
    assert (put.thing, put.rest, put.refers) == (None, ("green box",), True)
    offered = ["pick_up(green box)", "navigate_to(attic)", "paint(fern)"]
    space = ActionSpace(verbs=verbs, candidates=[act(a) for a in offered])
    told = briefed(space, "hall", task=task, seen={"green box": "hall", "fern": "hall"})
    rows = dict(zip(map(str, told.candidates), told.placed, strict=True))
    assert rows["pick_up(green box)"] not in {"enables", "instructed", "achieves"}
    offered = ["pick_up(fern)", "pick_up(green box)", "navigate_to(attic)"]
    space = ActionSpace(verbs=verbs, candidates=[act(a) for a in offered])
    painted = briefed(
        space, "hall", task=task, seen={"green box": "hall", "fern": "hall"}, done=["paint(fern)"]
    )
    assert (str(painted.candidates[0]), painted.placed[0]) == ("pick_up(fern)", "enables")


def _failing(step: int, action: str, message: str, place: str = "lab", ok: bool = False) -> dict:
    verb, args = action.split("(")[0], [a.strip() for a in action[:-1].split("(")[1].split(",")]
    return {"step": step, "action": action, "verb": verb, "args": [a for a in args if a],
            "outcome": "succeeded" if ok else "failed", "message": message, "changed": ok,
            "place": place, "world": f"W{step}" if ok else None}  # fmt: skip


def test_the_path_keeps_the_answer_of_a_failed_step_only():
    steps = [
        _failing(1, "glue(box, jar)", "It's  NOT clear."),
        _failing(2, "pick_up(cup)", "Ok", ok=True),
    ]
    path = path_of("W0", "lab", steps, "lab")
    assert path[1] == ("glue(box, jar)", "W0", "lab", "it's not clear.")
    assert path[2] == ("pick_up(cup)", "W2", "lab")
    grown = extend_path([list(p) for p in path], "glue(box, jar)", None, "lab", "it's not clear.")
    assert grown[-1] == ["glue(box, jar)", "W2", "lab", "it's not clear."]


def test_a_class_tasks_relations_lead_nearest_first_and_the_ground_node_measures_nearness():
    """Where a thing usually goes is a judgement: the relations a class task asks lead in
    the order of how near their two names are (the embedder's cosine, measured by the
    ground node); a task that asks no class gets no nearness."""
    place = VerbSpec(name="put_down_to", arg_kinds=["object", "place"], aliases=["place"])
    verbs = [v for v in VERBS if v.name != "put_down_to"] + [place]
    task = "Pick up objects, then place them in their usual locations."
    puts = [
        act("put_down_to(remote control, counter)"),
        act("put_down_to(remote control, tv stand)"),
    ]
    space = ActionSpace(verbs=verbs, candidates=[act("navigate_to(hall)"), *puts])
    memory = SimpleNamespace(embedder=BagOfWordsEmbeddings())
    near = relation_affinity(SimpleNamespace(memory=memory), space.candidates, verbs, task)
    assert near["put_down_to(remote control, tv stand)"] == 0.0  # no word shared
    remote = act("put_down_to(tv remote, tv stand)")
    shared = relation_affinity(SimpleNamespace(memory=memory), [remote], verbs, task)
    assert shared[str(remote)] > 0.3  # "tv" shared: the fake embedder's nearness
    assert relation_affinity(SimpleNamespace(memory=memory), puts, verbs, "Open the door.") == {}
    model = WorldModel.model_validate({"path": [["", "S0", "hall"]], "done": ["pick_up(x)"]})
    scene = Scene("hall", ("remote control",), task)
    for nearest in puts:
        got = brief(space, model, scene, affinity={str(nearest): 0.6})
        assert str(got.candidates[0]) == str(nearest)


def test_class_verbs_reads_plurals_and_plural_pronouns_after_a_verb_of_things():
    place = VerbSpec(name="put_down_to", arg_kinds=["object", "place"], aliases=["place"])
    verbs = [v for v in VERBS if v.name != "put_down_to"] + [place]
    assert class_verbs("Pick up objects, then place them on the shelf.", verbs) == [
        "pick_up",
        "put_down_to",
    ]
    assert class_verbs("Place them on the shelf after you pick up objects.", verbs) == [
        "put_down_to",
        "pick_up",
    ]  # the order the task names them in
    assert class_verbs("Find the key and pick it up. Open the glass.", verbs) == []
    assert class_verbs("Navigate to rooms and inspect the map.", verbs) == []  # a move
    assert class_verbs("Paint all of it.", verbs) == ["paint"]


def test_a_name_with_a_number_gets_its_state_from_the_world_s_words():
    """ "There is a closed type 7 portal": the text's words skip the number, and the name is
    read the same way (the portal's state was never kept, so its unlock did not lead)."""
    states = update_states(
        {}, "There is a closed type 7 portal leading west.", ["type 7 portal"], VERBS
    )
    assert states == {"type 7 portal": "closed"}


def test_it_in_the_task_is_the_thing_named_before_it():
    """ "Find the coin and pick it up": what is left is to pick up the coin, not "pick it" (a
    small model told "pick it" takes whatever is in front of it); once the coin is a known
    name the instruction is on it, and it is done when the coin is taken."""
    task = "Find the coin and pick it up."
    unseen = left_instructions([], [], VERBS, [], task=task)
    assert [(i.phrase, i.refers, i.described) for i in unseen] == [("pick the coin", True, "coin")]
    known = left_instructions([], [], VERBS, [], task=task, offered=["coin"])
    assert [(i.verb, i.thing, i.phrase) for i in known] == [("pick_up", "coin", "pick the coin")]
    assert left_instructions([], ["pick_up(coin)"], VERBS, [], task=task, offered=["coin"]) == []
    # taking another thing does not do it (a coin maze's robot took a teapot on the way)
    assert left_to_do([], ["pick_up(teapot)"], VERBS, [], task=task) == ["pick the coin"]
    assert left_to_do([], ["pick_up(gold coin)"], VERBS, [], task=task) == []
    # the sentence before counts; a thing two sentences back is not what "it" means
    far = "Open the gate. Walk on. Then pick it up."
    assert [i.phrase for i in left_instructions([], [], VERBS, [], task=far)] == ["pick it"]


GO = VerbSpec(name="go", arg_kinds=["direction"], moves=True)  # a move that names no place


def test_where_moves_name_directions_the_search_s_next_acts_are_told_not_places():
    """Told "Places not visited: go(east)" beside closed doors, a small model walked into
    them again and again; where moves name no place the line gives the search's next acts,
    a door to open first."""
    candidates = [act("go(east)"), act("open(door to east)"), act("task_complete()")]
    space = ActionSpace(verbs=[*VERBS, GO], candidates=candidates)
    told = briefed(space, "kitchen", task="Find the coin and pick it up.")
    assert told.described == ["coin"] and told.unvisited == []
    assert told.search[0] == "open(door to east)"
    text = planner_user("Task: x", told, space)
    assert "To find: coin. Search next: open(door to east), go(east)" in text


def test_a_move_taken_from_here_before_leads_where_it_led():
    """go(west) from the bath led to the hall, searched out: it is no exit to a new place,
    while go(north), never taken, may be (a coin maze's robot shuttled back where it came
    from, every direction ranked as new)."""
    space = ActionSpace(verbs=[*VERBS, GO], candidates=[act("go(west)"), act("go(north)")])
    path = [["", "H", "hall"], ["go(east)", "B", "bath"], ["go(west)", "H", "hall"]]
    path += [["go(east)", "B", "bath"], ["inspect(towel)", "B2", "bath"]]  # no loop from B2
    told = briefed(space, "bath", task="Find the coin and pick it up.", path=path)
    assert told.search == ["go(north)"]
    left = briefed(
        space,
        "bath",
        task="Find the coin and pick it up.",
        path=path,
        exits={"hall": ["go(south)"]},
    )
    assert left.search == ["go(north)", "go(west)"]  # the hall still has an exit not taken


def test_what_blocks_a_refused_move_is_opened_here_whatever_was_opened_elsewhere():
    """Each room has its "door to south": one opened in the kitchen is not the one that
    refused go(south) in the living room, which is the one to open there."""
    candidates = [act("go(north)"), act("open(door to south)"), act("task_complete()")]
    space = ActionSpace(verbs=[*VERBS, GO], candidates=candidates)
    path = [["", "K", "kitchen"], ["open(door to south)", "K2", "kitchen"]]
    path.append(["go(south)", "L", "living room"])
    task = "Find the coin and pick it up."
    before = briefed(space, "living room", task=task, path=path)
    assert before.search == ["go(north)"]  # opened (in the kitchen) is revealed
    path.append(["go(south)", "L", "living room", "you can't move there, the door is closed."])
    refused = briefed(space, "living room", task=task, path=path)
    assert refused.search[0] == "open(door to south)"
    path.append(["open(door to south)", "L2", "living room"])
    opened = briefed(space, "living room", task=task, path=path)
    assert "open(door to south)" not in opened.search  # opened here: nothing left to open


def test_an_irreversible_instruction_stays_left_when_a_later_one_on_its_thing_is_done():
    """Things are acted on out of the written order: gluing the leg after painting it is
    still needed (each irreversible act is its own result), while opening the box once what
    follows on it is done is over."""
    notes = [
        "inspect(manual): Glue the red leg, then paint the red leg."
        " Open the box, then close the box."
    ]
    names = ["red leg", "box", "manual"]
    done = ["paint(red leg)", "close(box)"]
    left = left_instructions(notes, done, VERBS, names, task="Read the manual.", offered=names)
    assert [i.phrase for i in left] == ["glue the red leg"]


def test_the_thing_a_task_of_no_act_states_is_searched_for_until_seen():
    """ "It's only missing a polished blue cup": a task that names no act states its goal as a
    thing's state; the thing, unseen, is missing and the search leads (the closed box opened);
    once a name with its words is seen, nothing is. A task that names an act is read by its
    instructions instead."""
    task = "The party is almost ready! It's only missing a polished blue cup."
    assert stated_things(task, VERBS) == ["polished blue cup"]
    assert stated_things("Open the red box. It's only missing a polished blue cup.", VERBS) == []
    here = [act("inspect(shelf)"), act("open(red box)"), act("navigate_to(attic)")]
    model = WorldModel.model_validate({"path": [["", "S0", "hall"]]})
    assert missing_things(model, here, VERBS, task) == ["polished blue cup"]
    seen = model.model_copy(update={"seen": {"blue cup": "attic"}})
    assert missing_things(seen, here, VERBS, task) == []
    other = model.model_copy(update={"seen": {"blue box": "attic"}})
    assert missing_things(other, here, VERBS, task) == ["polished blue cup"]
    space = ActionSpace(verbs=VERBS, candidates=here)
    shown = brief(space, model, Scene("hall", (), task, ()))
    assert shown.missing == ["polished blue cup"]
    assert str(shown.candidates[0]) == "open(red box)"  # the search looks inside here first


def test_told_no_task_the_note_that_states_the_goal_stays_the_goal():
    """With no task, the first note kept (the goal a read states) is not pushed out by later
    reads that state other things ("On the sink is a toothbrush" had become the goal)."""
    from robomemory.grounding import notes_of
    from robomemory.grounding.notes import goal_note

    said = "The party is almost ready! It's only missing a polished blue cup."
    steps = [{"action": "inspect(note)", "outcome": "succeeded", "args": ["note"], "message": said}]
    for place, thing in [("sink", "toothbrush"), ("shelf", "red box"), ("bath", "soap bar")]:
        text = f"The {place} is solid. On the {place} is a {thing}."
        read = {"action": f"inspect({place})", "outcome": "succeeded", "args": [place]}
        steps.append({**read, "message": text})
    notes = notes_of(steps, "", VERBS)
    assert goal_note("", notes) == said and len(notes) == 2
    assert notes[1].startswith("inspect(bath)")  # the newest read beside it
    told = notes_of(steps, "Paint the shelf.", VERBS)
    assert not any(n.startswith("inspect(note)") for n in told)  # a task: the newest reads


def test_the_next_instruction_left_that_can_be_done_here_leads():
    """The notes ask to paint the red leg, then glue it, then glaze the blue chair: the first
    act left that is offered leads (not the open a read's narration named first); a thing's
    later act waits for its first; the glaze leads only at the kiln its alias fixes."""
    fire = FIRE
    verbs = [*VERBS, fire]
    note = (
        "inspect(folder): You open the folder and start reading:\n"
        "paint the red leg\nglue the red leg\nglaze the blue chair"
    )
    offered = [
        act("open(red box)"),
        act("glue(red leg)"),
        act("fire(blue chair, oven)"),
        act("paint(red leg)"),
        act("inspect(red box)"),
    ]
    space = ActionSpace(verbs=verbs, candidates=offered)
    model = WorldModel.model_validate({"path": [["", "S0", "hall"]], "notes": [note]})
    here = Scene("hall", ("red leg", "blue chair"), "Read the folder.", ())
    assert str(brief(space, model, here).candidates[0]) == "paint(red leg)"
    painted = model.model_copy(update={"done": ["paint(red leg)"]})
    assert str(brief(space, painted, here).candidates[0]) == "glue(red leg)"
    glued = model.model_copy(update={"done": ["paint(red leg)", "glue(red leg)"]})
    assert str(brief(space, glued, here).candidates[0]) != "fire(blue chair, oven)"
    kiln = ActionSpace(verbs=verbs, candidates=[*offered, act("fire(blue chair, kiln)")])
    assert str(brief(kiln, glued, here).candidates[0]) == "fire(blue chair, kiln)"


def test_the_put_of_a_thing_at_hand_is_left_to_do_where_its_place_is_not():
    """ "Pick up the coin ..., and put it into the box": the coin taken where no box is, the put
    is still to do (it was listed only where the box was offered: with no goal left, the map
    reader's robot searched on with the coin in hand), and the way back to the box fetches."""
    from robomemory.grounding import instructions

    task = "Pick up the coin that is in the shed, and put it into the box found in the hall."
    at_hand = instructions(task, VERBS, ["coin"], referring=True, further=["coin", "box"])
    assert [(i.verb, i.thing, i.rest) for i in at_hand] == [
        ("pick_up", "coin", ()),
        ("put_down_to", "coin", ("box",)),
    ]
    space = ActionSpace(
        verbs=VERBS,
        candidates=[act("navigate_to(yard)"), act("navigate_to(hall)"), act("inspect(map)")],
    )
    path = [["", "S0", "hall"], ["navigate_to(shed)", "S1", "shed"]]
    path += [["pick_up(coin)", "S2", "shed"]]
    b = briefed(
        space, "shed", ("coin",), task, path=path, seen={"box": "hall"}, done=["pick_up(coin)"]
    )
    assert b.left == ["put it into the box"]
    assert b.placed[0] == "fetches" and b.decided == "navigate_to(hall)"
