"""Tasks of any world for `robomemory bench suite`: picked on the command line or listed in a
suite file, and checked against the worlds before anything runs.

- ``--sw TASK[:VARIATIONS]``: ScienceWorld tasks by name, variations as ``0``, ``0-4`` or
  ``0,3,7-9`` (default 0), with ``--sw-simplifications easy|none|LIST``.
- ``--twx GAME[:SEEDS]``: TextWorldExpress games by name and seed (default 0), with
  ``--twx-fold train|dev|test`` and ``--twx-params`` (its ``gameParams``).
- ``--tw CHALLENGE[:SEEDS]``: TextWorld games made by ``tw-make CHALLENGE`` with
  ``--tw-settings`` (e.g. ``"--level 15"``), cached like the named suites' games.
- ``--games PATH...``: TextWorld game files (``suites.games_suite``).
- ``--suite-file PATH.yaml``: a :class:`~robomemory.eval.suites.Suite` written down (name,
  description, max_steps, tasks of world / id / params, ``split: test`` to seal its traces); a
  game ``path`` is relative to the file.

Every bad input is a ValueError of one line: the CLI prints it and exits 2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from robomemory.eval.suites import (
    MAX_NAME,
    TW_CHALLENGES,
    Suite,
    TaskSpec,
    TextWorldParams,
    error_line,
    games_suite,
    short_id,
    textworld_game,
    tw_game_name,
)
from robomemory.inputs import load_yaml

_NUMBERS = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*")


def numbers(text: str, what: str) -> list[int]:
    """``"0-4,7"`` -> ``[0, 1, 2, 3, 4, 7]`` (each once, in order)."""
    if not _NUMBERS.fullmatch(text):
        raise ValueError(f"{what} {text!r}: write numbers and ranges, e.g. 0, 0-4 or 0,3,7-9")
    out: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        lo, hi = int(first), int(last or first)
        if hi < lo:
            raise ValueError(f"{what} {part!r}: a range goes up (e.g. {hi}-{lo})")
        out += range(lo, hi + 1)
    return list(dict.fromkeys(out))


def split_pick(pick: str, what: str) -> tuple[str, list[int]]:
    """``"boil:0-2"`` -> ``("boil", [0, 1, 2])``; ``"boil"`` -> ``("boil", [0])``."""
    name, sep, nums = pick.strip().partition(":")
    if not name or (sep and not nums):
        raise ValueError(f"{pick!r}: write NAME or NAME:{what.upper()}S, e.g. boil:0-2")
    return name, numbers(nums, what) if sep else [0]


def _known(name: str, names: Sequence[str], what: str, where: str = "") -> str:
    if name not in names:
        raise ValueError(f"{where}unknown {what} {name!r}; choose from {', '.join(names)}")
    return name


def sw_task_names() -> list[str]:
    try:
        from robomemory.executors.envs.scienceworld import scienceworld_task_names

        return scienceworld_task_names()
    except ImportError:
        raise ValueError(
            "ScienceWorld is not installed: pip install 'robomemory[worlds]'"
        ) from None


def twx_game_names() -> list[str]:
    try:
        from robomemory.executors.envs.twx import twx_game_names as names

        return names()
    except ImportError:
        raise ValueError(
            "TextWorldExpress is not installed: pip install 'robomemory[worlds]'"
        ) from None


def sw_tasks(picks: Iterable[str], simplifications: str = "easy") -> list[TaskSpec]:
    """ScienceWorld tasks from ``TASK[:VARIATIONS]`` picks."""
    from robomemory.executors.envs.scienceworld import check_simplifications  # no JVM

    simp = check_simplifications(simplifications)
    suffix = {"easy": "-easy", "": ""}.get(simp, "-" + simp.replace(",", "_"))
    names = sw_task_names()
    tasks = []
    for pick in picks:
        task, variations = split_pick(pick, "variation")
        _known(task, names, "ScienceWorld task")
        tasks += [
            TaskSpec(
                world="scienceworld",
                id=short_id(f"sw-{task}-v{v}{suffix}"),
                params={"task": task, "variation": v, "simplifications": simp},
            )
            for v in variations
        ]
    return tasks


def twx_tasks(
    picks: Iterable[str], fold: str = "train", params: str | None = None
) -> list[TaskSpec]:
    """TextWorldExpress games from ``GAME[:SEEDS]`` picks."""
    names = twx_game_names()
    given = {} if params is None else {"params": params}
    suffix = "" if fold == "train" else f"-{fold}"
    tasks = []
    for pick in picks:
        game, seeds = split_pick(pick, "seed")
        _known(game, names, "TextWorldExpress game")
        tasks += [
            TaskSpec(
                world="twx",
                id=short_id(f"twx-{game}-s{seed}{suffix}"),
                params={"game": game, "seed": seed, "fold": fold, **given},
            )
            for seed in seeds
        ]
    return tasks


def tw_tasks(picks: Iterable[str], settings: str = "") -> list[TaskSpec]:
    """TextWorld games to make from ``CHALLENGE[:SEEDS]`` picks (``tw-`` may be left out)."""
    tasks = []
    for pick in picks:
        name, seeds = split_pick(pick, "seed")
        challenge = name if name in TW_CHALLENGES else f"tw-{name}"
        if challenge not in TW_CHALLENGES:
            _known(name, list(TW_CHALLENGES), "tw-make challenge")
        tasks += [
            TaskSpec(
                world="textworld",
                id=short_id(tw_game_name(challenge, settings, seed)),
                params={"challenge": challenge, "settings": settings, "seed": seed},
            )
            for seed in seeds
        ]
    return tasks


def picked_suite(
    *,
    games: Sequence[str] = (),
    sw: Sequence[str] = (),
    twx: Sequence[str] = (),
    tw: Sequence[str] = (),
    sw_simplifications: str = "easy",
    twx_fold: str = "train",
    twx_params: str | None = None,
    tw_settings: str = "",
    max_steps: int = 30,
) -> Suite:
    """One suite of the tasks picked in every world, each task once. Only games: the suite
    ``games`` (as before); else ``picked``."""
    tasks = games_suite(list(games), max_steps).tasks if games else []
    tasks += tw_tasks(tw, tw_settings) if tw else []
    tasks += sw_tasks(sw, sw_simplifications) if sw else []
    tasks += twx_tasks(twx, twx_fold, twx_params) if twx else []
    if not tasks:
        raise ValueError("no task picked: give --sw, --twx, --tw or --games")
    unique = list({t.id: t for t in tasks}.values())
    name = "games" if games and not (sw or twx or tw) else "picked"
    worlds = ", ".join(dict.fromkeys(t.world for t in unique))
    return Suite(
        name=name, description=f"picked tasks ({worlds})", tasks=unique, max_steps=max_steps
    )


def load_suite_file(path: str | Path) -> Suite:
    """A suite file (YAML, or JSON, which is YAML): name (default: the file's name),
    description, max_steps, tasks (world, id, params), split (dev, or test: traces sealed)."""
    path = Path(path)
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a suite file is a mapping with name, max_steps and tasks")
    if not isinstance(data.get("tasks"), list | None):
        kind = type(data["tasks"]).__name__
        raise ValueError(f"{path}: tasks is a list of tasks (world, id, params), not a {kind}")
    data.setdefault("name", re.sub(r"[^A-Za-z0-9_-]", "_", path.stem)[:MAX_NAME])
    for task in data.get("tasks") or []:
        params = task.get("params") if isinstance(task, dict) else None
        game = params.get("path") if isinstance(params, dict) else None
        if isinstance(game, str) and not Path(game).expanduser().is_absolute():
            params["path"] = str((path.parent / game).resolve())
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: {error_line(exc)}") from None


def check_worlds(suite: Suite, cache: Path | None = None) -> None:
    """Check every task against its world before the suite runs: names (no JVM), ScienceWorld
    variations (one JVM), TextWorldExpress parameters (one JVM), TextWorld game files (made
    with tw-make now when a task names a challenge). A ValueError of one line names the task."""
    by_world: dict[str, list[TaskSpec]] = {}
    for task in suite.tasks:
        by_world.setdefault(task.world, []).append(task)
    for task in by_world.get("textworld", []):
        _check_game(task, cache)
    if by_world.get("scienceworld"):
        _check_scienceworld(by_world["scienceworld"])
    if by_world.get("twx"):
        _check_twx(by_world["twx"])


def _check_game(task: TaskSpec, cache: Path | None) -> None:
    params = task.world_params()
    assert isinstance(params, TextWorldParams)
    if params.path is None:
        try:
            textworld_game(task.params, cache)
        except ValueError as exc:  # tw-make's complaint
            raise ValueError(f"task {task.id}: {exc}") from None
        return
    game = Path(params.path).expanduser()
    if not game.exists():
        raise ValueError(f"task {task.id}: no game file {game}")
    if not game.with_suffix(".json").exists():
        raise ValueError(f"task {task.id}: {game.name} has no .json beside it (tw-make writes one)")


def _check_scienceworld(tasks: list[TaskSpec]) -> None:
    from robomemory.executors.envs.scienceworld import scienceworld_variations

    names = sw_task_names()
    for task in tasks:
        _known(str(task.params["task"]), names, "ScienceWorld task", f"task {task.id}: ")
    counts = scienceworld_variations(str(t.params["task"]) for t in tasks)
    for task in tasks:
        name, variation = str(task.params["task"]), int(task.params.get("variation", 0))
        if variation >= counts[name]:
            raise ValueError(
                f"task {task.id}: ScienceWorld {name} has variations 0-{counts[name] - 1}, "
                f"not {variation}"
            )


def _check_twx(tasks: list[TaskSpec]) -> None:
    from robomemory.executors.envs.twx import GAME_DEFAULTS, check_games

    names = twx_game_names()
    for task in tasks:
        _known(str(task.params["game"]), names, "TextWorldExpress game", f"task {task.id}: ")
    games = []
    for task in tasks:
        game, params = str(task.params["game"]), task.params.get("params")
        games.append((game, GAME_DEFAULTS.get(game, "") if params is None else str(params)))
    check_games(games)
