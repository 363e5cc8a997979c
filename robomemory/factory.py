"""The one place that builds live clients — model, embedder, memory, executor, checkpointer —
from the operator's configuration: Python arguments, or the operator's environment.

Nodes never build clients; they read ``runtime.context`` (see robomemory.context).

Environment read by :func:`operator_settings` (Studio / a served graph):

- ``ROBOMEMORY_GAME`` (required): a TextWorld game path or bundled game name;
- ``ROBOMEMORY_MODEL_PROVIDER`` (local | openai | fake: no weights, the first candidate),
  with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``ROBOMEMORY_MODEL`` for ``openai``;
  ``ROBOMEMORY_EMBEDDER`` (minilm | fake);
- ``ROBOMEMORY_HOME``: where memories live (``~/.robomemory``); ``ROBOMEMORY_ROBOT_ID``;
- ``ROBOMEMORY_ABLATE``: comma list of ablations fixed for the server's life;
- ``ROBOMEMORY_MEMORY_URL``: a fleet's shared long-term memory (``postgresql://``, pgvector),
  read wherever memory opens (``memory/stores/vectors.shared_url``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import ValidationError

from robomemory.config import AgentConfig, ModelConfig, config_error_line
from robomemory.context import AgentContext, MissingClientError
from robomemory.core import Executor
from robomemory.errors import redact
from robomemory.locks import acquire_robot
from robomemory.memory.damage import checked_sqlite
from robomemory.memory.system import MemorySystem
from robomemory.models import make_embedder, make_llm
from robomemory.structured import StructuredLLM

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def build_llm(cfg: ModelConfig, llm: StructuredLLM | BaseChatModel | None = None) -> StructuredLLM:
    """The StructuredLLM for ``cfg``; a given LangChain chat model is wrapped with its limits."""
    if isinstance(llm, StructuredLLM):
        return llm
    return make_llm(cfg, chat_model=llm)


def build_memory(config: AgentConfig, embedder: Embeddings | None = None) -> MemorySystem:
    """Open ``config.robot_id``'s memories under ``config.memory.data_dir``."""
    embedder = embedder or make_embedder(config.model)
    return MemorySystem.open(config.memory, embedder, config.robot_id)


def build_checkpointer(
    target: BaseCheckpointSaver | str | Path | None, data_dir: str | Path
) -> BaseCheckpointSaver:
    """A checkpointer: a given saver; a ``postgresql://`` URL (the fleet's shared database);
    a SQLite file (a path or ``sqlite:///PATH``); or ``None`` for ``DATA_DIR/checkpoints.sqlite``.
    Another scheme, or a bad URL, is a one-line ValueError that shows no password."""
    if isinstance(target, BaseCheckpointSaver):
        return target
    if target is None:
        return sqlite_checkpointer(Path(data_dir) / "checkpoints.sqlite")
    kind, where = checkpoint_target(str(target))
    if kind == "postgres":
        return postgres_checkpointer(where)
    return sqlite_checkpointer(where)


def checkpoint_target(target: str) -> tuple[str, str]:
    """``("postgres", URL)`` or ``("sqlite", PATH)`` for a checkpoint store's name."""
    scheme, sep, rest = target.partition("://")
    if not sep:
        return "sqlite", target
    if target.startswith(POSTGRES_SCHEMES):
        return "postgres", target
    if scheme == "sqlite" and rest.startswith("/") and len(rest) > 1:
        return "sqlite", rest[1:]  # sqlite:///relative.db, sqlite:////absolute.db
    if scheme == "sqlite":
        raise ValueError("a SQLite checkpoint URL is sqlite:///PATH (sqlite:////ABSOLUTE/PATH)")
    shown = repr(redact(scheme)[:20]) if URL_SCHEME.fullmatch(scheme) else "an unknown scheme"
    raise ValueError(
        f"checkpoint store {shown}: give a postgresql:// URL, sqlite:///PATH or a file path"
    )


def sqlite_checkpointer(path: str | Path) -> SqliteSaver:
    """A SqliteSaver on a file (its folder is created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remedy = "restore it from a backup; moved aside, unfinished runs cannot be resumed"
    return SqliteSaver(checked_sqlite(path, "checkpoint database", remedy))


def postgres_checkpointer(url: str) -> BaseCheckpointSaver:
    """LangGraph's PostgresSaver on ``url`` (tables created if needed), with timeouts
    (``memory/stores/pg_checkpoints``); needs the postgres extra."""
    try:
        from robomemory.memory.stores.pg_checkpoints import postgres_checkpointer as saver_on
    except ImportError as exc:  # an optional extra
        raise MissingClientError(
            "a postgresql:// checkpointer needs the postgres extra: pip install -e '.[postgres]'"
        ) from exc
    return saver_on(url)


def build_context(
    config: AgentConfig,
    executor: Executor | None,
    *,
    llm: StructuredLLM | BaseChatModel | None = None,
    embedder: Embeddings | None = None,
    memory: MemorySystem | None = None,
) -> AgentContext:
    """The live clients of one robot. Holds the robot's lock for this process first, so a
    second process on the same robot fails here, before any store is opened."""
    if executor is None:
        raise MissingClientError(
            "no executor: pass the world or robot to act in, e.g. "
            "TextWorldExecutor(resolve_game('cooking_1room')) or RobotExecutor.from_urls(...)"
        )
    acquire_robot(config.memory.data_dir, config.robot_id)
    return AgentContext(
        config=config,
        llm=build_llm(config.model, llm),
        memory=memory if memory is not None else build_memory(config, embedder),
        executor=executor,
    )


@dataclass(frozen=True)
class OperatorSettings:
    """What the operator's environment says to serve: a configuration and a game."""

    config: AgentConfig
    game: Path


def operator_settings(environ: Mapping[str, str]) -> OperatorSettings:
    """Read the operator's environment (see the module docstring); one-line errors."""
    # loads textworld (heavy)
    from robomemory.executors.envs.textworld_games import list_bundled_games, resolve_game

    game = environ.get("ROBOMEMORY_GAME", "").strip()
    if not game:
        raise MissingClientError(
            "set ROBOMEMORY_GAME to the TextWorld game to serve (a .z8/.ulx path or a bundled "
            f"name: {', '.join(list_bundled_games())})"
        )
    model: dict[str, Any] = {}
    if environ.get("ROBOMEMORY_MODEL_PROVIDER"):
        model["provider"] = environ["ROBOMEMORY_MODEL_PROVIDER"]
    if environ.get("ROBOMEMORY_EMBEDDER"):
        model["embedder"] = environ["ROBOMEMORY_EMBEDDER"]
    values: dict[str, Any] = {"model": model}
    if environ.get("ROBOMEMORY_ROBOT_ID"):
        values["robot_id"] = environ["ROBOMEMORY_ROBOT_ID"]
    if environ.get("ROBOMEMORY_HOME"):
        values["memory"] = {"data_dir": Path(environ["ROBOMEMORY_HOME"]) / "memory"}
    try:
        config = AgentConfig.model_validate(values)
    except ValidationError as exc:
        raise ValueError(config_error_line(exc)) from None
    ablate = [a.strip() for a in environ.get("ROBOMEMORY_ABLATE", "").split(",") if a.strip()]
    return OperatorSettings(config.ablate(ablate) if ablate else config, resolve_game(game))


def context_from_env(environ: Mapping[str, str]) -> AgentContext:
    """Live clients for a served graph, built from the operator's environment. The embedded
    model starts at a run's first model call, not here: a server loading the graph (``langgraph
    dev``) loads no model; what it needs installed is checked here."""
    from robomemory.executors.envs.textworld import TextWorldExecutor  # loads textworld (heavy)

    settings = operator_settings(environ)
    llm = make_llm(settings.config.model, lazy=True)
    return build_context(settings.config, TextWorldExecutor(settings.game), llm=llm)
