"""executor: carry out the current plan step through the live executor (world or robot)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.action_model import (
    ANY_KIND,
    ObservedEffect,
    folded,
    kinds_of,
    observe,
    perceived_atoms,
)
from robomemory.context import AgentContext
from robomemory.core import Action, ActionResult, ActionSpace, Observation, Outcome
from robomemory.episode import StepRecord, episode_end, trajectory_step
from robomemory.grounding import WorldModel
from robomemory.nodes.common import NodeRun, learned_space, text_limits
from robomemory.nodes.ground import table_decides_now
from robomemory.state import (
    AgentState,
    briefing_of,
    current_plan,
    observation_of,
    observed_of,
    recent_window,
    world_model,
)


def executor(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    """Run the plan's current step; log it; end the episode when :func:`episode_end` says."""
    run = NodeRun("executor", runtime)
    index = int(state.get("plan_index") or 0)
    plan = current_plan(state)
    action = plan[index]
    seen_before = observation_of(state)
    place = seen_before.place  # where the robot is when it acts
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
        "recalled_items": dict(state.get("recalled_items") or {}),
        "candidates": [str(a) for a in briefing_of(state).candidates],
        "placed": briefing_of(state).placed,
        "calls": run.ctx.llm.drain_calls() if run.ctx.llm is not None else [],
    }
    run.ctx.memory.episodes.record_step(state["handles"]["episode_id"], record)
    declared = run.ctx.executor.action_space()
    space = learned_space(declared, state)
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
    spec = declared.verb(action.verb)
    if result.outcome is Outcome.SUCCEEDED and spec is not None and not spec.effects().declared:
        seen = observed_effect(state, space, action, result, world, seen_before)
        update["observed_effects"] = [e.to_json() for e in folded(observed_of(state), seen)]
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
    else:  # foreseen once for the next step's perception and temporal memory
        after = {**state, **update, "trajectory": recent_window(state.get("trajectory"), [item])}
        update["table_next"] = table_decides_now(run.ctx, after)
    return run.finish(update)


def _held(obs: Observation) -> list[str] | None:
    """What the robot holds as the observation says; None when it does not say."""
    return list(obs.holding) if obs.holding or obs.holding_known else None


def observed_effect(
    state: AgentState,
    space: ActionSpace,
    action: Action,
    result: ActionResult,
    world: WorldModel,
    before: Observation,
) -> ObservedEffect:
    """The effect the act was seen to have: what the robot perceived before it (the state's
    world model, place and held things) against what it perceives after, and whether the
    score rose. Held things count only where both observations say what is held."""
    obs = result.observation
    held_before, held_after = _held(before), _held(obs)
    if held_before is None or held_after is None:
        held_before = held_after = None
    previous = state.get("score")
    rose = obs.score is not None and previous is not None and obs.score > previous
    return observe(
        action.verb,
        action.args,
        perceived_atoms(world_model(state), before.place, held_before),
        perceived_atoms(world, obs.place or before.place, held_after),
        kind=kinds_of(space).get(action.args[0], ANY_KIND) if action.args else ANY_KIND,
        rose=rose,
        task=state.get("task") or "",
    )
