"""ground: the step's briefing for the planner and the critic, derived once from the world model,
the actions the world affords now, the spatial map's routes and the recalled lessons."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import Action, ActionSpace, Route, VerbSpec, task_view
from robomemory.episode import TrajectoryStep
from robomemory.grounding import Scene, WorldModel, brief, known_names
from robomemory.grounding.choice import to_read
from robomemory.grounding.goal_words import class_relations, state_relations
from robomemory.grounding.instructions import NOT_HERE, with_reading
from robomemory.grounding.loops import visited_places
from robomemory.grounding.text import parsed
from robomemory.memory.lessons import lesson_actions, verdict_places
from robomemory.memory.temporal import step_line
from robomemory.nodes.common import NodeRun, action_space
from robomemory.prompts.reading import READING_SYSTEM, make_reading_model, reading_user
from robomemory.state import AgentState, Briefing, observation_of, world_model
from robomemory.structured import NodeLLM

# The newest result ends the planner's and the critic's prompts whole: it is what the robot
# sees now (cut at 300 characters, a room's description lost the manual on its table).
LAST_RESULT_CHARS = 1200


def ground(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("ground", runtime)
    space = action_space(run.ctx, state)
    readings = read_described(run, state, space, world_model(state))
    briefing = step_briefing(run.ctx, state, readings, space)
    return run.finish({"briefing": briefing.model_dump(mode="json"), "readings": readings})


def step_briefing(
    ctx: AgentContext,
    state: AgentState,
    readings: Mapping[str, str],
    space: ActionSpace | None = None,
) -> Briefing:
    """The step's briefing from the world model, the actions afforded now, the map's routes and
    the recalled lessons, with the task read as ``readings`` name its things (no model call)."""
    obs = observation_of(state)
    trajectory = state.get("trajectory") or []
    space = space or action_space(ctx, state)
    task = with_reading(state.get("task") or "", readings)  # the task as read: things named
    scene = Scene(obs.place, tuple(obs.holding), task, tuple(trajectory), obs.hands)
    semantic = (state.get("recalled") or {}).get("semantic") or ""
    return brief(
        space,
        with_verdict_places(world_model(state), semantic),
        scene,
        lessons=lesson_actions(semantic),
        routes=map_routes(ctx),
        limit=ctx.config.max_candidates,
        last_result=result_line(trajectory[-1], LAST_RESULT_CHARS) if trajectory else None,
        affinity=relation_affinity(ctx, space.candidates, space.verbs, scene.task, scene.held),
    )


def table_decides_now(ctx: AgentContext, state: AgentState) -> bool:
    """Whether the table will take the step's action with no model call, foreseen from
    ``state`` as the act before left it (its readings and recall). The query generator, the step
    summarizer and the temporal compression then wait: only the planner and the critic read
    what they make."""
    config = ctx.config
    if not config.table_decides or config.min_plan_len > 1:
        return False
    if int(state.get("plan_index") or 0) < len(state.get("plan") or []):
        return False  # a plan's next step goes to the critic, which reads the memory
    return step_briefing(ctx, state, state.get("readings") or {}).decided is not None


def read_described(
    run: NodeRun, state: AgentState, space: ActionSpace, world: WorldModel
) -> dict[str, str]:
    """The task's readings so far, with the next one made where it can be (:func:`reading`)."""
    task, held = state.get("task") or "", observation_of(state).holding
    return reading(run.llm, task, state.get("readings") or {}, world, space, held)


def reading(
    llm: NodeLLM,
    task: str,
    readings: Mapping[str, str],
    world: WorldModel,
    space: ActionSpace,
    held: Sequence[str],
) -> dict[str, str]:
    """``readings`` (description -> thing), with the model's reading of the next thing the
    task describes, where one can be made (:func:`to_read`): the table cannot say which thing
    "the item with the same quantity as the answer" is, nor which thing here is "a(n)
    animal" (read once per set of things offered; NOT_HERE: none of them)."""
    out = dict(readings)
    task = with_reading(task, out)
    known = [*known_names(space), *world.seen, *held]
    asked = to_read(world, space.verbs, task, space.candidates, known, held)
    if asked is None or asked.key in out:  # a class read against these things already
        return out
    things = (NOT_HERE, *asked.things) if asked.by_class else asked.things
    schema = make_reading_model(things)
    user = reading_user(task_view(task), asked.described, world.notes, things, asked.by_class)
    result = llm.call(schema, READING_SYSTEM, user, lambda: None)
    if result.ok:  # no answer: the model chooses among the acts, as before
        thing = str(result.value.thing)
        out[asked.key if thing == NOT_HERE else asked.described] = thing
    return out


def relation_affinity(
    ctx: AgentContext,
    candidates: Sequence[Action],
    verbs: Sequence[VerbSpec],
    task: str,
    held: Sequence[str] = (),
) -> dict[str, float]:
    """How near each offered relation's two sides are in the embedder's space: for a task
    that asks to relate a class of things ("place them in their usual locations"), its two
    names (a cushion nearer a sofa than a shelf); for a held thing the task names with no act
    (:func:`state_relations`, "missing a polished vase"), the other thing and the task's words
    (the workbench nearer than the shelf). Empty for any other task, or without an embedder."""
    embedder = ctx.memory.embedder if ctx.memory is not None else None
    relations = class_relations(candidates, verbs, task)
    states = [] if relations else state_relations(candidates, verbs, task, held)
    if not (relations or states) or embedder is None:
        return {}
    if states:
        names = sorted({a.args[1] for a in states})
        found = embedder.embed_documents([task, *names])
        vectors = dict(zip(names, found[1:], strict=True))
        return {str(a): _cosine(found[0], vectors[a.args[1]]) for a in states}
    names = sorted({n for a in relations for n in a.args[:2]})
    vectors = dict(zip(names, embedder.embed_documents(names), strict=True))
    return {str(a): _cosine(vectors[a.args[0]], vectors[a.args[1]]) for a in relations}


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def with_verdict_places(world: WorldModel, semantic: str) -> WorldModel:
    """``world`` knowing where the things of this task's approved picks were (the verdict
    says: "focus_on(axe) helped: score 25 -> 75 at outside"), where it saw none this task."""
    found = {parsed(a)[1][0]: p for a, p in verdict_places(semantic).items() if parsed(a)[1]}
    been = set(visited_places(world.path))  # been there this task and not seen it: not there
    fresh = {t: p for t, p in found.items() if t not in world.seen and p not in been}
    return world.model_copy(update={"seen": {**world.seen, **fresh}}) if fresh else world


def map_routes(ctx: AgentContext) -> list[Route]:
    """The ways between places the spatial map knows (none without spatial memory)."""
    spatial = ctx.memory.spatial
    if spatial is None or not ctx.config.memory.spatial.enabled:
        return []
    return spatial.routes()


def result_line(item: TrajectoryStep, limit: int = 300) -> str:
    """One executed action and the world's answer, spaces collapsed (what was read stays whole)."""
    message = " ".join(str(item["message"]).split())[:limit]
    return f"{step_line(item)}: {message}"
