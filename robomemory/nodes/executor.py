"""executor: carry out the current plan step through the live executor (world or robot)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.episode import StepRecord, episode_end, trajectory_step
from robomemory.nodes.common import NodeRun, text_limits
from robomemory.state import AgentState, briefing_of, current_plan, observation_of, world_model


def executor(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    """Run the plan's current step; log it; end the episode when :func:`episode_end` says."""
    run = NodeRun("executor", runtime)
    index = int(state.get("plan_index") or 0)
    plan = current_plan(state)
    action = plan[index]
    place = observation_of(state).place  # where the robot is when it acts
    result = run.ctx.executor.execute(action).bounded(text_limits(run.ctx.config))
    obs = result.observation
    step = int(state.get("step") or 0) + 1
    item = trajectory_step(step, action, result, result.message or obs.text[:300], place)
    # The whole record (what the agent saw and decided) goes to the episode log, so a trace
    # explains every step; the state keeps the compact item in a bounded window.
    record: StepRecord = {
        **item,
        "plan": [str(a) for a in plan[index:]],
        "plan_reason": state.get("plan_reason", ""),
        "verdict": state.get("verdict"),
        "summary": state.get("summary", ""),
        "recalled": {k: len(v or "") for k, v in (state.get("recalled") or {}).items()},
        "recall_text": {k: (v or "")[:2000] for k, v in (state.get("recalled") or {}).items()},
        "candidates": [str(a) for a in briefing_of(state).candidates],
    }
    run.ctx.memory.episodes.record_step(state["handles"]["episode_id"], record)
    space = run.ctx.executor.action_space()
    world = world_model(state).observe(
        space,
        obs.place or place,
        [result.message, obs.text],
        held=obs.holding,
        step=item,
        task=state.get("task") or "",
        exits=obs.exits,
        links=obs.links,
    )
    update: dict = {
        "step": step,
        "plan_index": index + 1,
        "verdict": None,
        "last_result": result.model_dump(mode="json"),
        "trajectory": [item],
        "world": world.model_dump(),
    }
    # Keep the previous observation when the executor returns none (e.g. a rejected action).
    if obs.text or obs.images or obs.score is not None:
        update["observation"] = obs.model_dump()
    if obs.score is not None:
        update["score"] = obs.score
    if obs.max_score is not None:
        update["max_score"] = obs.max_score
    end = episode_end(action, result, step, run.ctx.config.max_steps)
    if end is not None:
        update |= {"done": True, "end_reason": end.reason, "success": end.success}
    return run.finish(update)
