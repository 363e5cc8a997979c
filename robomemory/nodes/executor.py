"""executor: carry out the current plan step through the live executor (world or robot)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.core import TASK_COMPLETE, Action
from robomemory.graphs.context import AgentContext
from robomemory.graphs.state import AgentState
from robomemory.grounding import update_done, update_notes
from robomemory.nodes.common import NodeRun, observation_of


def executor(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("executor", runtime)
    index = int(state.get("plan_index") or 0)
    action = Action.model_validate(state["plan"][index])
    result = run.ctx.executor.execute(action)
    obs = result.observation
    step = int(state.get("step") or 0) + 1
    item = {
        "step": step,
        "action": str(action),
        "verb": action.verb,
        "args": action.args,
        "outcome": result.outcome.value,
        "message": result.message or obs.text[:300],
        "score": obs.score,
        "changed": result.details.get("changed"),
        "place": observation_of(state).place,  # where the robot was when it acted
    }
    # The whole record (what the agent saw and decided) goes to the episode log, so a trace
    # explains every step; the state keeps the compact item in a bounded window.
    record = item | {
        "plan": [str(Action.model_validate(a)) for a in state["plan"][index:]],
        "plan_reason": state.get("plan_reason", ""),
        "verdict": state.get("verdict"),
        "summary": state.get("summary", ""),
        "recalled": {k: len(v or "") for k, v in (state.get("recalled") or {}).items()},
        "candidates": list(state.get("candidates") or []),
    }
    run.ctx.memory.episodes.record_step(state["handles"]["episode_id"], record)
    update: dict = {
        "step": step,
        "plan_index": index + 1,
        "verdict": None,
        "last_result": result.model_dump(mode="json"),
        "trajectory": [item],
        "notes": update_notes(state.get("notes") or [], item, state.get("task") or ""),
        "done_actions": update_done(state.get("done_actions") or [], item),
    }
    # Keep the previous observation when the executor returns none (e.g. a rejected action).
    if obs.text or obs.images or obs.score is not None:
        update["observation"] = obs.model_dump()
    if obs.score is not None:
        update["score"] = obs.score
    if obs.max_score is not None:
        update["max_score"] = obs.max_score
    reason = None
    if action.verb == TASK_COMPLETE and (result.ok or obs.done):
        reason = TASK_COMPLETE
    elif obs.done:
        reason = "won" if obs.won else ("lost" if obs.lost else "env_done")
    elif step >= run.ctx.config.max_steps:
        reason = "max_steps"
    if reason:
        # Worlds report success; a robot without feedback trusts its own task_complete().
        self_judged = reason == TASK_COMPLETE and obs.score is None and not obs.done
        update |= {"done": True, "end_reason": reason, "success": bool(obs.won or self_judged)}
    return run.finish(update)
