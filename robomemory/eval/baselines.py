"""Single-model baselines run on the same executors and model as RoboMemory.

- ``react``: one model call per step with the recent chat history as context (a sliding window
  of turns), the paper's single-VLM agent.
- ``fullctx``: one model call per step with the whole episode history in context.

Both return the same :class:`EpisodeResult` as the RoboMemory agent, with usage metered per
node (``policy`` for the model call, ``executor`` for the world) and ``on_event`` callbacks in
the same shape, so the runner and the metrics treat all agents alike.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from robomemory.config import AgentConfig
from robomemory.core import Action, Executor, Observation, checked_task
from robomemory.episode import (
    EpisodeResult,
    EventHandler,
    StepRecord,
    TrajectoryStep,
    episode_end,
    trajectory_step,
    world_of,
)
from robomemory.grounding import (
    brief,
    known_names,
    notes_of,
    path_of,
    update_done,
    update_states,
)
from robomemory.grounding.instructions import with_reading
from robomemory.grounding.needs import world_parts
from robomemory.nodes.common import text_limits
from robomemory.nodes.ground import reading
from robomemory.prompts.baselines import (
    baseline_system,
    baseline_user,
    make_turn_model,
    turn_action,
    turn_text,
)
from robomemory.structured import StructuredLLM

BaselineKind = Literal["react", "fullctx"]


class BaselineAgent:
    """A single-model agent: observation + history -> one action, every step."""

    def __init__(
        self,
        kind: BaselineKind,
        config: AgentConfig,
        executor: Executor,
        llm: StructuredLLM,
        window: int = 6,
    ):
        if kind not in ("react", "fullctx"):
            raise ValueError(f"unknown baseline {kind!r}")
        self.kind = kind
        self.config = config
        self.executor = executor
        self.llm = llm
        self.window = window
        self._readings: dict[str, str] = {}  # this episode's (robomemory.nodes.ground.reading)

    def _history(self, turns: list[str]) -> list[str]:
        return turns if self.kind == "fullctx" else turns[-self.window :]

    def _decide(
        self,
        task: str,
        turns: list[str],
        obs: Observation,
        trajectory: list[TrajectoryStep],
        start: Observation,
    ) -> tuple[Action, dict]:
        started = time.perf_counter()
        space = self.executor.action_space()
        # The same grounded list the planner sees, by the same rules (fair comparison): the
        # world's states and the task's path come from the whole trajectory they keep.
        done: list[str] = []
        for item in trajectory:
            done = update_done(done, item)
        names = known_names(space)
        states: dict[str, str] = {}
        for text in [start.text, *(t["message"] for t in trajectory)]:
            states = update_states(states, text, names, space.verbs)
        notes = notes_of(trajectory, task, space.verbs)
        path = path_of(world_of(start), start.place, trajectory, obs.place)
        # the list robomemory's briefing gives, without memory
        world, scene = world_parts(trajectory, obs.place, task, notes, done, path, states)
        node = self.llm.for_node("policy")
        # the task as read, as robomemory's ground node reads it (the model names a thing
        # the task describes by a clause)
        self._readings = reading(node, task, self._readings, world, space, scene.held)
        scene = scene._replace(task=with_reading(task, self._readings))
        briefing = brief(space, world, scene, limit=self.config.max_candidates)
        if self.config.table_decides:  # as the planner: only what the table leaves open
            briefing = briefing.left_open()
        candidates, rows = briefing.candidates, briefing.placed
        pick = next((a for a in candidates if str(a) == briefing.decided), None)
        if pick is not None and self.config.table_decides:  # no choice: no call, as planned
            return pick, node.usage.as_dict() | {"wall_s": time.perf_counter() - started, "runs": 1}
        schema = make_turn_model(space, candidates)
        fallback_action = space.fallback or Action(verb=space.verbs[0].name)
        out = node.call(
            schema,
            baseline_system(space),
            baseline_user(task, self._history(turns), obs.text, space, candidates, rows),
            fallback=lambda: None,
            images=obs.images,
        )
        action = turn_action(out.value, candidates) if out.value is not None else fallback_action
        usage = node.usage.as_dict() | {"wall_s": time.perf_counter() - started, "runs": 1}
        return action, usage

    def run(
        self,
        *,
        thread_id: str | None = None,
        episode_id: str | None = None,
        on_event: EventHandler | None = None,
        **_: Any,
    ) -> EpisodeResult:
        """Play one episode to its end (task_complete, the world says done, or max steps)."""
        thread_id = thread_id or uuid.uuid4().hex[:12]
        started = time.perf_counter()
        limits = text_limits(self.config)
        task, obs = self.executor.reset()
        task, obs = checked_task(task, self.config.max_task_chars), obs.bounded(limits)
        self.llm.drain_calls()  # calls before this episode are no step's of it
        self._readings = {}
        start = obs
        usage: dict[str, dict[str, float]] = {}
        turns: list[str] = []
        trajectory: list[StepRecord] = []
        score, max_score = obs.score, obs.max_score
        success, reason, step = False, "", 0

        def emit(node: str, counters: dict, extra: dict | None = None) -> None:
            slot = usage.setdefault(node, {})
            for key, value in counters.items():
                slot[key] = slot.get(key, 0) + value
            if on_event is not None:
                on_event(node, {"usage": {node: counters}, **(extra or {})})

        while not reason:
            action, counters = self._decide(task, turns, obs, trajectory, start)
            emit("policy", counters)
            t0 = time.perf_counter()
            place = obs.place
            result = self.executor.execute(action).bounded(limits)
            step += 1
            new = result.observation
            if new.text or new.score is not None:
                obs = new
            score = new.score if new.score is not None else score
            max_score = new.max_score if new.max_score is not None else max_score
            message = result.message or new.text
            turns.append(turn_text(step, str(action), result.outcome.value, message))
            item: StepRecord = {**trajectory_step(step, action, result, message[:300], place)}
            item["calls"] = self.llm.drain_calls()  # the model calls that led to it
            trajectory.append(item)
            emit("executor", {"wall_s": time.perf_counter() - t0, "runs": 1}, {"step": step})
            end = episode_end(action, result, step, self.config.max_steps, self_report=False)
            if end is not None:
                reason, success = end.reason, end.success
        return EpisodeResult(
            thread_id=thread_id,
            episode_id=episode_id or thread_id,
            task=task,
            success=success,
            score=score,
            max_score=max_score,
            steps=step,
            end_reason=reason,
            wall_s=time.perf_counter() - started,
            usage=usage,
            trajectory=trajectory,
        )
