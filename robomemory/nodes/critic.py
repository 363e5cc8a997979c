"""critic: approve or reject the next step of the current plan (never the first step)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.graphs.context import AgentContext
from robomemory.graphs.state import AgentState, observation_of, plan_of
from robomemory.nodes.common import NodeRun, current_candidates
from robomemory.prompts.planner import CRITIC_SYSTEM, CriticVerdict, critic_user


def critic(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("critic", runtime)
    plan = plan_of(state)
    action = plan[state["plan_index"]]
    space = run.ctx.executor.action_space()
    candidates = current_candidates(state, space)
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
    )
    # Fallback approves: a critic that cannot answer must not stall the agent.
    fallback = CriticVerdict(approve=True, reason="critic unavailable")
    verdict = run.llm.call(
        CriticVerdict, CRITIC_SYSTEM, user, fallback, observation_of(state).images
    )
    return run.finish(
        {"verdict": verdict.value.model_dump(), "candidates": [str(a) for a in candidates]}
    )
