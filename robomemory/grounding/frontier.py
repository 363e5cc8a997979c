"""Search from the map: while what is left names a thing not shown yet, the acts that look
where it may be come first, nearest first (a reveal here, an exit not taken, a place not
visited, then the way back to a place left unsearched); once a needed thing was seen
elsewhere, the way there (the fetch), or to where a next act on nothing was offered."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import NamedTuple

from robomemory.core import TASK_COMPLETE, Action, Route, VerbSpec
from robomemory.grounding.loops import visited_places
from robomemory.grounding.meanings import meanings
from robomemory.grounding.states import shows
from robomemory.grounding.text import holds, parsed, word_list

_FAR = 1 << 20  # a place no known route reaches
MAX_LAYOUT_PLACES = 200  # places whose ways out a task's model keeps


class Layout(NamedTuple):
    """The house as the world's texts told it, visited or not: per place, where each way out
    leads (move argument -> place), and the places a map read joins to each."""

    ways: Mapping[str, Mapping[str, str]] = {}
    links: Mapping[str, Sequence[str]] = {}

    def neighbours(self, place: str) -> list[str]:
        """The places one way from ``place``, both directions of a told way or link."""
        out = [*self.ways.get(place, {}).values(), *self.links.get(place, ())]
        out += [p for p, ways in self.ways.items() if place in ways.values()]
        return list(dict.fromkeys(out))

    def first_move(
        self, target: str, here: str | None, candidates: Sequence[Action], verbs: Sequence[VerbSpec]
    ) -> Action | None:
        """The offered move that starts the fewest-hops told way from ``here`` to ``target``."""
        if here is None or here == target:
            return None
        before = reached(here, self.neighbours)
        if target not in before:
            return None
        hop = target
        while before[hop] != here:
            hop = before[hop]
        moves = meanings(verbs).moves
        out = self.ways.get(here, {})
        return next(
            (a for a in candidates if a.verb in moves and a.args and out.get(a.args[0]) == hop),
            None,
        )


def update_layout(
    layout: Layout, place: str | None, exits: Mapping[str, str], links: Sequence[Sequence[str]]
) -> Layout:
    """``layout`` with the ways out of ``place`` told now and the ``links`` a text joined."""
    ways = {p: dict(w) for p, w in layout.ways.items()}
    if place and exits:
        ways.pop(place, None)
        ways[place] = dict(exits)
    joined = {p: list(n) for p, n in layout.links.items()}
    for a, b in links:
        if a != b:
            joined.setdefault(a, [])
            joined.setdefault(b, [])
            joined[a] += [b] if b not in joined[a] else []
            joined[b] += [a] if a not in joined[b] else []
    newest = slice(-MAX_LAYOUT_PLACES, None)
    return Layout(dict(list(ways.items())[newest]), dict(list(joined.items())[newest]))


def hops(routes: Sequence[Route], here: str | None) -> dict[str, int]:
    """Moves from ``here`` to each place the routes reach (a way walked can be walked back)."""
    links: dict[str, set[str]] = {}
    for r in routes:
        links.setdefault(r.src, set()).add(r.dst)
        links.setdefault(r.dst, set()).add(r.src)
    if here is None:
        return {}
    out: dict[str, int] = {}
    for place, before in reached(here, lambda at: sorted(links.get(at, ()))).items():
        out[place] = out[before] + 1 if place != here else 0
    return out


def reached(start: str, neighbours: Callable[[str], Iterable[str]]) -> dict[str, str]:
    """Each place reached from ``start``, breadth first, with the place it was reached from."""
    before = {start: start}
    todo = deque([start])
    while todo:
        at = todo.popleft()
        for nb in neighbours(at):
            if nb not in before:
                before[nb] = at
                todo.append(nb)
    return before


def exploration(
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    *,
    here: str | None,
    visited: Collection[str],
    revealed: Collection[str] = (),
    routes: Sequence[Route] = (),
    exits: Mapping[str, Sequence[str]] | None = None,
    closed: Mapping[str, Sequence[str]] | None = None,
    led: Mapping[str, str] | None = None,
) -> list[Action]:
    """The candidates that search, nearest first: a reveal here, or an act on a thing shown
    ``closed`` here; a move to a place not ``visited`` (by hops over ``routes``); then a move
    back to a place with ``exits`` not taken or things closed. A move taken before leads
    where it ``led``."""
    meaning = meanings(verbs)
    exits, closed, led = exits or {}, closed or {}, led or {}
    places = {p for r in routes for p in (r.src, r.dst)} | set(visited)
    distance = hops(routes, here)
    shut = set(closed.get(here or "", ()))
    ranked: list[tuple[int, int, Action]] = []
    for i, action in enumerate(candidates):
        target = action.args[0] if action.args else None
        if action.verb in meaning.moves and str(action) in led:
            target = led[str(action)]
        unsearched = bool(exits.get(target or "") or closed.get(target or ""))
        if action.verb in meaning.reveals and target is not None and target not in revealed:
            ranked.append((0, i, action))
        elif target in shut and action.verb not in meaning.informs | meaning.moves:
            ranked.append((0, i, action))
        elif action.verb in meaning.moves and target is not None and target not in visited:
            ranked.append((distance.get(target, _FAR) if target in places else 1, i, action))
        elif action.verb in meaning.moves and target != here and unsearched:
            ranked.append((distance.get(target, _FAR - 1) + 1, i, action))
    return [a for _, _, a in sorted(ranked, key=lambda r: (r[0], r[1]))]


def moves_led(path: Sequence[Sequence], here: str | None) -> dict[str, str]:
    """Per move the task's ``path`` took from ``here``, the place it led to (the newest)."""
    out: dict[str, str] = {}
    for before, step in pairwise(path):
        if len(before) > 2 and len(step) > 2 and before[2] == here and step[2] not in (None, here):
            out[str(step[0])] = str(step[2])
    return out


def blocking(
    path: Sequence[Sequence],
    here: str | None,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
) -> set[str]:
    """The things offered here whose name holds the argument of a move refused here ("door to
    south") and that no reveal here acted on since: each room has its "door to south"."""
    meaning = meanings(verbs)
    names = {n for a in candidates for n in a.args}
    out: set[str] = set()
    for s in path[1:]:
        verb, args = parsed(str(s[0]))
        if len(s) < 3 or s[2] != here or not args:
            continue
        if verb in meaning.moves and len(s) > 3 and s[3]:
            out |= {n for n in names if holds(word_list(n), word_list(args[0]))}
        elif verb in meaning.reveals and not (len(s) > 3 and s[3]):
            out.discard(args[0])
    return out


def closed_at(
    seen: Mapping[str, str],
    states: Mapping[str, str],
    verbs: Sequence[VerbSpec],
    revealed: Collection[str],
) -> dict[str, list[str]]:
    """Per place, the things seen there that the world's words show closed (the result of a
    verb that undoes a reveal) and no reveal acted on: where a search may still look inside."""
    reveals = meanings(verbs).reveals
    closers = [v for v in verbs if v.reverses in reveals]
    out: dict[str, list[str]] = {}
    for thing, place in seen.items():
        if thing not in revealed and any(shows(states, v, thing) for v in closers):
            out.setdefault(place, []).append(thing)
    return out


def untaken_exits(
    exits: Mapping[str, Sequence[str]],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
    path: Sequence[Sequence],
) -> dict[str, list[str]]:
    """Per place, the moves offered there (``offered`` at ``place`` now, ``exits`` before)
    not taken from there that lead to no place visited."""
    moves = meanings(verbs).moves
    visited = set(visited_places(path))
    taken = {(str(a[2]), str(b[0])) for a, b in pairwise(path) if len(a) > 2}
    out = {p: list(v) for p, v in exits.items()}
    if place:
        out[place] = [str(a) for a in offered if a.verb in moves]
    left = {
        at: [w for w in ways if (at, w) not in taken and not set(parsed(w)[1]) & visited]
        for at, ways in out.items()
    }
    return {at: ways for at, ways in left.items() if ways}


def known_things(
    candidates: Sequence[Action], acted: Sequence[str], seen: Collection[str]
) -> list[str]:
    """The things the world has shown this task: offered now, seen elsewhere, and acted on
    (maybe gone since: a thing used up is not searched for again)."""
    names = [n for a in candidates for n in a.args] + list(seen)
    names += [n for text in acted for n in parsed(text)[1]]
    return list(dict.fromkeys(names))


def revealed_things(actions: Sequence[str], verbs: Sequence[VerbSpec]) -> set[str]:
    """The things a reveal of ``actions`` (texts ``verb(args)``) acted on."""
    reveals = meanings(verbs).reveals
    split = (text.partition("(") for text in actions)
    things = (rest.rstrip(")").split(",")[0].strip() for verb, _, rest in split if verb in reveals)
    return {thing for thing in things if thing}


def revealed_at(path: Sequence[Sequence], verbs: Sequence[VerbSpec], place: str | None) -> set[str]:
    """The things a reveal acted on while the robot was at ``place``: names are per place (each
    room's "door to north" is another)."""
    taken = [str(s[0]) for b, s in zip(path, path[1:], strict=False) if b[2] == place]
    return revealed_things(taken, verbs)


def update_seen(
    seen: Mapping[str, str],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
    held: Collection[str] = (),
) -> dict[str, str]:
    """Where each thing was last offered: ``seen`` with the things ``offered`` at ``place``
    (not the ``held``), less those last seen there that it no longer offers."""
    if not place:
        return dict(seen)
    moves = meanings(verbs).moves
    here = {n for a in offered if a.verb not in moves for n in a.args} - {*held, place}
    out = {thing: at for thing, at in seen.items() if at != place or thing in here}
    out.update(dict.fromkeys(sorted(here), place))
    return out


def update_acts_at(
    acts_at: Mapping[str, str],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
) -> dict[str, str]:
    """Where each act on nothing was last offered; one not offered now is kept (some worlds
    offer it in one place only, and only once what it needs is held)."""
    moves = meanings(verbs).moves
    here = {a.verb for a in offered if not a.args and a.verb not in moves} - {TASK_COMPLETE}
    return {**acts_at, **dict.fromkeys(sorted(here), place)} if place else dict(acts_at)


def update_put_onto(
    put_onto: Mapping[str, str],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
) -> dict[str, str]:
    """Where each thing a held one can be put onto was last offered so; one not offered now
    is kept (a world offers puts only while something is held)."""
    puts = meanings(verbs).puts
    here = {a.args[-1] for a in offered if a.verb in puts and len(a.args) > 1}
    return {**put_onto, **dict.fromkeys(sorted(here), place)} if place else dict(put_onto)


def move_to(
    place: str,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    here: str | None,
    layout: Layout,
) -> Action | None:
    """The offered move whose target is ``place``, else the first move of the told way there."""
    moves = meanings(verbs).moves
    way = word_list(place)
    named = (a for a in candidates if a.verb in moves and a.args and word_list(a.args[0]) == way)
    return next(named, None) or layout.first_move(place, here, candidates, verbs)


def act_moves(
    act: str | None,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    *,
    here: str | None,
    acts_at: Mapping[str, str],
    layout: Layout,
) -> list[Action]:
    """The move to where the act on nothing ``act`` was last offered or, never offered yet,
    where its verb is done (``VerbSpec.done_at``), while it is not offered here."""
    declared = {v.name: v.done_at for v in verbs if v.done_at}
    at = acts_at.get(act or "") or declared.get(act or "")
    if at is None or any(a.verb == act for a in candidates):
        return []
    if word_list(at) == word_list(here or ""):
        return []
    move = move_to(at, candidates, verbs, here, layout)
    return [move] if move is not None else []


def fetch_moves(
    wanted: Sequence[str],
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    *,
    here: str | None,
    seen: Mapping[str, str],
    held: Collection[str] = (),
    in_place: Collection[str] = (),
    layout: Layout,
) -> list[Action]:
    """While no ``wanted`` thing is here to take, the moves to where the others were last
    seen, in ``wanted``'s order. Those ``in_place`` (used where they stand: a kiln) do not
    hold the robot from fetching the rest."""
    moves = meanings(verbs).moves
    present = {n for a in candidates if a.verb not in moves for n in a.args}
    if any(t in present and t not in held and t not in in_place for t in wanted):
        return []
    out: list[Action] = []
    for thing in wanted:
        at = seen.get(thing)
        if thing in present or thing in held or at is None:
            continue
        if word_list(at) == word_list(here or ""):
            continue
        move = move_to(at, candidates, verbs, here, layout)
        if move is not None and move not in out:
            out.append(move)
    return out
