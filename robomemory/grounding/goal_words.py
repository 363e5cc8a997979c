"""How a task names a goal beyond an instruction on one thing: an act asked of a class ("place
them"), a thing named with no act ("only missing a polished vase"), an order of quantities."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from itertools import takewhile
from typing import NamedTuple

from robomemory.core import Action, VerbSpec
from robomemory.grounding.instructions import SENTENCE, THING_WORDS, asked_things, named_verbs
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
    """The verbs (not moves) ``task`` asks of a class of things, in its order: a plural
    follows ("pick up objects, then place them" -> pick_up, put_down_to)."""
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
    """The candidates that relate two things by a verb ``task`` asks of a class of things:
    where each goes is the robot's judgement, informed by how near the names are."""
    many = class_verbs(task, verbs)
    return [a for a in candidates if a.verb in many and len(a.args) > 1]


def state_relations(
    candidates: Sequence[Action], verbs: Sequence[VerbSpec], task: str, held: Collection[str]
) -> list[Action]:
    """The candidates that relate a held thing to another where ``task`` names it with no act
    ("only missing a polished vase": where it goes makes its state): the robot's judgement."""
    moves = meanings(verbs).moves
    named = state_named(task, verbs, held)
    return [a for a in candidates if a.verb not in moves and len(a.args) > 1 and a.args[0] in named]


def state_named(task: str, verbs: Sequence[VerbSpec], things: Collection[str]) -> set[str]:
    """The ``things`` named by every word after "a"/"an" in a sentence of ``task`` that names
    no act of the API, where the task instructs none at all (told what to do, "A map is
    provided" is no goal)."""
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


def committed_things(task: str, verbs: Sequence[VerbSpec]) -> list[str]:
    """The things the task asks an irreversible act of by name after "the" ("focus on the
    thermometer"), in order: none only described, generic ("the substance") or made ("your
    picture")."""
    irreversible = meanings(verbs).irreversible
    text = " ".join(WORD.findall(task.lower()))
    out: list[str] = []
    for verb, thing in asked_things(task, verbs):
        if verb not in irreversible or thing[0] in THING_WORDS or set(thing) <= _GENERIC:
            continue
        phrase = " ".join(thing)
        if f" the {phrase} " in f" {text} " and phrase not in out:
            out.append(phrase)
    return out


def stated_things(task: str, verbs: Sequence[VerbSpec]) -> list[str]:
    """Of a task that names no act of the API ("It's only missing a polished vase."), the
    thing each sentence names last after "a"/"an", up to a link: its state is the goal, so
    it is searched for until seen."""
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
        if thing and thing[0] not in THING_WORDS and not set(thing) <= _GENERIC:
            out.append(" ".join(thing))
    return list(dict.fromkeys(out))


# Superlatives that order an act on many things by the quantity each names: 1, smallest first.
_ORDER = dict.fromkeys(("smallest", "least", "lightest", "shortest", "fewest", "lowest"), 1)
_ORDER |= dict.fromkeys(("largest", "greatest", "most", "heaviest", "longest", "biggest"), -1)


class QuantityOrder(NamedTuple):
    """An act of two arguments asked of things in the order of their quantities ("place the
    object with the smallest quantity in the box")."""

    verb: str
    where: str  # its second argument, a thing the task names after the superlative
    direction: int  # 1: smallest first; -1: largest first


def ordered_act(
    task: str, verbs: Sequence[VerbSpec], names: Collection[str]
) -> QuantityOrder | None:
    """The first sentence of ``task`` that names an act of two arguments (not a move), a
    superlative, then its second argument: a known name, else the words after the last link."""
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
    """Of ``things``, the one whose quantity comes first (``direction`` 1: the smallest) in the
    dimension most of them measure; None if none names a quantity."""
    measured = [(t, q) for t in sorted(things) if (q := quantity_in(t)) is not None]
    if not measured:
        return None
    dims = Counter(q.dimension for _, q in measured)
    dim = max(dims, key=lambda d: (dims[d], d))
    same = [(q.value, t) for t, q in measured if q.dimension == dim]
    return (min(same) if direction > 0 else max(same))[1]
