"""Mem0's decision application as a pure function: decisions and existing items in, store
operations out. No store, no model."""

from __future__ import annotations

import pytest

from robomemory.memory.mem0 import (
    AddOp,
    DeleteOp,
    Existing,
    UpdateOp,
    UpdatePlan,
    content_hash,
    merge_target,
    plan_decision,
    plan_without_model,
)
from robomemory.prompts.longterm import MemoryDecision

SHOWN = [Existing("id-a", "the fridge is locked"), Existing("id-b", "the key is in the drawer")]
NEW = "the fridge opens with the key"


def plan(event, id=None, text=None, holders=None) -> UpdatePlan:
    """``text``: the merger's answer for an UPDATE."""
    decision = MemoryDecision(event=event, id=id)
    return plan_decision(decision, NEW, "task", "new-id", SHOWN, holders or {}, text)


def test_add():
    p = plan("ADD")
    assert p.result == {"event": "ADD", "item_id": "new-id"}
    assert p.ops == [AddOp(item_id="new-id", text=NEW, level="task")]


def test_update_rewrites_the_named_item():
    p = plan("UPDATE", 1, " the key in the drawer opens the fridge ")
    assert p.result == {"event": "UPDATE", "item_id": "id-b"}
    assert p.ops == [
        UpdateOp(
            item_id="id-b",
            old_text="the key is in the drawer",
            new_text="the key in the drawer opens the fridge",
        )
    ]


def test_delete_removes_the_named_item_then_adds_the_new_one():
    p = plan("DELETE", 0)
    assert p.result == {"event": "DELETE", "item_id": "id-a", "added": "new-id"}
    assert p.ops == [
        DeleteOp(item_id="id-a", old_text="the fridge is locked"),
        AddOp(item_id="new-id", text=NEW, level="task"),
    ]


@pytest.mark.parametrize(
    ("event", "id", "text", "reason"),
    [
        ("NOOP", None, None, "model"),
        ("DELETE", None, None, "unknown id None"),
        ("DELETE", 2, None, "unknown id 2"),
        ("DELETE", -1, None, "unknown id -1"),
        ("UPDATE", 5, "x", "unknown id 5"),
        ("UPDATE", 0, None, "update without text"),
        ("UPDATE", 0, "   ", "update without text"),
        ("UPDATE", 0, "the fridge is locked", "target unchanged"),
    ],
)
def test_invalid_or_empty_decisions_are_noops_without_operations(event, id, text, reason):
    p = plan(event, id, text)
    assert p.result == {"event": "NOOP", "reason": reason} and p.ops == []


def test_unparseable_decision_is_a_noop():
    p = plan_decision(None, NEW, None, "new-id", SHOWN, {})
    assert p.result == {"event": "NOOP", "reason": "unparseable decision"} and p.ops == []


def test_an_update_may_not_duplicate_another_item():
    merged = "The key is  in the drawer"
    assert plan("UPDATE", 0, merged, {content_hash(merged): "id-b"}).result["event"] == "NOOP"
    assert plan("UPDATE", 1, merged + "!", {content_hash(merged): "id-b"}).ops  # other hash


def test_no_model_needed():
    def p(text, duplicate=False, existing=SHOWN):
        return plan_without_model(text, "task", "n", duplicate=duplicate, existing=existing)

    assert p("  ").result == {"event": "NOOP", "reason": "empty"}
    assert p("x", duplicate=True).result == {"event": "NOOP", "reason": "duplicate"}
    first = p(" x ", existing=[])
    assert first.result == {"event": "ADD", "item_id": "n", "reason": "no similar items"}
    assert first.ops == [AddOp(item_id="n", text="x", level="task")]
    assert p("x") is None  # the updater decides
    episode = plan_without_model(" x ", None, "n", duplicate=False, existing=SHOWN, event=True)
    assert episode.result == {"event": "ADD", "item_id": "n", "reason": "a new event"}
    assert p("x", duplicate=True, existing=[]).result["event"] == "NOOP"
    known = plan_without_model("x", None, "n", duplicate=True, existing=[], event=True)
    assert known.result == {"event": "NOOP", "reason": "duplicate"}


def test_an_action_lesson_with_a_shown_lessons_action_and_verdict_needs_no_updater():
    """Its update is the new lesson itself; another verdict on that action is asked about."""
    shown = [
        Existing("id-h", "eat(meal) hurt: You eat the raw meal. You lost."),
        Existing("id-e", "eat(meal) helped: You eat the meal. You scored 3 out of 3."),
    ]
    new = "eat(meal) helped: You eat the meal. You scored 4 out of 4."
    p = plan_without_model(new, "action", "n", duplicate=False, existing=shown)
    assert p.result == {"event": "UPDATE", "item_id": "id-e"}
    assert p.ops == [UpdateOp(item_id="id-e", old_text=shown[1].text, new_text=new)]
    assert plan_without_model(new, "action", "n", duplicate=False, existing=shown[:1]) is None
    task = [Existing("id-t", "eat(meal) helped: read the recipe first")]
    assert plan_without_model("cook first", "task", "n", duplicate=False, existing=task) is None


def test_a_plan_round_trips_through_json():
    p = plan("DELETE", 1)
    assert UpdatePlan.model_validate_json(p.model_dump_json()) == p
    assert UpdatePlan.model_validate(p.model_dump()) == p


def test_an_action_lessons_update_is_the_new_lesson_itself():
    """An action lesson is never merged: the model's merge into the world's words alone
    would lose the action for recall; the new lesson is the world's latest word on it."""
    old = Existing("id-e", "eat(meal) helped: You eat the meal. You scored 3 out of 3.")
    new = "eat(meal) helped: You eat the meal. You scored 4 out of 4."
    update = MemoryDecision(event="UPDATE", id=0)
    assert merge_target(update, new, [old]) is None  # no merger asked
    for merged in (None, "You eat the meal. You scored 4 out of 4."):
        p = plan_decision(update, new, "action", "new-id", [old], {}, merged)
        assert p.ops == [UpdateOp(item_id="id-e", old_text=old.text, new_text=new)]


def test_the_merger_is_asked_only_for_an_update_of_a_shown_item():
    assert merge_target(MemoryDecision(event="UPDATE", id=1), NEW, SHOWN) == SHOWN[1]
    assert merge_target(MemoryDecision(event="UPDATE", id=2), NEW, SHOWN) is None
    assert merge_target(MemoryDecision(event="UPDATE"), NEW, SHOWN) is None
    for event in ("ADD", "DELETE", "NOOP"):
        assert merge_target(MemoryDecision(event=event, id=0), NEW, SHOWN) is None
    assert merge_target(None, NEW, SHOWN) is None


def test_a_decision_carries_no_text():
    """The merged text is the merger's: a decision with text is refused (and so a NOOP)."""
    with pytest.raises(ValueError):
        MemoryDecision.model_validate_json('{"event": "NOOP", "text": "NEW is already known."}')
