"""Benchmark suites defined in code with fixed seeds, and the executor of each task.

- ``tiny``: the TextWorld games bundled in ``robomemory/data/games`` (no generation).
- ``tw-cooking-{easy,medium,hard,hardest}``: TextWorld cooking games made once by ``tw-make
  tw-cooking`` into a cache folder (``$ROBOMEMORY_HOME/games``), reused afterwards.
- ``tw-treasure`` / ``tw-coin`` / ``tw-simple``: TextWorld's other ``tw-make`` challenges, made
  and cached the same way (:func:`tw_make_game`); the treasure hunter and the coin collector
  state only their goal ("Find the keycard and pick it up.", ``eval/tw_goal.py``).
- ``sw-easy`` / ``sw`` / ``sw-tasks``: ScienceWorld task x variation lists (``easy``
  simplifications / none).
- ``twx-cooking`` / ``twx-twc`` / ``twx-coin`` / ``twx-mapreader`` / ``twx-sorting`` /
  ``twx-arithmetic`` / ``twx-peckingorder``: TextWorldExpress games from seeds.
- ``tales-twx`` / ``tales-sw``: TALES' 16 TextWorldExpress games and 30 ScienceWorld tasks with
  its settings and protocol (``protocol="tales"``; eval/tales.py).

Each named suite is a dev set (the grounding's rules were written from its traces); its ``test``
split (:func:`get_suite`, suite ``NAME-test``) holds the same kind of task at other seeds, or at
the world's own test variations and seeds, whose traces a run seals (eval/runner.py). ``tiny``
(bundled games) has none.

A task is a :class:`TaskSpec`: its world, an id, and the world's parameters, checked by that
world's model (:class:`TextWorldParams`, :class:`ScienceWorldParams`, :class:`TwxParams`; no
unknown key). ``eval/picks.py`` builds suites from the command line and from suite files.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from robomemory.config import default_data_dir
from robomemory.core import Executor
from robomemory.eval.tales import tales_sw_suite, tales_twx_suite

log = logging.getLogger(__name__)

World = Literal["textworld", "scienceworld", "twx"]
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")
# A task id names episode files and, with ``--memory-scope task``, a robot (config.robot_id):
# letters, digits, '-' and '_' only.
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MAX_NAME, MAX_ID = 40, 58  # a task's robot id, "<suite>__<task>", is at most 100 characters
# The world's own step limit, above any episode's: the runner's limit ends an episode (a
# ScienceWorld or TextWorldExpress world would otherwise end it at its default 100 steps, below
# twice a long oracle path).
WORLD_STEP_LIMIT = 1000


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


# tw-make challenges (``tw-make CHALLENGE --help``); the ``-goal`` ones are eval/tw_goal.py's.
TW_CHALLENGES: dict[str, str] = {
    "tw-cooking": "cook a recipe: --recipe N --take N --go N [--open] [--cut] [--cook]",
    "tw-treasure_hunter": "take the object the objective names: --level 1-30",
    "tw-coin_collector": "take the coin: --level 1-300",
    "tw-simple": "cook one food item: --rewards dense|balanced|sparse --goal detailed|brief|none",
    "tw-treasure_hunter-goal": "tw-treasure_hunter; objective: Find the X and pick it up.",
    "tw-coin_collector-goal": "tw-coin_collector; objective: Find the coin and pick it up.",
}
TW_GOAL = Path(__file__).with_name("tw_goal.py")  # tw-make --third-party file
# tw-make's own options, which the game cache sets: not part of a challenge's settings.
_TW_MAKE_OWN = ("--seed", "--output", "--format", "--third-party", "-f", "--force")


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextWorldParams(_Params):
    """A TextWorld game: a file (``path``), a tw-make challenge with its settings and seed
    (``challenge``, ``settings``, ``seed``), or a tw-cooking level of the named suites
    (``level``, ``seed``)."""

    path: str | None = None
    challenge: str | None = None
    settings: str = ""
    level: Literal["easy", "medium", "hard", "hardest"] | None = None
    seed: int | None = Field(default=None, ge=0)

    @field_validator("challenge")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        if value is not None and value not in TW_CHALLENGES:
            raise ValueError(
                f"unknown tw-make challenge {value!r}; choose from {', '.join(TW_CHALLENGES)}"
            )
        return value

    @field_validator("settings")
    @classmethod
    def _settings(cls, value: str) -> str:
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"settings {value!r}: {exc}") from None
        own = [w for w in words if w.split("=")[0] in _TW_MAKE_OWN]
        if own:
            raise ValueError(f"settings may not set {own[0]} (the suite sets seed and output)")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> TextWorldParams:
        given = [k for k in ("path", "challenge", "level") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give one of path, challenge (+ seed) or level (+ seed)")
        if given[0] != "path" and self.seed is None:
            raise ValueError(f"{given[0]} needs a seed")
        if self.settings and given[0] != "challenge":
            raise ValueError("settings go with a challenge")
        return self


class ScienceWorldParams(_Params):
    """A ScienceWorld task variation (``task`` is one of ScienceWorld's 30 task names);
    ``simplifications``: ``easy``, ``none`` or a comma list of ScienceWorld's."""

    task: str
    variation: int = Field(default=0, ge=0)
    simplifications: str = "easy"

    @field_validator("simplifications")
    @classmethod
    def _simplifications(cls, value: str) -> str:
        from robomemory.executors.envs.scienceworld import check_simplifications  # no JVM

        return check_simplifications(value)


class TwxParams(_Params):
    """A TextWorldExpress game from a seed; ``params`` is its ``gameParams`` (None: the
    executor's default for the game), ``fold`` which objects it draws from."""

    game: str
    seed: int = Field(ge=0)
    params: str | None = None
    fold: Literal["train", "dev", "test"] = "train"


WORLD_PARAMS: dict[str, type[_Params]] = {
    "textworld": TextWorldParams,
    "scienceworld": ScienceWorldParams,
    "twx": TwxParams,
}


def error_line(exc: ValidationError) -> str:
    """One line for a suite's or a task's validation error: ``tasks.1.params: ...``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "missing"
        else:
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] != "value_error":
                msg += f" (got {err['input']!r})"
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)


class TaskSpec(BaseModel):
    """One task of a suite: which world and how to build it (``params``: the world's model)."""

    model_config = ConfigDict(extra="forbid")

    world: World
    id: str = Field(pattern=f"^{TASK_ID.pattern}$", max_length=MAX_ID)
    params: dict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _params_fit_the_world(self) -> TaskSpec:
        model = WORLD_PARAMS[self.world]
        try:
            model.model_validate(self.params)
        except ValidationError as exc:
            known = ", ".join(model.model_fields)
            raise ValueError(
                f"params of a {self.world} task ({known}): {error_line(exc)}"
            ) from None
        return self

    def world_params(self) -> _Params:
        """``params`` as the world's model (defaults filled in)."""
        return WORLD_PARAMS[self.world].model_validate(self.params)


class Suite(BaseModel):
    """Tasks run together; ``split: test``: tasks whose traces nobody reads (a run seals them)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=f"^{TASK_ID.pattern}$", max_length=MAX_NAME)
    description: str = ""
    tasks: list[TaskSpec] = Field(min_length=1)
    max_steps: int = Field(default=30, ge=1)
    split: Split = "dev"
    # tales: TALES' protocol (eval/tales.py): exactly max_steps, a lost game restarts
    protocol: Literal["episode", "tales"] = "episode"
    # listed: the world's valid actions are the candidates; free: what a player sees only
    # (TextWorldExpress and ScienceWorld; executors/perceived.py)
    actions: Literal["listed", "free"] = "listed"

    @model_validator(mode="after")
    def _ids_unique(self) -> Suite:
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ValueError(f"task id {task.id!r} is given twice")
            seen.add(task.id)
        return self

    @model_validator(mode="after")
    def _free_worlds(self) -> Suite:
        tw = [t.id for t in self.tasks if t.world == "textworld"]
        if self.actions == "free" and tw:
            raise ValueError(
                f"actions free is built for twx and scienceworld tasks; {tw[0]} is textworld"
            )
        return self

    def with_actions(self, actions: Literal["listed", "free"]) -> Suite:
        """This suite with ``actions`` (checked: free mode has no TextWorld executor)."""
        try:
            return Suite.model_validate({**self.model_dump(), "actions": actions})
        except ValidationError as exc:
            raise ValueError(f"suite {self.name}: {error_line(exc)}") from None


# tw-make tw-cooking settings per difficulty (paper: Base vs Long horizons).
TW_LEVELS: dict[str, str] = {
    "easy": "--recipe 1 --take 1 --go 1",
    "medium": "--recipe 2 --take 2 --go 6 --open --cut",
    "hard": "--recipe 3 --take 3 --go 9 --open --cut --cook",
    # twelve rooms, three ingredients cut and cooked, an inventory that forces drops
    "hardest": "--recipe 3 --take 2 --go 12 --open --cook --cut --drop",
}
TW_SEEDS = (11, 12, 13, 14, 15)
TW_HARDEST_SEEDS = tuple(range(51, 63))  # twelve games; a user picks fewer with --episodes
# hardest: a floor below any walkthrough, so each game's limit is twice its walkthrough
TW_MAX_STEPS = {"easy": 20, "medium": 40, "hard": 60, "hardest": 20}

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

# Issue 42's worlds: exploration with doors, containers and keys; dead-end mazes; rewards of
# every density; a map to read. Each suite's max_steps is a floor: the runner gives every task
# at least twice its oracle's steps (step_limit).
# tw-treasure: (level, seed); 11-20 closed doors and containers, 21-30 locked ones with the keys
# held. Goal only: "Find the X and pick it up."
TW_TREASURE: tuple[tuple[int, int], ...] = ((12, 21), (16, 22), (20, 23), (22, 24), (26, 25))
# tw-coin: (level, seed); levels 101-200 add a dead-end room beside every room of the path.
TW_COIN: tuple[tuple[int, int], ...] = ((103, 31), (105, 32), (107, 33), (110, 34), (115, 35))
# tw-simple: (rewards, goal, seed); goal "none": no objective shown (a note in the kitchen).
TW_SIMPLE: tuple[tuple[str, str, int], ...] = (
    ("dense", "detailed", 41),
    ("balanced", "detailed", 42),
    ("balanced", "brief", 43),
    ("sparse", "brief", 44),
    ("sparse", "none", 45),
)
# sw-tasks: five ScienceWorld tasks whose object the task names (no judging what a thing is).
SW_NAMED_TASKS: tuple[tuple[str, int], ...] = (
    ("boil", 1),
    ("melt", 5),
    ("use-thermometer", 3),
    ("test-conductivity", 5),
    ("power-component", 1),
)
TWX_OWN_SEEDS = (10, 11, 12, 13, 14)
TWX_COIN_PARAMS = "numLocations=9,numDistractorItems=2,includeDoors=1,limitInventorySize=0"
TWX_MAPREADER_PARAMS = (
    "numLocations=11,maxDistanceApart=4,maxDistractorItemsPerLocation=2,includeDoors=0,"
    "limitInventorySize=0"
)

# The test split: the same kinds of task at seeds and variations whose traces nobody reads.
# TextWorld: other tw-make seeds, the same settings (each makes a game with a quest).
TW_TEST_SEEDS = (111, 112, 113, 114, 115)
TW_HARDEST_TEST_SEEDS = tuple(range(151, 163))
TW_TREASURE_TEST: tuple[tuple[int, int], ...] = (
    (12, 121),
    (16, 122),
    (20, 123),
    (22, 124),
    (26, 125),
)
TW_COIN_TEST: tuple[tuple[int, int], ...] = (
    (103, 131),
    (105, 132),
    (107, 133),
    (110, 134),
    (115, 135),
)
TW_SIMPLE_TEST: tuple[tuple[str, str, int], ...] = (
    ("dense", "detailed", 141),
    ("balanced", "detailed", 142),
    ("balanced", "brief", 143),
    ("sparse", "brief", 144),
    ("sparse", "none", 145),
)
# ScienceWorld's own test variations (env.get_variations_test(), in order; checked against the
# world in tests/test_splits.py): a suite takes a task's first, a task listed twice the next.
# The dev suites' variations above are all in ScienceWorld's train fold.
SW_TEST_VARIATIONS: dict[str, tuple[int, ...]] = {
    "find-living-thing": (225, 226),
    "find-non-living-thing": (225,),
    "find-plant": (225,),
    "find-animal": (225,),
    "chemistry-mix": (24,),
    "boil": (21,),
    "melt": (21,),
    "freeze": (21,),
    "test-conductivity": (675,),
    "grow-plant": (93,),
    "chemistry-mix-paint-secondary-color": (27,),
    "use-thermometer": (405,),
    "power-component": (15,),
}
# TextWorldExpress's first five test seeds (getValidSeedsTest(), the same for every game),
# played in the test fold; the dev suites play train seeds in the train fold.
TWX_TEST_SEEDS = (20000, 20001, 20002, 20003, 20004)


def sw_test_pairs(pairs: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The test split's (task, variation) of a dev list: each task's next test variation."""
    taken: dict[str, int] = {}
    out = []
    for task, _ in pairs:
        n = taken.get(task, 0)
        taken[task] = n + 1
        out.append((task, SW_TEST_VARIATIONS[task][n]))
    return tuple(out)


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


def _tw_cooking(level: str, seeds: tuple[int, ...] = TW_SEEDS) -> Suite:
    tasks = [
        TaskSpec(
            world="textworld",
            id=f"tw-cooking-{level}-s{seed}",
            params={"level": level, "seed": seed},
        )
        for seed in seeds
    ]
    return Suite(
        name=f"tw-cooking-{level}",
        description=f"tw-make tw-cooking {TW_LEVELS[level]}",
        tasks=tasks,
        max_steps=TW_MAX_STEPS[level],
    )


def _tw_challenge(
    name: str, challenge: str, description: str, tasks: list[tuple[str, str, int]], max_steps: int
) -> Suite:
    """A suite of tw-make games: (id, settings, seed) each."""
    specs = [
        TaskSpec(
            world="textworld",
            id=task_id,
            params={"challenge": challenge, "settings": settings, "seed": seed},
        )
        for task_id, settings, seed in tasks
    ]
    return Suite(name=name, description=description, tasks=specs, max_steps=max_steps)


def _tw_treasure(pairs: tuple[tuple[int, int], ...] = TW_TREASURE) -> Suite:
    return _tw_challenge(
        "tw-treasure",
        "tw-treasure_hunter-goal",
        "tw-make tw-treasure_hunter --level 12-26 (doors, containers, keys); goal only",
        [(f"tw-treasure-l{lv}-s{seed}", f"--level {lv}", seed) for lv, seed in pairs],
        max_steps=40,
    )


def _tw_coin(pairs: tuple[tuple[int, int], ...] = TW_COIN) -> Suite:
    return _tw_challenge(
        "tw-coin",
        "tw-coin_collector-goal",
        "tw-make tw-coin_collector --level 103-115 (dead ends beside the path); goal only",
        [(f"tw-coin-l{lv}-s{seed}", f"--level {lv}", seed) for lv, seed in pairs],
        max_steps=40,
    )


def _tw_simple(triples: tuple[tuple[str, str, int], ...] = TW_SIMPLE) -> Suite:
    return _tw_challenge(
        "tw-simple",
        "tw-simple",
        "tw-make tw-simple --rewards dense|balanced|sparse --goal detailed|brief|none",
        [
            (f"tw-simple-{rewards}-{goal}-s{seed}", f"--rewards {rewards} --goal {goal}", seed)
            for rewards, goal, seed in triples
        ],
        max_steps=40,
    )


def _sw(easy: bool, pairs: tuple[tuple[str, int], ...] | None = None, name: str = "") -> Suite:
    simp = "easy" if easy else ""
    pairs = pairs or (SW_EASY_TASKS if easy else SW_TASKS)
    tasks = [
        TaskSpec(
            world="scienceworld",
            id=f"sw-{task}-v{var}{'-easy' if easy else ''}",
            params={"task": task, "variation": var, "simplifications": simp},
        )
        for task, var in pairs
    ]
    return Suite(
        name=name or ("sw-easy" if easy else "sw"),
        description=f"ScienceWorld ({simp or 'full'})",
        tasks=tasks,
        max_steps=40,
    )


def _twx(
    game: str,
    seeds: tuple[int, ...] = TWX_SEEDS,
    params: str | None = None,
    max_steps: int = 40,
    fold: str = "train",
) -> Suite:
    given = {} if params is None else {"params": params}
    given |= {} if fold == "train" else {"fold": fold}  # a dev task's params stay as they were
    suffix = "" if fold == "train" else f"-{fold}"  # as eval/picks.py names a --twx-fold task
    tasks = [
        TaskSpec(
            world="twx",
            id=f"twx-{game}-s{s}{suffix}",
            params={"game": game, "seed": s, **given},
        )
        for s in seeds
    ]
    short = "cooking" if game == "cookingworld" else game
    described = f"TextWorldExpress {game}" + (f" {params}" if params else "")
    return Suite(name=f"twx-{short}", description=described, tasks=tasks, max_steps=max_steps)


SUITES = {
    "tiny": _tiny,
    "tw-cooking-easy": lambda: _tw_cooking("easy"),
    "tw-cooking-medium": lambda: _tw_cooking("medium"),
    "tw-cooking-hard": lambda: _tw_cooking("hard"),
    "tw-cooking-hardest": lambda: _tw_cooking("hardest", TW_HARDEST_SEEDS),
    "tw-treasure": _tw_treasure,
    "tw-coin": _tw_coin,
    "tw-simple": _tw_simple,
    "sw-easy": lambda: _sw(True),
    "sw": lambda: _sw(False),
    "sw-tasks": lambda: _sw(True, SW_NAMED_TASKS, "sw-tasks"),
    "twx-cooking": lambda: _twx("cookingworld"),
    "twx-twc": lambda: _twx("twc"),
    # coin's gold path is a random search (seed 12: 10 to 32 steps from one reset to the next),
    # so the floor sets the limit, not twice the oracle's
    "twx-coin": lambda: _twx("coin", TWX_OWN_SEEDS, TWX_COIN_PARAMS, max_steps=70),
    "twx-mapreader": lambda: _twx("mapreader", TWX_OWN_SEEDS, TWX_MAPREADER_PARAMS),
    # TALES' ordering, reading and instruction-following games, at its gameParams (the defaults)
    "twx-sorting": lambda: _twx("sorting"),
    "twx-arithmetic": lambda: _twx("arithmetic"),
    "twx-peckingorder": lambda: _twx("peckingorder"),
    "tales-twx": tales_twx_suite,  # TALES' settings and protocol (eval/tales.py)
    "tales-sw": tales_sw_suite,
}


def _test(suite: Suite) -> Suite:
    """``suite`` as a test split: named ``NAME-test``, its traces sealed when it runs."""
    return Suite.model_validate(
        {
            **suite.model_dump(),
            "name": f"{suite.name}-test",
            "description": f"{suite.description} (test split)",
            "split": "test",
        }
    )


# Suites that are a test split as they are: TALES' plays the worlds' test seeds.
TEST_ONLY = frozenset({"tales-twx", "tales-sw"})

# The test split of each named suite but tiny (bundled games) and TALES' (eval/tales.py): the
# same settings and step floors.
TEST_SUITES = {
    "tw-cooking-easy": lambda: _tw_cooking("easy", TW_TEST_SEEDS),
    "tw-cooking-medium": lambda: _tw_cooking("medium", TW_TEST_SEEDS),
    "tw-cooking-hard": lambda: _tw_cooking("hard", TW_TEST_SEEDS),
    "tw-cooking-hardest": lambda: _tw_cooking("hardest", TW_HARDEST_TEST_SEEDS),
    "tw-treasure": lambda: _tw_treasure(TW_TREASURE_TEST),
    "tw-coin": lambda: _tw_coin(TW_COIN_TEST),
    "tw-simple": lambda: _tw_simple(TW_SIMPLE_TEST),
    "sw-easy": lambda: _sw(True, sw_test_pairs(SW_EASY_TASKS)),
    "sw": lambda: _sw(False, sw_test_pairs(SW_TASKS)),
    "sw-tasks": lambda: _sw(True, sw_test_pairs(SW_NAMED_TASKS), "sw-tasks"),
    "twx-cooking": lambda: _twx("cookingworld", TWX_TEST_SEEDS, fold="test"),
    "twx-twc": lambda: _twx("twc", TWX_TEST_SEEDS, fold="test"),
    "twx-coin": lambda: _twx("coin", TWX_TEST_SEEDS, TWX_COIN_PARAMS, max_steps=70, fold="test"),
    "twx-mapreader": lambda: _twx("mapreader", TWX_TEST_SEEDS, TWX_MAPREADER_PARAMS, fold="test"),
    "twx-sorting": lambda: _twx("sorting", TWX_TEST_SEEDS, fold="test"),
    "twx-arithmetic": lambda: _twx("arithmetic", TWX_TEST_SEEDS, fold="test"),
    "twx-peckingorder": lambda: _twx("peckingorder", TWX_TEST_SEEDS, fold="test"),
}


def get_suite(name: str, split: str | None = None) -> Suite:
    """The suite called ``name`` (see SUITES); ``split="test"``: its test split, ``NAME-test``
    (see TEST_SUITES). None: the suite's own split (dev, or test for TALES' suites, which
    play the worlds' test seeds alone)."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
    if name in TEST_ONLY:
        if split == "dev":
            raise ValueError(f"suite {name!r} has only a test split (the worlds' test seeds)")
        return SUITES[name]()
    if split in (None, "dev"):
        return SUITES[name]()
    if name not in TEST_SUITES:
        raise ValueError(
            f"suite {name!r} has no test split; these have one: {', '.join(TEST_SUITES)}"
        )
    return _test(TEST_SUITES[name]())


def tw_game_name(challenge: str, settings: str, seed: int) -> str:
    """The cache's file stem of a tw-make game: ``tw-simple-rewards-dense-goal-brief-s41``."""
    words = [w.lstrip("-") for w in shlex.split(settings)]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(w for w in words if w))
    return "-".join(part for part in (challenge, slug, f"s{seed}") if part)


def tw_make_game(
    challenge: str, settings: str, seed: int, cache: Path | None = None, stem: str | None = None
) -> Path:
    """Path of a generated tw-make game (``tw-make CHALLENGE SETTINGS --seed SEED``); made once
    into ``cache`` (``$ROBOMEMORY_HOME/games``) and reused. A ValueError carries tw-make's own
    complaint (a bad setting, a seed that allows no quest)."""
    if challenge not in TW_CHALLENGES:
        raise ValueError(
            f"unknown tw-make challenge {challenge!r}; choose from {', '.join(TW_CHALLENGES)}"
        )
    cache = cache or games_cache_dir()
    path = cache / f"{stem or tw_game_name(challenge, settings, seed)}.z8"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    tw_make = Path(sys.executable).parent / "tw-make"
    third_party = ["--third-party", str(TW_GOAL)] if challenge.endswith("-goal") else []
    cmd = [
        str(tw_make) if tw_make.exists() else "tw-make",
        *third_party,
        challenge,
        *shlex.split(settings),
        "--seed",
        str(seed),
        "--output",
        str(path),
        "-f",
        "--silent",
    ]
    log.info("generating %s", path.name)
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    except subprocess.CalledProcessError as exc:
        said = [line for line in (exc.stderr or exc.stdout or "").splitlines() if line.strip()]
        why = said[-1].strip() if said else f"exit status {exc.returncode}"
        call = " ".join(w for w in ("tw-make", challenge, settings, f"--seed {seed}") if w)
        raise ValueError(f"{call}: {why}") from None
    for leftover in (path.with_suffix(".ni"), path.with_suffix(".ulx")):
        leftover.unlink(missing_ok=True)
    return path


def tw_cooking_game(level: str, seed: int, cache: Path | None = None) -> Path:
    """Path of a generated tw-cooking game; made once with ``tw-make`` and cached."""
    return tw_make_game(
        "tw-cooking", TW_LEVELS[level], seed, cache, stem=f"tw-cooking-{level}-s{seed}"
    )


def textworld_game(params: dict, cache: Path | None = None) -> Path:
    """The game file of a TextWorld task's params (made with tw-make when it is not yet)."""
    p = TextWorldParams.model_validate(params)
    if p.path is not None:
        return Path(p.path)
    assert p.seed is not None  # TextWorldParams requires it without a path
    if p.level is not None:
        return tw_cooking_game(p.level, p.seed, cache)
    assert p.challenge is not None
    return tw_make_game(p.challenge, p.settings, p.seed, cache)


def make_executor(spec: TaskSpec, actions: Literal["listed", "free"] = "listed") -> Executor:
    """Build the live executor of one task; ``actions="free"``: one that reads only what a
    player sees (TextWorldExpress and ScienceWorld; a TextWorld game is refused)."""
    p = spec.params
    if spec.world == "textworld":
        if actions == "free":
            raise ValueError(f"{spec.id}: --actions free is built for twx and scienceworld only")
        from robomemory.executors.envs.textworld import TextWorldExecutor  # loads textworld (heavy)

        return TextWorldExecutor(textworld_game(p))
    if spec.world == "scienceworld":
        # worlds extra (Java)
        from robomemory.executors.envs.scienceworld import ScienceWorldExecutor

        sw = ScienceWorldParams.model_validate(p)
        return ScienceWorldExecutor(
            sw.task, sw.variation, sw.simplifications, step_limit=WORLD_STEP_LIMIT, actions=actions
        )
    from robomemory.executors.envs.twx import TextWorldExpressExecutor  # worlds extra

    twx = TwxParams.model_validate(p)
    return TextWorldExpressExecutor(
        twx.game, twx.seed, twx.params, fold=twx.fold, step_limit=WORLD_STEP_LIMIT, actions=actions
    )


def oracle_steps(spec: TaskSpec, executor: Executor) -> int | None:
    """Length of the world's oracle path for a task (TextWorld walkthrough, ScienceWorld and
    TextWorldExpress gold paths); None when the world has none, or when the executor reads
    only what a player sees (free mode requests no gold path)."""
    if spec.world == "textworld":
        # loads textworld (heavy)
        from robomemory.executors.envs.textworld_games import walkthrough_commands

        own = executor.game_path if isinstance(executor, PlaysGameFile) else None
        path = own or spec.params.get("path")
        return len(walkthrough_commands(path)) if path else None
    if not isinstance(executor, KnowsGoldPath) or getattr(executor, "actions", None) == "free":
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
    tasks = [TaskSpec(world="textworld", id=game_id(p), params={"path": str(p)}) for p in paths]
    return Suite(name="games", description="user games", tasks=tasks, max_steps=max_steps)


def game_id(path: Path) -> str:
    """A game file's task id: ``tw-`` and its name, other characters than letters, digits,
    '-' and '_' as '_' (``my.game.z8`` -> ``tw-my_game``)."""
    return short_id("tw-" + re.sub(r"[^A-Za-z0-9_-]", "_", path.stem))


def short_id(task_id: str) -> str:
    """A task id within the length an id may have (a hash of the whole keeps it unique)."""
    if len(task_id) <= MAX_ID:
        return task_id
    digest = hashlib.sha1(task_id.encode()).hexdigest()[:8]
    return f"{task_id[: MAX_ID - 9]}-{digest}"
