"""Runtime context: the live clients a run needs, passed to nodes through LangGraph's Runtime.

They are never stored in state (a Qdrant client in state would break checkpointing). When a
field is missing — as under `langgraph dev`, where no Python caller builds them — the clients
are built once per process from the configuration and the environment:

- ``ROBOMEMORY_MODEL_PROVIDER`` (local | openai), with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``;
- ``ROBOMEMORY_GAME``: a TextWorld game path or bundled game name (default: the smallest one);
- ``ROBOMEMORY_HOME``: where memories live.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

from robomemory.config import AgentConfig

_lock = threading.Lock()
_defaults: dict[str, Any] = {}


@dataclass
class AgentContext:
    """Live clients for one run: model, memory system, executor, configuration."""

    config: AgentConfig = field(default_factory=AgentConfig)
    llm: Any = None  # robomemory.structured.StructuredLLM
    memory: Any = None  # robomemory.memory.system.MemorySystem
    executor: Any = None  # robomemory.executors.base.Executor


def _default(key: str, build) -> Any:
    with _lock:
        if key not in _defaults:
            _defaults[key] = build()
        return _defaults[key]


def resolve(context: AgentContext | dict | None) -> AgentContext:
    """Fill in missing live clients from configuration (once per process)."""
    if isinstance(context, dict):
        cfg = context.get("config")
        context = AgentContext(
            config=AgentConfig.model_validate(cfg) if cfg else AgentConfig(),
            llm=context.get("llm"),
            memory=context.get("memory"),
            executor=context.get("executor"),
        )
    ctx = context or AgentContext()
    if not isinstance(ctx.config, AgentConfig):  # a server passes the JSON it was given
        ctx.config = AgentConfig.model_validate(ctx.config or {})
    if ctx.llm is None:
        from robomemory.models import make_llm

        model_cfg = ctx.config.model
        if os.environ.get("ROBOMEMORY_MODEL_PROVIDER"):
            provider = os.environ["ROBOMEMORY_MODEL_PROVIDER"]
            model_cfg = model_cfg.model_copy(update={"provider": provider})
        ctx.llm = _default(f"llm:{model_cfg.model_dump_json()}", lambda: make_llm(model_cfg))
    if ctx.memory is None:
        from robomemory.memory.system import MemorySystem
        from robomemory.models import make_embedder

        cfg = ctx.config

        def open_memory():
            return MemorySystem.open(cfg.memory, make_embedder(cfg.model), cfg.robot_id)

        ctx.memory = _default(f"memory:{cfg.robot_id}:{cfg.memory.data_dir}", open_memory)
    if ctx.executor is None:
        from robomemory.executors.envs.textworld import TextWorldExecutor, resolve_game

        game = resolve_game(os.environ.get("ROBOMEMORY_GAME"))
        ctx.executor = _default(f"executor:{game}", lambda: TextWorldExecutor(game))
    return ctx
