"""Temporal memory: FIFO capacity N, model compression at the front, fallback join."""

from __future__ import annotations

from robomemory.config import TemporalConfig
from robomemory.memory.temporal import FALLBACK_CHARS, TemporalMemory, fallback_compress
from robomemory.structured import StructuredLLM
from robomemory.testing import ScriptedChatModel, by_schema, message_text


def make_llm(answer):
    model = ScriptedChatModel(responder=by_schema({"TemporalSummary": answer}))
    return model, StructuredLLM(model, max_retries=1).for_node("temporal")


def test_fifo_order_and_capacity_without_model_calls():
    model, llm = make_llm(lambda m: {"summary": "never"})
    mem = TemporalMemory(TemporalConfig(capacity=4))
    buf: list[str] = []
    for s in ["s1", "s2", "s3", "s4"]:
        buf = mem.update(buf, s, llm)
    assert buf == ["s1", "s2", "s3", "s4"]
    assert model.calls == []
    assert mem.update(buf, "   ", llm) == buf  # an empty summary changes nothing


def test_compression_puts_one_summary_at_front_and_keeps_newest():
    seen: list[str] = []

    def answer(messages):
        seen.append(message_text(messages))
        return {"summary": "went to kitchen, took apple"}

    model, llm = make_llm(answer)
    mem = TemporalMemory(TemporalConfig(capacity=4))
    old = ["s1", "s2", "s3", "s4"]
    buf = mem.update(old, "s5", llm)
    assert buf == ["went to kitchen, took apple", "s5"]
    assert old == ["s1", "s2", "s3", "s4"]  # pure: the input is untouched
    assert model.calls == ["TemporalSummary"]  # exactly one model call
    prompt = seen[0]
    assert all(s in prompt for s in ["s1", "s2", "s3", "s4"]) and "s5" not in prompt
    assert prompt.index("s1") < prompt.index("s4")
    # the buffer keeps growing from the compressed entry until N again
    for s in ["s6", "s7"]:
        buf = mem.update(buf, s, llm)
    assert buf == ["went to kitchen, took apple", "s5", "s6", "s7"]
    assert len(model.calls) == 1
    assert TemporalMemory.render(buf).splitlines()[0] == "- went to kitchen, took apple"


def test_compression_failure_falls_back_to_join():
    model, llm = make_llm(lambda m: "not json at all")
    mem = TemporalMemory(TemporalConfig(capacity=3))
    buf = mem.update(["a", "b", "c"], "d", llm)
    assert buf == ["a | b | c", "d"]
    assert llm.usage.fallbacks == 1 and len(model.calls) == 2  # one try + one retry


def test_a_failed_compression_of_long_entries_keeps_the_latest_text():
    """The fallback is built as the schema's answer: longer than the schema allows, it would
    raise instead of keeping the agent going."""
    model, llm = make_llm(lambda m: "not json at all")
    mem = TemporalMemory(TemporalConfig(capacity=3))
    entries = [f"entry {i}: " + "walked through the house " * 6 for i in range(3)]
    buf = mem.update(entries, "d", llm)
    assert buf[1] == "d" and buf[0].endswith(entries[-1].strip()[-40:])
    assert len(buf[0]) <= FALLBACK_CHARS and llm.usage.fallbacks == 1


def test_fallback_join_is_truncated_keeping_the_latest_text():
    text = fallback_compress(["x" * 300, "y" * 300], max_chars=100)
    assert len(text) == 100 and text.endswith("y" * 50) and text.startswith("…")


def test_a_compression_made_beforehand_is_used_without_a_call():
    """The compress node compresses a full buffer beside perception; the update then uses its
    summary where it would have asked the model, and the buffer is the same."""
    model, llm = make_llm(lambda m: {"summary": "asked"})
    mem = TemporalMemory(TemporalConfig(capacity=3))
    assert not mem.due(["a", "b"]) and mem.due(["a", "b", "c"])
    assert mem.update(["a", "b", "c"], "d", llm, compressed="early") == ["early", "d"]
    assert model.calls == []
    assert mem.update(["a", "b"], "c", llm, compressed="early") == ["a", "b", "c"]  # not due
    assert mem.update(["a", "b", "c"], "d", llm) == ["asked", "d"]
    assert model.calls == ["TemporalSummary"]


def test_a_waiting_update_appends_past_n_and_the_next_compresses_all_but_the_newest():
    seen: list[str] = []

    def answer(messages):
        seen.append(message_text(messages))
        return {"summary": "all of it"}

    model, llm = make_llm(answer)
    mem = TemporalMemory(TemporalConfig(capacity=2))
    buf = mem.update(["a", "b"], "c", llm, wait=True)
    buf = mem.update(buf, "d", llm, wait=True)
    assert buf == ["a", "b", "c", "d"] and model.calls == []
    assert mem.update(buf, "e", llm) == ["all of it", "e"]
    assert model.calls == ["TemporalSummary"]
    assert all(s in seen[0] for s in "abcd") and "- e" not in seen[0]
    # a compression made beforehand is used though the step would wait
    assert mem.update(["a", "b"], "c", llm, compressed="early", wait=True) == ["early", "c"]
