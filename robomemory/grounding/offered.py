"""Which of the world's candidate actions a prompt offers, in what order (pure functions):
set aside -> withhold -> rank -> promote -> cut, each stage one function.

A small model reads a list top-down and favours its head: what the notes name comes first,
what would undo what is done or repeat an irreversible act comes last or not at all, and
while what is left to do names a thing not seen yet, the search for it leads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, Route, VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.grounding.choice import described_things, named_things, task_choice
from robomemory.grounding.frontier import (
    act_moves,
    blocking,
    closed_at,
    exploration,
    fetch_moves,
    hops,
    known_things,
    move_to,
    moves_led,
    revealed_things,
    searched_out,
    toward_task_places,
)
from robomemory.grounding.goal_words import class_verbs, state_named, state_relations
from robomemory.grounding.instructions import (
    SENTENCE,
    Instruction,
    asked_things,
    left_instructions,
    named_verbs,
    unseen_things,
    with_pick,
)
from robomemory.grounding.loops import (
    changing_actions,
    dropped_before,
    loop_actions,
    undone_before,
    visited_places,
)
from robomemory.grounding.meanings import meanings
from robomemory.grounding.notes import goal_note
from robomemory.grounding.ranking import (
    WHOLE_VERB_SHOWN,
    by_relevance,
    committed_things,
    cut_per_verb,
    held_for_later,
    irreversible_conflicts,
    irreversible_others,
    irreversible_repeats,
    irreversible_unasked,
    irreversible_unnamed,
    needs_of,
    relations_for_others,
    room_for_tool,
    stated_things,
    takes_unasked,
    takes_unneeded,
    things_to_take,
    tools_of,
    unneeded_puts,
    waiting_acts,
)
from robomemory.grounding.spent import (
    fresh_candidates,
    progress_undone,
    refused_again,
    refused_in_this_state,
    scored_actions,
    unchanged_reads,
)
from robomemory.grounding.text import holds, named_by, parsed, word_list, words
from robomemory.grounding.world import WorldModel


def offered_candidates(
    candidates: Sequence[Action],
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    *,
    task: str = "",
    notes: Sequence[str] = (),
    done: Sequence[str] = (),
    verbs: Sequence[VerbSpec] = (),
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    path: Sequence[Sequence] = (),
    states: Mapping[str, str] | None = None,
    routes: Sequence[Route] = (),
    exits: Mapping[str, Sequence[str]] | None = None,
    seen: Mapping[str, str] | None = None,
    acts_at: Mapping[str, str] | None = None,
    held: Collection[str] = (),
    limit: int | None = None,
) -> list[Action]:
    """The candidates a prompt shows, from the parts of a world model (the baselines keep
    them apart): :func:`offer` over a :class:`WorldModel` of them."""
    world, scene = world_parts(
        trajectory, place, task, notes, done, path, states, exits, seen, acts_at, held
    )
    return offer(candidates, verbs, world, scene, lessons=lessons, routes=routes, limit=limit)


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


def offer(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    *,
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    routes: Sequence[Route] = (),
    limit: int | None = None,
    missing: Sequence[str] | None = None,
    left: Sequence[Instruction] | None = None,
    wanted: Wanted | None = None,
    approved: Collection[str] = (),
    goal: str | None = None,
    affinity: Mapping[str, float] | None = None,
) -> list[Action]:
    """The candidates a prompt shows, in five stages: :func:`set_aside` what the task has
    shown useless or looping, :func:`withhold` what lessons say hurt and irreversible acts
    nothing asks for, :func:`by_relevance` (rank) against what was read, :func:`promote` what
    leads (the task's read and way, the search, the fetch; once the search for what the task
    only describes is over, its pick, :func:`task_choice`), :func:`cut` to ``limit``.
    ``lessons`` = (helped, hurt) actions long-term memory recalls, ``approved`` the picks
    this task's own verdicts say helped (:func:`task_choice`); ``goal``
    (:func:`goal_of`), ``missing`` and
    ``wanted`` (:func:`missing_things`, :func:`wanted_things`) and ``left``
    (:func:`left_instructions`) when the caller has them;
    ``affinity``: how near an offered relation's two things are (:func:`class_relations`).
    The planner, the critic and the baselines all see this list; with no task, the goal a
    read states stands for it (:func:`notes.goal_note`)."""
    scene = scene._replace(task=goal_note(scene.task, world.notes))
    if goal is None:
        goal = goal_of(candidates, verbs, world, scene)
    if left is None and scene.hands is not None:  # limited hands keep what something left needs
        names = [*(n for a in candidates for n in a.args), *world.seen, *scene.held]
        offered = [n for a in candidates for n in a.args]
        left = left_instructions(
            world.notes, world.done, verbs, names, task=goal, offered=offered, states=world.states
        )
    if missing is None:
        missing = missing_things(world, candidates, verbs, scene.task)
        missing = searched_now(missing, candidates, verbs, world, scene, left or ())
    if wanted is None and (world.notes or goal != scene.task):  # a read's or the pick's needs
        wanted = wanted_things(
            world.notes,
            world.done,
            verbs,
            candidates,
            goal,
            world.states,
            world.seen,
            scene.held,
        )
    fresh = set_aside(candidates, verbs, world, scene)
    # a put of the thing the task states that the score did not reward: tried, taken back
    tried = unscored_puts(world, verbs, goal)
    fresh = [a for a in fresh if str(a) not in tried]
    fresh += [a for a in retake(candidates, verbs, world, tried) if a not in fresh]
    # the told way to a place the task names, not been in since the score rose: no loop
    looped = set(loop_actions(world.path))
    way = [a for _, a in task_way(candidates, verbs, world, scene)]
    fresh += [a for a in way if a not in fresh and str(a) in looped]
    seek = seeking(candidates, verbs, world, scene)
    fresh += dead_end_ways(candidates, fresh, verbs, world) if seek or missing else []
    if seek:  # the search goes where something is left to search
        dead = searched_out(
            fresh,
            verbs,
            here=scene.place,
            visited=visited_places(world.path),
            exits=world.exits,
            closed=closed_at(
                world.seen, world.states, verbs, revealed_things(world.acted(), verbs)
            ),
        )
        moves = meanings(verbs).moves
        acts = search_moves(fresh, verbs, world, scene.place, routes)
        # a search is left to make: a move that may lead somewhere new, or an act here that
        # looks inside or opens the way (unlock the door beside the robot)
        if any(a.verb in moves and a not in dead for a in fresh) or any(
            a.verb not in moves for a in acts
        ):
            fresh = [a for a in fresh if a not in dead]
    refused = any(len(step) > 3 and step[3] is not None for step in world.path)
    kept, last = withhold(
        fresh, verbs, world.read(), scene.task, lessons, held=scene.held, refused=refused
    )
    last |= {str(a) for a in waiting_acts(kept, left or ())}  # the assembly after its parts
    if goal != scene.task:  # after the pick: its relation's verb on the thing picked only
        other = set(relations_unasked(kept, verbs, world, goal))
        kept = [a for a in kept if str(a) not in other] if len(other) < len(kept) else kept
    # a limited hand takes only what a text names or an act needs; any hand does not take
    # again such a thing it dropped (three unnamed things taken and dropped for 30 steps)
    unneeded = takes_unneeded(kept, verbs, [*world.read(), goal], left or ())
    if scene.hands is None:
        dropped = dropped_before(world.path, verbs)
        unneeded = [a for a in unneeded if a.args[0] in dropped]
    spend = {str(a) for a in unneeded}
    if scene.hands is None:  # the goal a state of the thing stated: another's put does nothing
        spend |= {str(a) for a in others_put(kept, verbs, goal)}
    spend |= {str(a) for a in held_stated_reads(kept, verbs, goal, scene.held)}
    kept = [a for a in kept if str(a) not in spend] if len(spend) < len(kept) else kept
    if left:  # what an act left needs stays held (a held cup dropped on the way to the shelf)
        texts = [*world.read(), goal]
        anywhere = scene.hands is None  # only a drop: a put onto a place may be how an act is done
        kept = held_for_later(
            kept,
            verbs,
            texts,
            scene.held,
            left,
            full=scene.full,
            dropped_only=anywhere,
            things=known_here(world, candidates),
        )
    ranked = by_relevance(kept, world.read(), verbs, avoid=last, prefer=set(lessons[0]), task=goal)
    leads = promote(
        ranked,
        verbs,
        world,
        scene,
        routes,
        missing,
        wanted,
        seek=seek,
        goal=goal,
        near=affinity,
        left=left or (),
    )
    # a task that only describes its thing: the search, then the pick the task turns on (the
    # task's own act, over the rules on acts a read does not name; not what a lesson says hurt)
    hurt = set(lessons[1]) - set(lessons[0])
    choice = task_choice(candidates, verbs, world, scene.task, scene.held, approved)
    choice = first_per_verb([a for a in choice if str(a) not in hurt], WHOLE_VERB_SHOWN)
    leads = choice + [a for a in leads if a not in choice]
    ordered = leads + [a for a in ranked if a not in leads]
    if described := described_things(world, verbs, scene.task):  # it is none the task names
        picks = named_verbs(scene.task, verbs) & meanings(verbs).irreversible
        named = {str(a) for a in named_things(ordered, scene.task, described) if a.verb in picks}
        ordered = [a for a in ordered if str(a) not in named]
    return ordered if limit is None else cut(ordered, limit, verbs, goal, len(leads))


def first_per_verb(actions: Sequence[Action], n: int) -> list[Action]:
    """``actions`` in order, the first ``n`` of each verb kept."""
    count: Counter[str] = Counter()
    out: list[Action] = []
    for a in actions:
        count[a.verb] += 1
        if count[a.verb] <= n:
            out.append(a)
    return out


def goal_of(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> str:
    """The task as the rules read it: once its pick is done, with the thing picked
    (:func:`with_pick`, "move it" is "move the blue jay")."""
    names = [*(n for a in candidates for n in a.args), *world.seen, *scene.held]
    return with_pick(scene.task, verbs, world.done, names)


def dead_end_ways(
    candidates: Sequence[Action],
    fresh: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
) -> list[Action]:
    """While a search is on and no move is left here, the moves set aside as loops: the way
    back out of a dead end is the search's only way on (set aside, it kept the robot in a
    room with nothing left to search until the step limit)."""
    moves = meanings(verbs).moves
    if any(a.verb in moves for a in fresh):
        return []
    looped = set(loop_actions(world.path))
    return [a for a in candidates if a.verb in moves and str(a) in looped and a not in fresh]


def task_way(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> list[tuple[str, Action]]:
    """The place the task names, not been in since the score last rose, and the move of
    ``candidates`` that starts the way the world told there (:func:`toward_task_places`):
    the coin taken in the library, the box's room is where the task goes on."""
    return toward_task_places(
        scene.task,
        candidates,
        verbs,
        here=scene.place,
        layout=world.layout(),
        visited=world.since_gain,
    )


def set_aside(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> list[Action]:
    """The candidates less those spent here, those that would loop, repeat an irreversible
    act (on the whole path: a thing fired forty steps ago is spoiled if fired again), read
    again what will not change, ask again what was refused twice or in this very state or
    lowered the score, undo what raised it, or undo a thing a second time (all of them when
    only finishing would be left)."""
    # an irreversible act done once, whether or not the world's state shows it (a focus)
    did = [*changing_actions(world.path), *world.done]
    did += [str(s[0]) for s in world.path[1:] if len(s) < 4 or s[3] is None]
    aside = [*loop_actions(world.path), *irreversible_repeats(candidates, verbs, did, world.states)]
    aside += unchanged_reads(world.path, scene.place, verbs, scene.held)
    aside += [*refused_again(world.path, scene.place), *refused_in_this_state(world.path)]
    aside += [*world.fell, *progress_undone(world.rose, candidates, verbs)]
    aside += undone_before(world.path, verbs, scene.task)
    return fresh_candidates(candidates, scene.trajectory, scene.place, verbs, aside, scene.held)


def withhold(
    fresh: Sequence[Action],
    verbs: Sequence[VerbSpec],
    read: Sequence[str],
    task: str,
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    *,
    held: Collection[str] = (),
    refused: bool = False,
) -> tuple[list[Action], set[str]]:
    """(``fresh`` less what is not offered, the irreversible acts to rank last). Not
    offered: an action a lesson says hurt (listed, even last, a small model copies it; one
    the lessons disagree on stays), an irreversible act on a thing the instructions ask
    another act of (:func:`irreversible_conflicts`), one whose verb the task asks of another
    thing (:func:`irreversible_others`), once something is ``read`` one on a
    thing nothing read or given names (:func:`irreversible_unnamed`), a relation of a thing
    to a place the instructions relate another thing to (:func:`relations_for_others`),
    while a read the
    task asks for is not done, every irreversible act the task does not ask for, and while
    the task asks to take a thing not ``held``, a take of another (:func:`takes_unasked`,
    lifted once the world ``refused`` an act). Finishing is always offered; when withholding
    would leave nothing else, the lessons' yield first (they may come from another world),
    then the rest."""
    helped, hurt = lessons
    disliked = set(hurt) - set(helped) - {f"{TASK_COMPLETE}()"}
    ruled = set(takes_unasked(fresh, verbs, task, held, refused))
    texts = [*read, task]
    ruled |= set(irreversible_conflicts(fresh, verbs, texts))
    ruled |= set(irreversible_others(fresh, verbs, task))
    ruled |= set(relations_for_others(fresh, verbs, texts))
    unasked = irreversible_unasked(fresh, verbs, texts)
    ruled |= set(irreversible_unnamed(fresh, unasked, read, task, verbs))
    if not read and named_verbs(task, verbs) & meanings(verbs).reads:
        ruled |= set(unasked)
    kept = [a for a in fresh if str(a) not in disliked | ruled]
    if not any(a.verb != TASK_COMPLETE for a in kept):  # a lesson yields to the task's rules
        kept = [a for a in fresh if str(a) not in ruled]
    if not any(a.verb != TASK_COMPLETE for a in kept):
        kept = list(fresh)
    return kept, disliked | ruled | set(unasked)


def promote(
    ranked: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    routes: Sequence[Route],
    missing: Sequence[str],
    wanted: Wanted | None,
    *,
    seek: bool = False,
    goal: str | None = None,
    near: Mapping[str, float] | None = None,
    left: Sequence[Instruction] = (),
) -> list[Action]:
    """What leads the list, of ``ranked``. Before anything is read: a read of a thing the
    task names and a way to a place it names (the task points at what to read and where),
    then the moves that search. While the notes name a thing not seen (``missing``), or the
    task asks to take a thing not seen (``seek``, :func:`seeking`): the search for it
    (:func:`exploration`). Once something is read, first the way to where a
    thing what is left needs was last seen (:func:`fetch_moves`), else, with nothing
    searched for, the way to where the next act on nothing was offered (:func:`act_moves`).
    Before all of them the goal itself (:func:`task_asked`; ``goal`` is the task with its
    pick, :func:`with_pick`), or the act that does the next instruction ``left``, or the
    take it needs first (:func:`next_instructed`), or while the goal cannot be done here,
    the take of the thing it moves (:func:`carried`), or the acts it asks of a class of
    things (:func:`class_verbs`; a verb's relations nearest first by ``near``: a thing's
    usual place), or for a thing it states, its take back where the score did not rise
    (:func:`retake`), its relations, or the way to a place to put it (:func:`put_moves`), or
    with the hands full (``Scene.full``), putting down a held thing what is ``left`` does not
    need (:func:`unneeded_puts`)."""
    meaning = meanings(verbs)
    task, place = scene.task, scene.place
    leads: list[Action] = []
    if not world.notes:  # with no task, any read: the world's texts may state the goal
        reads = [
            a for a in ranked if a.verb in meaning.reads and (named_by(a, task) or not task.strip())
        ]
        # first of a thing that can be taken: a note lies about, a fixture stays
        movable = {a.args[0] for a in ranked if a.verb in meaning.takes and a.args}
        if not task.strip():
            reads.sort(key=lambda a: a.args[0] not in movable)
        ways = [a for a in ranked if a.verb in meaning.moves and a.args and named_by(a, task)]
        leads = reads[:1] + ways[:1]
    if missing or seek or not world.notes:
        search = search_moves(ranked, verbs, world, place, routes)
        moves = [a for a in search if a.verb in meaning.moves and a not in leads]
        leads = search if missing or seek else leads + moves
    if wanted is not None:
        fetch = fetch_moves(
            wanted.things,
            ranked,
            verbs,
            here=place,
            seen=world.seen,
            held=scene.held,
            in_place=wanted.in_place,
            layout=world.layout(),
        )
        if not fetch and not missing:  # the act waits for what is still searched for
            fetch = act_moves(
                wanted.act, ranked, verbs, here=place, acts_at=world.acts_at, layout=world.layout()
            )
        leads = fetch[:1] + [a for a in leads if a not in fetch[:1]]
    # the world told where its ways lead: the way to the task's next place (task_way)
    toward = [a for _, a in task_way(ranked, verbs, world, scene)]
    leads = toward + [a for a in leads if a not in toward]
    goal = task if goal is None else goal
    asked = task_asked(ranked, verbs, goal)[:1]  # the goal itself, once it can be done
    # what is left, done here in its order, or its thing taken
    asked = asked or next_instructed(ranked, left, scene.held, verbs)[:1]
    asked = asked or carried(ranked, verbs, world, goal, scene.held)[:1]
    # "pick up objects, then place them": any thing is one; the task's order, nearest first
    many = {v: i for i, v in enumerate(class_verbs(goal, verbs))}
    near = near or {}
    asked = asked or sorted(
        (a for a in ranked if a.verb in many), key=lambda a: (many[a.verb], -near.get(str(a), 0))
    )
    # a held thing the task names with no act ("missing a polished vase"): where it goes,
    # nearest to the task's words first; put where the score did not rise, it is taken back,
    # and with nowhere left here to put it, the way to the nearest place with one untried
    tried = unscored_puts(world, verbs, goal)
    asked = asked or retake(ranked, verbs, world, tried)
    asked = asked or sorted(
        state_relations(ranked, verbs, goal, scene.held), key=lambda a: -near.get(str(a), 0)
    )
    asked = asked or put_moves(ranked, verbs, world, scene, routes, goal, tried)
    asked = asked or stated_fetch(ranked, verbs, world, scene, goal)
    if scene.full:  # the world offers no take until a held thing nothing left needs is put down
        things = known_here(world, ranked)
        texts = [*world.read(), goal]
        asked = asked or unneeded_puts(ranked, verbs, texts, scene.held, left, things)[:1]
        lying = [t for t, at in world.seen.items() if at == place]
        asked = asked or room_for_tool(ranked, verbs, scene.held, left, lying)[:1]
    return asked + [a for a in leads if a not in asked]


def unscored_puts(world: WorldModel, verbs: Sequence[VerbSpec], task: str) -> set[str]:
    """In a world that keeps a score, the puts done of a thing ``task`` names with no act
    (:func:`state_named`: "missing a polished vase") after which the score did not rise:
    the vase's place was not that one."""
    if world.score is None:
        return set()
    puts = meanings(verbs).puts
    out: set[str] = set()
    for action in world.done:
        verb, args = parsed(action)
        if verb in puts and len(args) > 1 and action not in world.rose:
            out |= {action} if state_named(task, verbs, args[:1]) else set()
    return out


def retake(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    tried: Collection[str],
) -> list[Action]:
    """The take of the thing the newest change put down where the score did not rise
    (``tried``, :func:`unscored_puts`): the next place is tried with it in hand."""
    if not world.done or world.done[-1] not in tried:
        return []
    thing = parsed(world.done[-1])[1][:1]
    takes = meanings(verbs).takes
    return [a for a in candidates if a.verb in takes and a.args[:1] == thing]


def put_moves(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    routes: Sequence[Route],
    task: str,
    tried: Collection[str],
) -> list[Action]:
    """While a held thing ``task`` names with no act can be put nowhere here, the move
    toward the nearest place where a put onto a thing not ``tried`` with it was offered
    (``WorldModel.put_onto``): the vase held in a garden of no shelf."""
    stated = state_named(task, verbs, scene.held)
    if not stated:
        return []
    done = {(parsed(t)[1][0], parsed(t)[1][-1]) for t in tried}
    places = {
        at
        for onto, at in world.put_onto.items()
        if at != scene.place and any((thing, onto) not in done for thing in stated)
    }
    far = hops(routes, scene.place)
    for at in sorted(places, key=lambda p: (far.get(p, len(far) + 1), p)):
        move = move_to(at, candidates, verbs, here=scene.place, layout=world.layout())
        if move is not None:
            return [move]
    return []


def stated_fetch(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    scene: Scene,
    task: str,
) -> list[Action]:
    """The thing ``task`` states with no act (:func:`stated_things`: "only missing a polished
    vase"), seen and not held, never put down this task: its take where it is offered, else
    the way to where it was last seen (:func:`fetch_moves`; a vase seen in the yard had
    been left there for 26 steps). Once put down, :func:`retake` decides."""
    meaning = meanings(verbs)
    put = {parsed(d)[1][0] for d in world.done if parsed(d)[0] in meaning.puts and parsed(d)[1]}
    stated = stated_of(task, verbs, world.seen)
    things = [n for n in stated if n not in scene.held and n not in put]
    takes = [a for a in candidates if a.verb in meaning.takes and a.args and a.args[0] in things]
    if takes:
        return takes[:1]
    seen, layout = world.seen, world.layout()
    return fetch_moves(
        things, candidates, verbs, here=scene.place, seen=seen, held=scene.held, layout=layout
    )[:1]


def stated_of(task: str, verbs: Sequence[VerbSpec], names: Collection[str]) -> list[str]:
    """The ``names`` that are a thing ``task`` states with no act (:func:`stated_things`): a
    name of its words only that holds its last word ("vase" of "a polished vase")."""
    stated = [(words(t), word_list(t)[-1]) for t in stated_things(task, verbs)]
    return [n for n in names if any(words(n) <= said and last in words(n) for said, last in stated)]


def others_put(candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str) -> list[Action]:
    """Where ``task`` states a thing with no act (its goal that thing's state), the put-downs
    of other things: they change nothing it asks (holding the vase the task stated, a robot
    put a jug, a key and a rake on the places it had tried the vase on)."""
    if not stated_things(task, verbs):
        return []
    puts = meanings(verbs).puts
    names = [a.args[0] for a in candidates if a.verb in puts and a.args]
    stated = set(stated_of(task, verbs, names))
    return [a for a in candidates if a.verb in puts and a.args and a.args[0] not in stated]


def held_stated_reads(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str, held: Sequence[str]
) -> list[Action]:
    """Holding the thing ``task`` states with no act (:func:`stated_of`), the reads, and its
    put-downs that name no place (a drop): the goal is that thing's state and what is left is
    where it goes, which the score tells (holding the vase, a robot read the seven things it
    held, one by one, while the way led; another dropped it on a floor and walked off)."""
    stated = set(stated_of(task, verbs, held))
    if not stated:
        return []
    meaning = meanings(verbs)
    return [
        a
        for a in candidates
        if a.verb in meaning.reads
        or (a.verb in meaning.puts and len(a.args) == 1 and a.args[0] in stated)
    ]


def known_here(world: WorldModel, candidates: Sequence[Action]) -> list[str]:
    """The things the world model has seen and the candidates name: a tool wanted is one."""
    return list(dict.fromkeys([*world.seen, *(n for a in candidates for n in a.args)]))


def cut(
    ordered: Sequence[Action], limit: int, verbs: Sequence[VerbSpec], task: str, head: int
) -> list[Action]:
    """``ordered`` cut to ``limit`` by :func:`cut_per_verb`, the first ``head`` (what leads)
    kept, and every action the task names (:func:`task_named`: the goal is never cut); an
    irreversible verb the task names ("focus on the thing") is a choice the task
    turns on: the planner can only name an action it is shown, so its options stay."""
    whole = named_verbs(task, verbs) & meanings(verbs).irreversible
    return cut_per_verb(ordered, limit, whole, head, {str(a) for a in task_named(ordered, task)})


def task_named(candidates: Sequence[Action], task: str) -> list[Action]:
    """The candidates that relate two or more things, each of which the task names, its words
    in order ("put the red apple on the table": put_down_to(red apple, table); not
    put_down_to(red apple, counter), nor pick_up(red apple), one thing, which the usual cut
    keeps). A cut keeps them; they do not lead: a task that names four things also names
    pairs it does not ask for."""
    said = word_list(task)
    return [
        a for a in candidates if len(a.args) > 1 and all(holds(said, word_list(x)) for x in a.args)
    ]


def task_asked(candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str) -> list[Action]:
    """The candidates that relate two or more things as one sentence of the task asks: its
    verb (by name or alias), then each thing, in order ("place the tomato plant on the
    stove": put_down_to(tomato plant, stove); not put_down_to(tomato plant, refrigerator),
    whose sentence asks to retrieve it from there). They lead: the relation is the goal."""
    forms = {v.name: [word_list(f) for f in [v.name, *v.aliases]] for v in verbs}
    out: list[Action] = []
    for sentence in SENTENCE.split(task):
        said = word_list(sentence)
        for a in candidates:
            if len(a.args) > 1 and a not in out and _in_order(said, forms.get(a.verb, []), a):
                out.append(a)
    # the fullest reading first: "move the adult apple tree" asks for the tree, not an apple
    return sorted(out, key=lambda a: -sum(len(word_list(x)) for x in a.args))


def next_instructed(
    candidates: Sequence[Action],
    left: Sequence[Instruction],
    held: Collection[str] = (),
    verbs: Sequence[VerbSpec] = (),
) -> list[Action]:
    """The candidates that do the first instruction ``left`` one of them does: its verb on
    its thing, at the arguments its alias fixes ("glaze the cup": at the kiln), each
    thing's instructions in the texts' order (its first left only); or, where none is
    offered, the take of a tool its verb needs (:func:`tools_of`), else of its thing, while
    not ``held``. A read's own narration ("You open the copy of ...") had put every open
    ahead of the act the notes asked, a thing to cut that lay untaken was examined around
    for 15 steps, and three things to cut taken first filled the hands the blade needed."""
    return [a for _, a in next_instructions(candidates, left, held, verbs)]


def take_for_next(
    candidates: Sequence[Action],
    left: Sequence[Instruction],
    held: Collection[str],
    verbs: Sequence[VerbSpec],
) -> tuple[str, str] | None:
    """(the instruction, the take) where what :func:`next_instructed` leads with is the take
    of the thing of an instruction whose act is not offered yet: the planner is told why
    (led by the take of the thing to cut, the 1.5B model walked off to find the kiln that
    the instruction before it named)."""
    takes = meanings(verbs).takes
    found = next_instructions(candidates, left, held, verbs)
    if found and found[0][1].verb in takes and found[0][0].verb not in takes:
        return found[0][0].phrase, str(found[0][1])
    return None


def next_instructions(
    candidates: Sequence[Action],
    left: Sequence[Instruction],
    held: Collection[str] = (),
    verbs: Sequence[VerbSpec] = (),
) -> list[tuple[Instruction, Action]]:
    """(instruction, candidate) pairs of :func:`next_instructed`."""
    takes = meanings(verbs).takes
    offered = {a.args[0]: a for a in candidates if a.verb in takes and a.args}
    first: set[str] = set()
    for ins in left:
        if not ins.thing or ins.thing in first:
            continue
        first.add(ins.thing)
        if found := [a for a in candidates if does(a, ins)]:
            return [(ins, a) for a in found]
        tools = tools_of(verbs, [ins], [*offered, *held])
        tools = set() if tools & set(held) else tools  # the tool in hand: its thing next
        found = [offered[t] for t in sorted(tools) if t in offered][:1]
        if ins.thing not in held:
            found = found or ([offered[ins.thing]] if ins.thing in offered else [])
        if found:
            return [(ins, found[0])]
    return []


def does(action: Action, ins: Instruction) -> bool:
    """Whether ``action`` does ``ins``: its verb on its thing, at the arguments its alias
    fixes (any case: "BBQ" is the world's "bbq")."""
    fixed = {r.lower() for r in ins.rest}
    return (
        action.verb == ins.verb
        and action.args[:1] == [ins.thing]
        and fixed <= {x.lower() for x in action.args[1:]}
    )


def carried(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    task: str,
    held: Collection[str] = (),
) -> list[Action]:
    """While the relation a task's instruction asks is not offered here ("move the blue jay
    to the red box", the box in another room), the take of the thing it moves: the thing
    goes with the robot (a 1.5B planner walked to the box and left the thing behind)."""
    meaning = meanings(verbs)
    relating = {v.name for v in verbs if len(v.arg_kinds) > 1} - meaning.takes
    offered = [n for a in candidates for n in a.args]
    left = left_instructions(
        (), world.done, verbs, offered, task=task, offered=offered, states=world.states
    )
    things = [i.thing for i in left if i.verb in relating and i.thing and i.thing not in held]
    return [a for t in things for a in candidates if a.verb in meaning.takes and a.args == [t]]


def relations_unasked(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, goal: str
) -> list[str]:
    """While the goal asks a relation of a thing ("move the apple tree to the green box"),
    that verb on any other thing: a 1.5B planner told to move the tree moved pollen into it
    for ten steps (the take of the tree led the list)."""
    relating = {v.name for v in verbs if len(v.arg_kinds) > 1} - meanings(verbs).takes
    offered = [n for a in candidates for n in a.args]
    left = left_instructions(
        (), world.done, verbs, offered, task=goal, offered=offered, states=world.states
    )
    asked = {(i.verb, i.thing) for i in left if i.verb in relating and i.thing}
    verbs_asked = {verb for verb, _ in asked}
    return [
        str(a)
        for a in candidates
        if a.verb in verbs_asked and a.args and (a.verb, a.args[0]) not in asked
    ]


def _in_order(said: list[str], verb_forms: Sequence[list[str]], action: Action) -> bool:
    """Whether ``said`` names one of ``verb_forms``, then each of the action's things, in
    order."""
    for form in (f for f in verb_forms if f):
        for start in (i for i in range(len(said)) if said[i : i + len(form)] == form):
            at = start + len(form)
            for thing in map(word_list, action.args):
                found = next(
                    (i for i in range(at, len(said)) if said[i : i + len(thing)] == thing), None
                )
                if found is None or not thing:
                    break
                at = found + len(thing)
            else:
                return True
    return False


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


def seeking(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], world: WorldModel, scene: Scene
) -> bool:
    """Whether the task asks to take a thing (:func:`things_to_take`) that the world has not
    shown: no name held, offered here or seen elsewhere has its words (or, where a pointer
    stands for it, any word of its sentence). One thing found is not another: the key held
    does not find the plant the task asks to take next."""
    moves = meanings(verbs).moves
    here = [n for a in candidates if a.verb not in moves for n in a.args]
    known = [words(n) for n in [*scene.held, *here, *world.seen]]
    return any(
        not any(thing <= name if named else thing & name for name in known)
        for thing, named in things_to_take(scene.task, verbs)
    )


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


class Wanted(NamedTuple):
    """What left instructions need (:func:`wanted_things`), which of it is used where it
    stands (the things an alias fixes, "fire": the kiln; gone to, not carried), and the verb of
    the next instruction when it acts on nothing (it is done where the world offers it)."""

    things: list[str]
    in_place: list[str]
    act: str | None = None


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
    offered = [n for a in candidates for n in a.args]
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
