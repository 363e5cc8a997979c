"""The episode log keeps grow-only records out of checkpoints; checkpoints stay flat."""

from __future__ import annotations

import sqlite3

from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.memory.episode_log import EpisodeLog
from robomemory.state import RECENT_STEPS
from robomemory.testing import plan_of, scripted_llm


def test_log_is_idempotent_per_step_and_ordered(tmp_path):
    log = EpisodeLog(tmp_path / "episodes.sqlite3")
    log.record_step("e1", {"step": 2, "action": "b"})
    log.record_step("e1", {"step": 1, "action": "a"})
    log.record_step("e1", {"step": 2, "action": "b2"})  # a re-run of step 2 replaces it
    log.record_step("e2", {"step": 1, "action": "x"})
    assert [r["action"] for r in log.steps("e1")] == ["a", "b2"]
    log.add_retrieved("e1", ["m1", "m2"], step=1)
    log.add_retrieved("e1", ["m2", "m3"], step=2)
    assert log.retrieved("e1") == ["m1", "m2", "m3"] and log.retrieved("e2") == []
    log.close()


def _checkpoint_sizes(db) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [n for (n,) in conn.execute("SELECT length(checkpoint) FROM checkpoints")]


def test_checkpoint_size_stays_flat_as_an_episode_grows(agent_config, make_agent, tmp_path):
    agent_config.max_steps = 3 * RECENT_STEPS
    agent_config.table_decides = False  # the planner is asked every step: it never ends,
    agent_config.max_candidates = None  # and every action possible now is offered: look() too
    llm = scripted_llm({"Plan": plan_of(("look", []), ("inventory", []))})
    agent = make_agent(agent_config, TextWorldExecutor(bundled_game("cooking_1room")), llm)
    result = agent.run(thread_id="long")
    assert result.steps == 3 * RECENT_STEPS
    # the whole trajectory is in the log, the state keeps a bounded window
    assert [t["step"] for t in result.trajectory] == list(range(1, result.steps + 1))
    assert len(agent.state("long")["trajectory"]) == RECENT_STEPS
    assert all("candidates" in t and "plan" in t for t in result.trajectory)
    sizes = _checkpoint_sizes(tmp_path / "checkpoints.sqlite")
    third = len(sizes) // 3
    early, late = max(sizes[third : 2 * third]), max(sizes[2 * third :])
    assert late < early * 1.25, (early, late)  # flat, not growing with the episode
