"""`langgraph dev` serves the graph and store of langgraph.json: start it, read the graph's
schemas, run, list long-term memory through the Store API, stop.

The model behind it is the FAKE OpenAI-compatible server (schema-valid minimal answers);
the dev server, the graph, TextWorld and the memory stores are real.
"""

from __future__ import annotations

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
            assert {"task", "step", "trajectory"} <= set(schemas["input_schema"]["properties"])
            # flat, as Studio sends it; a pattern, so keys the schema lacks still reach the graph
            assert "^max_steps$" in schemas["context_schema"]["patternProperties"]
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
