"""What the goal still needs, read from the world model (pure functions): the things the
instructions act on not seen yet (:func:`missing_things`), what what is left needs and where
(:func:`wanted_things`), the offered acts that search for it (:func:`search_moves`), and the
robot's :class:`Scene`. The effects table (:mod:`.table`) ranks the candidates on these facts.
"""

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
from robomemory.grounding.loops import (
    visited_places,
)
from robomemory.grounding.spent import (
    scored_actions,
)
from robomemory.grounding.text import (
    holds,
    word_list,
    words,
)
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
        """Whether the robot holds as many things as it can: nothing more can be taken."""
        return self.hands is not None and len(self.held) >= self.hands


class Wanted(NamedTuple):
    """What left instructions need (:func:`wanted_things`), which of it is used where it
    stands (the things an alias fixes, "fire": the kiln; gone to, not carried), and the verb of
    the next instruction when it acts on nothing (it is done where the world offers it)."""

    things: list[str]
    in_place: list[str]
    act: str | None = None


def world_parts(
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    task: str = "",
    notes: Sequence[str] = (),
    done: Sequence[str] = (),
    path: Sequence[Sequence] = (),
    states: Mapping[str, str] | None = None,
    exits: Mapping[str, Sequence[str]] | None = None,
    seen: Mapping[str, str] | None = None,
    acts_at: Mapping[str, str] | None = None,
    held: Collection[str] = (),
) -> tuple[WorldModel, Scene]:
    """A :class:`WorldModel` and :class:`Scene` of the parts the baselines keep apart."""
    fell, rose = scored_actions(trajectory)
    world = WorldModel(
        fell=fell,
        rose=rose,
        notes=list(notes),
        done=list(done),
        states=dict(states or {}),
        path=[list(s) for s in path],
        exits={k: list(v) for k, v in (exits or {}).items()},
        seen=dict(seen or {}),
        acts_at=dict(acts_at or {}),
    )
    return world, Scene(place=place, held=tuple(held), task=task, trajectory=tuple(trajectory))


def goal_of(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> str:
    """The task as the rules read it: once its pick is done, with the thing picked
    (:func:`with_pick`, "move it" is "move the blue jay")."""
    names = [*(n for a in candidates for n in a.args), *world.seen, *scene.held]
    return with_pick(scene.task, verbs, world.done, names)


def does(action: Action, ins: Instruction) -> bool:
    """Whether ``action`` does ``ins``: its verb on its thing, at the arguments its alias
    fixes (any case: "BBQ" is the world's "bbq")."""
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
    """The candidates that search from where the robot is (:func:`exploration` over the
    world model's path, exits and what its actions revealed), nearest first."""
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
    """What the instructions read (newest first) act on, or use where it stands (the
    arguments an alias fixes), that the world has not shown this task (:func:`unseen_things`
    against :func:`known_things`); while nothing read instructs
    (a world whose every look is a read), the things the ``task`` commits to by name
    (:func:`committed_things`: "First, focus on the thermometer" sends the search for the
    thermometer) that neither a known thing nor the executor's ``targets`` (what it has shown,
    offered or not: a list capped per verb leaves a thing here out) name; and the thing a task
    of no act states (:func:`stated_things`) that no known thing names."""
    names = known_things(candidates, world.acted(), world.seen)
    read = " . ".join(world.read())
    found = [words(n) for n in [*names, *targets] if words(n)]
    if read and asked_things(read, verbs):
        # and what an instruction left to do fixes by its alias ("glaze the cup": the kiln)
        left = left_instructions(world.notes, world.done, verbs, names, states=world.states)
        fixed = [r for i in left for r in i.rest]
        unseen = [r for r in fixed if not any(words(r) <= k for k in found)]
        return list(dict.fromkeys([*unseen_things(read, verbs, names), *unseen]))
    committed = [t for t in committed_things(task, verbs) if not any(words(t) <= k for k in found)]
    # a thing a task of no act states ("a polished vase") is seen once a name holding its last
    # word and only its words is ("vase"), shown by the world model: a target may be a name the
    # goal's own text gave (a note "only missing a polished vase" named it, nothing showed it)
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
    """``missing``, or none while it is only what instructions' aliases fix (the kiln of
    "glaze the cup", used where it stands) and something ``left`` can be done here: an act
    offered that does an instruction left (:func:`does`), or a thing left acts on or a tool
    a verb left needs lying here (a full hand lists no take). What can be done here is done
    before the search."""
    fixed = {r for i in left for r in i.rest}
    if not missing or not set(missing) <= fixed:
        return list(missing)
    place = scene.place
    # a tool to take, not what a verb is done at (an alias's fixed place: a kiln)
    tools = tools_of(verbs, left, [t for t, at in world.seen.items() if at == place])
    things = {i.thing for i in left if i.thing} | tools
    lying = {t for t, at in world.seen.items() if at == place and t not in scene.held}

    # an act that does an instruction left, where its alias asks (glazed, not baked; another
    # act on its thing, a cut done already, is none: the kiln's search had waited on it)
    doable = any(does(a, i) for a in candidates if a.args for i in left if i.thing)
    return [] if things & lying or doable else list(missing)


def wanted_things(
    notes: Sequence[str],
    done: Sequence[str],
    verbs: Sequence[VerbSpec],
    candidates: Sequence[Action],
    task: str,
    states: Mapping[str, str] | None,
    seen: Mapping[str, str],
    held: Collection[str] = (),
) -> Wanted:
    """The things what is left to do acts on, then those its aliases fix ("grill the apple":
    the BBQ), then those the descriptions of its verbs not offered now say they need ("sand:
    needs a held file" -> file), among the known; and the next act on nothing, if that is
    what comes first and the robot holds a thing the notes name."""
    offered = [*(n for a in candidates for n in a.args), *held]  # what is at hand
    names = list(dict.fromkeys([*offered, *seen]))
    left = left_instructions(notes, done, verbs, names, task=task, offered=offered, states=states)
    described = {v.name: v.description for v in verbs}
    verbs_now = {a.verb for a in candidates}
    needs = set().union(*(needs_of(words(i.phrase), described, verbs_now) for i in left))
    fixed = {tuple(word_list(r)) for i in left for r in i.rest}
    acted_on = [i.thing for i in left if i.thing]
    in_place = [n for n in names if tuple(word_list(n)) in fixed and n not in acted_on]
    out = [*acted_on, *in_place]
    out += [n for n in names if words(n) and words(n) <= needs]
    # an act on nothing is done with what is held: one the notes name, gathered already
    read = word_list(" . ".join(n.split(": ", 1)[-1] for n in notes))
    ready = any(holds(read, word_list(h)) for h in held)
    act = left[0].verb if left and left[0].on_nothing and ready else None
    return Wanted(list(dict.fromkeys(out)), in_place, act)


def needs_of(goal: set[str], described: Mapping[str, str], offered: set[str]) -> set[str]:
    """Words of the descriptions of the verbs ``goal`` names that are not offered now."""
    named = [v for v in described if v not in offered and words(v) and words(v) <= goal]
    return set().union(*(words(described[v]) - words(v) for v in named))


def _tools_needed(verbs: Sequence[VerbSpec], left: Sequence[Instruction]) -> set[str]:
    """The words of the descriptions of the verbs ``left`` asks for, less their names: the
    tools they need ("cut: needs a held blade"), whether or not their act is offered now."""
    described = {v.name: v.description for v in verbs}
    return {w for v in {ins.verb for ins in left} for w in words(described.get(v, "")) - words(v)}


def tools_of(
    verbs: Sequence[VerbSpec], left: Sequence[Instruction], things: Collection[str]
) -> set[str]:
    """The ``things`` a verb ``left`` needs (its description: "needs a held blade"), not
    where an alias's act is done (a kiln: used where it stands)."""
    needed = _tools_needed(verbs, left)
    stands = _stands(verbs)
    return {
        t for t in things if words(t) and words(t) <= needed and frozenset(words(t)) not in stands
    }


def _stands(verbs: Sequence[VerbSpec]) -> set[frozenset[str]]:
    """The words of each place an alias fixes ("glaze": the kiln): used where it stands."""
    return {frozenset(words(a)) for v in verbs for args in v.alias_args.values() for a in args}


def helped_now(
    helped: Sequence[str], candidates: Sequence[Action], done: Sequence[str]
) -> list[str]:
    """The actions recalled lessons say helped before that are offered now and not done in
    this episode, in the lessons' order (finishing never: it is always offered)."""
    offered = {str(a) for a in candidates}
    out: list[str] = []
    for action in helped:
        if action in offered and action not in done and action not in out:
            if not action.startswith(f"{TASK_COMPLETE}("):
                out.append(action)
    return out
