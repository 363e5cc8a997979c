"""A FAKE chat model whose answers tests, notebooks and benchmarks script.

``ScriptedChatModel`` answers every structured call through a Python function of the requested
schema and the messages, so tests script what "the model" says while every other part
(graph, memory stores, worlds) is real.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, ConfigDict, ValidationError

from robomemory.structured import StructuredLLM, parse_answer
from robomemory.testing.openai_server import minimal_instance

# A responder gets the schema asked for and the messages; it returns the answer as a pydantic
# object, a dict, or a raw string (to simulate unparseable output).
Responder = Callable[[type[BaseModel], Sequence[BaseMessage]], BaseModel | dict | str]


def message_text(messages: Sequence[BaseMessage]) -> str:
    """All message text joined (image parts dropped)."""
    parts: list[str] = []
    for m in messages:
        if isinstance(m.content, str):
            parts.append(m.content)
        else:
            parts += [p.get("text", "") for p in m.content if isinstance(p, dict)]
    return "\n".join(parts)


class ScriptedChatModel(BaseChatModel):
    """A FAKE chat model: answers come from ``responder``; optional fixed latency per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Any
    latency_s: float = 0.0
    calls: list[str] = []
    metered: bool = True  # False: no tokens counted (a model-free agent reads and writes none)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        raise NotImplementedError("ScriptedChatModel only answers structured calls")

    def with_structured_output(self, schema, *, method="json_schema", include_raw=False, **kw):
        if method != "json_schema":
            raise ValueError("robomemory always asks for method='json_schema'")

        def answer(messages: Sequence[BaseMessage]) -> dict[str, Any]:
            if self.latency_s:
                time.sleep(self.latency_s)
            self.calls.append(schema.__name__)
            out = self.responder(schema, messages)
            if isinstance(out, BaseModel):
                text = out.model_dump_json(by_alias=True)
            elif isinstance(out, dict):
                text = json.dumps(out)
            else:
                text = str(out)
            read = len(message_text(messages)) // 4 if self.metered else 0
            written = len(text) // 4 if self.metered else 0
            raw = AIMessage(
                content=text,
                usage_metadata={
                    "input_tokens": read,
                    "output_tokens": written,
                    "total_tokens": read + written,
                },
            )
            try:
                parsed = parse_answer(schema, text)
                return {"raw": raw, "parsed": parsed, "parsing_error": None}
            except (ValidationError, ValueError) as exc:
                return {"raw": raw, "parsed": None, "parsing_error": exc}

        return RunnableLambda(lambda msgs: answer(_as_messages(msgs)))


def _as_messages(value: Any) -> list[BaseMessage]:
    if hasattr(value, "to_messages"):
        return value.to_messages()
    return list(value)


def by_schema(table: dict[str, Callable[[Sequence[BaseMessage]], BaseModel | dict | str]]):
    """Build a responder that dispatches on the schema's class name."""

    def responder(schema: type[BaseModel], messages: Sequence[BaseMessage]):
        try:
            fn = table[schema.__name__]
        except KeyError:
            raise KeyError(f"fake model has no answer scripted for {schema.__name__}") from None
        return fn(messages)

    return responder


def chat_result(text: str) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def scripted(table: dict[str, Callable[[Sequence[BaseMessage]], BaseModel | dict | str]]):
    """A responder answering scripted schemas from ``table`` and any other schema with its
    smallest valid instance (so a test scripts only the answers it cares about)."""

    def responder(schema: type[BaseModel], messages: Sequence[BaseMessage]):
        fn = table.get(schema.__name__)
        if isinstance(fn, PlanScript):
            return fn.answer(schema, messages)
        if fn is not None:
            return fn(messages)
        return minimal_instance(schema.model_json_schema())

    return responder


class PlanScript:
    """A scripted planner answer in whichever shape the plan schema asks for: the grounded
    ``next`` (one of the actions possible now) + ``then``, or ``steps`` when the world offers
    no candidates. ``actions(messages)`` gives the plan as ``(verb, args)`` pairs."""

    def __init__(
        self,
        actions: Callable[[Sequence[BaseMessage]], list[tuple[str, list[str]]]],
        thought: str = "scripted plan",
    ):
        self.actions = actions
        self.thought = thought

    def answer(self, schema: type[BaseModel], messages: Sequence[BaseMessage]) -> dict:
        plan = [{"action": verb, "args": list(args)} for verb, args in self.actions(messages)]
        fields = schema.model_fields
        thought = {"thought": self.thought} if "thought" in fields else {}
        if "next" not in fields:
            return {**thought, "steps": plan}
        grounded = "enum" in schema.model_json_schema()["properties"]["next"]
        first = plan[0]
        nxt = f"{first['action']}({', '.join(first['args'])})" if grounded else first
        if "then" in fields:
            return {**thought, "next": nxt, "then": plan[1:]}
        return {**thought, "next": nxt}  # a baseline's single action


def plan_of(*actions: tuple[str, list[str]], thought: str = "scripted plan") -> PlanScript:
    """A PlanScript that always answers the same plan."""
    return PlanScript(lambda _messages: list(actions), thought)


def scripted_llm(table: dict, latency_s: float = 0.0, max_retries: int = 1):
    """A StructuredLLM over a ScriptedChatModel (a FAKE model) built from ``scripted(table)``."""
    model = ScriptedChatModel(responder=scripted(table), latency_s=latency_s, calls=[])
    return StructuredLLM(model, max_retries=max_retries)
