"""Free mode (``--actions free``): what the robot believes from the texts it read, and the
commands it offers from that belief alone.

In free mode a text world's executor reads nothing the world hides from a player: no list of
valid commands, no room or inventory text given for free each step, no digest of the world's
state, no gold path. It reads the text each command returns, the score and the game's end, as
TALES' agents do. Each world's parser (``envs/twx_perceived.py``,
``envs/scienceworld_perceived.py``) turns one text into a :class:`Seen`; a :class:`Belief`
folds those in, with what the robot's own successful commands did (a take that succeeded
holds the thing). :func:`free_candidates` crosses the executor's declared verbs with the names
the belief holds, each argument filtered by what it needs (:data:`NEEDS`): a put needs a thing
held, a take a thing seen here and not held, a move a way out seen from here.

``holding_known`` (the robot's held things are the whole inventory): true from an inventory
text the robot asked for until a succeeded command whose effect on held things the belief does
not follow (a cook, a prepare, a use); the robot's own takes, puts, drops, opens, moves and
reads keep it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from robomemory.core import TASK_COMPLETE, Action
from robomemory.executors.base import world_digest
from robomemory.executors.candidates import rank_candidates

ActionsMode = Literal["listed", "free"]
ACTIONS_MODES: tuple[ActionsMode, ...] = ("listed", "free")

# What an argument needs of the belief:
#   held: a thing held; here: a thing seen here, not held (what stands on or in another
#   first, furniture last); support: a thing here, furniture first; near: held or here;
#   closed / opened: a thing here believed closed / opened (doors included);
#   exit: a way out seen from here; place: any place perceived but this one (teleporting).
Need = Literal["held", "here", "support", "near", "closed", "opened", "exit", "place"]
NEEDS: tuple[Need, ...] = (
    "held",
    "here",
    "support",
    "near",
    "closed",
    "opened",
    "exit",
    "place",
)
# Verbs whose success the belief follows (besides reads): what is held stays known.
_FOLLOWED = frozenset({"pick_up", "put_down_to", "drop", "open", "close", "go", "navigate_to"})
_DOOR = re.compile(r"^door to (.+)$")
# Verbs whose answers name what the task needs (a recipe read, the task said again).
_NOTING = frozenset({"read", "task"})
# Free candidates over-generate (every verb by every name its needs admit): a larger bound
# than the listed mode's, still a bound.
FREE_MAX_CANDIDATES = 60


@dataclass(frozen=True)
class Seen:
    """What one text shows, as a world's parser reads it (every field optional)."""

    place: str | None = None  # the text describes this place (replaces what was seen there)
    things: tuple[str, ...] = ()  # seen here
    fixtures: tuple[str, ...] = ()  # of those, furniture: things others stand on or in
    closed: tuple[str, ...] = ()  # things here the text shows closed
    opened: tuple[str, ...] = ()  # things here the text shows open
    exits: tuple[tuple[str, str | None], ...] = ()  # (way, where it leads or None) open ways
    doors: tuple[tuple[str, str], ...] = ()  # (way, door name) closed ways
    held: tuple[str, ...] | None = None  # an inventory text: exactly these are held
    gained: tuple[str, ...] = ()  # things the text says the robot now holds
    revealed: str | None = None  # the place an opened door shows
    mentioned: tuple[str, ...] = ()  # names read that are not (known to be) here
    places: tuple[str, ...] = ()  # places the text names


def _add(slot: dict[str, None], names: Iterable[str]) -> None:
    for name in names:
        if name:
            slot.setdefault(name, None)


@dataclass
class Belief:
    """What the robot believes of its world, from the texts it read this task."""

    place: str | None = None
    held: dict[str, None] = field(default_factory=dict)
    held_known: bool = False
    here: dict[str | None, dict[str, None]] = field(default_factory=dict)
    closed: dict[str | None, dict[str, None]] = field(default_factory=dict)
    opened: dict[str | None, dict[str, None]] = field(default_factory=dict)
    exits: dict[str | None, dict[str, str | None]] = field(default_factory=dict)
    doors: dict[str | None, dict[str, str]] = field(default_factory=dict)
    names: dict[str, None] = field(default_factory=dict)
    places: dict[str, None] = field(default_factory=dict)
    fixtures: dict[str, None] = field(default_factory=dict)
    noted: dict[str, None] = field(default_factory=dict)  # named by the task or a read text

    def things_here(self) -> list[str]:
        """Things seen at the robot's place, held ones left out."""
        return [n for n in self.here.get(self.place, {}) if n not in self.held]

    def ways(self) -> dict[str, str | None]:
        """The open ways out of the robot's place and where each leads (None: not seen)."""
        return dict(self.exits.get(self.place, {}))

    def see(self, seen: Seen) -> None:
        """Fold in what one text shows."""
        if seen.place is not None:
            self.place = seen.place
            self.here[seen.place] = {}
            self.closed[seen.place] = {}
            self.opened[seen.place] = {}
            self.exits[seen.place] = {}
            self.doors[seen.place] = {}
            _add(self.places, [seen.place])
        here = self.place
        _add(self.here.setdefault(here, {}), (t for t in seen.things if t not in self.held))
        for name in seen.closed:
            self.opened.get(here, {}).pop(name, None)
            _add(self.closed.setdefault(here, {}), [name])
        for name in seen.opened:
            self.closed.get(here, {}).pop(name, None)
            _add(self.opened.setdefault(here, {}), [name])
        for way, where in seen.exits:
            self.exits.setdefault(here, {})[way] = where
            self.doors.get(here, {}).pop(way, None)
        for way, door in seen.doors:
            if way not in self.exits.get(here, {}):
                self.doors.setdefault(here, {})[way] = door
        if seen.held is not None:
            self.held = dict.fromkeys(seen.held)
            self.held_known = True
        self._hold(seen.gained)
        _add(self.fixtures, seen.fixtures)
        doors = [d for _, d in seen.doors]
        _add(self.names, [*seen.things, *seen.closed, *seen.opened, *doors])
        _add(self.names, [*(seen.held or ()), *seen.gained, *seen.mentioned])
        _add(self.places, [*seen.places, *(w for _, w in seen.exits if w)])

    def acted(self, verb: str, args: Sequence[str], seen: Seen, *, moves: bool) -> None:
        """What the robot's own succeeded command did, then what its answer shows."""
        here = self.place
        if verb == "pick_up" and args:
            self._hold(args[:1])
        elif verb in ("put_down_to", "drop") and args:
            self.held.pop(args[0], None)
            _add(self.here.setdefault(here, {}), args[:1])
        elif verb == "eat" and args:
            self.held.pop(args[0], None)
            self.here.get(here, {}).pop(args[0], None)
        elif verb in ("open", "close") and args:
            shut, now = (self.closed, self.opened) if verb == "open" else (self.opened, self.closed)
            shut.get(here, {}).pop(args[0], None)
            _add(now.setdefault(here, {}), args[:1])
            door = _DOOR.match(args[0])
            if verb == "open" and door:
                way = door.group(1)
                self.doors.get(here, {}).pop(way, None)
                self.exits.setdefault(here, {})[way] = seen.revealed
        if verb not in _FOLLOWED and not _reads(verb):
            self.held_known = False
        if verb in _NOTING:
            _add(self.noted, [*seen.mentioned, *seen.things])
        self.see(seen)
        if moves and args and seen.place is None:
            # the answer names no place ("You move to the kitchen."): the way's destination
            self.place = self.exits.get(here, {}).get(args[0]) or args[0]
            _add(self.places, [self.place])

    def _hold(self, names: Iterable[str]) -> None:
        for name in names:
            if name:
                self.held.setdefault(name, None)
                for slot in self.here.values():
                    slot.pop(name, None)

    def digest(self) -> str:
        """A digest of this belief (place, held, what is open or closed here, ways out): the
        ``world`` a free executor reports, so loop breaking compares beliefs, never the
        world's hidden state."""
        here = self.place
        parts = [f"at:{here}", *(f"held:{n}" for n in self.held)]
        parts += [f"closed:{n}" for n in self.closed.get(here, {})]
        parts += [f"open:{n}" for n in self.opened.get(here, {})]
        parts += [f"way:{w}" for w in self.exits.get(here, {})]
        return world_digest(parts)


def _words(text: str) -> str:
    """``text``'s words, lower case, one space between."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _reads(verb: str) -> bool:
    return verb in ("look", "look_at", "look_in", "examine", "read", "inventory", "task", "wait")


def pools(belief: Belief, teleport: bool = False) -> dict[Need, list[str]]:
    """The names each need admits now."""
    here = belief.place
    listed = belief.things_here()
    things = [n for n in listed if n not in belief.fixtures]
    things += [n for n in listed if n in belief.fixtures]
    support = [n for n in listed if n in belief.fixtures]
    support += [n for n in listed if n not in belief.fixtures]
    held = list(belief.held)
    doors = list(belief.doors.get(here, {}).values())
    places = [p for p in belief.places if p != here]
    return {
        "held": held,
        "here": things,
        "support": support,
        "near": [*held, *things],
        "closed": [*(n for n in belief.closed.get(here, {}) if n in things), *doors],
        "opened": [n for n in belief.opened.get(here, {}) if n in things or _DOOR.match(n)],
        "exit": places if teleport else list(belief.ways()),
        "place": places,
    }


def free_candidates(
    belief: Belief,
    verbs: Sequence[tuple[str, Sequence[Need]]],
    task: str,
    teleport: bool = False,
) -> list[Action]:
    """The commands the belief affords: each (verb, needs of its arguments) crossed with the
    names each need admits; those naming things the task or the robot's reading named first,
    then those naming held things, capped per verb (:func:`rank_candidates`);
    ``task_complete`` last."""
    admitted = pools(belief, teleport)
    out: list[tuple[int, Action]] = [(0, Action(verb=TASK_COMPLETE))]
    for verb, needs in verbs:
        if verb == TASK_COMPLETE:
            continue
        choices = [list(enumerate(admitted[n])) for n in needs]
        for picked in itertools.product(*choices):
            args = [name for _, name in picked]
            if len(set(args)) == len(args):  # the head of every pool first, not one by all
                out.append((sum(i for i, _ in picked), Action(verb=verb, args=args)))
    said = f" {_words(task)} "
    held = set(belief.held)

    def unconcerned(item: tuple[int, Action]) -> tuple[int, int, int]:
        depth, action = item
        named = sum(1 for a in action.args if a in belief.noted or f" {_words(a)} " in said)
        return -named, sum(1 for a in action.args if a not in held), depth

    ranked = [a for _, a in sorted(out, key=unconcerned)]
    return rank_candidates(ranked, limit=FREE_MAX_CANDIDATES)
