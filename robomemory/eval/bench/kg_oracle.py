"""An oracle for the spatial model calls, fed from a TextWorld game's ground-truth ``facts``.

It is a FAKE model (used through ``ScriptedChatModel``) standing in for a perfect relation
extractor and conflict resolver, so the spatial KG can be replayed and checked without a model:
- extractor: the relations the robot can perceive now — itself in the current room, what lies
  in the room, on visible supporters, in visible open containers, what it holds, and the room's
  exits;
- resolver: deletes every edge it is shown that the current perception contradicts: an edge about
  a perceived entity, or into a fully perceived holder (room, supporter, open container, the
  robot), that the perception does not restate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, TypeAdapter, ValidationError
from textworld.logic import Proposition

from robomemory.memory.base import Triple
from robomemory.memory.spatial import make_triple, normalize_name
from robomemory.prompts.spatial import ExtractedTriples, Relation, ResolverDecision
from robomemory.testing import message_text

DIRECTION_FACTS = ("north_of", "south_of", "east_of", "west_of")
_HIDDEN_TYPES = frozenset({"RECIPE", "ingredient"})
Key = tuple[str, str, str]


@dataclass
class Perception:
    """What the robot perceives now, as normalized triples."""

    room: str = ""
    triples: list[Key] = field(default_factory=list)
    entities: set[str] = field(default_factory=set)
    holders: set[str] = field(default_factory=set)


def _rel(subject: str, relation: str, obj: str) -> Key | None:
    t = make_triple(subject, relation, obj)
    return None if t is None else (t.subject, t.relation, t.object)


def perceive(facts: Iterable[Proposition]) -> Perception:
    """The visible part of the world in ``facts`` (see the module docstring)."""
    facts = [f for f in facts if all(a.type not in _HIDDEN_TYPES for a in f.arguments)]
    room = next(
        (f.arguments[1].name for f in facts if f.name == "at" and f.arguments[0].type == "P"), ""
    )
    opened = {f.arguments[0].name for f in facts if f.name == "open" and len(f.arguments) == 1}
    out: list[Key | None] = [_rel("I", "at", room)]
    visible = {room}
    holders = {room}
    for f in facts:
        if f.name == "at" and f.arguments[1].name == room and f.arguments[0].type != "P":
            out.append(_rel(f.arguments[0].name, "at", room))
            visible.add(f.arguments[0].name)
        elif f.name == "in" and f.arguments[1].type == "I":
            out.append(_rel("I", "hold", f.arguments[0].name))
            visible.add(f.arguments[0].name)
        elif f.name in DIRECTION_FACTS and room in (f.arguments[0].name, f.arguments[1].name):
            out.append(_rel(f.arguments[0].name, f.name, f.arguments[1].name))
    changed = True
    while changed:  # things on visible supporters and in visible open containers, recursively
        changed = False
        for f in facts:
            if f.name not in ("on", "in") or len(f.arguments) != 2:
                continue
            thing, holder = f.arguments[0].name, f.arguments[1].name
            if holder not in visible or thing in visible or f.arguments[1].type == "I":
                continue
            if f.name == "in" and holder not in opened:
                continue
            out.append(_rel(thing, f.name, holder))
            visible.add(thing)
            holders.add(holder)
            changed = True
    holders |= {name for name in visible if name in opened}
    holders |= {
        f.arguments[0].name
        for f in facts
        if f.name == "at" and f.arguments[1].name == room and f.arguments[0].type == "s"
    }
    return Perception(
        room=normalize_name(room),
        triples=list(dict.fromkeys(k for k in out if k is not None)),
        entities={normalize_name(n) for n in visible if n} | {"I"},
        holders={normalize_name(h) for h in holders if h} | {"I"},
    )


class FactsOracle:
    """A FAKE model answering the spatial extractor and resolver from the game's facts."""

    def __init__(self) -> None:
        self.now = Perception()
        self._texts: dict[str, Key] = {}
        self.deleted = 0

    def observe(self, facts: Iterable[Proposition]) -> Perception:
        """Update what the oracle perceives (call after every game step)."""
        self.now = perceive(facts)
        for k in self.now.triples:
            self._texts[Triple(subject=k[0], relation=k[1], object=k[2]).text()] = k
        return self.now

    def __call__(self, schema: type[BaseModel], messages: Sequence[BaseMessage]) -> BaseModel:
        if schema is ExtractedTriples:
            return ExtractedTriples(
                relations=[
                    Relation(subject=s, relation=r, object=o) for s, r, o in self.now.triples
                ]
            )
        if schema.__name__ == "ExtractedRelations":  # grounded: where each given name is
            keys = {info.alias for info in schema.model_fields.values()}
            answer: dict[str, list[str]] = {}
            for s, r, o in self.now.triples:
                if s in keys and s not in answer:
                    answer[s] = [r, o]
            for key in keys - set(answer):  # every thing shown must be placed: its room
                answer[key] = ["at", self.now.room]
            return schema.model_validate(
                {k: v for k, v in answer.items() if _fits_one(schema, k, v)}
                | {
                    k: ["at", self.now.room]
                    for k, v in answer.items()
                    if not _fits_one(schema, k, v)
                }
            )
        if issubclass(schema, ResolverDecision):
            return ResolverDecision(delete=self._contradicted(message_text(messages)))
        raise KeyError(f"the facts oracle does not answer {schema.__name__}")

    def _contradicted(self, prompt: str) -> list[int]:
        now = set(self.now.triples)
        out: list[int] = []
        for line in prompt.splitlines():
            head, sep, text = line.partition(": ")
            if not sep or not head.strip().isdigit():
                continue
            key = self._texts.get(text.strip())
            if key is None or key in now:
                continue
            s, _, o = key
            if s in self.now.entities or o in self.now.holders:
                out.append(int(head))
        self.deleted += len(out)
        return out


def _fits_one(schema: type[BaseModel], name: str, where: list[str]) -> bool:
    """Whether a thing's placement is expressible in a grounded extractor schema (a holder the
    schema does not offer cannot be said)."""
    field = next(f for f, info in schema.model_fields.items() if info.alias == name)
    try:
        TypeAdapter(schema.model_fields[field].annotation).validate_python(tuple(where))
    except ValidationError:
        return False
    return True


def kg_location(triples: Iterable[Triple], name: str) -> tuple[str, str] | None:
    """Where the KG says ``name`` is, as ``world_locations`` spells it: (relation, holder)."""
    for t in triples:
        if not t.valid:
            continue
        if t.subject == name and t.relation in ("in", "on", "at"):
            return (t.relation, t.object)
        if t.subject == "I" and t.relation == "hold" and t.object == name:
            return ("in", "inventory")
    return None


def location_accuracy(
    triples: Sequence[Triple], truth: dict[str, tuple[str, str]], seen: set[str]
) -> tuple[int, int, list[str]]:
    """(correct, checked, wrong names) over the objects of ``truth`` the robot has seen."""
    wrong: list[str] = []
    checked = 0
    for name, (relation, holder) in sorted(truth.items()):
        if normalize_name(name) not in seen:
            continue
        checked += 1
        got = kg_location(triples, normalize_name(name))
        want = (relation, holder if holder == "inventory" else normalize_name(holder))
        if got != want:
            wrong.append(f"{name}: kg {got} vs world {want}")
    return checked - len(wrong), checked, wrong
