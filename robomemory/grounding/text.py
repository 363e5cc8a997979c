"""Words of texts and actions, as the grounding compares them."""

from __future__ import annotations

import re
from collections.abc import Sequence

WORD = re.compile(r"[a-z]+")
# Words too common to tie an action to a goal.
FILLER = frozenset({"the", "a", "an", "to", "of", "in", "on", "up", "down", "with", "and"})
# Words that join a thing to another: a place, a tool ("the box in the hall", "cut with").
LINKS = frozenset({"on", "to", "in", "into", "at", "with", "from", "off", "out"})


def word_list(text: str) -> list[str]:
    """The content words of ``text``, in order, lower-cased."""
    return [w for w in WORD.findall(text.lower()) if w not in FILLER]


def words(text: str) -> set[str]:
    """The content words of ``text``, lower-cased."""
    return set(word_list(text))


def parsed(action: str) -> tuple[str, list[str]]:
    """``("verb", [args])`` of an action's text ``verb(a, b)``."""
    verb, _, rest = action.partition("(")
    return verb, [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]


def first_at(seq: Sequence[str], part: Sequence[str]) -> int:
    """Where ``part`` first occurs in ``seq`` as consecutive words (len(seq) if nowhere)."""
    n = len(part)
    found = (i for i in range(len(seq) - n + 1) if list(seq[i : i + n]) == list(part))
    return next(found, len(seq))


def holds(seq: Sequence[str], part: Sequence[str]) -> bool:
    """Whether ``part`` is in ``seq``, its words one after another."""
    return bool(part) and first_at(seq, part) < len(seq)
