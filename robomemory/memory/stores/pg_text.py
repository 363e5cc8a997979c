"""Text that PostgreSQL can hold: its ``text`` and ``jsonb`` refuse NUL (U+0000), which a model
may well answer. Every string a store writes is escaped and every one it reads unescaped, so a
lesson holding NUL is stored and read back as it was written, as the local backend does.

The escape is reversible: NUL becomes ``ESC + "0"`` and ``ESC`` itself ``ESC + "1"``, where
``ESC`` is a private-use character (U+E000); strings without either are unchanged, so rows
written before this escape read as they were.
"""

from __future__ import annotations

import re
from typing import Any

ESC = "\ue000"
_TO = re.compile("[\x00\ue000]")
_FROM = re.compile("\ue000([01])")


def escape(text: str) -> str:
    """``text`` with no NUL (reversed by :func:`unescape`)."""
    return _TO.sub(lambda m: ESC + ("0" if m[0] == "\x00" else "1"), text)


def unescape(text: str) -> str:
    return _FROM.sub(lambda m: "\x00" if m[1] == "0" else ESC, text)


def to_pg(value: Any) -> Any:
    """``value`` with every string in it (dict keys too) escaped."""
    return _map(value, escape)


def from_pg(value: Any) -> Any:
    """``value`` as written: every string in it unescaped."""
    return _map(value, unescape)


def _map(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {_map(k, fn): _map(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_map(v, fn) for v in value]
    return value
