"""What a task only describes ("find a(n) animal, focus on the thing" names no thing): what is
described, the moves to places not visited, and the things a reading chooses among."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from robomemory.core import Action, VerbSpec
from robomemory.grounding.instructions import left_instructions
from robomemory.grounding.loops import visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.text import parsed, words
from robomemory.grounding.world import WorldModel


def described_things(world: WorldModel, verbs: Sequence[VerbSpec], task: str) -> list[str]:
    """What the task asks to find by description only ("a(n) plant"), while its act is left."""
    left = left_instructions(world.notes, world.done, verbs, [], task=task)
    return [i.described for i in left if i.refers and i.described]


class ToRead(NamedTuple):
    """A thing the task describes and the things offered to its act: only the model's reading
    says which. ``by_class``: described by its class, read against one place's things."""

    described: str
    things: tuple[str, ...]
    by_class: bool = False

    @property
    def key(self) -> str:
        """Where the reading is kept: a class's, per set of things offered."""
        return f"{self.described}: {', '.join(self.things)}" if self.by_class else self.described


def to_read(
    world: WorldModel,
    verbs: Sequence[VerbSpec],
    task: str,
    candidates: Sequence[Action],
    known: Collection[str],
    held: Sequence[str] = (),
) -> ToRead | None:
    """The first thing the task describes by a clause ("the item with the same quantity as
    the answer") once every ``known`` thing it names was read, with the two or more things it
    may be (offered to its act, or ``held``); or before it, a thing described by its class
    for an act no try undoes, with the things offered or held the task does not name."""
    read = {a for n in world.notes for a in parsed(n.split(": ", 1)[0])[1][:1]}
    final = meanings(verbs).irreversible
    for ins in left_instructions(world.notes, world.done, verbs, [], task=task):
        if ins.refers and not ins.named and not ins.qualified and ins.verb in final:
            offered = [a.args[0] for a in candidates if a.verb == ins.verb and a.args]
            things = [t for t in dict.fromkeys([*offered, *held]) if t.lower() not in task.lower()]
            return ToRead(ins.described, tuple(things), by_class=True) if things else None
        if not ins.qualified:
            continue
        named = {n for n in known if words(n) and words(n) <= words(ins.described)}
        if not named <= read:
            return None
        offered = [a.args[0] for a in candidates if a.verb == ins.verb and a.args]
        things = tuple(dict.fromkeys(t for t in [*offered, *held] if t not in named))
        return ToRead(ins.described, things) if len(things) > 1 else None
    return None


def by_direction(verbs: Sequence[VerbSpec]) -> set[str]:
    """The move verbs whose argument is a direction ("go(north)"): they name no place."""
    moves = meanings(verbs).moves
    return {v.name for v in verbs if v.name in moves and v.arg_kinds[:1] == ["direction"]}


def unvisited_moves(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel
) -> list[Action]:
    """The moves to places not visited yet (a move by direction names no place)."""
    moves = meanings(verbs).moves - by_direction(verbs)
    visited = set(visited_places(world.path))
    return [a for a in candidates if a.verb in moves and a.args and a.args[0] not in visited]
