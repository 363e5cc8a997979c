"""The core types every layer shares: actions, observations, results, action spaces, and
the :class:`Executor` protocol a world or a robot implements.

This module imports nothing of robomemory's own: prompts, grounding, memory, nodes and the
executors all build on it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from robomemory.effects import Effects, parse_atoms

TASK_COMPLETE = "task_complete"
"""The verb by which the agent declares its task done (it ends the episode)."""


# The spatial map's relation vocabulary: fixed, so the map stays canonical ("cup on table" and
# "cup in drawer" are comparable) and the grammar stops a small model inventing relations.
RELATIONS = (
    "in", "on", "at", "hold", "near", "under", "left_of", "right_of",
    "north_of", "south_of", "east_of", "west_of",
)  # fmt: skip
# Where a thing is, relative to its holder; the robot's own facts (place, holdings) come from
# grounding, not from the extractor, and room adjacency from the map.
PLACEMENT_RELATIONS = ("in", "on", "at", "near", "under")


class Outcome(StrEnum):
    """How an action ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABORTED = "aborted"
    CANCELED = "canceled"
    TIMEOUT = "timeout"
    REJECTED = "rejected"
    ERROR = "error"


class Observation(BaseModel):
    """What the agent perceives: text, optional images (data URLs), and world feedback."""

    text: str = ""
    images: list[str] = Field(default_factory=list, description="data:image/...;base64 URLs")
    score: float | None = None
    max_score: float | None = None
    done: bool = False
    won: bool = False
    lost: bool = False
    place: str | None = Field(default=None, description="Where the robot is, when the world says.")
    world: str | None = Field(
        default=None,
        description="A digest of the world's whole state, when the world can tell (the same "
        "digest means the same state: loop breaking).",
    )
    holding: list[str] = Field(
        default_factory=list, description="What the robot holds, when it can tell."
    )
    holding_known: bool = Field(
        default=False,
        description="The world reports what is held at every step: an empty ``holding`` "
        "then means empty hands (a thing put down is no longer held on the map).",
    )
    hands: int | None = Field(
        default=None,
        ge=1,
        description="How many things the robot can hold at once, when the world limits it "
        "(a gripper holds one): with that many held, nothing more can be taken.",
    )
    names: list[str] = Field(
        default_factory=list,
        description="Names of the things this observation shows, in the world's own words "
        "(grounds perception: the extractor may only name what is really there).",
    )
    fixtures: list[str] = Field(
        default_factory=list,
        description="Those of ``names`` the world says never move (furniture, appliances, "
        "doors): each is in the room it is seen in, so the map places it without a model call.",
    )
    exits: dict[str, str] = Field(
        default_factory=dict,
        description="Where each way out of here leads, when the world says: a move's argument "
        "-> the place ('west' -> 'basement').",
    )
    links: list[tuple[str, str]] = Field(
        default_factory=list,
        description="Pairs of places a text of this step says are joined (a map that was read).",
    )

    def bounded(self, limits: TextLimits) -> Observation:
        """This observation within ``limits``: what state, checkpoints and prompts may take."""
        name = limits.name_chars
        images = [u for u in self.images if len(u) <= limits.image_chars][: limits.images]
        return self.model_copy(
            update={
                "text": clip(self.text, limits.text_chars),
                "images": images,
                "place": clip(self.place, name) if self.place is not None else None,
                "holding": [clip(n, name) for n in self.holding[: limits.names]],
                "names": [clip(n, name) for n in self.names[: limits.names]],
                "fixtures": [clip(n, name) for n in self.fixtures[: limits.names]],
                "exits": {
                    clip(k, name): clip(v, name)
                    for k, v in list(self.exits.items())[: limits.names]
                },
                "links": [(clip(a, name), clip(b, name)) for a, b in self.links[: limits.names]],
            }
        )


class TextLimits(NamedTuple):
    """Bounds on what a world returns (``nodes.common.text_limits`` gives the configured ones)."""

    text_chars: int = 8_000
    name_chars: int = 100
    names: int = 100
    image_chars: int = 4_000_000
    images: int = 4


class Action(BaseModel):
    """One high-level action of the action API (paper Table 4), e.g. pick_up(apple)."""

    verb: str
    args: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.verb}({', '.join(self.args)})"


# What a prompt shows of a task: a longer one is condensed (:func:`task_view`), kept whole in state.
TASK_VIEW_CHARS = 1_500
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def task_view(task: str, limit: int = TASK_VIEW_CHARS) -> str:
    """``task`` as a prompt shows it: whole when it fits ``limit``; else its first sentence
    and as many of its last sentences as fit, verbatim, the middle left out and marked. A
    task's goal is where it ends ("... and take the coin"), its frame where it starts."""
    text = " ".join(task.split())
    if len(text) <= limit:
        return text
    sentences = [s.strip() for s in _SENTENCE_END.split(task) if s.strip()]
    sentences = [" ".join(s.split()) for s in sentences]
    head = sentences[0] if len(sentences) > 1 and len(sentences[0]) <= limit // 4 else ""
    room = limit - len(head) - 60  # the mark and its spaces
    tail: list[str] = []
    for sentence in reversed(sentences[1:] if head else sentences):
        if len(sentence) + 1 > room - sum(len(t) + 1 for t in tail):
            break
        tail.insert(0, sentence)
    if not tail:  # the last sentence alone is too long: its end, in whole words
        end = (sentences[-1] if sentences else text)[-room:]
        tail = [end.split(" ", 1)[-1] if " " in end else end]
    left = len(text) - len(head) - sum(len(t) + 1 for t in tail)
    mark = f"[... {left} characters of the task left out ...]"
    return " ".join(p for p in (head, mark, *tail) if p)


class TaskTooLongError(ValueError):
    """A task longer than the configured bound (protection against abuse, not a prompt limit)."""


def checked_task(task: str, limit: int) -> str:
    """``task`` whole, or :class:`TaskTooLongError` when it exceeds ``limit`` characters."""
    if len(task) > limit:
        raise TaskTooLongError(
            f"the task is {len(task):,} characters, over max_task_chars ({limit:,}); a task is "
            "kept whole and shown condensed, so this bound only refuses abuse"
        )
    return task


ECHO_CHARS = 80


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as an error message shows it (its repr; a text quoted), at most ``limit``
    characters of it and its length when it is longer: an error echoes input from outside
    and stays one short line."""
    if isinstance(value, str):
        return (
            repr(value)
            if len(value) <= limit
            else f"{value[:limit]!r}... ({len(value):,} characters)"
        )
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked where it was cut."""
    if len(text) <= limit:
        return text
    mark = " [cut]"
    return text[: max(limit - len(mark), 0)] + mark


class ActionResult(BaseModel):
    """The outcome of executing one action; the message is written for the planner to read."""

    action: Action
    outcome: Outcome
    message: str = ""
    error_code: int | None = None
    observation: Observation = Field(default_factory=Observation)
    duration_s: float = 0.0
    details: dict = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the action succeeded."""
        return self.outcome == Outcome.SUCCEEDED

    def bounded(self, limits: TextLimits) -> ActionResult:
        """This result within ``limits``; ``details`` too large for them are left out."""
        details = self.details
        if len(repr(details)) > limits.text_chars:
            details = {"left_out": f"details over {limits.text_chars} characters"}
        return self.model_copy(
            update={
                "message": clip(self.message, limits.text_chars),
                "observation": self.observation.bounded(limits),
                "details": details,
            }
        )


class VerbSpec(BaseModel):
    """A verb the executor understands and the kinds of its arguments."""

    name: str
    arg_kinds: list[str] = Field(default_factory=list, description="e.g. ['object'], ['place']")
    description: str = ""
    aliases: list[str] = Field(
        default_factory=list,
        description="Words instructions use for this verb (e.g. fry, roast for cook).",
    )
    alias_args: dict[str, list[str]] = Field(
        default_factory=dict,
        description="The arguments after the first that an alias fixes: with "
        "{'grill': ['BBQ']}, 'grill the apple' asks for cook(apple, BBQ) and no other cook.",
    )
    # What the verb means to the grounding: each world declares it, so the general agent
    # keeps no list of verbs of its own.
    reads: bool = Field(
        default=False, description="Only reads the world (examine, look): changes nothing."
    )
    moves: bool = Field(default=False, description="Takes the robot to another place.")
    reverses: str | None = Field(
        default=None, description="The verb whose effect this one undoes (close: open)."
    )
    irreversible: bool = Field(
        default=False, description="Its effect cannot be undone (cut, cook, commit)."
    )
    reveals: bool = Field(
        default=False, description="Shows what is inside a thing (open a container, look in)."
    )
    takes: bool = Field(
        default=False, description="Puts the thing in the robot's hands (pick up, grasp)."
    )
    done_at: str | None = Field(
        default=None,
        description="The one place the world lets this act be done (charge: the dock), "
        "offered there only once what it needs is held.",
    )
    # Preconditions and effects (robomemory.effects): where a verb declares them, the meanings
    # above follow from them (grounding.meanings) instead of the booleans.
    needs: list[str] = Field(
        default_factory=list, description="Atoms true before it, e.g. 'held($0)', 'at($1, here)'."
    )
    adds: list[str] = Field(default_factory=list, description="Atoms it makes true.")
    removes: list[str] = Field(default_factory=list, description="Atoms it makes false.")

    @field_validator("needs", "adds", "removes")
    @classmethod
    def _atoms(cls, value: list[str]) -> list[str]:
        parse_atoms(value)
        return value

    def effects(self) -> Effects:
        """Its needs, adds and removes, parsed."""
        return Effects(parse_atoms(self.needs), parse_atoms(self.adds), parse_atoms(self.removes))


class ActionSpace(BaseModel):
    """An executor's published action space: verbs, argument kinds and the valid targets."""

    verbs: list[VerbSpec]
    targets: dict[str, list[str]] = Field(
        default_factory=dict, description="argument kind -> currently valid names"
    )
    fallback: Action | None = Field(
        default=None, description="A harmless action the planner falls back to."
    )
    candidates: list[Action] = Field(
        default_factory=list,
        description="Concrete actions valid now, from the world's own affordances (grounding).",
    )

    def verb(self, name: str) -> VerbSpec | None:
        """The verb called ``name``, None when there is none."""
        return next((v for v in self.verbs if v.name == name), None)

    def all_targets(self) -> list[str]:
        """Every valid name of every argument kind, in order, once."""
        seen: dict[str, None] = {}
        for names in self.targets.values():
            for name in names:
                seen.setdefault(name, None)
        return list(seen)

    def validate_action(self, action: Action) -> str | None:
        """Return None when the action is valid, else a message listing the valid choices."""
        spec = self.verb(action.verb)
        if spec is None:
            return f"unknown action {action.verb!r}; valid: {', '.join(v.name for v in self.verbs)}"
        if len(action.args) != len(spec.arg_kinds):
            return (
                f"{spec.name} takes {len(spec.arg_kinds)} argument(s) "
                f"({', '.join(spec.arg_kinds) or 'none'}), got {len(action.args)}"
            )
        for arg, kind in zip(action.args, spec.arg_kinds, strict=True):
            valid = self.targets.get(kind)
            if valid is not None and arg not in valid:
                shown = ", ".join(valid[:30]) or "none known yet"
                return f"unknown {kind} {arg!r} for {spec.name}; valid: {shown}"
        return None

    def describe(self) -> str:
        """Compact text of the API for prompts."""
        lines = []
        for v in self.verbs:
            sig = f"{v.name}({', '.join(v.arg_kinds)})"
            lines.append(f"- {sig}: {v.description}" if v.description else f"- {sig}")
        return "\n".join(lines)


@runtime_checkable
class Executor(Protocol):
    """A world or a robot that carries out high-level actions."""

    def reset(self) -> tuple[str, Observation]:
        """Start (or restart) the task; return the task text and the first observation."""
        ...

    def action_space(self) -> ActionSpace:
        """The verbs and the currently valid targets."""
        ...

    def execute(
        self,
        action: Action,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ActionResult:
        """Carry out one action. Never raises for a rejected or failed action."""
        ...

    def emergency_stop(self) -> None:
        """Stop all motion at once."""
        ...

    def close(self) -> None:
        """Release the world or the robot's connections."""
        ...


@runtime_checkable
class Replayable(Protocol):
    """An executor that can bring its world back to a trajectory (a resumed run needs it)."""

    def replay(self, actions: Sequence[Action]) -> list[ActionResult]:
        """Run ``actions`` again from a fresh reset; return their results."""
        ...


class Route(NamedTuple):
    """A way between two rooms: going ``direction`` from ``src`` leads to ``dst``."""

    src: str
    direction: str
    dst: str


@runtime_checkable
class PlaceLearner(Protocol):
    """An executor whose navigation can go to the places the robot's memory of this world
    knows from earlier tasks (a teleport "to any known room": a world lists only the rooms
    seen from here)."""

    def learn_places(self, places: Sequence[str]) -> int:
        """Add ``places`` to those navigation may go to this episode; return how many are
        places of this world."""
        ...


@runtime_checkable
class RouteLearner(Protocol):
    """An executor whose navigation can use routes remembered from earlier tasks in the same
    world (as a robot is given the ways between rooms its memory knows)."""

    def learn_routes(self, routes: Sequence[Route]) -> int:
        """Add ``routes`` to what navigation knows for this episode; return how many were
        usable (both ends rooms of this world)."""
        ...
