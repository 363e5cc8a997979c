"""What a task only describes (pure): "find a(n) animal, first focus on the thing" names no
thing, so only the world can judge a pick; the briefing says what is described, the moves to
places not visited, and once every place is visited the things here to choose from."""

from __future__ import annotations

from collections.abc import Sequence

from robomemory.core import Action, VerbSpec
from robomemory.grounding.instructions import left_instructions
from robomemory.grounding.loops import visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.world import WorldModel


def described_things(world: WorldModel, verbs: Sequence[VerbSpec], task: str) -> list[str]:
    """What the task asks to find by description only ("a(n) plant"), while its act on it is
    not done."""
    left = left_instructions(world.notes, world.done, verbs, [], task=task)
    return [i.described for i in left if i.refers and i.described]


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
