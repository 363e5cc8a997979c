"""Loop breaking from the world's state: an action known to bring the world back to a state
it was in this task, or to close an A-B-A-B cycle, is set aside until the world changes."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from robomemory.episode import TrajectoryStep
from robomemory.grounding.spent import FAILED

# (action, world after it, place after it[, the answer to a failed action]); the first entry
# is ("", start world, start place)
PathStep = tuple[str | None, ...]
MAX_PATH = 400  # steps a task's path keeps (a task is shorter)
REFUSAL_CHARS = 200  # of a failed action's answer the path keeps


def refusal(item: TrajectoryStep) -> str | None:
    """The world's answer to a failed step, spaces collapsed and lower-cased; None otherwise."""
    if str(item["outcome"]) not in FAILED or item.get("message") is None:
        return None
    return " ".join(str(item["message"]).lower().split())[:REFUSAL_CHARS]


def path_of(
    start: str | None, place: str | None, trajectory: Sequence[TrajectoryStep], now: str | None
) -> list[PathStep]:
    """The path of a whole trajectory; ``now`` is the robot's place after it."""
    places = [t.get("place") for t in trajectory[1:]] + [now]
    out: list[PathStep] = [("", start, place)]
    for t, p in zip(trajectory, places, strict=False):
        said = refusal(t)
        step = (str(t["action"]), t.get("world") or out[-1][1], p)
        out.append(step if said is None else (*step, said))
    return out


def extend_path(
    path: Sequence[Sequence], action: str, world: str | None, place: str | None, refused: str | None
) -> list[list]:
    """``path`` after one more step, bounded; a step that shows no world left it as it was."""
    world = world or (path[-1][1] if path else None)
    step = [action, world, place] if refused is None else [action, world, place, refused]
    return [*map(list, path), step][-MAX_PATH:]


def visited_places(path: Sequence[Sequence]) -> list[str]:
    """The places the robot has been in this task, first visit first."""
    return list(dict.fromkeys(str(s[2]) for s in path if len(s) > 2 and s[2]))


def loop_actions(path: Sequence[Sequence]) -> list[str]:
    """Actions that would loop now, oldest first: one taken before in the state the world is
    in now that led to a state seen earlier (put back, walked back); and after A, B, A, the
    action B when back in the place B was taken from (a world whose state changes with time,
    a clock, never shows a state again; a zig-zag whose second A led elsewhere is no loop)."""
    steps = [(str(s[0]), s[1]) for s in path]
    now = steps[-1][1] if steps else None
    out: list[str] = []
    if now is not None:
        seen = {steps[0][1]} - {None}
        for (_, before), (action, world) in pairwise(steps):
            if (
                before == now
                and world not in (None, before)
                and world in seen
                and action not in out
            ):
                out.append(action)
            seen |= {world} - {None}
    acts = [a for a, _ in steps[1:]]
    back = len(path) >= 4 and _where(path[-1]) == _where(path[-3])
    if len(acts) >= 3 and acts[-1] == acts[-3] != acts[-2] and acts[-2] not in out and back:
        out.append(acts[-2])
    return out


def _where(step: Sequence) -> str | None:
    """Where a path step left the robot: its place, else (a world without places) its state."""
    place = step[2] if len(step) > 2 else None
    return place if place is not None else step[1]
