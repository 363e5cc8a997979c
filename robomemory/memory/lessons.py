"""Action lessons as long-term memory stores them: "<action> helped|hurt: <what the world
said>". One format, written by consolidation and read by the Mem0 update and the grounding."""

from __future__ import annotations

import re

LESSON_MESSAGE_CHARS = 100
_LESSON = re.compile(r"(?P<action>[a-z_]+\([^()]*\)) (?P<verdict>helped|hurt): ")


def lesson_text(action: str, verdict: str, message: str) -> str:
    """An action lesson as memory stores it: the step, the verdict and what the world said,
    e.g. ``cook(red onion, oven) hurt: You burned the red onion! *** You lost! ***``."""
    said = " ".join(message.split())[:LESSON_MESSAGE_CHARS]
    return f"{action} {verdict}: {said}".rstrip()


def lesson_action(text: str) -> str | None:
    """The action an action lesson is about, or None when ``text`` is no action lesson."""
    m = _LESSON.match(text.strip())
    return m["action"] if m else None


def lesson_key(text: str) -> tuple[str, str] | None:
    """(action, verdict) of an action lesson, or None when ``text`` is no action lesson."""
    m = _LESSON.match(text.strip())
    return (m["action"], m["verdict"]) if m else None


def lesson_actions(text: str) -> tuple[list[str], list[str]]:
    """(helped, hurt) actions of the action lessons in ``text`` (e.g. recalled memory)."""
    helped: list[str] = []
    hurt: list[str] = []
    for m in _LESSON.finditer(text):
        (helped if m["verdict"] == "helped" else hurt).append(m["action"])
    return helped, hurt


_VERDICT_LINE = re.compile(r"^- \[semantic/verdict [^\]]*\] (?P<lesson>.*)$", re.MULTILINE)


def verdict_actions(text: str) -> tuple[list[str], list[str]]:
    """(helped, hurt) actions of the world's verdicts in recalled memory ``text`` (the lines
    of level "verdict": facts of this very task, recalled by it only)."""
    return lesson_actions("\n".join(m["lesson"] for m in _VERDICT_LINE.finditer(text)))


_WHERE = re.compile(r"(?P<action>[a-z_]+\([^()]*\)) helped: score \S+ -> \S+ at (?P<place>[^:]+):")


def verdict_places(text: str) -> dict[str, str]:
    """action -> where it was done, of the helped verdicts in recalled memory ``text``
    ("focus_on(axe) helped: score 25 -> 75 at outside: ..." -> {"focus_on(axe)": "outside"})."""
    lines = "\n".join(m["lesson"] for m in _VERDICT_LINE.finditer(text))
    return {m["action"]: m["place"].strip() for m in _WHERE.finditer(lines)}
