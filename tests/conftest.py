"""Shared fixtures: a real memory system (Qdrant local, networkx KG) in a temp dir."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from robomemory.config import AgentConfig
from robomemory.graphs.agent import build_agent, sqlite_checkpointer


@pytest.fixture
def agent_config(tmp_path) -> AgentConfig:
    cfg = AgentConfig(max_steps=12, robot_id="test-bot")
    cfg.memory.data_dir = tmp_path / "memory"
    return cfg


@pytest.fixture
def make_agent(tmp_path):
    """Build an agent with a real SQLite checkpointer and real stores; the model is a fake."""
    built = []

    def make(cfg: AgentConfig, executor, llm, embedder=None):
        agent = build_agent(
            cfg,
            executor,
            llm=llm,
            embedder=embedder or DeterministicFakeEmbedding(size=32),
            checkpointer=sqlite_checkpointer(tmp_path / "checkpoints.sqlite"),
        )
        built.append(agent)
        return agent

    yield make
    for agent in built:
        agent.context.memory.close()
