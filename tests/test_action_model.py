"""The action model learned where a world declares no effects: pure lifting and merging, the
verbs given what was learned (never over what is declared), and end to end with real stores
and a FAKE model: an effect seen once in one task is recalled by the next task in a world of
the same kind, and not in a world of another."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.action_model import (
    ObservedEffect,
    kinds_of,
    merge,
    observe,
    perceived_atoms,
    with_learned,
    world_kind,
)
from robomemory.config import MemoryConfig
from robomemory.core import (
    Action,
    ActionResult,
    ActionSpace,
    Observation,
    Outcome,
    VerbSpec,
)
from robomemory.effects import parse_atom
from robomemory.grounding import WorldModel
from robomemory.grounding.meanings import meanings
from robomemory.memory.learned_effects import LEVEL, recall_effects, store_effects
from robomemory.memory.system import MemorySystem
from robomemory.nodes.common import learned_space
from robomemory.testing import plan_of, scripted_llm


def atoms(*texts: str) -> tuple:
    return tuple(parse_atom(t) for t in texts)


def strs(xs) -> list[str]:
    return [str(x) for x in xs]


def seen(states: dict[str, str], place: str | None, held: list[str] | None = None):
    return perceived_atoms(WorldModel(states=states), place, held)


# ---- pure: perception, lifting, merging -------------------------------------------------------


def test_what_the_robot_perceives_is_its_place_its_hands_and_the_states_words_gave():
    world = WorldModel(states={"box": "opened", "door": "locked", "bread": "sliced roasted"})
    got = perceived_atoms(world, "hall", ["key"])
    assert set(strs(got)) == {
        "at(robot, hall)",
        "held(key)",
        "open(box)",
        "locked(door)",
        "state(bread, sliced)",
        "state(bread, roasted)",
    }
    assert not any(a.rel == "held" for a in perceived_atoms(world, None, None))  # unknown hands


def test_an_act_s_effect_is_lifted_over_its_arguments():
    before = seen({"box": "closed", "lamp": "plain"}, "hall", [])
    after = seen({"box": "opened", "lamp": "painted", "fridge": "opened"}, "hall", [])
    eff = observe("open", ["box"], before, after, kind="receptacle", rose=True, task="t")
    assert strs(eff.adds) == ["open($0)", "state(?lamp, painted)"]  # a thing known before
    assert strs(eff.removes) == ["closed($0)", "state(?lamp, plain)"]
    # the fridge was first seen after the act: newly seen, not changed by it
    assert not any("fridge" in str(a) for a in eff.adds)
    assert (eff.verb, eff.kind) == ("open", "receptacle")
    assert (eff.evidence.count, eff.evidence.rose) == (1, 1)
    assert eff.evidence.tasks == ("t",) and eff.evidence.acts == ("open(box)",)


def test_a_move_leaves_here_for_there_and_a_take_holds_its_argument():
    go = observe("go", ["north"], seen({}, "hall", []), seen({}, "kitchen", []))
    assert strs(go.adds) == ["at(robot, ?there)"] and strs(go.removes) == ["at(robot, here)"]
    nav = observe("navigate_to", ["kitchen"], seen({}, "hall"), seen({}, "kitchen"))
    assert strs(nav.adds) == ["at(robot, $0)"]
    take = observe("pick_up", ["red apple"], seen({}, "hall", []), seen({}, "hall", ["red apple"]))
    assert strs(take.adds) == ["held($0)"] and take.removes == ()


def test_merging_keeps_what_half_the_observations_showed_and_counts_them():
    a = observe("cook", ["egg"], seen({"egg": "raw"}, "k", []), seen({"egg": "fried"}, "k", []))
    b = observe("cook", ["ham"], seen({"ham": "raw"}, "k", []), seen({"ham": "fried"}, "k", []))
    c = observe("cook", ["yam"], seen({}, "k", []), seen({}, "k", ["ash"]), rose=True)
    (cook,) = merge([a, b, c])
    assert cook.evidence.count == 3 and cook.evidence.rose == 1
    assert strs(cook.adds) == ["state($0, fried)"] and strs(cook.removes) == ["state($0, raw)"]
    assert cook.evidence.tally["+held(?ash)"] == 1  # tallied, but in fewer than half: dropped
    assert cook.evidence.acts == ("cook(egg)", "cook(ham)", "cook(yam)")
    assert ObservedEffect.from_json(cook.to_json()) == cook
    # other things the observations named differently are one ?other thing
    d = observe("cook", ["egg"], seen({}, "k", []), seen({}, "k", ["soup"]))
    (both,) = merge([c, d])
    assert strs(both.adds) == ["held(?other)"]
    # each verb and kind of thing apart
    go = observe("go", [], seen({}, "x"), seen({}, "y"))
    assert len(merge([a, a._replace(kind="food"), go])) == 3


def test_the_kind_of_a_thing_is_the_narrowest_kind_that_lists_it():
    space = ActionSpace(
        verbs=[],
        targets={"object": ["apple", "fridge", "stove"], "receptacle": ["fridge"], "place": []},
    )
    assert kinds_of(space) == {"apple": "object", "fridge": "receptacle", "stove": "object"}


# ---- pure: the verbs given what was learned ---------------------------------------------------

LEARNED = [
    observe("open", ["box"], seen({"box": "closed"}, "h", []), seen({"box": "opened"}, "h", [])),
    observe("pick_up", ["cup"], seen({}, "h", []), seen({}, "h", ["cup"])),
    observe("look", [], seen({"box": "closed"}, "h"), seen({"box": "opened"}, "h")),
]


def test_learned_effects_fill_only_verbs_that_declare_none():
    declared = VerbSpec(name="pick_up", arg_kinds=["object"], adds=["held($0)", "state($0, up)"])
    verbs = [
        VerbSpec(name="open", arg_kinds=["object"]),
        VerbSpec(name="close", arg_kinds=["object"], reverses="open"),
        declared,
        VerbSpec(name="look", reads=True),
        VerbSpec(name="wave", arg_kinds=["object"]),
    ]
    out = {v.name: v for v in with_learned(verbs, LEARNED)}
    assert out["open"].adds == ["open($0)"] and out["open"].removes == ["closed($0)"]
    assert out["open"].needs == ["closed($0)"]  # what an act removes was true before it
    assert out["pick_up"] == declared  # declared effects always win
    assert out["look"] == verbs[3]  # a verb declared to only read stays so
    assert out["wave"] == verbs[4]  # nothing learned, nothing given
    # close, declared to undo open and never seen, undoes what open was seen to do
    assert out["close"].adds == ["closed($0)"] and out["close"].removes == ["open($0)"]
    m = meanings(list(out.values()))
    assert "open" in m.reveals and m.reverses["close"] == "open" and "open" not in m.irreversible
    assert with_learned(verbs, []) == verbs


def test_a_learned_effect_never_changes_what_the_world_declares_a_verb_means():
    cook = observe("cook", ["egg"], seen({"egg": "raw"}, "k"), seen({"egg": "fried"}, "k"))
    take = LEARNED[1]
    verbs = [
        VerbSpec(name="cook", arg_kinds=["object"]),  # nothing undoes it: not declared so
        VerbSpec(name="fry", arg_kinds=["object"], irreversible=True),
        VerbSpec(name="pick_up", arg_kinds=["object"], takes=True),
        VerbSpec(name="put", arg_kinds=["object"], reverses="pick_up"),
    ]
    fry = cook._replace(verb="fry")
    out = {v.name: v for v in with_learned(verbs, [cook, fry, take])}
    assert out["cook"] == verbs[0]  # it would be judged irreversible, and withheld
    assert out["fry"].adds == ["state($0, fried)"]  # declared irreversible: it agrees
    # what a put restores is not perceived: put would no longer undo pick_up
    assert out["pick_up"] == verbs[2] and out["put"] == verbs[3]


def test_the_kind_of_a_world_is_the_api_it_speaks():
    a = [VerbSpec(name="paint", arg_kinds=["object"]), VerbSpec(name="look", reads=True)]
    same = [VerbSpec(name="look", description="look around"), a[0]]
    other = [*a, VerbSpec(name="polish", arg_kinds=["object"])]
    assert world_kind(a) == world_kind(same) != world_kind(other)


# ---- semantic memory: one item per (world kind, verb, kind), merged once per episode ----------


def test_effects_are_semantic_items_with_their_evidence_merged_once_per_episode(tmp_path):
    cfg = MemoryConfig(data_dir=tmp_path)
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=16), "bot") as memory:
        semantic = memory.semantic
        space = ActionSpace(verbs=[VerbSpec(name="open", arg_kinds=["object"])])
        assert store_effects(semantic, "w1", LEARNED[:1], task="open it", episode_id="e1") == 1
        assert store_effects(semantic, "w1", LEARNED[:1], task="open it", episode_id="e1") == 0
        assert store_effects(semantic, "w1", LEARNED[:1], task="again", episode_id="e2") == 1
        ((_, text, meta),) = [r for r in semantic.store.all() if r[2]["level"] == LEVEL]
        assert text.startswith("In worlds w1, open(thing): adds open($0); removes closed($0)")
        assert meta["adds"] == ["open($0)"] and meta["count"] == 2
        assert meta["task"] == "again" and meta["episodes"] == ["e1", "e2"]
        (back,) = recall_effects(semantic, "w1", space)
        assert back.evidence.count == 2 and strs(back.adds) == ["open($0)"]
        assert recall_effects(semantic, "w2", space) == []
        events = [c["event"] for c in memory.history.changes(semantic.collection)]
        assert events == ["ADD", "UPDATE"]
        # MemRL retrieval never returns them (its levels are action, verdict and task)
        assert semantic.retrieve(["open the box"], "open it") == []


# ---- end to end: the graph, real stores, a FAKE model ------------------------------------------


class PaintWorld:
    """A FAKE one-room world whose verbs declare no effects: painting the box wins."""

    def __init__(self, extra: tuple[VerbSpec, ...] = ()):
        self.verbs = [
            VerbSpec(name="paint", arg_kinds=["object"], irreversible=True),
            VerbSpec(name="look", reads=True),
            VerbSpec(name="task_complete"),
            *extra,
        ]
        self.painted = False

    def reset(self) -> tuple[str, Observation]:
        self.painted = False
        return "Paint the box.", self._seen("A hall. A plain box stands here.")

    def _seen(self, text: str, score: float = 0.0, won: bool = False) -> Observation:
        return Observation(
            text=text,
            place="hall",
            names=["box"],
            holding_known=True,
            score=score,
            max_score=1.0,
            done=won,
            won=won,
        )

    def action_space(self) -> ActionSpace:
        return ActionSpace(
            verbs=self.verbs,
            targets={"object": ["box"]},
            candidates=[Action(verb="paint", args=["box"]), Action(verb="look")],
            fallback=Action(verb="look"),
        )

    def execute(self, action: Action, timeout_s=None, cancel=None) -> ActionResult:
        if action.verb == "paint":
            self.painted = True
            text = "You paint the box. A painted box stands here."
            return ActionResult(
                action=action,
                outcome=Outcome.SUCCEEDED,
                message=text,
                observation=self._seen(text, 1.0, won=True),
            )
        text = "A hall. A painted box stands here." if self.painted else "A hall. A plain box."
        return ActionResult(action=action, outcome=Outcome.SUCCEEDED, observation=self._seen(text))

    def emergency_stop(self) -> None:
        pass

    def close(self) -> None:
        pass


def play(make_agent, agent_config, world: PaintWorld, thread: str) -> dict:
    llm = scripted_llm({"Plan": plan_of(("paint", ["box"]))})
    agent = make_agent(agent_config, world, llm)
    result = agent.run(thread_id=thread)
    assert result.success and result.steps == 1
    state = agent.state(thread)
    agent.context.memory.close()
    return state


def test_an_effect_seen_once_is_recalled_in_a_new_task_of_the_same_world_kind(
    agent_config, make_agent
):
    first = play(make_agent, agent_config, PaintWorld(), "task-1")
    assert first["learned_effects"]["effects"] == []  # an empty memory knew nothing
    (seen_once,) = [ObservedEffect.from_json(e) for e in first["observed_effects"]]
    assert strs(seen_once.adds) == ["state($0, painted)"]
    assert seen_once.evidence.rose == 1
    assert first["consolidation"]["effects"] == 1

    world = PaintWorld()
    second = play(make_agent, agent_config, world, "task-2")
    (recalled,) = [ObservedEffect.from_json(e) for e in second["learned_effects"]["effects"]]
    assert (recalled.verb, recalled.kind, strs(recalled.adds)) == (
        "paint",
        "object",
        ["state($0, painted)"],
    )
    assert recalled.evidence.tasks == ("Paint the box.",)
    assert world.action_space().verb("paint").adds == []  # the world declares none
    paint = learned_space(world.action_space(), second).verb("paint")
    assert paint.adds == ["state($0, painted)"]  # the grounding's verb has them now

    polish = VerbSpec(name="polish", arg_kinds=["object"])
    other = play(make_agent, agent_config, PaintWorld(extra=(polish,)), "task-3")
    assert other["learned_effects"]["effects"] == []  # another kind of world: not recalled
    assert other["learned_effects"]["world"] != second["learned_effects"]["world"]
