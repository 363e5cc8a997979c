"""A FAKE model for process-level tests: its answers depend only on the prompt, so a process
started afresh after a kill -9 answers exactly as the killed one would have.

The planner follows the game's walkthrough, reading how far it got from the prompt's
"Last result: step N" line; the long-term writers give fixed lessons; the Mem0 updater
ADDs, UPDATEs or DELETEs by a rule of the prompt text (so consolidation of the second
episode exercises every kind of write).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from robomemory.executors.envs.textworld import bundled_game, walkthrough_actions
from robomemory.structured import StructuredLLM
from robomemory.testing import PlanScript, ScriptedChatModel, message_text, scripted

LAST_STEP = re.compile(r"Last result: step (\d+):")
EXISTING_ID = re.compile(r"^\s*\[?(\d+)\]?[:.)]?\s", re.MULTILINE)
PLACED = re.compile(r"The (\w+) is (in|on) the (\w+)")
HELD = re.compile(r"I hold the (\w+)")
KNOWN_EDGE = re.compile(r"^(\d+): (\S+) \S+ \S+$", re.MULTILINE)
NEW_EDGE = re.compile(r"^- (\S+) \S+ \S+$", re.MULTILINE)
SUMMARIES = (
    "The milk is in the fridge. The cookbook is on the counter.",
    "I hold the milk. The cookbook is on the counter. The knife is on the table.",
    "The knife is on the counter. The milk is on the table.",
)


def walkthrough_plan(game: str) -> PlanScript:
    """Plan answers that follow ``game``'s walkthrough from wherever the prompt says it is
    (the oracle's "inventory" left out: a read the world does not list as an action)."""
    actions = [a for a in walkthrough_actions(bundled_game(game)) if a.verb != "inventory"]

    def plan(messages: Sequence[BaseMessage]) -> list[tuple[str, list[str]]]:
        found = LAST_STEP.findall(message_text(messages))
        done = int(found[-1]) if found else 0
        a = actions[min(done, len(actions) - 1)]
        return [(a.verb, a.args)]

    return PlanScript(plan, "follow the recipe")


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def mem0_decision(messages: Sequence[BaseMessage]) -> dict:
    """ADD when nothing similar exists; otherwise UPDATE, DELETE or NOOP the first item, chosen
    by a hash of the prompt (deterministic across processes)."""
    text = message_text(messages)
    ids = EXISTING_ID.findall(text.rsplit("EXISTING:", 1)[-1]) if "EXISTING:" in text else []
    if not ids:
        return {"event": "ADD"}
    target = int(ids[0])
    match _digest(text) % 4:
        case 0:
            return {"event": "ADD"}
        case 1:
            return {"event": "UPDATE", "id": target}
        case 2:
            return {"event": "DELETE", "id": target}
    return {"event": "NOOP"}


def step_summary(messages: Sequence[BaseMessage]) -> dict:
    return {"summary": SUMMARIES[_digest(message_text(messages)) % len(SUMMARIES)]}


def extracted_relations(messages: Sequence[BaseMessage]) -> dict:
    """Relations read off the summary (so the map changes as the summaries do)."""
    text = message_text(messages).rsplit("Observation:", 1)[-1]
    rels = [{"subject": a, "relation": r, "object": b} for a, r, b in PLACED.findall(text)]
    rels += [{"subject": "robot", "relation": "hold", "object": a} for a in HELD.findall(text)]
    return {"relations": rels}


def resolver_decision(messages: Sequence[BaseMessage]) -> dict:
    """Delete every known edge whose subject a new edge places elsewhere."""
    text = message_text(messages)
    known, _, new = text.rpartition("Known edges:")[2].partition("New edges:")
    moved = set(NEW_EDGE.findall(new))
    return {"delete": [int(i) for i, subj in KNOWN_EDGE.findall(known) if subj in moved]}


def lessons(messages: Sequence[BaseMessage]) -> dict:
    """Lessons of the game played (the prompts of the two games differ)."""
    if "slice" in message_text(messages) or "knife" in message_text(messages):
        return {
            "helped": ["examine(cookbook)"],
            "hurt": [],
            "task": ["To cook a meal: read the cookbook, slice, cook, then prepare the meal."],
        }
    return {
        "helped": ["examine(cookbook)"],
        "hurt": [],
        "task": ["To cook a meal, read the cookbook, get the ingredients, prepare the meal."],
    }


def lifelong_table(game: str) -> dict:
    """Answers by schema name for one episode of a robot's lifelong pair on ``game``."""
    return {
        "Plan": walkthrough_plan(game),
        "CriticVerdict": lambda m: {"approve": True, "reason": "fine"},
        "StepSummary": step_summary,
        "MemoryQueries": lambda m: {"queries": ["where is the milk", "how to cook a meal"]},
        "ExtractedRelations": extracted_relations,
        "ExtractedTriples": extracted_relations,
        "ResolverDecision": resolver_decision,
        "SemanticInsights": lessons,
        "EpisodeRecord": lambda m: {"summary": "Read the cookbook, got the food, ate the meal."},
        "MemoryDecision": mem0_decision,
        "MergedItem": lambda m: {"text": "Open the fridge, then take milk."},
    }


def lifelong_llm(game: str) -> StructuredLLM:
    model = ScriptedChatModel(responder=scripted(lifelong_table(game)), calls=[])
    return StructuredLLM(model, max_retries=1)
