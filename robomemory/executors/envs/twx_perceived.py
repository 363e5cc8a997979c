"""TextWorldExpress's texts as free mode reads them (executors/perceived.py): each text a
command returned, turned into what it shows (:class:`Seen`), in the world's own layout.

A room's text: "You are in the kitchen. In one part of the room you see a counter that has a
knife, a red apple, and a cookbook on it. ... You also see a fridge that is closed." and on its
last line the ways out: "To the South you see a closed screen door. To the West you see the
corridor." (a closed door is opened as "door to south"). Things are the room texts' noun
phrases ("a", "an", "the", "some" or a number, then the name: "a red apple", "72 squashes",
"4l of glass"); an opened container's "The fridge contains a block of cheese.", Simon's
"'touch pea'" and an inventory's lines show things too; any other text only mentions names.
"""

from __future__ import annotations

import re

from robomemory.executors.perceived import Seen

# "You are in the kitchen." opens a room's text.
ROOM = re.compile(r"^You are in the ([a-z][a-z -]*?)\.")
# Where each way out leads ("To the West you see the basement.", "Through an open plain door,
# to the West you see the kitchen."), or the closed door it has ("To the South you see a
# closed screen door.").
WAY = re.compile(
    r"[Tt]o the (North|South|East|West) you see (?:the ([a-z][a-z -]*?)|an? closed [a-z -]*?door)\."
)
# A map's lines ("The garage connects to the studio and outside.").
LINK = re.compile(r"^\s*The ([a-z][a-z -]*?) connects to (?:the )?([a-z][a-z ,-]*?)\.\s*$", re.M)
_LIST = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
# A noun phrase: an article or a number, then the name up to a comma, a stop or a joining word.
_STOP = r"that|on|and|with|in|into|to|from|is|are|contains|revealing|which|by"
THING = re.compile(
    r"(?:\b(?:[Aa]n?|[Tt]he|[Ss]ome)\s+|(?<![\w-])(?=\d))([a-z0-9][a-z0-9 -]*?)"
    rf"(?=\s*[,.;:!?'\n]|\s*$|\s(?:{_STOP})\b)"
)
# Furniture: what has things on it or is closed, open or empty ("a counter that has ...").
FIXTURE = re.compile(r"\b(?:an?|the) ([a-z0-9][a-z0-9 -]*?),? that (?:has|is)\b")
CLOSED = re.compile(r"\b(?:an?|the) ([a-z0-9][a-z0-9 -]*?),? that is closed")
CONTAINS = re.compile(r"The ([a-z0-9][a-z0-9 -]*?) contains ([^.]*)\.")
REVEALING = re.compile(r"revealing the ([a-z][a-z -]*?)\.")
GAINED = re.compile(r"Adding the ([a-z0-9][a-z0-9 -]*?) to your inventory")
INVENTORY = re.compile(r"^Inventory:")
# Simon's commands: "Simon says, 'touch pea'." or, to remember, "Simon says, take these
# actions in order: examine blueberry, touch pea."
_SIMON_VERBS = r"(?:touch|smell|examine|take|eat|slice|chop|dice|read|drop|open|close)"
SIMON = re.compile(rf"'{_SIMON_VERBS} ([a-z0-9 -]+)'")
SIMON_LIST = re.compile(r"actions in order: ([^.]*)\.")
SIMON_ITEM = re.compile(rf"^{_SIMON_VERBS} ([a-z0-9 -]+)$")
_NO_THING = frozenset({"room", "game"})
_PART = re.compile(r"In (?:one|another) part of the room")


def map_links(text: str) -> tuple[tuple[str, str], ...]:
    """The pairs of places a map's lines join ("The garage connects to the studio and
    outside." joins garage-studio and garage-outside)."""
    out: list[tuple[str, str]] = []
    for place, others in LINK.findall(text):
        out += [(place, o.strip()) for o in _LIST.split(others) if o.strip()]
    return tuple(out)


def things(text: str) -> list[str]:
    """The names of the text's noun phrases, in order, each once."""
    names = [m.strip() for m in THING.findall(_PART.sub("", text))]
    return list(dict.fromkeys(n for n in names if n and n not in _NO_THING))


def perceive(text: str) -> Seen:
    """What one TextWorldExpress text shows (a refused command's text: call it not)."""
    text = text.strip()
    links = map_links(text)
    places = tuple(dict.fromkeys(p for pair in links for p in pair))
    if INVENTORY.match(text):
        lines = text.splitlines()[1:]
        return Seen(held=tuple(n for line in lines for n in things(line)))
    room = ROOM.match(text)
    if room is not None:
        body, _, ways_line = text.partition("\n")
        exits = [(d.lower(), p) for d, p in WAY.findall(ways_line) if p]
        doors = [(d.lower(), f"door to {d.lower()}") for d, p in WAY.findall(ways_line) if not p]
        known = {room.group(1), *(p for _, p in exits if p)}
        seen = [n for n in things(body) if n not in known]
        return Seen(
            place=room.group(1),
            things=tuple(seen),
            fixtures=tuple(n.strip() for n in FIXTURE.findall(_PART.sub("", body))),
            closed=tuple(n.strip() for n in CLOSED.findall(body)),
            exits=tuple(exits),
            doors=tuple(doors),
            places=tuple(known),
        )
    inside = [n for _, what in CONTAINS.findall(text) for n in things(what)]
    ordered = [i.strip() for said in SIMON_LIST.findall(text) for i in said.split(",")]
    simon = [*SIMON.findall(text), *(m.group(1) for i in ordered if (m := SIMON_ITEM.match(i)))]
    shown = list(dict.fromkeys([*inside, *(n.strip() for n in simon)]))
    revealed = REVEALING.search(text)
    if revealed is not None:
        places = (*places, revealed.group(1))
    return Seen(
        things=tuple(shown),
        gained=tuple(GAINED.findall(text)),
        revealed=revealed.group(1) if revealed else None,
        mentioned=tuple(n for n in things(text) if n not in places and n not in shown),
        places=places,
    )
