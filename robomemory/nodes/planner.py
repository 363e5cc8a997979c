"""planner: a multi-step plan over the executor's action API (closed-loop planning module)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.executors.base import Action
from robomemory.graphs.context import AgentContext
from robomemory.graphs.state import AgentState
from robomemory.nodes.common import NodeRun, observation_of, result_line
from robomemory.prompts.planner import PLANNER_SYSTEM, make_plan_model, planner_user, to_action


def planner(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("planner", runtime)
    space = run.ctx.executor.action_space()
    schema = make_plan_model(space, run.ctx.config.max_plan_len)
    verdict = state.get("verdict") or {}
    critique = None if verdict.get("approve", True) else verdict.get("reason")
    trajectory = state.get("trajectory") or []
    last = result_line(trajectory[-1]) if trajectory else None
    context = state.get("working_memory") or f"Task: {state['task']}"
    user = planner_user(context, space, critique, last)
    fallback_action = space.fallback or Action(verb="task_complete")
    result = run.llm.call(schema, PLANNER_SYSTEM, user, lambda: None, observation_of(state).images)
    if result.ok:
        plan = [to_action(step).model_dump() for step in result.value.steps]
        thought = result.value.thought
    else:
        plan, thought = [fallback_action.model_dump()], f"fallback: {result.error}"
    return run.finish(
        {
            "plan": plan,
            "plan_index": 0,
            "plan_reason": thought,
            "verdict": None,
            "replans": int(state.get("replans") or 0) + (1 if critique else 0),
        }
    )
