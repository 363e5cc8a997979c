"""Prompts and response schemas of spatial memory (paper Algorithm 2): extractor and resolver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

# Bounded sizes: the json_schema grammar then bounds the answer, so it never runs past max_tokens.
Name = Annotated[str, StringConstraints(max_length=40)]

# A fixed relation vocabulary keeps the map canonical ("cup on table" vs "cup in drawer" are
# then comparable) and lets the grammar stop a small model from inventing relations.
RELATIONS = (
    "in", "on", "at", "hold", "near", "under", "left_of", "right_of",
    "north_of", "south_of", "east_of", "west_of",
)  # fmt: skip
RelationName = Literal[RELATIONS]  # type: ignore[valid-type]


class Relation(BaseModel):
    """One spatial relation: subject, relation, object (e.g. apple / in / fridge)."""

    subject: Name
    relation: RelationName
    object: Name


class ExtractedRelations(BaseModel):
    """Relation extractor answer: the spatial relations s_t states (G_new)."""

    # maxItems bounds what the model generates (a small model may loop listing relations; the
    # grammar then closes the list); it is not a validation limit on callers.
    relations: list[Relation] = Field(default_factory=list, json_schema_extra={"maxItems": 12})


class EdgeModify(BaseModel):
    """Replace edge ``id`` by a corrected relation (the old edge is kept as history)."""

    id: int
    subject: Name
    relation: RelationName
    object: Name


class ResolverDecision(BaseModel):
    """Conflict resolver answer: operations against the integer edge ids it was shown."""

    delete: list[int] = Field(default_factory=list, max_length=24)
    modify: list[EdgeModify] = Field(default_factory=list, max_length=24)
    add: list[Relation] = Field(default_factory=list, max_length=24)


EXTRACT_SYSTEM = (
    "List where things are now, as subject/relation/object triples, only for objects the "
    "observation names. 'I' is the robot. Relations: in, on, at, near, hold, under, left_of, "
    "right_of, and north_of etc. for rooms. Use 'I hold X' only if the robot took X. Short "
    "names. Example: 'You are in the garage. A wrench is on the bench. You take the torch.' "
    "-> I at garage, wrench on bench, I hold torch."
)

RESOLVE_SYSTEM = (
    "You keep a robot's spatial map consistent. New edges come from the latest observation and "
    "are true now. Return the ids of known edges they make false in delete, corrected known edges "
    "in modify, missing relations in add. Use only the known ids; empty lists if no conflict."
)


def extract_user(summary: str) -> str:
    """User message of the relation extractor."""
    return f"Observation: {summary}"


def resolve_user(known: Sequence[tuple[int, str]], new: Sequence[str]) -> str:
    """User message of the conflict resolver: G_local's old edges by id, then G_new."""
    lines = ["Known edges:"]
    lines += [f"{i}: {text}" for i, text in known] or ["(none)"]
    lines.append("New edges:")
    lines += [f"- {text}" for text in new] or ["(none)"]
    return "\n".join(lines)
