"""One labelling, one rule table: each candidate is labelled once by its verb's effects against
what the robot believes and the typed goal (:class:`GoalPart`); the first row of :data:`ROWS`
whose label it carries places it; ties keep the goal's order, the nearest search, the world's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, Route, VerbSpec
from robomemory.effects import Atom, matches, parse_atoms
from robomemory.grounding.frontier import (
    act_moves,
    exploration,
    fetch_moves,
    moves_led,
    revealed_at,
)
from robomemory.grounding.goal_words import class_verbs, next_in_order, ordered_act, state_named
from robomemory.grounding.instructions import Instruction, unseen_things
from robomemory.grounding.loops import loop_actions, visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.needs import closed_things
from robomemory.grounding.spent import refused_in_this_state
from robomemory.grounding.text import first_at, parsed, word_list
from robomemory.grounding.world import WorldModel

# The world's words for a thing's state, as the vocabulary's relations (others: state(X, w)).
_STATE_RELATIONS = {"open": "open", "opened": "open", "closed": "closed", "locked": "locked"}


class Row(NamedTuple):
    """One row of the table: its label and why it places a candidate where it does."""

    label: str
    why: str


# The table, best first: a candidate is placed by the first row whose label it carries.
ROWS: tuple[Row, ...] = (
    Row("instructed", "does an instruction left, as written"),
    Row("achieves", "makes a goal relation true, or ends a task all done in a world of no score"),
    Row("helped", "a recalled lesson says it helped"),
    Row("enables", "makes true what an instruction left needs of its own thing"),
    Row("fetches", "goes toward where a thing the goal needs was seen"),
    Row("searches", "looks where a thing the goal needs may be: a place or inside not yet seen"),
    Row("enables_some", "makes true what an instruction left needs of some thing"),
    Row("reads_new", "reads a thing not read yet"),
    Row("unknown", "its verb declares no effects: the model judges it"),
    Row("irrelevant", "its effects touch nothing the goal needs"),
    Row("informs", "changes nothing (look, inventory) or reads again"),
    Row("loops", "brings back a world state already left"),
    Row("undoes", "removes what the goal has or what an instruction left needs"),
    Row("irreversible", "cannot be undone and the goal does not ask for it"),
    Row("completes", "declares the task done while the goal is not met: the task is lost"),
    Row("hurt", "a recalled lesson says it hurt"),
    Row("refused", "the world refused it, or it changed nothing, in this very state"),
)
# Labels that outrank every good row: what is known to fail or harm comes last whatever else.
_VETO = ("refused", "hurt", "completes", "irreversible", "undoes", "loops")
RANK = {row.label: i for i, row in enumerate(ROWS)}
# Rows that serve a goal part: the first part left is served first, whatever the row.
_SERVING = frozenset({"instructed", "achieves", "enables", "fetches", "enables_some"})
# Rows the table cannot judge by (a lesson, or no effects): the model's choice whatever leads.
_OPEN = frozenset({"helped", "unknown"})


class GoalPart(NamedTuple):
    """One instruction left to do, typed: its act and the relations that act makes true."""

    act: Action
    atoms: tuple[Atom, ...]
    words: str


class Placed(NamedTuple):
    """A candidate, the row that placed it, and its ``rank`` (row, goal part, nearness): equal
    ranks are the table's ties."""

    action: Action
    row: str
    rank: tuple[float, ...] = ()


def bind(atoms: Sequence[Atom], args: Sequence[str], place: str | None) -> tuple[Atom, ...]:
    """``atoms`` with ``$N`` as the N-th argument and ``here`` as ``place`` (unknown: ``_``)."""

    def term(t: str) -> str:
        if t.startswith("$"):
            i = int(t[1:])
            return args[i] if i < len(args) else "_"
        return (place or "_") if t == "here" else t

    return tuple(Atom(a.rel, tuple(term(t) for t in a.args)) for a in atoms)


def believed(
    place: str | None,
    held: Collection[str],
    seen: Mapping[str, str],
    states: Mapping[str, str],
) -> frozenset[Atom]:
    """What the robot believes now: its place, what it holds, where it last saw each thing,
    and each state the world's words gave a thing."""
    out: set[Atom] = {Atom("held", (h,)) for h in held}
    if place:
        out.add(Atom("at", ("robot", place)))
    out |= {Atom("at", (t, p)) for t, p in seen.items() if t not in held}
    for thing, said in states.items():
        for word in said.split():
            rel = _STATE_RELATIONS.get(word)
            out.add(Atom(rel, (thing,)) if rel else Atom("state", (thing, word)))
    return frozenset(out)


def holds(atom: Atom, facts: Collection[Atom]) -> bool:
    """Whether a believed fact is ``atom`` (an open term, ``_`` or ``?x``, matches any)."""
    return any(matches(atom, f) for f in facts)


def unchanged_here(path: Sequence[Sequence]) -> set[str]:
    """Actions taken in the world state the path ends in that left it as it was."""
    if not path or path[-1][1] is None:
        return set()
    now = path[-1][1]
    return {str(s[0]) for b, s in zip(path, path[1:], strict=False) if b[1] == now and s[1] == now}


def read_names(texts: Sequence[str], names: Collection[str]) -> list[str]:
    """The known ``names`` the read ``texts`` name, in the order first named."""
    said = word_list(" . ".join(texts))
    found = [(first_at(said, word_list(n)), n) for n in names if word_list(n)]
    return [n for at, n in sorted(found) if at < len(said)]


def unmet(
    needs: Sequence[Atom],
    facts: Collection[Atom],
    args: Sequence[str],
    uses: Sequence[str] = (),
) -> list[Atom]:
    """The ``needs`` not believed true. A need on ``?x`` is met by one thing, not the act's own,
    that meets every need on ``?x``; unmet, it stands for each of ``uses`` not meeting it."""
    out = [n for n in needs if _ground(n) and not holds(n, facts)]
    for var in dict.fromkeys(t for n in needs for t in n.args if t.startswith("?")):
        on_var = [n for n in needs if var in n.args]
        things = {t for f in facts for t in f.args} - set(args) - {"robot"}
        if any(all(holds(_put(n, var, t), facts) for n in on_var) for t in things):
            continue
        by_use = [_put(n, var, t) for t in uses if t not in args for n in on_var]
        # a use's state ("ingredient_1") is the world's to know: the robot brings the thing
        perceivable = [n for n in by_use if n.rel != "state"]
        out += [n for n in perceivable if not holds(n, facts)] if uses else on_var
    return list(dict.fromkeys(out))


def _put(atom: Atom, var: str, thing: str) -> Atom:
    return Atom(atom.rel, tuple(thing if t == var else t for t in atom.args))


def _effects(verb: VerbSpec) -> tuple[tuple[Atom, ...], tuple[Atom, ...], tuple[Atom, ...]]:
    return parse_atoms(verb.needs), parse_atoms(verb.adds), parse_atoms(verb.removes)


def _ground(atom: Atom) -> bool:
    return not any(t == "_" or t.startswith("?") for t in atom.args)


def goal_parts(
    left: Sequence[Instruction],
    verbs: Sequence[VerbSpec],
    task: str = "",
    things: Collection[str] = (),
    made: Collection[Atom] = frozenset(),
    present: Collection[str] | None = None,
) -> list[GoalPart]:
    """The goal typed by its verbs' adds: an act in the order of quantities (on the next thing
    of ``present`` not ``made`` so), the puts of a thing stated with no act (``?y``), each act
    asked of a class (``?x``), then each instruction left."""
    by_name = {v.name: v for v in verbs}
    out: list[GoalPart] = []
    order = ordered_act(task, verbs, things)
    if order is not None:
        adds = _effects(by_name[order.verb])[1]
        left_to_do = [
            t
            for t in (things if present is None else present)
            if t != order.where and not set(bind(adds, [t, order.where], None)) <= set(made)
        ]
        nxt = next_in_order(left_to_do, order.direction)
        if nxt is not None:
            atoms = bind(adds, [nxt, order.where], None)
            words = f"{order.verb} each in order of quantity"
            out.append(GoalPart(Action(verb=order.verb, args=[nxt, order.where]), atoms, words))
    moves = meanings(verbs).moves
    puts = [
        v for v in verbs if len(v.arg_kinds) == 2 and v.name not in moves and "held($0)" in v.needs
    ]
    for thing in sorted(state_named(task, verbs, things)):
        for v in puts:
            atoms = bind(_effects(v)[1], [thing, "?y"], None)
            out.append(GoalPart(Action(verb=v.name, args=[thing, "?y"]), atoms, thing))
    for name in class_verbs(task, verbs):
        args = ["?x", "?y", "?z"][: len(by_name[name].arg_kinds)]
        atoms = bind(_effects(by_name[name])[1], args, None)
        out.append(GoalPart(Action(verb=name, args=args), atoms, f"{name} each"))
    for ins in left:
        verb = by_name.get(ins.verb)
        thing = ins.thing or (ins.described if ins.named else None)  # "find the X, take it"
        if verb is None or (thing is None and not ins.on_nothing):
            continue  # a thing only described: the model reads which one
        args = [thing, *ins.rest] if thing else []
        atoms = bind(_effects(verb)[1], args, None)
        out.append(GoalPart(Action(verb=ins.verb, args=args), atoms, ins.phrase))
    return out


def _does(action: Action, part: GoalPart) -> bool:
    """``action`` is the part's act: its verb on its thing, at the arguments the words fix."""
    want = part.act
    if any(a.startswith("?") for a in want.args):  # some things: the fixed ones must match
        return (
            action.verb == want.verb
            and len(action.args) == len(want.args)
            and all(
                w.startswith("?") or w == a for w, a in zip(want.args, action.args, strict=True)
            )
        )
    fixed = {r.lower() for r in want.args[1:]}
    return (
        action.verb == want.verb
        and action.args[:1] == want.args[:1]
        and fixed <= {x.lower() for x in action.args[1:]}
    )


def _some(part: GoalPart) -> bool:
    """The part's arguments are all open: it asks its act of a class of things."""
    return bool(part.act.args) and all(a.startswith("?") for a in part.act.args)


def _open(part: GoalPart) -> bool:
    """The part leaves some argument open (``?x``, ``?y``)."""
    return any(a.startswith("?") for a in part.act.args)


def _elsewise(action: Action, part: GoalPart) -> bool:
    """``action`` is the part's verb on its thing at other arguments than its words fix."""
    want = part.act
    return action.verb == want.verb and action.args[:1] == want.args[:1] and not _does(action, part)


class Situation(NamedTuple):
    """What labelling needs of one step, each derived once."""

    facts: frozenset[Atom]
    goal: list[GoalPart]
    needed: list[tuple[int, Atom]]  # (goal index, a need of that part not believed)
    search: dict[str, int]  # offered action -> its search order (nearest first)
    fetch: dict[str, int]  # offered action -> its fetch order
    looped: set[str]
    refused: set[str]
    read_before: set[str]
    lessons: tuple[set[str], set[str]]
    made: frozenset[Atom] = frozenset()  # what the robot's own acts made true this task
    near: Mapping[str, float] = {}  # offered relation -> how near its things are in meaning
    rewarded: frozenset[Atom] = frozenset()  # what acts the score rose after made true
    fetch_part: Mapping[str, int] = {}  # fetch move -> the first goal part its thing serves
    search_part: int | None = None  # the first goal part a thing searched for serves
    tried: frozenset[str] = frozenset()  # acts done this task the score did not rise after
    finished: bool = False  # all done in a world of no score: only the robot can say it is over


def situation(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    world: WorldModel,
    *,
    place: str | None,
    held: Collection[str],
    left: Sequence[Instruction],
    missing: Sequence[str],
    task: str = "",
    wanted: Sequence[str] = (),
    in_place: Sequence[str] = (),
    routes: Sequence[Route] = (),
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    near: Mapping[str, float] | None = None,
) -> Situation:
    """The step's facts, typed goal, unmet needs, search and fetch moves."""
    facts = believed(place, held, world.seen, world.states)
    things = {n for a in candidates for n in a.args} | set(world.seen) | set(held)
    by_name = {v.name: v for v in verbs}
    made = made_by(world.done, by_name)
    # what this task perceived: offered now, held, acted on (not recalled from another task)
    present = {n for a in candidates for n in a.args} | set(held)
    present |= {n for a in world.acted() for n in parsed(a)[1]}
    goal = goal_parts(left, verbs, task, things, made, present)
    named = read_names(world.read(), things)
    needed: list[tuple[int, Atom]] = []
    for i, part in enumerate(goal):
        needs = bind(_effects(by_name[part.act.verb])[0], part.act.args, None)
        uses = named if not part.act.args else ()  # an act on nothing uses what was read
        needed += [(i, n) for n in unmet(needs, facts, part.act.args, uses) if n.rel != "at"]
    missing = [*missing, *(t for t in unseen_things(task, verbs, things) if t not in missing)]
    # a thing of the goal not seen this task is searched for (and fetched from a recalled place)
    places = set(visited_places(world.path)) | {place}
    unlocated = [
        t
        for p in goal
        for t in p.act.args
        if not t.startswith("?") and t not in held and world.seen.get(t) not in places
    ]
    missing += [t for t in dict.fromkeys(unlocated) if t not in places and t not in missing]
    search: dict[str, int] = {}
    if missing or not goal:  # with no goal typed, what the world rewards is searched for
        found = exploration(
            candidates,
            verbs,
            here=place,
            visited=visited_places(world.path),
            revealed=revealed_at(world.path, verbs, place),
            routes=routes,
            exits=world.exits,
            closed=closed_things(world, verbs),
            led=moves_led(world.path, place),
        )
        search = {str(a): k for k, a in enumerate(found)}
    layout = world.layout()

    def fetching(things: Sequence[str]) -> list[Action]:
        return fetch_moves(
            [t for t in dict.fromkeys(things) if not t.startswith("?")],
            candidates,
            verbs,
            here=place,
            seen=world.seen,
            held=held,
            in_place=in_place,
            layout=layout,
        )

    needed_things = [t for _, n in needed if n.rel == "held" for t in n.args if _ground(n)]
    fetched = fetching([*(a for p in goal for a in p.act.args), *needed_things, *wanted])
    fetch_part: dict[str, int] = {}
    for i, part in enumerate(goal):  # each fetch serves the first part needing its thing
        things = [*part.act.args, *(t for j, n in needed if j == i for t in n.args if _ground(n))]
        for move in fetching(things):
            fetch_part.setdefault(str(move), i)
    tried = frozenset(a for a in world.done if a not in world.rose)
    for i, part in enumerate(goal):  # a held thing to put somewhere: the ways to untried places
        onto = untried_onto(part, held, world.put_onto, tried)
        at = {o: world.put_onto[o] for o in onto}
        for move in fetch_moves(
            onto, candidates, verbs, here=place, seen=at, in_place=onto, layout=layout
        ):
            fetch_part.setdefault(str(move), i)
            if move not in fetched:
                fetched.append(move)
    for i, part in enumerate(goal):  # an act on nothing offered elsewhere: the way back there
        if not part.act.args:
            for move in act_moves(
                part.act.verb, candidates, verbs, here=place, acts_at=world.acts_at, layout=layout
            ):
                fetch_part.setdefault(str(move), i)
                if move not in fetched:
                    fetched.append(move)
    searched = set(missing)
    search_part = next((i for i, p in enumerate(goal) if searched & set(p.act.args)), None)
    reads = meanings(verbs).reads
    read_before = {a for a in world.acted() if a.split("(", 1)[0] in reads}
    return Situation(
        facts=facts,
        goal=goal,
        needed=needed,
        search=search,
        fetch={str(a): k for k, a in enumerate(fetched)},
        looped=set(loop_actions(world.path)),
        refused=refused_in_this_state(world.path) | unchanged_here(world.path),
        read_before=read_before,
        # the world's score fell after it this task: it hurt, as a recalled lesson says
        lessons=(set(lessons[0]), ({*lessons[1], *world.fell}) - set(lessons[0])),
        made=made,
        near=dict(near or {}),
        rewarded=made_by(world.rose, by_name) & made,
        fetch_part=fetch_part,
        search_part=search_part,
        tried=tried,
        finished=not left and bool(world.done) and world.score is None,
    )


def untried_onto(
    part: GoalPart, held: Collection[str], put_onto: Mapping[str, str], tried: Collection[str]
) -> list[str]:
    """Where a part that puts its held thing somewhere open (``?y``) may still put it: onto
    what a put was offered at and it was not put onto in vain (``tried``)."""
    args = part.act.args
    if len(args) < 2 or args[0] not in held or not args[1].startswith("?"):
        return []
    acted = [parsed(t)[1] for t in tried]
    done = {(a[0], a[-1]) for a in acted if len(a) >= 2}  # (thing, where), whatever the verb
    return [o for o in put_onto if o != args[0] and (args[0], o) not in done]


def made_by(done: Sequence[str], verbs: Mapping[str, VerbSpec]) -> frozenset[Atom]:
    """What the robot's own acts this task made true and left true: their adds, in the order
    done, less what a later act removed."""
    out: set[Atom] = set()
    for text in done:
        verb, args = parsed(text)
        spec = verbs.get(verb)
        if spec is not None:
            _, adds, removes = (bind(a, args, None) for a in _effects(spec))
            out -= set(removes)
            out |= {a for a in adds if _ground(a) and "robot" not in a.args}
    return frozenset(out)


def labels(
    action: Action, verbs: Mapping[str, VerbSpec], now: Situation, place: str | None
) -> set[str]:
    """Every label of ``action`` against the goal (:data:`ROWS` reads them)."""
    key = str(action)
    verb = verbs.get(action.verb)
    meaning = meanings(tuple(verbs.values()))
    out: set[str] = set()
    if key in now.refused:
        out.add("refused")
    if key in now.lessons[1]:
        out.add("hurt")
    if key in now.lessons[0]:
        out.add("helped")
    if key in now.looped:
        out.add("loops")
    if action.verb == TASK_COMPLETE:
        # with no typed goal (nothing read, or only described) it is an end nothing asked for
        if now.finished:
            return out | {"achieves"}
        return out | ({"completes"} if now.goal else {"irreversible"})
    if verb is None:
        return out | {"unknown"}
    needs, adds, removes = (bind(a, action.args, place) for a in _effects(verb))
    goal_atoms = [a for p in now.goal for a in p.atoms]
    own_undo = [r for r in removes if any(matches(r, m) for m in now.made)]

    def backward(i: int) -> bool:  # undoes what this part or a later one made (put, retake)
        return any(matches(a, r) for p in now.goal[i:] for a in p.atoms for r in own_undo)

    if any(
        _does(action, p) and not (_some(p) and backward(i)) and not (_open(p) and key in now.tried)
        for i, p in enumerate(now.goal)
    ):
        out.add("instructed")  # an open part's act done in vain is no longer what it asks
    if "instructed" not in out and any(matches(r, m) for r in removes for m in now.rewarded):
        out.add("undoes")  # takes back what the world's score rose for
    # a part's act at other arguments than its words fix (roast, not grill) achieves nothing
    other = [a for p in now.goal if _elsewise(action, p) for a in p.atoms]
    if any(
        _ground(a) and not holds(a, now.facts) and a in goal_atoms and a not in other for a in adds
    ):
        out.add("achieves")
    kept = [a for a in goal_atoms if _ground(a) and holds(a, now.facts)]
    kept += [n for _, n in now.needed]  # nothing removed that a part still needs
    needs_held = [n for n in (Atom("held", (t,)) for p in now.goal for t in p.act.args[:1])]
    kept += [n for n in needs_held if holds(n, now.facts)]
    if any(_ground(r) and holds(r, now.facts) and r in kept for r in removes) and not (
        out & {"instructed", "achieves"}
    ):
        out.add("undoes")
    for _, need in now.needed:
        if any(matches(a, need) for a in adds if _ground(a)):
            out.add("enables" if _ground(need) else "enables_some")
    if key in now.fetch:
        out.add("fetches")
    if key in now.search:
        out.add("searches")
    if own_undo and not out & (_SERVING | {"searches"}):
        out.add("undoes")  # what the robot made, undone unasked (open it, then close it)
    if action.verb in meaning.irreversible and not out & {"instructed", "achieves", "enables"}:
        out.add("irreversible")
    if action.verb in meaning.informs:
        new = action.verb in meaning.reads and key not in now.read_before
        out.add("reads_new" if new else "informs")
    elif not (verb.needs or verb.adds or verb.removes):
        out.add("unknown")
    return out or {"irrelevant"}


def row_of(found: Collection[str]) -> str:
    """The row that places a candidate with labels ``found``: a veto first, else the best."""
    vetoed = [lab for lab in _VETO if lab in found and lab != "loops"]
    if vetoed:
        return max(vetoed, key=RANK.__getitem__)
    if "loops" in found and not found & {"instructed", "achieves"}:
        return "loops"
    return min((lab for lab in found if lab in RANK), key=RANK.__getitem__, default="irrelevant")


def ordered(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    now: Situation,
    place: str | None,
) -> list[Placed]:
    """The candidates in the table's order, each with the row that placed it."""
    by_name = {v.name: v for v in verbs}

    rows = [row_of(labels(a, by_name, now, place)) for a in candidates]

    def key(i: int) -> tuple[int, ...]:
        action, row = candidates[i], rows[i]
        part = served(action, by_name, now, place) if row in _SERVING else len(now.goal)
        if row == "searches" and now.search_part is not None:  # looks for a part's thing
            part = now.search_part
        return (
            0 if row in _SERVING or row == "helped" or part < len(now.goal) else 1,
            part,
            RANK.get(row, len(ROWS)),
            -now.near.get(str(action), 0.0),  # the nearer in meaning first (a cushion, sofa)
            now.fetch.get(str(action), 0),
            now.search.get(str(action), 0),
            i,
        )

    return [
        Placed(candidates[i], rows[i], key(i)[:4]) for i in sorted(range(len(candidates)), key=key)
    ]


def served(action: Action, verbs: Mapping[str, VerbSpec], now: Situation, place: str | None) -> int:
    """The first goal part ``action`` serves (its act, a relation it makes true, a need it
    meets; a fetch, its thing's part): the instructions are written in the order done."""
    verb = verbs.get(action.verb)
    adds = bind(_effects(verb)[1], action.args, place) if verb else ()
    hits = [i for i, p in enumerate(now.goal) if _does(action, p)]
    hits += [i for i, p in enumerate(now.goal) for a in adds if _ground(a) and a in p.atoms]
    hits += [i for i, n in now.needed for a in adds if _ground(a) and matches(a, n)]
    if str(action) in now.fetch:  # the part whose thing it goes for, else the first in need
        hits += [now.fetch_part.get(str(action), next((i for i, _ in now.needed), len(now.goal)))]
    return min(hits, default=len(now.goal))


def choice(placed: Sequence[Placed]) -> list[Action]:
    """What the table leaves the model: those ranked equal to the first and those it cannot
    judge (unknown, or a lesson speaks for, unless the first is instructed); all where the
    first is vetoed or ends the task; all but the vetoed where it cannot judge the first."""
    if not placed or placed[0].row in _VETO or placed[0].action.verb == TASK_COMPLETE:
        return [p.action for p in placed]
    if placed[0].row in _OPEN:  # it cannot judge the first: nothing below it is judged out
        return [p.action for p in placed if p.row not in _VETO]
    top = placed[0].rank
    # what this task's words instruct as written outranks a lesson recalled from another task
    weighed = _OPEN - {"helped"} if placed[0].row == "instructed" else _OPEN
    return [p.action for p in placed if p.rank == top or p.row in weighed]


def decided(placed: Sequence[Placed]) -> Action | None:
    """The only candidate the table leaves open, unless it ends the task (the model's call)."""
    left = choice(placed)
    return left[0] if len(left) == 1 and left[0].verb != TASK_COMPLETE else None
