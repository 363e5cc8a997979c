"""The action API a TextWorld game publishes: paper Table 4 verbs plus what the games need.
What each verb needs and does comes from the game's own rules (textworld_effects); the meanings
declared here (reads, moves, reverses, irreversible, reveals) are what those rules derive, kept
for a verb list used without a game (tests check the two agree on every kind of game)."""

from __future__ import annotations

from robomemory.core import TASK_COMPLETE, VerbSpec

BASE_VERBS = [
    VerbSpec(
        name="navigate_to",
        arg_kinds=["place"],
        description="walk to a known room",
        moves=True,
        # a walk of several go's, the project's own: no rule of the game declares it
        adds=["at(robot, $0)"],
        removes=["at(robot, here)"],
    ),
    VerbSpec(
        name="go",
        arg_kinds=["direction"],
        description="move one room that way (explore)",
        moves=True,
        aliases=["head", "venture", "travel", "move", "go to the", "take a trip"],  # its quests'
    ),
    VerbSpec(
        name="pick_up",
        arg_kinds=["object"],
        description="take an object (ingredients must be held)",
        takes=True,
        aliases=["take", "retrieve", "recover", "lift"],  # the words of TextWorld's quests
    ),
    VerbSpec(
        name="put_down_to",
        arg_kinds=["object", "receptacle"],
        description="put a held object",
        reverses="pick_up",
        # the world's commands and the words of its quests ("rest the pepper on the stove")
        aliases=["put", "place", "insert", "deposit", "sit", "rest"],
    ),
    VerbSpec(
        name="drop", arg_kinds=["object"], description="drop a held object here", reverses="pick_up"
    ),
    VerbSpec(
        name="open",
        arg_kinds=["object"],
        description="open a container or door",
        reveals=True,
        aliases=["ajar", "wide open"],  # a quest's "make sure that the door is ajar"
    ),
    VerbSpec(
        name="close", arg_kinds=["object"], description="close a container or door", reverses="open"
    ),
    VerbSpec(name="turn_on", arg_kinds=["object"]),
    VerbSpec(name="turn_off", arg_kinds=["object"], reverses="turn_on"),
    VerbSpec(
        name="examine",
        arg_kinds=["object"],
        description="read or inspect",
        aliases=["check"],  # "Check the cookbook in the kitchen for the recipe."
        reads=True,
    ),
    VerbSpec(name="look", description="describe the room", reads=True),
    VerbSpec(name="inventory", description="list what you carry", reads=True),
    VerbSpec(name=TASK_COMPLETE, description="declare the task done (ends the episode)"),
]
KEY_VERBS = [VerbSpec(name="unlock", arg_kinds=["object", "object"], description="(door, key)")]
# A cooking game is won by preparing the recipe's meal and eating it; the descriptions say so,
# because a small model will not guess that "enjoy your meal" means eat(meal). The three cuts
# are told apart, each only if the recipe names it: a wrong cut loses the game, and a small
# model given one description for all three picks any of them.
COOKING_VERBS = [
    VerbSpec(
        name="slice",
        arg_kinds=["object"],
        irreversible=True,
        description="cut into slices, only if the recipe says slice; needs a held knife",
    ),
    VerbSpec(
        name="dice",
        arg_kinds=["object"],
        irreversible=True,
        description="cut into cubes, only if the recipe says dice; needs a held knife",
    ),
    VerbSpec(
        name="chop",
        arg_kinds=["object"],
        irreversible=True,
        description="cut into pieces, only if the recipe says chop; needs a held knife",
    ),
    VerbSpec(
        name="cook",
        arg_kinds=["object", "appliance"],
        description="cook a held ingredient as the recipe says: fry = stove, roast = oven, "
        "grill = BBQ",
        aliases=["fry", "roast", "grill"],
        alias_args={"fry": ["stove"], "roast": ["oven"], "grill": ["BBQ"]},
        irreversible=True,
    ),
    VerbSpec(
        name="prepare_meal",
        description="make the meal from the held recipe ingredients",
        irreversible=True,
        done_at="kitchen",  # the game offers it there only, once the ingredients are held
    ),
    VerbSpec(
        name="eat",
        arg_kinds=["object"],
        description="eat food (a cooking task ends by eating the prepared meal)",
        aliases=["enjoy"],
        irreversible=True,
    ),
]
