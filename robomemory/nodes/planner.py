"""planner: a multi-step plan over the executor's action API (closed-loop planning module).

The first step is chosen among the actions the briefing offers (grounded candidates, less the
ones the episode has shown useless); later steps range over verbs x known names.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.config import AgentConfig
from robomemory.context import AgentContext
from robomemory.core import TASK_COMPLETE, Action, task_view
from robomemory.memory.consolidation import FALLBACK_REASON  # nothing is learned from it
from robomemory.nodes.common import NodeRun, action_space
from robomemory.prompts.planner import make_plan_model, plan_actions, planner_system, planner_user
from robomemory.state import AgentState, Briefing, approves, briefing_of, observation_of


def planner(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("planner", runtime)
    space = action_space(run.ctx, state)
    config = run.ctx.config
    briefing = briefing_of(state)
    if _table_confines(config):  # the model chooses only what the table leaves open
        briefing = briefing.left_open()
    candidates = briefing.candidates
    schema = make_plan_model(space, config.max_plan_len, candidates, config.min_plan_len)
    verdict = state.get("verdict")
    critique = None if approves(verdict) else (verdict or {}).get("reason")
    context = state.get("working_memory") or f"Task: {task_view(state['task'])}"
    user = planner_user(context, briefing, space, critique)
    replans = int(state.get("replans") or 0) + (1 if critique else 0)
    if (pick := _table_pick(config, briefing)) is not None:  # no choice left: no model call
        return run.finish(
            {
                "plan": [pick.model_dump()],
                "plan_index": 0,
                "plan_reason": f"table: {briefing.placed[0]}",
                "verdict": None,
                "replans": replans,
            }
        )
    fallback_action = space.fallback or Action(verb=TASK_COMPLETE)
    result = run.llm.call(
        schema, planner_system(space), user, lambda: None, observation_of(state).images
    )
    if result.ok:
        plan = [a.model_dump() for a in plan_actions(result.value, candidates)]
        thought = ""
    else:
        plan, thought = [fallback_action.model_dump()], f"{FALLBACK_REASON} {result.error}"
    return run.finish(
        {
            "plan": plan,
            "plan_index": 0,
            "plan_reason": thought,
            "verdict": None,
            "replans": replans,
        }
    )


def _table_pick(config: AgentConfig, briefing: Briefing) -> Action | None:
    """The table's pick where it leaves no choice (the briefing's ``decided``), when asked to
    decide such steps and the planner is not made to plan ahead."""
    if not _table_confines(config) or config.min_plan_len > 1:
        return None
    return next((a for a in briefing.candidates if str(a) == briefing.decided), None)


def _table_confines(config: AgentConfig) -> bool:
    """Whether the table's order binds the planner: it takes what the table decides and
    chooses among what it leaves open (config ``table_decides``)."""
    return config.table_decides
