"""Grounding the planner's choices in what the world affords now (pure functions).

The executor publishes the concrete actions valid now (``ActionSpace.candidates``). Before
they reach a prompt, actions the episode has shown to be useless here are set aside: an action
that failed, until the world changes; an action that succeeded without changing anything (an
examine, a look), while the robot is still in the same place. The model still chooses; it
just stops being offered what it already knows does nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.executors.candidates import INFORMATIONAL

FAILED = frozenset({"failed", "rejected", "error", "aborted", "timeout", "canceled"})


def spent_actions(trajectory: Sequence[TrajectoryStep], place: str | None) -> set[str]:
    """Actions (as ``verb(args)`` text) not worth offering again now.

    A step record has ``action``, ``verb``, ``outcome`` and optionally ``changed`` (did the
    world's state change) and ``place`` (where the robot was). Rules:
    - since the world last changed: failed actions, and actions that changed nothing here;
    - over the whole episode: reads (examine, ...) that changed nothing here (same answer);
    - ``look()`` right after arriving: what the robot observed on arrival is the room.
    Without ``changed`` a succeeded action counts as having changed the world.
    """
    last_change = max(
        (i for i, t in enumerate(trajectory) if _changed(t)),
        default=-1,
    )
    spent: set[str] = set()
    if last_change >= 0:
        item = trajectory[last_change]
        if str(item["outcome"]) not in FAILED and _here(item, place):
            spent.add(str(item["action"]))
    for i, item in enumerate(trajectory):
        here = place is None or item.get("place") in (None, place)
        no_effect = not _changed(item) and str(item["outcome"]) not in FAILED
        if i > last_change and (str(item["outcome"]) in FAILED or (no_effect and here)):
            spent.add(str(item["action"]))
        elif no_effect and here and _reads(item):
            spent.add(str(item["action"]))
    if trajectory and place is not None:
        last = trajectory[-1]
        if last.get("place") not in (None, place) and str(last["outcome"]) not in FAILED:
            spent.add(LOOK)
    return spent


def _here(item: TrajectoryStep, place: str | None) -> bool:
    """Whether the robot is still where the step happened (unknown places count as here)."""
    return place is None or item.get("place") in (None, place)


def _changed(item: TrajectoryStep) -> bool:
    changed = item.get("changed")
    if changed is None:
        return str(item["outcome"]) not in FAILED
    return bool(changed)


def _reads(item: TrajectoryStep) -> bool:
    """A read-only action (examine, read, ...): its answer does not change with time."""
    verb = item.get("verb") or str(item["action"]).split("(", 1)[0]
    return str(verb) in READ_VERBS


READ_VERBS = frozenset({"examine", "read", "look_at"})
# Verbs that take the robot to a named place (its navigation finds the way).
ROUTE_VERBS = frozenset({"navigate_to"})
LOOK = "look()"  # describes the room the robot is in


def fresh_candidates(
    candidates: Sequence[Action], trajectory: Sequence[TrajectoryStep], place: str | None
) -> list[Action]:
    """``candidates`` less the spent ones; all of them when nothing would be left but
    ``task_complete``."""
    spent = spent_actions(trajectory, place)
    fresh = [a for a in candidates if str(a) not in spent]
    if all(a.verb == TASK_COMPLETE for a in fresh):
        return list(candidates)
    return fresh


_WORD = re.compile(r"[a-z]+")


def by_relevance(
    candidates: Sequence[Action],
    goal_texts: Sequence[str],
    done: Sequence[str] = (),
    verbs: Mapping[str, str] | None = None,
    avoid: Collection[str] = (),
    prefer: Collection[str] = (),
) -> list[Action]:
    """Candidates ordered for a small model, which reads a list top-down and favours its head.

    Actions that would undo what is done (``done``: actions that changed the world) and
    actions to ``avoid`` (e.g. lessons say they hurt before) go last; before them, candidates
    the goal texts name, text by text from the most pressing (e.g. the newest note read, then
    the task) — a named verb first ("dice the red onion" names dice, not slice; "prepare
    meal" names prepare_meal, not cook), the first named first (instructions are written in
    the order they are done), then named arguments; the world's order breaks ties. Ahead of
    both: when a text names a verb the world does not offer now, acting on what that verb's
    description (``verbs``: verb -> description) says it needs ("dice: ... needs a held
    knife" -> ``pick_up(knife)``). Actions to ``prefer`` (lessons say they helped before)
    break the ties that are left, each one itself (not its verb: "examine(cookbook) helped"
    does not promote every examine).
    """
    offered = {a.verb for a in candidates}
    goals = [_words(text) for text in goal_texts]
    texts = [_word_list(text) for text in goal_texts]
    needs = [_needs(goal, verbs or {}, offered) for goal in goals]
    done_words = [_words(d) for d in done]
    done_set = set(done)

    def key(action: Action) -> tuple[int, ...]:
        verb = _word_list(action.verb)
        args = _words(" ".join(action.args))
        acting = action.verb not in INFORMATIONAL
        hits: list[int] = []
        for goal, need, text in zip(goals, needs, texts, strict=True):
            # a verb the text names, the first-named first: instructions are written in the
            # order they are done
            hits += [-len(args & need) if acting else 0, _named_at(verb, text), -len(args & goal)]
        last = _undoes(action, done_set, done_words) or str(action) in avoided
        return (int(last), *hits, int(str(action) not in preferred))

    avoided, preferred = set(avoid), set(prefer)
    return sorted(candidates, key=key)


_NOT_NAMED = 1 << 30


def _word_list(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _FILLER]


def _named_at(verb: list[str], text: list[str]) -> int:
    """Where ``text`` first names ``verb``: its words one after another ("prepare meal" names
    prepare_meal; "prepare this tasty meal" does not)."""
    n = len(verb)
    for i in range(len(text) - n + 1) if n else ():
        if text[i : i + n] == verb:
            return i
    return _NOT_NAMED


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _FILLER


def _needs(goal: set[str], verbs: Mapping[str, str], offered: set[str]) -> set[str]:
    """Words of the descriptions of the verbs ``goal`` names that are not offered now."""
    named = [v for v in verbs if v not in offered and _words(v) and _words(v) <= goal]
    return set().union(*(_words(verbs[v]) - _words(v) for v in named))


# verb -> the verbs whose effect it reverses
_REVERSES = {"close": ("open",), "turn_off": ("turn_on",), "lock": ("unlock",)}
_LETS_GO = frozenset({"drop", "put_down_to"})


def _undoes(action: Action, done: set[str], done_words: list[set[str]]) -> bool:
    """Whether ``action`` reverses a done action: letting go of a thing a done action got
    (taken, or made), closing what was opened, switching off what was switched on."""
    if action.verb in _LETS_GO and action.args:
        thing = set(_WORD.findall(action.args[0].lower())) - _FILLER
        return any(thing and thing <= words for words in done_words)
    return any(
        str(Action(verb=verb, args=action.args)) in done for verb in _REVERSES.get(action.verb, ())
    )


def named_by(action: Action, text: str) -> bool:
    """Whether ``text`` contains a word of the action's verb or arguments."""
    words = set(_WORD.findall(" ".join([action.verb, *action.args]).lower())) - _FILLER
    return bool(words & set(_WORD.findall(text.lower())))


# Words too common to tie an action to a goal.
_FILLER = frozenset({"the", "a", "an", "to", "of", "in", "on", "up", "down", "with", "and"})


NOTE_MIN_LINES = 4  # a read answered by a document (a recipe, a manual), not a sentence
NOTE_MAX_CHARS = 400
MAX_NOTES = 2


def is_note(item: TrajectoryStep, task: str = "") -> bool:
    """Whether a step read something the task may depend on: a thing the task names, or a
    document (an answer of several lines: a recipe, a manual)."""
    verb = item.get("verb") or str(item["action"]).split("(", 1)[0]
    if verb not in READ_VERBS or item["outcome"] != "succeeded":
        return False
    lines = [line for line in str(item.get("message") or "").splitlines() if line.strip()]
    task_words = set(_WORD.findall(task.lower()))
    named = any(set(_WORD.findall(a.lower())) & task_words for a in item.get("args") or [])
    return named or len(lines) >= NOTE_MIN_LINES


def update_notes(notes: Sequence[str], item: TrajectoryStep, task: str = "") -> list[str]:
    """The notes after one more step: the newest ``MAX_NOTES`` distinct reads, each kept whole
    (whitespace collapsed) while the episode lasts."""
    if not is_note(item, task):
        return list(notes)
    head = f"{item['action']}: "
    text = head + " ".join(str(item.get("message") or "").split())[:NOTE_MAX_CHARS]
    kept = [n for n in notes if not n.startswith(head)]
    return [*kept, text][-MAX_NOTES:]


def notes_of(trajectory: Sequence[TrajectoryStep], task: str = "") -> list[str]:
    """The notes an episode's steps leave (see :func:`update_notes`)."""
    notes: list[str] = []
    for item in trajectory:
        notes = update_notes(notes, item, task)
    return notes


def update_done(done: Sequence[str], item: TrajectoryStep, limit: int = 20) -> list[str]:
    """Actions that changed the world so far (what is done), newest ``limit`` kept."""
    if str(item["outcome"]) != "succeeded" or not item.get("changed"):
        return list(done)
    return [*[d for d in done if d != item["action"]], str(item["action"])][-limit:]


def offered_candidates(
    candidates: Sequence[Action],
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    *,
    task: str = "",
    notes: Sequence[str] = (),
    done: Sequence[str] = (),
    verbs: Mapping[str, str] | None = None,
    lessons: tuple[Sequence[str], Sequence[str]] = ((), ()),
    limit: int | None = None,
) -> list[Action]:
    """The candidates a prompt shows: fresh ones (:func:`fresh_candidates`), ranked by
    :func:`by_relevance` against the notes (newest first), a read of a thing the task names
    and a way to a place it names first while nothing is read yet (``verbs``: verb ->
    description, for what a named verb needs). ``lessons`` = (helped, hurt) actions that
    long-term memory recalls: after the notes, what helped before comes first among ties;
    what hurt is not offered. With ``limit``, cut to that many by :func:`cut_per_verb` (the
    ranking puts undoing and unrelated actions last). The planner, the critic and the
    baselines all see this list."""
    fresh = fresh_candidates(candidates, trajectory, place)
    bodies = [n.split(": ", 1)[-1] for n in reversed(notes)]
    helped, hurt = lessons
    # An action a lesson says hurt is not offered: listed, even last, a small model copies it
    # (measured: "put_down_to(meal, fridge) hurt" recalled, the 1.5B planner chose it again).
    # One the lessons disagree on (helped once, hurt another time) is left where it is;
    # finishing is always offered, and so is the rest when withholding would leave nothing.
    withheld = set(hurt) - set(helped) - {f"{TASK_COMPLETE}()"}
    kept = [a for a in fresh if str(a) not in withheld]
    if any(a.verb != TASK_COMPLETE for a in kept):
        fresh = kept
    ranked = by_relevance(fresh, bodies, done, verbs, avoid=withheld, prefer=set(helped))
    # The task may point at what to read and where ("check the cookbook in the kitchen"); what
    # to do with things comes from what was read, so until something is read the task promotes
    # only a read and a way to a place it names.
    reads = [a for a in ranked if a.verb in READ_VERBS and named_by(a, task)]
    ways = [a for a in ranked if a.verb in ROUTE_VERBS and named_by(a, task)]
    promoted = reads[:1] + ways[:1] if not notes else []
    ordered = promoted + [a for a in ranked if a not in promoted]
    return ordered if limit is None else cut_per_verb(ordered, limit)


def cut_per_verb(ordered: Sequence[Action], limit: int) -> list[Action]:
    """The ``limit`` best-ranked of ``ordered``, in their order, where each verb's best-ranked
    action is kept whatever its rank: every kind of action (a move, a look, finishing) stays
    visible while long lists (examine x 20) are cut from their tail."""
    firsts: dict[str, int] = {}
    for i, action in enumerate(ordered):
        firsts.setdefault(action.verb, i)
    reserved = set(firsts.values())
    room = max(0, limit - len(reserved))
    others = [i for i in range(len(ordered)) if i not in reserved][:room]
    return [ordered[i] for i in sorted(reserved.union(others))]


INSTRUCTION_WORDS = 4  # words after a verb that may name what it acts on


class Instruction(NamedTuple):
    """One instruction a text gives: the API verb, the thing it names (None for a verb that
    takes no argument) and the words as written (``"dice the red onion"``)."""

    verb: str
    thing: str | None
    phrase: str


def instructions(text: str, verbs: Sequence[VerbSpec], names: Collection[str]) -> list[Instruction]:
    """The instructions ``text`` gives, in its order: each place it names a verb of the API
    (by its name's words or an alias: "prepare meal", "dice", "fry"), with the known name
    (``names``) that follows it within INSTRUCTION_WORDS words and before the next verb. A
    verb that takes arguments but names no known thing is no instruction ("You open the copy
    of ..." is not one; "dice the red onion" is)."""
    raw = _WORD.findall(text.lower())
    at = [i for i, w in enumerate(raw) if w not in _FILLER]  # content word -> raw index
    words = [raw[i] for i in at]
    mentions: list[tuple[int, int, VerbSpec]] = []  # (start, length, verb)
    for verb in verbs:
        for form in [verb.name, *verb.aliases]:
            seq = _word_list(form)
            n = len(seq)
            mentions += [
                (i, n, verb) for i in range(len(words) - n + 1) if n and words[i : i + n] == seq
            ]
    mentions.sort(key=lambda m: m[0])
    known = sorted(((_word_list(n), n) for n in names if _word_list(n)), key=lambda k: -len(k[0]))
    out: list[Instruction] = []
    for k, (start, n, verb) in enumerate(mentions):
        if not verb.arg_kinds:
            out.append(
                Instruction(verb.name, None, " ".join(raw[at[start] : at[start + n - 1] + 1]))
            )
            continue
        stop = min(
            mentions[k + 1][0] if k + 1 < len(mentions) else len(words),
            start + n + INSTRUCTION_WORDS,
        )
        found = _first_name(words, start + n, stop, known)
        if found is None:
            continue
        end, name = found
        written = raw[at[start] : at[end - 1] + 1]
        if _INDEFINITE.isdisjoint(raw[at[start + n - 1] + 1 : at[end - len(_word_list(name))]]):
            out.append(Instruction(verb.name, name, " ".join(written)))
    return out


# "cook a delicious meal" asks for a new thing, not for an act on the meal that is known.
_INDEFINITE = frozenset({"a", "an", "some", "another"})


def _first_name(
    words: list[str], start: int, stop: int, known: list[tuple[list[str], str]]
) -> tuple[int, str] | None:
    """(end, name) of the first known name (the longest at a place) in words[start:stop]."""
    for i in range(start, stop):
        for seq, name in known:
            if i + len(seq) <= stop and words[i : i + len(seq)] == seq:
                return i + len(seq), name
    return None


def left_to_do(
    notes: Sequence[str],
    done: Sequence[str],
    verbs: Sequence[VerbSpec],
    names: Collection[str],
    *,
    task: str = "",
    offered: Collection[str] = (),
    states: Mapping[str, str] | None = None,
) -> list[str]:
    """What the notes, then the task, instruct that is not done yet, as written, in their
    order. The task frames what is read ("Check the cookbook ... Once done, enjoy your
    meal"): its instructions are listed once the world offers an action on their thing
    (``offered``: the names the actions possible now act on).
    An instruction is done when a done action has its verb and its thing (``dice(red onion)``
    does "dice the red onion"; ``cook(red potato, oven)`` does "roast the red potato"), or when
    the world's words show its result (``states``, :func:`update_states`: the fridge holds
    "a fried chicken wing", so "fry the chicken wing" is done). The instructions of a text are
    written in the order they are done, so those before the last one a done action did are
    over too (done another way, or not needed). A result the world shows ends only its own
    instruction: a thing may come fried and still need slicing."""
    did = {(verb, args[0] if args else None) for verb, args in map(_parsed, done)}
    shown = states or {}

    def shows(ins: Instruction) -> bool:
        words = shown.get(ins.thing, "").split() if ins.thing else []
        return not result_forms(ins.phrase.split()[0]).isdisjoint(words)

    out: list[str] = []
    texts = [(n.split(": ", 1)[-1], names) for n in notes] + [(task, offered)]
    for text, known in texts:
        given = instructions(text, verbs, known)
        over = [i for i, ins in enumerate(given) if (ins.verb, ins.thing) in did]
        for ins in given[over[-1] + 1 if over else 0 :]:
            if (ins.verb, ins.thing) not in did and not shows(ins) and ins.phrase not in out:
                out.append(ins.phrase)
    return out


def result_forms(verb: str) -> set[str]:
    """The words English uses for a thing a verb acted on (its past participles, by the
    regular rules): fry -> fried, dice -> diced, chop -> chopped, roast -> roasted."""
    w = verb.lower()
    forms = {f"{w}ed", f"{w}d"} if w.endswith("e") else {f"{w}ed"}
    if len(w) > 2 and w.endswith("y") and w[-2] not in _VOWELS:
        forms.add(f"{w[:-1]}ied")
    if len(w) > 2 and w[-1] not in _VOWELS + "wxy" and w[-2] in _VOWELS and w[-3] not in _VOWELS:
        forms.add(f"{w}{w[-1]}ed")
    return forms


_VOWELS = "aeiou"


def update_states(
    states: Mapping[str, str], text: str, names: Collection[str], verbs: Sequence[VerbSpec]
) -> dict[str, str]:
    """What the world's words say each known thing is, after one more text: where ``text``
    puts result words of verbs of the API (:func:`result_forms` of a verb's first word or an
    alias) right before a known name ("a fried chicken wing", "a diced roasted red tuna"),
    those words become the thing's state ("diced roasted"); other mentions ("the chicken
    wing") leave it as it was."""
    results = set().union(
        *(
            result_forms(_word_list(form)[0])
            for v in verbs
            for form in [v.name, *v.aliases]
            if _word_list(form)
        )
    )
    raw = _WORD.findall(text.lower())
    known = sorted(((n.lower().split(), n) for n in names if n.strip()), key=lambda k: -len(k[0]))
    out = dict(states)
    i = 0
    while i < len(raw):
        match = next((k for k in known if raw[i : i + len(k[0])] == k[0]), None)
        if match is None:
            i += 1
            continue
        start = i
        while start > 0 and raw[start - 1] in results:
            start -= 1
        if start < i:
            out[match[1]] = " ".join(raw[start:i])
        i += len(match[0])
    return out


def _parsed(action: str) -> tuple[str, list[str]]:
    verb, _, rest = action.partition("(")
    return verb, [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]


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
