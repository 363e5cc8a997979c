"""Mem0's update ("Mem0: Building Production-Ready AI Agents with Scalable Long-Term Memory")
as pure functions: what to do with a new item, given the similar
items the store holds and the updater's decision, as a list of store operations.

No store and no model here: ``memory/longterm.py`` gathers the inputs, journals the plan, then
applies its operations (each idempotent), so a crash mid-way resumes the same plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from robomemory.memory.lessons import lesson_action, lesson_key
from robomemory.prompts.longterm import MemoryDecision


def content_hash(text: str) -> str:
    """sha256 of the whitespace- and case-normalized text (Mem0's dedupe key)."""
    norm = " ".join(text.lower().split())
    return hashlib.sha256(norm.encode()).hexdigest()


@dataclass(frozen=True)
class Existing:
    """A similar item shown to the updater as number ``i`` (its index in the list)."""

    id: str
    text: str


class AddOp(BaseModel):
    op: Literal["add"] = "add"
    item_id: str
    text: str
    level: str | None = None


class UpdateOp(BaseModel):
    op: Literal["update"] = "update"
    item_id: str
    old_text: str
    new_text: str


class DeleteOp(BaseModel):
    op: Literal["delete"] = "delete"
    item_id: str
    old_text: str


Op = Annotated[AddOp | UpdateOp | DeleteOp, Field(discriminator="op")]


class UpdatePlan(BaseModel):
    """The result reported for the new item and the operations that carry it out, in order."""

    result: dict
    ops: list[Op] = Field(default_factory=list)


def noop(reason: str) -> UpdatePlan:
    return UpdatePlan(result={"event": "NOOP", "reason": reason})


def add(item_id: str, text: str, level: str | None, reason: str = "") -> UpdatePlan:
    result = {"event": "ADD", "item_id": item_id, **({"reason": reason} if reason else {})}
    return UpdatePlan(result=result, ops=[AddOp(item_id=item_id, text=text, level=level)])


def plan_without_model(
    text: str,
    level: str | None,
    add_id: str,
    *,
    duplicate: bool,
    existing: Sequence[Existing],
    event: bool = False,
) -> UpdatePlan | None:
    """The plan when no decision is needed (empty, a known hash, nothing similar, an action
    lesson whose action and verdict a shown lesson has, an ``event``), else None: the updater
    must be asked. ``event``: the record of one happening (an episode), new unless its text is
    known; a similar record is another happening, not the same fact."""
    if not text.strip():
        return noop("empty")
    if duplicate:
        return noop("duplicate")
    if event:
        return add(add_id, text.strip(), level, reason="a new event")
    if not existing:
        return add(add_id, text.strip(), level, reason="no similar items")
    key = lesson_key(text)
    same = [i for i, e in enumerate(existing) if key is not None and lesson_key(e.text) == key]
    if same:  # the same action and verdict: its update is the new lesson itself, no question
        return plan_decision(
            MemoryDecision(event="UPDATE", id=same[0]), text, level, add_id, existing, {}
        )
    return None


def comparable(text: str, existing: Sequence[Existing]) -> list[Existing]:
    """The similar items the updater may weigh ``text`` against. An action lesson is about one
    action: it can refine or contradict only lessons about the same action (a small model
    otherwise takes "cook(meal, oven) hurt" as known because "prepare_meal() helped" is)."""
    action = lesson_action(text)
    if action is None:
        return list(existing)
    return [e for e in existing if lesson_action(e.text) == action]


def merge_target(
    decision: MemoryDecision | None, text: str, existing: Sequence[Existing]
) -> Existing | None:
    """The shown item an UPDATE of ``text`` merges into, when its merged text must be asked
    for; None otherwise: no UPDATE, an id not shown, or an action lesson, whose update is the
    new lesson itself (the world's latest word on that action: a merge into the world's words
    alone would lose the action for recall)."""
    if decision is None or decision.event != "UPDATE" or lesson_action(text) is not None:
        return None
    if decision.id is None or not 0 <= decision.id < len(existing):
        return None
    return existing[decision.id]


def plan_decision(
    decision: MemoryDecision | None,
    text: str,
    level: str | None,
    add_id: str,
    existing: Sequence[Existing],
    hash_holders: Mapping[str, str],
    merged: str | None = None,
) -> UpdatePlan:
    """Apply the updater's ``decision`` (None: unparseable) for the new item ``text`` against
    the ``existing`` items it was shown. ``merged``: an UPDATE's merged text (the merger's
    answer, see :func:`merge_target`); ``hash_holders`` maps content hashes to the items
    holding them. Anything invalid is a NOOP: an UPDATE or DELETE naming no shown item, an
    UPDATE without merged text, or one that would duplicate another item or change nothing."""
    text = text.strip()
    if decision is None:
        return noop("unparseable decision")
    if decision.event == "ADD":
        return add(add_id, text, level)
    if decision.event == "NOOP":
        return noop("model")
    if decision.id is None or not 0 <= decision.id < len(existing):
        return noop(f"unknown id {decision.id}")
    target = existing[decision.id]
    if decision.event == "DELETE":
        return UpdatePlan(
            result={"event": "DELETE", "item_id": target.id, "added": add_id},
            ops=[
                DeleteOp(item_id=target.id, old_text=target.text),
                AddOp(item_id=add_id, text=text, level=level),
            ],
        )
    merged = text if lesson_action(text) is not None else (merged or "").strip()
    if not merged:
        return noop("update without text")
    if merged == target.text:
        return noop("target unchanged")
    holder = hash_holders.get(content_hash(merged))
    if holder is not None and holder != target.id:
        return noop("update duplicates an item")
    return UpdatePlan(
        result={"event": "UPDATE", "item_id": target.id},
        ops=[UpdateOp(item_id=target.id, old_text=target.text, new_text=merged)],
    )
