"""The world model and the briefing: typed, built by one call each, read once a step (pure
tests on a neutral API, then one graph run with a FAKE model on a real TextWorld game)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

import robomemory.grounding.briefing as briefing_module
import robomemory.nodes.ground as ground_module
from robomemory.core import Action, ActionSpace, VerbSpec
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.grounding import Briefing, Scene, WorldModel, brief
from robomemory.testing import PlanScript, message_text, scripted_llm

VERBS = [
    VerbSpec(name="navigate_to", arg_kinds=["place"], moves=True),
    VerbSpec(name="pick_up", arg_kinds=["object"]),
    VerbSpec(name="inspect", arg_kinds=["object"], reads=True),
    VerbSpec(name="open", arg_kinds=["object"], reveals=True),
    VerbSpec(name="paint", arg_kinds=["object"], irreversible=True),
    VerbSpec(name="task_complete"),
]
MANUAL = "Steps:\nopen the closet\npaint the blue cup\nthen pick up the box\nand finish"


def act(text: str) -> Action:
    verb, _, rest = text.partition("(")
    return Action(verb=verb, args=[a.strip() for a in rest.rstrip(")").split(",") if a.strip()])


def space(*actions: str) -> ActionSpace:
    return ActionSpace(verbs=VERBS, candidates=[act(a) for a in actions])


def step(n: int, action: str, message: str, world: str, outcome: str = "succeeded") -> dict:
    verb, args = action.split("(")[0], [a for a in action[:-1].split("(")[1].split(", ") if a]
    return {
        "step": n,
        "action": action,
        "verb": verb,
        "args": args,
        "outcome": outcome,
        "message": message,
        "changed": outcome == "succeeded" and verb != "inspect",
        "place": "hall",
        "world": world,
    }


def test_the_world_model_starts_from_what_the_map_recalled_and_the_first_observation():
    hall = space("inspect(manual)", "open(closet)", "navigate_to(attic)", "pick_up(box)")
    recalled = {"box": "attic", "blue cup": "attic"}
    world = WorldModel.recalled(recalled).observe(
        hall, "hall", ["A hall. An opened closet."], world="S0"
    )
    assert world.path == [["", "S0", "hall"]]
    # the box is offered here now: the map's old place is corrected; the cup stays recalled
    assert world.seen == {"blue cup": "attic", "box": "hall", "closet": "hall", "manual": "hall"}
    assert world.exits == {"hall": ["navigate_to(attic)"]}
    assert world.states == {"closet": "opened"}
    assert world.notes == [] and world.done == []


def test_each_step_is_observed_once_into_notes_done_and_path():
    hall = space("inspect(manual)", "open(closet)", "navigate_to(attic)", "pick_up(box)")
    world = WorldModel().observe(hall, "hall", ["A hall."], world="S0")
    read = step(1, "inspect(manual)", MANUAL, "S0")
    world = world.observe(hall, "hall", [MANUAL], step=read, task="Follow the manual.")
    assert world.notes == [f"inspect(manual): {MANUAL}"]  # its lines kept
    assert world.read() == [MANUAL]
    refused = step(2, "open(closet)", "It is locked.", "S0", outcome="failed")
    world = world.observe(hall, "hall", ["It is locked."], step=refused)
    assert world.path[-1] == ["open(closet)", "S0", "hall", "it is locked."]
    took = step(3, "pick_up(box)", "You take the box.", "S1")
    world = world.observe(space("navigate_to(attic)"), "hall", ["You take the box."], step=took)
    assert world.done == ["pick_up(box)"]
    assert world.acted() == ["", "inspect(manual)", "open(closet)", "pick_up(box)", "pick_up(box)"]
    # the checkpoint's JSON gives back the same model; a field it does not know is refused
    assert WorldModel.model_validate(world.model_dump()) == world
    with pytest.raises(ValidationError):
        WorldModel.model_validate({**world.model_dump(), "candidates": []})


def test_the_briefing_derives_each_fact_once(monkeypatch):
    calls: dict[str, int] = {"missing_things": 0, "wanted_things": 0}
    for name in calls:
        real = getattr(briefing_module, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(briefing_module, name, counted)
    # offer() is given the facts: deriving them again there would fail
    monkeypatch.setattr("robomemory.grounding.needs.missing_things", None)
    monkeypatch.setattr("robomemory.grounding.needs.wanted_things", None)
    hall = space("inspect(manual)", "open(closet)", "navigate_to(attic)", "pick_up(box)")
    world = WorldModel(notes=[f"inspect(manual): {MANUAL}"], path=[["", "S0", "hall"]])
    told = brief(hall, world, Scene("hall", (), "Follow the manual."), limit=3)
    assert calls == {"missing_things": 1, "wanted_things": 1}
    # the blue cup is not seen: the search leads, and the line points into the offered list
    assert told.missing == ["blue cup"]
    assert [str(a) for a in told.candidates][:2] == ["open(closet)", "navigate_to(attic)"]
    assert set(told.search) <= {str(a) for a in told.candidates}
    assert told.left == ["open the closet", "pick up the box"]
    assert Briefing.model_validate(told.model_dump(mode="json")) == told


def test_planner_and_critic_read_the_briefing_and_derive_nothing():
    """A walk of the planner's state: it reads the state's briefing and renders it; neither
    node imports the grounding (nothing is derived twice, no climb back up)."""
    nodes = Path(__file__).parents[1] / "robomemory" / "nodes"
    for name in ("planner.py", "critic.py"):
        tree = ast.parse((nodes / name).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m and m.startswith("robomemory.grounding")}, name
        assert "robomemory.nodes.common" in imported and "robomemory.state" in imported
    common = (nodes / "common.py").read_text()
    assert len(common.splitlines()) <= 150


def test_the_graph_builds_one_briefing_a_step(agent_config, make_agent, monkeypatch):
    built: list[int] = []
    real = ground_module.brief

    def counted(*args, **kwargs):
        out = real(*args, **kwargs)
        built.append(len(out.candidates))
        return out

    monkeypatch.setattr(ground_module, "brief", counted)

    def first_offered(messages) -> list[tuple[str, list[str]]]:
        listed = message_text(messages).split("Actions possible now:\n1. ", 1)[1]
        chosen = act(listed.split("\n", 1)[0].split(": ", 1)[0])
        return [(chosen.verb, chosen.args)]

    llm = scripted_llm(
        {
            "Plan": PlanScript(first_offered, "the list's head"),
            "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
            "StepSummary": lambda m: {"summary": "I looked."},
            "MemoryQueries": lambda m: {"queries": ["kitchen"]},
        }
    )
    agent_config.max_steps = 3
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="brief")
    # ground's one a step (the planner and the critic share it), and after each act but the
    # last the next step's foresight (whether the table takes it)
    assert result.steps == 3 == result.usage["ground"]["runs"] and len(built) == 3 + 2
    state = agent.state("brief")
    assert WorldModel.model_validate(state["world"]).path[0][0] == ""
    assert len(WorldModel.model_validate(state["world"]).path) == 4  # the start and 3 steps
    assert Briefing.model_validate(state["briefing"]).candidates
    for key in ("notes", "done_actions", "states", "path", "exits", "seen", "acts_at"):
        assert key not in state, key


def test_the_critic_rejects_an_irreversible_later_step_the_offered_list_does_not_hold():
    """A plan's later steps skip the grounding's list: an irreversible one it withholds or
    cut now is rejected without a model call (the planner plans again); a reversible one is
    the critic's to judge, and so is one the list holds."""
    from robomemory.core import Action, VerbSpec
    from robomemory.nodes.critic import withheld

    verbs = [
        VerbSpec(name="sand", arg_kinds=["object"], irreversible=True),
        VerbSpec(name="paint", arg_kinds=["object"], irreversible=True),
        VerbSpec(name="pick_up", arg_kinds=["object"], takes=True),
    ]
    told = Briefing(candidates=[Action(verb="paint", args=["leg"]), Action(verb="look")])
    assert withheld(Action(verb="sand", args=["leg"]), told, verbs)
    assert not withheld(Action(verb="paint", args=["leg"]), told, verbs)
    assert not withheld(Action(verb="pick_up", args=["leg"]), told, verbs)
    assert not withheld(Action(verb="sand", args=["leg"]), Briefing(), verbs)  # nothing grounded


def test_the_critic_rejects_a_later_step_the_table_now_places_below_its_choice():
    """Under the table a plan's later step is run only if the table still leaves it open:
    one placed lower is planned again, the model never picks what the table ranks lower."""
    from robomemory.core import Action
    from robomemory.nodes.critic import below_table

    take, go = Action(verb="pick_up", args=["vase"]), Action(verb="go", args=["north"])
    now = Briefing(
        candidates=[take, go], placed=["instructed", "searches"], choice=["pick_up(vase)"]
    )
    assert below_table(go, now) == "pick_up(vase)"
    assert below_table(take, now) is None
    assert below_table(go, Briefing(candidates=[take, go])) is None  # the word rules: no choice


def test_the_world_model_keeps_the_ways_the_world_told_and_routes_by_them():
    """Ways out told at each place and a map's links make one house: the first move of the
    fewest-hops way to a place never visited."""
    from robomemory.core import Action, ActionSpace, VerbSpec

    verbs = [VerbSpec(name="go", arg_kinds=["direction"], moves=True)]
    moves = [Action(verb="go", args=[d]) for d in ("east", "west")]
    space = ActionSpace(verbs=verbs, candidates=moves)
    world = WorldModel().observe(space, "studio", ["..."], exits={"east": "garage"})
    world = world.observe(space, "studio", ["..."], links=[("garage", "outside")])
    assert world.ways == {"studio": {"east": "garage"}}
    assert world.links == {"garage": ["outside"], "outside": ["garage"]}
    layout = world.layout()
    assert layout.first_move("outside", "studio", moves, verbs) == moves[0]  # via the garage
    assert layout.first_move("cellar", "studio", moves, verbs) is None  # never told of
