"""ScienceWorld as an executor: paper Table 4 verbs plus the science verbs a task needs.

ScienceWorld (``scienceworld`` package, a bundled Java 17 jar) has 30 tasks with many
variations each and a partial-credit score 0–100; -100 means the task failed (e.g. focusing on
the wrong object). GC is ``max(score, 0) / 100``.

``actions="free"`` (executors/perceived.py): no gold path is generated, and nothing but the
texts, the score and the game's end is read: no valid combinations, possible actions or
objects, referent tables, ``info["look"]`` / ``info["inv"]``; the first observation is the
world's first text alone, and the candidates come from the texts the robot's commands returned
(envs/scienceworld_perceived.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from robomemory.core import TASK_COMPLETE, Action, ActionSpace, Observation
from robomemory.executors.base import world_digest
from robomemory.executors.candidates import rank_candidates
from robomemory.executors.envs.command_world import (
    CommandWorldExecutor,
    Verb,
    WorldReply,
    held_names,
)
from robomemory.executors.envs.scienceworld_perceived import perceive
from robomemory.executors.perceived import ActionsMode, Seen

log = logging.getLogger(__name__)

# The rooms of ScienceWorld's house (fixed by the world).
ROOMS = frozenset(
    {
        "hallway",
        "kitchen",
        "bedroom",
        "living room",
        "art studio",
        "workshop",
        "greenhouse",
        "outside",
        "bathroom",
        "foundry",
    }
)

# Referents ScienceWorld lists among valid combinations that are no object to act on.
_NON_OBJECTS = frozenset({"agent", "air", "inventory"})

# Beginnings and fragments of ScienceWorld's replies when it refuses a command.
REFUSALS_START = ("No known action matches", "Unknown action", "Ambiguous request")
REFUSALS_IN = (
    "is not moveable",
    "door is not open",
    "is already",
    "can't",
    "cannot",
    "not clear how to use",
    "not sure how to use",
)

_VERBS: tuple[Verb, ...] = (
    Verb(
        "navigate_to", ("place",), "go to {0}", "go to a room (its door must be open)", moves=True
    ),
    Verb("pick_up", ("object",), "pick up {0}", "take an object into the inventory", takes=True),
    Verb(
        "put_down_to",
        ("object", "receptacle"),
        "move {0} to {1}",
        "move an object into/onto",
        reverses="pick_up",
        aliases=("move",),  # tasks say "move it to the red box"
    ),
    Verb("drop", ("object",), "put down {0}", "put a held object down here", reverses="pick_up"),
    Verb("open", ("object",), "open {0}", reveals=True),
    Verb("close", ("object",), "close {0}", reverses="open"),
    Verb("turn_on", ("object",), "activate {0}"),
    Verb("turn_off", ("object",), "deactivate {0}", reverses="turn_on"),
    Verb(
        "focus_on",
        ("object",),
        "focus on {0}",
        "commit to the task's object (wrong = fail)",
        irreversible=True,
    ),
    Verb("look", (), "look around", "describe the current room", reads=True),
    Verb("look_at", ("object",), "look at {0}", reads=True),
    Verb("look_in", ("object",), "look in {0}", reads=True, reveals=True),
    Verb("read", ("object",), "read {0}", reads=True),
    Verb(
        "use",
        ("object", "object"),
        "use {0} on {1}",
        "use a tool on something",
        free_needs=("held", "near"),
    ),
    # as the world lists it
    Verb("pour", ("object", "receptacle"), "pour {0} into {1}", free_needs=("held", "near")),
    Verb("mix", ("object",), "mix {0}", "mix a container's contents", irreversible=True),
    Verb("connect", ("object", "object"), "connect {0} to {1}", "wire two terminals"),
    Verb("eat", ("object",), "eat {0}", irreversible=True, free_needs=("held",)),
    Verb("wait", (), "wait1", "let one time step pass"),
    Verb("inventory", (), "inventory", reads=True),
    Verb(TASK_COMPLETE, (), "", "declare the task finished"),
)
# What each verb needs, adds and removes (robomemory.effects): ScienceWorld's action model in one
# table, read from its actions (scienceworld.jar, scienceworld/actions). The meanings declared
# above are what it derives (tests/test_scienceworld_effects.py). Its "move", "pick up" and "put
# down" are one move of a thing, which disconnects its wires. Not here: look_in (it needs the
# container open and changes nothing, a read; the grounding searches by it as a reveal, which
# effects cannot say) and task_complete.
HERE = "at(robot, here)"
EFFECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "navigate_to": ((HERE, "open(?door)"), ("at(robot, $0)",), (HERE,)),
    "pick_up": ((HERE,), ("held($0)",), ("at($0, here)", "in($0, ?c)", "state($0, connected)")),
    # a thing moves to a container in another room only carried: held is what always works
    "put_down_to": (
        (HERE, "held($0)"),
        ("in($0, $1)",),
        ("held($0)", "in($0, ?c)", "state($0, connected)"),
    ),
    "drop": (("held($0)",), ("at($0, here)",), ("held($0)", "state($0, connected)")),
    "open": (("closed($0)",), ("open($0)",), ("closed($0)",)),
    "close": (("open($0)",), ("closed($0)",), ("open($0)",)),
    "turn_on": (
        ("state($0, deactivated)",),
        ("state($0, activated)",),
        ("state($0, deactivated)",),
    ),
    "turn_off": (
        ("state($0, activated)",),
        ("state($0, deactivated)",),
        ("state($0, activated)",),
    ),
    # the world judges what is focused on: a wrong focus ends the task, and nothing unfocuses
    "focus_on": ((HERE,), ("state($0, focused)",), ()),
    "look": ((HERE,), (), ()),
    "look_at": ((HERE,), (), ()),
    "read": ((HERE,), (), ()),
    # a device on a thing: a thermometer reads it, a lighter heats it, a shovel or axe works it
    "use": ((HERE,), ("state($1, ?after)",), ()),
    "pour": (("in(?contents, $0)",), ("in(?contents, $1)",), ("in(?contents, $0)",)),
    # the contents become a new substance (salt and water: salt water)
    "mix": (
        ("in(?a, $0)", "in(?b, $0)"),
        ("in(?mixture, $0)", "state(?mixture, mixed)"),
        ("in(?a, $0)", "in(?b, $0)"),
    ),
    # undone by moving either thing (no disconnect verb is published)
    "connect": ((HERE,), ("state($0, connected)", "state($1, connected)"), ()),
    "eat": ((HERE,), ("state($0, eaten)",), ("held($0)", "at($0, here)", "in($0, ?c)")),
    # the world's processes go on: some thing's state changes (water boils, a seed grows)
    "wait": ((), ("state(?thing, ?next)",), ()),
    "inventory": ((HERE,), (), ()),
}
VERBS: tuple[Verb, ...] = tuple(
    replace(v, needs=e[0], adds=e[1], removes=e[2]) if (e := EFFECTS.get(v.name)) else v
    for v in _VERBS
)


# "This room is called the kitchen." / "This outside location is called the outside."
_ROOM = re.compile(r"This [a-z ]+? is called the ([a-z ]+?)\.")


# "The large cupboard door is closed." / "The drawer is closed."
_CLOSED = re.compile(r"\b[Tt]he ([a-z ]+?) (?:door )?is closed")


def inside_closed(name: str, look: str) -> bool:
    """Whether ``name`` is ScienceWorld's name of a thing inside a container the ``look``
    answer shows closed ("cup containing blue paint in cupboard" while "The large cupboard
    door is closed."): the world lists its commands, but its parser knows no such thing."""
    head, sep, container = name.rpartition(" in ")
    if not sep or not head:
        return False
    held = set(container.split())
    return any(held <= set(closed.split()) for closed in _CLOSED.findall(look))


def room_of(look: str) -> str | None:
    """The room a ScienceWorld "look around" answer names ("This room is called the kitchen.")."""
    m = _ROOM.search(look)
    return m.group(1) if m else None


class ScienceWorldExecutor(CommandWorldExecutor):
    """One ScienceWorld task variation; ``simplifications`` e.g. ``"easy"``."""

    max_score = 100.0

    def __init__(
        self,
        task_name: str,
        variation: int = 0,
        simplifications: str = "easy",
        step_limit: int = 100,
        env=None,
        actions: ActionsMode = "listed",
    ):
        super().__init__(actions)
        from scienceworld import ScienceWorldEnv

        self.task_name = task_name
        self.variation = variation
        self.simplifications = simplifications
        self._own_env = env is None
        self.env = env if env is not None else ScienceWorldEnv("", envStepLimit=step_limit)
        self.step_limit = step_limit
        self.verbs = self._verbs_for(simplifications)
        self._aliases: set[str] = set()
        self._remembered: list[str] = []  # rooms the robot's memory knows (learn_places)
        self._look = ""  # the newest "look around" answer

    @staticmethod
    def _verbs_for(simplifications: str) -> tuple[Verb, ...]:
        teleport = "easy" in simplifications or "teleportAction" in simplifications
        if not teleport:
            return VERBS
        return tuple(
            replace(
                v,
                template="teleport to {0}",
                description="teleport to any known room",
                needs=(HERE,),  # no door in the way
            )
            if v.name == "navigate_to"
            else v
            for v in VERBS
        )

    def action_space(self) -> ActionSpace:
        """The world's valid commands but acts on a room, and with teleporting, a teleport to
        every room seen this task but the one the robot is in: the world lists only the rooms
        visible from here, so a robot in a room without a door in view could never leave it.
        Free mode: the commands the robot's belief affords (teleporting: to any room it
        perceived)."""
        space = super().action_space()
        if self.free:
            return space
        # a room is a place to go to or look in, no thing to act on (focus on, mix, pick up)
        reads = {v.name for v in self.verbs if v.reads}
        space.candidates = [
            a for a in space.candidates if a.verb in reads or not a.args or a.args[0] not in ROOMS
        ]
        # a thing in a closed container: listed by the world, refused by its parser
        space.candidates = [
            a for a in space.candidates if not any(inside_closed(n, self._look) for n in a.args)
        ]
        if not any(
            v.name == "navigate_to" and v.template.startswith("teleport") for v in self.verbs
        ):
            return space
        here = self._last.place if self._last else None
        rooms = [p for p in self._seen.get("place", {}) if p != here]
        moves = [Action(verb="navigate_to", args=[room]) for room in rooms]
        kept = [a for a in space.candidates if not (a.verb == "navigate_to" and here in a.args)]
        space.candidates = rank_candidates([*kept, *(m for m in moves if m not in kept)])
        return space

    @property
    def teleport(self) -> bool:
        return any(
            v.name == "navigate_to" and v.template.startswith("teleport") for v in self.verbs
        )

    def _perceive(self, text: str) -> Seen:
        return perceive(text)

    def learn_places(self, places: Sequence[str]) -> int:
        """Teleport to the rooms the robot's memory knows too (a robot that walked this house
        before knows its rooms): those of ``places`` that are rooms of ScienceWorld."""
        self._remembered = [p for p in dict.fromkeys(places) if p in ROOMS]
        self._know_remembered()
        return len(self._remembered)

    def reset(self) -> tuple[str, Observation]:
        task, observation = super().reset()
        self._know_remembered()  # a replay's reset keeps what memory gave
        return task, observation

    def _know_remembered(self) -> None:
        known = self._seen.setdefault("place", {})
        for room in self._remembered:
            known.setdefault(room, None)
            self.belief.places.setdefault(room, None)

    def _start(self) -> tuple[str, WorldReply]:
        self._aliases = set()
        variations = int(self.env.get_max_variations(self.task_name))
        if not 0 <= self.variation < variations:  # ScienceWorld would play an "unknown" task
            raise ValueError(
                f"ScienceWorld task {self.task_name!r} has variations 0-{variations - 1}, "
                f"not {self.variation}"
            )
        self.env.load(
            self.task_name, self.variation, self.simplifications, generateGoldPath=not self.free
        )
        obs, info = self.env.reset()
        task = self.env.get_task_description()
        if self.free:
            return task, WorldReply(text=obs, score=0.0, done=False)
        look = str(info.get("look") or obs)
        self._look = look
        inventory = str(info.get("inv") or "")
        return task, WorldReply(
            text=f"{look}\n{inventory}".strip(),
            score=0.0,
            done=False,
            place=room_of(look),
            world=world_digest([look, inventory]),
            holding=self._held(inventory),
        )

    def _send(self, command: str) -> WorldReply:
        obs, _reward, done, info = self.env.step(command)
        if obs.startswith("Ambiguous request"):
            # The world asks which of several same-named objects is meant; the next input is
            # read as the choice, so answer at once with the first option.
            log.info("scienceworld: ambiguous %r, choosing option 0", command)
            obs, _reward, done, info = self.env.step("0")
        score = float(info.get("score", 0) or 0)
        reply = WorldReply(
            text=obs,
            score=score,
            done=bool(done),
            won=bool(done) and score >= self.max_score,
            lost=score < 0,
        )
        if self.free:
            return reply  # texts, score and the end only
        look, inventory = str(info.get("look") or ""), str(info.get("inv") or "")
        self._look = look or self._look
        reply.place = room_of(look)
        reply.world = world_digest([look, inventory]) if look else None
        reply.holding = self._held(inventory) if look else self._last_held()
        return reply

    def _held(self, inventory: str) -> tuple[str, ...]:
        """What the inventory answer lists, in the names the world's commands use (what it
        lists is in no room: only its commands name it)."""
        commands = (self.command_to_action(c) for c in self._valid_commands())
        names = {n for a in commands if a is not None for n in a.args}
        return held_names(inventory, sorted(names))

    def _last_held(self) -> tuple[str, ...]:
        return self._last.holding if self._last else ()

    def _visible(self) -> dict[str, list[str]]:
        visible_ids = set(self.env.get_possible_object_referent_LUT())
        table = self.env.get_all_object_ids_types_referents_LUTJSON()
        for obj_id in visible_ids:
            self._aliases.update(table.get(obj_id, {}).get("referents", []))
        names = [n for n in self.env.get_possible_objects() if n != "agent"]
        places = [n for n in names if n in ROOMS]
        things = [n for n in names if n not in ROOMS]
        return {"place": places, "object": things, "receptacle": things}

    def _validate(self, action: Action) -> str | None:
        """Also accept the world's other names of seen objects, qualified ones included.

        ScienceWorld's parser resolves names such as "cup containing water in table" or
        "door to kitchen"; such a name is accepted when it contains a seen object's name as
        whole words. Names of nothing seen (hallucinated objects) are still rejected.
        """
        problem = super()._validate(action)
        if self.free or problem is None or not problem.startswith("unknown "):
            return problem
        spec = next((v for v in self.verbs if v.name == action.verb), None)
        if spec is None:
            return problem
        held = self._last.holding if self._last else ()
        for arg, kind in zip(action.args, spec.arg_kinds, strict=True):
            if arg in self._seen.get(kind, {}) or self._known_alias(arg) or arg in held:
                continue
            return problem
        return None

    def _known_alias(self, name: str) -> bool:
        if name in self._aliases:
            return True
        padded = f" {name} "
        return any(len(a) > 2 and f" {a} " in padded for a in self._aliases)

    def _valid_commands(self) -> list[str]:
        """ScienceWorld's valid action-object combinations here (its own affordances)."""
        return [
            c
            for c in self.env.get_valid_action_object_combinations()
            if not _NON_OBJECTS.intersection(c.split())
        ]

    def _refused(self, text: str) -> bool:
        head = text.strip()
        return head.startswith(REFUSALS_START) or any(p in head for p in REFUSALS_IN)

    def gold_actions(self) -> list[str]:
        """The world's oracle command sequence for the loaded variation (after reset; free
        mode: never generated)."""
        if self.free:
            raise RuntimeError("free mode reads no gold path (actions='free')")
        return list(self.env.get_gold_action_sequence())


# ScienceWorld's simplifications ("easy" is all of them; "noElectricalAction" is refused by
# the electrical tasks). Listed by ``ScienceWorldEnv.get_possible_simplifications``.
SIMPLIFICATIONS = (
    "teleportAction",
    "selfWateringFlowerPots",
    "openContainers",
    "openDoors",
    "noElectricalAction",
)


def scienceworld_task_names() -> list[str]:
    """The 30 task names of the installed ScienceWorld (its ``tasks.json``; no JVM)."""
    from scienceworld.constants import ID2TASK

    return list(ID2TASK.values())


def scienceworld_variations(tasks: Iterable[str]) -> dict[str, int]:
    """How many variations each task has (starts one ScienceWorld JVM for all of them)."""
    from scienceworld import ScienceWorldEnv

    env = ScienceWorldEnv("")
    try:
        return {task: int(env.get_max_variations(task)) for task in dict.fromkeys(tasks)}
    finally:
        env.close()


def check_simplifications(value: str) -> str:
    """``value`` as ScienceWorld takes it: ``easy``, ``none`` / empty (no simplification), or a
    comma list of :data:`SIMPLIFICATIONS`; a ValueError names the valid ones."""
    if value.strip().lower() in ("", "none"):
        return ""
    names = [n.strip() for n in value.split(",") if n.strip()]
    bad = [n for n in names if n not in ("easy", *SIMPLIFICATIONS)]
    if bad:
        raise ValueError(
            f"unknown ScienceWorld simplification {bad[0]!r}; choose easy, none or a comma list "
            f"of {', '.join(SIMPLIFICATIONS)}"
        )
    return ",".join(names)
