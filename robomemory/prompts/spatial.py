"""Prompts and response schemas of spatial memory (paper Algorithm 2): extractor and resolver."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, create_model

from robomemory.core import PLACEMENT_RELATIONS, RELATIONS
from robomemory.prompts.strict import StrictAnswer

# Bounded sizes: the json_schema grammar then bounds the answer, so it never runs past max_tokens.
Name = Annotated[str, StringConstraints(max_length=40)]

RelationName = Literal[RELATIONS]  # type: ignore[valid-type]


class Relation(BaseModel):
    """One spatial relation: subject, relation, object (e.g. apple / in / fridge)."""

    subject: Name
    relation: RelationName
    object: Name


class ExtractedTriples(BaseModel):
    """Free-form relation extractor answer (no grounding): the relations s_t states (G_new)."""

    # maxItems bounds what the model generates (a small model may loop listing relations; the
    # grammar then closes the list); it is not a validation limit on callers.
    relations: list[Relation] = Field(default_factory=list, json_schema_extra={"maxItems": 12})


class ResolverDecision(StrictAnswer):
    """Conflict resolver answer: the ids, among those it was shown, of the known edges the new
    edges make false. The new edges themselves are always added: they are what the robot
    observes now. (A "modify" is a deletion plus a new edge; asking only for ids keeps the
    answer to a few generated tokens.)"""

    # Strict, as the Mem0 updater (the same parse): true and 1.0 are no edge ids, and a
    # duplicate key is refused (an id invalidates an edge).
    delete: list[int] = Field(max_length=24, description="ids of known edges false now")


def _edge_id(value: object) -> object:
    """An edge id is a JSON integer: a Literal of ints alone takes true and 1.0 as 1."""
    if type(value) is not int:
        raise ValueError(f"edge id {value!r} is no integer")
    return value


@lru_cache(maxsize=256)
def resolver_model(ids: tuple[int, ...]) -> type[ResolverDecision]:
    """The resolver's answer for one prompt: ids only among those shown."""
    if not ids:
        return ResolverDecision
    Id = Annotated[Literal[ids], BeforeValidator(_edge_id)]  # type: ignore[valid-type]
    return create_model(
        "ResolverDecision",
        __base__=ResolverDecision,
        delete=(list[Id], Field(max_length=len(ids), description="ids of known edges false now")),
    )


GROUNDED_EXTRACT_SYSTEM = (
    "Say where each thing is now, as the observation states it: for each thing, its relation "
    "(in, on, at, near, under) and its holder: the container or support it is in or on, or "
    "the room when the observation names no holder."
)

EXTRACT_SYSTEM = (
    "List where things are now, as subject/relation/object triples, only for objects the "
    "observation names. 'I' is the robot. Relations: in, on, at, near, hold, under, left_of, "
    "right_of, and north_of etc. for rooms. Use 'I hold X' only if the robot took X. Short "
    "names. Example: 'You are in the garage. A wrench is on the bench. You take the torch.' "
    "-> I at garage, wrench on bench, I hold torch."
)

RESOLVE_SYSTEM = (
    "You keep a robot's spatial map consistent. New edges come from the latest observation: "
    "they are true now and go into the map. A thing is in one place: a known edge is false "
    "when a new edge puts the same thing somewhere else (or the robot holds it now). Answer "
    "the ids of the known edges that are false now; every other known edge is kept."
)


def extract_user(summary: str, names: Sequence[str] = ()) -> str:
    """User message of the relation extractor; with grounding, the names it may use first."""
    if names:
        return f"Names: {', '.join(names)}\nObservation: {summary}"
    return f"Observation: {summary}"


@lru_cache(maxsize=256)
def grounded_relations_model(
    names: tuple[str, ...], place: str | None, fixtures: tuple[str, ...] = ()
) -> type[BaseModel]:
    """The grounded extractor's answer: where each named thing is, as an object whose keys are
    the names the observation shows, less the ``fixtures`` (whose place is known), and whose
    values are ``[relation, holder]``.

    The schema itself keeps the map sane for a small model: one location per thing, a holder
    among the names shown (or the room), never the thing itself, relations from the placement
    vocabulary."""
    fields: dict = {}
    for i, name in enumerate(n for n in names if n != place and n not in fixtures):
        holders = tuple(h for h in (*names, *([place] if place else [])) if h != name)
        if not holders:
            continue
        where = tuple[Literal[PLACEMENT_RELATIONS], Literal[holders]]  # type: ignore[valid-type]
        fields[f"n{i}"] = (where | None, Field(default=None, alias=name))
    return create_model(
        "ExtractedRelations",
        __config__=ConfigDict(extra="forbid", populate_by_name=False),
        **fields,
    )


def grounded_triples(answer: BaseModel) -> list[tuple[str, str, str]]:
    """(thing, relation, holder) for every thing the grounded answer places."""
    out = []
    for field, info in type(answer).model_fields.items():
        value = getattr(answer, field)
        if value is not None:
            out.append((info.alias or field, value[0], value[1]))
    return out


def relation_parts(relation: Relation) -> tuple[str, str, str]:
    """(subject, relation, object) of a free-form extracted relation."""
    return (relation.subject, relation.relation, relation.object)


def resolve_user(known: Sequence[tuple[int, str]], new: Sequence[str]) -> str:
    """User message of the conflict resolver: G_local's old edges by id, then G_new."""
    lines = ["Known edges:"]
    lines += [f"{i}: {text}" for i, text in known] or ["(none)"]
    lines.append("New edges:")
    lines += [f"- {text}" for text in new] or ["(none)"]
    return "\n".join(lines)
