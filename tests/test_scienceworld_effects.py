"""ScienceWorld declares its action model in one table (scienceworld.EFFECTS); what it derives
(robomemory.effects) is what its verbs' booleans say, verb by verb (no JVM)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from robomemory.core import TASK_COMPLETE
from robomemory.effects import parse_atoms
from robomemory.executors.envs.scienceworld import EFFECTS, VERBS, ScienceWorldExecutor
from robomemory.grounding.meanings import verb_meanings

# without effects: look_in is a read the grounding searches by (a reveal), which effects can't say
UNDECLARED = {"look_in", TASK_COMPLETE}
APIS = {"go": VERBS, "teleport": ScienceWorldExecutor._verbs_for("easy")}


def _without(verbs):
    return [replace(v, needs=(), adds=(), removes=()).spec() for v in verbs]


def test_every_verb_but_the_undeclared_has_effects():
    assert set(EFFECTS) == {v.name for v in VERBS} - UNDECLARED
    assert all(v.needs or v.adds for v in VERBS if v.name in EFFECTS)


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_every_atom_parses(name):
    for atoms in EFFECTS[name]:
        assert len(parse_atoms(atoms)) == len(atoms)


@pytest.mark.parametrize("api", sorted(APIS))
@pytest.mark.parametrize("name", [v.name for v in VERBS])
def test_the_effects_derive_the_declared_meanings(api, name):
    verbs = APIS[api]
    with_table = verb_meanings([v.spec() for v in verbs])
    assert with_table[name] == verb_meanings(_without(verbs))[name]


def test_a_focus_is_irreversible_and_a_teleport_needs_no_door():
    meaning = verb_meanings([v.spec() for v in VERBS])
    assert meaning["focus_on"].irreversible and not meaning["focus_on"].reads
    nav = next(v for v in APIS["teleport"] if v.name == "navigate_to")
    assert nav.template == "teleport to {0}" and nav.adds == EFFECTS["navigate_to"][1]
    assert not any("door" in atom for atom in nav.needs)


def test_a_thing_to_move_to_a_box_not_here_is_taken_first():
    """A find task read ("focus on the thing. Then, move it to the red box in the kitchen",
    the thing named): the box not in view, the move is done carried, so the take leads once
    the focus is done (with a move that needed nothing held, the take was irrelevant and the
    robot searched on without the tree)."""
    from robomemory.core import Action, ActionSpace
    from robomemory.grounding import Scene, WorldModel, brief

    verbs = [v.spec() for v in APIS["teleport"]]
    task = "Focus on the apple tree. Then move the apple tree to the red box in the kitchen."
    offered = ["pick_up(apple tree)", "navigate_to(kitchen)", "look_at(orange)"]
    candidates = [
        Action.model_validate({"verb": a.split("(")[0], "args": [a[a.index("(") + 1 : -1]]})
        for a in offered
    ]
    world = WorldModel.model_validate(
        {
            "path": [["", "S0", "greenhouse"], ["focus_on(apple tree)", "S1", "greenhouse"]],
            "done": ["focus_on(apple tree)"],
            "seen": {"apple tree": "greenhouse", "orange": "greenhouse"},
        }
    )
    briefing = brief(
        ActionSpace(verbs=verbs, candidates=candidates), world, Scene("greenhouse", (), task)
    )
    assert str(briefing.candidates[0]) == "pick_up(apple tree)"
    assert briefing.placed[0] == "enables"
