"""critic: approve or reject the next step of the current plan (never the first step)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.nodes.common import (
    NodeRun,
    current_candidates,
    last_result_line,
    lessons_now,
    map_routes,
    notes_left,
)
from robomemory.prompts.planner import CRITIC_SYSTEM, CriticVerdict, critic_user
from robomemory.state import AgentState, current_plan, observation_of


def critic(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("critic", runtime)
    plan = current_plan(state)
    action = plan[state["plan_index"]]
    space = run.ctx.executor.action_space()
    routes = map_routes(run.ctx)
    candidates = current_candidates(state, space, run.ctx.config.max_candidates, routes)
    if space.candidates and str(action) not in {str(a) for a in space.candidates}:
        # A later plan step the world no longer affords (the plan was made before the last
        # action changed things): it cannot run, so there is nothing for the critic to judge.
        verdict = CriticVerdict(approve=False, reason=f"{action} is not possible now")
        return run.finish(
            {"verdict": verdict.model_dump(), "candidates": [str(a) for a in candidates]}
        )
    user = critic_user(
        state.get("working_memory") or f"Task: {state['task']}",
        str(action),
        [str(a) for a in plan[state["plan_index"] :]],
        candidates,
        last_result_line(state),
        space,
        notes_left(state, space),
        lessons_now(state, candidates),
    )
    # Fallback approves: a critic that cannot answer must not stall the agent.
    fallback = CriticVerdict(approve=True, reason="critic unavailable")
    verdict = run.llm.call(
        CriticVerdict, CRITIC_SYSTEM, user, fallback, observation_of(state).images
    )
    return run.finish(
        {"verdict": verdict.value.model_dump(), "candidates": [str(a) for a in candidates]}
    )
