"""robomemory: a brain-inspired multi-memory agent for robots, as a LangGraph state machine."""

from __future__ import annotations

from typing import Any

from robomemory.config import AgentConfig, MemoryConfig, ModelConfig

__all__ = ["AgentConfig", "MemoryConfig", "ModelConfig", "build_agent"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "build_agent":
        from robomemory.graphs.agent import build_agent

        return build_agent
    raise AttributeError(name)
