"""Bundled TextWorld games, their oracle walkthroughs in the action API, and ground-truth locations.

The games live in ``robomemory/data/games/`` (made by ``scripts/make_games.py`` with fixed seeds).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from textworld.logic import Proposition

from robomemory.core import TASK_COMPLETE, Action

GAMES_PACKAGE_DIR = ("data", "games")

# Types of the TextWorld knowledge base whose entities can be carried (object, food, key, meal).
PORTABLE_TYPES = frozenset({"o", "f", "k", "meal"})
# Holder types that are bookkeeping of the cooking logic, not places in the world.
_BOOKKEEPING_TYPES = frozenset({"RECIPE", "ingredient"})

# Game command patterns -> verb of the action API (order matters: first match wins).
_COMMAND_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^go (\w+)$"), "go"),
    (re.compile(r"^take (.+?) from (.+)$"), "pick_up"),
    (re.compile(r"^take (.+)$"), "pick_up"),
    (re.compile(r"^put (.+?) on (.+)$"), "put_down_to"),
    (re.compile(r"^insert (.+?) into (.+)$"), "put_down_to"),
    (re.compile(r"^drop (.+)$"), "drop"),
    (re.compile(r"^open (.+)$"), "open"),
    (re.compile(r"^close (.+)$"), "close"),
    (re.compile(r"^unlock (.+?) with (.+)$"), "unlock"),
    (re.compile(r"^cook (.+?) with (.+)$"), "cook"),
    (re.compile(r"^(slice|dice|chop) (.+?) with .+$"), "cut"),
    (re.compile(r"^eat (.+)$"), "eat"),
    (re.compile(r"^drink (.+)$"), "drink"),
    (re.compile(r"^examine (.+)$"), "examine"),
    (re.compile(r"^prepare meal$"), "prepare_meal"),
    (re.compile(r"^look$"), "look"),
    (re.compile(r"^inventory$"), "inventory"),
]


def games_dir() -> Path:
    """The folder of the bundled games (package data)."""
    return Path(str(resources.files("robomemory").joinpath(*GAMES_PACKAGE_DIR)))


def list_bundled_games() -> list[str]:
    """Names of the bundled games (``cooking_1room``, ...), sorted."""
    return sorted(p.stem for p in games_dir().glob("*.z8") if p.with_suffix(".json").exists())


def bundled_game(name: str) -> Path:
    """Path of a bundled game's ``.z8`` (``name`` with or without the suffix)."""
    stem = name.removesuffix(".z8")
    path = games_dir() / f"{stem}.z8"
    if not path.exists():
        raise FileNotFoundError(
            f"no bundled game {name!r}; bundled: {', '.join(list_bundled_games())}"
        )
    return path


DEFAULT_GAME = "cooking_1room"

_Z_HEADER = 64  # bytes of a Z-machine story header
_Z_LENGTH_SCALE = {1: 2, 2: 2, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8}  # header 0x1A unit by version


# Larger than any TextWorld story or its metadata; a bigger file is no game.
MAX_GAME_BYTES = 64 * 1024 * 1024
# What TextWorld's Game.deserialize reads from the .json beside a game, by JSON type.
_GAME_JSON_KEYS = {"KB": dict, "world": list, "grammar": dict, "quests": list, "infos": list}


class GameFileError(ValueError):
    """A game file the interpreter cannot play (it would end the whole process, not raise)."""


def resolve_game(game: str | Path | None) -> Path:
    """A checked game file from a path or a bundled name; the smallest bundled game when None."""
    if game is None or str(game) == "":
        return check_game_file(bundled_game(DEFAULT_GAME))
    path = Path(game).expanduser()
    if path.suffix in (".z8", ".ulx", ".z5") or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"no game file {path}")
        return check_game_file(path)
    return check_game_file(bundled_game(str(game)))


def check_game_file(path: str | Path) -> Path:
    """Check a game before the interpreter sees it: Jericho's C interpreter calls ``exit()`` on
    a bad story ("Fatal error: Unknown Z-code version"), ending the process with it. Z-machine
    files: version byte, the header's length and checksum; Glulx: magic and length; and the
    ``.json`` TextWorld reads beside the game must be a JSON object. Raises GameFileError."""
    path = Path(path)
    problem = _file_problem(path)
    if problem is not None:
        raise GameFileError(f"game file {path} cannot be played: {problem}")
    data = path.read_bytes()
    problem = _glulx_problem(data) if path.suffix == ".ulx" else _zcode_problem(data)
    if problem is None:
        problem = _json_problem(path.with_suffix(".json"))
    if problem is not None:
        raise GameFileError(f"game file {path} cannot be played: {problem}")
    return path


def _file_problem(path: Path) -> str | None:
    """Not a regular file (a FIFO would block the read for ever) or too big to be a game."""
    if not path.is_file():
        return "not a regular file"
    size = path.stat().st_size
    return f"{size} bytes, more than a game's {MAX_GAME_BYTES}" if size > MAX_GAME_BYTES else None


def _zcode_problem(data: bytes) -> str | None:
    if len(data) < _Z_HEADER:
        return f"{len(data)} bytes, shorter than a Z-machine header"
    version = data[0]
    if version not in _Z_LENGTH_SCALE:
        return f"unknown Z-code version {version}"
    length = int.from_bytes(data[0x1A:0x1C], "big") * _Z_LENGTH_SCALE[version]
    if length and len(data) < length:
        return f"truncated ({len(data)} of {length} bytes)"
    expected = int.from_bytes(data[0x1C:0x1E], "big")
    if length and expected and sum(data[_Z_HEADER:length]) % 0x10000 != expected:
        return "checksum mismatch (corrupt story)"
    return None


def _glulx_problem(data: bytes) -> str | None:
    if len(data) < 36 or data[:4] != b"Glul":
        return "not a Glulx story (no 'Glul' header)"
    length = int.from_bytes(data[12:16], "big")  # EXTSTART: the story's size on disk
    if len(data) < length:
        return f"truncated ({len(data)} of {length} bytes)"
    return None


def _json_problem(meta: Path) -> str | None:
    if not meta.exists():
        return f"no {meta.name} beside it (TextWorld reads the game's metadata there)"
    problem = _file_problem(meta)
    if problem is not None:
        return f"{meta.name}: {problem}"
    try:
        value = json.loads(meta.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return f"{meta.name} is not valid JSON ({type(exc).__name__}: {exc})"
    if not isinstance(value, dict):
        return f"{meta.name} is not a JSON object"
    wrong = [k for k, kind in _GAME_JSON_KEYS.items() if not isinstance(value.get(k), kind)]
    if wrong:
        return f"{meta.name} is no TextWorld game's metadata (missing or wrong: {', '.join(wrong)})"
    return None


def walkthrough_commands(game_path: str | Path) -> list[str]:
    """The game's oracle walkthrough as game commands, read from the ``.json`` beside the game."""
    data = json.loads(Path(game_path).with_suffix(".json").read_text())
    walkthrough = (data.get("metadata") or {}).get("walkthrough")
    if walkthrough:
        return list(walkthrough)
    quests = data.get("quests") or []
    # Without a stored walkthrough, the longest quest's commands reach the final goal.
    return max((list(q.get("commands") or []) for q in quests), key=len, default=[])


def command_to_action(command: str) -> Action:
    """Translate one game command into the action API (``take x from y`` -> ``pick_up(x)``)."""
    text = " ".join(command.strip().lower().split())
    for pattern, verb in _COMMAND_PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        groups = list(match.groups())
        if verb == "cut":
            return Action(verb=groups[0], args=[groups[1]])
        if verb == "pick_up":
            return Action(verb=verb, args=[groups[0]])
        return Action(verb=verb, args=groups)
    raise ValueError(f"no action of the API for game command {command!r}")


def walkthrough_actions(game_path: str | Path) -> list[Action]:
    """The oracle walkthrough translated into the action API, ending with ``task_complete()``."""
    actions = [command_to_action(c) for c in walkthrough_commands(game_path)]
    return [*actions, Action(verb=TASK_COMPLETE)]


def world_locations(facts: Iterable[Proposition]) -> dict[str, tuple[str, str]]:
    """Map each portable object to ``(relation, holder)`` from the game's ground-truth facts.

    Relations are ``in`` (a container, or ``inventory`` when the player carries it), ``on`` (a
    supporter) and ``at`` (lying in a room).
    """
    located: dict[str, tuple[str, str]] = {}
    for fact in facts:
        if fact.name not in ("in", "on", "at") or len(fact.arguments) != 2:
            continue
        thing, holder = fact.arguments
        if thing.type not in PORTABLE_TYPES or holder.type in _BOOKKEEPING_TYPES:
            continue
        holder_name = "inventory" if holder.type == "I" else holder.name
        located[thing.name] = (fact.name, holder_name)
    return located
