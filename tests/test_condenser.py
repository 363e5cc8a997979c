"""Condenser (seed 004_…): budget, noise filter, oldest-first summaries, reuse from state."""

from __future__ import annotations

from robomemory.config import CondenserConfig
from robomemory.memory.condenser import Condenser, Event, approx_tokens
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel, by_schema, message_text

TASK = "put the clean apple in the fridge " * 10  # long, must never be condensed


def make_llm(answer=None):
    prompts: list[str] = []

    def respond(messages):
        prompts.append(message_text(messages))
        return answer(messages) if answer else {"summary": "walked around, opened drawer"}

    model = ScriptedChatModel(responder=by_schema({"ChunkSummary": respond}))
    return model, prompts, StructuredLLM(model, max_retries=0).for_node("recall")


def history(steps: int, size: int = 200) -> list[Event]:
    events = [Event("task", TASK)]
    for s in range(1, steps + 1):
        events += [
            Event("action", f"act{s} " + "a" * size, s),
            Event("result", f"res{s} " + "r" * size, s),
        ]
    return events


def test_under_budget_returns_everything_without_model_call():
    model, _, llm = make_llm()
    events = history(3, size=10)
    view = Condenser(CondenserConfig(token_budget=2000)).condense(events, [], llm)
    assert view.events == events and view.summaries == [] and model.calls == []
    assert "act1" in view.text and "res3" in view.text


def test_noise_empty_and_duplicates_filtered():
    model, _, llm = make_llm()
    events = [
        Event("task", "t"),
        Event("noise", "agent state changed"),
        Event("action", "  ", 1),
        Event("action", "open door", 1),
        Event("action", "open door", 1),
        Event("result", "door opened", 1),
    ]
    view = Condenser(CondenserConfig()).condense(events, [], llm)
    assert [(e.kind, e.text) for e in view.events] == [
        ("task", "t"),
        ("action", "open door"),
        ("result", "door opened"),
    ]
    assert "agent state changed" not in view.text


def test_over_budget_summarizes_oldest_chunk_first_and_keeps_task():
    model, prompts, llm = make_llm()
    cfg = CondenserConfig(token_budget=400, keep_recent=2)
    events = history(5)
    before = approx_tokens("\n".join(e.text for e in events))
    assert before > 400
    view = Condenser(cfg).condense(events, [], llm)
    assert model.calls == ["ChunkSummary"]  # one model call
    assert approx_tokens(view.text) <= 400
    assert view.events[0] == Event("task", TASK)  # task intact, first
    assert view.events[1].kind == "summary"
    assert "act1" in prompts[0] and "act5" not in prompts[0]  # oldest first, recent kept
    assert "act4" in view.text and "act5" in view.text  # keep_recent newest untouched
    assert "act1" not in view.text
    [kept] = view.summaries
    assert kept["from_step"] == 1 and kept["summary"] == "walked around, opened drawer"
    assert TASK.strip() in view.text


def test_kept_summaries_reused_without_a_second_call():
    model, _, llm = make_llm()
    cond = Condenser(CondenserConfig(token_budget=400, keep_recent=2))
    first = cond.condense(history(5), [], llm)
    assert len(model.calls) == 1
    second = cond.condense(history(5), first.summaries, llm)
    assert len(model.calls) == 1  # the same steps are not summarized again
    assert second.text == first.text and second.summaries == first.summaries


def test_later_overflow_merges_old_summary_with_next_chunks():
    answers = iter([{"summary": "S-one"}, {"summary": "S-two"}])
    model, prompts, llm = make_llm(lambda m: next(answers))
    cond = Condenser(CondenserConfig(token_budget=400, keep_recent=2))
    first = cond.condense(history(5), [], llm)
    second = cond.condense(history(9), first.summaries, llm)
    assert len(model.calls) == 2 and "S-one" in prompts[1]
    assert len(second.summaries) == 1  # the old summary was merged into the new one
    assert second.summaries[0]["from_step"] == 1 and second.summaries[0]["summary"] == "S-two"
    assert "act9" in second.text and approx_tokens(second.text) <= 400


def test_summary_failure_drops_chunk_to_marker_and_keeps_nothing():
    model, _, llm = make_llm(lambda m: "garbage")
    view = Condenser(CondenserConfig(token_budget=400)).condense(history(5), [], llm)
    assert view.summaries == []
    marker = [e for e in view.events if e.kind == "summary"]
    assert len(marker) == 1 and "detail dropped" in marker[0].text
    assert "act1" not in view.text and "act5" in view.text


def test_disabled_condenser_keeps_everything():
    model, _, llm = make_llm()
    events = history(8)
    view = Condenser(CondenserConfig(enabled=False, token_budget=200)).condense(events, [], llm)
    assert view.events == events and model.calls == []


def test_memory_clipped_as_last_resort_task_untouched():
    model, _, llm = make_llm()
    events = [
        Event("task", TASK),
        Event("memory", "spatial: " + "cup on table. " * 300),
        Event("observation", "you see a fridge"),
    ]
    view = Condenser(CondenserConfig(token_budget=300)).condense(events, [], llm)
    assert model.calls == []  # nothing condensable: no model call
    assert view.events[0].text == TASK and "[clipped]" in view.events[1].text
    assert approx_tokens(view.text) <= 300 and "you see a fridge" in view.text
