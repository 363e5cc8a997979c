"""What a run's context may change, and who builds live clients.

The served graph is built the way graphs/studio.py builds it: clients from the operator's
environment (robomemory.factory), a RunContext allow-list for each run. The model behind it is
the FAKE OpenAI-compatible server; TextWorld, Qdrant and the graph store are real.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from robomemory import context as context_mod
from robomemory.config import AgentConfig
from robomemory.context import MissingClientError, RunContext, serve
from robomemory.factory import build_context, context_from_env, operator_settings
from robomemory.graphs.builder import build_graph
from robomemory.locks import release_robot
from robomemory.testing.openai_server import FakeOpenAIServer


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A graph served like Studio's, its clients from an operator environment."""
    monkeypatch.setattr(context_mod, "_served", None)
    with FakeOpenAIServer(latency_s=0.0) as model:
        env = {
            "ROBOMEMORY_GAME": "cooking_1room",
            "ROBOMEMORY_MODEL_PROVIDER": "openai",
            "ROBOMEMORY_EMBEDDER": "fake",
            "ROBOMEMORY_HOME": str(tmp_path / "home"),
            "ROBOMEMORY_ROBOT_ID": "studio-bot",
        }
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake")
        ctx = context_from_env(env)
        serve(ctx)
        graph = build_graph(context_schema=RunContext).compile()
        yield graph, model, ctx
        ctx.memory.close()
        ctx.executor.close()
        release_robot((tmp_path / "home" / "memory" / "locks" / "studio-bot.lock").resolve())


HOSTILE = [
    {"config": {"model": {"base_url": "http://198.51.100.7/v1"}}},
    {"config": {"model": {"api_key_env": "AWS_SECRET_ACCESS_KEY"}}},
    {"config": {"memory": {"data_dir": "/tmp/elsewhere"}}},
    {"config": {"robot_id": "another-robot"}},
    {"base_url": "http://198.51.100.7/v1"},
    {"llm": "anything", "config": {"max_steps": 2}},
    {"config": {"max_steps": 2, "ablate": ["critic"]}},  # fixed when the server starts
]


@pytest.mark.parametrize("context", HOSTILE, ids=lambda c: str(c)[:40])
def test_a_run_context_cannot_choose_clients_or_locations(served, context, tmp_path):
    graph, model, _ = served
    with pytest.raises(ValidationError, match="a run's context may not set") as info:
        graph.invoke({}, context=context)
    assert "\n" not in str(info.value).split("Value error, ", 1)[1].splitlines()[0]
    assert model.requests == []  # nothing was sent anywhere
    assert not (tmp_path / "elsewhere").exists()


def test_a_run_context_tunes_the_run_from_the_allow_list(served):
    graph, model, ctx = served
    state = graph.invoke(
        {}, context={"config": {"max_steps": 2, "n_queries": 1, "ablate": ["spatial"]}}
    )
    assert state["done"] and state["end_reason"] == "max_steps" and state["step"] == 2
    assert state["recalled"]["spatial"] == ""  # the per-run ablation took effect
    assert model.requests
    assert ctx.config.max_steps == 30  # the operator's context is untouched


def test_a_served_graph_runs_with_no_context_at_all(served):
    graph, _, _ = served
    state = graph.invoke({"task": "look around"}, context=None, config={"recursion_limit": 500})
    assert state["done"]


def test_nodes_never_build_clients(tmp_path, monkeypatch):
    """No served context, no clients: a clear error, nothing opened under $HOME."""
    monkeypatch.setattr(context_mod, "_served", None)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ROBOMEMORY_HOME", raising=False)
    monkeypatch.setenv("ROBOMEMORY_GAME", "cooking_1room")
    with pytest.raises(MissingClientError, match="no live clients"):
        build_graph(context_schema=RunContext).compile().invoke({}, context={})
    with pytest.raises(MissingClientError, match="has no llm, memory, executor"):
        build_graph().compile().invoke({}, context=context_mod.AgentContext())
    assert list(tmp_path.iterdir()) == []


def test_build_agent_without_an_executor_is_an_error(tmp_path):
    from robomemory import build_agent

    cfg = AgentConfig(robot_id="no-world")
    cfg.memory.data_dir = tmp_path / "memory"
    with pytest.raises(MissingClientError, match="no executor"):
        build_agent(cfg, None)
    assert not (tmp_path / "memory" / "qdrant").exists()  # failed before opening memory
    with pytest.raises(MissingClientError, match="no executor"):
        build_context(cfg, None)


def test_the_operator_must_name_the_game_to_serve():
    with pytest.raises(MissingClientError, match="set ROBOMEMORY_GAME"):
        operator_settings({"ROBOMEMORY_MODEL_PROVIDER": "openai"})
    with pytest.raises(ValueError, match="robot id 'a/b' may use only"):
        operator_settings({"ROBOMEMORY_GAME": "cooking_1room", "ROBOMEMORY_ROBOT_ID": "a/b"})


def test_a_flat_context_tunes_the_run_like_a_nested_one(served):
    graph, _, _ = served
    listed = set(graph.get_context_jsonschema()["properties"])
    assert {"max_steps", "ablate", "config"} <= listed
    state = graph.invoke({}, context={"max_steps": 2, "ablate": ["spatial"], "n_queries": None})
    assert state["end_reason"] == "max_steps" and state["step"] == 2
    assert state["recalled"]["spatial"] == ""
    nested = RunContext.model_validate({"config": {"max_steps": 3}, "max_steps": None})
    assert nested.config.max_steps == 3  # a form's unset field does not override


def test_a_context_setting_one_tuning_twice_differently_is_refused_in_one_line():
    with pytest.raises(ValidationError, match="both flat and under config") as info:
        RunContext.model_validate({"max_steps": 2, "config": {"max_steps": 3}})
    assert "\n" not in str(info.value).split("Value error, ", 1)[1].split(" [type=")[0]
    assert RunContext.model_validate({"max_steps": 2, "config": {"max_steps": 2}}).config == (
        RunContext.model_validate({"max_steps": 2}).config
    )


@pytest.mark.parametrize(
    "context",
    [
        {"model": {"base_url": "http://198.51.100.7/v1"}, "config": {"max_steps": 2}},
        {"memory": {"data_dir": "/tmp/elsewhere"}},
        {"configurable": {"robot_id": "another-robot"}},
    ],
    ids=["model", "memory", "configurable"],
)
def test_the_api_server_passes_unknown_top_level_keys_on_to_be_refused(context):
    """The LangGraph API keeps only the context keys its schema's properties hold (``key in
    properties``, all keys when it has none: langgraph_api.stream._filter_context_by_schema);
    RunContext's properties name its settings and hold every key. tests/test_studio.py sends
    one through the real server."""
    listed = build_graph(context_schema=RunContext).compile().get_context_jsonschema()
    listed = listed.get("properties") or {}
    assert {"max_steps", "config"} <= set(listed)  # named, as Studio's form shows them
    passed = {k: v for k, v in context.items() if not listed or k in listed}
    assert passed == context
    with pytest.raises(ValidationError, match="a run's context may not set"):
        RunContext.model_validate(passed)


@pytest.mark.parametrize("field", ["max_steps", "max_plan_len", "n_queries"])
@pytest.mark.parametrize("value", [True, 2.0, "2"])
def test_a_run_tuning_takes_integers_only(field, value):
    with pytest.raises(ValidationError, match=field):
        RunContext.model_validate({"config": {field: value}})
    assert getattr(RunContext.model_validate({"config": {field: 2}}).config, field) == 2
