"""A FAKE model that answers every node with fuzzed text: valid answers, garbage, wrong types,
extra and duplicate keys, huge strings, truncated JSON and loosely typed Mem0 decisions.

It never gives a *strictly* valid Mem0 DELETE or UPDATE, so a long-term item that disappears
or changes its text was deleted without a valid decision.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from robomemory.core import RELATIONS
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel
from robomemory.testing.openai_server import minimal_instance

WORDS = "milk fridge counter cookbook knife table kitchen onion meal oven stove key".split()
VERBS = ["look", "inventory", "examine", "pick_up", "go", "open", "format_disk", "", "eat"]
LOOSE_DECISIONS = [
    '{"event": "DELETE", "id": "0"}',
    '{"event": "DELETE", "id": true}',
    '{"event": "DELETE", "id": false}',
    '{"event": "DELETE", "id": 0.0}',
    '{"event": "DELETE", "id": " 1 "}',
    '{"event": "DELETE", "id": 0, "reason": "extra field"}',
    '{"event": "NOOP", "event": "DELETE", "id": 0}',
    '{"event": "UPDATE", "id": 0, "text": "merged"}',
    '{"event": "UPDATE", "id": 0, "text": null}',
    '{"event": "delete", "id": 0}',
    '{"event": "DELETE", "id": -1}',
    '{"event": "DELETE", "id": 99}',
    '{"event": "DELETE"}',
]


class Fuzzer:
    """Answers by schema; counts what it gave."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.given: Counter[str] = Counter()
        self.answers = 0

    def __call__(self, schema: type[BaseModel], messages: Sequence[BaseMessage]) -> str:
        self.answers += 1
        kind = self.rng.choice(
            ["valid"] * 5
            + ["minimal", "garbage", "empty", "null", "wrong_types", "extra", "huge"]
            + ["truncated", "duplicate_keys", "array"]
        )
        if schema.__name__ == "MemoryDecision" and self.rng.random() < 0.6:
            kind = "loose"
        self.given[f"{schema.__name__}:{kind}"] += 1
        valid = self.valid(schema)
        match kind:
            case "valid":
                return json.dumps(valid)
            case "minimal":
                return json.dumps(minimal_instance(schema.model_json_schema()))
            case "garbage":
                return "".join(self.rng.choice('{}[]":,\\ az09\n\x00é🙂') for _ in range(80))
            case "empty":
                return "{}"
            case "null":
                return "null"
            case "wrong_types":
                return json.dumps({k: _wrong(v) for k, v in valid.items()})
            case "extra":
                return json.dumps(valid | {"unexpected": {"nested": [1, 2]}})
            case "huge":
                return json.dumps({k: _huge(v) for k, v in valid.items()})
            case "truncated":
                text = json.dumps(valid)
                return text[: max(1, len(text) // 2)]
            case "duplicate_keys":
                text = json.dumps(valid)
                return text[:-1] + ', "' + next(iter(valid), "x") + '": null}'
            case "array":
                return json.dumps([valid])
            case "loose":
                return self.rng.choice(LOOSE_DECISIONS)
        raise AssertionError(kind)

    def valid(self, schema: type[BaseModel]) -> dict[str, Any]:
        r, w = self.rng, WORDS
        sentence = " ".join(r.choice(w) for _ in range(6)).capitalize() + "."
        match schema.__name__:
            case "Plan":
                steps = [
                    {"action": r.choice(VERBS), "args": [r.choice(w)] if r.random() < 0.5 else []}
                    for _ in range(r.randint(1, 3))
                ]
                return {"thought": sentence, "steps": steps}
            case "CriticVerdict":
                return {"approve": r.random() < 0.7, "reason": sentence}
            case "MemoryQueries":
                return {"queries": [sentence for _ in range(r.randint(1, 4))]}
            case "ExtractedRelations" | "ExtractedTriples":
                rel = [
                    {"subject": r.choice(w), "relation": r.choice(RELATIONS), "object": r.choice(w)}
                    for _ in range(r.randint(0, 5))
                ]
                return {"relations": rel}
            case "ResolverDecision":
                return {"delete": [r.randint(-2, 8) for _ in range(r.randint(0, 3))]}
            case "SemanticInsights":
                return {"helped": [], "hurt": [], "task": [sentence]}
            case "MemoryDecision":
                return {"event": r.choice(["ADD", "NOOP"])}
        out = minimal_instance(schema.model_json_schema())
        if isinstance(out, dict):
            out = {k: sentence if isinstance(v, str) else v for k, v in out.items()}
        return out


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return "not a list"
    return None


def _huge(value: Any) -> Any:
    return "x" * 100_000 if isinstance(value, str) else value


def fuzz_llm(seed: int) -> tuple[StructuredLLM, Fuzzer]:
    fuzzer = Fuzzer(seed)
    model = ScriptedChatModel(responder=fuzzer, calls=[])
    return StructuredLLM(model, max_retries=1, deadline_s=30), fuzzer
