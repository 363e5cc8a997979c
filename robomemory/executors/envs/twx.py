"""TextWorldExpress as an executor: paper Table 4 verbs plus the cooking / tidy-up verbs.

TextWorldExpress (``textworld-express`` package, a bundled Java jar) generates games from a
seed in milliseconds: ``cookingworld`` (find ingredients, cut and cook them, prepare and eat the
meal), ``twc`` (put objects where they belong), ``coin`` (find the coin), ``mapreader`` (carry
the coin to the box, with a map), ``arithmetic``, ``sorting``, ``simonsays``, ``peckingorder``.
Each game takes generation parameters (``gameParams``, e.g. ``numLocations=8,includeDoors=1``)
and a fold (``train`` / ``dev`` / ``test``: which objects it draws from). Scores are already
normalized to [0, 1]; GC is the score.

``actions="free"`` (executors/perceived.py): no gold path is generated, and of each step's
``info`` only the task, the score and the game's end are read (no ``validActions``, no
``look`` / ``inventory`` texts); the candidates come from the texts the robot's commands
returned (envs/twx_perceived.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from robomemory.core import TASK_COMPLETE
from robomemory.executors.base import world_digest
from robomemory.executors.envs.command_world import (
    CommandWorldExecutor,
    Verb,
    WorldReply,
    held_names,
)
from robomemory.executors.envs.twx_perceived import map_links, perceive
from robomemory.executors.perceived import ActionsMode, Seen

DIRECTIONS = ("north", "south", "east", "west")

# TextWorldExpress's replies when it refuses a command.
REFUSALS_START = ("Unknown action", "You can't", "That is already", "That is not")

_VERBS: tuple[Verb, ...] = (
    Verb(
        "go", ("direction",), "move {0}", "go through an exit (north/south/east/west)", moves=True
    ),
    # aliases: the world's own command words, as its tasks write them ("take it")
    Verb("pick_up", ("object",), "take {0}", takes=True, aliases=("take",)),
    Verb(
        "put_down_to",
        ("object", "receptacle"),
        "put {0} in {1}",
        "put a held object in/on",
        reverses="pick_up",
        aliases=("put", "place"),  # tidy-up tasks: "place them in their usual locations"
    ),
    Verb("drop", ("object",), "drop {0}", reverses="pick_up"),
    Verb(
        "open", ("object",), "open {0}", "open a container or 'door to <direction>'", reveals=True
    ),
    Verb("close", ("object",), "close {0}", reverses="open"),
    Verb(
        "slice",
        ("object",),
        "slice {0}",
        "cut into slices, only if the recipe says slice; needs a knife",
        irreversible=True,
        free_needs=("held",),
    ),
    Verb(
        "chop",
        ("object",),
        "chop {0}",
        "cut into pieces, only if the recipe says chop; needs a knife",
        irreversible=True,
        free_needs=("held",),
    ),
    Verb(
        "dice",
        ("object",),
        "dice {0}",
        "cut into cubes, only if the recipe says dice; needs a knife",
        irreversible=True,
        free_needs=("held",),
    ),
    Verb(
        "cook",
        ("object", "appliance"),
        "cook {0} in {1}",
        "as the recipe says: oven roasts, stove fries",
        irreversible=True,
        free_needs=("held", "here"),  # the stove, the oven: no furniture
    ),
    Verb("read", ("object",), "read {0}", reads=True),
    Verb("examine", ("object",), "examine {0}", reads=True),
    Verb("look", (), "look around", "describe the current room", reads=True),
    Verb("inventory", (), "inventory", reads=True),
    Verb(
        "prepare_meal",
        (),
        "prepare meal",
        "make the meal from the prepared ingredients (kitchen)",
        irreversible=True,
    ),
    Verb(
        "eat",
        ("object",),
        "eat {0}",
        "eat food (a cooking task ends by eating the prepared meal)",
        irreversible=True,
        free_needs=("held",),
    ),
    Verb(TASK_COMPLETE, (), "", "declare the task finished"),
)
# What each verb needs, adds and removes (robomemory.effects): TextWorldExpress's action model in
# one table. The meanings declared above are what it derives (tests/test_effects.py).
HERE = "at(robot, here)"
EFFECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "go": ((HERE,), ("at(robot, ?there)",), (HERE,)),
    "pick_up": ((HERE,), ("held($0)",), ("at($0, here)", "in($0, ?c)")),
    "put_down_to": (("held($0)",), ("in($0, $1)",), ("held($0)",)),
    "drop": (("held($0)",), ("at($0, here)",), ("held($0)",)),
    "open": (("closed($0)",), ("open($0)",), ("closed($0)",)),
    "close": (("open($0)",), ("closed($0)",), ("open($0)",)),
    "slice": (("held($0)", "held(?knife)"), ("state($0, sliced)",), ()),
    "chop": (("held($0)", "held(?knife)"), ("state($0, chopped)",), ()),
    "dice": (("held($0)", "held(?knife)"), ("state($0, diced)",), ()),
    "cook": (("held($0)", "at($1, here)"), ("state($0, cooked)",), ()),
    "read": ((HERE,), (), ()),
    "examine": ((HERE,), (), ()),
    "look": ((HERE,), (), ()),
    "inventory": ((HERE,), (), ()),
    "prepare_meal": (
        (HERE, "held(?ingredient)"),
        ("held(meal)", "state(?ingredient, used)"),
        ("held(?ingredient)",),
    ),
    "eat": (("held($0)",), ("state($0, eaten)",), ("held($0)",)),
}
VERBS: tuple[Verb, ...] = tuple(
    replace(v, needs=e[0], adds=e[1], removes=e[2]) if (e := EFFECTS.get(v.name)) else v
    for v in _VERBS
)
# Verbs only one game has: published for that game alone, so the others' action API is as it was.
GAME_VERBS: dict[str, tuple[Verb, ...]] = {
    # every command simonsays lists (TALES' six settings, its test seeds): Simon names one
    "simonsays": (
        Verb("touch", ("object",), "touch {0}"),
        Verb("smell", ("object",), "smell {0}"),
        Verb("do_a_dance", (), "do a dance"),
        Verb("hop_to_the_left", (), "hop to the left"),
        Verb("wave_hello", (), "wave hello"),
        Verb("wiggle_your_toes", (), "wiggle your toes"),
    ),
    # mapreader lists "task": the world says the task again
    "mapreader": (Verb("task", (), "task", "the world repeats the task", reads=True),),
}
FOLDS = ("train", "dev", "test")

# The room a "look around" answer names ("You are in the kitchen. ...").
_ROOM = re.compile(r"^You are in the ([a-z][a-z -]*?)\.")
# Where each way out leads ("To the West you see the basement."): the world's own layout.
_EXIT = re.compile(r"To the (North|South|East|West) you see the ([a-z][a-z -]*?)\.")

# "<verb> X" and "<verb> X in Y" forms of TextWorldExpress's valid actions.
_ONE_ARG = re.compile(r"^(take|open|close|slice|chop|dice|read|examine|eat|drop|touch|smell) (.+)$")
_TWO_ARGS = re.compile(r"^(put|cook) (.+) in (.+)$")

GAME_DEFAULTS: dict[str, str] = {
    "cookingworld": "numLocations=3,numIngredients=2,numDistractorItems=2,includeDoors=1,"
    "limitInventorySize=0",
    "twc": "numLocations=2,numItemsToPutAway=2,includeDoors=1,limitInventorySize=0",
}


class TextWorldExpressExecutor(CommandWorldExecutor):
    """One TextWorldExpress game from (game, seed, params)."""

    max_score = 1.0
    reports_holding = True  # the inventory's text comes with every step

    def __init__(
        self,
        game: str = "cookingworld",
        seed: int = 0,
        params: str | None = None,
        fold: str = "train",
        step_limit: int = 100,
        env=None,
        actions: ActionsMode = "listed",
    ):
        super().__init__(actions)
        from textworld_express import TextWorldExpressEnv

        self.game = game
        self.seed = seed
        self.params = GAME_DEFAULTS.get(game, "") if params is None else params
        if fold not in FOLDS:
            raise ValueError(f"unknown TextWorldExpress fold {fold!r}; choose {', '.join(FOLDS)}")
        self.fold = fold
        self._own_env = env is None
        self.env = env if env is not None else TextWorldExpressEnv(envStepLimit=step_limit)
        self.verbs = VERBS + GAME_VERBS.get(game, ())
        self._valid: list[str] = []
        self._gold: list[str] = []
        self._met: set[str] = set()  # names in any valid command this task

    def _start(self) -> tuple[str, WorldReply]:
        obs, info = self.env.reset(
            seed=self.seed,
            gameFold=self.fold,
            gameName=self.game,
            gameParams=self.params,
            generateGoldPath=not self.free,
        )
        task = str(info.get("taskDescription") or "")
        if self.free:
            return task, WorldReply(text=obs, score=0.0, done=False, links=map_links(obs))
        self._gold = list(self.env.getGoldActionSequence())
        self._valid = list(info.get("validActions") or [])
        self._met = set()
        return task, WorldReply(text=obs, score=0.0, done=False, **self._where(info))

    def _send(self, command: str) -> WorldReply:
        obs, _reward, done, info = self.env.step(command)
        if not self.free:
            self._valid = list(info.get("validActions") or [])
        return WorldReply(
            text=obs,
            score=float(info.get("score", 0.0) or 0.0),
            done=bool(done),
            won=bool(info.get("tasksuccess")),
            lost=bool(info.get("taskfailure")),
            links=map_links(obs),
            **({} if self.free else self._where(info)),
        )

    def _perceive(self, text: str) -> Seen:
        return perceive(text)

    def _where(self, info: dict) -> dict:
        """Place, world digest and what is held, from the room's and the inventory's texts the
        world returns with every step (so maps, searches and loops know where the robot is)."""
        look, inventory = str(info.get("look") or ""), str(info.get("inventory") or "")
        m = _ROOM.match(look.strip())
        # a thing taken may be named by no command now (a coin with nowhere to put it here)
        self._met |= {n for names in self._visible().values() for n in names}
        names = sorted(self._met)
        return {
            "place": m.group(1) if m else None,
            "world": world_digest([look, inventory]) if look else None,
            "holding": held_names(inventory, names),
            "exits": tuple((d.lower(), p) for d, p in _EXIT.findall(look)),
        }

    def _visible(self) -> dict[str, list[str]]:
        """Names in the world's currently valid commands: what the agent can see or hold."""
        objects: list[str] = []
        places: list[str] = []
        for act in self._valid:
            if act.startswith("move "):
                places.append(act.removeprefix("move "))
            elif m := _TWO_ARGS.match(act):
                objects += [m.group(2), m.group(3)]
            elif m := _ONE_ARG.match(act):
                objects.append(m.group(2))
        # Receptacles and appliances are objects too; the kinds only document the signature.
        return {"direction": places, "object": objects, "receptacle": objects, "appliance": objects}

    def _refused(self, text: str) -> bool:
        return text.strip().startswith(REFUSALS_START)

    def _valid_commands(self) -> list[str]:
        return list(self._valid)

    def gold_actions(self) -> list[str]:
        """The world's oracle command sequence for this seed (free mode: never generated)."""
        if self.free:
            raise RuntimeError("free mode reads no gold path (actions='free')")
        return list(self._gold)


def twx_game_names() -> list[str]:
    """The games of the installed TextWorldExpress (no JVM)."""
    from textworld_express.constants import GAME_NAMES

    return list(GAME_NAMES)


def check_games(games: Iterable[tuple[str, str]]) -> None:
    """Load each (game, params) once in one TextWorldExpress JVM: a ValueError in the world's
    words names a parameter it does not know or a value out of range."""
    from textworld_express import TextWorldExpressEnv

    env = TextWorldExpressEnv()
    try:
        for game, params in dict.fromkeys(games):
            try:
                env.load(game, params)
            except ValueError as exc:
                raise ValueError(f"TextWorldExpress {game} {params!r}: {exc}".strip()) from None
    finally:
        env.close()
