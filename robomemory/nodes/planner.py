"""planner: a multi-step plan over the executor's action API (closed-loop planning module).

The first step is chosen among the actions the world affords now (grounded candidates, less
the ones the episode has shown useless); later steps range over verbs x known names.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import TASK_COMPLETE, Action
from robomemory.nodes.common import (
    NodeRun,
    current_candidates,
    last_result_line,
    lessons_now,
    looping,
    map_routes,
    notes_fetch,
    notes_left,
    notes_unseen,
    task_finding,
)
from robomemory.prompts.planner import make_plan_model, plan_actions, planner_system, planner_user
from robomemory.state import AgentState, approves, observation_of


def planner(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("planner", runtime)
    space = run.ctx.executor.action_space()
    routes = map_routes(run.ctx)
    candidates = current_candidates(state, space, run.ctx.config.max_candidates, routes)
    config = run.ctx.config
    schema = make_plan_model(space, config.max_plan_len, candidates, config.min_plan_len)
    verdict = state.get("verdict")
    critique = None if approves(verdict) else (verdict or {}).get("reason")
    last = last_result_line(state)
    context = state.get("working_memory") or f"Task: {state['task']}"
    left = notes_left(state, space)
    helped = lessons_now(state, candidates)
    user = planner_user(
        context,
        candidates,
        critique,
        last,
        space.all_targets(),
        space,
        left,
        helped,
        looping(state, space),
        notes_unseen(state, space, candidates, routes),
        notes_fetch(state, space, candidates),
        task_finding(state, space, candidates),
    )
    fallback_action = space.fallback or Action(verb=TASK_COMPLETE)
    result = run.llm.call(
        schema, planner_system(space), user, lambda: None, observation_of(state).images
    )
    if result.ok:
        plan = [a.model_dump() for a in plan_actions(result.value, candidates)]
        thought = ""
    else:
        plan, thought = [fallback_action.model_dump()], f"fallback: {result.error}"
    return run.finish(
        {
            "plan": plan,
            "plan_index": 0,
            "plan_reason": thought,
            "verdict": None,
            "candidates": [str(a) for a in candidates],
            "replans": int(state.get("replans") or 0) + (1 if critique else 0),
        }
    )
