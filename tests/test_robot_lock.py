"""One process per robot on a memory folder; different robots run at once.

Real processes, real lock files, real stores and TextWorld; the model is the FAKE
OpenAI-compatible server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from robomemory.cli import main
from robomemory.locks import RobotBusyError, acquire_robot, lock_path, release_robot
from robomemory.testing.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]

# A process that runs robot r1: builds its agent (memory open, lock held) and waits.
HOLDER = """
import sys, time
from langchain_core.embeddings import DeterministicFakeEmbedding
from robomemory import build_agent
from robomemory.config import AgentConfig
from robomemory.executors.envs.textworld import TextWorldExecutor, resolve_game
from robomemory.testing import scripted_llm
cfg = AgentConfig(robot_id="r1")
cfg.memory.data_dir = sys.argv[1]
agent = build_agent(cfg, TextWorldExecutor(resolve_game("cooking_1room")), llm=scripted_llm({}),
                    embedder=DeterministicFakeEmbedding(size=32))
print("running", flush=True)
time.sleep(120)
"""


@pytest.fixture
def robot_r1(tmp_path):
    data = tmp_path / "home" / "memory"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        assert proc.stdout.readline().strip() == "running"
        yield proc, tmp_path / "home"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _run(home: Path, robot: str, model_url: str, capsys) -> tuple[int, list[str]]:
    argv = ["run", "--home", str(home), "--robot", robot, "--model", "openai"]
    argv += ["--base-url", model_url, "--max-steps", "2"]
    code = main(argv)
    out = capsys.readouterr()
    return code, [line for line in (out.out + out.err).splitlines() if line.strip()]


def test_the_same_robot_twice_gets_one_clear_line(robot_r1, capsys):
    proc, home = robot_r1
    with FakeOpenAIServer(latency_s=0.0) as model:
        code, lines = _run(home, "r1", model.base_url, capsys)
        assert not model.requests
    assert code == 2
    busy = f"robot r1 is already running (pid {proc.pid}) on {home / 'memory'}"
    assert lines == [f"robomemory: error: {busy}"]


def test_another_robot_runs_while_the_first_is_running(robot_r1, capsys, monkeypatch):
    proc, home = robot_r1
    monkeypatch.setenv("OPENAI_API_KEY", "fake")
    with FakeOpenAIServer(latency_s=0.0) as model:
        code, lines = _run(home, "r2", model.base_url, capsys)
        assert model.requests
    assert code == 0, lines
    assert proc.poll() is None  # r1 is still running


def test_a_killed_robot_leaves_no_stale_lock(robot_r1):
    proc, home = robot_r1
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    path = acquire_robot(home / "memory", "r1")  # the kernel released the dead holder's lock
    release_robot(path)


def test_one_process_may_hold_its_robot_twice(tmp_path):
    first = acquire_robot(tmp_path, "bot")
    second = acquire_robot(tmp_path, "bot")
    assert first == second == lock_path(tmp_path, "bot").resolve()
    release_robot(first)
    release_robot(second)
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from robomemory.locks import acquire_robot as a; a({str(tmp_path)!r}, 'bot')",
        ],
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr  # released: another process may take it


def test_busy_error_names_the_robot_and_pid(robot_r1):
    proc, home = robot_r1
    with pytest.raises(RobotBusyError, match=rf"robot r1 is already running \(pid {proc.pid}\)"):
        acquire_robot(home / "memory", "r1")


def test_a_symlinked_lock_file_is_refused_and_its_target_kept(tmp_path):
    from robomemory.locks import LockFileError

    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    lock = lock_path(tmp_path / "memory", "r9")
    lock.parent.mkdir(parents=True)
    lock.symlink_to(target)
    with pytest.raises(LockFileError, match="symbolic link") as info:
        acquire_robot(tmp_path / "memory", "r9")
    assert "\n" not in str(info.value) and str(lock) in str(info.value)
    assert target.read_text() == "keep me\n"
