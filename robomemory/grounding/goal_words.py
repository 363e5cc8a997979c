"""How a task's words name its goal beyond an instruction on one thing (pure): an act asked of
a class of things ("pick up objects, then place them"), and a thing named with no act, its
state the goal ("only missing a polished vase"). The effects table types both as goal parts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from itertools import takewhile
from typing import NamedTuple

from robomemory.core import Action, VerbSpec
from robomemory.grounding.instructions import SENTENCE, asked_things, named_verbs
from robomemory.grounding.meanings import meanings
from robomemory.grounding.text import FILLER, LINKS, WORD, first_at, words
from robomemory.quantities import quantity_in

# Words that make what follows one thing, not a class ("take the", "pick it up").
DEFINITE = frozenset({"the", "a", "an", "this", "that", "it", "its", "your", "my"})
PARTICLES = frozenset({"up", "down"})
# Words between a verb and its thing ("focus on the thing", "put it into").
LINKS_PAST = PARTICLES | LINKS
# Words that name many things at once ("place them", "take all").
MANY = frozenset({"them", "all", "every", "each", "these", "those"})


def class_verbs(task: str, verbs: Sequence[VerbSpec]) -> list[str]:
    """The verbs of things (not moves) a sentence of ``task`` asks of a class of things, in
    the order it names them: a plural pronoun or a bare plural follows ("pick up objects,
    then place them in their usual locations" -> pick_up, put_down_to). Any thing the verb
    is offered on may be one."""
    moves = meanings(verbs).moves
    found: list[tuple[int, int, str]] = []
    for k, sentence in enumerate(SENTENCE.split(task)):
        said = WORD.findall(sentence.lower())
        for verb in verbs:
            if verb.name in moves or not verb.arg_kinds:
                continue
            for form in (verb.name, *verb.aliases):
                core = [w for w in WORD.findall(form.lower()) if w not in PARTICLES]
                at = [i for i, w in _things_after(said, core) if _plural(w)] if core else []
                found += [(k, i, verb.name) for i in at[:1]]
    return list(dict.fromkeys(name for _, _, name in sorted(found)))


def class_relations(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str
) -> list[Action]:
    """The candidates that relate two things by a verb ``task`` asks of a class of things
    (:func:`class_verbs`: "place them in their usual locations"): where each goes is the
    robot's judgement, which how near the two names are in meaning informs."""
    many = class_verbs(task, verbs)
    return [a for a in candidates if a.verb in many and len(a.args) > 1]


def state_relations(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str, held: Collection[str]
) -> list[Action]:
    """The candidates that relate a held thing to another where a sentence of ``task`` names
    the held thing and no act of the API ("It's only missing a polished vase": a state of the
    vase is the goal, and where it goes makes it): which relation is the robot's judgement,
    which how near the other thing is to the task's words informs."""
    moves = meanings(verbs).moves
    named = state_named(task, verbs, held)
    return [a for a in candidates if a.verb not in moves and len(a.args) > 1 and a.args[0] in named]


def state_named(task: str, verbs: Sequence[VerbSpec], things: Collection[str]) -> set[str]:
    """The ``things`` a sentence of ``task`` that names no act of the API names, every word
    after its "a"/"an" ("It's only missing a polished vase": the vase, its state the goal;
    not "solve the math problem", an act the API lacks on a thing it knows), where the task
    instructs no act of the API at all: told what to do, a thing it mentions is no goal ("A
    map is provided" beside "take the coin ... and put it into the box")."""
    named: set[str] = set()
    if named_verbs(task, verbs):
        return named
    for sentence in SENTENCE.split(task):
        said = WORD.findall(sentence.lower())
        first = next((i for i, w in enumerate(said) if w in ("a", "an")), None)
        if first is not None and not named_verbs(sentence, verbs):
            stated = words(" ".join(said[first + 1 :]))
            named |= {t for t in things if words(t) and words(t) <= stated}
    return named


def _things_after(said: Sequence[str], core: Sequence[str]) -> list[tuple[int, str]]:
    """(where, word): the first word past the links after each mention of ``core``."""
    n, out = len(core), []
    for i in range(len(said) - n + 1):
        if list(said[i : i + n]) == list(core):
            rest = [w for w in said[i + n :] if w not in LINKS_PAST]
            out += [(i, w) for w in rest[:1]]
    return out


def _plural(word: str) -> bool:
    """A plural pronoun or a plural noun's ending ("objects"; not "glass", "bus", "this")."""
    return word in MANY or (
        word not in DEFINITE and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    )


# Words a task uses for a thing it named before ("melt ice. First, focus on the substance").
_GENERIC = frozenset({"substance", "substances", "item", "items", "material"})


# Words that begin a thing the task only describes ("paint the thing that holds water").
_DESCRIBED = frozenset({"thing", "things", "one", "object", "objects"})


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
            w for w in takewhile(lambda w: w not in LINKS_PAST, said[last + 1 :]) if w not in FILLER
        ]
        if thing and thing[0] not in _DESCRIBED and not set(thing) <= _GENERIC:
            out.append(" ".join(thing))
    return list(dict.fromkeys(out))


# Superlatives that order an act on many things by the quantity each names: 1, smallest first.
_ORDER = dict.fromkeys(("smallest", "least", "lightest", "shortest", "fewest", "lowest"), 1)
_ORDER |= dict.fromkeys(("largest", "greatest", "most", "heaviest", "longest", "biggest"), -1)


class QuantityOrder(NamedTuple):
    """An act of two arguments the task asks of its things one by one, in the order of the
    quantities they name ("place the object with the smallest quantity in the box")."""

    verb: str
    where: str  # its second argument, a thing the task names after the superlative
    direction: int  # 1: smallest first; -1: largest first


def ordered_act(
    task: str, verbs: Sequence[VerbSpec], names: Collection[str]
) -> QuantityOrder | None:
    """The first sentence of ``task`` that names an act of two arguments (not a move), then a
    superlative (:data:`_ORDER`), then the act's second argument: a known name (``names``),
    else the words after the sentence's last link ("... in the box": box)."""
    moves = meanings(verbs).moves
    two = [v for v in verbs if len(v.arg_kinds) == 2 and v.name not in moves]
    known = sorted(((WORD.findall(n.lower()), n) for n in names), key=lambda x: -len(x[0]))
    for sentence in SENTENCE.split(task):
        said = WORD.findall(sentence.lower())
        for verb in two:
            forms = (WORD.findall(f.lower()) for f in (verb.name, *verb.aliases))
            at = min((first_at(said, f) for f in forms if f), default=len(said))
            most = next((i for i, w in enumerate(said) if w in _ORDER and i > at), None)
            if most is None:
                continue
            after = said[most + 1 :]
            where = next(
                (
                    n
                    for i in range(len(after))
                    for seq, n in known
                    if seq and after[i : i + len(seq)] == seq
                ),
                None,
            )
            link = max((i for i, w in enumerate(after) if w in LINKS), default=None)
            if where is None and link is not None:
                where = " ".join(w for w in after[link + 1 :] if w not in FILLER) or None
            if where is not None:
                return QuantityOrder(verb.name, where, _ORDER[said[most]])
    return None


def next_in_order(things: Collection[str], direction: int) -> str | None:
    """Of ``things``, the one whose quantity comes first (``direction`` 1: the smallest), among
    those of the dimension most of them measure; None if none names a quantity."""
    measured = [(t, q) for t in sorted(things) if (q := quantity_in(t)) is not None]
    if not measured:
        return None
    dims = Counter(q.dimension for _, q in measured)
    dim = max(dims, key=lambda d: (dims[d], d))
    same = [(q.value, t) for t, q in measured if q.dimension == dim]
    return (min(same) if direction > 0 else max(same))[1]
