"""The rules the offered list is ranked and cut by (pure functions): relevance to what was
read, the irreversible acts nothing asks for, the cut per verb, lessons that helped.

A small model reads a list top-down and favours its head: what the notes name comes first,
what would undo what is done or repeat an irreversible act comes last or not at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import takewhile

from robomemory.core import TASK_COMPLETE, Action, VerbSpec
from robomemory.grounding.goal_words import DEFINITE as _DEFINITE
from robomemory.grounding.goal_words import LINKS_PAST as _LINKS
from robomemory.grounding.goal_words import PARTICLES as _PARTICLES
from robomemory.grounding.instructions import (
    INSTRUCTION_WORDS,
    SENTENCE,
    Instruction,
    asked_things,
    instructions,
    named_verbs,
    verb_phrases,
)
from robomemory.grounding.meanings import meanings
from robomemory.grounding.states import shows
from robomemory.grounding.text import FILLER, WORD, first_at, holds, parsed, word_list, words

_NOT_NAMED = 1 << 30
WHOLE_VERB_SHOWN = 8  # actions of a verb the cut keeps whole (see cut_per_verb)


def by_relevance(
    candidates: Sequence[Action],
    goal_texts: Sequence[str],
    verbs: Sequence[VerbSpec] = (),
    avoid: Collection[str] = (),
    prefer: Collection[str] = (),
    task: str = "",
) -> list[Action]:
    """Candidates ordered for a small model, which reads a list top-down and favours its head.

    Actions that only undo (their verb reverses another, ``VerbSpec.reverses``: close, put
    back; not when ``task`` or a goal text names the verb: "pick up objects, then place
    them"; a world's own order had listed a close second; a put-down of what no goal text
    names before one of what it names), then actions to ``avoid``
    (lessons say they hurt, an irreversible act the instructions do not ask for) go last;
    before them, candidates the goal texts name, text by text from the most pressing (the
    newest note read, then the task) — a named verb first, the first named first
    (instructions are written in the order they are done), then named arguments; the
    world's order breaks ties. Ahead of both: when a text names a verb the world does not
    offer now, acting on what that verb's description says it needs ("sand: needs a held
    file" -> ``pick_up(file)``). Actions to ``prefer`` (lessons say they helped) break the
    ties that are left, each one itself (not its verb).
    """
    offered = {a.verb for a in candidates}
    meaning = meanings(verbs)
    described = {v.name: v.description for v in verbs}
    goals = [words(text) for text in goal_texts]
    texts = [word_list(text) for text in goal_texts]
    needs = [needs_of(goal, described, offered) for goal in goals]
    forms = {v.name: [word_list(f) for f in (v.name, *v.aliases)] for v in verbs}
    # an undo the texts ask for is the task ("pick up objects, then place them"), not a loop
    asked = set().union(*(named_verbs(text, verbs) for text in [*goal_texts, task]))
    puts = meaning.puts

    def key(action: Action) -> tuple[int, ...]:
        said = forms.get(action.verb, [word_list(action.verb)])
        args = words(" ".join(action.args))
        acting = action.verb not in meaning.informs
        # an act that only undoes (a declared reversal: close, put back) no text asks for
        undoes = action.verb in meaning.reverses and action.verb not in asked
        # putting down what a text names gives up what the task needs: the others go first
        put = undoes and action.verb in puts and bool(action.args)
        thing = word_list(action.args[0]) if put else []
        hits: list[int] = []
        for goal, need, text in zip(goals, needs, texts, strict=True):
            at = min(_named_at(form, text) for form in said)
            if put:  # by the thing's whole name: a red cup is not the red ball
                hits += [int(set(thing) <= need), at, int(holds(text, thing))]
            else:
                hits += [-len(args & need) if acting else 0, at, -len(args & goal)]
        # what to avoid after the undoes: a wrong focus ends a task, a close does not
        last = 2 if str(action) in avoided else int(undoes)
        return (last, *hits, int(str(action) not in preferred))

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


def needs_of(goal: set[str], described: Mapping[str, str], offered: set[str]) -> set[str]:
    """Words of the descriptions of the verbs ``goal`` names that are not offered now."""
    named = [v for v in described if v not in offered and words(v) and words(v) <= goal]
    return set().union(*(words(described[v]) - words(v) for v in named))


def irreversible_repeats(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    done: Sequence[str],
    states: Mapping[str, str] | None = None,
) -> list[str]:
    """Candidates that would repeat an irreversible act (``VerbSpec.irreversible``) on the
    same thing: done before (``done``), or its result shown by the world's words
    (``states``: a thing shown painted is not painted again)."""
    irreversible = meanings(verbs).irreversible
    specs = {v.name: v for v in verbs if v.name in irreversible}
    did = {(verb, args[0] if args else None) for verb, args in map(parsed, done)}
    out: list[str] = []
    for a in candidates:
        thing = a.args[0] if a.args else None
        spec = specs.get(a.verb)
        if spec is not None and thing is not None:
            if (a.verb, thing) in did or shows(states or {}, spec, thing):
                out.append(str(a))
    return out


def irreversible_conflicts(
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


def relations_for_others(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], texts: Sequence[str]
) -> list[str]:
    """Candidates that relate a thing to a place an instruction of ``texts`` relates another
    thing to, by the same verb, while no instruction of that verb names the candidate's thing
    ("rest the blue cup on the shelf" asked, the robot holding a key: not put(key, shelf);
    a small model put what it held where the instruction said, for 20 steps). An instruction
    that points ("put it on the shelf") names no other thing."""
    asked = [verb_phrases(text, verbs) for text in texts]
    out: list[str] = []
    for a in candidates:
        if len(a.args) < 2:
            continue
        thing, place = word_list(a.args[0]), word_list(a.args[-1])
        phrases = [p for said in asked for p in said.get(a.verb, [])]
        # the place named after other words: the thing the instruction relates to it
        if any(0 < first_at(p, place) < len(p) for p in phrases) and not any(
            holds(p, thing) for p in phrases
        ):
            out.append(str(a))
    return out


def _fits(action: Action, verb: str, rest: tuple[str, ...]) -> bool:
    """Whether ``action`` is ``verb`` with the arguments ``rest`` fixes after its first."""
    given = [word_list(a) for a in action.args[1 : 1 + len(rest)]]
    return action.verb == verb and given == [word_list(r) for r in rest]


# Words a task uses for a thing it named before ("melt ice. First, focus on the substance").
_GENERIC = frozenset({"substance", "substances", "item", "items", "material"})
# Words that begin a thing the task only describes ("paint the thing that holds water").
_DESCRIBED = frozenset({"thing", "things", "one", "object", "objects"})


def irreversible_others(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str
) -> list[str]:
    """Irreversible candidates whose verb the task asks of a thing, on another thing: "First,
    focus on the thermometer" withholds focus_on(orange) (one whose name holds the words the
    task names it by is that thing); "melt ice. First, focus on the substance" withholds
    every focus on a thing the task never names (the substance is one it named)."""
    irreversible = meanings(verbs).irreversible
    asked: dict[str, list[set[str]]] = {}
    for verb, thing in asked_things(task, verbs):
        if verb in irreversible and thing[0] not in _DESCRIBED:
            asked.setdefault(verb, []).append(set(thing))
    said = word_list(task)
    out: list[str] = []
    for a in candidates:
        if a.verb not in asked or not a.args:
            continue
        name = word_list(a.args[0])
        generic = any(t <= _GENERIC for t in asked[a.verb]) and holds(said, name)
        if not generic and not any(t <= set(name) for t in asked[a.verb]):
            out.append(str(a))
    return out


def committed_things(task: str, verbs: Sequence[VerbSpec]) -> list[str]:
    """The things the task asks an irreversible act of by name after "the" ("First, focus
    on the thermometer": thermometer), in its order: none it only describes ("the thing
    that ..."), none generic ("the substance"), none of the robot's own making ("paint your
    picture": made, not found)."""
    irreversible = meanings(verbs).irreversible
    text = " ".join(WORD.findall(task.lower()))
    out: list[str] = []
    for verb, thing in asked_things(task, verbs):
        if verb not in irreversible or thing[0] in _DESCRIBED or set(thing) <= _GENERIC:
            continue
        phrase = " ".join(thing)
        if f" the {phrase} " in f" {text} " and phrase not in out:
            out.append(phrase)
    return out


def stated_things(task: str, verbs: Sequence[VerbSpec]) -> list[str]:
    """Of a task that asks no act of the API by name or alias ("The dinner is almost ready!
    It's only missing a polished vase."), the thing each sentence names last after "a"/"an",
    up to a linking word: the goal is a state of that thing ("polished vase"), so it is
    searched for until seen. None of a task that names an act: its instructions say what."""
    if named_verbs(task, verbs):
        return []
    out: list[str] = []
    for sentence in SENTENCE.split(task):
        said = WORD.findall(sentence.lower())
        last = max((i for i, w in enumerate(said) if w in ("a", "an")), default=None)
        if last is None:
            continue
        thing = [
            w for w in takewhile(lambda w: w not in _LINKS, said[last + 1 :]) if w not in FILLER
        ]
        if thing and thing[0] not in _DESCRIBED and not set(thing) <= _GENERIC:
            out.append(" ".join(thing))
    return list(dict.fromkeys(out))


def irreversible_unasked(
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


def asked_to_take(task: str, verbs: Sequence[VerbSpec]) -> set[str]:
    """The words of the task's sentences that ask to take a definite thing: a verb that takes
    (``VerbSpec.takes``) followed by a determiner or "it" ("Find the key and pick it up" ->
    find, key, pick, it); none for a class of things, a bare plural ("pick up objects, then
    place them in the usual locations")."""
    forms = [
        WORD.findall(form.lower())
        for verb in verbs
        if verb.name in meanings(verbs).takes
        for form in (verb.name, *verb.aliases)
    ]
    out: set[str] = set()
    for sentence in SENTENCE.split(task):
        said = WORD.findall(sentence.lower())
        if any(_definite_after(said, form) for form in forms if form):
            out |= words(sentence)
    return out


def things_to_take(task: str, verbs: Sequence[VerbSpec]) -> list[tuple[set[str], bool]]:
    """Per sentence of the task that asks to take a definite thing (:func:`asked_to_take`):
    (the thing's words, True) where it names the thing, words after the determiner up to a
    link ("retrieve the green vase from the chest": green, vase), else (the sentence's
    words, False) ("find the key and pick it up": the key is somewhere in it)."""
    forms = [
        [w for w in WORD.findall(form.lower()) if w not in _PARTICLES]
        for verb in verbs
        if verb.name in meanings(verbs).takes
        for form in (verb.name, *verb.aliases)
    ]
    out: list[tuple[set[str], bool]] = []
    for sentence in SENTENCE.split(task):
        said = WORD.findall(sentence.lower())
        if not any(_definite_after(said, form) for form in forms if form):
            continue
        named = [_named_after(said, form) for form in forms if form]
        thing = next((t for t in named if t), None)
        out.append((thing, True) if thing else (words(sentence), False))
    return out


def _named_after(said: Sequence[str], core: Sequence[str]) -> set[str]:
    """The words of the thing a mention of ``core`` takes after "the" ("lift the green vase
    from the floor": green, vase), up to a link or INSTRUCTION_WORDS words; none after a
    pointer ("pick it up")."""
    n = len(core)
    for i in range(len(said) - n + 1):
        if list(said[i : i + n]) == list(core):
            rest = [w for w in said[i + n :] if w not in _PARTICLES]
            if rest and rest[0] in _ARTICLES:
                thing = list(takewhile(lambda w: w not in _LINKS, rest[1:]))
                return set(thing[:INSTRUCTION_WORDS]) - FILLER
    return set()


_ARTICLES = frozenset({"the", "a", "an"})


def _definite_after(said: Sequence[str], form: Sequence[str]) -> bool:
    """Whether a mention of ``form`` in ``said`` ("pick up" as "pick": "pick it up") is
    followed, past "up"/"down", by a determiner or "it"."""
    core = [w for w in form if w not in _PARTICLES]
    n = len(core)
    for i in range(len(said) - n + 1) if n else ():
        if list(said[i : i + n]) == core:
            rest = [w for w in said[i + n :] if w not in _PARTICLES]
            if rest and rest[0] in _DEFINITE:
                return True
    return False


def takes_unasked(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    task: str,
    held: Collection[str] = (),
    refused: bool = False,
) -> list[str]:
    """While the task asks to take a thing (:func:`asked_to_take`) and none it names is held:
    takes of a thing it does not name ("find the mug and pick it up": not pick_up(keycard);
    a world may end the task on the wrong thing taken, and a small model takes what is in
    front of it), and putting down what is held (the undo of a take: a key given at the
    start opens the way). None once the world refused an act (``refused``: a held thing may
    be what it needs, or a hand full)."""
    said = asked_to_take(task, verbs)
    if not said or refused or any(words(h) & said for h in held):
        return []
    meaning = meanings(verbs)
    puts = meaning.puts
    return [
        str(a)
        for a in candidates
        if (a.verb in meaning.takes and not words(" ".join(a.args)) & said)
        or (a.verb in puts and a.args and a.args[0] in held)
    ]


def unneeded_puts(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    texts: Sequence[str],
    held: Collection[str],
    left: Sequence[Instruction] = (),
    things: Collection[str] = (),
) -> list[Action]:
    """The candidates that put down (undo a take) a ``held`` thing what is ``left`` to do
    does not name or need (a verb left needs what its description says, "cut: needs a held
    blade", offered now or not: the blade put down, the cut offered with it is gone), those
    of a thing no text names first: what a full hand can give up (a thing whose acts are
    done can be taken again when it is needed); ``things``: those known (its tools wanted)."""
    puts = meanings(verbs).puts
    said = [word_list(text) for text in texts]
    acted = [word_list(x) for ins in left for x in (ins.thing or "", *ins.rest) if x]
    needed = _tools_needed(verbs, left)
    # while no act left is on a thing not held, a thing a text names (not one it only asks to
    # read) stays held: an act on nothing left may use it (a full hand had put back and taken
    # what the act was to use); else a thing whose acts are done frees a hand for the next
    whole = bool(left) and not take_wanted(left, held, verbs, things)
    kept = {h for h in held if whole and _named(h, said)} - _only_read(texts, verbs, list(held))
    free = [
        a
        for a in candidates
        if a.verb in puts
        and a.args
        and a.args[0] in held
        and a.args[0] not in kept
        and not _named(a.args[0], acted)
        and not words(a.args[0]) <= needed
    ]
    return sorted(free, key=lambda a: _named(a.args[0], said))


def room_for_tool(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    held: Collection[str],
    left: Sequence[Instruction],
    lying: Collection[str],
) -> list[Action]:
    """With the hands full and a tool a verb ``left`` needs lying here (``lying``, not held;
    the world lists no take while every hand is used): the put-down of the held thing whose
    first instruction left comes last, the one needed latest (three things to sand held, the
    rasp on the table, nothing was put down and the sanding never came)."""
    if not tools_of(verbs, left, [t for t in lying if t not in held]):
        return []
    puts = meanings(verbs).puts
    order: dict[str, int] = {}
    for k, ins in enumerate(left):
        if ins.thing is not None:
            order.setdefault(ins.thing, k)
    free = [a for a in candidates if a.verb in puts and len(a.args) == 1 and a.args[0] in held]
    free = free or [a for a in candidates if a.verb in puts and a.args and a.args[0] in held]
    return sorted(free, key=lambda a: -order.get(a.args[0], len(left)))


def waiting_acts(candidates: Sequence[Action], left: Sequence[Instruction]) -> list[Action]:
    """The acts on nothing that do an instruction ``left`` after one on a thing still left
    ("assemble" after "sand the red leg"): the instructions are written in the order they
    are done; ranked last, not withheld (the world had answered that a part was still to be
    worked three times)."""
    waiting: set[str] = set()
    for k, ins in enumerate(left):
        if ins.on_nothing and any(i.thing is not None for i in left[:k]):
            waiting.add(ins.verb)
    return [a for a in candidates if not a.args and a.verb in waiting]


def takes_unneeded(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    texts: Sequence[str],
    left: Sequence[Instruction],
) -> list[Action]:
    """While something is ``left`` to do, the candidates that take a thing no text names by
    its whole name, or that the texts only ask to read, and no verb left needs (its
    description: "needs a held blade"): with the hands limited each such take spends a hand,
    and the put-down that frees it a step (a small model took and put down the same unnamed
    thing twenty times)."""
    if not left:
        return []
    said = [word_list(text) for text in texts]
    needed = _tools_needed(verbs, left)
    meaning = meanings(verbs)
    # a thing the texts only ask to read ("check the manual") is read where it lies
    read = _only_read(texts, verbs, [a.args[0] for a in candidates if a.args])
    return [
        a
        for a in candidates
        if a.verb in meaning.takes
        and a.args
        and (not _named(a.args[0], said) or a.args[0] in read)
        and not words(a.args[0]) <= needed
    ]


def _only_read(texts: Sequence[str], verbs: Sequence[VerbSpec], names: Sequence[str]) -> set[str]:
    """The things of ``names`` that ``texts`` ask only to read ("check the manual")."""
    informs = meanings(verbs).informs
    asked = [i for text in texts for i in instructions(text, verbs, names)]
    read = {i.thing for i in asked if i.verb in informs}
    return {t for t in read - {i.thing for i in asked if i.verb not in informs} if t}


def _named(thing: str, phrases: Sequence[Sequence[str]]) -> bool:
    """Whether one of ``phrases`` holds ``thing``'s whole name: a red cup, not a red ball."""
    return any(holds(seq, word_list(thing)) for seq in phrases)


def _tools_needed(verbs: Sequence[VerbSpec], left: Sequence[Instruction]) -> set[str]:
    """The words of the descriptions of the verbs ``left`` asks for, less their names: the
    tools they need ("cut: needs a held blade"), whether or not their act is offered now."""
    described = {v.name: v.description for v in verbs}
    return {w for v in {ins.verb for ins in left} for w in words(described.get(v, "")) - words(v)}


def take_wanted(
    left: Sequence[Instruction],
    held: Collection[str],
    verbs: Sequence[VerbSpec] = (),
    things: Collection[str] = (),
) -> bool:
    """Whether an instruction ``left`` acts on a thing not ``held``, or a verb left needs a
    tool of ``things`` not held (:func:`tools_of`): a hand is wanted for it (three
    things held, the blade to cut them was not, and nothing was put down)."""
    if any(ins.thing is not None and ins.thing not in held for ins in left):
        return True
    return bool(tools_of(verbs, left, things) - set(held))


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


def held_for_later(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    texts: Sequence[str],
    held: Collection[str],
    left: Sequence[Instruction],
    full: bool = True,
    dropped_only: bool = False,
    things: Collection[str] = (),
) -> list[Action]:
    """``candidates`` less the put-downs no text asks for of a held thing what is ``left``
    still acts on or needs, while a hand is free (not ``full``), a put-down of another held
    thing frees one (:func:`unneeded_puts`) or no take is wanted (:func:`take_wanted`): a full
    hand had put down the thing its next act was on, and a small model put down and took
    again what it held.
    ``dropped_only``: only the put-downs that name no place (a thing dropped where the robot
    stands; one put on a place may be how the act is done, warming it on a hot plate)."""
    free = unneeded_puts(candidates, verbs, texts, held, left, things)
    # a hand must be freed for the next take
    if full and not free and take_wanted(left, held, verbs, things):
        return list(candidates)
    puts = meanings(verbs).puts
    if dropped_only:
        puts = {v.name for v in verbs if v.name in puts and len(v.arg_kinds) == 1}
    asked = set().union(*(named_verbs(text, verbs) for text in texts))
    return [
        a
        for a in candidates
        if a in free or a.verb not in puts - asked or not a.args or a.args[0] not in held
    ]


def irreversible_unnamed(
    candidates: Sequence[Action],
    unasked: Collection[str],
    notes: Sequence[str],
    task: str,
    verbs: Sequence[VerbSpec],
) -> list[str]:
    """Of the ``unasked`` irreversible candidates, once ``notes`` were read, those on a
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
        if str(a) not in unasked:
            continue
        thing = word_list(a.args[0]) if a.args else []
        if not thing:
            named = a.verb in asked
        else:
            phrases = [p[:2] for p in asked.get(a.verb, []) if p]
            named = holds(said, thing) or any(holds(thing, p) for p in phrases)
        if not named:
            out.append(str(a))
    return out


def cut_per_verb(
    ordered: Sequence[Action],
    limit: int,
    whole: Collection[str] = (),
    head: int = 0,
    named: Collection[str] = (),
) -> list[Action]:
    """The ``limit`` best-ranked of ``ordered``, in their order, where each verb's best-ranked
    action is kept whatever its rank: every kind of action (a move, a look, finishing) stays
    visible while long lists (examine x 20) are cut from their tail. The verbs in ``whole``
    keep their first WHOLE_VERB_SHOWN actions: a choice among them is the task's. The first
    ``head`` (what leads: the search, the fetch) are kept too, and so is every action in
    ``named`` (those the task names: the goal is never cut)."""
    firsts: dict[str, int] = {}
    kept: dict[str, list[int]] = {}
    for i, action in enumerate(ordered):
        firsts.setdefault(action.verb, i)
        if action.verb in whole:
            kept.setdefault(action.verb, []).append(i)
    reserved = set(firsts.values()).union(*(k[:WHOLE_VERB_SHOWN] for k in kept.values()))
    reserved |= set(range(min(head, len(ordered))))
    reserved |= {i for i, action in enumerate(ordered) if str(action) in named}
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
