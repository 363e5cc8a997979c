"""Actions the episode has shown useless here: set aside until the world changes."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from robomemory.episode import TrajectoryStep

FAILED = frozenset({"failed", "rejected", "error", "aborted", "timeout", "canceled"})
MAX_SCORED = 200  # actions a task's model keeps per direction of the score


def refused_in_this_state(path: Sequence[Sequence]) -> set[str]:
    """Actions the ``path`` shows refused in the state it ends in: a world answers one state
    alike, so walking away and back does not make them worth asking again."""
    if not path or path[-1][1] is None:
        return set()
    now = path[-1][1]
    return {str(s[0]) for s in path if len(s) > 3 and s[3] is not None and s[1] == now}


def scored(
    fell: Sequence[str], rose: Sequence[str], was: float | None, item: TrajectoryStep
) -> tuple[list[str], list[str]]:
    """(fell, rose) after ``item``: its action joins those after which the score fell (a put
    took back the point its take had earned) or rose; ``was`` is the score before it."""
    now = item.get("score")
    action = str(item["action"])
    if was is None or now is None or now == was or str(item["outcome"]) in FAILED:
        return list(fell), list(rose)
    if now < was:
        return [*fell, action][-MAX_SCORED:], list(rose)
    return list(fell), [*rose, action][-MAX_SCORED:]


def scored_actions(trajectory: Sequence[TrajectoryStep]) -> tuple[list[str], list[str]]:
    """(fell, rose) over a whole ``trajectory`` (the baselines keep it all)."""
    fell: list[str] = []
    rose: list[str] = []
    for before, item in pairwise(trajectory):
        fell, rose = scored(fell, rose, before.get("score"), item)
    return fell, rose
