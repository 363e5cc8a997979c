"""Structured model calls: json_schema output, bounded retries, a safe fallback, usage metering;
a model that cannot answer stops the run (:class:`ModelUnavailableError`) instead."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, TypeVar

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_openai.chat_models.base import BaseChatOpenAI
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

# A call that ran out of time: retrying would reprocess the same slow prompt, so it is not retried.
TIMEOUTS = (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)

# Errors a model call may raise that are worth a retry; anything else is a bug and propagates.
RETRYABLE = (
    openai.APIError,
    openai.LengthFinishReasonError,  # the answer hit max_tokens: unparseable, try again
    httpx.HTTPError,
    ValidationError,
    ValueError,
    TimeoutError,
    ConnectionError,
    RecursionError,  # an answer nested deeper than a JSON parser goes: unparseable
)

# What an OpenAI client raises reading a body that is no chat completion (an HTML page, no
# or empty ``choices``); for such a client it is a failed try (MalformedResponseError).
MALFORMED = (AttributeError, IndexError, KeyError, TypeError)

# Failed tries in which the model did answer (an unparseable or cut answer): the endpoint works.
ANSWERED = (
    ValidationError,
    openai.LengthFinishReasonError,
    openai.ContentFilterFinishReasonError,
    RecursionError,
)

# The default of ModelConfig.max_failed_calls.
MAX_FAILED_CALLS = 3


class ModelUnavailableError(Exception):
    """The model cannot answer: its endpoint refuses connections, knows no such model or path
    (HTTP 404), refuses the key (401, 403), or ``max_failed_calls`` structured calls in a row got
    no answer. Raised past every node's fallback: the run stops, its last checkpoint kept for a
    resume, instead of playing (and learning) on fallback decisions. Deliberately no
    RuntimeError, ValueError or OSError, so no handler of a bad input or a failed episode
    takes it for one."""

    exit_status = 3  # of a command it stops (`robomemory run`, `robomemory bench`)

    def __init__(self, endpoint: str, reason: str):
        self.endpoint = endpoint
        self.reason = reason
        super().__init__(f"model unavailable at {endpoint}: {reason}")

    def __reduce__(self) -> tuple:
        return (type(self), (self.endpoint, self.reason))


class MalformedResponseError(ValueError):
    """A response of the endpoint that is no chat completion (HTML, no choices): a failed try."""


def unavailable_reason(exc: BaseException) -> str | None:
    """Why ``exc`` says the endpoint will answer no call (connection refused, HTTP 401, 403,
    404), or None: a time-out, a 429 or a 5xx may pass, and are retried."""
    if isinstance(exc, openai.AuthenticationError):
        return f"the endpoint refused the API key (HTTP 401: {_status_message(exc)})"
    if isinstance(exc, openai.PermissionDeniedError):
        return f"the endpoint denied access (HTTP 403: {_status_message(exc)})"
    if isinstance(exc, openai.NotFoundError):
        return f"no such model or path there (HTTP 404: {_status_message(exc)})"
    if isinstance(exc, TIMEOUTS):
        return None
    if any(isinstance(cause, ConnectionRefusedError) for cause in _causes(exc)):
        return "connection refused (nothing listens there)"
    return None


def _causes(exc: BaseException, limit: int = 8) -> list[BaseException]:
    """``exc`` and what it was raised from, outermost first (bounded)."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(out) < limit and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _status_message(exc: openai.APIStatusError) -> str:
    """The server's own words of an HTTP error, on one line."""
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return one_line(message if isinstance(message, str) and message else exc.message, 200)


def one_line(text: str, limit: int = 500) -> str:
    """``text`` with its whitespace runs as single spaces, cut to ``limit`` characters."""
    return " ".join(str(text).split())[:limit]


# Deeper than any response schema nests; a deeper answer is refused before a parser recurses.
MAX_ANSWER_DEPTH = 32


class AnswerError(ValueError):
    """A model answer that no schema could take: nested too deeply, or beyond the parser."""


def json_depth(text: str, limit: int = MAX_ANSWER_DEPTH) -> int:
    """How deeply ``text``'s JSON arrays and objects nest (strings skipped); stops past
    ``limit``, so a hostile answer costs one scan."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_answer(schema: type[T], text: str) -> T:
    """``text`` validated as ``schema``: the one parse of a model answer (every schema, every
    path); too deep an answer raises ``AnswerError`` like any other invalid answer."""
    depth = json_depth(text)
    if depth > MAX_ANSWER_DEPTH:
        raise AnswerError(f"answer nested more than {MAX_ANSWER_DEPTH} deep")
    try:
        return schema.model_validate_json(text)
    except RecursionError:
        raise AnswerError("answer nested too deeply to parse") from None


@dataclass
class Usage:
    """Model usage and wall time of one node (summed over its calls)."""

    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0
    timeouts: int = 0
    reused: int = 0  # answers given again for a call identical to an earlier one, no model call
    seconds: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.reused += other.reused
        self.prompt_tokens += other.prompt_tokens
        self.cached_tokens += other.cached_tokens
        self.completion_tokens += other.completion_tokens
        self.fallbacks += other.fallbacks
        self.timeouts += other.timeouts
        self.seconds += other.seconds

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "fallbacks": self.fallbacks,
            "timeouts": self.timeouts,
            "reused": self.reused,
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


SlotOf = Callable[[str], int | None]
# None: no grammar of its own for that server (its response_format is sent instead)
GrammarOf = Callable[[dict[str, Any]], str | None]


class StructuredLLM:
    """Wraps a LangChain chat model for schema-constrained calls shared by all nodes.

    ``slot_of`` maps a response schema's name to a server slot (llama.cpp's ``id_slot``): each
    kind of prompt then returns to the slot that holds its last prompt, so the shared prefix
    (system prompt, task, stable memory) is reused from the KV cache instead of recomputed.
    ``deadline_s`` bounds one call with all its retries; a timed-out attempt is not retried.
    ``grammar_of`` turns a JSON schema into the server's grammar (llama.cpp): requests then
    carry that grammar for compact JSON (:func:`compact_json_schema`) instead of a
    ``response_format``, which llama.cpp's chat path converts without its whitespace option
    (a ``grammar_of`` that answers None: the ``response_format`` is sent).
    ``reuse_answers``: how many first-try answers to keep for a greedy model (temperature 0),
    each given again, without a model call, to a call identical in schema, prompt and images
    (0: every call asks the model). LangChain's own cache returns the cached call's token
    counts, which would meter a reuse as a model call.
    ``max_failed_calls``: the call that makes that many calls in a row without an answer (every
    try failed without one) raises :class:`ModelUnavailableError` instead of giving its
    fallback; a refused connection or an HTTP 401, 403 or 404 raises it at once.
    """

    def __init__(
        self,
        chat_model: BaseChatModel,
        max_retries: int = 2,
        vision: bool = False,
        retry_temperature: float = 0.7,
        slot_of: SlotOf | None = None,
        deadline_s: float = 600.0,
        grammar_of: GrammarOf | None = None,
        reuse_answers: int = 0,
        max_failed_calls: int = MAX_FAILED_CALLS,
    ):
        self.chat_model = chat_model
        self.max_failed_calls = max_failed_calls
        self._failed_in_a_row = 0
        # an OpenAI client raises MALFORMED errors on a body that is no chat completion
        self._openai_client = isinstance(chat_model, BaseChatOpenAI)
        self.reuse_answers = reuse_answers
        self._answers: OrderedDict[tuple, BaseModel] = OrderedDict()
        self.max_retries = max_retries
        self.deadline_s = deadline_s
        self.vision = vision
        self.retry_temperature = retry_temperature
        self.slot_of = slot_of
        self.grammar_of = grammar_of
        self._retry_model = self._with_temperature(chat_model, retry_temperature)
        self._runnables: dict[tuple[type[BaseModel], bool, int | None], Any] = {}
        self._lock = threading.Lock()
        self._calls: deque[dict[str, Any]] = deque(maxlen=MAX_CALLS_KEPT)

    @staticmethod
    def _with_temperature(model: BaseChatModel, temperature: float) -> BaseChatModel:
        """A copy sampling at ``temperature``: a greedy model would repeat a bad answer."""
        current = getattr(model, "temperature", None)
        if current is None or current >= temperature:
            return model
        return model.model_copy(update={"temperature": temperature})

    def _runnable(self, schema: type[BaseModel], retry: bool = False) -> Any:
        slot = self.slot_of(schema.__name__) if self.slot_of is not None else None
        with self._lock:
            key = (schema, retry, slot)
            if key not in self._runnables:
                model = self._retry_model if retry else self.chat_model
                if slot is not None:
                    model = _pinned(model, slot)
                grammar = None
                if self.grammar_of is not None:
                    grammar = self.grammar_of(compact_json_schema(schema))
                if grammar is not None:
                    self._runnables[key] = _grammar_runnable(model, schema, grammar)
                else:
                    self._runnables[key] = model.with_structured_output(
                        schema, method="json_schema", include_raw=True
                    )
            return self._runnables[key]

    def reused(self, key: tuple) -> BaseModel | None:
        """A copy of the kept answer to the call ``key``, or None."""
        with self._lock:
            if key not in self._answers:
                return None
            self._answers.move_to_end(key)
            return self._answers[key].model_copy(deep=True)

    def keep(self, key: tuple, answer: BaseModel) -> None:
        """Keep a first-try answer (the oldest kept is dropped past ``reuse_answers``)."""
        with self._lock:
            self._answers[key] = answer.model_copy(deep=True)
            while len(self._answers) > self.reuse_answers:
                self._answers.popitem(last=False)

    def note_call(self, record: dict[str, Any]) -> None:
        """Keep one call's record until :meth:`drain_calls` takes it (the step's trace)."""
        with self._lock:
            self._calls.append(record)

    def drain_calls(self) -> list[dict[str, Any]]:
        """The calls made since the last drain, oldest first (a step's model calls)."""
        with self._lock:
            out = list(self._calls)
            self._calls.clear()
        return out

    def for_node(self, node: str) -> NodeLLM:
        """A metered view of this model for one node invocation."""
        return NodeLLM(self, node)

    @property
    def endpoint(self) -> str:
        """Where the model is asked, for a message: its URL and model name."""
        model = self.chat_model
        client = getattr(model, "root_client", None)
        url = getattr(client, "base_url", None) or getattr(model, "openai_api_base", None)
        where = str(url).rstrip("/") if url else f"the {model._llm_type} chat model"
        name = getattr(model, "model_name", None)
        return f"{where} (model {name})" if name else where

    def ask(self, runnable: Any, messages: list[BaseMessage]) -> Any:
        """One try: ``runnable`` on ``messages``; a body an OpenAI client cannot read as a
        chat completion (an HTML page, no or empty ``choices``) is a MalformedResponseError."""
        try:
            return runnable.invoke(messages)
        except MALFORMED as exc:
            if not self._openai_client:
                raise  # another chat model's bug or a test's scripted crash: not an answer
            raise MalformedResponseError(
                f"the endpoint's response is no chat completion ({type(exc).__name__}: "
                f"{one_line(str(exc), 200)})"
            ) from exc

    def unavailable(self, reason: str) -> ModelUnavailableError:
        """The error that stops the run, naming this model's endpoint."""
        return ModelUnavailableError(self.endpoint, reason)

    def settle(self, answered: bool, error: str | None = None) -> None:
        """Count a finished call: an answer (even an unparseable one) resets the count of calls
        in a row without one; the call that reaches ``max_failed_calls`` raises (and starts the
        count again: a resumed or next run gets as many calls before it stops)."""
        with self._lock:
            self._failed_in_a_row = 0 if answered else self._failed_in_a_row + 1
            failed = self._failed_in_a_row
            if failed >= self.max_failed_calls:
                self._failed_in_a_row = 0
        if failed >= self.max_failed_calls:
            raise self.unavailable(
                f"{failed} model calls in a row got no answer; the last: {one_line(error or '')}"
            )


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
        """Ask for ``schema``; retry on unparseable output; return ``fallback`` when all fail
        or when the call's total time (``deadline_s``) is spent (no try starts after it).
        Raises :class:`ModelUnavailableError`, past the fallback, when the model cannot answer:
        a refused connection, HTTP 401/403/404, or ``max_failed_calls`` calls in a row
        without an answer (this one included)."""
        messages = build_messages(system, user, images if self.llm.vision else ())
        key = None
        if self.llm.reuse_answers:
            key = (_schema_key(schema), system, user, tuple(images) if self.llm.vision else ())
            if (answer := self.llm.reused(key)) is not None:
                with self._lock:
                    self.usage.reused += 1
                self.llm.note_call(
                    call_record(
                        self.node, schema, system, user, answer.model_dump_json(), reused=True
                    )
                )
                return CallResult(answer, ok=True)  # type: ignore[arg-type]
        error: str | None = None
        deadline = time.monotonic() + self.llm.deadline_s
        tries = 0
        cut_offs = 0
        answered = False  # did any try get an answer from the model (parsed or not)
        for attempt in range(self.llm.max_retries + 1):
            if attempt and time.monotonic() >= deadline:
                error = f"deadline of {self.llm.deadline_s:g} s spent after {attempt} tries"
                break
            tries = attempt + 1
            runnable = self.llm._runnable(schema, retry=attempt > 0)
            started = time.perf_counter()
            try:
                out = self.llm.ask(runnable, messages)
            except TIMEOUTS as exc:
                error = f"{type(exc).__name__}: {exc}"[:500]
                self._meter(time.perf_counter() - started, None, _usage_of(exc), timeout=True)
                log.warning("%s: model call timed out; not retried: %s", self.node, error)
                break
            except RETRYABLE as exc:
                error = f"{type(exc).__name__}: {exc}"[:500]
                self._meter(time.perf_counter() - started, None, _usage_of(exc))
                if (reason := unavailable_reason(exc)) is not None:
                    raise self.llm.unavailable(reason) from exc  # no try can pass: stop the run
                answered = answered or isinstance(exc, ANSWERED)
                log.warning("%s: model call failed (try %d): %s", self.node, attempt + 1, error)
                cut_offs += isinstance(exc, openai.LengthFinishReasonError)
                if cut_offs > 1:  # a runaway answer twice: a third try costs as much again
                    break
                continue
            answered = True
            seconds = time.perf_counter() - started
            self._meter(seconds, out.get("raw"))
            _log_prompt(self.node, schema, system, user, out.get("raw"))
            raw = out.get("raw")
            self.llm.note_call(
                call_record(
                    self.node,
                    schema,
                    system,
                    user,
                    str(getattr(raw, "content", "") or ""),
                    seconds=seconds,
                    usage=getattr(raw, "usage_metadata", None) or {},
                    parsed=out.get("parsed") is not None,
                )
            )
            parsed = out.get("parsed")
            value: T | None = None
            if isinstance(parsed, schema):
                value = parsed
            elif isinstance(parsed, dict):
                try:
                    value = schema.model_validate(parsed)
                except ValidationError as exc:
                    error = str(exc)
            else:
                error = str(out.get("parsing_error") or "no parsed output")
            if value is not None:
                self.llm.settle(answered=True)
                if key is not None and attempt == 0:  # a retry samples: not the greedy answer
                    self.llm.keep(key, value)
                return CallResult(value, ok=True)
            log.warning("%s: unparseable answer (try %d): %s", self.node, attempt + 1, error)
            cut_offs += _finish_reason(out.get("raw")) == "length"  # cut, as the error above
            if cut_offs > 1:
                break
        with self._lock:
            self.usage.fallbacks += 1
        self.llm.settle(answered, error)  # raises past the fallback: too many calls unanswered
        log.warning("%s: falling back after %d tries: %s", self.node, tries, error)
        value = fallback() if callable(fallback) else fallback
        return CallResult(value, ok=False, error=error)

    def _meter(
        self, seconds: float, raw: Any, usage: dict | None = None, timeout: bool = False
    ) -> None:
        meta = usage or getattr(raw, "usage_metadata", None) or {}
        cached = (meta.get("input_token_details") or {}).get("cache_read", 0)
        with self._lock:
            self.usage.calls += 1
            self.usage.timeouts += int(timeout)
            self.usage.seconds += seconds
            self.usage.prompt_tokens += int(meta.get("input_tokens", 0) or 0)
            self.usage.cached_tokens += int(cached or 0)
            self.usage.completion_tokens += int(meta.get("output_tokens", 0) or 0)


@lru_cache(maxsize=512)
def _schema_key(schema: type[BaseModel]) -> str:
    """A schema's JSON schema as text: calls with equal names but other choices differ."""
    return json.dumps(schema.model_json_schema(), sort_keys=True)


MAX_CALLS_KEPT = 64  # calls kept between two drains (a step makes a few)
CALL_TEXT_CHARS = 6000  # of a call's prompt, as a step's trace keeps it
CALL_ANSWER_CHARS = 2000


def call_record(
    node: str,
    schema: type[BaseModel],
    system: str,
    user: str,
    answer: str,
    *,
    seconds: float = 0.0,
    usage: Mapping[str, Any] | None = None,
    parsed: bool = True,
    reused: bool = False,
) -> dict[str, Any]:
    """One model call as a step's trace keeps it: which node asked for what, the prompt and
    the answer (each cut to its first characters), the tokens and seconds it cost."""
    meta = dict(usage or {})
    return {
        "node": node,
        "schema": schema.__name__,
        "system": system[:CALL_TEXT_CHARS],
        "user": user[:CALL_TEXT_CHARS],
        "answer": answer[:CALL_ANSWER_CHARS],
        "prompt_tokens": int(meta.get("input_tokens", 0) or 0),
        "cached_tokens": int((meta.get("input_token_details") or {}).get("cache_read", 0) or 0),
        "completion_tokens": int(meta.get("output_tokens", 0) or 0),
        "seconds": round(seconds, 3),
        "parsed": parsed,
        "reused": reused,
    }


_prompt_log_lock = threading.Lock()


def _log_prompt(node: str, schema: type[BaseModel], system: str, user: str, raw: Any) -> None:
    """With $ROBOMEMORY_PROMPT_LOG set, append each call (prompt and answer) as a JSON line:
    the way to read what the model saw when a run goes wrong."""
    path = os.environ.get("ROBOMEMORY_PROMPT_LOG")
    if not path:
        return
    meta = getattr(raw, "usage_metadata", None) or {}
    line = {
        "ts": time.time(),
        "node": node,
        "schema": schema.__name__,
        "json_schema": compact_json_schema(schema),  # what constrained the answer (replays)
        "system": system,
        "user": user,
        "answer": getattr(raw, "content", None),
        "usage": dict(meta),
    }
    with _prompt_log_lock, open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, default=str) + "\n")


# llguidance (llama.cpp's schema engine) lets the model put any whitespace between JSON
# tokens, and a small model pretty-prints: a newline and indentation before every key. The
# same answer on one line costs about a third fewer generated tokens. The separators keep
# their space (`{"next": "go(north)"}`): forced to `":"`, the model is pushed off the
# tokens it would write, and a merged token such as `"go` wins a choice the model does not
# prefer.
COMPACT_JSON = {
    "x-guidance": {"whitespace_flexible": False, "key_separator": ": ", "item_separator": ", "}
}


def compact_json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema``'s JSON schema asking an llguidance engine for one-line JSON, every object
    closed to the fields it names (a schema silent on extra fields lets the grammar take any
    key, and a small model then writes keys of its own instead of the answer)."""
    return {**_closed(schema.model_json_schema()), **COMPACT_JSON}


def _closed(node: Any) -> Any:
    """A copy of a JSON schema where every object with properties forbids other keys."""
    if isinstance(node, list):
        return [_closed(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _closed(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _grammar_runnable(model: BaseChatModel, schema: type[BaseModel], grammar: str) -> Any:
    """``model`` constrained by ``grammar`` (sent as llama.cpp's ``grammar``), its answer
    parsed into ``schema``: the same ``{raw, parsed, parsing_error}`` as LangChain's
    ``with_structured_output(..., include_raw=True)``."""
    extra = dict(getattr(model, "extra_body", None) or {})
    extra["grammar"] = grammar
    bound = model.model_copy(update={"extra_body": extra})

    def parse(raw: BaseMessage) -> dict[str, Any]:
        try:
            return {"raw": raw, "parsed": parse_answer(schema, str(raw.content))}
        except (ValidationError, ValueError) as exc:
            return {"raw": raw, "parsed": None, "parsing_error": exc}

    return bound | RunnableLambda(parse)


def _finish_reason(raw: Any) -> str | None:
    """Why the server stopped generating (``length``: cut at max_tokens)."""
    return (getattr(raw, "response_metadata", None) or {}).get("finish_reason")


def _pinned(model: BaseChatModel, slot: int) -> BaseChatModel:
    """A copy of an OpenAI-compatible model whose requests ask llama.cpp for ``slot``."""
    extra = dict(getattr(model, "extra_body", None) or {})
    extra["id_slot"] = slot
    return model.model_copy(update={"extra_body": extra})


def _usage_of(exc: BaseException) -> dict | None:
    """Token usage of a completion the client rejected (e.g. cut at max_tokens)."""
    usage = getattr(getattr(exc, "completion", None), "usage", None)
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", 0) if details is not None else 0
    return {
        "input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens,
        "input_token_details": {"cache_read": cached or 0},
    }
