"""consolidate: at task end, write long-term memory (Mem0 update), update MemRL utilities and
merge the effects the task's acts were seen to have into semantic memory."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.action_model import world_kind
from robomemory.context import AgentContext
from robomemory.memory.consolidation import consolidate as write_longterm
from robomemory.memory.learned_effects import store_effects
from robomemory.memory.spatial import render_triples
from robomemory.nodes.common import NodeRun
from robomemory.state import AgentState, observed_of


def consolidate(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("consolidate", runtime)
    memory = run.ctx.memory
    episode_id = state["handles"]["episode_id"]
    spatial_text = render_triples(memory.spatial.triples()) if memory.spatial else ""
    report = write_longterm(
        memory,
        task=state["task"],
        success=bool(state.get("success")),
        lost=state.get("end_reason") == "lost",
        score=state.get("score"),
        max_score=state.get("max_score"),
        temporal_text=memory.temporal.render(list(state.get("temporal") or [])),
        trajectory=memory.episodes.steps(episode_id),
        spatial_text=spatial_text,
        retrieved_ids=memory.episodes.retrieved(episode_id),
        episode_id=episode_id,
        llm=run.llm,
    )
    observed = observed_of(state)
    if memory.semantic is not None and observed:  # what the acts did, as the world showed it
        world = (state.get("learned_effects") or {}).get("world")
        world = world or world_kind(run.ctx.executor.action_space().verbs)
        report = {
            **report,
            "effects": store_effects(
                memory.semantic, world, observed, task=state["task"], episode_id=episode_id
            ),
        }
    return run.finish({"consolidation": report})
