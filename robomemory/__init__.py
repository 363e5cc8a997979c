"""robomemory: a brain-inspired multi-memory agent for robots, as a LangGraph state machine."""

from robomemory.config import AgentConfig, MemoryConfig, ModelConfig

__all__ = ["AgentConfig", "MemoryConfig", "ModelConfig"]
__version__ = "0.1.0"
