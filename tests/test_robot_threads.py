"""Thread and episode ids are per robot: two robots never share a checkpoint thread, and an
episode id names one run. REAL TextWorld, Qdrant Edge and checkpoints; FAKE scripted model."""

from __future__ import annotations

import threading

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from reliability.scripted import lifelong_llm

from robomemory import build_agent
from robomemory.config import AgentConfig
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.graphs.agent import EpisodeIdError

GAME = "cooking_1room"


def make(robot: str, data):
    cfg = AgentConfig(robot_id=robot, max_steps=12)
    cfg.memory.data_dir = data
    executor = TextWorldExecutor(bundled_game(GAME))
    llm = lifelong_llm(GAME)
    return build_agent(cfg, executor, llm=llm, embedder=DeterministicFakeEmbedding(size=32))


def learned(result) -> int:
    report = result.consolidation
    assert report and not report.get("skipped"), report
    return report["semantic"]["created"] + report["episodic"]["created"]


def test_two_robots_on_one_thread_id_one_after_the_other_each_learn(tmp_path):
    with make("bot-a", tmp_path / "memory") as a:
        first = a.run(thread_id="shared")
    with make("bot-b", tmp_path / "memory") as b:
        second = b.run(thread_id="shared")
        assert b.state("shared")["handles"]["robot_id"] == "bot-b"
    assert first.success and second.success
    assert first.episode_id != second.episode_id
    assert learned(first) > 0 and learned(second) > 0
    with make("bot-a", tmp_path / "memory") as a:  # robot a's thread is still its own
        assert a.state("shared")["handles"]["episode_id"] == first.episode_id


def test_two_robots_on_one_thread_id_at_once_keep_their_episodes_apart(tmp_path):
    agents = {r: make(r, tmp_path / "memory") for r in ("bot-a", "bot-b")}
    results: dict = {}
    runs = [
        threading.Thread(target=lambda r=r: results.__setitem__(r, agents[r].run(thread_id="t")))
        for r in agents
    ]
    for t in runs:
        t.start()
    for t in runs:
        t.join(timeout=300)
    try:
        a, b = results["bot-a"], results["bot-b"]
        assert a.episode_id != b.episode_id
        log = agents["bot-a"].context.memory.episodes
        assert len(log.steps(a.episode_id)) == a.steps and len(log.steps(b.episode_id)) == b.steps
        assert learned(a) > 0 and learned(b) > 0
        for robot, agent in agents.items():
            assert agent.state("t")["handles"]["robot_id"] == robot
    finally:
        for agent in agents.values():
            agent.close()


def test_a_reused_episode_id_is_refused_and_a_rerun_thread_is_a_new_episode(tmp_path):
    with make("bot-a", tmp_path / "memory") as a:
        first = a.run(thread_id="x", episode_id="e1")
        with pytest.raises(EpisodeIdError, match="episode id 'e1' is already used") as info:
            a.run(thread_id="y", episode_id="e1")
        assert "\n" not in str(info.value)
        again = a.run(thread_id="x")  # the same thread again: a new episode, consolidated
        third = a.run(thread_id="x")
    assert first.episode_id == "e1" and learned(first) > 0
    assert len({first.episode_id, again.episode_id, third.episode_id}) == 3
    assert learned(again) >= 0 and learned(third) >= 0


@pytest.mark.parametrize("thread", ["../x", "a/b", "", ".hidden", "x" * 240])
def test_a_thread_id_is_no_path(tmp_path, thread):
    with make("bot-a", tmp_path / "memory") as a, pytest.raises(ValueError, match="thread id"):
        a.run(thread_id=thread or " ")


def test_the_graph_api_refuses_a_used_episode_id_and_a_rerun_thread_is_a_new_episode(tmp_path):
    """graph.invoke (and Studio) pass the start node, not agent.run: it claims the episode."""
    with make("bot-a", tmp_path / "memory") as a:
        first = a.run(thread_id="x", episode_id="e1")
        with pytest.raises(EpisodeIdError, match="episode id 'e1' is already used") as info:
            a.graph.invoke({"handles": {"episode_id": "e1"}}, a._config("y"), context=a.context)
        assert "\n" not in str(info.value)
        # the same thread again through the graph (a Studio re-run carries the old handles)
        again = a.graph.invoke({}, a._config("x"), context=a.context)
    assert again["handles"]["episode_id"] not in (first.episode_id, "")
    report = again["consolidation"]
    assert report and not report.get("skipped"), report
