"""The choice a described task turns on (pure): "find a(n) animal, first focus on the thing"
names no thing, so only the world can judge a pick, and an irreversible act is the pick. Once
every place is visited the search is over; the task's irreversible act on the things here then
leads, so the robot picks instead of wandering to the step limit, and a wrong pick's verdict
becomes a lesson that withholds it next time (``memory/consolidation.py``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from robomemory.core import Action, VerbSpec
from robomemory.grounding.frontier import move_to
from robomemory.grounding.instructions import left_instructions, named_verbs
from robomemory.grounding.loops import visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.text import holds, parsed, word_list
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


# words that join two things in one name ("apple tree into living thing", "cup containing
# water", "door to living room"): such a name is a relation, not a thing that answers
RELATION_WORDS = frozenset({"into", "in", "on", "to", "from", "with", "containing"})


def answers(name: str, described: Sequence[str]) -> bool:
    """Whether a thing's name holds every word of a description ("adult pea plant" answers
    "a(n) plant"); a name that joins two things (:data:`RELATION_WORDS`) answers none."""
    said = name.lower().split()
    if RELATION_WORDS & set(said):
        return False
    return any(
        (need := {w for w in word_list(d) if len(w) > 1}) and need <= set(word_list(name))
        for d in described
    )


def task_choice(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    task: str,
    held: Collection[str] = (),
    approved: Collection[str] = (),
) -> list[Action]:
    """What leads while the task describes its thing (empty otherwise, and where moves go by
    direction: such a world has no "every place", ``frontier.exploration`` searches it). While
    a place is not visited, the moves there: the search (after a read, the ranking cut them
    and the planner looked into every flower of one room). Once every place is, and the robot
    has been in two at least (in a room whose doors are closed no move is offered yet), the
    task's irreversible acts on the things here, the pick only the world can judge: a thing
    whose name :func:`answers` the description first, what the robot holds last (a thing held
    needed no search); with none here that answers it, the moves to where one was seen, and
    with none seen, the picks here, then the ways back to the places visited.
    Before all of them, a pick this task's own verdict ``approved`` (the world rewarded it
    in an earlier attempt): offered, it leads; else the way to where its thing was seen."""
    moves = meanings(verbs).moves
    described = described_things(world, verbs, task)
    if not described:
        return []
    picks = named_verbs(task, verbs) & meanings(verbs).irreversible
    if known := [a for a in candidates if a.verb in picks and str(a) in approved]:
        return known
    for verb, args in map(parsed, approved):
        at = world.seen.get(args[0]) if verb in picks and args else None
        if at is not None and (way := move_to(at, candidates, verbs)) is not None:
            return [way]
    if {a.verb for a in candidates if a.verb in moves} & by_direction(verbs):
        return []
    if search := unvisited_moves(candidates, verbs, world):
        return search
    if len(set(visited_places(world.path))) < 2:  # no move offered yet: behind closed doors
        return []
    named = {str(a) for a in named_things(candidates, task, described)}
    chosen = [a for a in candidates if a.verb in picks and a.args and str(a) not in named]
    chosen.sort(key=lambda a: (not answers(a.args[0], described), a.args[0] in held))
    if chosen and answers(chosen[0].args[0], described):
        return chosen
    there = {p for t, p in world.seen.items() if answers(t, described)}
    ways = [a for a in candidates if a.verb in moves and a.args and a.args[0] in there]
    if ways or not chosen:
        return ways
    # nothing seen answers by its name ("apple tree" for "a(n) plant"): the picks here, then
    # the ways back to the places visited (the choice may be in another room)
    back = set(visited_places(world.path)) - {world.path[-1][2] if world.path else None}
    return chosen + [a for a in candidates if a.verb in moves and a.args and a.args[0] in back]


def named_things(
    candidates: Sequence[Action], task: str, described: Sequence[str] = ()
) -> list[Action]:
    """The candidates whose first thing the task names, its ``described`` words left out
    ("the red box" of "move it to the red box"; not "kite" of "find a kite"): a thing the
    task names is not the one it only describes, no pick."""
    text = task.lower()
    for d in described:
        text = text.replace(d.lower(), " . ")
    said = word_list(text)
    return [a for a in candidates if a.args and holds(said, word_list(a.args[0]))]
