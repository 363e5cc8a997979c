"""One pydantic configuration for the agent, its models and its memory (paper defaults)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from robomemory.core import echo

ROBOT_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


def check_robot_id(robot_id: str) -> str:
    """A robot id names folders, collections and a lock file: only ``[A-Za-z0-9_-]``, so two
    ids never map to one memory (``a.b`` and ``a_b`` would)."""
    if not ROBOT_ID_PATTERN.fullmatch(robot_id):
        raise ValueError(
            f"robot id {echo(robot_id)} may use only letters, digits, '-' and '_' "
            "(1-100 characters, starting with a letter or digit)"
        )
    return robot_id


THREAD_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+=@-]{0,199}")


def check_thread_id(thread_id: str) -> str:
    """A thread id names a checkpoint thread and a trace file: no path, bounded length."""
    if not THREAD_ID_PATTERN.fullmatch(thread_id):
        raise ValueError(
            f"thread id {echo(thread_id)} may use only letters, digits and _ . : + = @ - "
            "(1-200 characters, starting with a letter or digit; no path)"
        )
    return thread_id


def robot_thread(robot_id: str, thread_id: str) -> str:
    """The checkpoint thread of ``thread_id`` on robot ``robot_id``: robots never share one
    (a robot id has no '/')."""
    return f"{robot_id}/{check_thread_id(thread_id)}"


class StrictModel(BaseModel):
    """A configuration section: unknown fields, NaN/inf and invalid assignments are errors."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """``true`` is no number: pydantic would take it as 1 for an int or float field."""
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _numeric(field.annotation):
            raise ValueError(f"{value!r} is not a number")
        return value


def _numeric(annotation: Any) -> bool:
    """An int or float field (optional or not) that takes no bool."""
    if get_origin(annotation) in (Union, UnionType):
        kinds = set(get_args(annotation)) - {NoneType}
    else:
        kinds = {annotation}
    return bool(kinds) and kinds <= {int, float}


def config_error_line(exc: ValidationError) -> str:
    """One line for a configuration error: ``max_steps: Input should be ... (got -1)``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or exc.title
        if err["type"] == "value_error":  # our own message already names the value
            parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
            continue
        got = f" (got {echo(err['input'])})" if err["type"] != "missing" else ""
        parts.append(f"{where}: {err['msg']}{got}")
    return "invalid configuration: " + "; ".join(parts)


def default_data_dir() -> Path:
    """Where memories, checkpoints and traces live: $ROBOMEMORY_HOME, else ~/.robomemory."""
    return Path(os.environ.get("ROBOMEMORY_HOME", Path.home() / ".robomemory"))


def default_model_cache() -> Path:
    """Where the embedded model's weights live, shared by every data home.

    ``$ROBOMEMORY_MODEL_CACHE``, else ``$XDG_CACHE_HOME/robomemory/models``, else
    ``~/.cache/robomemory/models``. Independent of ``ROBOMEMORY_HOME``, so a second data home
    does not join a second 1.1 GB copy.
    """
    if os.environ.get("ROBOMEMORY_MODEL_CACHE"):
        return Path(os.environ["ROBOMEMORY_MODEL_CACHE"]).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home).expanduser() / "robomemory" / "models"


# The fake provider's scripted model (robomemory.testing.first_candidate): the first candidate.
FAKE_MODEL_NAME = "first-candidate"


class ModelConfig(StrictModel):
    """Which chat model and embedder to use."""

    provider: Literal["local", "openai", "fake"] = "local"
    model: str = "qwen2.5-coder-1.5b-instruct"
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (openai).")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Env var holding the key.")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=400, ge=1)
    timeout_s: float = Field(default=120.0, gt=0, description="Time limit of one model request.")
    max_retries: int = Field(default=2, ge=0, description="Extra tries after a failed parse.")
    deadline_s: float = Field(
        default=240.0, gt=0, description="Total time of one structured call, retries included."
    )
    max_failed_calls: int = Field(
        default=3,
        ge=1,
        description="Structured calls in a row that got no answer from the model (every try "
        "failed: connection, HTTP error, time-out, a body that is no chat completion) after "
        "which the run stops with ModelUnavailableError instead of playing on fallbacks; any "
        "answer, even an unparseable one, starts the count again.",
    )
    context_size: int = Field(default=4096, ge=256, description="Context of the embedded model.")
    threads: int | None = Field(default=None, ge=1, description="Embedded model CPU threads.")
    runtime: Literal["auto", "native", "wheel"] | None = Field(
        default=None,
        description="Embedded model runtime: native llama-server if built (auto), or the "
        "xllamacpp wheel; None reads $ROBOMEMORY_RUNTIME (default auto).",
    )
    speculative: str | None = Field(
        default=None,
        description="llama.cpp draft-free speculative decoding for the native runtime "
        "(e.g. ngram-mod); None reads $ROBOMEMORY_SPECULATIVE (default off).",
    )
    embedder: Literal["minilm", "fake"] = "minilm"

    @property
    def label(self) -> str:
        """``provider:model`` as records name it; the fake model has no name but its own."""
        if self.provider == "fake" and "model" not in self.model_fields_set:
            return f"fake:{FAKE_MODEL_NAME}"
        return f"{self.provider}:{self.model}"


class TemporalConfig(StrictModel):
    enabled: bool = True
    capacity: int = Field(default=4, ge=2, description="N: FIFO size before compression.")


class SpatialConfig(StrictModel):
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


class LongTermConfig(StrictModel):
    semantic_enabled: bool = True
    episodic_enabled: bool = True
    qdrant_url: str | None = Field(default=None, description="Qdrant server; local mode if unset.")
    memory_url: str | None = Field(
        default=None,
        description="postgresql:// URL of the long-term memory a fleet shares (pgvector); "
        "None reads $ROBOMEMORY_MEMORY_URL; unset: the robot's own shards.",
    )
    update_top_s: int = Field(
        default=10, ge=1, description="S: similar items shown to the updater."
    )
    semantic_action_n: int = Field(default=2, ge=0, description="N_s: action-level insights.")
    semantic_task_n: int = Field(default=2, ge=0, description="N_t: task-level insights.")
    semantic_verdict_n: int = Field(
        default=2,
        ge=0,
        description="Verdicts: steps the world scored down or ended a task on, in its words.",
    )
    episodic_n: int = Field(default=5, ge=0, description="Episodes retrieved.")
    max_item_chars: int = Field(
        default=600, ge=50, le=20_000, description="One long-term item (longer ones are cut)."
    )

    @field_validator("memory_url")
    @classmethod
    def _postgres_url(cls, url: str | None) -> str | None:
        if url and not url.startswith(("postgresql://", "postgres://")):
            scheme = url.split("://")[0] if "://" in url else "no scheme"
            raise ValueError(f"must be a postgresql:// URL, not {echo(scheme[:20])}")
        return url or None


class UtilityConfig(StrictModel):
    """MemRL two-phase retrieval and Q-value update."""

    enabled: bool = True
    lam: float = Field(default=0.5, ge=0.0, le=1.0, description="λ: weight of Q in phase B.")
    alpha: float = Field(default=0.3, gt=0.0, le=1.0, description="α: Q learning rate.")
    delta: float = Field(default=0.5, ge=-1.0, le=1.0, description="δ: phase-A cosine threshold.")
    k1: int = Field(default=5, ge=1, description="Phase-A candidates.")
    k2: int = Field(default=3, ge=1, description="Phase-B results.")
    q_init: float = 0.0
    reward_success: float = 1.0
    reward_failure: float = 0.0


class CondenserConfig(StrictModel):
    enabled: bool = True
    token_budget: int = Field(default=1200, ge=128, description="Budget of a prompt's context.")
    keep_recent: int = Field(default=2, ge=0, description="Newest chunks never condensed.")


class MemoryConfig(StrictModel):
    """Memory modules and where they live. Long-term memory and the spatial map persist per
    ``robot_id`` under ``data_dir`` (lifelong); another robot_id or data_dir starts afresh."""

    temporal: TemporalConfig = TemporalConfig()
    spatial: SpatialConfig = SpatialConfig()
    longterm: LongTermConfig = LongTermConfig()
    utility: UtilityConfig = UtilityConfig()
    condenser: CondenserConfig = CondenserConfig()
    data_dir: Path = Field(default_factory=lambda: default_data_dir() / "memory")


class AgentConfig(StrictModel):
    """Top-level configuration of a RoboMemory agent."""

    model: ModelConfig = ModelConfig()
    memory: MemoryConfig = MemoryConfig()
    max_steps: int = Field(default=30, ge=1, le=100_000)
    max_plan_len: int = Field(
        default=3, ge=1, le=50, description="Actions in one plan (first + later)."
    )
    min_plan_len: int = Field(
        default=1,
        ge=1,
        le=50,
        description="Actions a plan names at least (first + later; at most max_plan_len). "
        "Above 1 the planner plans ahead, as the paper's does, and the critic checks the "
        "later steps; the 1.5B model, left free, names one.",
    )
    n_queries: int = Field(default=4, ge=1, le=8, description="Queries per step (paper: 4-5).")
    max_candidates: int | None = Field(
        default=20,
        ge=1,
        description="Actions possible now shown to the planner, critic and baselines, best "
        "ranked first (None: all).",
    )
    table_decides: bool = Field(
        default=True,
        description="A step where the effects table leaves no choice (one "
        "candidate does or enables what is left, grounding.table.decided) is taken without "
        "asking the model, and elsewhere the model chooses only among the candidates the "
        "table leaves open (grounding.table.choice).",
    )
    critic_enabled: bool = True
    # Bounds on what enters state, checkpoints, memory and prompts from outside (a world, a
    # caller): longer texts are cut, more images or names are left out.
    max_task_chars: int = Field(
        default=64_000,
        ge=100,
        le=1_000_000,
        description="Longest task accepted; a longer one is refused. A task is kept whole in "
        "state and memory; prompts show a long one condensed, its first and last sentences "
        "verbatim (core.task_view).",
    )
    max_text_chars: int = Field(
        default=8_000, ge=200, le=1_000_000, description="One observation or action result."
    )
    max_images: int = Field(default=4, ge=0, le=64, description="Images of one observation.")
    max_image_chars: int = Field(
        default=4_000_000, ge=1_000, le=64_000_000, description="One image's data URL."
    )
    robot_id: str = Field(default="default", description="Whose memories: [A-Za-z0-9_-].")

    def plan_exactly(self, n: int) -> None:
        """Make every plan ``n`` actions (min and max plan length both ``n``)."""
        self.max_plan_len = n  # first: min_plan_len may not exceed it
        self.min_plan_len = n

    @model_validator(mode="after")
    def _plan_lengths(self) -> AgentConfig:
        if self.min_plan_len > self.max_plan_len:
            raise ValueError(
                f"min_plan_len {self.min_plan_len} exceeds max_plan_len {self.max_plan_len}"
            )
        return self

    @field_validator("robot_id")
    @classmethod
    def _robot_id(cls, value: str) -> str:
        return check_robot_id(value)

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
