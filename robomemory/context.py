"""Runtime context: the live clients a run needs, passed to nodes through LangGraph's Runtime.

Clients are never stored in state (a Qdrant client in state would break checkpointing) and
never built here: :mod:`robomemory.factory` builds them from the operator's configuration.
A node gets them with :func:`live_context`:

- a Python caller (``build_agent``) passes a complete :class:`AgentContext`;
- a server (``langgraph dev``, the LangGraph API) passes the JSON a client sent. That JSON may
  only *tune* the run through :class:`RunContext` (an allow-list: steps, plan length, queries,
  per-run ablations); the clients come from the context the operator's process installed with
  :func:`serve` (``graphs/studio.py`` does, at import). Anything else is refused: a caller can
  never choose the model endpoint, the API-key variable, the data folder or the robot.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, WithJsonSchema, model_validator

from robomemory.config import AgentConfig
from robomemory.core import Executor
from robomemory.memory.system import MemorySystem
from robomemory.structured import StructuredLLM

# Ablations a single run may switch off: the nodes read these flags from the run's config.
# Others (critic, semantic, episodic, utility) shape the graph or the memory system built by
# the operator, so they are fixed when the server starts (ROBOMEMORY_ABLATE).
RunAblation = Literal["spatial", "temporal", "condenser"]
RUN_ABLATIONS = frozenset(RunAblation.__args__)


class MissingClientError(RuntimeError):
    """A node ran without the live clients it needs (no silent defaults are built)."""


Client = TypeVar("Client")
# A live client, or None before one is given. LangGraph derives a JSON schema from the context
# class (get_context_jsonschema); a client has none, so it shows as an unconstrained value.
Live = Annotated[Client | None, WithJsonSchema({})]


@dataclass
class AgentContext:
    """Live clients for one run: model, memory system, executor, configuration."""

    __pydantic_config__ = ConfigDict(arbitrary_types_allowed=True)

    config: AgentConfig = field(default_factory=AgentConfig)
    llm: Live[StructuredLLM] = None
    memory: Live[MemorySystem] = None
    executor: Live[Executor] = None

    def missing(self) -> list[str]:
        """Names of the clients this context lacks."""
        clients = {"llm": self.llm, "memory": self.memory, "executor": self.executor}
        return [name for name, client in clients.items() if client is None]

    def tuned(self, tuning: RunTuning) -> AgentContext:
        """The same clients with the run's allowed tuning applied to a copy of the config."""
        values = tuning.model_dump(exclude_none=True, exclude={"ablate"})
        config = self.config.model_copy(deep=True)
        for name, value in values.items():
            setattr(config, name, value)  # validated on assignment
        if tuning.ablate:
            config = config.ablate(list(tuning.ablate))
        return replace(self, config=config)


class RunTuning(BaseModel):
    """What a run's context may change: agent behaviour only, never clients or locations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Strict: true is no step count (a bool would pass as 1).
    max_steps: StrictInt | None = Field(default=None, ge=1, le=10_000)
    max_plan_len: StrictInt | None = Field(default=None, ge=1, le=50)
    n_queries: StrictInt | None = Field(default=None, ge=1, le=8)
    ablate: tuple[RunAblation, ...] = ()


ALLOWED = ", ".join([*RunTuning.model_fields])


def _unlisted_properties(schema: dict[str, Any]) -> None:
    """Name ``config`` and the flat tunings as patterns, not properties: the LangGraph API drops
    context keys its schema's properties do not list, and an unknown key dropped would not be
    refused."""
    flat = RunTuning.model_json_schema()
    schema.setdefault("$defs", {}).update(flat.get("$defs", {}))
    props = {**flat["properties"], **schema.pop("properties", {})}
    schema["patternProperties"] = {f"^{k}$": v for k, v in props.items()}


class RunContext(BaseModel):
    """The JSON a server passes as a run's context: ``{"config": {"max_steps": 5}}``, or the
    same tunings flat (``{"max_steps": 5}``), as Studio's context form sends them."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_unlisted_properties)

    config: RunTuning = RunTuning()

    @model_validator(mode="before")
    @classmethod
    def _only_tuning(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"a run's context must be an object, not {type(data).__name__}")
        tunings = set(data) & set(RunTuning.model_fields)
        # a form sends unset fields as null or []: those tune nothing
        flat = {k: data[k] for k in tunings if data[k] not in (None, [], ())}
        extra = sorted(set(data) - {"config"} - tunings)
        inner = data.get("config") or {}
        if isinstance(inner, dict):
            extra += [f"config.{k}" for k in sorted(set(inner) - set(RunTuning.model_fields))]
            twice = sorted(k for k in flat if k in inner and inner[k] != flat[k])
            if twice:
                raise ValueError(
                    f"a run's context sets {', '.join(twice)} both flat and under config "
                    "with different values: give each once"
                )
            inner = {**inner, **flat}
            ablate = inner.get("ablate") or []
            if isinstance(ablate, list | tuple):
                fixed = sorted({str(a) for a in ablate} - RUN_ABLATIONS)
                extra += [f"ablation {a!r} (fixed when the server starts)" for a in fixed]
        if extra:
            raise ValueError(
                f"a run's context may not set {', '.join(extra)}: it may only tune {ALLOWED} "
                f"(ablate: {', '.join(sorted(RUN_ABLATIONS))}) "
                "(models, keys, data folders and robots are the operator's configuration)"
            )
        return {"config": inner} if tunings else data


_served: AgentContext | None = None
_served_lock = threading.Lock()


def serve(context: AgentContext) -> None:
    """Install the operator's context for runs that come through a server (Studio, API)."""
    global _served
    missing = context.missing()
    if missing:
        raise MissingClientError(f"cannot serve a context without {', '.join(missing)}")
    with _served_lock:
        _served = context


def served() -> AgentContext | None:
    """The operator's context installed with :func:`serve`, if any (Studio's store reads it)."""
    with _served_lock:
        return _served


def live_context(context: object) -> AgentContext:
    """The complete context a node works with (see the module docstring); never builds one."""
    if isinstance(context, AgentContext) and not isinstance(context.config, dict):
        missing = context.missing()
        if missing:
            raise MissingClientError(
                f"the run's context has no {', '.join(missing)}: build the agent with "
                "robomemory.build_agent(config, executor, ...) (robomemory.factory)"
            )
        return context
    if isinstance(context, AgentContext):  # a server's JSON coerced into the dataclass
        context = {k: v for k, v in vars(context).items() if v is not None}
    run = context if isinstance(context, RunContext) else RunContext.model_validate(context or {})
    with _served_lock:
        base = _served
    if base is None:
        raise MissingClientError(
            "no live clients for this run: build the agent with robomemory.build_agent, or "
            "serve robomemory.graphs.studio:graph (its clients come from the operator's env)"
        )
    return base.tuned(run.config)
