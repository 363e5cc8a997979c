"""A bad game file is refused with one line; the interpreter that tried survives.

Jericho's interpreter calls exit() on a bad story, so each try runs in a child Python (as a
notebook kernel or the Studio server would): it must print the refusal and go on.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from robomemory.executors.envs.textworld_games import (
    GameFileError,
    bundled_game,
    check_game_file,
    list_bundled_games,
)

ROOT = Path(__file__).resolve().parents[1]
GOOD = bundled_game("cooking_1room")

CHILD = """
import sys
from robomemory.executors.envs.textworld import TextWorldExecutor
from robomemory.executors.envs.textworld_games import GameFileError
try:
    TextWorldExecutor(sys.argv[1]).reset()
except GameFileError as exc:
    print("refused:", exc)
print("interpreter alive")
"""


def _bad_games(folder: Path) -> dict[str, Path]:
    story = GOOD.read_bytes()
    flipped = bytearray(story)
    flipped[len(story) // 2] ^= 0xFF
    stories = {
        "truncated": story[: len(story) // 3],
        "empty": b"",
        "garbage": bytes(range(256)) * 300,
        "short": story[:40],
        "corrupt": bytes(flipped),
    }
    games = {}
    for name, data in stories.items():
        path = folder / f"{name}.z8"
        path.write_bytes(data)
        path.with_suffix(".json").write_text(GOOD.with_suffix(".json").read_text())
        games[name] = path
    garbage_code = bytearray(story)  # header kept, story code garbage, checksum made right
    rng = random.Random(0)
    length = int.from_bytes(story[0x1A:0x1C], "big") * 8
    garbage_code[64:] = bytes(rng.randrange(256) for _ in range(len(story) - 64))
    garbage_code[0x1C:0x1E] = (sum(garbage_code[64:length]) % 0x10000).to_bytes(2, "big")
    stories["garbage-code"] = bytes(garbage_code)
    for name in ("garbage-code",):
        path = folder / f"{name}.z8"
        path.write_bytes(stories[name])
        path.with_suffix(".json").write_text(GOOD.with_suffix(".json").read_text())
        games[name] = path
    empty_json = folder / "emptyjson.z8"
    empty_json.write_bytes(story)
    empty_json.with_suffix(".json").write_text("{}")
    games["empty-json"] = empty_json
    fifo = folder / "fifo.z8"
    os.mkfifo(fifo)
    fifo.with_suffix(".json").write_text(GOOD.with_suffix(".json").read_text())
    games["fifo"] = fifo
    broken_json = folder / "nojson.z8"
    broken_json.write_bytes(story)
    broken_json.with_suffix(".json").write_text('{"metadata": ')
    games["bad-json"] = broken_json
    return games


KINDS = ["truncated", "empty", "garbage", "short", "corrupt", "bad-json"]
KINDS += ["garbage-code", "empty-json", "fifo"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_game_file_is_refused_and_the_interpreter_survives(tmp_path, kind):
    path = _bad_games(tmp_path)[kind]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Fatal error" not in out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "interpreter alive"
    refusal = [line for line in lines if line.startswith("refused:")]
    assert len(refusal) == 1 and str(path) in refusal[0], out.stdout


def test_every_bundled_game_passes_the_check():
    for name in list_bundled_games():
        assert check_game_file(bundled_game(name)) == bundled_game(name)


def test_the_refusal_names_the_file_and_the_problem(tmp_path):
    path = _bad_games(tmp_path)["truncated"]
    with pytest.raises(GameFileError) as info:
        check_game_file(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message and "truncated" in message
    missing = tmp_path / "alone.z8"
    missing.write_bytes(GOOD.read_bytes())
    with pytest.raises(GameFileError, match="no alone.json beside it"):
        check_game_file(missing)
    assert json.loads(GOOD.with_suffix(".json").read_text())  # the fixture's metadata is real
