"""What the API's verbs mean to the grounding: from their declared effects where they have
them, else their declared booleans."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from robomemory.core import VerbSpec
from robomemory.effects import Derived, Effects, derived, parse_atoms


class Meanings(NamedTuple):
    """The verbs of an API by meaning."""

    reads: frozenset[str]  # read a thing (examine): the answer does not change with time
    informs: frozenset[str]  # change nothing (reads, look, inventory)
    moves: frozenset[str]  # take the robot elsewhere
    irreversible: frozenset[str]  # cannot be undone
    reveals: frozenset[str]  # show what is inside a thing
    reverses: dict[str, str]  # verb -> the verb whose effect it undoes
    takes: frozenset[str] = frozenset()  # put the thing in the robot's hands

    @property
    def puts(self) -> set[str]:
        """The verbs that undo a take: they put a held thing down."""
        return {v for v, undone in self.reverses.items() if undone in self.takes}


def verb_meanings(verbs: Sequence[VerbSpec]) -> dict[str, Derived]:
    """Each verb's meaning: from its effects where declared, else as its booleans say."""
    from_effects = _derived(
        tuple((v.name, *map(tuple, (v.needs, v.adds, v.removes))) for v in verbs)
    )
    return {
        v.name: from_effects.get(v.name)
        or Derived(v.reads, v.moves, v.takes, v.reveals, v.irreversible, v.reverses)
        for v in verbs
    }


@lru_cache(maxsize=64)
def _derived(
    verbs: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...],
) -> dict[str, Derived]:
    """``derived`` of (name, needs, adds, removes); cached: the grounding asks every step."""
    return derived([(n, Effects(*map(parse_atoms, e))) for n, *e in verbs])


def meanings(verbs: Sequence[VerbSpec]) -> Meanings:
    """The verbs of ``verbs`` grouped by what they mean."""
    each = verb_meanings(verbs)
    arity = {v.name: bool(v.arg_kinds) for v in verbs}
    return Meanings(
        reads=frozenset(n for n, m in each.items() if m.reads and arity[n]),
        informs=frozenset(n for n, m in each.items() if m.reads),
        moves=frozenset(n for n, m in each.items() if m.moves),
        irreversible=frozenset(n for n, m in each.items() if m.irreversible),
        reveals=frozenset(n for n, m in each.items() if m.reveals),
        reverses={n: m.reverses for n, m in each.items() if m.reverses},
        takes=frozenset(n for n, m in each.items() if m.takes),
    )
