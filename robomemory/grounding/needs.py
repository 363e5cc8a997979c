"""What the goal still needs, read from the world model: things not seen yet, what is left
needs and where, the acts that search for it, and the robot's :class:`Scene`."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, Route, VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.grounding.frontier import (
    blocking,
    closed_at,
    exploration,
    known_things,
    moves_led,
    revealed_things,
)
from robomemory.grounding.goal_words import committed_things, stated_things
from robomemory.grounding.instructions import (
    Instruction,
    asked_things,
    left_instructions,
    unseen_things,
    with_pick,
)
from robomemory.grounding.loops import visited_places
from robomemory.grounding.spent import scored_actions
from robomemory.grounding.text import holds, word_list, words
from robomemory.grounding.world import WorldModel


class Scene(NamedTuple):
    """Where the robot is now and what it was asked: what the world model does not keep."""

    place: str | None
    held: tuple[str, ...] = ()
    task: str = ""
    trajectory: tuple[TrajectoryStep, ...] = ()  # the newest steps (spent actions)
    hands: int | None = None  # how many things the robot can hold, when the world limits it

    @property
    def full(self) -> bool:
        """Whether the robot holds as many things as it can."""
        return self.hands is not None and len(self.held) >= self.hands


class Wanted(NamedTuple):
    """What left instructions need, which of it is used where it stands (an alias's fixed
    place: the kiln, gone to, not carried), and the next act on nothing when it comes first."""

    things: list[str]
    in_place: list[str]
    act: str | None = None


def world_parts(
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    task: str,
    notes: Sequence[str],
    done: Sequence[str],
    path: Sequence[Sequence],
    states: Mapping[str, str],
) -> tuple[WorldModel, Scene]:
    """A :class:`WorldModel` and :class:`Scene` of the parts the baselines keep apart."""
    fell, rose = scored_actions(trajectory)
    world = WorldModel(
        fell=fell,
        rose=rose,
        notes=list(notes),
        done=list(done),
        states=dict(states),
        path=[list(s) for s in path],
    )
    return world, Scene(place=place, task=task, trajectory=tuple(trajectory))


def goal_of(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> str:
    """The task as the rules read it: once its pick is done, with the thing picked."""
    names = [*(n for a in candidates for n in a.args), *world.seen, *scene.held]
    return with_pick(scene.task, verbs, world.done, names)


def does(action: Action, ins: Instruction) -> bool:
    """Whether ``action`` is ``ins``'s verb on its thing, at the arguments its alias fixes
    (any case: "BBQ" is the world's "bbq")."""
    fixed = {r.lower() for r in ins.rest}
    return (
        action.verb == ins.verb
        and action.args[:1] == [ins.thing]
        and fixed <= {x.lower() for x in action.args[1:]}
    )


def search_moves(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    place: str | None,
    routes: Sequence[Route],
) -> list[Action]:
    """The candidates that search from where the robot is (:func:`exploration`)."""
    return exploration(
        candidates,
        verbs,
        here=place,
        visited=visited_places(world.path),
        revealed=revealed_things(world.acted(), verbs)
        - blocking(world.path, place, candidates, verbs),
        routes=routes,
        exits=world.exits,
        closed=closed_things(world, verbs),
        led=moves_led(world.path, place) if place else None,
    )


def closed_things(world: WorldModel, verbs: Sequence[VerbSpec]) -> dict[str, list[str]]:
    """Per place, the things there shown closed and not yet opened (:func:`closed_at`)."""
    return closed_at(world.seen, world.states, verbs, revealed_things(world.acted(), verbs))


def missing_things(
    world: WorldModel,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    task: str = "",
    targets: Collection[str] = (),
) -> list[str]:
    """What the instructions read act on, or use where it stands, that the world has not
    shown; while nothing read instructs, the things the ``task`` commits to by name
    ("focus on the thermometer") that no known thing or ``targets`` name, and the thing a
    task of no act states ("a polished vase") that no known thing names."""
    names = known_things(candidates, world.acted(), world.seen)
    read = " . ".join(world.read())
    found = [words(n) for n in [*names, *targets] if words(n)]
    if read and asked_things(read, verbs):
        # and what an instruction left fixes by its alias ("glaze the cup": the kiln)
        left = left_instructions(world.notes, world.done, verbs, names, states=world.states)
        fixed = [r for i in left for r in i.rest]
        unseen = [r for r in fixed if not any(words(r) <= k for k in found)]
        return list(dict.fromkeys([*unseen_things(read, verbs, names), *unseen]))
    committed = [t for t in committed_things(task, verbs) if not any(words(t) <= k for k in found)]
    # a stated thing is seen once a known name holding its last word and only its words is
    # ("vase"); not a target: a target may be a name only the goal's own text gave
    shown = [words(n) for n in names if words(n)]
    stated = [
        t
        for t in stated_things(task, verbs)
        if not any(k <= words(t) and word_list(t)[-1] in k for k in shown)
    ]
    return [*committed, *stated]


def searched_now(
    missing: Sequence[str],
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    left: Sequence[Instruction],
) -> list[str]:
    """``missing``, or none while it is only what aliases fix (the kiln) and something left
    can be done here (an act offered, a thing or tool lying here): done before the search."""
    fixed = {r for i in left for r in i.rest}
    if not missing or not set(missing) <= fixed:
        return list(missing)
    place = scene.place
    tools = tools_of(verbs, left, [t for t, at in world.seen.items() if at == place])
    things = {i.thing for i in left if i.thing} | tools
    lying = {t for t, at in world.seen.items() if at == place and t not in scene.held}
    # where its alias asks (glazed, not baked): a cut done already had held the kiln's search
    doable = any(does(a, i) for a in candidates if a.args for i in left if i.thing)
    return [] if things & lying or doable else list(missing)


def wanted_things(
    world: WorldModel,
    verbs: Sequence[VerbSpec],
    candidates: Sequence[Action],
    task: str,
    held: Collection[str],
) -> Wanted:
    """The things what is left acts on, then those its aliases fix (the BBQ), then those the
    descriptions of its verbs not offered now need ("sand: needs a held file"); and the next
    act on nothing, if it comes first and the robot holds a thing the notes name."""
    notes, states = world.notes, world.states
    offered = [*(n for a in candidates for n in a.args), *held]  # what is at hand
    names = list(dict.fromkeys([*offered, *world.seen]))
    left = left_instructions(
        notes, world.done, verbs, names, task=task, offered=offered, states=states
    )
    described = {v.name: v.description for v in verbs}
    verbs_now = {a.verb for a in candidates}
    needs = set().union(*(needs_of(words(i.phrase), described, verbs_now) for i in left))
    fixed = {tuple(word_list(r)) for i in left for r in i.rest}
    acted_on = [i.thing for i in left if i.thing]
    in_place = [n for n in names if tuple(word_list(n)) in fixed and n not in acted_on]
    out = [*acted_on, *in_place]
    out += [n for n in names if words(n) and words(n) <= needs]
    read = word_list(" . ".join(n.split(": ", 1)[-1] for n in notes))
    ready = any(holds(read, word_list(h)) for h in held)
    act = left[0].verb if left and left[0].on_nothing and ready else None
    return Wanted(list(dict.fromkeys(out)), in_place, act)


def needs_of(goal: set[str], described: Mapping[str, str], offered: set[str]) -> set[str]:
    """Words of the descriptions of the verbs ``goal`` names that are not offered now."""
    named = [v for v in described if v not in offered and words(v) and words(v) <= goal]
    return set().union(*(words(described[v]) - words(v) for v in named))


def tools_of(
    verbs: Sequence[VerbSpec], left: Sequence[Instruction], things: Collection[str]
) -> set[str]:
    """The ``things`` the description of a verb ``left`` needs ("needs a held blade"), but
    where an alias's act is done (a kiln: used where it stands)."""
    described = {v.name: v.description for v in verbs}
    needed = {w for v in {i.verb for i in left} for w in words(described.get(v, "")) - words(v)}
    stands = {frozenset(words(a)) for v in verbs for args in v.alias_args.values() for a in args}
    return {
        t for t in things if words(t) and words(t) <= needed and frozenset(words(t)) not in stands
    }


def helped_now(
    helped: Sequence[str], candidates: Sequence[Action], done: Sequence[str]
) -> list[str]:
    """The actions lessons say helped that are offered now and not done yet, in the lessons'
    order (finishing never: it is always offered)."""
    offered = {str(a) for a in candidates}
    kept = (a for a in helped if a in offered and a not in done)
    return list(dict.fromkeys(a for a in kept if not a.startswith(f"{TASK_COMPLETE}(")))
