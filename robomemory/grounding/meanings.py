"""What the API's verbs mean to the grounding, as the executor declares them (``VerbSpec``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from robomemory.core import VerbSpec


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


def meanings(verbs: Sequence[VerbSpec]) -> Meanings:
    """The verbs of ``verbs`` grouped by what they mean."""
    return Meanings(
        reads=frozenset(v.name for v in verbs if v.reads and v.arg_kinds),
        informs=frozenset(v.name for v in verbs if v.reads),
        moves=frozenset(v.name for v in verbs if v.moves),
        irreversible=frozenset(v.name for v in verbs if v.irreversible),
        reveals=frozenset(v.name for v in verbs if v.reveals),
        reverses={v.name: v.reverses for v in verbs if v.reverses},
        takes=frozenset(v.name for v in verbs if v.takes),
    )
