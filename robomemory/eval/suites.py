"""Benchmark suites defined in code with fixed seeds, and the executor of each task.

- ``tiny``: the TextWorld games bundled in ``robomemory/data/games`` (no generation).
- ``tw-cooking-{easy,medium,hard}``: TextWorld cooking games made once by ``tw-make tw-cooking``
  into a cache folder (``$ROBOMEMORY_HOME/games``), reused afterwards.
- ``sw-easy`` / ``sw``: ScienceWorld task x variation lists (``easy`` simplifications / none).
- ``twx-cooking`` / ``twx-twc``: TextWorldExpress games from seeds.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from robomemory.config import default_data_dir
from robomemory.core import Executor

log = logging.getLogger(__name__)

World = Literal["textworld", "scienceworld", "twx"]


@runtime_checkable
class PlaysGameFile(Protocol):
    """A world played from a game file (TextWorld): its walkthrough is the oracle path."""

    game_path: Path


@runtime_checkable
class KnowsGoldPath(Protocol):
    """A world that gives its own oracle path (ScienceWorld, TextWorldExpress)."""

    def gold_actions(self) -> list[str]:
        """The oracle's commands for the current task (after a reset)."""
        ...


class TaskSpec(BaseModel):
    """One task of a suite: which world and how to build it."""

    world: World
    id: str
    params: dict = Field(default_factory=dict)


class Suite(BaseModel):
    name: str
    description: str
    tasks: list[TaskSpec]
    max_steps: int = 30


# tw-make tw-cooking settings per difficulty (paper: Base vs Long horizons).
TW_LEVELS: dict[str, str] = {
    "easy": "--recipe 1 --take 1 --go 1",
    "medium": "--recipe 2 --take 2 --go 6 --open --cut",
    "hard": "--recipe 3 --take 3 --go 9 --open --cut --cook",
}
TW_SEEDS = (11, 12, 13, 14, 15)
TW_MAX_STEPS = {"easy": 20, "medium": 40, "hard": 60}

SW_EASY_TASKS: tuple[tuple[str, int], ...] = (
    ("find-living-thing", 0),
    ("find-non-living-thing", 0),
    ("find-plant", 1),
    ("find-animal", 0),
    ("chemistry-mix", 0),
)
SW_TASKS: tuple[tuple[str, int], ...] = (
    *SW_EASY_TASKS,
    ("find-living-thing", 1),
    ("boil", 0),
    ("melt", 0),
    ("freeze", 0),
    ("test-conductivity", 0),
    ("grow-plant", 0),
    ("chemistry-mix-paint-secondary-color", 0),
)
TWX_SEEDS = (0, 1, 2, 3, 4)


def games_cache_dir() -> Path:
    return default_data_dir() / "games"


def _tiny() -> Suite:
    # loads textworld (heavy)
    from robomemory.executors.envs.textworld_games import bundled_game, list_bundled_games

    tasks = [
        TaskSpec(world="textworld", id=f"tw-{name}", params={"path": str(bundled_game(name))})
        for name in list_bundled_games()
    ]
    return Suite(
        name="tiny", description="bundled TextWorld cooking games", tasks=tasks, max_steps=20
    )


def _tw_cooking(level: str) -> Suite:
    tasks = [
        TaskSpec(
            world="textworld",
            id=f"tw-cooking-{level}-s{seed}",
            params={"level": level, "seed": seed},
        )
        for seed in TW_SEEDS
    ]
    return Suite(
        name=f"tw-cooking-{level}",
        description=f"tw-make tw-cooking {TW_LEVELS[level]}",
        tasks=tasks,
        max_steps=TW_MAX_STEPS[level],
    )


def _sw(easy: bool) -> Suite:
    simp = "easy" if easy else ""
    pairs = SW_EASY_TASKS if easy else SW_TASKS
    tasks = [
        TaskSpec(
            world="scienceworld",
            id=f"sw-{task}-v{var}{'-easy' if easy else ''}",
            params={"task": task, "variation": var, "simplifications": simp},
        )
        for task, var in pairs
    ]
    return Suite(
        name="sw-easy" if easy else "sw",
        description=f"ScienceWorld ({simp or 'full'})",
        tasks=tasks,
        max_steps=40,
    )


def _twx(game: str) -> Suite:
    tasks = [
        TaskSpec(world="twx", id=f"twx-{game}-s{s}", params={"game": game, "seed": s})
        for s in TWX_SEEDS
    ]
    short = "cooking" if game == "cookingworld" else game
    return Suite(
        name=f"twx-{short}", description=f"TextWorldExpress {game}", tasks=tasks, max_steps=40
    )


SUITES = {
    "tiny": _tiny,
    "tw-cooking-easy": lambda: _tw_cooking("easy"),
    "tw-cooking-medium": lambda: _tw_cooking("medium"),
    "tw-cooking-hard": lambda: _tw_cooking("hard"),
    "sw-easy": lambda: _sw(True),
    "sw": lambda: _sw(False),
    "twx-cooking": lambda: _twx("cookingworld"),
    "twx-twc": lambda: _twx("twc"),
}


def get_suite(name: str) -> Suite:
    """The suite called ``name`` (see SUITES)."""
    try:
        return SUITES[name]()
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}") from None


def tw_cooking_game(level: str, seed: int, cache: Path | None = None) -> Path:
    """Path of a generated tw-cooking game; made once with ``tw-make`` and cached."""
    cache = cache or games_cache_dir()
    path = cache / f"tw-cooking-{level}-s{seed}.z8"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tw_make = Path(sys.executable).parent / "tw-make"
    cmd = [
        str(tw_make) if tw_make.exists() else "tw-make",
        "tw-cooking",
        *TW_LEVELS[level].split(),
        "--seed",
        str(seed),
        "--output",
        str(path),
        "-f",
        "--silent",
    ]
    log.info("generating %s", path.name)
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    for leftover in (path.with_suffix(".ni"), path.with_suffix(".ulx")):
        leftover.unlink(missing_ok=True)
    return path


def make_executor(spec: TaskSpec) -> Executor:
    """Build the live executor of one task."""
    p = spec.params
    if spec.world == "textworld":
        from robomemory.executors.envs.textworld import TextWorldExecutor  # loads textworld (heavy)

        path = p.get("path") or tw_cooking_game(p["level"], int(p["seed"]))
        return TextWorldExecutor(path)
    if spec.world == "scienceworld":
        # worlds extra (Java)
        from robomemory.executors.envs.scienceworld import ScienceWorldExecutor

        return ScienceWorldExecutor(
            p["task"], int(p.get("variation", 0)), p.get("simplifications", "easy")
        )
    from robomemory.executors.envs.twx import TextWorldExpressExecutor  # worlds extra

    return TextWorldExpressExecutor(p.get("game", "cookingworld"), int(p["seed"]), p.get("params"))


def oracle_steps(spec: TaskSpec, executor: Executor) -> int | None:
    """Length of the world's oracle path for a task (TextWorld walkthrough, ScienceWorld and
    TextWorldExpress gold paths); None when the world has none."""
    if spec.world == "textworld":
        # loads textworld (heavy)
        from robomemory.executors.envs.textworld_games import walkthrough_commands

        own = executor.game_path if isinstance(executor, PlaysGameFile) else None
        path = own or spec.params.get("path")
        return len(walkthrough_commands(path)) if path else None
    if not isinstance(executor, KnowsGoldPath):
        return None
    executor.reset()
    return len(executor.gold_actions())


def step_limit(requested: int, oracle: int | None) -> int:
    """The step limit of an episode: what was asked, and never below twice the oracle's."""
    return max(requested, 2 * oracle) if oracle else requested


GAME_SUFFIXES = (".z8", ".z5", ".ulx")


def games_suite(patterns: list[str], max_steps: int = 30) -> Suite:
    """A suite of TextWorld games a user brings: game files, folders of games, or glob
    patterns; each game needs its ``.json`` beside it (what ``tw-make`` writes)."""
    import glob

    paths: list[Path] = []
    for pattern in patterns:
        matches = [Path(p) for p in sorted(glob.glob(str(Path(pattern).expanduser())))]
        if not matches:
            raise ValueError(f"no game matches {pattern!r}")
        for match in matches:
            if match.is_dir():
                paths += sorted(p for p in match.iterdir() if p.suffix in GAME_SUFFIXES)
            elif match.suffix in GAME_SUFFIXES:
                paths.append(match)
    paths = list(dict.fromkeys(p.resolve() for p in paths))
    if not paths:
        raise ValueError(f"no TextWorld game (.z8, .z5, .ulx) in {', '.join(patterns)}")
    missing = [p.name for p in paths if not p.with_suffix(".json").exists()]
    if missing:
        raise ValueError(f"these games have no .json beside them: {', '.join(missing)}")
    tasks = [TaskSpec(world="textworld", id=f"tw-{p.stem}", params={"path": str(p)}) for p in paths]
    return Suite(name="games", description="user games", tasks=tasks, max_steps=max_steps)
