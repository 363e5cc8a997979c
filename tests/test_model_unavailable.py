"""A model that is down stops the run; a robot learns nothing from fallback decisions.

A refused connection, an HTTP 401, 403 or 404 stop a run at the first model call; calls in a
row that get no answer (5xx, 429, time-outs, a body that is no chat completion) stop it after
``max_failed_calls``: one line naming the endpoint and why, a non-zero exit, the checkpoint
kept. Transient errors are retried, and a model that answers again goes on. An episode whose
planner fell back writes nothing to long-term memory.

The model is the FAKE OpenAI-compatible server (scripted replies, broken ones included) or
nothing at all (a free port); TextWorld, the graph, the stores and the CLI are real.
"""

from __future__ import annotations

import importlib
import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from robomemory import context as context_mod
from robomemory.cli import main as cli_main
from robomemory.config import AgentConfig, MemoryConfig, ModelConfig
from robomemory.eval.runner import SuiteRunner
from robomemory.eval.suites import get_suite
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game
from robomemory.locks import release_robot
from robomemory.memory.consolidation import consolidate, not_learned
from robomemory.memory.system import MemorySystem
from robomemory.models import make_llm
from robomemory.structured import ModelUnavailableError, StructuredLLM
from robomemory.testing import FakeOpenAIServer, Reply, ScriptedChatModel, minimal_instance

GAME = "cooking_1room"
HTML = Reply(200, "<html><body><h1>Sign in to the proxy</h1></body></html>", "text/html")
NO_CHOICES = Reply(
    200, {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
)
NULL_CHOICES = Reply(200, {"id": "x", "object": "chat.completion", "choices": None})


class Answer(BaseModel):
    text: str


FALLBACK = Answer(text="fallback")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dead_url() -> str:
    """An endpoint where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/v1"


def llm_at(url: str, **model) -> StructuredLLM:
    return make_llm(ModelConfig(provider="openai", base_url=url, **model))


def call(llm: StructuredLLM, user: str = "user"):
    return llm.for_node("planner").call(Answer, "sys", user, fallback=FALLBACK)


class Script:
    """A FAKE server's responder: the next of ``replies`` (the last one repeats), counted."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.n = 0

    def __call__(self, name, schema, messages):
        self.n += 1
        return self.replies[min(self.n, len(self.replies)) - 1]


# --- one model call ---------------------------------------------------------------------------


def test_nothing_listening_stops_at_the_first_call_naming_the_endpoint():
    url = dead_url()
    started = time.monotonic()
    with pytest.raises(ModelUnavailableError) as caught:
        call(llm_at(url))
    assert time.monotonic() - started < 30
    assert str(caught.value).startswith(f"model unavailable at {url} (model ")
    assert "connection refused" in str(caught.value)
    # no handler of bad input or of one failed episode takes it for one of its errors
    assert not isinstance(caught.value, RuntimeError | ValueError | OSError)
    assert pickle.loads(pickle.dumps(caught.value)).args == caught.value.args


@pytest.mark.parametrize(
    ("status", "why"),
    [(401, "refused the API key"), (403, "denied access"), (404, "no such model or path")],
)
def test_a_refused_key_or_an_unknown_model_stops_at_once(status, why):
    with FakeOpenAIServer(responder=lambda n, s, m: Reply.error(status, "nope")) as srv:
        with pytest.raises(ModelUnavailableError, match=why) as caught:
            call(llm_at(srv.base_url, max_retries=5))
    assert len(srv.requests) == 1  # never retried: no try can pass
    assert srv.base_url in str(caught.value) and f"HTTP {status}: nope" in str(caught.value)


def test_a_server_failing_every_call_stops_after_max_failed_calls():
    with FakeOpenAIServer(responder=lambda n, s, m: Reply.error(500)) as srv:
        llm = llm_at(srv.base_url, max_retries=1, max_failed_calls=3)
        assert llm.max_failed_calls == 3
        first, second = call(llm), call(llm)  # the bounded retries, then the fallback
        assert not first.ok and not second.ok and first.value == FALLBACK
        with pytest.raises(ModelUnavailableError, match="3 model calls in a row got no answer"):
            call(llm)
    # each call: 2 tries, each sent twice (the OpenAI client retries a 5xx once itself)
    assert len(srv.requests) == 3 * 2 * 2


@pytest.mark.parametrize("reply", [HTML, NO_CHOICES, NULL_CHOICES], ids=["html", "[]", "null"])
@pytest.mark.parametrize("grammar", [False, True], ids=["json_schema", "grammar"])
def test_a_body_that_is_no_chat_completion_is_a_failed_call_not_a_crash(reply, grammar):
    """Round 3: HTTP 200 with an HTML page or no choices raised AttributeError / IndexError out
    of the node, and killed every resume."""
    with FakeOpenAIServer(responder=lambda n, s, m: reply) as srv:
        chat = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m", max_retries=0)
        grammar_of = (lambda schema: 'root ::= "{}"') if grammar else None
        llm = StructuredLLM(chat, max_retries=1, grammar_of=grammar_of, max_failed_calls=2)
        result = call(llm)
        assert not result.ok and result.value == FALLBACK  # retried, then the fallback
        assert len(srv.requests) == 2
        with pytest.raises(ModelUnavailableError, match="2 model calls in a row got no answer"):
            call(llm)


def test_a_transient_error_then_an_answer_goes_on():
    script = Script(Reply.error(503), Reply.error(429), {"text": "ok"})
    with FakeOpenAIServer(responder=script) as srv:
        llm = llm_at(srv.base_url, max_retries=2, max_failed_calls=1)
        # the client's own retry and the call's retries carry it past the two errors
        assert call(llm).value == Answer(text="ok")
        assert script.n == 3


def test_an_answer_starts_the_count_of_failed_calls_again():
    script = Script(Reply.error(500), {"text": "ok"}, Reply.error(500))
    with FakeOpenAIServer(responder=script) as srv:
        chat = ChatOpenAI(base_url=srv.base_url, api_key="x", model="m", max_retries=0)
        llm = StructuredLLM(chat, max_retries=0, max_failed_calls=2)
        assert not call(llm, "a").ok  # one call without an answer ...
        assert call(llm, "b").ok  # ... an answer starts the count again
        assert not call(llm, "c").ok  # one in a row: not yet two
        with pytest.raises(ModelUnavailableError, match="2 model calls in a row"):
            call(llm, "d")
        assert not call(llm, "e").ok  # the stop starts the count again: a resume gets as many


def test_unparseable_answers_are_answers_and_never_stop_the_run():
    with FakeOpenAIServer(responder=lambda n, s, m: "I would rather chat") as srv:
        llm = llm_at(srv.base_url, max_retries=1, max_failed_calls=1)
        results = [call(llm, str(i)) for i in range(4)]
    assert [r.ok for r in results] == [False] * 4  # each its fallback: the model did answer


def test_a_scripted_models_own_crash_still_propagates():
    """Only an OpenAI client's reading errors are failed tries; a test's scripted KeyError is
    a crash, as before."""

    def crash(schema, messages):
        raise KeyError("process killed")

    llm = StructuredLLM(ScriptedChatModel(responder=crash, calls=[]), max_retries=3)
    with pytest.raises(KeyError):
        call(llm)


# --- consolidation ---------------------------------------------------------------------------


def _step(n: int, reason: str = "") -> dict:
    return {
        "step": n,
        "action": "open(fridge)",
        "outcome": "succeeded",
        "message": "You open the fridge.",
        "score": float(n),
        "plan_reason": reason,
    }


def test_an_episode_with_a_fallback_plan_writes_nothing_to_long_term_memory(tmp_path):
    cfg = MemoryConfig(data_dir=tmp_path / "mem")
    cfg.spatial.enabled = False
    system = MemorySystem.open(cfg, DeterministicFakeEmbedding(size=32), "r1")
    model = ScriptedChatModel(responder=lambda s, m: pytest.fail("the model was asked"), calls=[])
    llm = StructuredLLM(model).for_node("consolidate")
    trajectory = [_step(1), _step(2, "fallback: APIConnectionError: Connection error."), _step(3)]
    try:
        report = consolidate(
            system,
            task="cook the meal",
            success=True,
            score=3,
            max_score=3,
            temporal_text="",
            trajectory=trajectory,
            spatial_text="",
            retrieved_ids=["some-item"],
            episode_id="ep1",
            llm=llm,
        )
        assert report["not_learned"] == not_learned(trajectory)
        assert "1 of 3 steps were the planner's fallback" in report["not_learned"]
        assert "(step 2)" in report["not_learned"]
        assert report["semantic"]["created"] == report["episodic"]["created"] == 0
        assert report["semantic"]["ADD"] == report["episodic"]["ADD"] == 0
        assert report["q_updates"] == []
        assert system.semantic.items() == [] and system.episodic.items() == []
        assert system.history.changes() == []  # no Q row either
        assert system.history.episode_report("ep1")["not_learned"]  # recorded: never redone
    finally:
        system.close()
    assert not_learned([_step(1), _step(2, "follow the recipe")]) is None


def test_a_run_whose_planner_fell_back_learns_nothing(agent_config, make_agent):
    """The model answers, but never a plan it can use: the episode plays on the executor's
    fallback action and ends; nothing of it reaches long-term memory."""
    model = ScriptedChatModel(
        responder=lambda schema, messages: (
            "no plan today"
            if schema.__name__ == "Plan"
            else minimal_instance(schema.model_json_schema())
        ),
        calls=[],
    )
    agent_config.max_steps = 2
    agent_config.table_decides = False  # the planner is asked every step, none decided for it
    agent = make_agent(
        agent_config, TextWorldExecutor(bundled_game(GAME)), StructuredLLM(model, max_retries=0)
    )
    result = agent.run(thread_id="fell-back")
    assert result.usage["planner"]["fallbacks"] >= 1
    assert result.consolidation["not_learned"].startswith(f"{result.steps} of {result.steps}")
    memory = agent.context.memory
    assert memory.semantic.items() == [] and memory.episodic.items() == []


# --- the graph: stopped, checkpoint kept, resumed --------------------------------------------


def test_a_dead_model_stops_the_graph_and_the_run_resumes_when_it_answers(agent_config, make_agent):
    script = Script(Reply.error(502))
    with FakeOpenAIServer(responder=script) as srv:
        llm = llm_at(srv.base_url, max_retries=0)
        agent_config.max_steps = 2
        agent_config.table_decides = False  # the planner is asked: a step needs the model
        agent = make_agent(agent_config, TextWorldExecutor(bundled_game(GAME)), llm)
        with pytest.raises(ModelUnavailableError, match=srv.base_url):
            agent.run(thread_id="down")
        state = agent.state("down")
        assert state and not state.get("done")  # the last checkpoint is kept
        memory = agent.context.memory
        assert memory.semantic.items() == [] and memory.episodic.items() == []
        assert memory.history.episode_report(state["handles"]["episode_id"]) is None
        srv.responder = None  # the model is back: minimal schema-valid answers
        result = agent.run(thread_id="down", resume=True)
    assert result.end_reason and result.steps >= 1
    assert result.consolidation and not result.consolidation.get("not_learned")


def test_the_studio_graph_raises_out_of_the_node(tmp_path, monkeypatch):
    """The served graph (graphs/studio.py) with the operator's model down: the run ends with
    the error (LangGraph's API marks it failed), not on fallbacks."""
    url = dead_url()
    for name, value in {
        "ROBOMEMORY_GAME": GAME,
        "ROBOMEMORY_MODEL_PROVIDER": "openai",
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "fake",
        "ROBOMEMORY_EMBEDDER": "fake",
        "ROBOMEMORY_HOME": str(tmp_path / "home"),
        "ROBOMEMORY_ROBOT_ID": "studio-down",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(context_mod, "_served", None)
    sys.modules.pop("robomemory.graphs.studio", None)
    module = importlib.import_module("robomemory.graphs.studio")
    try:
        with pytest.raises(ModelUnavailableError, match="connection refused"):
            module.graph.invoke({"task": "cook the meal"}, context={"max_steps": 2})
        memory = module.operator_context.memory
        assert memory.semantic.items() == [] and memory.episodic.items() == []
    finally:
        sys.modules.pop("robomemory.graphs.studio", None)
        module.operator_context.memory.close()
        module.operator_context.executor.close()
        release_robot((tmp_path / "home" / "memory" / "locks" / "studio-down.lock").resolve())


# --- a robot skill ---------------------------------------------------------------------------


def test_a_skill_whose_check_model_is_down_stops_the_arm_and_the_run():
    """The skill check's model is asked mid-skill: when it is down, the arm is stopped before
    the error ends the run (the arm never goes on alone)."""
    pytest.importorskip("websockets")
    from robot_servers import policy_server

    from robomemory.core import Action
    from robomemory.executors.arm import FakeArm
    from robomemory.executors.pi0 import Pi0Client
    from robomemory.executors.skills import ModelSuccessCheck, Pi0Skill, SkillConfig

    chat = ChatOpenAI(base_url=dead_url(), api_key="x", model="vlm", max_retries=0)
    check = ModelSuccessCheck(StructuredLLM(chat, vision=True))
    arm = FakeArm()
    config = SkillConfig(control_hz=2000.0, actions_per_chunk=10, max_steps=40)
    with policy_server() as (_, port):
        client = Pi0Client(f"ws://127.0.0.1:{port}", infer_timeout_s=5.0)
        try:
            skill = Pi0Skill(client, arm, config, success_check=check)
            with pytest.raises(ModelUnavailableError, match="connection refused"):
                skill.run(Action(verb="pick_up", args=["banana"]))
        finally:
            client.close()
    assert arm.applied and arm.stop_calls == 1


# --- the bench -------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["robomemory", "react"])
def test_a_dead_model_stops_the_suite_and_records_no_episode(tmp_path, agent):
    config = AgentConfig()
    config.model.embedder = "fake"
    config.table_decides = False  # the first step asks the model (the table decides none)
    runner = SuiteRunner(
        get_suite("tiny"),
        tmp_path / "out",
        config=config,
        llm=llm_at(dead_url()),
        embedder=DeterministicFakeEmbedding(size=32),
        show_progress=False,
    )
    with pytest.raises(ModelUnavailableError, match="connection refused"):
        runner.run([agent], attempts=1, episodes=2)
    assert not list((tmp_path / "out").rglob("episodes/*.json"))  # no junk result


# --- the command line ------------------------------------------------------------------------


def _cli(args: list[str], env: dict, timeout: float = 240) -> tuple[int, str]:
    """The command's exit status and output; a run that does not stop fails at ``timeout``
    (no bound on seconds beyond that: a loaded machine starts the command slowly)."""
    proc = subprocess.run(
        [sys.executable, "-m", "robomemory.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _env(tmp_path: Path) -> dict:
    return os.environ | {
        "OPENAI_API_KEY": "fake",
        "ROBOMEMORY_HOME": str(tmp_path),
        "COLUMNS": "200",
    }


def _run_args(url: str, data: Path, *more: str) -> list[str]:
    return [
        "run",
        # the cut game: the table leaves the planner a choice (it decides every step of GAME)
        *("--game", "cooking_1room_cut", "--model", "openai", "--base-url", url),
        *("--max-steps", "3", "--home", str(data), "--thread", "t1"),
        *more,
    ]


def _nothing_in_memory(data: Path, capsys) -> None:
    """`robomemory inspect` finds no memory of the robot: none was written."""
    capsys.readouterr()
    code = cli_main(["inspect", "--robot", "default", "--home", str(data)])
    said = capsys.readouterr()
    assert code != 0 and "no memor" in said.out + said.err, said


@pytest.mark.slow
def test_run_with_nothing_listening_stops_with_one_line_and_writes_no_memory(tmp_path, capsys):
    url, data = dead_url(), tmp_path / "data"
    code, out = _cli(_run_args(url, data), _env(tmp_path))
    assert code == ModelUnavailableError.exit_status == 3, out
    (line,) = [x for x in out.splitlines() if "model unavailable" in x]
    assert url in line and "connection refused" in line, out
    assert "Traceback" not in out and "WARNING" not in out, out  # no fallbacks were played
    assert not (data / "runs" / "t1.json").exists()
    _nothing_in_memory(data, capsys)


@pytest.mark.slow
def test_run_on_a_failing_server_stops_then_resumes(tmp_path, capsys):
    data = tmp_path / "data"
    with FakeOpenAIServer(responder=lambda n, s, m: Reply.error(500, "model crashed")) as srv:
        code, out = _cli(_run_args(srv.base_url, data), _env(tmp_path))
    assert code == 3, out
    (line,) = [x for x in out.splitlines() if "model unavailable" in x]
    assert srv.base_url in line and "3 model calls in a row got no answer" in line, out
    assert "model crashed" in line and "resume with --thread t1 --resume" in line, out
    assert "Traceback" not in out, out
    assert not (data / "runs" / "t1.json").exists()
    _nothing_in_memory(data, capsys)  # the spatial map included: no relation was extracted
    with FakeOpenAIServer() as srv:  # the model is back (elsewhere): the run goes on
        code, out = _cli(_run_args(srv.base_url, data, "--resume"), _env(tmp_path))
    assert code == 0, out
    assert (data / "runs" / "t1.json").exists()


@pytest.mark.slow
def test_bench_with_nothing_listening_stops_with_one_line(tmp_path):
    """A game where the effects table leaves react a choice (the cut one: the table decides
    every step of the plain one, which then needs no model and is a result)."""
    url, out_dir = dead_url(), tmp_path / "out"
    game = str(bundled_game("cooking_1room_cut"))
    args = ["bench", "suite", "--games", game, "--agent", "react", "--attempts", "1"]
    args += ["--model", "openai", "--base-url", url, "--out", str(out_dir), "--no-progress"]
    code, out = _cli(args, _env(tmp_path))
    assert code == 3, out
    (line,) = [x for x in out.splitlines() if "model unavailable" in x]
    assert line.startswith("robomemory: error: model unavailable at " + url), out
    assert "Traceback" not in out, out
    assert not list(out_dir.rglob("episodes/*.json"))
