"""A TextWorld game's verbs' preconditions and effects, read from the game's own logic.

Every TextWorld game file carries its rules (``game.kb.rules``: ``take/c :: $at(P, r) & $at(c,
r) & $open(c) & in(o, c) -> in(o, I)``) and the command each rule is typed as
(``kb.inform7_commands``: ``take {o} from {c}``). Each rule is put in the project's vocabulary
(robomemory.effects) for the API verb its command names: the command's placeholders in order are
the verb's arguments, the player ``P`` is the robot, the room it stands in is ``here``, a thing
in the inventory ``I`` is held, a one-place fact of a thing is its state; facts of the world's
layout (links between rooms, which key fits, a recipe's ingredients) are left out. A verb with
several rules (take from the floor, a container or a support) needs what they all need and may
add or remove what any of them does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from robomemory.core import VerbSpec

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_KEPT = {"at", "in", "on", "open", "closed", "locked"}


class _Terms:
    """How a rule's placeholders read as terms of the vocabulary."""

    def __init__(self, rule, template: str, arity: int) -> None:
        args = _PLACEHOLDER.findall(template)[:arity]
        self.map = {name: f"${i}" for i, name in enumerate(args)}
        for pred in rule.preconditions:
            if pred.name == "at" and pred.parameters[0].name == "P":
                self.map.setdefault(pred.parameters[1].name, "here")
        self.map.setdefault("P", "robot")

    def __call__(self, name: str) -> str:
        return self.map.get(name) or f"?{name.lower()}"


def _atom(pred, terms: _Terms) -> str | None:
    """One TextWorld fact as an atom; None for a fact of the layout."""
    names = [p.name for p in pred.parameters]
    if pred.name == "in" and names[1] == "I":
        return f"held({terms(names[0])})"
    if pred.name in _KEPT and len(names) == (1 if pred.name in {"open", "closed", "locked"} else 2):
        return f"{pred.name}({', '.join(terms(n) for n in names)})"
    if len(names) == 1:
        return f"state({terms(names[0])}, {pred.name})"
    return None


def _verb_of(template: str, verbs: Sequence[VerbSpec]) -> VerbSpec | None:
    """The API verb a command is typed for: its name or one of its aliases begins the command
    (the longest that does)."""
    words = template.split()
    best: tuple[int, VerbSpec] | None = None
    for verb in verbs:
        for said in (verb.name.replace("_", " "), *verb.aliases):
            n = len(said.split())
            if words[:n] == said.split() and (best is None or n > best[0]):
                best = (n, verb)
    return best[1] if best else None


def rule_effects(kb, verbs: Sequence[VerbSpec]) -> dict[str, dict[str, list[str]]]:
    """Verb name -> ``{"needs": [...], "adds": [...], "removes": [...]}`` from the rules of a
    game's knowledge base ``kb`` (``textworld.Game.kb``), for the verbs of ``verbs`` some rule
    is typed for."""
    found: dict[str, list[tuple[list[str], list[str], list[str]]]] = {}
    commands: Mapping[str, str] = kb.inform7_commands
    for name, rule in kb.rules.items():
        template = commands.get(name)
        verb = _verb_of(template, verbs) if template else None
        if verb is None:
            continue
        terms = _Terms(rule, template, len(verb.arg_kinds))
        atoms = [
            [a for p in preds if (a := _atom(p, terms)) is not None]
            for preds in (rule.preconditions, rule.added, rule.removed)
        ]
        found.setdefault(verb.name, []).append((atoms[0], atoms[1], atoms[2]))
    out: dict[str, dict[str, list[str]]] = {}
    for name, rules in found.items():
        # sorted: a rule's facts come as a set, in no fixed order
        needs = sorted({a for a in rules[0][0] if all(a in r[0] for r in rules)})
        adds = sorted({a for r in rules for a in r[1]})
        removes = sorted({a for r in rules for a in r[2]})
        out[name] = {"needs": needs, "adds": adds, "removes": removes}
    return out


def with_effects(verbs: Sequence[VerbSpec], kb) -> list[VerbSpec]:
    """``verbs`` with the effects the game's rules declare for them (others as they are)."""
    effects = rule_effects(kb, verbs)
    return [
        VerbSpec.model_validate({**v.model_dump(), **effects[v.name]}) if v.name in effects else v
        for v in verbs
    ]
