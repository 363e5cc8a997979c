"""Goal-only TextWorld challenges, loaded by ``tw-make --third-party`` (not imported by robomemory).

``tw-make tw-treasure_hunter`` and ``tw-coin_collector`` write their walkthrough into the
objective ("First, take a trip south. Then, open the door within the sauna. ... retrieve the
keycard from the floor of the kitchen."): followed line by line, the game needs no memory. The
``-goal`` challenges registered here make the same game from the same settings and seed and
state only its goal: "Find the keycard and pick it up." (the object the quest's last action
takes; the treasure hunter's other object, which loses the game, stays unnamed)::

    tw-make --third-party robomemory/eval/tw_goal.py tw-treasure_hunter-goal --level 15 \\
        --seed 21 --output game.z8
"""

from __future__ import annotations

import textworld.challenges
from textworld.challenges import register

GOAL = "Find the {thing} and pick it up."
BASES = ("tw-treasure_hunter", "tw-coin_collector")


def goal_objective(game) -> str:
    """The goal-only objective: X is the object the winning quest's last action takes."""
    last = game.quests[0].win_events[0].actions[-1]
    things = [
        game.infos[v.name].name
        for v in last.variables
        if game.kb.types.is_descendant_of(v.type, "o")
    ]
    if not last.name.startswith("take") or not things:
        raise ValueError(f"the quest does not end by taking a thing ({last.name})")
    return GOAL.format(thing=things[0])


def _goal_only(base: str):
    _, make, _ = textworld.challenges.CHALLENGES[base]

    def make_goal_only(settings, options=None):
        game = make(settings, options)
        game.objective = goal_objective(game)
        return game

    return make_goal_only


for _base in BASES:
    if f"{_base}-goal" not in textworld.challenges.CHALLENGES:
        _desc, _, _add_arguments = textworld.challenges.CHALLENGES[_base]
        register(
            name=f"{_base}-goal",
            desc=f"{_desc}; the objective names only the goal",
            make=_goal_only(_base),
            add_arguments=_add_arguments,
        )
