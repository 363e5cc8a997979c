"""The world model: what the robot knows of the world in this task, from its words and the
actions it offers. The fifth memory beside the paper's four: symbolic, exact, one task long."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from robomemory.core import ActionSpace
from robomemory.episode import TrajectoryStep
from robomemory.grounding.frontier import (
    MAX_LAYOUT_PLACES,
    Layout,
    untaken_exits,
    update_acts_at,
    update_layout,
    update_put_onto,
    update_seen,
)
from robomemory.grounding.loops import extend_path, refusal
from robomemory.grounding.notes import update_done, update_notes
from robomemory.grounding.spent import scored
from robomemory.grounding.states import update_states


def empty(factory: Callable[[], Any], description: str) -> Any:
    """A field that starts as ``factory()``."""
    return Field(default_factory=factory, description=description)


def known_names(space: ActionSpace) -> list[str]:
    """The names the executor knows now: its targets and the arguments of its candidates."""
    return [*space.all_targets(), *(a for c in space.candidates for a in c.args)]


class WorldModel(BaseModel):
    """What the world showed this task, kept exactly (no model reads or writes it)."""

    model_config = ConfigDict(extra="forbid")

    notes: list[str] = empty(list, "what was read that the task depends on (bounded)")
    done: list[str] = empty(list, "actions that changed the world, newest last (bounded)")
    states: dict[str, str] = empty(dict, "thing -> what the world's words last said it is")
    path: list[list] = empty(list, "[action, world after it, place(, refusal)] per step")
    exits: dict[str, list[str]] = empty(dict, "place -> moves offered there not taken yet")
    seen: dict[str, str] = empty(dict, "thing -> place where it was last offered to act on")
    acts_at: dict[str, str] = empty(dict, "act on nothing -> place where it was last offered")
    put_onto: dict[str, str] = empty(dict, "thing a held one can be put onto -> place offered")
    score: float | None = Field(default=None, description="the world's score after the last step")
    fell: list[str] = empty(list, "actions after which the score fell (bounded)")
    rose: list[str] = empty(list, "actions after which the score rose (bounded)")
    ways: dict[str, dict[str, str]] = empty(dict, "place -> {move's argument -> place it leads}")
    links: dict[str, list[str]] = empty(dict, "place -> places a text read joins it to (a map)")
    # a place the task names is still to go to until the score rises
    since_gain: list[str] = empty(list, "places been in since the world's score last rose")

    @classmethod
    def recalled(cls, places: Mapping[str, str]) -> WorldModel:
        """A task's model before its first observation: where earlier tasks left things."""
        return cls(seen=dict(places))

    def observe(
        self,
        space: ActionSpace,
        place: str | None,
        texts: Sequence[str],
        *,
        world: str | None = None,
        held: Sequence[str] = (),
        step: TrajectoryStep | None = None,
        task: str = "",
        exits: Mapping[str, str] | None = None,
        links: Sequence[Sequence[str]] = (),
    ) -> WorldModel:
        """The model after the world showed ``texts`` at ``place`` and offers ``space``: at a
        task's start (no ``step``) or after ``step``; ``exits`` and ``links``: the told ways."""
        fell, rose, score = list(self.fell), list(self.rose), self.score
        if step is None:
            path = [["", world, place]]
            notes, done = list(self.notes), list(self.done)
        else:
            path = extend_path(self.path, step["action"], step.get("world"), place, refusal(step))
            notes = update_notes(self.notes, step, task, space.verbs)
            done = update_done(self.done, step)
            fell, rose = scored(fell, rose, score, step)
            score = step["score"] if step.get("score") is not None else score
        names = known_names(space)
        states = dict(self.states)
        for text in dict.fromkeys(t for t in texts if t):
            states = update_states(states, text, names, space.verbs)
        offered, verbs = space.candidates, space.verbs
        layout = update_layout(self.layout(), place, exits or {}, links)
        since = [] if rose != self.rose else list(self.since_gain)
        since += [place] if place and place not in since else []
        return WorldModel(
            notes=notes,
            done=done,
            states=states,
            path=path,
            exits=untaken_exits(self.exits, place, offered, verbs, path),
            seen=update_seen(self.seen, place, offered, verbs, held),
            acts_at=update_acts_at(self.acts_at, place, offered, verbs),
            put_onto=update_put_onto(self.put_onto, place, offered, verbs),
            score=score,
            fell=fell,
            rose=rose,
            ways={p: dict(w) for p, w in layout.ways.items()},
            links={p: list(n) for p, n in layout.links.items()},
            since_gain=since[-MAX_LAYOUT_PLACES:],
        )

    def layout(self) -> Layout:
        """The house as the world's texts told it."""
        return Layout(self.ways, self.links)

    def read(self) -> list[str]:
        """What the notes read, newest first (the most pressing text first)."""
        return [n.split(": ", 1)[-1] for n in reversed(self.notes)]

    def made(self) -> list[str]:
        """The task's actions the world did not refuse, in order (moves on a route)."""
        return [str(s[0]) for s in self.path[1:] if len(s) < 4 or s[3] is None]

    def acted(self) -> list[str]:
        """Every action of the task's path, then those that changed the world."""
        return [str(s[0]) for s in self.path] + list(self.done)
