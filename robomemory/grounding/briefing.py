"""The briefing: what planner and critic are told at one step, derived once from the world
model and the actions possible now (pure; the ``ground`` node builds it)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from robomemory.core import Action, ActionSpace, Route, VerbSpec
from robomemory.grounding.choice import by_direction, described_things, unvisited_moves
from robomemory.grounding.frontier import act_moves, fetch_moves, move_to
from robomemory.grounding.instructions import left_instructions
from robomemory.grounding.loops import loop_actions, visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.needs import (
    Scene,
    Wanted,
    goal_of,
    helped_now,
    missing_things,
    search_moves,
    searched_now,
    wanted_things,
)
from robomemory.grounding.notes import goal_note
from robomemory.grounding.table import choice, decided, ordered, situation
from robomemory.grounding.world import WorldModel, empty, known_names

SEEN_PER_PLACE = 6  # things named per other place once the search is over
SEEN_NAME_CHARS = 40  # longer names are a world's disambiguations ("book in shelf containing")


class Briefing(BaseModel):
    """One step's grounded facts, each derived once; planner and critic render them."""

    model_config = ConfigDict(extra="forbid")

    candidates: list[Action] = empty(list, "the actions offered now, ranked and cut")
    placed: list[str] = empty(list, "the effects table's row that placed each candidate, in order")
    decided: str | None = Field(
        default=None, description="the candidate the table leaves no choice but, else none"
    )
    choice: list[str] = empty(list, "the candidates the table leaves the model to choose among")
    last_result: str | None = Field(
        default=None, description="the newest step and the world's whole answer"
    )
    left: list[str] = empty(list, "what the notes, then the task, instruct not done yet")
    helped: list[str] = empty(list, "offered actions recalled lessons say helped")
    looped: list[str] = empty(list, "actions set aside: they would bring a state back")
    missing: list[str] = empty(list, "what the instructions act on, not seen yet")
    search: list[str] = empty(list, "the offered actions that look for it, nearest first")
    away: list[str] = empty(list, "what is needed, seen elsewhere: 'thing (place)'")
    fetch: list[str] = empty(list, "the offered moves there")
    described: list[str] = empty(list, "what the task asks to find by description only")
    unvisited: list[str] = empty(list, "the offered moves to places not visited yet")
    here: list[str] = empty(list, "every place visited: the things here to choose from")
    full: list[str] = empty(list, "what the robot holds when it can hold no more (else none)")
    elsewhere: list[str] = empty(list, "every place visited: the things seen in each other place")

    def left_open(self) -> Briefing:
        """This briefing with only the candidates the table leaves open, each with its row."""
        if not self.choice:
            return self
        keep = [i for i, a in enumerate(self.candidates) if str(a) in self.choice]
        placed = [self.placed[i] for i in keep] if len(self.placed) == len(self.candidates) else []
        return self.model_copy(
            update={"candidates": [self.candidates[i] for i in keep], "placed": placed}
        )


def brief(
    space: ActionSpace,
    world: WorldModel,
    scene: Scene,
    *,
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    routes: Sequence[Route] = (),
    limit: int | None = None,
    last_result: str | None = None,
    affinity: Mapping[str, float] | None = None,
) -> Briefing:
    """The briefing of a step: the candidates in the effects table's order, each with its
    row (:mod:`.table`), and the facts the rows rest on, each derived once."""
    verbs, candidates, held = space.verbs, space.candidates, scene.held
    scene = scene._replace(task=goal_note(scene.task, world.notes))
    lessons = lessons_off_moves(lessons, verbs)
    missing = missing_things(world, candidates, verbs, scene.task, space.all_targets())
    goal = goal_of(candidates, verbs, world, scene)
    wanted = None
    if world.notes or goal != scene.task:  # what a read asks, or what follows the pick
        wanted = wanted_things(world, verbs, candidates, goal, held)
    left = left_instructions(
        world.notes,
        world.done,
        verbs,
        [*known_names(space), *world.seen],
        task=goal,
        offered=[*(a for c in candidates for a in c.args), *held],  # at hand
        states=world.states,
        moved=world.made(),
    )
    missing = searched_now(missing, candidates, verbs, world, scene, left)
    now = situation(
        candidates,
        verbs,
        world,
        place=scene.place,
        held=held,
        left=left,
        missing=missing,
        task=scene.task,
        wanted=wanted.things if wanted else (),
        in_place=wanted.in_place if wanted else (),
        routes=routes,
        lessons=lessons,
        near=affinity,
    )
    placed = ordered(candidates, verbs, now, scene.place)[:limit]
    offered = [p.action for p in placed]
    cut = {str(a) for a in candidates} - {str(o) for o in offered}
    search, described, unvisited, here, elsewhere = search_lines(
        offered, space, world, scene, routes, missing
    )
    away, fetch = fetch_lines(offered, verbs, world, scene, wanted, missing)
    pick = decided(placed)
    return Briefing(
        candidates=offered,
        placed=[p.row for p in placed],
        decided=str(pick) if pick is not None else None,
        choice=[str(a) for a in choice(placed)],
        last_result=last_result,
        left=[i.phrase for i in left],
        helped=helped_now(lessons[0], offered, world.done),
        looped=[a for a in loop_actions(world.path) if a in cut],
        missing=list(missing),
        search=search,
        away=away,
        fetch=fetch,
        described=described,
        unvisited=unvisited,
        here=here,
        full=list(held) if scene.full else [],
        elsewhere=elsewhere,
    )


def search_lines(
    offered: Sequence[Action],
    space: ActionSpace,
    world: WorldModel,
    scene: Scene,
    routes: Sequence[Route],
    missing: Sequence[str],
) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """(the acts that look for what is missing; :func:`finding`'s three; what was seen in each
    other place)."""
    verbs = space.verbs
    search = search_moves(offered, verbs, world, scene.place, routes) if missing else []
    described, unvisited, here = finding(space, world, scene.task)
    if described and not unvisited and not search and any(relative_move(a, verbs) for a in offered):
        # moves name no place (directions): the search's next acts instead of a choice here
        found = search_moves(offered, verbs, world, scene.place, routes)
        search, here = (found, []) if found else (search, here)
    visited = visited_places(world.path)
    elsewhere = seen_elsewhere(world.seen, scene.place, scene.held, visited) if here else []
    return [str(a) for a in search], described, unvisited, here, elsewhere


def lessons_off_moves(
    lessons: tuple[Sequence[str], Sequence[str]], verbs: Sequence[VerbSpec]
) -> tuple[list[str], list[str]]:
    """(helped, hurt) less the moves: a lesson does not say where it was learned, and a
    ``go(west)`` that hurt in one house withheld the only way on in another."""
    moves = meanings(verbs).moves
    return tuple([a for a in side if a.split("(", 1)[0] not in moves] for side in lessons)


def fetch_lines(
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    wanted: Wanted | None,
    missing: Sequence[str],
) -> tuple[list[str], list[str]]:
    """(what is needed, last seen elsewhere, as ``thing (place)``, or the next act on nothing
    as ``act() (place)``; the offered moves there): empty while it is here or nothing read."""
    if wanted is None:
        return [], []
    seen, held, here, layout = world.seen, scene.held, scene.place, world.layout()
    moves = fetch_moves(
        wanted.things,
        offered,
        verbs,
        here=here,
        seen=seen,
        held=held,
        in_place=wanted.in_place,
        layout=layout,
    )
    away = [
        f"{t} ({seen[t]})"
        for t in wanted.things
        if t not in held and t in seen and move_to(seen[t], offered, verbs, here, layout) in moves
    ]
    if not moves and wanted.act is not None and not missing:
        acts_at = world.acts_at
        moves = act_moves(wanted.act, offered, verbs, here=here, acts_at=acts_at, layout=layout)
        if moves:  # a move by direction names no place: where the act was offered
            at = acts_at.get(wanted.act, "") if relative_move(moves[0], verbs) else moves[0].args[0]
            away = [f"{wanted.act}() ({at})"]
    return (away, [str(a) for a in moves]) if moves else ([], [])


def seen_elsewhere(
    seen: Mapping[str, str], here: str | None, held: Collection[str], places: Collection[str]
) -> list[str]:
    """What was last seen in each place but ``here``, as 'place: a, b': once the search is
    over the choice may be in another room. Held things, places and long names left out."""
    by_place: dict[str, list[str]] = {}
    for thing, place in seen.items():
        shown = len(thing) <= SEEN_NAME_CHARS and thing not in held and thing not in places
        if place and place != here and shown:
            by_place.setdefault(place, []).append(thing)
    return [f"{p}: {', '.join(things[:SEEN_PER_PLACE])}" for p, things in by_place.items()]


def relative_move(action: Action, verbs: Sequence[VerbSpec]) -> bool:
    """Whether ``action`` moves by a direction (its verb's argument kind), naming no place."""
    return action.verb in by_direction(verbs)


def finding(
    space: ActionSpace, world: WorldModel, task: str
) -> tuple[list[str], list[str], list[str]]:
    """(what the task asks to find by description, "a(n) plant"; the moves to places not
    visited; once all are visited, the things here to choose among): empty if none described."""
    described = described_things(world, space.verbs, task)
    if not described:
        return [], [], []
    ways = [str(a) for a in unvisited_moves(space.candidates, space.verbs, world)]
    if ways:
        return described, ways, []
    moves = meanings(space.verbs).moves
    here = [a.args[0] for a in space.candidates if a.verb not in moves and a.args]
    return described, [], list(dict.fromkeys(here))
