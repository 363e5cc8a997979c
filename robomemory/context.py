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
    """What a run's context may change: agent behaviour only, never clients or locations.
    A setting left out keeps the operator's value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Strict: true is no step count (a bool would pass as 1).
    max_steps: StrictInt | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="The most actions the agent takes; the episode ends there "
        "(end_reason max_steps). The operator's default is 30.",
    )
    max_plan_len: StrictInt | None = Field(
        default=None,
        ge=1,
        le=50,
        description="The most actions one plan names (the first and those after it). The "
        "operator's default is 3.",
    )
    n_queries: StrictInt | None = Field(
        default=None,
        ge=1,
        le=8,
        description="How many memory queries the agent asks each step (the paper: 4-5). The "
        "operator's default is 4.",
    )
    ablate: tuple[RunAblation, ...] = Field(
        default=(),
        description="Memory modules to switch off for this run: spatial (the map of places "
        "and things), temporal (the summary of recent steps), condenser (the condensed "
        "recall). The others (critic, semantic, episodic, utility) are fixed when the server "
        "starts (ROBOMEMORY_ABLATE).",
    )


ALLOWED = ", ".join([*RunTuning.model_fields])


class _EveryKey(dict):
    """The ``properties`` of RunContext's JSON schema: they name what a run may set, and hold
    every key. The LangGraph API keeps only the context keys its schema's properties hold
    (``key in properties``: langgraph_api.stream._filter_context_by_schema), so a key they do
    not name would be dropped, unseen; this way it reaches RunContext, which refuses it.
    Serialized, it is the plain object of the named properties."""

    def __contains__(self, key: object) -> bool:
        return True


def _listed_properties(schema: dict[str, Any]) -> None:
    """Name the flat tunings as properties, each with its description (the form Studio
    shows), and ``config`` after them: the same settings nested."""
    flat = RunTuning.model_json_schema()
    schema.setdefault("$defs", {}).update(flat.get("$defs", {}))
    nested = schema.pop("properties", {})
    nested["config"] = {
        **nested.get("config", {}),
        "default": {},
        "description": 'The same settings nested ({"config": {"max_steps": 5}}), as an API '
        "client may send them; give each setting once, flat or here.",
    }
    schema["properties"] = {**flat["properties"], **nested}


def _unset(value: Any) -> bool:
    """A form's unset field: null or an empty list tunes nothing."""
    return value is None or value == [] or value == ()


class RunContext(BaseModel):
    """A run's settings, its context: ``{"max_steps": 5}`` (flat, as Studio's form sends them)
    or ``{"config": {"max_steps": 5}}``. Anything else is refused: the model, its endpoint and
    key, the data folder and the robot are the operator's, fixed when the server starts."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_listed_properties)

    config: RunTuning = RunTuning()

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The JSON schema the LangGraph API serves and filters a run's context with; its
        ``properties`` hold every key (:class:`_EveryKey`), so none is dropped unrefused."""
        schema = super().model_json_schema(*args, **kwargs)
        if isinstance(schema.get("properties"), dict):
            schema["properties"] = _EveryKey(schema["properties"])
        return schema

    @model_validator(mode="before")
    @classmethod
    def _only_tuning(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"a run's context must be an object, not {type(data).__name__}")
        tunings = set(data) & set(RunTuning.model_fields)
        # a form sends unset fields as null or [] (flat or nested): those tune nothing
        flat = {k: data[k] for k in tunings if not _unset(data[k])}
        extra = sorted(set(data) - {"config"} - tunings)
        inner = data.get("config") or {}
        if isinstance(inner, dict):
            extra += [f"config.{k}" for k in sorted(set(inner) - set(RunTuning.model_fields))]
            inner = {k: v for k, v in inner.items() if not _unset(v)}
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
        return {"config": inner} if isinstance(inner, dict) else data


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
