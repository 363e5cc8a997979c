"""`robomemory bench suite` on tasks of any world: picked on the command line (--sw, --twx, --tw,
--games) or listed in a suite file, the new named suites' definitions, and one-line errors.

Real: the CLI's parsing, ScienceWorld and TextWorldExpress (JVMs), TextWorld games, tw-make,
the graph and its stores. FAKE: the model (ScriptedChatModel: look, then task_complete) and the
embedder (a deterministic hash), so each episode is two steps.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.cli import main as cli
from robomemory.eval import runner as runner_module
from robomemory.eval.bench import suite as suite_module
from robomemory.eval.picks import (
    check_worlds,
    load_suite_file,
    numbers,
    picked_suite,
    split_pick,
)
from robomemory.eval.suites import (
    SUITES,
    TaskSpec,
    game_id,
    get_suite,
    textworld_game,
    tw_make_game,
)
from robomemory.testing import PlanScript, scripted_llm

WORLDS = importlib.util.find_spec("scienceworld") and importlib.util.find_spec("textworld_express")
needs_worlds = pytest.mark.skipif(not WORLDS, reason="needs the worlds extra")
GAMES = Path(__file__).resolve().parents[1] / "robomemory" / "data" / "games"
NEW_SUITES = ("tw-treasure", "tw-coin", "tw-simple", "twx-mapreader", "twx-coin", "sw-tasks")


class LookThenStop(PlanScript):
    """A FAKE planner: look() (where the world offers no look, the first action it offers), then
    task_complete()."""

    def __init__(self):
        super().__init__(lambda m: [("look", []), ("task_complete", [])], "look, then stop")

    def answer(self, schema, messages):
        plan = super().answer(schema, messages)
        offered = schema.model_json_schema()["properties"].get("next", {}).get("enum") or []
        if offered and plan["next"] not in offered:
            plan["next"] = offered[0]
        return plan


@pytest.fixture
def fake_model(monkeypatch, tmp_path):
    """The bench's model and embedder are FAKES: every plan is look(), then task_complete().
    The planner is asked every step (the effects table deciding none) and offered every action
    possible now (uncut), as the fake scripts."""
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "home"))
    config_from_args = suite_module.config_from_args

    def asked_every_step(args):
        cfg = config_from_args(args)
        cfg.table_decides, cfg.max_candidates = False, None
        return cfg

    monkeypatch.setattr(suite_module, "config_from_args", asked_every_step)
    turns = {"n": 0}

    def one_action(_messages):
        turns["n"] += 1
        return [("look", []) if turns["n"] % 2 else ("task_complete", [])]

    llm = scripted_llm(
        {
            "Plan": LookThenStop(),
            "BaselineTurn": PlanScript(one_action, "next"),
            "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
            "StepSummary": lambda m: {"summary": "I looked around."},
            "MemoryQueries": lambda m: {"queries": ["where am I"]},
        }
    )
    monkeypatch.setattr(runner_module, "make_llm", lambda cfg: llm)
    monkeypatch.setattr(
        runner_module, "make_embedder", lambda cfg: DeterministicFakeEmbedding(size=32)
    )
    return llm


def bench(out: Path, *args: str) -> int:
    return cli(["bench", "suite", *args, "--model", "openai", "--out", str(out), "--no-progress"])


def records(out: Path) -> dict[str, dict]:
    found = [json.loads(p.read_text()) for p in sorted((out / "episodes").glob("*.json"))]
    return {f"{r['agent']}:{r['task_id']}": r for r in found}


@needs_worlds
def test_a_scienceworld_variation_and_a_twx_seed_run_end_to_end(fake_model, tmp_path):
    out = tmp_path / "out"
    rc = bench(
        out,
        *("--sw", "power-component:1", "--sw-simplifications", "easy"),
        *("--twx", "coin:13", "--twx-fold", "dev", "--twx-params", "numLocations=5,includeDoors=1"),
        *("--agent", "robomemory", "--attempts", "1", "--max-steps", "2"),
    )
    assert rc == 0
    got = records(out)
    assert set(got) == {"robomemory:sw-power-component-v1-easy", "robomemory:twx-coin-s13-dev"}
    for key, r in got.items():
        assert r["error"] is None, (key, r["error"])
        assert r["suite"] == "picked" and r["steps"] == 2 and r["end_reason"] == "task_complete"
        assert [t["verb"] for t in r["trajectory"]] == ["look", "task_complete"], key
        assert r["max_steps"] >= 2 * r["oracle_steps"] > 0  # --max-steps is a floor
    assert "turn on the red light bulb" in got["robomemory:sw-power-component-v1-easy"]["task"]
    assert "find the coin" in got["robomemory:twx-coin-s13-dev"]["task"]
    assert "Suite picked" in (out / "summary.md").read_text()


@needs_worlds
def test_a_suite_file_with_tasks_of_two_worlds_runs(fake_model, tmp_path):
    (tmp_path / "games").mkdir()
    for suffix in (".z8", ".json"):
        shutil.copy(GAMES / f"cooking_1room{suffix}", tmp_path / "games" / f"first{suffix}")
    suite_file = tmp_path / "mine.yaml"
    suite_file.write_text(
        "name: mine\n"
        "description: a game of mine and a coin\n"
        "max_steps: 2\n"
        "tasks:\n"
        "  - {world: textworld, id: tw-first, params: {path: games/first.z8}}\n"
        "  - world: twx\n"
        "    id: twx-coin-7\n"
        "    params: {game: coin, seed: 7, params: 'numLocations=4,includeDoors=0'}\n"
    )
    out = tmp_path / "out"
    assert bench(out, "--suite-file", str(suite_file), "--attempts", "1") == 0
    got = records(out)
    assert set(got) == {"robomemory:tw-first", "robomemory:twx-coin-7"}
    for key, r in got.items():
        assert r["error"] is None and r["suite"] == "mine", (key, r["error"])
        assert r["max_steps"] == 2 * r["oracle_steps"] and 1 <= r["steps"] <= r["max_steps"]
    # TextWorld offers the first actions of the game where the fake asks for a look
    assert got["robomemory:tw-first"]["trajectory"][0]["verb"] == "look"
    assert [t["verb"] for t in got["robomemory:twx-coin-7"]["trajectory"]] == [
        "look",
        "task_complete",
    ]
    assert "Suite mine" in (out / "summary.md").read_text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sw", "boiling"], "unknown ScienceWorld task 'boiling'; choose from boil, melt,"),
        (["--twx", "coins:1"], "unknown TextWorldExpress game 'coins'; choose from cookingworld,"),
        (["--tw", "treasure:1"], "unknown tw-make challenge 'treasure'; choose from tw-cooking,"),
        (["--sw", "boil:4-2"], "variation '4-2': a range goes up (e.g. 2-4)"),
        (["--twx", "coin:a"], "seed 'a': write numbers and ranges"),
        (["--sw", "boil", "--sw-simplifications", "fast"], "unknown ScienceWorld simplification"),
        (["--twx-params", "numLocations=3"], "choose one of --suite NAME, --suite-file PATH"),
        (["--suite", "tiny", "--sw", "boil"], "given: --suite, --sw"),
        (["--twx", "coin", "--tw-settings=--level 3"], "--tw-settings goes with --tw"),
    ],
)
def test_bad_picks_are_one_line_errors(args, said, capsys, tmp_path):
    if any(a in ("--sw", "--twx") for a in args) and not WORLDS:
        pytest.skip("needs the worlds extra")
    assert bench(tmp_path / "out", *args) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


@needs_worlds
def test_errors_the_worlds_find_are_one_line_too(capsys, tmp_path):
    """Checked before any episode: a variation ScienceWorld lacks (it would play an "unknown"
    task), a game parameter TextWorldExpress does not know."""
    assert bench(tmp_path / "out", "--sw", "power-component:20") == 2
    assert "ScienceWorld power-component has variations 0-19, not 20" in capsys.readouterr().err
    assert bench(tmp_path / "out", "--twx", "coin", "--twx-params", "rooms=3") == 2
    err = capsys.readouterr().err
    assert "Unrecognized property name (rooms)" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("tasks: [{world: minecraft, id: a}]", "tasks.0.world: Input should be 'textworld',"),
        ("tasks: [{world: scienceworld, id: a, params: {variation: 2}}]", "task: missing"),
        ("tasks: [{world: twx, id: a, params: {game: coin, seed: 1, seeds: 3}}]", "seeds: unknown"),
        ("max_step: 3\ntasks: [{world: twx, id: a, params: {game: coin, seed: 1}}]", "max_step:"),
        ("tasks: [{world: twx, params: {game: coin, seed: 1}}]", "tasks.0.id: missing"),
        ("tasks: [{world: twx, id: 'a b', params: {game: coin, seed: 1}}]", "tasks.0.id: String"),
        ("tasks: [{world: textworld, id: a, params: {challenge: tw-simple}}]", "needs a seed"),
        ("tasks: [{world: textworld, id: a, params: {challenge: x, seed: 1}}]", "unknown tw-make"),
        ("tasks: []", "tasks: List should have at least 1 item"),
        ("tasks: [\n  - {", "not YAML:"),
        ("- a task", "a suite file is a mapping"),
        (
            "tasks: [{world: twx, id: a, params: {game: coin, seed: 1}},"
            " {world: twx, id: a, params: {game: coin, seed: 2}}]",
            "task id 'a' is given twice",
        ),
    ],
)
def test_a_bad_suite_file_is_one_line_naming_the_file(text, said, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        load_suite_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message and "\n" not in message, message


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ("{world: scienceworld, id: sw-x, params: {task: boiling}}", "task sw-x: unknown Scien"),
        ("{world: twx, id: twx-x, params: {game: coins, seed: 1}}", "task twx-x: unknown TextW"),
        ("{world: textworld, id: tw-x, params: {path: none.z8}}", "task tw-x: no game file"),
    ],
)
def test_a_suite_file_task_its_world_lacks_is_named_before_any_episode(task, said, tmp_path):
    if "textworld" not in task and not WORLDS:
        pytest.skip("needs the worlds extra")
    path = tmp_path / "s.yaml"
    path.write_text(f"tasks: [{task}]")
    with pytest.raises(ValueError) as caught:
        check_worlds(load_suite_file(path))
    assert str(caught.value).startswith(said) and "\n" not in str(caught.value)


def test_the_example_suite_file_is_valid_and_its_game_paths_are_its_own():
    suite = load_suite_file(Path(__file__).resolve().parents[1] / "examples" / "suite.yaml")
    assert {t.world for t in suite.tasks} == {"textworld", "scienceworld", "twx"}
    game = next(t for t in suite.tasks if "path" in t.params)
    assert Path(game.params["path"]) == GAMES / "cooking_1room.z8"


def test_numbers_and_picks():
    assert numbers("0-3,7,2", "seed") == [0, 1, 2, 3, 7]
    assert split_pick("boil:1,3-4", "variation") == ("boil", [1, 3, 4])
    assert split_pick("coin", "seed") == ("coin", [0])
    for bad in ("coin:", ":3", "coin:1-", "coin:-1"):
        with pytest.raises(ValueError):
            split_pick(bad, "seed")


def test_picked_games_alone_keep_the_suite_name_games(tmp_path):
    suite = picked_suite(games=[str(GAMES / "cooking_1room.z8")], max_steps=5)
    assert suite.name == "games" and [t.id for t in suite.tasks] == ["tw-cooking_1room"]
    assert suite.max_steps == 5
    long = game_id(Path("a.long.name" * 10 + ".z8"))
    assert len(long) <= 58 and TaskSpec(world="textworld", id=long, params={"path": "x.z8"})


@pytest.mark.parametrize("name", NEW_SUITES)
def test_the_new_suites_have_four_tasks_or_more_with_valid_params(name):
    suite = get_suite(name)
    assert suite.name == name and len(suite.tasks) >= 4
    assert len({t.id for t in suite.tasks}) == len(suite.tasks)
    for task in suite.tasks:
        TaskSpec.model_validate(task.model_dump())  # params fit the world's model
    world = {"tw": "textworld", "sw": "scienceworld", "twx": "twx"}[name.split("-")[0]]
    assert {t.world for t in suite.tasks} == {world}


def test_every_named_suite_still_builds():
    for name in SUITES:
        if name != "tiny":  # tiny loads textworld; the others only describe tasks
            assert get_suite(name).tasks


def test_a_goal_only_game_states_only_its_goal(tmp_path):
    """tw-make's coin collector spells out the way; the -goal challenge (eval/tw_goal.py) makes
    the same game and asks only for the coin. Made once, then taken from the cache."""
    from robomemory.executors.envs.textworld import TextWorldExecutor
    from robomemory.executors.envs.textworld_games import walkthrough_commands

    path = tw_make_game("tw-coin_collector-goal", "--level 3", 5, cache=tmp_path)
    assert (
        path.name == "tw-coin_collector-goal-level-3-s5.z8" and path.with_suffix(".json").exists()
    )
    assert not path.with_suffix(".ni").exists()
    executor = TextWorldExecutor(path)
    try:
        task, _ = executor.reset()
    finally:
        executor.close()
    assert task == "Find the coin and pick it up."
    assert walkthrough_commands(path)[-1] == "take coin"
    again = textworld_game(
        {"challenge": "tw-coin_collector-goal", "settings": "--level 3", "seed": 5}, tmp_path
    )
    assert again == path
    with pytest.raises(ValueError, match=r"tw-make tw-coin_collector --seed 1: .*--level"):
        tw_make_game("tw-coin_collector", "", 1, cache=tmp_path)
