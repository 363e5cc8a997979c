"""One pydantic configuration for the agent, its models and its memory (paper defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


def default_data_dir() -> Path:
    """Where memories, checkpoints and traces live: $ROBOMEMORY_HOME, else ~/.robomemory."""
    import os

    return Path(os.environ.get("ROBOMEMORY_HOME", Path.home() / ".robomemory"))


def default_model_cache() -> Path:
    """Where the embedded model's weights live, shared by every data home.

    ``$ROBOMEMORY_MODEL_CACHE``, else ``$XDG_CACHE_HOME/robomemory/models``, else
    ``~/.cache/robomemory/models``. Independent of ``ROBOMEMORY_HOME``, so a second data home
    does not join a second 1.1 GB copy.
    """
    import os

    if os.environ.get("ROBOMEMORY_MODEL_CACHE"):
        return Path(os.environ["ROBOMEMORY_MODEL_CACHE"]).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home).expanduser() / "robomemory" / "models"


class ModelConfig(BaseModel):
    """Which chat model and embedder to use."""

    provider: Literal["local", "openai", "fake"] = "local"
    model: str = "qwen2.5-coder-1.5b-instruct"
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (openai).")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Env var holding the key.")
    temperature: float = 0.0
    max_tokens: int = 400
    timeout_s: float = Field(default=120.0, gt=0, description="Time limit of one model request.")
    max_retries: int = Field(default=2, ge=0, description="Extra tries after a failed parse.")
    deadline_s: float = Field(
        default=240.0, gt=0, description="Time limit of one call with all its retries."
    )
    context_size: int = Field(default=4096, description="Context of the embedded model.")
    threads: int | None = Field(default=None, description="CPU threads of the embedded model.")
    embedder: Literal["minilm", "fake"] = "minilm"


class TemporalConfig(BaseModel):
    enabled: bool = True
    capacity: int = Field(default=4, ge=2, description="N: FIFO size before compression.")


class SpatialConfig(BaseModel):
    enabled: bool = True
    backend: Literal["networkx", "neo4j"] = "networkx"
    top_n: int = Field(default=3, ge=1, description="n: vertices per query by cosine similarity.")
    k_hops: int = Field(default=2, ge=0, description="K: hop expansion.")
    hub_degree: int | None = Field(
        default=6, ge=1, description="K-hop does not expand through vertices with more edges."
    )
    neo4j_uri: str | None = None
    neo4j_user_env: str = "NEO4J_USER"
    neo4j_password_env: str = "NEO4J_PASSWORD"


class LongTermConfig(BaseModel):
    semantic_enabled: bool = True
    episodic_enabled: bool = True
    qdrant_url: str | None = Field(default=None, description="Qdrant server; local mode if unset.")
    update_top_s: int = Field(
        default=10, ge=1, description="S: similar items shown to the updater."
    )
    semantic_action_n: int = Field(default=2, ge=0, description="N_s: action-level insights.")
    semantic_task_n: int = Field(default=2, ge=0, description="N_t: task-level insights.")
    episodic_n: int = Field(default=5, ge=0, description="Episodes retrieved.")


class UtilityConfig(BaseModel):
    """MemRL two-phase retrieval and Q-value update."""

    enabled: bool = True
    lam: float = Field(default=0.5, ge=0.0, le=1.0, description="λ: weight of Q in phase B.")
    alpha: float = Field(default=0.3, gt=0.0, le=1.0, description="α: Q learning rate.")
    delta: float = Field(default=0.5, description="δ: phase-A cosine threshold.")
    k1: int = Field(default=5, ge=1, description="Phase-A candidates.")
    k2: int = Field(default=3, ge=1, description="Phase-B results.")
    q_init: float = 0.0
    reward_success: float = 1.0
    reward_failure: float = 0.0


class CondenserConfig(BaseModel):
    enabled: bool = True
    token_budget: int = Field(default=1200, ge=128, description="Budget of a prompt's context.")
    keep_recent: int = Field(default=2, ge=0, description="Newest chunks never condensed.")


class MemoryConfig(BaseModel):
    """Memory modules and where they live. Long-term memory and the spatial map persist per
    ``robot_id`` under ``data_dir`` (lifelong); another robot_id or data_dir starts afresh."""

    temporal: TemporalConfig = TemporalConfig()
    spatial: SpatialConfig = SpatialConfig()
    longterm: LongTermConfig = LongTermConfig()
    utility: UtilityConfig = UtilityConfig()
    condenser: CondenserConfig = CondenserConfig()
    data_dir: Path = Field(default_factory=lambda: default_data_dir() / "memory")


class AgentConfig(BaseModel):
    """Top-level configuration of a RoboMemory agent."""

    model: ModelConfig = ModelConfig()
    memory: MemoryConfig = MemoryConfig()
    max_steps: int = Field(default=30, ge=1)
    max_plan_len: int = Field(default=3, ge=1, description="Actions in one plan (first + later).")
    n_queries: int = Field(default=4, ge=1, le=8, description="Queries per step (paper: 4-5).")
    critic_enabled: bool = True
    robot_id: str = "default"

    def ablate(self, names: list[str]) -> AgentConfig:
        """Return a copy with paper ablations switched off (critic, spatial, longterm, ...)."""
        cfg = self.model_copy(deep=True)
        for name in names:
            match name:
                case "critic":
                    cfg.critic_enabled = False
                case "spatial":
                    cfg.memory.spatial.enabled = False
                case "temporal":
                    cfg.memory.temporal.enabled = False
                case "longterm":
                    cfg.memory.longterm.semantic_enabled = False
                    cfg.memory.longterm.episodic_enabled = False
                case "semantic":
                    cfg.memory.longterm.semantic_enabled = False
                case "episodic":
                    cfg.memory.longterm.episodic_enabled = False
                case "utility":
                    cfg.memory.utility.enabled = False
                case "condenser":
                    cfg.memory.condenser.enabled = False
                case _:
                    raise ValueError(
                        f"unknown ablation {name!r}; choose from critic, spatial, temporal, "
                        "longterm, semantic, episodic, utility, condenser"
                    )
        return cfg
