"""`robomemory run` as a user runs it: a real process, a real game, SQLite checkpoints; the model
is the FAKE OpenAI-compatible server. Includes a hard kill mid-run and `--resume` in a new process.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from robomemory.testing.openai_server import FakeOpenAIServer


def _cli(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "robomemory.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _checkpoints(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as con:
            return con.execute("select count(*) from checkpoints").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_run_killed_then_resumed_in_a_new_process(tmp_path):
    data = tmp_path / "data"
    with FakeOpenAIServer(latency_s=0.05) as model:
        env = os.environ | {"OPENAI_API_KEY": "fake", "ROBOMEMORY_HOME": str(tmp_path)}
        base = [
            "run",
            "--game",
            "cooking_1room",
            "--model",
            "openai",
            "--base-url",
            model.base_url,
            "--max-steps",
            "5",
            "--home",
            str(data),
            "--thread",
            "t1",
        ]
        proc = _cli(base, env)
        db = data / "memory" / "checkpoints.sqlite"
        # kill after 12 checkpoints, or after 120 s once there is at least one (a loaded
        # machine may take a while to start; a kill before any checkpoint tests nothing)
        soft, hard = time.monotonic() + 120, time.monotonic() + 400
        while proc.poll() is None and time.monotonic() < hard:
            count = _checkpoints(db)
            if count >= 12 or (count and time.monotonic() > soft):
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)  # a hard crash: no clean-up runs
        proc.wait()
        assert not (data / "runs" / "t1.json").exists()

        resumed = _cli([*base, "--resume"], env)
        out, _ = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, out
    trace = json.loads((data / "runs" / "t1.json").read_text())
    # the fake model takes the first action offered, which may end the game early
    assert trace["end_reason"] in ("max_steps", "won", "lost")
    assert 2 <= trace["steps"] <= 5
    assert [t["step"] for t in trace["trajectory"]] == list(range(1, trace["steps"] + 1))
    assert trace["usage"]["consolidate"]["runs"] == 1
    assert "model calls" in out and "trace:" in out
    # the game is its own world: its map is kept apart from the robot's other maps
    assert [p.name for p in (data / "memory" / "spatial").glob("*.sqlite3")] == [
        "spatial_default__cooking_1room.sqlite3"
    ]


def test_resume_needs_a_thread(tmp_path):
    proc = _cli(["run", "--resume"], os.environ | {"ROBOMEMORY_HOME": str(tmp_path)})
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "--resume needs --thread" in out


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path):
    env = os.environ | {"ROBOMEMORY_HOME": str(tmp_path)}
    for args, expected in (
        (["run", "--game", "no_such_game"], "no bundled game 'no_such_game'"),
        (["run", "--ablate", "wings"], "unknown ablation 'wings'"),
        (["run", "--plan-len", "0"], "max_plan_len: Input should be greater than or equal to 1"),
        (["run", "--thread", "../x"], "thread id '../x' may use only"),
    ):
        proc = _cli(args, env)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 2 and expected in out and "Traceback" not in out, out


def test_version_and_one_robot_flag_name_across_commands(capsys):
    import pytest

    import robomemory
    from robomemory.cli import build_parser, main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"robomemory {robomemory.__version__}"
    for command in ("run", "show", "inspect"):
        parser, _ = build_parser([command])
        assert parser.parse_args([command, "--robot", "r1"]).robot == "r1"
    parser, _ = build_parser(["run"])
    assert parser.parse_args(["run", "--robot-id", "r2"]).robot == "r2"  # the old name still works
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    shown = capsys.readouterr().out
    assert "--robot ROBOT" in shown and "--robot-id" not in shown  # hidden alias


def test_a_damaged_store_is_one_line_naming_it(tmp_path):
    data = tmp_path / "data"
    memory = data / "memory"
    memory.mkdir(parents=True)
    garbage = b"SQLite format 3\x00" + os.urandom(8192)
    with FakeOpenAIServer(latency_s=0.0) as model:
        env = os.environ | {"OPENAI_API_KEY": "fake", "ROBOMEMORY_HOME": str(tmp_path)}
        base = ["run", "--model", "openai", "--base-url", model.base_url, "--home", str(data)]
        for name in ("checkpoints.sqlite", "history.sqlite3"):
            (memory / name).write_bytes(garbage)
            proc = _cli([*base, "--max-steps", "1"], env)
            out, _ = proc.communicate(timeout=300)
            assert proc.returncode == 2 and "Traceback" not in out, out
            assert f"{memory / name} is damaged" in " ".join(out.split()), out
            (memory / name).unlink()
        assert not model.requests


def test_a_task_that_is_not_utf8_is_one_line_not_a_traceback(tmp_path):
    data = tmp_path / "data"
    with FakeOpenAIServer(latency_s=0.0) as model:
        env = os.environ | {"OPENAI_API_KEY": "fake", "ROBOMEMORY_HOME": str(tmp_path)}
        base = ["run", "--model", "openai", "--base-url", model.base_url, "--home", str(data)]
        argv = [sys.executable.encode(), b"-m", b"robomemory.cli"]
        argv += [a.encode() for a in base] + [
            b"--max-steps",
            b"1",
            b"--task",
            b"cook \xff\xfe meal",
        ]
        proc = subprocess.run(argv, env=env, capture_output=True, timeout=300)
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    assert proc.returncode == 2 and "Traceback" not in out, out
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    assert len(lines) == 1 and "--task" in lines[0] and "UTF-8" in lines[0], out
    assert not model.requests


def test_a_huge_robot_id_is_echoed_bounded(tmp_path):
    env = os.environ | {"ROBOMEMORY_HOME": str(tmp_path)}
    proc = _cli(["run", "--robot", "x" * 100_000, "--max-steps", "1"], env)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "Traceback" not in out, out[:500]
    lines = out.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400 and "100,000 characters" in lines[0], out[:500]
