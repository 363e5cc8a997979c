"""TALES' suites (eval/tales.py): its settings as data, its restart protocol
(executors/restarting.py), the runner's record of it, and one real TextWorldExpress game.

Real: TextWorldExpress and ScienceWorld (JVMs; skipped without the worlds extra), the runner, the
react baseline. FAKE: the model (scripted answers) and, for the protocol, a two-button world.
"""

from __future__ import annotations

import importlib.util

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.core import TASK_COMPLETE, Action, Outcome
from robomemory.eval import tales
from robomemory.eval.report import build_summary, load_sealed, render_markdown
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import (
    SUITES,
    KnowsGoldPath,
    PlaysGameFile,
    ScienceWorldParams,
    Suite,
    TaskSpec,
    TwxParams,
    get_suite,
    make_executor,
)
from robomemory.executors.envs.command_world import CommandWorldExecutor, Verb, WorldReply
from robomemory.executors.restarting import RESTARTING, RestartingExecutor
from robomemory.testing import PlanScript, scripted_llm

HAS_TWX = importlib.util.find_spec("textworld_express") is not None
HAS_SW = importlib.util.find_spec("scienceworld") is not None

# A copy of TALES' TASKS, from microsoft/tale-suite@fdbdf2b, tales/textworld_express/twx_data.py
TALES_TWX_TASKS = [
    (
        "CookingWorld",
        "cookingworld",
        "numLocations=1, numIngredients=2, numDistractorItems=5, includeDoors=0, limitInventorySize=0",  # noqa: E501
    ),
    (
        "TextWorldCommonsense",
        "twc",
        "numLocations=1,numItemsToPutAway=1,includeDoors=0,limitInventorySize=0",
    ),
    (
        "CoinCollector",
        "coin",
        "numLocations=1, numDistractorItems=5, limitInventorySize=0",
    ),
    ("Arithmetic", "arithmetic", ""),
    (
        "MapReader",
        "mapreader",
        "numLocations=2, maxDistanceApart=1, maxDistractorItemsPerLocation=2, includeDoors=0, limitInventorySize=0",  # noqa: E501
    ),
    ("Sorting", "sorting", ""),
    ("SimonSays10", "simonsays", "gameLength=10, numDistractors=4, memorization=0"),
    ("SimonSays50", "simonsays", "gameLength=50, numDistractors=4, memorization=0"),
    ("SimonSays100", "simonsays", "gameLength=100, numDistractors=4, memorization=0"),
    (
        "SimonSaysWithMemory10",
        "simonsays",
        "gameLength=10, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory50",
        "simonsays",
        "gameLength=50, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory100",
        "simonsays",
        "gameLength=100, numDistractors=4, memorization=1, verbose=0",
    ),
    (
        "SimonSaysWithMemory10Verbose",
        "simonsays",
        "gameLength=10, numDistractors=4, memorization=1, verbose=1",
    ),
    (
        "SimonSaysWithMemory50Verbose",
        "simonsays",
        "gameLength=50, numDistractors=4, memorization=1, verbose=1",
    ),
    (
        "SimonSaysWithMemory100Verbose",
        "simonsays",
        "gameLength=100, numDistractors=4, memorization=1, verbose=1",
    ),
    ("PeckingOrder", "peckingorder", ""),
]


# --- the settings ---------------------------------------------------------------------------
def test_tales_twx_is_tales_tasks_at_the_test_seed_in_the_test_fold():
    assert list(tales.TWX_TASKS) == TALES_TWX_TASKS
    suite = get_suite("tales-twx")
    assert (suite.max_steps, suite.protocol, len(suite.tasks)) == (100, "tales", 16)
    for spec, (name, game, params) in zip(suite.tasks, TALES_TWX_TASKS, strict=True):
        assert spec.id == f"TWX{name}" and spec.world == "twx"
        p = TwxParams.model_validate(spec.params)
        assert (p.game, p.params, p.fold, p.seed) == (game, params, "test", tales.TWX_TEST_SEED)


def test_tales_sw_is_every_task_at_its_first_test_variation_without_simplification():
    suite = get_suite("tales-sw")
    assert (suite.max_steps, suite.protocol, len(suite.tasks)) == (100, "tales", 30)
    for spec, (task, variation) in zip(suite.tasks, tales.SW_TASKS, strict=True):
        # TALES' name: tales/scienceworld/__init__.py, f"ScienceWorld{task.title()...}"
        assert spec.id == "ScienceWorld" + task.title().replace("-", "")
        p = ScienceWorldParams.model_validate(spec.params)
        assert (p.task, p.variation, p.simplifications) == (task, variation, "")
    ids = {t.id for t in suite.tasks}
    assert {"ScienceWorldBoil", "ScienceWorldIdentifyLifeStages1"} <= ids
    assert "ScienceWorldPowerComponentRenewableVsNonrenewableEnergy" in ids


def test_both_suites_are_registered_and_the_others_keep_the_episode_protocol():
    assert {"tales-twx", "tales-sw"} <= set(SUITES)
    assert get_suite("twx-coin").protocol == "episode"


def test_published_scores_are_every_model_row_of_both_columns():
    assert len(tales.PUBLISHED) == 40
    twx, sw = dict(tales.published("tales-twx")), dict(tales.published("tales-sw"))
    assert twx["o3 (medium)"] == 91.9 and sw["o3 (medium)"] == 93.0
    assert twx["Phi-3-medium-128k-instruct"] == 0.0 and sw["Phi-3-medium-128k-instruct"] == 2.3
    with pytest.raises(ValueError, match="tales-twx or tales-sw"):
        tales.published("twx-coin")


@pytest.mark.skipif(not HAS_SW, reason="needs the worlds extra")
def test_the_sw_task_list_is_the_installed_scienceworld_s():
    from robomemory.executors.envs.scienceworld import scienceworld_task_names  # no JVM

    assert [t for t, _ in tales.SW_TASKS] == scienceworld_task_names()


@pytest.mark.skipif(not HAS_TWX, reason="needs the worlds extra")
def test_the_twx_test_seed_and_tales_params_verbatim_are_the_installed_world_s():
    from textworld_express import TextWorldExpressEnv

    env = TextWorldExpressEnv()
    try:
        assert env.getValidSeedsTest()[0] == tales.TWX_TEST_SEED
        for _, game, params in tales.TWX_TASKS:
            env.load(game, params)  # the spaces TALES writes are taken (a bad key: ValueError)
        env.load("cookingworld", tales.TWX_TASKS[0][2])
        env.reset(seed=tales.TWX_TEST_SEED, gameFold="test")
        said = env.getGenerationProperties()
        assert (said["numLocations"], said["numDistractorItems"], said["seed"]) == (1, 5, 20000)
    finally:
        env.close()


@pytest.mark.skipif(not HAS_TWX, reason="needs the worlds extra")
def test_every_command_each_tales_twx_game_lists_at_its_start_is_one_of_our_actions():
    from textworld_express import TextWorldExpressEnv

    from robomemory.executors.envs.twx import TextWorldExpressExecutor

    env = TextWorldExpressEnv()
    try:
        for spec in get_suite("tales-twx").tasks:
            p = TwxParams.model_validate(spec.params)
            world = TextWorldExpressExecutor(p.game, p.seed, p.params, fold=p.fold, env=env)
            world.reset()
            listed = world._valid_commands()
            assert listed, spec.id
            actions = [world.command_to_action(c) for c in listed]
            unmapped = [c for c in listed if world.command_to_action(c) is None]
            assert not unmapped, (spec.id, unmapped)
            assert all(world._validate(a) is None for a in actions), spec.id
    finally:
        env.close()


@pytest.mark.skipif(not HAS_SW, reason="needs the worlds extra")
def test_each_sw_variation_is_the_first_test_variation_of_the_installed_world():
    from scienceworld import ScienceWorldEnv

    env = ScienceWorldEnv("")
    try:
        for task, variation in tales.SW_TASKS:
            env.load(task, 0, "")
            assert env.get_variations_test()[0] == variation, task
    finally:
        env.close()


# --- the protocol, on a FAKE world ------------------------------------------------------------
class Buttons(CommandWorldExecutor):
    """A FAKE world: each green button scores 50 (two win), red loses at once (-100), blue wins
    short of the max; its oracle path is 80 presses long (its limit would be 160 under the
    episode protocol)."""

    max_score = 100.0
    verbs = (
        Verb("press", ("object",), "press {0}"),
        Verb("look", (), "look around", reads=True),
        Verb(TASK_COMPLETE, (), ""),
    )
    task_text = "Press two green buttons."
    first_text = "You see a red, a blue and three green buttons."
    greens = ("green1", "green2", "green3")

    def _start(self) -> tuple[str, WorldReply]:
        self.points = 0.0
        return self.task_text, WorldReply(text=self.first_text, score=0.0, done=False)

    def _send(self, command: str) -> WorldReply:
        if command == "press red":
            return WorldReply(text="Boom. You lose.", score=-100.0, done=True, lost=True)
        if command == "press blue":
            return WorldReply(text="You win, sort of.", score=60.0, done=True, won=True)
        if command.removeprefix("press ") in self.greens:
            self.points += 50
        won = self.points >= self.max_score
        return WorldReply(text="Click.", score=self.points, done=won, won=won)

    def _visible(self) -> dict[str, list[str]]:
        return {"object": ["red", "blue", *self.greens]}

    def _refused(self, text: str) -> bool:
        return False

    def _valid_commands(self) -> list[str]:
        return ["press red", "press blue", *(f"press {g}" for g in self.greens), "look around"]

    def gold_actions(self) -> list[str]:
        return ["press green1"] * 80


def press(colour: str) -> Action:
    return Action(verb="press", args=[colour])


def test_a_lost_game_restarts_with_the_history_text_and_the_steps_go_on():
    world = RestartingExecutor(Buttons())
    world.reset()
    world.execute(press("green1"))
    result = world.execute(press("red"))
    obs = result.observation
    expected = f"Boom. You lose.\n\n{RESTARTING}\n{Buttons.task_text}\n\n{Buttons.first_text}"
    assert obs.text == expected and result.message == expected
    assert not obs.done and obs.score == 0.0  # the new game's start
    assert world.restarts == 1 and world.best_score == 50.0  # the -100 never counts
    assert result.details["restarted"] and result.details["ended_score"] == -100.0
    world.execute(press("green2"))
    assert world.best_score == 50.0 and not world.reached_max


def test_a_win_at_the_max_ends_the_run_and_a_win_short_of_it_restarts():
    world = RestartingExecutor(Buttons())
    world.reset()
    assert world.execute(press("blue")).observation.text.startswith(
        f"You win, sort of.\n\n{RESTARTING}"
    )
    assert (world.restarts, world.best_score) == (1, 60.0)
    world.execute(press("green1"))
    last = world.execute(press("green2")).observation
    assert last.done and last.won and world.reached_max and world.restarts == 1
    assert world.best_score == 100.0


def test_task_complete_is_neither_offered_nor_accepted():
    inner = Buttons()
    world = RestartingExecutor(inner)
    world.reset()
    space = world.action_space()
    assert TASK_COMPLETE not in [v.name for v in space.verbs]
    assert TASK_COMPLETE not in [a.verb for a in space.candidates]
    assert press("green1") in space.candidates
    assert TASK_COMPLETE in [v.name for v in inner.action_space().verbs]  # the world's own has it
    result = world.execute(Action(verb=TASK_COMPLETE))
    assert result.outcome == Outcome.REJECTED and "not offered" in result.message


def test_a_replay_restarts_as_the_run_did_and_the_world_s_protocols_show_through():
    world = RestartingExecutor(Buttons())
    world.reset()
    results = world.replay([press("green1"), press("red"), press("green2")])
    assert RESTARTING in results[1].observation.text
    assert (world.restarts, world.best_score) == (1, 50.0)
    world.reset()
    assert (world.restarts, world.best_score) == (0, 0.0)
    assert isinstance(world, KnowsGoldPath) and len(world.gold_actions()) == 80
    assert not isinstance(world, PlaysGameFile)
    inner = Buttons()
    inner.game_path = "game.z8"  # a world played from a game file
    assert isinstance(RestartingExecutor(inner), PlaysGameFile)


def test_tales_normalized_score_is_whole_points_for_twx_and_never_below_zero():
    assert tales.tales_gc("twx", 0.14285714285714285, 1.0) == 0.14  # int(score * 100)
    assert tales.tales_gc("twx", 1.0, 1.0) == 1.0
    assert tales.tales_gc("scienceworld", 50.0, 100.0) == 0.5
    assert tales.tales_gc("scienceworld", -100.0, 100.0) == 0.0


def react_runner(suite: Suite, out, script, factory=make_executor) -> SuiteRunner:
    """The runner with the react baseline on a FAKE model that plays ``script()``'s action."""
    llm = scripted_llm({"BaselineTurn": PlanScript(lambda m: [script()], "scripted")})
    cfg = AgentConfig()
    cfg.model.provider = "fake"
    cfg.max_candidates = None  # every action the world offers
    cfg.table_decides = False  # react is asked every step, so it plays the script
    return SuiteRunner(
        suite,
        out,
        config=cfg,
        llm=llm,
        embedder=DeterministicFakeEmbedding(size=32),
        executor_factory=factory,
        show_progress=False,
    )


def scripted(actions: list[Action]):
    """The FAKE model's answers: ``actions`` in turn."""
    turn = iter(actions)

    def next_action() -> tuple[str, list[str]]:
        action = next(turn)
        return action.verb, action.args

    return next_action


@pytest.mark.parametrize("protocol", ["tales", "episode"])
def test_the_runner_records_the_best_score_and_restarts_and_tales_keeps_its_steps(
    protocol, tmp_path
):
    spec = TaskSpec(world="scienceworld", id="buttons", params={"task": "press"})
    suite = Suite(name="fake", tasks=[spec], max_steps=100, protocol=protocol)
    plays = [press("green1"), press("red"), press("green2"), press("green3")]
    runner = react_runner(suite, tmp_path, scripted(plays), factory=lambda s: Buttons())
    (record,) = runner.run(["react"], attempts=1)
    assert record.error is None, record.error
    assert record.oracle_steps == 80
    if protocol == "episode":  # the world's done ends it; the limit is twice the oracle
        assert (record.max_steps, record.steps, record.end_reason) == (160, 2, "lost")
        assert (record.protocol, record.restarts) == ("episode", 0)
        return
    assert record.max_steps == 100  # exactly the suite's, whatever the oracle
    assert (record.steps, record.end_reason, record.restarts) == (4, "won", 1)
    assert (record.score, record.gc, record.success, record.protocol) == (100.0, 1.0, True, "tales")
    assert RESTARTING in record.trajectory[1]["message"]


# --- one real TALES game ----------------------------------------------------------------------
@pytest.mark.skipif(not HAS_TWX, reason="needs the worlds extra")
def test_a_tales_cookingworld_run_loses_restarts_and_keeps_its_best_for_its_100_steps(tmp_path):
    suite = get_suite("tales-twx")
    spec = suite.tasks[0]
    assert spec.id == "TWXCookingWorld"
    worlds: list = []
    played: list[str] = []

    def factory(s: TaskSpec):
        worlds.append(make_executor(s))
        return worlds[-1]

    def next_action() -> tuple[str, list[str]]:
        world = worlds[-1]
        # eating an ingredient the recipe needs fails the game (TextWorldExpress's taskfailure);
        # then the oracle's first ten commands (4 of its 7 points), then the inventory
        lose = ["open fridge", "take block of cheese", "eat block of cheese"]
        commands = [*lose, *world.gold_actions()[:10]]
        command = commands[len(played)] if len(played) < len(commands) else "inventory"
        played.append(command)
        action = world.command_to_action(command)
        return action.verb, action.args

    runner = react_runner(
        suite.model_copy(update={"tasks": [spec]}), tmp_path, next_action, factory
    )
    (kept,) = runner.run(["react"], attempts=1)
    assert kept.trajectory == []  # TALES' suites are test splits: their traces are sealed
    (record,) = load_sealed(tmp_path)
    assert record.error is None, record.error
    assert (record.max_steps, record.protocol, record.restarts) == (100, "tales", 1)
    assert (record.steps, record.end_reason, record.success) == (100, "max_steps", False)
    assert [t["action"] for t in record.trajectory[:4]] == [
        "open(fridge)",
        "pick_up(block of cheese)",
        "eat(block of cheese)",
        "look()",
    ]
    assert record.trajectory[2]["message"].startswith(
        f"You eat the block of cheese.  It is delicious.\n\n{RESTARTING}\nYou are hungry!"
    )
    assert record.score == pytest.approx(4 / 7)  # the best of the run, not the last game's
    assert record.gc == 0.57  # TALES' whole points: int(57.14...)
    summary = build_summary([record])
    assert summary["tales"]["table"][0]["tales_score"] == pytest.approx(57.0)
    assert summary["tales"]["tasks"][0]["restarts"] == 1
    assert "## TALES" in render_markdown(summary)
