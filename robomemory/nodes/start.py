"""start: reset the world, read the task, create the memory handles."""

from __future__ import annotations

import uuid

from langgraph.runtime import Runtime

from robomemory.action_model import world_kind
from robomemory.context import AgentContext
from robomemory.core import ActionSpace, PlaceLearner, RouteLearner, checked_task, echo
from robomemory.episode import EpisodeIdError, world_of
from robomemory.grounding import WorldModel
from robomemory.memory.learned_effects import recall_effects
from robomemory.nodes.common import NodeRun, learned_space, text_limits
from robomemory.state import AgentState


def start(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("start", runtime)
    task, observation = run.ctx.executor.reset()
    observation = observation.bounded(text_limits(run.ctx.config))
    task = checked_task(state.get("task") or task, run.ctx.config.max_task_chars)
    learned = recall_routes(run.ctx)
    recall_rooms(run.ctx)
    space = run.ctx.executor.action_space()
    effects = {"learned_effects": recall_learned(run.ctx, space), "observed_effects": []}
    world = WorldModel.recalled(recall_places(run.ctx)).observe(
        learned_space(space, effects),
        observation.place,
        [observation.text],
        world=world_of(observation),
        held=observation.holding,
        exits=observation.exits,
        links=observation.links,
    )
    wanted = (state.get("handles") or {}).get("episode_id") or uuid.uuid4().hex[:12]
    episode_id = claim_episode(run.ctx, wanted, _thread_of(runtime, run.ctx.config.robot_id))
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
            "table_next": False,
            "replans": 0,
            "readings": {},
            "verdict": None,
            "last_result": None,
            "done": False,
            "success": False,
            "score": observation.score,
            "max_score": observation.max_score,
            "routes_recalled": learned,
            **effects,
        }
    )


def _thread_of(runtime: Runtime[AgentContext], robot_id: str) -> str:
    """The caller's thread id of this run (``agent.run`` checkpoints thread T as
    ``ROBOT/T``); empty without a checkpointer."""
    info = getattr(runtime, "execution_info", None)
    thread = (info.thread_id if info is not None else None) or ""
    return thread.removeprefix(f"{robot_id}/")


def claim_episode(ctx: AgentContext, wanted: str, thread: str) -> str:
    """The episode id this run records under, claimed in the episode log for its robot's
    thread. Every entry point (``agent.run``, the CLI, ``graph.invoke``, Studio) passes here.

    ``wanted`` that another robot or thread claimed is refused (:class:`EpisodeIdError`): its
    records would mix and its consolidation would be skipped as done. This thread's own claim
    stands while its run has not got past the start (``agent.run`` claims before the graph, a
    crashed start runs again); once it ran, the thread runs again as a new episode, the first
    free suffix (``E-2``, ``E-3``), as ``agent.run`` does for its default id."""
    robot, log = ctx.config.robot_id, ctx.memory.episodes
    for n in range(1, 10_000):
        candidate = wanted if n == 1 else f"{wanted}-{n}"
        claimed, owner, owner_thread = log.claim(candidate, robot, thread)
        if claimed:
            return candidate
        mine = (owner, owner_thread) == (robot, thread)
        if n == 1 and not mine:
            raise EpisodeIdError(
                f"episode id {echo(candidate)} is already used (robot {owner}, thread "
                f"{owner_thread}): an episode id names one run; choose a new one"
            )
        if mine and not log.ran(candidate) and ctx.memory.history.episode_report(candidate) is None:
            return candidate
    raise EpisodeIdError(f"no free episode id for {echo(wanted)}")


def recall_learned(ctx: AgentContext, space: ActionSpace) -> dict:
    """What earlier tasks in worlds of this kind (``action_model.world_kind``: the same
    verbs) saw the verbs that declare no effects do, from semantic memory: ``{"world": its
    kind, "effects": [ObservedEffect.to_json()...]}`` (none without semantic memory)."""
    world = world_kind(space.verbs)
    semantic = ctx.memory.semantic
    undeclared = [v for v in space.verbs if not v.effects().declared]
    if semantic is None or not undeclared:
        return {"world": world, "effects": []}
    found = recall_effects(semantic, world, space.model_copy(update={"verbs": undeclared}))
    return {"world": world, "effects": [e.to_json() for e in found]}


def recall_places(ctx: AgentContext) -> dict[str, str]:
    """Where the spatial map of this world last placed each thing (earlier tasks here): what
    a task needs and does not see yet is fetched from there (the ablation of spatial memory
    starts knowing nothing). What the robot sees corrects it (:func:`update_seen`)."""
    spatial = ctx.memory.spatial
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return {}
    return spatial.things_places()


def recall_rooms(ctx: AgentContext) -> int:
    """Give the executor's navigation the places the spatial map of this world knows the
    robot stood at (a teleport to any known room; none without spatial memory). Return how
    many the executor could use."""
    spatial, executor = ctx.memory.spatial, ctx.executor
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return 0
    if not isinstance(executor, PlaceLearner):
        return 0
    return executor.learn_places(spatial.places())


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
