"""Free mode (``--actions free``): executors that read only what a player sees.

Real: TextWorldExpress and ScienceWorld (JVMs; skipped without the worlds extra), the graph,
the runner, Qdrant local mode, SQLite checkpoints. FAKE: the model (the project's model-free
first-candidate agent), the embedder (a deterministic hash), and for the first tests a guard
around the real world that fails on any read of what the world hides.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.core import TASK_COMPLETE, Action, Outcome
from robomemory.eval.bench import table
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import Suite, TaskSpec, get_suite
from robomemory.executors.envs import scienceworld_perceived as swp
from robomemory.executors.envs import twx_perceived as twxp
from robomemory.executors.perceived import Belief, free_candidates

HAS_TWX = importlib.util.find_spec("textworld_express") is not None
HAS_SW = importlib.util.find_spec("scienceworld") is not None
needs_twx = pytest.mark.skipif(not HAS_TWX, reason="textworld_express not installed")
needs_sw = pytest.mark.skipif(not HAS_SW, reason="scienceworld not installed")

COIN = "numLocations=3, numDistractorItems=5, limitInventorySize=0"
KITCHEN = (
    "You are in the kitchen. In one part of the room you see a stove. You also see a fridge "
    "that is closed. In another part of the room you see a counter that has a knife, a red "
    "apple, and a cookbook on it. \nTo the South you see a closed screen door. To the West you "
    "see the corridor. "
)


class Hidden(AssertionError):
    """A free executor read what the world hides."""


class GuardedInfo(dict):
    """A step's ``info`` whose hidden keys fail when read."""

    def __init__(self, info: dict, hidden: frozenset[str]):
        super().__init__(info)
        self.hidden = hidden

    def __getitem__(self, key: str) -> Any:
        if key in self.hidden:
            raise Hidden(f"read info[{key!r}]")
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.hidden:
            raise Hidden(f"read info.get({key!r})")
        return super().get(key, default)


class GuardedWorld:
    """The real world behind a guard: only ``allowed`` methods, no gold path asked, and each
    step's ``info`` guarded (``hidden`` keys)."""

    def __init__(self, env: Any, allowed: set[str], hidden: frozenset[str]):
        self._env, self._allowed, self._hidden = env, allowed, hidden

    def __getattr__(self, name: str) -> Any:
        if name not in self._allowed:
            raise Hidden(f"called {name}")
        method = getattr(self._env, name)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("generateGoldPath") or (name == "load" and len(args) > 3 and args[3]):
                raise Hidden(f"{name} asked for the gold path")
            out = method(*args, **kwargs)
            if isinstance(out, tuple) and isinstance(out[-1], dict):
                out = (*out[:-1], GuardedInfo(out[-1], self._hidden))
            return out

        return guarded


def _play(ex, commands: list[str], free_steps: int) -> list:
    """Reset, run ``commands``, then the first candidate that is not task_complete a few
    times; every step's action space is built (the candidates read the belief only)."""
    ex.reset()
    results = []
    for command in commands:
        ex.action_space()
        results.append(ex.execute(ex.command_to_action(command)))
    for _ in range(free_steps):
        first = next(a for a in ex.action_space().candidates if a.verb != TASK_COMPLETE)
        results.append(ex.execute(first))
    return results


@needs_twx
def test_a_free_twx_executor_reads_nothing_the_world_hides():
    from textworld_express import TextWorldExpressEnv

    from robomemory.executors.envs.twx import TextWorldExpressExecutor

    env = TextWorldExpressEnv(envStepLimit=100)
    try:
        guard = GuardedWorld(
            env, {"reset", "step"}, frozenset({"validActions", "look", "inventory"})
        )
        ex = TextWorldExpressExecutor("cookingworld", 0, env=guard, actions="free")
        steps = ["take cookbook", "read cookbook", "inventory", "open fridge", "look around"]
        results = _play(ex, steps, free_steps=4)
        assert all(r.outcome != Outcome.REJECTED for r in results)
        took, _, inventory, opened, _ = results[:5]
        assert took.observation.holding == ["cookbook"] and not took.observation.holding_known
        assert inventory.observation.holding_known  # grounded by the inventory text it asked
        assert "block of cheese" in opened.message
        assert ex.belief.place == "kitchen" and "block of cheese" in ex.belief.things_here()
        assert results[-1].observation.world == ex.belief.digest()  # the belief's, no world's
        with pytest.raises(RuntimeError):
            ex.gold_actions()
    finally:
        env.close()


@needs_sw
def test_a_free_scienceworld_executor_reads_nothing_the_world_hides():
    from scienceworld import ScienceWorldEnv

    from robomemory.executors.envs.scienceworld import ScienceWorldExecutor

    env = ScienceWorldEnv("", envStepLimit=100)
    try:
        allowed = {"load", "reset", "step", "get_task_description", "get_max_variations"}
        guard = GuardedWorld(env, allowed, frozenset({"look", "inv", "valid"}))
        ex = ScienceWorldExecutor("boil", 0, simplifications="", env=guard, actions="free")
        steps = ["open door to kitchen", "go to kitchen", "look around", "pick up thermometer"]
        results = _play(ex, [*steps, "inventory"], free_steps=4)
        assert [r.outcome for r in results[:5]] == [Outcome.SUCCEEDED] * 5
        assert results[1].observation.place == "kitchen"
        assert "thermometer" in results[3].observation.holding
        assert results[4].observation.holding_known
        assert "stove" in ex.belief.names and "kitchen" in ex.belief.places
        with pytest.raises(RuntimeError):
            ex.gold_actions()
    finally:
        env.close()


@needs_twx
@pytest.mark.parametrize(("game", "seed", "params"), [("coin", 0, COIN), ("twc", 3, None)])
def test_free_candidates_hold_each_command_of_the_gold_path(game, seed, params):
    """The gold path (read from a listed executor) is among the free candidates at each step."""
    from robomemory.executors.envs.twx import TextWorldExpressExecutor

    listed = TextWorldExpressExecutor(game, seed, params)
    free = TextWorldExpressExecutor(game, seed, params, actions="free")
    try:
        listed.reset()
        gold = listed.gold_actions()
        free.reset()
        for command in gold:
            action = free.command_to_action(command)
            offered = [str(a) for a in free.action_space().candidates]
            assert str(action) in offered, (command, offered)
            assert len(offered) <= 60 and offered[-1] == "task_complete()"
            result = free.execute(action)
            assert result.ok, (command, result.message)
        assert result.observation.won
    finally:
        listed.close()
        free.close()


@needs_twx
def test_the_first_agent_plays_a_free_tales_coin_game_to_its_end(tmp_path):
    spec = TaskSpec(world="twx", id="twx-coin-free", params={"game": "coin", "seed": 0})
    spec.params["params"] = COIN
    suite = Suite(name="free-coin", tasks=[spec], max_steps=20, protocol="tales", actions="free")
    runner = SuiteRunner(
        suite,
        tmp_path,
        config=AgentConfig(),
        embedder=DeterministicFakeEmbedding(size=32),
        show_progress=False,
    )
    [record] = runner.run(["first"], attempts=1)
    assert record.error is None and record.actions == "free" and record.protocol == "tales"
    assert record.oracle_steps is None  # no gold path was asked
    assert 0 < record.steps <= 20 and (record.success or record.steps == 20)


def test_the_twx_parser_reads_a_room_its_ways_and_an_inventory():
    seen = twxp.perceive(KITCHEN)
    assert seen.place == "kitchen"
    assert seen.things == ("stove", "fridge", "counter", "knife", "red apple", "cookbook")
    assert seen.closed == ("fridge",) and "counter" in seen.fixtures
    assert seen.exits == (("west", "corridor"),) and seen.doors == (("south", "door to south"),)
    assert twxp.perceive("Inventory: \n  a cookbook\n  18 avocados\n").held == (
        "cookbook",
        "18 avocados",
    )
    assert twxp.perceive("You open the fridge. The fridge contains a block of cheese.").things
    assert twxp.perceive("You open the plain door, revealing the pantry. ").revealed == "pantry"


def test_the_scienceworld_parser_reads_a_room_its_doors_and_what_things_hold():
    room = (
        "This room is called the kitchen. In it, you see: \n\tthe agent\n\ta substance called "
        "air\n\ta counter. On the counter is: a bowl (containing a red apple, a banana), a "
        "drawer.\n\ta fridge. The fridge door is closed. \n\ta substance called soap\nYou also "
        "see:\n\tA door to the hallway (that is open)\n\tA door to the outside (that is closed)"
    )
    seen = swp.perceive(room)
    assert seen.place == "kitchen"
    assert seen.things == ("counter", "bowl", "red apple", "banana", "drawer", "fridge", "soap")
    assert seen.closed == ("fridge",) and {"counter", "fridge"} <= set(seen.fixtures)
    assert seen.exits == (("hallway", "hallway"),)
    assert seen.doors == (("outside", "door to outside"),)
    assert swp.perceive("In your inventory, you see:\n\tan orange").held == ("orange",)


def test_the_belief_offers_what_each_argument_needs():
    belief = Belief()
    belief.see(twxp.perceive(KITCHEN))
    belief.acted("pick_up", ["knife"], twxp.perceive("You take the knife."), moves=False)
    verbs = [
        ("pick_up", ("here",)),
        ("put_down_to", ("held", "support")),
        ("go", ("exit",)),
        ("open", ("closed",)),
        (TASK_COMPLETE, ()),
    ]
    offered = [str(a) for a in free_candidates(belief, verbs, "Find the red apple.")]
    assert offered[0] == "pick_up(red apple)"  # the task names it
    assert "pick_up(knife)" not in offered and "put_down_to(knife, counter)" in offered
    assert "go(west)" in offered and "go(south)" not in offered
    assert {"open(fridge)", "open(door to south)"} <= set(offered)
    assert offered[-1] == "task_complete()"
    assert Action(verb="drop", args=["knife"]) not in free_candidates(belief, verbs, "")


def test_a_table_runs_a_suite_in_both_modes_and_says_each_row_s(tmp_path):
    suites = table.table_suites([("tales-twx", None)], 2, table.parse_actions("listed,free"))
    assert [(s.folder, s.actions) for s in suites] == [
        ("tales-twx", "listed"),
        ("tales-twx-free", "free"),
    ]
    manifest = table.TableManifest(
        commit="a" * 40, started="now", suites=suites, agents=["first"], model="fake"
    )
    table.open_manifest(tmp_path, manifest)
    text = table.render_table(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("|")[3].strip() for r in rows] == ["listed", "free"]
    assert "(ours, free actions)" in text and "(ours, listed actions)" in text
    with pytest.raises(ValueError):
        table.parse_actions("both")
    with pytest.raises(ValueError):
        get_suite("tiny").with_actions("free")  # free mode has no TextWorld executor
