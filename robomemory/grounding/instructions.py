"""Instructions a text gives in the words of the action API, and which are left to do."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from itertools import takewhile
from typing import NamedTuple

from robomemory.core import VerbSpec
from robomemory.grounding.states import result_forms
from robomemory.grounding.text import FILLER, LINKS, WORD, parsed, word_list, words

INSTRUCTION_WORDS = 4  # words after a verb that may name what it acts on
# "make a new box" asks for a new thing, not for an act on the box that is known.
_INDEFINITE = frozenset({"a", "an", "some", "another"})
_ARTICLES = frozenset({"the", "a", "an"})


class Instruction(NamedTuple):
    """One instruction a text gives: the API verb, the thing it names (None for a verb of no
    argument, or one that ``refers`` to a thing described elsewhere: "focus on the thing"),
    the words as written and the arguments after the thing its alias fixes ("BBQ")."""

    verb: str
    thing: str | None
    phrase: str
    rest: tuple[str, ...] = ()
    refers: bool = False
    described: str = ""  # for one that refers: what the text said of the thing ("a(n) plant")
    named: bool = False  # it refers to the thing the text named before it ("take it": the coin)
    qualified: bool = False  # described by a clause ("the item with ..."): only a reading binds it

    @property
    def on_nothing(self) -> bool:
        """Whether its verb takes no thing at all."""
        return self.thing is None and not self.refers


def _mentions(content: list[str], verbs: Sequence[VerbSpec]) -> list[tuple[int, int, VerbSpec]]:
    """(start, length, verb) of each place ``content`` names a verb by its name or alias."""
    out: list[tuple[int, int, VerbSpec]] = []
    for verb in verbs:
        for form in [verb.name, *verb.aliases]:
            seq = word_list(form)
            n = len(seq)
            at = range(len(content) - n + 1) if n else range(0)
            out += [(i, n, verb) for i in at if content[i : i + n] == seq]
    # the longest form at a place: "take a trip west" is a move, not a take of "a trip"
    out.sort(key=lambda m: (m[0], -m[1]))
    kept: list[tuple[int, int, VerbSpec]] = []
    for m in out:
        if not kept or m[0] >= kept[-1][0] + kept[-1][1]:
            kept.append(m)
    return kept


def named_verbs(text: str, verbs: Sequence[VerbSpec]) -> set[str]:
    """The verbs ``text`` names, by their name's words or an alias ("focus on the thing")."""
    return {verb.name for _, _, verb in _mentions(word_list(text), verbs)}


def instructions(
    text: str,
    verbs: Sequence[VerbSpec],
    names: Collection[str],
    *,
    referring: bool = False,
    further: Collection[str] | None = None,
) -> list[Instruction]:
    """The instructions ``text`` gives, in order: each verb of the API it names with the known
    name that follows within INSTRUCTION_WORDS words, before the next verb ("You open the copy
    of ..." is none); with ``referring``, also one followed only by words for a thing described
    elsewhere ("focus on the thing"). A verb of two arguments takes the next name of
    ``further`` (default ``names``) as its second."""
    text = as_asked(text, verbs)
    raw = WORD.findall(text.lower())
    at = [i for i, w in enumerate(raw) if w not in FILLER]  # content word -> raw index
    clause_of = [
        c for c, part in enumerate(_CLAUSE.split(text.lower())) for _ in WORD.findall(part)
    ]
    line_of = [c for c, part in enumerate(SENTENCE.split(text.lower())) for _ in WORD.findall(part)]
    spans = [m.start() for m in WORD.finditer(text.lower())]
    content = [raw[i] for i in at]
    known = _longest_first(names)
    others = known if further is None else _longest_first(further)
    # a verb's word inside a longer known name is the name ("slice of bread")
    inside = _inside_names(content, known)
    mentions = [m for m in _mentions(content, verbs) if inside.get(m[0], 0) <= m[1]]
    out: list[Instruction] = []

    def nxt_of(k: int) -> int:  # where the next verb's mention starts
        return mentions[k + 1][0] if k + 1 < len(mentions) else len(content)

    for k, (start, n, verb) in enumerate(mentions):
        if not verb.arg_kinds and verb.reads:  # "look and see that ...": it changes nothing
            continue
        verb_words = " ".join(raw[at[start] : at[start + n - 1] + 1])
        if not verb.arg_kinds:
            out.append(Instruction(verb.name, None, verb_words))
            continue
        stop = min(nxt_of(k), start + n + INSTRUCTION_WORDS)
        line = line_of[at[start + n - 1]]  # an instruction ends with its sentence or line
        stop = next((i for i in range(start + n, stop) if line_of[at[i]] != line), stop)
        found = _first_name(content, start + n, stop, known)
        if found is None and others is not known:  # "put it into the box": it is at hand,
            place = _first_name(content, start + n, stop, others)  # the box may be anywhere
            begins = place[0] - len(word_list(place[1])) if place else 0
            if place and _told(verb, raw, at, start + n, begins, text, spans, known):
                found = place
        # the thing is named before the first link after it: "check the manual in the hall"
        # is no read of the hall where the manual is not known
        if found is not None and _after_link(raw, at, start + n, found[0] - len(found[2])):
            found = None
        clause = clause_of[at[start + n - 1]]
        after = [content[i] for i in range(start + n, stop) if clause_of[at[i]] == clause]
        qualifier = _qualified(raw, at, start + n, clause_of) if referring and after else None
        if found is None and qualifier:  # "pick up the item with the same quantity as ..."
            phrase = f"{verb_words} the {qualifier}"
            out.append(Instruction(verb.name, None, phrase, (), True, qualifier, False, True))
            continue
        if found is None and referring and after and set(after) <= _REFERS:
            written = " ".join(raw[at[start] : at[start + n + len(after) - 1] + 1])
            named = _head(_antecedent(text, spans[at[start]])) if set(after) <= _POINTERS else None
            if named is not None:  # "find the coin, take it": it is the coin
                phrase = f"{verb_words} the {named}"
                name = next((nm for seq, nm in known if seq == word_list(named)), None)
                ins = Instruction(verb.name, name, phrase)
                if name is None:  # not known: the act on whatever is called so
                    ins = ins._replace(refers=True, described=named, named=True)
                out.append(ins)
                continue
            described = _described(text, spans[at[start]])
            if described:  # told only "the thing", a small model commits to any thing
                verb_said = raw[at[start] : at[start + n]]  # the verb's words, "on the"
                while verb_said and verb_said[-1] in _ARTICLES:
                    verb_said.pop()
                written = f"{described}, then {' '.join(verb_said)} it"
            thing = described.split(maxsplit=1)[-1] if described else ""
            out.append(Instruction(verb.name, None, written, refers=True, described=thing))
            continue
        if found is None:
            continue
        end, name, _ = found
        written = raw[at[start] : at[end - 1] + 1]
        told = _told(verb, raw, at, start + n, end - len(word_list(name)), text, spans, known)
        thing, said = told or (None, "")
        phrase = " ".join(written)
        if told is not None and not thing:  # "move it to the red box", it not named yet:
            if referring:  # the box is where it goes, never the thing moved
                described = _described(text, spans[at[start]]) or said
                thing = described.split(maxsplit=1)[-1]
                out.append(Instruction(verb.name, None, phrase, (name,), True, thing))
            continue
        if thing in {nm for _, nm in known}:  # "take the coin, and put it into the box"
            out.append(Instruction(verb.name, thing, phrase, (name,)))
            continue
        if said and referring:  # the coin not seen yet: the act on whatever is called so
            out.append(Instruction(verb.name, None, phrase, (name,), True, said, True))
            continue
        if _INDEFINITE.isdisjoint(raw[at[start + n - 1] + 1 : at[end - len(word_list(name))]]):
            rest = _pinned(verb, content[start : start + n])
            if not rest and len(verb.arg_kinds) > 1:  # "move the tree to the green box"
                upto = min(nxt_of(k), end + INSTRUCTION_WORDS)
                upto = next((i for i in range(end, upto) if line_of[at[i]] != line), upto)
                second = _first_name(content, end, upto, others)
                if second is not None:
                    rest = (second[1],)
                    written = raw[at[start] : at[second[0] - 1] + 1]
            out.append(Instruction(verb.name, name, " ".join(written), rest))
    return out


def as_asked(text: str, verbs: Sequence[VerbSpec]) -> str:
    """``text`` with each result asked for after "that" or "sure" written as its act ("ensure
    that the chest is open" -> "ensure open the chest"); "the door is open" alone describes."""
    forms: dict[str, str] = {}  # result words -> the verb's own words
    for verb in verbs:
        if not verb.arg_kinds:
            continue
        own = WORD.findall(verb.name.lower().replace("_", " "))
        for form in [verb.name, *verb.aliases]:
            seq = WORD.findall(form.lower().replace("_", " "))
            # written as the verb's name ("the door is ajar": open the door), but an alias
            # that fixes arguments ("glazed": glaze, in the kiln)
            act = seq if form in verb.alias_args else own
            for head in [seq[0], *result_forms(seq[0])] if seq else []:
                forms.setdefault(" ".join([head, *seq[1:]]), " ".join(act))
    if not forms:
        return text
    pattern = re.compile(
        r"\b(that|sure)\s+(?:that\s+)?the\s+([a-z][a-z -]*?)\s+(?:is|are)\s+(?:now\s+)?("
        + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        + r")\b",
        re.IGNORECASE,
    )
    # "that" goes: before a verb it would read as a pointer ("check that": check the last thing)
    lead = {"that": ""}
    return pattern.sub(
        lambda m: f"{lead.get(m[1].lower(), m[1] + ' ')}{forms[m[3].lower()]} the {m[2]}", text
    )


def _longest_first(names: Collection[str]) -> list[tuple[list[str], str]]:
    """(words, name) of each name that has words, the longest first."""
    return sorted(((word_list(n), n) for n in names if word_list(n)), key=lambda k: -len(k[0]))


def _inside_names(content: list[str], known: list[tuple[list[str], str]]) -> dict[int, int]:
    """Content index -> the length of the longest known name that covers it."""
    out: dict[int, int] = {}
    for seq, _ in known:
        n = len(seq)
        for i in range(len(content) - n + 1):
            if content[i : i + n] == seq:
                for j in range(i, i + n):
                    out[j] = max(out.get(j, 0), n)
    return out


def _pinned(verb: VerbSpec, form: list[str]) -> tuple[str, ...]:
    """The arguments after the first that the alias written as ``form`` fixes, if any."""
    return next((tuple(a) for alias, a in verb.alias_args.items() if word_list(alias) == form), ())


def _first_name(
    content: list[str], start: int, stop: int, known: list[tuple[list[str], str]]
) -> tuple[int, str, list[str]] | None:
    """(end, name, its words) of the first known name (longest first) in content[start:stop]."""
    for i in range(start, stop):
        for seq, name in known:
            if i + len(seq) <= stop and content[i : i + len(seq)] == seq:
                return i + len(seq), name, seq
    return None


def _after_link(raw: list[str], at: list[int], first: int, begins: int) -> bool:
    """Whether a link before the name that ``begins`` makes it a place or tool, not the thing."""
    between = raw[at[first] : at[begins]]
    said = [w for w in between if w not in FILLER | LINKS]
    if all(w in _POINTERS for w in said):  # "move it to the red box": the thing told before
        return False
    return any(w in LINKS for w in between[1:])


_CLAUSE = re.compile(r"[.,;:!?\n]+")
# Where a sentence or a list item ends: an instruction never reads past it.
SENTENCE = re.compile(r"[.;!?\n]+")
# A thing introduced without being named, with the word before it ("find a(n) living thing"):
# what a later "the thing" means.
_INTRODUCED = re.compile(r"\b[a-z]+\s+(?:a\(n\)|an|a)\s+[^.,;:!?\n]+")


# A thing named with "the", up to the clause's end or a joining word: what "it" stands for.
_DEFINITE = re.compile(r"\bthe\s+([a-z][a-z -]*?)(?=\s+(?:and|then|or|once|to)\b|\s*[.,;:!?\n]|$)")


def _qualified(raw: list[str], at: list[int], first: int, clause_of: list[int]) -> str | None:
    """A thing described by a clause from ``first`` ("item with the same quantity as ...")."""
    if first >= len(at) or raw[at[first]] not in _CLASS:
        return None
    begin = at[first]
    if begin + 1 >= len(raw) or raw[begin + 1] not in _QUALIFYING:
        return None
    end = begin
    while end + 1 < len(raw) and clause_of[end + 1] == clause_of[begin]:
        end += 1
    return " ".join(raw[begin : end + 1])


def _told(
    verb: VerbSpec,
    raw: list[str],
    at: list[int],
    first: int,
    begins: int,
    text: str,
    spans: list[int],
    known: list[tuple[list[str], str]],
) -> tuple[str, str] | None:
    """(name, words) of what a pointer before ``begins`` stands for ("put it into the box"); the
    name is "" where it stands for a thing not named yet ("the thing")."""
    between = [w for w in raw[at[first] : at[begins]] if w not in FILLER | LINKS]
    if len(verb.arg_kinds) < 2 or not between or not set(between) <= _POINTERS:
        return None
    said = _head(_antecedent(text, spans[at[first]]))
    if not said:
        return None
    if set(said.split()) <= _REFERS:  # "move it": "the thing", not named until the pick
        return "", said
    name = next((nm for seq, nm in known if seq == word_list(said)), said)
    return name, said


def _head(described: str | None) -> str | None:
    """A thing's words up to a clause or link ("coin that is in the shop" -> "coin")."""
    if described is None:
        return None
    return " ".join(takewhile(lambda w: w not in _QUALIFYING | LINKS, described.split())) or None


def _antecedent(text: str, before: int) -> str | None:
    """The last thing named with "the" in this sentence or the one before offset ``before``."""
    head = text[:before].lower()
    starts = [m.end() for m in SENTENCE.finditer(head.rstrip())]
    since = starts[-2] if len(starts) > 1 else 0  # this sentence and the one before
    found = [m.group(1).strip() for m in _DEFINITE.finditer(head, since)]
    return found[-1] if found else None


def _described(text: str, before: int) -> str | None:
    """The last thing introduced with "a(n)" (and the word before) before offset ``before``."""
    found = [m.group(0).strip() for m in _INTRODUCED.finditer(text.lower()) if m.end() <= before]
    return found[-1] if found else None


# Words for a thing the text only describes ("paint the thing that holds water").
THING_WORDS = frozenset({"thing", "things", "one", "object", "objects"})
# Words that point at a thing without naming it.
_POINTERS = frozenset({"it", "its", "them", "this", "that", "these", "those", "your", "my"})
# Words that stand for a thing described elsewhere ("focus on the thing"): nothing to look for.
_REFERS = _POINTERS | THING_WORDS
# Words for a thing of any kind, and the words that begin a clause describing which one.
_CLASS = frozenset({"thing", "object", "item", "one"})
_QUALIFYING = frozenset({"with", "that", "which", "whose"})


def asked_things(text: str, verbs: Sequence[VerbSpec]) -> list[tuple[str, list[str]]]:
    """(verb, the thing's words) of each imperative of ``text``, known name or not: its verb
    begins a clause or follows the previous one's words; none on "a ..." or "the thing"."""
    out: list[tuple[str, list[str]]] = []
    for clause in _CLAUSE.split(text.lower()):
        content = word_list(clause)
        mentions = _mentions(content, verbs)
        expected = 0  # where an imperative may begin
        for k, (start, n, verb) in enumerate(mentions):
            if start != expected:
                break
            stop = mentions[k + 1][0] if k + 1 < len(mentions) else len(content)
            expected = stop
            thing = [
                w
                for w in content[start + n : min(stop, start + n + INSTRUCTION_WORDS)]
                if w not in _POINTERS
            ]
            if not verb.arg_kinds or not thing or set(thing) & _INDEFINITE:
                continue
            if set(thing) <= _REFERS:
                continue
            out.append((verb.name, thing))
    return out


def unseen_things(text: str, verbs: Sequence[VerbSpec], names: Collection[str]) -> list[str]:
    """What the instructions of ``text`` act on that no known name holds the words of yet."""
    known = [words(n) for n in names if words(n)]
    out: list[str] = []
    for _, thing in asked_things(text, verbs):
        phrase = " ".join(thing)
        if not any(set(thing) <= k for k in known) and phrase not in out:
            out.append(phrase)
    return out


def left_instructions(
    notes: Sequence[str],
    done: Sequence[str],
    verbs: Sequence[VerbSpec],
    names: Collection[str],
    *,
    task: str = "",
    offered: Collection[str] = (),
    states: Mapping[str, str] | None = None,
    moved: Sequence[str] | None = None,
) -> list[Instruction]:
    """What the notes, then the task, instruct that is not done yet, in order. The task's
    instructions are listed once an action is ``offered`` on their thing. One is done when a
    done action or a note's read has its verb and thing, or ``states`` show its result.
    Texts are written in the order they are done: those on a thing before the last done on it
    are over (but an irreversible act: sand before paint), and all before a done one on no
    thing; another thing's stay. Given ``moved``, a text's moves are a route: only the next
    move is left ("go east, then go east again" is two steps)."""
    # a read is done once its note is kept ("inspect(manual): ..." does "check the manual")
    acts = [*done, *(n.split(": ", 1)[0] for n in notes)]
    did = {(verb, args[0] if args else None) for verb, args in map(parsed, acts)}
    shown = states or {}

    def shows(ins: Instruction) -> bool:
        state = shown.get(ins.thing, "").split() if ins.thing else []
        return not result_forms(ins.phrase.split()[0]).isdisjoint(state)

    def over(ins: Instruction) -> bool:  # one that refers is done on whatever thing it was,
        if (ins.verb, ins.thing) in spent:  # a note all done may say what is next: read again,
            return False  # when nothing else is left
        if ins.named:  # but on the thing named before it ("take it": a coin, not a teapot)
            return any(v == ins.verb and t and words(ins.described) <= words(t) for v, t in did)
        # one described by a clause is over only once read as a thing (:func:`with_reading`)
        by_any = ins.refers and not ins.qualified and ins.verb in done_verbs
        return (ins.verb, ins.thing) in did or by_any

    done_verbs = {verb for verb, _ in did}
    spent: set[tuple[str, str | None]] = set()  # reads whose note gave instructions, all done
    irreversible = {v.name for v in verbs if v.irreversible}
    out: list[Instruction] = []
    moving = {v.name for v in verbs if v.moves} if moved is not None else set()
    ways = [x for a in moved or () for x in parsed(a)[1][:1] if parsed(a)[0] in moving]
    heads = [n.partition(": ") for n in notes]
    texts = [
        ((h, t) if sep else ("", n), names, False)
        for n, (h, sep, t) in zip(notes, heads, strict=True)
    ]
    texts += [(("", task), offered, True)]
    for (head, text), known, referring in texts:  # a further argument may be anything known
        given = instructions(text, verbs, known, referring=referring, further=names)
        before = len(out)
        route = (
            []
            if not moving
            else [  # every move the text gives, read with all ways known
                i
                for i in instructions(text, verbs, [*names, *known, *ways], referring=referring)
                if i.verb in moving and i.thing
            ]
        )
        taken = route_done(route, moved or (), moving)
        nth: dict[str, int] = {}  # a move's place on the route, by its phrase's occurrences
        if referring:  # the task, read with its offered names only: a verb before a name not
            # offered binds the next offered one ("unlock the door with the key": the key
            # held); one that every known name reads as done is over
            read = instructions(text, verbs, [*names, *known], referring=True, further=names)
            gone = [f.phrase for f in read if over(f) and f.verb not in moving]  # a route's own
            given = [g for g in given if not any(_same_start(g.phrase, p) for p in gone)]
        ended = [i for i, ins in enumerate(given) if over(ins)]
        whole = max((i for i in ended if given[i].on_nothing), default=-1)
        last_on = {given[i].thing: i for i in ended if not given[i].refers}  # per thing
        for i, ins in enumerate(given):
            if ins.verb in moving and ins.thing:  # on a route only the next move is left
                at = [k for k, r in enumerate(route) if r.phrase == ins.phrase]
                nth[ins.phrase] = nth.get(ins.phrase, -1) + 1
                if nth[ins.phrase] < len(at) and at[nth[ins.phrase]] == taken:
                    out.append(ins)
                continue
            # an irreversible act a later one on its thing did not make needless (sand, then paint)
            kept = ins.verb in irreversible
            if i <= whole or (i <= last_on.get(ins.thing, -1) and not kept):
                continue
            fresh = all(ins.phrase != o.phrase for o in out)
            if not over(ins) and not shows(ins) and fresh:
                out.append(ins)
        if head and given and len(out) == before:
            verb, args = parsed(head)
            spent.add((verb, args[0] if args else None))
    again = [i for i in out if (i.verb, i.thing) in spent]  # only where nothing else is left
    return out if len(again) == len(out) else [i for i in out if i not in again]


def route_done(route: Sequence[Instruction], moved: Sequence[str], moving: Collection[str]) -> int:
    """How many moves of ``route`` the actions ``moved`` made, in order: a detour between two
    moves does not undo the first."""
    steps = [args[:1] if verb in moving else None for verb, args in map(parsed, moved)]
    j = 0
    for n, ins in enumerate(route):
        found = next((k for k in range(j, len(steps)) if steps[k] == [ins.thing]), None)
        if found is None:
            return n
        j = found + 1
    return len(route)


def _same_start(a: str, b: str) -> bool:
    """Whether one phrase begins the other (the same instruction read up to another name)."""
    return a.startswith(b) or b.startswith(a)


def with_pick(
    text: str, verbs: Sequence[VerbSpec], done: Sequence[str], names: Collection[str] = ()
) -> str:
    """``text`` with each pronoun for "the thing" naming the pick done on it ("focus on the
    thing. Then, move it" -> move the blue jay), a pick no known name spells read as the
    shortest that holds its words ("apple tree" is "adult apple tree" once focused on)."""
    given = [i for i in instructions(text, verbs, (), referring=True) if i.refers and not i.named]
    picks = {verb: args[0] for verb, args in map(parsed, done) if args}  # the newest per verb
    pick = next((picks[i.verb] for i in given if i.verb in picks), None)
    if pick is None:
        return text
    if pick not in names:
        spelled = sorted((n for n in names if words(pick) <= words(n)), key=len)
        pick = spelled[0] if spelled else pick
    return _the_thing_named(text, pick, itself=False)  # "the thing": done by the pick


def _the_thing_named(text: str, thing: str, itself: bool) -> str:
    """``text`` with each pronoun for its first "the thing" (and, ``itself``, it) as ``thing``."""
    lower = text.lower()
    first = next((m for m in _THE_THING.finditer(lower)), None)
    if first is None:
        return text
    spans = [
        m.span()
        for m in _PRONOUN.finditer(lower, first.end())
        if _antecedent(text, m.start()) in _REFERS
    ]
    out = text
    for start, end in [*reversed(spans), *([first.span()] if itself else [])]:
        out = f"{out[:start]}the {thing}{out[end:]}"
    return out


def with_reading(text: str, readings: Mapping[str, str]) -> str:
    """``text`` with each thing described by a clause, and each later pronoun for it, named as
    read (``readings``: description -> thing): "pick up the item with ..., and place it" ->
    "pick up the 2 bananas, and place the 2 bananas"; a class names its "the thing"."""
    out = text
    for described, thing in readings.items():
        if thing == NOT_HERE:  # a class read against the things of one place: none of them
            continue
        found = re.search(rf"\bthe\s+{re.escape(described)}\b", out, re.IGNORECASE)
        if found is None:  # described by its class ("find a(n) animal, focus on the thing")
            if described.lower() in out.lower():
                out = _the_thing_named(out, thing, itself=True)
            continue
        spans = [
            m.span()
            for m in _PRONOUN.finditer(out.lower(), found.end())
            if _antecedent(out, m.start()) == described
        ]
        for start, end in [*reversed(spans), found.span()]:
            out = f"{out[:start]}the {thing}{out[end:]}"
    return out


# A reading of a class against the things of one place that found none of them.
NOT_HERE = "none of these"
# How a text points at the thing it only described, and a pronoun that may stand for it.
_THE_THING = re.compile(r"\bthe\s+(?:thing|object|one)\b")
_PRONOUN = re.compile(r"\b(?:it|them)\b")
