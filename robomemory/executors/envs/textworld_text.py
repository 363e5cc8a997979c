"""How the TextWorld executor talks to a game: what it asks the game to report, how it cleans
the game's text, and how it recognises a refusal."""

from __future__ import annotations

import re

from textworld import EnvInfos

GAME_INFOS = EnvInfos(
    admissible_commands=True,
    facts=True,
    objective=True,
    score=True,
    max_score=True,
    won=True,
    lost=True,
    inventory=True,
    description=True,
    entities=True,
    policy_commands=True,
    game=True,
)

# How the game says it did not understand or cannot do a command.
REFUSAL = re.compile(
    r"^(you can't|you can.t see|i only understood|that's not a verb|i didn't understand|"
    r"you don't|you do not|there is no|what do you want)",
    re.IGNORECASE,
)
_BANNER_LINE = re.compile(r"^(?=.*[_|$])[\s_|\\/$<>]+$")
_END_PROMPT = re.compile(r"\n*Would you like to RESTART.*$", re.DOTALL)
_PROMPT_TAIL = re.compile(r"\n>[^\n]*\s*$")


def clean_text(text: str) -> str:
    """Game output without the title banner and the trailing prompt/status line."""
    text = _END_PROMPT.sub("", _PROMPT_TAIL.sub("", text))
    lines = [line.rstrip() for line in text.splitlines() if not _BANNER_LINE.search(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def norm_name(name: str) -> str:
    """A name lower-cased with its whitespace collapsed."""
    return " ".join(name.lower().split())
