"""Every text that enters state, checkpoints, memory or a prompt from outside is bounded by the
configuration; world names map one to one onto spatial maps. REAL TextWorld, Qdrant Edge and
SQLite checkpoints; FAKE scripted model."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory import build_agent
from robomemory.config import AgentConfig
from robomemory.core import TaskTooLongError
from robomemory.eval.baselines import BaselineAgent
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.memory.base import WORLD_KEY_CHARS, MemoryHandles, world_key
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM
from robomemory.testing import PlanScript, ScriptedChatModel, message_text, scripted_llm
from robomemory.testing.openai_server import minimal_instance

BIG = 2_000_000


class HugeWorld:
    """A real TextWorld game whose every observation and answer carries 2 MB more text."""

    def __init__(self, inner: TextWorldExecutor):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def reset(self):
        task, obs = self.inner.reset()
        return task, obs.model_copy(update={"text": obs.text + "x" * BIG, "names": ["n" * BIG]})

    def execute(self, action, timeout_s=None, cancel=None):
        result = self.inner.execute(action, timeout_s, cancel)
        obs = result.observation.model_copy(update={"text": "y" * BIG})
        return result.model_copy(
            update={"observation": obs, "message": "z" * BIG, "details": {"raw": "w" * BIG}}
        )


def test_huge_observations_and_task_are_cut_to_the_configured_bounds(tmp_path):
    prompts: list[str] = []

    def decision(messages):
        prompts.append(message_text(messages))
        return {"event": "ADD"}

    # a task lesson a run, each other's similar item: the second one asks the updater
    lessons = iter(["read the recipe first " + "r" * 150, "cook what it says " + "s" * 150])

    def insights(_messages):
        return {"helped": [], "hurt": [], "task": [next(lessons)]}

    cfg = AgentConfig(robot_id="big-bot", max_steps=4)
    cfg.memory.data_dir = tmp_path / "memory"
    llm = scripted_llm({"MemoryDecision": decision, "SemanticInsights": insights})
    world = HugeWorld(TextWorldExecutor(bundled_game("cooking_1room")))
    embedder = DeterministicFakeEmbedding(size=32)
    task = "cook the meal " + "t" * 60_000  # kept whole; prompts show it condensed
    with build_agent(cfg, world, llm=llm, embedder=embedder) as agent:
        with pytest.raises(TaskTooLongError, match="over max_task_chars"):
            agent.run(thread_id="big-0", task="t" * 1_000_000)  # abuse: refused, one line
        agent.run(thread_id="big-1", task=task)
        agent.run(thread_id="big-2", task="now " + task)  # its updater sees the first items
        state = agent.state("big-2")
        items = [i.text for m in agent.context.memory.longterm() for i in m.items()]
    assert state["task"] == "now " + task
    assert len(state["observation"]["text"]) <= cfg.max_text_chars
    assert len(state["last_result"]["message"]) <= cfg.max_text_chars
    assert items and max(len(t) for t in items) <= cfg.memory.longterm.max_item_chars
    assert prompts and max(len(p) for p in prompts) < 20_000
    size = sum(f.stat().st_size for f in (tmp_path / "memory").glob("checkpoints.sqlite*"))
    assert size < 20_000_000, size  # 8 steps of 2 MB answers, unbounded: hundreds of MB


def test_world_names_that_differ_only_in_punctuation_keep_their_own_maps(tmp_path):
    names = ["kitchen.a", "kitchen_a", "kitchen a", "kitchen-a", "kitchen/a", "Kitchen_A"]
    keys = {world_key(n) for n in names}
    assert len(keys) == len(names)
    assert world_key("cooking_1room") == "cooking_1room"  # a plain name keeps its map
    long = "w" * 240
    assert len(world_key(long)) <= WORLD_KEY_CHARS and world_key(long) != world_key(long + "x")
    graph = MemoryHandles.for_robot("r" * 100, "e", long).spatial_graph_id
    assert len(graph.encode()) + len(".sqlite3") < 255
    cfg = AgentConfig(robot_id="worlds").memory
    cfg.data_dir = tmp_path / "memory"
    with MemorySystem.open(cfg, DeterministicFakeEmbedding(size=8), "worlds", long) as system:
        assert system.spatial is not None  # a long world name opens a map, no OSError


@pytest.mark.parametrize("site", ["siteA", "siteB"])
def test_run_names_a_game_files_world_by_its_content(tmp_path, site):
    from argparse import Namespace

    from robomemory.commands.run import world_of

    game = bundled_game("cooking_1room")
    other = bundled_game("cooking_6rooms")
    for folder, source in (("siteA", game), ("siteB", other)):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "tw.z8").write_bytes(source.read_bytes())
    args = Namespace(world=None, env="textworld", game=str(tmp_path / site / "tw.z8"))
    other_site = "siteB" if site == "siteA" else "siteA"
    other_args = Namespace(world=None, env="textworld", game=str(tmp_path / other_site / "tw.z8"))
    assert world_of(args) != world_of(other_args)
    assert world_of(Namespace(world=None, env="textworld", game="cooking_1room")) == (
        "cooking_1room"
    )


@pytest.mark.parametrize("kind", ["react", "fullctx"])
def test_the_baselines_prompts_are_bounded_too(kind):
    prompts: list[str] = []

    def answer(schema, messages):
        prompts.append(message_text(messages))
        return minimal_instance(schema.model_json_schema())

    cfg = AgentConfig(robot_id="big-bot", max_steps=3)
    world = HugeWorld(TextWorldExecutor(bundled_game("cooking_1room")))
    llm = StructuredLLM(ScriptedChatModel(responder=answer, calls=[]), max_retries=0)
    BaselineAgent(kind, cfg, world, llm).run()  # 2 MB observations and answers
    assert prompts and max(len(p) for p in prompts) < 8 * cfg.max_text_chars


def test_a_long_task_is_kept_whole_and_its_goal_reaches_every_prompt(tmp_path):
    """A spoken route of 20,000 characters ends with its goal: the state keeps it whole, and
    the planner's prompt shows it condensed, the goal sentence verbatim."""
    planned: list[str] = []

    def plan(messages):
        planned.append(message_text(messages))
        return [("look", [])]

    route = " ".join(f"Walk past door {i} and turn left at the lamp." for i in range(440))
    task = f"You are lost in a house. {route} Then take the coin from the drawer."
    assert len(task) > 20_000
    cfg = AgentConfig(robot_id="long-bot", max_steps=2)
    cfg.memory.data_dir = tmp_path / "memory"
    llm = scripted_llm({"Plan": PlanScript(plan)})
    world = TextWorldExecutor(bundled_game("cooking_1room"))
    embedder = DeterministicFakeEmbedding(size=32)
    with build_agent(cfg, world, llm=llm, embedder=embedder) as agent:
        agent.run(thread_id="long", task=task)
        state = agent.state("long")
    assert state["task"] == task
    assert planned and all("Then take the coin from the drawer." in p for p in planned)
    assert all("You are lost in a house." in p for p in planned)
    assert max(len(p) for p in planned) < 12_000  # not the 20,000-character task


def test_a_prompt_shows_a_long_task_by_its_first_and_last_sentences():
    from robomemory.core import task_view

    short = "Cook a meal. Then eat it."
    assert task_view(short) == short
    steps = " ".join(f"Step {i}: open box {i}." for i in range(400))
    task = f"Tidy the lab.\n{steps}\nFinally put the red key in the safe."
    shown = task_view(task, 600)
    assert len(shown) <= 600
    assert shown.startswith("Tidy the lab. [... ") and shown.endswith("red key in the safe.")
    assert "characters of the task left out" in shown
    one = "go " * 3000 + "and take the coin"  # one sentence: its end, in whole words
    assert task_view(one, 300).endswith("go and take the coin") and len(task_view(one, 300)) <= 300
