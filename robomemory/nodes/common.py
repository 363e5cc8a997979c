"""Helpers shared by the nodes: the run's live context and per-node metering."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from robomemory.config import AgentConfig
from robomemory.context import AgentContext, live_context
from robomemory.core import Action, ActionSpace, Route, TextLimits
from robomemory.episode import TrajectoryStep
from robomemory.grounding import (
    act_moves,
    exploration,
    fetch_moves,
    helped_now,
    known_things,
    left_instructions,
    left_to_do,
    loop_actions,
    meanings,
    offered_candidates,
    revealed_things,
    unseen_things,
    update_states,
    visited_places,
    wanted_things,
)
from robomemory.grounding.text import word_list
from robomemory.memory.temporal import step_line
from robomemory.prompts.longterm import lesson_actions
from robomemory.state import AgentState, last_result_of, observation_of


class NodeRun:
    """Meters one node invocation: model usage and wall time go to ``state['usage']``."""

    def __init__(self, name: str, runtime: Runtime[AgentContext] | None):
        self.name = name
        self.ctx = live_context(runtime.context if runtime is not None else None)
        self.llm = self.ctx.llm.for_node(name)
        self._t0 = time.perf_counter()

    def finish(self, update: dict[str, Any]) -> dict[str, Any]:
        usage = self.llm.usage.as_dict()
        usage["wall_s"] = round(time.perf_counter() - self._t0, 4)
        usage["runs"] = 1
        update["usage"] = {self.name: usage}
        return update


def text_limits(config: AgentConfig) -> TextLimits:
    """The configured bounds on what a world returns (observations, results)."""
    return TextLimits(
        text_chars=config.max_text_chars,
        images=config.max_images,
        image_chars=config.max_image_chars,
    )


def last_action_text(state: AgentState, shown: str = "") -> str | None:
    """The last action and the world's answer, as the step summarizer is shown them; the
    answer is left out when it is the text ``shown`` anyway (the observation), so the prompt
    carries it once."""
    result = last_result_of(state)
    if result is None:
        return None
    head = f"{result.action} -> {result.outcome.value}"
    if " ".join(result.message.split()) in ("", " ".join(shown.split())):
        return head
    return f"{head}: {result.message}".strip()


# The newest result ends the planner's and the critic's prompts whole: it is what the robot
# sees now (cut at 300 characters, a room's description lost the manual on its table).
LAST_RESULT_CHARS = 1200


def last_result_line(state: AgentState) -> str | None:
    """The newest step and the world's whole answer, or None before the first step."""
    trajectory = state.get("trajectory") or []
    return result_line(trajectory[-1], LAST_RESULT_CHARS) if trajectory else None


def result_line(item: TrajectoryStep, limit: int = 300) -> str:
    """One executed action and the world's answer, spaces collapsed (what was read stays whole)."""
    message = " ".join(str(item["message"]).split())[:limit]
    return f"{step_line(item)}: {message}"


def current_candidates(
    state: AgentState,
    space: ActionSpace,
    limit: int | None = None,
    routes: list[Route] | None = None,
) -> list[Action]:
    """The actions the world affords now, as the planner and the critic are shown them
    (the ``limit`` best ranked, ``task_complete`` kept); ``routes`` between places, for the
    search of a thing not seen yet, nearest first."""
    return offered_candidates(
        space.candidates,
        state.get("trajectory") or [],
        observation_of(state).place,
        task=state.get("task") or "",
        notes=state.get("notes") or [],
        done=state.get("done_actions") or [],
        verbs=space.verbs,
        lessons=lesson_actions((state.get("recalled") or {}).get("semantic") or ""),
        path=state.get("path") or [],
        states=state.get("states") or {},
        routes=routes or [],
        exits=state.get("exits") or {},
        seen=state.get("seen") or {},
        acts_at=state.get("acts_at") or {},
        held=observation_of(state).holding,
        limit=limit,
    )


def map_routes(ctx: AgentContext) -> list[Route]:
    """The ways between places the spatial map knows (none without spatial memory)."""
    spatial = ctx.memory.spatial
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return []
    return spatial.routes()


def looping(state: AgentState, space: ActionSpace) -> list[str]:
    """The world's candidates set aside because they would loop (:func:`loop_actions`)."""
    offered = {str(a) for a in space.candidates}
    return [a for a in loop_actions(state.get("path") or []) if a in offered]


def known_names(space: ActionSpace) -> list[str]:
    """The names the executor knows now: its targets and the arguments of its candidates."""
    return [*space.all_targets(), *(a for c in space.candidates for a in c.args)]


def notes_left(state: AgentState, space: ActionSpace) -> list[str]:
    """What the episode's notes, then its task, instruct that is not done yet
    (:func:`left_to_do`)."""
    return left_to_do(
        state.get("notes") or [],
        state.get("done_actions") or [],
        space.verbs,
        known_names(space),
        task=state.get("task") or "",
        offered=[a for c in space.candidates for a in c.args],
        states=state.get("states") or {},
    )


def missing_things(state: AgentState, space: ActionSpace) -> list[str]:
    """What the notes' instructions act on that the world has not shown (:func:`unseen_things`)."""
    bodies = [n.split(": ", 1)[-1] for n in reversed(state.get("notes") or [])]
    acted = [str(s[0]) for s in state.get("path") or []] + list(state.get("done_actions") or [])
    names = known_things(space.candidates, acted, state.get("seen") or {})
    return unseen_things(" . ".join(bodies), space.verbs, names)


def notes_unseen(
    state: AgentState, space: ActionSpace, candidates: list[Action], routes: list[Route]
) -> tuple[list[str], list[str]]:
    """(things the notes' instructions act on that the world has not shown, the offered
    actions that search for them, nearest first: :func:`exploration`, as the offered list
    ranks them); both empty when nothing is missing."""
    missing = missing_things(state, space)
    if not missing:
        return [], []
    path = state.get("path") or []
    acted = [str(s[0]) for s in path] + list(state.get("done_actions") or [])
    search = exploration(
        candidates,
        space.verbs,
        here=observation_of(state).place,
        visited=visited_places(path),
        revealed=revealed_things(acted, space.verbs),
        routes=routes,
        exits=state.get("exits") or {},
    )
    return missing, [str(a) for a in search]


def task_finding(
    state: AgentState, space: ActionSpace, candidates: list[Action]
) -> tuple[list[str], list[str], list[str]]:
    """(what the task asks to find by description while its act on it is not done, "a(n)
    plant"; the offered moves to places not visited, in the list's order; once every place is
    visited, the things here, among which the choice is); all empty when the task describes
    no such thing."""
    left = left_instructions(
        state.get("notes") or [],
        state.get("done_actions") or [],
        space.verbs,
        [],
        task=state.get("task") or "",
    )
    described = [i.described for i in left if i.refers and i.described]
    if not described:
        return [], [], []
    moves = meanings(space.verbs).moves
    visited = set(visited_places(state.get("path") or []))
    ways = [str(a) for a in candidates if a.verb in moves and a.args and a.args[0] not in visited]
    if ways:
        return described, ways, []
    here = [a.args[0] for a in space.candidates if a.verb not in moves and a.args]
    return described, [], list(dict.fromkeys(here))


def notes_fetch(
    state: AgentState, space: ActionSpace, candidates: list[Action]
) -> tuple[list[str], list[str]]:
    """(what is left to do needs that was last seen elsewhere, as ``thing (place)``, or the next
    act on nothing and where it was offered, as ``act() (place)``; the offered moves there, as
    the list ranks them: :func:`fetch_moves`, :func:`act_moves`); both empty while such a thing
    is here, or before anything is read."""
    notes, seen = state.get("notes") or [], state.get("seen") or {}
    acts_at = state.get("acts_at") or {}
    if not notes:
        return [], []
    obs = observation_of(state)
    wanted = wanted_things(
        notes,
        state.get("done_actions") or [],
        space.verbs,
        space.candidates,
        state.get("task") or "",
        state.get("states") or {},
        seen,
        obs.holding,
    )
    moves = fetch_moves(
        wanted.things,
        candidates,
        space.verbs,
        here=obs.place,
        seen=seen,
        held=obs.holding,
        in_place=wanted.in_place,
    )
    places = {tuple(word_list(a.args[0])) for a in moves if a.args}  # the map's spelling too
    away = [
        f"{t} ({seen[t]})"
        for t in wanted.things
        if t not in obs.holding and t in seen and tuple(word_list(seen[t])) in places
    ]
    if not moves and wanted.act is not None and not missing_things(state, space):
        moves = act_moves(wanted.act, candidates, space.verbs, here=obs.place, acts_at=acts_at)
        away = [f"{wanted.act}() ({moves[0].args[0]})"] if moves else []
    return (away, [str(a) for a in moves]) if moves else ([], [])


def world_states(
    states: dict[str, str] | None, texts: list[str], space: ActionSpace
) -> dict[str, str]:
    """``states`` after the world's newest texts (:func:`update_states`)."""
    out = dict(states or {})
    names = known_names(space)
    for text in dict.fromkeys(t for t in texts if t):
        out = update_states(out, text, names, space.verbs)
    return out


def lessons_now(state: AgentState, candidates: list[Action]) -> list[str]:
    """What recalled lessons say helped before, offered now and not done (:func:`helped_now`)."""
    helped, _ = lesson_actions((state.get("recalled") or {}).get("semantic") or "")
    return helped_now(helped, candidates, state.get("done_actions") or [])
