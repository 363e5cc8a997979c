"""critic: approve or reject the next step of the current plan (never the first step)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.core import Action, VerbSpec, task_view
from robomemory.nodes.common import NodeRun, action_space
from robomemory.prompts.planner import CRITIC_SYSTEM, CriticVerdict, critic_user
from robomemory.state import AgentState, Briefing, briefing_of, current_plan, observation_of


def critic(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("critic", runtime)
    plan = current_plan(state)
    action = plan[state["plan_index"]]
    space = action_space(run.ctx, state)
    if space.candidates and str(action) not in {str(a) for a in space.candidates}:
        # A later plan step the world no longer affords (the plan was made before the last
        # action changed things): it cannot run, so there is nothing for the critic to judge.
        verdict = CriticVerdict(approve=False, reason=f"{action} is not possible now")
        return run.finish({"verdict": verdict.model_dump()})
    config = run.ctx.config
    if config.table_decides:
        if first := below_table(action, briefing_of(state)):
            verdict = CriticVerdict(approve=False, reason=f"the table places first: {first}")
            return run.finish({"verdict": verdict.model_dump()})
    if withheld(action, briefing_of(state), space.verbs):
        verdict = CriticVerdict(approve=False, reason=f"{action} is not offered now")
        return run.finish({"verdict": verdict.model_dump()})
    user = critic_user(
        state.get("working_memory") or f"Task: {task_view(state['task'])}",
        str(action),
        [str(a) for a in plan[state["plan_index"] :]],
        briefing_of(state),
        space,
    )
    # Fallback approves: a critic that cannot answer must not stall the agent.
    fallback = CriticVerdict(approve=True, reason="critic unavailable")
    verdict = run.llm.call(
        CriticVerdict, CRITIC_SYSTEM, user, fallback, observation_of(state).images
    )
    return run.finish({"verdict": verdict.value.model_dump()})


def withheld(action: Action, briefing: Briefing, verbs: Sequence[VerbSpec]) -> bool:
    """Whether a later plan step is an irreversible act (as its verb declares: each world's
    booleans agree with its effects, tests check) the step's offered list does not hold: the
    cut left it out, and what cannot be undone is not run unseen (a plan's second step did
    one irreversible act where the notes asked another of its thing, and the task was lost)."""
    irreversible = {v.name for v in verbs if v.irreversible}
    offered = {str(a) for a in briefing.candidates}
    return action.verb in irreversible and bool(offered) and str(action) not in offered


def below_table(action: Action, briefing: Briefing) -> str | None:
    """The table's first candidate where a later plan step is not among what the table now
    leaves open (``Briefing.choice``): the step is planned again, without a model call where
    the table decides, so the model never picks what the table places lower."""
    open_ = briefing.choice
    return open_[0] if open_ and str(action) not in open_ else None
