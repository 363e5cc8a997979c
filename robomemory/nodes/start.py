"""start: reset the world, read the task, create the memory handles."""

from __future__ import annotations

import uuid

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import RouteLearner, checked_task
from robomemory.episode import world_of
from robomemory.grounding import WorldModel
from robomemory.nodes.common import NodeRun, text_limits
from robomemory.state import AgentState


def start(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("start", runtime)
    task, observation = run.ctx.executor.reset()
    observation = observation.bounded(text_limits(run.ctx.config))
    task = checked_task(state.get("task") or task, run.ctx.config.max_task_chars)
    learned = recall_routes(run.ctx)
    world = WorldModel.recalled(recall_places(run.ctx)).observe(
        run.ctx.executor.action_space(),
        observation.place,
        [observation.text],
        world=world_of(observation),
        held=observation.holding,
    )
    episode_id = (state.get("handles") or {}).get("episode_id") or uuid.uuid4().hex[:12]
    handles = run.ctx.memory.handles(episode_id).model_dump()
    return run.finish(
        {
            "task": task,
            "handles": handles,
            "step": 0,
            "observation": observation.model_dump(),
            "world": world.model_dump(),
            "temporal": [],
            "in_view": {"semantic": [], "episodic": []},
            "plan": [],
            "plan_index": 0,
            "replans": 0,
            "verdict": None,
            "last_result": None,
            "done": False,
            "success": False,
            "score": observation.score,
            "max_score": observation.max_score,
            "routes_recalled": learned,
        }
    )


def recall_places(ctx: AgentContext) -> dict[str, str]:
    """Where the spatial map of this world last placed each thing (earlier tasks here): what
    a task needs and does not see yet is fetched from there (the ablation of spatial memory
    starts knowing nothing). What the robot sees corrects it (:func:`update_seen`)."""
    spatial = ctx.memory.spatial
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return {}
    return spatial.things_places()


def recall_routes(ctx: AgentContext) -> int:
    """Give the executor's navigation the ways between places that the spatial map of this
    world knows from earlier tasks (call it after the executor's reset; the ablation of
    spatial memory gives none). Return how many the executor could use."""
    spatial, executor = ctx.memory.spatial, ctx.executor
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return 0
    if not isinstance(executor, RouteLearner):
        return 0
    routes = spatial.routes()
    return executor.learn_routes(routes) if routes else 0
