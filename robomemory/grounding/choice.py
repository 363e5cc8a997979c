"""What a task only describes (pure): "find a(n) animal, first focus on the thing" names no
thing, so only the world can judge a pick; the briefing says what is described, the moves to
places not visited, and once every place is visited the things here to choose from."""

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
    """What the task asks to find by description only ("a(n) plant"), while its act on it is
    not done."""
    left = left_instructions(world.notes, world.done, verbs, [], task=task)
    return [i.described for i in left if i.refers and i.described]


class ToRead(NamedTuple):
    """A thing the task describes, and the things offered to its act: which one it is, only a
    reading of the task and the notes can say (the model's). ``by_class``: described by its
    class ("a(n) animal") and read against the things of one place, so none may be it."""

    described: str
    things: tuple[str, ...]
    by_class: bool = False

    @property
    def key(self) -> str:
        """Where the reading is kept: a class read against one place's things, per place."""
        return f"{self.described}: {', '.join(self.things)}" if self.by_class else self.described


def to_read(
    world: WorldModel,
    verbs: Sequence[VerbSpec],
    task: str,
    candidates: Sequence[Action],
    known: Collection[str],
    held: Sequence[str] = (),
) -> ToRead | None:
    """The first thing the task describes by a clause of its own (``Instruction.qualified``:
    "the item with the same quantity as the math problem answer") while its act is left, once
    every ``known`` thing the description names has been read (the math problem: before, no
    reading can say), with the two or more things it may be: those offered to that act, and
    those ``held`` (a pick may come before the reading); else None. Before it, a thing
    described by its class for an act no try undoes (``by_class``), with the things offered to
    that act and held that the task does not name."""
    read = {a for n in world.notes for a in parsed(n.split(": ", 1)[0])[1][:1]}
    final = meanings(verbs).irreversible
    for ins in left_instructions(world.notes, world.done, verbs, [], task=task):
        if ins.refers and not ins.named and not ins.qualified and ins.verb in final:
            # an act no try can undo on a thing described by its class ("focus on the
            # animal"): read against the things offered here, the task's own names not
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
    """The moves among ``candidates`` to places not visited yet (a move by direction names no
    place: it is none of them)."""
    moves = meanings(verbs).moves - by_direction(verbs)
    visited = set(visited_places(world.path))
    return [a for a in candidates if a.verb in moves and a.args and a.args[0] not in visited]
