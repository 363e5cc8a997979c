"""The objects a robot knows, and where: the only names a skill prompt may contain.

Names come from the operator (``--objects banana@kitchen_counter,basket``), from perception and
from spatial memory (``note``, or ``sources`` polled on every look-up). A name must look like an
object name — at most four words of letters, digits, ``_``, ``-`` or ``'`` — so no instruction
text can ride into a π0 prompt through it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\-]*( [A-Za-z0-9][A-Za-z0-9_'\-]*){0,3}")
MAX_NAME = 40

ObjectSource = Callable[[], Iterable[str | tuple[str, str | None]]]
"""Returns names, or (name, point) pairs, the robot knows now (e.g. spatial memory's objects)."""


def is_object_name(name: str) -> bool:
    """True for a plain object name (≤ 4 words, ≤ 40 characters, no punctuation beyond _-')."""
    return isinstance(name, str) and len(name) <= MAX_NAME and NAME.fullmatch(name) is not None


def parse_spec(item: str) -> tuple[str, str | None]:
    """``"banana@kitchen_counter"`` → (banana, kitchen_counter); ``"basket"`` → (basket, None)."""
    name, _, where = item.partition("@")
    name, where = name.strip(), where.strip()
    if not is_object_name(name):
        raise ValueError(f"not an object name: {item!r} (at most 4 plain words)")
    return name, where or None


class KnownObjects:
    """Object name → the point it was last known at (None: anywhere / not known)."""

    def __init__(
        self, given: Sequence[str] | None = None, sources: Sequence[ObjectSource] = ()
    ) -> None:
        self._where: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self.sources = list(sources)
        for item in given or ():
            name, where = parse_spec(item)
            self._where[name] = where

    def note(self, names: Iterable[str], where: str | None = None) -> list[str]:
        """Record names seen (at ``where``); return the names refused as not object names."""
        refused = []
        with self._lock:
            for name in names:
                name = name.strip() if isinstance(name, str) else name
                if is_object_name(name):
                    self._where[name] = where if where is not None else self._where.get(name)
                else:
                    refused.append(name)
        return refused

    def _polled(self) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for source in self.sources:
            for item in source():
                name, where = item if isinstance(item, tuple) else (item, None)
                if is_object_name(name):
                    found[name] = where
        return found

    def snapshot(self) -> dict[str, str | None]:
        """Every known object and its point, the polled sources overriding older notes."""
        with self._lock:
            known = dict(self._where)
        known.update(self._polled())
        return known

    def names(self) -> list[str]:
        return list(self.snapshot())

    def at(self, point: str | None) -> list[str]:
        """Objects known at ``point`` plus those with no known place."""
        return [n for n, w in self.snapshot().items() if w is None or w == point]
