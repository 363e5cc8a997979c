"""Which of the world's candidate actions a prompt offers, in what order (pure functions).

A small model reads a list top-down and favours its head: what the notes name comes first,
what would undo what is done or repeat an irreversible act comes last or not at all, and
while what is left to do names a thing not seen yet, the search for it leads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, Route, VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.grounding.frontier import (
    act_moves,
    exploration,
    fetch_moves,
    known_things,
    revealed_things,
)
from robomemory.grounding.instructions import (
    instructions,
    left_instructions,
    named_verbs,
    unseen_things,
    verb_phrases,
)
from robomemory.grounding.loops import changing_actions, loop_actions, visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.spent import fresh_candidates, refused_again, unchanged_reads
from robomemory.grounding.states import shows
from robomemory.grounding.text import named_by, parsed, word_list, words

_NOT_NAMED = 1 << 30
WHOLE_VERB_SHOWN = 8  # actions of a verb the cut keeps whole (see cut_per_verb)


def by_relevance(
    candidates: Sequence[Action],
    goal_texts: Sequence[str],
    done: Sequence[str] = (),
    verbs: Sequence[VerbSpec] = (),
    avoid: Collection[str] = (),
    prefer: Collection[str] = (),
) -> list[Action]:
    """Candidates ordered for a small model, which reads a list top-down and favours its head.

    Actions that would undo what is done (``done``: actions that changed the world; the undo
    is ``VerbSpec.reverses``) and actions to ``avoid`` (lessons say they hurt, an irreversible
    act the instructions do not ask for) go last; before them, candidates the goal texts name,
    text by text from the most pressing (the newest note read, then the task) — a named verb
    first, the first named first (instructions are written in the order they are done), then
    named arguments; the world's order breaks ties. Ahead of both: when a text names a verb
    the world does not offer now, acting on what that verb's description says it needs
    ("sand: needs a held file" -> ``pick_up(file)``). Actions to ``prefer`` (lessons say they
    helped) break the ties that are left, each one itself (not its verb).
    """
    offered = {a.verb for a in candidates}
    meaning = meanings(verbs)
    described = {v.name: v.description for v in verbs}
    goals = [words(text) for text in goal_texts]
    texts = [word_list(text) for text in goal_texts]
    needs = [_needs(goal, described, offered) for goal in goals]
    done_words = [words(d) for d in done]

    def key(action: Action) -> tuple[int, ...]:
        verb = word_list(action.verb)
        args = words(" ".join(action.args))
        acting = action.verb not in meaning.informs
        hits: list[int] = []
        for goal, need, text in zip(goals, needs, texts, strict=True):
            hits += [-len(args & need) if acting else 0, _named_at(verb, text), -len(args & goal)]
        last = _undoes(action, meaning.reverses, done_words) or str(action) in avoided
        return (int(last), *hits, int(str(action) not in preferred))

    avoided, preferred = set(avoid), set(prefer)
    return sorted(candidates, key=key)


def _named_at(verb: list[str], text: list[str]) -> int:
    """Where ``text`` first names ``verb``: its words one after another ("paint box" names
    paint_box; "paint the old box" does not)."""
    n = len(verb)
    for i in range(len(text) - n + 1) if n else ():
        if text[i : i + n] == verb:
            return i
    return _NOT_NAMED


def _needs(goal: set[str], described: Mapping[str, str], offered: set[str]) -> set[str]:
    """Words of the descriptions of the verbs ``goal`` names that are not offered now."""
    named = [v for v in described if v not in offered and words(v) and words(v) <= goal]
    return set().union(*(words(described[v]) - words(v) for v in named))


def _undoes(action: Action, reverses: Mapping[str, str], done_words: list[set[str]]) -> bool:
    """Whether ``action`` reverses a done action: its verb undoes another
    (``VerbSpec.reverses``: putting down what was taken, closing what was opened) and its
    thing is one a done action acted on or made."""
    if action.verb not in reverses or not action.args:
        return False
    thing = words(action.args[0])
    return any(thing and thing <= w for w in done_words)


def irreversible_repeats(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    done: Sequence[str],
    states: Mapping[str, str] | None = None,
) -> list[str]:
    """Candidates that would repeat an irreversible act (``VerbSpec.irreversible``) on the
    same thing: done before (``done``), or its result shown by the world's words
    (``states``: a thing shown painted is not painted again)."""
    specs = {v.name: v for v in verbs if v.irreversible}
    did = {(verb, args[0] if args else None) for verb, args in map(parsed, done)}
    out: list[str] = []
    for a in candidates:
        thing = a.args[0] if a.args else None
        spec = specs.get(a.verb)
        if spec is not None and thing is not None:
            if (a.verb, thing) in did or shows(states or {}, spec, thing):
                out.append(str(a))
    return out


def unasked_irreversible(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], texts: Sequence[str]
) -> list[str]:
    """Irreversible candidates on a thing the instructions of ``texts`` act on otherwise:
    with another verb ("cut the red box" asked: another irreversible act on the red box is
    not), or with other arguments than an alias fixes ("grill the apple": cook(apple, BBQ),
    not cook(apple, oven))."""
    irreversible = meanings(verbs).irreversible
    names = [a.args[0] for a in candidates if a.args]
    asked: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    for text in texts:
        for ins in instructions(text, verbs, names):
            if ins.thing is not None:
                asked.setdefault(ins.thing, set()).add((ins.verb, ins.rest))
    return [
        str(a)
        for a in candidates
        if a.verb in irreversible
        and a.args
        and a.args[0] in asked
        and not any(_fits(a, verb, rest) for verb, rest in asked[a.args[0]])
    ]


def _fits(action: Action, verb: str, rest: tuple[str, ...]) -> bool:
    """Whether ``action`` is ``verb`` with the arguments ``rest`` fixes after its first."""
    given = [word_list(a) for a in action.args[1 : 1 + len(rest)]]
    return action.verb == verb and given == [word_list(r) for r in rest]


def unrequested_irreversible(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], texts: Sequence[str]
) -> list[str]:
    """Irreversible candidates that no instruction of ``texts`` asks for: its verb on its
    thing ("paint the box" asks paint(box), not paint(cup)); before anything is read, every
    irreversible act but those the task asks for. They rank last, not withheld: a text may
    name a thing by a word the world does not use."""
    irreversible = meanings(verbs).irreversible
    names = [a.args[0] for a in candidates if a.args]
    asked = {(i.verb, i.thing) for text in texts for i in instructions(text, verbs, names)}
    return [
        str(a)
        for a in candidates
        if a.verb in irreversible and (a.verb, a.args[0] if a.args else None) not in asked
    ]


def unread_acts(
    candidates: Sequence[Action],
    unrequested: Collection[str],
    notes: Sequence[str],
    task: str,
    verbs: Sequence[VerbSpec],
) -> list[str]:
    """Of the ``unrequested`` irreversible candidates, once ``notes`` were read, those on a
    thing that neither the notes nor the task name (its words, in order) and that holds no
    phrase the notes ask that verb of (its first two words: "mix sodium chloride" is asked of
    "cup containing sodium chloride and water"; "paint the blue box" is not asked of "red
    cup"); a verb without a thing, when the notes do not name it. None before
    anything is read."""
    if not notes:
        return []
    read = " . ".join(notes)
    asked = verb_phrases(read, verbs)
    said = word_list(f"{read} . {task}")
    out: list[str] = []
    for a in candidates:
        if str(a) not in unrequested:
            continue
        thing = word_list(a.args[0]) if a.args else []
        if not thing:
            named = a.verb in asked
        else:
            phrases = [p[:2] for p in asked.get(a.verb, []) if p]
            named = _holds(said, thing) or any(_holds(thing, p) for p in phrases)
        if not named:
            out.append(str(a))
    return out


def _holds(seq: Sequence[str], part: Sequence[str]) -> bool:
    """Whether ``part`` is in ``seq``, its words one after another."""
    n = len(part)
    return n > 0 and any(list(seq[i : i + n]) == list(part) for i in range(len(seq) - n + 1))


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
    """The candidates a prompt shows: fresh ones (:func:`fresh_candidates`), less those that would
    loop (:func:`loop_actions` over the task's ``path``) or repeat an irreversible act
    (:func:`irreversible_repeats`) or that the instructions do not ask for
    (:func:`unasked_irreversible`), or, while a read the task asks for is not done, that the task
    does not ask for; ranked by :func:`by_relevance` against the notes (newest first),
    an irreversible act no instruction asks for last (:func:`unrequested_irreversible`); a read of a
    thing the task names and a way to a place it names first while nothing is read yet, then the
    moves that search (:func:`exploration`): the task points at what the robot has not found. While
    the notes name a thing the world has not shown (:func:`unseen_things`; the task frames what is
    read and names what is made), the search for it (:func:`exploration` over ``routes`` and
    ``exits``) leads. Once something is read, the way to where a thing it asks for (or what a verb
    it asks for needs) was last ``seen`` comes first while no such thing is here
    (:func:`fetch_moves`); with none to fetch nor searched for, the way to where the next act
    on nothing was last offered (``acts_at``, :func:`act_moves`). ``lessons`` = (helped, hurt)
    actions that long-term memory recalls: after the notes, what helped before comes first
    among ties; what hurt is not offered. With ``limit``, cut to that many by
    :func:`cut_per_verb`, what leads kept. The planner, the critic and the baselines all see
    this list.
    """
    meaning = meanings(verbs)
    bodies = [n.split(": ", 1)[-1] for n in reversed(notes)]
    # the whole path, not only ``done`` (its newest twenty): a thing fired forty steps ago
    # is spoiled if fired again
    did = [*changing_actions(path), *done]
    aside = [*loop_actions(path), *irreversible_repeats(candidates, verbs, did, states)]
    aside += unchanged_reads(path, place, verbs, held) | refused_again(path, place)
    fresh = fresh_candidates(candidates, trajectory, place, verbs, aside, held)
    helped, hurt = lessons
    # An action a lesson says hurt is not offered: listed, even last, a small model copies it.
    # One the lessons disagree on (helped once, hurt another time) is left where it is;
    # finishing is always offered, and so is the rest when withholding would leave nothing.
    withheld = set(hurt) - set(helped) - {f"{TASK_COMPLETE}()"}
    # Likewise an irreversible act on a thing the instructions ask another act of ("paint the
    # box": gluing it cannot be undone) is not offered.
    withheld |= set(unasked_irreversible(fresh, verbs, [*bodies, task]))
    unrequested = unrequested_irreversible(fresh, verbs, [*bodies, task])
    # Once something is read, an irreversible act on a thing nothing read or given names is
    # not offered either (painting a box no manual lists); while a read the task asks for is
    # not done ("Check the manual"), none the task does not ask for is.
    withheld |= set(unread_acts(fresh, unrequested, bodies, task, verbs))
    if not notes and named_verbs(task, verbs) & meaning.reads:
        withheld |= set(unrequested)
    kept = [a for a in fresh if str(a) not in withheld]
    if any(a.verb != TASK_COMPLETE for a in kept):
        fresh = kept
    # An irreversible act nothing asks for ranks last: a small model takes the head of a list.
    last = withheld | set(unrequested)
    ranked = by_relevance(fresh, bodies, done, verbs, avoid=last, prefer=set(helped))
    # The task may point at what to read and where; what to do with things comes from what
    # was read, so until something is read the task promotes only a read and a way to a
    # place it names (then the search's moves, below).
    reads = [a for a in ranked if a.verb in meaning.reads and named_by(a, task)]
    ways = [a for a in ranked if a.verb in meaning.moves and a.args and named_by(a, task)]
    promoted = reads[:1] + ways[:1] if not notes else []
    actions = [str(s[0]) for s in path]
    names = known_things(candidates, [*actions, *done], seen or {})
    searching = unseen_things(" . ".join(bodies), verbs, names)
    if searching or not notes:
        search = exploration(
            ranked,
            verbs,
            here=place,
            visited=visited_places(path),
            revealed=revealed_things([*actions, *done], verbs),
            routes=routes,
            exits=exits,
        )
        # Before anything is read, the moves that search follow the task's read and way: cut
        # to a prompt's length, a list of many verbs would keep one move of them.
        moves = [a for a in search if a.verb in meaning.moves and a not in promoted]
        promoted = search if searching else promoted + moves
    if notes:
        wanted = wanted_things(notes, done, verbs, candidates, task, states, seen or {}, held)
        fetch = fetch_moves(
            wanted.things,
            ranked,
            verbs,
            here=place,
            seen=seen or {},
            held=held,
            in_place=wanted.in_place,
        )
        if not fetch and not searching:  # the act waits for what is still searched for
            fetch = act_moves(wanted.act, ranked, verbs, here=place, acts_at=acts_at or {})
        promoted = fetch[:1] + [a for a in promoted if a not in fetch[:1]]
    ordered = promoted + [a for a in ranked if a not in promoted]
    # An irreversible verb the task names ("focus on the thing") is a choice the task turns
    # on: the planner can only name an action it is shown, so every option stays.
    whole = named_verbs(task, verbs) & meaning.irreversible
    return ordered if limit is None else cut_per_verb(ordered, limit, whole, len(promoted))


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
    needs = set().union(*(_needs(words(i.phrase), described, verbs_now) for i in left))
    fixed = {tuple(word_list(r)) for i in left for r in i.rest}
    acted_on = [i.thing for i in left if i.thing]
    in_place = [n for n in names if tuple(word_list(n)) in fixed and n not in acted_on]
    out = [*acted_on, *in_place]
    out += [n for n in names if words(n) and words(n) <= needs]
    # an act on nothing is done with what is held: one the notes name, gathered already
    read = word_list(" . ".join(n.split(": ", 1)[-1] for n in notes))
    ready = any(_holds(read, word_list(h)) for h in held)
    act = left[0].verb if left and left[0].on_nothing and ready else None
    return Wanted(list(dict.fromkeys(out)), in_place, act)


def cut_per_verb(
    ordered: Sequence[Action], limit: int, whole: Collection[str] = (), head: int = 0
) -> list[Action]:
    """The ``limit`` best-ranked of ``ordered``, in their order, where each verb's best-ranked
    action is kept whatever its rank: every kind of action (a move, a look, finishing) stays
    visible while long lists (examine x 20) are cut from their tail. The verbs in ``whole``
    keep their first WHOLE_VERB_SHOWN actions: a choice among them is the task's. The first
    ``head`` (what leads: the search, the fetch) are kept too."""
    firsts: dict[str, int] = {}
    kept: dict[str, list[int]] = {}
    for i, action in enumerate(ordered):
        firsts.setdefault(action.verb, i)
        if action.verb in whole:
            kept.setdefault(action.verb, []).append(i)
    reserved = set(firsts.values()).union(*(k[:WHOLE_VERB_SHOWN] for k in kept.values()))
    reserved |= set(range(min(head, len(ordered))))
    room = max(0, limit - len(reserved))
    others = [i for i in range(len(ordered)) if i not in reserved][:room]
    return [ordered[i] for i in sorted(reserved.union(others))]


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
