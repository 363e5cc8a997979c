"""start: reset the world, read the task, create the memory handles."""

from __future__ import annotations

import uuid

from langgraph.runtime import Runtime

from robomemory.context import AgentContext
from robomemory.nodes.common import NodeRun
from robomemory.state import AgentState


def start(state: AgentState, runtime: Runtime[AgentContext]) -> dict:
    run = NodeRun("start", runtime)
    task, observation = run.ctx.executor.reset()
    episode_id = (state.get("handles") or {}).get("episode_id") or uuid.uuid4().hex[:12]
    handles = run.ctx.memory.handles(episode_id).model_dump()
    return run.finish(
        {
            "task": state.get("task") or task,
            "handles": handles,
            "step": 0,
            "observation": observation.model_dump(),
            "temporal": [],
            "plan": [],
            "plan_index": 0,
            "replans": 0,
            "verdict": None,
            "last_result": None,
            "done": False,
            "success": False,
            "score": observation.score,
            "max_score": observation.max_score,
        }
    )
