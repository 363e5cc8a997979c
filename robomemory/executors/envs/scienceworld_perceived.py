"""ScienceWorld's texts as free mode reads them (executors/perceived.py): each text a command
returned, turned into what it shows (:class:`Seen`), in the world's own layout.

A room's text: "This room is called the kitchen. In it, you see: " then one tab-indented line
per thing ("\\ta counter. On the counter is: a bowl (containing a red apple, a banana), a
drawer.", "\\ta substance called soap", "\\ta fridge. The fridge door is closed."), then
"You also see:" and its doors ("\\tA door to the hallway (that is open)"). "Inside the sink is:"
(a look in) lists things the same way, "In your inventory, you see:" what is held; any other
text only mentions names ("a metal pot (containing nothing)" after a look at shows one).
"""

from __future__ import annotations

import re

from robomemory.executors.perceived import Seen

ROOM = re.compile(r"This [a-z ]+? is called the ([a-z ]+?)\.")
DOOR = re.compile(r"A door to the ([a-z ]+?) \(that is (open|closed)\)")
STATE = re.compile(r"\b[Tt]he ([a-z0-9 -]+?) door is (open|closed)\b")
HEAD = re.compile(
    r"^(?:and\s+)?(?:an?|the|some)\s+(?:substance called\s+)?([a-z0-9][a-z0-9 -]*?)"
    r"(?=\s*(?:[,.(:]|$)|\s(?:which|currently|on|in)\b)"
)
INVENTORY = "In your inventory, you see:"
INSIDE = re.compile(r"^Inside the ([a-z0-9 -]+?) is:")
# Referents that are no thing to act on (as the listed mode leaves them out).
# A line of a thing others stand on or in, or an appliance ("a chair. On the chair is:", "a
# fridge. The fridge door is closed.", "a stove, which is turned off.").
FIXTURE = re.compile(r"\. (?:On|In) the [a-z0-9 -]+? is:|\bdoor is\b|, which is turned")
NON_OBJECTS = frozenset({"agent", "air", "inventory", "nothing"})


def _pieces(text: str) -> list[str]:
    """``text`` split at its commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p.strip() for p in out if p.strip()]


def names(item: str) -> list[str]:
    """The things one item of a list names: its head, what it holds ("(containing ...)")
    and what is on or in it ("On the counter is: a bowl, a drawer.")."""
    out: list[str] = []
    head = HEAD.match(item.strip())
    if head:
        out.append(head.group(1).strip())
    held = re.search(r"\b(?:On|In) the [a-z0-9 -]+? is: (.*)$", item)
    inner = re.search(r"\(containing (.*)\)", item[: held.start()] if held else item)
    if inner:
        out += [n for piece in _pieces(inner.group(1)) for n in names(piece)]
    if held:
        out += [n for piece in _pieces(held.group(1).rstrip(".")) for n in names(piece)]
    return [n for n in dict.fromkeys(out) if n not in NON_OBJECTS]


def _listed(lines: list[str]) -> list[str]:
    return list(dict.fromkeys(n for line in lines for n in names(line)))


def _states(text: str, state: str) -> tuple[str, ...]:
    return tuple(n for n, s in STATE.findall(text) if s == state)


def perceive(text: str) -> Seen:
    """What one ScienceWorld text shows (a refused command's text: call it not)."""
    text = text.strip()
    tabbed = [line.strip() for line in text.splitlines() if line.startswith("\t")]
    if text.startswith(INVENTORY):
        return Seen(held=tuple(_listed(tabbed)))
    doors = DOOR.findall(text)
    open_ways = tuple((room, room) for room, state in doors if state == "open")
    closed_ways = tuple((room, f"door to {room}") for room, state in doors if state == "closed")
    rooms = tuple(room for room, _ in doors)
    room = ROOM.search(text)
    if room is not None:
        body = text.partition("You also see:")[0]
        lines = [line for line in tabbed if line in body]
        things = _listed(lines)
        fixtures = [n for line in lines if FIXTURE.search(line) for n in names(line)[:1]]
        return Seen(
            place=room.group(1),
            things=tuple(things),
            fixtures=tuple(fixtures),
            closed=_states(body, "closed"),
            opened=_states(body, "open"),
            exits=open_ways,
            doors=closed_ways,
            places=(room.group(1), *rooms),
        )
    shown = _listed(tabbed) if INSIDE.match(text) else []
    said = [n for n in names(text.splitlines()[0]) if n not in shown] if text else []
    return Seen(
        things=tuple(shown),
        closed=_states(text, "closed"),
        opened=_states(text, "open"),
        exits=open_ways,
        doors=closed_ways,
        mentioned=tuple(said),
        places=rooms,
    )
