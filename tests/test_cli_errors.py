"""Every command of `robomemory` given bad input: a missing file, a folder for a file, a file
that is no UTF-8, a file of the wrong type, a 10 MB file, a value of the wrong type. Each is
one line on stderr, ``robomemory: error: ...``, exit status 2, no traceback, and nothing heavy
(a model, a world) is loaded first."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from robomemory.cli import BENCHES, COMMANDS, main

F = "{file}"
# each command with the argument naming a file (or folder) that the test spoils
FILE_ARGS: dict[str, list[str]] = {
    "run": ["run", "--model", "fake", "--game", F],
    "run --home": ["run", "--model", "fake", "--game", "cooking_1room", "--home", F],
    "show": ["show", F],
    "inspect": ["inspect", "--robot", "r1", "--home", F],
    "bench kg-growth": ["bench", "kg-growth", "--embedder", "fake", "--game", F],
    "bench memory-scale": ["bench", "memory-scale", "--data", F],
    "bench local-model": ["bench", "local-model", "--prompts", F],
    "bench summary-claims": ["bench", "summary-claims", F],
    "bench summary-claims --replay": ["bench", "summary-claims", "--replay", F],
    "bench suite": ["bench", "suite", "--model", "fake", "--suite-file", F, "--out", "{out}"],
    "bench fleet": ["bench", "fleet", "--model", "fake", "--suite-file", F, "--out", "{out}"],
    "bench table": ["bench", "table", "--model", "fake", "--suites", "tiny", "--out", F],
    "bench spatial-accuracy": ["bench", "spatial-accuracy", "--out", F],
}
# arguments naming a folder: missing, one is made; a file given is the bad input
FOLDERS = {"run --home", "inspect", "bench memory-scale", "bench table", "bench spatial-accuracy"}
# each command with an option value of the wrong type (every command has one)
WRONG_VALUES: dict[str, list[str]] = {
    "run": ["run", "--max-steps", "many"],
    "show": ["show", "--home", "/dev/null"],
    "inspect": ["inspect", "--robot", "r1", "--history", "all"],
    "native": ["native", "--jobs", "many"],
    **{
        f"bench {name}": ["bench", name, option, "many"]
        for name, option in {
            "memory-latency": "--steps",
            "kg-growth": "--top-n",
            "memory-scale": "--kg-steps",
            "pi0-client": "--iterations",
            "sim-aloha": "--image-size",
            "local-model": "--calls",
            "summary-claims": "--json",
            "suite": "--episodes",
            "table": "--episodes",
            "fleet": "--episodes",
            "spatial-accuracy": "--episodes",
            "mem0-compare": "--adds",
        }.items()
    },
}
WRONG_VALUES["bench summary-claims"] = ["bench", "summary-claims", "--json", "/dev/null/x"]


def spoiled(kind: str, folder: Path) -> Path:
    """A file (or folder) of ``kind``: missing, folder, not-utf8, wrong-type, huge."""
    path = folder / f"{kind}.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b"\xff\xfe\x00garbage\x80" * 64)
    elif kind == "wrong-type":
        path.write_text("tasks: 5\n")  # YAML and JSON readers both get no mapping they know
    elif kind == "huge":
        path.write_bytes(b"a" * (10 * 1024 * 1024))
    return path


def one_error_line(argv: list[str], capsys) -> str:
    """Run the command; assert exit status 2 and one error line; return that line."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    said = capsys.readouterr()
    lines = said.err.strip().splitlines()
    assert code == 2, (code, said)
    assert len(lines) == 1 and lines[0].startswith("robomemory: error: "), said
    assert "Traceback" not in said.out + said.err
    return lines[0]


def test_every_command_is_covered():
    commands = {*COMMANDS, *(f"bench {name}" for name in BENCHES)}
    assert commands == set(WRONG_VALUES)
    assert {name.split(" --")[0] for name in FILE_ARGS} <= commands


@pytest.fixture(autouse=True)
def no_model(monkeypatch, tmp_path):
    """Nothing heavy may load before input is checked; memories stay in the test's folder."""

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded before the input was checked")

    monkeypatch.setattr("robomemory.models.make_llm", refuse)
    monkeypatch.setattr("robomemory.models.make_embedder", refuse)
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


KINDS = ("missing", "folder", "not-utf8", "wrong-type", "huge")
# a folder argument (an output folder): missing or a folder is good input there
BAD_FILES = [
    (command, kind)
    for command in sorted(FILE_ARGS)
    for kind in KINDS
    if not (command in FOLDERS and kind in ("missing", "folder"))
]


@pytest.mark.parametrize("command, kind", BAD_FILES)
def test_a_bad_file_is_one_line(command, kind, tmp_path, capsys):
    path = spoiled(kind, tmp_path)
    out = tmp_path / "out"
    argv = [a.format(file=path, out=out) for a in FILE_ARGS[command]]
    line = one_error_line(argv, capsys)
    assert len(line) < 700


@pytest.mark.parametrize("command", sorted(WRONG_VALUES))
def test_a_value_of_the_wrong_type_is_one_line(command, capsys):
    one_error_line(WRONG_VALUES[command], capsys)


def test_no_arguments_is_one_line(capsys):
    one_error_line([], capsys)
    one_error_line(["bench"], capsys)
    one_error_line(["run", "--no-such-option"], capsys)
    assert os.environ["ROBOMEMORY_HOME"]


# ---- fault 8: suite files ---------------------------------------------------------------------
def test_a_suite_file_of_the_wrong_shape_names_the_file(tmp_path):
    from robomemory.eval.picks import load_suite_file

    numbers = tmp_path / "numbers.yaml"
    numbers.write_text("tasks: 5\n")
    with pytest.raises(ValueError, match=r"numbers.yaml: tasks is a list of tasks .*not a int"):
        load_suite_file(numbers)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x00\x01\xff" * 100)
    with pytest.raises(ValueError, match=r"binary.yaml is not UTF-8 text \(byte 0xff at 2\)"):
        load_suite_file(binary)


@pytest.mark.parametrize(
    ("command", "inside"),
    [("run", "memory"), ("run", "runs"), ("inspect", "memory")],
)
def test_a_data_folder_whose_memory_or_runs_is_a_file_is_one_line(
    command, inside, tmp_path, capsys
):
    home = tmp_path / "d"
    home.mkdir()
    (home / inside).write_text("a file where a folder belongs\n")
    argv = {
        "run": ["run", "--model", "fake", "--game", "cooking_1room"],
        "inspect": ["inspect", "--robot", "r1"],
    }[command]
    line = one_error_line([*argv, "--home", str(home)], capsys)
    assert str(home / inside) in line, line
    assert (home / inside).read_text() == "a file where a folder belongs\n"  # left as it was
    assert sorted(p.name for p in home.iterdir()) == [inside]  # nothing made beside it


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    from robomemory.eval.picks import load_suite_file

    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\ntasks: *a9\n")
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"bomb.yaml: not YAML: aliases \(\*name\) are not"):
        load_suite_file(bomb)
    assert time.monotonic() - start < 1


# ---- faults 4, 5, 6: checkpoint and memory URLs -------------------------------------------------
def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://u:PW@host/db", "checkpoint store 'mysql': give a postgresql:// URL"),
        ("redis://:PW@host:6379", "checkpoint store 'redis'"),
        ("postgresql://u:PW@host:99999/db", "checkpoint URL is not valid: port '99999'"),
        ("postgresql://u:PW@host/db?sslmode=sure", "checkpoint URL is not valid: sslmode 'sure'"),
        ("postgresql://u:PW@host/db?nosuch=1", "checkpoint URL is not valid: invalid URI query"),
        ("postgresql://u:P W@host/db", "checkpoint URL is not valid: unexpected spaces"),
        ("postgresql://u:PW@127.0.0.1:{port}/db", "cannot connect to checkpoint server 127.0.0.1"),
        ("postgresql://u:PW@nohost.invalid/db", "cannot connect to checkpoint server nohost"),
        ("sqlite://relative.db", "a SQLite checkpoint URL is sqlite:///PATH"),
    ],
)
def test_a_bad_checkpoint_store_is_one_line_without_its_password(
    url, said, tmp_path, monkeypatch, capsys
):
    pytest.importorskip("langgraph.checkpoint.postgres", reason="needs the postgres extra")
    monkeypatch.chdir(tmp_path)  # where a scheme once became a SQLite file's folder
    url = url.replace("{port}", str(_refused_port()))
    argv = ["run", "--model", "fake", "--game", "cooking_1room", "--home", str(tmp_path / "d")]
    line = one_error_line([*argv, "--checkpoints", url], capsys)
    assert line.startswith(f"robomemory: error: {said}"), line
    assert "PW" not in line and "P W" not in line
    assert not list(tmp_path.iterdir())  # no store made (a scheme once became a folder here)


def test_a_sqlite_url_names_a_file(tmp_path):
    from robomemory.factory import build_checkpointer

    saver = build_checkpointer(f"sqlite:///{tmp_path}/c.sqlite", "/nonexistent")
    saver.conn.close()
    assert (tmp_path / "c.sqlite").is_file()


def test_a_memory_url_with_a_spaced_password_is_not_echoed(tmp_path, monkeypatch, capsys):
    pytest.importorskip("psycopg", reason="needs the postgres extra")
    monkeypatch.setenv("ROBOMEMORY_MEMORY_URL", "postgresql://fleet:my secret@db.local/robots")
    (tmp_path / "memory").mkdir()
    line = one_error_line(["inspect", "--robot", "r1", "--home", str(tmp_path)], capsys)
    assert "long-term memory URL is not valid" in line and "secret" not in line, line


@pytest.mark.parametrize(
    ("text", "url", "shown"),
    [
        ("at postgresql://u:se cret@h/db: refused", "postgresql://u:se cret@h/db", "u:***@h"),
        ('spaces found in "pa%20ss"', "postgresql://u:pa%20ss@h/db", '"***"'),
        ("x mysql://user:pw@host/db y", None, "mysql://user:***@host/db"),
        ("host=h password=hunter2 dbname=d", None, "password=*** dbname=d"),
    ],
)
def test_redact_hides_every_password(text, url, shown):
    from robomemory.errors import redact

    out = redact(text, url)
    assert shown in out and "cret" not in out and "pw@" not in out and "hunter2" not in out


# ---- fault 9: run's own error lines go to stderr ------------------------------------------------
def test_run_says_the_model_is_unavailable_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "fake")
    url = f"http://127.0.0.1:{_refused_port()}/v1"
    argv = ["run", "--game", "cooking_1room", "--model", "openai", "--base-url", url]
    code = main([*argv, "--home", str(tmp_path / "d")])
    said = capsys.readouterr()
    assert code == 3 and "model unavailable" not in said.out, said
    (line,) = said.err.strip().splitlines()
    assert line.startswith(f"robomemory: error: model unavailable at {url}"), line
    assert line.endswith("nothing was run")
