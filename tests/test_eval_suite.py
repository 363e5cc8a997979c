"""The tiny suite end to end for every agent and ablation, the report files, and resume.

Real: TextWorld games, the graph, Qdrant local mode, networkx KG, SQLite checkpoints.
FAKE: the model's answers (ScriptedChatModel) follow the game's oracle walkthrough.
"""

from __future__ import annotations

import argparse
import json

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.eval.bench import suite as suite_cli
from robomemory.eval.report import load_records, write_report
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import get_suite, make_executor
from robomemory.executors.envs.textworld import walkthrough_actions
from robomemory.testing import PlanScript, scripted_llm

ABLATIONS = ["critic", "spatial", "longterm", "episodic", "semantic", "utility"]


class Crash(BaseException):
    """A simulated kill of the benchmark process (not an episode error)."""


class World:
    """Wraps the real executor so the FAKE model can read the game position; can crash."""

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
def harness(tmp_path):
    current: dict = {}
    built: list[str] = []

    def factory(spec, crash_at=None):
        built.append(spec.id)
        current["w"] = World(spec, crash_at)
        return current["w"]

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
    # the model is asked every step (the effects table deciding none) and offered every action
    # possible now, so the walkthrough's plans (their later steps for the critic) are played
    cfg.table_decides, cfg.max_candidates = False, None

    def make(factory_fn=factory):
        return SuiteRunner(
            get_suite("tiny"),
            tmp_path / "out",
            config=cfg,
            llm=llm,
            embedder=DeterministicFakeEmbedding(size=32),
            executor_factory=factory_fn,
            show_progress=False,
        )

    return make, built, factory, tmp_path / "out"


def test_tiny_suite_every_agent_and_ablation(harness):
    make, built, _, out = harness
    records = make().run(["robomemory", "react", "fullctx"], ABLATIONS, attempts=2, episodes=1)
    assert len(records) == (1 + len(ABLATIONS)) * 2 + 2 * 2
    assert all(r.error is None for r in records), [r.error for r in records if r.error]
    assert all(r.success and r.gc == 1.0 for r in records)
    labels = {(r.agent, r.ablation) for r in records}
    assert ("robomemory", "critic") in labels and ("fullctx", "none") in labels
    full = next(r for r in records if r.agent == "robomemory" and r.ablation == "none")
    assert {"temporal", "spatial", "semantic", "episodic"} <= {e.node for e in full.events}
    assert full.spatial_stats and full.calls > 0 and full.prompt_tokens > 0
    no_critic = next(r for r in records if r.ablation == "critic")
    assert "critic" not in no_critic.usage and "critic" in full.usage
    react = next(r for r in records if r.agent == "react")
    assert react.usage["policy"]["calls"] == react.steps
    # each step keeps its model calls' answers and costs, not their prompts (a suite's report)
    assert [c["node"] for c in react.trajectory[0]["calls"]] == ["policy"]
    planned = [c for t in full.trajectory for c in t["calls"] if c["node"] == "planner"]
    assert planned and all(c["answer"] and "user" not in c and "system" not in c for c in planned)
    # Lifelong: attempt 2 used the same robot memory folder as attempt 1.
    assert (out / "memory" / "robomemory__none").is_dir()
    files = write_report(out)
    for name in ("summary.json", "summary.md"):
        assert files[name].exists()
    summary = json.loads(files["summary.json"].read_text())
    assert {r["attempt"] for r in summary["lifelong"]} == {1, 2}
    assert summary["memory_latency"]["steps"] > 0 and summary["kg"]["updates"] > 0
    if pytest.importorskip("matplotlib"):
        assert (out / "plots" / "sr_gc.png").exists() and (out / "plots" / "latency.png").exists()


def test_killed_bench_resumes_without_redoing_episodes(harness):
    make, built, factory, out = harness
    seen = []

    def crash_after_two(record):
        seen.append(record.key)
        if len(seen) == 2:
            raise Crash()

    with pytest.raises(Crash):
        make().run(["react"], attempts=2, episodes=2, on_record=crash_after_two)
    assert len(load_records(out)) == 2
    built.clear()
    records = make().run(["react"], attempts=2, episodes=2)
    assert len(records) == 4 and len(built) == 2  # only the two unfinished episodes ran
    assert {r.key for r in records} >= set(seen)


def test_episode_killed_midway_resumes_from_its_checkpoint(harness):
    make, built, factory, out = harness
    with pytest.raises(Crash):
        make(lambda spec: factory(spec, crash_at=2)).run(["robomemory"], attempts=1, episodes=1)
    assert not load_records(out)
    (record,) = make().run(["robomemory"], attempts=1, episodes=1)
    assert record.success and record.error is None
    # Only the steps after the crash ran in the resumed process (the first two came back from
    # the checkpoint by replay), so fewer executor events than steps were recorded.
    executed = [e for e in record.events if e.node == "executor"]
    assert record.steps > len(executed) >= record.steps - 2


def test_cli_parses_and_rejects_bad_ablation(tmp_path):
    p = argparse.ArgumentParser()
    suite_cli.add_arguments(p)
    args = p.parse_args(["--suite", "tiny", "--agent", "react,fullctx", "--out", str(tmp_path)])
    assert suite_cli.parse_agents(args.agent) == ["react", "fullctx"]
    runner = SuiteRunner(get_suite("tiny"), tmp_path, show_progress=False)
    with pytest.raises(ValueError):
        runner.plan(["robomemory"], ["wings"], 1, 1)


def test_games_suite_takes_files_folders_and_globs(tmp_path):
    import shutil

    from robomemory.eval.suites import games_suite
    from robomemory.executors.envs.textworld import bundled_game

    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("cooking_1room", "cooking_6rooms"):
        src = bundled_game(name)
        shutil.copy(src, folder / src.name)
        shutil.copy(src.with_suffix(".json"), folder / f"{src.stem}.json")
    by_folder = games_suite([str(folder)])
    by_glob = games_suite([str(folder / "*1room.z8")])
    by_file = games_suite([str(folder / "cooking_6rooms.z8"), str(folder / "cooking_6rooms.z8")])
    assert [t.id for t in by_folder.tasks] == ["tw-cooking_1room", "tw-cooking_6rooms"]
    assert [t.id for t in by_glob.tasks] == ["tw-cooking_1room"]
    assert [t.id for t in by_file.tasks] == ["tw-cooking_6rooms"]  # once
    (folder / "cooking_1room.json").unlink()
    with pytest.raises(ValueError, match="no .json beside them: cooking_1room.z8"):
        games_suite([str(folder)])
    with pytest.raises(ValueError, match="no game matches"):
        games_suite([str(tmp_path / "nothing*.z8")])


def test_step_limit_is_at_least_twice_the_oracle():
    from robomemory.eval.suites import get_suite, oracle_steps, step_limit

    spec = get_suite("tiny").tasks[0]
    executor = make_executor(spec)
    try:
        oracle = oracle_steps(spec, executor)
    finally:
        executor.close()
    assert oracle == len(walkthrough_actions(spec.params["path"])) - 1  # no task_complete
    assert step_limit(3, oracle) == 2 * oracle and step_limit(100, oracle) == 100
