"""Structured model calls: json_schema output, bounded retries, a safe fallback, usage metering."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

# Errors a model call may raise that are worth a retry; anything else is a bug and propagates.
RETRYABLE = (
    openai.APIError,
    openai.LengthFinishReasonError,  # the answer hit max_tokens: unparseable, try again

    httpx.HTTPError,
    ValidationError,
    ValueError,
    TimeoutError,
    ConnectionError,
)


@dataclass
class Usage:
    """Model usage and wall time of one node (summed over its calls)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0
    seconds: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.fallbacks += other.fallbacks
        self.seconds += other.seconds

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "fallbacks": self.fallbacks,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class CallResult(Generic[T]):
    value: T
    ok: bool
    error: str | None = None


def build_messages(system: str, user: str, images: Sequence[str] = ()) -> list[BaseMessage]:
    """System + user messages; images (data URLs) go as image parts for a VLM."""
    if images:
        content: list[dict[str, Any]] = [{"type": "text", "text": user}]
        content += [{"type": "image_url", "image_url": {"url": url}} for url in images]
        return [SystemMessage(content=system), HumanMessage(content=content)]
    return [SystemMessage(content=system), HumanMessage(content=user)]


class StructuredLLM:
    """Wraps a LangChain chat model for schema-constrained calls shared by all nodes."""

    def __init__(self, chat_model: BaseChatModel, max_retries: int = 2, vision: bool = False):
        self.chat_model = chat_model
        self.max_retries = max_retries
        self.vision = vision
        self._runnables: dict[type[BaseModel], Any] = {}
        self._lock = threading.Lock()

    def _runnable(self, schema: type[BaseModel]) -> Any:
        with self._lock:
            if schema not in self._runnables:
                self._runnables[schema] = self.chat_model.with_structured_output(
                    schema, method="json_schema", include_raw=True
                )
            return self._runnables[schema]

    def for_node(self, node: str) -> NodeLLM:
        """A metered view of this model for one node invocation."""
        return NodeLLM(self, node)


@dataclass
class NodeLLM:
    """The model as one node sees it: every call is metered into ``usage``."""

    llm: StructuredLLM
    node: str
    usage: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def call(
        self,
        schema: type[T],
        system: str,
        user: str,
        fallback: T | Callable[[], T],
        images: Sequence[str] = (),
    ) -> CallResult[T]:
        """Ask for ``schema``; retry on unparseable output; return ``fallback`` when all fail."""
        messages = build_messages(system, user, images if self.llm.vision else ())
        runnable = self.llm._runnable(schema)
        error: str | None = None
        for attempt in range(self.llm.max_retries + 1):
            started = time.perf_counter()
            try:
                out = runnable.invoke(messages)
            except RETRYABLE as exc:
                error = f"{type(exc).__name__}: {exc}"
                self._meter(time.perf_counter() - started, None)
                log.warning("%s: model call failed (try %d): %s", self.node, attempt + 1, error)
                continue
            self._meter(time.perf_counter() - started, out.get("raw"))
            parsed = out.get("parsed")
            if isinstance(parsed, schema):
                return CallResult(parsed, ok=True)
            if isinstance(parsed, dict):
                try:
                    return CallResult(schema.model_validate(parsed), ok=True)
                except ValidationError as exc:
                    error = str(exc)
            else:
                error = str(out.get("parsing_error") or "no parsed output")
            log.warning("%s: unparseable answer (try %d): %s", self.node, attempt + 1, error)
        with self._lock:
            self.usage.fallbacks += 1
        log.warning("%s: falling back after %d tries", self.node, self.llm.max_retries + 1)
        value = fallback() if callable(fallback) else fallback
        return CallResult(value, ok=False, error=error)

    def _meter(self, seconds: float, raw: Any) -> None:
        meta = getattr(raw, "usage_metadata", None) or {}
        with self._lock:
            self.usage.calls += 1
            self.usage.seconds += seconds
            self.usage.prompt_tokens += int(meta.get("input_tokens", 0) or 0)
            self.usage.completion_tokens += int(meta.get("output_tokens", 0) or 0)
