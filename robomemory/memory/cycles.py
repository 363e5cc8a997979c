"""Cycles that wasted an attempt's steps, found in its trajectory (pure): the same few actions
done again and again while the world came back to where it was and the score did not rise.
A lost or timed-out attempt keeps each as a lesson in the world's terms, so the next attempt
on that task reads what its last one spent its steps on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from robomemory.episode import TrajectoryStep

MAX_PERIOD = 4  # the longest cycle looked for: up to four actions done over and over
MIN_REPEATS = 3  # a cycle is done at least this many times in a row
MAX_CYCLES = 2  # lessons kept per attempt: the longest cycles
MESSAGE_CHARS = 60  # of each action's world answer in a lesson


class Cycle(NamedTuple):
    """``actions`` done ``repeats`` times in a row from step ``first`` to step ``last``, and
    what the world answered to each (its last answer)."""

    first: int
    last: int
    actions: tuple[str, ...]
    repeats: int
    said: tuple[str, ...]


def wasted_cycles(
    trajectory: Sequence[TrajectoryStep],
    max_period: int = MAX_PERIOD,
    min_repeats: int = MIN_REPEATS,
) -> list[Cycle]:
    """The cycles of ``trajectory``, longest first: a run of steps in which every action is the
    one ``p`` steps before (``p`` ≤ ``max_period``, the shortest period that fits), at least
    ``min_repeats`` periods long, over which the score did not rise and, where the world says
    its state, each period ended in the state the first began from (the world came back)."""
    found: list[Cycle] = []
    taken = [False] * len(trajectory)
    for p in range(1, max_period + 1):
        i = 0
        while i + p < len(trajectory):
            j = i + p
            while j < len(trajectory) and trajectory[j]["action"] == trajectory[j - p]["action"]:
                j += 1
            periods = (j - i) // p
            end = i + periods * p  # whole periods only
            if periods >= min_repeats and not any(taken[i:end]) and _wasted(trajectory, i, end, p):
                cycle = tuple(str(s["action"]) for s in trajectory[i : i + p])
                if len(set(cycle)) == p:  # a period of one repeated action is shorter
                    said = tuple(_said(trajectory, i, end, a) for a in cycle)
                    found.append(
                        Cycle(
                            trajectory[i]["step"], trajectory[end - 1]["step"], cycle, periods, said
                        )
                    )
                    taken[i:end] = [True] * (end - i)
                    i = end
                    continue
            i += 1
    return sorted(found, key=lambda c: (-(c.last - c.first), c.first))


def _wasted(trajectory: Sequence[TrajectoryStep], i: int, end: int, p: int) -> bool:
    """Whether steps ``i`` to ``end`` raised no score and, when worlds are known, came back to
    the same world state after each period."""
    before = trajectory[i - 1].get("score") if i else None
    scores = [s.get("score") for s in trajectory[i:end] if s.get("score") is not None]
    if scores and max(scores) > (before if before is not None else scores[0]):
        return False
    worlds = [trajectory[k].get("world") for k in range(i + p - 1, end, p)]
    return None in worlds or len(set(worlds)) == 1


def _said(trajectory: Sequence[TrajectoryStep], i: int, end: int, action: str) -> str:
    answers = [str(s["message"]) for s in trajectory[i:end] if s["action"] == action]
    return " ".join(answers[-1].split())[:MESSAGE_CHARS] if answers else ""


def cycle_lesson(cycle: Cycle) -> str:
    """A cycle as a lesson, in the world's words: "Steps 12-23: drop(potato) -> You drop the
    potato., pick_up(potato) -> You take the potato., done 6 times; the world came back to
    where it was each time: no progress."."""
    done = ", ".join(
        f"{a} -> {s}" if s else a for a, s in zip(cycle.actions, cycle.said, strict=True)
    )
    return (
        f"Steps {cycle.first}-{cycle.last}: {done}, done {cycle.repeats} times; the world came "
        "back to where it was each time: no progress."
    )


def cycle_lessons(trajectory: Sequence[TrajectoryStep], limit: int = MAX_CYCLES) -> list[str]:
    """The lessons of the longest ``limit`` cycles of ``trajectory``."""
    return [cycle_lesson(c) for c in wasted_cycles(trajectory)[:limit]]
