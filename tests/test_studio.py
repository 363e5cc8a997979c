"""`langgraph dev` serves the graph and store of langgraph.json: start it, read the graph's
schemas, run, list long-term memory through the Store API, stop. What a Studio user meets: the
input, output and context schemas, each field described; loading the graph starts no model.

The model behind it is the FAKE OpenAI-compatible server (schema-valid minimal answers), or a
spied embedded-model start; the dev server, the graph, TextWorld and the memory stores are real.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from robomemory import context as context_mod
from robomemory import local_model
from robomemory.context import RunContext
from robomemory.locks import release_robot
from robomemory.state import AgentState
from robomemory.testing.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited early:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.5)
    pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_langgraph_dev_serves_the_graph(tmp_path):
    exe = Path(sys.executable).with_name("langgraph")
    if not exe.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli is not installed (dev extra)")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "dev.log"
    # the repo's langgraph.json, with its .env (never present here) looked for in tmp_path, so a
    # developer's own .env cannot change the test; a missing .env must not stop the server
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["env"] == ".env" and "path" in config["store"]
    config["env"] = str(tmp_path / ".env")
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    with FakeOpenAIServer(latency_s=0.0) as model:
        env = os.environ | {
            "ROBOMEMORY_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "fake",
            "ROBOMEMORY_HOME": str(tmp_path / "home"),
            "ROBOMEMORY_GAME": "cooking_1room",
            "ROBOMEMORY_EMBEDDER": "fake",
            "ROBOMEMORY_ROBOT_ID": "studio-bot",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        }
        with log.open("w") as out:
            proc = subprocess.Popen(
                [str(exe), "dev", "--port", str(port), "--no-browser", "--no-reload"]
                + ["--config", str(tmp_path / "langgraph.json")],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            _wait_ready(url, proc, log)
            (assistant,) = httpx.post(
                f"{url}/assistants/search", json={"graph_id": "robomemory"}, timeout=30
            ).json()
            schemas = httpx.get(
                f"{url}/assistants/{assistant['assistant_id']}/schemas", timeout=30
            ).json()
            # what a user gives and gets back, each field described (the state is internal)
            assert set(schemas["input_schema"]["properties"]) == {"task"}
            output = schemas["output_schema"]["properties"]
            assert {"success", "end_reason", "score", "step", "trajectory"} <= set(output)
            context = schemas["context_schema"]["properties"]
            # flat, as Studio's form sends them, and nested under config
            assert {"max_steps", "max_plan_len", "n_queries", "ablate", "config"} == set(context)
            for field in [*schemas["input_schema"]["properties"].values(), *output.values()]:
                assert field.get("description"), field
            assert all(p.get("description") for p in context.values()), context
            thread = httpx.post(f"{url}/threads", json={}, timeout=30).json()
            # a caller may not point the server at another endpoint, key variable or folder
            hostile = {"config": {"max_steps": 2, "model": {"base_url": "http://198.51.100.7"}}}
            refused = httpx.post(
                f"{url}/threads/{thread['thread_id']}/runs/wait",
                json={"assistant_id": "robomemory", "input": {}, "context": hostile},
                timeout=300,
            )
            assert "may not set config.model" in refused.text, refused.text
            top = {"model": {"base_url": "http://198.51.100.7"}, "config": {"max_steps": 2}}
            refused = httpx.post(
                f"{url}/threads/{thread['thread_id']}/runs/wait",
                json={"assistant_id": "robomemory", "input": {}, "context": top},
                timeout=300,
            )
            assert "may not set model" in refused.text, refused.text  # not dropped: refused
            assert not model.requests
            thread = httpx.post(f"{url}/threads", json={}, timeout=30).json()
            context = {"max_steps": 2}  # Studio's form sends the tunings flat
            run = httpx.post(
                f"{url}/threads/{thread['thread_id']}/runs/wait",
                json={"assistant_id": "robomemory", "input": {}, "context": context},
                timeout=300,
            )
            assert run.status_code == 200, run.text
            state = run.json()
            assert state.get("done") is True, state
            assert state["end_reason"] == "max_steps" and state["step"] == 2
            assert len(state["trajectory"]) == 2 and "consolidate" in state["usage"]
            assert set(state) <= set(output), set(state) - set(output)  # the outcome, not state
            # the thread's state is still whole (Studio's state view)
            values = httpx.get(f"{url}/threads/{thread['thread_id']}/state", timeout=30).json()
            assert {"recalled", "observation", "plan"} <= set(values["values"])
            assert model.requests  # the graph called the model server
            # the robot's long-term memory, read through LangGraph's Store API
            found = httpx.post(f"{url}/store/namespaces", json={}, timeout=30)
            assert found.status_code == 200, found.text
            namespaces = [tuple(ns) for ns in found.json()["namespaces"]]
            assert ("robomemory", "studio-bot", "episodic") in namespaces, namespaces
            items = httpx.post(
                f"{url}/store/items/search",
                json={"namespace_prefix": ["robomemory", "studio-bot", "episodic"]},
                timeout=30,
            ).json()["items"]
            assert items and items[0]["value"]["text"], items  # the episode just consolidated
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


class _StartedServer:
    """What a spied start_server returns: the FAKE endpoint, with no grammar of its own."""

    runtime = "wheel"
    threads = 1
    grammar_of = None

    def __init__(self, base_url: str):
        self.base_url = base_url

    def stop(self) -> None:
        pass


class Answer(BaseModel):
    text: str


@pytest.fixture
def studio(tmp_path, monkeypatch):
    """graphs/studio.py imported as `langgraph dev` imports it, with the embedded (local)
    model: its start and the model file are spied, so nothing is loaded."""
    import robomemory.models as models_mod

    for name, value in {
        "ROBOMEMORY_GAME": "cooking_1room",
        "ROBOMEMORY_MODEL_PROVIDER": "local",
        "ROBOMEMORY_EMBEDDER": "fake",
        "ROBOMEMORY_HOME": str(tmp_path / "home"),
        "ROBOMEMORY_ROBOT_ID": "studio-lazy",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(context_mod, "_served", None)
    monkeypatch.setattr(local_model, "_singleton", None)
    checked = []
    monkeypatch.setattr(models_mod, "check_available", checked.append)
    started = []

    def start_server(model_path, cfg, n_parallel=local_model.N_SLOTS):
        started.append(model_path)
        return started_server

    def ensure_model_file():
        started.append("joined")
        return tmp_path / "model.gguf"

    monkeypatch.setattr(local_model, "start_server", start_server)
    monkeypatch.setattr(local_model, "ensure_model_file", ensure_model_file)
    sys.modules.pop("robomemory.graphs.studio", None)
    with FakeOpenAIServer(latency_s=0.0, responder=lambda n, s, m: {"text": "ok"}) as model:
        started_server = _StartedServer(model.base_url)
        module = importlib.import_module("robomemory.graphs.studio")
        try:
            yield module, started, checked, model
        finally:
            sys.modules.pop("robomemory.graphs.studio", None)
            module.operator_context.memory.close()
            module.operator_context.executor.close()
            lock = tmp_path / "home" / "memory" / "locks" / "studio-lazy.lock"
            release_robot(lock.resolve())
            monkeypatch.setattr(local_model, "_singleton", None)


def test_loading_the_studio_graph_starts_no_model_until_a_call(studio):
    module, started, checked, model = studio
    assert started == [] and model.requests == []  # imported: no model joined or started
    assert [cfg.provider for cfg in checked] == ["local"]  # its install was checked
    node = module.operator_context.llm.for_node("perceive")
    assert node.call(Answer, "sys", "user", fallback=Answer(text="fallback")).ok
    node.call(Answer, "sys", "again", fallback=Answer(text="fallback"))
    assert started == ["joined", started[1]]  # at the first call, once
    assert len(model.requests) == 2


def test_the_studio_graph_takes_a_task_and_returns_the_outcome_described(studio):
    graph = studio[0].graph
    given = graph.get_input_jsonschema()["properties"]
    assert set(given) == {"task"}  # what the start reads from its caller (the episode id
    assert len(given) <= 8  # is claimed by RoboMemoryAgent, never a caller's in Studio)
    outcome = graph.get_output_jsonschema()["properties"]
    assert {"success", "end_reason", "score", "max_score", "step", "plan_reason"} <= set(outcome)
    assert set(outcome) <= set(AgentState.__annotations__)  # state the nodes write
    for name, field in {**given, **outcome}.items():
        assert len(field.get("description", "")) > 15, name
    for schema in (graph.get_input_jsonschema(), graph.get_output_jsonschema()):
        assert schema.get("description")


def test_the_run_settings_are_named_described_and_unknown_ones_refused(studio):
    schema = studio[0].graph.get_context_jsonschema()
    listed = schema["properties"]
    assert list(listed) == ["max_steps", "max_plan_len", "n_queries", "ablate", "config"]
    assert all(len(p.get("description", "")) > 15 for p in listed.values()), listed
    assert "patternProperties" not in schema and schema["additionalProperties"] is False
    assert json.loads(json.dumps(schema))["properties"] == dict(listed)  # as served
    # the LangGraph API keeps the context keys its schema's properties hold
    # (langgraph_api.stream._filter_context_by_schema): an unknown one reaches RunContext
    sent = {"max_steps": 2, "max_step": 3, "model": {"base_url": "http://198.51.100.7"}}
    passed = {k: v for k, v in sent.items() if k in listed}
    assert passed == sent
    with pytest.raises(ValidationError, match="may not set max_step, model"):
        RunContext.model_validate(passed)
    # a form's unset fields, flat or nested, tune nothing and clash with nothing
    form = {"max_steps": 5, "ablate": [], "config": {"max_steps": None, "ablate": None}}
    assert RunContext.model_validate(form).config.max_steps == 5
