"""Verbs as preconditions and effects over a small relational vocabulary (pure).

A world declares what each verb needs, adds and removes (``VerbSpec.needs/adds/removes``), the
way TextWorld's own game logic and a robot's skill library do; what a verb *means* to the
grounding (reads, moves, takes, reveals, irreversible, reverses) follows from those effects
(:func:`derived`) instead of being declared again by hand.

An atom is ``relation(term, ...)``:

- relations: ``at(robot, P)`` the robot at a place, ``at(X, P)`` a thing lying at a place,
  ``held(X)``, ``in(X, C)``, ``on(X, S)``, ``open(X)``, ``closed(X)``, ``locked(X)``, and
  ``state(X, S)`` for any other state of a thing (``state($0, sliced)``, ``state($0, eaten)``);
- terms: ``$0``, ``$1``… the verb's arguments; ``robot``; ``here`` (the robot's place); ``_``
  anything; ``?name`` some other thing (bound by the world, not an argument); or a word (a state,
  a thing the world names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

RELATIONS: dict[str, int] = {
    "at": 2,
    "held": 1,
    "in": 2,
    "on": 2,
    "open": 1,
    "closed": 1,
    "locked": 1,
    "state": 2,
}
_ATOM = re.compile(r"^\s*([a-z_]+)\(([^()]*)\)\s*$")
_TERM = re.compile(r"^(\$\d|\?[a-z][a-z0-9_']*|_|[a-z][a-z0-9_' -]*)$")


class Atom(NamedTuple):
    """One relation over terms, e.g. ``Atom("held", ("$0",))``."""

    rel: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.rel}({', '.join(self.args)})"


def parse_atom(text: str) -> Atom:
    """``"in($0, $1)"`` as an Atom; a ValueError in one line for anything outside the
    vocabulary (unknown relation, wrong arity, a malformed term)."""
    m = _ATOM.match(text)
    if m is None:
        raise ValueError(f"not an atom {text!r}: write relation(term, ...)")
    rel, inside = m.group(1), m.group(2)
    if rel not in RELATIONS:
        raise ValueError(f"unknown relation {rel!r} in {text!r}; known: {', '.join(RELATIONS)}")
    args = tuple(a.strip() for a in inside.split(",")) if inside.strip() else ()
    if len(args) != RELATIONS[rel]:
        raise ValueError(f"{rel} takes {RELATIONS[rel]} terms, {text!r} has {len(args)}")
    for arg in args:
        if not _TERM.match(arg):
            raise ValueError(f"bad term {arg!r} in {text!r}: $N, robot, here, _, ?name or a word")
    return Atom(rel, args)


def parse_atoms(texts: Iterable[str]) -> tuple[Atom, ...]:
    """Each text parsed (:func:`parse_atom`)."""
    return tuple(parse_atom(t) for t in texts)


def _open_term(term: str) -> bool:
    return term == "_" or term.startswith("?")


def matches(a: Atom, b: Atom, *, lenient: bool = False) -> bool:
    """Whether ``a`` and ``b`` can be the same fact: same relation, each pair of terms equal or
    one of them open (``_``, ``?name``). ``lenient``: an argument (``$N``) or ``here`` may be
    any thing too (the same verb applied to other things)."""
    if a.rel != b.rel:
        return False
    for x, y in zip(a.args, b.args, strict=True):
        if x == y or _open_term(x) or _open_term(y):
            continue
        bound = ("here",)
        if lenient and (x.startswith("$") or x in bound or y.startswith("$") or y in bound):
            continue
        return False
    return True


class Effects(NamedTuple):
    """A verb's declared needs, adds and removes, parsed."""

    needs: tuple[Atom, ...]
    adds: tuple[Atom, ...]
    removes: tuple[Atom, ...]

    @property
    def declared(self) -> bool:
        return bool(self.needs or self.adds or self.removes)


class Derived(NamedTuple):
    """What a verb means, as its effects say."""

    reads: bool  # changes nothing
    moves: bool  # the robot ends at another place
    takes: bool  # its first argument ends in the robot's hands
    reveals: bool  # its first argument ends open (what is inside shows)
    irreversible: bool  # adds a fact no verb of the API removes
    reverses: str | None  # the earlier verb whose effect it undoes


class _HasEffects(NamedTuple):
    name: str
    effects: Effects


def derived(verbs: Sequence[tuple[str, Effects]]) -> dict[str, Derived]:
    """Each verb with declared effects -> what it means, judged against the whole API
    (``verbs`` in the API's order: of two verbs that undo each other, the later reverses the
    earlier — a world lists the act before its undoing: pick up, put; open, close)."""
    items = [_HasEffects(n, e) for n, e in verbs]
    out: dict[str, Derived] = {}
    for i, (name, eff) in enumerate(items):
        if not eff.declared:
            continue
        first = [a for a in eff.adds if a.args[:1] == ("$0",)]
        out[name] = Derived(
            reads=not eff.adds and not eff.removes,
            moves=any(a.rel == "at" and a.args[0] == "robot" for a in eff.adds),
            takes=any(a.rel == "held" for a in first),
            reveals=any(a.rel == "open" for a in first),
            irreversible=any(
                not any(matches(a, r, lenient=True) for o in items for r in o.effects.removes)
                for a in eff.adds
            ),
            reverses=next(
                (o.name for o in items[:i] if o.effects.declared and _undoes(eff, o.effects)),
                None,
            ),
        )
    return out


def _undoes(eff: Effects, other: Effects) -> bool:
    """``eff`` removes something ``other`` adds and adds something ``other`` removes."""
    takes_back = any(matches(r, a) for r in eff.removes for a in other.adds)
    restores = any(matches(a, r) for a in eff.adds for r in other.removes)
    return takes_back and restores
