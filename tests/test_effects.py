"""Verbs as preconditions and effects (robomemory.effects), and a TextWorld game's effects read
from its own rules (executors/envs/textworld_effects.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from robomemory.core import VerbSpec
from robomemory.effects import Atom, matches, parse_atom
from robomemory.executors.envs.textworld import bundled_game
from robomemory.executors.envs.textworld_effects import rule_effects, with_effects
from robomemory.executors.envs.textworld_verbs import BASE_VERBS, COOKING_VERBS, KEY_VERBS
from robomemory.grounding.meanings import meanings, verb_meanings

TEXTWORLD_VERBS = [*BASE_VERBS, *KEY_VERBS, *COOKING_VERBS]
GAMES = [
    "cooking_1room",
    "cooking_1room_cut",
    "cooking_6rooms",
    "cooking_6rooms_open",
    "cooking_6rooms_cut_cook",
    "custom_3rooms",
]


def test_an_atom_reads_and_prints_back():
    atom = parse_atom("in($0, ?c)")
    assert atom == Atom("in", ("$0", "?c"))
    assert str(atom) == "in($0, ?c)"


@pytest.mark.parametrize(
    "text, says",
    [
        ("holds($0)", "unknown relation 'holds'"),
        ("held($0, $1)", "held takes 1 terms"),
        ("held(Knife)", "bad term 'Knife'"),
        ("held $0", "not an atom"),
    ],
)
def test_an_atom_outside_the_vocabulary_is_refused_in_one_line(text, says):
    with pytest.raises(ValueError, match=says) as err:
        parse_atom(text)
    assert "\n" not in str(err.value)


def test_a_verb_spec_refuses_an_effect_outside_the_vocabulary():
    with pytest.raises(ValidationError, match="unknown relation"):
        VerbSpec(name="grab", arg_kinds=["object"], adds=["grasped($0)"])


def test_open_terms_match_anything_and_bound_ones_only_leniently():
    assert matches(parse_atom("in($0, ?c)"), parse_atom("in($0, $1)"))
    assert not matches(parse_atom("at(robot, here)"), parse_atom("at(robot, $0)"))
    assert matches(parse_atom("at(robot, here)"), parse_atom("at(robot, $0)"), lenient=True)
    assert not matches(parse_atom("held($0)"), parse_atom("open($0)"), lenient=True)


def _api() -> list[VerbSpec]:
    """A small robot API declared by effects only (no meaning booleans)."""
    here = ["at(robot, here)"]
    return [
        VerbSpec(name="walk", arg_kinds=["place"], adds=["at(robot, $0)"], removes=here),
        VerbSpec(
            name="grasp",
            arg_kinds=["object"],
            needs=here,
            adds=["held($0)"],
            removes=["on($0, ?s)"],
        ),  # fmt: skip
        VerbSpec(
            name="place",
            arg_kinds=["object", "surface"],
            needs=["held($0)"],
            adds=["on($0, $1)"],
            removes=["held($0)"],
        ),  # fmt: skip
        VerbSpec(
            name="open",
            arg_kinds=["object"],
            needs=["closed($0)"],
            adds=["open($0)"],
            removes=["closed($0)"],
        ),  # fmt: skip
        VerbSpec(
            name="close",
            arg_kinds=["object"],
            needs=["open($0)"],
            adds=["closed($0)"],
            removes=["open($0)"],
        ),  # fmt: skip
        VerbSpec(
            name="cut", arg_kinds=["object"], needs=["held(?knife)"], adds=["state($0, sliced)"]
        ),  # fmt: skip
        VerbSpec(name="inspect", arg_kinds=["object"], needs=["at($0, here)"]),
        VerbSpec(name="done"),
    ]


def test_what_a_verb_means_follows_from_its_effects():
    m = meanings(_api())
    assert m.moves == {"walk"}
    assert m.takes == {"grasp"}
    assert m.reveals == {"open"}
    assert m.reads == m.informs == {"inspect"}  # needs something, changes nothing
    assert m.irreversible == {"cut"}  # nothing in the API makes a thing unsliced
    assert m.reverses == {"place": "grasp", "close": "open"}  # the later undoes the earlier
    assert m.puts == {"place"}


def test_a_verb_without_effects_keeps_its_declared_meaning():
    verbs = [*_api(), VerbSpec(name="wave", arg_kinds=[], irreversible=True)]
    assert "wave" in meanings(verbs).irreversible
    assert verb_meanings(verbs)["done"].reads is False


def _rules(game: str):
    from textworld import Game

    return Game.load(str(bundled_game(game).with_suffix(".json"))).kb


def test_textworld_effects_are_the_games_own_rules():
    """The rules typed for an API verb, in the vocabulary: what all of them need, what any adds
    or removes (take from the floor, a container or a support)."""
    kb = _rules("cooking_6rooms_cut_cook")
    effects = rule_effects(kb, TEXTWORLD_VERBS)
    assert effects["open"] == {
        "needs": ["at(robot, here)", "closed($0)"],
        "adds": ["open($0)"],
        "removes": ["closed($0)"],
    }
    assert effects["put_down_to"]["adds"] == ["in($0, $1)", "on($0, $1)"]  # insert, put
    assert set(effects["pick_up"]["removes"]) == {"at($0, here)", "in($0, ?c)", "on($0, ?s)"}
    assert "state($0, sliced)" in effects["slice"]["adds"]
    assert (
        "held(?o)" in effects["slice"]["needs"] and "state(?o, sharp)" in effects["slice"]["needs"]
    )
    assert effects["go"] == {
        "needs": ["at(robot, here)"],
        "adds": ["at(robot, ?r')"],
        "removes": ["at(robot, here)"],
    }
    assert "held($0)" in effects["eat"]["removes"]
    assert "drink" not in effects and "lock" not in effects  # rules of no API verb


@pytest.mark.parametrize("game", GAMES)
def test_the_declared_meanings_are_what_the_rules_derive(game):
    """The booleans textworld_verbs keeps for use without a game say what the game's rules say,
    on every bundled game."""
    declared = meanings(TEXTWORLD_VERBS)
    assert meanings(with_effects(TEXTWORLD_VERBS, _rules(game))) == declared


def test_textworld_express_effects_derive_its_declared_meanings():
    """TextWorldExpress declares its action model in one table (twx.EFFECTS); what it derives
    is what the verbs' booleans said, verb by verb."""
    from dataclasses import replace

    from robomemory.executors.envs.twx import EFFECTS, VERBS

    with_table = [v.spec() for v in VERBS]
    without = [replace(v, needs=(), adds=(), removes=()).spec() for v in VERBS]
    assert {v.name for v in with_table if v.adds or v.needs} == set(EFFECTS)
    assert verb_meanings(with_table) == verb_meanings(without)
