"""Actions the episode has shown useless here: set aside until the world changes."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import pairwise

from robomemory.core import TASK_COMPLETE, Action, VerbSpec
from robomemory.episode import TrajectoryStep
from robomemory.grounding.meanings import meanings
from robomemory.grounding.text import parsed, words

FAILED = frozenset({"failed", "rejected", "error", "aborted", "timeout", "canceled"})
LOOK = "look()"  # describes the place the robot is in


def spent_actions(
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    verbs: Sequence[VerbSpec] = (),
    held: Collection[str] = (),
) -> set[str]:
    """Actions (as ``verb(args)`` text) not worth offering again now.

    A step record has ``action``, ``verb``, ``outcome`` and optionally ``changed`` (did the
    world's state change) and ``place`` (where the robot was). Rules:
    - since the world last changed: failed actions, and actions that changed nothing here;
    - over the whole episode: reads of a thing (``VerbSpec.reads``) that changed nothing here
      (same answer), or anywhere when the thing is ``held`` (it goes where the robot goes);
    - the action that made the last change, while the robot is where it made it;
    - ``look()`` right after arriving: what the robot observed on arrival is the place.
    Without ``changed`` a succeeded action counts as having changed the world.
    """
    reads = meanings(verbs).reads
    last_change = max((i for i, t in enumerate(trajectory) if _changed(t)), default=-1)
    spent: set[str] = set()
    if last_change >= 0:
        item = trajectory[last_change]
        if str(item["outcome"]) not in FAILED and _here(item, place):
            spent.add(str(item["action"]))
    for i, item in enumerate(trajectory):
        here = _here(item, place)
        no_effect = not _changed(item) and str(item["outcome"]) not in FAILED
        if i > last_change and (str(item["outcome"]) in FAILED or (no_effect and here)):
            spent.add(str(item["action"]))
        elif no_effect and (here or _of_held(item, held)) and _verb(item) in reads:
            spent.add(str(item["action"]))
    if trajectory and place is not None:
        last = trajectory[-1]
        if last.get("place") not in (None, place) and str(last["outcome"]) not in FAILED:
            spent.add(LOOK)
    return spent


def refused_again(path: Sequence[Sequence], place: str | None) -> set[str]:
    """Actions the task's ``path`` shows failed twice with the same answer, since whose last
    failure the robot has not moved and no action succeeded on a thing they or that answer
    name (a move, or a step that changed the world).

    A failure alone is set aside only until the world changes, and a world may change at every
    step (one more thing held) while the refusal stands; what makes it worth asking again is a
    thing it names acted on (the thing taken, the door the answer names opened) or a move. The
    path, not the state's window of newest steps: the repeats come a few steps apart."""
    answers: dict[str, list[str]] = {}
    last: dict[str, int] = {}
    for i, step in enumerate(path):
        if len(step) > 3 and step[3] is not None:
            answers.setdefault(str(step[0]), []).append(str(step[3]))
            last[str(step[0])] = i
    out: set[str] = set()
    for action, said in answers.items():
        where = path[last[action]][2] if len(path[last[action]]) > 2 else None
        elsewhere = where is not None and place not in (None, where)
        if len(said) < 2 or said[-1] != said[-2] or elsewhere:
            continue
        named = {a.lower() for a in parsed(action)[1]}
        since = pairwise(path[last[action] :])
        if not any(_touches(step, before, named, said[-1], where) for before, step in since):
            out.add(action)
    return out


def refused_in_this_state(path: Sequence[Sequence]) -> set[str]:
    """Actions the task's ``path`` shows refused in the world state it ends in: a world
    answers one state alike, so walking away and back (the same state again) does not make
    them worth asking (a door reported open was asked open at each return)."""
    if not path or path[-1][1] is None:
        return set()
    now = path[-1][1]
    return {str(s[0]) for s in path if len(s) > 3 and s[3] is not None and s[1] == now}


def _touches(
    step: Sequence, before: Sequence, named: set[str], answer: str, where: str | None
) -> bool:
    """Whether a path ``step`` ended elsewhere than ``where``, or changed the world (or shows
    none) acting on a thing in ``named`` or that ``answer`` names: a look at it does not."""
    if len(step) > 2 and step[2] not in (None, where):
        return True
    if len(step) > 3 and step[3] is not None:
        return False
    if step[1] is not None and step[1] == before[1]:
        return False
    # a thing whose name holds a named one's words: opening "door to south" answers
    # go(south), refused with "the door is closed"
    named_words = [words(n) for n in named if words(n)]
    return any(
        a.lower() in named or a.lower() in answer or any(w <= words(a) for w in named_words)
        for a in parsed(str(step[0]))[1]
    )


def unchanged_reads(
    path: Sequence[Sequence],
    place: str | None,
    verbs: Sequence[VerbSpec] = (),
    held: Collection[str] = (),
) -> set[str]:
    """Reads of a thing (``VerbSpec.reads``, with an argument) anywhere on the task's ``path``
    (see ``loops``) that left the world's state as it was, made here or of a thing ``held``:
    their answer will not change. The state keeps the whole path, but only the newest steps
    of the trajectory, and a small model cycles through ten things' descriptions."""
    reads = meanings(verbs).reads
    out: set[str] = set()
    for before, step in pairwise(path):
        verb, args = parsed(str(step[0]))
        if verb not in reads or not args or step[1] is None or step[1] != before[1]:
            continue
        where = before[2] if len(before) > 2 else None
        if place is None or where in (None, place) or (len(args) == 1 and args[0] in held):
            out.add(str(step[0]))
    return out


MAX_SCORED = 200  # actions a task's model keeps per direction of the score


def scored(
    fell: Sequence[str], rose: Sequence[str], was: float | None, item: TrajectoryStep
) -> tuple[list[str], list[str]]:
    """(fell, rose) after ``item``: its action joins those after which the world's score
    fell ("put the cushion on the dining chair" took back the point its take had earned) or
    rose; ``was`` is the score before it. Unchanged in a world that keeps no score."""
    now = item.get("score")
    action = str(item["action"])
    if was is None or now is None or now == was or str(item["outcome"]) in FAILED:
        return list(fell), list(rose)
    if now < was:
        return [*fell, action][-MAX_SCORED:], list(rose)
    return list(fell), [*rose, action][-MAX_SCORED:]


def scored_actions(trajectory: Sequence[TrajectoryStep]) -> tuple[list[str], list[str]]:
    """(fell, rose) over a whole ``trajectory`` (:func:`scored`; the baselines keep it all)."""
    fell: list[str] = []
    rose: list[str] = []
    for before, item in pairwise(trajectory):
        fell, rose = scored(fell, rose, before.get("score"), item)
    return fell, rose


def progress_undone(
    rose: Collection[str], candidates: Sequence[Action], verbs: Sequence[VerbSpec]
) -> set[str]:
    """The candidates that would undo an action after which the score ``rose`` (take back
    the cushion put where it belongs): its verb reverses another (``VerbSpec.reverses``) and
    the undo is that other verb on its first thing. Not the other way round: a put after a
    take that scored goes somewhere new."""
    pairs = {verb.name: verb.reverses for verb in verbs if verb.reverses}
    out: set[str] = set()
    for action in rose:
        verb, args = parsed(action)
        undo = pairs.get(verb)
        out |= {str(a) for a in candidates if a.verb == undo and a.args[:1] == args[:1]}
    return out


def fell_undone(
    fell: Sequence[str], offered: Sequence[Action], verbs: Sequence[VerbSpec]
) -> tuple[str, str] | None:
    """(the newest action after which the score fell, the offered action that undoes it),
    when one is offered: the thing put in the wrong place lies here to take back. The undo is
    the verb the fallen one reverses (``VerbSpec.reverses``) on its first thing."""
    pairs = {verb.name: verb.reverses for verb in verbs if verb.reverses}
    for action in reversed(fell):
        verb, args = parsed(action)
        undo = pairs.get(verb)
        found = next((a for a in offered if a.verb == undo and a.args[:1] == args[:1]), None)
        if undo and args and found is not None:
            return action, str(found)
    return None


def _verb(item: TrajectoryStep) -> str:
    return str(item.get("verb") or str(item["action"]).split("(", 1)[0])


def _of_held(item: TrajectoryStep, held: Collection[str]) -> bool:
    args = item.get("args") or parsed(str(item["action"]))[1]
    return len(args) == 1 and args[0] in held


def _here(item: TrajectoryStep, place: str | None) -> bool:
    """Whether the robot is still where the step happened (unknown places count as here)."""
    return place is None or item.get("place") in (None, place)


def _changed(item: TrajectoryStep) -> bool:
    changed = item.get("changed")
    if changed is None:
        return str(item["outcome"]) not in FAILED
    return bool(changed)


def fresh_candidates(
    candidates: Sequence[Action],
    trajectory: Sequence[TrajectoryStep],
    place: str | None,
    verbs: Sequence[VerbSpec] = (),
    set_aside: Collection[str] = (),
    held: Collection[str] = (),
) -> list[Action]:
    """``candidates`` less the spent ones and those ``set_aside`` (loops, repeated irreversible
    acts); all of them when nothing would be left but ``task_complete``."""
    spent = spent_actions(trajectory, place, verbs, held) | set(set_aside)
    fresh = [a for a in candidates if str(a) not in spent]
    if all(a.verb == TASK_COMPLETE for a in fresh):
        return list(candidates)
    return fresh
