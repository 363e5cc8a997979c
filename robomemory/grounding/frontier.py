"""Search from the map: while what is left to do names a thing the world has not shown, the
actions that look where it may be come first, nearest first: revealing what is inside a thing
here, an exit not taken, a place not visited (by hops over the known routes), then the way back
to a place left with an exit not taken. Once what is needed was seen elsewhere, the way there
(the fetch): to a thing, or to where an act on nothing that is next was offered."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping, Sequence
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
    """The house as the world's texts declare it (``Observation.exits`` and ``links``): per
    place, where each way out leads (move argument -> place), and the places joined to each
    (a map read). Walked ways are the spatial map's; these are told, visited or not."""

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
        """The offered move that starts the fewest-hops told way from ``here`` to ``target``:
        one whose argument the way out of here leads by (``ways[here]``)."""
        if here is None or here == target:
            return None
        before: dict[str, str] = {here: here}
        todo = deque([here])
        while todo and target not in before:
            at = todo.popleft()
            for nb in self.neighbours(at):
                if nb not in before:
                    before[nb] = at
                    todo.append(nb)
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
    """``layout`` with the ways out of ``place`` the world told now and the ``links`` a text
    of this step joined (bounded to MAX_LAYOUT_PLACES places)."""
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
    return Layout(_newest(ways), _newest(joined))


def _newest(by_place: dict) -> dict:
    """The MAX_LAYOUT_PLACES places last told of."""
    return dict(list(by_place.items())[-MAX_LAYOUT_PLACES:])


def hops(routes: Sequence[Route], here: str | None) -> dict[str, int]:
    """Moves from ``here`` to each place the routes reach (both ways: a way walked can be
    walked back)."""
    links: dict[str, set[str]] = {}
    for r in routes:
        links.setdefault(r.src, set()).add(r.dst)
        links.setdefault(r.dst, set()).add(r.src)
    if here is None:
        return {}
    out = {here: 0}
    todo = deque([here])
    while todo:
        at = todo.popleft()
        for nb in sorted(links.get(at, ())):
            if nb not in out:
                out[nb] = out[at] + 1
                todo.append(nb)
    return out


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
    """The candidates that search, nearest first: a reveal (``VerbSpec.reveals``: open, look
    in) of a thing not yet revealed (``revealed``) here, or another act that changes a thing
    shown closed here (``closed``: unlock the door); a move (``VerbSpec.moves``) to a
    place not ``visited``, one not named as a place (an exit: ``go(north)``) one hop away, a
    named one by its hops over ``routes`` (unknown: last); then a move back to a visited
    place with an exit not taken (``exits``, :func:`untaken_exits`) or a thing shown closed
    (``closed``, :func:`closed_at`), one hop further than it. A move taken from here before
    leads where it led (``led``, :func:`moves_led`: ``go(west)`` back to the hall is no exit
    to a new place). The world's order breaks ties."""
    meaning = meanings(verbs)
    places = {p for r in routes for p in (r.src, r.dst)} | set(visited)
    distance = hops(routes, here)
    shut = set((closed or {}).get(here or "", ()))
    ranked: list[tuple[int, int, Action]] = []
    for i, action in enumerate(candidates):
        target = action.args[0] if action.args else None
        if action.verb in meaning.moves and str(action) in (led or {}):
            target = (led or {})[str(action)]  # the place it led to, by name
        if action.verb in meaning.reveals and target is not None and target not in revealed:
            ranked.append((0, i, action))
        elif target in shut and action.verb not in meaning.informs | meaning.moves:
            ranked.append((0, i, action))  # an act on a thing shown closed here (unlock it)
        elif action.verb in meaning.moves and target is not None and target not in visited:
            ranked.append((distance.get(target, _FAR) if target in places else 1, i, action))
        elif action.verb in meaning.moves and target != here and _unsearched(target, exits, closed):
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
    """The things offered here whose name holds the argument of a move the world refused
    here ("go(south)": the door is closed -> "door to south") and that no reveal here acted
    on since: what blocks the way, to open here whatever was opened elsewhere under that
    name (each room has its "door to south")."""
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


def _unsearched(
    place: str | None,
    exits: Mapping[str, Sequence[str]] | None,
    closed: Mapping[str, Sequence[str]] | None,
) -> bool:
    """Whether ``place`` has an exit not taken or a thing shown closed."""
    return bool((exits or {}).get(place or "") or (closed or {}).get(place or ""))


def closed_at(
    seen: Mapping[str, str],
    states: Mapping[str, str],
    verbs: Sequence[VerbSpec],
    revealed: Collection[str] = (),
) -> dict[str, list[str]]:
    """Per place, the things last seen there (``seen``) that the world's words show closed
    (the result of a verb that undoes a reveal: close undoes open) and no reveal acted on
    (``revealed``): where a search may still look inside."""
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
    that the task's ``path`` has not taken from there and that lead to no place visited:
    where a search may go on from a place already left."""
    moves = meanings(verbs).moves
    visited = set(visited_places(path))
    taken = {(str(a[2]), str(b[0])) for a, b in pairwise(path) if len(a) > 2}
    out = {p: list(v) for p, v in exits.items()}
    if place:
        out[place] = [str(a) for a in offered if a.verb in moves]
    kept = {}
    for at, ways in out.items():
        left = [w for w in ways if (at, w) not in taken and not set(parsed(w)[1]) & visited]
        if left:
            kept[at] = left
    return kept


def known_things(
    candidates: Sequence[Action], acted: Sequence[str], seen: Collection[str] = ()
) -> list[str]:
    """The things the world has shown this task: those the actions possible now act on, those
    offered elsewhere before (``seen``: fetched, not searched for), and those the task's
    actions (texts ``verb(args)``) acted on, which may be gone since (cut, consumed, turned
    into something else): a thing used up is not searched for again."""
    names = [n for a in candidates for n in a.args] + list(seen)
    for text in acted:
        _, args = parsed(text)
        names += args
    return list(dict.fromkeys(names))


def revealed_things(actions: Sequence[str], verbs: Sequence[VerbSpec]) -> set[str]:
    """The things a reveal of ``actions`` (texts ``verb(args)``) acted on."""
    reveals = meanings(verbs).reveals
    out: set[str] = set()
    for text in actions:
        verb, _, rest = text.partition("(")
        thing = rest.rstrip(")").split(",")[0].strip()
        if verb in reveals and thing:
            out.add(thing)
    return out


def revealed_at(path: Sequence[Sequence], verbs: Sequence[VerbSpec], place: str | None) -> set[str]:
    """The things a reveal acted on while the robot was at ``place`` (``WorldModel.path``:
    an act is taken where the step before it ended). Names are per place: every room of a
    house may have its "door to north", and opening one opens no other."""
    taken = [str(s[0]) for b, s in zip(path, path[1:], strict=False) if b[2] == place]
    return revealed_things(taken, verbs)


def update_seen(
    seen: Mapping[str, str],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
    held: Collection[str] = (),
) -> dict[str, str]:
    """Where each thing was last offered to act on: ``seen`` with the things ``offered`` at
    ``place`` (not the ``held`` ones: they go where the robot goes), less those last seen at
    ``place`` that it no longer offers (taken, used up, moved)."""
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
    """Where each act on nothing (a verb offered without arguments, finishing aside) was last
    offered: ``acts_at`` with those ``offered`` at ``place``. Some worlds offer such an act in
    one place only, and there only once what it needs is held: one not offered now is kept."""
    moves = meanings(verbs).moves
    here = {a.verb for a in offered if not a.args and a.verb not in moves} - {TASK_COMPLETE}
    return {**acts_at, **dict.fromkeys(sorted(here), place)} if place else dict(acts_at)


def update_put_onto(
    put_onto: Mapping[str, str],
    place: str | None,
    offered: Sequence[Action],
    verbs: Sequence[VerbSpec],
) -> dict[str, str]:
    """Where each thing a held one can be put onto or into was last offered so (a put-down's
    second argument): ``put_onto`` with those ``offered`` at ``place``. A world offers such
    puts only while something is held: one not offered now is kept."""
    puts = meanings(verbs).puts
    here = {a.args[-1] for a in offered if a.verb in puts and len(a.args) > 1}
    return {**put_onto, **dict.fromkeys(sorted(here), place)} if place else dict(put_onto)


def move_to(
    place: str,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    *,
    here: str | None = None,
    layout: Layout | None = None,
) -> Action | None:
    """The offered move whose target is ``place`` (the map spells places its own way), else
    the first move of the way the world's texts told from ``here`` (``layout``)."""
    moves = meanings(verbs).moves
    way = word_list(place)
    named = next(
        (a for a in candidates if a.verb in moves and a.args and word_list(a.args[0]) == way),
        None,
    )
    if named is not None or layout is None:
        return named
    return layout.first_move(place, here, candidates, verbs)


def act_moves(
    act: str | None,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    *,
    here: str | None,
    acts_at: Mapping[str, str],
    layout: Layout | None = None,
) -> list[Action]:
    """The move to where the act on nothing ``act`` (what is next to do) was last offered
    (``acts_at``) or, never offered yet, where its verb says it is done
    (``VerbSpec.done_at``), while it is not offered here."""
    declared = {v.name: v.done_at for v in verbs if v.done_at}
    at = acts_at.get(act or "") or declared.get(act or "")
    if at is None or any(a.verb == act for a in candidates):
        return []
    if word_list(at) == word_list(here or ""):
        return []
    move = move_to(at, candidates, verbs, here=here, layout=layout)
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
    layout: Layout | None = None,
) -> list[Action]:
    """While no ``wanted`` thing is here to take (offered, not held), the moves to where the
    wanted things neither here nor held were last seen (``seen``), in ``wanted``'s order.
    Those ``in_place`` (used where they stand: a kiln) are no things to take: one here does
    not hold the robot from fetching the rest."""
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
        move = move_to(at, candidates, verbs, here=here, layout=layout)
        if move is not None and move not in out:
            out.append(move)
    return out
