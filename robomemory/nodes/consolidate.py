"""consolidate: at task end, write long-term memory (Mem0 update) and update MemRL utilities."""

from __future__ import annotations

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.memory.consolidation import consolidate as write_longterm
from robomemory.memory.spatial import render_triples
from robomemory.nodes.common import NodeRun
from robomemory.state import AgentState


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
    return run.finish({"consolidation": report})
