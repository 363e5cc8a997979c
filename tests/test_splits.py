"""Dev and test splits of the named suites, and a test split's sealed traces.

Real: TextWorld games (the bundled ones), the graph, Qdrant local mode, SQLite checkpoints; the
worlds' own test variations and seeds (ScienceWorld, TextWorldExpress JVMs) where installed.
FAKE: the model's answers (ScriptedChatModel) follow the game's oracle walkthrough.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.eval.bench import suite as suite_cli
from robomemory.eval.picks import load_suite_file
from robomemory.eval.report import load_records, load_sealed, write_report
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import (
    SW_TEST_VARIATIONS,
    TEST_SUITES,
    TWX_TEST_SEEDS,
    Suite,
    get_suite,
    make_executor,
)
from robomemory.executors.envs.textworld import walkthrough_actions
from robomemory.testing import PlanScript, scripted_llm

# Today's dev suites, task by task: committed results name these ids.
DEV_IDS: dict[str, list[str]] = {
    **{
        f"tw-cooking-{lv}": [f"tw-cooking-{lv}-s{s}" for s in (11, 12, 13, 14, 15)]
        for lv in ("easy", "medium", "hard")
    },
    "tw-cooking-hardest": [f"tw-cooking-hardest-s{s}" for s in range(51, 63)],
    "tw-treasure": [
        "tw-treasure-l12-s21",
        "tw-treasure-l16-s22",
        "tw-treasure-l20-s23",
        "tw-treasure-l22-s24",
        "tw-treasure-l26-s25",
    ],
    "tw-coin": [
        "tw-coin-l103-s31",
        "tw-coin-l105-s32",
        "tw-coin-l107-s33",
        "tw-coin-l110-s34",
        "tw-coin-l115-s35",
    ],
    "tw-simple": [
        "tw-simple-dense-detailed-s41",
        "tw-simple-balanced-detailed-s42",
        "tw-simple-balanced-brief-s43",
        "tw-simple-sparse-brief-s44",
        "tw-simple-sparse-none-s45",
    ],
    "sw-easy": [
        "sw-find-living-thing-v0-easy",
        "sw-find-non-living-thing-v0-easy",
        "sw-find-plant-v1-easy",
        "sw-find-animal-v0-easy",
        "sw-chemistry-mix-v0-easy",
    ],
    "sw": [
        "sw-find-living-thing-v0",
        "sw-find-non-living-thing-v0",
        "sw-find-plant-v1",
        "sw-find-animal-v0",
        "sw-chemistry-mix-v0",
        "sw-find-living-thing-v1",
        "sw-boil-v0",
        "sw-melt-v0",
        "sw-freeze-v0",
        "sw-test-conductivity-v0",
        "sw-grow-plant-v0",
        "sw-chemistry-mix-paint-secondary-color-v0",
    ],
    "sw-tasks": [
        "sw-boil-v1-easy",
        "sw-melt-v5-easy",
        "sw-use-thermometer-v3-easy",
        "sw-test-conductivity-v5-easy",
        "sw-power-component-v1-easy",
    ],
    "twx-cooking": [f"twx-cookingworld-s{s}" for s in range(5)],
    "twx-twc": [f"twx-twc-s{s}" for s in range(5)],
    "twx-coin": [f"twx-coin-s{s}" for s in range(10, 15)],
    "twx-mapreader": [f"twx-mapreader-s{s}" for s in range(10, 15)],
    **{
        f"twx-{g}": [f"twx-{g}-s{s}" for s in range(5)]
        for g in ("sorting", "arithmetic", "peckingorder")
    },
}
# What makes a task of each world another task: where it is drawn from.
DRAW_KEYS = {"textworld": ("seed",), "scienceworld": ("variation",), "twx": ("seed", "fold")}


def test_dev_suites_are_todays():
    for name, ids in DEV_IDS.items():
        suite = get_suite(name, "dev")
        assert suite == get_suite(name)  # dev is the default
        assert (suite.name, suite.split) == (name, "dev")
        assert [t.id for t in suite.tasks] == ids, name
        assert all("fold" not in t.params for t in suite.tasks)  # params as they were
    assert set(TEST_SUITES) == set(DEV_IDS)  # every named suite but tiny (and TALES') has one


@pytest.mark.parametrize("name", sorted(DEV_IDS))
def test_test_split_is_the_same_kind_of_task_elsewhere(name):
    dev, test = get_suite(name), get_suite(name, "test")
    assert (test.name, test.split, test.max_steps) == (f"{name}-test", "test", dev.max_steps)
    assert len(test.tasks) == len(dev.tasks)
    assert not {t.id for t in test.tasks} & {t.id for t in dev.tasks}
    for d, t in zip(dev.tasks, test.tasks, strict=True):
        keys = DRAW_KEYS[d.world]
        assert t.world == d.world
        same = {k: v for k, v in t.params.items() if k not in keys}
        assert same == {k: v for k, v in d.params.items() if k not in keys}, (d.id, t.id)
    draws = {tuple(t.params.get(k) for k in DRAW_KEYS[t.world]) for t in test.tasks}
    assert not draws & {tuple(d.params.get(k) for k in DRAW_KEYS[d.world]) for d in dev.tasks}
    if test.tasks[0].world == "twx":
        assert {t.params["fold"] for t in test.tasks} == {"test"}


def test_tiny_and_unknown_splits_are_refused():
    with pytest.raises(ValueError, match="^suite 'tiny' has no test split; these have one: tw-"):
        get_suite("tiny", "test")
    with pytest.raises(ValueError, match=r"^unknown split 'train'; choose from dev, test$"):
        get_suite("tw-coin", "train")


@pytest.mark.skipif(importlib.util.find_spec("scienceworld") is None, reason="no scienceworld")
def test_sw_test_variations_are_the_worlds_first_test_variations():
    from scienceworld import ScienceWorldEnv

    dev = {
        (t.params["task"], t.params["variation"])
        for n in ("sw", "sw-tasks")
        for t in get_suite(n).tasks
    }
    env = ScienceWorldEnv("")
    try:
        for task, chosen in SW_TEST_VARIATIONS.items():
            env.load(task, 0, "")
            assert chosen == tuple(env.get_variations_test()[: len(chosen)]), task
            train = set(env.get_variations_train())
            assert {v for t, v in dev if t == task} <= train  # today's dev suites: train
    finally:
        env.close()


@pytest.mark.skipif(
    importlib.util.find_spec("textworld_express") is None, reason="no textworld_express"
)
def test_twx_test_seeds_are_the_worlds_first_test_seeds():
    from textworld_express import TextWorldExpressEnv

    from robomemory.executors.envs.twx import GAME_DEFAULTS

    env = TextWorldExpressEnv()
    try:
        for name in ("twx-cooking", "twx-twc", "twx-coin", "twx-mapreader", "twx-sorting"):
            task = get_suite(name, "test").tasks[0].params
            game = task["game"]
            env.load(game, task.get("params", GAME_DEFAULTS.get(game, "")))
            assert TWX_TEST_SEEDS == tuple(env.getValidSeedsTest()[:5]), name
            train = set(env.getValidSeedsTrain())
            assert {t.params["seed"] for t in get_suite(name).tasks} <= train
    finally:
        env.close()


def test_cli_split_goes_with_a_named_suite(tmp_path):
    p = argparse.ArgumentParser()
    suite_cli.add_arguments(p)

    def suite(*argv: str) -> Suite:
        return suite_cli.suite_from_args(p.parse_args([*argv, "--out", str(tmp_path)]))

    assert suite("--suite", "tw-coin").name == "tw-coin"
    test = suite("--suite", "tw-coin", "--split", "test")
    assert (test.name, test.split) == ("tw-coin-test", "test")
    with pytest.raises(ValueError, match="no test split"):
        suite("--suite", "tiny", "--split", "test")
    own = tmp_path / "mine.yaml"
    own.write_text("split: test\ntasks: [{world: twx, id: a, params: {game: coin, seed: 1}}]\n")
    assert load_suite_file(own).split == "test"  # a suite file says it itself
    with pytest.raises(ValueError, match="^--split goes with --suite"):
        suite("--suite-file", str(own), "--split", "test")
    with pytest.raises(ValueError, match="^--split goes with --suite"):
        suite("--twx", "coin:1", "--split", "dev")


# --- a test split's run ---------------------------------------------------------------------


class Crash(BaseException):
    """A simulated kill of the benchmark process (not an episode error)."""


class World:
    """The real executor of a bundled game; the FAKE model reads its position; can crash."""

    def __init__(self, spec, crash_at: int | None = None):
        self.inner = make_executor(spec)
        self.oracle = walkthrough_actions(spec.params["path"])
        self.crash_at = crash_at

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, action, timeout_s=None, cancel=None):
        if self.crash_at is not None and len(self.inner.history) >= self.crash_at:
            self.crash_at = None
            raise Crash()
        return self.inner.execute(action, timeout_s, cancel)

    def next_actions(self, n: int):
        done = len(self.inner.history)
        return [(a.verb, a.args) for a in self.oracle[done : done + n]]


@pytest.fixture
def sealed_run(tmp_path):
    """make(crash_at=None): a runner of the first bundled game as a test split; built: ids."""
    current: dict = {}
    built: list[str] = []
    tiny = get_suite("tiny")
    suite = Suite(name="tiny-test", tasks=tiny.tasks[:1], max_steps=tiny.max_steps, split="test")
    llm = scripted_llm(
        {
            "Plan": PlanScript(lambda m: current["w"].next_actions(2), "follow the recipe"),
            "BaselineTurn": PlanScript(lambda m: current["w"].next_actions(1), "next"),
            "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
            "StepSummary": lambda m: {"summary": "I acted in the kitchen."},
            "MemoryQueries": lambda m: {"queries": ["where is the cookbook"]},
        }
    )
    cfg = AgentConfig()
    cfg.model.provider = "fake"

    def make(crash_at: int | None = None) -> SuiteRunner:
        def factory(spec):
            built.append(spec.id)
            current["w"] = World(spec, crash_at)
            return current["w"]

        return SuiteRunner(
            suite,
            tmp_path / "out",
            config=cfg,
            llm=llm,
            embedder=DeterministicFakeEmbedding(size=32),
            executor_factory=factory,
            show_progress=False,
        )

    return make, built, tmp_path / "out"


def readable_files(out: Path) -> list[Path]:
    """The run folder's files a person reads: all but the sealed records and the agent's own
    state (its checkpoints and memory, which a resumed or lifelong run needs)."""
    kept = ("sealed", "memory")
    return [
        p
        for p in out.rglob("*")
        if p.is_file() and p.relative_to(out).parts[0] not in kept and "checkpoints" not in p.name
    ]


def test_test_split_run_seals_its_traces_and_reports_no_action(sealed_run):
    make, built, out = sealed_run
    (record,) = make().run(["react"], attempts=1)
    assert record.success and record.error is None and not record.trajectory
    (episode,) = (out / "episodes").glob("*.json")
    written = json.loads(episode.read_text())
    assert written["trajectory"] == [] and written["events"] == [] and written["success"]
    sealed = out / "sealed" / f"{episode.stem}.json.gz"
    whole = json.loads(gzip.decompress(sealed.read_bytes()))
    actions = [str(s["action"]) for s in whole["trajectory"]]
    assert len(actions) == written["steps"] > 2 and whole["gc"] == written["gc"] == 1.0
    assert [r.trajectory for r in load_sealed(out)] == [whole["trajectory"]]
    files = write_report(out)
    md = files["summary.md"].read_text()
    assert "## Results per task" in md and record.task_id in md
    assert "sealed" in md and json.loads(files["summary.json"].read_text())["sealed_episodes"] == 1
    for path in readable_files(out):
        text = path.read_bytes().decode(errors="replace")
        assert not [a for a in actions if a in text], path


def test_test_split_resumes_an_interrupted_episode_and_skips_a_finished_one(sealed_run):
    make, built, out = sealed_run
    with pytest.raises(Crash):
        make(crash_at=2).run(["robomemory"], attempts=1)
    assert not load_records(out) and not load_sealed(out)
    (record,) = make().run(["robomemory"], attempts=1)  # from its checkpoint
    assert record.success and record.error is None and not record.trajectory
    (whole,) = load_sealed(out)
    assert len(whole.trajectory) == whole.steps == record.steps  # the steps before the crash too
    built.clear()
    (again,) = make().run(["robomemory"], attempts=1)
    assert not built and again == record  # finished: read back from episodes/, not replayed


def test_test_split_refuses_a_prompt_log(sealed_run, monkeypatch, tmp_path):
    make, built, out = sealed_run
    monkeypatch.setenv("ROBOMEMORY_PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    with pytest.raises(ValueError, match="^ROBOMEMORY_PROMPT_LOG is set: a test split"):
        make().run(["react"], attempts=1)
    assert not built and not (tmp_path / "prompts.jsonl").exists()


def test_tales_suites_are_a_test_split_as_they_are():
    """TALES plays the worlds' test seeds: its suites are sealed test splits by default, and
    no dev split of them exists."""
    for name in ("tales-twx", "tales-sw"):
        suite = get_suite(name)
        assert (suite.name, suite.split) == (name, "test")
        assert get_suite(name, "test") == suite
        with pytest.raises(ValueError, match="only a test split"):
            get_suite(name, "dev")
