"""The fleet checkpointer: build_agent on LangGraph's PostgresSaver, against a real PostgreSQL
server the test starts (initdb + pg_ctl). A robot killed with SIGKILL mid-run resumes in a new
process from the shared database; two robots write their threads into it at once.

The model is the FAKE scripted one (reliability.scripted); TextWorld and the stores are real.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pg_server import kill_server, missing_reason, postgres_server
from reliability.scripted import lifelong_llm

from robomemory import build_agent
from robomemory.config import AgentConfig, robot_thread
from robomemory.executors.envs.textworld import TextWorldExecutor, bundled_game, walkthrough_actions
from robomemory.factory import build_checkpointer
from robomemory.graphs.builder import build_graph
from robomemory.memory.stores.vector_store import MemoryServerError
from robomemory.models import EMBEDDING_DIM

pytest.importorskip("langgraph.checkpoint.postgres", reason="needs the postgres extra")
if missing_reason():
    pytest.skip(missing_reason(), allow_module_level=True)

import psycopg  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402

from robomemory.cli import main as cli_main  # noqa: E402
from robomemory.memory.stores import pg_checkpoints, pg_connect  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
# the walkthrough less its "inventory" read and the unneeded task_complete
STEPS = len(
    [a for a in walkthrough_actions(bundled_game("cooking_1room")) if a.verb != "inventory"]
)
STEPS -= 1


@pytest.fixture(scope="module")
def pg_url():
    with postgres_server() as url:
        yield url


def _worker(data: Path, url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "reliability.worker", str(data), "--checkpoints", url, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
        start_new_session=True,
    )


def _thread(url: str, robot: str, thread: str) -> dict:
    """A robot's thread's state read back over a new connection."""
    saver = build_checkpointer(url, "/nonexistent")
    try:
        graph = build_graph().compile(checkpointer=saver)
        return dict(
            graph.get_state({"configurable": {"thread_id": robot_thread(robot, thread)}}).values
        )
    finally:
        saver.conn.close()


def test_build_agent_checkpoints_into_postgres(pg_url, tmp_path):
    cfg = AgentConfig(robot_id="pg-bot", max_steps=12)
    cfg.memory.data_dir = tmp_path / "memory"
    agent = build_agent(
        cfg,
        TextWorldExecutor(bundled_game("cooking_1room")),
        llm=lifelong_llm("cooking_1room"),
        embedder=DeterministicFakeEmbedding(size=32),
        checkpointer=pg_url,
    )
    with agent:
        assert isinstance(agent.graph.checkpointer, PostgresSaver)
        result = agent.run(thread_id="pg-bot-1")
    assert result.success and result.steps == STEPS
    stored = _thread(pg_url, "pg-bot", "pg-bot-1")  # read back over a new connection
    assert stored["success"] is True and stored["step"] == STEPS
    assert not (tmp_path / "memory" / "checkpoints.sqlite").exists()


def test_kill_9_mid_run_then_resume_in_a_new_process(pg_url, tmp_path):
    data = tmp_path / "memory"
    first = _worker(data, pg_url, "--robot", "k9-bot", "--episodes", "task-1",
                    "--stop-after-step", "2")  # fmt: skip
    try:
        assert first.stdout.readline().strip() == "at step 2", first.stderr.read()
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL
    before = _thread(pg_url, "k9-bot", "k9-bot-task-1")
    assert 1 <= before["step"] <= 2 and not before.get("done")  # killed mid-episode

    second = _worker(data, pg_url, "--robot", "k9-bot", "--episodes", "task-1")
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err[-2000:]
    assert "finished task-1 success=True" in out
    after = _thread(pg_url, "k9-bot", "k9-bot-task-1")
    steps = [t["step"] for t in after["trajectory"]]
    assert steps == list(range(1, STEPS + 1))  # nothing lost, nothing executed twice
    kept = before["trajectory"]
    assert after["trajectory"][: len(kept)] == kept  # the killed run's steps were kept
    assert after["consolidation"]  # the episode was consolidated once, in the new process


def test_two_robots_share_one_database_at_once(pg_url, tmp_path):
    robots = {
        name: _worker(tmp_path / name, pg_url, "--robot", name, "--episodes", "task-1")
        for name in ("fleet-a", "fleet-b")
    }
    for name, proc in robots.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name}: {err[-2000:]}"
        assert "finished task-1 success=True" in out
    for name in robots:
        assert _thread(pg_url, name, f"{name}-task-1")["step"] == STEPS


STARTER = """
import sys
from robomemory.factory import build_checkpointer
print("loaded", flush=True)
sys.stdin.readline()  # go: the four set up the tables at the same moment
saver = build_checkpointer(sys.argv[1], "/nonexistent")
saver.conn.close()
print("ready")
"""


def test_four_robots_start_at_once_on_a_fresh_database(pg_url):
    """PostgresSaver.setup() is serialized (an advisory lock): no deadlock, no duplicate key."""
    import psycopg

    failures = []
    for attempt in range(5):
        name = f"fresh_{attempt}"
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        url = pg_url.rsplit("/", 1)[0] + f"/{name}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", STARTER, url],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=ENV,
                cwd=ROOT,
            )
            for _ in range(4)
        ]
        for proc in procs:
            assert proc.stdout.readline().strip() == "loaded", proc.stderr.read()
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 0 or out.strip() != "ready":
                failures.append(f"db {name}: {err.strip().splitlines()[-3:]}")
    assert not failures, failures


# ---- a checkpoint server that is frozen or stopped: one line, never a hang ----------------------
@contextmanager
def _frozen(pid: int) -> Iterator[None]:
    """``pid`` stopped (SIGSTOP) while the block runs."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_frozen_checkpoint_server_is_one_line_not_a_hang(pg_url, monkeypatch):
    """Its host still acknowledges TCP and the frozen server enforces no statement timeout:
    the client cuts the wait (fleet memory does the same)."""
    saver = build_checkpointer(pg_url, "/nonexistent")
    monkeypatch.setattr(pg_checkpoints, "ANSWER_TIMEOUT_S", 2.0)
    config = {"configurable": {"thread_id": "frozen", "checkpoint_ns": ""}}
    try:
        start = time.monotonic()
        with _frozen(saver.conn.info.backend_pid):
            with pytest.raises(MemoryServerError) as err:
                saver.get_tuple(config)
        assert time.monotonic() - start < 10
        assert re.fullmatch(
            r"checkpoint server 127\.0\.0\.1:\d+/postgres: no answer in 2 s \(a frozen server\?\)",
            str(err.value),
        )
    finally:
        saver.conn.close()


def test_a_frozen_server_at_connect_is_one_line(pg_url, monkeypatch):
    monkeypatch.setattr(pg_connect, "CONNECT_TIMEOUT_S", 1)
    data = psycopg.connect(pg_url).execute("SHOW data_directory").fetchone()[0]
    postmaster = int((Path(data) / "postmaster.pid").read_text().split()[0])
    start = time.monotonic()
    with _frozen(postmaster), pytest.raises(MemoryServerError, match="cannot connect to checkp"):
        build_checkpointer(pg_url, "/nonexistent")
    assert time.monotonic() - start < 8


@pytest.mark.reliability  # a server of its own and a whole run: ~20 s, more when loaded
def test_a_server_stopped_mid_run_is_one_line_and_names_the_resume(tmp_path, monkeypatch, capsys):
    """Stopped after the run's second checkpoint: one line on stderr (no 62-line psycopg
    traceback), exit status 1, the command that resumes the run."""
    with postgres_server() as url:
        puts = []

        def put(self, *args, **kwargs):
            puts.append(1)
            if len(puts) == 3:
                kill_server(url)
            return original(self, *args, **kwargs)

        original = pg_checkpoints.GuardedPostgresSaver.put
        monkeypatch.setattr(pg_checkpoints.GuardedPostgresSaver, "put", put)
        fake = DeterministicFakeEmbedding(size=EMBEDDING_DIM)
        monkeypatch.setattr("robomemory.models.make_embedder", lambda cfg: fake)
        argv = ["run", "--model", "fake", "--game", "cooking_1room", "--home", str(tmp_path)]
        code = cli_main([*argv, "--thread", "t1", "--checkpoints", url])
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert code == 1 and len(lines) == 1, said.err
    assert lines[0].startswith("robomemory: error: checkpoint server 127.0.0.1:"), lines
    assert lines[0].endswith("the run stopped, resume with --thread t1 --resume"), lines
    assert "Traceback" not in said.out + said.err and len(puts) == 3
