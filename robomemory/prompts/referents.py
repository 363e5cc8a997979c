"""The referent judge: which thing in view is what the task describes ("a living thing"),
before an irreversible act on "the thing" that fails when the thing is wrong. The model
chooses one thing (or none) and a yes/no question confirms the choice: a small model judging
every thing at once marks too many (docs/results/HISTORY.md, "Evidence behind code choices").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, create_model

NONE = "none"

CHOOSE_SYSTEM = (
    "You judge things a robot sees. Answer the one thing of the list that is what the "
    "description says, by its name as written, or none when no thing of the list is."
)
CONFIRM_SYSTEM = "Answer yes or no."


class Referent(BaseModel):
    """The one thing, among those shown, that the description fits, or ``none``."""

    thing: str


class Confirmation(BaseModel):
    """Whether the chosen thing is what the description says."""

    answer: Literal["yes", "no"]


@lru_cache(maxsize=256)
def referent_model(names: tuple[str, ...]) -> type[Referent]:
    """The judge's answer for one prompt: one of the names shown, or ``none``."""
    options = names if NONE in names else (*names, NONE)
    return create_model("Referent", __base__=Referent, thing=(Literal[options], ...))  # type: ignore[valid-type]


def choose_user(described: str, names: Sequence[str]) -> str:
    """The judge's question: the things in view, and which one is the described thing."""
    return f"Things: {', '.join(names)}\n\nWhich one is a {described}?"


def confirm_user(thing: str, described: str) -> str:
    """The confirming question about the one thing chosen."""
    return f"Is a {thing} a {described}?"
