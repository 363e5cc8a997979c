"""The action model a robot learns from its own acts, for verbs whose world declares no effects
(pure).

What the robot perceived before and after one act is a set of ground atoms over the effects
vocabulary (robomemory.effects): its place ``at(robot, P)``, the things it holds ``held(X)``
and the states the world's words gave (``open(X)``, ``state(X, sliced)``); nothing the world
hides. The difference is the act's observed effect, lifted over the act's arguments into the
shape a world declares (``$0``, ``$1``; ``here`` the place left; ``?there`` the place reached;
``?name`` another thing) and kept per verb and kind of thing with its evidence: how often it
was seen, how often the score rose, each atom's tally, the tasks and acts it came from.
Repeated observations merge by adding tallies; an atom seen in fewer than half of them is no
part of the effect (a text that named a thing by chance). :func:`with_learned` gives the
verbs that declare nothing the effects learned, so their meanings follow from them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from robomemory.core import ActionSpace, VerbSpec
from robomemory.effects import Atom, Derived, Effects, parse_atom
from robomemory.grounding.meanings import verb_meanings

if TYPE_CHECKING:
    from robomemory.grounding.world import WorldModel

ANY_KIND = "thing"  # the kind of a thing the world names no kind for
THERE = "?there"  # the place an act took the robot to, when no argument names it
OTHER = "?other"  # other things, where merged observations named different ones
MAX_TALLY = 24  # atoms tallied per effect (the least seen dropped beyond)
MAX_TRACE = 5  # tasks and acts kept as an effect's evidence
MAX_OBSERVED = 32  # effects (verb, kind) one task keeps in its state

# what a state word of the world's texts is as an atom's relation
_STATE_RELATIONS = {"open": "open", "opened": "open", "closed": "closed", "locked": "locked"}
_THING_RELATIONS = frozenset({"open", "closed", "locked", "state", "in", "on"})
_SLUG = re.compile(r"[^a-z0-9_']+")
_WORD = re.compile(r"^[a-z][a-z0-9_' -]*$")


class Evidence(NamedTuple):
    """What an observed effect rests on."""

    count: int  # observations merged
    rose: int  # of them, those after which the world's score rose
    tally: Mapping[str, int]  # "+atom" / "-atom" -> observations that showed it
    tasks: tuple[str, ...] = ()  # the tasks it was seen in, newest last
    acts: tuple[str, ...] = ()  # acts that showed it, newest last


class ObservedEffect(NamedTuple):
    """A verb's effect on one kind of thing, as the robot saw it (``Effects``-shaped)."""

    verb: str
    kind: str
    adds: tuple[Atom, ...]
    removes: tuple[Atom, ...]
    evidence: Evidence

    def effects(self) -> Effects:
        """As declared effects: a fact an act removes was true before it (its need)."""
        return Effects(self.removes, self.adds, self.removes)

    def to_json(self) -> dict[str, Any]:
        """Plain data (state, store metadata)."""
        ev = self.evidence
        return {
            "verb": self.verb,
            "kind": self.kind,
            "adds": [str(a) for a in self.adds],
            "removes": [str(a) for a in self.removes],
            "count": ev.count,
            "rose": ev.rose,
            "tally": dict(ev.tally),
            "tasks": list(ev.tasks),
            "acts": list(ev.acts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ObservedEffect:
        """Back from :meth:`to_json` (the atoms are recomputed from the tally)."""
        evidence = Evidence(
            count=int(data.get("count") or 0),
            rose=int(data.get("rose") or 0),
            tally={str(k): int(v) for k, v in (data.get("tally") or {}).items()},
            tasks=tuple(str(t) for t in data.get("tasks") or ()),
            acts=tuple(str(a) for a in data.get("acts") or ()),
        )
        return _from_tally(str(data["verb"]), str(data.get("kind") or ANY_KIND), evidence)

    def describe(self) -> str:
        """One line, e.g. ``open(container): adds open($0); removes closed($0) (seen 3, score
        rose 1)``."""
        said = [f"adds {', '.join(map(str, self.adds))}"] if self.adds else []
        said += [f"removes {', '.join(map(str, self.removes))}"] if self.removes else []
        ev = self.evidence
        head = f"{self.verb}({self.kind}): {'; '.join(said) or 'changes nothing seen'}"
        return f"{head} (seen {ev.count}, score rose {ev.rose})"


# ---- perception as atoms ---------------------------------------------------------------------


def state_atoms(thing: str, words: str) -> list[Atom]:
    """What the world's words say a thing is, as atoms: ``opened`` -> ``open(X)``, ``closed``,
    ``locked``, any other word ``state(X, word)``."""
    out = []
    for word in words.split():
        rel = _STATE_RELATIONS.get(word)
        out.append(Atom(rel, (thing,)) if rel else Atom("state", (thing, word)))
    return out


def perceived_atoms(
    world: WorldModel, place: str | None, held: Iterable[str] | None
) -> frozenset[Atom]:
    """The ground atoms the robot perceives: its place, what it holds (None: unknown, no atom)
    and each known thing's state as the world's words last gave it (``WorldModel.states``)."""
    atoms: set[Atom] = {Atom("at", ("robot", place))} if place else set()
    atoms |= {Atom("held", (x,)) for x in held or ()}
    for thing, words in world.states.items():
        atoms.update(state_atoms(thing, words))
    return frozenset(atoms)


def kinds_of(space: ActionSpace) -> dict[str, str]:
    """Each name the space lists -> its kind: the narrowest kind of the space's targets that
    lists it (the one listing fewest names), the first such kind on a tie."""
    sizes = {kind: len(names) for kind, names in space.targets.items()}
    out: dict[str, str] = {}
    for kind, names in space.targets.items():
        for name in names:
            if name not in out or sizes[kind] < sizes[out[name]]:
                out[name] = kind
    return out


def world_kind(verbs: Sequence[VerbSpec]) -> str:
    """The kind of a world, by the API it speaks: worlds with the same verbs (names and
    argument kinds) are of one kind, and what a verb does is learned once for all of them."""
    sig = "\n".join(sorted(f"{v.name}({','.join(v.arg_kinds)})" for v in verbs))
    return f"api-{hashlib.blake2b(sig.encode(), digest_size=6).hexdigest()}"


# ---- one act's effect ------------------------------------------------------------------------


def _place(atoms: Iterable[Atom]) -> str | None:
    return next((a.args[1] for a in atoms if a.rel == "at" and a.args[0] == "robot"), None)


def _things(atoms: Iterable[Atom]) -> set[str]:
    """The things atoms are about (their first term, the robot aside)."""
    return {a.args[0] for a in atoms if a.args and a.args[0] != "robot"}


def slug(name: str) -> str:
    """A name as a ``?name`` term: lower case, runs of other characters as ``_``."""
    text = _SLUG.sub("_", name.lower()).strip("_")
    return f"?{text if text[:1].isalpha() else 'x' + text}"


def _lift(atom: Atom, args: Sequence[str], here: str | None, there: str | None) -> Atom | None:
    """``atom`` with the act's arguments as ``$N``, the place left as ``here``, the place
    reached as ``?there`` and other things as ``?name``; None when a state word is no term."""
    terms = []
    for i, term in enumerate(atom.args):
        if atom.rel == "state" and i == 1:  # a state word, not a thing
            if not _WORD.match(term):
                return None
            terms.append(term)
        elif term in args:
            terms.append(f"${args.index(term)}")
        elif term == "robot":
            terms.append(term)
        elif term == here:
            terms.append("here")
        elif term == there:
            terms.append(THERE)
        else:
            terms.append(slug(term))
    return Atom(atom.rel, tuple(terms))


def observe(
    verb: str,
    args: Sequence[str],
    before: frozenset[Atom],
    after: frozenset[Atom],
    *,
    kind: str = ANY_KIND,
    rose: bool = False,
    task: str = "",
) -> ObservedEffect:
    """The effect one act was seen to have: the atoms ``after`` holds and ``before`` did not
    (added) and the reverse (removed), lifted over the act's arguments. A state of a thing no
    atom before was about, and no argument, is newly seen, not changed: it is left out."""
    known = _things(before) | set(args)
    here, there = _place(before), _place(after)
    there = there if there != here else None

    def lifted(atoms: Iterable[Atom]) -> list[Atom]:
        out = []
        for atom in sorted(atoms):
            if atom.rel in _THING_RELATIONS and atom.args[0] not in known:
                continue
            if (up := _lift(atom, args, here, there)) is not None and up not in out:
                out.append(up)
        return out

    adds, removes = lifted(after - before), lifted(before - after)
    tally = {f"+{a}": 1 for a in adds} | {f"-{a}": 1 for a in removes}
    act = f"{verb}({', '.join(args)})"
    evidence = Evidence(1, int(rose), tally, (task,) if task else (), (act,))
    return ObservedEffect(verb, kind, tuple(adds), tuple(removes), evidence)


# ---- merging ---------------------------------------------------------------------------------


def _shape(key: str) -> str:
    """A tally key with every ``?name`` as ``?`` (observations of other things unify)."""
    return re.sub(r"\?[a-z][a-z0-9_']*", "?", key)


def _unify(a: str, b: str) -> str:
    """Two tally keys of one shape as one: their ``?`` terms kept where equal, else
    ``?other``."""
    if a == b:
        return a
    parts_a, parts_b = re.split(r"([(), ]+)", a), re.split(r"([(), ]+)", b)
    return "".join(x if x == y else OTHER for x, y in zip(parts_a, parts_b, strict=True))


def _from_tally(verb: str, kind: str, ev: Evidence) -> ObservedEffect:
    """The effect its evidence shows: the atoms seen in at least half the observations."""
    kept = [k for k, n in ev.tally.items() if 2 * n >= ev.count > 0]
    adds = tuple(parse_atom(k[1:]) for k in kept if k.startswith("+"))
    removes = tuple(parse_atom(k[1:]) for k in kept if k.startswith("-"))
    return ObservedEffect(verb, kind, adds, removes, ev)


def _recent(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    out = [x for x in old if x not in new] + list(new)
    return tuple(dict.fromkeys(out))[-MAX_TRACE:]


def _combine(a: Evidence, b: Evidence) -> Evidence:
    by_shape: dict[str, tuple[str, int]] = {}
    for key, n in [*a.tally.items(), *b.tally.items()]:
        shape = _shape(key)
        held = by_shape.get(shape)
        by_shape[shape] = (_unify(held[0], key), held[1] + n) if held else (key, n)
    ranked = sorted(by_shape.values(), key=lambda kn: -kn[1])[:MAX_TALLY]
    return Evidence(
        count=a.count + b.count,
        rose=a.rose + b.rose,
        tally=dict(ranked),
        tasks=_recent(a.tasks, b.tasks),
        acts=_recent(a.acts, b.acts),
    )


def merge(effects: Iterable[ObservedEffect]) -> list[ObservedEffect]:
    """Effects of one verb on one kind merged into one (tallies and counts added; an atom
    seen in fewer than half the observations dropped), in the order first seen."""
    groups: dict[tuple[str, str], Evidence] = {}
    for eff in effects:
        key = (eff.verb, eff.kind)
        groups[key] = _combine(groups[key], eff.evidence) if key in groups else eff.evidence
    return [_from_tally(verb, kind, ev) for (verb, kind), ev in groups.items()]


def folded(observed: Sequence[ObservedEffect], new: ObservedEffect) -> list[ObservedEffect]:
    """A task's observed effects with one more act's: merged, at most MAX_OBSERVED (the
    least seen dropped)."""
    merged = merge([*observed, new])
    if len(merged) <= MAX_OBSERVED:
        return merged
    keep = sorted(merged, key=lambda e: -e.evidence.count)[:MAX_OBSERVED]
    return [e for e in merged if e in keep]


# ---- the API with what was learned -----------------------------------------------------------


def _by_verb(learned: Iterable[ObservedEffect]) -> dict[str, ObservedEffect]:
    """One effect per verb: its effects on every kind of thing merged."""
    return {e.verb: e for e in merge(e._replace(kind=ANY_KIND) for e in learned)}


def _atoms(atoms: Iterable[Atom]) -> list[str]:
    return [str(a) for a in atoms]


def _inverse(undone: ObservedEffect) -> tuple[list[Atom], list[Atom], list[Atom]]:
    """Needs, adds and removes of the act that undoes ``undone``."""
    return list(undone.adds), list(undone.removes), list(undone.adds)


def _agrees(now: Derived, declared: Derived, filled: bool) -> bool:
    """Whether a verb's meaning with the learned effects keeps what its world declared: a
    filled verb keeps each meaning its booleans declare and is irreversible only where they
    say so (an act judged irreversible is withheld, and an API of verbs whose effects are
    unknown cannot show that nothing undoes it); any other verb means what it meant."""
    if not filled:
        return now == declared
    kept = all(getattr(now, f) for f in ("moves", "takes", "reveals") if getattr(declared, f))
    undoes = declared.reverses is None or now.reverses == declared.reverses
    return kept and undoes and now.irreversible == declared.irreversible


def with_learned(verbs: Sequence[VerbSpec], learned: Iterable[ObservedEffect]) -> list[VerbSpec]:
    """``verbs`` with the effects learned given to those that declare none. A world's declared
    effects always win, and so does a verb declared to only read (what changed after it was
    the world's text, not its act). A verb declared to undo another (``reverses``) whose own
    effect was never seen gets the other's learned one, undone. A learned effect that would
    change what the world declares a verb means (``_agrees``) is not given, nor one derived
    from it. Without learned effects, ``verbs`` as they are."""
    by_verb = {v: e for v, e in _by_verb(learned).items() if e.effects().declared}
    open_verbs = {v.name: v for v in verbs if not v.effects().declared and not v.reads}
    fills: dict[str, tuple[VerbSpec, str]] = {}  # verb -> (filled, the learned verb it is of)
    for name, spec in open_verbs.items():
        if (eff := by_verb.get(name)) is not None:
            fills[name] = (_filled(spec, eff.removes, eff.adds, eff.removes), name)
    for name, spec in open_verbs.items():
        undone = by_verb.get(spec.reverses or "")
        if name not in fills and undone is not None and spec.reverses in fills:
            fills[name] = (_filled(spec, *_inverse(undone)), undone.verb)
    declared = verb_meanings(verbs)
    while fills:
        trial = [fills[v.name][0] if v.name in fills else v for v in verbs]
        now = verb_meanings(trial)
        bad = {n for n in now if not _agrees(now[n], declared[n], n in fills)}
        if not bad:
            return trial
        if not bad & fills.keys():  # it changed a verb the world declared: none is given
            break
        dropped = {fills[n][1] for n in bad & fills.keys()}
        fills = {n: f for n, f in fills.items() if f[1] not in dropped}
    return list(verbs)


def _filled(
    spec: VerbSpec, needs: Iterable[Atom], adds: Iterable[Atom], removes: Iterable[Atom]
) -> VerbSpec:
    atoms = {"needs": _atoms(needs), "adds": _atoms(adds), "removes": _atoms(removes)}
    return spec.model_copy(update=atoms)
